/*
 * test/mpi/test_abandon.c - a failed call's receives never write into its
 * buffer after it returned (public API only); test/mpi/cluster.sh runs it
 * on 3 hosts x 1 rank with links limited to 100 Mbit/s (docs/CLUSTER.md,
 * "An abandoned receive and its buffer").
 *
 * Usage: test_abandon [BYTES [TIMEOUT [HOLD]]]
 *   (defaults 33554432, 2 s, 3 s)
 *
 * Ranks 0, 1 and 2 (others only take part in the MPI calls). Rank 0's
 * communicator has hcclExecTimeOut TIMEOUT, the others' TIMEOUT + 8 s.
 * Rank 0 calls HcclBatchSendRecv receiving BYTES from rank 1 and 4 bytes
 * from rank 2; rank 1 sends them (HcclSend); rank 2 never sends, so rank
 * 0's call fails at its deadline while rank 1's message is still arriving
 * (a rendezvous under way: BYTES take longer than TIMEOUT across the
 * link). When the call has returned, rank 0 checks that it failed and that
 * part of the message had arrived (otherwise the run proves nothing), fills
 * the buffer with a canary, drives the transport for HOLD seconds
 * (AllReduces on a second communicator, of ranks 0 and 2; rank 2 has
 * waited in the first one meanwhile) and checks the canary: any byte of
 * the message written after the return changes it. Exit 0 when all checks
 * pass.
 *
 * Rank 1's send ends when the message is delivered; where rank 0 closed
 * the connection by force (the message still arriving 2 s after the
 * deadline) it may end only at its own deadline.
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long g_fails;
static int g_rank;

static void check(int cond, const char *what)
{
    if (cond)
        return;
    g_fails++;
    fprintf(stderr, "[test_abandon rank %d] FAIL %s\n", g_rank, what);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* the sender's bytes: never the canary's 0xA5, never 0 */
static uint8_t pattern(size_t i)
{
    return (uint8_t)(1 + i % 163);
}

#define CANARY 0xA5

/* AllReduces on the pair (ranks 0 and 2) until rank 0 has spent `hold`
 * seconds since t1 in them: they drive the transport (rank 2: hold 0, it
 * follows rank 0) */
static void hold_on(HcclComm pair, double t1, double hold)
{
    int32_t stop = 0, any = 0;
    long rounds = 0;
    do {
        stop = g_rank == 0 && now() - t1 >= hold;
        if (HcclAllReduce(&stop, &any, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MAX, pair, NULL) !=
            HCCL_SUCCESS) {
            check(0, "an AllReduce of ranks 0 and 2");
            return;
        }
        rounds++;
    } while (!any);
    if (g_rank == 0)
        printf("test_abandon: %ld AllReduces of ranks 0 and 2 in %.3f s\n", rounds, now() - t1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)32 << 20;
    const int timeout = argc > 2 ? atoi(argv[2]) : 2;
    const double hold = argc > 3 ? atof(argv[3]) : 3.0;
    if (n < 3 || bytes < 4096 || timeout < 1 || hold < 0) {
        if (g_rank == 0)
            fprintf(stderr, "usage: test_abandon [BYTES [TIMEOUT [HOLD]]] (3 ranks or more; "
                    "BYTES >= 4096, TIMEOUT >= 1 s)\n");
        MPI_Finalize();
        return 2;
    }
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    cfg.hcclExecTimeOut = (uint32_t)(g_rank == 0 ? timeout : timeout + 8);
    HcclComm comm = NULL, pair = NULL;
    MPI_Comm pair_mpi = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank == 0 || g_rank == 2 ? 0 : MPI_UNDEFINED, g_rank,
                   &pair_mpi);
    if (HcclCommInitMpiConfig(MPI_COMM_WORLD, &cfg, &comm) != HCCL_SUCCESS ||
        (pair_mpi != MPI_COMM_NULL && HcclCommInitMpi(pair_mpi, &pair) != HCCL_SUCCESS)) {
        fprintf(stderr, "[test_abandon rank %d] initialisation failed\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    uint8_t *buf = malloc(bytes);
    uint32_t small = 0;
    if (buf == NULL) {
        fprintf(stderr, "[test_abandon rank %d] no memory\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < bytes; i++)
        buf[i] = g_rank == 1 ? pattern(i) : 0;
    MPI_Barrier(MPI_COMM_WORLD);

    if (g_rank == 0) {
        HcclSendRecvItem it[2] = {
            {HCCL_RECV, buf, bytes, HCCL_DATA_TYPE_INT8, 1},
            {HCCL_RECV, &small, 1, HCCL_DATA_TYPE_UINT32, 2},
        };
        const double t0 = now();
        HcclResult r = HcclBatchSendRecv(it, 2, comm, NULL);
        const double took = now() - t0;
        size_t got = 0; /* bytes of the message there when the call returned */
        for (size_t i = 0; i < bytes; i++)
            got += buf[i] == pattern(i);
        printf("test_abandon: the receive of %zu bytes returned %d (%s) after %.3f s, "
               "%zu bytes had arrived\n", bytes, (int)r, HcclGetErrorString(r), took, got);
        check(r != HCCL_SUCCESS, "the call succeeded: rank 2 sent nothing");
        check(got > 0, "no byte of the message had arrived when the call returned: the "
              "transfer did not span the deadline (a slower link or more BYTES)");
        memset(buf, CANARY, bytes);
        const double t1 = now();
        hold_on(pair, t1, hold);
        size_t bad = 0, first = bytes;
        for (size_t i = 0; i < bytes; i++)
            if (buf[i] != CANARY) {
                bad++;
                if (first == bytes)
                    first = i;
            }
        printf("test_abandon: %zu bytes of the buffer written after the call returned "
               "(the first at %zu)\n", bad, bad ? first : (size_t)0);
        check(bad == 0, "the abandoned receive wrote into the buffer after the call returned");
    } else if (g_rank == 1) {
        HcclResult r = HcclSend(buf, bytes, HCCL_DATA_TYPE_INT8, 0, comm, NULL);
        printf("test_abandon: rank 1's send returned %d (%s)\n", (int)r, HcclGetErrorString(r));
    } else if (g_rank == 2) {
        hold_on(pair, 0, 0);
    }
    fflush(stdout);
    long fails = 0;
    MPI_Allreduce(&g_fails, &fails, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (pair)
        HcclCommDestroy(pair);
    HcclCommDestroy(comm);
    if (pair_mpi != MPI_COMM_NULL)
        MPI_Comm_free(&pair_mpi);
    free(buf);
    if (g_rank == 0)
        printf("test_abandon: %s\n", fails ? "FAILED" : "passed");
    MPI_Finalize();
    return fails ? 1 : 0;
}
