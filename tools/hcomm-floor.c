/*
 * tools/hcomm-floor.c - the least time a node-local collective can take on
 * this machine, measured the way hcomm-perf times a call (docs/PERFORMANCE.md).
 *
 * With more ranks than cores, an operation in which every rank needs every
 * other rank's data cannot finish before every rank has run, and a rank
 * that waits must give its core to the one it waits for: the slowest
 * rank's time includes process switches, whatever the library. This tool
 * measures that floor with nothing but cache-line flags in memory shared
 * by the ranks of the node (MPI_Win_allocate_shared), so that the timed
 * part does no work at all:
 *
 *   all   every rank raises its flag, then waits until every other rank's
 *         flag is up (the dependency of AllReduce, AllGather, ReduceScatter
 *         and AlltoAll)
 *   root  rank 0 raises its flag, every other rank waits for it (the
 *         dependency of Broadcast)
 *
 * A wait polls the flag -s times and then calls sched_yield, as hcomm does
 * when the host has more ranks than cores (default there: 8 polls, hcomm's
 * count, src/comm/comm.c); otherwise a wait only polls (-s 0: never yield). Every
 * iteration is preceded by an untimed MPI_Barrier and timed alone on every
 * rank; the result is the median (10th and 90th percentiles) over
 * iterations of the slowest rank's time, in microseconds, as hcomm-perf
 * reports it. Also: the same for an MPI_Barrier itself, and, when two
 * ranks of the job share a core, the time of a sched_yield hand-over from
 * one process to the other (half of a round trip between them).
 *
 * Usage: mpirun -np N hcomm-floor [-n ITERS] [-s SPIN]
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stats.h"

#define LINE 64 /* bytes: one flag per cache line */

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int spin = -2; /* polls before each sched_yield; 0: never; -2: the default */

static volatile uint64_t *flag(char *base, int r)
{
    return (volatile uint64_t *)(base + (size_t)r * LINE);
}

/* A poll pauses first: back-to-back loads of the line that the other core
 * is about to write delay its write (2 ranks here: 0.70-0.78 us for "all"
 * without the pause, 0.42-0.58 with it). */
static void wait_ge(volatile uint64_t *f, uint64_t v)
{
    int k = 0;
    for (;;) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if (__atomic_load_n(f, __ATOMIC_ACQUIRE) >= v)
            return;
        if (spin && ++k >= spin) {
            k = 0;
            sched_yield();
        }
    }
}

/* slowest rank per iteration (rank 0 gets it), sorted */
static void report(const char *what, double *t, int iters, int rank)
{
    double *m = rank == 0 ? malloc(sizeof(double) * iters) : NULL;
    MPI_Reduce(t, m, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        /* sort first: the order in which arguments are evaluated is
         * unspecified (GCC took the two sorted percentiles before the sort) */
        const double med = hc_pct(m, iters, 0.5);
        printf("%-34s %8.2f %8.2f %8.2f\n", what, med, hc_pct_sorted(m, iters, 0.1),
               hc_pct_sorted(m, iters, 0.9));
        free(m);
    }
}

/* Parse argv (every rank does, identically): -n into *iters, -s into spin.
 * 0: run; 1: exit 0; 2: error. */
static int parse_args(int argc, char **argv, int rank, int *iters)
{
    int opt;
    /* --help is -h */
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0)
            argv[i][2] = '\0', argv[i][1] = 'h';
    while ((opt = getopt(argc, argv, "n:s:h")) != -1) {
        if (opt == 'n')
            *iters = atoi(optarg);
        else if (opt == 's')
            spin = atoi(optarg) < 0 ? -1 : atoi(optarg);
        else {
            if (rank == 0)
                fprintf(opt == 'h' ? stdout : stderr,
                       "usage: mpirun -np N hcomm-floor [-n ITERS] [-s SPIN]\n"
                       "The least time a node-local collective can take here: cache-line flags\n"
                       "in shared memory, timed as hcomm-perf times a call (see the source's\n"
                       "header). -n iterations per measurement [5000]; -s polls before each\n"
                       "sched_yield, 0: never [8 with more ranks than cores, else 0].\n");
            return opt == 'h' ? 1 : 2;
        }
    }
    if (*iters < 10 || spin == -1) {
        if (rank == 0)
            fprintf(stderr, "hcomm-floor: -n must be >= 10 and -s >= 0\n");
        return 2;
    }
    return 0;
}

/* "all": every rank raises its flag in fall, then waits for every rank's */
static void time_all(char *fall, int rank, int n, double *t, int iters)
{
    for (int it = 0; it < iters; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = now_us();
        __atomic_store_n(flag(fall, rank), (uint64_t)it + 1, __ATOMIC_RELEASE);
        for (int q = 0; q < n; q++)
            wait_ge(flag(fall, q), (uint64_t)it + 1);
        t[it] = now_us() - t0;
    }
}

/* "root": rank 0 raises its flag in froot, every other rank waits for it */
static void time_root(char *froot, int rank, double *t, int iters)
{
    for (int it = 0; it < iters; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = now_us();
        if (rank == 0)
            __atomic_store_n(flag(froot, 0), (uint64_t)it + 1, __ATOMIC_RELEASE);
        else
            wait_ge(flag(froot, 0), (uint64_t)it + 1);
        t[it] = now_us() - t0;
    }
}

static void time_barrier(double *t, int iters)
{
    for (int it = 0; it < iters; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = now_us();
        MPI_Barrier(MPI_COMM_WORLD);
        t[it] = now_us() - t0;
    }
}

/* The hand-over, with more ranks than cores: ranks 0 and 1 bound to the
 * first core pass a flag of fhand back and forth, yielding while they
 * wait; the other ranks are bound to the last core meanwhile. Bindings
 * stay: this is the last measurement. Rank 0 prints the result. */
static void hand_over(char *fhand, int rank, long cores, int iters)
{
    const int rounds = iters * 4;
    double t0 = 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(rank < 2 ? 0 : (int)cores - 1, &set);
    sched_setaffinity(0, sizeof(set), &set);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        t0 = now_us();
        for (int i = 0; i < rounds; i++) {
            __atomic_store_n(flag(fhand, 0), (uint64_t)i + 1, __ATOMIC_RELEASE);
            while (__atomic_load_n(flag(fhand, 1), __ATOMIC_ACQUIRE) < (uint64_t)i + 1)
                sched_yield();
        }
        printf("%-34s %8.2f   (ranks 0 and 1 on one core, mean of %d round trips / 2)\n",
               "sched_yield hand-over", (now_us() - t0) / rounds / 2, rounds);
    } else if (rank == 1) {
        for (int i = 0; i < rounds; i++) {
            while (__atomic_load_n(flag(fhand, 0), __ATOMIC_ACQUIRE) < (uint64_t)i + 1)
                sched_yield();
            __atomic_store_n(flag(fhand, 1), (uint64_t)i + 1, __ATOMIC_RELEASE);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n, iters = 5000;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int prc = parse_args(argc, argv, rank, &iters);
    if (prc) {
        MPI_Finalize();
        return prc == 1 ? 0 : 2;
    }
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nn;
    MPI_Comm_size(node, &nn);
    if (nn != n) {
        if (rank == 0)
            fprintf(stderr, "hcomm-floor: every rank must be on one host\n");
        MPI_Finalize();
        return 2;
    }
    char *base;
    MPI_Win win;
    /* flags for "all", "root" and the hand-over, one line each per rank */
    MPI_Win_allocate_shared(rank == 0 ? (MPI_Aint)3 * n * LINE : 0, 1, MPI_INFO_NULL, node,
                            &base, &win);
    MPI_Aint sz;
    int du;
    MPI_Win_shared_query(win, 0, &sz, &du, &base);
    if (rank == 0)
        memset(base, 0, (size_t)3 * n * LINE);
    MPI_Barrier(MPI_COMM_WORLD);
    char *fall = base, *froot = base + (size_t)n * LINE, *fhand = base + (size_t)2 * n * LINE;

    double *t = malloc(sizeof(double) * iters);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (spin == -2)
        spin = n > cores ? 8 : 0;
    if (rank == 0) {
        char how[64] = "waits never yield";
        if (spin)
            snprintf(how, sizeof(how), "%d polls before each sched_yield", spin);
        printf("# hcomm-floor: %d ranks on one host, %ld cores, %s, %d iterations\n"
               "# slowest rank per iteration, us: %-8s %8s %8s\n",
               n, cores, how, iters, "median", "p10", "p90");
    }

    time_all(fall, rank, n, t, iters);
    report("all (every rank waits for all)", t, iters, rank);
    time_root(froot, rank, t, iters);
    report("root (every rank waits for rank 0)", t, iters, rank);
    time_barrier(t, iters);
    report("MPI_Barrier", t, iters, rank);
    if (n > 1 && n > cores)
        hand_over(fhand, rank, cores, iters);
    free(t);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
