/*
 * test/mpi/test_rootinfo.c - root-info bootstrap without MPI (public API
 * only; no MPI call at all, although libhcomm links MPI).
 *
 * test_rootinfo N      fork N-1 children; the parent is rank 0. The parent
 *                      calls HcclGetRootInfo and writes the info into a pipe
 *                      per child; every process calls HcclCommInitRootInfo,
 *                      checks rank/size, AllReduce (int32 sum, fp32 sum),
 *                      Broadcast and AllGather, destroys the communicator;
 *                      then the same with HcclCommInitRootInfoConfig and a
 *                      communicator name that HcclGetCommName must return.
 * test_rootinfo --errors
 *                      bad arguments (rank >= nRanks, nRanks == 0, NULL
 *                      pointers) fail at once; bogus root info and missing
 *                      peers fail with an error code within the connect
 *                      timeout instead of hanging (run with
 *                      HCCL_CONNECT_TIMEOUT=3; set here if unset).
 *
 * The children are forked before any hcomm call, so no library state
 * (threads, sockets, UCX) crosses a fork. Every process arms alarm() so
 * that a hang ends as a failure. Exit status 0 only if every process
 * passed.
 */
#include <hccl/hccl.h>

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXN 64
#define WATCHDOG_S 120

static int g_rank = -1;
static int g_fails, g_checks;

static void failf(const char *fmt, ...)
{
    g_fails++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[test_rootinfo pid %d rank %d] FAIL ", (int)getpid(), g_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static const char *rs(HcclResult r)
{
    const char *s = HcclGetErrorString(r);
    return s ? s : "(null)";
}

static int ok_rc(const char *what, HcclResult r, HcclResult exp)
{
    g_checks++;
    if (r != exp) {
        failf("%s returned %d (%s), expected %d (%s)", what, (int)r, rs(r), (int)exp, rs(exp));
        return 0;
    }
    return 1;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

static int read_all(int fd, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t k = read(fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Rank 0 makes the root info and sends it to every child; the others read it. */
static int share_info(HcclRootInfo *info, int n, const int *wfd, int rfd)
{
    if (g_rank == 0) {
        memset(info, 0, sizeof *info);
        HcclResult r = HcclGetRootInfo(info);
        if (!ok_rc("HcclGetRootInfo", r, HCCL_SUCCESS))
            memset(info, 0, sizeof *info); /* children will fail, not hang */
        for (int i = 1; i < n; i++)
            if (write_all(wfd[i], info, sizeof *info) != 0) {
                failf("writing the root info to child %d: %s", i, strerror(errno));
                return -1;
            }
        return r == HCCL_SUCCESS ? 0 : -1;
    }
    if (read_all(rfd, info, sizeof *info) != 0) {
        failf("reading the root info from the parent failed");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------ collectives */

static void check_comm(HcclComm comm, int n, const char *label)
{
    uint32_t u = 0;
    if (ok_rc("HcclGetRankSize", HcclGetRankSize(comm, &u), HCCL_SUCCESS) && u != (uint32_t)n)
        failf("%s: HcclGetRankSize = %u, expected %d", label, u, n);
    if (ok_rc("HcclGetRankId", HcclGetRankId(comm, &u), HCCL_SUCCESS) && u != (uint32_t)g_rank)
        failf("%s: HcclGetRankId = %u, expected %d", label, u, g_rank);

    /* AllReduce int32 sum */
    enum { C1 = 1031 };
    int32_t *a = malloc(C1 * sizeof *a), *b = malloc(C1 * sizeof *b);
    for (int i = 0; i < C1; i++)
        a[i] = g_rank * 1000 + i - 500;
    if (ok_rc("HcclAllReduce int32", HcclAllReduce(a, b, C1, HCCL_DATA_TYPE_INT32,
                                                   HCCL_REDUCE_SUM, comm, NULL), HCCL_SUCCESS))
        for (int i = 0; i < C1; i++) {
            int32_t e = 1000 * n * (n - 1) / 2 + n * (i - 500);
            if (b[i] != e) {
                failf("%s: AllReduce int32 [%d] = %d, expected %d", label, i, b[i], e);
                break;
            }
        }
    free(a);
    free(b);

    /* AllReduce fp32 sum, in place, crossing 64K elements; sums exact */
    enum { C2 = 65539 };
    float *f = malloc(C2 * sizeof *f);
    for (int i = 0; i < C2; i++)
        f[i] = (float)(g_rank + 1) * 0.5f + (float)(i % 7);
    if (ok_rc("HcclAllReduce fp32", HcclAllReduce(f, f, C2, HCCL_DATA_TYPE_FP32,
                                                  HCCL_REDUCE_SUM, comm, NULL), HCCL_SUCCESS))
        for (int i = 0; i < C2; i++) {
            float e = 0.25f * (float)(n * (n + 1)) + (float)(n * (i % 7));
            if (f[i] != e) {
                failf("%s: AllReduce fp32 [%d] = %g, expected %g", label, i, (double)f[i],
                      (double)e);
                break;
            }
        }
    free(f);

    /* Broadcast from the last rank */
    enum { C3 = 4099 };
    unsigned char *bc = malloc(C3);
    int root = n - 1;
    for (int i = 0; i < C3; i++)
        bc[i] = g_rank == root ? (unsigned char)(i * 31 + 7) : 0xee;
    if (ok_rc("HcclBroadcast", HcclBroadcast(bc, C3, HCCL_DATA_TYPE_UINT8, (uint32_t)root,
                                             comm, NULL), HCCL_SUCCESS))
        for (int i = 0; i < C3; i++)
            if (bc[i] != (unsigned char)(i * 31 + 7)) {
                failf("%s: Broadcast [%d] = %u, expected %u", label, i, bc[i],
                      (unsigned char)(i * 31 + 7));
                break;
            }
    free(bc);

    /* AllGather int64 */
    enum { C4 = 17 };
    int64_t mine[C4], *all = malloc(sizeof(int64_t) * C4 * (size_t)n);
    for (int i = 0; i < C4; i++)
        mine[i] = ((int64_t)g_rank << 40) + i;
    if (ok_rc("HcclAllGather", HcclAllGather(mine, all, C4, HCCL_DATA_TYPE_INT64, comm, NULL),
              HCCL_SUCCESS))
        for (int r = 0; r < n; r++)
            for (int i = 0; i < C4; i++)
                if (all[r * C4 + i] != ((int64_t)r << 40) + i) {
                    failf("%s: AllGather [%d][%d] = %" PRId64, label, r, i, all[r * C4 + i]);
                    r = n;
                    break;
                }
    free(all);
}

static int run_rank(int n, const int *wfd, int rfd)
{
    HcclRootInfo info;
    HcclComm comm = NULL;

    /* 1. plain root info */
    if (share_info(&info, n, wfd, rfd) != 0)
        return 1;
    HcclResult r = HcclCommInitRootInfo((uint32_t)n, &info, (uint32_t)g_rank, &comm);
    if (!ok_rc("HcclCommInitRootInfo", r, HCCL_SUCCESS))
        return 1;
    check_comm(comm, n, "InitRootInfo");
    ok_rc("HcclCommDestroy", HcclCommDestroy(comm), HCCL_SUCCESS);

    /* 2. with a config that names the communicator */
    if (share_info(&info, n, wfd, rfd) != 0)
        return 1;
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    snprintf(cfg.hcclCommName, sizeof cfg.hcclCommName, "rootinfo_cfg_%d", n);
    comm = NULL;
    r = HcclCommInitRootInfoConfig((uint32_t)n, &info, (uint32_t)g_rank, &cfg, &comm);
    if (!ok_rc("HcclCommInitRootInfoConfig", r, HCCL_SUCCESS))
        return 1;
    char name[128] = "";
    if (ok_rc("HcclGetCommName", HcclGetCommName(comm, name), HCCL_SUCCESS) &&
        strcmp(name, cfg.hcclCommName) != 0)
        failf("HcclGetCommName = '%s', expected '%s'", name, cfg.hcclCommName);
    check_comm(comm, n, "InitRootInfoConfig");
    ok_rc("HcclCommDestroy", HcclCommDestroy(comm), HCCL_SUCCESS);
    return g_fails ? 1 : 0;
}

/* Fork n-1 children that run ranks 1..n-1; the caller is rank 0. */
static int run_job(int n)
{
    int wfd[MAXN] = {0};
    pid_t pid[MAXN];
    for (int i = 1; i < n; i++) {
        int p[2];
        if (pipe(p) != 0) {
            perror("pipe");
            return 1;
        }
        fflush(NULL);
        pid[i] = fork();
        if (pid[i] < 0) {
            perror("fork");
            return 1;
        }
        if (pid[i] == 0) {
            close(p[1]);
            for (int j = 1; j < i; j++)
                close(wfd[j]);
            g_rank = i;
            alarm(WATCHDOG_S);
            int st = run_rank(n, NULL, p[0]);
            if (st)
                fprintf(stderr, "[test_rootinfo rank %d] %d failure(s)\n", i, g_fails);
            exit(st);
        }
        close(p[0]);
        wfd[i] = p[1];
    }
    g_rank = 0;
    alarm(WATCHDOG_S);
    int bad = run_rank(n, wfd, -1);
    for (int i = 1; i < n; i++)
        close(wfd[i]);
    for (int i = 1; i < n; i++) {
        int st = 0;
        if (waitpid(pid[i], &st, 0) < 0) {
            perror("waitpid");
            bad = 1;
            continue;
        }
        if (WIFSIGNALED(st)) {
            fprintf(stderr, "test_rootinfo: rank %d killed by signal %d%s\n", i, WTERMSIG(st),
                    WTERMSIG(st) == SIGALRM ? " (watchdog: hang)" : "");
            bad = 1;
        } else if (WEXITSTATUS(st) != 0) {
            fprintf(stderr, "test_rootinfo: rank %d exited with %d\n", i, WEXITSTATUS(st));
            bad = 1;
        }
    }
    return bad;
}

/* ----------------------------------------------------------- errors */

/* A call that must fail (any error) within limit seconds. */
static void expect_fail_fast(const char *what, HcclResult r, double t0, double limit)
{
    double dt = now() - t0;
    g_checks++;
    if (r == HCCL_SUCCESS)
        failf("%s succeeded; expected an error", what);
    else
        printf("test_rootinfo: %s -> %d (%s) after %.1f s\n", what, (int)r, rs(r), dt);
    g_checks++;
    if (dt > limit)
        failf("%s took %.1f s (limit %.0f s)", what, dt, limit);
}

static int run_errors(void)
{
    /* the connect timeout bounds the "no hang" cases below */
    setenv("HCCL_CONNECT_TIMEOUT", "3", 0);
    double limit = atof(getenv("HCCL_CONNECT_TIMEOUT")) + 15.0;
    g_rank = 0;
    alarm(WATCHDOG_S);

    /* a child that joins as rank 1 of 2 while rank 0 never calls init */
    int p[2];
    if (pipe(p) != 0) {
        perror("pipe");
        return 1;
    }
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        close(p[1]);
        g_rank = 1;
        alarm(WATCHDOG_S);
        HcclRootInfo info;
        if (read_all(p[0], &info, sizeof info) != 0)
            exit(3);
        HcclComm c = NULL;
        double t0 = now();
        HcclResult r = HcclCommInitRootInfo(2, &info, 1, &c);
        expect_fail_fast("rank 1 of 2 with the root absent", r, t0, limit);
        exit(g_fails ? 1 : 0);
    }
    close(p[0]);

    HcclRootInfo info;
    HcclComm comm = NULL;
    HcclResult r = HcclGetRootInfo(&info);
    ok_rc("HcclGetRootInfo", r, HCCL_SUCCESS);
    if (write_all(p[1], &info, sizeof info) != 0)
        failf("writing the root info to the child failed");
    close(p[1]);

    /* argument errors: immediate, no communication */
    double t0 = now();
    ok_rc("HcclCommInitRootInfo(rank == nRanks)", HcclCommInitRootInfo(2, &info, 2, &comm),
          HCCL_E_PARA);
    ok_rc("HcclCommInitRootInfo(rank > nRanks)", HcclCommInitRootInfo(2, &info, 7, &comm),
          HCCL_E_PARA);
    ok_rc("HcclCommInitRootInfo(nRanks == 0)", HcclCommInitRootInfo(0, &info, 0, &comm),
          HCCL_E_PARA);
    ok_rc("HcclCommInitRootInfo(rootInfo NULL)", HcclCommInitRootInfo(2, NULL, 0, &comm),
          HCCL_E_PTR);
    ok_rc("HcclCommInitRootInfo(comm NULL)", HcclCommInitRootInfo(2, &info, 0, NULL),
          HCCL_E_PTR);
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    ok_rc("HcclCommInitRootInfoConfig(rank > nRanks)",
          HcclCommInitRootInfoConfig(2, &info, 3, &cfg, &comm), HCCL_E_PARA);
    ok_rc("HcclGetRootInfo(NULL)", HcclGetRootInfo(NULL), HCCL_E_PTR);
    g_checks++;
    if (now() - t0 > 2.0)
        failf("argument errors took %.1f s; they must not communicate", now() - t0);

    /* bogus root info: zeros, then random bytes */
    HcclRootInfo bogus;
    memset(&bogus, 0, sizeof bogus);
    t0 = now();
    r = HcclCommInitRootInfo(2, &bogus, 1, &comm);
    expect_fail_fast("HcclCommInitRootInfo(all-zero root info, rank 1 of 2)", r, t0, limit);
    srand(12345);
    for (size_t i = 0; i < sizeof bogus.internal; i++)
        bogus.internal[i] = (char)(rand() & 0xff);
    t0 = now();
    r = HcclCommInitRootInfo(2, &bogus, 1, &comm);
    expect_fail_fast("HcclCommInitRootInfo(random root info, rank 1 of 2)", r, t0, limit);

    /* root of 3 whose peers never come (the child above targets the other
     * root info and gives up on its own) */
    HcclRootInfo lonely;
    if (ok_rc("HcclGetRootInfo", HcclGetRootInfo(&lonely), HCCL_SUCCESS)) {
        t0 = now();
        r = HcclCommInitRootInfo(3, &lonely, 0, &comm);
        expect_fail_fast("root of 3 with no peer", r, t0, limit);
    }

    int st = 0;
    if (waitpid(child, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        failf("child (rank 1 with the root absent) failed: status 0x%x", st);
    }
    return g_fails ? 1 : 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && !strcmp(argv[1], "--errors")) {
        int bad = run_errors();
        printf("test_rootinfo --errors: %d checks, %d failures\n", g_checks, g_fails);
        return bad;
    }
    int n = argc > 1 ? atoi(argv[1]) : 3;
    if (n < 1 || n > MAXN) {
        fprintf(stderr, "usage: test_rootinfo N (1..%d) | --errors\n", MAXN);
        return 2;
    }
    double t0 = now();
    int bad = run_job(n);
    printf("test_rootinfo %d: %s (%.1f s; rank 0: %d checks, %d failures)\n", n,
           bad ? "FAILED" : "ok", now() - t0, g_checks, g_fails);
    return bad;
}
