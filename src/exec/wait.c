/* src/exec/wait.c - the one wait (see wait.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "wait.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <hccl/hccl.h>

#include "src/comm/comm.h"
#include "src/transport/context.h"
#include "src/base/log.h"
#include "src/base/util.h"

__thread char *hc_wait_flag_half;
__thread int hc_wait_net;

void hc_wake_bell(uint32_t *bell)
{
    __atomic_add_fetch(&bell[0], 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &bell[0], FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

double hc_wait_timeout(const hc_comm_t *c)
{
    double timeout = c->cfg->exec_timeout;
    if (c->wait_scale > 1)
        timeout *= c->wait_scale;
    if (c->wait_limit_s > 0 && (timeout <= 0 || c->wait_limit_s < timeout))
        timeout = c->wait_limit_s;
    return timeout > 0 ? timeout : 0;
}

void hc_wait_begin(hc_wait_t *w, hc_comm_t *c, const char *what, unsigned spin)
{
    hc_wait_begin_ctx(w, c->ctx, what, spin);
    w->c = c;
    w->timeout = hc_wait_timeout(c);
}

void hc_wait_begin_ctx(hc_wait_t *w, hc_context_t *ctx, const char *what, unsigned spin)
{
    w->c = NULL;
    w->ctx = ctx;
    w->what = what;
    w->start = 0; /* read at the first clock read: most waits never get there */
    w->timeout = 0;
    w->idle = 0;
    w->spin = spin;
    w->idle_since = 0;
    w->bell = NULL;
    w->seen = 0;
    w->sleeps = 0;
    hc_wait_flag_half = NULL;
    hc_wait_net = 0;
}

static void withdraw(hc_wait_t *w)
{
    if (w->bell) {
        __atomic_sub_fetch(&w->bell[1], 1, __ATOMIC_SEQ_CST);
        w->bell = NULL;
    }
}

void hc_wait_moved(hc_wait_t *w)
{
    w->idle = 0;
    w->idle_since = 0;
    withdraw(w);
    hc_wait_flag_half = NULL;
    hc_wait_net = 0;
}

void hc_wait_end(hc_wait_t *w)
{
    withdraw(w);
    hc_wait_flag_half = NULL;
    hc_wait_net = 0;
}

double hc_wait_idle_s(const hc_wait_t *w)
{
    return w->idle_since > 0 ? hc_now_s() - w->idle_since : 0;
}

/* Sleep on the UCX workers' event fds, at most HC_WAIT_SLEEP_MAX_US; when
 * UCX says events are pending, yield instead. */
static void sleep_ucx(hc_wait_t *w)
{
    hc_context_t *ctx = w->ctx;
    pthread_mutex_lock(&ctx->lock);
    ucs_status_t st = ucp_worker_arm(ctx->worker);
    if (st == UCS_OK && ctx->worker_tcp)
        st = ucp_worker_arm(ctx->worker_tcp);
    pthread_mutex_unlock(&ctx->lock);
    if (st != UCS_OK || ctx->wfd < 0) {
        sched_yield();
        return;
    }
    struct pollfd p[2] = {{.fd = ctx->wfd, .events = POLLIN},
                          {.fd = ctx->wfd_tcp, .events = POLLIN}};
    w->sleeps++;
    poll(p, ctx->wfd_tcp >= 0 ? 2 : 1, HC_WAIT_SLEEP_MAX_US / 1000);
}

int hc_wait_idle(hc_wait_t *w, void (*describe)(void *, char *, size_t), void *arg)
{
    hc_comm_t *c = w->c;
    char *half = hc_wait_flag_half;
    const int net = hc_wait_net;
    hc_wait_flag_half = NULL;
    hc_wait_net = 0;
    if (c && c->aborted) {
        HC_WARN(HC_SUB_COLL, "%s on %s rank %u: aborted by HcclCommAbort", w->what, c->name,
                c->rank);
        return HCCL_E_SUSPENDING;
    }
    if (++w->idle < w->spin)
        return HCCL_SUCCESS;
    const double now = hc_now_s();
    if (w->start == 0)
        w->start = now;
    if (w->idle_since == 0)
        w->idle_since = now;
    if (c && w->timeout > 0 && now - w->start >= w->timeout) {
        char where[200] = "nothing";
        if (describe)
            describe(arg, where, sizeof(where));
        HC_ERROR(HC_SUB_COLL, "%s timed out after %.1f s (HCCL_EXEC_TIMEOUT%s) on comm %s "
                 "rank %u: waiting at %s", w->what, now - w->start,
                 c->wait_scale > 1 ? ", scaled for this call" : "", c->name, c->rank, where);
        return HCCL_E_TIMEOUT;
    }
    if (now - w->idle_since < HC_WAIT_POLL_US * 1e-6) {
        /* not sched_yield on a core the peer does not share: with a busy
         * process there, it would run out its time slice first */
        if (c && hc_comm_oversubscribed(c))
            sched_yield();
        return HCCL_SUCCESS;
    }
    if (half != NULL) {
        uint32_t *bell = (uint32_t *)(half + HC_SEG_WAKE);
        if (bell != w->bell) {
            /* announce, then let one more pass read the flag: either it
             * sees the peer's store, or the peer sees us and rings */
            withdraw(w);
            w->seen = __atomic_load_n(&bell[0], __ATOMIC_SEQ_CST);
            __atomic_add_fetch(&bell[1], 1, __ATOMIC_SEQ_CST);
            w->bell = bell;
            return HCCL_SUCCESS;
        }
        /* with transfers in flight too, whose arrival rings no bell: short */
        struct timespec ts = {0, (net ? HC_WAIT_MIXED_SLEEP_US : HC_WAIT_SLEEP_MAX_US) * 1000L};
        w->sleeps++;
        syscall(SYS_futex, &bell[0], FUTEX_WAIT, w->seen, &ts, NULL, 0);
        w->seen = __atomic_load_n(&bell[0], __ATOMIC_SEQ_CST);
        return HCCL_SUCCESS;
    }
    withdraw(w);
    if (net)
        sleep_ucx(w);
    else
        sched_yield();
    return HCCL_SUCCESS;
}
