/*
 * coll/alltoall_pairwise.c - AlltoAll and AlltoAllV PAIRWISE: n-1 rounds;
 * in round k rank r sends its block for (r+k) mod n and receives the block
 * from (r-k) mod n, straight between SEND and RECV; its own block is a
 * local copy.
 *
 * Cost: (n-1) (alpha + B beta) for blocks of B bytes (AlltoAllV: the sum of
 * the blocks); one peer at a time, so no incast.
 *
 * Round k starts when round k-1's send and receive have completed (each
 * round pairs everyone up, so no rank waits on a peer that is still rounds
 * behind). AlltoAllV takes args->scounts/sdispls/rcounts/rdispls (elements);
 * a zero-length block is skipped, by the sender (scounts) and the receiver
 * (rcounts) alike, which MPI's matching rule makes consistent. In place
 * (SEND == RECV, not an HCCL convention but MPI allows it) the send side is
 * first copied to TMP. One message per ordered pair: tag 0.
 */
#include "algos.h"

static uint64_t s_off(const hc_coll_args_t *a, uint32_t d, int v)
{
    return (v ? a->sdispls[d] : (uint64_t)d * a->count) * a->esize;
}
static uint64_t s_len(const hc_coll_args_t *a, uint32_t d, int v)
{
    return (v ? a->scounts[d] : a->count) * a->esize;
}
static uint64_t r_off(const hc_coll_args_t *a, uint32_t q, int v)
{
    return (v ? a->rdispls[q] : (uint64_t)q * a->count) * a->esize;
}
static uint64_t r_len(const hc_coll_args_t *a, uint32_t q, int v)
{
    return (v ? a->rcounts[q] : a->count) * a->esize;
}

int hc_alltoall_pairwise_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, r = a->rank;
    const int v = a->coll == HC_COLL_ALLTOALLV;

    s->algo = v ? "alltoallv:PAIRWISE" : "alltoall:PAIRWISE";
    s->esize = a->esize;
    if (v && (!a->scounts || !a->sdispls || !a->rcounts || !a->rdispls))
        return HCCL_E_PARA;
    if (!v && a->count == 0)
        return HCCL_SUCCESS;
    if (s_len(a, r, v) != r_len(a, r, v))
        return HCCL_E_PARA;

    /* in place: the outgoing blocks are first copied to TMP, same offsets */
    int32_t cp = -1;
    hc_buf_t sbuf = HC_BUF_SEND;
    if (a->in_place) {
        uint64_t ext = 0;
        for (uint32_t d = 0; d < n; d++)
            if (s_len(a, d, v) && s_off(a, d, v) + s_len(a, d, v) > ext)
                ext = s_off(a, d, v) + s_len(a, d, v);
        if (ext) {
            hc_sched_need_tmp(s, ext);
            cp = hc_sched_copy(s, HC_TMP(0), HC_SEND(0), ext, HC_NODEPS);
            sbuf = HC_BUF_TMP;
        }
    }
    if (s_len(a, r, v))
        hc_sched_copy(s, HC_RECV(r_off(a, r, v)), hc_loc(sbuf, s_off(a, r, v)),
                      s_len(a, r, v), HC_DEPS(cp));
    int32_t last_s = cp, last_r = -1;
    for (uint32_t k = 1; k < n; k++) {
        const uint32_t to = (r + k) % n, from = (r + n - k) % n;
        int32_t ns = -1, nr = -1;
        if (s_len(a, to, v))
            ns = hc_sched_send(s, to, 0, hc_loc(sbuf, s_off(a, to, v)), s_len(a, to, v),
                               HC_DEPS(last_s, last_r));
        if (r_len(a, from, v))
            nr = hc_sched_recv(s, from, 0, HC_RECV(r_off(a, from, v)), r_len(a, from, v),
                               HC_DEPS(last_s, last_r));
        if (ns >= 0)
            last_s = ns;
        if (nr >= 0)
            last_r = nr;
    }
    return s->err;
}
