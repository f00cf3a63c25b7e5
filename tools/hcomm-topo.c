/*
 * tools/hcomm-topo.c - show the topology hcomm detects and what it does
 * with it. Run under mpirun, with the same environment as the job:
 *
 *   mpirun -np 8 hcomm-topo [-o FILE] [-r ROOT] [-b SIZES] [-n ITERS] [-v]
 *
 * Rank 0 prints the model of a communicator over MPI_COMM_WORLD (levels,
 * link classes, racks / nodes / groups with their ranks, each rank's NUMA
 * node, CPUs and nearby devices, fast links), then what hcomm will use:
 * the ring order and its boundary crossings, the units and slices of the
 * HIER algorithms, the TORUS2D grid, the Broadcast HIER tree from ROOT
 * (default 0), the bytes each algorithm sends across nodes (counted from
 * the schedules every rank would run) and the algorithm the tuner picks
 * for a few sizes.
 *
 *   -o FILE   also write the model as a topology file (HCCL_TOPO_FILE format)
 *   -b SIZES  time AllReduce (float32) of these sizes (e.g. 64K,1M,16M) with
 *             HIER, RING in topology order, RING in rank order and
 *             MPI_Allreduce, alternating in one process; print the median
 *             over ITERS (default 10) of the slowest rank and the bytes
 *             sent across nodes per operation
 *   -v        every rank prints one line about itself
 *
 * It reads hcomm's internal model (it links the core library), so it shows
 * exactly what the library computes, not a re-derivation.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include "coll/algos.h"
#include "coll/hier.h"
#include "src/comm/comm.h"
#include "src/exec/exec.h"
#include "src/transport/transport_ucx.h"
#include "src/comm/tune.h"
#include "topo/topo.h"
#include "tools/stats.h"

static int g_rank, g_n;

static uint64_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'k': case 'K': v *= 1024; break;
    case 'm': case 'M': v *= 1024 * 1024; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
    default: break;
    }
    return (uint64_t)v;
}

static const char *fmt_bytes(uint64_t b, char *buf, size_t len)
{
    if (b >= (1u << 20))
        snprintf(buf, len, "%.2f MiB", b / 1048576.0);
    else if (b >= 1024)
        snprintf(buf, len, "%.1f KiB", b / 1024.0);
    else
        snprintf(buf, len, "%llu B", (unsigned long long)b);
    return buf;
}

/* Build rank r's schedule of (coll, algo) over view v. */
static int build(hc_comm_t *c, const hc_topo_view_t *v, hc_coll_t coll, const char *algo,
                 uint32_t r, uint64_t count, uint32_t root, hc_sched_t *s)
{
    const hc_algo_t *al = hc_coll_find_algo(coll, algo);
    if (al == NULL)
        return HCCL_E_NOT_FOUND;
    hc_coll_args_t a = {.coll = coll, .rank = r, .nranks = c->nranks, .root = root,
                        .count = count, .esize = 4, .dtype = HCCL_DATA_TYPE_FP32,
                        .op = HCCL_REDUCE_SUM, .topo = v};
    hc_sched_init(s, 4);
    return al->build(&a, s);
}

/* Bytes all ranks send across nodes for one operation. */
static uint64_t xnode(hc_comm_t *c, const hc_topo_view_t *v, hc_coll_t coll, const char *algo,
                      uint64_t count)
{
    uint64_t sum = 0;
    for (uint32_t r = 0; r < c->nranks; r++) {
        hc_sched_t s;
        if (build(c, v, coll, algo, r, count, 0, &s) == HCCL_SUCCESS)
            sum += hc_sched_xnode_bytes(&s, &c->view, r, c->nranks);
        hc_sched_free(&s);
    }
    return sum;
}

/* ---- the Broadcast HIER tree ----------------------------------------------- */

/* Indented tree; each edge says which boundary it crosses. */
static void print_tree(const hc_topo_t *t, uint32_t r, int64_t parent, uint32_t *const *kids,
                       const uint32_t *nk, char *prefix, int last)
{
    static const char *cross[HC_TOPO_LEVELS] = {"", "   (into another group)",
                                                "   (into another node)", "   (into another rack)"};
    if (parent < 0)
        printf("  %u (root)\n", r);
    else
        printf("  %s%s%u%s\n", prefix, last ? "`- " : "|- ", r,
               cross[hc_topo_pair_level(t, (uint32_t)parent, r)]);
    size_t l = strlen(prefix);
    if (parent >= 0)
        strcat(prefix, last ? "   " : "|  ");
    for (uint32_t i = 0; i < nk[r]; i++)
        print_tree(t, kids[r][i], r, kids, nk, prefix, i + 1 == nk[r]);
    prefix[l] = '\0';
}

static void show_tree(hc_comm_t *c, uint32_t root)
{
    const uint32_t n = c->nranks;
    uint32_t **kids = calloc(n, sizeof(uint32_t *)), *nk = calloc(n, sizeof(uint32_t));
    uint32_t cross[HC_TOPO_LEVELS] = {0}, crossb[HC_TOPO_LEVELS] = {0};
    hc_topo_view_t flat;
    memset(&flat, 0, sizeof(flat));
    for (uint32_t r = 0; r < n; r++) {
        kids[r] = calloc(n, sizeof(uint32_t));
        hc_sched_t s;
        if (build(c, &c->view, HC_COLL_BROADCAST, "HIER", r, 1024, root, &s) == HCCL_SUCCESS)
            for (uint32_t i = 0; i < s.nsteps; i++)
                if (s.steps[i].kind == HC_STEP_SEND && s.steps[i].tag == 0) {
                    kids[r][nk[r]++] = s.steps[i].peer;
                    int lv = hc_topo_pair_level(c->topo, r, s.steps[i].peer);
                    for (int k = 0; k < lv; k++)
                        cross[k]++;
                }
        hc_sched_free(&s);
        if (build(c, &flat, HC_COLL_BROADCAST, "BINOMIAL", r, 1024, root, &s) == HCCL_SUCCESS)
            for (uint32_t i = 0; i < s.nsteps; i++)
                if (s.steps[i].kind == HC_STEP_SEND) {
                    int lv = hc_topo_pair_level(c->topo, r, s.steps[i].peer);
                    for (int k = 0; k < lv; k++)
                        crossb[k]++;
                }
        hc_sched_free(&s);
    }
    printf("\nBroadcast HIER tree from rank %u (racks, then nodes, then groups, then ranks):\n",
           root);
    char prefix[512] = "";
    if (n <= 64)
        print_tree(c->topo, root, -1, kids, nk, prefix, 1);
    else
        printf("  (%u ranks: tree not drawn)\n", n);
    printf("  edges crossing a boundary: group %u, node %u, rack %u (BINOMIAL in rank order: "
           "%u, %u, %u)\n", cross[0], cross[1], cross[2], crossb[0], crossb[1], crossb[2]);
    for (uint32_t r = 0; r < n; r++)
        free(kids[r]);
    free(kids);
    free(nk);
}

/* The HIER algorithms: their units and, when they are used, the slices
 * (h: rank 0's AllReduce plan). */
static void show_hier(hc_comm_t *c, hc_hier_t *h)
{
    const uint32_t n = c->nranks;
    hc_coll_args_t args = {.coll = HC_COLL_ALLREDUCE, .rank = 0, .nranks = n, .count = n,
                           .esize = 4, .topo = &c->view};
    printf("\nHIER algorithms:");
    if (hc_hier_init(&args, h) == HCCL_SUCCESS) {
        const char *why = hc_hier_usable(&args);
        printf(" units = %s (%u of them)%s%s\n", h->level, h->G, why ? "; not used: " : "",
               why ? why : "");
        if (!why) {
            printf("  intra-unit stages: ring reduce-scatter / allgather inside each %s\n",
                   h->level);
            printf("  inter-unit stage, one ring per slice (slice j: the j-th rank of every %s):\n",
                   h->level);
            for (uint32_t j = 0; j < h->smax && j < 16; j++) {
                printf("    slice %-3u", j);
                for (uint32_t u = 0; u < h->G && u < 32; u++)
                    printf(" %u", hc_hier_member(h, u, j % hc_hier_usize(h, u)));
                printf("%s\n", h->G > 32 ? " ..." : "");
            }
        }
    }
}

/* The TORUS2D grid, or why there is none (h: as show_hier left it). */
static void show_grid(hc_comm_t *c, const hc_hier_t *h)
{
    if (c->view.grid_rows) {
        printf("\nTORUS2D grid: %u rows (%ss) x %u columns\n", c->view.grid_rows,
               c->topo->unit_level, c->view.grid_cols);
        for (uint32_t r = 0; r < c->view.grid_rows && r < 16; r++) {
            printf("  row %-3u", r);
            for (uint32_t col = 0; col < c->view.grid_cols && col < 32; col++)
                printf(" %3u", c->view.grid[r * c->view.grid_cols + col]);
            printf("\n");
        }
    } else {
        printf("\nTORUS2D grid: none (%s); TORUS2D factorises n instead\n",
               h->G > 1 ? "units of unequal size" : "flat topology");
    }
}

/* The bytes each algorithm sends across nodes (more than one node). */
static void show_xnode(hc_comm_t *c)
{
    const uint32_t n = c->nranks;
    char a[32], b[32], d[32];
    hc_topo_view_t blind = c->view;
    blind.ring = NULL; /* rank order, topology otherwise known */
    const uint64_t count = 1u << 18; /* 1 MiB of float32 */
    printf("\nbytes sent across nodes by one 1 MiB operation (all ranks together, from the "
           "schedules):\n");
    printf("  allreduce     HIER %-11s RING in topology order %-11s RING in rank order %s\n",
           fmt_bytes(xnode(c, &c->view, HC_COLL_ALLREDUCE, "HIER", count), a, sizeof(a)),
           fmt_bytes(xnode(c, &c->view, HC_COLL_ALLREDUCE, "RING", count), b, sizeof(b)),
           fmt_bytes(xnode(c, &blind, HC_COLL_ALLREDUCE, "RING", count), d, sizeof(d)));
    const uint64_t per = count / n ? count / n : 1;
    printf("  allgather     HIER %-11s RING in topology order %-11s RING in rank order %s\n",
           fmt_bytes(xnode(c, &c->view, HC_COLL_ALLGATHER, "HIER", per), a, sizeof(a)),
           fmt_bytes(xnode(c, &c->view, HC_COLL_ALLGATHER, "RING", per), b, sizeof(b)),
           fmt_bytes(xnode(c, &blind, HC_COLL_ALLGATHER, "RING", per), d, sizeof(d)));
    printf("  reducescatter HIER %-11s RING in topology order %-11s RING in rank order %s\n",
           fmt_bytes(xnode(c, &c->view, HC_COLL_REDUCESCATTER, "HIER", per), a, sizeof(a)),
           fmt_bytes(xnode(c, &c->view, HC_COLL_REDUCESCATTER, "RING", per), b, sizeof(b)),
           fmt_bytes(xnode(c, &blind, HC_COLL_REDUCESCATTER, "RING", per), d, sizeof(d)));
    printf("  broadcast     HIER %-11s BINOMIAL %s\n",
           fmt_bytes(xnode(c, &c->view, HC_COLL_BROADCAST, "HIER", count), a, sizeof(a)),
           fmt_bytes(xnode(c, &blind, HC_COLL_BROADCAST, "BINOMIAL", count), b, sizeof(b)));
}

/* The algorithm the tuner picks per collective for a few sizes. */
static void show_selection(hc_comm_t *c)
{
    const uint32_t n = c->nranks;
    char a[32];
    printf("\nalgorithm selection (HCCL_DEBUG=INFO HCCL_DEBUG_SUBSYS=TUNE prints the whole "
           "table):\n");
    static const hc_coll_t colls[] = {HC_COLL_ALLREDUCE, HC_COLL_REDUCESCATTER,
                                      HC_COLL_ALLGATHER, HC_COLL_BROADCAST};
    static const uint64_t sizes[] = {8, 64 << 10, 1 << 20, 64 << 20};
    for (size_t k = 0; k < 4; k++) {
        printf("  %-14s", hc_coll_name(colls[k]));
        for (size_t i = 0; i < 4; i++) {
            hc_coll_args_t sa = {.coll = colls[k], .rank = 0, .nranks = n,
                                 .count = sizes[i] / 4, .esize = 4,
                                 .dtype = HCCL_DATA_TYPE_FP32, .op = HCCL_REDUCE_SUM,
                                 .topo = &c->view};
            if (colls[k] == HC_COLL_REDUCESCATTER || colls[k] == HC_COLL_ALLGATHER)
                sa.count = sizes[i] / 4 / n ? sizes[i] / 4 / n : 1;
            const hc_algo_t *al = hc_tune_select(c->tune, &sa);
            printf("  %s -> %-10s", fmt_bytes(sizes[i], a, sizeof(a)), al ? al->name : "?");
        }
        printf("\n");
    }
}

static void show_plan(hc_comm_t *c, uint32_t root)
{
    hc_hier_t h;
    show_hier(c, &h);
    show_grid(c, &h);
    show_tree(c, root);
    if (c->topo->nnodes > 1)
        show_xnode(c);
    show_selection(c);
}

/* ---- timing --------------------------------------------------------------- */

static int run_sched(hc_comm_t *c, const hc_topo_view_t *v, const char *algo, float *in,
                     float *out, uint64_t count, hc_sched_t *s, void **tmp, uint64_t *tmp_size)
{
    const hc_algo_t *al = hc_coll_find_algo(HC_COLL_ALLREDUCE, algo);
    hc_coll_args_t a = {.coll = HC_COLL_ALLREDUCE, .rank = c->rank, .nranks = c->nranks,
                        .count = count, .esize = 4, .dtype = HCCL_DATA_TYPE_FP32,
                        .op = HCCL_REDUCE_SUM, .topo = v};
    if (s->nsteps == 0) { /* built once per size */
        hc_sched_init(s, 4);
        int rc = al->build(&a, s);
        if (rc != HCCL_SUCCESS)
            return rc;
    }
    if (s->tmp_bytes > *tmp_size) {
        free(*tmp);
        *tmp = malloc(s->tmp_bytes);
        *tmp_size = s->tmp_bytes;
        memset(*tmp, 0, s->tmp_bytes);
    }
    void *bufs[HC_NBUFS] = {in, out, *tmp};
    hc_exec_t e;
    int rc = hc_exec_start(&e, s, bufs, &hc_ucx_tp, &c->eps, c->rank, c->id, hc_comm_next_seq(c),
                           HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, NULL);
    if (rc == HCCL_SUCCESS) {
        hc_exec_t *ex = &e;
        rc = hc_comm_wait(c, &ex, 1, algo);
        hc_exec_fini(&e);
    }
    return rc;
}


static void bench(hc_comm_t *c, const char *sizes, int iters)
{
    enum { NV = 4 };
    static const char *names[NV] = {"HIER", "RING (topology order)", "RING (rank order)",
                                    "MPI_Allreduce"};
    hc_topo_view_t blind = c->view;
    blind.ring = NULL;
    const hc_topo_view_t *views[NV] = {&c->view, &c->view, &blind, NULL};
    const char *algos[NV] = {"HIER", "RING", "RING", NULL};
    if (g_rank == 0) {
        printf("\nAllReduce float32 sum on %d ranks, median of %d of the slowest rank, variants "
               "alternating in one process:\n", g_n, iters);
        printf("  %-10s", "size");
        for (int k = 0; k < NV; k++)
            printf(" %22s", names[k]);
        printf("   bytes across nodes per op: HIER / RING topo / RING rank\n");
    }
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", sizes);
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint64_t count = parse_size(tok) / 4;
        if (count == 0)
            continue;
        float *in = malloc(count * 4), *out = malloc(count * 4);
        for (uint64_t i = 0; i < count; i++)
            in[i] = (float)((g_rank + i) % 7);
        hc_sched_t s[NV];
        void *tmp[NV] = {NULL};
        uint64_t tsz[NV] = {0};
        double *t = calloc((size_t)NV * iters, sizeof(double));
        memset(s, 0, sizeof(s));
        int bad = 0;
        for (int it = -2; it < iters && !bad; it++) {
            for (int k = 0; k < NV; k++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                if (algos[k])
                    bad |= run_sched(c, views[k], algos[k], in, out, count, &s[k], &tmp[k],
                                     &tsz[k]) != HCCL_SUCCESS;
                else
                    MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                double dt = MPI_Wtime() - t0, mx;
                MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                if (it >= 0)
                    t[(size_t)k * iters + it] = mx;
            }
        }
        uint64_t xb[3] = {0, 0, 0}, sum[3];
        for (int k = 0; k < 3; k++)
            xb[k] = hc_sched_xnode_bytes(&s[k], &c->view, c->rank, c->nranks);
        MPI_Allreduce(xb, sum, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        if (g_rank == 0) {
            printf("  %-10s", tok);
            for (int k = 0; k < NV; k++) {
                qsort(t + (size_t)k * iters, iters, sizeof(double), hc_cmp_double);
                printf(" %19.1f us", t[(size_t)k * iters + iters / 2] * 1e6);
            }
            char a[32], b2[32], d[32];
            printf("   %s / %s / %s%s\n", fmt_bytes(sum[0], a, sizeof(a)),
                   fmt_bytes(sum[1], b2, sizeof(b2)), fmt_bytes(sum[2], d, sizeof(d)),
                   bad ? "  (FAILED)" : "");
        }
        for (int k = 0; k < NV; k++) {
            hc_sched_free(&s[k]);
            free(tmp[k]);
        }
        free(t);
        free(in);
        free(out);
    }
}

static void usage(FILE *f)
{
    if (g_rank == 0)
        fprintf(f,
                "usage: mpirun -np N hcomm-topo [-o FILE] [-r ROOT] [-b SIZES] "
                "[-n ITERS] [-v]\n"
                "Rank 0 prints the topology hcomm detects for MPI_COMM_WORLD and what\n"
                "it does with it: rings, HIER units, the TORUS2D grid, the Broadcast\n"
                "tree from ROOT [0], bytes across nodes, the algorithm per size.\n"
                "  -o FILE   also write the model as a topology file (HCCL_TOPO_FILE)\n"
                "  -b SIZES  time AllReduce of these sizes (e.g. 64K,1M,16M): HIER, RING\n"
                "            in topology and in rank order, MPI_Allreduce; median of\n"
                "            ITERS [10] of the slowest rank\n"
                "  -v        every rank prints one line about itself\n");
}

/* -v: every rank, in rank order, one line about itself. */
static void show_ranks(hc_comm_t *c)
{
    const hc_topo_rank_t *me = &c->topo->r[c->rank];
    for (int r = 0; r < g_n; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (r == g_rank)
            printf("rank %d: host %s, node %s, group g%u, NUMA %d, cpus %s\n", g_rank,
                   me->host, c->topo->nodes[me->node].name, me->group, me->numa,
                   me->have_facts ? me->facts.cpus : "?");
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_n);
    const char *out = NULL, *sizes = NULL;
    uint32_t root = 0;
    int iters = 10, verbose = 0, opt;
    /* --help is -h */
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0)
            argv[i][2] = '\0', argv[i][1] = 'h';
    while ((opt = getopt(argc, argv, "o:r:b:n:vh")) != -1) {
        switch (opt) {
        case 'o': out = optarg; break;
        case 'r': root = (uint32_t)atoi(optarg); break;
        case 'b': sizes = optarg; break;
        case 'n': iters = atoi(optarg) > 0 ? atoi(optarg) : 1; break;
        case 'v': verbose = 1; break;
        default:
            usage(opt == 'h' ? stdout : stderr);
            MPI_Finalize();
            return opt == 'h' ? 0 : 2;
        }
    }
    HcclComm hc;
    HcclResult rc = HcclCommInitMpi(MPI_COMM_WORLD, &hc);
    if (rc != HCCL_SUCCESS) {
        if (g_rank == 0)
            fprintf(stderr, "hcomm-topo: HcclCommInitMpi failed: %s (the log above says why)\n",
                    HcclGetErrorString(rc));
        MPI_Finalize();
        return 1;
    }
    hc_comm_t *c;
    if (hc_comm_get(hc, "hcomm-topo", &c) != HCCL_SUCCESS || hc_comm_topo(c) != HCCL_SUCCESS) {
        MPI_Finalize();
        return 1;
    }
    if (root >= c->nranks)
        root = 0;
    if (verbose)
        show_ranks(c);
    if (g_rank == 0) {
        printf("hcomm-topo: %d ranks (MPI_COMM_WORLD)\n\n", g_n);
        hc_topo_print(c->topo, stdout);
        show_plan(c, root);
        if (out) {
            FILE *f = fopen(out, "w");
            if (f == NULL || hc_topo_write(c->topo, f) != HCCL_SUCCESS || fclose(f) != 0)
                fprintf(stderr, "hcomm-topo: cannot write %s\n", out);
            else
                printf("\ntopology file written to %s (use it with HCCL_TOPO_FILE)\n", out);
        }
        fflush(stdout);
    }
    if (sizes)
        bench(c, sizes, iters);
    HcclCommDestroy(hc);
    MPI_Finalize();
    return 0;
}
