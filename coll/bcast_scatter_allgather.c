/*
 * coll/bcast_scatter_allgather.c - Broadcast SCATTER_ALLGATHER (van de
 * Geijn): the root scatters the buffer in n blocks down a binomial tree,
 * then a ring allgather gives every rank every block; for large messages.
 *
 * Cost for N bytes: ceil(log2 n) alpha + ((n-1)/n) N beta (scatter) +
 * (n-1) alpha + ((n-1)/n) N beta (ring): about 2N beta however many ranks,
 * against BINOMIAL's ceil(log2 n) N beta.
 *
 * Blocks are numbered relative to the root: relative rank i (rank
 * (root + i) mod n) owns elements [hc_block_start(count, n, i), +len), so a
 * binomial subtree i .. i+size-1 owns one contiguous range and every scatter
 * message goes straight from RECV to RECV (no staging, no wrap). The ring
 * runs over relative ranks; the root never receives (it has everything) and
 * relative rank n-1 never sends to it, so the root's link in carries
 * nothing. A rank re-receives in the ring the blocks the scatter already
 * gave it (the same bytes), only after its scatter steps are done (a
 * join). Blocks travel in chunks (hc_ring_nchunks, HCCL_RING_CHUNK_SIZE).
 * Tags: 0 scatter, 1 + step * C + chunk ring.
 */
#include "prims.h"

#include <stdlib.h>

int hc_bcast_scatter_allgather_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, root = a->root;
    const uint32_t vr = (a->rank + n - root) % n;
    const uint64_t es = a->esize, count = a->count;

    s->algo = "broadcast:SCATTER_ALLGATHER";
    s->esize = es;
    if (count == 0 || n == 1)
        return HCCL_SUCCESS;
#define B(i) (hc_block_start(count, n, (i)) * es)
#define RANK(i) (((i) + root) % n)
    /* scatter: receive our subtree's range, pass the children theirs */
    int32_t rv = -1;
    uint32_t mask;
    if (vr != 0) {
        const uint32_t lb = hc_lowbit(vr), sz = n - vr < lb ? n - vr : lb;
        if (B(vr + sz) > B(vr))
            rv = hc_sched_recv(s, RANK(vr - lb), 0, HC_RECV(B(vr)), B(vr + sz) - B(vr),
                               HC_NODEPS);
        mask = lb >> 1;
    } else {
        mask = 1u << (hc_ceil_log2(n) - 1);
    }
    for (; mask > 0; mask >>= 1) {
        const uint32_t c = vr + mask;
        if (c >= n)
            continue;
        const uint32_t csz = n - c < mask ? n - c : mask;
        if (B(c + csz) > B(c))
            hc_sched_send(s, RANK(c), 0, HC_RECV(B(c)), B(c + csz) - B(c), HC_DEPS(rv));
    }
    const int32_t j = hc_sched_join(s, 0, -1);

    /* ring allgather over relative ranks, cut open at the root */
    const uint32_t next = RANK((vr + 1) % n), prev = RANK((vr + n - 1) % n);
    const uint64_t maxblk = hc_block_len(count, n, 0);
    const uint32_t C = (uint32_t)hc_ring_nchunks(a, maxblk, n);
    int32_t *got = malloc(C * sizeof(int32_t)); /* receive of chunk k, previous step */
    if (got == NULL)
        return HCCL_E_MEMORY;
    for (uint32_t k = 0; k < C; k++)
        got[k] = j;
    for (uint32_t st = 0; st + 1 < n; st++) {
        const uint32_t sb = (vr + n - st) % n, rb = (vr + 2 * n - st - 1) % n;
        const uint64_t sl = hc_block_len(count, n, sb), rl = hc_block_len(count, n, rb);
        for (uint32_t k = 0; k < C; k++) {
            const uint32_t tag = 1 + st * C + k;
            const uint64_t so = B(sb) + hc_block_start(sl, C, k) * es;
            const uint64_t sn = hc_block_len(sl, C, k) * es;
            const uint64_t ro = B(rb) + hc_block_start(rl, C, k) * es;
            const uint64_t rn = hc_block_len(rl, C, k) * es;
            if (vr != n - 1 && sn)
                hc_sched_send(s, next, tag, HC_RECV(so), sn, HC_DEPS(vr == 0 ? j : got[k]));
            if (vr != 0)
                got[k] = rn ? hc_sched_recv(s, prev, tag, HC_RECV(ro), rn, HC_DEPS(j)) : j;
        }
    }
    free(got);
#undef B
#undef RANK
    return s->err;
}
