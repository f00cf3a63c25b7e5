/*
 * coll/allreduce_rd.c - AllReduce RD: recursive doubling, the whole vector
 * exchanged in every round; for small vectors.
 *
 * Cost: log2(p2) (alpha + N beta + N gamma) for N bytes, plus
 * 2 (alpha + N beta) + N gamma when n is not a power of two.
 *
 * Non-powers of two (p2 = largest power of two <= n, rem = n - p2): among
 * ranks 0..2rem-1, each even rank r sends its vector to r+1 and leaves;
 * r+1 reduces (x_r op x_r+1) and joins the power-of-two core as
 * vr = r/2, the ranks >= 2rem join as vr = r - rem. The core runs log2(p2)
 * rounds, masks p2/2 down to 1: exchange with vr ^ mask, then
 * acc = acc(lower vr) op acc(higher vr). That is the canonical reduction
 * order of deterministic mode (coll/prims.h): HD, the ReduceScatter HD and
 * the Reduce trees compute the same expression for every element.
 * Both partners compute the same expression with the same operand order,
 * and by induction every member of a 2^i group holds the same bits, so all
 * ranks end bit-identical. Finally r+1 sends the result back to r.
 *
 * Buffers: the accumulator lives in RECV (out of place, the first reduce
 * reads SEND: no initial copy); the partner's vector lands in TMP (count
 * elements). A reduce overwrites RECV only after the send reading it
 * completed; a receive into TMP waits for the reduce that read TMP last.
 * Tags: 0 fix-up in, 1 fix-up out, 2 + round in the core.
 */
#include "algos.h"

enum { TAG_PRE = 0, TAG_POST = 1, TAG_ROUND0 = 2 };

int hc_allreduce_rd_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, r = a->rank;
    const uint64_t bytes = a->count * a->esize;

    s->algo = "allreduce:RD";
    s->esize = a->esize;
    if (a->count == 0)
        return HCCL_SUCCESS;
    if (n == 1) {
        if (!a->in_place)
            hc_sched_copy(s, HC_RECV(0), HC_SEND(0), bytes, HC_NODEPS);
        return s->err;
    }
    uint32_t p2 = 1;
    while (p2 * 2 <= n)
        p2 *= 2;
    const uint32_t rem = n - p2;

    hc_sched_need_tmp(s, bytes);
    int32_t last = -1;  /* the step that last wrote RECV / read TMP */
    int acc_in_send = 1; /* nothing reduced yet: the accumulator is SEND */
    uint32_t vr;
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            int32_t sd = hc_sched_send(s, r + 1, TAG_PRE, HC_SEND(0), bytes, HC_NODEPS);
            /* in place, RECV is the buffer just sent */
            hc_sched_recv(s, r + 1, TAG_POST, HC_RECV(0), bytes, HC_DEPS(sd));
            return s->err;
        }
        int32_t rv = hc_sched_recv(s, r - 1, TAG_PRE, HC_TMP(0), bytes, HC_NODEPS);
        last = hc_sched_reduce(s, HC_RECV(0), HC_TMP(0), HC_SEND(0), bytes, HC_DEPS(rv));
        acc_in_send = 0;
        vr = r / 2;
    } else {
        vr = r - rem;
    }

    /* partner at distance p2/2 first: the canonical order of deterministic
     * mode (coll/prims.h), shared with HD and the Reduce trees */
    for (uint32_t mask = p2 >> 1, round = 0; mask > 0; mask >>= 1, round++) {
        const uint32_t pv = vr ^ mask;
        const uint32_t peer = pv < rem ? 2 * pv + 1 : pv + rem;
        const hc_loc_t acc = acc_in_send ? HC_SEND(0) : HC_RECV(0);
        int32_t sd = hc_sched_send(s, peer, TAG_ROUND0 + round, acc, bytes, HC_DEPS(last));
        int32_t rv = hc_sched_recv(s, peer, TAG_ROUND0 + round, HC_TMP(0), bytes,
                                   HC_DEPS(last));
        /* the reduce overwrites RECV: after the send of RECV (or of SEND
         * aliased to it) has completed */
        int32_t hz = (!acc_in_send || a->in_place) ? sd : -1;
        if (vr < pv)
            last = hc_sched_reduce(s, HC_RECV(0), acc, HC_TMP(0), bytes, HC_DEPS(rv, hz));
        else
            last = hc_sched_reduce(s, HC_RECV(0), HC_TMP(0), acc, bytes, HC_DEPS(rv, hz));
        acc_in_send = 0;
    }

    if (r < 2 * rem)
        hc_sched_send(s, r - 1, TAG_POST, HC_RECV(0), bytes, HC_DEPS(last));
    return s->err;
}
