/*
 * test/mpi/test_coll.c - correctness of every hcomm collective under mpirun
 * (public API only), against independent references (refcheck.c).
 *
 * Matrix: collective x data type x op x count x root x in-place, on
 * MPI_COMM_WORLD; on 2 ranks also inexact float reductions (rounding);
 * then a smaller matrix on a second and a third communicator (an
 * MPI_Comm_split half, and an MPI_Comm_dup through HcclCommInitMpiConfig
 * with a name and a 1 MB buffer) with operations on all three interleaved
 * and MPI calls mixed in; then communicators created and destroyed in a
 * loop.
 *
 * References and the choice of inputs (exact in any reduction order, AVG
 * inputs multiples of nranks) are described in refcheck.h.
 *
 * Every result is compared bit for bit on every rank; guard zones around
 * every buffer must stay intact, send buffers of out-of-place calls must be
 * unchanged, results that every rank holds must hash the same everywhere,
 * and the combinations the API refuses must return the documented code
 * without touching the buffers.
 *
 * Usage: test_coll [-q] [-B] [-A] [-L] [-s SEED] [-v]
 *   -q  quick: fewer counts and ops (for large rank counts on few cores)
 *   -A  registered buffers: the collectives' buffers come from one
 *       HcclMemAlloc pool (malloc once it is full) that is registered with
 *       the world communicator whole and with dup in two pieces split at an
 *       offset that is no page boundary (a buffer across it is in neither:
 *       the unmapped path), not with half (HcclCommRegister)
 *   -B  skip the big sizes (65536+3, 1M+1 elements)
 *   -L  references of the reductions, AllGather and AlltoAll computed
 *       locally: every rank's input regenerated (a pure function of seed
 *       and rank), reductions in rank order by refcheck.c, no MPI call
 *       (across the hosts of an emulated cluster an MPI message costs
 *       about 4 ms: docs/CLUSTER.md); AlltoAllV keeps MPI_Alltoallv
 *   -s  base seed of the input generator (default 20240611)
 *   -v  print one line per case on rank 0
 *
 * Output: failures (first 20 per rank) with collective, type, op, count,
 * root, in-place, first bad index, got and expected; then on rank 0
 * "test_coll: N checks, M failures" (N, M summed over ranks). Exit status
 * 0 if no failure, 1 otherwise.
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "refcheck.h"

#define MAX_PRINTED 20

/* ------------------------------------------------------------ state */

typedef struct {
    HcclComm h;
    MPI_Comm m;
    int rank, n;
    const char *name; /* "world", "half", "dup" */
    uint64_t hash;    /* of this phase's results that all ranks hold */
} ctx_t;

/* One test case, for messages. */
typedef struct {
    const char *coll;
    const ctx_t *cx;
    HcclDataType t;
    int op; /* -1: none */
    uint64_t count;
    int root; /* -1: none */
    int inplace;
} case_t;

static int g_rank, g_n;
static long g_checks, g_fails;
static int g_printed;
static uint64_t g_seed = 20240611, g_case;
static int g_quick, g_nobig, g_verbose, g_reg, g_localref;

/* -A: the buffers come from one HcclMemAlloc region (rc_buf_pool; each
 * case frees what it took, so the pool starts over) */
#define POOL_BYTES ((size_t)48 << 20)
/* dup's two registrations meet here: 3 pages and a cache line, no page
 * boundary of any size (a peer maps the tail from the page below) */
#define POOL_SPLIT ((size_t)(3 << 12) + 64)
static unsigned char *g_pool;

static const HcclDataType ALL_TYPES[] = {
    HCCL_DATA_TYPE_INT8,   HCCL_DATA_TYPE_INT16,   HCCL_DATA_TYPE_INT32,
    HCCL_DATA_TYPE_INT64,  HCCL_DATA_TYPE_UINT8,   HCCL_DATA_TYPE_UINT16,
    HCCL_DATA_TYPE_UINT32, HCCL_DATA_TYPE_UINT64,  HCCL_DATA_TYPE_FP16,
    HCCL_DATA_TYPE_BFP16,  HCCL_DATA_TYPE_FP32,    HCCL_DATA_TYPE_FP64,
    HCCL_DATA_TYPE_INT128, HCCL_DATA_TYPE_FP8E4M3, HCCL_DATA_TYPE_FP8E5M2,
};
#define NTYPES ((int)(sizeof(ALL_TYPES) / sizeof(ALL_TYPES[0])))

static const HcclReduceOp ALL_OPS[] = {
    HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_MAX, HCCL_REDUCE_MIN, HCCL_REDUCE_AVG,
};
#define NOPS ((int)(sizeof(ALL_OPS) / sizeof(ALL_OPS[0])))

/* Small counts: zero, one, two, primes that cross SIMD widths and small
 * chunk sizes, and counts not divisible by any rank count we use; 55 x 8 B
 * is exactly the shared-memory tiny region (440 B, coll/shm_util.h). */
static const uint64_t COUNTS[] = {0, 1, 2, 7, 13, 55, 61, 257, 1031};
#define NCOUNTS ((int)(sizeof(COUNTS) / sizeof(COUNTS[0])))
static const uint64_t COUNTS_Q[] = {0, 1, 7, 61, 1031};
#define NCOUNTS_Q ((int)(sizeof(COUNTS_Q) / sizeof(COUNTS_Q[0])))

#define BIG1 (65536 + 3)
#define BIG2 (1048576 + 1)
/* int8: past the size from which 2-rank DIRECT AllReduce stages each
 * chunk only after its previous fold (16 MiB, coll/allreduce_direct.c) */
#define BIG3 ((16u << 20) + 3)

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "test_coll: out of memory (%zu bytes)\n", n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static void xbuf(rc_buf_t *b, size_t bytes, size_t es)
{
    if (rc_buf_alloc(b, bytes, es) != 0) {
        fprintf(stderr, "test_coll: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static uint64_t next_seed(void)
{
    return g_seed * 1000003u + ++g_case;
}

/* ------------------------------------------------------ reporting */

/* Cases with type NOTYPE are not about one call (queries, phase checks). */
#define NOTYPE HCCL_DATA_TYPE_RESERVED

static void describe(const case_t *c, char *out, size_t len)
{
    if (c->t == NOTYPE) {
        snprintf(out, len, "%s comm=%s", c->coll, c->cx ? c->cx->name : "-");
        return;
    }
    int k = snprintf(out, len, "%s comm=%s type=%s", c->coll, c->cx ? c->cx->name : "-",
                     rc_type_name(c->t));
    if (c->op >= 0)
        k += snprintf(out + k, len - (size_t)k, " op=%s", rc_op_name((HcclReduceOp)c->op));
    k += snprintf(out + k, len - (size_t)k, " count=%" PRIu64, c->count);
    if (c->root >= 0)
        k += snprintf(out + k, len - (size_t)k, " root=%d", c->root);
    snprintf(out + k, len - (size_t)k, " inplace=%d", c->inplace);
}

static void fail(const case_t *c, const char *fmt, ...)
{
    g_fails++;
    if (g_printed >= MAX_PRINTED)
        return;
    g_printed++;
    char d[256], msg[512];
    describe(c, d, sizeof d);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "[rank %d] FAIL %s: %s\n", g_rank, d, msg);
    if (g_printed == MAX_PRINTED)
        fprintf(stderr, "[rank %d] (further failures not printed)\n", g_rank);
}

#define CHECK(c, cond, ...)           \
    do {                              \
        g_checks++;                   \
        if (!(cond))                  \
            fail((c), __VA_ARGS__);   \
    } while (0)

/* got == exp as HcclResult; returns 1 if equal. */
static int check_rc(const case_t *c, const char *call, HcclResult got, HcclResult exp)
{
    g_checks++;
    if (got != exp) {
        fail(c, "%s returned %d (%s), expected %d (%s)", call, (int)got,
             HcclGetErrorString(got), (int)exp, HcclGetErrorString(exp));
        return 0;
    }
    return 1;
}

/* Bitwise comparison of count elements of type c->t. */
static void check_data(const case_t *c, const char *what, const void *got, const void *exp,
                       size_t count, HcclDataType t)
{
    g_checks++;
    size_t es = rc_esize(t);
    long i = rc_first_diff(got, exp, count, es);
    if (i < 0)
        return;
    size_t nbad = 0;
    for (size_t j = (size_t)i; j < count; j++)
        if (memcmp((const char *)got + j * es, (const char *)exp + j * es, es) != 0)
            nbad++;
    char g[96], e[96];
    rc_format_elem(g, sizeof g, got, (size_t)i, t);
    rc_format_elem(e, sizeof e, exp, (size_t)i, t);
    fail(c, "%s: first bad index %ld of %zu (%zu bad): got %s expected %s", what, i, count,
         nbad, g, e);
}

static void check_bytes(const case_t *c, const char *what, const void *got, const void *exp,
                        size_t bytes)
{
    g_checks++;
    long i = rc_first_diff(got, exp, bytes, 1);
    if (i >= 0)
        fail(c, "%s: first bad byte %ld of %zu: got 0x%02x expected 0x%02x", what, i, bytes,
             ((const unsigned char *)got)[i], ((const unsigned char *)exp)[i]);
}

static void check_guards(const case_t *c, const char *what, const rc_buf_t *b)
{
    g_checks++;
    long off = rc_buf_guard_check(b);
    if (off != 0)
        fail(c, "%s: guard zone damaged %ld byte(s) %s the buffer", what, off < 0 ? -off : off,
             off < 0 ? "before" : "after");
}

/* Results that every rank holds must be identical: accumulate a hash per
 * communicator and compare across its ranks at the end of each phase. */
static void phase_hash_add(const ctx_t *cx, const void *p, size_t n)
{
    ((ctx_t *)cx)->hash = rc_hash_bytes(p, n, cx->hash);
}
static void phase_hash_check(const ctx_t *cx, const char *phase)
{
    case_t c = {phase, cx, NOTYPE, -1, 0, -1, 0};
    g_checks++;
    if (!rc_same_on_all(cx->hash, cx->m))
        fail(&c, "results differ between ranks (hash of all outputs of the phase)");
    ((ctx_t *)cx)->hash = 0;
}

static void verbose_case(const case_t *c)
{
    if (g_verbose && g_rank == 0) {
        char d[256];
        describe(c, d, sizeof d);
        printf("  %s\n", d);
        fflush(stdout);
    }
}

/* -------------------------------------------------------- reductions */

/* AllGather's reference: rank r's `bytes` from rc_fill_bytes(.., r, seed)
 * at r * bytes; MPI_Allgather, or with -L regenerated here. */
static void ref_allgather(const ctx_t *cx, const void *in, void *exp, size_t bytes,
                          uint64_t seed)
{
    if (!g_localref) {
        MPI_Allgather(in, (int)bytes, MPI_BYTE, exp, (int)bytes, MPI_BYTE, cx->m);
        return;
    }
    for (int r = 0; r < cx->n; r++)
        rc_fill_bytes((unsigned char *)exp + (size_t)r * bytes, bytes, r, seed);
}

/* AlltoAll's reference: block j is block `rank` of rank j's input
 * (rc_fill_bytes(.., j, seed) of n blocks); MPI_Alltoall, or with -L
 * regenerated here. */
static void ref_alltoall(const ctx_t *cx, const void *in, void *exp, size_t bytes,
                         uint64_t seed)
{
    if (!g_localref) {
        MPI_Alltoall(in, (int)bytes, MPI_BYTE, exp, (int)bytes, MPI_BYTE, cx->m);
        return;
    }
    const size_t total = bytes * (size_t)cx->n;
    unsigned char *tmp = xmalloc(total);
    for (int j = 0; j < cx->n; j++) {
        rc_fill_bytes(tmp, total, j, seed);
        if (bytes)
            memcpy((unsigned char *)exp + (size_t)j * bytes, tmp + (size_t)cx->rank * bytes, bytes);
    }
    free(tmp);
}

/* The reference of a reduction whose inputs came from rc_fill_reduce with
 * seed: MPI (refcheck.c), or with -L regenerated and reduced here. */
static void ref_reduce(const ctx_t *cx, const void *in, void *out, size_t count,
                       HcclDataType t, HcclReduceOp op, uint64_t seed)
{
    if (g_localref)
        rc_reference_reduce_gen(out, count, t, op, cx->n, seed);
    else
        rc_reference_reduce(in, out, count, t, op, cx->m);
}

static void t_allreduce(const ctx_t *cx, HcclDataType t, HcclReduceOp op, uint64_t count,
                        int inplace)
{
    case_t c = {"AllReduce", cx, t, (int)op, count, -1, inplace};
    verbose_case(&c);
    size_t es = rc_esize(t), bytes = count * es;
    uint64_t seed = next_seed();
    HcclResult exp_rc = rc_reduce_expected(t, op);
    unsigned char *in = xmalloc(bytes), *ref = xmalloc(bytes), *before = xmalloc(bytes);
    rc_fill_reduce(in, count, t, op, cx->rank, cx->n, seed);
    if (exp_rc == HCCL_SUCCESS)
        ref_reduce(cx, in, ref, count, t, op, seed);
    rc_buf_t sb, rb;
    xbuf(&sb, bytes, es);
    xbuf(&rb, bytes, es);
    HcclResult r;
    if (inplace) {
        memcpy(rb.p, in, bytes);
        memcpy(before, in, bytes);
        r = HcclAllReduce(rb.p, rb.p, count, t, op, cx->h, NULL);
    } else {
        memcpy(sb.p, in, bytes);
        rc_buf_poison(&rb, 0x3c);
        memcpy(before, rb.p, bytes);
        r = HcclAllReduce(sb.p, rb.p, count, t, op, cx->h, NULL);
    }
    if (check_rc(&c, "HcclAllReduce", r, exp_rc)) {
        if (exp_rc == HCCL_SUCCESS) {
            check_data(&c, "recvBuf", rb.p, ref, count, t);
            phase_hash_add(cx, rb.p, bytes);
        } else {
            check_bytes(&c, "recvBuf written by a refused call", rb.p, before, bytes);
        }
    }
    if (!inplace) {
        check_bytes(&c, "sendBuf changed", sb.p, in, bytes);
        check_guards(&c, "sendBuf", &sb);
    }
    check_guards(&c, "recvBuf", &rb);
    rc_buf_free(&sb);
    rc_buf_free(&rb);
    free(in);
    free(ref);
    free(before);
}

/* The same small AllReduce ('A'), AllGather ('g'), ReduceScatter ('r') or
 * AlltoAll ('a') 150 times in a row, as a training loop or a benchmark
 * makes it: from the second call on the ranks may run it inline
 * (src/comm/fastlane.h). Inputs differ per call (references computed first, so
 * that nothing synchronizes the ranks between the calls); every 37 calls
 * one rank, a different one each time, sleeps 2 ms first, so the others
 * publish and must hand the wait to the executor. `op` for 'A' and 'r';
 * in place for 'A', 'g' and 'r'. */
static void t_repeat(const ctx_t *cx, char which, HcclDataType t, HcclReduceOp op,
                     uint64_t count, int inplace)
{
    enum { REPS = 150 };
    const int k = which == 'A' ? 0 : which == 'g' ? 1 : which == 'r' ? 2 : 3;
    static const char *const names[] = {"AllReduce (repeated)", "AllGather (repeated)",
                                        "ReduceScatter (repeated)", "AlltoAll (repeated)"};
    const int reduces = which == 'A' || which == 'r';
    case_t c = {names[k], cx, t, reduces ? (int)op : -1, count, -1, inplace};
    verbose_case(&c);
    const size_t es = rc_esize(t), bytes = count * es, total = bytes * (size_t)cx->n;
    /* bytes in and out per rank and call; the same result on every rank */
    const size_t in_b = which == 'A' || which == 'g' ? bytes : total;
    const size_t out_b = which == 'A' || which == 'r' ? bytes : total;
    const int same = which == 'A' || which == 'g';
    unsigned char *in = xmalloc(REPS * in_b), *exp = xmalloc(REPS * total);
    for (int i = 0; i < REPS; i++) {
        unsigned char *pi = in + i * in_b, *pe = exp + i * total;
        if (reduces) {
            const uint64_t seed = next_seed();
            rc_fill_reduce(pi, in_b / es, t, op, cx->rank, cx->n, seed);
            ref_reduce(cx, pi, pe, in_b / es, t, op, seed);
            if (which == 'r') /* our block */
                memmove(pe, pe + (size_t)cx->rank * bytes, bytes);
        } else {
            const uint64_t seed = next_seed();
            rc_fill_bytes(pi, in_b, cx->rank, seed);
            if (which == 'g')
                ref_allgather(cx, pi, pe, bytes, seed);
            else
                ref_alltoall(cx, pi, pe, bytes, seed);
        }
    }
    rc_buf_t sb, rb;
    xbuf(&sb, total, es);
    xbuf(&rb, total, es);
    for (int i = 0; i < REPS; i++) {
        const unsigned char *pi = in + i * in_b;
        unsigned char *send = sb.p, *out = rb.p;
        rc_buf_poison(&rb, (unsigned char)i);
        if (inplace && which == 'A')
            send = rb.p;
        else if (inplace && which == 'g')
            send = rb.p + (size_t)cx->rank * bytes;
        else if (inplace) /* ReduceScatter: our block of SEND */
            out = sb.p + (size_t)cx->rank * bytes;
        memcpy(send, pi, in_b);
        if (i % 37 == 5 && cx->rank == (i / 37) % cx->n)
            usleep(2000);
        HcclResult r;
        switch (which) {
        case 'A': r = HcclAllReduce(send, out, count, t, op, cx->h, NULL); break;
        case 'g': r = HcclAllGather(send, out, count, t, cx->h, NULL); break;
        case 'r': r = HcclReduceScatter(send, out, count, t, op, cx->h, NULL); break;
        default: r = HcclAlltoAll(send, count, t, out, count, t, cx->h, NULL); break;
        }
        if (!check_rc(&c, names[k], r, HCCL_SUCCESS))
            break;
        check_data(&c, "recvBuf", out, exp + i * total, out_b / es, t);
        if (same)
            phase_hash_add(cx, out, out_b);
        if (!inplace)
            check_bytes(&c, "sendBuf changed", send, pi, in_b);
    }
    check_guards(&c, "sendBuf", &sb);
    check_guards(&c, "recvBuf", &rb);
    rc_buf_free(&sb);
    rc_buf_free(&rb);
    free(in);
    free(exp);
}

/* In-place Reduce: sendBuf == recvBuf at the root only (MPI_IN_PLACE's rule;
 * recvBuf is not significant on the other ranks, so only its guards are
 * checked there). */
static void t_reduce(const ctx_t *cx, HcclDataType t, HcclReduceOp op, uint64_t count,
                     int root, int inplace)
{
    case_t c = {"Reduce", cx, t, (int)op, count, root, inplace};
    verbose_case(&c);
    size_t es = rc_esize(t), bytes = count * es;
    uint64_t seed = next_seed();
    HcclResult exp_rc = rc_reduce_expected(t, op);
    unsigned char *in = xmalloc(bytes), *ref = xmalloc(bytes), *before = xmalloc(bytes);
    rc_fill_reduce(in, count, t, op, cx->rank, cx->n, seed);
    if (exp_rc == HCCL_SUCCESS)
        ref_reduce(cx, in, ref, count, t, op, seed);
    rc_buf_t sb, rb;
    xbuf(&sb, bytes, es);
    xbuf(&rb, bytes, es);
    int me_root = cx->rank == root;
    int ip = inplace && me_root;
    HcclResult r;
    if (ip) {
        memcpy(rb.p, in, bytes);
        memcpy(before, in, bytes);
        r = HcclReduce(rb.p, rb.p, count, t, op, (uint32_t)root, cx->h, NULL);
    } else {
        memcpy(sb.p, in, bytes);
        rc_buf_poison(&rb, 0x5a);
        memcpy(before, rb.p, bytes);
        r = HcclReduce(sb.p, rb.p, count, t, op, (uint32_t)root, cx->h, NULL);
    }
    if (check_rc(&c, "HcclReduce", r, exp_rc)) {
        if (exp_rc == HCCL_SUCCESS) {
            if (me_root)
                check_data(&c, "recvBuf at root", rb.p, ref, count, t);
        } else {
            check_bytes(&c, "recvBuf written by a refused call", rb.p, before, bytes);
        }
    }
    if (!ip) {
        check_bytes(&c, "sendBuf changed", sb.p, in, bytes);
        check_guards(&c, "sendBuf", &sb);
    }
    check_guards(&c, "recvBuf", &rb);
    rc_buf_free(&sb);
    rc_buf_free(&rb);
    free(in);
    free(ref);
    free(before);
}

/* A ReduceScatter(V) case's buffers: sendBuf (total bytes, a copy of the
 * input), recvBuf (bytes, poisoned), where the result goes (out: recvBuf,
 * or in place this rank's block of sendBuf at own_off) and what the
 * written buffer held before the call. */
typedef struct {
    rc_buf_t sb, rb;
    unsigned char *out, *before;
    size_t total, bytes;
} rs_bufs_t;

static void rs_setup(rs_bufs_t *b, const case_t *c, const unsigned char *in, size_t total,
                     size_t bytes, size_t own_off)
{
    const size_t es = rc_esize(c->t);
    b->total = total;
    b->bytes = bytes;
    b->before = xmalloc(total);
    xbuf(&b->sb, total, es);
    xbuf(&b->rb, bytes, es);
    memcpy(b->sb.p, in, total);
    if (c->inplace) {
        b->out = b->sb.p + own_off;
        memcpy(b->before, in, total);
    } else {
        b->out = b->rb.p;
        rc_buf_poison(&b->rb, 0x77);
        memcpy(b->before, b->rb.p, bytes);
    }
}

/* The call returned r: the result (mine, count elements) or, refused,
 * nothing written; the send buffer unchanged out of place; the guards.
 * Frees the buffers. */
static void rs_finish(rs_bufs_t *b, const case_t *c, const char *call, HcclResult r,
                      HcclResult exp_rc, const unsigned char *in, const unsigned char *mine,
                      uint64_t count)
{
    if (check_rc(c, call, r, exp_rc)) {
        if (exp_rc == HCCL_SUCCESS)
            check_data(c, "recvBuf", b->out, mine, count, c->t);
        else if (c->inplace)
            check_bytes(c, "buffer written by a refused call", b->sb.p, b->before, b->total);
        else
            check_bytes(c, "recvBuf written by a refused call", b->rb.p, b->before, b->bytes);
    }
    if (!c->inplace) {
        check_bytes(c, "sendBuf changed", b->sb.p, in, b->total);
        check_guards(c, "recvBuf", &b->rb);
    }
    check_guards(c, "sendBuf", &b->sb);
    rc_buf_free(&b->sb);
    rc_buf_free(&b->rb);
    free(b->before);
}

/* In-place ReduceScatter: recvBuf == sendBuf + rank * recvCount * esize. */
static void t_reducescatter(const ctx_t *cx, HcclDataType t, HcclReduceOp op, uint64_t count,
                            int inplace)
{
    case_t c = {"ReduceScatter", cx, t, (int)op, count, -1, inplace};
    verbose_case(&c);
    size_t es = rc_esize(t), bytes = count * es, total = bytes * (size_t)cx->n;
    uint64_t seed = next_seed();
    HcclResult exp_rc = rc_reduce_expected(t, op);
    unsigned char *in = xmalloc(total), *ref = xmalloc(total);
    rc_fill_reduce(in, count * (size_t)cx->n, t, op, cx->rank, cx->n, seed);
    if (exp_rc == HCCL_SUCCESS)
        ref_reduce(cx, in, ref, count * (size_t)cx->n, t, op, seed);
    rs_bufs_t b;
    rs_setup(&b, &c, in, total, bytes, (size_t)cx->rank * bytes);
    HcclResult r = HcclReduceScatter(b.sb.p, b.out, count, t, op, cx->h, NULL);
    rs_finish(&b, &c, "HcclReduceScatter", r, exp_rc, in, ref + (size_t)cx->rank * bytes, count);
    free(in);
    free(ref);
}

/* ReduceScatterV's block q for base count c0: c0, 0, 1, c0 + 13 (prime
 * for the base counts used) or 2 c0 + 1 by q (and c0), so that blocks
 * differ, some are empty, the largest is not every rank's own and, with
 * chunked rings, shorter blocks end before the largest one's last chunk. */
static uint64_t rsv_count(uint64_t c0, int q)
{
    switch ((unsigned)(q + (int)(c0 % 5)) % 5u) {
    case 0: return c0;
    case 1: return 0;
    case 2: return 1;
    case 3: return c0 + 13;
    default: return 2 * c0 + 1;
    }
}

static HcclStream g_stream; /* the stream of the stream cases (created once) */

/* ReduceScatterV with the blocks of rsv_count (or, with `plain` > 0, every
 * block `plain` elements but the last rank's, which has plain + 2: the
 * call comes right after three plain ReduceScatters of `plain` elements,
 * whose schedule a rank with `plain` elements must not reuse). The blocks
 * lie in reverse rank order with gaps, so the displacements matter; in
 * place, recvBuf is this rank's block of sendBuf. On a stream, the count
 * arrays are overwritten right after the call returns, before the
 * stream is synchronized (the operation must hold its own copy). */
static void t_reducescatterv(const ctx_t *cx, HcclDataType t, HcclReduceOp op, uint64_t c0,
                             int inplace, int on_stream, uint64_t plain)
{
    case_t c = {on_stream ? "ReduceScatterV (stream)" : plain ? "ReduceScatterV (after "
                "ReduceScatter)" : "ReduceScatterV", cx, t, (int)op, c0, -1, inplace};
    verbose_case(&c);
    const int n = cx->n, me = cx->rank;
    const size_t es = rc_esize(t);
    uint64_t *sc = xmalloc(sizeof(uint64_t) * (size_t)n);
    uint64_t *sd = xmalloc(sizeof(uint64_t) * (size_t)n);
    uint64_t end = 2;
    for (int q = n - 1; q >= 0; q--) {
        sc[q] = plain ? plain + (q == n - 1 ? 2 : 0) : rsv_count(c0, q);
        sd[q] = end;
        end += sc[q] + 3;
    }
    const uint64_t mine_n = sc[me];
    const size_t total = (size_t)end * es, bytes = (size_t)mine_n * es;
    const uint64_t seed = next_seed();
    const HcclResult exp_rc = rc_reduce_expected(t, op);
    unsigned char *in = xmalloc(total), *ref = xmalloc(total);
    rc_fill_reduce(in, (size_t)end, t, op, me, n, seed);
    if (exp_rc == HCCL_SUCCESS)
        ref_reduce(cx, in, ref, (size_t)end, t, op, seed);
    if (plain && exp_rc == HCCL_SUCCESS) { /* the plain ones first, checked too */
        rc_buf_t pb, po;
        xbuf(&pb, plain * es * (size_t)n, es);
        xbuf(&po, plain * es, es);
        for (int i = 0; i < 3; i++) {
            memcpy(pb.p, in, plain * es * (size_t)n); /* (exact inputs: any slice) */
            HcclResult r = HcclReduceScatter(pb.p, po.p, plain, t, op, cx->h, NULL);
            if (check_rc(&c, "HcclReduceScatter", r, HCCL_SUCCESS))
                check_data(&c, "recvBuf of the plain ReduceScatter", po.p,
                           ref + (size_t)me * plain * es, plain, t);
        }
        rc_buf_free(&pb);
        rc_buf_free(&po);
    }
    const unsigned char *mine = ref + sd[me] * es;
    rs_bufs_t b;
    rs_setup(&b, &c, in, total, bytes, sd[me] * es);
    HcclResult r = HcclReduceScatterV(b.sb.p, sc, sd, b.out, mine_n, t, op, cx->h,
                                      on_stream ? g_stream : NULL);
    if (on_stream) {
        for (int q = 0; q < n; q++)
            sc[q] = sd[q] = 0x7fffffffffffull; /* must not be read any more */
        HcclResult s = HcclStreamSynchronize(g_stream);
        check_rc(&c, "HcclStreamSynchronize", s, HCCL_SUCCESS);
    }
    rs_finish(&b, &c, "HcclReduceScatterV", r, exp_rc, in, mine, mine_n);
    free(in);
    free(ref);
    free(sc);
    free(sd);
}

/* ----------------------------------------------------- data movement */

static void t_broadcast(const ctx_t *cx, HcclDataType t, uint64_t count, int root)
{
    case_t c = {"Broadcast", cx, t, -1, count, root, 0};
    verbose_case(&c);
    size_t es = rc_esize(t), bytes = count * es;
    uint64_t seed = next_seed();
    unsigned char *exp = xmalloc(bytes);
    rc_fill_bytes(exp, bytes, root, seed); /* root's data: a pure function */
    rc_buf_t b;
    xbuf(&b, bytes, es);
    if (cx->rank == root)
        memcpy(b.p, exp, bytes);
    else
        rc_buf_poison(&b, 0x11);
    HcclResult r = HcclBroadcast(b.p, count, t, (uint32_t)root, cx->h, NULL);
    if (check_rc(&c, "HcclBroadcast", r, HCCL_SUCCESS)) {
        check_data(&c, cx->rank == root ? "buf at root" : "buf", b.p, exp, count, t);
        phase_hash_add(cx, b.p, bytes);
    }
    check_guards(&c, "buf", &b);
    rc_buf_free(&b);
    free(exp);
}

/* The same small Broadcast many times in a row, as a training loop or a
 * benchmark makes it: from the second call on the ranks may run it inline
 * (src/comm/fastlane.h). 150 calls pass the 32 ring entries more than twice, so
 * a root that runs ahead must be held back by its guard: one reader sleeps
 * 20 ms at call 10 while the others go on. Every 37 calls the root sleeps
 * 2 ms first (the readers arrive before its flag), and every call's data
 * differs, so a stale ring entry or a copy of the wrong epoch shows. */
static void t_broadcast_repeat(const ctx_t *cx, HcclDataType t, uint64_t count, int root)
{
    case_t c = {"Broadcast (repeated)", cx, t, -1, count, root, 0};
    verbose_case(&c);
    const size_t es = rc_esize(t), bytes = count * es;
    unsigned char *exp = xmalloc(bytes);
    rc_buf_t b;
    xbuf(&b, bytes, es);
    const int slow = (root + 1) % cx->n;
    for (int i = 0; i < 150; i++) {
        rc_fill_bytes(exp, bytes, root, next_seed());
        if (cx->rank == root)
            memcpy(b.p, exp, bytes);
        else
            rc_buf_poison(&b, (unsigned char)i);
        if ((i == 10 && cx->rank == slow) || (i % 37 == 5 && cx->rank == root))
            usleep(i == 10 ? 20000 : 2000);
        HcclResult r = HcclBroadcast(b.p, count, t, (uint32_t)root, cx->h, NULL);
        if (!check_rc(&c, "HcclBroadcast", r, HCCL_SUCCESS))
            break;
        check_data(&c, cx->rank == root ? "buf at root" : "buf", b.p, exp, count, t);
        phase_hash_add(cx, b.p, bytes);
    }
    check_guards(&c, "buf", &b);
    rc_buf_free(&b);
    free(exp);
}

/* In-place AllGather: sendBuf == recvBuf + rank * sendCount * esize. */
static void t_allgather(const ctx_t *cx, HcclDataType t, uint64_t count, int inplace)
{
    case_t c = {"AllGather", cx, t, -1, count, -1, inplace};
    verbose_case(&c);
    size_t es = rc_esize(t), bytes = count * es, total = bytes * (size_t)cx->n;
    uint64_t seed = next_seed();
    unsigned char *in = xmalloc(bytes), *exp = xmalloc(total);
    rc_fill_bytes(in, bytes, cx->rank, seed);
    ref_allgather(cx, in, exp, bytes, seed);
    rc_buf_t sb, rb;
    xbuf(&sb, bytes, es);
    xbuf(&rb, total, es);
    rc_buf_poison(&rb, 0x22);
    HcclResult r;
    if (inplace) {
        memcpy(rb.p + (size_t)cx->rank * bytes, in, bytes);
        r = HcclAllGather(rb.p + (size_t)cx->rank * bytes, rb.p, count, t, cx->h, NULL);
    } else {
        memcpy(sb.p, in, bytes);
        r = HcclAllGather(sb.p, rb.p, count, t, cx->h, NULL);
    }
    if (check_rc(&c, "HcclAllGather", r, HCCL_SUCCESS)) {
        check_data(&c, "recvBuf", rb.p, exp, count * (size_t)cx->n, t);
        phase_hash_add(cx, rb.p, total);
    }
    if (!inplace) {
        check_bytes(&c, "sendBuf changed", sb.p, in, bytes);
        check_guards(&c, "sendBuf", &sb);
    }
    check_guards(&c, "recvBuf", &rb);
    rc_buf_free(&sb);
    rc_buf_free(&rb);
    free(in);
    free(exp);
}

/* In-place Scatter: at the root, recvBuf == sendBuf + root * recvCount *
 * esize. sendBuf is not significant on the other ranks: they pass a valid
 * buffer, which must stay untouched. */
static void t_scatter(const ctx_t *cx, HcclDataType t, uint64_t count, int root, int inplace)
{
    case_t c = {"Scatter", cx, t, -1, count, root, inplace};
    verbose_case(&c);
    size_t es = rc_esize(t), bytes = count * es, total = bytes * (size_t)cx->n;
    uint64_t seed = next_seed();
    unsigned char *all = xmalloc(total), *sbefore = xmalloc(total);
    rc_fill_bytes(all, total, root, seed); /* the root's send buffer */
    const unsigned char *mine = all + (size_t)cx->rank * bytes;
    int me_root = cx->rank == root;
    rc_buf_t sb, rb;
    xbuf(&sb, total, es);
    xbuf(&rb, bytes, es);
    if (me_root)
        memcpy(sb.p, all, total);
    else
        rc_buf_poison(&sb, 0x44);
    memcpy(sbefore, sb.p, total);
    rc_buf_poison(&rb, 0x33);
    HcclResult r;
    unsigned char *out = rb.p;
    if (inplace && me_root) {
        out = sb.p + (size_t)root * bytes;
        r = HcclScatter(sb.p, out, count, t, (uint32_t)root, cx->h, NULL);
    } else {
        r = HcclScatter(sb.p, rb.p, count, t, (uint32_t)root, cx->h, NULL);
    }
    if (check_rc(&c, "HcclScatter", r, HCCL_SUCCESS))
        check_data(&c, "recvBuf", out, mine, count, t);
    check_bytes(&c, me_root ? "sendBuf changed at root" : "sendBuf changed at non-root",
                sb.p, sbefore, total);
    check_guards(&c, "sendBuf", &sb);
    check_guards(&c, "recvBuf", &rb);
    rc_buf_free(&sb);
    rc_buf_free(&rb);
    free(all);
    free(sbefore);
}

static void t_alltoall(const ctx_t *cx, HcclDataType t, uint64_t count)
{
    case_t c = {"AlltoAll", cx, t, -1, count, -1, 0};
    verbose_case(&c);
    size_t es = rc_esize(t), bytes = count * es, total = bytes * (size_t)cx->n;
    uint64_t seed = next_seed();
    unsigned char *in = xmalloc(total), *exp = xmalloc(total);
    rc_fill_bytes(in, total, cx->rank, seed);
    ref_alltoall(cx, in, exp, bytes, seed);
    rc_buf_t sb, rb;
    xbuf(&sb, total, es);
    xbuf(&rb, total, es);
    memcpy(sb.p, in, total);
    rc_buf_poison(&rb, 0x55);
    HcclResult r = HcclAlltoAll(sb.p, count, t, rb.p, count, t, cx->h, NULL);
    if (check_rc(&c, "HcclAlltoAll", r, HCCL_SUCCESS))
        check_data(&c, "recvBuf", rb.p, exp, count * (size_t)cx->n, t);
    check_bytes(&c, "sendBuf changed", sb.p, in, total);
    check_guards(&c, "sendBuf", &sb);
    check_guards(&c, "recvBuf", &rb);
    rc_buf_free(&sb);
    rc_buf_free(&rb);
    free(in);
    free(exp);
}

/* Elements that rank src sends to rank dst in the AlltoAllV test: 0, c/2,
 * c or 3c/2 (+1), so some blocks are empty and sizes differ per pair. */
/* An 8-rank AlltoAllV (bytes from src to dst) that test_soak found
 * hanging in PAIRWISE: rank 6 posts its receive of 8252 bytes from rank 4
 * (two eager fragments) after its wait for its own sends has polled both
 * fragments in, and UCX completed that receive, callback included, inside
 * the call that posted it (src/transport/transport_ucx.c, openucx/ucx#9131). */
static const uint64_t A2AV_LATE[8][8] = {
    {36638, 30697, 27753, 25728, 17367, 11504, 23850, 0},
    {12492, 20230, 39864, 23284, 36579, 21736, 0, 24908},
    {22511, 0, 0, 24436, 0, 19916, 4679, 23261},
    {2734, 33280, 32456, 33001, 0, 16807, 30512, 34345},
    {0, 20931, 0, 40076, 0, 0, 8252, 0},
    {3780, 38962, 4832, 298, 30912, 27756, 0, 0},
    {19921, 20790, 37458, 9663, 19621, 31798, 10267, 10757},
    {8251, 26901, 14752, 9243, 18851, 703, 0, 39309}};
static int g_a2av_late; /* a2av_count returns A2AV_LATE */

static uint64_t a2av_count(uint64_t c, int src, int dst)
{
    if (g_a2av_late)
        return A2AV_LATE[src][dst];
    unsigned k = (unsigned)(src + 2 * dst + (int)c) % 4u;
    return k == 0 || c == 0 ? 0 : (c * k) / 2 + (k == 3);
}

/* Blocks are laid out with gaps, sends in reverse peer order, so the
 * displacements matter; bytes of recvBuf outside every block must stay
 * untouched. */
static void t_alltoallv(const ctx_t *cx, HcclDataType t, uint64_t c0)
{
    case_t c = {"AlltoAllV", cx, t, -1, c0, -1, 0};
    verbose_case(&c);
    int n = cx->n, me = cx->rank;
    size_t es = rc_esize(t);
    uint64_t seed = next_seed();
    uint64_t *sc = xmalloc(sizeof(uint64_t) * (size_t)n), *sd = xmalloc(sizeof(uint64_t) * (size_t)n);
    uint64_t *rcn = xmalloc(sizeof(uint64_t) * (size_t)n), *rd = xmalloc(sizeof(uint64_t) * (size_t)n);
    int *isc = xmalloc(sizeof(int) * (size_t)n), *isd = xmalloc(sizeof(int) * (size_t)n);
    int *irc = xmalloc(sizeof(int) * (size_t)n), *ird = xmalloc(sizeof(int) * (size_t)n);
    uint64_t soff = 1, roff = 2;
    for (int j = n - 1; j >= 0; j--) {
        sc[j] = a2av_count(c0, me, j);
        sd[j] = soff;
        soff += sc[j] + 3;
    }
    for (int i = 0; i < n; i++) {
        rcn[i] = a2av_count(c0, i, me);
        rd[i] = roff;
        roff += rcn[i] + 2;
    }
    for (int k = 0; k < n; k++) {
        isc[k] = (int)(sc[k] * es);
        isd[k] = (int)(sd[k] * es);
        irc[k] = (int)(rcn[k] * es);
        ird[k] = (int)(rd[k] * es);
    }
    size_t sbytes = soff * es, rbytes = roff * es;
    rc_buf_t sb, rb;
    xbuf(&sb, sbytes, es);
    xbuf(&rb, rbytes, es);
    rc_fill_bytes(sb.p, sbytes, me, seed);
    unsigned char *in = xmalloc(sbytes), *exp = xmalloc(rbytes);
    memcpy(in, sb.p, sbytes);
    rc_buf_poison(&rb, 0x66);
    memcpy(exp, rb.p, rbytes);
    MPI_Alltoallv(in, isc, isd, MPI_BYTE, exp, irc, ird, MPI_BYTE, cx->m);
    uint64_t *sc0 = xmalloc(sizeof(uint64_t) * (size_t)n * 4);
    memcpy(sc0, sc, sizeof(uint64_t) * (size_t)n);
    memcpy(sc0 + n, sd, sizeof(uint64_t) * (size_t)n);
    memcpy(sc0 + 2 * n, rcn, sizeof(uint64_t) * (size_t)n);
    memcpy(sc0 + 3 * n, rd, sizeof(uint64_t) * (size_t)n);
    HcclResult r = HcclAlltoAllV(sb.p, sc, sd, t, rb.p, rcn, rd, t, cx->h, NULL);
    if (check_rc(&c, "HcclAlltoAllV", r, HCCL_SUCCESS))
        check_data(&c, "recvBuf (blocks and gaps)", rb.p, exp, roff, t);
    check_bytes(&c, "sendBuf changed", sb.p, in, sbytes);
    g_checks++;
    if (memcmp(sc0, sc, sizeof(uint64_t) * (size_t)n) ||
        memcmp(sc0 + n, sd, sizeof(uint64_t) * (size_t)n) ||
        memcmp(sc0 + 2 * n, rcn, sizeof(uint64_t) * (size_t)n) ||
        memcmp(sc0 + 3 * n, rd, sizeof(uint64_t) * (size_t)n))
        fail(&c, "count or displacement arrays changed");
    check_guards(&c, "sendBuf", &sb);
    check_guards(&c, "recvBuf", &rb);
    rc_buf_free(&sb);
    rc_buf_free(&rb);
    free(in);
    free(exp);
    free(sc);
    free(sd);
    free(rcn);
    free(rd);
    free(isc);
    free(isd);
    free(irc);
    free(ird);
    free(sc0);
}

/* ---------------------------------------------------- point to point */

/* Everyone sends to the right, then receives from the left, inside a
 * group: posted in that order without a group this deadlocks for messages
 * above the eager limit. With n == 1, a rank sends to itself. nmsg > 1
 * sends several messages to the same peer: they must match in order. */
static void t_ring_group(const ctx_t *cx, HcclDataType t, uint64_t count, int nmsg)
{
    case_t c = {nmsg > 1 ? "Send/Recv ring x2 (group)" : "Send/Recv ring (group)", cx, t, -1,
                count, -1, 0};
    verbose_case(&c);
    int n = cx->n, me = cx->rank;
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    size_t es = rc_esize(t);
    uint64_t seed = next_seed();
    rc_buf_t sb[2], rb[2];
    unsigned char *exp[2], *in[2];
    uint64_t cnt[2] = {count, count / 2 + 1};
    for (int k = 0; k < nmsg; k++) {
        size_t bytes = cnt[k] * es;
        xbuf(&sb[k], bytes, es);
        xbuf(&rb[k], bytes, es);
        in[k] = xmalloc(bytes);
        exp[k] = xmalloc(bytes);
        rc_fill_bytes(in[k], bytes, me * 2 + k, seed);
        rc_fill_bytes(exp[k], bytes, left * 2 + k, seed);
        memcpy(sb[k].p, in[k], bytes);
        rc_buf_poison(&rb[k], (unsigned char)(0x70 + k));
    }
    HcclResult r = HcclGroupStart(), r2;
    check_rc(&c, "HcclGroupStart", r, HCCL_SUCCESS);
    for (int k = 0; k < nmsg; k++) {
        r = HcclSend(sb[k].p, cnt[k], t, (uint32_t)right, cx->h, NULL);
        check_rc(&c, "HcclSend (in group)", r, HCCL_SUCCESS);
    }
    for (int k = 0; k < nmsg; k++) {
        r = HcclRecv(rb[k].p, cnt[k], t, (uint32_t)left, cx->h, NULL);
        check_rc(&c, "HcclRecv (in group)", r, HCCL_SUCCESS);
    }
    r2 = HcclGroupEnd();
    if (check_rc(&c, "HcclGroupEnd", r2, HCCL_SUCCESS))
        for (int k = 0; k < nmsg; k++)
            check_data(&c, k ? "second message" : "first message", rb[k].p, exp[k], cnt[k], t);
    for (int k = 0; k < nmsg; k++) {
        check_bytes(&c, "sendBuf changed", sb[k].p, in[k], cnt[k] * es);
        check_guards(&c, "sendBuf", &sb[k]);
        check_guards(&c, "recvBuf", &rb[k]);
        rc_buf_free(&sb[k]);
        rc_buf_free(&rb[k]);
        free(in[k]);
        free(exp[k]);
    }
}

/* Pairs (0,1), (2,3), ...: grouped (recv posted first on both sides) and
 * blocking without a group (even sends first, odd receives first). The
 * last rank of an odd-sized communicator sits out. */
static void t_pairs(const ctx_t *cx, HcclDataType t, uint64_t count, int grouped)
{
    case_t c = {grouped ? "Send/Recv pairs (group)" : "Send/Recv pairs (blocking)", cx, t, -1,
                count, -1, 0};
    verbose_case(&c);
    int me = cx->rank, peer = me ^ 1;
    uint64_t seed = next_seed();
    if (peer >= cx->n)
        return;
    size_t es = rc_esize(t), bytes = count * es;
    rc_buf_t sb, rb;
    xbuf(&sb, bytes, es);
    xbuf(&rb, bytes, es);
    unsigned char *in = xmalloc(bytes), *exp = xmalloc(bytes);
    rc_fill_bytes(in, bytes, me, seed);
    rc_fill_bytes(exp, bytes, peer, seed);
    memcpy(sb.p, in, bytes);
    rc_buf_poison(&rb, 0x99);
    HcclResult rs, rr, rg = HCCL_SUCCESS;
    if (grouped) {
        check_rc(&c, "HcclGroupStart", HcclGroupStart(), HCCL_SUCCESS);
        rr = HcclRecv(rb.p, count, t, (uint32_t)peer, cx->h, NULL);
        rs = HcclSend(sb.p, count, t, (uint32_t)peer, cx->h, NULL);
        rg = HcclGroupEnd();
    } else if (me % 2 == 0) {
        rs = HcclSend(sb.p, count, t, (uint32_t)peer, cx->h, NULL);
        rr = HcclRecv(rb.p, count, t, (uint32_t)peer, cx->h, NULL);
    } else {
        rr = HcclRecv(rb.p, count, t, (uint32_t)peer, cx->h, NULL);
        rs = HcclSend(sb.p, count, t, (uint32_t)peer, cx->h, NULL);
    }
    int ok = check_rc(&c, "HcclSend", rs, HCCL_SUCCESS);
    ok &= check_rc(&c, "HcclRecv", rr, HCCL_SUCCESS);
    ok &= check_rc(&c, "HcclGroupEnd", rg, HCCL_SUCCESS);
    if (ok)
        check_data(&c, "recvBuf", rb.p, exp, count, t);
    check_bytes(&c, "sendBuf changed", sb.p, in, bytes);
    check_guards(&c, "sendBuf", &sb);
    check_guards(&c, "recvBuf", &rb);
    rc_buf_free(&sb);
    rc_buf_free(&rb);
    free(in);
    free(exp);
}

/* Everyone sends a distinct block to every rank (itself included) with
 * grouped Send/Recv: 2n operations posted together. */
static void t_p2p_all(const ctx_t *cx, HcclDataType t, uint64_t count)
{
    case_t c = {"Send/Recv all-pairs (group)", cx, t, -1, count, -1, 0};
    verbose_case(&c);
    int n = cx->n, me = cx->rank;
    size_t es = rc_esize(t), bytes = count * es, total = bytes * (size_t)n;
    uint64_t seed = next_seed();
    rc_buf_t sb, rb;
    xbuf(&sb, total, es);
    xbuf(&rb, total, es);
    unsigned char *in = xmalloc(total), *exp = xmalloc(total);
    rc_fill_bytes(in, total, me, seed);
    memcpy(sb.p, in, total);
    for (int i = 0; i < n; i++) { /* block me of rank i's send buffer */
        unsigned char *tmp = xmalloc(total);
        rc_fill_bytes(tmp, total, i, seed);
        memcpy(exp + (size_t)i * bytes, tmp + (size_t)me * bytes, bytes);
        free(tmp);
    }
    rc_buf_poison(&rb, 0xab);
    int ok = check_rc(&c, "HcclGroupStart", HcclGroupStart(), HCCL_SUCCESS);
    for (int k = 0; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        ok &= check_rc(&c, "HcclSend", HcclSend(sb.p + (size_t)to * bytes, count, t,
                                                (uint32_t)to, cx->h, NULL), HCCL_SUCCESS);
        ok &= check_rc(&c, "HcclRecv", HcclRecv(rb.p + (size_t)from * bytes, count, t,
                                                (uint32_t)from, cx->h, NULL), HCCL_SUCCESS);
    }
    ok &= check_rc(&c, "HcclGroupEnd", HcclGroupEnd(), HCCL_SUCCESS);
    if (ok)
        check_data(&c, "recvBuf", rb.p, exp, count * (size_t)n, t);
    check_bytes(&c, "sendBuf changed", sb.p, in, total);
    check_guards(&c, "sendBuf", &sb);
    check_guards(&c, "recvBuf", &rb);
    rc_buf_free(&sb);
    rc_buf_free(&rb);
    free(in);
    free(exp);
}

/* Nobody leaves HcclBarrier before the last rank enters it: rank 0 enters
 * 0.3 s late, everyone must have waited at least 0.25 s. */
static void t_barrier(const ctx_t *cx)
{
    case_t c = {"Barrier", cx, NOTYPE, -1, 0, -1, 0};
    verbose_case(&c);
    for (int k = 0; k < 3; k++)
        check_rc(&c, "HcclBarrier", HcclBarrier(cx->h, NULL), HCCL_SUCCESS);
    if (cx->n < 2)
        return;
    MPI_Barrier(cx->m);
    double t0 = MPI_Wtime();
    if (cx->rank == 0)
        usleep(300000);
    HcclResult r = HcclBarrier(cx->h, NULL);
    double dt = MPI_Wtime() - t0;
    check_rc(&c, "HcclBarrier", r, HCCL_SUCCESS);
    CHECK(&c, dt >= 0.25, "left the barrier after %.3f s, before rank 0 entered (0.3 s)", dt);
}

/* ----------------------------------------------------------- matrix */

static int pick_root(const ctx_t *cx, int k)
{
    int roots[3] = {0, cx->n - 1, cx->n / 2};
    return roots[k % 3];
}

static const uint64_t *counts(int *nc)
{
    *nc = g_quick ? NCOUNTS_Q : NCOUNTS;
    return g_quick ? COUNTS_Q : COUNTS;
}

static double phase_t0;
static void phase_begin(void)
{
    phase_t0 = MPI_Wtime();
}
static void phase_end(const ctx_t *cx, const char *phase)
{
    phase_hash_check(cx, phase);
    if (g_rank == 0) {
        printf("[%s] %-28s %6.2f s\n", cx->name, phase, MPI_Wtime() - phase_t0);
        fflush(stdout);
    }
}

/* A reducing collective's case: (type, op, count, in place). */
typedef void (*red_case_t)(const ctx_t *cx, HcclDataType t, HcclReduceOp op, uint64_t count,
                           int inplace);

/* Every type and op, every count, in place and not; a refused pair (FP8,
 * AVG on integers, INT128 PROD) once: the code, buffers untouched (each
 * logs an error). */
static void each_reduction(const ctx_t *cx, red_case_t f)
{
    int nc;
    const uint64_t *cs = counts(&nc);
    for (int ti = 0; ti < NTYPES; ti++)
        for (int oi = 0; oi < NOPS; oi++) {
            HcclDataType t = ALL_TYPES[ti];
            HcclReduceOp op = ALL_OPS[oi];
            if (rc_reduce_expected(t, op) != HCCL_SUCCESS) {
                f(cx, t, op, 7, (ti + oi) & 1);
                continue;
            }
            for (int ci = 0; ci < nc; ci++)
                for (int ip = 0; ip < 2; ip++)
                    f(cx, t, op, cs[ci], ip);
        }
}

static void t_reducescatterv_plain(const ctx_t *cx, HcclDataType t, HcclReduceOp op,
                                   uint64_t count, int inplace)
{
    t_reducescatterv(cx, t, op, count, inplace, 0, 0);
}

static void reducing_matrix(const ctx_t *cx)
{
    int nc;
    const uint64_t *cs = counts(&nc);
    int k = 0;

    phase_begin();
    each_reduction(cx, t_allreduce);
    /* one element; 57 B (past the flag's line); 568 and 569 B (the largest
     * tiny message, coll/shm_util.h HC_SHM_TINY_MAX, and one byte more) */
    t_repeat(cx, 'A', HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 1, 0);
    t_repeat(cx, 'A', HCCL_DATA_TYPE_INT8, HCCL_REDUCE_MAX, 57, 1);
    t_repeat(cx, 'A', HCCL_DATA_TYPE_FP16, HCCL_REDUCE_AVG, 13, 0);
    t_repeat(cx, 'A', HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, 142, 1);
    t_repeat(cx, 'A', HCCL_DATA_TYPE_UINT8, HCCL_REDUCE_MIN, 569, 0);
    t_repeat(cx, 'A', HCCL_DATA_TYPE_FP64, HCCL_REDUCE_PROD, 7, 1);
    phase_end(cx, "AllReduce");

    phase_begin();
    for (int ti = 0; ti < NTYPES; ti++)
        for (int oi = 0; oi < NOPS; oi++) {
            HcclDataType t = ALL_TYPES[ti];
            HcclReduceOp op = ALL_OPS[oi];
            if (rc_reduce_expected(t, op) != HCCL_SUCCESS) {
                t_reduce(cx, t, op, 7, pick_root(cx, k++), 0);
                continue;
            }
            for (int ci = 0; ci < nc; ci++)
                for (int ip = 0; ip < 2; ip++)
                    t_reduce(cx, t, op, cs[ci], pick_root(cx, k++), ip);
        }
    /* every root, one type and op */
    for (int root = 0; root < cx->n; root++)
        t_reduce(cx, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, 257, root, root & 1);
    phase_end(cx, "Reduce");

    phase_begin();
    each_reduction(cx, t_reducescatter);
    /* the staged blocks (one at 2 ranks out of place, n otherwise) around
     * the tiny slot's 568 bytes */
    t_repeat(cx, 'r', HCCL_DATA_TYPE_FP32, HCCL_REDUCE_AVG, 1, 0);
    t_repeat(cx, 'r', HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM, 284, 1);
    t_repeat(cx, 'r', HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM, 569, 0);
    phase_end(cx, "ReduceScatter");

    phase_begin();
    each_reduction(cx, t_reducescatterv_plain);
    /* on a stream; after plain ReduceScatters of this rank's count */
    for (int ip = 0; ip < 2; ip++) {
        t_reducescatterv(cx, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 1031, ip, 1, 0);
        t_reducescatterv(cx, HCCL_DATA_TYPE_INT16, HCCL_REDUCE_MAX, 61, ip, 1, 0);
        t_reducescatterv(cx, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, 0, ip, 0, 5);
        t_reducescatterv(cx, HCCL_DATA_TYPE_FP16, HCCL_REDUCE_AVG, 0, ip, 0, 1031);
    }
    phase_end(cx, "ReduceScatterV");
}

static void moving_matrix(const ctx_t *cx)
{
    int nc;
    const uint64_t *cs = counts(&nc);
    int k = 0;

    phase_begin();
    for (int ti = 0; ti < NTYPES; ti++)
        for (int ci = 0; ci < nc; ci++)
            for (int ri = 0; ri < (g_quick ? 1 : 3); ri++)
                t_broadcast(cx, ALL_TYPES[ti], cs[ci], g_quick ? pick_root(cx, k++) : pick_root(cx, ri));
    for (int root = 0; root < cx->n; root++)
        t_broadcast(cx, HCCL_DATA_TYPE_FP32, 1031, root);
    /* 1 B; 56 B (the flag's line); 57 B; 504 and 505 B (the largest ring
     * message, coll/shm_util.h HC_SHM_RING_MAX, and one byte more) */
    static const uint64_t rep_counts[] = {1, 56, 57, 504, 505};
    for (int ci = 0; ci < (int)(sizeof rep_counts / sizeof rep_counts[0]); ci++)
        t_broadcast_repeat(cx, HCCL_DATA_TYPE_INT8, rep_counts[ci], ci % 2 ? cx->n - 1 : 0);
    t_broadcast_repeat(cx, HCCL_DATA_TYPE_FP64, 63, cx->n / 2);
    phase_end(cx, "Broadcast");

    phase_begin();
    for (int ti = 0; ti < NTYPES; ti++)
        for (int ci = 0; ci < nc; ci++)
            for (int ip = 0; ip < 2; ip++)
                t_allgather(cx, ALL_TYPES[ti], cs[ci], ip);
    t_repeat(cx, 'g', HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM, 1, 0);
    t_repeat(cx, 'g', HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 29, 1);
    t_repeat(cx, 'g', HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM, 568, 0);
    t_repeat(cx, 'g', HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM, 569, 1);
    phase_end(cx, "AllGather");

    phase_begin();
    for (int ti = 0; ti < NTYPES; ti++)
        for (int ci = 0; ci < nc; ci++)
            for (int ip = 0; ip < 2; ip++)
                t_scatter(cx, ALL_TYPES[ti], cs[ci], pick_root(cx, k++), ip);
    for (int root = 0; root < cx->n; root++)
        t_scatter(cx, HCCL_DATA_TYPE_INT16, 61, root, root & 1);
    phase_end(cx, "Scatter");

    phase_begin();
    for (int ti = 0; ti < NTYPES; ti++)
        for (int ci = 0; ci < nc; ci++)
            t_alltoall(cx, ALL_TYPES[ti], cs[ci]);
    t_repeat(cx, 'a', HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, 1, 0);
    t_repeat(cx, 'a', HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM, 13, 0);
    t_repeat(cx, 'a', HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM, 568, 0);
    phase_end(cx, "AlltoAll");

    phase_begin();
    for (int ti = 0; ti < NTYPES; ti++)
        for (int ci = 0; ci < nc; ci++)
            t_alltoallv(cx, ALL_TYPES[ti], cs[ci]);
    if (cx->n == 8) {
        g_a2av_late = 1;
        t_alltoallv(cx, HCCL_DATA_TYPE_UINT8, 0);
        g_a2av_late = 0;
    }
    phase_end(cx, "AlltoAllV");

    phase_begin();
    for (int ti = 0; ti < NTYPES; ti++)
        for (int ci = 0; ci < nc; ci++) {
            t_ring_group(cx, ALL_TYPES[ti], cs[ci], 1);
            t_pairs(cx, ALL_TYPES[ti], cs[ci], ci & 1);
        }
    t_ring_group(cx, HCCL_DATA_TYPE_INT32, 1031, 2);
    t_ring_group(cx, HCCL_DATA_TYPE_FP8E5M2, 13, 2);
    t_p2p_all(cx, HCCL_DATA_TYPE_INT8, 0);
    t_p2p_all(cx, HCCL_DATA_TYPE_FP16, 61);
    t_p2p_all(cx, HCCL_DATA_TYPE_INT128, 257);
    t_pairs(cx, HCCL_DATA_TYPE_UINT8, 100000, 0);
    t_pairs(cx, HCCL_DATA_TYPE_UINT8, 100000, 1);
    phase_end(cx, "Send/Recv");

    phase_begin();
    t_barrier(cx);
    phase_end(cx, "Barrier");
}

/* Sizes that cross chunk and staging-buffer boundaries; fp32/int32 (and a
 * little fp16/bf16), SUM mostly. Per-rank counts for the gather-like
 * collectives are the big size / n, kept odd. */
static void big_matrix(const ctx_t *cx)
{
    static const HcclDataType bt[] = {HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_INT32,
                                      HCCL_DATA_TYPE_FP16, HCCL_DATA_TYPE_BFP16};
    int n = cx->n;

    phase_begin();
    for (int i = 0; i < 4; i++) {
        t_allreduce(cx, bt[i], HCCL_REDUCE_SUM, BIG1, i & 1);
        t_reduce(cx, bt[i], HCCL_REDUCE_SUM, BIG1, pick_root(cx, i), i & 1);
        t_reducescatter(cx, bt[i], HCCL_REDUCE_SUM, (BIG1 / n) | 1, i & 1);
        t_reducescatterv(cx, bt[i], HCCL_REDUCE_SUM, (BIG1 / n) | 1, i & 1, i == 3, 0);
    }
    t_allreduce(cx, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, BIG1, 0);
    t_allreduce(cx, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MIN, BIG1, 1);
    t_allreduce(cx, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_AVG, BIG1, 0);
    t_broadcast(cx, HCCL_DATA_TYPE_FP32, BIG1, pick_root(cx, 2));
    t_allgather(cx, HCCL_DATA_TYPE_INT32, (BIG1 / n) | 1, 1);
    t_scatter(cx, HCCL_DATA_TYPE_FP32, (BIG1 / n) | 1, pick_root(cx, 1), 0);
    t_alltoall(cx, HCCL_DATA_TYPE_FP32, (BIG1 / n) | 1);
    t_alltoallv(cx, HCCL_DATA_TYPE_INT32, (BIG1 / n) | 1);
    phase_end(cx, "big 65539");

    phase_begin();
    t_allreduce(cx, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, BIG2, 0);
    t_allreduce(cx, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, BIG2, 1);
    t_reduce(cx, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, BIG2, pick_root(cx, 2), 0);
    t_reducescatter(cx, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, (BIG2 / n) | 1, 0);
    t_reducescatterv(cx, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, (BIG2 / n) | 1, 0, 0, 0);
    t_reducescatterv(cx, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MAX, (BIG2 / n) | 1, 1, 0, 0);
    t_broadcast(cx, HCCL_DATA_TYPE_INT32, BIG2, pick_root(cx, 1));
    t_allgather(cx, HCCL_DATA_TYPE_FP32, (BIG2 / n) | 1, 0);
    t_scatter(cx, HCCL_DATA_TYPE_INT32, (BIG2 / n) | 1, 0, 1);
    t_alltoall(cx, HCCL_DATA_TYPE_INT32, (BIG2 / n) | 1);
    /* everyone sends right, then receives left, 4 MB messages, in a group */
    t_ring_group(cx, HCCL_DATA_TYPE_FP32, BIG2, 1);
    t_ring_group(cx, HCCL_DATA_TYPE_INT8, BIG2, 2);
    t_pairs(cx, HCCL_DATA_TYPE_FP32, BIG2, 0);
    phase_end(cx, "big 1048577");

    if (n == 2) { /* the one shape it applies to; seconds elsewhere */
        phase_begin();
        t_allreduce(cx, HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM, BIG3, 0);
        t_allreduce(cx, HCCL_DATA_TYPE_INT8, HCCL_REDUCE_MAX, BIG3, 1);
        phase_end(cx, "big 16777219");
    }
}

/* On 2 ranks a reduction is one commutative step, so it has exactly one
 * right answer even when it must round: check FP16/BFP16 round-to-nearest-
 * even per step (and subnormal fp16 results) and IEEE rounding of fp32/fp64
 * with arbitrary inputs (rc_set_inexact). */
static void inexact_matrix(const ctx_t *cx)
{
    static const HcclDataType ft[] = {HCCL_DATA_TYPE_FP16, HCCL_DATA_TYPE_BFP16,
                                      HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_FP64};
    static const HcclReduceOp fo[] = {HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_AVG};
    static const uint64_t fc[] = {1, 7, 61, 1031, BIG1};
    int k = 0;
    if (cx->n != 2)
        return;
    rc_set_inexact(1);
    phase_begin();
    for (int ti = 0; ti < 4; ti++)
        for (int oi = 0; oi < 3; oi++)
            for (int ci = 0; ci < 5; ci++) {
                if (fc[ci] == BIG1 && g_nobig)
                    continue;
                t_allreduce(cx, ft[ti], fo[oi], fc[ci], k & 1);
                t_reduce(cx, ft[ti], fo[oi], fc[ci], k % 2, (k >> 1) & 1);
                t_reducescatter(cx, ft[ti], fo[oi], fc[ci], (k >> 2) & 1);
                k++;
            }
    rc_set_inexact(0);
    phase_end(cx, "inexact floats (2 ranks)");
}

/* Communicators created and destroyed in a loop, each used once, with a
 * long-lived one in use in between. */
static void comm_churn(const ctx_t *w)
{
    case_t c = {"comm churn", w, NOTYPE, -1, 0, -1, 0};
    phase_begin();
    for (int it = 0; it < 20; it++) {
        ctx_t t = {NULL, w->m, w->rank, w->n, "churn", 0};
        if (!check_rc(&c, "HcclCommInitMpi (churn)", HcclCommInitMpi(w->m, &t.h), HCCL_SUCCESS))
            break;
        t_allreduce(&t, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, it % 2 ? 61 : 1031, it & 1);
        t_allreduce(w, HCCL_DATA_TYPE_INT16, HCCL_REDUCE_MIN, 13, 0);
        if (it % 4 == 0)
            t_alltoall(&t, HCCL_DATA_TYPE_INT8, 7);
        check_rc(&c, "HcclCommDestroy (churn)", HcclCommDestroy(t.h), HCCL_SUCCESS);
    }
    phase_end(w, "comm churn x20");
}

/* ------------------------------------------------ comm queries */

static void t_queries(const ctx_t *cx)
{
    case_t c = {"queries", cx, NOTYPE, -1, 0, -1, 0};
    uint32_t size = 0xdead, id = 0xdead;
    if (check_rc(&c, "HcclGetRankSize", HcclGetRankSize(cx->h, &size), HCCL_SUCCESS))
        CHECK(&c, size == (uint32_t)cx->n, "HcclGetRankSize = %u, MPI size %d", size, cx->n);
    if (check_rc(&c, "HcclGetRankId", HcclGetRankId(cx->h, &id), HCCL_SUCCESS))
        CHECK(&c, id == (uint32_t)cx->rank, "HcclGetRankId = %u, MPI rank %d", id, cx->rank);
    char name[256], root_name[128];
    memset(name, 0x7e, sizeof name);
    if (check_rc(&c, "HcclGetCommName", HcclGetCommName(cx->h, name), HCCL_SUCCESS)) {
        CHECK(&c, memchr(name, 0, 128) != NULL, "comm name not NUL-terminated within 128 bytes");
        name[127] = 0;
        CHECK(&c, name[0] != 0, "empty comm name");
        CHECK(&c, (unsigned char)name[128] == 0x7e, "HcclGetCommName wrote past 128 bytes");
    } else {
        name[0] = 0;
    }
    memcpy(root_name, name, 128);
    MPI_Bcast(root_name, 128, MPI_CHAR, 0, cx->m);
    CHECK(&c, strcmp(root_name, name) == 0, "comm name '%s' differs from rank 0's '%s'", name,
          root_name);
}

static void get_name(HcclComm h, char *name)
{
    memset(name, 0, 128);
    if (HcclGetCommName(h, name) != HCCL_SUCCESS)
        name[0] = 0;
    name[127] = 0;
}

/* ---------------------------------------------- several communicators */

/* Operations on three communicators interleaved with MPI calls: world
 * AllReduce, half AllReduce, dup Broadcast, MPI_Allreduce, half AllGather,
 * world ReduceScatter, dup Send/Recv. */
static void interleaved(const ctx_t *w, const ctx_t *h, const ctx_t *d)
{
    case_t c = {"interleaved", w, NOTYPE, -1, 0, -1, 0};
    char nw[128], nh[128], nd[128];
    get_name(w->h, nw);
    get_name(h->h, nh);
    get_name(d->h, nd);
    CHECK(&c, strcmp(nw, nh) && strcmp(nw, nd) && strcmp(nh, nd),
          "communicator names not distinct: world '%s' half '%s' dup '%s'", nw, nh, nd);
    phase_begin();
    for (int it = 0; it < 6; it++) {
        uint64_t cnt = it % 2 ? 1031 : 13;
        t_allreduce(w, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, cnt, it & 1);
        t_allreduce(h, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, cnt, 0);
        t_broadcast(d, HCCL_DATA_TYPE_FP16, cnt, it % d->n);
        int x = w->rank + it, y = 0;
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(&c, y == w->n * (w->n - 1) / 2 + w->n * it, "MPI_Allreduce between Hccl calls: %d", y);
        t_allgather(h, HCCL_DATA_TYPE_BFP16, cnt, 0);
        t_reducescatter(w, HCCL_DATA_TYPE_FP64, HCCL_REDUCE_MAX, cnt, 1);
        MPI_Barrier(h->m);
        t_ring_group(d, HCCL_DATA_TYPE_INT64, cnt, 1);
        t_reduce(h, HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_MIN, cnt, it % h->n, 0);
        t_alltoall(d, HCCL_DATA_TYPE_UINT8, cnt);
        check_rc(&c, "HcclBarrier(half)", HcclBarrier(h->h, NULL), HCCL_SUCCESS);
    }
    phase_hash_check(h, "interleaved 3 comms");
    phase_hash_check(d, "interleaved 3 comms");
    phase_end(w, "interleaved 3 comms");
}

/* A smaller matrix on a sub-communicator: every collective, a few types. */
static void sub_matrix(const ctx_t *cx)
{
    static const HcclDataType st[] = {HCCL_DATA_TYPE_INT8, HCCL_DATA_TYPE_FP16,
                                      HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_INT128};
    static const uint64_t sc[] = {0, 1, 61, 1031};
    phase_begin();
    for (int ti = 0; ti < 4; ti++)
        for (int ci = 0; ci < 4; ci++) {
            HcclDataType t = st[ti];
            uint64_t n = sc[ci];
            HcclReduceOp op = ALL_OPS[(ti + ci) % 4];
            if (rc_reduce_expected(t, op) != HCCL_SUCCESS)
                op = HCCL_REDUCE_MAX;
            t_allreduce(cx, t, op, n, ci & 1);
            t_reduce(cx, t, op, n, pick_root(cx, ci), ci & 1);
            t_reducescatter(cx, t, op, n, ci & 1);
            t_reducescatterv(cx, t, op, n, ci & 1, ti == 1, 0);
            t_broadcast(cx, t, n, pick_root(cx, ci + 1));
            t_allgather(cx, t, n, ci & 1);
            t_scatter(cx, t, n, pick_root(cx, ci + 2), ci & 1);
            t_alltoall(cx, t, n);
            t_alltoallv(cx, t, n);
            t_ring_group(cx, t, n, 1);
        }
    t_barrier(cx);
    phase_end(cx, "all collectives");
}

/* --------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_n);
    int opt;
    while ((opt = getopt(argc, argv, "qBALs:v")) != -1) {
        switch (opt) {
        case 'q': g_quick = 1; break;
        case 'L': g_localref = 1; break;
        case 'A': g_reg = 1; break;
        case 'B': g_nobig = 1; break;
        case 's': g_seed = strtoull(optarg, NULL, 0); break;
        case 'v': g_verbose = 1; break;
        default:
            if (g_rank == 0)
                fprintf(stderr, "usage: test_coll [-q] [-B] [-A] [-L] [-s SEED] [-v]\n");
            MPI_Finalize();
            return 2;
        }
    }
    double t_start = MPI_Wtime();
    if (g_rank == 0) {
        printf("test_coll: %d ranks, seed %" PRIu64 "%s%s%s\n", g_n, g_seed,
               g_quick ? ", quick" : "", g_nobig ? ", no big sizes" : "",
               g_reg ? ", registered buffers" : "");
        fflush(stdout);
    }

    ctx_t w = {NULL, MPI_COMM_WORLD, g_rank, g_n, "world", 0};
    case_t c0 = {"HcclCommInitMpi", &w, NOTYPE, -1, 0, -1, 0};
    HcclResult r = HcclCommInitMpi(MPI_COMM_WORLD, &w.h);
    int ok = check_rc(&c0, "HcclCommInitMpi(MPI_COMM_WORLD)", r, HCCL_SUCCESS), all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (g_rank == 0)
            printf("test_coll: HcclCommInitMpi failed; nothing else tested\n"
                   "test_coll: 1 checks, 1 failures\n");
        MPI_Finalize();
        return 1;
    }

    void *wreg = NULL, *dreg = NULL, *dreg2 = NULL;
    if (g_reg) {
        r = HcclMemAlloc((void **)&g_pool, POOL_BYTES);
        check_rc(&c0, "HcclMemAlloc(pool)", r, HCCL_SUCCESS);
        if (r == HCCL_SUCCESS) {
            check_rc(&c0, "HcclCommRegister(world, pool)",
                     HcclCommRegister(w.h, g_pool, POOL_BYTES, &wreg, 0), HCCL_SUCCESS);
            rc_buf_pool(g_pool, POOL_BYTES);
        }
    }
    t_queries(&w);
    check_rc(&c0, "HcclStreamCreate", HcclStreamCreate(&g_stream), HCCL_SUCCESS);
    reducing_matrix(&w);
    moving_matrix(&w);
    if (!g_nobig)
        big_matrix(&w);
    inexact_matrix(&w);

    /* Second and third communicators, alive at the same time as world. */
    MPI_Comm half_m, dup_m;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_n - g_rank, &half_m); /* reversed order */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup_m);
    ctx_t h = {NULL, half_m, 0, 0, "half", 0}, d = {NULL, dup_m, g_rank, g_n, "dup", 0};
    MPI_Comm_rank(half_m, &h.rank);
    MPI_Comm_size(half_m, &h.n);
    r = HcclCommInitMpi(half_m, &h.h);
    ok = check_rc(&c0, "HcclCommInitMpi(split half)", r, HCCL_SUCCESS);
    /* the dup comes from a config: a name, and a 1 MB staging buffer (so
     * its sub-matrix runs with a small buffer while world has the default) */
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    snprintf(cfg.hcclCommName, sizeof cfg.hcclCommName, "test_coll_dup_%d", g_n);
    cfg.hcclBufferSize = 1;
    r = HcclCommInitMpiConfig(dup_m, &cfg, &d.h);
    ok &= check_rc(&c0, "HcclCommInitMpiConfig(dup)", r, HCCL_SUCCESS);
    if (r == HCCL_SUCCESS && g_pool) {
        ok &= check_rc(&c0, "HcclCommRegister(dup, pool head)",
                       HcclCommRegister(d.h, g_pool, POOL_SPLIT, &dreg, 0), HCCL_SUCCESS);
        ok &= check_rc(&c0, "HcclCommRegister(dup, pool tail)",
                       HcclCommRegister(d.h, g_pool + POOL_SPLIT, POOL_BYTES - POOL_SPLIT, &dreg2, 0),
                       HCCL_SUCCESS);
    }
    if (r == HCCL_SUCCESS) {
        char nm[128];
        get_name(d.h, nm);
        CHECK(&c0, strcmp(nm, cfg.hcclCommName) == 0,
              "HcclGetCommName of the configured communicator = '%s', expected '%s'", nm,
              cfg.hcclCommName);
    }
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all_ok) {
        t_queries(&h);
        t_queries(&d);
        interleaved(&w, &h, &d);
        sub_matrix(&h);
        sub_matrix(&d);
        check_rc(&c0, "HcclCommDestroy(half)", HcclCommDestroy(h.h), HCCL_SUCCESS);
        /* world and dup still work after another communicator is gone */
        t_allreduce(&w, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 61, 0);
        t_allreduce(&d, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_MAX, 61, 1);
        /* dup's registration goes with it (HcclCommDestroy) */
        check_rc(&c0, "HcclCommDestroy(dup)", HcclCommDestroy(d.h), HCCL_SUCCESS);
    }
    comm_churn(&w);
    t_allreduce(&w, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, 1031, 0);
    if (wreg) {
        check_rc(&c0, "HcclCommDeregister(world, pool)", HcclCommDeregister(w.h, wreg),
                 HCCL_SUCCESS);
        /* no registration left: buffers in the pool take the plain path */
        t_allreduce(&w, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 65536 + 3, 0);
        t_allreduce(&w, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 65536 + 3, 1);
    }
    check_rc(&c0, "HcclCommDestroy(world)", HcclCommDestroy(w.h), HCCL_SUCCESS);
    if (g_pool) {
        rc_buf_pool(NULL, 0);
        check_rc(&c0, "HcclMemFree(pool)", HcclMemFree(g_pool), HCCL_SUCCESS);
    }
    MPI_Comm_free(&half_m);
    MPI_Comm_free(&dup_m);
    check_rc(&c0, "HcclStreamDestroy", HcclStreamDestroy(g_stream), HCCL_SUCCESS);

    long loc[2] = {g_checks, g_fails}, tot[2];
    MPI_Allreduce(loc, tot, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0) {
        printf("test_coll: %.1f s\n", MPI_Wtime() - t_start);
        printf("test_coll: %ld checks, %ld failures\n", tot[0], tot[1]);
        fflush(stdout);
    }
    MPI_Finalize();
    return tot[1] ? 1 : 0;
}
