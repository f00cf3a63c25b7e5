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

/* hcomm-tune --model's command line, and the simulator it runs on. */
typedef struct {
    hs_machine_t m;
    const char *topo, *cname, *outfile;
    uint64_t minb, maxb;
    double factor;
    hs_sim_t *sim;
    int n;
    FILE *out;
    char err[512];
} model_t;

/* --model's command line into mo; -1 to go on, else the exit status. */
static int model_args(model_t *mo, int argc, char **argv)
{
    int opt;
    if (hs_machine_args(&argc, argv, &mo->m, &mo->topo, mo->err, sizeof(mo->err)) != 0) {
        fprintf(stderr, "hcomm-tune --model: %s\n", mo->err);
        return 2;
    }
    optind = 1;
    while ((opt = getopt(argc, argv, "C:b:e:f:o:h")) != -1) {
        switch (opt) {
        case 'C': mo->cname = optarg; break;
        case 'b': if (hs_parse_size(optarg, &mo->minb)) goto bad; break;
        case 'e': if (hs_parse_size(optarg, &mo->maxb)) goto bad; break;
        case 'f': mo->factor = atof(optarg); if (!(mo->factor > 1)) goto bad; break;
        case 'o': mo->outfile = optarg; break;
        default: goto bad;
        }
    }
    if (optind < argc)
        goto bad;
    if (mo->minb < 4)
        mo->minb = 4;
    return -1;
bad:
    fprintf(stderr, "usage: hcomm-tune --model [machine options of hcomm-sim] [-C COLL|all] "
                    "[-b MIN] [-e MAX] [-f FACTOR] [-o FILE]\n");
    return 2;
}

/* The modelled table of collective ci (colls[ci]) and its rules; 0, or
 * 1 when a run failed. */
static int model_coll(model_t *mo, size_t ci)
{
    const hc_coll_t coll = colls[ci].coll;
    int na, rc = 0;
    const hc_algo_t *tab = hc_coll_algos(coll, &na);
    printf("# %s on %d ranks, modelled (machine %s; us, slowest rank); '-': cannot run\n",
           colls[ci].name, mo->n, mo->m.name);
    printf("%12s", "bytes");
    for (int k = 0; k < na; k++)
        printf(" %12s", tab[k].name);
    printf("  best\n");
    rules_t rules = {.out = mo->out, .coll = colls[ci].name, .nranks = mo->n};
    for (uint64_t bytes = mo->minb;; bytes = (uint64_t)((double)bytes * mo->factor)) {
        if (bytes > mo->maxb)
            bytes = mo->maxb;
        int best = -1;
        double bt = 0;
        printf("%12llu", (unsigned long long)bytes);
        for (int k = 0; k < na; k++) {
            hs_result_t r;
            int e = hs_run(mo->sim, coll, bytes, tab[k].name, 0, NULL, &r, mo->err,
                           sizeof(mo->err));
            if (e == HCCL_E_NOT_SUPPORT) {
                printf(" %12s", "-");
                continue;
            }
            if (e != HCCL_SUCCESS) {
                fprintf(stderr, "hcomm-tune --model: %s %s %llu bytes: %s\n",
                        colls[ci].name, tab[k].name, (unsigned long long)bytes, mo->err);
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
        if (bytes >= mo->maxb)
            break;
    }
    rules_end(&rules);
    return rc;
}

/* hcomm-tune --model [machine options] [-C COLL|all] [-b MIN] [-e MAX]
 * [-f FACTOR] [-o FILE]: the same table and rules, from hcomm-sim's model
 * of a machine instead of measurements (no MPI; docs/SCALE.md). */
static int model_main(int argc, char **argv)
{
    model_t mo = {.cname = "allreduce", .minb = 1024, .maxb = 64ull << 20, .factor = 4};
    int rc = model_args(&mo, argc, argv);
    if (rc >= 0)
        return rc;
    mo.sim = hs_create(&mo.m, mo.topo, mo.err, sizeof(mo.err));
    if (mo.sim == NULL) {
        fprintf(stderr, "hcomm-tune --model: %s\n", mo.err);
        return 1;
    }
    mo.n = (int)hs_nranks(mo.sim);
    if (mo.outfile) {
        mo.out = fopen(mo.outfile, "w");
        if (mo.out == NULL) {
            perror(mo.outfile);
            hs_destroy(mo.sim);
            return 1;
        }
        fprintf(mo.out, "# written by hcomm-tune --model on %d ranks of machine %s (%s), "
                        "float32; hcomm-sim's model (docs/SCALE.md)\n",
                mo.n, mo.m.name, mo.topo ? mo.topo : "shorthand");
    }
    int found = 0;
    rc = 0;
    for (size_t ci = 0; ci < sizeof(colls) / sizeof(colls[0]); ci++) {
        if (strcasecmp(mo.cname, "all") != 0 && strcasecmp(mo.cname, colls[ci].name) != 0)
            continue;
        found = 1;
        rc |= model_coll(&mo, ci);
    }
    if (mo.out)
        fclose(mo.out);
    hs_destroy(mo.sim);
    if (!found) {
        fprintf(stderr, "hcomm-tune --model: unknown collective '%s'\n", mo.cname);
        return 2;
    }
    return rc;
}

/* The command line of a measuring run. */
typedef struct {
    const char *cname, *alist, *outfile;
    uint64_t minb, maxb;
    double factor;
    int iters, warm, reg, thp;
    FILE *out; /* rank 0's -o file */
} opts_t;

/* One collective's candidates, each with its communicator, and the
 * buffers they share. */
typedef struct {
    hc_coll_t coll;
    const char *cname;
    const char *names[MAXC];
    int nc;
    HcclComm comm[MAXC];
    int special[MAXC]; /* AUTO: the default choice; DET: deterministic mode */
    char base[MAXC][64]; /* the algorithm without "+nt" */
    int nt[MAXC];
    size_t big;
    void *sb, *rb, *hs[MAXC], *hr[MAXC];
    double *t; /* [MAXC][iters]: each candidate's rounds */
} cands_t;

/* The command line into o; -1 to go on, else the exit status (MPI
 * finalized). */
static int parse_args(opts_t *o, int argc, char **argv)
{
    int opt;
    /* --help is -h */
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0)
            argv[i][2] = '\0', argv[i][1] = 'h';
    while ((opt = getopt(argc, argv, "C:b:e:f:n:w:a:AHo:h")) != -1) {
        switch (opt) {
        case 'C': o->cname = optarg; break;
        case 'b': if (hs_parse_size(optarg, &o->minb)) goto bad; break;
        case 'e': if (hs_parse_size(optarg, &o->maxb)) goto bad; break;
        case 'f': o->factor = atof(optarg); if (o->factor <= 1) goto bad; break;
        case 'n': o->iters = atoi(optarg); if (o->iters < 1) goto bad; break;
        case 'w': o->warm = atoi(optarg); if (o->warm < 0) goto bad; break;
        case 'a': o->alist = optarg; break;
        case 'A': o->reg = 1; break;
        case 'H': o->thp = 1; break;
        case 'o': o->outfile = optarg; break;
        case 'h': usage(stdout); MPI_Finalize(); return 0;
        default: goto bad;
        }
    }
    if (o->minb < 4)
        o->minb = 4;
    if (o->reg && o->thp) {
        if (rank == 0)
            fprintf(stderr, "hcomm-tune: -A and -H: HcclMemAlloc chooses the pages of -A's "
                            "buffers itself\n");
        goto bad;
    }
    return -1;
bad:
    usage(stderr);
    MPI_Finalize();
    return 2;
}

/* The candidates (-a, or every algorithm of the collective and DIRECT+nt,
 * with -A CMA+nt) into c->names. */
static void candidates(const opts_t *o, cands_t *c)
{
    int na;
    const hc_algo_t *tab = hc_coll_algos(c->coll, &na);
    if (o->alist) {
        static char buf[512];
        snprintf(buf, sizeof(buf), "%s", o->alist);
        for (char *p = strtok(buf, ","); p && c->nc < MAXC; p = strtok(NULL, ","))
            c->names[c->nc++] = p;
    } else {
        for (int i = 0; i < na && c->nc < MAXC; i++)
            c->names[c->nc++] = tab[i].name;
        for (int i = 0; i < na && c->nc < MAXC; i++)
            if (strcmp(tab[i].name, "DIRECT") == 0 ||
                (o->reg && strcmp(tab[i].name, "CMA") == 0))
                c->names[c->nc++] = strcmp(tab[i].name, "CMA") == 0 ? "CMA+nt" : "DIRECT+nt";
    }
}

/* Candidate k's communicator, its algorithm forced (none for AUTO and
 * DET), with nt for "ALGO+nt"; aborts the job when it cannot be made. */
static void make_comm(cands_t *c, int k)
{
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    snprintf(c->base[k], sizeof(c->base[k]), "%s", c->names[k]);
    const size_t bl = strlen(c->base[k]);
    c->nt[k] = bl > 3 && strcasecmp(c->base[k] + bl - 3, "+nt") == 0;
    if (c->nt[k])
        c->base[k][bl - 3] = '\0';
    c->special[k] = strcasecmp(c->base[k], "AUTO") == 0 || strcasecmp(c->base[k], "DET") == 0;
    if (c->special[k] && c->nt[k]) {
        if (rank == 0)
            fprintf(stderr, "hcomm-tune: '%s': +nt needs an algorithm\n", c->names[k]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (strcasecmp(c->base[k], "DET") == 0)
        cfg.hcclDeterministic = 1;
    if (!c->special[k])
        snprintf(cfg.hcclAlgo, sizeof(cfg.hcclAlgo), "%s=level0:NA;level1:%s", c->cname,
                 c->base[k]);
    if (HcclCommInitMpiConfig(MPI_COMM_WORLD, &cfg, &c->comm[k]) != HCCL_SUCCESS) {
        if (rank == 0)
            fprintf(stderr, "hcomm-tune: %s: cannot force '%s'\n", c->cname, c->names[k]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    hc_comm_t *hc;
    if (c->nt[k] && hc_comm_get(c->comm[k], "hcomm-tune", &hc) == HCCL_SUCCESS)
        hc_tune_force_nt(hc->tune, c->coll);
}

/* The buffers for MAX bytes: registered (-A), in huge pages (-H) or
 * malloc'd, zeroed; aborts the job when they cannot be had. */
static void alloc_bufs(const opts_t *o, cands_t *c)
{
    const int blocks = c->coll == HC_COLL_ALLTOALL || c->coll == HC_COLL_REDUCESCATTER ||
                       c->coll == HC_COLL_ALLGATHER;
    const uint64_t maxcount = o->maxb / 4;
    const size_t big = (size_t)(maxcount * (blocks ? (uint64_t)nranks : 1) * 4);
    c->big = big;
    if (o->reg) {
        if (HcclMemAlloc(&c->sb, big + 64) != HCCL_SUCCESS ||
            HcclMemAlloc(&c->rb, big + 64) != HCCL_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 3);
        for (int k = 0; k < c->nc; k++)
            if (HcclCommRegister(c->comm[k], c->sb, big + 64, &c->hs[k], 0) != HCCL_SUCCESS ||
                HcclCommRegister(c->comm[k], c->rb, big + 64, &c->hr[k], 0) != HCCL_SUCCESS)
                MPI_Abort(MPI_COMM_WORLD, 3);
    } else if (o->thp) {
        const int e1 = hc_alloc_huge(&c->sb, big + 64);
        const int e2 = e1 < 0 ? -1 : hc_alloc_huge(&c->rb, big + 64);
        if (e1 < 0 || e2 < 0)
            MPI_Abort(MPI_COMM_WORLD, 3);
        if ((e1 || e2) && rank == 0)
            fprintf(stderr, "hcomm-tune: -H: madvise(MADV_HUGEPAGE): %s: ordinary pages\n",
                    strerror(e1 ? e1 : e2));
    } else {
        c->sb = malloc(big + 64);
        c->rb = malloc(big + 64);
        if (c->sb == NULL || c->rb == NULL)
            MPI_Abort(MPI_COMM_WORLD, 3);
    }
    memset(c->sb, 0, big + 64);
    memset(c->rb, 0, big + 64);
}

/* Rank 0: the table's header. */
static void print_header(const opts_t *o, const cands_t *c)
{
    char hp[96] = "";
    if (o->thp)
        snprintf(hp, sizeof(hp), ", buffers advised huge (%.1f of %.1f MiB in huge pages)",
                 (double)(hc_huge_bytes(c->sb, c->big + 64) + hc_huge_bytes(c->rb, c->big + 64)) /
                     1048576.0,
                 2.0 * (double)(c->big + 64) / 1048576.0);
    printf("# %s on %d ranks, median of %d rounds (us, slowest rank)%s%s; '-': cannot "
           "run\n",
           c->cname, nranks, o->iters, o->reg ? ", registered buffers" : "", hp);
    printf("%12s", "bytes");
    for (int k = 0; k < c->nc; k++)
        printf(" %12s", c->names[k]);
    printf("  best\n");
}

/* One size: which candidates run it as themselves (ok), their rounds,
 * alternating with a rotating first one (c->t). */
static void time_size(const opts_t *o, cands_t *c, uint64_t count, int *ok)
{
    const int nc = c->nc, iters = o->iters;
    for (int k = 0; k < nc; k++) {
        run(c->coll, c->comm[k], c->sb, c->rb, count); /* sets up shared memory etc. */
        const hc_algo_t *a = would_run(c->comm[k], c->coll, count);
        ok[k] = c->special[k] || strcasecmp(a->name, c->base[k]) == 0 ||
                (a->alias && strcasecmp(a->alias, c->base[k]) == 0);
    }
    for (int it = -o->warm; it < iters; it++)
        for (int j = 0; j < nc; j++) {
            const int k = (j + (it < 0 ? 0 : it)) % nc;
            if (!ok[k])
                continue;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (run(c->coll, c->comm[k], c->sb, c->rb, count) != HCCL_SUCCESS)
                MPI_Abort(MPI_COMM_WORLD, 4);
            double dt = MPI_Wtime() - t0, mx;
            MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (it >= 0)
                c->t[k * iters + it] = mx;
        }
}

/* Rank 0: one size's row (the medians, the fastest) and its rule. */
static void report_size(const opts_t *o, cands_t *c, uint64_t bytes, const int *ok,
                        rules_t *rules)
{
    const int iters = o->iters;
    int best = -1;
    double med[MAXC];
    printf("%12llu", (unsigned long long)bytes);
    for (int k = 0; k < c->nc; k++) {
        if (!ok[k]) {
            printf(" %12s", "-");
            continue;
        }
        qsort(&c->t[k * iters], (size_t)iters, sizeof(double), hc_cmp_double);
        med[k] = c->t[k * iters + iters / 2];
        printf(" %12.1f", med[k] * 1e6);
        if (best < 0 || med[k] < med[best])
            best = k;
    }
    printf("  %s\n", best >= 0 ? c->names[best] : "-");
    fflush(stdout);
    if (best >= 0 && !c->special[best])
        rules_add(rules, bytes, c->base[best], c->nt[best]);
}

/* The candidates' communicators and the buffers, released. */
static void free_cands(const opts_t *o, cands_t *c)
{
    for (int k = 0; k < c->nc; k++) {
        if (o->reg && (HcclCommDeregister(c->comm[k], c->hs[k]) != HCCL_SUCCESS ||
                       HcclCommDeregister(c->comm[k], c->hr[k]) != HCCL_SUCCESS))
            MPI_Abort(MPI_COMM_WORLD, 3);
        HcclCommDestroy(c->comm[k]);
    }
    if (o->reg) {
        HcclMemFree(c->sb);
        HcclMemFree(c->rb);
    } else {
        free(c->sb);
        free(c->rb);
    }
    free(c->t);
}

/* Collective ci (colls[ci]): its candidates timed at every size, the
 * table printed and the rules written. */
static void tune_coll(const opts_t *o, size_t ci)
{
    cands_t c = {.coll = colls[ci].coll, .cname = colls[ci].name};
    candidates(o, &c);
    for (int k = 0; k < c.nc; k++)
        make_comm(&c, k);
    alloc_bufs(o, &c);
    c.t = malloc(sizeof(double) * (size_t)o->iters * MAXC);
    if (rank == 0)
        print_header(o, &c);
    rules_t rules = {.out = o->out, .coll = c.cname, .nranks = nranks, .reg = o->reg};
    for (uint64_t bytes = o->minb;; bytes = (uint64_t)((double)bytes * o->factor)) {
        if (bytes > o->maxb)
            bytes = o->maxb;
        int ok[MAXC];
        time_size(o, &c, bytes / 4, ok);
        if (rank == 0)
            report_size(o, &c, bytes, ok, &rules);
        if (bytes >= o->maxb)
            break;
    }
    rules_end(&rules);
    free_cands(o, &c);
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
    opts_t o = {.cname = "allreduce", .minb = 1024, .maxb = 64ull << 20, .factor = 4,
                .iters = 10, .warm = 2};
    const int rc = parse_args(&o, argc, argv);
    if (rc >= 0)
        return rc;
    if (o.outfile && rank == 0) {
        o.out = fopen(o.outfile, "w");
        if (o.out == NULL) {
            perror(o.outfile);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        fprintf(o.out, "# written by hcomm-tune on %d ranks (median of %d rounds, float32%s)\n",
                nranks, o.iters,
                o.reg ? ", registered buffers"
                      : o.thp ? ", buffers in transparent huge pages" : "");
    }
    for (size_t ci = 0; ci < sizeof(colls) / sizeof(colls[0]); ci++)
        if (strcasecmp(o.cname, "all") == 0 || strcasecmp(o.cname, colls[ci].name) == 0)
            tune_coll(&o, ci);
    if (o.out)
        fclose(o.out);
    MPI_Finalize();
    return 0;
}
