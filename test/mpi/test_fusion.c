/*
 * test/mpi/test_fusion.c - HcclAllReduceMulti and group fusion under mpirun.
 *
 *  1. Every data type with every reduction it supports (AVG for the float
 *     types): 45 tensors of mixed sizes, from 1 element to more than a
 *     bucket (test_fusion.sh runs it with a 64 KB HCCL_FUSION_THRESHOLD as
 *     well), every third one in place, compared bit for bit with
 *     per-tensor HcclAllReduce. Values are small integers, so every
 *     reduction order gives the same bits (the position of an element in a
 *     bucket changes the order some algorithms reduce it in at 3+ ranks).
 *     UINT32 SUM is also compared with the sum computed locally.
 *  2. The plan: 100 tensors of 256 B are 1 network operation; a tensor
 *     larger than a bucket goes alone; on one host with DIRECT the tensors
 *     are gathered in place, otherwise packed (counted from the library's
 *     own counters: this test links the internal library for them); ranks
 *     on several hosts (the emulated cluster, hosts declared in
 *     HCCL_TOPO_FILE) always pack.
 *  3. A group of 10 SUM AllReduces, 2 MAX AllReduces and a Broadcast on
 *     one communicator: 2 fused sets, results checked.
 *  4. HcclAllReduceMulti inside a group joins the group's fusion.
 * Prints "test_fusion: N checks, M failures" on rank 0.
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/stream.h" /* hc_fusion_counters */

static int g_rank, g_n;
/* Expect the gathered plan (DIRECT AllReduce on the tensors in place):
 * 2+ ranks on one host with the built-in table, no forced algorithm, not
 * deterministic (fusion.sh's runs; the RING run expects packing). */
static int g_gather;
static long g_checks, g_fails;

static void failf(const char *fmt, ...)
{
    g_fails++;
    if (g_fails > 30)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[rank %d] FAIL ", g_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

#define CHECK(call) \
    do { \
        HcclResult r_ = (call); \
        g_checks++; \
        if (r_ != HCCL_SUCCESS) \
            failf("%s:%d %s -> %s", __FILE__, __LINE__, #call, HcclGetErrorString(r_)); \
    } while (0)

typedef struct {
    HcclDataType t;
    const char *name;
    size_t size;
    int is_float;
} tinfo_t;

static const tinfo_t types[] = {
    {HCCL_DATA_TYPE_INT8, "int8", 1, 0},     {HCCL_DATA_TYPE_INT16, "int16", 2, 0},
    {HCCL_DATA_TYPE_INT32, "int32", 4, 0},   {HCCL_DATA_TYPE_FP16, "fp16", 2, 1},
    {HCCL_DATA_TYPE_FP32, "fp32", 4, 1},     {HCCL_DATA_TYPE_INT64, "int64", 8, 0},
    {HCCL_DATA_TYPE_UINT64, "uint64", 8, 0}, {HCCL_DATA_TYPE_UINT8, "uint8", 1, 0},
    {HCCL_DATA_TYPE_UINT16, "uint16", 2, 0}, {HCCL_DATA_TYPE_UINT32, "uint32", 4, 0},
    {HCCL_DATA_TYPE_FP64, "fp64", 8, 1},     {HCCL_DATA_TYPE_BFP16, "bf16", 2, 1},
    {HCCL_DATA_TYPE_INT128, "int128", 16, 0},
};

/* Small integer v (|v| <= 64) in type t, exactly. */
static void put(void *p, const tinfo_t *t, int v)
{
    switch (t->t) {
    case HCCL_DATA_TYPE_INT8:
    case HCCL_DATA_TYPE_UINT8: *(int8_t *)p = (int8_t)v; break;
    case HCCL_DATA_TYPE_INT16:
    case HCCL_DATA_TYPE_UINT16: *(int16_t *)p = (int16_t)v; break;
    case HCCL_DATA_TYPE_INT32:
    case HCCL_DATA_TYPE_UINT32: *(int32_t *)p = v; break;
    case HCCL_DATA_TYPE_INT64:
    case HCCL_DATA_TYPE_UINT64: *(int64_t *)p = v; break;
    case HCCL_DATA_TYPE_FP32: *(float *)p = (float)v; break;
    case HCCL_DATA_TYPE_FP64: *(double *)p = v; break;
    case HCCL_DATA_TYPE_BFP16: {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        *(uint16_t *)p = (uint16_t)(u >> 16); /* exact for small integers */
        break;
    }
    case HCCL_DATA_TYPE_FP16: {
        uint16_t h = 0;
        if (v != 0) {
            unsigned a = (unsigned)(v < 0 ? -v : v);
            int e = 31 - __builtin_clz(a); /* a = 1.m * 2^e */
            unsigned mant = (a << (10 - e)) & 0x3ffu;
            h = (uint16_t)((v < 0 ? 0x8000u : 0) | (unsigned)(e + 15) << 10 | mant);
        }
        *(uint16_t *)p = h;
        break;
    }
    case HCCL_DATA_TYPE_INT128: {
        int64_t lo = v, hi = v < 0 ? -1 : 0;
        memcpy(p, &lo, 8);
        memcpy((char *)p + 8, &hi, 8);
        break;
    }
    default: break;
    }
}

static int value(int op, int rank, size_t i, int k)
{
    int x = (int)((rank * 7 + i * 13 + (size_t)k * 3) % 5);
    if (op == HCCL_REDUCE_PROD)
        return 1 + (x & 1);          /* 1 or 2: products stay exact */
    return x - 2;                    /* -2 .. 2 */
}

static int op_ok(const tinfo_t *t, int op)
{
    if (t->t == HCCL_DATA_TYPE_INT128)
        return op == HCCL_REDUCE_SUM || op == HCCL_REDUCE_MAX || op == HCCL_REDUCE_MIN;
    if (op == HCCL_REDUCE_AVG)
        return t->is_float;
    return 1;
}

/* counts: 1 element .. more than the 64 KB and 256 KB limits */
static uint64_t tcount(int k, size_t es)
{
    static const uint64_t bytes[] = {1, 3, 64, 1000, 4096, 20000, 70000, 300000, 17, 65536};
    uint64_t c = bytes[k % 10] / es + (uint64_t)(k % 3);
    return c ? c : 1;
}

static const char *opname(int op)
{
    static const char *n[] = {"sum", "prod", "max", "min", "avg"};
    return n[op];
}

static void section_types(HcclComm comm)
{
    enum { NT = 45 };
    for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ti++) {
        const tinfo_t *t = &types[ti];
        for (int op = 0; op <= HCCL_REDUCE_AVG; op++) {
            if (!op_ok(t, op))
                continue;
            void *in[NT], *out[NT], *ref[NT];
            uint64_t cnt[NT];
            for (int k = 0; k < NT; k++) {
                cnt[k] = tcount(k, t->size);
                size_t b = cnt[k] * t->size;
                in[k] = malloc(b);
                ref[k] = malloc(b);
                out[k] = k % 3 == 0 ? in[k] : malloc(b);
                for (uint64_t i = 0; i < cnt[k]; i++) {
                    put((char *)in[k] + i * t->size, t, value(op, g_rank, i, k));
                    put((char *)ref[k] + i * t->size, t, value(op, g_rank, i, k));
                }
                if (out[k] != in[k])
                    memset(out[k], 0x77, b);
            }
            for (int k = 0; k < NT; k++)
                CHECK(HcclAllReduce(ref[k], ref[k], cnt[k], t->t, (HcclReduceOp)op, comm, NULL));
            CHECK(HcclAllReduceMulti((const void **)in, out, cnt, NT, t->t, (HcclReduceOp)op,
                                     comm, NULL));
            for (int k = 0; k < NT; k++) {
                g_checks++;
                if (memcmp(out[k], ref[k], cnt[k] * t->size) != 0)
                    failf("AllReduceMulti %s %s: tensor %d (%llu elements%s) differs from "
                          "HcclAllReduce", t->name, opname(op), k, (unsigned long long)cnt[k],
                          out[k] == in[k] ? ", in place" : "");
                if (t->t == HCCL_DATA_TYPE_UINT32 && op == HCCL_REDUCE_SUM)
                    for (uint64_t i = 0; i < cnt[k]; i++) {
                        int32_t s = 0;
                        for (int r = 0; r < g_n; r++)
                            s += value(op, r, i, k);
                        if (((int32_t *)out[k])[i] != s) {
                            failf("AllReduceMulti uint32 sum: tensor %d element %llu = %d, "
                                  "expected %d", k, (unsigned long long)i,
                                  ((int32_t *)out[k])[i], s);
                            break;
                        }
                    }
            }
            for (int k = 0; k < NT; k++) {
                if (out[k] != in[k])
                    free(out[k]);
                free(in[k]);
                free(ref[k]);
            }
        }
    }
}

static void section_plan(HcclComm comm)
{
    hc_fusion_counters_t c0, c1;
    enum { NS = 100, SN = 64 };
    float *buf = malloc(NS * SN * sizeof(float));
    const void *in[NS];
    void *out[NS];
    uint64_t cnt[NS];
    for (int k = 0; k < NS; k++) {
        in[k] = out[k] = buf + k * SN;
        cnt[k] = SN;
    }
    for (int i = 0; i < NS * SN; i++)
        buf[i] = (float)(g_rank + i % 3);
    hc_fusion_counters(&c0);
    CHECK(HcclAllReduceMulti(in, out, cnt, NS, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm,
                             NULL));
    hc_fusion_counters(&c1);
    g_checks++;
    if (c1.net_ops - c0.net_ops != 1 || c1.tensors - c0.tensors != NS)
        failf("100 tensors of 256 B: %llu network operations for %llu tensors (expected 1)",
              (unsigned long long)(c1.net_ops - c0.net_ops),
              (unsigned long long)(c1.tensors - c0.tensors));
    float want = 0;
    for (int r = 0; r < g_n; r++)
        want += (float)r;
    g_checks++;
    for (int i = 0; i < NS * SN; i++)
        if (buf[i] != want + (float)(g_n * (i % 3))) {
            failf("100 tensors of 256 B: element %d = %g", i, buf[i]);
            break;
        }
    /* one big tensor between small ones: alone, no bucket for it */
    enum { BIG = 3 << 20 }; /* 12 MB: more than a 64 KB test bucket and the 256 KB minimum */
    float *big = malloc((size_t)BIG * sizeof(float));
    for (size_t i = 0; i < BIG; i++)
        big[i] = (float)(i % 5);
    const void *in3[3] = {buf, big, buf + SN};
    void *out3[3] = {buf, big, buf + SN};
    uint64_t cnt3[3] = {SN, BIG, SN};
    hc_fusion_counters(&c0);
    CHECK(HcclAllReduceMulti(in3, out3, cnt3, 3, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm,
                             NULL));
    hc_fusion_counters(&c1);
    g_checks++;
    const unsigned long long ops = c1.net_ops - c0.net_ops, bk = c1.buckets - c0.buckets,
                             ga = c1.gathered - c0.gathered;
    if (g_gather) { /* DIRECT on lists: the smalls gathered, the big one alone or with them */
        if (bk != 0 || !((ops == 1 && ga == 1) || (ops == 3 && ga == 2)))
            failf("small, big, small: %llu operations, %llu buckets, %llu gathered (expected "
                  "1 gathered, or 2 gathered + 1 alone)", ops, bk, ga);
    } else if (ops != 2 || bk != 1 || ga != 0) {
        failf("small, big, small: %llu operations, %llu buckets, %llu gathered (expected 2, 1 "
              "and 0)", ops, bk, ga);
    }
    g_checks++;
    for (size_t i = 0; i < BIG; i += 997)
        if (big[i] != (float)(g_n * (i % 5))) {
            failf("big tensor: element %zu = %g", i, big[i]);
            break;
        }
    free(big);
    free(buf);
}

static void section_group(HcclComm comm)
{
    enum { NA = 10, NM = 2, AN = 3000 };
    int32_t *a = malloc(NA * AN * sizeof(int32_t)), *m = malloc(NM * AN * sizeof(int32_t));
    int32_t *bc = malloc(AN * sizeof(int32_t));
    for (int i = 0; i < NA * AN; i++)
        a[i] = g_rank * 3 + i;
    for (int i = 0; i < NM * AN; i++)
        m[i] = (g_rank * 31 + i * 7) % 101;
    for (int i = 0; i < AN; i++)
        bc[i] = g_rank == 1 % g_n ? i * 5 : -1;
    hc_fusion_counters_t c0, c1;
    hc_fusion_counters(&c0);
    CHECK(HcclGroupStart());
    for (int k = 0; k < NA; k++) {
        uint64_t n = (uint64_t)AN - (uint64_t)k * 100;
        CHECK(HcclAllReduce(a + k * AN, a + k * AN, n, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM,
                            comm, NULL));
        if (k == 4) {
            CHECK(HcclBroadcast(bc, AN, HCCL_DATA_TYPE_INT32, 1 % (uint32_t)g_n, comm, NULL));
            for (int j = 0; j < NM; j++)
                CHECK(HcclAllReduce(m + j * AN, m + j * AN, AN, HCCL_DATA_TYPE_INT32,
                                    HCCL_REDUCE_MAX, comm, NULL));
        }
    }
    CHECK(HcclGroupEnd());
    hc_fusion_counters(&c1);
    g_checks++;
    if (c1.calls - c0.calls != 2 || c1.tensors - c0.tensors != NA + NM)
        failf("group: %llu fused sets of %llu tensors (expected 2 sets, %d tensors)",
              (unsigned long long)(c1.calls - c0.calls),
              (unsigned long long)(c1.tensors - c0.tensors), NA + NM);
    g_checks++;
    for (int k = 0; k < NA; k++)
        for (int i = 0; i < AN; i++) {
            int32_t w = g_rank * 3 + k * AN + i;
            if (i < AN - k * 100) {
                w = 0;
                for (int r = 0; r < g_n; r++)
                    w += r * 3 + k * AN + i;
            }
            if (a[k * AN + i] != w) {
                failf("group SUM AllReduce %d element %d = %d, expected %d", k, i,
                      a[k * AN + i], w);
                k = NA;
                break;
            }
        }
    g_checks++;
    for (int i = 0; i < NM * AN; i++) {
        int32_t w = -1;
        for (int r = 0; r < g_n; r++)
            w = (r * 31 + i * 7) % 101 > w ? (r * 31 + i * 7) % 101 : w;
        if (m[i] != w) {
            failf("group MAX AllReduce element %d = %d, expected %d", i, m[i], w);
            break;
        }
    }
    g_checks++;
    for (int i = 0; i < AN; i++)
        if (bc[i] != i * 5) {
            failf("group Broadcast element %d = %d", i, bc[i]);
            break;
        }
    /* AllReduceMulti inside a group: its tensors join the group's SUM set */
    const void *in[2] = {a, a + AN};
    void *out[2] = {a, a + AN};
    uint64_t cnt[2] = {AN, AN};
    for (int i = 0; i < 3 * AN; i++)
        a[i] = g_rank + 1;
    hc_fusion_counters(&c0);
    CHECK(HcclGroupStart());
    CHECK(HcclAllReduceMulti(in, out, cnt, 2, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm,
                             NULL));
    CHECK(HcclAllReduce(a + 2 * AN, a + 2 * AN, AN, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm,
                        NULL));
    CHECK(HcclGroupEnd());
    hc_fusion_counters(&c1);
    g_checks++;
    if (c1.calls - c0.calls != 1 || c1.tensors - c0.tensors != 3)
        failf("AllReduceMulti in a group: %llu sets of %llu tensors (expected 1 of 3)",
              (unsigned long long)(c1.calls - c0.calls),
              (unsigned long long)(c1.tensors - c0.tensors));
    g_checks++;
    for (int i = 0; i < 3 * AN; i++)
        if (a[i] != g_n * (g_n + 1) / 2) {
            failf("AllReduceMulti in a group: element %d = %d", i, a[i]);
            break;
        }
    free(a);
    free(m);
    free(bc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_n);
    HcclComm comm;
    if (HcclCommInitMpi(MPI_COMM_WORLD, &comm) != HCCL_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    const char *algo = getenv("HCCL_ALLREDUCE_ALGO"), *det = getenv("HCCL_DETERMINISTIC");
    /* ranks on several hosts (the emulated cluster, or hosts declared in
     * HCCL_TOPO_FILE) pack: messages between hosts cannot gather in place */
    float probe[4] = {1, 2, 3, 4};
    uint64_t across = 0, total = 0;
    CHECK(HcclAllReduce(probe, probe, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL));
    CHECK(HcclCommGetInterNodeBytes(comm, &across, &total));
    unsigned long long mine = across, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    g_gather = g_n >= 2 && any == 0 && (algo == NULL || *algo == 0 || strcmp(algo, "DIRECT") == 0) &&
               (det == NULL || *det == 0 || strcmp(det, "0") == 0);
    section_types(comm);
    section_plan(comm);
    section_group(comm);
    CHECK(HcclCommDestroy(comm));
    long tot[2] = {g_checks, g_fails}, sum[2];
    MPI_Reduce(tot, sum, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test_fusion: %ld checks, %ld failures on %d ranks\n", sum[0], sum[1], g_n);
    MPI_Bcast(sum, 2, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return sum[1] ? 1 : 0;
}
