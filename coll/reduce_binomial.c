/*
 * coll/reduce_binomial.c - Reduce BINOMIAL: a binomial tree over the
 * power-of-two core, shaped so that every element is reduced in the
 * canonical order of deterministic mode (coll/prims.h) whatever the root:
 * Reduce gives the same bits as RD / HD AllReduce and RS_GATHER.
 *
 * Cost: (1 + log2 p2) (alpha + N beta + N gamma) when n is not a power of
 * two, log2(n) (...) when it is; ceil(log2 n) rounds either way, as a
 * binomial tree rooted anywhere.
 *
 * Fix-up: ranks 2k and 2k+1 (k < rem) fold into virtual rank k as
 * (x_2k op x_2k+1), computed by 2k+1, or by 2k when 2k is the root. Then
 * rounds with masks m = p2/2 .. 1 merge the groups {v = a mod 2m} and
 * {v = a+m mod 2m} (a < m), the first one's partial on the left. Each group
 * has a leader holding its partial: the root's virtual rank if the group
 * contains it, else its smallest member (a). The merged group's leader is
 * one of the two old leaders; the other sends it its partial and is done.
 * At the end the root's virtual rank leads everything: the result is at the
 * root, which received one message per round.
 *
 * Buffers: the root accumulates in RECV (in place, SEND == RECV); others in
 * TMP (RECV may be NULL there and is never touched). Incoming partials
 * alternate between two TMP slots so that one arrives while the previous is
 * folded in; a slot is reused after the reduce that read it. A rank whose
 * partial is still its input sends SEND directly. Tags: 0 fix-up, 1 + round.
 */
#include "prims.h"

/* The rank holding virtual rank v's partial. */
static uint32_t holder(uint32_t v, uint32_t rem, uint32_t root)
{
    if (v < rem)
        return root == 2 * v ? 2 * v : 2 * v + 1;
    return v + rem;
}

/* Leader of the group {v = res (mod md)}. */
static uint32_t leader(uint32_t res, uint32_t md, uint32_t vroot)
{
    return vroot % md == res ? vroot : res;
}

int hc_reduce_binomial_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, r = a->rank, root = a->root;
    const uint64_t bytes = a->count * a->esize;

    s->algo = "reduce:BINOMIAL";
    s->esize = a->esize;
    if (a->count == 0)
        return HCCL_SUCCESS;
    if (n == 1) {
        if (!a->in_place)
            hc_sched_copy(s, HC_RECV(0), HC_SEND(0), bytes, HC_NODEPS);
        return s->err;
    }
    const uint32_t p2 = hc_pow2_floor(n), rem = n - p2;
    const uint32_t vroot = root < 2 * rem ? root / 2 : root - rem;
    /* root: slots at TMP 0, 1; others: accumulator at 0, slots at 1, 2 */
    const uint64_t base = r == root ? 0 : bytes;
    const hc_loc_t acc = r == root ? HC_RECV(0) : HC_TMP(0);
    int32_t last = -1, reader[2] = {-1, -1};
    int in_acc = 0;
    uint32_t nin = 0; /* partials received so far (slot = nin % 2) */
    uint32_t v;

    if (r < 2 * rem) {
        const uint32_t k = r / 2, h = holder(k, rem, root);
        if (r != h) {
            hc_sched_send(s, h, 0, HC_SEND(0), bytes, HC_NODEPS);
            return s->err;
        }
        const hc_loc_t slot = HC_TMP(base);
        int32_t rv = hc_sched_recv(s, r ^ 1, 0, slot, bytes, HC_NODEPS);
        /* x_2k op x_2k+1 */
        if (r % 2)
            last = hc_sched_reduce(s, acc, slot, HC_SEND(0), bytes, HC_DEPS(rv));
        else
            last = hc_sched_reduce(s, acc, HC_SEND(0), slot, bytes, HC_DEPS(rv));
        reader[0] = last;
        nin = 1;
        in_acc = 1;
        v = k;
    } else {
        v = r - rem;
    }
    hc_sched_need_tmp(s, base + 2 * bytes);

    for (uint32_t m = p2 / 2, round = 0; m > 0; m >>= 1, round++) {
        const uint32_t res = v % (2 * m), ores = res ^ m;
        const uint32_t other = leader(ores, 2 * m, vroot);
        const uint32_t newl = leader(v % m, m, vroot);
        const uint32_t peer = holder(other, rem, root);
        if (newl != v) { /* hand our partial over; done */
            hc_sched_send(s, peer, 1 + round, in_acc ? acc : HC_SEND(0), bytes, HC_DEPS(last));
            return s->err;
        }
        const uint32_t k = nin % 2;
        const hc_loc_t slot = HC_TMP(base + k * bytes);
        int32_t rv = hc_sched_recv(s, peer, 1 + round, slot, bytes, HC_DEPS(reader[k]));
        const hc_loc_t mine = in_acc ? acc : HC_SEND(0);
        if (v & m) /* the other group has bit m clear: its partial first */
            last = hc_sched_reduce(s, acc, slot, mine, bytes, HC_DEPS(rv, last));
        else
            last = hc_sched_reduce(s, acc, mine, slot, bytes, HC_DEPS(rv, last));
        reader[k] = last;
        nin++;
        in_acc = 1;
    }
    return s->err;
}
