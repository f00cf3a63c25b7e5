/*
 * tools/hcomm-sim.c - time hcomm's real schedules on a model of a machine
 * (docs/SCALE.md; the model: tools/hcomm-sim.h). No MPI, no network: one
 * process builds every rank's schedule and replays them (one period of
 * ranks when a rotation of the ranks is a symmetry: hs_set_every_rank).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <hccl/hccl.h>

#include "coll/algos.h"
#include "tools/hcomm-sim.h"

#define MAXA 16

static void usage(FILE *f)
{
    fprintf(f,
"usage: hcomm-sim [--machine NAME] [--nodes N] [--ranks-per-node R] [--racks K]\n"
"                 [--round-robin] [--topo FILE] [link options] [-C COLL] [-b MIN]\n"
"                 [-e MAX] [-f FACTOR] [-a ALGO,...|all|auto] [--blind] [-l]\n"
"                 [--max-steps N] [--every-rank] [--presets] [-h]\n"
"Times hcomm's schedules (built by the library's own builders for every rank)\n"
"on a model of a machine, and prints per size each algorithm's time, what the\n"
"built-in selection table (or HCCL_TUNE_FILE) chooses, and the fastest.\n"
"\n"
"Machine:\n"
"  --machine NAME       a preset (default fattree); --presets lists them with\n"
"                       their sources\n"
"  --nodes N --ranks-per-node R --racks K\n"
"                       the shape (replaces the preset's); ranks contiguous per\n"
"                       node, nodes contiguous per rack\n"
"  --round-robin        rank i on node i %% N instead (a job placed by slot)\n"
"  --topo FILE          placement from a topology file (HCCL_TOPO_FILE format,\n"
"                       every rank placed; default: $HCCL_TOPO_FILE if set and no\n"
"                       shape is given); the links still come from the options\n"
"Links (BW: 100Gb/s, 12.5GB/s, 300mbit, or bytes/s; TIME: 2us, 1ms, or s):\n"
"  --intra-bw BW --intra-lat TIME   a rank's port inside its node (NVLink, shm)\n"
"  --nic-bw BW --nic-lat TIME       a node's NIC, shared by its ranks\n"
"  --uplink-bw BW                   a rack's uplink to the spine, and downlink\n"
"                                   (0, or at least its nodes' NICs together:\n"
"                                   never the bottleneck, left out)\n"
"  --spine-lat TIME                 latency added between racks\n"
"  --reduce-bw BW --copy-bw BW      a rank's reductions and copies\n"
"  --cpu-bw BW --cpu-msg TIME       the CPUs that carry every message between\n"
"                                   nodes, machine-wide: BW of such traffic in\n"
"                                   all, TIME of the machine a message (0: no\n"
"                                   CPU term; the emu preset has one)\n"
"Collective:\n"
"  -C COLL    allreduce (default), broadcast, reduce, reducescatter, allgather,\n"
"             alltoall. Sizes are bytes of one rank's count (float32 sum,\n"
"             root 0), as hcomm-perf's and the tuning rules'.\n"
"  -b MIN -e MAX -f FACTOR   sizes MIN, MIN*FACTOR, ... MAX (default 64K, 64M, 4)\n"
"  -a LIST    algorithms (default all: every algorithm of the collective);\n"
"             auto = only the selection table's choice\n"
"  --blind    a topology-blind library: a flat view (no nodes, racks or groups,\n"
"             the ring in rank order); the links are those of the machine\n"
"Output:\n"
"  default    one line per size: each algorithm's time in us ('-': cannot run\n"
"             here), the table's choice, the fastest and its busbw (GB/s)\n"
"  -l         one line per size and algorithm: coll ranks bytes algo time_us\n"
"             algbw_GBs busbw_GBs steps messages build_s run_s (table: the\n"
"             row of the table's choice)\n"
"  --max-steps N   refuse runs of more steps (of the ranks replayed; default\n"
"             %llu, about %d bytes each)\n"
"  --every-rank    replay every rank; by default, when rotating the ranks by k\n"
"             is a symmetry of the machine and of the schedules as built, only\n"
"             ranks 0..k-1 are replayed (the same times, steps and messages)\n",
            (unsigned long long)HS_MAX_STEPS_DEFAULT, HS_STEP_BYTES);
}

static const struct {
    const char *name;
    hc_coll_t coll;
} colls[] = {
    {"allreduce", HC_COLL_ALLREDUCE}, {"broadcast", HC_COLL_BROADCAST},
    {"bcast", HC_COLL_BROADCAST},     {"reduce", HC_COLL_REDUCE},
    {"reducescatter", HC_COLL_REDUCESCATTER}, {"allgather", HC_COLL_ALLGATHER},
    {"alltoall", HC_COLL_ALLTOALL},
};

enum { O_BLIND = 256, O_MAXSTEPS, O_PRESETS, O_EVERY };

static int bad(const char *opt, const char *v)
{
    fprintf(stderr, "hcomm-sim: bad value '%s' for %s (--help)\n", v, opt);
    return 2;
}

/* What the command line asks for, and the simulator it runs on. */
typedef struct {
    const char *topo, *cname, *alist;
    uint64_t minb, maxb, max_steps;
    double factor;
    int blind, longfmt, every;
    hs_machine_t m;
    hc_coll_t coll;
    const char *names[MAXA]; /* the candidates */
    int na;
    hs_sim_t *s;
    uint32_t n;
    double bf;               /* busbw / algbw */
    char err[512];
} ctx_t;

/* The command line into c; -1 to go on, else the exit status. */
static int parse_args(ctx_t *c, int argc, char **argv)
{
    static const struct option lo[] = {
        {"blind", 0, 0, O_BLIND}, {"max-steps", 1, 0, O_MAXSTEPS}, {"presets", 0, 0, O_PRESETS},
        {"every-rank", 0, 0, O_EVERY},
        {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    int opt;
    if (hs_machine_args(&argc, argv, &c->m, &c->topo, c->err, sizeof(c->err)) != 0) {
        fprintf(stderr, "hcomm-sim: %s (--help)\n", c->err);
        return 2;
    }
    while ((opt = getopt_long(argc, argv, "C:b:e:f:a:lh", lo, NULL)) != -1) {
        switch (opt) {
        case O_BLIND: c->blind = 1; break;
        case O_EVERY: c->every = 1; break;
        case O_MAXSTEPS: {
            char *end;
            c->max_steps = strtoull(optarg, &end, 10);
            if (*end || c->max_steps == 0)
                return bad("--max-steps", optarg);
            break;
        }
        case O_PRESETS:
            hs_presets_print(stdout);
            return 0;
        case 'C': c->cname = optarg; break;
        case 'b': if (hs_parse_size(optarg, &c->minb)) return bad("-b", optarg); break;
        case 'e': if (hs_parse_size(optarg, &c->maxb)) return bad("-e", optarg); break;
        case 'f':
            c->factor = atof(optarg);
            if (!(c->factor > 1))
                return bad("-f", optarg);
            break;
        case 'a': c->alist = optarg; break;
        case 'l': c->longfmt = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hcomm-sim: unexpected argument '%s' (--help)\n", argv[optind]);
        return 2;
    }
    c->coll = HC_COLL_LAST;
    for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++)
        if (strcasecmp(c->cname, colls[i].name) == 0)
            c->coll = colls[i].coll;
    if (c->coll == HC_COLL_LAST)
        return bad("-C", c->cname);
    if (c->maxb < c->minb)
        c->maxb = c->minb;
    return -1;
}

/* The candidates of -a into c->names; 0, or 2 for an unknown algorithm. */
static int candidates(ctx_t *c)
{
    int ntab;
    const hc_algo_t *tab = hc_coll_algos(c->coll, &ntab);
    static char abuf[512];
    if (strcasecmp(c->alist, "all") == 0) {
        for (int i = 0; i < ntab && c->na < MAXA; i++)
            c->names[c->na++] = tab[i].name;
    } else if (strcasecmp(c->alist, "auto") != 0) {
        snprintf(abuf, sizeof(abuf), "%s", c->alist);
        for (char *p = strtok(abuf, ","); p && c->na < MAXA; p = strtok(NULL, ",")) {
            const hc_algo_t *a = hc_coll_find_algo(c->coll, p);
            if (a == NULL) {
                fprintf(stderr, "hcomm-sim: unknown %s algorithm '%s' (known:", c->cname, p);
                for (int i = 0; i < ntab; i++)
                    fprintf(stderr, " %s", tab[i].name);
                fprintf(stderr, ")\n");
                return 2;
            }
            c->names[c->na++] = a->name;
        }
    }
    return 0;
}

static void print_header(const ctx_t *c)
{
    const hs_machine_t *m = &c->m;
    const hc_topo_view_t *v = hs_view(c->s);
    if (c->topo)
        printf("# hcomm-sim: %s on %u ranks placed by %s (%u nodes), links of %s\n", c->cname,
               c->n, c->topo, v->nnodes ? v->nnodes : 1, m->name);
    else
        printf("# hcomm-sim: %s on %u ranks = %u node(s) x %u, %u rack(s)%s, machine %s\n",
               c->cname, c->n, m->nodes, m->rpn, m->racks, m->round_robin ? ", round robin" : "",
               m->name);
    printf("# intra %.4g GB/s %.3g us; NIC %.4g Gb/s %.3g us; uplink %s%.4g Gb/s; spine +%.3g "
           "us; reduce %.4g GB/s; copy %.4g GB/s%s\n",
           m->intra.bw / 1e9, m->intra.lat * 1e6, m->nic.bw * 8 / 1e9, m->nic.lat * 1e6,
           m->uplink_bw > 0 ? "" : "unlimited ", m->uplink_bw * 8 / 1e9, m->spine_lat * 1e6,
           m->reduce_bw / 1e9, m->copy_bw / 1e9, c->blind ? "; topology-blind view" : "");
    if (m->cpu_bw > 0)
        printf("# CPU link (machine-wide, between nodes): %.4g MB/s, %.3g us a message\n",
               m->cpu_bw / 1e6, m->cpu_msg * 1e6);
    if (c->longfmt)
        printf("# coll ranks bytes algo time_us algbw_GBs busbw_GBs steps messages build_s "
               "run_s\n");
    else {
        printf("# time in us; '-': cannot run here; table: the selection table's choice\n");
        printf("%12s", "bytes");
        for (int k = 0; k < c->na; k++)
            printf(" %12s", c->names[k]);
        printf(" %18s %18s %9s\n", "table", "best", "busbw");
    }
}

/* One -l row: algo at bytes (pre: "table:" for the table's choice). */
static void print_row(const ctx_t *c, uint64_t bytes, const char *pre, const char *algo,
                      const hs_result_t *r)
{
    printf("%s %u %llu %s%s %.3f %.4f %.4f %llu %llu %.3f %.3f\n", c->cname, c->n,
           (unsigned long long)bytes, pre, algo, r->time * 1e6,
           r->time > 0 ? (double)bytes / r->time / 1e9 : 0,
           r->time > 0 ? (double)bytes / r->time / 1e9 * c->bf : 0,
           (unsigned long long)r->steps, (unsigned long long)r->messages, r->build_s,
           r->run_s);
}

/* The candidates at bytes: their times printed, the fastest into *best
 * (-1: none) and *best_t; 0, or 1 when one failed. */
static int run_candidates(ctx_t *c, uint64_t bytes, int *best, double *best_t)
{
    int rc = 0;
    for (int k = 0; k < c->na; k++) {
        hs_result_t r;
        int e = hs_run(c->s, c->coll, bytes, c->names[k], c->blind, NULL, &r, c->err,
                       sizeof(c->err));
        if (e == HCCL_E_NOT_SUPPORT) {
            if (!c->longfmt)
                printf(" %12s", "-");
            continue;
        }
        if (e != HCCL_SUCCESS) {
            fprintf(stderr, "hcomm-sim: %s %llu bytes: %s\n", c->names[k],
                    (unsigned long long)bytes, c->err);
            rc = 1;
            if (!c->longfmt)
                printf(" %12s", "?");
            continue;
        }
        if (*best < 0 || r.time < *best_t) {
            *best = k;
            *best_t = r.time;
        }
        if (c->longfmt)
            print_row(c, bytes, "", c->names[k], &r);
        else
            printf(" %12.1f", r.time * 1e6);
    }
    return rc;
}

/* One size: the candidates, then the table's choice and the fastest;
 * 0, or 1 when a run failed. */
static int run_size(ctx_t *c, uint64_t bytes)
{
    double best_t = 0;
    int best = -1;
    if (!c->longfmt)
        printf("%12llu", (unsigned long long)bytes);
    int rc = run_candidates(c, bytes, &best, &best_t);
    /* the table's choice */
    hs_result_t r;
    const hc_algo_t *ch = NULL;
    int e = hs_run(c->s, c->coll, bytes, NULL, c->blind, &ch, &r, c->err, sizeof(c->err));
    if (e != HCCL_SUCCESS) {
        fprintf(stderr, "hcomm-sim: the table's choice at %llu bytes: %s\n",
                (unsigned long long)bytes, c->err);
        rc = 1;
    }
    if (c->longfmt) {
        if (e == HCCL_SUCCESS)
            print_row(c, bytes, "table:", ch->name, &r);
    } else {
        char tb[64], bb[64];
        if (e == HCCL_SUCCESS)
            snprintf(tb, sizeof(tb), "%s %.1f", ch->name, r.time * 1e6);
        else
            snprintf(tb, sizeof(tb), "?");
        if (best >= 0)
            snprintf(bb, sizeof(bb), "%s", c->names[best]);
        else if (e == HCCL_SUCCESS) {
            snprintf(bb, sizeof(bb), "%s", ch->name);
            best_t = r.time;
        } else
            snprintf(bb, sizeof(bb), "-");
        printf(" %18s %18s %9.3f\n", tb, bb,
               best_t > 0 ? (double)bytes / best_t / 1e9 * c->bf : 0.0);
    }
    fflush(stdout);
    return rc;
}

int main(int argc, char **argv)
{
    ctx_t c = {.cname = "allreduce", .alist = "all", .minb = 64 << 10, .maxb = 64 << 20,
               .max_steps = HS_MAX_STEPS_DEFAULT, .factor = 4};
    int rc = parse_args(&c, argc, argv);
    if (rc >= 0)
        return rc;
    if (candidates(&c) != 0)
        return 2;
    c.s = hs_create(&c.m, c.topo, c.err, sizeof(c.err));
    if (c.s == NULL) {
        fprintf(stderr, "hcomm-sim: %s\n", c.err);
        return 1;
    }
    hs_set_max_steps(c.s, c.max_steps);
    hs_set_every_rank(c.s, c.every);
    c.n = hs_nranks(c.s);
    print_header(&c);
    c.bf = hs_busbw_factor(c.coll, c.n);
    rc = 0;
    for (uint64_t bytes = c.minb;; bytes = (uint64_t)((double)bytes * c.factor)) {
        if (bytes > c.maxb)
            bytes = c.maxb;
        rc |= run_size(&c, bytes);
        if (bytes >= c.maxb)
            break;
    }
    hs_destroy(c.s);
    return rc;
}
