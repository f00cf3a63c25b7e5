/*
 * tools/hcomm-perf.c - the hcomm benchmark, in the style of nccl-tests
 * (docs/PERFORMANCE.md, "Method"; run `hcomm-perf -h`).
 *
 *   mpirun -np 2 hcomm-perf -C allreduce -b 8 -e 64M -f 2 -M
 *
 * One binary for every collective (-C). It builds one hcomm communicator over
 * MPI_COMM_WORLD with the public API only, allocates its buffers once at the
 * largest size (pre-faulted), then for each size:
 *
 *   1. one warm-up call (checked when -c 1: outputs poisoned first, every
 *      element verified after), whose time sets how many iterations fit in
 *      the time budget (-T, at least 3 timed iterations at large sizes);
 *   2. the remaining warm-up calls;
 *   3. the timed iterations. Every call is preceded by a barrier (not
 *      timed: MPI_Barrier on one node, HcclBarrier across nodes, -S) and
 *      timed alone on every rank (CLOCK_MONOTONIC); with -M, the
 *      equivalent MPI call runs in the same iteration on the same buffers,
 *      hcomm first on even iterations and MPI first on odd ones, so both see
 *      the same machine state. The last iteration is checked like the
 *      warm-up one (inputs reset for in-place variants, outputs poisoned).
 *   4. one MPI_Allreduce(MAX) over the per-iteration times (after the loop,
 *      outside the timed region): time = median over iterations of the
 *      slowest rank, in microseconds.
 *
 * Check values are small integers that depend on rank and index, chosen per
 * type and op so that the result is exact in any reduction order (sums stay
 * within the type's exact range, products are +-2 or +-3, averages divide
 * exactly); data-moving collectives use a byte pattern of (rank, offset).
 * The MPI results are checked the same way: a mismatch there points at the
 * checker, and is reported as a warning.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include "hugepages.h"
#include "stats.h"

extern char **environ;

/* ------------------------------------------------------------------ tables */

typedef enum {
    C_ALLREDUCE, C_BROADCAST, C_REDUCE, C_ALLGATHER, C_REDUCESCATTER, C_ALLTOALL,
    C_SENDRECV, C_ALLREDUCE_MULTI, C_REDUCESCATTERV, C_N
} coll_t;

typedef enum { BW_ALLREDUCE, BW_NM1_N, BW_ONE } bw_t;

/* how the count splits into per-rank blocks: none; N equal blocks; block i
 * of (i+1)k elements (k = count / (N(N+1)/2)), contiguous in rank order */
typedef enum { BLK_NONE, BLK_EQUAL, BLK_GROWING } blocks_t;

static const struct {
    const char *name;
    const char *algo_env;    /* the HCCL_*_ALGO variable that -a sets */
    const char *mpi_call;    /* what -M runs */
    int reducing;            /* takes -o */
    int rooted;              /* takes -r */
    blocks_t blocks;         /* per-rank blocks of the count */
    int in_place_ok;         /* -i 1 has a meaning */
    bw_t bw;
} colls[C_N] = {
    [C_ALLREDUCE] = {"allreduce", "HCCL_ALLREDUCE_ALGO", "MPI_Allreduce", 1, 0, BLK_NONE, 1,
                     BW_ALLREDUCE},
    [C_BROADCAST] = {"broadcast", "HCCL_BCAST_ALGO", "MPI_Bcast", 0, 1, BLK_NONE, 0, BW_ONE},
    [C_REDUCE] = {"reduce", "HCCL_REDUCE_ALGO", "MPI_Reduce", 1, 1, BLK_NONE, 1, BW_ONE},
    [C_ALLGATHER] = {"allgather", "HCCL_ALLGATHER_ALGO", "MPI_Allgather", 0, 0, BLK_EQUAL, 1,
                     BW_NM1_N},
    [C_REDUCESCATTER] = {"reducescatter", "HCCL_REDUCESCATTER_ALGO",
                         "MPI_Reduce_scatter_block", 1, 0, BLK_EQUAL, 1, BW_NM1_N},
    [C_ALLTOALL] = {"alltoall", "HCCL_ALLTOALL_ALGO", "MPI_Alltoall", 0, 0, BLK_EQUAL, 0,
                    BW_NM1_N},
    [C_SENDRECV] = {"sendrecv", NULL, "MPI_Sendrecv (ring)", 0, 0, BLK_NONE, 0, BW_ONE},
    [C_ALLREDUCE_MULTI] = {"allreduce_multi", "HCCL_ALLREDUCE_ALGO",
                           "MPI_Allreduce per tensor", 1, 0, BLK_NONE, 1, BW_ALLREDUCE},
    [C_REDUCESCATTERV] = {"reducescatterv", "HCCL_REDUCESCATTER_ALGO", "MPI_Reduce_scatter", 1,
                          0, BLK_GROWING, 1, BW_NM1_N},
};

typedef enum { K_INT, K_UINT, K_F16, K_BF16, K_F32, K_F64, K_I128, K_FP8 } kind_t;

typedef struct {
    const char *names[4];    /* names[0] is printed */
    HcclDataType dt;
    size_t size;
    kind_t kind;
    double exact;            /* largest magnitude held exactly (sums stay below) */
} dtype_t;

static const dtype_t dtypes[] = {
    {{"int8", "char", NULL}, HCCL_DATA_TYPE_INT8, 1, K_INT, 127},
    {{"uint8", NULL}, HCCL_DATA_TYPE_UINT8, 1, K_UINT, 255},
    {{"int16", "short", NULL}, HCCL_DATA_TYPE_INT16, 2, K_INT, 32767},
    {{"uint16", NULL}, HCCL_DATA_TYPE_UINT16, 2, K_UINT, 65535},
    {{"int32", "int", NULL}, HCCL_DATA_TYPE_INT32, 4, K_INT, 2147483647.0},
    {{"uint32", NULL}, HCCL_DATA_TYPE_UINT32, 4, K_UINT, 4294967295.0},
    {{"int64", "long", NULL}, HCCL_DATA_TYPE_INT64, 8, K_INT, 9007199254740992.0},
    {{"uint64", NULL}, HCCL_DATA_TYPE_UINT64, 8, K_UINT, 9007199254740992.0},
    {{"half", "fp16", "float16", NULL}, HCCL_DATA_TYPE_FP16, 2, K_F16, 2048},
    {{"bfloat16", "bf16", "bfp16", NULL}, HCCL_DATA_TYPE_BFP16, 2, K_BF16, 256},
    {{"float", "fp32", "float32", NULL}, HCCL_DATA_TYPE_FP32, 4, K_F32, 16777216.0},
    {{"double", "fp64", "float64", NULL}, HCCL_DATA_TYPE_FP64, 8, K_F64, 9007199254740992.0},
    {{"int128", NULL}, HCCL_DATA_TYPE_INT128, 16, K_I128, 9007199254740992.0},
    {{"fp8e4m3", "fp8_e4m3", NULL}, HCCL_DATA_TYPE_FP8E4M3, 1, K_FP8, 16},
    {{"fp8e5m2", "fp8_e5m2", NULL}, HCCL_DATA_TYPE_FP8E5M2, 1, K_FP8, 8},
};
#define N_DTYPES (sizeof(dtypes) / sizeof(dtypes[0]))

static const struct {
    const char *name;
    HcclReduceOp op;
} ops[] = {
    {"sum", HCCL_REDUCE_SUM}, {"prod", HCCL_REDUCE_PROD}, {"max", HCCL_REDUCE_MAX},
    {"min", HCCL_REDUCE_MIN}, {"avg", HCCL_REDUCE_AVG},
};
#define N_OPS (sizeof(ops) / sizeof(ops[0]))

/* allreduce_multi: the size is split into 8 tensors in these proportions
 * (sixty-fourths, a mix of large and small gradients); the last tensor takes
 * the rounding remainder. Each tensor starts on a 256-byte boundary with at
 * least 256 poisoned bytes before the next, which the check verifies stay
 * untouched. */
#define MULTI_N 8
static const unsigned multi_w[MULTI_N] = {13, 2, 8, 1, 21, 3, 5, 11};
#define MULTI_GAP 256
#define MULTI_ALIGN 256

#define POISON 0xA5

/* ------------------------------------------------------------------ state */

typedef struct {
    uint64_t size, count;
    double time, algbw, busbw;
    long long wrong;
    int has_mpi;
    double mpi_time, mpi_busbw, ratio;
    long long mpi_wrong;
    int iters, warmup;
    double mcp_gbps; /* -R: single-core memcpy of the size, GB/s (0: not measured) */
} row_t;

typedef struct {
    /* options */
    uint64_t minb, maxb;
    uint64_t factor;
    int iters, warmup, check, root, in_place, with_mpi, check_only, ref, reg;
    int thp;            /* -H: buffers advised MADV_HUGEPAGE */
    int sync_hc;        /* -S: 1 HcclBarrier before each timed call, 0 MPI_Barrier,
                         * -1 (auto) HcclBarrier when the ranks span several nodes */
    int thp_err;        /* errno of a failed madvise (0: none) */
    uint64_t thp_bytes; /* of the two buffers, in huge pages after pre-faulting */
    double budget;
    coll_t coll;
    const dtype_t *t;
    HcclReduceOp op;
    const char *algo, *json;
    /* MPI and hcomm */
    int rank, n;
    HcclComm comm;
    MPI_Datatype mt;         /* MPI type for -M; MPI_DATATYPE_NULL: MPI_BYTE for moves */
    MPI_Op mop;
    int mpi_ok;              /* -M possible for this type and op */
    const char *mpi_why;     /* why not */
    /* buffers, allocated once */
    unsigned char *sbuf, *rbuf;
    size_t buf_bytes;
    void *sreg, *rreg;       /* -A: their registration handles */
    /* the current size */
    uint64_t count;          /* total elements (nccl-tests' count) */
    uint64_t blk;            /* per-rank block in elements (allgather, ...); k of
                              * reducescatterv */
    uint64_t *vcnt, *vdispl; /* [n]: reducescatterv's blocks, elements */
    int *vcnt_mpi;           /* [n]: the same counts for MPI_Reduce_scatter */
    uint64_t mine_off, mine_cnt; /* this rank's block of a reduce-scatter, elements */
    uint64_t mcount[MULTI_N], moff[MULTI_N];   /* allreduce_multi, moff in bytes */
    uint64_t mend;           /* bytes of rbuf covered by allreduce_multi */
    int sum_k, sum_lo;       /* check value ranges */
    double *times[2];
    double line_ns;          /* core-to-core cache-line latency; 0: not measured */
    int nstep;               /* local ranks of world rank 0's node with a step time */
    double *step_ns;         /* [nstep]: vCPU speed of each (step_ns_of) */
    int *step_cpu;           /* [nstep]: the CPU it ran on */
    /* where it runs */
    int nodes, local;        /* nodes of the job; ranks on this node */
    long cores;              /* online cores of this node */
    char host[256];
    char mpilib[MPI_MAX_LIBRARY_VERSION_STRING]; /* up to the first comma or line end */
} ctx_t;

enum { SIDE_HC = 0, SIDE_MPI = 1 };

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* The machine's state in this run: the one-way latency of a cache line
 * between local ranks 0 and 1 (a ping-pong of two flags on lines of their
 * own in an MPI shared window), ns. 0 when not measured: one rank on the
 * node, or more ranks than cores (a spinning partner may not be running).
 * On a VM it moves with where the host runs the two vCPUs (see
 * docs/PERFORMANCE.md), and with it every small-message time and the
 * cross-core bandwidth: bench.sh reports it per run. */
static double line_latency_ns(MPI_Comm local_comm, int lrank, int local, long cores)
{
    enum { WARM = 2000, N = 20000, STRIDE = 16 /* words: 128 B apart */ };
    if (local < 2 || local > cores)
        return 0;
    uint64_t *p = NULL;
    MPI_Win win;
    if (MPI_Win_allocate_shared(lrank == 0 ? 4096 : 0, 1, MPI_INFO_NULL, local_comm, &p, &win) !=
        MPI_SUCCESS)
        return 0;
    MPI_Aint sz;
    int du;
    MPI_Win_shared_query(win, 0, &sz, &du, &p);
    if (lrank == 0)
        memset(p, 0, 4096);
    MPI_Barrier(local_comm);
    double t = 0;
    if (lrank < 2) {
        uint64_t *mine = p + (lrank ? STRIDE : 0), *theirs = p + (lrank ? 0 : STRIDE);
        double t0 = 0;
        for (uint64_t i = 1; i <= WARM + N; i++) {
            if (i == WARM + 1)
                t0 = now_us();
            if (lrank == 0)
                __atomic_store_n(mine, i, __ATOMIC_RELEASE);
            for (unsigned spin = 1; __atomic_load_n(theirs, __ATOMIC_ACQUIRE) < i; spin++)
                if (spin % 4096 == 0)
                    sched_yield(); /* the partner is not running: let it */
            if (lrank == 1)
                __atomic_store_n(mine, i, __ATOMIC_RELEASE);
        }
        t = (now_us() - t0) * 1e3 / (2.0 * N);
    }
    MPI_Barrier(local_comm);
    MPI_Win_free(&win);
    return t;
}

/* The machine's state in this run, 2: how fast each local rank's vCPU runs
 * plain code, in ns per step of a chain of additions through memory (each
 * step loads what the one before stored: the store-to-load path that
 * every bookkeeping line of a small call uses), the best of three runs of
 * 2 million steps (~1 ms each), every local rank alone while the others
 * wait in a barrier, and the CPU it ran on. On a VM a vCPU can run such
 * code several times slower than another for minutes (the host runs
 * something beside it; 2.7x seen here, while a chain in registers ran at
 * the same speed on both: docs/PERFORMANCE.md), and the slowest rank,
 * whose time hcomm-perf reports, is then usually the one on it. Local rank
 * 0 gets every rank's result. */
static void step_ns_of(MPI_Comm local_comm, int lrank, int local, double *ns, int *cpu)
{
    enum { STEPS = 2000000, REPS = 3 };
    double mine = 0;
    int mycpu = -1;
    for (int r = 0; r < local; r++) {
        MPI_Barrier(local_comm);
        if (r != lrank)
            continue;
        for (int k = 0; k < REPS; k++) {
            volatile uint64_t x = 1; /* in memory: a load and a store per step */
            double t0 = now_us();
            for (int i = 0; i < STEPS; i++)
                x += (uint64_t)i;
            double t = (now_us() - t0) * 1e3 / STEPS;
            if (k == 0 || t < mine)
                mine = t;
        }
        mycpu = sched_getcpu();
    }
    MPI_Gather(&mine, 1, MPI_DOUBLE, ns, 1, MPI_DOUBLE, 0, local_comm);
    MPI_Gather(&mycpu, 1, MPI_INT, cpu, 1, MPI_INT, 0, local_comm);
}

static const char *op_name(HcclReduceOp op)
{
    for (size_t i = 0; i < N_OPS; i++)
        if (ops[i].op == op)
            return ops[i].name;
    return "?";
}

static ctx_t *g_ctx;

static void hc_fail(const char *call, HcclResult rc)
{
    const ctx_t *c = g_ctx;
    if (c->count == 0) { /* before the first size: HcclCommInitMpi */
        fprintf(stderr, "hcomm-perf: rank %d: %.*s failed: %s (%d)\n", c->rank,
                (int)strcspn(call, "("), call, HcclGetErrorString(rc), (int)rc);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fprintf(stderr,
            "hcomm-perf: rank %d: %.*s failed: %s (%d); collective %s, size %llu B, count %llu, "
            "type %s, op %s, root %d, in-place %d\n",
            c->rank, (int)strcspn(call, "("), call, HcclGetErrorString(rc), (int)rc,
            colls[c->coll].name, (unsigned long long)(c->count * c->t->size),
            (unsigned long long)c->count, c->t->names[0],
            colls[c->coll].reducing ? op_name(c->op) : "none", colls[c->coll].rooted ? c->root : -1,
            c->in_place);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define HC(call) \
    do { \
        HcclResult rc_ = (call); \
        if (rc_ != HCCL_SUCCESS) \
            hc_fail(#call, rc_); \
    } while (0)

/* -------------------------------------------------------- element access */

static uint16_t d2h(double v)
{
    uint16_t s = signbit(v) ? 0x8000 : 0;
    v = fabs(v);
    if (isnan(v))
        return 0x7e00;
    if (v == 0)
        return s;
    if (v >= 65520.0)
        return s | 0x7c00;
    int e;
    double m = frexp(v, &e); /* v = m * 2^e, m in [0.5, 1) */
    int E = e - 1 + 15;
    if (E <= 0)
        return s | (uint16_t)nearbyint(v * 16777216.0);
    double q = nearbyint((m * 2 - 1) * 1024);
    if (q == 1024) {
        q = 0;
        E++;
    }
    if (E >= 31)
        return s | 0x7c00;
    return s | (uint16_t)(E << 10) | (uint16_t)q;
}

static double h2d(uint16_t h)
{
    int E = (h >> 10) & 31, M = h & 1023;
    double v = E == 0 ? ldexp(M, -24) : E == 31 ? (M ? NAN : INFINITY) : ldexp(1024 + M, E - 25);
    return h & 0x8000 ? -v : v;
}

static uint16_t f2bf(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if (isnan(f))
        return 0x7fc0;
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static double bf2d(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void put(void *b, uint64_t i, const dtype_t *t, double v)
{
    switch (t->dt) {
    case HCCL_DATA_TYPE_INT8: ((int8_t *)b)[i] = (int8_t)v; break;
    case HCCL_DATA_TYPE_UINT8: ((uint8_t *)b)[i] = (uint8_t)v; break;
    case HCCL_DATA_TYPE_INT16: ((int16_t *)b)[i] = (int16_t)v; break;
    case HCCL_DATA_TYPE_UINT16: ((uint16_t *)b)[i] = (uint16_t)v; break;
    case HCCL_DATA_TYPE_INT32: ((int32_t *)b)[i] = (int32_t)v; break;
    case HCCL_DATA_TYPE_UINT32: ((uint32_t *)b)[i] = (uint32_t)v; break;
    case HCCL_DATA_TYPE_INT64: ((int64_t *)b)[i] = (int64_t)v; break;
    case HCCL_DATA_TYPE_UINT64: ((uint64_t *)b)[i] = (uint64_t)v; break;
    case HCCL_DATA_TYPE_FP16: ((uint16_t *)b)[i] = d2h(v); break;
    case HCCL_DATA_TYPE_BFP16: ((uint16_t *)b)[i] = f2bf((float)v); break;
    case HCCL_DATA_TYPE_FP32: ((float *)b)[i] = (float)v; break;
    case HCCL_DATA_TYPE_FP64: ((double *)b)[i] = v; break;
    case HCCL_DATA_TYPE_INT128: {
        int64_t *p = (int64_t *)b + 2 * i; /* little-endian: low word first */
        p[0] = (int64_t)v;
        p[1] = v < 0 ? -1 : 0;
        break;
    }
    default: ((uint8_t *)b)[i] = (uint8_t)(int)v; break; /* fp8: never reduced */
    }
}

static double get(const void *b, uint64_t i, const dtype_t *t)
{
    switch (t->dt) {
    case HCCL_DATA_TYPE_INT8: return ((const int8_t *)b)[i];
    case HCCL_DATA_TYPE_UINT8: return ((const uint8_t *)b)[i];
    case HCCL_DATA_TYPE_INT16: return ((const int16_t *)b)[i];
    case HCCL_DATA_TYPE_UINT16: return ((const uint16_t *)b)[i];
    case HCCL_DATA_TYPE_INT32: return ((const int32_t *)b)[i];
    case HCCL_DATA_TYPE_UINT32: return ((const uint32_t *)b)[i];
    case HCCL_DATA_TYPE_INT64: return (double)((const int64_t *)b)[i];
    case HCCL_DATA_TYPE_UINT64: return (double)((const uint64_t *)b)[i];
    case HCCL_DATA_TYPE_FP16: return h2d(((const uint16_t *)b)[i]);
    case HCCL_DATA_TYPE_BFP16: return bf2d(((const uint16_t *)b)[i]);
    case HCCL_DATA_TYPE_FP32: return ((const float *)b)[i];
    case HCCL_DATA_TYPE_FP64: return ((const double *)b)[i];
    case HCCL_DATA_TYPE_INT128: {
        const int64_t *p = (const int64_t *)b + 2 * i;
        if (p[1] != (p[0] < 0 ? -1 : 0))
            return NAN;
        return (double)p[0];
    }
    default: return ((const uint8_t *)b)[i];
    }
}

/* ------------------------------------------------------------ check data */

/* Byte pattern of the data-moving collectives: differs between ranks at the
 * same offset and between nearby offsets, blocks and pages of one rank. */
static inline uint8_t pat(int rank, uint64_t i)
{
    return (uint8_t)(i + (i >> 8) * 3 + (i >> 16) * 5 + (i >> 24) * 7 + (uint64_t)rank * 0x9d +
                     0x5b);
}

static int is_signed_kind(kind_t k)
{
    return k != K_UINT && k != K_FP8;
}

/* Input element i of `rank` for reducing collectives: a small integer,
 * chosen for the op of -o. */
static double gen(const ctx_t *c, int rank, uint64_t i)
{
    uint64_t r = (uint64_t)rank;
    switch (c->op) {
    case HCCL_REDUCE_PROD: {
        /* one rank contributes 2 or 3, the others 1: the product is +-2 or +-3 */
        double mag = r == i % c->n ? 2 + (double)((i / c->n) & 1) : 1;
        return is_signed_kind(c->t->kind) && (i + r) % 3 == 0 ? -mag : mag;
    }
    case HCCL_REDUCE_MAX:
    case HCCL_REDUCE_MIN:
        return (is_signed_kind(c->t->kind) ? -100 : 0) + (double)((i * 13 + (i >> 5) + r * 37) % 200);
    case HCCL_REDUCE_AVG: {
        /* a(i) plus offsets that cancel over the ranks: sum = n * a(i) */
        double a = (double)((i * 5 + (i >> 7)) % 17) - 8, s = (double)(i % 3);
        return a + (rank == 0 ? -(double)(c->n - 1) * s : s);
    }
    default:
        return c->sum_lo + (double)((i * 7 + (i >> 6) + r * 3) % (uint64_t)c->sum_k);
    }
}

/* the result of reducing element i of every rank with `op` */
static double expect(const ctx_t *c, HcclReduceOp op, uint64_t i)
{
    double acc = gen(c, 0, i);
    for (int r = 1; r < c->n; r++) {
        double v = gen(c, r, i);
        switch (op) {
        case HCCL_REDUCE_PROD: acc *= v; break;
        case HCCL_REDUCE_MAX: acc = v > acc ? v : acc; break;
        case HCCL_REDUCE_MIN: acc = v < acc ? v : acc; break;
        default: acc += v; break;
        }
    }
    return op == HCCL_REDUCE_AVG ? acc / c->n : acc;
}

/* the op MPI runs (and its results are checked against): MPI has no average */
static HcclReduceOp side_op(const ctx_t *c, int side)
{
    return side == SIDE_MPI && c->op == HCCL_REDUCE_AVG ? HCCL_REDUCE_SUM : c->op;
}

static void fill_red(const ctx_t *c, void *b, uint64_t first, uint64_t cnt)
{
    for (uint64_t i = 0; i < cnt; i++)
        put(b, i, c->t, gen(c, c->rank, first + i));
}

static void fill_pat(const ctx_t *c, int rank, unsigned char *b, uint64_t first, uint64_t bytes)
{
    (void)c;
    for (uint64_t i = 0; i < bytes; i++)
        b[i] = pat(rank, first + i);
}

static long long check_red(const ctx_t *c, HcclReduceOp op, const void *b, uint64_t first,
                           uint64_t cnt)
{
    long long bad = 0;
    for (uint64_t i = 0; i < cnt; i++)
        bad += get(b, i, c->t) != expect(c, op, first + i);
    return bad;
}

/* wrong elements among `bytes` bytes of pattern (rank, first...) */
static long long check_pat(const ctx_t *c, int rank, const unsigned char *b, uint64_t first,
                           uint64_t bytes)
{
    long long bad = 0;
    size_t es = c->t->size;
    for (uint64_t e = 0; e < bytes; e += es) {
        int ok = 1;
        for (size_t k = 0; k < es; k++)
            ok &= b[e + k] == pat(rank, first + e + k);
        bad += !ok;
    }
    return bad;
}

/* ------------------------------------------------------ per-size layout */

/* The count is a whole number of these (a block, or reducescatterv's k). */
static uint64_t count_unit(const ctx_t *c)
{
    uint64_t n = (uint64_t)c->n;
    switch (colls[c->coll].blocks) {
    case BLK_EQUAL: return n;
    case BLK_GROWING: return n * (n + 1) / 2;
    default: return 1;
    }
}

static void set_size(ctx_t *c, uint64_t count)
{
    c->count = count;
    c->blk = count / count_unit(c);
    c->mine_off = (uint64_t)c->rank * c->blk;
    c->mine_cnt = c->blk;
    if (c->coll == C_REDUCESCATTERV) {
        for (int i = 0; i < c->n; i++) {
            c->vcnt[i] = (uint64_t)(i + 1) * c->blk;
            c->vdispl[i] = (uint64_t)i * (uint64_t)(i + 1) / 2 * c->blk;
            c->vcnt_mpi[i] = (int)c->vcnt[i];
        }
        c->mine_off = c->vdispl[c->rank];
        c->mine_cnt = c->vcnt[c->rank];
    }
    if (c->coll == C_ALLREDUCE_MULTI) {
        size_t es = c->t->size;
        uint64_t left = count, off = 0;
        for (int k = 0; k < MULTI_N; k++) {
            uint64_t m = k == MULTI_N - 1 ? left : count * multi_w[k] / 64;
            c->mcount[k] = m;
            c->moff[k] = off;
            left -= m;
            off = (off + m * es + MULTI_GAP + MULTI_ALIGN - 1) / MULTI_ALIGN * MULTI_ALIGN;
        }
        c->mend = off;
    }
}

/* Prepare the checked call of `side`: reset in-place inputs, poison outputs. */
static void prepare(ctx_t *c, int side)
{
    size_t es = c->t->size;
    uint64_t bytes = c->count * es, bb = c->blk * es;
    (void)side;
    switch (c->coll) {
    case C_ALLREDUCE:
        if (c->in_place)
            fill_red(c, c->rbuf, 0, c->count);
        else
            memset(c->rbuf, POISON, bytes);
        break;
    case C_BROADCAST:
        if (c->rank == c->root)
            fill_pat(c, c->root, c->rbuf, 0, bytes);
        else
            memset(c->rbuf, POISON, bytes);
        break;
    case C_REDUCE:
        if (c->in_place)
            fill_red(c, c->rbuf, 0, c->count);
        else if (c->rank == c->root)
            memset(c->rbuf, POISON, bytes);
        break;
    case C_REDUCESCATTER:
    case C_REDUCESCATTERV:
        if (c->in_place)
            fill_red(c, c->rbuf, 0, c->count);
        else
            memset(c->rbuf, POISON, c->mine_cnt * es);
        break;
    case C_ALLGATHER:
        memset(c->rbuf, POISON, bytes);
        if (c->in_place)
            fill_pat(c, c->rank, c->rbuf + c->rank * bb, 0, bb);
        break;
    case C_ALLTOALL:
    case C_SENDRECV:
        memset(c->rbuf, POISON, bytes);
        break;
    case C_ALLREDUCE_MULTI:
        memset(c->rbuf, POISON, c->mend);
        if (c->in_place)
            for (int k = 0; k < MULTI_N; k++)
                fill_red(c, c->rbuf + c->moff[k], c->moff[k] / es, c->mcount[k]);
        break;
    default: break;
    }
}

/* The fill of the whole send buffer that never changes (done once). */
static void fill_send(ctx_t *c)
{
    if (colls[c->coll].reducing) {
        fill_red(c, c->sbuf, 0, c->buf_bytes / c->t->size);
    } else {
        fill_pat(c, c->rank, c->sbuf, 0, c->buf_bytes);
    }
    memset(c->rbuf, POISON, c->buf_bytes);
}

static long long verify(const ctx_t *c, int side)
{
    size_t es = c->t->size;
    uint64_t bytes = c->count * es, bb = c->blk * es;
    HcclReduceOp op = side_op(c, side);
    long long bad = 0;
    switch (c->coll) {
    case C_ALLREDUCE:
        return check_red(c, op, c->rbuf, 0, c->count);
    case C_BROADCAST:
        return check_pat(c, c->root, c->rbuf, 0, bytes);
    case C_REDUCE:
        return c->rank == c->root ? check_red(c, op, c->rbuf, 0, c->count) : 0;
    case C_REDUCESCATTER:
    case C_REDUCESCATTERV: {
        /* hcomm in place: my block of the big buffer; MPI in place: offset 0 */
        const unsigned char *out =
            c->in_place && side == SIDE_HC ? c->rbuf + c->mine_off * es : c->rbuf;
        return check_red(c, op, out, c->mine_off, c->mine_cnt);
    }
    case C_ALLGATHER:
        for (int s = 0; s < c->n; s++)
            bad += check_pat(c, s, c->rbuf + s * bb, 0, bb);
        return bad;
    case C_ALLTOALL:
        for (int s = 0; s < c->n; s++)
            bad += check_pat(c, s, c->rbuf + s * bb, (uint64_t)c->rank * bb, bb);
        return bad;
    case C_SENDRECV:
        return check_pat(c, (c->rank + c->n - 1) % c->n, c->rbuf, 0, bytes);
    case C_ALLREDUCE_MULTI: {
        uint64_t pos = 0;
        for (int k = 0; k < MULTI_N; k++) {
            for (; pos < c->moff[k]; pos++) /* the gap before tensor k */
                bad += c->rbuf[pos] != POISON;
            bad += check_red(c, op, c->rbuf + c->moff[k], c->moff[k] / es, c->mcount[k]);
            pos = c->moff[k] + c->mcount[k] * es;
        }
        for (; pos < c->mend; pos++)
            bad += c->rbuf[pos] != POISON;
        return bad;
    }
    default: return 0;
    }
}

/* ------------------------------------------------------------- the calls */

static void run_hc(ctx_t *c)
{
    HcclDataType dt = c->t->dt;
    size_t es = c->t->size;
    void *s = c->in_place ? c->rbuf : c->sbuf;
    switch (c->coll) {
    case C_ALLREDUCE:
        HC(HcclAllReduce(s, c->rbuf, c->count, dt, c->op, c->comm, NULL));
        break;
    case C_BROADCAST:
        HC(HcclBroadcast(c->rbuf, c->count, dt, (uint32_t)c->root, c->comm, NULL));
        break;
    case C_REDUCE:
        HC(HcclReduce(s, c->rbuf, c->count, dt, c->op, (uint32_t)c->root, c->comm, NULL));
        break;
    case C_REDUCESCATTER:
        HC(HcclReduceScatter(s, c->in_place ? c->rbuf + c->rank * c->blk * es : c->rbuf, c->blk,
                             dt, c->op, c->comm, NULL));
        break;
    case C_REDUCESCATTERV:
        HC(HcclReduceScatterV(s, c->vcnt, c->vdispl,
                              c->in_place ? c->rbuf + c->mine_off * es : c->rbuf, c->mine_cnt,
                              dt, c->op, c->comm, NULL));
        break;
    case C_ALLGATHER:
        HC(HcclAllGather(c->in_place ? c->rbuf + c->rank * c->blk * es : c->sbuf, c->rbuf,
                         c->blk, dt, c->comm, NULL));
        break;
    case C_ALLTOALL:
        HC(HcclAlltoAll(c->sbuf, c->blk, dt, c->rbuf, c->blk, dt, c->comm, NULL));
        break;
    case C_SENDRECV:
        HC(HcclGroupStart());
        HC(HcclSend(c->sbuf, c->count, dt, (uint32_t)((c->rank + 1) % c->n), c->comm, NULL));
        HC(HcclRecv(c->rbuf, c->count, dt, (uint32_t)((c->rank + c->n - 1) % c->n), c->comm,
                    NULL));
        HC(HcclGroupEnd());
        break;
    case C_ALLREDUCE_MULTI: {
        const void *in[MULTI_N];
        void *out[MULTI_N];
        for (int k = 0; k < MULTI_N; k++) {
            in[k] = (c->in_place ? c->rbuf : c->sbuf) + c->moff[k];
            out[k] = c->rbuf + c->moff[k];
        }
        HC(HcclAllReduceMulti(in, out, c->mcount, MULTI_N, dt, c->op, c->comm, NULL));
        break;
    }
    default: break;
    }
}

static void run_mpi(ctx_t *c)
{
    MPI_Comm w = MPI_COMM_WORLD;
    size_t es = c->t->size;
    /* data-moving collectives on types MPI lacks move bytes */
    MPI_Datatype mt = c->mt != MPI_DATATYPE_NULL ? c->mt : MPI_BYTE;
    int mul = c->mt != MPI_DATATYPE_NULL ? 1 : (int)es;
    int cnt = (int)c->count * mul, blk = (int)c->blk * mul;
    void *s = c->in_place ? MPI_IN_PLACE : c->sbuf;
    int prev = (c->rank + c->n - 1) % c->n, next = (c->rank + 1) % c->n;
    switch (c->coll) {
    case C_ALLREDUCE:
        MPI_Allreduce(s, c->rbuf, cnt, mt, c->mop, w);
        break;
    case C_BROADCAST:
        MPI_Bcast(c->rbuf, cnt, mt, c->root, w);
        break;
    case C_REDUCE:
        if (c->in_place && c->rank != c->root)
            MPI_Reduce(c->rbuf, NULL, cnt, mt, c->mop, c->root, w);
        else
            MPI_Reduce(s, c->rbuf, cnt, mt, c->mop, c->root, w);
        break;
    case C_REDUCESCATTER:
        if (c->in_place)
            MPI_Reduce_scatter_block(MPI_IN_PLACE, c->rbuf, blk, mt, c->mop, w);
        else
            MPI_Reduce_scatter_block(c->sbuf, c->rbuf, blk, mt, c->mop, w);
        break;
    case C_REDUCESCATTERV: /* reducing: mt is the type, counts are elements */
        MPI_Reduce_scatter(s, c->rbuf, c->vcnt_mpi, mt, c->mop, w);
        break;
    case C_ALLGATHER:
        if (c->in_place)
            MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, c->rbuf, blk, mt, w);
        else
            MPI_Allgather(c->sbuf, blk, mt, c->rbuf, blk, mt, w);
        break;
    case C_ALLTOALL:
        MPI_Alltoall(c->sbuf, blk, mt, c->rbuf, blk, mt, w);
        break;
    case C_SENDRECV:
        MPI_Sendrecv(c->sbuf, cnt, mt, next, 7, c->rbuf, cnt, mt, prev, 7, w, MPI_STATUS_IGNORE);
        break;
    case C_ALLREDUCE_MULTI:
        for (int k = 0; k < MULTI_N; k++)
            MPI_Allreduce(c->in_place ? MPI_IN_PLACE : (void *)(c->sbuf + c->moff[k]),
                          c->rbuf + c->moff[k], (int)c->mcount[k] * mul, mt, c->mop, w);
        break;
    default: break;
    }
}

/* one call of `side`, timed; checked (and prepared) when `checked` */
static double one_call(ctx_t *c, int side, int checked, long long *wrong)
{
    if (checked)
        prepare(c, side);
    /* the start line: each rank times from its exit, so the barrier's exit
     * skew lands in the time of the rank that left first (-S) */
    if (c->sync_hc)
        HC(HcclBarrier(c->comm, NULL));
    else
        MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_us();
    if (side == SIDE_HC)
        run_hc(c);
    else
        run_mpi(c);
    double t = now_us() - t0;
    if (checked)
        *wrong += verify(c, side);
    return t;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), hc_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double bw_factor(const ctx_t *c)
{
    switch (colls[c->coll].bw) {
    case BW_ALLREDUCE: return 2.0 * (c->n - 1) / c->n;
    case BW_NM1_N: return (double)(c->n - 1) / c->n;
    default: return 1.0;
    }
}

/* -R: rank 0 alone (the others wait in a barrier, so its core has the
 * machine to itself) copies `bytes` from sbuf to rbuf with memcpy, as many
 * times as fit in a tenth of the budget (3 to 50); GB/s of the median copy.
 * After the timed loop: rbuf's contents do not matter any more (every
 * checked call prepares its buffers). */
static double memcpy_ref(ctx_t *c, uint64_t bytes)
{
    double g = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (c->rank == 0 && bytes > 0) {
        double t[50];
        int k = 0;
        double spent = 0;
        memcpy(c->rbuf, c->sbuf, bytes); /* warm-up: page tables, TLB */
        while (k < 50 && (k < 3 || spent < 0.1 * c->budget)) {
            double t0 = now_us();
            memcpy(c->rbuf, c->sbuf, bytes);
            t[k] = now_us() - t0;
            spent += t[k++] * 1e-6;
        }
        g = (double)bytes / median(t, k) * 1e-3;
    }
    MPI_Bcast(&g, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return g;
}

static void run_size(ctx_t *c, row_t *row)
{
    int mpi = c->with_mpi && c->mpi_ok;
    int nsides = mpi ? 2 : 1;
    long long wrong[2] = {0, 0};
    double est[2] = {0, 0};

    /* the first warm-up call: checked, and timed to size the run */
    for (int s = 0; s < nsides; s++)
        est[s] = one_call(c, s, c->check, &wrong[s]);
    double pair = est[0] + est[1];
    MPI_Allreduce(MPI_IN_PLACE, &pair, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    pair *= 1e-6;

    int iters = 0, warm = 0;
    if (!c->check_only) {
        iters = c->iters;
        if (pair * iters > c->budget) {
            iters = (int)(c->budget / pair);
            if (iters < 3)
                iters = 3;
            if (iters > c->iters)
                iters = c->iters;
        }
        warm = c->warmup - 1;
        if (warm > 0 && pair * warm > 0.25 * c->budget)
            warm = (int)(0.25 * c->budget / pair);
        if (warm < 0)
            warm = 0;
    }
    for (int i = 0; i < warm; i++)
        for (int s = 0; s < nsides; s++)
            one_call(c, (s + i) % nsides, 0, NULL);
    for (int i = 0; i < iters; i++) {
        int last = i == iters - 1 && c->check;
        for (int k = 0; k < nsides; k++) {
            int s = (k + i) % nsides; /* alternate who goes first */
            c->times[s][i] = one_call(c, s, last, &wrong[s]);
        }
    }

    if (iters > 0) {
        MPI_Allreduce(MPI_IN_PLACE, c->times[0], iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (mpi)
            MPI_Allreduce(MPI_IN_PLACE, c->times[1], iters, MPI_DOUBLE, MPI_MAX,
                          MPI_COMM_WORLD);
    } else { /* check-only: the one call's time */
        MPI_Allreduce(MPI_IN_PLACE, est, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        c->times[0][0] = est[0];
        c->times[1][0] = est[1];
    }
    MPI_Allreduce(MPI_IN_PLACE, wrong, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);

    int m = iters > 0 ? iters : 1;
    uint64_t bytes = c->count * c->t->size;
    row->mcp_gbps = c->ref ? memcpy_ref(c, bytes) : 0;
    row->size = bytes;
    row->count = c->count;
    row->iters = iters;
    row->warmup = warm + 1;
    row->time = median(c->times[0], m);
    row->algbw = (double)bytes / row->time * 1e-3;
    row->busbw = row->algbw * bw_factor(c);
    row->wrong = c->check ? wrong[0] : -1;
    row->has_mpi = mpi;
    if (mpi) {
        row->mpi_time = median(c->times[1], m);
        row->mpi_busbw = (double)bytes / row->mpi_time * 1e-3 * bw_factor(c);
        row->ratio = row->mpi_time / row->time;
        row->mpi_wrong = c->check ? wrong[1] : -1;
    }
}

/* ----------------------------------------------------------- the output */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* The variables that shape a measurement: hcomm's, UCX's, the Open MPI
 * settings (mpirun --mca X Y arrives as OMPI_MCA_X=Y; the launcher's own
 * bookkeeping variables are left out) and glibc's malloc tunables. */
static int env_shown(const char *e)
{
    static const char *const launcher[] = {"orte_", "ess", "pmix", "shmem_RUNTIME_QUERY_hint",
                                           "initial_wdir", "mpi_oversubscribe", NULL};
    if (!strncmp(e, "OMPI_MCA_", 9)) {
        for (int i = 0; launcher[i]; i++)
            if (!strncmp(e + 9, launcher[i], strlen(launcher[i])))
                return 0;
        return 1;
    }
    return !strncmp(e, "HCCL_", 5) || !strncmp(e, "UCX_", 4) ||
           !strncmp(e, "GLIBC_TUNABLES=", 15);
}

static void size_str(char *buf, size_t len, uint64_t b)
{
    if (b >= (1ull << 30) && b % (1ull << 30) == 0)
        snprintf(buf, len, "%lluG", (unsigned long long)(b >> 30));
    else if (b >= (1ull << 20) && b % (1ull << 20) == 0)
        snprintf(buf, len, "%lluM", (unsigned long long)(b >> 20));
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, len, "%lluK", (unsigned long long)(b >> 10));
    else
        snprintf(buf, len, "%llu", (unsigned long long)b);
}

/* The help's first half: the options. */
static void usage_options(FILE *f)
{
    fprintf(f,
"usage: mpirun -np N hcomm-perf [options]\n"
"\n"
"Measures one hcomm collective over MPI_COMM_WORLD for a range of sizes\n"
"(nccl-tests style), optionally beside the same operation done by MPI.\n"
"\n"
"  -b SIZE   smallest size in bytes (suffix K, M, G = 1024^n)    [8]\n"
"  -e SIZE   largest size in bytes                               [64M]\n"
"  -f N      multiply the size by N each step (integer >= 2)     [2]\n"
"  -n N      timed iterations per size                          [20]\n"
"  -w N      warm-up iterations per size (at least 1: the first\n"
"            is checked and sizes the run)                       [5]\n"
"  -T SEC    time budget per size: fewer iterations (at least 3)\n"
"            and warm-ups at large sizes so a size takes ~SEC s  [1]\n"
"  -c 0|1    check results                                       [1]\n"
"  -p        check-only pass: one checked call per size, no timing\n"
"            loop (time is that single call)\n"
"  -d TYPE   int8 uint8 int16 uint16 int32 uint32 int64 uint64 half|fp16\n"
"            bfloat16|bf16 float|fp32 double|fp64 int128 fp8e4m3 fp8e5m2\n"
"                                                                [float]\n"
"  -o OP     sum prod max min avg (reducing collectives)         [sum]\n"
"  -r ROOT   root of broadcast and reduce                        [0]\n"
"  -C COLL   allreduce broadcast reduce allgather reducescatter alltoall\n"
"            sendrecv allreduce_multi reducescatterv             [allreduce]\n"
"  -a ALGO   algorithm: sets HCCL_<COLL>_ALGO (e.g. RING, RD) before\n"
"            HcclCommInitMpi                                     [auto]\n"
"  -i 0|1    in-place variant (allreduce, reduce, allgather,\n"
"            reducescatter, allreduce_multi, reducescatterv)     [0]\n"
"  -M        also run MPI's equivalent in the same process, alternating\n"
"            with hcomm on the same buffers, and print its time, busbw\n"
"            and the ratio mpi_time / hcomm_time (> 1: hcomm is faster)\n"
"  -R        reference: also time a single-core memcpy of each size (rank\n"
"            0 alone, the others waiting) and print its GB/s and hcomm's\n"
"            busbw as a percentage of it\n"
"  -A        allocate the buffers with HcclMemAlloc and register them\n"
"            with the communicator (HcclCommRegister): single-copy\n"
"            algorithms then copy with loads and stores (MPI, with -M,\n"
"            runs on the same buffers)\n"
"  -H        allocate the (malloc'd) buffers 2 MiB aligned and advise them\n"
"            MADV_HUGEPAGE, as a program with transparent huge pages for its\n"
"            tensors has them; the header says how much the kernel gave\n"
"            (MPI, with -M, runs on the same buffers; not with -A)\n"
"  -S SYNC   the untimed barrier before every timed call: mpi\n"
"            (MPI_Barrier) or hcomm (HcclBarrier)   [mpi on one node,\n"
"            hcomm across nodes: MPI's barrier there can leave its\n"
"            ranks milliseconds apart, and the first to leave counts\n"
"            the wait for the others in the next call's time]\n"
"  -J FILE   also write the results as JSON to FILE\n"
"  -h        this help\n"
"\n");
}

/* -h: the options, then what the sizes, times and columns mean. */
static void usage(FILE *f)
{
    usage_options(f);
    fprintf(f,
"Sizes follow nccl-tests: `size` is the bytes of the operation's buffer on\n"
"each rank - allreduce, reduce, broadcast: the buffer; allgather: the\n"
"receive buffer (each rank sends size/N); reducescatter: the send buffer\n"
"(each rank receives size/N); alltoall: the whole send buffer (size/N per\n"
"peer); sendrecv: the bytes each rank sends to rank+1 and receives from\n"
"rank-1; allreduce_multi: the sum of 8 tensors of 13,2,8,1,21,3,5,11/64 of\n"
"the size (HcclAllReduceMulti; MPI: one MPI_Allreduce per tensor);\n"
"reducescatterv: the send buffer, in N blocks of different sizes, block i of\n"
"(i+1)k elements (k = the size in elements / (N(N+1)/2)), contiguous in rank\n"
"order, rank i receiving block i (HcclReduceScatterV; MPI: MPI_Reduce_scatter\n"
"with the same recvcounts). Sizes are rounded down to whole elements (and\n"
"whole blocks of N, or whole k), at least one.\n"
"\n"
"time: median over the iterations of the slowest rank's time per call, us\n"
"(an untimed barrier precedes every call, -S). algbw = size / time;\n"
"busbw = algbw * 2(N-1)/N (allreduce), (N-1)/N (allgather, reducescatter,\n"
"reducescatterv, alltoall), 1 (broadcast, reduce, sendrecv); GB/s = 1e9 B/s.\n"
"#wrong: wrong elements summed over the ranks, in the checked calls (the\n"
"first warm-up and the last timed iteration); -1 without -c. MPI has no\n"
"avg: with -o avg, MPI runs sum. Reductions on half, bfloat16, int128 have\n"
"no MPI equivalent (n/a). The exit status is 1 if any result was wrong.\n"
"\n"
"Before the sizes, local ranks 0 and 1 time a cache-line ping-pong (not with\n"
"more ranks on the node than cores): the header's core-to-core latency\n"
"(JSON line_latency_ns). On a VM it changes with where the host runs the\n"
"vCPUs, and small-message times and cross-core bandwidth change with it.\n"
"Then every local rank alone times a chain of additions through memory: the\n"
"header's vCPU speed, ns per step and the CPU (JSON cpu_step_ns, cpu_of_rank);\n"
"a vCPU that the host slows shows there, and the slowest rank is usually on it.\n");
}

static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || v < 0)
        return -1;
    double mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1024.0; end++; break;
    case 'm': case 'M': mul = 1048576.0; end++; break;
    case 'g': case 'G': mul = 1073741824.0; end++; break;
    default: break;
    }
    if (*end == 'i')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end != '\0')
        return -1;
    *out = (uint64_t)(v * mul);
    return 0;
}

static int parse_int(const char *s, int *out, int min)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < min || v > 1000000000)
        return -1;
    *out = (int)v;
    return 0;
}

static MPI_Datatype mpi_type(const dtype_t *t)
{
    switch (t->dt) {
    case HCCL_DATA_TYPE_INT8: return MPI_INT8_T;
    case HCCL_DATA_TYPE_UINT8: return MPI_UINT8_T;
    case HCCL_DATA_TYPE_INT16: return MPI_INT16_T;
    case HCCL_DATA_TYPE_UINT16: return MPI_UINT16_T;
    case HCCL_DATA_TYPE_INT32: return MPI_INT32_T;
    case HCCL_DATA_TYPE_UINT32: return MPI_UINT32_T;
    case HCCL_DATA_TYPE_INT64: return MPI_INT64_T;
    case HCCL_DATA_TYPE_UINT64: return MPI_UINT64_T;
    case HCCL_DATA_TYPE_FP32: return MPI_FLOAT;
    case HCCL_DATA_TYPE_FP64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
    }
}

static MPI_Op mpi_op(HcclReduceOp op)
{
    switch (op) {
    case HCCL_REDUCE_PROD: return MPI_PROD;
    case HCCL_REDUCE_MAX: return MPI_MAX;
    case HCCL_REDUCE_MIN: return MPI_MIN;
    default: return MPI_SUM; /* sum, and avg (MPI has none) */
    }
}

/* An argument error: rank 0 says what it is; the parser returns 2. */
#define BAD(...) \
    do { \
        if (rank == 0) { \
            fprintf(stderr, "hcomm-perf: " __VA_ARGS__); \
            fprintf(stderr, " (hcomm-perf -h for help)\n"); \
        } \
        return 2; \
    } while (0)

/* The options taken together, and the names that -d, -o and -C gave
 * (parse_args' second step). 0: run; 2: error. */
static int check_args(ctx_t *c, const char *dtype, const char *opname, const char *coll,
                      int rank)
{
    if (c->thp && c->reg)
        BAD("-H and -A: HcclMemAlloc chooses the pages of -A's buffers itself");
    if (c->warmup < 1)
        c->warmup = 1;
    if (c->check_only)
        c->check = 1;
    if (c->minb > c->maxb)
        BAD("-b %llu is larger than -e %llu", (unsigned long long)c->minb,
            (unsigned long long)c->maxb);
    if (c->minb == 0)
        c->minb = 1;
    c->t = NULL;
    for (size_t i = 0; i < N_DTYPES && !c->t; i++)
        for (int k = 0; dtypes[i].names[k]; k++)
            if (!strcasecmp(dtype, dtypes[i].names[k]))
                c->t = &dtypes[i];
    if (!c->t)
        BAD("unknown datatype %s", dtype);
    int found = 0;
    for (size_t i = 0; i < N_OPS; i++)
        if (!strcasecmp(opname, ops[i].name)) {
            c->op = ops[i].op;
            found = 1;
        }
    if (!found)
        BAD("unknown op %s", opname);
    c->coll = C_N;
    for (int i = 0; i < C_N; i++)
        if (!strcasecmp(coll, colls[i].name))
            c->coll = (coll_t)i;
    if (c->coll == C_N)
        BAD("unknown collective %s", coll);
    if (c->algo && !colls[c->coll].algo_env)
        BAD("-a: %s has no algorithm choice", colls[c->coll].name);
    if (c->root >= c->n)
        BAD("-r %d: only %d ranks", c->root, c->n);
    if (!colls[c->coll].in_place_ok)
        c->in_place = 0;
    return 0;
}

/* Parse argv (every rank does, identically). 0: run; 1: exit 0; 2: error. */
static int parse_args(ctx_t *c, int argc, char **argv, int rank)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *dtype = "float", *opname = "sum", *coll = "allreduce";
    int f = 2, ch;
    c->minb = 8;
    c->maxb = 64ull << 20;
    c->iters = 20;
    c->warmup = 5;
    c->check = 1;
    c->budget = 1.0;
    c->sync_hc = -1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "b:e:f:n:w:T:c:pd:o:r:C:a:i:MRAHS:J:h", longopts, NULL)) !=
           -1) {
        switch (ch) {
        case 'b': if (parse_size(optarg, &c->minb)) BAD("bad -b %s", optarg); break;
        case 'e': if (parse_size(optarg, &c->maxb)) BAD("bad -e %s", optarg); break;
        case 'f': if (parse_int(optarg, &f, 2)) BAD("bad -f %s: an integer >= 2", optarg); break;
        case 'n': if (parse_int(optarg, &c->iters, 1)) BAD("bad -n %s", optarg); break;
        case 'w': if (parse_int(optarg, &c->warmup, 0)) BAD("bad -w %s", optarg); break;
        case 'T': {
            char *end;
            c->budget = strtod(optarg, &end);
            if (end == optarg || *end || !(c->budget > 0))
                BAD("bad -T %s: seconds > 0", optarg);
            break;
        }
        case 'c': if (parse_int(optarg, &c->check, 0) || c->check > 1) BAD("bad -c %s", optarg); break;
        case 'p': c->check_only = 1; break;
        case 'd': dtype = optarg; break;
        case 'o': opname = optarg; break;
        case 'r': if (parse_int(optarg, &c->root, 0)) BAD("bad -r %s", optarg); break;
        case 'C': coll = optarg; break;
        case 'a': c->algo = optarg; break;
        case 'i': if (parse_int(optarg, &c->in_place, 0) || c->in_place > 1) BAD("bad -i %s", optarg); break;
        case 'M': c->with_mpi = 1; break;
        case 'R': c->ref = 1; break;
        case 'A': c->reg = 1; break;
        case 'H': c->thp = 1; break;
        case 'S':
            if (strcmp(optarg, "mpi") == 0)
                c->sync_hc = 0;
            else if (strcmp(optarg, "hcomm") == 0)
                c->sync_hc = 1;
            else
                BAD("bad -S %s: mpi or hcomm", optarg);
            break;
        case 'J': c->json = optarg; break;
        case 'h': if (rank == 0) usage(stdout); return 1;
        default:
            BAD("unknown option or missing argument: %s", argv[optind - 1]);
        }
    }
    if (optind < argc)
        BAD("unexpected argument %s", argv[optind]);
    c->factor = (uint64_t)f;
    return check_args(c, dtype, opname, coll, rank);
}
#undef BAD

/* The column heads of the rows that print_row prints. */
static void print_columns(const ctx_t *c)
{
    /* -R adds two columns: memcpy GB/s and busbw as % of it */
    const char *r1 = c->ref ? "   memcpy  bus/mcp" : "", *r2 = c->ref ? "   (GB/s)      (%)" : "";
    if (c->with_mpi) {
        printf("# %47s %-35s %s\n", "", "<-------------- hcomm -------------->",
               "<------------ MPI ----------->");
        printf("# %10s %12s %8s %6s %6s %10s %8s %8s %6s %10s %8s %8s%s\n", "size", "count", "type",
               "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "busbw", "ratio", r1);
        printf("# %10s %12s %8s %6s %6s %10s %8s %8s %6s %10s %8s %8s%s\n", "(B)", "(elements)", "",
               "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "mpi/hc", r2);
    } else {
        printf("# %10s %12s %8s %6s %6s %10s %8s %8s %6s%s\n", "size", "count", "type", "redop",
               "root", "time", "algbw", "busbw", "#wrong", r1);
        printf("# %10s %12s %8s %6s %6s %10s %8s %8s %6s%s\n", "(B)", "(elements)", "", "", "",
               "(us)", "(GB/s)", "(GB/s)", "", r2);
    }
}

static void print_header(const ctx_t *c, int argc, char **argv)
{
    uint32_t v = HcommGetVersion();
    char b0[32], b1[32];
    size_str(b0, sizeof b0, c->minb);
    size_str(b1, sizeof b1, c->maxb);
    printf("# hcomm-perf: nranks %d (%d node%s, %d rank%s on %ld cores on %s%s), hcomm %u.%u.%u\n",
           c->n, c->nodes, c->nodes > 1 ? "s" : "", c->local, c->local > 1 ? "s" : "", c->cores,
           c->host, c->local > c->cores ? ": oversubscribed" : "", v / 10000, v / 100 % 100,
           v % 100);
    printf("# command:");
    for (int i = 0; i < argc; i++)
        printf(" %s", argv[i]);
    printf("\n# collective %s, op %s, dtype %s (%zu B), root %d, in-place %d, algorithm %s",
           colls[c->coll].name, colls[c->coll].reducing ? op_name(c->op) : "none",
           c->t->names[0], c->t->size, colls[c->coll].rooted ? c->root : -1, c->in_place,
           c->algo ? c->algo : "auto");
    if (c->algo)
        printf(" (%s=%s)", colls[c->coll].algo_env, c->algo);
    printf("\n# sizes %s..%s x%llu, iterations %d, warm-up %d, budget %g s/size, check %d%s%s\n",
           b0, b1, (unsigned long long)c->factor, c->iters, c->warmup, c->budget, c->check,
           c->check_only ? " (check-only pass)" : "",
           c->reg ? ", buffers from HcclMemAlloc, registered (-A)" : "");
    if (c->thp && c->thp_err)
        printf("# -H: madvise(MADV_HUGEPAGE) failed on rank 0 (%s): ordinary pages\n",
               strerror(c->thp_err));
    if (c->thp)
        printf("# -H: buffers advised MADV_HUGEPAGE; %.1f of %.1f MiB in huge pages on rank 0 "
               "(/proc/self/smaps AnonHugePages)\n",
               (double)c->thp_bytes / 1048576.0, 2.0 * (double)c->buf_bytes / 1048576.0);
    if (c->coll == C_ALLREDUCE_MULTI)
        printf("# allreduce_multi: 8 tensors, 13,2,8,1,21,3,5,11/64 of the size, 256 B gaps\n");
    if (c->coll == C_REDUCESCATTERV)
        printf("# reducescatterv: block i of (i+1)k elements, k = count / (N(N+1)/2), "
               "contiguous in rank order; rank i receives block i\n");
    printf("# MPI: %s\n", c->mpilib);
    if (c->line_ns > 0)
        printf("# core-to-core latency: %.0f ns one way (cache-line ping-pong of local ranks 0 "
               "and 1; on a VM it varies between runs with where the host runs them)\n",
               c->line_ns);
    if (c->nstep > 0) {
        printf("# vCPU speed: ns per step of a chain of additions through memory, each local "
               "rank alone (cpu):");
        for (int r = 0; r < c->nstep; r++)
            printf(" %.2f (%d)", c->step_ns[r], c->step_cpu[r]);
        printf("\n");
    }
    if (c->with_mpi) {
        printf("# -M: %s", colls[c->coll].mpi_call);
        if (!c->mpi_ok)
            printf(": n/a (%s)", c->mpi_why);
        else if (c->op == HCCL_REDUCE_AVG && colls[c->coll].reducing)
            printf(" with MPI_SUM (MPI has no avg)");
        printf("; ratio = mpi_time / hcomm_time (> 1: hcomm faster)\n");
    }
    int any = 0;
    printf("# env:");
    for (char **e = environ; *e; e++)
        if (env_shown(*e)) {
            printf(" %s", *e);
            any = 1;
        }
    printf("%s\n", any ? "" : " (no HCCL_*, UCX_*, OMPI_MCA_*, GLIBC_TUNABLES set)");
    printf("# hint: Open MPI's tuned setting here is --mca btl_vader_single_copy_mechanism none "
           "-x GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967296 "
           "(docs/PERFORMANCE.md)\n");
    printf("# time: median over iterations of the slowest rank, us; an untimed %s "
           "before each call%s\n", c->sync_hc ? "HcclBarrier" : "MPI_Barrier",
           c->with_mpi ? "; hcomm and MPI alternate" : "");
    printf("#\n");
    print_columns(c);
    fflush(stdout);
}

static void print_row(const ctx_t *c, const row_t *r)
{
    printf("  %10llu %12llu %8s %6s %6d %10.2f %8.2f %8.2f %6lld", (unsigned long long)r->size,
           (unsigned long long)r->count, c->t->names[0],
           colls[c->coll].reducing ? op_name(c->op) : "none",
           colls[c->coll].rooted ? c->root : -1, r->time, r->algbw, r->busbw, r->wrong);
    if (c->with_mpi) {
        if (r->has_mpi)
            printf(" %10.2f %8.2f %8.3f", r->mpi_time, r->mpi_busbw, r->ratio);
        else
            printf(" %10s %8s %8s", "n/a", "n/a", "n/a");
    }
    if (c->ref)
        printf(" %8.2f %7.1f", r->mcp_gbps, r->mcp_gbps > 0 ? 100 * r->busbw / r->mcp_gbps : 0);
    printf("\n");
    if (r->has_mpi && r->mpi_wrong > 0)
        printf("# WARNING: MPI's result is wrong too (%lld elements) at size %llu: the check "
               "itself is suspect\n", r->mpi_wrong, (unsigned long long)r->size);
    fflush(stdout);
}

/* The variables that env_shown picks, as a JSON object of name: value. */
static void json_env(FILE *f)
{
    fprintf(f, "{");
    int first = 1;
    for (char **e = environ; *e; e++) {
        if (!env_shown(*e))
            continue;
        const char *eq = strchr(*e, '=');
        char name[256];
        size_t ln = eq ? (size_t)(eq - *e) : strlen(*e);
        if (ln >= sizeof name)
            ln = sizeof name - 1;
        memcpy(name, *e, ln);
        name[ln] = '\0';
        fprintf(f, "%s\n    ", first ? "" : ",");
        json_str(f, name);
        fprintf(f, ": ");
        json_str(f, eq ? eq + 1 : "");
        first = 0;
    }
    fprintf(f, "%s}", first ? "" : "\n  ");
}

static void write_json(const ctx_t *c, const char *path, int argc, char **argv, const row_t *rows,
                       int nrows, double avg_bw, double geo)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "hcomm-perf: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    uint32_t v = HcommGetVersion();
    fprintf(f, "{\n  \"tool\": \"hcomm-perf\",\n  \"hcomm_version\": \"%u.%u.%u\",\n",
            v / 10000, v / 100 % 100, v % 100);
    fprintf(f, "  \"command\": [");
    for (int i = 0; i < argc; i++) {
        fprintf(f, "%s", i ? ", " : "");
        json_str(f, argv[i]);
    }
    fprintf(f, "],\n  \"host\": ");
    json_str(f, c->host);
    fprintf(f, ",\n  \"nranks\": %d,\n  \"nodes\": %d,\n  \"local_ranks\": %d,\n"
               "  \"cores\": %ld,\n  \"oversubscribed\": %s,\n  \"sync\": \"%s\",\n",
            c->n, c->nodes, c->local, c->cores, c->local > c->cores ? "true" : "false",
            c->sync_hc ? "hcomm" : "mpi");
    if (c->line_ns > 0)
        fprintf(f, "  \"line_latency_ns\": %.1f,\n", c->line_ns);
    if (c->nstep > 0) {
        fprintf(f, "  \"cpu_step_ns\": [");
        for (int r = 0; r < c->nstep; r++)
            fprintf(f, "%s%.3f", r ? ", " : "", c->step_ns[r]);
        fprintf(f, "],\n  \"cpu_of_rank\": [");
        for (int r = 0; r < c->nstep; r++)
            fprintf(f, "%s%d", r ? ", " : "", c->step_cpu[r]);
        fprintf(f, "],\n");
    }
    fprintf(f, "  \"collective\": \"%s\",\n  \"op\": \"%s\",\n  \"dtype\": \"%s\",\n"
               "  \"root\": %d,\n  \"in_place\": %d,\n  \"algorithm\": ",
            colls[c->coll].name, colls[c->coll].reducing ? op_name(c->op) : "none",
            c->t->names[0], colls[c->coll].rooted ? c->root : -1, c->in_place);
    json_str(f, c->algo ? c->algo : "auto");
    fprintf(f, ",\n  \"check\": %d,\n  \"registered\": %s,\n", c->check,
            c->reg ? "true" : "false");
    if (c->thp)
        fprintf(f, "  \"huge_pages\": {\"advised\": true, \"bytes\": %llu, \"of\": %llu},\n",
                (unsigned long long)c->thp_bytes, 2ull * (unsigned long long)c->buf_bytes);
    fprintf(f, "  \"mpi\": %s,\n  \"mpi_call\": ", c->with_mpi && c->mpi_ok ? "true" : "false");
    json_str(f, colls[c->coll].mpi_call);
    fprintf(f, ",\n  \"mpi_library\": ");
    json_str(f, c->mpilib);
    fprintf(f, ",\n  \"env\": ");
    json_env(f);
    fprintf(f, ",\n  \"results\": [");
    for (int i = 0; i < nrows; i++) {
        const row_t *r = &rows[i];
        fprintf(f, "%s\n    {\"size\": %llu, \"count\": %llu, \"iters\": %d, \"warmup\": %d, "
                   "\"time_us\": %.3f, \"algbw\": %.4f, \"busbw\": %.4f, \"wrong\": %lld",
                i ? "," : "", (unsigned long long)r->size, (unsigned long long)r->count,
                r->iters, r->warmup, r->time, r->algbw, r->busbw, r->wrong);
        if (r->has_mpi)
            fprintf(f, ", \"mpi_time_us\": %.3f, \"mpi_busbw\": %.4f, \"ratio\": %.4f, "
                       "\"mpi_wrong\": %lld",
                    r->mpi_time, r->mpi_busbw, r->ratio, r->mpi_wrong);
        if (r->mcp_gbps > 0)
            fprintf(f, ", \"memcpy_GBps\": %.4f", r->mcp_gbps);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ],\n  \"avg_busbw\": %.4f", avg_bw);
    if (geo > 0)
        fprintf(f, ",\n  \"geomean_ratio\": %.4f", geo);
    fprintf(f, "\n}\n");
    fclose(f);
}

/* ----------------------------------------------------------------- main */

/* Where we run: nodes, ranks per node, cores, the machine's state
 * (line_latency_ns, step_ns_of) and the MPI library. */
static void probe_machine(ctx_t *c)
{
    strcpy(c->host, "?");
    gethostname(c->host, sizeof c->host - 1);
    MPI_Comm local_comm;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local_comm);
    int local, lrank;
    MPI_Comm_size(local_comm, &local);
    MPI_Comm_rank(local_comm, &lrank);
    c->local = local;
    int is_leader = lrank == 0;
    MPI_Allreduce(&is_leader, &c->nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (c->sync_hc < 0)
        c->sync_hc = c->nodes > 1;
    c->cores = sysconf(_SC_NPROCESSORS_ONLN);
    /* world rank 0 is local rank 0 of its node (split_type keeps the order) */
    c->line_ns = line_latency_ns(local_comm, lrank, local, c->cores);
    MPI_Bcast(&c->line_ns, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    c->nstep = c->rank == 0 ? local : 0;
    c->step_ns = malloc(sizeof(double) * local);
    c->step_cpu = malloc(sizeof(int) * local);
    if (c->step_ns == NULL || c->step_cpu == NULL) {
        fprintf(stderr, "hcomm-perf: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    step_ns_of(local_comm, lrank, local, c->step_ns, c->step_cpu);
    MPI_Comm_free(&local_comm);
    int mlen;
    MPI_Get_library_version(c->mpilib, &mlen);
    c->mpilib[strcspn(c->mpilib, ",\n")] = '\0';
}

/* The elements of a size in bytes: whole per-rank blocks where the
 * collective has them (whole k of reducescatterv), at least one (block). */
static uint64_t count_of(const ctx_t *c, uint64_t size)
{
    uint64_t unit = count_unit(c);
    uint64_t count = size / c->t->size / unit * unit;
    return count < unit ? unit : count;
}

/* Buffers: once, at the largest size, pre-faulted; the per-iteration
 * times; reducescatterv's block arrays. */
static void alloc_buffers(ctx_t *c)
{
    c->buf_bytes = count_of(c, c->maxb) * c->t->size;
    if (c->coll == C_ALLREDUCE_MULTI)
        c->buf_bytes += MULTI_N * (MULTI_GAP + MULTI_ALIGN);
    const size_t align = c->thp ? HC_THP_SIZE : 4096;
    c->buf_bytes = (c->buf_bytes + align - 1) / align * align;
    void *sb = NULL, *rb = NULL;
    int ok;
    if (c->reg) {
        ok = HcclMemAlloc(&sb, c->buf_bytes) == HCCL_SUCCESS &&
             HcclMemAlloc(&rb, c->buf_bytes) == HCCL_SUCCESS;
    } else if (c->thp) { /* a failed madvise leaves ordinary pages; the header says so */
        const int e1 = hc_alloc_huge(&sb, c->buf_bytes);
        const int e2 = e1 < 0 ? -1 : hc_alloc_huge(&rb, c->buf_bytes);
        ok = e1 >= 0 && e2 >= 0;
        c->thp_err = e1 > 0 ? e1 : e2 > 0 ? e2 : 0;
    } else {
        ok = posix_memalign(&sb, align, c->buf_bytes) == 0 &&
             posix_memalign(&rb, align, c->buf_bytes) == 0;
    }
    if (!ok) {
        fprintf(stderr, "hcomm-perf: rank %d: cannot allocate 2 x %zu bytes\n", c->rank,
                c->buf_bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    c->sbuf = sb;
    c->rbuf = rb;
    if (c->buf_bytes > INT_MAX) { /* MPI counts are int */
        c->mpi_ok = 0;
        c->mpi_why = "sizes beyond MPI's int counts";
    }
    fill_send(c);
    if (c->thp) /* after the first touch of both buffers (fill_send) */
        c->thp_bytes = hc_huge_bytes(sb, c->buf_bytes) + hc_huge_bytes(rb, c->buf_bytes);
    int max_iters = c->iters > 1 ? c->iters : 1;
    c->times[0] = calloc((size_t)max_iters, sizeof(double));
    c->times[1] = calloc((size_t)max_iters, sizeof(double));
    c->vcnt = calloc((size_t)c->n, sizeof(uint64_t));
    c->vdispl = calloc((size_t)c->n, sizeof(uint64_t));
    c->vcnt_mpi = calloc((size_t)c->n, sizeof(int));
    if (c->vcnt == NULL || c->vdispl == NULL || c->vcnt_mpi == NULL) {
        fprintf(stderr, "hcomm-perf: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* Connections and first-call costs, before anything is timed or sized. */
static void first_calls(ctx_t *c)
{
    set_size(c, count_of(c, c->minb));
    for (int i = 0; i < 3; i++) {
        run_hc(c);
        if (c->with_mpi && c->mpi_ok)
            run_mpi(c);
    }
}

/* Every size from -b to -e, x -f each time; rank 0 prints each row as it
 * comes. Returns the rows, *nrows_p of them. */
static row_t *run_sizes(ctx_t *c, int *nrows_p)
{
    int cap = 64, nrows = 0;
    row_t *rows = calloc((size_t)cap, sizeof(row_t));
    if (rows == NULL) {
        fprintf(stderr, "hcomm-perf: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    uint64_t prev = 0;
    for (uint64_t size = c->minb; size <= c->maxb;) {
        uint64_t count = count_of(c, size);
        if (count * c->t->size != prev) { /* small sizes can round to the same count */
            prev = count * c->t->size;
            set_size(c, count);
            if (nrows == cap) {
                cap *= 2;
                row_t *more = realloc(rows, (size_t)cap * sizeof(row_t));
                if (more == NULL) {
                    fprintf(stderr, "hcomm-perf: out of memory\n");
                    MPI_Abort(MPI_COMM_WORLD, 2);
                }
                rows = more;
            }
            run_size(c, &rows[nrows]);
            if (c->rank == 0)
                print_row(c, &rows[nrows]);
            nrows++;
        }
        if (size > UINT64_MAX / c->factor)
            break;
        size *= c->factor;
    }
    *nrows_p = nrows;
    return rows;
}

/* The totals over the rows; rank 0 prints them and writes -J's file.
 * Returns the wrong elements. */
static long long summarize(const ctx_t *c, int argc, char **argv, const row_t *rows, int nrows)
{
    double sum_bw = 0, sum_log = 0;
    long long wrong = 0;
    int nratio = 0;
    for (int i = 0; i < nrows; i++) {
        sum_bw += rows[i].busbw;
        wrong += rows[i].wrong > 0 ? rows[i].wrong : 0;
        if (rows[i].has_mpi) {
            sum_log += log(rows[i].ratio);
            nratio++;
        }
    }
    double avg_bw = nrows ? sum_bw / nrows : 0, geo = nratio ? exp(sum_log / nratio) : 0;
    if (c->rank == 0) {
        printf("# Errors: %lld wrong elements%s\n", wrong,
               !c->check ? " (not checked)" : wrong ? " - FAILED" : " - OK");
        printf("# Avg bus bandwidth : %g\n", avg_bw);
        if (nratio)
            printf("# Geomean ratio mpi/hcomm : %g\n", geo);
        printf("#\n");
        fflush(stdout);
        if (c->json)
            write_json(c, c->json, argc, argv, rows, nrows, avg_bw, geo);
    }
    return wrong;
}

/* Deregister, destroy the communicator, free what the run allocated. */
static void tear_down(ctx_t *c, row_t *rows)
{
    if (c->reg) {
        HC(HcclCommDeregister(c->comm, c->sreg));
        HC(HcclCommDeregister(c->comm, c->rreg));
    }
    HC(HcclCommDestroy(c->comm));
    free(rows);
    free(c->times[0]);
    free(c->times[1]);
    free(c->step_ns);
    free(c->step_cpu);
    free(c->vcnt);
    free(c->vdispl);
    free(c->vcnt_mpi);
    if (c->reg) {
        HC(HcclMemFree(c->sbuf));
        HC(HcclMemFree(c->rbuf));
    } else {
        free(c->sbuf);
        free(c->rbuf);
    }
}

int main(int argc, char **argv)
{
    ctx_t ctx, *c = &ctx;
    memset(c, 0, sizeof(*c));
    g_ctx = c;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->n);

    int prc = parse_args(c, argc, argv, c->rank);
    if (prc) {
        MPI_Finalize();
        return prc == 1 ? 0 : 2;
    }
    c->op = colls[c->coll].reducing ? c->op : HCCL_REDUCE_SUM;

    /* hcomm reads HCCL_*_ALGO when the communicator is created */
    if (c->algo && setenv(colls[c->coll].algo_env, c->algo, 1) != 0) {
        perror("setenv");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    probe_machine(c);

    /* MPI equivalent */
    c->mt = mpi_type(c->t);
    c->mop = mpi_op(c->op);
    c->mpi_ok = colls[c->coll].reducing ? c->mt != MPI_DATATYPE_NULL : 1;
    if (!c->mpi_ok)
        c->mpi_why = "MPI has no reduction for this type";

    /* check value ranges for sums: n * |value| stays exact in the type */
    {
        double k = floor(c->t->exact / c->n);
        if (k > 100)
            k = 100;
        if (k < 2)
            k = 2;
        c->sum_k = (int)k;
        c->sum_lo = is_signed_kind(c->t->kind) ? -(c->sum_k / 2) : 0;
    }

    alloc_buffers(c);
    HC(HcclCommInitMpi(MPI_COMM_WORLD, &c->comm));
    if (c->reg) {
        HC(HcclCommRegister(c->comm, c->sbuf, c->buf_bytes, &c->sreg, 0));
        HC(HcclCommRegister(c->comm, c->rbuf, c->buf_bytes, &c->rreg, 0));
    }

    if (c->rank == 0)
        print_header(c, argc, argv);
    first_calls(c);
    int nrows;
    row_t *rows = run_sizes(c, &nrows);
    long long wrong = summarize(c, argc, argv, rows, nrows);
    tear_down(c, rows);
    MPI_Finalize();
    return wrong ? 1 : 0;
}
