/*
 * test/mpi/test_hostfail.c - a host of an emulated cluster fails under a
 * loop of AllReduces (public API only); test/mpi/cluster.sh injects the
 * fault with tools/hcomm-cluster (docs/CLUSTER.md, "Faults").
 *
 * Usage: test_hostfail DIR HOST [add]
 *
 * Every rank learns the host names of all ranks (MPI_Allgather, before
 * anything fails); the ranks on HOST are the victims, the others the
 * survivors (at least 2). Then, on the world communicator, AllReduces of
 * 64 Ki int32 in a loop, each checked bit for bit; after the third each
 * rank writes DIR/ready.RANK, and the script, once all are there, writes
 * the time in DIR/fault.time (seconds since the epoch) and cuts HOST's link
 * (hcomm-cluster link HOST down) or kills every process of HOST
 * (hcomm-cluster kill HOST). The loop must end with HCCL_E_REMOTE or
 * HCCL_E_TIMEOUT on every survivor (120 s without an error is a failure).
 *
 * A victim that is still alive (its link is down) cannot tell which side
 * is cut off; the test knows: it writes its pid to DIR/victim.pid and
 * kills itself (SIGKILL), as a fenced process would be.
 *
 * A survivor: HcclGetCommAsyncError must hold the error; then it removes
 * the victims with HcclCommRemoveMember, naming first the ranks
 * HcclCommGetFailedRanks lists (one call drops every member this process
 * holds failed), then any victim still in the communicator (a host cut off
 * is seen by the deadline only); it keeps the rank -> identity map
 * (identity = world rank, 100 for a newcomer) and checks after each call
 * the size. Then 10 AllReduces at the new size, an AllGather of the
 * identities, a Broadcast and a ReduceScatter, all checked.
 *
 * add: the survivors write DIR/recovered.RANK and wait (up to 120 s) for
 * DIR/linkup (the script brings the link back up and writes it); then
 * HcclCommAddMember(world, size): hcomm spawns this program
 * (MPI_Comm_spawn; HCCL_SPAWN_HOST names the host it goes to), which
 * joins, gets the identity map by HcclBroadcast, checks that its host name
 * is HOST, and runs the same checks with the others.
 *
 * Every member finally writes DIR/result.IDENTITY: "id=I host=H checks=C
 * fails=F err=CODE detect=SECONDS remove=SECONDS size=N", where detect is
 * from fault.time to the error and remove the time HcclCommRemoveMember
 * took (all of its calls); the members agree on the failure count
 * (AllReduce) before, so nobody leaves while another still works, then
 * HcclCommDestroy and _exit(0) without MPI_Finalize (a process of the job
 * died: docs/ELASTIC.md, "Ending a job that survived a failure").
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXR 64
#define HOSTLEN 64
#define C 65536

static int g_id = -1;
static long g_checks, g_fails;
static const char *g_dir;
static int g_abort; /* "abort": rank 0 ends the job with MPI_Abort */

static void check(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int cond, const char *fmt, ...)
{
    g_checks++;
    if (cond)
        return;
    g_fails++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[test_hostfail id %d] FAIL ", g_id);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void touch(const char *name)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s.%d", g_dir, name, g_id);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f) {
        fprintf(f, "%.6f\n", wall());
        fclose(f);
        rename(tmp, path);
    }
}

static double read_time(const char *name)
{
    char path[4096];
    double t = 0;
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%lf", &t) != 1)
            t = 0;
        fclose(f);
    }
    return t;
}

static int wait_file(const char *name, int secs)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    for (int i = 0; i < secs * 20; i++) {
        if (access(path, F_OK) == 0)
            return 1;
        usleep(50000);
    }
    return 0;
}

/* One checked AllReduce over members ids[0..n) (this process is ids[rk]). */
static HcclResult allreduce_checked(HcclComm comm, const int32_t *ids, int n, int round,
                                    int32_t *a, int32_t *b)
{
    for (int i = 0; i < C; i++) {
        a[i] = g_id * 7 + i + round;
        b[i] = -1;
    }
    HcclResult r = HcclAllReduce(a, b, C, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, NULL);
    if (r != HCCL_SUCCESS)
        return r;
    int32_t base = 0;
    for (int k = 0; k < n; k++)
        base += ids[k] * 7;
    for (int i = 0; i < C; i++)
        if (b[i] != base + n * (i + round)) {
            check(0, "AllReduce round %d [%d] = %d, expected %d", round, i, b[i],
                  base + n * (i + round));
            return HCCL_SUCCESS;
        }
    check(1, "AllReduce");
    return HCCL_SUCCESS;
}

/* The checks on a communicator of members ids[0..n). */
static void check_comm(HcclComm comm, const int32_t *ids, int n, const char *label)
{
    uint32_t sz = 0, rk = 0;
    HcclGetRankSize(comm, &sz);
    HcclGetRankId(comm, &rk);
    check((int)sz == n, "%s: size %u, expected %d", label, sz, n);
    if ((int)sz != n)
        return;
    check(ids[rk] == g_id, "%s: rank %u has identity %d, expected %d", label, rk, ids[rk], g_id);
    int32_t *a = malloc((size_t)n * C * sizeof *a), *b = malloc((size_t)n * C * sizeof *b);
    for (int r = 0; r < 10; r++)
        check(allreduce_checked(comm, ids, n, 1000 + r, a, b) == HCCL_SUCCESS,
              "%s: AllReduce %d failed", label, r);
    int32_t me = g_id, got[MAXR];
    check(HcclAllGather(&me, got, 1, HCCL_DATA_TYPE_INT32, comm, NULL) == HCCL_SUCCESS,
          "%s: AllGather", label);
    for (int i = 0; i < n; i++)
        check(got[i] == ids[i], "%s: AllGather: rank %d is %d, expected %d", label, i, got[i],
              ids[i]);
    uint32_t root = (uint32_t)(n - 1);
    for (int i = 0; i < C; i++)
        a[i] = rk == root ? i * 3 + 1 : -1;
    check(HcclBroadcast(a, C, HCCL_DATA_TYPE_INT32, root, comm, NULL) == HCCL_SUCCESS,
          "%s: Broadcast", label);
    for (int i = 0; i < C; i++)
        if (a[i] != i * 3 + 1) {
            check(0, "%s: Broadcast [%d] = %d", label, i, a[i]);
            break;
        }
    for (int i = 0; i < n * C; i++)
        a[i] = g_id + i;
    check(HcclReduceScatter(a, b, C, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, NULL) ==
              HCCL_SUCCESS, "%s: ReduceScatter", label);
    for (int i = 0; i < C; i++) {
        int32_t e = 0;
        for (int k = 0; k < n; k++)
            e += ids[k] + (int32_t)rk * C + i;
        if (b[i] != e) {
            check(0, "%s: ReduceScatter [%d] = %d, expected %d", label, i, b[i], e);
            break;
        }
    }
    free(a);
    free(b);
}

/* Drop position pos of ids[0..*n). */
static void drop(int32_t *ids, int *n, int pos)
{
    for (int i = pos; i + 1 < *n; i++)
        ids[i] = ids[i + 1];
    (*n)--;
}

static void finish(HcclComm comm, int n, const char *host, int err, double detect,
                   double remove_s)
{
    /* agree that everybody is done before anyone leaves */
    long f = g_fails, sum = -1;
    HcclResult r = HcclAllReduce(&f, &sum, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, NULL);
    check(r == HCCL_SUCCESS, "the final AllReduce returned %d", (int)r);
    if (r == HCCL_SUCCESS && sum != f)
        fprintf(stderr, "[test_hostfail id %d] %ld failures on the other members\n", g_id,
                sum - f);
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/result.%d", g_dir, g_id);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *fo = fopen(tmp, "w");
    if (fo) {
        fprintf(fo, "id=%d host=%s checks=%ld fails=%ld err=%d detect=%.3f remove=%.3f size=%d\n",
                g_id, host, g_checks, g_fails, err, detect, remove_s, n);
        fclose(fo);
        rename(tmp, path);
    }
    printf("test_hostfail id %d on %s: %ld checks, %ld failures, error %d after %.3f s, "
           "removal %.3f s, size %d\n", g_id, host, g_checks, g_fails, err, detect, remove_s, n);
    fflush(stdout);
    fflush(stderr);
    /* everybody's result is written: then rank 0 may end the job */
    r = HcclBarrier(comm, NULL);
    check(r == HCCL_SUCCESS, "the final Barrier returned %d", (int)r);
    uint32_t rk = 1;
    HcclGetRankId(comm, &rk);
    HcclCommDestroy(comm);
    if (g_abort && rk == 0)
        MPI_Abort(MPI_COMM_WORLD, 0);
    _exit(0);
}

/* Rank 0 sends the identity map to the newcomer (it is last). */
static void share_ids(HcclComm comm, int32_t *ids, int *n)
{
    int32_t buf[MAXR + 1];
    buf[0] = *n;
    for (int i = 0; i < *n; i++)
        buf[i + 1] = ids[i];
    check(HcclBroadcast(buf, MAXR + 1, HCCL_DATA_TYPE_INT32, 0, comm, NULL) == HCCL_SUCCESS,
          "Broadcast of the identities");
    *n = buf[0];
    for (int i = 0; i < *n && i < MAXR; i++)
        ids[i] = buf[i + 1];
}

static int newcomer(const char *host, const char *victim_host)
{
    g_id = 100;
    HcclComm comm = NULL;
    HcclResult r = HcclCommJoin(NULL, &comm);
    if (r != HCCL_SUCCESS) {
        fprintf(stderr, "[test_hostfail newcomer] HcclCommJoin returned %d\n", (int)r);
        _exit(1);
    }
    int32_t ids[MAXR] = {0}; /* filled by rank 0's Broadcast */
    int n = 0;
    share_ids(comm, ids, &n);
    check(strcmp(host, victim_host) == 0, "the newcomer runs on %s, expected %s", host,
          victim_host);
    check_comm(comm, ids, n, "after the join (newcomer)");
    finish(comm, n, host, 0, 0, 0);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    setvbuf(stdout, NULL, _IOLBF, 0);
    char host[HOSTLEN] = "";
    gethostname(host, sizeof host - 1);
    if (argc < 3 || argc > 4 ||
        (argc == 4 && strcmp(argv[3], "add") != 0 && strcmp(argv[3], "abort") != 0)) {
        fprintf(stderr, "usage: test_hostfail DIR HOST [add|abort]\n");
        MPI_Finalize();
        return 2;
    }
    g_dir = argv[1];
    const char *vhost = argv[2];
    const int add = argc == 4 && strcmp(argv[3], "add") == 0;
    g_abort = argc == 4 && strcmp(argv[3], "abort") == 0;
    MPI_Comm parent = MPI_COMM_NULL;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return newcomer(host, vhost);

    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    g_id = rank;
    static char hosts[MAXR][HOSTLEN];
    if (n > MAXR) {
        fprintf(stderr, "test_hostfail: at most %d ranks\n", MAXR);
        MPI_Finalize();
        return 2;
    }
    MPI_Allgather(host, HOSTLEN, MPI_CHAR, hosts, HOSTLEN, MPI_CHAR, MPI_COMM_WORLD);
    int nvict = 0;
    for (int i = 0; i < n; i++)
        nvict += strcmp(hosts[i], vhost) == 0;
    const int victim = strcmp(host, vhost) == 0;
    if (nvict == 0 || n - nvict < 2) {
        if (rank == 0)
            fprintf(stderr, "test_hostfail: %d of %d ranks on %s: need at least one there and "
                    "two elsewhere\n", nvict, n, vhost);
        MPI_Finalize();
        return 2;
    }
    HcclComm comm = NULL;
    if (HcclCommInitMpi(MPI_COMM_WORLD, &comm) != HCCL_SUCCESS) {
        fprintf(stderr, "test_hostfail: HcclCommInitMpi failed\n");
        MPI_Finalize();
        return 1;
    }
    int32_t ids[MAXR + 1];
    int m = n;
    for (int i = 0; i < n; i++)
        ids[i] = i;
    int32_t *a = malloc((size_t)(n + 1) * C * sizeof *a),
            *b = malloc((size_t)(n + 1) * C * sizeof *b);

    /* the loop, until the fault */
    HcclResult err = HCCL_SUCCESS;
    const double t0 = wall();
    int it = 0;
    for (; wall() - t0 < 120; it++) {
        err = allreduce_checked(comm, ids, m, it, a, b);
        if (err != HCCL_SUCCESS)
            break;
        if (it == 3)
            touch("ready");
    }
    const double t_err = wall();
    const double detect = t_err - read_time("fault.time");
    printf("test_hostfail id %d on %s: AllReduce %d returned %d (%s) %.3f s after the fault\n",
           g_id, host, it, (int)err, HcclGetErrorString(err), detect);
    check(err == HCCL_E_REMOTE || err == HCCL_E_TIMEOUT,
          "the loop ended with %d (%s), expected HCCL_E_REMOTE or HCCL_E_TIMEOUT", (int)err,
          HcclGetErrorString(err));
    if (victim) { /* cut off: fenced */
        char path[4096];
        snprintf(path, sizeof path, "%s/victim.pid", g_dir);
        FILE *f = fopen(path, "a");
        if (f) {
            fprintf(f, "%d\n", (int)getpid());
            fclose(f);
        }
        fflush(stdout);
        fflush(stderr);
        raise(SIGKILL);
    }
    HcclResult async = HCCL_SUCCESS;
    HcclGetCommAsyncError(comm, &async);
    check(async == err, "HcclGetCommAsyncError gave %d, the loop %d", (int)async, (int)err);

    /* remove the victims: first those this process knows failed */
    const double t_rm = wall();
    for (int round = 0; round < n; round++) {
        int left = 0;
        for (int i = 0; i < m; i++)
            left += strcmp(hosts[ids[i]], vhost) == 0;
        if (left == 0)
            break;
        uint32_t failed[MAXR], nf = 0;
        check(HcclCommGetFailedRanks(comm, failed, MAXR, &nf) == HCCL_SUCCESS,
              "HcclCommGetFailedRanks");
        for (uint32_t k = 0; k < nf && k < MAXR; k++)
            check(failed[k] < (uint32_t)m && strcmp(hosts[ids[failed[k]]], vhost) == 0,
                  "HcclCommGetFailedRanks lists rank %u, not on %s", failed[k], vhost);
        uint32_t name = 0;
        if (nf > 0) {
            name = failed[0];
        } else {
            while (strcmp(hosts[ids[name]], vhost) != 0)
                name++;
        }
        printf("test_hostfail id %d: HcclCommRemoveMember(rank %u, identity %d); %u listed "
               "failed\n", g_id, name, ids[name], nf);
        HcclResult r = HcclCommRemoveMember(comm, name);
        check(r == HCCL_SUCCESS, "HcclCommRemoveMember(%u) returned %d", name, (int)r);
        if (r != HCCL_SUCCESS)
            break;
        /* the set removed: the named rank and those listed (a death noticed
         * in between would be dropped too: the size tells) */
        int32_t gone[MAXR];
        int ng = 0;
        gone[ng++] = ids[name];
        for (uint32_t k = 0; k < nf && k < MAXR; k++)
            if (failed[k] != name)
                gone[ng++] = ids[failed[k]];
        for (int k = 0; k < ng; k++)
            for (int i = 0; i < m; i++)
                if (ids[i] == gone[k]) {
                    drop(ids, &m, i);
                    break;
                }
        uint32_t sz = 0;
        HcclGetRankSize(comm, &sz);
        if ((int)sz < m) { /* more were known failed by then: all of them victims */
            int keep = 0;
            for (int i = 0; i < m; i++)
                keep += strcmp(hosts[ids[i]], vhost) != 0;
            if ((int)sz == keep)
                for (int i = m; i-- > 0;)
                    if (strcmp(hosts[ids[i]], vhost) == 0)
                        drop(ids, &m, i);
        }
        check((int)sz == m, "size %u after the removal, expected %d", sz, m);
        if ((int)sz != m)
            break;
    }
    const double remove_s = wall() - t_rm;
    check(m == n - nvict, "%d members after the removals, expected %d", m, n - nvict);
    check_comm(comm, ids, m, "after the removal");

    if (add) {
        touch("recovered");
        if (!wait_file("linkup", 120)) {
            check(0, "no %s/linkup within 120 s", g_dir);
        } else {
            uint32_t sz = 0;
            HcclGetRankSize(comm, &sz);
            HcclResult r = HcclCommAddMember(comm, sz);
            check(r == HCCL_SUCCESS, "HcclCommAddMember returned %d", (int)r);
            if (r == HCCL_SUCCESS) {
                ids[m++] = 100;
                share_ids(comm, ids, &m);
                check_comm(comm, ids, m, "after the join");
            }
        }
    }
    finish(comm, m, host, (int)err, detect, remove_s);
    return 0;
}
