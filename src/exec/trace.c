/* src/exec/trace.c - the timeline recorder and its Chrome trace writer (see trace.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "trace.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "src/base/log.h"

/* One event. `aux`: OP_BEGIN the enqueue time, OP_END the result, STEP the
 * peer, SPAN its start time. */
typedef struct {
    uint64_t t;
    uint64_t op;
    uint64_t bytes;
    uint64_t aux;
    const char *name;
    const char *algo;
    uint32_t comm_seq; /* comm id << 8 | seq */
    uint32_t stream;
    uint32_t idx;      /* step index */
    uint8_t type;
    uint8_t kind;      /* step kind */
    uint16_t thread;   /* filled by the writer */
} rec_t;

enum { R_OP_BEGIN = 1, R_OP_END, R_STEP_START, R_STEP_DONE, R_SPAN };

typedef struct tbuf {
    rec_t *r;
    volatile uint64_t n; /* records written (the ring keeps the last HC_TRACE_RING) */
    int index;           /* 1, 2, ... in order of first use */
    char name[40];
    struct tbuf *next;
} tbuf_t;

int hc_trace_on;
static char g_path[HC_ENV_PATH_MAX];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static tbuf_t *g_bufs;
static int g_nbufs;
static int g_rank = -1;
static uint64_t g_next_op = 1;
static uint64_t g_flushed_n = UINT64_MAX; /* total records at the last flush */
static __thread tbuf_t *t_buf;
static __thread char t_name[40];

/* ---- clock -------------------------------------------------------------
 * Records carry raw TSC values where the TSC runs at a constant rate (12 ns
 * per read here against 28 ns for clock_gettime); the writer maps them to
 * CLOCK_REALTIME through two anchors (setup and flush). */
static int g_use_tsc;
static uint64_t g_tsc0;
static double g_mono0, g_real0; /* ns */

static double clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int tsc_is_constant(void)
{
#if defined(__x86_64__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return 0;
    char line[4096];
    int ok = 0;
    while (!ok && fgets(line, sizeof(line), f))
        if (strncmp(line, "flags", 5) == 0)
            ok = strstr(line, " constant_tsc") != NULL && strstr(line, " nonstop_tsc") != NULL;
    fclose(f);
    return ok;
#else
    return 0;
#endif
}

uint64_t hc_trace_now(void)
{
#if defined(__x86_64__)
    if (g_use_tsc)
        return __rdtsc();
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- recording ------------------------------------------------------- */

static void flush_at_exit(void)
{
    hc_trace_flush();
}

void hc_trace_setup(const hc_config_t *env)
{
    pthread_mutex_lock(&g_lock);
    static int done;
    if (!done) {
        done = 1;
        if (env->trace_file[0]) {
            snprintf(g_path, sizeof(g_path), "%s", env->trace_file);
            g_use_tsc = tsc_is_constant();
            g_mono0 = clock_ns(CLOCK_MONOTONIC);
            g_real0 = clock_ns(CLOCK_REALTIME);
#if defined(__x86_64__)
            g_tsc0 = g_use_tsc ? __rdtsc() : 0;
#endif
            atexit(flush_at_exit);
            __atomic_store_n(&hc_trace_on, 1, __ATOMIC_RELEASE);
            HC_INFO(HC_SUB_STREAM, "tracing to %s (clock: %s)", g_path,
                    g_use_tsc ? "TSC" : "CLOCK_MONOTONIC");
        }
    }
    pthread_mutex_unlock(&g_lock);
}

void hc_trace_set_rank(int rank)
{
    pthread_mutex_lock(&g_lock);
    if (g_rank < 0 && rank >= 0)
        g_rank = rank;
    pthread_mutex_unlock(&g_lock);
}

void hc_trace_thread_name(const char *name)
{
    snprintf(t_name, sizeof(t_name), "%s", name);
    if (t_buf)
        snprintf(t_buf->name, sizeof(t_buf->name), "%s", name);
}

static tbuf_t *new_buf(void)
{
    tbuf_t *b = calloc(1, sizeof(*b));
    if (b == NULL)
        return NULL;
    /* pre-faulted (MAP_POPULATE), once per thread at its first event: a
     * ring that faulted its pages in as it filled cost a page fault (~12 us
     * here) every 64 events, +40% on a traced 2 MB AllReduce */
    void *m = mmap(NULL, (size_t)HC_TRACE_RING * sizeof(rec_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (m == MAP_FAILED) {
        HC_WARN(HC_SUB_STREAM, "cannot map the trace ring (%zu bytes): %m; this thread is not "
                "traced", (size_t)HC_TRACE_RING * sizeof(rec_t));
        free(b);
        return NULL;
    }
    b->r = m;
    pthread_mutex_lock(&g_lock);
    b->index = ++g_nbufs;
    if (t_name[0])
        snprintf(b->name, sizeof(b->name), "%s", t_name);
    else
        snprintf(b->name, sizeof(b->name), "thread %d", b->index);
    b->next = g_bufs;
    g_bufs = b;
    pthread_mutex_unlock(&g_lock);
    return b;
}

static inline rec_t *rec_new(void)
{
    tbuf_t *b = t_buf;
    if (__builtin_expect(b == NULL, 0)) {
        static __thread int failed;
        if (failed || (t_buf = b = new_buf()) == NULL) {
            failed = 1;
            return NULL;
        }
    }
    rec_t *r = &b->r[b->n & (HC_TRACE_RING - 1)];
    __atomic_store_n(&b->n, b->n + 1, __ATOMIC_RELEASE);
    return r;
}

void hc_trace_op_begin(hc_trace_op_t *op)
{
    op->id = __atomic_fetch_add(&g_next_op, 1, __ATOMIC_RELAXED);
    rec_t *r = rec_new();
    if (r == NULL)
        return;
    r->t = hc_trace_now();
    r->type = R_OP_BEGIN;
    r->op = op->id;
    r->bytes = op->bytes;
    r->aux = op->t_enq;
    r->name = op->name;
    r->algo = op->algo;
    r->comm_seq = op->comm_id << 8 | (op->seq & 0xffu);
    r->stream = op->stream;
}

void hc_trace_op_end(const hc_trace_op_t *op, int rc)
{
    rec_t *r = rec_new();
    if (r == NULL)
        return;
    r->t = hc_trace_now();
    r->type = R_OP_END;
    r->op = op->id;
    r->aux = (uint64_t)(int64_t)rc;
    r->stream = op->stream;
}

void hc_trace_step(const hc_trace_op_t *op, uint32_t idx, const hc_step_t *st, int phase)
{
    rec_t *r = rec_new();
    if (r == NULL)
        return;
    r->t = hc_trace_now();
    r->type = phase == HC_TRACE_STEP_START ? R_STEP_START : R_STEP_DONE;
    r->op = op->id;
    r->idx = idx;
    r->kind = st->kind;
    r->bytes = st->bytes;
    r->aux = st->peer;
    r->stream = op->stream;
}

void hc_trace_span(const hc_trace_op_t *op, const char *name, uint64_t t0, uint64_t bytes)
{
    rec_t *r = rec_new();
    if (r == NULL)
        return;
    r->t = hc_trace_now();
    r->type = R_SPAN;
    r->op = op->id;
    r->name = name;
    r->aux = t0;
    r->bytes = bytes;
    r->stream = op->stream;
}

/* ---- writing ---------------------------------------------------------- */

/* Open-addressing map from a non-zero 64-bit key to a record index. */
typedef struct {
    uint64_t *key;
    uint32_t *val;
    size_t mask;
} map_t;

static int map_init(map_t *m, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap <<= 1;
    m->key = calloc(cap, sizeof(uint64_t));
    m->val = calloc(cap, sizeof(uint32_t));
    m->mask = cap - 1;
    return m->key && m->val ? 0 : -1;
}

static void map_free(map_t *m)
{
    free(m->key);
    free(m->val);
}

static size_t map_slot(const map_t *m, uint64_t k)
{
    size_t h = (size_t)((k * 0x9e3779b97f4a7c15ull) >> 17) & m->mask;
    while (m->key[h] != 0 && m->key[h] != k)
        h = (h + 1) & m->mask;
    return h;
}

static void map_put(map_t *m, uint64_t k, uint32_t v)
{
    size_t h = map_slot(m, k);
    m->key[h] = k;
    m->val[h] = v;
}

static int map_get(const map_t *m, uint64_t k, uint32_t *v)
{
    size_t h = map_slot(m, k);
    if (m->key[h] != k)
        return 0;
    *v = m->val[h];
    return 1;
}

/* A paired interval, placed on a track lane. */
enum { T_OP = 0, T_XFER = 1, T_THREAD = 2 };
typedef struct {
    double b, e;    /* µs */
    uint32_t rb;    /* begin record (or the span record) */
    uint32_t re;    /* end record */
    uint32_t group; /* track: (class, stream or thread) */
    uint32_t lane;
    uint8_t cls;
} iv_t;

static int cmp_rec(const void *a, const void *b)
{
    const rec_t *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

static int cmp_iv(const void *a, const void *b)
{
    const iv_t *x = a, *y = b;
    if (x->cls != y->cls)
        return x->cls - y->cls;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->b < y->b ? -1 : x->b > y->b;
}

static const char *kind_str(uint8_t k)
{
    static const char *names[HC_STEP_KINDS] = {
        [HC_STEP_SEND] = "SEND", [HC_STEP_RECV] = "RECV", [HC_STEP_REDUCE] = "REDUCE",
        [HC_STEP_COPY] = "COPY", [HC_STEP_NOP] = "NOP", [HC_STEP_PUBLISH] = "PUBLISH",
        [HC_STEP_WAIT] = "WAIT", [HC_STEP_REDUCE_MULTI] = "REDUCE_MULTI",
        [HC_STEP_READ] = "READ", [HC_STEP_WRITE] = "WRITE", [HC_STEP_XREDUCE] = "XREDUCE"};
    return k < HC_STEP_KINDS && names[k] ? names[k] : "STEP";
}

/* Steps that wait for a peer (transfers, shared-memory flags) go on the
 * stream's transfer track; the others are work of the thread that ran them. */
static int waits_for_peer(uint8_t k)
{
    return k == HC_STEP_SEND || k == HC_STEP_RECV || k == HC_STEP_WAIT;
}

static void expand_path(char *out, size_t n, int rank)
{
    size_t o = 0;
    for (const char *p = g_path; *p && o + 1 < n; p++) {
        char tmp[80];
        const char *add = NULL;
        if (p[0] == '%' && p[1]) {
            switch (p[1]) {
            case 'r':
                if (rank >= 0)
                    snprintf(tmp, sizeof(tmp), "%d", rank);
                else
                    snprintf(tmp, sizeof(tmp), "x");
                add = tmp;
                break;
            case 'p': snprintf(tmp, sizeof(tmp), "%d", (int)getpid()); add = tmp; break;
            case 'h':
                if (gethostname(tmp, sizeof(tmp) - 1) != 0)
                    snprintf(tmp, sizeof(tmp), "unknown");
                tmp[sizeof(tmp) - 1] = '\0';
                add = tmp;
                break;
            case '%': add = "%"; break;
            default: break;
            }
        }
        if (add) {
            p++;
            size_t l = strlen(add);
            if (o + l >= n)
                l = n - 1 - o;
            memcpy(out + o, add, l);
            o += l;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
}

/* Track ids: threads 1.., op lanes 1000 + 64 S + l, transfer lanes
 * 1000000 + 1000 S + l. */
static unsigned track_tid(uint8_t cls, uint32_t group, uint32_t lane)
{
    if (cls == T_THREAD)
        return group;
    if (cls == T_OP)
        return 1000u + 64u * group + (lane < 63 ? lane : 63);
    return 1000000u + 1000u * group + (lane < 999 ? lane : 999);
}

/* Time conversion of raw trace clock values to CLOCK_REALTIME µs. */
typedef struct {
    double base_raw, scale;
} tconv_t;
static double us_of(const tconv_t *tc, double raw)
{
    return (g_real0 + (raw - tc->base_raw) * tc->scale) / 1000.0;
}

/* The conversion of this process's raw clock values (the TSC, measured
 * against CLOCK_MONOTONIC since set-up, or CLOCK_MONOTONIC itself). */
static tconv_t clock_conv(void)
{
    double mono1 = clock_ns(CLOCK_MONOTONIC), scale = 1.0, base_raw = g_mono0;
#if defined(__x86_64__)
    if (g_use_tsc) {
        uint64_t tsc1 = __rdtsc();
        if (mono1 - g_mono0 < 1e6) { /* too short an interval to trust the rate */
            while (clock_ns(CLOCK_MONOTONIC) - g_mono0 < 1e6)
                ;
            mono1 = clock_ns(CLOCK_MONOTONIC);
            tsc1 = __rdtsc();
        }
        scale = (mono1 - g_mono0) / (double)(tsc1 - g_tsc0);
        base_raw = (double)g_tsc0;
    }
#endif
    return (tconv_t){base_raw, scale};
}

/* Pair the n sorted records' begins with their ends into intervals (at
 * most kept); an operation without an end ends at the last event.
 * Returns the number of intervals. */
static size_t pair_records(const rec_t *all, size_t n, uint8_t *ended, map_t *ops, map_t *steps,
                           iv_t *iv, size_t kept, const tconv_t *tc)
{
    size_t niv = 0;
    for (size_t i = 0; i < n; i++) {
        const rec_t *r = &all[i];
        uint32_t j;
        switch (r->type) {
        case R_OP_BEGIN:
            map_put(ops, r->op, (uint32_t)i);
            break;
        case R_OP_END:
            if (map_get(ops, r->op, &j) && !ended[j]) {
                ended[j] = 1;
                iv[niv++] = (iv_t){us_of(tc, all[j].t), us_of(tc, r->t), j, (uint32_t)i,
                                   all[j].stream, 0, T_OP};
            }
            break;
        case R_STEP_START:
            map_put(steps, (r->op << 21) + r->idx + 1, (uint32_t)i);
            break;
        case R_STEP_DONE:
            if (r->kind == HC_STEP_NOP)
                break;
            if (map_get(steps, (r->op << 21) + r->idx + 1, &j)) {
                int xfer = waits_for_peer(r->kind);
                iv[niv++] = (iv_t){us_of(tc, all[j].t), us_of(tc, r->t), j, (uint32_t)i,
                                   xfer ? r->stream : all[j].thread, 0,
                                   (uint8_t)(xfer ? T_XFER : T_THREAD)};
            }
            break;
        case R_SPAN:
            iv[niv++] = (iv_t){us_of(tc, r->aux), us_of(tc, r->t), (uint32_t)i, (uint32_t)i,
                               r->thread, 0, T_THREAD};
            break;
        default:
            break;
        }
    }
    /* unfinished operations end at the last event */
    double tlast = n ? us_of(tc, all[n - 1].t) : 0;
    for (size_t i = 0; i < n && niv < kept; i++)
        if (all[i].type == R_OP_BEGIN && !ended[i])
            iv[niv++] = (iv_t){us_of(tc, all[i].t), tlast, (uint32_t)i, UINT32_MAX,
                               all[i].stream, 0, T_OP};
    return niv;
}

/* Lanes: each interval on the first lane of its track free at its start. */
static void assign_lanes(iv_t *iv, size_t niv)
{
    qsort(iv, niv, sizeof(iv_t), cmp_iv);
    double lanes_end[1000];
    for (size_t i = 0; i < niv;) {
        size_t k = i;
        int nl = 0;
        while (k < niv && iv[k].cls == iv[i].cls && iv[k].group == iv[i].group) {
            int l;
            for (l = 0; l < nl && lanes_end[l] > iv[k].b; l++)
                ;
            if (l == nl && nl < 1000)
                nl++;
            if (l >= 1000)
                l = 999;
            lanes_end[l] = iv[k].e;
            iv[k].lane = (uint32_t)l;
            k++;
        }
        i = k;
    }
}

/* Track names for every (class, group, lane) used (iv sorted by track). */
static void write_tracks(FILE *f, int rank, const iv_t *iv, size_t niv)
{
    for (size_t i = 0; i < niv; i++) {
        if (iv[i].cls == T_THREAD)
            continue;
        if (i > 0 && iv[i - 1].cls == iv[i].cls && iv[i - 1].group == iv[i].group)
            continue;
        uint32_t top = 0;
        for (size_t k = i; k < niv && iv[k].cls == iv[i].cls && iv[k].group == iv[i].group; k++)
            if (iv[k].lane > top)
                top = iv[k].lane;
        for (uint32_t l = 0; l <= top; l++) {
            char nm[64];
            const char *what = iv[i].cls == T_OP ? "ops" : "transfers";
            if (iv[i].group == 0)
                snprintf(nm, sizeof(nm), "blocking %s%s", what, l ? " +" : "");
            else
                snprintf(nm, sizeof(nm), "stream %u %s%s", iv[i].group, what, l ? " +" : "");
            unsigned tid = track_tid(iv[i].cls, iv[i].group, l);
            fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_name\",\"args\":"
                    "{\"name\":\"%s\"}},\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":"
                    "\"thread_sort_index\",\"args\":{\"sort_index\":%u}}", rank, tid, nm, rank,
                    tid, 100 + iv[i].group * 2000 + (iv[i].cls == T_OP ? 0 : 1000) + l);
        }
    }
}

/* One interval as a trace event. */
static void write_event(FILE *f, int rank, const rec_t *all, map_t *ops, const iv_t *v,
                        const tconv_t *tc)
{
    const rec_t *rb = &all[v->rb];
    unsigned tid = track_tid(v->cls, v->group, v->lane);
    double dur = v->e - v->b;
    if (dur < 0)
        dur = 0;
    if (v->cls == T_OP) {
        int rc = v->re == UINT32_MAX ? -1 : (int)(int64_t)all[v->re].aux;
        fprintf(f, ",\n{\"ph\":\"X\",\"cat\":\"op\",\"name\":\"%s\",\"pid\":%d,\"tid\":%u,"
                "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"rank\":%d,\"comm\":%u,\"seq\":%u,"
                "\"stream\":%u,\"bytes\":%llu,\"algo\":\"%s\",\"op\":%llu,\"rc\":%d",
                rb->name ? rb->name : "op", rank, tid, v->b, dur, rank, rb->comm_seq >> 8,
                rb->comm_seq & 0xffu, rb->stream, (unsigned long long)rb->bytes,
                rb->algo ? rb->algo : "", (unsigned long long)rb->op, rc);
        if (rb->aux)
            fprintf(f, ",\"queued_us\":%.3f", v->b - us_of(tc, rb->aux));
        fputs(v->re == UINT32_MAX ? ",\"unfinished\":1}}" : "}}", f);
        return;
    }
    uint32_t oi;
    const char *opname = "?";
    unsigned seq = 0, comm = 0;
    if (map_get(ops, rb->op, &oi)) {
        opname = all[oi].name ? all[oi].name : "op";
        seq = all[oi].comm_seq & 0xffu;
        comm = all[oi].comm_seq >> 8;
    }
    if (rb->type == R_SPAN) {
        fprintf(f, ",\n{\"ph\":\"X\",\"cat\":\"local\",\"name\":\"%s\",\"pid\":%d,\"tid\":%u,"
                "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"op\":\"%s\",\"comm\":%u,\"seq\":%u,"
                "\"stream\":%u,\"bytes\":%llu}}", rb->name, rank, tid, v->b, dur, opname,
                comm, seq, rb->stream, (unsigned long long)rb->bytes);
        return;
    }
    char nm[48];
    if (v->cls == T_XFER && rb->aux > 0xffffu) /* a WAIT on every peer */
        snprintf(nm, sizeof(nm), "%s all", kind_str(rb->kind));
    else if (v->cls == T_XFER)
        snprintf(nm, sizeof(nm), "%s %s %llu", kind_str(rb->kind),
                 rb->kind == HC_STEP_SEND ? "to" : "from", (unsigned long long)rb->aux);
    else
        snprintf(nm, sizeof(nm), "%s", kind_str(rb->kind));
    fprintf(f, ",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%u,"
            "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"op\":\"%s\",\"comm\":%u,\"seq\":%u,"
            "\"stream\":%u,\"step\":%u,\"bytes\":%llu}}",
            v->cls == T_XFER ? "transfer" : "local", nm, rank, tid, v->b, dur, opname, comm,
            seq, rb->stream, rb->idx, (unsigned long long)rb->bytes);
}

void hc_trace_flush(void)
{
    if (!__atomic_load_n(&hc_trace_on, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&g_lock);
    uint64_t total = 0, kept = 0, dropped = 0;
    for (tbuf_t *b = g_bufs; b; b = b->next) {
        uint64_t n = __atomic_load_n(&b->n, __ATOMIC_ACQUIRE);
        total += n;
        kept += n < HC_TRACE_RING ? n : HC_TRACE_RING;
        dropped += n > HC_TRACE_RING ? n - HC_TRACE_RING : 0;
    }
    if (total == g_flushed_n) { /* nothing new since the last file */
        pthread_mutex_unlock(&g_lock);
        return;
    }
    g_flushed_n = total;
    char path[HC_ENV_PATH_MAX + 64];
    expand_path(path, sizeof(path), g_rank);
    int rank = g_rank < 0 ? 0 : g_rank;

    const tconv_t tc = clock_conv();

    rec_t *all = kept ? malloc(kept * sizeof(rec_t)) : NULL;
    iv_t *iv = kept ? malloc(kept * sizeof(iv_t)) : NULL;
    uint8_t *ended = kept ? calloc(kept, 1) : NULL;
    map_t ops = {0}, steps = {0};
    FILE *f = NULL;
    int nthreads = g_nbufs;
    char (*tnames)[40] = calloc((size_t)nthreads + 1, 40);
    if ((kept && (!all || !iv || !ended || map_init(&ops, kept) || map_init(&steps, kept))) || !tnames) {
        HC_WARN(HC_SUB_STREAM, "no memory to write the trace (%llu events)",
                (unsigned long long)kept);
        goto out;
    }
    size_t n = 0;
    for (tbuf_t *b = g_bufs; b; b = b->next) {
        uint64_t cnt = __atomic_load_n(&b->n, __ATOMIC_ACQUIRE);
        uint64_t first = cnt > HC_TRACE_RING ? cnt - HC_TRACE_RING : 0;
        for (uint64_t i = first; i < cnt; i++) {
            all[n] = b->r[i & (HC_TRACE_RING - 1)];
            all[n].thread = (uint16_t)b->index;
            n++;
        }
        snprintf(tnames[b->index], 40, "%s", b->name);
    }
    qsort(all, n, sizeof(rec_t), cmp_rec);

    size_t niv = pair_records(all, n, ended, &ops, &steps, iv, kept, &tc);
    assign_lanes(iv, niv);

    f = fopen(path, "w");
    if (f == NULL) {
        HC_WARN(HC_SUB_STREAM, "cannot write the trace file %s (HCCL_TRACE_FILE): %m", path);
        goto out;
    }
    static char fbuf[1 << 16];
    setvbuf(f, fbuf, _IOFBF, sizeof(fbuf));
    char host[64] = "";
    gethostname(host, sizeof(host) - 1);
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"rank\":%d,\"host\":\"%s\","
            "\"pid\":%d,\"events\":%llu,\"overwritten\":%llu,\"clock\":\"%s\"},\n"
            "\"traceEvents\":[\n", rank, host, (int)getpid(), (unsigned long long)total,
            (unsigned long long)dropped, g_use_tsc ? "tsc" : "monotonic");
    fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":"
            "\"rank %d (%s:%d)\"}},\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\","
            "\"args\":{\"sort_index\":%d}}", rank, rank, host, (int)getpid(), rank, rank);
    for (int t = 1; t <= nthreads; t++)
        fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":"
                "{\"name\":\"%s\"}}", rank, t, tnames[t]);
    write_tracks(f, rank, iv, niv);
    for (size_t i = 0; i < niv; i++)
        write_event(f, rank, all, &ops, &iv[i], &tc);
    fputs("\n]}\n", f);
    if (fclose(f) != 0)
        HC_WARN(HC_SUB_STREAM, "writing the trace file %s failed: %m", path);
    else
        HC_INFO(HC_SUB_STREAM, "trace: %llu events (%llu overwritten) written to %s",
                (unsigned long long)kept, (unsigned long long)dropped, path);
    f = NULL;
out:
    if (f)
        fclose(f);
    free(all);
    free(iv);
    free(ended);
    free(tnames);
    map_free(&ops);
    map_free(&steps);
    pthread_mutex_unlock(&g_lock);
}
