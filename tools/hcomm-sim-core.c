/*
 * tools/hcomm-sim-core.c - the simulator behind tools/hcomm-sim and
 * hcomm-tune --model (the model: tools/hcomm-sim.h, docs/SCALE.md).
 *
 * One run: the algorithm and chunk size come from the library's own
 * selection table (src/comm/tune.h), forced or not; every rank's schedule from
 * the algorithm's builder, flattened as it is built into one 32-byte record
 * a step (kind, bytes, its dependents, its missing inputs) and a list of
 * dependents; each SEND matched with its RECV by (sender, receiver, tag);
 * then replayed in time order from a heap of completion and arrival events
 * and a heap of the flowing channels' ends. When a rotation of the ranks is
 * a symmetry of the machine and of the schedules as built, only the ranks
 * of one period are flattened and replayed ("replay by symmetry" below).
 */
#include "tools/hcomm-sim.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hccl/hccl.h>

#include "coll/algos.h"
#include "src/base/env.h"
#include "src/comm/tune.h"
#include "topo/topo.h"

/* ------------------------------------------------------------ presets */

#define GBIT (1e9 / 8)
#define GB 1e9

static const hs_machine_t presets[] = {
    {.name = "emu",
     .source = "this machine's emulated cluster (tools/hcomm-cluster up N --rate 300mbit, "
               "one rank per host): a link carries 0.95 of its tbf rate (2 hosts, RING "
               "64 MB: 1.889 s), 15 us a message (docs/CLUSTER.md: 8 B AllReduce 14 us); "
               "--nic-bw RATE*0.95 for other rates (docs/SCALE.md, Calibration); all hosts' "
               "TCP on the machine's 2 vCPUs: 637 MB/s in all (8 hosts, no rate, 8 "
               "concurrent 64 MB messages), 1 us a message (8 hosts, RING AllGather in 1 KB "
               "against 64 KB chunks)",
     .nodes = 4, .rpn = 1, .racks = 1,
     .intra = {.lat = 1e-6, .bw = 5 * GB},
     .nic = {.lat = 15e-6, .bw = 0.3 * GBIT * 0.95},
     .uplink_bw = 0, .spine_lat = 0,
     .reduce_bw = 2 * GB, .copy_bw = 5 * GB,
     .cpu_bw = 637e6, .cpu_msg = 1e-6},
    {.name = "nvlink8",
     .source = "an 8-GPU node (DGX H100 class): NVLink 4 at 450 GB/s per GPU and direction "
               "(NVIDIA H100 datasheet: 900 GB/s bidirectional), one 400 Gb/s NIC per node "
               "(ConnectX-7; --nic-bw 100Gb/s..400Gb/s), reductions at 1 TB/s (HBM3 "
               "3.35 TB/s over three streams)",
     .nodes = 1, .rpn = 8, .racks = 1,
     .intra = {.lat = 2e-6, .bw = 450 * GB},
     .nic = {.lat = 5e-6, .bw = 400 * GBIT},
     .uplink_bw = 0, .spine_lat = 0,
     .reduce_bw = 1000 * GB, .copy_bw = 1000 * GB},
    {.name = "fattree",
     .source = "a two-level fat tree of nvlink8 nodes: 16 nodes per rack behind a leaf "
               "switch, 200 Gb/s NICs, leaf uplinks of 16 x 200 Gb/s to the spine "
               "(non-blocking; --uplink-bw for oversubscription), 1 us more per spine "
               "crossing",
     .nodes = 64, .rpn = 8, .racks = 4,
     .intra = {.lat = 2e-6, .bw = 450 * GB},
     .nic = {.lat = 3e-6, .bw = 200 * GBIT},
     .uplink_bw = 16 * 200 * GBIT, .spine_lat = 1e-6,
     .reduce_bw = 1000 * GB, .copy_bw = 1000 * GB},
};

const hs_machine_t *hs_preset(const char *name)
{
    for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

void hs_presets_print(FILE *f)
{
    for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
        const hs_machine_t *m = &presets[i];
        fprintf(f, "  %-8s %u node(s) x %u rank(s), %u rack(s); intra %.3g GB/s %.3g us; "
                   "NIC %.4g Gb/s %.3g us; uplink %s; reduce %.3g GB/s\n"
                   "           %s\n",
                m->name, m->nodes, m->rpn, m->racks, m->intra.bw / GB, m->intra.lat * 1e6,
                m->nic.bw / GBIT, m->nic.lat * 1e6,
                m->uplink_bw > 0 ? "limited" : "unlimited", m->reduce_bw / GB, m->source);
    }
}

/* ------------------------------------------------------------ parsing */

int hs_parse_size(const char *s, uint64_t *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0) || v > 1e18)
        return -1;
    switch (toupper((unsigned char)*end)) {
    case 'K': v *= 1024; end++; break;
    case 'M': v *= 1024 * 1024; end++; break;
    case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int hs_parse_bw(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v > 0) || !isfinite(v))
        return -1;
    double mul = 1;
    const char u = (char)toupper((unsigned char)*end);
    if (u == 'K' || u == 'M' || u == 'G' || u == 'T') {
        mul = u == 'K' ? 1e3 : u == 'M' ? 1e6 : u == 'G' ? 1e9 : 1e12;
        end++;
    }
    if (strcmp(end, "") == 0 || strcmp(end, "B/s") == 0)
        ;
    else if (strcmp(end, "b/s") == 0 || strcasecmp(end, "bit") == 0 ||
             strcasecmp(end, "bps") == 0)
        mul /= 8;
    else
        return -1;
    *out = v * mul;
    return 0;
}

int hs_parse_time(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0) || !isfinite(v))
        return -1;
    if (strcmp(end, "") == 0 || strcmp(end, "s") == 0)
        ;
    else if (strcmp(end, "ms") == 0)
        v *= 1e-3;
    else if (strcmp(end, "us") == 0)
        v *= 1e-6;
    else if (strcmp(end, "ns") == 0)
        v *= 1e-9;
    else
        return -1;
    *out = v;
    return 0;
}

double hs_busbw_factor(hc_coll_t coll, uint32_t n)
{
    switch (coll) {
    case HC_COLL_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case HC_COLL_REDUCESCATTER:
    case HC_COLL_ALLGATHER:
    case HC_COLL_ALLTOALL:
        return (double)(n - 1) / n;
    default:
        return 1.0;
    }
}

/* ------------------------------------------------------------ machine options */

static const struct {
    const char *name;
    int arg;
} mopts[] = {
    {"machine", 1},  {"nodes", 1},     {"ranks-per-node", 1}, {"racks", 1},
    {"round-robin", 0}, {"topo", 1},   {"intra-bw", 1},       {"intra-lat", 1},
    {"nic-bw", 1},   {"nic-lat", 1},   {"uplink-bw", 1},      {"spine-lat", 1},
    {"reduce-bw", 1}, {"copy-bw", 1},  {"cpu-bw", 1},          {"cpu-msg", 1},
};

/* Apply one option (not --machine) to m. */
static int apply_opt(hs_machine_t *m, const char *name, const char *v, int *shape,
                     const char **topo, char *err, size_t errlen)
{
    double x;
    if (strcmp(name, "nodes") == 0 || strcmp(name, "ranks-per-node") == 0 ||
        strcmp(name, "racks") == 0) {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end || end == v || n < 1 || n > 65536)
            goto bad;
        *(name[0] == 'n' ? &m->nodes : name[0] == 'r' && name[1] == 'a' && name[2] == 'n'
                                          ? &m->rpn
                                          : &m->racks) = (uint32_t)n;
        *shape |= strcmp(name, "racks") == 0 ? 2 : 1;
        return 0;
    }
    if (strcmp(name, "round-robin") == 0) {
        m->round_robin = 1;
        return 0;
    }
    if (strcmp(name, "topo") == 0) {
        *topo = v;
        return 0;
    }
    m->name = "custom";
    if ((strcmp(name, "uplink-bw") == 0 || strcmp(name, "cpu-bw") == 0) && strcmp(v, "0") == 0) {
        *(name[0] == 'u' ? &m->uplink_bw : &m->cpu_bw) = 0;
        return 0;
    }
    if (strstr(name, "-bw")) {
        if (hs_parse_bw(v, &x) != 0)
            goto bad;
        *(strcmp(name, "intra-bw") == 0 ? &m->intra.bw : strcmp(name, "nic-bw") == 0 ? &m->nic.bw
          : strcmp(name, "uplink-bw") == 0 ? &m->uplink_bw
          : strcmp(name, "reduce-bw") == 0 ? &m->reduce_bw
          : strcmp(name, "cpu-bw") == 0 ? &m->cpu_bw : &m->copy_bw) = x;
        return 0;
    }
    if (hs_parse_time(v, &x) != 0)
        goto bad;
    *(strcmp(name, "intra-lat") == 0 ? &m->intra.lat : strcmp(name, "nic-lat") == 0 ? &m->nic.lat
      : strcmp(name, "cpu-msg") == 0 ? &m->cpu_msg : &m->spine_lat) = x;
    return 0;
bad:
    snprintf(err, errlen, "bad value '%s' for --%s", v, name);
    return -1;
}

int hs_machine_args(int *argc, char **argv, hs_machine_t *m, const char **topo, char *err,
                    size_t errlen)
{
    const char *mname = "fattree";
    int shape = 0;
    /* pass 1: find the preset; pass 2: apply the rest on top; then drop them */
    for (int pass = 1; pass <= 2; pass++) {
        int out = 1;
        for (int i = 1; i < *argc; i++) {
            const char *a = argv[i];
            if (strcmp(a, "--") == 0) { /* the rest is not ours */
                if (pass == 2)
                    while (i < *argc)
                        argv[out++] = argv[i++];
                break;
            }
            size_t k, nm = sizeof(mopts) / sizeof(mopts[0]);
            const char *eq = strchr(a, '=');
            for (k = 0; k < nm; k++) {
                size_t l = strlen(mopts[k].name);
                if (strncmp(a, "--", 2) == 0 && strncmp(a + 2, mopts[k].name, l) == 0 &&
                    (a[2 + l] == '\0' || (a[2 + l] == '=' && mopts[k].arg)))
                    break;
            }
            if (k == nm) {
                if (pass == 2)
                    argv[out++] = argv[i];
                continue;
            }
            const char *v = NULL;
            if (mopts[k].arg) {
                if (eq)
                    v = eq + 1;
                else if (i + 1 < *argc)
                    v = argv[++i];
                else {
                    snprintf(err, errlen, "--%s needs a value", mopts[k].name);
                    return -1;
                }
            }
            if (pass == 1) {
                if (strcmp(mopts[k].name, "machine") == 0)
                    mname = v;
                continue;
            }
            if (strcmp(mopts[k].name, "machine") == 0)
                continue;
            if (apply_opt(m, mopts[k].name, v, &shape, topo, err, errlen) != 0)
                return -1;
        }
        if (pass == 1) {
            const hs_machine_t *p = hs_preset(mname);
            if (p == NULL) {
                snprintf(err, errlen, "unknown machine '%s' (--presets lists them)", mname);
                return -1;
            }
            *m = *p;
            *topo = NULL;
        } else {
            *argc = out;
            argv[out] = NULL;
        }
    }
    if (*topo == NULL && !shape && getenv("HCCL_TOPO_FILE") && *getenv("HCCL_TOPO_FILE"))
        *topo = getenv("HCCL_TOPO_FILE");
    if (*topo && shape) {
        snprintf(err, errlen, "--topo (or HCCL_TOPO_FILE) and a shape (--nodes, "
                 "--ranks-per-node, --racks): one or the other");
        return -1;
    }
    if ((shape & 1) && !(shape & 2) && m->racks > m->nodes)
        m->racks = m->nodes; /* the preset's racks, fewer nodes */
    return 0;
}

/* ------------------------------------------------------------ the simulator */

/* One step of the flattened schedules: what the replay reads of it in one
 * place (32 bytes). */
typedef struct {
    uint64_t bytes;
    uint32_t succ;    /* its first dependent in succ[] (the next step's: past its last) */
    uint32_t pending; /* inputs still missing: its dependencies, a RECV's message */
    uint32_t peer;    /* SEND: its pair (hs_sim_t.pairs; the receiver until matched);
                       * RECV: the sender; REDUCE, COPY: its own rank */
    uint32_t aux;     /* SEND: its RECV (the tag until matched); RECV: the tag */
    uint32_t qnext;   /* SEND, while queued: the next message of its channel */
    uint8_t kind;
} step_t;

struct hs_sim {
    hs_machine_t m;
    hc_topo_t *topo;
    hc_topo_view_t view, flat;
    hc_config_t cfg;
    uint32_t n, nnodes, nracks;
    int uplinks;      /* the rack uplinks can be a bottleneck (hs_create) */
    uint64_t max_steps;
    int every_rank;   /* hs_set_every_rank: no replay by symmetry */
    /* per rank: node and rack (numbered as topo/ numbers them) */
    uint32_t *node_of, *rack_of;
    /* the flattened schedules of one run (grown, kept between runs) */
    uint64_t cap;
    step_t *st;     /* [steps + 1] */
    uint32_t *succ; /* the steps' dependents, in step order */
    uint64_t succ_cap;
    uint32_t *base; /* [n + 1]: first step of each rank */
    uint32_t *pairs; /* [2 npairs]: sender, receiver of the pairs messages go between */
    uint32_t npairs, pairs_cap;
};

uint32_t hs_nranks(const hs_sim_t *s)
{
    return s->n;
}

const hc_topo_view_t *hs_view(const hs_sim_t *s)
{
    return &s->view;
}

void hs_set_max_steps(hs_sim_t *s, uint64_t max)
{
    s->max_steps = max;
}

void hs_set_every_rank(hs_sim_t *s, int on)
{
    s->every_rank = on;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The shorthand as a topology file: racks, nodes, one rank line a node
 * (contiguous) or a rank (round robin). */
static int write_shorthand(const hs_machine_t *m, FILE *f)
{
    fprintf(f, "hcomm-topology 1\ncluster hcomm-sim\n");
    for (uint32_t k = 0; k < m->racks; k++)
        fprintf(f, "rack r%u\n", k);
    for (uint32_t d = 0; d < m->nodes; d++)
        fprintf(f, "node n%u rack=r%u\n", d, (uint32_t)((uint64_t)d * m->racks / m->nodes));
    if (m->round_robin) {
        for (uint32_t i = 0; i < m->nodes * m->rpn; i++)
            fprintf(f, "rank %u node=n%u\n", i, i % m->nodes);
    } else {
        for (uint32_t d = 0; d < m->nodes; d++)
            fprintf(f, "rank %u-%u node=n%u\n", d * m->rpn, d * m->rpn + m->rpn - 1, d);
    }
    return ferror(f) ? -1 : 0;
}

/* Every rank's card: the same machine facts (placement comes from the file). */
static void fake_blob(uint8_t *blob, size_t len)
{
    hc_topo_facts_t f;
    memset(&f, 0, sizeof(f));
    f.magic = HC_FACTS_MAGIC;
    f.version = HC_FACTS_VERSION;
    f.phys = 1;
    f.numa = -1;
    f.nnuma = 1;
    f.package = -1;
    f.hw_ok = 1;
    snprintf(f.cpus, sizeof(f.cpus), "0");
    memset(blob, 0, len);
    memcpy(blob, &f, sizeof(f));
}

/* Count the ranks a topology file places (its highest rank line + 1). */
static uint32_t file_nranks(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    char line[4096];
    uint32_t n = 0;
    while (fgets(line, sizeof(line), f)) {
        const char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (strncmp(p, "rank", 4) != 0 || !isspace((unsigned char)p[4]))
            continue;
        p += 4;
        while (isspace((unsigned char)*p))
            p++;
        /* LIST: 0-3,8 */
        while (isdigit((unsigned char)*p)) {
            unsigned long v = strtoul(p, (char **)&p, 10);
            if (*p == '-' && isdigit((unsigned char)p[1]))
                v = strtoul(p + 1, (char **)&p, 10);
            if (v + 1 > n && v < 1u << 24)
                n = (uint32_t)v + 1;
            if (*p == ',')
                p++;
        }
    }
    fclose(f);
    return n;
}

/* The placement's topology file into s->cfg: topo_file, or the machine's
 * shape written to tmp (its descriptor in *tmpfd, for the caller to
 * unlink). The number of ranks it places; 0 with the reason in err. */
static uint32_t place_ranks(hs_sim_t *s, const hs_machine_t *m, const char *topo_file,
                            char *tmp, int *tmpfd, char *err, size_t errlen)
{
    if (topo_file) {
        const uint32_t n = file_nranks(topo_file);
        if (n == 0) {
            snprintf(err, errlen, "%s: cannot read it, or it has no rank lines (the simulator "
                     "needs every rank placed)", topo_file);
            return 0;
        }
        snprintf(s->cfg.topo_file, sizeof(s->cfg.topo_file), "%s", topo_file);
        return n;
    }
    if (m->nodes == 0 || m->rpn == 0 || m->racks == 0 || m->racks > m->nodes ||
        (uint64_t)m->nodes * m->rpn > 65536) {
        snprintf(err, errlen, "bad shape: %u node(s) x %u rank(s) in %u rack(s) (nodes >= "
                 "racks >= 1, ranks-per-node >= 1, at most 65536 ranks)",
                 m->nodes, m->rpn, m->racks);
        return 0;
    }
    *tmpfd = mkstemp(tmp);
    FILE *f = *tmpfd >= 0 ? fdopen(*tmpfd, "w") : NULL;
    if (f == NULL || write_shorthand(m, f) != 0) {
        snprintf(err, errlen, "cannot write a topology file in /tmp");
        if (f)
            fclose(f);
        return 0;
    }
    fclose(f);
    snprintf(s->cfg.topo_file, sizeof(s->cfg.topo_file), "%s", tmp);
    return m->nodes * m->rpn;
}

/* The library's topology of the n ranks s->cfg's file places, every rank
 * with the same machine facts (fake_blob); 0, or -1 with the reason in
 * err. */
static int build_topo(hs_sim_t *s, uint32_t n, char *err, size_t errlen)
{
    hc_topo_member_t *mem = calloc(n, sizeof(*mem));
    uint8_t *blob = calloc(1, 512);
    if (mem == NULL || blob == NULL) {
        free(mem);
        free(blob);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    fake_blob(blob, 512);
    for (uint32_t i = 0; i < n; i++) {
        mem[i].host = "hcomm-sim";
        mem[i].blob = blob;
        mem[i].world = i;
    }
    hc_topo_reset();
    int rc = hc_topo_create(n, 0, mem, &s->cfg, &s->topo);
    free(mem);
    free(blob);
    if (rc != HCCL_SUCCESS) {
        snprintf(err, errlen, "the topology does not build (the library's error is logged "
                 "above; HCCL_DEBUG=WARN shows it)");
        return -1;
    }
    return 0;
}

/* From the topology: the view, each rank's node and rack, and whether the
 * rack uplinks can limit a flow; 0, or -1 with the reason in err. */
static int index_ranks(hs_sim_t *s, char *err, size_t errlen)
{
    const uint32_t n = s->n;
    hc_topo_view(s->topo, &s->view);
    s->nnodes = s->topo->nnodes ? s->topo->nnodes : 1;
    s->nracks = s->topo->nracks ? s->topo->nracks : 1;
    s->node_of = calloc(n, sizeof(uint32_t));
    s->rack_of = calloc(n, sizeof(uint32_t));
    s->base = calloc(n + 1, sizeof(uint32_t));
    if (s->node_of == NULL || s->rack_of == NULL || s->base == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        s->node_of[i] = s->topo->r[i].node;
        s->rack_of[i] = s->topo->r[i].rack;
    }
    /* An uplink at least as wide as its rack's NICs together never limits
     * a flow (what crosses it leaves through those NICs): left out, so
     * that its many flows do not cost the replay time, and so that the
     * equal shares do not throttle flows the NICs would let through. */
    uint32_t *per = calloc(s->nracks, sizeof(uint32_t)), most = 0;
    if (per == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (uint32_t d = 0; d < s->topo->nnodes; d++) {
        const uint32_t k = s->topo->nodes[d].rack < s->nracks ? s->topo->nodes[d].rack : 0;
        if (++per[k] > most)
            most = per[k];
    }
    if (most == 0)
        most = 1;
    free(per);
    s->uplinks = s->m.uplink_bw > 0 && s->m.uplink_bw < (double)most * s->m.nic.bw;
    return 0;
}

hs_sim_t *hs_create(const hs_machine_t *m, const char *topo_file, char *err, size_t errlen)
{
    hs_sim_t *s = calloc(1, sizeof(*s));
    char tmp[] = "/tmp/hcomm-sim-XXXXXX";
    int tmpfd = -1;
    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->m = *m;
    s->max_steps = HS_MAX_STEPS_DEFAULT;
    if (hc_env_load(&s->cfg, err, errlen) != HCCL_SUCCESS)
        goto fail;
    const uint32_t n = place_ranks(s, m, topo_file, tmp, &tmpfd, err, errlen);
    if (n == 0)
        goto fail;
    s->cfg.topo_dump_file[0] = '\0';
    const int rc = build_topo(s, n, err, errlen);
    if (tmpfd >= 0)
        unlink(tmp);
    tmpfd = -1;
    if (rc != 0)
        goto fail;
    s->n = n;
    if (index_ranks(s, err, errlen) != 0)
        goto fail;
    return s;
fail:
    if (tmpfd >= 0)
        unlink(tmp);
    hs_destroy(s);
    return NULL;
}

void hs_destroy(hs_sim_t *s)
{
    if (s == NULL)
        return;
    if (s->topo)
        hc_topo_destroy(s->topo);
    hc_env_free(&s->cfg);
    free(s->node_of);
    free(s->rack_of);
    free(s->base);
    free(s->st);
    free(s->succ);
    free(s->pairs);
    free(s);
}

/* Room for `need` steps (+1: the end of the last one's dependents). */
static int grow_steps(hs_sim_t *s, uint64_t need)
{
    if (need + 1 <= s->cap)
        return 0;
    uint64_t c = s->cap ? s->cap : 1024;
    while (c < need + 1)
        c *= 2;
    step_t *v = realloc(s->st, c * sizeof(step_t));
    if (v == NULL)
        return -1;
    s->st = v;
    s->cap = c;
    return 0;
}

/* Room for `need` in *v (capacity *cap, doubled from `first`). */
static int grow_u32(uint32_t **v, uint64_t *cap, uint64_t need, uint64_t first)
{
    if (need <= *cap)
        return 0;
    uint64_t c = *cap ? *cap : first;
    while (c < need)
        c *= 2;
    uint32_t *q = realloc(*v, c * sizeof(uint32_t));
    if (q == NULL)
        return -1;
    *v = q;
    *cap = c;
    return 0;
}

/* The algorithm and chunk a job would run: the selection table of cfg
 * (forced to algo when given) for these arguments. */
static int select_algo(hs_sim_t *s, const hc_topo_view_t *v, hc_coll_args_t *a, const char *algo,
                       const hc_algo_t **out, char *err, size_t errlen)
{
    hc_config_t cfg = s->cfg; /* shallow: read only, never freed */
    const hc_algo_t *want = NULL;
    if (algo) {
        want = hc_coll_find_algo(a->coll, algo);
        if (want == NULL) {
            int na;
            const hc_algo_t *t = hc_coll_algos(a->coll, &na);
            size_t off = 0;
            char known[256] = "";
            for (int i = 0; i < na && off < sizeof(known); i++)
                off += (size_t)snprintf(known + off, sizeof(known) - off, "%s%s", i ? ", " : "",
                                        t[i].name);
            snprintf(err, errlen, "unknown %s algorithm '%s' (known: %s)", hc_coll_name(a->coll),
                     algo, known);
            return HCCL_E_PARA;
        }
        const char *why = want->usable ? want->usable(a) : NULL;
        if (why) {
            snprintf(err, errlen, "%s cannot run here: %s", want->name, why);
            return HCCL_E_NOT_SUPPORT;
        }
        char *field = NULL;
        switch (a->coll) {
        case HC_COLL_ALLREDUCE: field = cfg.allreduce_algo; break;
        case HC_COLL_BROADCAST: field = cfg.bcast_algo; break;
        case HC_COLL_ALLGATHER: field = cfg.allgather_algo; break;
        case HC_COLL_REDUCESCATTER: field = cfg.reducescatter_algo; break;
        case HC_COLL_ALLTOALL: field = cfg.alltoall_algo; break;
        case HC_COLL_REDUCE: field = cfg.reduce_algo; break;
        default: break;
        }
        if (field == NULL) {
            snprintf(err, errlen, "%s: algorithms cannot be forced", hc_coll_name(a->coll));
            return HCCL_E_PARA;
        }
        snprintf(field, 64, "%s", want->name);
    }
    hc_tune_t *t;
    int rc = hc_tune_create(&cfg, s->n, v, &t);
    if (rc != HCCL_SUCCESS) {
        snprintf(err, errlen, "the selection table does not build (HCCL_TUNE_FILE or "
                 "HCCL_*_ALGO; the library's error is logged)");
        return rc;
    }
    const hc_algo_t *got = hc_tune_select(t, a);
    hc_tune_destroy(t);
    if (want && got != want) {
        snprintf(err, errlen, "%s cannot run here (the table falls back to %s)", want->name,
                 got->name);
        return HCCL_E_NOT_SUPPORT;
    }
    *out = got;
    return HCCL_SUCCESS;
}

/* ---- events ----
 *
 * An event is (time, kind, g): a step done (EV_DONE, g the step), a
 * message arrived (EV_ARRIVAL, g its RECV), a flow through (EV_FLOW, g its
 * channel). They run in that order (time, then kind, then g), except
 * that one due at the current time goes to a queue behind the others of
 * that time (the fifo) instead. Steps' events wait in a binary heap;
 * each flowing channel has at most one event in a second heap, moved
 * when its rate changes (an event of the fifo that a later one of its
 * channel replaced is dropped by version).
 */

/* Event kinds (ev_t.kind) */
enum { EV_DONE = 0, EV_ARRIVAL = 1, EV_FLOW = 2 };

typedef struct {
    double t;
    uint32_t g;
    uint32_t kind;
    uint32_t ver; /* EV_FLOW: the channel's version it was computed for */
} ev_t;

typedef struct {
    double t;
    uint64_t key; /* kind << 32 | g */
} hev_t;

typedef struct {
    hev_t *v;
    size_t n, cap;
} heap_t;

static inline int hev_less(const hev_t *a, const hev_t *b)
{
    return a->t < b->t || (a->t == b->t && a->key < b->key);
}

static int heap_push(heap_t *h, double t, uint64_t key)
{
    if (h->n == h->cap) {
        size_t c = h->cap ? 2 * h->cap : 1024;
        hev_t *v = realloc(h->v, c * sizeof(hev_t));
        if (v == NULL)
            return -1;
        h->v = v;
        h->cap = c;
    }
    const hev_t e = {t, key};
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!hev_less(&e, &h->v[p]))
            break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = e;
    return 0;
}

static hev_t heap_pop(heap_t *h)
{
    const hev_t top = h->v[0], last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && hev_less(&h->v[c + 1], &h->v[c]))
            c++;
        if (!hev_less(&h->v[c], &last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
    return top;
}

/*
 * The network: channels and links, bandwidth shared fairly.
 *
 * A channel is an ordered pair (sender, receiver), as a transport
 * connection is: its messages go one after the other, in the order they
 * became ready. The message at a channel's head is a flow over the links
 * of its path: the sender's port and the receiver's (inside a node), or
 * the two NICs, and between racks also the sender rack's uplink and the
 * receiver rack's downlink. Every link divides its bandwidth equally
 * among the flows on it; a flow gets the least of its links' shares.
 * When a flow starts or ends, the flows sharing a link with it get their
 * new rate and a new end time.
 */
typedef struct {
    uint32_t a, b;          /* sender, receiver */
    uint32_t head, tail;    /* queued messages (SEND steps) via qnext; UINT32_MAX */
    uint32_t ver;
    uint8_t active, nl;
    uint32_t link[5];       /* the links of its path */
    uint32_t pos[5];        /* its index in each link's flow list */
    uint32_t hpos;          /* its event's place in the flow heap; UINT32_MAX: none */
    double rem, rate, tlast, lat;
    double tend;            /* when its flow is due (flow_due) */
    double cpu;             /* seconds of the CPU link a byte of its message needs */
} chan_t;

typedef struct {
    double cap;
    uint32_t *f, nf, capf;  /* channels flowing through it */
    uint32_t mult;          /* the flows of the whole machine on it a flow here stands
                             * for (replay by symmetry: the rotations that keep it) */
} link_t;

typedef struct {
    hs_sim_t *s;
    heap_t h;               /* EV_DONE and EV_ARRIVAL */
    hev_t *fh;              /* the flow heap: (time, channel) */
    uint32_t nfh;
    ev_t *fifo;
    size_t fhead, fn, fcap;
    double now;
    chan_t *ch;
    uint32_t nch, capch;
    uint32_t *cid;          /* per pair (hs_sim_t.pairs): its channel; UINT32_MAX */
    link_t *lk;             /* port tx [n], port rx [n], NIC tx [nn], NIC rx [nn],
                             * uplink [nr], downlink [nr], the CPU link [1] */
    uint32_t *lrep;         /* per link: the one of its orbit that stands for it */
    uint32_t nlk, cpu;      /* cpu: the CPU link's index (UINT32_MAX: none) */
    double *engine;
    double end;
    int oom;
} run_t;

static double max2(double a, double b)
{
    return a > b ? a : b;
}

static void fifo_push(run_t *r, double t, uint32_t g, uint32_t kind, uint32_t ver)
{
    if (r->fn == r->fcap) {
        if (r->fhead > 0) { /* slide the live part down */
            memmove(r->fifo, r->fifo + r->fhead, (r->fn - r->fhead) * sizeof(ev_t));
            r->fn -= r->fhead;
            r->fhead = 0;
        }
        if (r->fn == r->fcap) {
            size_t c = r->fcap ? 2 * r->fcap : 1024;
            ev_t *v = realloc(r->fifo, c * sizeof(ev_t));
            if (v == NULL) {
                r->oom = 1;
                return;
            }
            r->fifo = v;
            r->fcap = c;
        }
    }
    const ev_t e = {t, g, kind, ver};
    r->fifo[r->fn++] = e;
}

/* A step's event (EV_DONE, EV_ARRIVAL) at time t. */
static void push(run_t *r, double t, uint32_t g, uint32_t kind)
{
    if (t <= r->now)
        fifo_push(r, t, g, kind, 0);
    else if (heap_push(&r->h, t, (uint64_t)kind << 32 | g) != 0)
        r->oom = 1;
}

/* ---- the flow heap: channels by (time, id), their places in hpos ---- */

static inline int fe_less(const hev_t *x, const hev_t *y)
{
    return x->t < y->t || (x->t == y->t && x->key < y->key);
}

static inline void fh_set(run_t *r, uint32_t i, hev_t e)
{
    r->fh[i] = e;
    r->ch[e.key].hpos = i;
}

static void fh_up(run_t *r, uint32_t i)
{
    const hev_t e = r->fh[i];
    while (i > 0) {
        const uint32_t p = (i - 1) / 2;
        if (!fe_less(&e, &r->fh[p]))
            break;
        fh_set(r, i, r->fh[p]);
        i = p;
    }
    fh_set(r, i, e);
}

static void fh_down(run_t *r, uint32_t i)
{
    const hev_t e = r->fh[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= r->nfh)
            break;
        if (c + 1 < r->nfh && fe_less(&r->fh[c + 1], &r->fh[c]))
            c++;
        if (!fe_less(&r->fh[c], &e))
            break;
        fh_set(r, i, r->fh[c]);
        i = c;
    }
    fh_set(r, i, e);
}

/* Take channel id out of the flow heap (if there). */
static void fh_remove(run_t *r, uint32_t id)
{
    const uint32_t i = r->ch[id].hpos;
    if (i == UINT32_MAX)
        return;
    r->ch[id].hpos = UINT32_MAX;
    const hev_t last = r->fh[--r->nfh];
    if (last.key == id)
        return;
    fh_set(r, i, last);
    fh_up(r, i);
    fh_down(r, r->ch[last.key].hpos);
}

/* Channel id's flow will be through at time t (its version now). */
static void flow_due(run_t *r, uint32_t id, double t)
{
    chan_t *c = &r->ch[id];
    c->tend = t;
    if (t <= r->now) {
        fh_remove(r, id);
        fifo_push(r, t, id, EV_FLOW, c->ver);
        return;
    }
    if (c->hpos == UINT32_MAX)
        c->hpos = r->nfh++;
    const uint32_t i = c->hpos;
    const hev_t e = {t, id};
    r->fh[i] = e;
    fh_up(r, i);
    fh_down(r, c->hpos);
}

/* The pairs (sender, receiver) that messages go between, numbered as
 * the matching meets them: a hash of a * n + b + 1 (0: empty). */
typedef struct {
    uint64_t *key;
    uint32_t *val, mask;
} pairs_t;

/* The pair a -> b (made on first use); UINT32_MAX when out of memory. */
static uint32_t pair_of(hs_sim_t *s, pairs_t *h, uint32_t a, uint32_t b)
{
    const uint64_t key = (uint64_t)a * s->n + b + 1;
    if (2 * ((uint64_t)s->npairs + 1) > (uint64_t)h->mask + 1) { /* keep it half empty */
        const uint32_t nm = h->mask ? 2 * (h->mask + 1) - 1 : 1023;
        uint64_t *nk = calloc((size_t)nm + 1, sizeof(uint64_t));
        uint32_t *nv = malloc(((size_t)nm + 1) * sizeof(uint32_t));
        if (nk == NULL || nv == NULL) {
            free(nk);
            free(nv);
            return UINT32_MAX;
        }
        for (uint32_t i = 0; h->key && i <= h->mask; i++) {
            if (h->key[i] == 0)
                continue;
            uint32_t j = (uint32_t)(h->key[i] * 0x9E3779B97F4A7C15ull >> 32) & nm;
            while (nk[j])
                j = (j + 1) & nm;
            nk[j] = h->key[i];
            nv[j] = h->val[i];
        }
        free(h->key);
        free(h->val);
        h->key = nk;
        h->val = nv;
        h->mask = nm;
    }
    uint32_t j = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 32) & h->mask;
    while (h->key[j]) {
        if (h->key[j] == key)
            return h->val[j];
        j = (j + 1) & h->mask;
    }
    if (s->npairs == s->pairs_cap) {
        uint32_t c = s->pairs_cap ? 2 * s->pairs_cap : 1024;
        uint32_t *v = realloc(s->pairs, 2 * (size_t)c * sizeof(uint32_t));
        if (v == NULL)
            return UINT32_MAX;
        s->pairs = v;
        s->pairs_cap = c;
    }
    s->pairs[2 * s->npairs] = a;
    s->pairs[2 * s->npairs + 1] = b;
    h->key[j] = key;
    h->val[j] = s->npairs;
    return s->npairs++;
}

/* The channel of pair p (made on first use, numbered in that order);
 * UINT32_MAX when out of memory. */
static uint32_t channel(run_t *r, uint32_t p)
{
    if (r->cid[p] != UINT32_MAX)
        return r->cid[p];
    hs_sim_t *s = r->s;
    const uint32_t a = s->pairs[2 * p], b = s->pairs[2 * p + 1];
    if (r->nch == r->capch) {
        uint32_t c = r->capch ? 2 * r->capch : 1024;
        chan_t *v = realloc(r->ch, c * sizeof(chan_t));
        if (v == NULL)
            return UINT32_MAX;
        r->ch = v;
        hev_t *w = realloc(r->fh, c * sizeof(hev_t));
        if (w == NULL)
            return UINT32_MAX;
        r->fh = w;
        r->capch = c;
    }
    chan_t *c = &r->ch[r->nch];
    memset(c, 0, sizeof(*c));
    c->a = a;
    c->b = b;
    c->head = c->tail = UINT32_MAX;
    c->hpos = UINT32_MAX;
    const hs_machine_t *m = &s->m;
    const uint32_t n = s->n, nn = s->nnodes, nr = s->nracks;
    if (s->node_of[a] == s->node_of[b]) {
        c->link[0] = a;
        c->link[1] = n + b;
        c->nl = 2;
        c->lat = m->intra.lat;
    } else {
        c->link[0] = 2 * n + s->node_of[a];
        c->link[1] = 2 * n + nn + s->node_of[b];
        c->nl = 2;
        c->lat = m->nic.lat;
        if (s->rack_of[a] != s->rack_of[b]) {
            c->lat += m->spine_lat;
            if (s->uplinks) {
                c->link[2] = 2 * n + 2 * nn + s->rack_of[a];
                c->link[3] = 2 * n + 2 * nn + nr + s->rack_of[b];
                c->nl = 4;
            }
        }
        if (r->cpu != UINT32_MAX)
            c->link[c->nl++] = r->cpu;
    }
    for (uint32_t k = 0; k < c->nl; k++)
        c->link[k] = r->lrep[c->link[k]];
    r->cid[p] = r->nch;
    return r->nch++;
}

/* Channel c's rate now: the least equal share of its links. */
static double chan_rate(const run_t *r, const chan_t *c)
{
    double rate = 0;
    for (uint32_t k = 0; k < c->nl; k++) {
        const link_t *l = &r->lk[c->link[k]];
        const double sh =
            l->cap / ((double)l->nf * (double)l->mult) / (c->link[k] == r->cpu ? c->cpu : 1.0);
        if (k == 0 || sh < rate)
            rate = sh;
    }
    return rate;
}

/* Flow o's bytes left at time t. One due by t has none left, whatever the
 * rounding of rate x time: flows due at one time end at it in any order
 * (the same times whichever of them the replay takes first). */
static void advance(chan_t *o, double t)
{
    o->rem = t >= o->tend ? 0 : o->rem - o->rate * (t - o->tlast);
    if (o->rem < 0)
        o->rem = 0;
    o->tlast = t;
}

/* Bring the flows on the links of channel c up to time t, with new rates. */
static void reshare(run_t *r, const chan_t *c, double t)
{
    for (uint32_t k = 0; k < c->nl; k++) {
        const link_t *l = &r->lk[c->link[k]];
        for (uint32_t i = 0; i < l->nf; i++) {
            const uint32_t id = l->f[i];
            chan_t *o = &r->ch[id];
            advance(o, t);
            o->rate = chan_rate(r, o);
            o->ver++;
            flow_due(r, id, t + o->rem / o->rate);
        }
    }
}

/* The message at the head of channel id starts flowing at time t. */
static void flow_start(run_t *r, uint32_t id, double t)
{
    chan_t *c = &r->ch[id];
    const uint32_t g = c->head;
    /* the others on its links first, at their old rates up to now */
    for (uint32_t k = 0; k < c->nl; k++) {
        const link_t *l = &r->lk[c->link[k]];
        for (uint32_t i = 0; i < l->nf; i++)
            advance(&r->ch[l->f[i]], t);
    }
    for (uint32_t k = 0; k < c->nl; k++) {
        link_t *l = &r->lk[c->link[k]];
        if (l->nf == l->capf) {
            uint32_t nc = l->capf ? 2 * l->capf : 4;
            uint32_t *v = realloc(l->f, nc * sizeof(uint32_t));
            if (v == NULL) {
                r->oom = 1;
                return;
            }
            l->f = v;
            l->capf = nc;
        }
        c->pos[k] = l->nf;
        l->f[l->nf++] = id;
    }
    c->active = 1;
    c->rem = (double)r->s->st[g].bytes;
    if (r->cpu != UINT32_MAX) { /* the message's CPU time spread over its bytes */
        if (c->rem < 1)
            c->rem = 1; /* an empty message costs a byte's */
        c->cpu = 1.0 / r->s->m.cpu_bw + r->s->m.cpu_msg / c->rem;
    }
    c->rate = 0;
    c->tlast = t;
    c->tend = INFINITY;
    reshare(r, c, t);
}

/* Channel id's flow is through at time t. */
static void flow_event(run_t *r, uint32_t id, double t)
{
    chan_t *c = &r->ch[id];
    const uint32_t g = c->head;
    push(r, t, g, EV_DONE);
    push(r, t + c->lat, r->s->st[g].aux, EV_ARRIVAL);
    for (uint32_t k = 0; k < c->nl; k++) { /* leave the links */
        link_t *l = &r->lk[c->link[k]];
        const uint32_t last = l->f[--l->nf];
        if (last != id) {
            l->f[c->pos[k]] = last;
            chan_t *o = &r->ch[last];
            for (uint32_t q = 0; q < o->nl; q++)
                if (o->link[q] == c->link[k])
                    o->pos[q] = c->pos[k];
        }
    }
    c->active = 0;
    c->head = r->s->st[g].qnext;
    if (c->head == UINT32_MAX)
        c->tail = UINT32_MAX;
    reshare(r, c, t);
    if (c->head != UINT32_MAX)
        flow_start(r, id, t);
}

/* Step g's inputs are all there at time t: run it. */
static void start(run_t *r, uint32_t g, double t)
{
    hs_sim_t *s = r->s;
    step_t *st = &s->st[g];
    const hs_machine_t *m = &s->m;
    switch (st->kind) {
    case HC_STEP_SEND: {
        const uint32_t id = channel(r, st->peer);
        if (id == UINT32_MAX) {
            r->oom = 1;
            return;
        }
        chan_t *c = &r->ch[id];
        st->qnext = UINT32_MAX;
        if (c->head == UINT32_MAX) {
            c->head = c->tail = g;
            flow_start(r, id, t);
        } else {
            s->st[c->tail].qnext = g;
            c->tail = g;
        }
        break;
    }
    case HC_STEP_REDUCE:
    case HC_STEP_COPY: {
        const uint32_t a = st->peer;
        const double bw = st->kind == HC_STEP_REDUCE ? m->reduce_bw : m->copy_bw;
        const double start_t = max2(t, r->engine[a]);
        r->engine[a] = start_t + (double)st->bytes / bw;
        push(r, r->engine[a], g, EV_DONE);
        break;
    }
    default: /* RECV (its message is in), NOP */
        push(r, t, g, EV_DONE);
        break;
    }
}

/* One of step g's inputs is there at time t. The events run in time
 * order, so its last input is its latest. */
static void input(run_t *r, uint32_t g, double t)
{
    if (--r->s->st[g].pending == 0)
        start(r, g, t);
}

static void run_free(run_t *r)
{
    free(r->h.v);
    free(r->fifo);
    free(r->fh);
    free(r->ch);
    free(r->cid);
    for (uint32_t i = 0; r->lk && i < r->nlk; i++)
        free(r->lk[i].f);
    free(r->lk);
    free(r->lrep);
    free(r->engine);
}

typedef struct {
    hc_coll_args_t *a;
    const hc_algo_t *al;
} build_ctx_t;

static int build_algo(void *ctx, uint32_t rank, hc_sched_t *sc)
{
    build_ctx_t *c = ctx;
    c->a->rank = rank;
    return c->al->build(c->a, sc);
}

typedef struct {
    uint64_t key; /* peer << 20 | tag */
    uint32_t g;
} rkey_t;

static int rkey_cmp(const void *a, const void *b)
{
    const rkey_t *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* ---- replay by symmetry ----
 *
 * Rotating the ranks by k (rank r to (r + k) mod n, k dividing n) is a
 * symmetry of the machine when it moves nodes onto nodes and racks onto
 * racks (every link of a kind has the same bandwidth and latency); it is
 * one of the run when, besides, rank r + k's schedule is rank r's with
 * every peer moved by k. Then every rank's steps take the times of its
 * image's, every link carries what its image carries, and replaying ranks
 * 0 .. k-1 gives the run's times: a message to rank p = p0 + j k (p0 < k)
 * is the image of one to p0 from the sender moved by -j k, a link stands
 * for its orbit (a flow on it for the flows of the whole machine on that
 * link: as many as the rotations that keep the link), and a flow's share
 * comes from those counts. The replay of every rank takes the events of
 * one time in an order no rotation keeps (heap and channel numbers); what
 * makes its times independent of that order: a flow due at a time ends
 * then (advance), and a message arrives a latency after it was sent. */

/* Map fwd (from[r] -> from[(r + k) % n], values < lim) into map[lim];
 * 0, or -1 when two ranks of one node (rack) go to different ones. */
static int rotation_map(const uint32_t *from, uint32_t n, uint32_t k, uint32_t lim,
                        uint32_t *map)
{
    for (uint32_t i = 0; i < lim; i++)
        map[i] = UINT32_MAX;
    for (uint32_t r = 0; r < n; r++) {
        const uint32_t a = from[r], b = from[(r + k) % n];
        if (a >= lim || b >= lim || (map[a] != UINT32_MAX && map[a] != b))
            return -1;
        map[a] = b;
    }
    return 0; /* onto the nodes (racks) that hold ranks, so one to one there */
}

/* The least k > after dividing n whose rotation is a symmetry of the
 * machine (n: none). Not with a latency of 0: a message would arrive at
 * the time it was sent, its RECV run among the events of that time in the
 * order the replay takes the senders', which no rotation keeps. */
static uint32_t machine_period(const hs_sim_t *s, uint32_t after, uint32_t *nmap,
                               uint32_t *rmap)
{
    if (s->every_rank || !(s->m.intra.lat > 0) || !(s->m.nic.lat > 0))
        return s->n;
    for (uint32_t k = after + 1; k < s->n; k++)
        if (s->n % k == 0 && rotation_map(s->node_of, s->n, k, s->nnodes, nmap) == 0 &&
            rotation_map(s->rack_of, s->n, k, s->nracks, rmap) == 0)
            return k;
    return s->n;
}

/* Each link's representative (the least link of its orbit under the
 * rotation by k) and, on it, how many rotations keep the link. */
static int link_orbits(run_t *r, uint32_t k, const uint32_t *nmap, const uint32_t *rmap)
{
    const hs_sim_t *s = r->s;
    const uint32_t n = s->n, nn = s->nnodes, nr = s->nracks, rot = n / k;
    uint32_t *next = malloc(r->nlk * sizeof(uint32_t));
    r->lrep = malloc(r->nlk * sizeof(uint32_t));
    if (next == NULL || r->lrep == NULL) {
        free(next);
        return -1;
    }
    for (uint32_t l = 0; l < r->nlk; l++) {
        uint32_t to = l; /* the CPU link, and links of no rank's node or rack */
        if (k == n)
            ;
        else if (l < 2 * n)
            to = l / n * n + (l % n + k) % n;
        else if (l < 2 * n + 2 * nn) {
            const uint32_t d = (l - 2 * n) % nn;
            if (nmap[d] != UINT32_MAX)
                to = l - d + nmap[d];
        } else if (l < 2 * n + 2 * nn + 2 * nr) {
            const uint32_t d = (l - 2 * n - 2 * nn) % nr;
            if (rmap[d] != UINT32_MAX)
                to = l - d + rmap[d];
        }
        next[l] = to;
        r->lrep[l] = UINT32_MAX;
    }
    for (uint32_t l = 0; l < r->nlk; l++) {
        if (r->lrep[l] != UINT32_MAX)
            continue;
        uint32_t len = 0; /* l is the least of its orbit: the others come later */
        for (uint32_t x = l; len == 0 || x != l; x = next[x], len++)
            r->lrep[x] = l;
        r->lk[l].mult = rot / len;
    }
    free(next);
    return 0;
}

/* Rank q's schedule sc is rank q0's (flattened at s->st + s->base[q0],
 * its dependencies at deps) with every peer moved by q - q0. */
static int same_shifted(const hs_sim_t *s, const hc_sched_t *sc, uint32_t q, uint32_t q0,
                        const uint32_t *deps)
{
    const step_t *d = s->st + s->base[q0];
    if (sc->nsteps != s->base[q0 + 1] - s->base[q0])
        return 0;
    for (uint32_t i = 0; i < sc->nsteps; i++, d++) {
        const hc_step_t *st = &sc->steps[i];
        const int msg = st->kind == HC_STEP_SEND || st->kind == HC_STEP_RECV;
        if (st->kind != d->kind || st->bytes != d->bytes || st->tag != d->aux ||
            st->ndeps != d->pending - (st->kind == HC_STEP_RECV) ||
            (msg && st->peer != (d->peer + q - q0) % s->n) ||
            memcmp(sc->deps + st->dep_off, deps, st->ndeps * sizeof(uint32_t)) != 0)
            return 0;
        deps += st->ndeps;
    }
    return 1;
}

int hs_run(hs_sim_t *s, hc_coll_t coll, uint64_t bytes, const char *algo, int blind,
           const hc_algo_t **chosen, hs_result_t *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof(*res));
    const hc_topo_view_t *v = blind ? &s->flat : &s->view;
    hc_coll_args_t a = {.coll = coll, .nranks = s->n, .root = 0, .count = bytes / 4, .esize = 4,
                        .dtype = HCCL_DATA_TYPE_FP32, .op = HCCL_REDUCE_SUM,
                        .deterministic = s->cfg.deterministic, .topo = v};
    if (coll == HC_COLL_ALLTOALLV || coll == HC_COLL_BARRIER || coll == HC_COLL_SCATTER) {
        snprintf(err, errlen, "%s is not simulated (allreduce, broadcast, reduce, "
                 "reducescatter, allgather, alltoall are)", hc_coll_name(coll));
        return HCCL_E_PARA;
    }
    const hc_algo_t *al;
    int rc = select_algo(s, v, &a, algo, &al, err, errlen);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (chosen)
        *chosen = al;
    build_ctx_t ctx = {&a, al};
    return hs_replay(s, build_algo, &ctx, res, err, errlen);
}

/* hs_replay's flattening, from the first rank built to the messages
 * matched: the ranks flattened (0 .. k-1) and the buffers kept between
 * ranks. */
typedef struct {
    hs_sim_t *s;
    char *err;
    size_t errlen;
    const char *name;        /* the algorithm, as its schedules name it */
    uint32_t k;              /* the period of the rotation (n: none) */
    uint32_t *nmap, *rmap;   /* the rotation by k of the nodes, of the racks */
    hc_sched_t sc;
    uint64_t ns, nsucc, nrecv, nsend;
    rkey_t *rk;              /* the flattened ranks' RECVs */
    uint64_t rk_cap;
    uint32_t *rk_base;       /* [n + 1]: each flattened rank's first RECV in rk */
    uint32_t *rdeps;         /* the flattened ranks' dependencies, in step order */
    uint64_t rdeps_cap;
    uint32_t *cnt;           /* per step of the rank, then fill cursors */
    uint64_t cnt_cap;
} flat_t;

static int flat_oom(flat_t *f)
{
    snprintf(f->err, f->errlen, "out of memory (%llu steps)", (unsigned long long)f->ns);
    return HCCL_E_MEMORY;
}

static void flat_free(flat_t *f)
{
    free(f->rk);
    free(f->rk_base);
    free(f->rdeps);
    free(f->nmap);
    free(f->rmap);
    free(f->cnt);
    hc_sched_free(&f->sc);
}

/* Rank q's steps (f->sc) as records from f->ns on, their first dependents
 * at f->cnt's cursors; its RECVs into f->rk. */
static int flatten_steps(flat_t *f, uint32_t q)
{
    hs_sim_t *s = f->s;
    const hc_sched_t *sc = &f->sc;
    for (uint32_t j = 0; j < sc->nsteps; j++) {
        const hc_step_t *st = &sc->steps[j];
        const uint64_t g = f->ns + j;
        if (st->kind != HC_STEP_SEND && st->kind != HC_STEP_RECV &&
            st->kind != HC_STEP_REDUCE && st->kind != HC_STEP_COPY &&
            st->kind != HC_STEP_NOP) {
            snprintf(f->err, f->errlen, "%s: rank %u step %u is a shared-memory step (kind %u), "
                     "which the simulator does not model", f->name, q, j, st->kind);
            return HCCL_E_NOT_SUPPORT;
        }
        step_t *d = &s->st[g];
        d->kind = st->kind;
        d->peer = st->kind == HC_STEP_REDUCE || st->kind == HC_STEP_COPY ? q : st->peer;
        d->bytes = st->bytes;
        d->aux = st->tag;
        d->qnext = UINT32_MAX;
        d->succ = (uint32_t)f->nsucc + f->cnt[j];
        d->pending = st->ndeps + (st->kind == HC_STEP_RECV);
        if (st->kind == HC_STEP_RECV) {
            if (f->nrecv == f->rk_cap) {
                uint64_t c = f->rk_cap ? 2 * f->rk_cap : 4096;
                rkey_t *x = realloc(f->rk, c * sizeof(rkey_t));
                if (x == NULL)
                    return flat_oom(f);
                f->rk = x;
                f->rk_cap = c;
            }
            f->rk[f->nrecv].key = (uint64_t)st->peer << 20 | st->tag;
            f->rk[f->nrecv].g = (uint32_t)g;
            f->nrecv++;
        }
    }
    return HCCL_SUCCESS;
}

/* Flatten rank q's schedule (f->sc, q < k) after the ranks before it. */
static int flatten_rank(flat_t *f, uint32_t q)
{
    hs_sim_t *s = f->s;
    const hc_sched_t *sc = &f->sc;
    const uint64_t ns = f->ns, nsucc = f->nsucc;
    if (ns + sc->nsteps > s->max_steps || ns + sc->nsteps >= UINT32_MAX ||
        nsucc + sc->ndeps >= UINT32_MAX) {
        snprintf(f->err, f->errlen, "%s on %u ranks needs more than %llu steps (--max-steps; "
                 "about %d bytes of memory each)", f->name, s->n,
                 (unsigned long long)s->max_steps, HS_STEP_BYTES);
        return HCCL_E_MEMORY;
    }
    if (grow_steps(s, ns + sc->nsteps) != 0 ||
        grow_u32(&s->succ, &s->succ_cap, nsucc + sc->ndeps, 4096) != 0 ||
        (f->k < s->n && grow_u32(&f->rdeps, &f->rdeps_cap, nsucc + sc->ndeps, 4096) != 0) ||
        grow_u32(&f->cnt, &f->cnt_cap, (uint64_t)sc->nsteps + 1, 1024) != 0)
        return flat_oom(f);
    s->base[q] = (uint32_t)ns;
    f->rk_base[q] = (uint32_t)f->nrecv;
    uint32_t *cnt = f->cnt;
    memset(cnt, 0, (sc->nsteps + 1) * sizeof(uint32_t));
    for (uint32_t j = 0; j < sc->ndeps; j++)
        cnt[sc->deps[j] + 1]++;
    for (uint32_t j = 0; j < sc->nsteps; j++)
        cnt[j + 1] += cnt[j];
    const int rc = flatten_steps(f, q);
    if (rc != HCCL_SUCCESS)
        return rc;
    /* step j joins the dependents of each of its dependencies */
    for (uint64_t j = 0, o = nsucc; j < sc->nsteps; j++) {
        const hc_step_t *st = &sc->steps[j];
        for (uint32_t x = st->dep_off; x < st->dep_off + st->ndeps; x++) {
            s->succ[nsucc + cnt[sc->deps[x]]++] = (uint32_t)(ns + j);
            if (f->k < s->n)
                f->rdeps[o++] = sc->deps[x];
        }
    }
    f->ns += sc->nsteps;
    f->nsucc += sc->ndeps;
    s->base[q + 1] = (uint32_t)f->ns;
    return HCCL_SUCCESS;
}

/* Build every rank's schedule; flatten those of ranks 0 .. k-1 (k: the
 * period of a rotation of the machine, tried in increasing order, n
 * last), the others must be theirs moved (rank k is built right after
 * rank 0, to try a period cheaply); a rank's dependents from its
 * dependencies (cnt: per step of the rank, then fill cursors). */
static int build_ranks(flat_t *f, hs_build_fn build, void *bctx)
{
    hs_sim_t *s = f->s;
    const uint32_t n = s->n;
    int rc;
restart:
    f->ns = f->nsucc = f->nrecv = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t k = f->k;
        const uint32_t q = k == n ? i : i == 0 ? 0 : i == 1 ? k : i <= k ? i - 1 : i;
        hc_sched_reset(&f->sc);
        rc = build(bctx, q, &f->sc);
        if (rc == HCCL_SUCCESS && f->sc.err)
            rc = f->sc.err;
        if (f->sc.algo)
            f->name = f->sc.algo;
        if (rc != HCCL_SUCCESS) {
            snprintf(f->err, f->errlen, "%s: rank %u's schedule does not build (%d)", f->name,
                     q, rc);
            return rc;
        }
        if (q >= k) { /* not replayed: the same as its image's, or no symmetry */
            if (!same_shifted(s, &f->sc, q, q % k, f->rdeps + s->st[s->base[q % k]].succ)) {
                f->k = machine_period(s, k, f->nmap, f->rmap);
                goto restart;
            }
            continue;
        }
        rc = flatten_rank(f, q);
        if (rc != HCCL_SUCCESS)
            return rc;
    }
    s->st[f->ns].succ = (uint32_t)f->nsucc;
    f->rk_base[f->k] = (uint32_t)f->nrecv;
    return HCCL_SUCCESS;
}

/* Match each SEND with its RECV: (sender, receiver, tag); a RECV of rank
 * p = p0 + j k is its image's, rank p0's from the sender moved by -j k. */
static int match_messages(flat_t *f)
{
    hs_sim_t *s = f->s;
    const uint32_t n = s->n, k = f->k;
    const uint32_t *rk_base = f->rk_base;
    for (uint32_t q = 0; q < k; q++)
        qsort(f->rk + rk_base[q], rk_base[q + 1] - rk_base[q], sizeof(rkey_t), rkey_cmp);
    pairs_t ph = {0};
    int rc = HCCL_SUCCESS;
    f->nsend = 0;
    s->npairs = 0;
    for (uint32_t q = 0; q < k && rc == HCCL_SUCCESS; q++)
        for (uint32_t g = s->base[q]; g < s->base[q + 1]; g++) {
            step_t *d = &s->st[g];
            if (d->kind != HC_STEP_SEND)
                continue;
            const uint32_t p = d->peer, p0 = p % k, img = (q + n - (p - p0)) % n;
            rkey_t key = {(uint64_t)img << 20 | d->aux, 0};
            rkey_t *hit = p < n ? bsearch(&key, f->rk + rk_base[p0],
                                          rk_base[p0 + 1] - rk_base[p0], sizeof(rkey_t),
                                          rkey_cmp)
                                : NULL;
            if (hit == NULL || hit->g == UINT32_MAX) {
                snprintf(f->err, f->errlen, "%s: rank %u sends to rank %u with tag %u, which "
                         "no RECV of rank %u takes", f->name, q, p, d->aux, p);
                rc = HCCL_E_INTERNAL;
                break;
            }
            d->aux = hit->g;
            hit->g = UINT32_MAX; /* taken */
            d->peer = pair_of(s, &ph, q, p);
            if (d->peer == UINT32_MAX) {
                rc = flat_oom(f);
                break;
            }
            f->nsend++;
        }
    free(ph.key);
    free(ph.val);
    if (rc == HCCL_SUCCESS && f->nsend != f->nrecv) {
        snprintf(f->err, f->errlen, "%s: %llu RECV steps but %llu SEND steps", f->name,
                 (unsigned long long)f->nrecv, (unsigned long long)f->nsend);
        rc = HCCL_E_INTERNAL;
    }
    return rc;
}

/* Build, flatten and match (hs_replay's first phase); on success what
 * the replay does not need is freed. */
static int flatten(flat_t *f, hs_build_fn build, void *bctx)
{
    hs_sim_t *s = f->s;
    hc_sched_init(&f->sc, 4);
    f->rk_base = calloc(s->n + 1, sizeof(uint32_t));
    f->nmap = malloc(s->nnodes * sizeof(uint32_t));
    f->rmap = malloc(s->nracks * sizeof(uint32_t));
    if (f->rk_base == NULL || f->nmap == NULL || f->rmap == NULL)
        return flat_oom(f);
    f->k = machine_period(s, 0, f->nmap, f->rmap);
    int rc = build_ranks(f, build, bctx);
    if (rc != HCCL_SUCCESS)
        return rc;
    free(f->cnt);
    f->cnt = NULL;
    hc_sched_free(&f->sc);
    hc_sched_init(&f->sc, 4);
    rc = match_messages(f);
    if (rc != HCCL_SUCCESS)
        return rc;
    free(f->rk);
    f->rk = NULL;
    free(f->rk_base);
    f->rk_base = NULL;
    free(f->rdeps);
    f->rdeps = NULL;
    return HCCL_SUCCESS;
}

/* Run the events of r in time order, each step's dependents as it
 * completes; the number of steps completed. */
static uint64_t run_events(run_t *r)
{
    const hs_sim_t *s = r->s;
    uint64_t done = 0;
    while ((r->h.n || r->nfh || r->fhead < r->fn) && !r->oom) {
        uint32_t g, kind;
        double t;
        if (r->fhead < r->fn) {
            const ev_t *e = &r->fifo[r->fhead++];
            if (e->kind == EV_FLOW && (!r->ch[e->g].active || e->ver != r->ch[e->g].ver))
                continue; /* a rate changed since */
            g = e->g;
            kind = e->kind;
            t = e->t;
        } else {
            r->fhead = r->fn = 0;
            if (r->nfh && (r->h.n == 0 || r->fh[0].t < r->h.v[0].t)) {
                g = (uint32_t)r->fh[0].key;
                kind = EV_FLOW;
                t = r->fh[0].t;
                fh_remove(r, g);
            } else {
                const hev_t e = heap_pop(&r->h);
                g = (uint32_t)e.key;
                kind = (uint32_t)(e.key >> 32);
                t = e.t;
                if (r->h.n) /* the next step's record, while this one runs */
                    __builtin_prefetch(&s->st[(uint32_t)r->h.v[0].key]);
            }
            r->now = t;
        }
        if (kind == EV_ARRIVAL) {
            input(r, g, t);
            continue;
        }
        if (kind == EV_FLOW) {
            flow_event(r, g, t);
            continue;
        }
        done++;
        if (t > r->end)
            r->end = t;
        for (uint32_t x = s->st[g].succ; x < s->st[g + 1].succ; x++)
            input(r, s->succ[x], t);
    }
    return done;
}

/* Replay the flattened steps (hs_replay's second phase): the last
 * step's end into res->time. */
static int replay(flat_t *f, hs_result_t *res)
{
    hs_sim_t *s = f->s;
    const uint32_t n = s->n, nn = s->nnodes, nr = s->nracks;
    run_t r = {.s = s};
    r.nlk = 2 * n + 2 * nn + 2 * nr + (s->m.cpu_bw > 0);
    r.cpu = s->m.cpu_bw > 0 ? r.nlk - 1 : UINT32_MAX;
    r.lk = calloc(r.nlk, sizeof(link_t));
    r.engine = calloc(n, sizeof(double));
    r.cid = malloc(((size_t)s->npairs + 1) * sizeof(uint32_t));
    if (!r.lk || !r.engine || !r.cid || link_orbits(&r, f->k, f->nmap, f->rmap) != 0) {
        run_free(&r);
        return flat_oom(f);
    }
    free(f->nmap);
    free(f->rmap);
    f->nmap = f->rmap = NULL;
    memset(r.cid, 0xff, ((size_t)s->npairs + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < r.nlk; i++)
        r.lk[i].cap = i < 2 * n ? s->m.intra.bw : i < 2 * n + 2 * nn ? s->m.nic.bw
                    : i == r.cpu ? 1.0 /* second of the CPUs a second */ : s->m.uplink_bw;
    for (uint64_t g = 0; g < f->ns; g++)
        if (s->st[g].pending == 0)
            start(&r, (uint32_t)g, 0);
    const uint64_t done = run_events(&r);
    const int oom = r.oom;
    res->time = r.end;
    run_free(&r);
    if (oom)
        return flat_oom(f);
    if (done != f->ns) {
        snprintf(f->err, f->errlen, "%s: %llu of %llu steps never ran (the schedules wait for "
                 "each other)", f->name, (unsigned long long)(f->ns - done),
                 (unsigned long long)f->ns);
        return HCCL_E_INTERNAL;
    }
    return HCCL_SUCCESS;
}

int hs_replay(hs_sim_t *s, hs_build_fn build, void *bctx, hs_result_t *res, char *err,
              size_t errlen)
{
    memset(res, 0, sizeof(*res));
    const double t0 = now_s();
    flat_t f = {.s = s, .err = err, .errlen = errlen, .name = "?"};
    int rc = flatten(&f, build, bctx);
    if (rc == HCCL_SUCCESS) {
        res->build_s = now_s() - t0;
        res->ranks = f.k;
        res->steps = f.ns * (s->n / f.k);
        res->messages = f.nsend * (s->n / f.k);
        const double t1 = now_s();
        rc = replay(&f, res);
        if (rc == HCCL_SUCCESS)
            res->run_s = now_s() - t1;
    }
    flat_free(&f);
    return rc;
}
