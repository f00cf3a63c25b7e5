/*
 * test/mpi/test_shmleft.c - a rank killed (SIGKILL) while UCX writes a
 * shared-memory file, or after init, leaves nothing in /dev/shm once the
 * survivors are done (src/comm/shm.h, hc_shm_sweep). Driven by
 * test/mpi/shmleft.sh, 3+ ranks, --mca orte_abort_on_non_zero_status 0,
 * UCX_ALLOC_PRIO=md:posix (the staging segment as a POSIX file):
 *
 *   init DIR   the last rank (the victim) watches its own open files from
 *              a thread and, as soon as it holds a /dev/shm/ucx_shm_posix_*
 *              file that UCX has not removed yet (UCX writes the file whole
 *              before removing its name), writes the name to DIR/victim.file
 *              and kills itself: its HcclCommInitMpi(MPI_COMM_SELF) never
 *              returns. If it does return, the victim writes DIR/missed and
 *              dies all the same.
 *   after DIR  every rank joins one communicator over MPI_COMM_WORLD and
 *              runs an AllReduce, then the victim kills itself.
 *
 * The survivors (their own communicator in init mode) wait until the
 * victim's pid is gone, run a checked AllReduce, destroy their
 * communicator, write DIR/result.<rank> ("ok" or "FAILED ..."), agree over
 * MPI that they are done, and _exit(0) (MPI_Finalize would wait for the
 * dead rank: docs/ELASTIC.md, "Ending a job that survived a failure").
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *g_dir;

static void put(const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The name of a ucx_shm_posix_* file this process has open and UCX has not
 * removed yet, or 0. */
static int open_posix_file(char *name, size_t len)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return 0;
    const char *pre = "/dev/shm/ucx_shm_posix_", *del = " (deleted)";
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d)) != NULL) {
        char link[300], target[256];
        snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strncmp(target, pre, strlen(pre)) == 0 &&
            (n < (ssize_t)strlen(del) || strcmp(target + n - strlen(del), del) != 0)) {
            snprintf(name, len, "%s\n", target + strlen("/dev/shm/"));
            found = 1;
        }
    }
    closedir(d);
    return found;
}

static void *watch(void *arg)
{
    (void)arg;
    char name[300];
    for (;;) {
        if (open_posix_file(name, sizeof(name))) {
            put("victim.file", name);
            raise(SIGKILL);
        }
        sched_yield();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc != 3 || n < 3 || (strcmp(argv[1], "init") != 0 && strcmp(argv[1], "after") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: test_shmleft init|after DIR (3+ ranks)\n");
        MPI_Finalize();
        return 2;
    }
    g_dir = argv[2];
    const int init_mode = strcmp(argv[1], "init") == 0, victim = n - 1;
    int *pids = malloc(n * sizeof(int)), me = (int)getpid();
    MPI_Allgather(&me, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Comm surv;
    MPI_Comm_split(MPI_COMM_WORLD, rank == victim, rank, &surv);
    HcclComm comm;
    HcclResult r;
    if (rank == victim) {
        if (init_mode) {
            pthread_t t;
            pthread_create(&t, NULL, watch, NULL);
            r = HcclCommInitMpi(MPI_COMM_SELF, &comm);
            put("missed", "the victim's init returned before it saw a POSIX file\n");
            printf("test_shmleft: victim: init returned (%d) before a POSIX file was seen\n", r);
        } else {
            if (HcclCommInitMpi(MPI_COMM_WORLD, &comm) == HCCL_SUCCESS) {
                int one = 1, sum = 0;
                HcclAllReduce(&one, &sum, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, NULL);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        fflush(stdout);
        raise(SIGKILL);
    }
    const MPI_Comm base = init_mode ? surv : MPI_COMM_WORLD;
    char res[256] = "ok\n";
    if ((r = HcclCommInitMpi(base, &comm)) != HCCL_SUCCESS) {
        snprintf(res, sizeof(res), "FAILED HcclCommInitMpi: %s\n", HcclGetErrorString(r));
        comm = NULL;
    } else if (!init_mode) {
        int one = 1, sum = 0;
        r = HcclAllReduce(&one, &sum, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, NULL);
        if (r != HCCL_SUCCESS || sum != n)
            snprintf(res, sizeof(res), "FAILED AllReduce before the kill: %d, sum %d\n", r, sum);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    while (kill(pids[victim], 0) == 0 || errno != ESRCH) /* until its parent reaped it */
        usleep(10000);
    if (comm && init_mode) {
        int one = 1, sum = 0;
        r = HcclAllReduce(&one, &sum, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, NULL);
        if (r != HCCL_SUCCESS || sum != n - 1)
            snprintf(res, sizeof(res), "FAILED AllReduce of the survivors: %d, sum %d\n", r,
                     sum);
    }
    if (comm)
        HcclCommDestroy(comm); /* the last one: the context goes, and sweeps /dev/shm */
    char name[64];
    snprintf(name, sizeof(name), "result.%d", rank);
    put(name, res);
    printf("test_shmleft: rank %d: %s", rank, res);
    fflush(stdout);
    MPI_Barrier(surv); /* every survivor is done */
    _exit(0);
}
