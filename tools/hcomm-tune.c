/*
 * tools/hcomm-tune.c - measure the candidate algorithms of a collective
 * side by side and write an HCCL_TUNE_FILE (docs/ALGORITHMS.md).
 *
 *   mpirun -np 4 hcomm-tune [-C COLL|all] [-b MIN] [-e MAX] [-f FACTOR]
 *                           [-n ITERS] [-w WARMUP] [-a ALGO,ALGO,...] [-A | -H] [-o FILE]
 *
 * One communicator per candidate, its algorithm forced through
 * HcclCommConfig.hcclAlgo ("allreduce=level0:NA;level1:RING"), all over
 * MPI_COMM_WORLD and the same buffers. For each size the candidates run in
 * turn, ITERS rounds with a rotating first one (compare in one
 * run, alternating, on this noisy machine); a round's time is the slowest
 * rank's (MPI_MAX), a candidate's time the median of its rounds. A
 * candidate that cannot run for the size (the tuner would fall back, e.g.
 * TORUS2D on a prime rank count, HIER on one host) is shown as "-": the
 * tool asks the communicator's own table what it would run. Sizes are
 * bytes of one rank's count (the size the selection rules compare), float32.
 *
 * Two pseudo-candidates compare configurations instead of algorithms: AUTO
 * (nothing forced: the built-in table or HCCL_TUNE_FILE decides) and DET
 * (the same in deterministic mode); they are never written to the file.
 * "ALGO+nt" is ALGO with the rule option nt (RECV written with
 * non-temporal stores, docs/ALGORITHMS.md); by default DIRECT+nt joins the
 * candidates of every collective that has DIRECT, and a winner is written
 * as "ALGO nt".
 *
 * With -A the buffers come from HcclMemAlloc and are registered with every
 * candidate's communicator (HcclCommRegister: the single-copy steps copy
 * with loads and stores), CMA+nt joins the default candidates, and the
 * rules written carry when=registered (a tuning file holds them above the
 * rules of a run without -A: the first match wins).
 *
 * With -H the (malloc'd) buffers are in transparent huge pages
 * (tools/hugepages.h): the rules are for a program whose buffers are, and
 * carry no condition (the tuning file is that program's).
 *
 * Output: per size, each candidate's median time in us and the fastest;
 * with -o, rules "coll LO-HI N ALGO" for this rank count, consecutive sizes
 * with the same winner merged, boundaries at the measured sizes.
 *
 * Links the internal library: it reads the algorithm tables and asks a
 * communicator's selection table (src/comm/tune.h) what a call would run.
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>
#include <mpi.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "coll/algos.h"
#include "src/comm/comm.h"
#include "src/comm/op.h"
#include "src/comm/shm.h"
#include "src/comm/tune.h"
#include "tools/hcomm-sim.h"
#include "tools/hugepages.h"
#include "tools/stats.h"

#define MAXC 16

static int rank, nranks;

static const struct {
    const char *name;
    hc_coll_t coll;
} colls[] = {
    {"allreduce", HC_COLL_ALLREDUCE}, {"broadcast", HC_COLL_BROADCAST},
    {"reduce", HC_COLL_REDUCE},       {"reducescatter", HC_COLL_REDUCESCATTER},
    {"allgather", HC_COLL_ALLGATHER}, {"alltoall", HC_COLL_ALLTOALL},
};

/* Run one operation of coll with count floats. */
static HcclResult run(hc_coll_t coll, HcclComm comm, void *sb, void *rb, uint64_t count)
{
    switch (coll) {
    case HC_COLL_ALLREDUCE:
        return HcclAllReduce(sb, rb, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL);
    case HC_COLL_BROADCAST:
        return HcclBroadcast(rb, count, HCCL_DATA_TYPE_FP32, 0, comm, NULL);
    case HC_COLL_REDUCE:
        return HcclReduce(sb, rb, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, comm, NULL);
    case HC_COLL_REDUCESCATTER:
        return HcclReduceScatter(sb, rb, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL);
    case HC_COLL_ALLGATHER:
        return HcclAllGather(sb, rb, count, HCCL_DATA_TYPE_FP32, comm, NULL);
    case HC_COLL_ALLTOALL:
        return HcclAlltoAll(sb, count, HCCL_DATA_TYPE_FP32, rb, count, HCCL_DATA_TYPE_FP32, comm,
                            NULL);
    default:
        return HCCL_E_PARA;
    }
}

/* What the communicator's table runs for this call (the arguments an
 * operation would see: staging, single-copy reads, oversubscription). */
static const hc_algo_t *would_run(HcclComm comm, hc_coll_t coll, uint64_t count)
{
    hc_coll_args_t a = {.coll = coll, .count = count, .esize = 4,
                        .dtype = HCCL_DATA_TYPE_FP32, .op = HCCL_REDUCE_SUM};
    hc_comm_t *c;
    const hc_algo_t *al = hc_comm_get(comm, "hcomm-tune", &c) == HCCL_SUCCESS
                              ? hc_comm_select(c, &a)
                              : NULL;
    if (al == NULL)
        MPI_Abort(MPI_COMM_WORLD, 4);
    return al;
}


static void fmt_size(uint64_t v, char *buf, size_t n)
{
    if (v && v % (1ull << 20) == 0)
        snprintf(buf, n, "%lluMB", (unsigned long long)(v >> 20));
    else if (v && v % 1024 == 0)
        snprintf(buf, n, "%lluKB", (unsigned long long)(v >> 10));
    else
        snprintf(buf, n, "%llu", (unsigned long long)v);
}

/* The rules of one collective for a tuning file: per size the winner;
 * consecutive sizes with the same winner merge into one rule "coll LO-HI
 * N ALGO [nt] [when=registered]", its boundaries at the sizes where the
 * winner changed, the last one open ("LO-*"). */
typedef struct {
    FILE *out;
    const char *coll;
    int nranks, reg;
    char prev[64]; /* the winner since prev_lo ("" none yet) */
    int prev_nt;
    uint64_t prev_lo;
} rules_t;

static void rules_line(rules_t *r, const char *hi)
{
    char lo[24];
    fmt_size(r->prev_lo, lo, sizeof(lo));
    fprintf(r->out, "%-13s %s-%s %d %s%s%s\n", r->coll, r->prev_lo ? lo : "0", hi, r->nranks,
            r->prev, r->prev_nt ? " nt" : "", r->reg ? " when=registered" : "");
}

static void rules_add(rules_t *r, uint64_t bytes, const char *algo, int nt)
{
    if (r->out == NULL)
        return;
    if (r->prev[0] && (strcasecmp(r->prev, algo) != 0 || r->prev_nt != nt)) {
        char hi[24];
        fmt_size(bytes, hi, sizeof(hi));
        rules_line(r, hi);
        r->prev_lo = bytes;
    }
    snprintf(r->prev, sizeof(r->prev), "%s", algo);
    r->prev_nt = nt;
}

static void rules_end(rules_t *r)
{
    if (r->out && r->prev[0])
        rules_line(r, "*");
}

static void usage(FILE *f)
{
    if (rank == 0)
        fprintf(f,
                "usage: mpirun -np N hcomm-tune [-C COLL|all] [-b MIN] [-e MAX] [-f FACTOR]\n"
                "                  [-n ITERS] [-w WARMUP] [-a ALGO,ALGO,...] [-A | -H] [-o FILE]\n"
                "Times the candidate algorithms of a collective side by side, alternating,\n"
                "from MIN [1K] to MAX [64M] bytes in steps of FACTOR [4], ITERS [10] calls\n"
                "after WARMUP [2] (median of the slowest rank), and prints the fastest.\n"
                "  COLL: allreduce (default), broadcast, reduce, reducescatter, allgather,\n"
                "        alltoall, all. Sizes: bytes of one rank's count (K, M, G).\n"
                "  -a: candidates (default: every algorithm of the collective, and DIRECT+nt;\n"
                "      with -A also CMA+nt); AUTO = the default choice, DET = the default\n"
                "      choice in deterministic mode, ALGO+nt = ALGO writing RECV with\n"
                "      non-temporal stores\n"
                "  -A: buffers from HcclMemAlloc, registered with each candidate's\n"
                "      communicator (HcclCommRegister); the rules get when=registered\n"
                "  -H: buffers in transparent huge pages (2 MiB aligned, MADV_HUGEPAGE),\n"
                "      for a program whose buffers are: the fastest algorithm can differ\n"
                "  -o: write the winners as an HCCL_TUNE_FILE (appends per collective)\n"
                "or:    hcomm-tune --model [machine options] [-C COLL|all] [-b MIN] [-e MAX]\n"
                "                  [-f FACTOR] [-o FILE]\n"
                "  the same from hcomm-sim's model of a machine (no MPI; the machine options\n"
                "  of hcomm-sim: --machine, --nodes, --ranks-per-node, --racks, --nic-bw, ...)\n");
}

/* hcomm-tune --model [machine options] [-C COLL|all] [-b MIN] [-e MAX]
 * [-f FACTOR] [-o FILE]: the same table and rules, from hcomm-sim's model
 * of a machine instead of measurements (no MPI; docs/SCALE.md). */
static int model_main(int argc, char **argv)
{
    hs_machine_t m;
    const char *topo = NULL, *cname = "allreduce", *outfile = NULL;
    char err[512];
    if (hs_machine_args(&argc, argv, &m, &topo, err, sizeof(err)) != 0) {
        fprintf(stderr, "hcomm-tune --model: %s\n", err);
        return 2;
    }
    uint64_t minb = 1024, maxb = 64ull << 20;
    double factor = 4;
    int opt;
    optind = 1;
    while ((opt = getopt(argc, argv, "C:b:e:f:o:h")) != -1) {
        switch (opt) {
        case 'C': cname = optarg; break;
        case 'b': if (hs_parse_size(optarg, &minb)) goto bad; break;
        case 'e': if (hs_parse_size(optarg, &maxb)) goto bad; break;
        case 'f': factor = atof(optarg); if (!(factor > 1)) goto bad; break;
        case 'o': outfile = optarg; break;
        default: goto bad;
        }
    }
    if (optind < argc)
        goto bad;
    if (minb < 4)
        minb = 4;
    hs_sim_t *sim = hs_create(&m, topo, err, sizeof(err));
    if (sim == NULL) {
        fprintf(stderr, "hcomm-tune --model: %s\n", err);
        return 1;
    }
    const int n = (int)hs_nranks(sim);
    FILE *out = NULL;
    if (outfile) {
        out = fopen(outfile, "w");
        if (out == NULL) {
            perror(outfile);
            hs_destroy(sim);
            return 1;
        }
        fprintf(out, "# written by hcomm-tune --model on %d ranks of machine %s (%s), "
                     "float32; hcomm-sim's model (docs/SCALE.md)\n",
                n, m.name, topo ? topo : "shorthand");
    }
    int rc = 0, found = 0;
    for (size_t ci = 0; ci < sizeof(colls) / sizeof(colls[0]); ci++) {
        if (strcasecmp(cname, "all") != 0 && strcasecmp(cname, colls[ci].name) != 0)
            continue;
        found = 1;
        const hc_coll_t coll = colls[ci].coll;
        int na;
        const hc_algo_t *tab = hc_coll_algos(coll, &na);
        printf("# %s on %d ranks, modelled (machine %s; us, slowest rank); '-': cannot run\n",
               colls[ci].name, n, m.name);
        printf("%12s", "bytes");
        for (int k = 0; k < na; k++)
            printf(" %12s", tab[k].name);
        printf("  best\n");
        rules_t rules = {.out = out, .coll = colls[ci].name, .nranks = n};
        for (uint64_t bytes = minb;; bytes = (uint64_t)((double)bytes * factor)) {
            if (bytes > maxb)
                bytes = maxb;
            int best = -1;
            double bt = 0;
            printf("%12llu", (unsigned long long)bytes);
            for (int k = 0; k < na; k++) {
                hs_result_t r;
                int e = hs_run(sim, coll, bytes, tab[k].name, 0, NULL, &r, err, sizeof(err));
                if (e == HCCL_E_NOT_SUPPORT) {
                    printf(" %12s", "-");
                    continue;
                }
                if (e != HCCL_SUCCESS) {
                    fprintf(stderr, "hcomm-tune --model: %s %s %llu bytes: %s\n",
                            colls[ci].name, tab[k].name, (unsigned long long)bytes, err);
                    printf(" %12s", "?");
                    rc = 1;
                    continue;
                }
                printf(" %12.1f", r.time * 1e6);
                if (best < 0 || r.time < bt) {
                    best = k;
                    bt = r.time;
                }
            }
            printf("  %s\n", best >= 0 ? tab[best].name : "-");
            fflush(stdout);
            if (best >= 0)
                rules_add(&rules, bytes, tab[best].name, 0);
            if (bytes >= maxb)
                break;
        }
        rules_end(&rules);
    }
    if (out)
        fclose(out);
    hs_destroy(sim);
    if (!found) {
        fprintf(stderr, "hcomm-tune --model: unknown collective '%s'\n", cname);
        return 2;
    }
    return rc;
bad:
    fprintf(stderr, "usage: hcomm-tune --model [machine options of hcomm-sim] [-C COLL|all] "
                    "[-b MIN] [-e MAX] [-f FACTOR] [-o FILE]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--model") == 0) {
        argv[1] = argv[0];
        return model_main(argc - 1, argv + 1);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *cname = "allreduce", *alist = NULL, *outfile = NULL;
    uint64_t minb = 1024, maxb = 64ull << 20;
    double factor = 4;
    int iters = 10, warm = 2, reg = 0, thp = 0, opt;
    /* --help is -h */
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0)
            argv[i][2] = '\0', argv[i][1] = 'h';
    while ((opt = getopt(argc, argv, "C:b:e:f:n:w:a:AHo:h")) != -1) {
        switch (opt) {
        case 'C': cname = optarg; break;
        case 'b': if (hs_parse_size(optarg, &minb)) goto bad; break;
        case 'e': if (hs_parse_size(optarg, &maxb)) goto bad; break;
        case 'f': factor = atof(optarg); if (factor <= 1) goto bad; break;
        case 'n': iters = atoi(optarg); if (iters < 1) goto bad; break;
        case 'w': warm = atoi(optarg); if (warm < 0) goto bad; break;
        case 'a': alist = optarg; break;
        case 'A': reg = 1; break;
        case 'H': thp = 1; break;
        case 'o': outfile = optarg; break;
        case 'h': usage(stdout); MPI_Finalize(); return 0;
        default: goto bad;
        }
    }
    if (minb < 4)
        minb = 4;
    if (reg && thp) {
        if (rank == 0)
            fprintf(stderr, "hcomm-tune: -A and -H: HcclMemAlloc chooses the pages of -A's "
                            "buffers itself\n");
        goto bad;
    }
    FILE *out = NULL;
    if (outfile && rank == 0) {
        out = fopen(outfile, "w");
        if (out == NULL) {
            perror(outfile);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        fprintf(out, "# written by hcomm-tune on %d ranks (median of %d rounds, float32%s)\n",
                nranks, iters,
                reg ? ", registered buffers" : thp ? ", buffers in transparent huge pages" : "");
    }
    for (size_t ci = 0; ci < sizeof(colls) / sizeof(colls[0]); ci++) {
        if (strcasecmp(cname, "all") != 0 && strcasecmp(cname, colls[ci].name) != 0)
            continue;
        const hc_coll_t coll = colls[ci].coll;
        const char *names[MAXC];
        int nc = 0, na;
        const hc_algo_t *tab = hc_coll_algos(coll, &na);
        if (alist) {
            static char buf[512];
            snprintf(buf, sizeof(buf), "%s", alist);
            for (char *p = strtok(buf, ","); p && nc < MAXC; p = strtok(NULL, ","))
                names[nc++] = p;
        } else {
            for (int i = 0; i < na && nc < MAXC; i++)
                names[nc++] = tab[i].name;
            for (int i = 0; i < na && nc < MAXC; i++)
                if (strcmp(tab[i].name, "DIRECT") == 0 || (reg && strcmp(tab[i].name, "CMA") == 0))
                    names[nc++] = strcmp(tab[i].name, "CMA") == 0 ? "CMA+nt" : "DIRECT+nt";
        }
        HcclComm comm[MAXC];
        int special[MAXC]; /* AUTO: the default choice; DET: deterministic mode */
        char base[MAXC][64]; /* the algorithm without "+nt" */
        int nt[MAXC];
        for (int k = 0; k < nc; k++) {
            HcclCommConfig cfg;
            HcclCommConfigInit(&cfg);
            snprintf(base[k], sizeof(base[k]), "%s", names[k]);
            const size_t bl = strlen(base[k]);
            nt[k] = bl > 3 && strcasecmp(base[k] + bl - 3, "+nt") == 0;
            if (nt[k])
                base[k][bl - 3] = '\0';
            special[k] = strcasecmp(base[k], "AUTO") == 0 || strcasecmp(base[k], "DET") == 0;
            if (special[k] && nt[k]) {
                if (rank == 0)
                    fprintf(stderr, "hcomm-tune: '%s': +nt needs an algorithm\n", names[k]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            if (strcasecmp(base[k], "DET") == 0)
                cfg.hcclDeterministic = 1;
            if (!special[k])
                snprintf(cfg.hcclAlgo, sizeof(cfg.hcclAlgo), "%s=level0:NA;level1:%s",
                         colls[ci].name, base[k]);
            if (HcclCommInitMpiConfig(MPI_COMM_WORLD, &cfg, &comm[k]) != HCCL_SUCCESS) {
                if (rank == 0)
                    fprintf(stderr, "hcomm-tune: %s: cannot force '%s'\n", colls[ci].name,
                            names[k]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            hc_comm_t *c;
            if (nt[k] && hc_comm_get(comm[k], "hcomm-tune", &c) == HCCL_SUCCESS)
                hc_tune_force_nt(c->tune, coll);
        }
        const int blocks = coll == HC_COLL_ALLTOALL || coll == HC_COLL_REDUCESCATTER ||
                           coll == HC_COLL_ALLGATHER;
        const uint64_t maxcount = maxb / 4;
        const size_t big = (size_t)(maxcount * (blocks ? (uint64_t)nranks : 1) * 4);
        void *sb = NULL, *rb = NULL, *hs[MAXC], *hr[MAXC];
        if (reg) {
            if (HcclMemAlloc(&sb, big + 64) != HCCL_SUCCESS ||
                HcclMemAlloc(&rb, big + 64) != HCCL_SUCCESS)
                MPI_Abort(MPI_COMM_WORLD, 3);
            for (int k = 0; k < nc; k++)
                if (HcclCommRegister(comm[k], sb, big + 64, &hs[k], 0) != HCCL_SUCCESS ||
                    HcclCommRegister(comm[k], rb, big + 64, &hr[k], 0) != HCCL_SUCCESS)
                    MPI_Abort(MPI_COMM_WORLD, 3);
        } else if (thp) {
            const int e1 = hc_alloc_huge(&sb, big + 64);
            const int e2 = e1 < 0 ? -1 : hc_alloc_huge(&rb, big + 64);
            if (e1 < 0 || e2 < 0)
                MPI_Abort(MPI_COMM_WORLD, 3);
            if ((e1 || e2) && rank == 0)
                fprintf(stderr, "hcomm-tune: -H: madvise(MADV_HUGEPAGE): %s: ordinary pages\n",
                        strerror(e1 ? e1 : e2));
        } else {
            sb = malloc(big + 64);
            rb = malloc(big + 64);
            if (sb == NULL || rb == NULL)
                MPI_Abort(MPI_COMM_WORLD, 3);
        }
        memset(sb, 0, big + 64);
        memset(rb, 0, big + 64);
        double *t = malloc(sizeof(double) * (size_t)iters * MAXC);
        if (rank == 0) {
            char hp[96] = "";
            if (thp)
                snprintf(hp, sizeof(hp), ", buffers advised huge (%.1f of %.1f MiB in huge pages)",
                         (double)(hc_huge_bytes(sb, big + 64) + hc_huge_bytes(rb, big + 64)) /
                             1048576.0,
                         2.0 * (double)(big + 64) / 1048576.0);
            printf("# %s on %d ranks, median of %d rounds (us, slowest rank)%s%s; '-': cannot "
                   "run\n",
                   colls[ci].name, nranks, iters, reg ? ", registered buffers" : "", hp);
            printf("%12s", "bytes");
            for (int k = 0; k < nc; k++)
                printf(" %12s", names[k]);
            printf("  best\n");
        }
        rules_t rules = {.out = out, .coll = colls[ci].name, .nranks = nranks, .reg = reg};
        for (uint64_t bytes = minb;; bytes = (uint64_t)((double)bytes * factor)) {
            if (bytes > maxb)
                bytes = maxb;
            const uint64_t count = bytes / 4;
            int ok[MAXC];
            for (int k = 0; k < nc; k++) {
                run(coll, comm[k], sb, rb, count); /* sets up shared memory etc. */
                const hc_algo_t *a = would_run(comm[k], coll, count);
                ok[k] = special[k] || strcasecmp(a->name, base[k]) == 0 ||
                        (a->alias && strcasecmp(a->alias, base[k]) == 0);
            }
            for (int it = -warm; it < iters; it++)
                for (int j = 0; j < nc; j++) {
                    const int k = (j + (it < 0 ? 0 : it)) % nc;
                    if (!ok[k])
                        continue;
                    MPI_Barrier(MPI_COMM_WORLD);
                    double t0 = MPI_Wtime();
                    if (run(coll, comm[k], sb, rb, count) != HCCL_SUCCESS)
                        MPI_Abort(MPI_COMM_WORLD, 4);
                    double dt = MPI_Wtime() - t0, mx;
                    MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                    if (it >= 0)
                        t[k * iters + it] = mx;
                }
            if (rank == 0) {
                int best = -1;
                double med[MAXC];
                printf("%12llu", (unsigned long long)bytes);
                for (int k = 0; k < nc; k++) {
                    if (!ok[k]) {
                        printf(" %12s", "-");
                        continue;
                    }
                    qsort(&t[k * iters], (size_t)iters, sizeof(double), hc_cmp_double);
                    med[k] = t[k * iters + iters / 2];
                    printf(" %12.1f", med[k] * 1e6);
                    if (best < 0 || med[k] < med[best])
                        best = k;
                }
                printf("  %s\n", best >= 0 ? names[best] : "-");
                fflush(stdout);
                if (best >= 0 && !special[best])
                    rules_add(&rules, bytes, base[best], nt[best]);
            }
            if (bytes >= maxb)
                break;
        }
        rules_end(&rules);
        for (int k = 0; k < nc; k++) {
            if (reg && (HcclCommDeregister(comm[k], hs[k]) != HCCL_SUCCESS ||
                        HcclCommDeregister(comm[k], hr[k]) != HCCL_SUCCESS))
                MPI_Abort(MPI_COMM_WORLD, 3);
            HcclCommDestroy(comm[k]);
        }
        if (reg) {
            HcclMemFree(sb);
            HcclMemFree(rb);
        } else {
            free(sb);
            free(rb);
        }
        free(t);
    }
    if (out)
        fclose(out);
    MPI_Finalize();
    return 0;
bad:
    usage(stderr);
    MPI_Finalize();
    return 2;
}
