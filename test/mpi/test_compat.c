/*
 * test/mpi/test_compat.c - an HCCL program, written as torch_npu's
 * ProcessGroupHCCL / HCCLUtils and MindSpore's HCCL adapter make their
 * calls, that must build unchanged against hcomm's headers as C11 and as
 * C++ (-Wall -Werror) and run right at 1-5 ranks. Built three ways
 * (Makefile.am): test_compat (C, linked), test_compat_cxx (C++, linked) and
 * test_compat_dl (C, -DHC_DLOPEN: no link with hcomm; dlopen("libhccl.so")
 * and dlsym of every function, as torch_npu loads HCCL).
 *
 * It uses no MPI: mpirun only starts the processes (rank and size from
 * OMPI_COMM_WORLD_RANK/SIZE); the root info goes through a file, as a
 * launcher shares it.
 *
 * Usage: test_compat DIR [RANKTABLE]   DIR: for the root-info file;
 *        RANKTABLE: a rank table of the same ranks for
 *        HcclCommInitClusterInfoConfig (skipped without it).
 * Exit 0 when every check passed; prints "test_compat: N checks, M failures".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nanosleep under -std=c11 (g++ defines it already) */
#endif
#include <hccl/hccl.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef HC_DLOPEN
#include <dlfcn.h>
#endif

/* Every HCCL function the program calls (HcclCommConfigInit is inline). */
#define API(X) \
    X(HcclGetRootInfo) X(HcclCommInitRootInfo) X(HcclCommInitRootInfoConfig) \
    X(HcclCommInitClusterInfoConfig) X(HcclCommInitAll) X(HcclCommDestroy) \
    X(HcclGetRankSize) X(HcclGetRankId) X(HcclGetCommName) X(HcclGetCommAsyncError) \
    X(HcclGetErrorString) X(HcclGetCommConfigCapability) X(HcclSetConfig) X(HcclGetConfig) \
    X(HcclCommSuspend) X(HcclCommResume) X(HcclCommGetStatus) X(HcclCreateSubCommConfig) \
    X(HcclAllReduce) X(HcclBroadcast) X(HcclReduce) X(HcclReduceScatter) \
    X(HcclReduceScatterV) X(HcclAllGather) X(HcclAllGatherV) X(HcclScatter) \
    X(HcclAlltoAll) X(HcclAlltoAllV) X(HcclAlltoAllVC) X(HcclSend) X(HcclRecv) \
    X(HcclBatchSendRecv) X(HcclBarrier) X(HcclGroupStart) X(HcclGroupEnd) \
    X(HcclMemAlloc) X(HcclMemFree) X(HcclCommRegister) X(HcclCommDeregister)

#ifdef HC_DLOPEN
#define DECLARE(f) static __typeof__(&f) p_##f;
API(DECLARE)
#define F(f) p_##f
#else
#define F(f) f
#endif

static int g_rank, g_n;
static long g_checks, g_fails;

static void check(int ok, const char *fmt, ...)
{
    g_checks++;
    if (ok)
        return;
    g_fails++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[rank %d] FAIL ", g_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

#define RC(call, want) \
    do { \
        HcclResult r_ = (call); \
        check(r_ == (want), "%s = %d (%s), expected %d", #call, (int)r_, \
              F(HcclGetErrorString)(r_), (int)(want)); \
    } while (0)

static int env_int(const char *name, int def)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : def;
}

#ifdef HC_DLOPEN
static int load(void)
{
    void *lib = dlopen("libhccl.so", RTLD_NOW | RTLD_GLOBAL);
    if (lib == NULL) {
        fprintf(stderr, "test_compat: dlopen(libhccl.so): %s\n", dlerror());
        return -1;
    }
    int missing = 0;
#define LOAD(f) \
    *(void **)&p_##f = dlsym(lib, #f); \
    if (p_##f == NULL) { \
        fprintf(stderr, "test_compat: dlsym(%s): not found\n", #f); \
        missing++; \
    }
    API(LOAD)
    return missing ? -1 : 0;
}
#endif

/* Rank 0 writes the root info to DIR/rootinfo, the others wait for it. */
static int share_root_info(const char *dir, HcclRootInfo *ri)
{
    char path[512], tmp[600];
    snprintf(path, sizeof(path), "%s/rootinfo", dir);
    if (g_rank == 0) {
        RC(F(HcclGetRootInfo)(ri), HCCL_SUCCESS);
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        FILE *f = fopen(tmp, "wb");
        if (f == NULL || fwrite(ri, sizeof(*ri), 1, f) != 1 || fclose(f) != 0 ||
            rename(tmp, path) != 0) {
            perror("test_compat: writing the root info");
            return -1;
        }
        return 0;
    }
    for (int tries = 0; tries < 6000; tries++) { /* 60 s */
        FILE *f = fopen(path, "rb");
        if (f) {
            size_t got = fread(ri, sizeof(*ri), 1, f);
            fclose(f);
            if (got == 1)
                return 0;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "test_compat: rank %d: no root info in %s\n", g_rank, path);
    return -1;
}

/* torch_npu's createHcclCommConfig: fields set only where the capability
 * says the library takes them. */
static void make_config(HcclCommConfig *cfg, const char *name)
{
    HcclCommConfigInit(cfg);
    uint32_t cap = F(HcclGetCommConfigCapability)();
    check(cap > (uint32_t)HCCL_COMM_CONFIG_BUFFER_NAME, "capability %u", cap);
    if ((uint32_t)HCCL_COMM_CONFIG_BUFFER_SIZE < cap)
        cfg->hcclBufferSize = 64;
    if ((uint32_t)HCCL_COMM_CONFIG_DETERMINISTIC < cap)
        cfg->hcclDeterministic = HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET;
    if ((uint32_t)HCCL_COMM_CONFIG_COMM_NAME < cap)
        snprintf(cfg->hcclCommName, sizeof(cfg->hcclCommName), "%s", name);
    if ((uint32_t)HCCL_COMM_CONFIG_OP_EXPANSION_MODE < cap)
        cfg->hcclOpExpansionMode = 1;
    if ((uint32_t)HCCL_COMM_CONFIG_EXEC_TIMEOUT < cap)
        cfg->hcclExecTimeOut = 300;
    if ((uint32_t)HCCL_COMM_CONFIG_BUFFER_NAME < cap)
        snprintf(cfg->hcclBufferName, sizeof(cfg->hcclBufferName), "%s", "default");
}

static void allreduce_check(HcclComm comm, uint32_t n, uint32_t me, const char *what)
{
    float v[64];
    for (int i = 0; i < 64; i++)
        v[i] = (float)(me + 1) * (float)(i + 1);
    RC(F(HcclAllReduce)(v, v, 64, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL),
       HCCL_SUCCESS);
    float want = (float)n * (float)(n + 1) / 2.0f;
    for (int i = 0; i < 64; i++)
        if (v[i] != want * (float)(i + 1)) {
            check(0, "%s AllReduce[%d] = %g, expected %g", what, i, (double)v[i],
                  (double)(want * (float)(i + 1)));
            return;
        }
    check(1, "");
}

static void collectives(HcclComm comm, uint32_t n, uint32_t me)
{
    const size_t N = n;
    int32_t *s = (int32_t *)calloc(N * N * 4 + 64, sizeof(int32_t));
    int32_t *r = (int32_t *)calloc(N * N * 4 + 64, sizeof(int32_t));
    uint64_t *a = (uint64_t *)calloc(N * N + 4 * N, sizeof(uint64_t));
    if (s == NULL || r == NULL || a == NULL) {
        check(0, "out of memory");
        return;
    }
    uint64_t *c1 = a, *d1 = a + N, *c2 = a + 2 * N, *d2 = a + 3 * N, *mat = a + 4 * N;

    allreduce_check(comm, n, me, "world");
    /* Broadcast from the last rank */
    for (int i = 0; i < 16; i++)
        s[i] = me == n - 1 ? 1000 + i : -1;
    RC(F(HcclBroadcast)(s, 16, HCCL_DATA_TYPE_INT32, n - 1, comm, NULL), HCCL_SUCCESS);
    check(s[0] == 1000 && s[15] == 1015, "Broadcast: %d %d", s[0], s[15]);
    /* Reduce (max) to rank 0 */
    s[0] = (int32_t)me;
    r[0] = -1;
    RC(F(HcclReduce)(s, r, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MAX, 0, comm, NULL),
       HCCL_SUCCESS);
    if (me == 0)
        check(r[0] == (int32_t)n - 1, "Reduce max = %d", r[0]);
    /* AllGather, ReduceScatter, Scatter, AlltoAll: 2 elements a block */
    s[0] = (int32_t)me;
    s[1] = (int32_t)me * 10;
    RC(F(HcclAllGather)(s, r, 2, HCCL_DATA_TYPE_INT32, comm, NULL), HCCL_SUCCESS);
    for (uint32_t q = 0; q < n; q++)
        check(r[2 * q] == (int32_t)q && r[2 * q + 1] == (int32_t)q * 10, "AllGather block %u", q);
    for (uint32_t q = 0; q < 2 * n; q++)
        s[q] = (int32_t)q;
    RC(F(HcclReduceScatter)(s, r, 2, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, NULL),
       HCCL_SUCCESS);
    check(r[0] == (int32_t)(2 * me * n) && r[1] == (int32_t)((2 * me + 1) * n),
          "ReduceScatter: %d %d", r[0], r[1]);
    RC(F(HcclScatter)(s, r, 2, HCCL_DATA_TYPE_INT32, 0, comm, NULL), HCCL_SUCCESS);
    check(r[0] == (int32_t)(2 * me) && r[1] == (int32_t)(2 * me + 1), "Scatter");
    for (uint32_t q = 0; q < n; q++)
        s[q] = (int32_t)(me * 100 + q);
    RC(F(HcclAlltoAll)(s, 1, HCCL_DATA_TYPE_INT32, r, 1, HCCL_DATA_TYPE_INT32, comm, NULL),
       HCCL_SUCCESS);
    for (uint32_t q = 0; q < n; q++)
        check(r[q] == (int32_t)(q * 100 + me), "AlltoAll from %u: %d", q, r[q]);

    /* AlltoAllV and AlltoAllVC: rank i sends i + j + 1 elements to rank j */
    uint64_t so = 0, ro = 0;
    for (uint32_t j = 0; j < n; j++) {
        c1[j] = me + j + 1;
        d1[j] = so;
        so += c1[j];
        c2[j] = j + me + 1;
        d2[j] = ro;
        ro += c2[j];
        for (uint32_t i = 0; i < n; i++)
            mat[i * N + j] = i + j + 1;
    }
    for (uint64_t k = 0; k < so; k++)
        s[k] = (int32_t)(me * 1000 + k);
    for (int pass = 0; pass < 2; pass++) {
        memset(r, 0xff, ro * sizeof(int32_t));
        if (pass == 0)
            RC(F(HcclAlltoAllV)(s, c1, d1, HCCL_DATA_TYPE_INT32, r, c2, d2, HCCL_DATA_TYPE_INT32,
                                comm, NULL), HCCL_SUCCESS);
        else
            RC(F(HcclAlltoAllVC)(s, mat, HCCL_DATA_TYPE_INT32, r, HCCL_DATA_TYPE_INT32, comm,
                                 NULL), HCCL_SUCCESS);
        int bad = 0;
        for (uint32_t q = 0; q < n; q++) {
            uint64_t off_at_q = 0; /* where q's block for me starts in q's sendBuf */
            for (uint32_t j = 0; j < me; j++)
                off_at_q += q + j + 1;
            for (uint64_t k = 0; k < c2[q]; k++)
                bad |= r[d2[q] + k] != (int32_t)(q * 1000 + off_at_q + k);
        }
        check(!bad, "%s: wrong data", pass ? "AlltoAllVC" : "AlltoAllV");
    }
    /* AllGatherV: rank q contributes q + 1 elements */
    ro = 0;
    for (uint32_t q = 0; q < n; q++) {
        c2[q] = q + 1;
        d2[q] = ro;
        ro += q + 1;
    }
    for (uint32_t k = 0; k <= me; k++)
        s[k] = (int32_t)(me * 100 + k);
    RC(F(HcclAllGatherV)(s, me + 1, r, c2, d2, HCCL_DATA_TYPE_INT32, comm, NULL), HCCL_SUCCESS);
    int bad = 0;
    for (uint32_t q = 0; q < n; q++)
        for (uint32_t k = 0; k <= q; k++)
            bad |= r[d2[q] + k] != (int32_t)(q * 100 + k);
    check(!bad, "AllGatherV: wrong data");
    /* ReduceScatterV: block q has q + 1 elements, every element 1 + rank */
    for (uint64_t k = 0; k < ro; k++)
        s[k] = (int32_t)(me + 1) + (int32_t)k;
    RC(F(HcclReduceScatterV)(s, c2, d2, r, me + 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm,
                             NULL), HCCL_SUCCESS);
    bad = 0;
    for (uint32_t k = 0; k <= me; k++)
        bad |= r[k] != (int32_t)(n * (n + 1) / 2 + n * (d2[me] + k));
    check(!bad, "ReduceScatterV: wrong data");

    /* Batched ring exchange, torch_npu's batch_isend_irecv */
    if (n > 1) {
        int32_t out = (int32_t)me, in = -1;
        HcclSendRecvItem it[2];
        memset(it, 0, sizeof(it));
        it[0].sendRecvType = HCCL_RECV;
        it[0].buf = &in;
        it[0].count = 1;
        it[0].dataType = HCCL_DATA_TYPE_INT32;
        it[0].remoteRank = (me + n - 1) % n;
        it[1].sendRecvType = HCCL_SEND;
        it[1].buf = &out;
        it[1].count = 1;
        it[1].dataType = HCCL_DATA_TYPE_INT32;
        it[1].remoteRank = (me + 1) % n;
        RC(F(HcclBatchSendRecv)(it, 2, comm, NULL), HCCL_SUCCESS);
        check(in == (int32_t)((me + n - 1) % n), "BatchSendRecv got %d", in);
        /* and as a group of Send/Recv */
        in = -1;
        RC(F(HcclGroupStart)(), HCCL_SUCCESS);
        RC(F(HcclSend)(&out, 1, HCCL_DATA_TYPE_INT32, (me + 1) % n, comm, NULL), HCCL_SUCCESS);
        RC(F(HcclRecv)(&in, 1, HCCL_DATA_TYPE_INT32, (me + n - 1) % n, comm, NULL),
           HCCL_SUCCESS);
        RC(F(HcclGroupEnd)(), HCCL_SUCCESS);
        check(in == (int32_t)((me + n - 1) % n), "grouped Send/Recv got %d", in);
    }
    RC(F(HcclBarrier)(comm, NULL), HCCL_SUCCESS);
    free(s);
    free(r);
    free(a);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_compat DIR [RANKTABLE]\n");
        return 2;
    }
    g_rank = env_int("OMPI_COMM_WORLD_RANK", env_int("PMIX_RANK", 0));
    g_n = env_int("OMPI_COMM_WORLD_SIZE", 1);
#ifdef HC_DLOPEN
    if (load() != 0)
        return 1;
#endif
    const uint32_t n = (uint32_t)g_n, me = (uint32_t)g_rank;

    /* process-wide deterministic switch (torch_npu: HcclSetConfig) */
    HcclConfigValue v;
    v.value = 1;
    RC(F(HcclSetConfig)(HCCL_DETERMINISTIC, v), HCCL_SUCCESS);
    v.value = -1;
    RC(F(HcclGetConfig)(HCCL_DETERMINISTIC, &v), HCCL_SUCCESS);
    check(v.value == 1, "HcclGetConfig = %d", (int)v.value);

    HcclRootInfo ri;
    if (share_root_info(argv[1], &ri) != 0)
        return 1;
    HcclCommConfig cfg;
    make_config(&cfg, "compat_world");
    HcclComm comm = NULL;
    RC(F(HcclCommInitRootInfoConfig)(n, &ri, me, &cfg, &comm), HCCL_SUCCESS);
    if (comm == NULL)
        return 1;
    uint32_t sz = 0, id = 99;
    RC(F(HcclGetRankSize)(comm, &sz), HCCL_SUCCESS);
    RC(F(HcclGetRankId)(comm, &id), HCCL_SUCCESS);
    check(sz == n && id == me, "size %u rank %u", sz, id);
    char name[COMM_NAME_MAX_LENGTH];
    RC(F(HcclGetCommName)(comm, name), HCCL_SUCCESS);
    check(strcmp(name, "compat_world") == 0, "name '%s'", name);

    collectives(comm, n, me);

    /* suspend / resume (local), seen through the status by name */
    HcclCommStatus st = HCCL_COMM_STATUS_INVALID;
    RC(F(HcclCommGetStatus)("compat_world", &st), HCCL_SUCCESS);
    check(st == HCCL_COMM_STATUS_READY, "status %d", (int)st);
    RC(F(HcclCommSuspend)(comm), HCCL_SUCCESS);
    RC(F(HcclCommGetStatus)("compat_world", &st), HCCL_SUCCESS);
    check(st == HCCL_COMM_STATUS_SUSPENDING, "status after suspend %d", (int)st);
    float x = 1.0f;
    RC(F(HcclAllReduce)(&x, &x, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL),
       HCCL_E_SUSPENDING);
    RC(F(HcclCommResume)(comm), HCCL_SUCCESS);
    RC(F(HcclCommGetStatus)("compat_world", &st), HCCL_SUCCESS);
    check(st == HCCL_COMM_STATUS_READY, "status after resume %d", (int)st);
    HcclResult async = HCCL_E_INTERNAL;
    RC(F(HcclGetCommAsyncError)(comm, &async), HCCL_SUCCESS);
    check(async == HCCL_SUCCESS, "async error %d", (int)async);

    /* sub-communicator of the even ranks (torch_npu's new_group) */
    uint32_t ids[8], k = 0;
    for (uint32_t q = 0; q < n; q += 2)
        ids[k++] = q;
    if (me % 2 == 0) {
        HcclCommConfig scfg;
        make_config(&scfg, "compat_even");
        HcclComm sub = NULL;
        RC(F(HcclCreateSubCommConfig)(&comm, k, ids, 7, me / 2, &scfg, &sub), HCCL_SUCCESS);
        if (sub) {
            allreduce_check(sub, k, me / 2, "sub");
            RC(F(HcclCommDestroy)(sub), HCCL_SUCCESS);
        }
    }

    /* registered buffers under HCCL's HcclCommRegister signature */
    void *mem = NULL, *h = NULL;
    RC(F(HcclMemAlloc)(&mem, 4096), HCCL_SUCCESS);
    if (mem) {
        RC(F(HcclCommRegister)(comm, mem, 4096, &h, 0), HCCL_SUCCESS);
        float *f = (float *)mem;
        f[0] = 1.0f;
        RC(F(HcclAllReduce)(f, f, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL),
           HCCL_SUCCESS);
        check(f[0] == (float)n, "registered AllReduce %g", (double)f[0]);
        if (h)
            RC(F(HcclCommDeregister)(comm, h), HCCL_SUCCESS);
        RC(F(HcclMemFree)(mem), HCCL_SUCCESS);
    }

    /* rank table, with a configuration */
    if (argc > 2) {
        HcclCommConfig ccfg;
        make_config(&ccfg, "compat_cluster");
        HcclComm cl = NULL;
        RC(F(HcclCommInitClusterInfoConfig)(argv[2], me, &ccfg, &cl), HCCL_SUCCESS);
        if (cl) {
            RC(F(HcclGetCommName)(cl, name), HCCL_SUCCESS);
            check(strcmp(name, "compat_cluster") == 0, "cluster name '%s'", name);
            allreduce_check(cl, n, me, "cluster");
            RC(F(HcclCommDestroy)(cl), HCCL_SUCCESS);
        }
    }

    /* ranks in this process (test_initall.c drives several of them) */
    int32_t dev[2] = {0, 1};
    HcclComm one[2] = {NULL, NULL};
    RC(F(HcclCommInitAll)(1, dev, one), HCCL_SUCCESS);
    if (one[0]) {
        allreduce_check(one[0], 1, 0, "HcclCommInitAll(1)");
        RC(F(HcclCommDestroy)(one[0]), HCCL_SUCCESS);
    }
    RC(F(HcclCommInitAll)(2, dev, one), HCCL_SUCCESS);
    for (int i = 0; i < 2; i++)
        if (one[i])
            RC(F(HcclCommDestroy)(one[i]), HCCL_SUCCESS);

    RC(F(HcclCommDestroy)(comm), HCCL_SUCCESS);
    if (g_rank == 0 || g_fails)
        printf("test_compat: rank %d: %ld checks, %ld failures\n", g_rank, g_checks, g_fails);
    return g_fails ? 1 : 0;
}
