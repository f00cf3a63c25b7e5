/*
 * coll/reduce_binomial.c - Reduce BINOMIAL: a binomial tree over ranks
 * relative to the root (vr = (rank - root) mod n), result in the root's RECV.
 *
 * Cost: ceil(log2 n) (alpha + N beta + N gamma) for N bytes.
 *
 * Node vr receives from its children vr + 2^i (2^i below lowbit(vr); all
 * powers of two below n at the root), smallest subtree first, and folds
 * each in: acc = acc op child. acc covers relative ranks vr..vr+2^i-1 and
 * the child vr+2^i..vr+2^(i+1)-1, so the lower relative ranks always come
 * first and the reduces are chained: the result is the same expression
 * whatever the timing. Then the node sends acc to its parent vr - lowbit(vr).
 *
 * Buffers: the root accumulates in RECV (in place, SEND == RECV); others
 * in TMP (RECV may be NULL there and is never touched). A leaf sends SEND
 * directly. The first child of a non-root lands in its accumulator, the
 * others alternate between two TMP slots so that the next child's vector
 * arrives while the previous one is reduced; a slot is reused after the
 * reduce that read it. Tag 0 (one message per tree edge).
 */
#include "algos.h"

int hc_reduce_binomial_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, root = a->root;
    const uint32_t vr = (a->rank + n - root) % n;
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
    const uint32_t top = vr ? hc_lowbit(vr) : 1u << hc_ceil_log2(n);
    uint32_t nch = 0;
    for (uint32_t m = 1; m < top && vr + m < n; m <<= 1)
        nch++;
    const uint32_t parent = vr ? (vr - hc_lowbit(vr) + root) % n : 0;
    if (nch == 0) {
        hc_sched_send(s, parent, 0, HC_SEND(0), bytes, HC_NODEPS);
        return s->err;
    }
    /* root: acc = RECV, children in TMP slots 0,1,0,1...
     * other: acc = TMP slot 0 = first child's landing place, then 1,2,1,2... */
    const hc_loc_t acc = vr == 0 ? HC_RECV(0) : HC_TMP(0);
    const uint32_t base = vr == 0 ? 0 : 1;
    const uint32_t nslots = base + (nch - base < 2 ? nch - base : 2);
    hc_sched_need_tmp(s, (uint64_t)nslots * bytes);
    int32_t reader[2] = {-1, -1}; /* last reduce reading each alternating slot */
    int32_t last = -1;
    uint32_t i = 0;
    for (uint32_t m = 1; m < top && vr + m < n; m <<= 1, i++) {
        const uint32_t child = (vr + m + root) % n;
        hc_loc_t land;
        int32_t dep = -1;
        if (vr != 0 && i == 0) {
            land = HC_TMP(0);
        } else {
            const uint32_t k = (i - base) % 2;
            land = HC_TMP((base + k) * bytes);
            dep = reader[k];
        }
        int32_t rv = hc_sched_recv(s, child, 0, land, bytes, HC_DEPS(dep));
        /* the first fold reads SEND (in place at the root: SEND == RECV) */
        const hc_loc_t mine = i == 0 ? HC_SEND(0) : acc;
        last = hc_sched_reduce(s, acc, mine, land, bytes, HC_DEPS(rv, last));
        if (!(vr != 0 && i == 0))
            reader[(i - base) % 2] = last;
    }
    if (vr != 0)
        hc_sched_send(s, parent, 0, acc, bytes, HC_DEPS(last));
    return s->err;
}
