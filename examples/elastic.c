/*
 * examples/elastic.c - a training-like loop that survives losing a rank
 * and takes a replacement in, checking its results at every step.
 *
 *   HCCL_EXEC_TIMEOUT=5 mpirun --oversubscribe \
 *       --mca orte_abort_on_non_zero_status 0 -np 4 ./elastic [-s STEPS]
 *
 * Every step all-reduces a "gradient" whose values depend on who computed
 * it, checks the sum against the members it expects, and applies it to
 * the "parameters". At step KILL (-k) the process that started as rank 2
 * dies (SIGKILL): the survivors' AllReduce fails (HCCL_E_REMOTE, or
 * HCCL_E_TIMEOUT after HCCL_EXEC_TIMEOUT), they call HcclCommRemoveMember
 * and redo the step at 3 ranks. At step ADD (-a) they call
 * HcclCommAddMember, which starts a copy of this program by MPI_Comm_spawn;
 * the copy finds its parent, calls HcclCommJoin(NULL), receives the
 * training state by HcclBroadcast and the loop goes on at 4 ranks.
 *
 * Which rank failed comes from hcomm: HcclCommGetFailedRanks lists the
 * members it knows to be dead (polled here for up to 10 s: UCX's keepalive
 * finds a killed process within about a second). The example also knows
 * the victim by construction and fails if the two disagree. A hung process
 * is listed only once a member removed it: for hangs the application
 * decides (from its launcher, or the rank the timeout's log line names).
 *
 * The mpirun options: orte_abort_on_non_zero_status 0 keeps Open MPI from
 * killing everybody when one rank dies; --oversubscribe (or free slots in
 * a hostfile) lets MPI_Comm_spawn start the replacement.
 *
 * The end (docs/ELASTIC.md, "Ending a job that survived a failure"): after
 * a rank died, MPI_Finalize waits for it forever. So the members agree
 * over hcomm that they are done (the last AllReduce), rank 0 prints the
 * verdict line, everyone flushes, destroys the communicator and leaves
 * with _exit(0), without MPI_Finalize; mpirun then returns within seconds,
 * with status 137 (the killed rank's SIGKILL) whatever the survivors
 * report, and hangs if every survivor exits non-zero: the job's verdict is
 * the line "elastic: done" (or "elastic: FAILED"), not an exit status.
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define P 4096        /* parameters */
#define MAXRANKS 64
#define NEWCOMER 100  /* identity of the replacement */

typedef struct {          /* what a newcomer needs to join the training */
    int32_t step, n;
    int32_t ids[MAXRANKS];  /* identity of each rank, in rank order */
    float params[P];
} state_t;

static int g_me; /* identity: rank in the first job, or NEWCOMER */

static void die(const char *what, HcclResult r)
{
    printf("elastic: FAILED: identity %d: %s: %s\n", g_me, what, HcclGetErrorString(r));
    fflush(stdout);
    exit(1);
}

static float grad_value(int id, int step, int i)
{
    return (float)((id + 1) * 3 + i % 7 + step % 5); /* small integers: exact sums */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    setvbuf(stdout, NULL, _IOLBF, 0);
    int steps = 20, kill_step = 5, add_step = 10, victim = 2, opt;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0) /* --help is -h */
            argv[i][2] = '\0', argv[i][1] = 'h';
    while ((opt = getopt(argc, argv, "s:k:a:h")) != -1) {
        if (opt == 's')
            steps = atoi(optarg);
        else if (opt == 'k')
            kill_step = atoi(optarg);
        else if (opt == 'a')
            add_step = atoi(optarg);
        else {
            fprintf(opt == 'h' ? stdout : stderr,
                    "usage: mpirun -np N elastic [-s STEPS] [-k KILL_STEP] [-a ADD_STEP]\n"
                    "A training loop of STEPS [20] AllReduces: at KILL_STEP [5] rank 2 dies\n"
                    "(SIGKILL), the survivors remove it and go on; at ADD_STEP [10] they add\n"
                    "a new member (MPI_Comm_spawn). Every result is checked.\n");
            MPI_Finalize();
            return opt == 'h' ? 0 : 2;
        }
    }
    static state_t st;
    HcclComm comm = NULL;
    HcclResult r;
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) { /* the replacement */
        g_me = NEWCOMER;
        if ((r = HcclCommJoin(NULL, &comm)) != HCCL_SUCCESS)
            die("HcclCommJoin", r);
        uint32_t rk;
        HcclGetRankId(comm, &rk);
        if ((r = HcclBroadcast(&st, sizeof st, HCCL_DATA_TYPE_UINT8, 0, comm, NULL)) !=
            HCCL_SUCCESS)
            die("HcclBroadcast (state)", r);
        printf("elastic: newcomer joined as rank %u of %d at step %d\n", rk, st.n, st.step);
    } else {
        int rank, n;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &n);
        if (n < 3 || n > MAXRANKS - 1) {
            if (rank == 0)
                fprintf(stderr, "elastic: run it on 3 to %d ranks\n", MAXRANKS - 1);
            MPI_Finalize();
            return 2;
        }
        g_me = rank;
        if ((r = HcclCommInitMpi(MPI_COMM_WORLD, &comm)) != HCCL_SUCCESS)
            die("HcclCommInitMpi", r);
        st.n = n;
        for (int i = 0; i < n; i++)
            st.ids[i] = i;
    }
    float *grad = malloc(P * sizeof *grad), *sum = malloc(P * sizeof *sum);
    int added = g_me == NEWCOMER, removed = g_me == NEWCOMER;
    for (int step = st.step; step < steps; step++) {
        if (step == kill_step && g_me == victim) {
            printf("elastic: identity %d: dying at step %d (SIGKILL)\n", g_me, step);
            raise(SIGKILL);
        }
        for (int i = 0; i < P; i++)
            grad[i] = grad_value(g_me, step, i);
        r = HcclAllReduce(grad, sum, P, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL);
        if (r != HCCL_SUCCESS) {
            if (removed)
                die("HcclAllReduce", r);
            uint32_t failed[MAXRANKS], nf = 0;
            for (int tries = 0; tries < 1000 && nf == 0; tries++) {
                HcclResult g = HcclCommGetFailedRanks(comm, failed, MAXRANKS, &nf);
                if (g != HCCL_SUCCESS)
                    die("HcclCommGetFailedRanks", g);
                if (nf == 0)
                    usleep(10000);
            }
            if (nf != 1)
                die(nf ? "HcclCommGetFailedRanks (more than one rank)"
                       : "HcclCommGetFailedRanks (no rank listed after 10 s)", r);
            const int vr = (int)failed[0];
            if (st.ids[vr] != victim) { /* the construction says who died */
                printf("elastic: FAILED: identity %d: hcomm lists rank %d (identity %d) as "
                       "failed, but identity %d died\n", g_me, vr, st.ids[vr], victim);
                exit(1);
            }
            printf("elastic: identity %d: step %d: HcclAllReduce: %s; hcomm lists rank %d as "
                   "failed; removing it\n", g_me, step, HcclGetErrorString(r), vr);
            if ((r = HcclCommRemoveMember(comm, (uint32_t)vr)) != HCCL_SUCCESS)
                die("HcclCommRemoveMember", r);
            memmove(&st.ids[vr], &st.ids[vr + 1], (st.n - vr - 1) * sizeof st.ids[0]);
            st.n--;
            removed = 1;
            step--; /* redo this step without it */
            continue;
        }
        for (int i = 0; i < P; i++) {
            float e = 0;
            for (int k = 0; k < st.n; k++)
                e += grad_value(st.ids[k], step, i);
            if (sum[i] != e) {
                printf("elastic: FAILED: identity %d: step %d: sum[%d] = %g, expected %g (%d "
                       "ranks)\n", g_me, step, i, sum[i], e, st.n);
                exit(1);
            }
        }
        for (int i = 0; i < P; i++)
            st.params[i] -= 1e-3f * sum[i] / (float)st.n;
        uint32_t rk;
        HcclGetRankId(comm, &rk);
        if (rk == 0)
            printf("elastic: step %d ok on %d ranks\n", step, st.n);
        if (step == add_step && !added) {
            /* the replacement takes the victim's old place (rank 2) */
            uint32_t at = (uint32_t)(victim < st.n ? victim : st.n);
            if ((r = HcclCommAddMember(comm, at)) != HCCL_SUCCESS)
                die("HcclCommAddMember", r);
            memmove(&st.ids[at + 1], &st.ids[at], (st.n - at) * sizeof st.ids[0]);
            st.ids[at] = NEWCOMER;
            st.n++;
            st.step = step + 1;
            if ((r = HcclBroadcast(&st, sizeof st, HCCL_DATA_TYPE_UINT8, 0, comm, NULL)) !=
                HCCL_SUCCESS)
                die("HcclBroadcast (state)", r);
            added = 1;
        }
    }
    /* every member must hold the same parameters */
    float *ref = malloc(P * sizeof *ref);
    memcpy(ref, st.params, P * sizeof *ref);
    if ((r = HcclBroadcast(ref, P, HCCL_DATA_TYPE_FP32, 0, comm, NULL)) != HCCL_SUCCESS)
        die("HcclBroadcast (check)", r);
    int same = memcmp(ref, st.params, P * sizeof *ref) == 0, all_same = 0;
    if ((r = HcclAllReduce(&same, &all_same, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MIN, comm,
                           NULL)) != HCCL_SUCCESS)
        die("HcclAllReduce (check)", r);
    uint32_t rk;
    HcclGetRankId(comm, &rk);
    if (rk == 0) {
        if (all_same && removed && added)
            printf("elastic: done: %d steps, lost identity %d, added a replacement, %d ranks at "
                   "the end, every result correct\n", steps, victim, st.n);
        else
            printf("elastic: FAILED: parameters %s, removed %d, added %d\n",
                   all_same ? "equal" : "differ", removed, added);
    }
    free(grad);
    free(sum);
    free(ref);
    fflush(stdout);
    HcclCommDestroy(comm);
    if (removed) /* a process of the job died: MPI_Finalize would wait for it */
        _exit(0);
    MPI_Finalize();
    return all_same ? 0 : 1;
}
