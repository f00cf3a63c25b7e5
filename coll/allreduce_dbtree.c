/*
 * coll/allreduce_dbtree.c - AllReduce DBTREE (DOUBLE_BINARY_TREE): NCCL's
 * double binary tree. The vector is cut in two halves; half t is reduced up
 * tree t to its root and broadcast back down, both pipelined in chunks.
 * Tree 0 is the in-order binary tree over the ranks rooted at 0
 * (hc_btree: the odd ranks are its leaves); tree 1 its mirror image (n even)
 * or the tree shifted by one rank (n odd), so every rank (but rank 0 for odd
 * n) is an inner node in at most one tree and a leaf in the other: each rank
 * sends and receives about N bytes in total, like a ring, with a pipeline
 * 2 log2(n) hops deep instead of 2(n-1).
 *
 * Cost for N bytes in K chunks per tree (c = N/2K):
 *   (2 ceil(log2 n) + K - 1) (alpha + c (beta + gamma)) per tree, the two
 *   trees in parallel; latency-bound sizes get K = 1: 2 ceil(log2 n) alpha.
 * Chunks: hc_pipe_nchunks over that depth, at most args->chunk_bytes.
 *
 * Per tree t and chunk k: receive the chunk of each child into a TMP slot,
 * fold them in, (child0 op own) op child1, into RECV (out of place the first
 * fold reads SEND: no copy), send the partial to the parent; the root's fold
 * is the result. Then receive the result from the parent into RECV (after
 * our send of that region: in place it is SEND) and pass it to the
 * children. Every rank ends with the root's bits. HC_DBT_SLOTS slots per
 * child and tree; a slot is reused after the reduce that read it. The two
 * trees' chunks are interleaved in step order so both progress together.
 * Tags: ((t * 2 + down) << 18) | k.
 *
 * Not in the canonical order of deterministic mode: src/comm/tune.c routes it
 * to RD or HD there.
 */
#include "prims.h"

#define HC_DBT_SLOTS 4u
#define HC_DBT_MAX_CHUNKS 1024u

int hc_allreduce_dbtree_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, r = a->rank;
    const uint64_t es = a->esize, count = a->count;

    s->algo = "allreduce:DBTREE";
    s->esize = es;
    if (count == 0)
        return HCCL_SUCCESS;
    if (n == 1) {
        if (!a->in_place)
            hc_sched_copy(s, HC_RECV(0), HC_SEND(0), count * es, HC_NODEPS);
        return s->err;
    }
    const uint64_t h0 = (count + 1) / 2; /* tree 0: [0, h0), tree 1: [h0, count) */
    const uint64_t K = hc_pipe_nchunks(h0 * es, es, 2 * hc_btree_depth(n), a->chunk_bytes,
                                       HC_DBT_MAX_CHUNKS);
    const uint64_t slot = (h0 + K - 1) / K * es;
    int64_t par[2], ch[2][2];
    hc_btree(n, r, &par[0], &ch[0][0], &ch[0][1]);
    hc_btree2(n, r, &par[1], &ch[1][0], &ch[1][1]);
    int32_t reader[2][2][HC_DBT_SLOTS]; /* reduce that last read each slot */
    for (int t = 0; t < 2; t++)
        for (int c = 0; c < 2; c++)
            for (uint32_t q = 0; q < HC_DBT_SLOTS; q++)
                reader[t][c][q] = -1;
    hc_sched_need_tmp(s, 2 * 2 * HC_DBT_SLOTS * slot);

    for (uint64_t k = 0; k < K; k++)
        for (uint32_t t = 0; t < 2; t++) {
            const uint64_t base = t ? h0 : 0, len = t ? count - h0 : h0;
            const uint64_t o = (base + hc_block_start(len, K, k)) * es;
            const uint64_t l = hc_block_len(len, K, k) * es;
            const uint32_t up = (t * 2) << 18, down = (t * 2 + 1) << 18;
            if (l == 0)
                continue;
            int32_t last = -1;
            int folded = 0;
            for (int c = 0; c < 2; c++) {
                if (ch[t][c] < 0)
                    continue;
                const uint32_t q = k % HC_DBT_SLOTS;
                const hc_loc_t tmp = HC_TMP(((t * 2 + c) * HC_DBT_SLOTS + q) * slot);
                int32_t rv = hc_sched_recv(s, (uint32_t)ch[t][c], up | (uint32_t)k, tmp, l,
                                           HC_DEPS(reader[t][c][q]));
                const hc_loc_t mine = folded ? HC_RECV(o) : HC_SEND(o);
                if (c == 0)
                    last = hc_sched_reduce(s, HC_RECV(o), tmp, mine, l, HC_DEPS(rv, last));
                else
                    last = hc_sched_reduce(s, HC_RECV(o), mine, tmp, l, HC_DEPS(rv, last));
                reader[t][c][q] = last;
                folded = 1;
            }
            int32_t fin = last;
            if (par[t] >= 0) {
                int32_t su = hc_sched_send(s, (uint32_t)par[t], up | (uint32_t)k,
                                           folded ? HC_RECV(o) : HC_SEND(o), l, HC_DEPS(last));
                fin = hc_sched_recv(s, (uint32_t)par[t], down | (uint32_t)k, HC_RECV(o), l,
                                    HC_DEPS(su));
            }
            for (int c = 0; c < 2; c++)
                if (ch[t][c] >= 0)
                    hc_sched_send(s, (uint32_t)ch[t][c], down | (uint32_t)k, HC_RECV(o), l,
                                  HC_DEPS(fin));
        }
    return s->err;
}
