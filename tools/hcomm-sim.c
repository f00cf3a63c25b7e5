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

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"blind", 0, 0, O_BLIND}, {"max-steps", 1, 0, O_MAXSTEPS}, {"presets", 0, 0, O_PRESETS},
        {"every-rank", 0, 0, O_EVERY},
        {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    const char *topo = NULL, *cname = "allreduce", *alist = "all";
    uint64_t minb = 64 << 10, maxb = 64 << 20, max_steps = HS_MAX_STEPS_DEFAULT;
    double factor = 4;
    int blind = 0, longfmt = 0, every = 0, opt;
    hs_machine_t m;
    char err[512];
    if (hs_machine_args(&argc, argv, &m, &topo, err, sizeof(err)) != 0) {
        fprintf(stderr, "hcomm-sim: %s (--help)\n", err);
        return 2;
    }
    const int rr = m.round_robin;
    while ((opt = getopt_long(argc, argv, "C:b:e:f:a:lh", lo, NULL)) != -1) {
        switch (opt) {
        case O_BLIND: blind = 1; break;
        case O_EVERY: every = 1; break;
        case O_MAXSTEPS: {
            char *end;
            max_steps = strtoull(optarg, &end, 10);
            if (*end || max_steps == 0)
                return bad("--max-steps", optarg);
            break;
        }
        case O_PRESETS:
            hs_presets_print(stdout);
            return 0;
        case 'C': cname = optarg; break;
        case 'b': if (hs_parse_size(optarg, &minb)) return bad("-b", optarg); break;
        case 'e': if (hs_parse_size(optarg, &maxb)) return bad("-e", optarg); break;
        case 'f':
            factor = atof(optarg);
            if (!(factor > 1))
                return bad("-f", optarg);
            break;
        case 'a': alist = optarg; break;
        case 'l': longfmt = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hcomm-sim: unexpected argument '%s' (--help)\n", argv[optind]);
        return 2;
    }
    hc_coll_t coll = HC_COLL_LAST;
    for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++)
        if (strcasecmp(cname, colls[i].name) == 0)
            coll = colls[i].coll;
    if (coll == HC_COLL_LAST)
        return bad("-C", cname);
    if (maxb < minb)
        maxb = minb;
    /* the candidates */
    const char *names[MAXA];
    int na = 0, ntab;
    const hc_algo_t *tab = hc_coll_algos(coll, &ntab);
    static char abuf[512];
    if (strcasecmp(alist, "all") == 0) {
        for (int i = 0; i < ntab && na < MAXA; i++)
            names[na++] = tab[i].name;
    } else if (strcasecmp(alist, "auto") != 0) {
        snprintf(abuf, sizeof(abuf), "%s", alist);
        for (char *p = strtok(abuf, ","); p && na < MAXA; p = strtok(NULL, ",")) {
            const hc_algo_t *a = hc_coll_find_algo(coll, p);
            if (a == NULL) {
                fprintf(stderr, "hcomm-sim: unknown %s algorithm '%s' (known:", cname, p);
                for (int i = 0; i < ntab; i++)
                    fprintf(stderr, " %s", tab[i].name);
                fprintf(stderr, ")\n");
                return 2;
            }
            names[na++] = a->name;
        }
    }
    hs_sim_t *s = hs_create(&m, topo, err, sizeof(err));
    if (s == NULL) {
        fprintf(stderr, "hcomm-sim: %s\n", err);
        return 1;
    }
    hs_set_max_steps(s, max_steps);
    hs_set_every_rank(s, every);
    const uint32_t n = hs_nranks(s);
    const hc_topo_view_t *v = hs_view(s);
    if (topo)
        printf("# hcomm-sim: %s on %u ranks placed by %s (%u nodes), links of %s\n", cname, n,
               topo, v->nnodes ? v->nnodes : 1, m.name);
    else
        printf("# hcomm-sim: %s on %u ranks = %u node(s) x %u, %u rack(s)%s, machine %s\n",
               cname, n, m.nodes, m.rpn, m.racks, rr ? ", round robin" : "", m.name);
    printf("# intra %.4g GB/s %.3g us; NIC %.4g Gb/s %.3g us; uplink %s%.4g Gb/s; spine +%.3g "
           "us; reduce %.4g GB/s; copy %.4g GB/s%s\n",
           m.intra.bw / 1e9, m.intra.lat * 1e6, m.nic.bw * 8 / 1e9, m.nic.lat * 1e6,
           m.uplink_bw > 0 ? "" : "unlimited ", m.uplink_bw * 8 / 1e9, m.spine_lat * 1e6,
           m.reduce_bw / 1e9, m.copy_bw / 1e9, blind ? "; topology-blind view" : "");
    if (m.cpu_bw > 0)
        printf("# CPU link (machine-wide, between nodes): %.4g MB/s, %.3g us a message\n",
               m.cpu_bw / 1e6, m.cpu_msg * 1e6);
    if (longfmt)
        printf("# coll ranks bytes algo time_us algbw_GBs busbw_GBs steps messages build_s "
               "run_s\n");
    else {
        printf("# time in us; '-': cannot run here; table: the selection table's choice\n");
        printf("%12s", "bytes");
        for (int k = 0; k < na; k++)
            printf(" %12s", names[k]);
        printf(" %18s %18s %9s\n", "table", "best", "busbw");
    }
    const double bf = hs_busbw_factor(coll, n);
    int rc = 0;
    for (uint64_t bytes = minb;; bytes = (uint64_t)((double)bytes * factor)) {
        if (bytes > maxb)
            bytes = maxb;
        double best_t = 0;
        int best = -1;
        if (!longfmt)
            printf("%12llu", (unsigned long long)bytes);
        for (int k = 0; k < na; k++) {
            hs_result_t r;
            int e = hs_run(s, coll, bytes, names[k], blind, NULL, &r, err, sizeof(err));
            if (e == HCCL_E_NOT_SUPPORT) {
                if (!longfmt)
                    printf(" %12s", "-");
                continue;
            }
            if (e != HCCL_SUCCESS) {
                fprintf(stderr, "hcomm-sim: %s %llu bytes: %s\n", names[k],
                        (unsigned long long)bytes, err);
                rc = 1;
                if (!longfmt)
                    printf(" %12s", "?");
                continue;
            }
            if (best < 0 || r.time < best_t) {
                best = k;
                best_t = r.time;
            }
            if (longfmt)
                printf("%s %u %llu %s %.3f %.4f %.4f %llu %llu %.3f %.3f\n", cname, n,
                       (unsigned long long)bytes, names[k], r.time * 1e6,
                       r.time > 0 ? (double)bytes / r.time / 1e9 : 0,
                       r.time > 0 ? (double)bytes / r.time / 1e9 * bf : 0,
                       (unsigned long long)r.steps, (unsigned long long)r.messages, r.build_s,
                       r.run_s);
            else
                printf(" %12.1f", r.time * 1e6);
        }
        /* the table's choice */
        hs_result_t r;
        const hc_algo_t *ch = NULL;
        int e = hs_run(s, coll, bytes, NULL, blind, &ch, &r, err, sizeof(err));
        if (e != HCCL_SUCCESS) {
            fprintf(stderr, "hcomm-sim: the table's choice at %llu bytes: %s\n",
                    (unsigned long long)bytes, err);
            rc = 1;
        }
        if (longfmt) {
            if (e == HCCL_SUCCESS)
                printf("%s %u %llu table:%s %.3f %.4f %.4f %llu %llu %.3f %.3f\n", cname, n,
                       (unsigned long long)bytes, ch->name, r.time * 1e6,
                       r.time > 0 ? (double)bytes / r.time / 1e9 : 0,
                       r.time > 0 ? (double)bytes / r.time / 1e9 * bf : 0,
                       (unsigned long long)r.steps, (unsigned long long)r.messages, r.build_s,
                       r.run_s);
        } else {
            char tb[64], bb[64];
            if (e == HCCL_SUCCESS)
                snprintf(tb, sizeof(tb), "%s %.1f", ch->name, r.time * 1e6);
            else
                snprintf(tb, sizeof(tb), "?");
            if (best >= 0)
                snprintf(bb, sizeof(bb), "%s", names[best]);
            else if (e == HCCL_SUCCESS) {
                snprintf(bb, sizeof(bb), "%s", ch->name);
                best_t = r.time;
            } else
                snprintf(bb, sizeof(bb), "-");
            printf(" %18s %18s %9.3f\n", tb, bb,
                   best_t > 0 ? (double)bytes / best_t / 1e9 * bf : 0.0);
        }
        fflush(stdout);
        if (bytes >= maxb)
            break;
    }
    hs_destroy(s);
    return rc;
}
