/*
 * test/mpi/test_soak.c - random sequences of collectives (public API only),
 * every result checked bit for bit.
 *
 * test_coll walks a fixed matrix, one call at a time. Training loops do
 * something else: the same call many times in a row, then another size or
 * another communicator, blocking calls beside stream operations still in
 * flight, MPI calls in between. The caches that make that fast (the
 * previous operation's schedule, the inline tiny call of src/comm/fastlane.h,
 * the staging epochs that communicators share, the begin turns of streams)
 * must never hand one call another call's state. This program draws such
 * sequences from a seed that every rank shares:
 *
 *  - batches of 1-5 operations; each operation blocking or on one of two
 *    streams (priorities 0 and 1); both streams synchronized at the end of
 *    a batch, then every operation of the batch checked;
 *  - on one of three communicators: the world, a split into two halves
 *    (even and odd ranks, reversed key order) and a split of the world
 *    with every rank in it and a permuted key order; now and then (one
 *    batch in 40) a split is destroyed and made again, and the next
 *    operations may repeat the last one on the new communicator;
 *  - AllReduce, Broadcast, Reduce, ReduceScatter, AllGather, Scatter,
 *    AlltoAll, AlltoAllV, a ring shift of Send/Recv in a group,
 *    HcclAllReduceMulti, AllReduces of several tensors in a group, Barrier;
 *    any data type the call accepts, any op
 *    that the type supports; in place where the API allows it;
 *  - counts: a third of the operations repeat the previous one (same
 *    collective, communicator, type, op, count, root, in-place, the same
 *    buffers when it is blocking) with new data, a third of those with one
 *    thing changed (root, in place or not, another type of the same size,
 *    another op, one element more); the others take 0 elements, a few
 *    bytes (the tiny paths), up to 16 KiB, up to 1 MiB, or up to -m.
 *
 * References: reductions from refcheck.c (MPI or a local reduction over
 * MPI_Allgather'd inputs; inputs exact in any order), computed before the
 * operation is posted, while earlier operations of the batch may still be
 * in flight on the streams; data-moving collectives from each rank's input
 * regenerated locally (rc_fill_bytes is a pure function of seed and rank).
 * Receive buffers start poisoned; bytes the call must not write (the gaps
 * of AlltoAllV and AllReduceMulti) must keep the poison; send buffers of
 * out-of-place calls must be unchanged; guard zones around every buffer
 * must stay intact.
 *
 * Usage: test_soak [-n OPS] [-s SEED] [-m MAXBYTES] [-A | -T | -F HOW -D DIR]
 *                  [-k NAME] [-o NO] [-v]
 *   -n  operations (default 600)
 *   -s  seed (default 20261201)
 *   -m  largest message in bytes (default 4 MiB)
 *   -A  registered buffers: every buffer from one HcclMemAlloc pool of
 *       64 MiB registered with all three communicators (again when a
 *       split is made again, and after HcclCommRemoveMember, which drops
 *       a communicator's registrations), malloc once the pool is full
 *   -T  two threads: one drives the world and the halves, the other the
 *       permuted communicator, each its own sequence (seed, seed + 4096)
 *       with its own two streams, OPS operations each, at the same time
 *       (blocking calls on different communicators from different threads
 *       progress: docs/DESIGN.md); references computed locally, without MPI
 *   -F  members fail, or join, mid-sequence: HOW is a list of up to three
 *       events, kill, kill2, stop or add (kill,add: a failure, later a
 *       newcomer; kill2: two ranks killed at the same operation, which one
 *       HcclCommRemoveMember per communicator drops together),
 *       event k of F near (k + 1) / (F + 1) of OPS (drawn from the seed).
 *       kill / stop: a rank that started, drawn from the seed, kills
 *       itself (SIGKILL) or stops (SIGSTOP) at that operation, with
 *       operations of its batch possibly still in flight on its streams;
 *       at least 2 ranks must survive. add: at the next batch boundary
 *       the members call HcclCommAddMember on the world at a drawn rank;
 *       hcomm spawns a copy of this program (MPI_Comm_spawn), which joins
 *       (HcclCommJoin), receives the sequence's state (an HcclBroadcast:
 *       the generator, the operation count, the members) and goes on with
 *       the others after both splits are made again over the larger world.
 *       In that batch, and in the batches of the RISK_OPS operations
 *       before it (a survivor may still be in them when it learns of the
 *       failure: the failed rank had finished them), the survivors post
 *       every operation and accept, per operation, a right result or
 *       HCCL_E_REMOTE / HCCL_E_TIMEOUT (with the send buffer unchanged and
 *       the guard zones intact; the buffers are freed after the
 *       recovery); a Barrier that the failed rank never entered must not
 *       succeed. A survivor that saw no error on a communicator holding
 *       the failed rank (it may have been ahead of it) waits for the
 *       failure with a world Barrier, which must fail. Then, at once
 *       (survivors come at different times: some learn of the failure
 *       from UCX, some at a deadline), they recover:
 *       HcclCommGetFailedRanks on the world must list a killed rank
 *       (polled up to 15 s) and never a live one (a stopped rank is listed
 *       once another survivor removed it, or not yet);
 *       HcclCommAbort of the world (one run in two), HcclCommRemoveMember
 *       on the world, an AllReduce over the recovered world to agree which
 *       communicators saw an error, then for each split either
 *       HcclCommRemoveMember (where it holds the failed rank) or
 *       HcclCommDestroy and a new split of the smaller world (drawn; a
 *       half without the failed rank is made again if it saw an error
 *       anywhere, else kept or made again). Ranks and sizes after the
 *       recovery are checked against a local model of the splits (and
 *       HcclCommGetFailedRanks: nothing on the recovered world, exactly
 *       the failed rank on a split still holding it), and the
 *       sequence goes on to OPS with every result checked bit for bit.
 *       References are computed locally (no MPI call over a group with
 *       the failed rank). Each survivor writes DIR/result.RANK ("rank=R
 *       checks=C fails=F recovered=1", newcomers R = initial ranks + k and
 *       " newcomer=1"); a failed rank appends its pid to DIR/victim.pid
 *       (test/mpi/soakfail.sh ends it)
 *   -D  the directory of -F's files
 *   -k  run only the operations of this collective (as -v names it), the
 *       others as barriers on their communicator and stream: the sequence
 *       drawn stays the same, so a failure can be narrowed down
 *   -o  run only operation NO, the others as barriers (likewise)
 *   -v  one line per operation (and per communicator made again) on rank 0
 *
 * Output: the first 20 failures per rank with the operation's number and
 * parameters; on rank 0 "test_soak: N operations, M checks, F failures"
 * (summed over ranks). Exit status 0 if no failure, 1 otherwise.
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "refcheck.h"

#define MAX_PRINTED 20
#define NCOMMS 3
#define MAX_BATCH 5
#define MAX_MULTI 6
#define MAX_RANKS 64

enum {
    K_ALLREDUCE, K_BROADCAST, K_REDUCE, K_REDUCESCATTER, K_ALLGATHER, K_SCATTER,
    K_ALLTOALL, K_ALLTOALLV, K_SENDRECV, K_MULTI, K_GROUP, K_BARRIER, NKINDS
};
static const char *const KIND_NAME[NKINDS] = {
    "AllReduce", "Broadcast", "Reduce", "ReduceScatter", "AllGather", "Scatter",
    "AlltoAll", "AlltoAllV", "SendRecv", "AllReduceMulti", "GroupAllReduce", "Barrier",
};
/* relative frequencies: the training loop's calls first */
static const int KIND_WEIGHT[NKINDS] = {8, 4, 2, 3, 3, 2, 3, 2, 2, 2, 2, 1};

static const HcclDataType TYPES[] = {
    HCCL_DATA_TYPE_INT8,   HCCL_DATA_TYPE_INT16,   HCCL_DATA_TYPE_INT32,
    HCCL_DATA_TYPE_INT64,  HCCL_DATA_TYPE_UINT8,   HCCL_DATA_TYPE_UINT16,
    HCCL_DATA_TYPE_UINT32, HCCL_DATA_TYPE_UINT64,  HCCL_DATA_TYPE_FP16,
    HCCL_DATA_TYPE_BFP16,  HCCL_DATA_TYPE_FP32,    HCCL_DATA_TYPE_FP64,
    HCCL_DATA_TYPE_INT128, HCCL_DATA_TYPE_FP8E4M3, HCCL_DATA_TYPE_FP8E5M2,
};
#define NTYPES ((int)(sizeof(TYPES) / sizeof(TYPES[0])))
static const HcclReduceOp OPS[] = {HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_MAX,
                                   HCCL_REDUCE_MIN, HCCL_REDUCE_AVG};
#define NOPS ((int)(sizeof(OPS) / sizeof(OPS[0])))

typedef struct {
    HcclComm h;
    MPI_Comm m; /* the same group (-F: only until the failure) */
    int rank, n;
    int mem[MAX_RANKS]; /* its members' MPI_COMM_WORLD ranks, by rank */
    const char *name;
} ctx_t;

/* One operation: what was drawn, its buffers, what they must hold. */
typedef struct {
    long no; /* position in the sequence */
    int kind, ci, stream, inplace, root, repeat;
    HcclDataType t;
    HcclReduceOp op;
    uint64_t count; /* as the call takes it (per-rank block where it has one) */
    uint64_t seed;
    HcclResult err;           /* what the blocking call returned */
    rc_buf_t sb, rb;          /* sb unused (bytes 0) in place and for Broadcast */
    unsigned char *rexp;      /* rb's expected bytes */
    size_t chk_lo, chk_hi;    /* the range of rb compared with rexp */
    unsigned char *sexp;      /* sb's bytes, which the call must not change */
    /* AlltoAllV and AllReduceMulti arguments */
    uint64_t *sc, *sd, *rc, *rd;
    int nt;
    uint64_t mcount[MAX_MULTI], moff[MAX_MULTI];
    const void *min[MAX_MULTI];
    void *mout[MAX_MULTI];
} op_t;

static ctx_t g_cx[NCOMMS];
static int g_rank, g_n, g_verbose;
static int g_threads = 1; /* -T: 2 */
static int g_only = -1; /* -k: run only this kind (the sequence drawn is the same) */
static int g_reg;       /* -A */
static long g_only_no = -1; /* -o: run only this operation */
static size_t g_max = (size_t)4 << 20;
/* -F: the failures (g_nfail 0: none): how each rank fails, which one, at
 * which operation; the survivors' MPI communicator (for the final sums);
 * the directory for files */
#define MAX_FAILS 3
/* -F: the operations before a failure's batch whose errors are accepted (a
 * survivor may still be in them when another survivor's removal tells it
 * of the failure: the failed rank had finished them) */
#define RISK_OPS 24
enum { F_KILL, F_STOP, F_ADD, F_KILL2 };
/* event k's failed rank(s): g_fvictim2[k] >= 0 for kill2 (two at once) */
static int g_nfail, g_fhow[MAX_FAILS], g_fvictim[MAX_FAILS], g_fvictim2[MAX_FAILS];
static long g_fat[MAX_FAILS];
static const char *g_fspec;
static int g_newcomer; /* this process was spawned by an "add" (-F ...,add) */
static MPI_Comm g_surv = MPI_COMM_NULL;
static const char *g_dir;
/* per sequence (thread): its streams, the communicators it drives, its
 * generator and counts */
static _Thread_local HcclStream g_st[2];
static _Thread_local int g_cis[NCOMMS], g_ncis, g_tid;
static _Thread_local long g_checks, g_fails, g_printed;
static _Thread_local uint64_t g_rng;
/* the last blocking operation's buffers per communicator, which a repeat
 * takes over (the same addresses, as a training loop has) */
static _Thread_local op_t g_keep[NCOMMS];
static _Thread_local int g_have_keep[NCOMMS];

static uint64_t rnd(void)
{
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rnd_below(uint64_t n)
{
    return n ? rnd() % n : 0;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "test_soak: out of memory (%zu bytes)\n", n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static void xbuf(rc_buf_t *b, size_t bytes, size_t es)
{
    if (rc_buf_alloc(b, bytes, es) != 0) {
        fprintf(stderr, "test_soak: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static void describe(const op_t *o, char *out, size_t len)
{
    const ctx_t *cx = &g_cx[o->ci];
    snprintf(out, len,
             "op %ld %s on %s (rank %d of %d) type %s op %s count %" PRIu64
             " root %d inplace %d %s%s",
             o->no, KIND_NAME[o->kind], cx->name, cx->rank, cx->n, rc_type_name(o->t),
             rc_op_name(o->op), o->count, o->root, o->inplace,
             o->stream < 0 ? "blocking" : o->stream ? "stream 1" : "stream 0",
             o->repeat == 1 ? " (repeat)" : o->repeat ? " (near repeat)" : "");
}

static void fail(const op_t *o, const char *what)
{
    g_fails++;
    if (g_printed++ >= MAX_PRINTED)
        return;
    char d[256];
    describe(o, d, sizeof d);
    fprintf(stderr, "test_soak: rank %d%s: FAIL %s: %s\n", g_rank,
            g_threads > 1 ? (g_tid ? " thread 1" : " thread 0") : "", d, what);
}

/* -A: the buffers come from one registered HcclMemAlloc region
 * (rc_buf_pool) */
#define POOL_BYTES ((size_t)64 << 20)
static unsigned char *g_pool;

static void pool_register(int ci)
{
    void *handle;
    HcclResult r = HcclCommRegister(g_cx[ci].h, g_pool, POOL_BYTES, &handle, 0);
    if (r != HCCL_SUCCESS) {
        fprintf(stderr, "test_soak: rank %d: HcclCommRegister(%s): %s\n", g_rank, g_cx[ci].name,
                HcclGetErrorString(r));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* ------------------------------------------------------------ drawing */

static int draw_kind(void)
{
    int total = 0;
    for (int k = 0; k < NKINDS; k++)
        total += KIND_WEIGHT[k];
    int x = (int)rnd_below((uint64_t)total);
    for (int k = 0; k < NKINDS; k++) {
        if (x < KIND_WEIGHT[k])
            return k;
        x -= KIND_WEIGHT[k];
    }
    return K_ALLREDUCE;
}

static int reduces(int kind)
{
    return kind == K_ALLREDUCE || kind == K_REDUCE || kind == K_REDUCESCATTER ||
           kind == K_MULTI || kind == K_GROUP;
}

/* A count of elements of es bytes: 0, tiny, small, medium or large. */
static uint64_t draw_count(size_t es, uint64_t per_rank_div)
{
    uint64_t x = rnd_below(100), bytes;
    if (x < 5)
        return 0;
    if (x < 35)
        bytes = 1 + rnd_below(600);
    else if (x < 70)
        bytes = 1 + rnd_below(16 << 10);
    else if (x < 93)
        bytes = 1 + rnd_below(1 << 20);
    else
        bytes = 1 + rnd_below(g_max);
    bytes /= per_rank_div ? per_rank_div : 1;
    uint64_t c = bytes / es;
    return c ? c : 1;
}

/* A near repeat: one thing other than the previous call (what a cache of
 * the previous operation must tell apart). */
static void vary_one(op_t *o)
{
    o->repeat = 2;
    switch (rnd_below(4)) {
    case 0:
        o->root++;
        break;
    case 1:
        o->inplace = !o->inplace;
        break;
    case 2: /* another type of the same size that the call accepts */
        for (int tries = 0; tries < 32; tries++) {
            HcclDataType t = TYPES[rnd_below(NTYPES)];
            if (t != o->t && rc_esize(t) == rc_esize(o->t) &&
                (!reduces(o->kind) || rc_reduce_expected(t, o->op) == HCCL_SUCCESS)) {
                o->t = t;
                break;
            }
        }
        break;
    default:
        if (reduces(o->kind)) { /* another op */
            for (int tries = 0; tries < 32; tries++) {
                HcclReduceOp op = OPS[rnd_below(NOPS)];
                if (op != o->op && rc_reduce_expected(o->t, op) == HCCL_SUCCESS) {
                    o->op = op;
                    break;
                }
            }
        } else {
            o->count++;
        }
        break;
    }
}

static void draw(op_t *o, const op_t *prev, long no)
{
    memset(o, 0, sizeof *o);
    o->no = no;
    o->seed = rnd();
    o->stream = rnd_below(5) < 2 ? -1 : (int)rnd_below(2);
    if (prev && rnd_below(3) == 0) {
        o->repeat = 1;
        o->kind = prev->kind;
        o->ci = prev->ci;
        o->t = prev->t;
        o->op = prev->op;
        o->count = prev->count;
        o->root = prev->root;
        o->inplace = prev->inplace;
        o->nt = prev->nt;
        memcpy(o->mcount, prev->mcount, sizeof o->mcount);
        if (prev->stream < 0 && o->stream >= 0)
            o->stream = -1; /* a training loop's repeats stay blocking */
        if (rnd_below(3) == 0)
            vary_one(o);
        return;
    }
    o->kind = draw_kind();
    o->ci = g_cis[rnd_below((uint64_t)g_ncis)];
    if (reduces(o->kind)) {
        do {
            o->t = TYPES[rnd_below(NTYPES)];
            o->op = OPS[rnd_below(NOPS)];
        } while (rc_reduce_expected(o->t, o->op) != HCCL_SUCCESS);
    } else {
        o->t = TYPES[rnd_below(NTYPES)];
        o->op = HCCL_REDUCE_SUM;
    }
    const size_t es = rc_esize(o->t);
    /* per-rank blocks: the whole message is about count * n */
    const int blocks = o->kind == K_REDUCESCATTER || o->kind == K_ALLGATHER ||
                       o->kind == K_SCATTER || o->kind == K_ALLTOALL || o->kind == K_ALLTOALLV;
    o->count = draw_count(es, blocks ? (uint64_t)g_n : 1);
    o->root = (int)rnd_below(1u << 16); /* taken modulo the communicator's size */
    o->inplace = (int)rnd_below(3) == 0;
    if (o->kind == K_MULTI || o->kind == K_GROUP) {
        o->nt = 1 + (int)rnd_below(MAX_MULTI);
        for (int i = 0; i < o->nt; i++)
            o->mcount[i] = rnd_below(4) == 0 ? rnd_below(4) : draw_count(es, (uint64_t)o->nt);
    }
}

/* ------------------------------------------------------------ set-up */

/* rb and sb of the sizes wanted: the kept ones for a blocking repeat. */
static void take_bufs(op_t *o, size_t sbytes, size_t rbytes)
{
    const size_t es = rc_esize(o->t);
    if (o->repeat && o->stream < 0 && g_have_keep[o->ci] && g_keep[o->ci].sb.bytes == sbytes &&
        g_keep[o->ci].rb.bytes == rbytes) {
        o->sb = g_keep[o->ci].sb;
        o->rb = g_keep[o->ci].rb;
        g_have_keep[o->ci] = 0;
        return;
    }
    xbuf(&o->sb, sbytes, es);
    xbuf(&o->rb, rbytes, es);
}

/* The reduction of every rank's input, each regenerated here (inputs are
 * exact in any order, refcheck.h): no MPI call, for -T. */
static void local_reduce(const op_t *o, unsigned char *ref, uint64_t count)
{
    const ctx_t *cx = &g_cx[o->ci];
    const HcclReduceOp base = o->op == HCCL_REDUCE_AVG ? HCCL_REDUCE_SUM : o->op;
    unsigned char *in = xmalloc(count * rc_esize(o->t));
    rc_fill_reduce(ref, count, o->t, o->op, 0, cx->n, o->seed);
    for (int q = 1; q < cx->n; q++) {
        rc_fill_reduce(in, count, o->t, o->op, q, cx->n, o->seed);
        rc_reduce_local(ref, in, count, o->t, base);
    }
    if (o->op == HCCL_REDUCE_AVG)
        rc_scale_local(ref, count, o->t, cx->n);
    free(in);
}

static void reduce_ref(op_t *o, const unsigned char *in, unsigned char *ref, uint64_t count)
{
    const ctx_t *cx = &g_cx[o->ci];
    if (g_threads > 1 || g_nfail) {
        local_reduce(o, ref, count);
        return;
    }
    if (rc_reference_reduce(in, ref, count, o->t, o->op, cx->m) != 0) {
        fail(o, "no reference for this type and op");
        memset(ref, 0, count * rc_esize(o->t));
    }
}

/* Fill the buffers and the expectations; returns 0 if there is nothing to
 * call on this rank. Collective over the MPI communicator for reductions. */
static void prepare(op_t *o)
{
    const ctx_t *cx = &g_cx[o->ci];
    const int n = cx->n, me = cx->rank;
    const int root = o->root % n;
    const size_t es = rc_esize(o->t);
    const uint64_t c = o->count;
    const size_t bytes = c * es, total = bytes * (size_t)n;
    unsigned char *in = NULL;

    switch (o->kind) {
    case K_ALLREDUCE:
    case K_REDUCE: {
        in = xmalloc(bytes);
        rc_fill_reduce(in, c, o->t, o->op, me, n, o->seed);
        const int ip = o->inplace && (o->kind == K_ALLREDUCE || me == root);
        take_bufs(o, ip ? 0 : bytes, bytes);
        o->rexp = xmalloc(bytes);
        reduce_ref(o, in, o->rexp, c);
        if (ip) {
            memcpy(o->rb.p, in, bytes);
        } else {
            memcpy(o->sb.p, in, bytes);
            rc_buf_poison(&o->rb, 0x5a);
        }
        o->chk_hi = o->kind == K_REDUCE && me != root ? 0 : bytes;
        break;
    }
    case K_REDUCESCATTER: {
        in = xmalloc(total);
        rc_fill_reduce(in, c * (uint64_t)n, o->t, o->op, me, n, o->seed);
        unsigned char *ref = xmalloc(total);
        reduce_ref(o, in, ref, c * (uint64_t)n);
        if (o->inplace) {
            /* recvBuf = sendBuf + rank * recvCount: only our block is defined */
            take_bufs(o, 0, total);
            memcpy(o->rb.p, in, total);
            o->rexp = ref;
            o->chk_lo = (size_t)me * bytes;
            o->chk_hi = o->chk_lo + bytes;
        } else {
            take_bufs(o, total, bytes);
            memcpy(o->sb.p, in, total);
            rc_buf_poison(&o->rb, 0x5b);
            o->rexp = xmalloc(bytes);
            memcpy(o->rexp, ref + (size_t)me * bytes, bytes);
            o->chk_hi = bytes;
            free(ref);
        }
        break;
    }
    case K_BROADCAST:
        take_bufs(o, 0, bytes);
        o->rexp = xmalloc(bytes);
        rc_fill_bytes(o->rexp, bytes, root, o->seed);
        if (me == root)
            memcpy(o->rb.p, o->rexp, bytes);
        else
            rc_buf_poison(&o->rb, 0x5c);
        o->chk_hi = bytes;
        break;
    case K_ALLGATHER:
        take_bufs(o, o->inplace ? 0 : bytes, total);
        o->rexp = xmalloc(total);
        for (int q = 0; q < n; q++)
            rc_fill_bytes(o->rexp + (size_t)q * bytes, bytes, q, o->seed);
        rc_buf_poison(&o->rb, 0x5d);
        if (o->inplace)
            memcpy(o->rb.p + (size_t)me * bytes, o->rexp + (size_t)me * bytes, bytes);
        else
            memcpy(o->sb.p, o->rexp + (size_t)me * bytes, bytes);
        o->chk_hi = total;
        break;
    case K_SCATTER:
        if (o->inplace && me == root) {
            /* recvBuf = sendBuf + root * recvCount: the call writes nothing */
            take_bufs(o, 0, total);
            o->rexp = xmalloc(total);
            rc_fill_bytes(o->rexp, total, root, o->seed);
            memcpy(o->rb.p, o->rexp, total);
            o->chk_hi = total;
        } else {
            take_bufs(o, total, bytes);
            if (me == root)
                rc_fill_bytes(o->sb.p, total, root, o->seed);
            else
                rc_buf_poison(&o->sb, 0x5e); /* not significant: must stay so */
            in = xmalloc(total);
            rc_fill_bytes(in, total, root, o->seed);
            o->rexp = xmalloc(bytes);
            memcpy(o->rexp, in + (size_t)me * bytes, bytes);
            rc_buf_poison(&o->rb, 0x5f);
            o->chk_hi = bytes;
        }
        break;
    case K_ALLTOALL:
        take_bufs(o, total, total);
        rc_fill_bytes(o->sb.p, total, me, o->seed);
        in = xmalloc(total);
        o->rexp = xmalloc(total);
        for (int q = 0; q < n; q++) {
            rc_fill_bytes(in, total, q, o->seed);
            memcpy(o->rexp + (size_t)q * bytes, in + (size_t)me * bytes, bytes);
        }
        rc_buf_poison(&o->rb, 0x60);
        o->chk_hi = total;
        break;
    case K_ALLTOALLV: {
        /* count from q to p: 0, or up to 2c; one element of gap after every
         * block on both sides, which must stay as it was */
        uint64_t *cnt = xmalloc(sizeof(uint64_t) * (size_t)n * (size_t)n);
        for (int q = 0; q < n; q++)
            for (int p = 0; p < n; p++) {
                uint64_t h = rc_hash3(o->seed, (uint64_t)q, (uint64_t)p);
                cnt[q * n + p] = h % 5 == 0 ? 0 : h % (2 * c + 1);
            }
        o->sc = xmalloc(sizeof(uint64_t) * (size_t)n);
        o->sd = xmalloc(sizeof(uint64_t) * (size_t)n);
        o->rc = xmalloc(sizeof(uint64_t) * (size_t)n);
        o->rd = xmalloc(sizeof(uint64_t) * (size_t)n);
        uint64_t st = 0, rt = 0;
        for (int p = 0; p < n; p++) {
            o->sc[p] = cnt[me * n + p];
            o->sd[p] = st;
            st += o->sc[p] + 1;
            o->rc[p] = cnt[p * n + me];
            o->rd[p] = rt;
            rt += o->rc[p] + 1;
        }
        /* receive blocks in reverse order of the senders: displacements
         * need not grow with the rank */
        uint64_t acc = 0;
        for (int p = n - 1; p >= 0; p--) {
            o->rd[p] = acc;
            acc += o->rc[p] + 1;
        }
        take_bufs(o, st * es, rt * es);
        rc_fill_bytes(o->sb.p, st * es, me, o->seed);
        rc_buf_poison(&o->rb, 0x61);
        o->rexp = xmalloc(rt * es + 1);
        memcpy(o->rexp, o->rb.p, rt * es);
        for (int q = 0; q < n; q++) {
            uint64_t qst = 0, qd = 0;
            for (int p = 0; p < n; p++) {
                if (p == me)
                    qd = qst;
                qst += cnt[q * n + p] + 1;
            }
            unsigned char *qin = xmalloc(qst * es);
            rc_fill_bytes(qin, qst * es, q, o->seed);
            memcpy(o->rexp + o->rd[q] * es, qin + qd * es, o->rc[q] * es);
            free(qin);
        }
        o->chk_hi = rt * es;
        free(cnt);
        break;
    }
    case K_SENDRECV: {
        const int left = (me + n - 1) % n;
        take_bufs(o, bytes, bytes);
        rc_fill_bytes(o->sb.p, bytes, me, o->seed);
        o->rexp = xmalloc(bytes);
        rc_buf_poison(&o->rb, 0x62);
        if (n > 1)
            rc_fill_bytes(o->rexp, bytes, left, o->seed);
        else /* one rank: nothing to send */
            memcpy(o->rexp, o->rb.p, bytes);
        o->chk_hi = bytes;
        break;
    }
    case K_MULTI:
    case K_GROUP: {
        /* tensors packed with a gap of 1-3 elements after each, in one
         * send and one receive buffer; the gaps of the output keep their
         * poison */
        uint64_t all = 0;
        for (int i = 0; i < o->nt; i++) {
            o->moff[i] = all;
            all += o->mcount[i] + 1 + (uint64_t)i % 3;
        }
        in = xmalloc(all * es);
        rc_fill_reduce(in, all, o->t, o->op, me, n, o->seed);
        unsigned char *ref = xmalloc(all * es);
        reduce_ref(o, in, ref, all);
        take_bufs(o, o->inplace ? 0 : all * es, all * es);
        rc_buf_poison(&o->rb, 0x63);
        o->rexp = xmalloc(all * es);
        memcpy(o->rexp, o->rb.p, all * es);
        if (!o->inplace)
            memcpy(o->sb.p, in, all * es);
        unsigned char *src = o->inplace ? o->rb.p : o->sb.p;
        for (int i = 0; i < o->nt; i++) {
            const size_t off = o->moff[i] * es, len = o->mcount[i] * es;
            memcpy(o->rexp + off, ref + off, len);
            if (o->inplace)
                memcpy(o->rb.p + off, in + off, len);
            o->min[i] = src + off;
            o->mout[i] = o->rb.p + off;
        }
        o->chk_hi = all * es;
        free(ref);
        break;
    }
    case K_BARRIER:
    default:
        take_bufs(o, 0, 0);
        break;
    }
    free(in);
    if (o->sb.bytes) {
        o->sexp = xmalloc(o->sb.bytes);
        memcpy(o->sexp, o->sb.p, o->sb.bytes);
    }
}

/* ------------------------------------------------------------ calls */

static HcclResult post(op_t *o)
{
    const ctx_t *cx = &g_cx[o->ci];
    const int n = cx->n, me = cx->rank;
    const uint32_t root = (uint32_t)(o->root % n);
    const size_t es = rc_esize(o->t);
    void *st = o->stream < 0 ? NULL : g_st[o->stream];
    void *s = o->sb.p, *r = o->rb.p;
    const uint64_t c = o->count;

    switch (o->kind) {
    case K_ALLREDUCE:
        return HcclAllReduce(o->inplace ? r : s, r, c, o->t, o->op, cx->h, st);
    case K_REDUCE:
        return HcclReduce(o->inplace && me == (int)root ? r : s, r, c, o->t, o->op, root, cx->h,
                          st);
    case K_REDUCESCATTER:
        if (o->inplace)
            return HcclReduceScatter(r, (unsigned char *)r + (size_t)me * c * es, c, o->t, o->op,
                                     cx->h, st);
        return HcclReduceScatter(s, r, c, o->t, o->op, cx->h, st);
    case K_BROADCAST:
        return HcclBroadcast(r, c, o->t, root, cx->h, st);
    case K_ALLGATHER:
        return HcclAllGather(o->inplace ? (unsigned char *)r + (size_t)me * c * es : s, r, c,
                             o->t, cx->h, st);
    case K_SCATTER:
        if (o->inplace && me == (int)root)
            return HcclScatter(r, (unsigned char *)r + (size_t)root * c * es, c, o->t, root,
                               cx->h, st);
        return HcclScatter(s, r, c, o->t, root, cx->h, st);
    case K_ALLTOALL:
        return HcclAlltoAll(s, c, o->t, r, c, o->t, cx->h, st);
    case K_ALLTOALLV:
        return HcclAlltoAllV(s, o->sc, o->sd, o->t, r, o->rc, o->rd, o->t, cx->h, st);
    case K_SENDRECV: {
        if (n == 1)
            return HCCL_SUCCESS;
        HcclResult e = HcclGroupStart();
        if (e != HCCL_SUCCESS)
            return e;
        HcclResult e1 = HcclSend(s, c, o->t, (uint32_t)((me + 1) % n), cx->h, st);
        HcclResult e2 = HcclRecv(r, c, o->t, (uint32_t)((me + n - 1) % n), cx->h, st);
        e = HcclGroupEnd();
        return e1 != HCCL_SUCCESS ? e1 : e2 != HCCL_SUCCESS ? e2 : e;
    }
    case K_MULTI:
        return HcclAllReduceMulti(o->min, o->mout, o->mcount, (size_t)o->nt, o->t, o->op, cx->h,
                                  st);
    case K_GROUP: { /* the same tensors, one AllReduce each, in a group */
        HcclResult e = HcclGroupStart();
        for (int i = 0; i < o->nt && e == HCCL_SUCCESS; i++)
            e = HcclAllReduce((void *)o->min[i], o->mout[i], o->mcount[i], o->t, o->op, cx->h, st);
        HcclResult e2 = HcclGroupEnd();
        return e != HCCL_SUCCESS ? e : e2;
    }
    case K_BARRIER:
    default:
        return HcclBarrier(cx->h, st);
    }
}

/* err: the operation's error (-F's failure batch only: its receive buffer
 * is then undefined, everything else is checked) */
static void check(op_t *o, HcclResult err)
{
    char what[256];
    g_checks++;
    if (err != HCCL_SUCCESS && err != HCCL_E_REMOTE && err != HCCL_E_TIMEOUT) {
        snprintf(what, sizeof what, "failed with %s (%d), not HCCL_E_REMOTE or HCCL_E_TIMEOUT",
                 HcclGetErrorString(err), (int)err);
        fail(o, what);
    }
    if (err == HCCL_SUCCESS && o->chk_hi > o->chk_lo) {
        long i = rc_first_diff(o->rb.p + o->chk_lo, o->rexp + o->chk_lo, o->chk_hi - o->chk_lo, 1);
        if (i >= 0) {
            const size_t es = rc_esize(o->t);
            const size_t at = (o->chk_lo + (size_t)i) / es;
            char got[64], exp[64];
            rc_format_elem(got, sizeof got, o->rb.p, at, o->t);
            rc_format_elem(exp, sizeof exp, o->rexp, at, o->t);
            snprintf(what, sizeof what, "receive buffer byte %zu (element %zu): got %s, want %s",
                     o->chk_lo + (size_t)i, at, got, exp);
            fail(o, what);
        }
    }
    if (o->sb.bytes && memcmp(o->sb.p, o->sexp, o->sb.bytes) != 0)
        fail(o, "send buffer changed");
    long gs = o->sb.bytes ? rc_buf_guard_check(&o->sb) : 0;
    long gr = rc_buf_guard_check(&o->rb);
    if (gs || gr) {
        snprintf(what, sizeof what, "guard zone damaged (send %ld, receive %ld)", gs, gr);
        fail(o, what);
    }
}

static void release(op_t *o)
{
    if (o->stream < 0) { /* keep for a repeat */
        if (g_have_keep[o->ci]) {
            rc_buf_free(&g_keep[o->ci].sb);
            rc_buf_free(&g_keep[o->ci].rb);
        }
        g_keep[o->ci].sb = o->sb;
        g_keep[o->ci].rb = o->rb;
        g_have_keep[o->ci] = 1;
    } else {
        rc_buf_free(&o->sb);
        rc_buf_free(&o->rb);
    }
    free(o->rexp);
    free(o->sexp);
    free(o->sc);
    free(o->sd);
    free(o->rc);
    free(o->rd);
}

/* ------------------------------------------------------------ communicators */

static void die_setup(const char *what, HcclResult r)
{
    fprintf(stderr, "test_soak: rank %d: %s: %s\n", g_rank, what, HcclGetErrorString(r));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Split ci of the world as it is now: the halves (parity of the world
 * rank, reversed order) or everyone in a permuted order (key 5 * rank mod
 * n: a permutation when n is not a multiple of 5; ties go by rank). */
static HcclResult split_of(int ci, HcclComm *out)
{
    const int wr = g_cx[0].rank, wn = g_cx[0].n;
    return ci == 1 ? HcclCommSplit(g_cx[0].h, wr % 2, wn - wr, out)
                   : HcclCommSplit(g_cx[0].h, 0, (5 * wr) % wn, out);
}

/* The model of split ci: the members of this process's part, in
 * MPI_Comm_split's order (key, then parent rank), as world ids. */
static void model_split(int ci)
{
    const ctx_t *w = &g_cx[0];
    ctx_t *cx = &g_cx[ci];
    const int wn = w->n;
    int idx[MAX_RANKS], key[MAX_RANKS], k = 0;
    for (int r = 0; r < wn; r++) {
        if (ci == 1 && r % 2 != w->rank % 2)
            continue;
        const int kr = ci == 1 ? wn - r : (5 * r) % wn;
        int j = k++;
        for (; j > 0 && key[j - 1] > kr; j--) { /* ties stay in rank order */
            idx[j] = idx[j - 1];
            key[j] = key[j - 1];
        }
        idx[j] = r;
        key[j] = kr;
    }
    cx->n = k;
    for (int i = 0; i < k; i++) {
        cx->mem[i] = w->mem[idx[i]];
        if (idx[i] == w->rank)
            cx->rank = i;
    }
}

/* The rank of world member id in cx, or -1. */
static int rank_of(const ctx_t *cx, int id)
{
    for (int i = 0; i < cx->n; i++)
        if (cx->mem[i] == id)
            return i;
    return -1;
}

/* hcomm's rank and size of cx against the model. */
static void verify(const ctx_t *cx, const char *when)
{
    uint32_t hr = UINT32_MAX, hn = 0;
    HcclGetRankId(cx->h, &hr);
    HcclGetRankSize(cx->h, &hn);
    if ((int)hr != cx->rank || (int)hn != cx->n) {
        fprintf(stderr, "test_soak: rank %d: %s %s: hcomm rank %u of %u, expected %d of %d\n",
                g_rank, cx->name, when, hr, hn, cx->rank, cx->n);
        g_fails++;
    }
}

/* Destroy split ci and make it again from the world as it is now (the MPI
 * communicator stays: it is only used before a failure). */
static void remake(int ci)
{
    HcclResult r = g_cx[ci].h ? HcclCommDestroy(g_cx[ci].h) : HCCL_SUCCESS;
    if (r != HCCL_SUCCESS)
        die_setup("HcclCommDestroy", r);
    r = split_of(ci, &g_cx[ci].h);
    if (r != HCCL_SUCCESS)
        die_setup("HcclCommSplit (made again)", r);
    model_split(ci);
    verify(&g_cx[ci], "made again");
    if (g_pool)
        pool_register(ci);
}

static void init_comms(void)
{
    g_cx[0].m = MPI_COMM_WORLD;
    g_cx[0].name = "world";
    g_cx[0].rank = g_rank;
    g_cx[0].n = g_n;
    for (int i = 0; i < g_n; i++)
        g_cx[0].mem[i] = i;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_n - g_rank, &g_cx[1].m);
    g_cx[1].name = "half";
    MPI_Comm_split(MPI_COMM_WORLD, 0, (5 * g_rank) % g_n, &g_cx[2].m);
    g_cx[2].name = "permuted";
    HcclResult r = HcclCommInitMpi(MPI_COMM_WORLD, &g_cx[0].h);
    if (r == HCCL_SUCCESS)
        r = split_of(1, &g_cx[1].h);
    if (r == HCCL_SUCCESS)
        r = split_of(2, &g_cx[2].h);
    if (r != HCCL_SUCCESS)
        die_setup("set-up", r);
    for (int i = 0; i < NCOMMS; i++) {
        if (i > 0)
            model_split(i);
        int mr, mn; /* MPI's split and the model must agree, then hcomm */
        MPI_Comm_rank(g_cx[i].m, &mr);
        MPI_Comm_size(g_cx[i].m, &mn);
        if (mr != g_cx[i].rank || mn != g_cx[i].n) {
            fprintf(stderr, "test_soak: rank %d: %s: MPI rank %d of %d, model %d of %d\n",
                    g_rank, g_cx[i].name, mr, mn, g_cx[i].rank, g_cx[i].n);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        verify(&g_cx[i], "(split order)");
        if (g_fails)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* ------------------------------------------------------------ -F */

static int is_victim(int id)
{
    for (int k = 0; k < g_nfail; k++)
        if (g_fvictim[k] == id || g_fvictim2[k] == id)
            return 1;
    return 0;
}

/* Does cx hold a rank that fails at event k? */
static int holds_victim(const ctx_t *cx, int k)
{
    return rank_of(cx, g_fvictim[k]) >= 0 || (g_fvictim2[k] >= 0 && rank_of(cx, g_fvictim2[k]) >= 0);
}

/* The survivor that prints: the lowest rank that never fails. */
static int printer(void)
{
    int p = 0;
    while (is_victim(p))
        p++;
    return g_rank == p;
}

/* Failure k's rank, at its operation. */
static void fail_now(int k)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/victim.pid", g_dir);
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, "%d\n", (int)getpid());
        fclose(f);
    }
    printf("test_soak: rank %d: %s at op %ld\n", g_rank,
           g_fhow[k] == F_STOP ? "stopping (SIGSTOP)" : "killing itself (SIGKILL)", g_fat[k]);
    fflush(stdout);
    raise(g_fhow[k] == F_STOP ? SIGSTOP : SIGKILL); /* kill2: both victims */
    for (;;) /* stopped: resumed only to be killed */
        pause();
}

/* What HcclCommGetFailedRanks says of communicator cx, given the members
 * that fail at once (ids vid[0..nv)): it never lists another rank; with
 * want set it must list every one of them that cx holds, polled for up to
 * 15 s (a killed process is found by UCX's keepalive; HCCL_EXEC_TIMEOUT is
 * 5 s in soakfail.sh). */
static void failed_ranks(const ctx_t *cx, const int *vid, int nv, int want, const char *when)
{
    int vr[2], nin = 0;
    for (int i = 0; i < nv; i++)
        if (rank_of(cx, vid[i]) >= 0)
            vr[nin++] = rank_of(cx, vid[i]);
    uint32_t fr[MAX_RANKS], nf = 0;
    const time_t t0 = time(NULL);
    for (;;) {
        const HcclResult r = HcclCommGetFailedRanks(cx->h, fr, MAX_RANKS, &nf);
        if (r != HCCL_SUCCESS)
            die_setup("HcclCommGetFailedRanks", r);
        int listed = 0;
        for (uint32_t i = 0; i < nf; i++) {
            if ((nin > 0 && (int)fr[i] == vr[0]) || (nin > 1 && (int)fr[i] == vr[1])) {
                listed++;
                continue;
            }
            fprintf(stderr, "test_soak: rank %d: HcclCommGetFailedRanks %s lists rank %u of %d, "
                    "which is alive\n", g_rank, when, fr[i], cx->n);
            g_fails++;
        }
        g_checks++;
        if (listed == nin || !want)
            return;
        if (time(NULL) - t0 > 15) {
            fprintf(stderr, "test_soak: rank %d: HcclCommGetFailedRanks %s: %d of the %d failed "
                    "ranks listed after 15 s\n", g_rank, when, listed, nin);
            g_fails++;
            return;
        }
        usleep(10000);
    }
}

/* The model: the failed members out of cx. */
static void drop_members(ctx_t *cx, const int *vid, int nv)
{
    for (int i = 0; i < nv; i++) {
        const int v = rank_of(cx, vid[i]);
        if (v < 0)
            continue;
        memmove(&cx->mem[v], &cx->mem[v + 1], sizeof(int) * (size_t)(cx->n - v - 1));
        cx->n--;
    }
    cx->rank = rank_of(cx, g_rank);
}

/* The survivors after failure k's batch, each as soon as it is through it:
 * recover every communicator (see -F above). seen[ci]: an operation on ci
 * failed here. */
static void recover(int k, const int *seen)
{
    ctx_t *w = &g_cx[0], *h = &g_cx[1];
    const int vid[2] = {g_fvictim[k], g_fvictim2[k]}, nv = vid[1] >= 0 ? 2 : 1;
    const int killed = g_fhow[k] != F_STOP;
    /* the halves: errors on one without a failed rank count (the other is
     * recovered anyway); the permuted split holds them */
    int32_t mine[2] = {!holds_victim(h, k) && seen[1], seen[2]}, all[2];
    /* drawn on every survivor alike, whatever it then does */
    const int abort_first = (int)rnd_below(2);
    const int resplit_half = rnd_below(2) == 0, resplit_perm = rnd_below(2) == 0;
    HcclResult r;
    /* who failed, from hcomm: killed ranks are found; a stopped one is
     * listed once another survivor removed it (its notice) */
    failed_ranks(w, vid, nv, killed, "before the recovery");
    if (abort_first && (r = HcclCommAbort(w->h)) != HCCL_SUCCESS)
        die_setup("HcclCommAbort(world)", r);
    /* kill2: one call drops both (the survivors agree on every member
     * known failed) */
    r = HcclCommRemoveMember(w->h, (uint32_t)rank_of(w, vid[0]));
    if (r != HCCL_SUCCESS)
        die_setup("HcclCommRemoveMember(world)", r);
    if (g_pool) /* a membership change drops the registrations (docs/DESIGN.md) */
        pool_register(0);
    drop_members(w, vid, nv);
    verify(w, "after HcclCommRemoveMember");
    failed_ranks(w, vid, nv, 0, "after the removal");
    /* the splits: ours marks the process failed for every communicator */
    for (int ci = 1; ci < NCOMMS; ci++)
        failed_ranks(&g_cx[ci], vid, nv, 1, ci == 1 ? "on the half" : "on the permuted split");
    HcclResult ae = HCCL_E_INTERNAL;
    HcclGetCommAsyncError(w->h, &ae);
    if (ae != HCCL_SUCCESS) {
        fprintf(stderr, "test_soak: rank %d: world's async error after the removal: %s\n",
                g_rank, HcclGetErrorString(ae));
        g_fails++;
    }
    /* which communicators saw an error anywhere: over the recovered world */
    r = HcclAllReduce(mine, all, 2, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MAX, w->h, NULL);
    if (r != HCCL_SUCCESS)
        die_setup("HcclAllReduce over the recovered world", r);
    const int resplit[NCOMMS] = {0, all[0] || resplit_half, resplit_perm};
    const char *how[NCOMMS] = {abort_first ? "aborted, member removed" : "member removed",
                               NULL, NULL};
    for (int ci = 1; ci < NCOMMS; ci++) {
        ctx_t *cx = &g_cx[ci];
        const int v = rank_of(cx, vid[0]) >= 0 ? rank_of(cx, vid[0]) : rank_of(cx, vid[1]);
        if (resplit[ci]) { /* collective over the world: every survivor */
            remake(ci);
            how[ci] = "made again";
        } else if (holds_victim(cx, k)) { /* one call for all the failed members it holds */
            r = HcclCommRemoveMember(cx->h, (uint32_t)v);
            if (r != HCCL_SUCCESS)
                die_setup("HcclCommRemoveMember(split)", r);
            if (g_pool)
                pool_register(ci);
            drop_members(cx, vid, nv);
            verify(cx, "after HcclCommRemoveMember");
            how[ci] = "member removed";
        } else {
            how[ci] = "kept";
        }
    }
    if (printer())
        printf("test_soak: recovered: world %s (%d ranks), half %s (%d here), permuted %s (%d)\n",
               how[0], w->n, how[1], g_cx[1].n, how[2], g_cx[2].n);
}

/* What a newcomer needs to go on with the sequence: the generator and the
 * operation count at the join, the world's size at the start (the draws
 * use it), which event let it in, and the world's members. */
typedef struct {
    uint64_t rng;
    int64_t done;
    int32_t n0, k, wn, pad;
    int32_t mem[MAX_RANKS];
} join_state_t;

/* The first member of the world that is not the newcomer at nr: the root
 * that tells it the state. */
static uint32_t join_root(uint32_t nr)
{
    return nr == 0 ? 1 : 0;
}

/* After a join, on members and newcomer alike: the registrations (the
 * membership change dropped the world's) and both splits made again over
 * the larger world (collective over it). */
static void after_join(void)
{
    if (g_pool)
        pool_register(0);
    remake(1);
    remake(2);
}

/* Event k is "add": the members take a newcomer in (HcclCommAddMember,
 * which spawns it) at a drawn rank, and tell it the state. */
static void do_add(int k, long done)
{
    ctx_t *w = &g_cx[0];
    const uint32_t nr = (uint32_t)rnd_below((uint64_t)w->n + 1);
    HcclResult r = HcclCommAddMember(w->h, nr);
    if (r != HCCL_SUCCESS)
        die_setup("HcclCommAddMember(world)", r);
    memmove(&w->mem[nr + 1], &w->mem[nr], sizeof(int) * (size_t)(w->n - (int)nr));
    w->mem[nr] = g_n + k; /* the newcomer's id */
    w->n++;
    w->rank = rank_of(w, g_rank);
    verify(w, "after HcclCommAddMember");
    join_state_t st;
    memset(&st, 0, sizeof st);
    st.rng = g_rng;
    st.done = done;
    st.n0 = g_n;
    st.k = k;
    st.wn = w->n;
    memcpy(st.mem, w->mem, sizeof(int32_t) * (size_t)w->n);
    r = HcclBroadcast(&st, sizeof st, HCCL_DATA_TYPE_UINT8, join_root(nr), w->h, NULL);
    if (r != HCCL_SUCCESS)
        die_setup("HcclBroadcast of the state to the newcomer", r);
    after_join();
    if (printer())
        printf("test_soak: after op %ld: a newcomer joined at rank %u (%d ranks)\n", done - 1, nr,
               w->n);
    fflush(stdout);
}

/* The newcomer: join the world, learn the state, make the splits. Returns
 * the generator and the operation count to go on from. */
static void newcomer_join(uint64_t *rng, long *done)
{
    ctx_t *w = &g_cx[0];
    HcclResult r = HcclCommJoin(NULL, &w->h);
    if (r != HCCL_SUCCESS)
        die_setup("HcclCommJoin", r);
    uint32_t nr = 0;
    HcclGetRankId(w->h, &nr);
    join_state_t st;
    r = HcclBroadcast(&st, sizeof st, HCCL_DATA_TYPE_UINT8, join_root(nr), w->h, NULL);
    if (r != HCCL_SUCCESS)
        die_setup("HcclBroadcast of the state (newcomer)", r);
    g_n = st.n0;
    g_rank = st.n0 + st.k;
    w->name = "world";
    w->n = st.wn;
    memcpy(w->mem, st.mem, sizeof(int32_t) * (size_t)st.wn);
    w->rank = rank_of(w, g_rank);
    verify(w, "after HcclCommJoin");
    g_cx[1].name = "half";
    g_cx[2].name = "permuted";
    *rng = st.rng;
    *done = (long)st.done;
}

/* ------------------------------------------------------------ main */

typedef struct {
    uint64_t seed;
    long nops;
    int tid;
    uint64_t rng; /* resume (a newcomer): the generator and count at its join */
    long done;
    int resume;
    long checks, fails; /* out */
} run_arg_t;

/* One sequence: batches drawn from a->seed on this thread's communicators. */
static void *run_seq(void *p)
{
    run_arg_t *a = p;
    g_tid = a->tid;
    g_rng = a->resume ? a->rng : a->seed;
    if (g_threads == 1) {
        g_ncis = NCOMMS;
        for (int i = 0; i < NCOMMS; i++)
            g_cis[i] = i;
    } else if (g_tid == 0) {
        g_ncis = 2;
        g_cis[0] = 0;
        g_cis[1] = 1;
    } else {
        g_ncis = 1;
        g_cis[0] = 2;
    }
    HcclResult r = HcclStreamCreate(&g_st[0]);
    if (r == HCCL_SUCCESS)
        r = HcclStreamCreateWithPriority(&g_st[1], 1);
    if (r != HCCL_SUCCESS)
        die_setup("HcclStreamCreate", r);
    op_t batch[MAX_BATCH];
    op_t last;
    int have_last = 0;
    long done = a->resume ? a->done : 0;
    unsigned added = 0; /* bit k: add event k is behind this sequence */
    int seen[NCOMMS] = {0, 0, 0}; /* -F: communicators with an error before the recovery */
    op_t defer[RISK_OPS + 3 * MAX_BATCH]; /* -F: operations whose buffers wait for it */
    int ndefer = 0;
    while (done < a->nops) {
        for (int k = 0; k < g_nfail; k++) /* -F ...,add: at the first batch boundary */
            if (g_fhow[k] == F_ADD && g_fat[k] <= done && !(added & (1u << k))) {
                added |= 1u << k;
                if (a->resume && k <= g_rank - g_n)
                    continue; /* the add that let this newcomer in, or an earlier one */
                do_add(k, done);
                have_last = 0; /* nothing to repeat across the change */
                for (int i = 0; i < NCOMMS; i++)
                    if (g_have_keep[i]) {
                        rc_buf_free(&g_keep[i].sb);
                        rc_buf_free(&g_keep[i].rb);
                        g_have_keep[i] = 0;
                    }
            }
        int nb = 1 + (int)rnd_below(MAX_BATCH);
        if (nb > a->nops - done)
            nb = (int)(a->nops - done);
        /* -F: the batch in which a member fails, and those shortly before
         * it: results may be errors (risk) */
        int fk = -1, rk = -1;
        for (int k = 0; k < g_nfail; k++) {
            if (g_fhow[k] != F_ADD && g_fat[k] >= done && g_fat[k] < done + nb)
                fk = k;
            if (g_fhow[k] != F_ADD && g_fat[k] >= done && g_fat[k] < done + nb + RISK_OPS)
                rk = k;
        }
        const int risk = rk >= 0;
        const int fbatch = fk >= 0;
        for (int i = 0; i < nb; i++) {
            op_t *o = &batch[i];
            if (fbatch && done + i == g_fat[fk] &&
                (g_rank == g_fvictim[fk] || g_rank == g_fvictim2[fk]))
                fail_now(fk);
            draw(o, have_last ? &last : NULL, done + i);
            last = *o;
            have_last = 1;
            if ((g_only >= 0 && o->kind != g_only) || (g_only_no >= 0 && o->no != g_only_no)) {
                o->kind = K_BARRIER; /* -k, -o: the others become barriers */
            }
            prepare(o);
            if (g_verbose && (g_nfail ? printer() : g_rank == 0)) {
                char d[256];
                describe(o, d, sizeof d);
                printf("test_soak:%s %s\n", g_threads > 1 ? (g_tid ? " [1]" : " [0]") : "", d);
                fflush(stdout);
            }
            o->err = post(o);
            if (o->err != HCCL_SUCCESS && risk) {
                seen[o->ci] = 1;
            } else if (o->err != HCCL_SUCCESS) {
                char w[96];
                snprintf(w, sizeof w, "the call returned %s", HcclGetErrorString(o->err));
                fail(o, w);
            }
        }
        HcclResult serr[2];
        for (int s = 0; s < 2; s++) {
            serr[s] = HcclStreamSynchronize(g_st[s]);
            if (serr[s] != HCCL_SUCCESS && risk) {
                for (int i = 0; i < nb; i++) /* the stream's operations fail together */
                    if (batch[i].stream == s)
                        seen[batch[i].ci] = 1;
            } else if (serr[s] != HCCL_SUCCESS) {
                fprintf(stderr, "test_soak: rank %d: stream %d: %s after op %ld\n", g_rank, s,
                        HcclGetErrorString(serr[s]), done + nb - 1);
                g_fails++;
            }
        }
        int nerr = 0;
        for (int i = 0; i < nb; i++) {
            op_t *o = &batch[i];
            const HcclResult e = !risk ? HCCL_SUCCESS : o->stream < 0 ? o->err : serr[o->stream];
            nerr += e != HCCL_SUCCESS;
            if (fbatch && e == HCCL_SUCCESS && o->kind == K_BARRIER && o->no >= g_fat[fk] &&
                holds_victim(&g_cx[o->ci], fk))
                fail(o, "a Barrier completed that the failed member never entered");
            check(o, e);
        }
        for (int i = 0; i < nb; i++) /* a failed operation's buffers: after the recovery */
            if (risk && (fbatch || nerr))
                defer[ndefer++] = batch[i];
            else
                release(&batch[i]);
        done += nb;
        if (risk && !fbatch && nerr) {
            printf("test_soak: rank %d: ops %ld-%ld, before the failure at op %ld: %d of %d "
                   "operations failed (in flight here when the failure was noticed)\n", g_rank,
                   done - nb, done - 1, g_fat[rk], nerr, nb);
            fflush(stdout);
        }
        if (fbatch) {
            printf("test_soak: rank %d: the failure's batch (ops %ld-%ld): %d of %d operations "
                   "failed (HCCL_E_REMOTE or HCCL_E_TIMEOUT expected)\n", g_rank, done - nb,
                   done - 1, nerr, nb);
            fflush(stdout);
            /* A survivor removes the failed rank only once it has seen the
             * failure, as an application would: one whose operations all
             * went without it (or that was ahead of it) waits for it with a
             * world Barrier that the failed rank never enters */
            int noticed = 0;
            for (int ci = 0; ci < NCOMMS; ci++)
                noticed |= seen[ci] && holds_victim(&g_cx[ci], fk);
            if (!noticed) {
                const HcclResult pr = HcclBarrier(g_cx[0].h, NULL);
                if (pr != HCCL_E_REMOTE && pr != HCCL_E_TIMEOUT) {
                    fprintf(stderr, "test_soak: rank %d: a world Barrier after the failure's "
                            "batch returned %s (HCCL_E_REMOTE or HCCL_E_TIMEOUT expected)\n",
                            g_rank, HcclGetErrorString(pr));
                    g_fails++;
                }
            }
            recover(fk, seen);
            /* only now: a failed operation's send that UCX cannot cancel may
             * be read by a late survivor until the communicator is recovered
             * (docs/ELASTIC.md, "Limits") */
            for (int i = 0; i < ndefer; i++)
                release(&defer[i]);
            ndefer = 0;
            memset(seen, 0, sizeof seen);
            have_last = 0; /* the communicators changed: nothing to repeat */
            for (int i = 0; i < NCOMMS; i++)
                if (g_have_keep[i]) {
                    rc_buf_free(&g_keep[i].sb);
                    rc_buf_free(&g_keep[i].rb);
                    g_have_keep[i] = 0;
                }
        }
        if (g_pool && rc_buf_pool_used() > POOL_BYTES / 2) /* let the pool empty and start over */
            for (int i = 0; i < NCOMMS; i++)
                if (g_have_keep[i]) {
                    rc_buf_free(&g_keep[i].sb);
                    rc_buf_free(&g_keep[i].rb);
                    g_have_keep[i] = 0;
                }
        /* a split is made from the world: only by the sequence that drives
         * the world, and only one it drives itself */
        if (g_cis[0] == 0 && rnd_below(40) == 0) {
            const int ci = g_threads > 1 ? 1 : 1 + (int)rnd_below(NCOMMS - 1);
            if (g_verbose && (g_nfail ? printer() : g_rank == 0)) {
                printf("test_soak: after op %ld: %s made again\n", done - 1, g_cx[ci].name);
                fflush(stdout);
            }
            remake(ci);
        }
    }

    for (int i = 0; i < NCOMMS; i++) {
        if (g_have_keep[i]) {
            rc_buf_free(&g_keep[i].sb);
            rc_buf_free(&g_keep[i].rb);
        }
    }
    HcclStreamDestroy(g_st[0]);
    HcclStreamDestroy(g_st[1]);
    a->checks = g_checks;
    a->fails = g_fails;
    return NULL;
}

static int usage(void)
{
    if (g_rank == 0)
        fprintf(stderr, "usage: test_soak [-n OPS] [-s SEED] [-m MAXBYTES] "
                        "[-A | -T | -F kill|kill2|stop|add[,...] -D DIR] [-k NAME] [-o NO] "
                        "[-v]\n");
    MPI_Finalize();
    return 2;
}

int main(int argc, char **argv)
{
    long nops = 600;
    uint64_t seed = 20261201;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_n);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            nops = atol(argv[++i]);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-m") && i + 1 < argc)
            g_max = (size_t)strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-v"))
            g_verbose = 1;
        else if (!strcmp(argv[i], "-A"))
            g_reg = 1;
        else if (!strcmp(argv[i], "-T"))
            g_threads = 2;
        else if (!strcmp(argv[i], "-F") && i + 1 < argc) {
            g_fspec = argv[++i]; /* kill|stop[,kill|stop...] */
            for (const char *q = g_fspec; *q;) {
                const size_t len = strcspn(q, ",");
                if (g_nfail == MAX_FAILS)
                    return usage();
                if (len == 4 && !strncmp(q, "kill", 4))
                    g_fhow[g_nfail++] = F_KILL;
                else if (len == 5 && !strncmp(q, "kill2", 5))
                    g_fhow[g_nfail++] = F_KILL2;
                else if (len == 4 && !strncmp(q, "stop", 4))
                    g_fhow[g_nfail++] = F_STOP;
                else if (len == 3 && !strncmp(q, "add", 3))
                    g_fhow[g_nfail++] = F_ADD;
                else
                    return usage();
                q += len + (q[len] == ',');
            }
        } else if (!strcmp(argv[i], "-D") && i + 1 < argc)
            g_dir = argv[++i];

        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            g_only_no = atol(argv[++i]);
        else if (!strcmp(argv[i], "-k") && i + 1 < argc) {
            const char *k = argv[++i];
            for (int j = 0; j < NKINDS; j++)
                if (!strcmp(k, KIND_NAME[j]))
                    g_only = j;
            if (g_only < 0) {
                if (g_rank == 0)
                    fprintf(stderr, "test_soak: -k %s: no such operation\n", k);
                MPI_Finalize();
                return 2;
            }
        } else
            return usage();
    }
    if (g_max < 64)
        g_max = 64;
    MPI_Comm parent = MPI_COMM_NULL;
    MPI_Comm_get_parent(&parent);
    g_newcomer = parent != MPI_COMM_NULL; /* spawned by HcclCommAddMember */
    int nlost = 0;
    for (int k = 0; k < g_nfail; k++)
        nlost += g_fhow[k] == F_KILL2 ? 2 : g_fhow[k] != F_ADD;
    const char *bad = g_newcomer                       ? NULL /* its members checked */
                      : g_n > MAX_RANKS - MAX_FAILS     ? "at most 61 ranks"
                      : g_reg && g_threads > 1          ? "-A and -T together: the pool is not thread-safe"
                      : g_nfail && g_threads > 1        ? "-F and -T together: not done"
                      : g_nfail && g_n - nlost < 2      ? "-F leaves fewer than 2 ranks"
                      : g_nfail && g_dir == NULL        ? "-F needs -D DIR"
                      : g_nfail && nops < 20 * (g_nfail + 1) ? "-F needs -n 20 * (failures + 1) or more"
                                                        : NULL;
    if (bad) {
        if (g_rank == 0)
            fprintf(stderr, "test_soak: %s\n", bad);
        MPI_Finalize();
        return 2;
    }
    run_arg_t args[2];
    memset(args, 0, sizeof args);
    if (g_newcomer) /* g_n, g_rank and the world come from the members */
        newcomer_join(&args[0].rng, &args[0].done);
    /* the events, from the seed, as the sequence: event k within a third of
     * a window either side of (k + 1) windows; a failure's rank is drawn
     * among the ranks that started */
    const long win = nops / (g_nfail + 1);
    for (int k = 0; k < g_nfail; k++)
        g_fvictim2[k] = -1;
    for (int k = 0; k < g_nfail; k++) {
        int v = (int)(rc_hash3(seed, 0xfa11, 2 * (uint64_t)k + 1) % (uint64_t)g_n);
        while (is_victim(v))
            v = (v + 1) % g_n;
        g_fvictim[k] = g_fhow[k] == F_ADD ? -1 : v;
        g_fvictim2[k] = -1;
        if (g_fhow[k] == F_KILL2) {
            int v2 = (int)(rc_hash3(seed, 0xfa12, (uint64_t)k) % (uint64_t)g_n);
            while (is_victim(v2))
                v2 = (v2 + 1) % g_n;
            g_fvictim2[k] = v2;
        }
        g_fat[k] = win * (k + 1) - win / 3 +
                   (long)(rc_hash3(seed, 0xfa11, 2 * (uint64_t)k + 2) % (uint64_t)(2 * win / 3));
        if (g_rank == 0 && g_fhow[k] == F_ADD)
            printf("test_soak: a newcomer will join after op %ld of %ld\n", g_fat[k], nops);
        else if (g_rank == 0 && g_fhow[k] == F_KILL2)
            printf("test_soak: ranks %d and %d will be killed (SIGKILL) at op %ld of %ld\n", v,
                   g_fvictim2[k], g_fat[k], nops);
        else if (g_rank == 0)
            printf("test_soak: rank %d will %s at op %ld of %ld\n", v,
                   g_fhow[k] == F_STOP ? "stop (SIGSTOP)" : "be killed (SIGKILL)", g_fat[k], nops);
        fflush(stdout);
    }
    if (g_nfail && !g_newcomer)
        MPI_Comm_split(MPI_COMM_WORLD, is_victim(g_rank) ? MPI_UNDEFINED : 0, g_rank, &g_surv);
    if (g_reg) {
        HcclResult r = HcclMemAlloc((void **)&g_pool, POOL_BYTES);
        if (r != HCCL_SUCCESS)
            die_setup("HcclMemAlloc", r);
        rc_buf_pool(g_pool, POOL_BYTES);
    }
    if (g_newcomer) { /* as the members do after the join (registering is collective) */
        after_join();
    } else {
        init_comms();
        for (int i = 0; g_pool && i < NCOMMS; i++)
            pool_register(i);
    }

    for (int t = 0; t < g_threads; t++) {
        args[t].seed = seed + (uint64_t)t * 0x1000;
        args[t].nops = nops;
        args[t].tid = t;
        args[t].resume = g_newcomer;
    }
    if (g_threads == 1) {
        run_seq(&args[0]);
    } else { /* thread 0: world and half; thread 1: permuted */
        pthread_t th;
        if (pthread_create(&th, NULL, run_seq, &args[1]) != 0) {
            fprintf(stderr, "test_soak: rank %d: pthread_create failed\n", g_rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        run_seq(&args[0]);
        pthread_join(th, NULL);
    }
    long checks = 0, fails = 0;
    for (int t = 0; t < g_threads; t++) {
        checks += args[t].checks;
        fails += args[t].fails;
    }
    for (int i = NCOMMS - 1; i >= 0; i--)
        HcclCommDestroy(g_cx[i].h); /* drops the registrations */
    if (g_pool)
        HcclMemFree(g_pool);
    /* -F: MPI_COMM_WORLD holds the failed rank: the survivors' own
     * communicator sums (a newcomer has none), and each writes its result
     * for the script */
    MPI_Comm sum_comm = g_nfail ? g_surv : MPI_COMM_WORLD;
    long sums[2] = {checks, fails}, tot[2] = {checks, fails};
    if (!g_newcomer)
        MPI_Reduce(sums, tot, 2, MPI_LONG, MPI_SUM, 0, sum_comm);
    if (!g_newcomer && (g_nfail ? printer() : g_rank == 0))
        printf("test_soak: %ld operations, %ld checks, %ld failures (seed %" PRIu64
               ", %d ranks%s%s%s%s)\n",
               nops * g_threads, tot[0], tot[1], seed, g_n, g_reg ? ", registered buffers" : "",
               g_threads > 1 ? ", two threads" : "", g_nfail ? ", events: " : "",
               g_nfail ? g_fspec : "");
    fflush(stdout);
    if (g_nfail) {
        char path[4096], tmp[4200];
        snprintf(path, sizeof path, "%s/result.%d", g_dir, g_rank);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "w");
        if (f) {
            fprintf(f, "rank=%d checks=%ld fails=%ld recovered=1%s\n", g_rank, checks, fails,
                    g_newcomer ? " newcomer=1" : "");
            fclose(f);
            rename(tmp, path);
        }
        if (!g_newcomer)
            MPI_Comm_free(&g_surv);
        MPI_Finalize(); /* may not return with a failed rank: the script ends the job */
        return fails ? 1 : 0;
    }
    for (int i = 1; i < NCOMMS; i++)
        MPI_Comm_free(&g_cx[i].m);
    MPI_Finalize();
    return g_rank == 0 ? (tot[1] ? 1 : 0) : 0;
}
