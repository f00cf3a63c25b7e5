/*
 * coll/alltoall_bruck.c - AlltoAll BRUCK: Bruck's index algorithm,
 * ceil(log2 n) rounds instead of PAIRWISE's n-1; for small blocks, where
 * the number of messages dominates.
 *
 * Cost for blocks of B bytes: ceil(log2 n) (alpha + (n/2) B beta) plus
 * about 2.5 n B of local copies, against PAIRWISE's (n-1) (alpha + B beta):
 * it wins while alpha > (n/2) B beta roughly.
 *
 * Block i of rank q (i = 0..n-1) is SEND block (q - i) mod n, the data from
 * q to q - i; in round k (d = 2^k) every block whose index has bit k set
 * moves to rank q - d, so it ends at q - i, its destination, and rank r's
 * block i then came from r + i and goes to RECV block (r + i) mod n: a
 * contiguous range, two copies at most.
 *
 * Where a block lies: in SEND until the first round that moves it (the one
 * of its lowest set bit), then in a working array W (TMP, n blocks, by
 * index). The blocks a round moves are runs of 2^k consecutive indices
 * [b, b + 2^k) with b = 2^k mod 2^(k+1); W holds all of a run but its
 * first block, which is still in SEND: two copies pack a run into the
 * round's send area, one unpacks it from the receive area into W. So about
 * 1.5 n + n copies in all, not one per block and round. Send and receive
 * areas (n/2 + 1 blocks each) are reused by every round, so each round
 * starts when the previous one is unpacked and its send has completed.
 * SEND is only read by packs, RECV only written at the end: in place works
 * as is. Tag k.
 *
 * AlltoAllV has no fixed block size: not usable there (the tuner falls
 * back to PAIRWISE with a warning when BRUCK is forced).
 */
#include "prims.h"

const char *hc_alltoall_bruck_usable(const hc_coll_args_t *a)
{
    return a->coll == HC_COLL_ALLTOALLV ? "BRUCK needs equal blocks (AlltoAll, not AlltoAllV)"
                                        : NULL;
}

int hc_alltoall_bruck_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, r = a->rank;
    const uint64_t es = a->esize, blk = a->count * es;

    s->algo = "alltoall:BRUCK";
    s->esize = es;
    if (a->coll != HC_COLL_ALLTOALL)
        return HCCL_E_PARA;
    if (a->count == 0)
        return HCCL_SUCCESS;
    if (!a->in_place)
        hc_sched_copy(s, HC_RECV((uint64_t)r * blk), HC_SEND((uint64_t)r * blk), blk, HC_NODEPS);
    if (n == 1)
        return s->err;
    const uint64_t area = ((uint64_t)n / 2 + 1) * blk;
    const uint64_t W = 0, P = (uint64_t)n * blk, R = P + area;
    hc_sched_need_tmp(s, R + area);
#define SBLK(i) HC_SEND((uint64_t)((r + n - (i) % n) % n) * blk)
    int32_t done = -1, sent = -1; /* previous round: unpacked, send completed */
    for (uint32_t k = 0, d = 1; d < n; k++, d <<= 1) {
        /* pack */
        uint32_t from = s->nsteps;
        uint64_t off = 0;
        for (uint32_t b = d; b < n; b += 2 * d) {
            const uint32_t len = n - b < d ? n - b : d;
            hc_sched_copy(s, HC_TMP(P + off), SBLK(b), blk, HC_DEPS(done, sent));
            if (len > 1)
                hc_sched_copy(s, HC_TMP(P + off + blk), HC_TMP(W + (uint64_t)(b + 1) * blk),
                              (len - 1) * blk, HC_DEPS(done, sent));
            off += len * blk;
        }
        const int32_t packed = hc_sched_join(s, from, -1);
        sent = hc_sched_send(s, (r + n - d) % n, k, HC_TMP(P), off, HC_DEPS(packed));
        const int32_t rv = hc_sched_recv(s, (r + d) % n, k, HC_TMP(R), off, HC_DEPS(done));
        /* unpack into W, after the packs read W there */
        from = s->nsteps;
        off = 0;
        for (uint32_t b = d; b < n; b += 2 * d) {
            const uint32_t len = n - b < d ? n - b : d;
            hc_sched_copy(s, HC_TMP(W + (uint64_t)b * blk), HC_TMP(R + off), len * blk,
                          HC_DEPS(rv, packed));
            off += len * blk;
        }
        done = hc_sched_join(s, from, -1);
    }
    /* RECV block (r + i) mod n = W[i], i = 1..n-1 */
    const uint32_t first = n - 1 - r; /* indices 1..first land at r+1..n-1 */
    if (first)
        hc_sched_copy(s, HC_RECV((uint64_t)(r + 1) * blk), HC_TMP(W + blk), first * blk,
                      HC_DEPS(done));
    if (first + 1 < n)
        hc_sched_copy(s, HC_RECV(0), HC_TMP(W + (uint64_t)(first + 1) * blk),
                      (n - 1 - first) * blk, HC_DEPS(done));
#undef SBLK
    return s->err;
}
