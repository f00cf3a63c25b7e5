/*
 * test/mpi/test_timeout.c - an operation whose peer never comes fails with
 * HCCL_E_TIMEOUT instead of hanging (public API only). Run with
 * HCCL_EXEC_TIMEOUT=2 (timeout.sh), at 2 and 3 ranks.
 *
 * 1. Everybody does a correct AllReduce (connections are up).
 * 2. All ranks but the last call HcclAllReduce; the last rank skips it.
 *    The callers must get HCCL_E_TIMEOUT, no sooner than about the
 *    timeout (0.75 x HCCL_EXEC_TIMEOUT) and within HCCL_EXEC_TIMEOUT + 10 s
 *    (a hang is caught by mpirun.sh's timeout).
 * 3. Everybody meets in MPI_Barrier (MPI still works); HcclGetCommAsyncError
 *    may report the error (HCCL_SUCCESS or HCCL_E_TIMEOUT accepted on the
 *    ranks that timed out, HCCL_SUCCESS expected on the sleeper);
 *    HcclCommDestroy must return (within 10 s) on every rank. The state of
 *    the failed communicator is undefined, so nothing else runs on it.
 * 4. A new communicator over MPI_COMM_WORLD works: a correct AllReduce,
 *    Broadcast and Barrier, not disturbed by leftovers of the failed one.
 *
 * Prints "test_timeout: N checks, M failures" on rank 0; exit 1 on failure.
 * timeout.sh also checks the error log (HCCL_DEBUG=ERROR) for a line naming
 * the operation, the step and the peer rank.
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_rank, g_n;
static long g_checks, g_fails;

static void failf(const char *fmt, ...)
{
    g_fails++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[rank %d] FAIL ", g_rank);
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

/* A correct int32 AllReduce on comm; returns 1 if right. */
static int good_allreduce(HcclComm comm, const char *label)
{
    enum { C = 4099 };
    int32_t *in = malloc(C * sizeof *in), *out = malloc(C * sizeof *out);
    for (int i = 0; i < C; i++) {
        in[i] = g_rank * 3 + i;
        out[i] = -1;
    }
    int good = ok_rc(label, HcclAllReduce(in, out, C, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM,
                                          comm, NULL), HCCL_SUCCESS);
    for (int i = 0; good && i < C; i++) {
        int32_t e = 3 * g_n * (g_n - 1) / 2 + g_n * i;
        g_checks++;
        if (out[i] != e) {
            failf("%s: [%d] = %d, expected %d", label, i, out[i], e);
            good = 0;
        }
    }
    free(in);
    free(out);
    return good;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_n);
    const char *ev = getenv("HCCL_EXEC_TIMEOUT");
    double tmo = ev ? atof(ev) : 0;
    if (g_rank == 0)
        printf("test_timeout: %d ranks, HCCL_EXEC_TIMEOUT=%s\n", g_n, ev ? ev : "(unset)");
    if (g_n < 2 || tmo <= 0 || tmo > 30) {
        if (g_rank == 0)
            fprintf(stderr, "test_timeout: needs >= 2 ranks and 0 < HCCL_EXEC_TIMEOUT <= 30\n");
        MPI_Finalize();
        return 2;
    }

    HcclComm comm = NULL;
    if (!ok_rc("HcclCommInitMpi", HcclCommInitMpi(MPI_COMM_WORLD, &comm), HCCL_SUCCESS))
        MPI_Abort(MPI_COMM_WORLD, 1);

    /* 1. a correct operation first */
    good_allreduce(comm, "warm-up HcclAllReduce");
    MPI_Barrier(MPI_COMM_WORLD);

    /* 2. the last rank skips an AllReduce */
    int sleeper = g_rank == g_n - 1;
    enum { C = 65536 };
    float *buf = malloc(C * sizeof *buf);
    for (int i = 0; i < C; i++)
        buf[i] = (float)i;
    double dt = 0;
    HcclResult r = HCCL_SUCCESS;
    if (!sleeper) {
        double t0 = MPI_Wtime();
        r = HcclAllReduce(buf, buf, C, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL);
        dt = MPI_Wtime() - t0;
        printf("test_timeout: rank %d: HcclAllReduce without rank %d returned %d (%s) after "
               "%.2f s\n", g_rank, g_n - 1, (int)r, rs(r), dt);
        fflush(stdout);
        ok_rc("HcclAllReduce with a missing peer", r, HCCL_E_TIMEOUT);
        g_checks++;
        if (dt < 0.75 * tmo)
            failf("timed out after %.2f s, before HCCL_EXEC_TIMEOUT (%.1f s)", dt, tmo);
        g_checks++;
        if (dt > tmo + 10.0)
            failf("timed out after %.2f s, long after HCCL_EXEC_TIMEOUT (%.1f s)", dt, tmo);
    }

    /* 3. MPI still works; async error; destroy returns */
    MPI_Barrier(MPI_COMM_WORLD);
    HcclResult ae = (HcclResult)-1;
    if (ok_rc("HcclGetCommAsyncError", HcclGetCommAsyncError(comm, &ae), HCCL_SUCCESS)) {
        g_checks++;
        if (sleeper ? ae != HCCL_SUCCESS : (ae != HCCL_SUCCESS && ae != HCCL_E_TIMEOUT))
            failf("HcclGetCommAsyncError reported %d (%s) on %s", (int)ae, rs(ae),
                  sleeper ? "the rank that skipped the operation" : "a rank that timed out");
    }
    double t0 = MPI_Wtime();
    r = HcclCommDestroy(comm);
    double dd = MPI_Wtime() - t0;
    if (r != HCCL_SUCCESS)
        printf("test_timeout: rank %d: HcclCommDestroy of the failed communicator returned %d "
               "(%s)\n", g_rank, (int)r, rs(r));
    g_checks++;
    if (dd > 10.0)
        failf("HcclCommDestroy took %.1f s", dd);
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);

    /* 4. a fresh communicator works */
    HcclComm c2 = NULL;
    if (ok_rc("HcclCommInitMpi (after the timeout)", HcclCommInitMpi(MPI_COMM_WORLD, &c2),
              HCCL_SUCCESS)) {
        good_allreduce(c2, "HcclAllReduce on a new communicator");
        unsigned char b[1000];
        for (int i = 0; i < 1000; i++)
            b[i] = g_rank == 1 ? (unsigned char)(i * 3) : 0;
        if (ok_rc("HcclBroadcast on a new communicator",
                  HcclBroadcast(b, 1000, HCCL_DATA_TYPE_UINT8, 1, c2, NULL), HCCL_SUCCESS))
            for (int i = 0; i < 1000; i++) {
                g_checks++;
                if (b[i] != (unsigned char)(i * 3)) {
                    failf("Broadcast on a new communicator: [%d] = %u", i, b[i]);
                    break;
                }
            }
        ok_rc("HcclBarrier on a new communicator", HcclBarrier(c2, NULL), HCCL_SUCCESS);
        ok_rc("HcclCommDestroy (new communicator)", HcclCommDestroy(c2), HCCL_SUCCESS);
    }

    long loc[2] = {g_checks, g_fails}, tot[2];
    MPI_Allreduce(loc, tot, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test_timeout: %ld checks, %ld failures\n", tot[0], tot[1]);
    MPI_Finalize();
    return tot[1] ? 1 : 0;
}
