/*
 * test/mpi/test_elastic.c - members leave and join a live communicator
 * (public API only). Driven by test/mpi/elastic.sh, one mode per run:
 *
 *   remove DIR kill|stop|kill2 (4+ ranks, kill2 5+; --mca
 *                          orte_abort_on_non_zero_status 0)
 *       Rank n-2 is the victim: after a last MPI_Barrier it writes its pid
 *       to DIR/victim.pid and kills (SIGKILL) or stops (SIGSTOP) itself
 *       while the others are inside an HcclAllReduce that needs it. Every
 *       survivor must get HCCL_E_REMOTE or HCCL_E_TIMEOUT (HCCL_EXEC_TIMEOUT,
 *       5 s in the script) instead of hanging (kill: a blocking
 *       AllReduce; stop: one on a stream, the error comes from
 *       HcclStreamSynchronize), see it in HcclGetCommAsyncError, (stop:
 *       HcclCommAbort first), then
 *       HcclCommRemoveMember(victim), and run checked collectives at the new
 *       size. Each survivor writes DIR/result.<world rank>: the error, the
 *       wall-clock times around the removal and its check counts. The
 *       script reads those (mpirun may never return after a SIGKILL).
 *       HcclCommGetFailedRanks must list a killed victim (polled up to
 *       10 s) and never a live rank, and nothing after the removal; the
 *       survivors remove the rank it listed. kill2: rank 1 dies as well,
 *       1.5 s after the first victim, while the survivors wait for it in
 *       HcclCommRemoveMember: the removal starts again and drops both.
 *   add-spawn              (2 ranks) HcclCommAddMember(comm, 1): hcomm
 *       spawns this program again; the spawned copy sees a parent and calls
 *       HcclCommJoin(NULL). Then 3 ranks run checked collectives.
 *   add-connect FILE       (2 ranks) HcclCommGetJoinInfo -> FILE, then
 *       HcclCommAddMember(comm, 2) accepts the newcomer.
 *   join FILE              (1 rank, another mpirun) waits for FILE and calls
 *       HcclCommJoin(string) on it.
 *
 * The checks after a change: size and rank; an AllGather of identities
 * (world rank in the first job, 100 for a newcomer) gives the expected
 * order; AllReduce, Broadcast, ReduceScatter and a Send/Recv ring give
 * the right values. Exit 1 on a failure (the add modes also agree on the
 * failure count with an hcomm AllReduce over the new communicator).
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int g_rank = -1;
static long g_checks, g_fails;
static pthread_mutex_t g_count_lock = PTHREAD_MUTEX_INITIALIZER; /* remove ... threads */

static void check(int cond, const char *fmt, ...)
{
    pthread_mutex_lock(&g_count_lock);
    g_checks++;
    g_fails += !cond;
    pthread_mutex_unlock(&g_count_lock);
    if (cond)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[test_elastic %d] FAIL ", g_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int ok(const char *what, HcclResult r, HcclResult exp)
{
    check(r == exp, "%s returned %d (%s), expected %d", what, (int)r, HcclGetErrorString(r),
          (int)exp);
    return r == exp;
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Collectives on comm whose rank i has identity ids[i]; this process is
 * identity `me`. */
static void check_comm(HcclComm comm, const int32_t *ids, int n, int32_t me, int round,
                       const char *label)
{
    uint32_t sz = 0, rk = 0;
    HcclGetRankSize(comm, &sz);
    HcclGetRankId(comm, &rk);
    check((int)sz == n, "%s: size %u, expected %d", label, sz, n);
    if ((int)sz != n)
        return;
    check(ids[rk] == me, "%s: rank %u has identity %d, expected %d", label, rk, me, ids[rk]);
    int32_t got[64];
    if (ok("HcclAllGather", HcclAllGather(&me, got, 1, HCCL_DATA_TYPE_INT32, comm, NULL),
           HCCL_SUCCESS))
        for (int i = 0; i < n; i++)
            check(got[i] == ids[i], "%s: AllGather: rank %d is %d, expected %d", label, i,
                  got[i], ids[i]);
    enum { C = 5000 };
    int32_t *a = malloc((size_t)n * C * sizeof *a), *b = malloc((size_t)n * C * sizeof *b);
    for (int i = 0; i < C; i++)
        a[i] = me * 7 + i + round;
    if (ok("HcclAllReduce", HcclAllReduce(a, b, C, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm,
                                          NULL), HCCL_SUCCESS))
        for (int i = 0; i < C; i++) {
            int32_t e = 0;
            for (int k = 0; k < n; k++)
                e += ids[k] * 7 + i + round;
            if (b[i] != e) {
                check(0, "%s: AllReduce [%d] = %d, expected %d", label, i, b[i], e);
                break;
            }
        }
    uint32_t root = (uint32_t)(n - 1);
    for (int i = 0; i < C; i++)
        a[i] = rk == root ? i * 3 + round : -1;
    if (ok("HcclBroadcast", HcclBroadcast(a, C, HCCL_DATA_TYPE_INT32, root, comm, NULL),
           HCCL_SUCCESS))
        for (int i = 0; i < C; i++)
            if (a[i] != i * 3 + round) {
                check(0, "%s: Broadcast [%d] = %d", label, i, a[i]);
                break;
            }
    for (int i = 0; i < n * C; i++)
        a[i] = me + i;
    if (ok("HcclReduceScatter", HcclReduceScatter(a, b, C, HCCL_DATA_TYPE_INT32,
                                                  HCCL_REDUCE_SUM, comm, NULL), HCCL_SUCCESS))
        for (int i = 0; i < C; i++) {
            int32_t e = 0;
            for (int k = 0; k < n; k++)
                e += ids[k] + (int32_t)rk * C + i;
            if (b[i] != e) {
                check(0, "%s: ReduceScatter [%d] = %d, expected %d", label, i, b[i], e);
                break;
            }
        }
    if (n > 1) { /* a ring of Send/Recv */
        int32_t sv = me * 11 + round, rv = -1;
        HcclGroupStart();
        HcclSend(&sv, 1, HCCL_DATA_TYPE_INT32, (rk + 1) % n, comm, NULL);
        HcclRecv(&rv, 1, HCCL_DATA_TYPE_INT32, (rk + n - 1) % n, comm, NULL);
        if (ok("HcclGroupEnd (Send/Recv ring)", HcclGroupEnd(), HCCL_SUCCESS))
            check(rv == ids[(rk + n - 1) % n] * 11 + round, "%s: Recv got %d, expected %d",
                  label, rv, ids[(rk + n - 1) % n] * 11 + round);
    }
    free(a);
    free(b);
}

/* The script's files in DIR: a victim appends its pid to victim.pid (the
 * script ends it); a survivor writes result.<rank> in one go (.tmp, then
 * rename: the script waits for the names). */
static void note_victim(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/victim.pid", dir);
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, "%d\n", (int)getpid());
        fclose(f);
    }
}

static void write_result(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void write_result(const char *dir, const char *fmt, ...)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/result.%d", dir, g_rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
    rename(tmp, path);
}

/* ---- remove ------------------------------------------------------------- */

static int mode_remove(const char *dir, int stop, int two)
{
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n < (two ? 5 : 3)) {
        fprintf(stderr, "test_elastic remove: needs at least %d ranks\n", two ? 5 : 3);
        return 2;
    }
    const int victim = n - 2;
    /* kill2: rank 1 dies too, 1.5 s after the first (the survivors are in
     * HcclCommRemoveMember by then, waiting for it: it stops that
     * agreement, which starts again without both) */
    const int victim2 = two ? 1 : -1;
    HcclComm comm = NULL;
    if (!ok("HcclCommInitMpi", HcclCommInitMpi(MPI_COMM_WORLD, &comm), HCCL_SUCCESS))
        return 1;
    int32_t ids[64];
    for (int i = 0; i < n; i++)
        ids[i] = i;
    for (int r = 0; r < 3; r++)
        check_comm(comm, ids, n, g_rank, r, "before the failure");
    MPI_Barrier(MPI_COMM_WORLD); /* the last MPI call over a group with the victim */
    if (g_rank == victim || g_rank == victim2) {
        note_victim(dir);
        usleep(g_rank == victim2 ? 1800000 : 300000); /* the others are inside the AllReduce */
        raise(stop ? SIGSTOP : SIGKILL);
        /* stopped: resumed only to be killed by the script */
        for (;;)
            pause();
    }
    enum { C = 1 << 18 };
    float *x = malloc(C * sizeof *x);
    for (int i = 0; i < C; i++)
        x[i] = (float)i;
    double t0 = wall();
    HcclResult r;
    HcclStream st = NULL;
    if (stop) { /* a stream operation in flight: the error comes at the synchronize */
        ok("HcclStreamCreate", HcclStreamCreate(&st), HCCL_SUCCESS);
        ok("HcclAllReduce (enqueue)",
           HcclAllReduce(x, x, C, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, st), HCCL_SUCCESS);
        r = HcclStreamSynchronize(st);
    } else {
        r = HcclAllReduce(x, x, C, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL);
    }
    double t_err = wall() - t0;
    check(r == HCCL_E_REMOTE || r == HCCL_E_TIMEOUT, "AllReduce with a %s member returned %d "
          "(%s), expected HCCL_E_REMOTE or HCCL_E_TIMEOUT", stop ? "stopped" : "killed",
          (int)r, HcclGetErrorString(r));
    HcclResult ae = HCCL_SUCCESS;
    HcclGetCommAsyncError(comm, &ae);
    check(ae == r, "HcclGetCommAsyncError = %d, expected the operation's error %d", (int)ae,
          (int)r);
    /* Which rank failed, from hcomm: a killed member is listed within about
     * a keepalive interval (poll until then, 10 s at most); a stopped one
     * only once a survivor removed it. Never a live member. */
    uint32_t fr[64], nf = 0;
    double tf0 = wall(), t_known = -1;
    for (;;) {
        HcclResult gr = HcclCommGetFailedRanks(comm, fr, 64, &nf);
        ok("HcclCommGetFailedRanks", gr, HCCL_SUCCESS);
        if (gr != HCCL_SUCCESS)
            break;
        for (uint32_t i = 0; i < nf && i < 64; i++)
            check((int)fr[i] == victim || (int)fr[i] == victim2,
                  "HcclCommGetFailedRanks lists rank %u, which is alive", fr[i]);
        if (nf > 0) {
            t_known = wall() - tf0;
            break;
        }
        if (stop || wall() - tf0 > 10)
            break;
        usleep(10000);
    }
    if (!stop)
        check(nf >= 1 && (two || (nf == 1 && (int)fr[0] == victim)),
              "HcclCommGetFailedRanks: %u ranks listed %.1f s after the error, expected the "
              "killed rank %d", nf, wall() - tf0, victim);
    if (stop) {
        ok("HcclCommAbort", HcclCommAbort(comm), HCCL_SUCCESS);
        HcclStreamDestroy(st);
    }
    double te0 = wall();
    /* the rank hcomm listed (kill2: the one it knew first; the other is
     * removed with it) */
    HcclResult rr = HcclCommRemoveMember(comm, nf > 0 ? fr[0] : (uint32_t)victim);
    double te1 = wall();
    ok("HcclCommRemoveMember", rr, HCCL_SUCCESS);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (i != victim && i != victim2)
            ids[m++] = i;
    if (rr == HCCL_SUCCESS) {
        uint32_t rk = 99;
        const int want = g_rank - (g_rank > victim) - (victim2 >= 0 && g_rank > victim2);
        HcclGetRankId(comm, &rk);
        check((int)rk == want, "rank after removal %u, expected %d", rk, want);
        HcclGetCommAsyncError(comm, &ae);
        check(ae == HCCL_SUCCESS, "async error after removal: %d", (int)ae);
        nf = 99;
        ok("HcclCommGetFailedRanks (after the removal)",
           HcclCommGetFailedRanks(comm, NULL, 0, &nf), HCCL_SUCCESS);
        check(nf == 0, "HcclCommGetFailedRanks after the removal: %u ranks listed", nf);
        for (int k = 0; k < 5; k++)
            check_comm(comm, ids, m, g_rank, 10 + k, "after the removal");
        for (int i = 0; i < C; i++)
            x[i] = (float)(i % 1000);
        if (ok("HcclAllReduce (1 MB, after the removal)",
               HcclAllReduce(x, x, C, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL),
               HCCL_SUCCESS))
            for (int i = 0; i < C; i++)
                if (x[i] != (float)(m * (i % 1000))) {
                    check(0, "1 MB AllReduce after removal: [%d] = %g", i, x[i]);
                    break;
                }
    }
    write_result(dir, "rank=%d error=%d error_name=%s error_after_s=%.3f failed_known_after_s=%.3f "
                 "remove_enter=%.6f remove_exit=%.6f checks=%ld fails=%ld\n", g_rank, (int)r,
                 HcclGetErrorString(r), t_err, t_known, te0, te1, g_checks, g_fails);
    printf("test_elastic: rank %d: AllReduce -> %s after %.2f s; RemoveMember %.2f ms; "
           "%ld checks, %ld failures\n", g_rank, HcclGetErrorString(r), t_err,
           (te1 - te0) * 1e3, g_checks, g_fails);
    fflush(stdout);
    free(x);
    HcclCommDestroy(comm);
    return g_fails ? 1 : 0;
}

/* ---- remove, two threads ------------------------------------------------ */

/* remove DIR threads: every rank drives two communicators over the same
 * members (the world and a split of it) from two threads, AllReduces in
 * a loop, each checked; the victim (rank n-2) kills itself while its
 * threads are in that loop. On the survivors each thread, on its own
 * communicator and at the same time as the other: the error, the failed
 * rank from HcclCommGetFailedRanks, HcclCommRemoveMember, and checked
 * collectives at the new size (concurrent removals share the process's
 * address book, its endpoints and the notices). */
typedef struct {
    HcclComm comm;
    int tid, n, victim;
    const int32_t *ids_after; /* identities after the removal */
    HcclResult err;
    double t_err, enter, exit;
} rt_arg_t;

static void *remove_thread(void *p)
{
    rt_arg_t *a = p;
    enum { C = 4096 };
    float *x = malloc(C * sizeof *x);
    const double t0 = wall();
    HcclResult r = HCCL_SUCCESS;
    for (long it = 0; r == HCCL_SUCCESS && wall() - t0 < 30; it++) {
        for (int i = 0; i < C; i++)
            x[i] = (float)((i + it + a->tid) % 1000);
        r = HcclAllReduce(x, x, C, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, a->comm, NULL);
        if (r != HCCL_SUCCESS)
            break;
        for (int i = 0; i < C; i++)
            if (x[i] != (float)(a->n * ((i + it + a->tid) % 1000))) {
                check(0, "thread %d: AllReduce %ld before the failure: [%d] = %g", a->tid, it, i,
                      x[i]);
                break;
            }
    }
    a->err = r;
    a->t_err = wall() - t0;
    check(r == HCCL_E_REMOTE || r == HCCL_E_TIMEOUT, "thread %d: the AllReduce loop ended with "
          "%d (%s), expected HCCL_E_REMOTE or HCCL_E_TIMEOUT", a->tid, (int)r,
          HcclGetErrorString(r));
    uint32_t fr[64], nf = 0;
    for (int tries = 0; tries < 1000; tries++) {
        if (!ok("HcclCommGetFailedRanks", HcclCommGetFailedRanks(a->comm, fr, 64, &nf),
                HCCL_SUCCESS) || nf > 0)
            break;
        usleep(10000);
    }
    check(nf == 1 && (int)fr[0] == a->victim, "thread %d: HcclCommGetFailedRanks listed %u "
          "ranks (first %u), expected rank %d", a->tid, nf, nf ? fr[0] : 0, a->victim);
    a->enter = wall();
    HcclResult rr = HcclCommRemoveMember(a->comm, (uint32_t)a->victim);
    a->exit = wall();
    ok("HcclCommRemoveMember (a thread)", rr, HCCL_SUCCESS);
    if (rr == HCCL_SUCCESS)
        for (int k = 0; k < 3; k++)
            check_comm(a->comm, a->ids_after, a->n - 1, g_rank, 20 + 10 * a->tid + k,
                       a->tid ? "after the removal (thread 1, split)" :
                                "after the removal (thread 0, world)");
    free(x);
    return NULL;
}

static int mode_remove_threads(const char *dir)
{
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n < 3 || n > 64) {
        fprintf(stderr, "test_elastic remove threads: needs 3 to 64 ranks\n");
        return 2;
    }
    const int victim = n - 2;
    HcclComm comm[2] = {NULL, NULL};
    if (!ok("HcclCommInitMpi", HcclCommInitMpi(MPI_COMM_WORLD, &comm[0]), HCCL_SUCCESS) ||
        !ok("HcclCommSplit", HcclCommSplit(comm[0], 0, g_rank, &comm[1]), HCCL_SUCCESS))
        return 1;
    int32_t ids[64], after[64];
    for (int i = 0, m = 0; i < n; i++) {
        ids[i] = i;
        if (i != victim)
            after[m++] = i;
    }
    for (int t = 0; t < 2; t++)
        check_comm(comm[t], ids, n, g_rank, t, "before the failure");
    MPI_Barrier(MPI_COMM_WORLD); /* the last MPI call over a group with the victim */
    if (g_rank == victim)
        note_victim(dir);
    rt_arg_t a[2];
    pthread_t th[2];
    for (int t = 0; t < 2; t++) {
        a[t] = (rt_arg_t){.comm = comm[t], .tid = t, .n = n, .victim = victim, .ids_after = after};
        if (pthread_create(&th[t], NULL, remove_thread, &a[t]) != 0) {
            fprintf(stderr, "test_elastic: pthread_create failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (g_rank == victim) {
        usleep(300000); /* both threads in their loops */
        raise(SIGKILL);
    }
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    const HcclResult r = a[0].err != HCCL_SUCCESS ? a[0].err : a[1].err;
    write_result(dir, "rank=%d error=%d error_name=%s error_after_s=%.3f error1=%d "
                 "remove_enter=%.6f remove_exit=%.6f checks=%ld fails=%ld\n", g_rank, (int)r,
                 HcclGetErrorString(r), a[0].t_err, (int)a[1].err,
                 a[0].enter < a[1].enter ? a[0].enter : a[1].enter,
                 a[0].exit > a[1].exit ? a[0].exit : a[1].exit, g_checks, g_fails);
    printf("test_elastic: rank %d: threads: %s after %.2f s / %s after %.2f s; removals %.2f and "
           "%.2f ms; %ld checks, %ld failures\n", g_rank, HcclGetErrorString(a[0].err), a[0].t_err,
           HcclGetErrorString(a[1].err), a[1].t_err, (a[0].exit - a[0].enter) * 1e3,
           (a[1].exit - a[1].enter) * 1e3, g_checks, g_fails);
    fflush(stdout);
    HcclCommDestroy(comm[1]);
    HcclCommDestroy(comm[0]);
    return g_fails ? 1 : 0;
}

/* ---- add ---------------------------------------------------------------- */

/* Agree on the failures over the new communicator (every process of it). */
static int finish_add(HcclComm comm, const char *what)
{
    int64_t loc[2] = {g_checks, g_fails}, tot[2] = {0, 0};
    HcclResult r = HcclAllReduce(loc, tot, 2, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, NULL);
    uint32_t rk = 0;
    HcclGetRankId(comm, &rk);
    if (r != HCCL_SUCCESS) {
        fprintf(stderr, "test_elastic %s: final AllReduce failed (%d)\n", what, (int)r);
        return 1;
    }
    if (rk == 0)
        printf("test_elastic %s: %lld checks, %lld failures\n", what, (long long)tot[0],
               (long long)tot[1]);
    fflush(stdout);
    HcclCommDestroy(comm);
    return tot[1] ? 1 : 0;
}

static int mode_add(const char *file)
{
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *what = file ? "add-connect" : "add-spawn";
    HcclComm comm = NULL;
    if (!ok("HcclCommInitMpi", HcclCommInitMpi(MPI_COMM_WORLD, &comm), HCCL_SUCCESS))
        return 1;
    int32_t ids[64];
    for (int i = 0; i < n; i++)
        ids[i] = i;
    check_comm(comm, ids, n, g_rank, 0, "before the join");
    uint32_t at = file ? (uint32_t)n : 1; /* spawn: into the middle */
    if (file) {
        char info[2048] = "";
        if (!ok("HcclCommGetJoinInfo", HcclCommGetJoinInfo(comm, info, sizeof info),
                HCCL_SUCCESS))
            return 1;
        check(strncmp(info, "hcomm-join:", 11) == 0, "join info '%s'", info);
        if (g_rank == 0) {
            char tmp[4200];
            snprintf(tmp, sizeof tmp, "%s.tmp", file);
            FILE *f = fopen(tmp, "w");
            if (f) {
                fprintf(f, "%s\n", info);
                fclose(f);
                rename(tmp, file);
            }
        }
    }
    double t0 = MPI_Wtime();
    if (!ok("HcclCommAddMember", HcclCommAddMember(comm, at), HCCL_SUCCESS))
        return 1;
    if (g_rank == 0)
        printf("test_elastic %s: HcclCommAddMember took %.1f ms\n", what,
               (MPI_Wtime() - t0) * 1e3);
    for (int i = 0, k = 0; i <= n; i++)
        ids[i] = i == (int)at ? 100 : k++;
    for (int r = 0; r < 3; r++)
        check_comm(comm, ids, n + 1, g_rank, r, "after the join");
    return finish_add(comm, what);
}

static int mode_newcomer(const char *file, int spawned)
{
    char info[2048] = "";
    const char *what = spawned ? "add-spawn" : "add-connect";
    if (!spawned) { /* wait for the members' join info */
        for (int i = 0; i < 600; i++) {
            FILE *f = fopen(file, "r");
            if (f) {
                if (fgets(info, sizeof info, f))
                    info[strcspn(info, "\n")] = '\0';
                fclose(f);
                if (info[0])
                    break;
            }
            usleep(50000);
        }
        if (!info[0]) {
            fprintf(stderr, "test_elastic join: no join info in %s after 30 s\n", file);
            return 1;
        }
    }
    HcclComm comm = NULL;
    if (!ok("HcclCommJoin", HcclCommJoin(spawned ? NULL : info, &comm), HCCL_SUCCESS))
        return 1;
    uint32_t n = 0, rk = 0;
    HcclGetRankSize(comm, &n);
    HcclGetRankId(comm, &rk);
    g_rank = (int)rk;
    int32_t ids[64];
    for (uint32_t i = 0, k = 0; i < n && i < 64; i++)
        ids[i] = i == rk ? 100 : (int32_t)k++;
    check(rk == (spawned ? 1u : n - 1), "the newcomer got rank %u of %u", rk, n);
    for (int r = 0; r < 3; r++)
        check_comm(comm, ids, (int)n, 100, r, "after the join (newcomer)");
    return finish_add(comm, what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    setvbuf(stdout, NULL, _IOLBF, 0);
    MPI_Comm parent = MPI_COMM_NULL;
    MPI_Comm_get_parent(&parent);
    int rc = 2;
    if (parent != MPI_COMM_NULL)
        rc = mode_newcomer(NULL, 1);
    else if (argc >= 4 && strcmp(argv[1], "remove") == 0 && strcmp(argv[3], "threads") == 0)
        rc = mode_remove_threads(argv[2]);
    else if (argc >= 4 && strcmp(argv[1], "remove") == 0)
        rc = mode_remove(argv[2], strcmp(argv[3], "stop") == 0, strcmp(argv[3], "kill2") == 0);
    else if (argc >= 2 && strcmp(argv[1], "add-spawn") == 0)
        rc = mode_add(NULL);
    else if (argc >= 3 && strcmp(argv[1], "add-connect") == 0)
        rc = mode_add(argv[2]);
    else if (argc >= 3 && strcmp(argv[1], "join") == 0)
        rc = mode_newcomer(argv[2], 0);
    else
        fprintf(stderr, "usage: test_elastic remove DIR kill|stop|kill2|threads | add-spawn | "
                "add-connect FILE | join FILE\n");
    MPI_Finalize();
    return rc;
}
