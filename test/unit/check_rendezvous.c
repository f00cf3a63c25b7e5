/*
 * test/unit/check_rendezvous.c - the root's verdicts on bootstrap messages
 * (src/api/rendezvous.c): strangers dropped, the rank count only from the
 * root's side, another nRanks and a rank taken twice refused, messages
 * that came before the rank count judged once it is known.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "src/api/rendezvous.h"

#define UID 0x1122334455667788ull

static unsigned char g_msg[HC_RDV_MSG_BYTES];
static char g_why[256];

/* A message: hello (magic, nranks, rank, pad, uid), then a card of card_rank. */
static const unsigned char *msg(uint32_t magic, uint32_t nranks, uint32_t rank, uint32_t pad,
                                uint64_t uid, uint32_t card_rank)
{
    memset(g_msg, 0, sizeof(g_msg));
    hc_hello_t h = {magic, nranks, rank, pad, uid};
    memcpy(g_msg, &h, sizeof(h));
    hc_card_t *c = (hc_card_t *)(g_msg + sizeof(h));
    c->magic = HC_CARD_MAGIC;
    c->rank = card_rank;
    return g_msg;
}

static int offer(hc_rdv_t *r, const unsigned char *m, void *who)
{
    return hc_rdv_offer(r, m, HC_RDV_MSG_BYTES, who, g_why, sizeof(g_why));
}

START_TEST(test_strangers)
{
    hc_rdv_t r;
    hc_rdv_init(&r, UID);
    ck_assert_int_eq(hc_rdv_expect(&r, 2), HC_RDV_OK);
    int who;
    const struct {
        uint32_t magic, nranks, rank, pad;
        uint64_t uid;
        uint32_t card_rank;
    } bad[] = {
        {0x12345678u, 2, 0, 0, UID, 0},          /* magic */
        {HC_HELLO_MAGIC, 2, 0, 1, UID, 0},       /* pad */
        {HC_HELLO_MAGIC, 2, 0, 0, UID ^ 1, 0},   /* another rendezvous */
        {HC_HELLO_MAGIC, 0, 0, 0, UID, 0},       /* nRanks 0 */
        {HC_HELLO_MAGIC, UINT32_MAX, 0, 0, UID, 0},
        {HC_HELLO_MAGIC, HC_RDV_MAX_RANKS + 1, 0, 0, UID, 0},
        {HC_HELLO_MAGIC, 2, 2, 0, UID, 2},       /* rank == nRanks */
        {HC_HELLO_MAGIC, 2, 0, 0, UID, 1},       /* a card of another rank */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const unsigned char *m =
            msg(bad[i].magic, bad[i].nranks, bad[i].rank, bad[i].pad, bad[i].uid, bad[i].card_rank);
        ck_assert_int_eq(offer(&r, m, &who), HC_RDV_STRANGER);
        ck_assert_uint_eq(r.got, 0);
    }
    /* a card that is no card */
    msg(HC_HELLO_MAGIC, 2, 0, 0, UID, 0);
    memset(g_msg + sizeof(hc_hello_t), 0xa5, 4);
    ck_assert_int_eq(offer(&r, g_msg, &who), HC_RDV_STRANGER);
    /* short messages: a hello needs 24 bytes, a message all of them */
    ck_assert_int_eq(hc_rdv_hello(&r, msg(HC_HELLO_MAGIC, 2, 0, 0, UID, 0), 5, g_why,
                                  sizeof(g_why)), HC_RDV_STRANGER);
    ck_assert_int_eq(hc_rdv_hello(&r, g_msg, sizeof(hc_hello_t), g_why, sizeof(g_why)),
                     HC_RDV_OK);
    ck_assert_int_eq(hc_rdv_offer(&r, g_msg, HC_RDV_MSG_BYTES - 1, &who, g_why, sizeof(g_why)),
                     HC_RDV_STRANGER);
    ck_assert_uint_eq(r.got, 0);
    hc_rdv_free(&r);
}
END_TEST

START_TEST(test_conflicts)
{
    hc_rdv_t r;
    hc_rdv_init(&r, UID);
    ck_assert_int_eq(hc_rdv_expect(&r, 0), HC_RDV_CONFLICT);
    ck_assert_int_eq(hc_rdv_expect(&r, HC_RDV_MAX_RANKS + 1), HC_RDV_CONFLICT);
    ck_assert_int_eq(hc_rdv_expect(&r, 3), HC_RDV_OK);
    ck_assert_int_eq(hc_rdv_expect(&r, 4), HC_RDV_CONFLICT);
    int a, b, c;
    ck_assert_int_eq(offer(&r, msg(HC_HELLO_MAGIC, 3, 1, 0, UID, 1), &a), HC_RDV_OK);
    ck_assert_ptr_eq(r.owner[1], &a);
    ck_assert_int_eq(offer(&r, msg(HC_HELLO_MAGIC, 3, 1, 0, UID, 1), &b), HC_RDV_CONFLICT);
    ck_assert_msg(strstr(g_why, "twice") != NULL, "%s", g_why);
    ck_assert_int_eq(offer(&r, msg(HC_HELLO_MAGIC, 1000000, 5, 0, UID, 5), &b),
                     HC_RDV_CONFLICT);
    ck_assert_msg(strstr(g_why, "nRanks 1000000") != NULL, "%s", g_why);
    ck_assert_ptr_eq(r.owner[1], &a);
    ck_assert_uint_eq(r.got, 1);
    ck_assert_int_eq(offer(&r, msg(HC_HELLO_MAGIC, 3, 0, 0, UID, 0), &b), HC_RDV_OK);
    ck_assert_int_eq(offer(&r, msg(HC_HELLO_MAGIC, 3, 2, 0, UID, 2), &c), HC_RDV_OK);
    ck_assert_uint_eq(r.got, 3);
    hc_rdv_free(&r);
}
END_TEST

START_TEST(test_wait_for_count)
{
    hc_rdv_t r;
    hc_rdv_init(&r, UID);
    int a;
    /* before the root says how many: a whole message waits, nothing is sized */
    ck_assert_int_eq(offer(&r, msg(HC_HELLO_MAGIC, 1000000, 5, 0, UID, 5), &a), HC_RDV_WAIT);
    ck_assert_ptr_null(r.owner);
    ck_assert_uint_eq(r.nranks, 0);
    ck_assert_int_eq(hc_rdv_expect(&r, 2), HC_RDV_OK);
    ck_assert_int_eq(offer(&r, msg(HC_HELLO_MAGIC, 1000000, 5, 0, UID, 5), &a),
                     HC_RDV_CONFLICT);
    ck_assert_int_eq(offer(&r, msg(HC_HELLO_MAGIC, 2, 1, 0, UID, 1), &a), HC_RDV_OK);
    hc_rdv_free(&r);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("rendezvous");
    TCase *tc = tcase_create("verdicts");
    tcase_add_test(tc, test_strangers);
    tcase_add_test(tc, test_conflicts);
    tcase_add_test(tc, test_wait_for_count);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
