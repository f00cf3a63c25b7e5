/*
 * coll/allgather_bruck.c - AllGather BRUCK: Bruck's dissemination
 * allgather, ceil(log2 n) rounds for any n (no fix-up, no extra volume).
 *
 * Cost for blocks of B bytes (N = nB): ceil(log2 n) alpha + ((n-1)/n) N beta.
 *
 * In round k (d = 2^k) rank r sends the blocks of ranks r .. r+cnt-1
 * (mod n), cnt = min(d, n-d), to r-d, and receives those of r+d ..
 * r+d+cnt-1 from r+d: after round k it holds the 2d blocks starting at its
 * own. Blocks keep their absolute places in RECV, so the range wraps at
 * most once and goes as one or two messages (tags 2k, 2k+1), and Bruck's
 * final rotation disappears. Out of place, our block is first copied from
 * SEND into RECV; a send waits for every receive before it. No TMP.
 */
#include "prims.h"

/* Blocks [first, first+cnt) mod n as (offset, blocks) segments; returns 1 or 2. */
static int segments(uint32_t n, uint32_t first, uint32_t cnt, uint32_t seg[2][2])
{
    if (first + cnt <= n) {
        seg[0][0] = first;
        seg[0][1] = cnt;
        return 1;
    }
    seg[0][0] = first;
    seg[0][1] = n - first;
    seg[1][0] = 0;
    seg[1][1] = cnt - (n - first);
    return 2;
}

int hc_allgather_bruck_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, r = a->rank;
    const uint64_t es = a->esize, blk = a->count * es;

    s->algo = "allgather:BRUCK";
    s->esize = es;
    if (a->count == 0)
        return HCCL_SUCCESS;
    int32_t deps[80] = {INT32_MIN};
    if (!a->in_place)
        hc_deps_add(deps, 80,
                    hc_sched_copy(s, HC_RECV((uint64_t)r * blk), HC_SEND(0), blk, HC_NODEPS));
    uint32_t seg[2][2];
    for (uint32_t k = 0, d = 1; d < n; k++, d <<= 1) {
        const uint32_t cnt = d < n - d ? d : n - d;
        const uint32_t to = (r + n - d) % n, from = (r + d) % n;
        const int ns = segments(n, r, cnt, seg);
        for (int q = 0; q < ns; q++)
            hc_sched_send(s, to, 2 * k + q, HC_RECV((uint64_t)seg[q][0] * blk),
                          (uint64_t)seg[q][1] * blk, deps);
        const int nr = segments(n, (r + d) % n, cnt, seg);
        for (int q = 0; q < nr; q++)
            hc_deps_add(deps, 80,
                        hc_sched_recv(s, from, 2 * k + q, HC_RECV((uint64_t)seg[q][0] * blk),
                                      (uint64_t)seg[q][1] * blk, HC_NODEPS));
    }
    return s->err;
}
