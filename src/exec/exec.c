/* src/exec/exec.c - the schedule executor (see exec.h). */
#define _GNU_SOURCE /* sched_getcpu */
#include "exec.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hccl/hccl.h>

#include "coll/shm_util.h"
#include "src/base/cold.h"
#include "src/base/log.h"
#include "src/base/reduce.h"
#include "src/base/util.h"
#include "trace.h"
#include "src/transport/mover.h"
#include "wait.h"

/* Copies from this size on may use non-temporal stores (glibc switches at
 * a fraction of the last-level cache, tens of MB here): a PUBLISH after
 * one fences first. The kernels of src/base/reduce.c use ordinary stores. */
#define HC_NT_COPY_MIN (4u << 20)

static const char *kind_name[HC_STEP_KINDS] = {"SEND",    "RECV", "REDUCE",      "COPY",
                                                "NOP",     "PUBLISH", "WAIT",
                                                "REDUCE_MULTI", "READ", "WRITE", "XREDUCE"};

/* Workspace layout: header, st, x, npend, npend0, rdep_off, rdep, ready,
 * ready0, posted. The dependents index and the initial counters and ready
 * list depend only on the schedule: a cached workspace keeps them (the
 * header names the schedule generation they belong to), and a restart only
 * copies the initial state back. */
typedef struct {
    const hc_sched_t *s;
    uint64_t gen;
    uint32_t nready0;
} ws_hdr_t;

static size_t al8(size_t v)
{
    return (v + 7) & ~(size_t)7;
}

HC_HOT size_t hc_exec_ws_size(const hc_sched_t *s)
{
    size_t n = s->nsteps;
    if (n == 0)
        return 0;
    return al8(sizeof(ws_hdr_t)) + al8(n) + al8(n * sizeof(hc_xfer_t)) + 2 * al8(n * 4) +
           al8((n + 1) * 4) + al8((size_t)s->ndeps * 4) + 3 * al8(n * 4);
}

HC_HOT int hc_exec_start(hc_exec_t *e, const hc_sched_t *s, void *const bufs[HC_NBUFS],
                         const hc_transport_ops_t *tp, void *tctx, uint32_t rank, uint32_t comm_id,
                         uint32_t seq, HcclDataType dtype, HcclReduceOp op, void *ws)
{
    hc_zero(e, sizeof(*e)); /* not an inlined rep stos (src/base/util.h) */
    e->s = s;
    for (int i = 0; i < HC_NBUFS; i++)
        e->base[i] = bufs[i];
    e->tp = tp;
    e->tp_ctx = tctx;
    e->rank = rank;
    e->comm_id = comm_id;
    e->seq = seq;
    e->dtype = dtype;
    e->op = op == HCCL_REDUCE_AVG ? HCCL_REDUCE_SUM : op;
    const uint32_t n = s->nsteps;
    e->status = n ? HCCL_E_AGAIN : HCCL_SUCCESS;
    if (n == 0)
        return HCCL_SUCCESS;
    size_t wsz = hc_exec_ws_size(s);
    if (ws == NULL) {
        ws = malloc(wsz);
        if (ws == NULL) {
            HC_ERROR(HC_SUB_COLL, "cannot allocate %zu bytes of executor state", wsz);
            e->status = HCCL_E_MEMORY;
            return HCCL_E_MEMORY;
        }
        e->ws_owned = 1;
    }
    e->ws = ws;
    ws_hdr_t *h = ws;
    char *p = (char *)ws + al8(sizeof(ws_hdr_t));
    e->st = (uint8_t *)p;
    p += al8(n);
    e->x = (hc_xfer_t *)p;
    p += al8(n * sizeof(hc_xfer_t));
    e->npend = (uint32_t *)p;
    p += al8((size_t)n * 4);
    uint32_t *npend0 = (uint32_t *)p;
    p += al8((size_t)n * 4);
    e->rdep_off = (uint32_t *)p;
    p += al8(((size_t)n + 1) * 4);
    e->rdep = (uint32_t *)p;
    p += al8((size_t)s->ndeps * 4);
    e->ready = (uint32_t *)p;
    p += al8((size_t)n * 4);
    uint32_t *ready0 = (uint32_t *)p;
    p += al8((size_t)n * 4);
    e->posted = (uint32_t *)p;

    memset(e->st, HC_ST_WAIT, n);
    if (!s->branched) /* a chain: run_chain needs no dependency index */
        return HCCL_SUCCESS;
    if (!e->ws_owned && s->gen && h->s == s && h->gen == s->gen) { /* index still valid */
        memcpy(e->npend, npend0, (size_t)n * 4);
        memcpy(e->ready, ready0, (size_t)h->nready0 * 4);
        e->rtail = h->nready0;
        return HCCL_SUCCESS;
    }
    /* dependents index (CSR); `posted` serves as the fill cursor */
    memset(e->rdep_off, 0, ((size_t)n + 1) * 4);
    for (uint32_t i = 0; i < n; i++) {
        const hc_step_t *t = &s->steps[i];
        e->npend[i] = t->ndeps;
        for (uint32_t k = 0; k < t->ndeps; k++)
            e->rdep_off[s->deps[t->dep_off + k] + 1]++;
    }
    for (uint32_t i = 0; i < n; i++) {
        e->rdep_off[i + 1] += e->rdep_off[i];
        e->posted[i] = e->rdep_off[i];
    }
    for (uint32_t i = 0; i < n; i++) {
        const hc_step_t *t = &s->steps[i];
        for (uint32_t k = 0; k < t->ndeps; k++)
            e->rdep[e->posted[s->deps[t->dep_off + k]]++] = i;
        if (t->ndeps == 0)
            e->ready[e->rtail++] = i;
    }
    memcpy(npend0, e->npend, (size_t)n * 4);
    memcpy(ready0, e->ready, (size_t)e->rtail * 4);
    h->s = s;
    h->gen = s->gen;
    h->nready0 = e->rtail;
    return HCCL_SUCCESS;
}

/* A location's offset in its buffer (ring locations: this epoch's entry). */
static inline uint64_t loc_off(const hc_exec_t *e, hc_loc_t l)
{
    return l.off + (l.ring ? e->ring_off : 0);
}

static inline char *ptr(const hc_exec_t *e, hc_loc_t l)
{
    return (l.buf == HC_BUF_PEER ? e->half[l.peer] : e->base[l.buf]) + loc_off(e, l);
}

HC_HOT void hc_exec_bind_shm(hc_exec_t *e, const hc_shm_bind_t *b)
{
    e->half = b->half;
    e->nranks = b->nranks;
    e->epoch = b->epoch;
    e->epoch0 = b->epoch0;
    e->gate = b->gate;
    e->prev_all = b->prev_all;
    e->seen_done = b->seen_done;
    e->pid = b->pid;
    e->wins = b->wins;
    e->ring_off = ((b->epoch >> 1) % HC_SEG_RING_SLOTS) * HC_SEG_RING_BYTES;
    e->base[HC_BUF_SEG] = b->half[e->rank];
    e->presence = b->presence;
}

static inline uint64_t *presence_word(const hc_exec_t *e, uint32_t q)
{
    return (uint64_t *)(e->half[q] + HC_SEG_PRESENCE);
}

/* The start of an operation with presence: say which CPU runs it. */
static void announce(hc_exec_t *e)
{
    const int cpu = sched_getcpu();
    e->cpu = cpu >= 0 ? cpu + 1 : -1;
    if (e->cpu > 0)
        __atomic_store_n(presence_word(e, e->rank), e->epoch << 32 | (uint64_t)e->cpu << 1,
                         __ATOMIC_RELAXED);
}

void hc_exec_set_yielding(hc_exec_t *e, int yielding)
{
    if (e->presence && e->cpu > 0 && e->half)
        __atomic_store_n(presence_word(e, e->rank),
                         e->epoch << 32 | (uint64_t)e->cpu << 1 | (yielding != 0),
                         __ATOMIC_RELAXED);
}

int hc_exec_awaits_running(const hc_exec_t *e)
{
    if (!e->s->spin_on_producer || !e->presence || e->cpu <= 0 || e->half == NULL ||
        e->nposted == 0 || e->status != HCCL_E_AGAIN)
        return 0;
    const int cpu = sched_getcpu();
    if (cpu < 0)
        return 0;
    for (uint32_t k = 0; k < e->nposted; k++) {
        const hc_step_t *t = &e->s->steps[e->posted[k]];
        if (t->kind != HC_STEP_WAIT || t->peer == HC_PEERS_ALL || t->peer == e->rank)
            return 0;
        const uint64_t p = __atomic_load_n(presence_word(e, t->peer), __ATOMIC_RELAXED);
        const uint64_t pcpu = (p >> 1) & 0x7fffffffu;
        if (p >> 32 != e->epoch || (p & 1) || pcpu == 0 || pcpu == (uint64_t)cpu + 1)
            return 0;
    }
    return 1;
}

/* The value a WAIT step waits for (flags: epoch << 32 | value; coll.h). */
static inline uint64_t wait_want(const hc_exec_t *e, const hc_step_t *t)
{
    if (t->ago && e->epoch < e->epoch0 + t->ago)
        return 0; /* an operation before the communicator's first */
    return (e->epoch - t->ago) << 32 | t->bytes;
}

static inline uint64_t flag_of(const hc_exec_t *e, uint32_t q, hc_loc_t l)
{
    return __atomic_load_n((const uint64_t *)(e->half[q] + loc_off(e, l)), __ATOMIC_ACQUIRE);
}

/* ---- Ranks that disagree --------------------------------------------
 * Every executor bound to arguments (hc_exec_set_args) stores them in its
 * half (coll.h HC_SEG_ARGS) before its first PUBLISH. When a WAIT of this
 * epoch on a peer's flag holds, the peer's words are there: a peer whose
 * collective, count, type, op or root differ from ours makes the
 * operation bad (HCCL_E_PARA, logged with both values). A bad operation
 * skips its local and single-copy steps and still publishes its flags,
 * so the peers running the same schedule finish it too, and see the same
 * difference. READ, WRITE and XREDUCE go further: they touch a peer's
 * buffers only when its words of this epoch match ours, and only within
 * the bytes it published; this is what keeps a rank's memory safe from a
 * peer that passed a larger count, whatever schedule either one runs. */

static uint64_t bytes_of(const hc_coll_args_t *a, int recv)
{
    const uint64_t n = a->nranks, c = a->count * a->esize;
    switch (a->coll) {
    case HC_COLL_ALLREDUCE:
    case HC_COLL_BROADCAST:
        return c;
    case HC_COLL_REDUCE:
        return recv && a->rank != a->root ? 0 : c;
    case HC_COLL_REDUCESCATTER:
        if (recv)
            return c;
        return a->scounts ? hc_v_end(a->scounts, a->sdispls, a->nranks) * a->esize : n * c;
    case HC_COLL_ALLGATHER:
        return recv ? n * c : c;
    case HC_COLL_SCATTER:
        return recv ? c : a->rank == a->root ? n * c : 0;
    case HC_COLL_ALLTOALL:
        return n * c;
    case HC_COLL_ALLTOALLV: {
        const uint64_t *cnt = recv ? a->rcounts : a->scounts, *dsp = recv ? a->rdispls : a->sdispls;
        return cnt && dsp ? hc_v_end(cnt, dsp, a->nranks) * a->esize : 0;
    }
    default:
        return 0;
    }
}

void hc_exec_set_args(hc_exec_t *e, const hc_coll_args_t *a)
{
    const int rooted = a->coll == HC_COLL_BROADCAST || a->coll == HC_COLL_REDUCE ||
                       a->coll == HC_COLL_SCATTER;
    const int reduces = a->coll == HC_COLL_ALLREDUCE || a->coll == HC_COLL_REDUCE ||
                        a->coll == HC_COLL_REDUCESCATTER;
    const uint64_t count = hc_args_v(a) ? 0 : a->count; /* ranks' counts differ */
    e->args[0] = e->epoch << 32 | (rooted ? a->root : 0);
    e->args[1] = (uint64_t)a->coll << 58 | (uint64_t)(a->dtype & 0x3f) << 52 |
                 (uint64_t)(reduces ? a->op & 0xf : 0) << 48 | (count & ((1ull << 48) - 1));
    e->args[2] = bytes_of(a, 0);
    e->args[3] = bytes_of(a, 1);
    e->has_args = 1;
}

/* Before the first PUBLISH: our words, the first one last (a peer that
 * reads it twice around the others knows they belong to it). */
static void publish_args(hc_exec_t *e)
{
    uint64_t *w = (uint64_t *)(e->base[HC_BUF_SEG] + HC_SEG_ARGS);
    e->args[0] = e->epoch << 32 | (e->args[0] & 0xffffffffu); /* bound after set_args */
    __atomic_store_n(&w[0], 0, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    for (int k = 1; k < 4; k++)
        __atomic_store_n(&w[k], e->args[k], __ATOMIC_RELAXED);
    __atomic_store_n(&w[0], e->args[0], __ATOMIC_RELEASE);
}

static const char *const coll_names[HC_COLL_LAST] = {
    "AllReduce", "Broadcast", "Reduce", "ReduceScatter", "AllGather",
    "Scatter",   "AlltoAll",  "AlltoAllV", "Barrier"};

/* Peer q's words of this epoch: 0 they match ours (w: them), 1 they differ
 * (logged; the operation is bad), -1 q has not published this epoch's. */
static int peer_args(hc_exec_t *e, uint32_t q, uint64_t w[4])
{
    const uint64_t *p = (const uint64_t *)(e->half[q] + HC_SEG_ARGS);
    w[0] = __atomic_load_n(&p[0], __ATOMIC_ACQUIRE);
    if (w[0] >> 32 != e->epoch)
        return -1;
    for (int k = 1; k < 4; k++)
        w[k] = __atomic_load_n(&p[k], __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&p[0], __ATOMIC_RELAXED) != w[0])
        return -1;
    if ((uint32_t)w[0] == (uint32_t)e->args[0] && w[1] == e->args[1])
        return 0;
    const uint64_t a = e->args[1], b = w[1], m48 = (1ull << 48) - 1;
    const char *what = a >> 58 != b >> 58                 ? "the collective"
                       : (a >> 52 & 0x3f) != (b >> 52 & 0x3f) ? "the data type"
                       : (a >> 48 & 0xf) != (b >> 48 & 0xf)   ? "the reduction op"
                       : (a & m48) != (b & m48)               ? "the count"
                                                              : "the root";
    if (!e->bad)
        HC_ERROR(HC_SUB_COLL, "%s: ranks disagree on %s: rank %u calls %s with count %llu, "
                 "type %s, op %s, root %u; rank %u calls %s with count %llu, type %s, op %s, "
                 "root %u (HCCL_E_PARA; neither touches the other's buffers)",
                 e->s->algo ? e->s->algo : "?", what, e->rank,
                 coll_names[(a >> 58) % HC_COLL_LAST], (unsigned long long)(a & m48),
                 hc_dtype_name((HcclDataType)(a >> 52 & 0x3f)),
                 hc_op_name((HcclReduceOp)(a >> 48 & 0xf)), (unsigned)(e->args[0] & 0xffffffffu),
                 q, coll_names[(b >> 58) % HC_COLL_LAST], (unsigned long long)(b & m48),
                 hc_dtype_name((HcclDataType)(b >> 52 & 0x3f)),
                 hc_op_name((HcclReduceOp)(b >> 48 & 0xf)), (unsigned)(w[0] & 0xffffffffu));
    e->bad = HCCL_E_PARA;
    return 1;
}

/* A WAIT of this epoch held: the peers it waited on have published their
 * arguments; compare them once per peer. */
static void waited(hc_exec_t *e, const hc_step_t *t)
{
    if (!e->has_args || t->ago || e->bad)
        return;
    uint64_t w[4];
    for (uint32_t q = t->peer == HC_PEERS_ALL ? 0 : t->peer;
         q < (t->peer == HC_PEERS_ALL ? e->nranks : t->peer + 1); q++) {
        if (q == e->rank || (q < 64 && (e->checked >> q & 1)))
            continue;
        const int r = peer_args(e, q, w);
        if (r == 0 && q < 64)
            e->checked |= 1ull << q;
        if (r > 0)
            return;
    }
}

/* May step i touch `bytes` at `off` of peer q's buffer buf (SEND or RECV)?
 * Only when q published this epoch's arguments, equal to ours, and the
 * range lies within what it published; otherwise the operation is bad. */
static int peer_range_ok(hc_exec_t *e, uint32_t i, uint32_t q, uint8_t buf, uint64_t off,
                         uint64_t bytes)
{
    if (e->bad)
        return 0;
    if (!e->has_args) /* executors without arguments: in-process tests */
        return 1;
    uint64_t w[4];
    const int r = peer_args(e, q, w);
    if (r > 0)
        return 0;
    if (r < 0) {
        HC_ERROR(HC_SUB_COLL, "%s step %u/%u: rank %u has not published this operation's "
                 "arguments (a different collective or algorithm?): its buffers are not "
                 "touched (HCCL_E_PARA)", e->s->algo ? e->s->algo : "?", i, e->s->nsteps, q);
        e->bad = HCCL_E_PARA;
        return 0;
    }
    const uint64_t have = w[buf == HC_BUF_RECV ? 3 : 2];
    if (off > have || bytes > have - off) {
        HC_ERROR(HC_SUB_COLL, "%s step %u/%u: %llu B at +%llu of rank %u's %s buffer, which "
                 "has %llu B: refused (HCCL_E_PARA)", e->s->algo ? e->s->algo : "?", i,
                 e->s->nsteps, (unsigned long long)bytes, (unsigned long long)off, q,
                 buf == HC_BUF_RECV ? "receive" : "send", (unsigned long long)have);
        e->bad = HCCL_E_PARA;
        return 0;
    }
    return 1;
}

/* A WAIT on every rank keeps the rank it is at in x->peer (so a dead
 * peer is named, and satisfied flags are not read again). */
HC_HOT static inline int wait_done(const hc_exec_t *e, const hc_step_t *t, hc_xfer_t *x)
{
    const int done_flags = t->a.off == HC_SEG_DONE && !t->a.ring && t->peer == HC_PEERS_ALL;
    /* every rank was past e-2 when our previous operation saw its flag */
    if (done_flags && t->ago == 2 && e->prev_all && *e->prev_all)
        return 1;
    /* every rank is known to be past e - ago already */
    if (done_flags && e->seen_done && e->epoch >= t->ago &&
        __atomic_load_n(e->seen_done, __ATOMIC_RELAXED) >= e->epoch - t->ago)
        return 1;
    const uint64_t want = wait_want(e, t);
    uint32_t q = t->peer;
    if (q != HC_PEERS_ALL) {
        /* the data behind the flag: in flight with it rather than after it */
        for (uint32_t j = 0; j < t->tag; j++)
            __builtin_prefetch(e->half[q] + loc_off(e, t->dst) + 64 * (uint64_t)j);
        if (flag_of(e, q, t->a) >= want)
            return 1;
        hc_wait_note_flag(e->half[q]);
        return 0;
    }
    for (q = x->peer; q < e->nranks; q++) {
        if (q == e->rank)
            continue;
        for (uint32_t j = 0; j < t->tag; j++)
            __builtin_prefetch(e->half[q] + loc_off(e, t->dst) + 64 * (uint64_t)j);
        if (flag_of(e, q, t->a) < want) {
            x->peer = q;
            hc_wait_note_flag(e->half[q]);
            return 0;
        }
    }
    if (done_flags && e->seen_done) {
        /* remember how far every rank is (a completion flag holds the last
         * epoch of its parity the rank finished; they finish in order) */
        uint64_t least = UINT64_MAX;
        for (q = 0; q < e->nranks; q++)
            if (q != e->rank) {
                const uint64_t f = flag_of(e, q, t->a) >> 32;
                least = f < least ? f : least;
            }
        if (least != UINT64_MAX && least > __atomic_load_n(e->seen_done, __ATOMIC_RELAXED))
            __atomic_store_n(e->seen_done, least, __ATOMIC_RELAXED);
    }
    return 1;
}

/* A destination in RECV of at least HC_COLD_MIN bytes (cold.h): the first
 * HC_COLD_SAMPLE bytes go with ordinary stores, timed; if they were slow
 * (lines another core holds), the rest goes with non-temporal stores.
 * cold_split returns the bytes to write ordinarily first (all, the sample,
 * or none: a schedule with nt_recv streams all of it, no sample);
 * cold_streams, after them, whether the rest streams. */
static size_t cold_split(const hc_exec_t *e, const hc_step_t *t, uint64_t *t0)
{
    if (t->dst.buf != HC_BUF_RECV || t->bytes < HC_COLD_MIN)
        return t->bytes;
    if (e->s->nt_recv)
        return 0;
    if (e->s->recv_end > HC_COLD_MAX_RECV)
        return t->bytes;
    *t0 = hc_tsc();
    return HC_COLD_SAMPLE;
}

static int cold_streams(hc_exec_t *e, uint64_t t0, size_t head)
{
    if (!e->s->nt_recv && !hc_lines_slow(hc_tsc() - t0, head))
        return 0;
    e->nt_stores = 1; /* the next PUBLISH fences */
    return 1;
}

/* One pass over memory, in batches of at most 64 sources on the stack:
 * dst = (dst op ...) continues the same left fold. */
HC_HOT static void reduce_multi(hc_exec_t *e, const hc_step_t *t)
{
    enum { BATCH = 64 };
    const void *src[BATCH];
    const hc_loc_t *l = e->s->srcs + t->src_off;
    char *dst = ptr(e, t->dst);
    const size_t es = e->s->esize, count = t->bytes / es;
    const uint32_t n = t->nsrc ? t->nsrc : e->nranks; /* 0: one source per rank */
    uint32_t i = 0;
    while (i < n) {
        uint32_t k = 0;
        if (i)
            src[k++] = dst;
        for (; k < BATCH && i < n; i++)
            src[k++] = t->nsrc ? ptr(e, l[i]) : i == e->rank ? ptr(e, t->b)
                                                               : e->half[i] + t->a.off;
        uint64_t t0 = 0;
        const size_t head = k == n ? cold_split(e, t, &t0) / es : count;
        hc_reduce_multi(dst, src, k, head, e->dtype, e->op);
        if (head < count) { /* one batch, sampled */
            for (uint32_t j = 0; j < k; j++)
                src[j] = (const char *)src[j] + head * es;
            (cold_streams(e, t0, head * es) ? hc_reduce_multi_nt : hc_reduce_multi)(
                dst + head * es, src, k, count - head, e->dtype, e->op);
        }
    }
}

/* a whole tiny message goes through hc_copy_lines */
_Static_assert(HC_COPY_LINES_MAX >= HC_SHM_TINY_MAX, "HC_COPY_LINES_MAX below HC_SHM_TINY_MAX");

HC_HOT static void run_local(hc_exec_t *e, const hc_step_t *t)
{
    switch (t->kind) {
    case HC_STEP_REDUCE:
        hc_reduce(ptr(e, t->dst), ptr(e, t->a), ptr(e, t->b), t->bytes / e->s->esize,
                  e->dtype, e->op);
        break;
    case HC_STEP_COPY: {
        char *d = ptr(e, t->dst), *src = ptr(e, t->a);
        if (d == src || t->bytes == 0)
            break;
        /* a small message others poll for (not a Broadcast ring entry,
         * whose flag shares the first line: there it was slower, 128 B
         * 0.71-0.73 against 0.65-0.68 us) */
        if (t->dst.buf == HC_BUF_SEG && !t->dst.ring && t->bytes <= HC_COPY_LINES_MAX) {
            hc_copy_lines(d, src, t->bytes);
            break;
        }
        uint64_t t0 = 0;
        /* streaming needs ranges apart (RECV to RECV copies may overlap) */
        const size_t head = d + t->bytes <= src || src + t->bytes <= d ? cold_split(e, t, &t0)
                                                                        : t->bytes;
        hc_copy(d, src, head);
        if (head < t->bytes)
            (cold_streams(e, t0, head) ? hc_copy_nt : hc_copy)(d + head, src + head,
                                                               t->bytes - head);
        e->nt_stores |= t->bytes >= HC_NT_COPY_MIN;
        break;
    }
    case HC_STEP_REDUCE_MULTI:
        if (t->bytes)
            reduce_multi(e, t);
        break;
    default:
        break;
    }
}

/* HC_STEP_READ and HC_STEP_WRITE: the peer's buffers, at the addresses it
 * stored in its half (coll.h, HC_SEG_ADDR), copied by the kernel from or
 * into its process. A peer that died or a kernel that refuses (ptrace
 * rules) fails the step. */
static int cross_copy(hc_exec_t *e, uint32_t i, const hc_step_t *t)
{
    const int rd = t->kind == HC_STEP_READ;
    const hc_loc_t theirs = rd ? t->a : t->dst;
    const uint64_t *ad = (const uint64_t *)(e->half[t->peer] + HC_SEG_ADDR);
    if (!peer_range_ok(e, i, t->peer, theirs.buf, theirs.off, t->bytes))
        return HCCL_SUCCESS; /* the operation is bad: its flags go on */
    const uint64_t rb = __atomic_load_n(&ad[theirs.buf == HC_BUF_RECV], __ATOMIC_RELAXED);
    char *mine = ptr(e, rd ? t->dst : t->a);
    /* the peer's range registered and mapped here (src/transport/mover.h): a copy */
    char *m = hc_mover_map(e->wins, t->peer, rb + theirs.off, t->bytes);
    if (m) {
        const int nt = e->s->nt_recv && t->bytes >= HC_COLD_MIN;
        (nt ? hc_copy_nt : hc_copy)(rd ? mine : m, rd ? m : mine, t->bytes);
        e->nt_stores |= nt;
        return HCCL_SUCCESS;
    }
    uint64_t done;
    const int err = hc_mover_cma(e->pid ? e->pid[t->peer] : 0, rd, mine, rb + theirs.off,
                                 t->bytes, &done);
    if (err) {
        HC_ERROR(HC_SUB_COLL, "%s step %u/%u: %s of %llu B %s rank %u (pid %d) failed after "
                 "%llu B: %s", e->s->algo ? e->s->algo : "?", i, e->s->nsteps, kind_name[t->kind],
                 (unsigned long long)t->bytes, rd ? "from" : "to", t->peer,
                 e->pid ? (int)e->pid[t->peer] : -1, (unsigned long long)done, strerror(err));
        return err == ESRCH ? HCCL_E_REMOTE : HCCL_E_SYSCALL;
    }
    return HCCL_SUCCESS;
}

/* HC_STEP_XREDUCE (coll.h). Both of the peer's buffers mapped here
 * (registered: src/features/window.h): with the rule's option nt, one pass that
 * reads both operands and streams the result into our RECV and the
 * peer's (hc_reduce2_nt: no read for ownership, no scratch; through a
 * 16 KiB scratch it was 25-35% slower at 32-128 MiB, docs/PERFORMANCE.md
 * "Registered buffers"); without, XREDUCE_PIECE bytes at a time folded
 * into our RECV and copied from there, still in cache, into the peer's.
 * Else the single-copy steps: READ the peer's operand (into dst, in place
 * into TMP), fold into dst, WRITE dst into the peer. With tag
 * HC_XREDUCE_OWN only our dst is written (ReduceScatter). */
#define XREDUCE_PIECE (16u << 10)
static int xreduce(hc_exec_t *e, uint32_t i, const hc_step_t *t)
{
    const int both = t->tag != HC_XREDUCE_OWN;
    if (!peer_range_ok(e, i, t->peer, HC_BUF_SEND, t->b.off, t->bytes) ||
        (both && !peer_range_ok(e, i, t->peer, HC_BUF_RECV, t->dst.off, t->bytes)))
        return HCCL_SUCCESS; /* the operation is bad: its flags go on */
    const uint64_t *ad = (const uint64_t *)(e->half[t->peer] + HC_SEG_ADDR);
    const uint64_t ps = __atomic_load_n(&ad[0], __ATOMIC_RELAXED) + t->b.off;
    const uint64_t pr = __atomic_load_n(&ad[1], __ATOMIC_RELAXED) + t->dst.off;
    const char *theirs = hc_mover_map(e->wins, t->peer, ps, t->bytes);
    char *out = both ? hc_mover_map(e->wins, t->peer, pr, t->bytes) : NULL;
    char *dst = ptr(e, t->dst);
    const char *own = ptr(e, t->a);
    const size_t es = e->s->esize;
    const int first = e->rank < t->peer; /* ours is the first operand */
    if (theirs && !both) {
        if (e->s->nt_recv && t->bytes >= HC_COLD_MIN) {
            const void *src[2] = {first ? own : theirs, first ? theirs : own};
            hc_reduce_multi_nt(dst, src, 2, t->bytes / es, e->dtype, e->op);
            e->nt_stores = 1;
        } else {
            hc_reduce(dst, first ? own : theirs, first ? theirs : own, t->bytes / es, e->dtype,
                      e->op);
        }
        return HCCL_SUCCESS;
    }
    if (theirs && out) {
        if (e->s->nt_recv) {
            hc_reduce2_nt(dst, out, first ? own : theirs, first ? theirs : own, t->bytes / es,
                          e->dtype, e->op);
            e->nt_stores = 1;
            return HCCL_SUCCESS;
        }
        for (uint64_t o = 0; o < t->bytes; o += XREDUCE_PIECE) {
            const uint64_t len = t->bytes - o < XREDUCE_PIECE ? t->bytes - o : XREDUCE_PIECE;
            hc_reduce(dst + o, first ? own + o : theirs + o, first ? theirs + o : own + o,
                      len / es, e->dtype, e->op);
            hc_copy(out + o, dst + o, len);
        }
        return HCCL_SUCCESS;
    }
    const int in_place = own == dst;
    const hc_loc_t land = in_place ? HC_TMP(0) : t->dst;
    hc_step_t r = {.kind = HC_STEP_READ, .peer = t->peer, .dst = land, .a = t->b,
                   .bytes = t->bytes};
    int rc = cross_copy(e, i, &r);
    if (rc != HCCL_SUCCESS || e->bad)
        return rc;
    const char *got = ptr(e, land);
    hc_reduce(dst, first ? own : got, first ? got : own, t->bytes / es, e->dtype, e->op);
    if (!both)
        return HCCL_SUCCESS;
    hc_step_t w = {.kind = HC_STEP_WRITE, .peer = t->peer, .dst = t->dst, .a = t->dst,
                   .bytes = t->bytes};
    return cross_copy(e, i, &w);
}

static inline int is_user(hc_loc_t l)
{
    return l.buf == HC_BUF_SEND || l.buf == HC_BUF_RECV;
}

/* The operands a local step reads or writes, by kind (REDUCE_MULTI's
 * per-rank form: dst and own (b); its list form is refused by
 * hc_exec_set_iov when the list names SEND or RECV). */
static int touches_user(const hc_step_t *t)
{
    switch (t->kind) {
    case HC_STEP_COPY:
        return is_user(t->dst) || is_user(t->a);
    case HC_STEP_REDUCE:
        return is_user(t->dst) || is_user(t->a) || is_user(t->b);
    case HC_STEP_REDUCE_MULTI:
        return is_user(t->dst) || (t->nsrc == 0 && is_user(t->b));
    case HC_STEP_READ:
    case HC_STEP_WRITE:
    case HC_STEP_XREDUCE:
        return 1;
    default:
        return 0;
    }
}

/* The logical offset of a step's user operands (hc_exec_set_iov checked
 * that they agree). */
static uint64_t user_off(const hc_step_t *t)
{
    if (is_user(t->dst))
        return t->dst.off;
    if (is_user(t->a) && t->kind != HC_STEP_REDUCE_MULTI)
        return t->a.off;
    return t->b.off;
}

/* A local step over a scatter/gather list: cut where a segment ends, and
 * run each piece with SEND and RECV rebased on its segment. Every operand
 * (staging ones too) advances by the same number of bytes. */
static void run_local_iov(hc_exec_t *e, const hc_step_t *t)
{
    const uint64_t u0 = user_off(t);
    char *const sb = e->base[HC_BUF_SEND], *const rb = e->base[HC_BUF_RECV];
    uint32_t lo = 0, hi = e->niov; /* the segment holding u0 */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (e->iov[mid].off <= u0)
            lo = mid;
        else
            hi = mid;
    }
    for (uint64_t done = 0; done < t->bytes; lo++) {
        const hc_iov_t *v = &e->iov[lo];
        const uint64_t at = u0 + done;
        uint64_t len = v->off + v->bytes - at;
        if (len > t->bytes - done)
            len = t->bytes - done;
        /* base + at lands at send + (at - off) */
        e->base[HC_BUF_SEND] = (char *)((uintptr_t)v->send - (uintptr_t)v->off);
        e->base[HC_BUF_RECV] = (char *)((uintptr_t)v->recv - (uintptr_t)v->off);
        hc_step_t p = *t;
        p.bytes = len;
        p.dst.off += done;
        p.a.off += done;
        p.b.off += done;
        run_local(e, &p);
        done += len;
    }
    e->base[HC_BUF_SEND] = sb;
    e->base[HC_BUF_RECV] = rb;
}

int hc_exec_set_iov(hc_exec_t *e, const hc_iov_t *iov, uint32_t niov)
{
    const hc_sched_t *s = e->s;
    if (s->nmsgs)
        return HCCL_E_NOT_SUPPORT;
    uint64_t total = 0;
    for (uint32_t i = 0; i < niov; i++) {
        if (iov[i].off != total || iov[i].bytes % s->esize)
            return HCCL_E_NOT_SUPPORT;
        total += iov[i].bytes;
    }
    for (uint32_t i = 0; i < s->nsteps; i++) {
        const hc_step_t *t = &s->steps[i];
        if (t->kind == HC_STEP_SEND || t->kind == HC_STEP_RECV || t->kind == HC_STEP_READ ||
            t->kind == HC_STEP_WRITE || t->kind == HC_STEP_XREDUCE)
            return HCCL_E_NOT_SUPPORT;
        if (t->kind == HC_STEP_REDUCE_MULTI && t->nsrc) {
            /* the list form's sources are not cut into pieces */
            const hc_loc_t *l = s->srcs + t->src_off;
            if (is_user(t->dst))
                return HCCL_E_NOT_SUPPORT;
            for (uint32_t j = 0; j < t->nsrc; j++)
                if (is_user(l[j]))
                    return HCCL_E_NOT_SUPPORT;
        }
        if (!touches_user(t))
            continue;
        const uint64_t u = user_off(t);
        hc_loc_t ops[3] = {t->dst, t->a, t->b};
        int nops = t->kind == HC_STEP_COPY ? 2 : 3;
        for (int j = 0; j < nops; j++) {
            if (t->kind == HC_STEP_REDUCE_MULTI && j == 1)
                continue; /* a: the peers' staging offset */
            if (is_user(ops[j]) && ops[j].off != u)
                return HCCL_E_NOT_SUPPORT;
        }
        if (u + t->bytes > total)
            return HCCL_E_NOT_SUPPORT;
    }
    e->iov = iov;
    e->niov = niov;
    return HCCL_SUCCESS;
}

void hc_exec_resume_at(hc_exec_t *e, uint32_t i)
{
    for (uint32_t k = 0; k < i; k++)
        e->st[k] = HC_ST_DONE;
    e->ndone = e->nissued = e->lo = i;
    if (!e->s->branched)
        return; /* run_chain starts at e->lo */
    /* the dependency index without steps 0 .. i-1: what is ready now */
    for (uint32_t k = 0; k < i; k++)
        for (uint32_t d = e->rdep_off[k]; d < e->rdep_off[k + 1]; d++)
            e->npend[e->rdep[d]]--;
    e->rhead = e->rtail = 0;
    for (uint32_t j = i; j < e->s->nsteps; j++)
        if (e->npend[j] == 0)
            e->ready[e->rtail++] = j;
}

/* Step i is done: release its dependents. */
HC_HOT static void complete(hc_exec_t *e, uint32_t i)
{
    e->st[i] = HC_ST_DONE;
    if (e->trace)
        hc_trace_step(e->trace, i, &e->s->steps[i], HC_TRACE_STEP_DONE);
    e->ndone++;
    for (uint32_t k = e->rdep_off[i]; k < e->rdep_off[i + 1]; k++) {
        uint32_t j = e->rdep[k];
        if (--e->npend[j] != 0)
            continue;
        /* A flag step goes ahead of the steps already queued, into a slot
         * already consumed: a PUBLISH right after its copy, not one chunk
         * later, or a two-slot pipeline falls into lockstep
         * (docs/PERFORMANCE.md, "Publish before the next copy"). Sends and
         * receives keep their order: messages of one tag match in the
         * order they were posted. */
        const uint8_t kd = e->s->steps[j].kind;
        if (e->rhead > 0 && (kd == HC_STEP_PUBLISH || kd == HC_STEP_WAIT))
            e->ready[--e->rhead] = j;
        else
            e->ready[e->rtail++] = j;
    }
}

/* After a flag store in our half: wake the peers asleep on its bell
 * (src/exec/wait.h); a load of a line nobody writes while nobody sleeps. */
static inline void ring(char *half)
{
    uint32_t *bell = (uint32_t *)(half + HC_SEG_WAKE);
    if (__builtin_expect(__atomic_load_n(&bell[1], __ATOMIC_SEQ_CST) != 0, 0))
        hc_wake_bell(bell);
}

/* PUBLISH step i: its flag, with this epoch, after everything before it. */
HC_HOT static int publish(hc_exec_t *e, uint32_t i, const hc_step_t *t)
{
    /* release: everything this step depends on is visible first */
    uint64_t *f = (uint64_t *)ptr(e, t->dst), v = e->epoch << 32 | t->bytes;
    if (*f > v) { /* flags only grow: publishes of one flag out of order */
        HC_ERROR(HC_SUB_COLL, "%s step %u/%u: PUBLISH %#llx after %#llx (schedule bug)",
                 e->s->algo ? e->s->algo : "?", i, e->s->nsteps, (unsigned long long)v,
                 (unsigned long long)*f);
        return HCCL_E_INTERNAL;
    }
#if defined(__x86_64__) || defined(__i386__)
    /* a large memmove may have used non-temporal stores, which a
     * release store does not order; a fence on every publish would
     * put each store's cache miss on the critical path instead */
    if (e->nt_stores)
        __builtin_ia32_sfence();
    e->nt_stores = 0;
#endif
    /* sequentially consistent: ordered before the read of the bell's
     * sleepers (ring, src/exec/wait.h) */
    __atomic_store_n(f, v, __ATOMIC_SEQ_CST);
    ring(e->base[HC_BUF_SEG]);
    return HCCL_SUCCESS;
}

/* Start step i: post a transfer (or a WAIT that is not satisfied yet:
 * e->st[i] is then HC_ST_POSTED), or run a local step to completion. */
HC_HOT static int start_step(hc_exec_t *e, uint32_t i)
{
    const hc_step_t *t = &e->s->steps[i];
    hc_xfer_t *x = &e->x[i];
    int rc;
    e->nissued++;
    if (e->trace)
        hc_trace_step(e->trace, i, t, HC_TRACE_STEP_START);
    switch (t->kind) {
    case HC_STEP_SEND:
        x->status = HCCL_E_AGAIN;
        x->peer = t->peer;
        rc = e->tp->isend(e->tp_ctx, t->peer, ptr(e, t->a), t->bytes,
                          hc_tag_make(e->rank, e->comm_id, e->seq, t->tag), x);
        if (rc != HCCL_SUCCESS)
            return rc;
        e->bytes_sent += t->bytes;
        e->st[i] = HC_ST_POSTED;
        return HCCL_SUCCESS;
    case HC_STEP_RECV:
        x->status = HCCL_E_AGAIN;
        x->peer = t->peer;
        rc = e->tp->irecv(e->tp_ctx, t->peer, ptr(e, t->dst), t->bytes,
                          hc_tag_make(t->peer, e->comm_id, e->seq, t->tag), x);
        if (rc != HCCL_SUCCESS)
            return rc;
        e->st[i] = HC_ST_POSTED;
        return HCCL_SUCCESS;
    case HC_STEP_REDUCE:
    case HC_STEP_COPY:
    case HC_STEP_REDUCE_MULTI:
        if (e->bad)
            break; /* a peer disagreed: no data moves, flags go on */
        if (e->iov && touches_user(t))
            run_local_iov(e, t);
        else
            run_local(e, t);
        break;
    case HC_STEP_PUBLISH:
        rc = publish(e, i, t);
        if (rc != HCCL_SUCCESS)
            return rc;
        break;
    case HC_STEP_READ:
    case HC_STEP_WRITE:
        rc = cross_copy(e, i, t);
        if (rc != HCCL_SUCCESS)
            return rc;
        break;
    case HC_STEP_XREDUCE:
        rc = xreduce(e, i, t);
        if (rc != HCCL_SUCCESS)
            return rc;
        break;
    case HC_STEP_WAIT:
        x->req = NULL;
        x->peer = t->peer == HC_PEERS_ALL ? 0 : t->peer;
        if (!wait_done(e, t, x)) {
            x->status = HCCL_E_AGAIN;
            e->st[i] = HC_ST_POSTED; /* polled with the transfers */
        } else {
            waited(e, t);
        }
        break;
    default:
        break;
    }
    return HCCL_SUCCESS;
}

/* Start step i; a step that ran to completion releases its dependents. */
static int issue(hc_exec_t *e, uint32_t i)
{
    int rc = start_step(e, i);
    if (rc == HCCL_SUCCESS && e->st[i] != HC_ST_POSTED)
        complete(e, i);
    return rc;
}

static void step_failed(hc_exec_t *e, uint32_t i, int rc)
{
    const hc_sched_t *s = e->s;
    HC_ERROR(HC_SUB_COLL, "%s step %u/%u: posting %s to peer %u failed: %d",
             s->algo ? s->algo : "?", i, s->nsteps, kind_name[s->steps[i].kind],
             s->steps[i].peer, rc);
    hc_exec_cancel(e, rc);
}

/* Every step is done. */
HC_HOT static int finish(hc_exec_t *e)
{
    e->status = e->bad ? e->bad : HCCL_SUCCESS;
#if defined(__x86_64__) || defined(__i386__)
    /* RECV written with non-temporal stores after the last PUBLISH:
     * complete before the caller tells anyone (or a peer reads it) */
    if (e->nt_stores)
        __builtin_ia32_sfence();
    e->nt_stores = 0;
#endif
    /* completion flag: this rank no longer reads any peer's half */
    if (e->half) {
        __atomic_store_n((uint64_t *)e->base[HC_BUF_SEG], e->epoch << 32, __ATOMIC_SEQ_CST);
        ring(e->base[HC_BUF_SEG]);
    }
    return e->status;
}

HC_HOT void hc_exec_inline_init(hc_exec_t *e, const hc_sched_t *s, void *const bufs[HC_NBUFS],
                                uint32_t rank, HcclDataType dtype, HcclReduceOp op)
{
    e->s = s;
    for (int i = 0; i < HC_NBUFS; i++)
        e->base[i] = bufs[i];
    e->rank = rank;
    e->dtype = dtype;
    e->op = op == HCCL_REDUCE_AVG ? HCCL_REDUCE_SUM : op;
    e->status = HCCL_E_AGAIN;
    e->nt_stores = 0;
    e->iov = NULL;
    e->trace = NULL;
    e->has_args = 0; /* the fast lane publishes no arguments (coll.h HC_SEG_ARGS) */
    e->bad = 0;
}

/* Steps in index order (a topological order: a step depends only on
 * steps before it); a WAIT polled at most `polls` times. */
HC_HOT uint32_t hc_exec_inline_run(hc_exec_t *e, unsigned polls)
{
    const hc_sched_t *s = e->s;
    for (uint32_t i = 0; i < s->nsteps; i++) {
        const hc_step_t *t = &s->steps[i];
        switch (t->kind) {
        case HC_STEP_WAIT: {
            hc_xfer_t x = {.peer = t->peer == HC_PEERS_ALL ? 0 : t->peer};
            for (unsigned k = 1; !wait_done(e, t, &x); k++)
                if (k >= polls)
                    return i;
            break;
        }
        case HC_STEP_PUBLISH:
            e->status = publish(e, i, t);
            if (e->status != HCCL_SUCCESS)
                return UINT32_MAX;
            break;
        default: /* COPY, REDUCE, REDUCE_MULTI (hc_sched_t.fast) */
            run_local(e, t);
            break;
        }
    }
    finish(e);
    return s->nsteps;
}

/* A schedule that is a chain (every step depends on the one before it, no
 * messages: coll.h, hc_sched_t.branched) can only run in step order, one
 * step at a time, which is what this does without the dependency index,
 * the ready list and the posted list of the general loop below (that
 * bookkeeping was more than half of the executor's instructions in a tiny
 * AllReduce: docs/PERFORMANCE.md, "Chains and the tiny call").
 * e->lo is the next step; a WAIT not yet satisfied stays there, posted
 * (e->posted[0]), so cancel and describe see it as in the general case. */
HC_HOT static int run_chain(hc_exec_t *e)
{
    const hc_sched_t *s = e->s;
    for (uint32_t i = e->lo; i < s->nsteps; i++) {
        if (e->nposted) { /* step i is the WAIT we stopped at */
            if (!wait_done(e, &s->steps[i], &e->x[i]))
                return e->status;
            waited(e, &s->steps[i]);
            e->nposted = 0;
            e->x[i].status = HCCL_SUCCESS;
        } else {
            int rc = start_step(e, i);
            if (rc != HCCL_SUCCESS) {
                step_failed(e, i, rc);
                return e->status;
            }
            if (e->st[i] == HC_ST_POSTED) {
                e->lo = i;
                e->posted[0] = i;
                e->nposted = 1;
                return e->status;
            }
        }
        e->st[i] = HC_ST_DONE;
        if (e->trace)
            hc_trace_step(e->trace, i, &s->steps[i], HC_TRACE_STEP_DONE);
        e->ndone++;
    }
    e->lo = s->nsteps;
    return finish(e);
}

HC_HOT int hc_exec_progress(hc_exec_t *e)
{
    if (e->status != HCCL_E_AGAIN)
        return e->status;
    const hc_sched_t *s = e->s;
    if (s->seg_bytes && e->half == NULL) {
        HC_ERROR(HC_SUB_COLL, "%s: the schedule uses shared staging but none is bound",
                 s->algo ? s->algo : "?");
        e->status = HCCL_E_INTERNAL;
        return e->status;
    }
    /* a previous operation of the communicator still uses the staging */
    if (e->gate && e->nissued == 0 && __atomic_load_n(e->gate, __ATOMIC_ACQUIRE) + 1 < e->epoch)
        return e->status;
    if (e->presence && e->cpu == 0 && e->half)
        announce(e);
    if (s->exposes && e->nissued == 0 && e->half) { /* before any PUBLISH (coll.h) */
        uint64_t *ad = (uint64_t *)(e->base[HC_BUF_SEG] + HC_SEG_ADDR);
        ad[0] = (uintptr_t)e->base[HC_BUF_SEND];
        ad[1] = (uintptr_t)e->base[HC_BUF_RECV];
    }
    if (e->has_args && e->nissued == 0 && e->half)
        publish_args(e);
    if (!s->branched)
        return run_chain(e);
    /* collect finished transfers and flags */
    for (uint32_t k = 0; k < e->nposted;) {
        const uint32_t i = e->posted[k];
        int xs = e->x[i].status;
        if (xs == HCCL_E_AGAIN && s->steps[i].kind == HC_STEP_WAIT &&
            wait_done(e, &s->steps[i], &e->x[i])) {
            xs = e->x[i].status = HCCL_SUCCESS;
            waited(e, &s->steps[i]);
        }
        if (xs == HCCL_E_AGAIN) {
            if (s->steps[i].kind != HC_STEP_WAIT)
                hc_wait_note_net();
            k++;
            continue;
        }
        e->posted[k] = e->posted[--e->nposted];
        if (xs != HCCL_SUCCESS) {
            const hc_step_t *t = &s->steps[i];
            HC_ERROR(HC_SUB_COLL, "%s step %u/%u %s peer %u failed: %d (%s)",
                     s->algo ? s->algo : "?", i, s->nsteps, kind_name[t->kind], t->peer, xs,
                     HcclGetErrorString(xs));
            hc_exec_cancel(e, xs);
            return e->status;
        }
        complete(e, i);
    }
    /* start what is ready (local steps complete at once, releasing more) */
    while (e->rhead != e->rtail) {
        const uint32_t i = e->ready[e->rhead++];
        int rc = issue(e, i);
        if (rc != HCCL_SUCCESS) {
            step_failed(e, i, rc);
            return e->status;
        }
        if (e->st[i] == HC_ST_POSTED) {
            if (e->x[i].status == HCCL_SUCCESS) /* completed inline */
                complete(e, i);
            else
                e->posted[e->nposted++] = i;
        }
    }
    while (e->lo < s->nsteps && e->st[e->lo] == HC_ST_DONE)
        e->lo++;
    if (e->ndone == s->nsteps)
        return finish(e);
    return e->status;
}

void hc_exec_cancel(hc_exec_t *e, int rc)
{
    if (e->status != HCCL_E_AGAIN)
        return;
    for (uint32_t k = 0; k < e->nposted; k++) {
        hc_xfer_t *x = &e->x[e->posted[k]];
        if (e->s->steps[e->posted[k]].kind == HC_STEP_WAIT)
            x->status = rc; /* nothing to cancel: a flag it polled */
        else if (x->status == HCCL_E_AGAIN)
            e->tp->cancel(e->tp_ctx, x);
    }
    e->nposted = 0;
    e->status = rc;
}

void hc_exec_fini(hc_exec_t *e)
{
    if (e->ws_owned)
        free(e->ws);
    e->ws = NULL;
    e->ws_owned = 0;
}

int hc_exec_describe_wait(const hc_exec_t *e, char *buf, size_t len, uint32_t *peer)
{
    const hc_sched_t *s = e->s;
    int first_wait = -1;
    for (uint32_t i = e->lo; i < s->nsteps; i++) {
        if (e->st[i] == HC_ST_POSTED) {
            const hc_step_t *t = &s->steps[i];
            if (t->kind == HC_STEP_WAIT) {
                const uint32_t q = e->x[i].peer; /* for HC_PEERS_ALL: where it is */
                snprintf(buf, len, "step %u/%u WAIT for rank %u's flag at +%llu to reach "
                         "%#llx (it is %#llx)%s", i, s->nsteps, q,
                         (unsigned long long)t->a.off, (unsigned long long)wait_want(e, t),
                         (unsigned long long)flag_of(e, q, t->a),
                         t->peer == HC_PEERS_ALL ? ", waiting on every rank" : "");
                if (peer)
                    *peer = q;
                return (int)i;
            }
            else
                snprintf(buf, len, "step %u/%u %s %s rank %u (tag %u, %llu B)", i, s->nsteps,
                         kind_name[t->kind], t->kind == HC_STEP_SEND ? "to" : "from", t->peer,
                         t->tag, (unsigned long long)t->bytes);
            if (peer)
                *peer = t->peer;
            return (int)i;
        }
        if (e->st[i] == HC_ST_WAIT && first_wait < 0)
            first_wait = (int)i;
    }
    if (first_wait >= 0) {
        snprintf(buf, len, "step %d/%u %s (waiting for its dependencies)", first_wait,
                 s->nsteps, kind_name[s->steps[first_wait].kind]);
        return first_wait;
    }
    snprintf(buf, len, "nothing");
    return -1;
}
