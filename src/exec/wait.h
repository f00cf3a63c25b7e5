/*
 * src/exec/wait.h - the one wait: what a thread does between progress passes
 * that found nothing to do, until its work is done or its deadline passes.
 *
 * Every loop in which a caller's thread waits for communication (a blocking
 * call, hc_comm_wait; a task run in the caller's thread, hc_task_run; a
 * thread that drives the stream engine while it waits, src/sched/stream.c) runs
 *
 *     hc_wait_begin(&w, c, what, spin);
 *     for (;;) {
 *         progress();                   // executors, the UCX worker
 *         if (done) break;
 *         if (something moved) { hc_wait_moved(&w); continue; }
 *         rc = hc_wait_idle(&w, ...);  // spin, poll on, or sleep
 *         if (rc != HCCL_SUCCESS) { cancel; break; }
 *     }
 *     hc_wait_end(&w);
 *
 * The policy (hc_wait_idle), the same for all of them:
 *  1. spin: `spin` empty passes without a system call or a clock read
 *     (hc_comm_spin_polls: fewer with more ranks than cores);
 *  2. poll on until the thread has been idle HC_WAIT_POLL_US, with a clock
 *     read per pass; with more ranks on the host than cores (the awaited
 *     rank may need this core), sched_yield between passes. Not
 *     sched_yield otherwise: beside a busy process on the core, a yield
 *     gives it the rest of its time slice (ms) before the waiter runs
 *     again, where a sleeper woken by the peer's bell has the scheduler's
 *     wake-up preference;
 *  3. sleep on what the awaited peer or the network wakes, at most
 *     HC_WAIT_SLEEP_MAX_US at a time (deadline, HcclCommAbort and failed
 *     peers are checked between sleeps):
 *     - a flag in a peer's shared staging half: the futex word of that half
 *       (HC_SEG_WAKE; rung by src/exec/exec.c). The executor records the half of
 *       the last flag it found unset (hc_wait_note_flag). The sleeper
 *       announces itself in the half before a last pass re-checks the flag;
 *       the peer rings the bell only when someone announced, so publishing
 *       a flag costs no system call while nobody sleeps (with transfers in
 *       flight too, the sleep lasts at most HC_WAIT_MIXED_SLEEP_US);
 *     - otherwise, with UCX transfers in flight: the UCX workers' event fds
 *       (ucp_worker_arm, then poll). UCX answers "busy" when events are
 *       pending: the thread then yields and polls again.
 *  The stream engine's progress thread is the one waiter with another
 *  policy: it works while the application computes, so it never spins or
 *  yields, and it must also wake for new work (src/sched/stream.c, idle_wait);
 *  its tasks' deadlines follow the rule below.
 *  The deadline rule (hc_wait_timeout): HCCL_EXEC_TIMEOUT, times
 *  c->wait_scale when that is > 1, capped by c->wait_limit_s when > 0;
 *  0 means none.
 */
#ifndef HC_WAIT_H_
#define HC_WAIT_H_

#include <stddef.h>
#include <stdint.h>

struct hc_comm;
struct hc_context;

/* Idle time before the thread sleeps (us): longer than the waits inside a
 * pipelined operation on an idle machine (a wake-up from sleep costs ~80 us
 * on these VMs, UCX-FACTS.md), short against the time slice a descheduled
 * peer waits for. */
#ifndef HC_WAIT_POLL_US
#define HC_WAIT_POLL_US 50
#endif
/* Longest single sleep (us). */
#define HC_WAIT_SLEEP_MAX_US 1000
/* Longest sleep on a bell while transfers are in flight too (us). */
#define HC_WAIT_MIXED_SLEEP_US 50

typedef struct hc_wait {
    struct hc_comm *c;      /* NULL: no deadline, no abort (hc_wait_begin_ctx) */
    struct hc_context *ctx;
    const char *what;
    double start, timeout;  /* timeout 0: none */
    unsigned idle, spin;    /* empty passes in a row; before reading the clock */
    double idle_since;      /* first clock read of this idle stretch (0: not yet) */
    uint32_t *bell;         /* announced as a sleeper on this bell (NULL: none) */
    uint32_t seen;          /* the bell's value when announced */
    uint64_t sleeps;        /* sleeps taken (futex or event fd) */
} hc_wait_t;

/* The deadline of a wait on communicator c, in seconds (0: none). */
double hc_wait_timeout(const struct hc_comm *c);

void hc_wait_begin(hc_wait_t *w, struct hc_comm *c, const char *what, unsigned spin);
/* A wait with neither deadline nor abort of its own (a thread that drives
 * the stream engine: every task it runs has its own, src/sched/stream.c). */
void hc_wait_begin_ctx(hc_wait_t *w, struct hc_context *ctx, const char *what, unsigned spin);
/* A pass made progress: spin again. */
void hc_wait_moved(hc_wait_t *w);
/* A pass found nothing to do; what it waits on is what the executor noted
 * during the pass (hc_wait_note_flag, hc_wait_note_net). Returns
 * HCCL_SUCCESS to go on, HCCL_E_SUSPENDING after HcclCommAbort or
 * HCCL_E_TIMEOUT at the deadline (logged, with `where` filled by describe
 * when given): the caller cancels its work. */
int hc_wait_idle(hc_wait_t *w, void (*describe)(void *arg, char *buf, size_t len),
                 void *arg);
/* Seconds this idle stretch has lasted (0 while spinning). */
double hc_wait_idle_s(const hc_wait_t *w);
/* Leave the wait (withdraw the sleeper's announcement). */
void hc_wait_end(hc_wait_t *w);

/* ---- the bell of a shared staging half (coll/coll.h HC_SEG_WAKE) ---- */

/* The half of the last flag this thread found unset (NULL: none since the
 * last idle pass). Written only while waiting (a flag not yet set), so the
 * default TLS model's call costs nothing on the fast path; initial-exec
 * would put all of the library's thread-local storage in the static TLS
 * block, and dlopen of the library (libhccl.so by name) then fails with
 * "cannot allocate memory in static TLS block" (test/mpi/compat.sh). */
extern __thread char *hc_wait_flag_half;

/* Called by the executor when a flag in the half at `half` is not yet set
 * (this thread's last such flag is where it sleeps). */
static inline void hc_wait_note_flag(char *half)
{
    hc_wait_flag_half = half;
}

/* Set by the executor when a pass leaves a transfer through the transport
 * pending (the thread sleeps on the UCX workers' event fds, or, when it
 * also awaits a flag, on the flag's bell for at most
 * HC_WAIT_MIXED_SLEEP_US). */
extern __thread int hc_wait_net;

static inline void hc_wait_note_net(void)
{
    hc_wait_net = 1;
}

/* The writer's side (src/exec/exec.c, after a flag store in its own half, when
 * bell[1], the count of announced sleepers, is not 0): bump the bell
 * (bell[0]) and wake its sleepers. */
void hc_wake_bell(uint32_t *bell);

#endif
