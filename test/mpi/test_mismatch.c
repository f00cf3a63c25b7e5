/*
 * test/mpi/test_mismatch.c - ranks that disagree on a collective's
 * arguments (public API only).
 *
 * For every collective and every kind of disagreement (the last rank
 * passes 4x or 1/4 of the count, count + 1, a type of another size, a type
 * of the same size, another op, another root), at a tiny, a medium and a
 * large count (so the shared-staging, single-copy and message paths all
 * run), each on a fresh communicator (ReduceScatterV: block q has count + q
 * elements, and the count kinds change the last rank's idea of block 0,
 * its own block staying right):
 *  - no rank's memory is written outside its receive buffer: every buffer
 *    sits between guard zones four times its size, which must keep their
 *    pattern, and send buffers must not change (out of place);
 *  - every call returns (mpirun.sh's timeout catches a hang; the
 *    script sets a short HCCL_EXEC_TIMEOUT);
 *  - with -c (HCCL_CHECK_ARGS=1 set by the script): every rank returns
 *    HCCL_E_PARA and no receive buffer is written at all.
 * Without -c a disagreement may also end in HCCL_E_PARA, HCCL_E_TIMEOUT or
 * HCCL_E_REMOTE on some ranks, or go unnoticed where no rank can tell
 * (docs/DESIGN.md, "Ranks that disagree"), but never in a write outside the
 * owner's buffers.
 *
 * Usage: test_mismatch [-c] [-v] [-k CASE]   (-k: run only cases whose
 *        name contains CASE; -v: name each case before it runs)
 * Prints "test_mismatch: N cases, M failures" on rank 0; exit 1 on failure.
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_COUNT4, K_COUNT_QUARTER, K_COUNT1, K_TYPE, K_TYPE_SAME, K_OP, K_ROOT, K_LAST };
static const char *kind_name[K_LAST] = {"count*4", "count/4", "count+1", "type",
                                        "type-same-size", "op", "root"};
enum { C_ALLREDUCE, C_BROADCAST, C_REDUCE, C_REDUCESCATTER, C_ALLGATHER, C_SCATTER,
       C_ALLTOALL, C_REDUCESCATTERV, C_LAST };
static const char *coll_name[C_LAST] = {"AllReduce", "Broadcast",  "Reduce", "ReduceScatter",
                                        "AllGather", "Scatter", "AlltoAll", "ReduceScatterV"};

#define PAT_GUARD 0xA5
#define PAT_RECV 0x5A

static int g_rank, g_n, g_check, g_verbose;

/* a buffer of `bytes` with guard zones of 4 * bytes (at least 4 KiB) on
 * both sides */
typedef struct {
    unsigned char *base;
    size_t bytes, guard;
} gbuf_t;

static void gb_make(gbuf_t *b, size_t bytes, int fill)
{
    b->bytes = bytes;
    b->guard = 4 * bytes < 4096 ? 4096 : 4 * bytes;
    b->base = malloc(bytes + 2 * b->guard);
    if (b->base == NULL) {
        fprintf(stderr, "test_mismatch: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(b->base, PAT_GUARD, b->guard);
    memset(b->base + b->guard + bytes, PAT_GUARD, b->guard);
    for (size_t i = 0; i < bytes; i++)
        b->base[b->guard + i] = fill >= 0 ? (unsigned char)fill : (unsigned char)(i * 7 + g_rank);
}

static unsigned char *gb_ptr(const gbuf_t *b)
{
    return b->base + b->guard;
}

#define NO_HIT LONG_MIN
/* the first byte of a guard zone that changed (relative to the buffer's
 * start), or NO_HIT */
static long gb_guard_hit(const gbuf_t *b)
{
    for (size_t i = 0; i < b->guard; i++)
        if (b->base[i] != PAT_GUARD)
            return (long)i - (long)b->guard;
    for (size_t i = 0; i < b->guard; i++)
        if (b->base[b->guard + b->bytes + i] != PAT_GUARD)
            return (long)(b->bytes + i);
    return NO_HIT;
}

static int gb_unchanged(const gbuf_t *b, int fill)
{
    for (size_t i = 0; i < b->bytes; i++)
        if (b->base[b->guard + i] !=
            (fill >= 0 ? (unsigned char)fill : (unsigned char)(i * 7 + g_rank)))
            return 0;
    return 1;
}

static size_t dsize(HcclDataType t)
{
    switch (t) {
    case HCCL_DATA_TYPE_INT8: case HCCL_DATA_TYPE_UINT8: return 1;
    case HCCL_DATA_TYPE_FP16: case HCCL_DATA_TYPE_INT16: case HCCL_DATA_TYPE_BFP16: return 2;
    case HCCL_DATA_TYPE_FP32: case HCCL_DATA_TYPE_INT32: case HCCL_DATA_TYPE_UINT32: return 4;
    default: return 8;
    }
}

/* The send and receive sizes of collective c on this rank (elements). */
static void sizes(int c, uint64_t count, uint32_t root, uint64_t *scount, uint64_t *rcount)
{
    const uint64_t n = (uint64_t)g_n;
    switch (c) {
    case C_ALLREDUCE: *scount = count; *rcount = count; break;
    case C_BROADCAST: *scount = 0; *rcount = count; break;
    case C_REDUCE: *scount = count; *rcount = (uint32_t)g_rank == root ? count : 0; break;
    case C_REDUCESCATTER: *scount = n * count; *rcount = count; break;
    case C_ALLGATHER: *scount = count; *rcount = n * count; break;
    case C_SCATTER: *scount = (uint32_t)g_rank == root ? n * count : 0; *rcount = count; break;
    default: *scount = n * count; *rcount = n * count; break;
    }
}

static int run_case(int c, int kind, uint64_t count0, const char *only, int *ncases)
{
    char name[96];
    snprintf(name, sizeof(name), "%s/%s/%llu", coll_name[c], kind_name[kind],
             (unsigned long long)count0);
    if (only && strstr(name, only) == NULL)
        return 0;
    const int odd = g_rank == g_n - 1;
    uint64_t count = count0;
    HcclDataType dt = HCCL_DATA_TYPE_FP32;
    HcclReduceOp op = HCCL_REDUCE_SUM;
    uint32_t root = 0;
    const int reduces = c == C_ALLREDUCE || c == C_REDUCE || c == C_REDUCESCATTER ||
                        c == C_REDUCESCATTERV;
    const int rooted = c == C_BROADCAST || c == C_REDUCE || c == C_SCATTER;
    if ((kind == K_OP && !reduces) || (kind == K_ROOT && !rooted))
        return 0;
    if (odd) {
        switch (kind) {
        case K_COUNT4: count = count0 * 4; break;
        case K_COUNT_QUARTER: count = count0 / 4 ? count0 / 4 : 1; break;
        case K_COUNT1: count = count0 + 1; break;
        case K_TYPE: dt = HCCL_DATA_TYPE_FP64; break;
        case K_TYPE_SAME: dt = HCCL_DATA_TYPE_INT32; break;
        case K_OP: op = HCCL_REDUCE_MAX; break;
        case K_ROOT: root = (uint32_t)(g_n - 1); break;
        }
    }
    (*ncases)++;
    if (g_verbose && g_rank == 0)
        fprintf(stderr, "test_mismatch: case %s\n", name);
    HcclComm comm;
    HcclResult r = HcclCommInitMpi(MPI_COMM_WORLD, &comm);
    if (r != HCCL_SUCCESS) {
        fprintf(stderr, "rank %d: %s: HcclCommInitMpi: %d\n", g_rank, name, r);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    uint64_t sc, rc;
    sizes(c, count, root, &sc, &rc);
    uint64_t *vc = NULL, *vd = NULL; /* ReduceScatterV's sendCounts, sendDispls */
    if (c == C_REDUCESCATTERV) {
        vc = malloc(2 * (size_t)g_n * sizeof(uint64_t));
        if (vc == NULL)
            MPI_Abort(MPI_COMM_WORLD, 2);
        vd = vc + g_n;
        sc = 0;
        for (int q = 0; q < g_n; q++) {
            vc[q] = (q == 0 ? count : count0) + (uint64_t)q;
            vd[q] = sc;
            sc += vc[q];
        }
        rc = vc[g_rank];
    }
    const size_t es = dsize(dt);
    gbuf_t s, rb;
    gb_make(&s, sc * es, -1);
    gb_make(&rb, rc * es, PAT_RECV);
    void *sp = gb_ptr(&s), *rp = gb_ptr(&rb);
    switch (c) {
    case C_ALLREDUCE: r = HcclAllReduce(sp, rp, count, dt, op, comm, NULL); break;
    case C_BROADCAST:
        /* the root sends its receive buffer's contents */
        if ((uint32_t)g_rank == root)
            for (size_t i = 0; i < rb.bytes; i++)
                gb_ptr(&rb)[i] = (unsigned char)i;
        r = HcclBroadcast(rp, count, dt, root, comm, NULL);
        break;
    case C_REDUCE: r = HcclReduce(sp, rc ? rp : NULL, count, dt, op, root, comm, NULL); break;
    case C_REDUCESCATTER: r = HcclReduceScatter(sp, rp, count, dt, op, comm, NULL); break;
    case C_ALLGATHER: r = HcclAllGather(sp, rp, count, dt, comm, NULL); break;
    case C_SCATTER: r = HcclScatter(sc ? sp : NULL, rp, count, dt, root, comm, NULL); break;
    case C_REDUCESCATTERV:
        r = HcclReduceScatterV(sp, vc, vd, rp, rc, dt, op, comm, NULL);
        break;
    default: r = HcclAlltoAll(sp, count, dt, rp, count, dt, comm, NULL); break;
    }
    int bad = 0;
    const long hs = gb_guard_hit(&s), hr = gb_guard_hit(&rb);
    if (hs != NO_HIT) {
        fprintf(stderr, "rank %d: %s: send buffer's guard written at byte %ld (rc %d)\n",
                g_rank, name, hs, r);
        bad = 1;
    }
    if (hr != NO_HIT) {
        fprintf(stderr, "rank %d: %s: receive buffer's guard written at byte %ld of %zu (rc %d)\n",
                g_rank, name, hr, rb.bytes, r);
        bad = 1;
    }
    if (c != C_BROADCAST && !gb_unchanged(&s, -1)) {
        fprintf(stderr, "rank %d: %s: send buffer changed (rc %d)\n", g_rank, name, r);
        bad = 1;
    }
    if (g_check) {
        if (r != HCCL_E_PARA) {
            fprintf(stderr, "rank %d: %s: returned %d, expected HCCL_E_PARA (%d)\n", g_rank,
                    name, r, HCCL_E_PARA);
            bad = 1;
        }
        if (!(c == C_BROADCAST && (uint32_t)g_rank == root) && !gb_unchanged(&rb, PAT_RECV)) {
            fprintf(stderr, "rank %d: %s: receive buffer written although the call failed\n",
                    g_rank, name);
            bad = 1;
        }
    }
    /* a communicator that saw an error is not used again: destroy it (a
     * destroy after a failed operation must not hang either) */
    HcclCommDestroy(comm);
    free(s.base);
    free(rb.base);
    free(vc);
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (g_rank == 0 && any)
        fprintf(stderr, "test_mismatch: FAILED %s\n", name);
    return any;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_n);
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0)
            g_check = 1;
        else if (strcmp(argv[i], "-v") == 0)
            g_verbose = 1;
        else if (strcmp(argv[i], "-k") == 0 && i + 1 < argc)
            only = argv[++i];
        else {
            if (g_rank == 0)
                fprintf(stderr, "usage: test_mismatch [-c] [-v] [-k CASE]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (g_n < 2) {
        if (g_rank == 0)
            printf("test_mismatch: needs 2 or more ranks\n");
        MPI_Finalize();
        return 77;
    }
    /* tiny (shared staging, fast lane), medium, large (single copy, pipelines) */
    static const uint64_t counts[] = {3, 4099, 65536};
    int ncases = 0, nfail = 0;
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++)
        for (int c = 0; c < C_LAST; c++)
            for (int kind = 0; kind < K_LAST; kind++)
                nfail += run_case(c, kind, counts[k], only, &ncases);
    if (g_rank == 0)
        printf("test_mismatch: %d cases, %d failures\n", ncases, nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
