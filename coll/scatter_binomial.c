/*
 * coll/scatter_binomial.c - Scatter BINOMIAL: a binomial tree over ranks
 * relative to the root (vr = (rank - root) mod n); each node receives the
 * blocks of its whole subtree and forwards the children's parts.
 *
 * Cost: ceil(log2 n) alpha + ((n-1)/n) N beta for N = n * count bytes at
 * the root (each block crosses log2 n edges at most, but the root sends
 * every block once).
 *
 * Node vr (subtree vr..vr+size-1, size = lowbit(vr) clipped at n) gets the
 * blocks of its subtree in relative order. The root sends them straight from
 * SEND, where blocks are in absolute order: a subtree that wraps past rank
 * n-1 goes as two messages (tags 0 and 1), and the child, knowing root and
 * n, posts the same two receives. Intermediate nodes stage their subtree in
 * TMP (size blocks), copy their own block to RECV and send each child its
 * part from TMP (one message, tag 0); leaves receive into RECV directly.
 * In place at the root (RECV == SEND + root * count) nothing is copied.
 */
#include "algos.h"

int hc_scatter_binomial_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, root = a->root;
    const uint32_t vr = (a->rank + n - root) % n;
    const uint64_t blk = a->count * a->esize;

    s->algo = "scatter:BINOMIAL";
    s->esize = a->esize;
    if (a->count == 0)
        return HCCL_SUCCESS;
    if (vr == 0) {
        for (uint32_t m = n > 1 ? 1u << (hc_ceil_log2(n) - 1) : 0; m > 0; m >>= 1) {
            const uint32_t sz = n - m < m ? n - m : m; /* child vr = m, clipped */
            const uint32_t a0 = (m + root) % n, first = n - a0 < sz ? n - a0 : sz;
            const uint32_t child = a0;
            hc_sched_send(s, child, 0, HC_SEND(a0 * blk), first * blk, HC_NODEPS);
            if (sz > first)
                hc_sched_send(s, child, 1, HC_SEND(0), (sz - first) * blk, HC_NODEPS);
        }
        if (!a->in_place)
            hc_sched_copy(s, HC_RECV(0), HC_SEND(root * blk), blk, HC_NODEPS);
        return s->err;
    }
    const uint32_t lb = hc_lowbit(vr);
    const uint32_t sz = n - vr < lb ? n - vr : lb;
    const uint32_t pv = vr - lb, parent = (pv + root) % n;
    if (sz == 1) {
        hc_sched_recv(s, parent, 0, HC_RECV(0), blk, HC_NODEPS);
        return s->err;
    }
    hc_sched_need_tmp(s, sz * blk);
    int32_t r0, r1 = -1;
    if (pv == 0) { /* from the root: maybe split where absolute ranks wrap */
        const uint32_t a0 = (vr + root) % n, first = n - a0 < sz ? n - a0 : sz;
        r0 = hc_sched_recv(s, parent, 0, HC_TMP(0), first * blk, HC_NODEPS);
        if (sz > first)
            r1 = hc_sched_recv(s, parent, 1, HC_TMP(first * blk), (sz - first) * blk,
                               HC_NODEPS);
    } else {
        r0 = hc_sched_recv(s, parent, 0, HC_TMP(0), sz * blk, HC_NODEPS);
    }
    for (uint32_t m = lb >> 1; m > 0; m >>= 1) {
        if (vr + m >= n)
            continue;
        const uint32_t csz = n - (vr + m) < m ? n - (vr + m) : m;
        hc_sched_send(s, (vr + m + root) % n, 0, HC_TMP(m * blk), csz * blk,
                      HC_DEPS(r0, r1));
    }
    hc_sched_copy(s, HC_RECV(0), HC_TMP(0), blk, HC_DEPS(r0, r1));
    return s->err;
}
