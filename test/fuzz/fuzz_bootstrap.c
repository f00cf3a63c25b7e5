/*
 * test/fuzz/fuzz_bootstrap.c - libFuzzer harness for the root's judgement
 * of bootstrap messages (src/api/rendezvous.c), the bytes a stranger on the
 * root's port controls.
 *
 * Input: a 4-byte little-endian rank count (one in 1 .. 2^20 is folded into
 * 1 .. 256 so that a run stays fast; 0 and those above 2^20 are given as
 * they are and must be refused), one flags byte, then messages,
 * each a 2-byte little-endian length and that many bytes (cut short at the
 * end of the input). Every message goes to hc_rdv_hello; a whole one
 * (HC_RDV_MSG_BYTES) also to hc_rdv_offer. Flags bit 0: give the rank
 * count (hc_rdv_expect) only after the messages, then offer again those
 * that had to wait, as the server does. Checked after every step: the
 * verdict is a known one, an accepted message holds exactly its rank's
 * place, the count of accepted ranks matches the places held.
 *
 * Build and run (from the top of the tree):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
 *       test/fuzz/fuzz_bootstrap.c src/api/rendezvous.c -o fuzz_bootstrap
 *   ./fuzz_bootstrap -runs=1000000 test/fuzz/corpus/bootstrap
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/api/rendezvous.h"

#define MAX_MSGS 64

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void check_places(const hc_rdv_t *r)
{
    if (r->nranks == 0) {
        if (r->got != 0 || r->owner != NULL)
            abort();
        return;
    }
    uint32_t held = 0;
    for (uint32_t i = 0; i < r->nranks; i++)
        held += r->owner[i] != NULL;
    if (held != r->got || r->got > r->nranks)
        abort();
}

static void offer(hc_rdv_t *r, const uint8_t *msg, size_t len, char *token, int *waits)
{
    char why[256];
    uint32_t got = r->got;
    int v = hc_rdv_offer(r, msg, len, token, why, sizeof(why));
    if (memchr(why, '\0', sizeof(why)) == NULL)
        abort();
    switch (v) {
    case HC_RDV_OK: {
        hc_hello_t h;
        memcpy(&h, msg, sizeof(h));
        if (h.rank >= r->nranks || r->owner[h.rank] != token || r->got != got + 1)
            abort();
        break;
    }
    case HC_RDV_WAIT:
        if (r->nranks != 0)
            abort();
        *waits = 1;
        break;
    case HC_RDV_STRANGER:
    case HC_RDV_CONFLICT:
    case HC_RDV_NOMEM:
        if (r->got != got)
            abort();
        break;
    default:
        abort();
    }
    check_places(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char tokens[MAX_MSGS];
    const uint64_t uid = 0x1122334455667788ull;
    if (size < 5)
        return 0;
    uint32_t nranks = le32(data);
    if (nranks > 256 && nranks <= HC_RDV_MAX_RANKS)
        nranks = 1 + nranks % 256;
    int late = data[4] & 1;
    data += 5;
    size -= 5;

    hc_rdv_t r;
    hc_rdv_init(&r, uid);
    if (!late && hc_rdv_expect(&r, nranks) == HC_RDV_OK && r.nranks != nranks)
        abort();
    const uint8_t *msg[MAX_MSGS];
    size_t len[MAX_MSGS];
    int wait[MAX_MSGS] = {0}, n = 0;
    while (size >= 2 && n < MAX_MSGS) {
        size_t l = (size_t)data[0] | (size_t)data[1] << 8;
        data += 2;
        size -= 2;
        if (l > size)
            l = size;
        msg[n] = data;
        len[n] = l;
        data += l;
        size -= l;
        char why[256];
        int v = hc_rdv_hello(&r, msg[n], l, why, sizeof(why));
        if (v != HC_RDV_OK && v != HC_RDV_STRANGER)
            abort();
        if (l < sizeof(hc_hello_t) && v != HC_RDV_STRANGER)
            abort();
        if (l == HC_RDV_MSG_BYTES)
            offer(&r, msg[n], l, &tokens[n], &wait[n]);
        n++;
    }
    if (late) {
        int v = hc_rdv_expect(&r, nranks);
        if ((v == HC_RDV_OK) != (nranks >= 1 && nranks <= HC_RDV_MAX_RANKS))
            abort();
        for (int i = 0; i < n; i++)
            if (wait[i]) {
                int again = 0;
                offer(&r, msg[i], len[i], &tokens[i], &again);
                if (again && r.nranks != 0)
                    abort();
            }
    }
    hc_rdv_free(&r);
    return 0;
}
