/*
 * coll/bcast_pipeline.c - Broadcast PIPELINE: the root cuts the buffer into
 * chunks and feeds them, alternately, to the roots of two complementary
 * binary trees over the other n-1 ranks (hc_btree and hc_btree2 over the
 * ranks relative to the root, 1..n-1); each chunk travels down its tree in
 * about log2(n) hops while the next chunks follow it, and a rank that is a
 * leaf of one tree receives that tree's chunks while it forwards the other
 * tree's: every rank receives each byte once and sends at most about as
 * much (inner node in one tree only), and the root sends each byte once.
 *
 * Cost for N bytes in K chunks of c: about (K + D) (alpha + c beta) with
 * D = ceil(log2(n-1)) + 1, against BINOMIAL's ceil(log2 n) (alpha + N beta);
 * for large N, N beta + D (alpha + c beta).
 *
 * Chunk size: at most args->chunk_bytes (HCCL_BCAST_CHUNK_SIZE, 1 MB), and
 * less for smaller messages or deeper trees (hc_pipe_nchunks: the chunk
 * that minimises the cost above), at most HC_BCP_MAX_CHUNKS chunks.
 *
 * Every receive lands at its final place in RECV and is posted at once;
 * a rank forwards chunk k to its children in chunk k's tree as soon as it
 * has it. Tag: the chunk index.
 */
#include "prims.h"

#define HC_BCP_MAX_CHUNKS 1024u

int hc_bcast_pipeline_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, root = a->root;
    const uint32_t vr = (a->rank + n - root) % n;
    const uint64_t es = a->esize, count = a->count;

    s->algo = "broadcast:PIPELINE";
    s->esize = es;
    if (count == 0 || n == 1)
        return HCCL_SUCCESS;
    const uint32_t m = n - 1; /* tree nodes: i = vr - 1 */
    const uint64_t K = hc_pipe_nchunks(count * es, es, hc_btree_depth(m) + 1, a->chunk_bytes,
                                       HC_BCP_MAX_CHUNKS);
    const uint32_t troot[2] = {0, hc_btree2_root(m)};
    int64_t par[2] = {-1, -1}, ch[2][2] = {{-1, -1}, {-1, -1}};
    if (vr != 0) {
        hc_btree(m, vr - 1, &par[0], &ch[0][0], &ch[0][1]);
        hc_btree2(m, vr - 1, &par[1], &ch[1][0], &ch[1][1]);
    }
#define RANK(i) (((uint32_t)(i) + 1 + root) % n) /* tree node -> rank */
    for (uint64_t k = 0; k < K; k++) {
        const uint32_t t = (uint32_t)(k % 2);
        const uint64_t o = hc_block_start(count, K, k) * es, l = hc_block_len(count, K, k) * es;
        if (vr == 0) {
            hc_sched_send(s, RANK(troot[t]), (uint32_t)k, HC_RECV(o), l, HC_NODEPS);
            continue;
        }
        const uint32_t from = par[t] >= 0 ? RANK(par[t]) : root;
        int32_t rv = hc_sched_recv(s, from, (uint32_t)k, HC_RECV(o), l, HC_NODEPS);
        for (int c = 0; c < 2; c++)
            if (ch[t][c] >= 0)
                hc_sched_send(s, RANK(ch[t][c]), (uint32_t)k, HC_RECV(o), l, HC_DEPS(rv));
    }
#undef RANK
    return s->err;
}
