/*
 * coll/barrier_dissemination.c - Barrier DISSEMINATION: ceil(log2 n) rounds;
 * in round k rank r sends a 0-byte message to (r + 2^k) mod n and receives
 * one from (r - 2^k) mod n. After round k a rank has heard, directly or
 * not, from the 2^(k+1) ranks before it, so after the last round from all.
 *
 * Cost: ceil(log2 n) alpha.
 *
 * All receives are posted at once; the send of round k waits for the
 * receive of round k-1 and the send of round k-1, hence for every earlier
 * receive. Tag k (the peers of different rounds differ anyway
 * since 2^k < n).
 */
#include "algos.h"

int hc_barrier_dissemination_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, r = a->rank;

    s->algo = "barrier:DISSEMINATION";
    s->esize = a->esize;
    int32_t rv = -1, sd = -1;
    for (uint32_t k = 0, d = 1; d < n; k++, d <<= 1) {
        /* after every earlier receive: through the previous send */
        sd = hc_sched_send(s, (r + d) % n, k, HC_SEND(0), 0, HC_DEPS(rv, sd));
        rv = hc_sched_recv(s, (r + n - d) % n, k, HC_RECV(0), 0, HC_NODEPS);
    }
    return s->err;
}
