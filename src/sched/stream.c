/*
 * src/sched/stream.c - streams and the progress engine.
 *
 * A stream is an ordered queue of tasks (stream.h). The rules:
 *
 *  - Enqueue: the API call checks its arguments, builds the task (taking
 *    the operation's sequence numbers and Send/Recv tags in program order),
 *    appends it to the stream and returns. A bad argument returns its error
 *    and enqueues nothing.
 *  - Start: tasks of one stream start in FIFO order (a task that cannot
 *    start holds back the ones behind it). A task is "in flight" from its
 *    start until it finishes; a stream has at most HCCL_MAX_CONCURRENT in
 *    flight. A task may start while earlier ones of its stream are still in
 *    flight only if it does not touch their memory: no byte range it reads
 *    or writes overlaps one that an in-flight earlier task writes, and no
 *    range it writes overlaps one that such a task reads (RAW, WAR, WAW).
 *    Barriers, and tasks whose memory cannot be summed up in a few ranges,
 *    are fences: they start when everything before them has finished and
 *    nothing behind them starts before they finish.
 *  - Completion is in order: HcclStreamQuery/Synchronize see a task as done
 *    only when it and every task before it have finished.
 *  - Priority: streams are visited from the highest priority down, so
 *    their tasks start first, are progressed first in every pass of the
 *    engine, and get staging memory (HCCL_BUFFSIZE) first.
 *  - Errors: the first error of a stream is recorded (and becomes the
 *    communicator's async error); the stream then fails fast: its other
 *    in-flight tasks are cancelled and every task queued behind finishes at
 *    once without communicating, with that error, until
 *    HcclStreamSynchronize reports it (and clears it). A peer that keeps
 *    waiting for the skipped operations fails with its own deadline.
 *
 * The engine: one per process context, driven by whoever holds eng->drive:
 * the progress thread, or a thread inside HcclStreamSynchronize (that
 * thread then drives everything, like a blocking call, and the progress
 * thread sleeps: no two threads spin on one core, and a synchronized
 * operation completes with blocking-call latency). The progress thread is
 * started with the first stream task and stopped when the context is
 * destroyed. When no task is queued it sleeps in epoll on an eventfd (new
 * work): no CPU at all. While tasks are in flight it polls as long as
 * something happens; as soon as a pass finds nothing to do it arms the UCX
 * worker (ucp_worker_arm) and sleeps on the worker's event fd plus the
 * eventfd, so the CPU goes to the application's computation, not to
 * polling (a wake-up costs ~90 us here, UCX-FACTS.md: latency is the price,
 * paid while the application computes). A thread that waits
 * (HcclStreamSynchronize) drives the engine itself and spins like a
 * blocking call (sched_yield after a few empty polls).
 *
 * Threading: the UCX worker stays UCS_THREAD_MODE_SERIALIZED and every use
 * of it is under ctx->lock (context.h), held for one short step at a time.
 * Measurements and the reasons: docs/STREAMS.md.
 *
 * Locks, always taken in this order: g_lock (stream queues, engine
 * registry) -> a communicator's streams->lock (schedule cache) -> ctx->lock
 * (UCX). eng->drive is taken before any of them and never while holding
 * one.
 */
#define _GNU_SOURCE /* ppoll */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "progress.h"
#include "stream.h"
#include "src/base/handle.h"

#include <errno.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "src/base/gpu.h"
#include "src/base/log.h"
#include "src/comm/shm.h"
#include "src/base/util.h"
#include "src/exec/wait.h"

/* Passes without any event before the progress thread sleeps on the
 * worker's event fd. It does not spin longer: while it drives, the
 * application is computing on the same cores (a thread that waits drives
 * the engine itself, see help_until), so every microsecond spent polling
 * is taken from that computation. */
#define HC_IDLE_PASSES 2
/* The idle sleep's back-off when UCX keeps saying "busy" or shared-memory
 * flags are awaited (see idle_wait). A pipelined shared-memory operation
 * waits on a peer's flag once per chunk, so every sleep here can stall each
 * chunk: with 1 ms, examples/overlap -m 2048 -k 8 (16 MB gradients) ran its
 * stream variant at 0.54x the blocking loop's speed, with 100 us at 0.85x
 * (20 us: no better, and more CPU taken from the computation). */
#define HC_BUSY_STREAK 3
#ifndef HC_BUSY_SLEEP_MAX_US
#define HC_BUSY_SLEEP_MAX_US 100
#endif
/* Empty passes before a thread in HcclStreamSynchronize starts yielding
 * (src/exec/wait.h), as a blocking call over UCX. */
#define HC_SPIN_BEFORE_YIELD 64
/* Longest sleep while tasks are in flight: deadlines and HcclCommAbort are
 * checked at least this often (ms). */
#define HC_SLEEP_MAX_MS 100

typedef struct hc_stream {
    void *handle;             /* what HcclStreamCreate gave out (src/base/handle.h) */
    uint32_t id;              /* trace id: 1, 2, ... */
    int prio;
    void *cuda;               /* cudaStream_t (HcclStreamCreateFromCuda) */
    /* under g_lock */
    hc_task_t *head, *tail;   /* not yet retired, in order */
    uint32_t nrunning;
    uint64_t n_enq, n_retired;
    int error;                /* first error since the last synchronize */
    int active;               /* in g_active */
    struct hc_stream *next_active;
    struct hc_engine *eng;    /* engine of its queued tasks (valid while head) */
} hc_stream_t;

typedef struct hc_engine {
    hc_context_t *ctx;
    pthread_mutex_t drive;    /* held by whoever runs a pass */
    pthread_t thread;
    int thread_started;
    volatile int stop;
    int evfd, epfd, wfd;
    /* under g_lock */
    int sleeping;             /* the progress thread is (about to be) asleep */
    uint64_t queued;          /* tasks enqueued and not retired */
    uint64_t enq_gen;         /* bumped by every enqueue */
    volatile int helpers;     /* threads driving from HcclStreamSynchronize & co */
    /* driver only */
    hc_task_t **run;          /* tasks in flight, by priority */
    uint32_t nrun, caprun;
    unsigned passes;
    uint64_t stage_used;      /* staging bytes held by stream tasks (g_lock) */
} hc_engine_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static hc_stream_t *g_active; /* streams with tasks, by priority (high first) */
static uint32_t g_next_stream_id = 1;

static void kick(hc_engine_t *eng)
{
    uint64_t one = 1;
    ssize_t w = write(eng->evfd, &one, sizeof(one));
    (void)w; /* EAGAIN: the counter is already non-zero, a wake-up is pending */
}

/* ---- the public stream calls ------------------------------------------ */

static int stream_new(HcclStream *stream, int prio, void *cuda, const char *fn)
{
    if (stream == NULL) {
        HC_ERROR(HC_SUB_STREAM, "%s: stream is NULL", fn);
        return HCCL_E_PTR;
    }
    hc_stream_t *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        HC_ERROR(HC_SUB_STREAM, "%s: out of memory", fn);
        return HCCL_E_MEMORY;
    }
    s->handle = hc_handle_new(HC_HANDLE_STREAM, s);
    if (s->handle == NULL) {
        HC_ERROR(HC_SUB_STREAM, "%s: no handle for the stream (out of memory, or 2^24 "
                 "communicators and streams live)", fn);
        free(s);
        return HCCL_E_MEMORY;
    }
    s->prio = prio;
    s->cuda = cuda;
    pthread_mutex_lock(&g_lock);
    s->id = g_next_stream_id++;
    pthread_mutex_unlock(&g_lock);
    HC_INFO(HC_SUB_STREAM, "%s: stream %u, priority %d", fn, s->id, prio);
    *stream = s->handle;
    return HCCL_SUCCESS;
}

HcclResult HcclStreamCreate(HcclStream *stream)
{
    return (HcclResult)stream_new(stream, 0, NULL, "HcclStreamCreate");
}

HcclResult HcclStreamCreateWithPriority(HcclStream *stream, int priority)
{
    return (HcclResult)stream_new(stream, priority, NULL, "HcclStreamCreateWithPriority");
}

HcclResult HcclStreamCreateFromCuda(HcclStream *stream, void *cudaStream)
{
#ifdef HAVE_CUDA
    if (!hc_cuda_available()) {
        HC_ERROR(HC_SUB_STREAM, "HcclStreamCreateFromCuda: no usable CUDA device here");
        return HCCL_E_NOT_SUPPORT;
    }
    return (HcclResult)stream_new(stream, 0, cudaStream, "HcclStreamCreateFromCuda");
#else
    (void)stream;
    (void)cudaStream;
    HC_ERROR(HC_SUB_STREAM, "HcclStreamCreateFromCuda: this hcomm was built without CUDA "
             "(configure --with-cuda)");
    return HCCL_E_NOT_SUPPORT;
#endif
}

HC_HOT int hc_stream_get(HcclStream handle, const char *fn, void **out)
{
    *out = NULL;
    if (handle == NULL)
        return HCCL_SUCCESS;
    *out = hc_handle_get(handle, HC_HANDLE_STREAM);
    if (*out == NULL) {
        HC_ERROR(HC_SUB_STREAM, "%s: stream %p is not a live HcclStream (destroyed, or not "
                 "from HcclStreamCreate)", fn, handle);
        return HCCL_E_PARA;
    }
    return HCCL_SUCCESS;
}

uint32_t hc_stream_id(void *stream)
{
    return stream ? ((hc_stream_t *)stream)->id : 0;
}

void *hc_stream_cuda(void *stream)
{
    return stream ? ((hc_stream_t *)stream)->cuda : NULL;
}

static int engine_pass(hc_engine_t *eng);

/* Per-thread state of the idle sleep. */
typedef struct {
    unsigned busy_streak, backoff_us;
    uint64_t sleeps, backoffs;
} idle_state_t;

/* Set by hc_task_exec_progress when a running schedule waits on flags in
 * shared memory (src/comm/shm.h): their writes wake no file descriptor, so the
 * engine must poll for them (timed sleeps), not sleep on the worker. */
static __thread int t_shm_wait;

/* Nothing to do now, transfers in flight: sleep until the UCX worker has an
 * event (epoll on epfd, which holds the worker's fd and, for the progress
 * thread, the eventfd of new work), at most max_ms. ucp_worker_arm says
 * UCS_ERR_BUSY ("events pending") far more often than a pass then finds
 * anything to do: with transfers in flight, 57 000 of 58 000 arms in
 * examples/overlap, each a few read() system calls, which made the progress
 * thread burn ~5x the CPU of a blocking call for the same transfers. After
 * HC_BUSY_STREAK such answers in a row, and while shared-memory flags are
 * awaited, it sleeps for a while instead: 20 us doubling up to
 * HC_BUSY_SLEEP_MAX_US (reset by any progress). */
static void idle_wait(hc_engine_t *eng, int epfd, idle_state_t *is, int max_ms)
{
    hc_context_t *ctx = eng->ctx;
    ucs_status_t st = UCS_ERR_BUSY;
    if (!t_shm_wait) {
        pthread_mutex_lock(&ctx->lock);
        st = ucp_worker_arm(ctx->worker);
        if (st == UCS_OK && ctx->worker_tcp) /* peers on other hosts (context.h) */
            st = ucp_worker_arm(ctx->worker_tcp);
        pthread_mutex_unlock(&ctx->lock);
    }
    if (st == UCS_ERR_BUSY) {
        if (!t_shm_wait && ++is->busy_streak < HC_BUSY_STREAK)
            return;
        is->backoff_us = is->backoff_us ? 2 * is->backoff_us : 20;
        if (is->backoff_us > HC_BUSY_SLEEP_MAX_US)
            is->backoff_us = HC_BUSY_SLEEP_MAX_US;
        struct pollfd pfd = {.fd = eng->evfd, .events = POLLIN};
        struct timespec ts = {0, (long)is->backoff_us * 1000};
        ppoll(&pfd, epfd == eng->epfd ? 1 : 0, &ts, NULL);
        is->backoffs++;
        return;
    }
    is->busy_streak = 0;
    is->sleeps++;
    struct epoll_event ev[2];
    int n;
    do
        n = epoll_wait(epfd, ev, 2, max_ms);
    while (n < 0 && errno == EINTR);
}

/* Drive the engine from this thread until done(arg) (a blocking wait of
 * the API: synchronize, destroy, a reused sequence number), with the one
 * wait (src/exec/wait.h; the deadlines are the tasks', check_running). The
 * progress thread sleeps meanwhile. */
static void help_until(hc_engine_t *eng, int (*done)(void *), void *arg)
{
    __atomic_add_fetch(&eng->helpers, 1, __ATOMIC_ACQ_REL);
    hc_wait_t w;
    hc_wait_begin_ctx(&w, eng->ctx, "stream wait", HC_SPIN_BEFORE_YIELD);
    while (!done(arg)) {
        int act = 0;
        if (pthread_mutex_trylock(&eng->drive) == 0) {
            act = engine_pass(eng);
            pthread_mutex_unlock(&eng->drive);
        }
        if (act)
            hc_wait_moved(&w);
        else
            hc_wait_idle(&w, NULL, NULL);
    }
    hc_wait_end(&w);
    pthread_mutex_lock(&g_lock);
    __atomic_sub_fetch(&eng->helpers, 1, __ATOMIC_ACQ_REL);
    if (eng->queued > 0 && eng->helpers == 0)
        kick(eng); /* the progress thread takes over what is left */
    pthread_mutex_unlock(&g_lock);
}

typedef struct {
    hc_stream_t *s;
    uint64_t target;
} sync_arg_t;

static int stream_reached(void *p)
{
    sync_arg_t *a = p;
    return __atomic_load_n(&a->s->n_retired, __ATOMIC_ACQUIRE) >= a->target;
}

/* Wait for everything enqueued so far; return and clear the stream's
 * first error. */
static int stream_sync(hc_stream_t *s)
{
    pthread_mutex_lock(&g_lock);
    sync_arg_t a = {s, s->n_enq};
    hc_engine_t *eng = s->n_retired < a.target ? s->eng : NULL;
    pthread_mutex_unlock(&g_lock);
    if (eng)
        help_until(eng, stream_reached, &a);
    pthread_mutex_lock(&g_lock);
    int rc = s->error;
    s->error = HCCL_SUCCESS;
    pthread_mutex_unlock(&g_lock);
#ifdef HAVE_CUDA
    if (rc == HCCL_SUCCESS && s->cuda)
        rc = hc_cuda_sync(s->cuda);
#endif
    return rc;
}

HcclResult HcclStreamSynchronize(HcclStream stream)
{
    if (stream == NULL) {
        HC_ERROR(HC_SUB_STREAM, "HcclStreamSynchronize: stream is NULL");
        return HCCL_E_PTR;
    }
    void *p;
    int rc = hc_stream_get(stream, "HcclStreamSynchronize", &p);
    if (rc != HCCL_SUCCESS)
        return (HcclResult)rc;
    hc_stream_t *s = p;
    rc = stream_sync(s);
    if (rc != HCCL_SUCCESS)
        HC_INFO(HC_SUB_STREAM, "HcclStreamSynchronize: stream %u: an operation failed: %s",
                s->id, HcclGetErrorString(rc));
    return (HcclResult)rc;
}

HcclResult HcclStreamQuery(HcclStream stream)
{
    if (stream == NULL) {
        HC_ERROR(HC_SUB_STREAM, "HcclStreamQuery: stream is NULL");
        return HCCL_E_PTR;
    }
    void *p;
    int rc = hc_stream_get(stream, "HcclStreamQuery", &p);
    if (rc != HCCL_SUCCESS)
        return (HcclResult)rc;
    hc_stream_t *s = p;
    for (int pass = 0; pass < 2; pass++) {
        pthread_mutex_lock(&g_lock);
        int done = s->n_retired >= s->n_enq;
        rc = done ? s->error : HCCL_E_AGAIN;
        hc_engine_t *eng = done ? NULL : s->eng;
        pthread_mutex_unlock(&g_lock);
        if (eng == NULL || pass == 1)
            break;
        /* one pass of the engine if nobody is driving it right now */
        if (pthread_mutex_trylock(&eng->drive) == 0) {
            engine_pass(eng);
            pthread_mutex_unlock(&eng->drive);
        }
    }
    return (HcclResult)rc;
}

HcclResult HcclStreamDestroy(HcclStream stream)
{
    if (stream == NULL) {
        HC_ERROR(HC_SUB_STREAM, "HcclStreamDestroy: stream is NULL");
        return HCCL_E_PTR;
    }
    void *p;
    int rc = hc_stream_get(stream, "HcclStreamDestroy", &p);
    if (rc != HCCL_SUCCESS)
        return (HcclResult)rc;
    hc_stream_t *s = p;
    rc = stream_sync(s); /* its operations finish first; their error is not lost */
    pthread_mutex_lock(&g_lock);
    hc_handle_retire(s->handle);
    pthread_mutex_unlock(&g_lock);
    HC_INFO(HC_SUB_STREAM, "HcclStreamDestroy: stream %u (%llu operations)", s->id,
            (unsigned long long)s->n_enq);
    free(s);
    return (HcclResult)rc;
}

/* ---- the engine -------------------------------------------------------- */

static void *engine_main(void *arg);

/* The context's engine, created (thread started) at the first stream task.
 * g_lock held. */
static int engine_get(hc_context_t *ctx, hc_engine_t **out)
{
    if (ctx->engine) {
        *out = ctx->engine;
        return HCCL_SUCCESS;
    }
    hc_engine_t *eng = calloc(1, sizeof(*eng));
    if (eng == NULL)
        return HCCL_E_MEMORY;
    eng->ctx = ctx;
    eng->evfd = eng->epfd = eng->wfd = -1;
    pthread_mutex_init(&eng->drive, NULL);
    int rc = HCCL_E_SYSCALL;
    eng->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    eng->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (eng->evfd < 0 || eng->epfd < 0) {
        HC_ERROR(HC_SUB_STREAM, "cannot create the progress thread's eventfd/epoll: %m");
        goto fail;
    }
    int tfd = -1; /* the TCP-only worker's, for peers on other hosts (context.h) */
    pthread_mutex_lock(&ctx->lock);
    ucs_status_t st = ucp_worker_get_efd(ctx->worker, &eng->wfd);
    if (st == UCS_OK && ctx->worker_tcp)
        st = ucp_worker_get_efd(ctx->worker_tcp, &tfd);
    pthread_mutex_unlock(&ctx->lock);
    if (st != UCS_OK) {
        HC_ERROR(HC_SUB_STREAM, "ucp_worker_get_efd failed: %s", ucs_status_string(st));
        rc = HCCL_E_NETWORK;
        goto fail;
    }
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.u32 = 0;
    if (epoll_ctl(eng->epfd, EPOLL_CTL_ADD, eng->evfd, &ev) != 0) {
        HC_ERROR(HC_SUB_STREAM, "epoll_ctl(eventfd) failed: %m");
        goto fail;
    }
    ev.data.u32 = 1;
    if (epoll_ctl(eng->epfd, EPOLL_CTL_ADD, eng->wfd, &ev) != 0 ||
        (tfd >= 0 && epoll_ctl(eng->epfd, EPOLL_CTL_ADD, tfd, &ev) != 0)) {
        HC_ERROR(HC_SUB_STREAM, "epoll_ctl(UCX worker fd) failed: %m");
        goto fail;
    }
    /* the thread takes no signal: they stay the application's */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&eng->thread, NULL, engine_main, eng);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) {
        errno = e;
        HC_ERROR(HC_SUB_STREAM, "cannot start the progress thread: %m");
        goto fail;
    }
    eng->thread_started = 1;
    ctx->engine = eng;
    HC_INFO(HC_SUB_STREAM, "progress thread started");
    *out = eng;
    return HCCL_SUCCESS;
fail:
    if (eng->evfd >= 0)
        close(eng->evfd);
    if (eng->epfd >= 0)
        close(eng->epfd);
    pthread_mutex_destroy(&eng->drive);
    free(eng);
    return rc;
}

void hc_engine_destroy(hc_context_t *ctx)
{
    pthread_mutex_lock(&g_lock);
    hc_engine_t *eng = ctx->engine;
    ctx->engine = NULL;
    if (eng) {
        eng->stop = 1;
        kick(eng);
    }
    pthread_mutex_unlock(&g_lock);
    if (eng == NULL)
        return;
    if (eng->thread_started)
        pthread_join(eng->thread, NULL);
    if (eng->queued)
        HC_WARN(HC_SUB_STREAM, "%llu stream operations were still queued when the context was "
                "destroyed", (unsigned long long)eng->queued);
    close(eng->evfd);
    close(eng->epfd);
    pthread_mutex_destroy(&eng->drive);
    free(eng->run);
    free(eng);
    HC_INFO(HC_SUB_STREAM, "progress thread stopped");
}

/* Does task t touch memory that the in-flight task p writes, or write
 * memory that p reads? */
static int conflict(const hc_task_t *p, const hc_task_t *t)
{
    for (unsigned i = 0; i < p->nrng; i++)
        for (unsigned j = 0; j < t->nrng; j++) {
            const hc_range_t *a = &p->rng[i], *b = &t->rng[j];
            if ((a->write || b->write) && a->lo < b->hi && b->lo < a->hi)
                return 1;
        }
    return 0;
}

/* May t (QUEUED, every task before it started) start now? g_lock held. */
static int can_start(const hc_stream_t *s, const hc_task_t *t)
{
    if (s->nrunning >= t->max_concurrent)
        return 0;
    for (const hc_task_t *p = s->head; p != t; p = p->next) {
        if (p->state != HC_TASK_RUNNING)
            continue;
        if (t->fence || p->fence || conflict(p, t))
            return 0;
    }
    return 1;
}

/* Insert into the in-flight list, keeping priority order. */
static int run_add(hc_engine_t *eng, hc_task_t *t)
{
    if (eng->nrun == eng->caprun) {
        uint32_t ncap = eng->caprun ? 2 * eng->caprun : 32;
        hc_task_t **nr = realloc(eng->run, ncap * sizeof(*nr));
        if (nr == NULL)
            return HCCL_E_MEMORY;
        eng->run = nr;
        eng->caprun = ncap;
    }
    uint32_t k = eng->nrun;
    while (k > 0 && eng->run[k - 1]->stream->prio < t->stream->prio) {
        eng->run[k] = eng->run[k - 1];
        k--;
    }
    eng->run[k] = t;
    eng->nrun++;
    return HCCL_SUCCESS;
}

static void seq_release(hc_task_t *t)
{
    for (uint32_t i = 0; i < t->nholds; i++) {
        hc_seq_hold_t *h = &t->holds[i];
        for (uint32_t k = 0; k < h->n; k++)
            __atomic_sub_fetch(&h->c->streams->held[hc_seq_nth(h->base, k)], 1,
                               __ATOMIC_RELEASE);
    }
    t->nholds = 0;
}

/* A task of s finished (DONE): retire the finished prefix of the queue.
 * g_lock held. */
static void retire(hc_engine_t *eng, hc_stream_t *s)
{
    while (s->head && s->head->state == HC_TASK_DONE) {
        hc_task_t *t = s->head;
        s->head = t->next;
        if (s->head == NULL)
            s->tail = NULL;
        seq_release(t);
        t->c->streams->pending--;
        eng->queued--;
        t->vt->destroy(t);
        __atomic_store_n(&s->n_retired, s->n_retired + 1, __ATOMIC_RELEASE);
    }
    if (s->head == NULL && s->active) { /* leave the active list */
        hc_stream_t **pp = &g_active;
        while (*pp != s)
            pp = &(*pp)->next_active;
        *pp = s->next_active;
        s->active = 0;
        s->next_active = NULL;
    }
}

static void note_error(hc_stream_t *s, hc_task_t *t, int rc)
{
    if (s->error == HCCL_SUCCESS) {
        s->error = rc;
        HC_WARN(HC_SUB_STREAM, "stream %u: %s on comm %s failed (%s); the operations queued "
                "behind it on this stream are skipped until HcclStreamSynchronize", s->id,
                t->what, t->c->name, HcclGetErrorString(rc));
    }
    hc_comm_set_error(t->c, rc);
}

/* Deadline, abort: once per millisecond or so. Driver only. */
static void check_running(hc_engine_t *eng)
{
    double now = hc_now_s();
    for (uint32_t i = 0; i < eng->nrun; i++) {
        hc_task_t *t = eng->run[i];
        if (t->status != HCCL_E_AGAIN)
            continue;
        if (t->c->aborted) {
            HC_WARN(HC_SUB_STREAM, "%s on %s (stream %u): aborted by HcclCommAbort", t->what,
                    t->c->name, t->stream_id);
            t->vt->cancel(t, HCCL_E_SUSPENDING);
            t->status = HCCL_E_SUSPENDING;
            continue;
        }
        double tmo = hc_wait_timeout(t->c);
        if (tmo > 0 && now - t->t_start >= tmo) {
            char where[200] = "nothing";
            t->vt->describe(t, where, sizeof(where));
            HC_ERROR(HC_SUB_STREAM, "%s timed out after %.1f s (HCCL_EXEC_TIMEOUT) on comm %s "
                     "rank %u, stream %u: waiting at %s", t->what, now - t->t_start,
                     t->c->name, t->c->rank, t->stream_id, where);
            t->vt->cancel(t, HCCL_E_TIMEOUT);
            t->status = HCCL_E_TIMEOUT;
        }
    }
}

/* engine_pass: start the streams' queued tasks that may start (fail fast:
 * skipped on a stream with an error). Returns non-zero if any changed. */
static int engine_start(hc_engine_t *eng)
{
    int act = 0;
    int skipped = 0;
    pthread_mutex_lock(&g_lock);
    for (hc_stream_t *s = g_active; s; s = s->next_active) {
        for (hc_task_t *t = s->head; t; t = t->next) {
            if (t->state != HC_TASK_QUEUED)
                continue;
            if (s->error == HCCL_SUCCESS && t->c->aborted)
                note_error(s, t, HCCL_E_SUSPENDING);
            if (s->error != HCCL_SUCCESS) { /* fail fast: skipped without communicating */
                t->state = HC_TASK_DONE;
                t->status = s->error;
                skipped = act = 1;
                continue;
            }
            if (!can_start(s, t))
                break;
#ifdef HAVE_CUDA
            int rc;
            if (s->cuda && (rc = hc_cuda_sync(s->cuda)) != HCCL_SUCCESS) {
                HC_ERROR(HC_SUB_STREAM, "stream %u: waiting for its CUDA stream failed",
                         s->id);
                note_error(s, t, rc);
                t->state = HC_TASK_DONE;
                t->status = rc;
                act = 1;
                continue;
            }
#endif
            if (run_add(eng, t) != HCCL_SUCCESS)
                break; /* retried next pass */
            t->state = HC_TASK_RUNNING;
            t->status = HCCL_E_AGAIN;
            t->t_start = -1; /* started by engine_advance, outside g_lock */
            s->nrunning++;
            act = 1;
        }
    }
    if (skipped)
        for (hc_stream_t *s = g_active, *nx; s; s = nx) {
            nx = s->next_active;
            retire(eng, s);
        }
    pthread_mutex_unlock(&g_lock);
    return act;
}

/* engine_pass: advance the running tasks and drive UCX; the deadlines are
 * checked when nothing moved (act_before: the start step) and every 256th
 * busy pass. Returns non-zero if anything moved. */
static int engine_advance(hc_engine_t *eng, int act_before)
{
    int act = 0;
    hc_context_t *ctx = eng->ctx;
    /* advance, by priority (start the new ones: they take staging, the
     * schedule cache and ctx->lock, which come after g_lock) */
    for (uint32_t i = 0; i < eng->nrun; i++) {
        hc_task_t *t = eng->run[i];
        if (t->t_start < 0) {
            t->t_start = hc_now_s();
            t->status = t->vt->start(t);
            continue;
        }
        if (t->status != HCCL_E_AGAIN)
            continue;
        t->busy = 0;
        t->status = t->vt->progress(t);
        if (t->status != HCCL_E_AGAIN || t->busy)
            act = 1;
    }
    pthread_mutex_lock(&ctx->lock);
    if (hc_ctx_poll(ctx))
        act = 1;
    pthread_mutex_unlock(&ctx->lock);
    if (!(act_before || act) || (++eng->passes & 255) == 0)
        check_running(eng);

    return act;
}

/* engine_pass: finish the tasks that are done, retire them from their
 * streams, cancel what else runs on a stream that failed. Returns non-zero
 * if any finished. */
static int engine_finish(hc_engine_t *eng)
{
    int act = 0;
    int failed = 0;
    for (uint32_t i = 0; i < eng->nrun; i++)
        if (eng->run[i]->status != HCCL_E_AGAIN) {
            hc_task_t *t = eng->run[i];
            t->vt->finish(t, t->status);
            failed |= t->status != HCCL_SUCCESS;
        }
    uint32_t k = 0;
    int any = 0;
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = 0; i < eng->nrun; i++) {
        hc_task_t *t = eng->run[i];
        if (t->status == HCCL_E_AGAIN) {
            eng->run[k++] = t;
            continue;
        }
        if (t->status != HCCL_SUCCESS)
            note_error(t->stream, t, t->status);
        t->state = HC_TASK_DONE;
        t->stream->nrunning--;
        any = 1;
    }
    eng->nrun = k;
    if (any) {
        act = 1;
        for (hc_stream_t *s = g_active, *nx; s; s = nx) {
            nx = s->next_active;
            retire(eng, s);
        }
    }
    pthread_mutex_unlock(&g_lock);
    if (failed) { /* fail fast: cancel the failed streams' other tasks in flight */
        pthread_mutex_lock(&g_lock);
        for (uint32_t i = 0; i < eng->nrun; i++) {
            hc_task_t *t = eng->run[i];
            if (t->status == HCCL_E_AGAIN && t->stream->error != HCCL_SUCCESS) {
                t->vt->cancel(t, t->stream->error);
                t->status = t->stream->error;
            }
        }
        pthread_mutex_unlock(&g_lock);
    }
    return act;
}

/* One pass: start what may start, advance what is in flight, drive UCX,
 * finish what is done. Returns non-zero if anything happened. Caller holds
 * eng->drive. */
static int engine_pass(hc_engine_t *eng)
{
    t_shm_wait = 0;
    int act = engine_start(eng);
    act |= engine_advance(eng, act);
    act |= engine_finish(eng);
    return act;
}

static void *engine_main(void *arg)
{
    hc_engine_t *eng = arg;
    hc_trace_thread_name("hcomm progress");
    unsigned idle = 0;
    idle_state_t is = {0};
    while (!eng->stop) {
        pthread_mutex_lock(&g_lock);
        int nothing = eng->queued == 0 || eng->helpers > 0;
        if (nothing)
            eng->sleeping = 1;
        uint64_t gen = eng->enq_gen;
        pthread_mutex_unlock(&g_lock);
        if (nothing) {
            /* nothing to do, or a helper drives: sleep until kicked (on
             * the eventfd alone: the worker's fd may stay readable) */
            struct pollfd pfd = {.fd = eng->evfd, .events = POLLIN};
            uint64_t v;
            while (poll(&pfd, 1, eng->queued ? 10 : -1) < 0 && errno == EINTR)
                ;
            while (read(eng->evfd, &v, sizeof(v)) > 0)
                ;
            pthread_mutex_lock(&g_lock);
            eng->sleeping = 0;
            pthread_mutex_unlock(&g_lock);
            idle = 0;
            continue;
        }
        pthread_mutex_lock(&eng->drive);
        int act = engine_pass(eng);
        pthread_mutex_unlock(&eng->drive);
        if (act) {
            idle = 0;
            is.busy_streak = is.backoff_us = 0;
            continue;
        }
        /* No sched_yield either: on a core shared with the application's
         * computation a yield can cost a whole time slice (milliseconds)
         * before the next poll, while the event fd wakes us, with the
         * scheduler's wake-up preference, as soon as data arrives. */
        if (++idle < HC_IDLE_PASSES)
            continue;
        idle = 0;
        pthread_mutex_lock(&g_lock);
        int fresh = eng->enq_gen != gen || eng->helpers > 0;
        if (!fresh)
            eng->sleeping = 1;
        pthread_mutex_unlock(&g_lock);
        if (fresh)
            continue;
        idle_wait(eng, eng->epfd, &is, HC_SLEEP_MAX_MS);
        uint64_t v;
        while (read(eng->evfd, &v, sizeof(v)) > 0)
            ;
        pthread_mutex_lock(&g_lock);
        eng->sleeping = 0;
        pthread_mutex_unlock(&g_lock);
    }
    struct timespec cpu;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    HC_INFO(HC_SUB_STREAM, "progress thread: %.3f s of CPU; with operations in flight it "
            "slept %llu times on the UCX worker and %llu times backing off", cpu.tv_sec +
            cpu.tv_nsec * 1e-9, (unsigned long long)is.sleeps, (unsigned long long)is.backoffs);
    return NULL;
}

/* ---- submitting -------------------------------------------------------- */

static int comm_streams(hc_comm_t *c)
{
    if (c->streams)
        return HCCL_SUCCESS;
    hc_comm_streams_t *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return HCCL_E_MEMORY;
    pthread_mutex_init(&st->lock, NULL);
    __atomic_store_n(&c->streams, st, __ATOMIC_RELEASE);
    return HCCL_SUCCESS;
}

uint32_t hc_task_take_seq(hc_task_t *t, hc_comm_t *c, uint32_t n, uint64_t *ticket)
{
    hc_task_t *owner = t->owner ? t->owner : t;
    uint32_t first = 0;
    *ticket = HC_NO_TICKET;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t s = hc_comm_next_seq(c);
        if (k == 0) {
            first = s;
            *ticket = hc_stream_last_ticket(c);
        }
        if (owner->stream)
            __atomic_add_fetch(&c->streams->held[s], 1, __ATOMIC_RELAXED);
    }
    if (owner->stream && n) {
        if (owner->nholds == owner->holds_cap) {
            uint32_t ncap = owner->holds_cap ? 2 * owner->holds_cap : 4;
            hc_seq_hold_t *nh = realloc(owner->holds, ncap * sizeof(*nh));
            if (nh == NULL) { /* cannot record: give them back at once (rare) */
                for (uint32_t k = 0; k < n; k++)
                    __atomic_sub_fetch(&c->streams->held[hc_seq_nth(first, k)], 1,
                                       __ATOMIC_RELAXED);
                return first;
            }
            owner->holds = nh;
            owner->holds_cap = ncap;
        }
        owner->holds[owner->nholds++] = (hc_seq_hold_t){c, first, n};
    }
    return first;
}

void hc_stream_note_ticket(hc_comm_t *c)
{
    c->streams->last_ticket = c->streams->next_ticket++;
}

HC_HOT uint64_t hc_stream_last_ticket(hc_comm_t *c)
{
    return c->streams ? c->streams->last_ticket : HC_NO_TICKET;
}

HC_HOT int hc_stream_turn(hc_comm_t *c, uint64_t ticket)
{
    return ticket == HC_NO_TICKET || c->streams == NULL ||
           __atomic_load_n(&c->streams->begun, __ATOMIC_ACQUIRE) == ticket;
}

HC_HOT void hc_stream_begun(hc_comm_t *c, uint64_t ticket)
{
    if (ticket == HC_NO_TICKET || c->streams == NULL)
        return;
    hc_comm_streams_t *st = c->streams;
    pthread_mutex_lock(&st->lock);
    if (ticket >= st->begun) {
        st->done[ticket & 255] = 1;
        uint64_t b = st->begun;
        while (st->done[b & 255]) {
            st->done[b & 255] = 0;
            b++;
        }
        __atomic_store_n(&st->begun, b, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&st->lock);
}

typedef struct {
    hc_comm_t *c;
    uint64_t ticket;
} turn_arg_t;

static int turn_come(void *p)
{
    turn_arg_t *a = p;
    return hc_stream_turn(a->c, a->ticket);
}

HC_HOT void hc_stream_wait_turn(hc_comm_t *c, uint64_t ticket)
{
    if (hc_stream_turn(c, ticket))
        return;
    pthread_mutex_lock(&g_lock);
    hc_engine_t *eng = c->ctx->engine;
    pthread_mutex_unlock(&g_lock);
    turn_arg_t a = {c, ticket};
    if (eng)
        help_until(eng, turn_come, &a);
}

typedef struct {
    hc_comm_t *c;
    uint32_t s;
} seq_arg_t;

static int seq_free(void *p)
{
    seq_arg_t *a = p;
    return __atomic_load_n(&a->c->streams->held[a->s], __ATOMIC_ACQUIRE) == 0;
}

void hc_stream_wait_seq(hc_comm_t *c, uint32_t s)
{
    if (c->streams == NULL || c->streams->held[s] == 0)
        return;
    HC_INFO(HC_SUB_STREAM, "comm %s: operation sequence %u is still used by a queued stream "
            "operation (254 outstanding); waiting for it", c->name, s);
    pthread_mutex_lock(&g_lock);
    hc_engine_t *eng = c->ctx->engine;
    pthread_mutex_unlock(&g_lock);
    seq_arg_t a = {c, s};
    if (eng)
        help_until(eng, seq_free, &a);
}

typedef struct {
    hc_comm_t *c;
} drain_arg_t;

static int comm_idle(void *p)
{
    drain_arg_t *a = p;
    pthread_mutex_lock(&g_lock);
    int idle = a->c->streams->pending == 0;
    pthread_mutex_unlock(&g_lock);
    return idle;
}

void hc_stream_comm_fini(hc_comm_t *c)
{
    if (c->streams == NULL)
        return;
    pthread_mutex_lock(&g_lock);
    hc_engine_t *eng = c->streams->pending ? c->ctx->engine : NULL;
    pthread_mutex_unlock(&g_lock);
    if (eng) {
        HC_INFO(HC_SUB_STREAM, "comm %s: waiting for its stream operations before destroying "
                "it", c->name);
        drain_arg_t a = {c};
        help_until(eng, comm_idle, &a);
    }
    pthread_mutex_destroy(&c->streams->lock);
    free(c->streams);
    c->streams = NULL;
}

void hc_task_init(hc_task_t *t, const hc_task_vt_t *vt, hc_comm_t *c, const char *what,
                  void *stream)
{
    memset(t, 0, sizeof(*t));
    t->vt = vt;
    t->c = c;
    t->what = what;
    t->status = HCCL_E_AGAIN;
    t->stream = stream;
    t->stream_id = hc_stream_id(stream);
    t->max_concurrent = c->cfg->max_concurrent ? c->cfg->max_concurrent : 1;
    if (stream && hc_trace_on)
        t->t_enq = hc_trace_now();
    /* Before the first sequence number is reserved: from now on the
     * communicator's operations begin in ticket order. Blocking groups and
     * AllReduceMulti need that too: their parts begin lazily (a bucket when
     * it is packed), and what begin decides (shared staging epochs) must
     * not depend on that timing. */
    if (comm_streams(c) != HCCL_SUCCESS)
        HC_WARN(HC_SUB_STREAM, "comm %s: out of memory for stream state", c->name);
}

void hc_stream_note_shm_wait(void)
{
    t_shm_wait = 1;
}

void hc_task_prepare_coll(hc_comm_t *c, void *stream)
{
    /* A communicator's first collective builds its topology (splits, lazily)
     * and sets up its shared staging (a collective handshake, src/comm/shm.h).
     * For a stream operation that must not happen later in the progress
     * thread: it would block the engine. Here it runs in the caller's
     * thread, in program order. */
    if (stream && hc_comm_topo(c) == HCCL_SUCCESS && c->shm_state == 0)
        hc_shm_comm_setup(c);
}

void hc_task_add_range(hc_task_t *t, const void *p, uint64_t len, int write)
{
    if (p == NULL || len == 0)
        return;
    uintptr_t lo = (uintptr_t)p, hi = lo + len;
    for (unsigned i = 0; i < t->nrng; i++) { /* merge with an identical range */
        hc_range_t *r = &t->rng[i];
        if (r->lo == lo && r->hi == hi) {
            r->write |= write;
            return;
        }
    }
    if (t->nrng == HC_TASK_RANGES) {
        t->fence = 1; /* too many to check: order it fully */
        return;
    }
    t->rng[t->nrng++] = (hc_range_t){lo, hi, write};
}

void hc_task_free_common(hc_task_t *t)
{
    free(t->holds);
    t->holds = NULL;
}

int hc_stream_stage_get(hc_task_t *t, uint64_t bytes)
{
    hc_task_t *o = t->owner ? t->owner : t;
    if (o->stream == NULL)
        return 1;
    int ok;
    pthread_mutex_lock(&g_lock);
    hc_engine_t *eng = o->stream->eng;
    uint64_t budget = o->c->cfg->buffsize;
    ok = o->stream->head == o || eng->stage_used + bytes <= budget;
    if (ok)
        eng->stage_used += bytes;
    pthread_mutex_unlock(&g_lock);
    return ok;
}

void hc_stream_stage_put(hc_task_t *t, uint64_t bytes)
{
    hc_task_t *o = t->owner ? t->owner : t;
    if (o->stream == NULL)
        return;
    pthread_mutex_lock(&g_lock);
    o->stream->eng->stage_used -= bytes;
    pthread_mutex_unlock(&g_lock);
}

static int stream_submit(hc_task_t *t)
{
    hc_stream_t *s = t->stream;
    hc_comm_t *c = t->c;
    if (c->streams == NULL) {
        HC_ERROR(HC_SUB_STREAM, "%s: out of memory", t->what);
        t->vt->destroy(t);
        return HCCL_E_MEMORY;
    }
    pthread_mutex_lock(&g_lock);
    if (hc_handle_get(s->handle, HC_HANDLE_STREAM) != s) { /* destroyed meanwhile */
        pthread_mutex_unlock(&g_lock);
        HC_ERROR(HC_SUB_STREAM, "%s: the stream was destroyed", t->what);
        t->vt->destroy(t);
        return HCCL_E_PARA;
    }
    hc_engine_t *eng;
    int rc = engine_get(c->ctx, &eng);
    if (rc != HCCL_SUCCESS) {
        pthread_mutex_unlock(&g_lock);
        t->vt->destroy(t);
        return rc;
    }
    t->state = HC_TASK_QUEUED;
    t->next = NULL;
    if (s->tail)
        s->tail->next = t;
    else
        s->head = t;
    s->tail = t;
    s->n_enq++;
    s->eng = eng;
    if (!s->active) { /* join the active list at its priority */
        hc_stream_t **pp = &g_active;
        while (*pp && (*pp)->prio >= s->prio)
            pp = &(*pp)->next_active;
        s->next_active = *pp;
        *pp = s;
        s->active = 1;
    }
    c->streams->pending++;
    eng->queued++;
    eng->enq_gen++;
    if (eng->sleeping)
        kick(eng);
    pthread_mutex_unlock(&g_lock);
    return HCCL_SUCCESS;
}

int hc_task_dispatch(hc_task_t *t)
{
    if (t->stream)
        return stream_submit(t);
    return hc_task_run(t);
}
