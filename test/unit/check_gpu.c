/*
 * test/unit/check_gpu.c - the device-buffer path without a GPU
 * (src/gpu_pipe.c, src/gpu_coll.c, docs/GPU.md).
 *
 * The staging pipeline runs with fake copy engines over host memory: an
 * eager one (memcpy at once) and a lazy one that performs a slot's copies
 * only when the pipeline waits for them, so that a missing wait or a slot
 * reused too early shows up as a wrong result. The fake collective is
 * "receive block b = send block (b mod sblocks) with every byte XOR
 * (b + 1)", checked against the same function applied to the whole
 * buffers here. Then the chunk planner, the mixed host/device rule, and
 * the fallback of a build without a usable device.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hccl/hccl.h>

#include "coll/coll.h"
#include "src/gpu.h"
#include "src/gpu_coll.h"
#include "src/gpu_pipe.h"

/* ---- fake copy engines --------------------------------------------- */

typedef struct {
    void *dst;
    size_t dpitch;
    const void *src;
    size_t spitch, width, height;
} fcopy_t;

#define FQ 16
typedef struct {
    int lazy;
    fcopy_t q[2][HC_GPU_SLOTS][FQ]; /* [d2h / h2d][slot] */
    int nq[2][HC_GPU_SLOTS];
    uint64_t ncopies, nwaits;
    int fail_at; /* the fail_at-th copy fails (0: none) */
} feng_t;

static void do_copy(const fcopy_t *f)
{
    for (size_t r = 0; r < f->height; r++)
        memcpy((char *)f->dst + r * f->dpitch, (const char *)f->src + r * f->spitch, f->width);
}

static int fcopy(feng_t *e, int kind, int slot, void *dst, size_t dpitch, const void *src,
                 size_t spitch, size_t width, size_t height)
{
    ck_assert_int_ge(slot, 0);
    ck_assert_int_lt(slot, HC_GPU_SLOTS);
    ck_assert_uint_ge(dpitch, width);
    ck_assert_uint_ge(spitch, width);
    if (e->fail_at && ++e->ncopies == (uint64_t)e->fail_at)
        return HCCL_E_RUNTIME;
    fcopy_t f = {dst, dpitch, src, spitch, width, height};
    if (!e->lazy) {
        do_copy(&f);
        return HCCL_SUCCESS;
    }
    ck_assert_int_lt(e->nq[kind][slot], FQ);
    e->q[kind][slot][e->nq[kind][slot]++] = f;
    return HCCL_SUCCESS;
}

static int fwait(feng_t *e, int kind, int slot)
{
    e->nwaits++;
    for (int i = 0; i < e->nq[kind][slot]; i++)
        do_copy(&e->q[kind][slot][i]);
    e->nq[kind][slot] = 0;
    return HCCL_SUCCESS;
}

static int f_d2h(void *ctx, int slot, void *dst, size_t dp, const void *src, size_t sp, size_t w,
                 size_t h)
{
    return fcopy(ctx, 0, slot, dst, dp, src, sp, w, h);
}
static int f_h2d(void *ctx, int slot, void *dst, size_t dp, const void *src, size_t sp, size_t w,
                 size_t h)
{
    return fcopy(ctx, 1, slot, dst, dp, src, sp, w, h);
}
static int f_wd2h(void *ctx, int slot)
{
    return fwait(ctx, 0, slot);
}
static int f_wh2d(void *ctx, int slot)
{
    return fwait(ctx, 1, slot);
}
static const hc_gpu_copy_ops_t fops = {f_d2h, f_h2d, f_wd2h, f_wh2d};

static int pending(const feng_t *e)
{
    int n = 0;
    for (int k = 0; k < 2; k++)
        for (int s = 0; s < HC_GPU_SLOTS; s++)
            n += e->nq[k][s];
    return n;
}

/* ---- the fake collective ------------------------------------------- */

typedef struct {
    uint32_t sblocks, rblocks;
    int same_area;
    int fail_chunk; /* 1-based chunk that fails; 0: none */
    int nrun;
    size_t next_off;
    const unsigned char *expect; /* same_area: what the area must hold first (root) */
} frun_t;

static int frun(void *argp, void *hs, void *hr, size_t off, size_t len)
{
    frun_t *a = argp;
    a->nrun++;
    ck_assert_uint_eq(off, a->next_off); /* chunks in order, none skipped */
    a->next_off = off + len;
    if (a->fail_chunk && a->nrun == a->fail_chunk)
        return HCCL_E_REMOTE;
    if (a->same_area) { /* Broadcast-like: in place, the root's bytes arrive */
        ck_assert_ptr_eq(hs, hr);
        for (size_t j = 0; j < len; j++) {
            if (a->expect)
                ck_assert_uint_eq(((unsigned char *)hr)[j], a->expect[off + j]);
            ((unsigned char *)hr)[j] = (unsigned char)((off + j) * 7 + 1);
        }
        return HCCL_SUCCESS;
    }
    if (hr == NULL)
        return HCCL_SUCCESS;
    ck_assert_ptr_nonnull(hs);
    unsigned char tmp[4096 * 8];
    ck_assert_uint_le((size_t)a->sblocks * len, sizeof(tmp));
    memcpy(tmp, hs, (size_t)a->sblocks * len); /* hs and hr never overlap, but be safe */
    for (uint32_t b = 0; b < a->rblocks; b++)
        for (size_t j = 0; j < len; j++)
            ((unsigned char *)hr)[b * len + j] =
                (unsigned char)(tmp[(b % a->sblocks) * len + j] ^ (b + 1));
    return HCCL_SUCCESS;
}

static uint64_t seed = 88172645463325252ull;
static unsigned char rb(void)
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return (unsigned char)seed;
}

/* One case: block bytes per block, chunk bytes, sb / rb blocks, in-place
 * layout (send = recv + 1 block, only with sb == 1 < rb), lazy engine. */
static void run_case(size_t block, size_t chunk, uint32_t sb, uint32_t rbk, int in_place,
                     int lazy)
{
    const size_t sbytes = sb * block, rbytes = rbk * block;
    unsigned char *send = malloc(sbytes + 1), *recv = malloc(rbytes + 1);
    unsigned char *ref = malloc(rbytes + 1), *orig = malloc(sbytes + 1);
    ck_assert(send && recv && ref && orig);
    for (size_t i = 0; i < sbytes; i++)
        send[i] = rb();
    for (size_t i = 0; i < rbytes; i++)
        recv[i] = rb();
    unsigned char *sp = send;
    if (in_place) {
        ck_assert(sb == 1 && rbk > 1);
        sp = recv + block; /* this rank's block, as AllGather in place */
    }
    memcpy(orig, sp, sbytes);
    for (uint32_t b = 0; b < rbk; b++)
        for (size_t j = 0; j < block; j++)
            ref[b * block + j] = (unsigned char)(orig[(b % sb) * block + j] ^ (b + 1));

    hc_gpu_plan_t p;
    memset(&p, 0, sizeof(p));
    p.block = block;
    p.chunk = chunk;
    p.send = (hc_gpu_side_t){(char *)sp, sb, block};
    p.recv = (hc_gpu_side_t){(char *)recv, rbk, block};
    size_t need = hc_gpu_slot_need(&p);
    ck_assert_uint_eq(need, (size_t)(sb + rbk) * chunk);
    char *stage[HC_GPU_SLOTS];
    for (int s = 0; s < HC_GPU_SLOTS; s++) {
        stage[s] = malloc(need);
        memset(stage[s], 0xa5, need);
    }
    feng_t *e = calloc(1, sizeof(*e));
    e->lazy = lazy;
    frun_t a = {sb, rbk, 0, 0, 0, 0, NULL};
    ck_assert_int_eq(hc_gpu_pipeline(&p, &fops, e, stage, frun, &a), HCCL_SUCCESS);
    ck_assert_int_eq(pending(e), 0);
    ck_assert_int_eq(a.nrun, (int)((block + chunk - 1) / chunk));
    ck_assert_uint_eq(a.next_off, block);
    for (size_t i = 0; i < rbytes; i++)
        if (recv[i] != ref[i])
            ck_abort_msg("block %zu chunk %zu %u/%u blocks in_place %d lazy %d: byte %zu is "
                         "%02x, expected %02x", block, chunk, sb, rbk, in_place, lazy, i,
                         recv[i], ref[i]);
    if (!in_place)
        ck_assert_mem_eq(send, orig, sbytes); /* the send side is only read */
    for (int s = 0; s < HC_GPU_SLOTS; s++)
        free(stage[s]);
    free(e);
    free(send), free(recv), free(ref), free(orig);
}

START_TEST(pipeline_layouts)
{
    static const size_t blocks[] = {1, 7, 64, 1000, 4096};
    static const size_t chunks[] = {1, 3, 64, 333, 4096};
    static const uint32_t nb[][2] = {{1, 1}, {1, 4}, {3, 1}, {4, 4}, {2, 3}};
    for (int lazy = 0; lazy < 2; lazy++)
        for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++)
            for (size_t j = 0; j < sizeof(chunks) / sizeof(chunks[0]); j++)
                for (size_t k = 0; k < sizeof(nb) / sizeof(nb[0]); k++)
                    run_case(blocks[i], chunks[j], nb[k][0], nb[k][1], 0, lazy);
}
END_TEST

START_TEST(pipeline_in_place)
{
    static const size_t chunks[] = {1, 5, 100, 999, 1000};
    for (int lazy = 0; lazy < 2; lazy++)
        for (size_t j = 0; j < sizeof(chunks) / sizeof(chunks[0]); j++)
            for (uint32_t n = 2; n <= 4; n++)
                run_case(1000, chunks[j], 1, n, 1, lazy);
}
END_TEST

/* Broadcast: the root copies out, the others copy in, one area. */
START_TEST(pipeline_same_area)
{
    for (int lazy = 0; lazy < 2; lazy++)
        for (int root = 0; root < 2; root++) {
            unsigned char buf[777], orig[777];
            for (size_t i = 0; i < sizeof(buf); i++)
                buf[i] = orig[i] = rb();
            hc_gpu_plan_t p;
            memset(&p, 0, sizeof(p));
            p.block = sizeof(buf);
            p.chunk = 100;
            p.same_area = 1;
            if (root)
                p.send = (hc_gpu_side_t){(char *)buf, 1, sizeof(buf)};
            else
                p.recv = (hc_gpu_side_t){(char *)buf, 1, sizeof(buf)};
            ck_assert_uint_eq(hc_gpu_slot_need(&p), 100);
            char s0[100], s1[100], s2[100];
            char *stage[HC_GPU_SLOTS] = {s0, s1, s2};
            memset(s0, 0, 100), memset(s1, 0, 100), memset(s2, 0, 100);
            feng_t *e = calloc(1, sizeof(*e));
            e->lazy = lazy;
            frun_t a = {1, 1, 1, 0, 0, 0, root ? orig : NULL};
            ck_assert_int_eq(hc_gpu_pipeline(&p, &fops, e, stage, frun, &a), HCCL_SUCCESS);
            ck_assert_int_eq(pending(e), 0);
            ck_assert_int_eq(a.nrun, 8);
            if (root) /* copied out only: the user's buffer is unchanged */
                ck_assert_mem_eq(buf, orig, sizeof(buf));
            else /* copied in only: every byte is what the fake collective left */
                for (size_t i = 0; i < sizeof(buf); i++)
                    ck_assert_uint_eq(buf[i], (unsigned char)(i * 7 + 1));
            free(e);
        }
}
END_TEST

/* An error stops the pipeline; everything issued is still waited for. */
START_TEST(pipeline_errors)
{
    unsigned char send[1000], recv[1000];
    memset(send, 1, sizeof(send));
    for (int fail_chunk = 1; fail_chunk <= 10; fail_chunk += 3)
        for (int fail_copy = 0; fail_copy <= 7; fail_copy += 7) {
            memset(recv, 0, sizeof(recv));
            hc_gpu_plan_t p;
            memset(&p, 0, sizeof(p));
            p.block = 1000;
            p.chunk = 100;
            p.send = (hc_gpu_side_t){(char *)send, 1, 1000};
            p.recv = (hc_gpu_side_t){(char *)recv, 1, 1000};
            char s0[200], s1[200], s2[200];
            char *stage[HC_GPU_SLOTS] = {s0, s1, s2};
            feng_t *e = calloc(1, sizeof(*e));
            e->lazy = 1;
            e->fail_at = fail_copy;
            frun_t a = {1, 1, 0, fail_chunk, 0, 0, NULL};
            int rc = hc_gpu_pipeline(&p, &fops, e, stage, frun, &a);
            ck_assert_int_eq(rc, fail_copy && fail_copy < 2 * fail_chunk ? HCCL_E_RUNTIME
                                                                      : HCCL_E_REMOTE);
            ck_assert_int_eq(pending(e), 0);
            ck_assert_int_le(a.nrun, fail_chunk);
            free(e);
        }
}
END_TEST

START_TEST(pipeline_empty)
{
    hc_gpu_plan_t p;
    memset(&p, 0, sizeof(p));
    feng_t e;
    memset(&e, 0, sizeof(e));
    frun_t a = {1, 1, 0, 0, 0, 0, NULL};
    char *stage[HC_GPU_SLOTS] = {NULL, NULL, NULL};
    ck_assert_int_eq(hc_gpu_pipeline(&p, &fops, &e, stage, frun, &a), HCCL_SUCCESS);
    ck_assert_int_eq(a.nrun, 0);
    p.block = 10; /* no chunk size: refused, nothing run */
    ck_assert_int_eq(hc_gpu_pipeline(&p, &fops, &e, stage, frun, &a), HCCL_E_PARA);
    ck_assert_int_eq(a.nrun, 0);
}
END_TEST

/* ---- the chunk planner ---------------------------------------------- */

START_TEST(chunk_planner)
{
    const size_t MiB = (size_t)1 << 20;
    /* a slot holds nblocks chunks, each a multiple of the element size */
    ck_assert_uint_eq(hc_gpu_chunk_bytes(1000 * MiB, 4, 2, 8 * MiB), 4 * MiB);
    ck_assert_uint_eq(hc_gpu_chunk_bytes(1000 * MiB, 4, 5, 8 * MiB), (8 * MiB / 5) & ~(size_t)3);
    ck_assert_uint_eq(hc_gpu_chunk_bytes(1000 * MiB, 16, 3, 100), 32);
    ck_assert_uint_eq(hc_gpu_chunk_bytes(1000 * MiB, 2, 3, 100), 32);
    /* never below one element, never above the block */
    ck_assert_uint_eq(hc_gpu_chunk_bytes(1000, 16, 1000, 100), 16);
    ck_assert_uint_eq(hc_gpu_chunk_bytes(12, 4, 2, 8 * MiB), 12);
    ck_assert_uint_eq(hc_gpu_chunk_bytes(12, 0, 2, 8 * MiB), 0);
    /* the blocks count is the collective's, the same on every rank */
    ck_assert_uint_eq(hc_gpu_coll_blocks(HC_COLL_ALLREDUCE, 8), 2);
    ck_assert_uint_eq(hc_gpu_coll_blocks(HC_COLL_REDUCE, 8), 2);
    ck_assert_uint_eq(hc_gpu_coll_blocks(HC_COLL_BROADCAST, 8), 1);
    ck_assert_uint_eq(hc_gpu_coll_blocks(HC_COLL_ALLGATHER, 8), 9);
    ck_assert_uint_eq(hc_gpu_coll_blocks(HC_COLL_REDUCESCATTER, 8), 9);
    ck_assert_uint_eq(hc_gpu_coll_blocks(HC_COLL_SCATTER, 8), 9);
    ck_assert_uint_eq(hc_gpu_coll_blocks(HC_COLL_ALLTOALL, 8), 16);
    /* every chunk of a 4-rank AlltoAll fits a slot */
    size_t c = hc_gpu_chunk_bytes(1000 * MiB, 8, hc_gpu_coll_blocks(HC_COLL_ALLTOALL, 4),
                                  HC_GPU_SLOT_BYTES);
    ck_assert_uint_le(8 * c, HC_GPU_SLOT_BYTES);
    ck_assert_uint_eq(c % 8, 0);
}
END_TEST

/* Every collective's plan on every rank of 1..6: this rank's sides and
 * blocks as the API defines them, and one chunk size for all ranks. */
START_TEST(coll_plans)
{
    static const hc_coll_t colls[] = {HC_COLL_ALLREDUCE, HC_COLL_BROADCAST, HC_COLL_REDUCE,
                                      HC_COLL_ALLGATHER, HC_COLL_REDUCESCATTER, HC_COLL_SCATTER,
                                      HC_COLL_ALLTOALL};
    static const HcclDataType dts[] = {HCCL_DATA_TYPE_INT8, HCCL_DATA_TYPE_FP16,
                                       HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_INT128};
    static const size_t ess[] = {1, 2, 4, 16};
    static const uint64_t counts[] = {1, 1000, 3u << 20};
    static char sbuf[16], rbuf[16];
    hc_comm_t *c = calloc(1, sizeof(*c));
    ck_assert_ptr_nonnull(c);
    for (uint32_t n = 1; n <= 6; n++)
        for (size_t k = 0; k < sizeof(colls) / sizeof(colls[0]); k++)
            for (size_t t = 0; t < 4; t++)
                for (size_t ci = 0; ci < 3; ci++) {
                    const hc_coll_t coll = colls[k];
                    const size_t es = ess[t], blk = counts[ci] * es;
                    const uint32_t root = n - 1;
                    size_t chunk0 = 0;
                    for (uint32_t r = 0; r < n; r++) {
                        const int is_root = r == root;
                        void *s = sbuf, *rv = rbuf;
                        if (coll == HC_COLL_BROADCAST)
                            s = rv;
                        if (coll == HC_COLL_REDUCE && !is_root)
                            rv = NULL;
                        if (coll == HC_COLL_SCATTER && !is_root)
                            s = NULL;
                        c->rank = r;
                        c->nranks = n;
                        hc_op_t op;
                        hc_op_init(&op, "t", coll, counts[ci], dts[t], es, HCCL_REDUCE_SUM, s,
                                   rv);
                        op.args.root = root;
                        hc_gpu_plan_t p;
                        hc_gpu_coll_plan(c, &op, &p);
                        ck_assert_uint_eq(p.block, blk);
                        ck_assert_uint_gt(p.chunk, 0);
                        ck_assert_uint_le(p.chunk, blk);
                        ck_assert_uint_eq(p.chunk % es, 0);
                        if (r == 0)
                            chunk0 = p.chunk;
                        ck_assert_uint_eq(p.chunk, chunk0); /* the same on every rank */
                        ck_assert_uint_le(hc_gpu_slot_need(&p), HC_GPU_SLOT_BYTES);
                        ck_assert_int_eq(p.same_area, coll == HC_COLL_BROADCAST);
                        uint32_t sb = 1, rb = 1; /* expected; 0: the side is absent */
                        switch (coll) {
                        case HC_COLL_BROADCAST: sb = is_root, rb = !is_root; break;
                        case HC_COLL_REDUCE: rb = is_root; break;
                        case HC_COLL_ALLGATHER: rb = n; break;
                        case HC_COLL_REDUCESCATTER: sb = n; break;
                        case HC_COLL_SCATTER: sb = is_root ? n : 0; break;
                        case HC_COLL_ALLTOALL: sb = rb = n; break;
                        default: break;
                        }
                        ck_assert_int_eq(p.send.buf != NULL, sb != 0);
                        ck_assert_int_eq(p.recv.buf != NULL, rb != 0);
                        if (sb) {
                            ck_assert_uint_eq(p.send.blocks, sb);
                            ck_assert_uint_eq(p.send.stride, blk);
                        }
                        if (rb) {
                            ck_assert_uint_eq(p.recv.blocks, rb);
                            ck_assert_uint_eq(p.recv.stride, blk);
                        }
                        /* a large operation is cut into several chunks */
                        if (blk >= ((size_t)3 << 20) * 4)
                            ck_assert_uint_lt(p.chunk, blk);
                    }
                }
    free(c);
}
END_TEST

/* ---- argument rules and the fallback ---------------------------------- */

START_TEST(mixed_kinds)
{
    int x = 0, y = 0;
    ck_assert_int_eq(hc_gpu_check_kinds("t", &x, 0, &y, 0), HCCL_SUCCESS);
    ck_assert_int_eq(hc_gpu_check_kinds("t", &x, 1, &y, 1), HCCL_SUCCESS);
    ck_assert_int_eq(hc_gpu_check_kinds("t", &x, 1, &y, 0), HCCL_E_PARA);
    ck_assert_int_eq(hc_gpu_check_kinds("t", &x, 0, &y, 1), HCCL_E_PARA);
    /* absent on this rank (Reduce off the root, Scatter's send off the root) */
    ck_assert_int_eq(hc_gpu_check_kinds("t", NULL, 0, &y, 1), HCCL_SUCCESS);
    ck_assert_int_eq(hc_gpu_check_kinds("t", &x, 1, NULL, 0), HCCL_SUCCESS);
    /* in place: one buffer, one kind */
    ck_assert_int_eq(hc_gpu_check_kinds("t", &x, 1, &x, 1), HCCL_SUCCESS);
}
END_TEST

/* This machine has no usable device (or the build has no CUDA): every
 * buffer is host memory, nothing is claimed, and the CUDA-only entry point
 * says why it cannot work. On a machine with a GPU the test says so and
 * checks the claims the other way round. */
START_TEST(fallback)
{
    static char host[64];
    hc_op_t op;
    hc_op_init(&op, "t", HC_COLL_ALLREDUCE, 16, HCCL_DATA_TYPE_FP32, 4, HCCL_REDUCE_SUM, host,
               host + 32);
    ck_assert_int_eq(hc_cuda_is_device_ptr(host), 0);
    ck_assert_int_eq(hc_gpu_claims(&op, NULL), 0);
    ck_assert_int_eq(hc_gpu_p2p_claims(host, NULL), 0);
    HcclStream s = NULL;
    if (!hc_cuda_available()) {
        ck_assert_int_eq(hc_cuda_malloc(64) == NULL, 1);
        ck_assert_int_eq(HcclStreamCreateFromCuda(&s, (void *)host), HCCL_E_NOT_SUPPORT);
        ck_assert_ptr_null(s);
    } else {
        void *d = hc_cuda_malloc(64);
        ck_assert_ptr_nonnull(d);
        ck_assert_int_eq(hc_cuda_is_device_ptr(d), 1);
        op.send = d;
        ck_assert_int_eq(hc_gpu_claims(&op, NULL), 1);
        ck_assert_int_eq(hc_gpu_p2p_claims(d, NULL), 1);
        hc_cuda_free(d);
    }
    fprintf(stderr, "check_gpu: %s\n",
            hc_cuda_available() ? "a CUDA device is usable" : "no usable CUDA device");
}
END_TEST

static Suite *gpu_suite(void)
{
    Suite *su = suite_create("gpu");
    TCase *tc = tcase_create("pipeline");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, pipeline_layouts);
    tcase_add_test(tc, pipeline_in_place);
    tcase_add_test(tc, pipeline_same_area);
    tcase_add_test(tc, pipeline_errors);
    tcase_add_test(tc, pipeline_empty);
    suite_add_tcase(su, tc);
    tc = tcase_create("rules");
    tcase_add_test(tc, chunk_planner);
    tcase_add_test(tc, coll_plans);
    tcase_add_test(tc, mixed_kinds);
    tcase_add_test(tc, fallback);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(gpu_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
