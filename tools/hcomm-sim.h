/*
 * tools/hcomm-sim.h - time hcomm's real schedules against a model of a
 * machine (docs/SCALE.md).
 *
 * The schedules are the ones the library runs: every rank's is built by
 * coll/'s builders from the topology view topo/ makes of the machine; the
 * simulator replays their steps as a discrete-event simulation:
 *
 * - a step starts when the steps it depends on have completed (a RECV
 *   also needs its message to have arrived), as src/exec/exec.c posts them;
 * - a message (SEND) joins its channel, the ordered pair (sender,
 *   receiver), as a transport connection: a channel's messages go one
 *   after the other. The message at a channel's head flows over the links
 *   of its path, each link's bandwidth shared equally among the flows on
 *   it (a flow gets the least of its links' shares, recomputed whenever a
 *   flow starts or ends); the SEND completes when the last byte left, the
 *   RECV's message arrives one latency later;
 * - a REDUCE costs bytes / reduce_bw and a COPY bytes / copy_bw of the
 *   rank's one compute engine, in the order they became ready; a NOP
 *   costs nothing.
 *
 * Links, each direction separately: a port per rank into its node's
 * fabric (intra: NVLink, shared memory), the node's NIC (nic, shared by
 * its ranks), and per rack an uplink and a downlink to the spine
 * (uplink_bw; 0: not a bottleneck). Inside a node a message takes the
 * sender's and the receiver's ports; between nodes of a rack both NICs;
 * between racks both NICs, the sender rack's uplink and the receiver
 * rack's downlink, with spine_lat more latency. With cpu_bw, a message
 * between nodes also takes one machine-wide CPU link: it needs
 * bytes / cpu_bw + cpu_msg seconds of it, shared equally among the
 * messages on it.
 *
 * Every rank's schedule is built; when rotating the ranks is a symmetry
 * of the machine and of those schedules, only one period of ranks is
 * replayed (hs_set_every_rank).
 *
 * Shared-memory and single-copy algorithms (DIRECT, CMA: flags and loads
 * between the processes of one host) are not simulated: the arguments say
 * there is no shared staging, as on several hosts.
 */
#ifndef HC_TOOLS_SIM_H_
#define HC_TOOLS_SIM_H_

#include <stdint.h>
#include <stdio.h>

#include "coll/coll.h"

typedef struct {
    double lat; /* seconds */
    double bw;  /* bytes/s */
} hs_link_t;

typedef struct {
    const char *name;   /* preset name, or "custom" */
    const char *source; /* where the numbers come from */
    uint32_t nodes, rpn, racks; /* shorthand placement (nodes 0: a topology file) */
    int round_robin;    /* shorthand: rank i on node i % nodes (else contiguous) */
    hs_link_t intra;    /* rank port inside a node */
    hs_link_t nic;      /* a node's NIC */
    double uplink_bw;   /* a rack's uplink to the spine, and downlink (0, or at least
                         * the rack's NICs together: never the bottleneck, left out) */
    double spine_lat;   /* added latency between racks */
    double reduce_bw;   /* bytes/s a rank reduces (output bytes) */
    double copy_bw;     /* bytes/s a rank copies */
    /* The CPUs that move every message between nodes (one machine's cores
     * under emulated hosts; 0: not a bottleneck, left out): cpu_bw bytes/s
     * of all such traffic together, cpu_msg seconds of the whole machine a
     * message (1 / its message rate). */
    double cpu_bw;
    double cpu_msg;
} hs_machine_t;

/* The presets (--machine NAME); NULL if unknown. */
const hs_machine_t *hs_preset(const char *name);
/* Print the presets with their sources. */
void hs_presets_print(FILE *f);

/* The machine options (--machine NAME first, then --nodes, --ranks-per-node,
 * --racks, --round-robin, --topo FILE, --intra-bw, --intra-lat, --nic-bw,
 * --nic-lat, --uplink-bw, --spine-lat, --reduce-bw, --copy-bw, --cpu-bw,
 * --cpu-msg; "--opt v" or
 * "--opt=v"), taken out of argv (the rest stays, in order, for the tool's
 * own parser). *topo: --topo, else $HCCL_TOPO_FILE when no shape is given.
 * 0, or -1 with the reason in err. */
int hs_machine_args(int *argc, char **argv, hs_machine_t *m, const char **topo, char *err,
                    size_t errlen);

typedef struct hs_sim hs_sim_t;

/* A simulator for the machine: its placement from topo_file (an
 * HCCL_TOPO_FILE; NULL: the machine's nodes x rpn in racks), the
 * selection table from the environment (HCCL_TUNE_FILE, as a job would
 * see it). Returns NULL with the reason in err. */
hs_sim_t *hs_create(const hs_machine_t *m, const char *topo_file, char *err, size_t errlen);
void hs_destroy(hs_sim_t *s);
uint32_t hs_nranks(const hs_sim_t *s);
const hc_topo_view_t *hs_view(const hs_sim_t *s);

typedef struct {
    double time;        /* seconds: the slowest rank's completion */
    uint64_t steps;     /* steps of all ranks */
    uint64_t messages;  /* SEND steps of all ranks */
    uint32_t ranks;     /* ranks replayed: all, or those of one period of a symmetry
                         * (hs_set_every_rank) */
    double build_s;     /* CPU seconds building and indexing the schedules */
    double run_s;       /* CPU seconds of the event simulation */
} hs_result_t;

/* Most steps (of the ranks replayed) hs_run accepts, and the memory a step
 * takes (about: its record, its dependents, a RECV's matching key). */
#define HS_MAX_STEPS_DEFAULT 100000000ull
#define HS_STEP_BYTES 40
void hs_set_max_steps(hs_sim_t *s, uint64_t max);

/* Replay by symmetry (the default): when rotating the ranks by k (rank r
 * to r + k mod n) maps the machine's nodes onto nodes and racks onto
 * racks, and every rank's schedule, as built, is that of rank r - k with
 * its peers moved by k, only ranks 0 .. k-1 are replayed (the least such
 * k; hs_replay, tools/hcomm-sim-core.c): the same times, steps and
 * messages as replaying every rank. on: replay every rank. */
void hs_set_every_rank(hs_sim_t *s, int on);

/* Time collective coll of `bytes` (one rank's count, float32 sum, root 0)
 * with algorithm algo (NULL: the built-in selection, or HCCL_TUNE_FILE).
 * blind: a flat view (no nodes, racks or groups; the ring in rank order): what a
 * topology-blind library would run. Returns HCCL_SUCCESS; HCCL_E_NOT_SUPPORT
 * when the algorithm cannot run here (why in err); HCCL_E_PARA, HCCL_E_MEMORY
 * with the reason in err. *chosen: the algorithm that ran. */
int hs_run(hs_sim_t *s, hc_coll_t coll, uint64_t bytes, const char *algo, int blind,
           const hc_algo_t **chosen, hs_result_t *res, char *err, size_t errlen);

/* Replay schedules that build(ctx, rank, sched) makes for every rank (an
 * empty, initialised sched each time): what hs_run does with an
 * algorithm's builder, and what the tests do with hand-made schedules. */
typedef int (*hs_build_fn)(void *ctx, uint32_t rank, hc_sched_t *s);
int hs_replay(hs_sim_t *s, hs_build_fn build, void *ctx, hs_result_t *res, char *err,
              size_t errlen);

/* nccl-tests' bus bandwidth factor of coll on n ranks (PERF.md). */
double hs_busbw_factor(hc_coll_t coll, uint32_t n);

/* "64K" "1M" "1.5G" "4096" -> bytes; -1 on a bad value. */
int hs_parse_size(const char *s, uint64_t *out);
/* "100Gb/s" "12.5GB/s" "300mbit" "1e9" (bytes/s) -> bytes/s; -1 if bad. */
int hs_parse_bw(const char *s, double *out);
/* "2us" "1.5ms" "800ns" "0.001" (s) -> seconds; -1 if bad. */
int hs_parse_time(const char *s, double *out);

#endif /* HC_TOOLS_SIM_H_ */
