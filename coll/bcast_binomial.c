/*
 * coll/bcast_binomial.c - Broadcast BINOMIAL: a binomial tree over ranks
 * relative to the root (vr = (rank - root) mod n), data in RECV.
 *
 * Cost: ceil(log2 n) (alpha + N beta) for N bytes.
 *
 * vr != 0 receives from vr - lowbit(vr), then every node sends to
 * vr + 2^i for 2^i below lowbit(vr) (all powers of two below n at the root),
 * largest subtree first. One message per tree edge, tag 0.
 */
#include "algos.h"

int hc_bcast_binomial_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, root = a->root;
    const uint32_t vr = (a->rank + n - root) % n;
    const uint64_t bytes = a->count * a->esize;

    s->algo = "broadcast:BINOMIAL";
    s->esize = a->esize;
    if (a->count == 0 || n == 1)
        return HCCL_SUCCESS;
    int32_t rv = -1;
    uint32_t mask;
    if (vr != 0) {
        const uint32_t lb = hc_lowbit(vr);
        rv = hc_sched_recv(s, (vr - lb + root) % n, 0, HC_RECV(0), bytes, HC_NODEPS);
        mask = lb >> 1;
    } else {
        mask = 1u << (hc_ceil_log2(n) - 1);
    }
    for (; mask > 0; mask >>= 1)
        if (vr + mask < n)
            hc_sched_send(s, (vr + mask + root) % n, 0, HC_RECV(0), bytes, HC_DEPS(rv));
    return s->err;
}
