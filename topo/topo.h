/*
 * topo/topo.h - the topology model that algorithms see through
 * hc_topo_view_t (topo/view.h).
 *
 * Levels, with the names users see in logs, files and hcomm-topo:
 *
 *   group    a fast group: ranks joined by NVLink, else ranks bound to one
 *            NUMA node (HCCL_GROUP_<n> and the file's group= labels force it)
 *   node     a host: shared memory between its ranks
 *   rack     the hosts behind one switch
 *   cluster  everything
 *
 * Every level has a link class (kind, bandwidth, latency) for the links
 * that cross it, from a built-in table or from the topology file.
 *
 * At init every process describes itself (hc_topo_local_facts, hwloc: a
 * blob that travels in the bootstrap card); hc_topo_create merges all
 * ranks' facts with the declarations (HCCL_TOPO_FILE, or the rank table of
 * HcclCommInitClusterInfo) and the overrides (HCCL_GROUP_<n>,
 * HCCL_NVLINK_MAP) into the model: each rank's group, node and rack, and a
 * ring order in which every group, node and rack is one contiguous run, so
 * that a ring crosses each boundary the fewest times possible (twice per
 * level: out and back) and hierarchical algorithms find their units as
 * ring segments. Split communicators derive theirs from the same cards,
 * without any new exchange.
 *
 * Rank numbers in overrides and files are "world" ranks: the rank each
 * process had in the first communicator this process built (normally the
 * one over MPI_COMM_WORLD), so they keep their meaning in a split.
 *
 * Overrides must be the same on every rank: each card carries a hash of
 * them, and a mismatch, or a file one rank cannot read or parse, fails
 * the communicator on every rank alike (HCCL_E_PARA, with the line).
 */
#ifndef HC_TOPO_H_
#define HC_TOPO_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "topo_int.h"
#include "view.h"

struct hc_config;

enum { HC_TOPO_GROUP = 0, HC_TOPO_NODE = 1, HC_TOPO_RACK = 2, HC_TOPO_CLUSTER = 3,
       HC_TOPO_LEVELS = 4 };
extern const char *const hc_topo_level_names[HC_TOPO_LEVELS];

/* The class of the links that cross a level. */
typedef struct {
    char kind[16];   /* nvlink, shm, shm-xnuma, tcp, net, spine */
    double bw;       /* bytes/s, nominal */
    double lat;      /* seconds, nominal */
    char from[32];   /* where the numbers came from: "built-in", "file line 7" */
} hc_topo_link_t;

typedef struct {
    uint32_t world;      /* override numbering (see above) */
    uint32_t group, node, rack; /* indices, numbered in ring order */
    int32_t numa;        /* NUMA node inside its node, -1 unknown / unbound */
    char device[32];     /* declared or assumed device ("" none) */
    const char *host;    /* card host name */
    hc_topo_facts_t facts;
    int have_facts;
} hc_topo_rank_t;

typedef struct {
    uint32_t node;
    int32_t numa;        /* -1: several / unbound */
    char why[64];        /* how it was formed: "numa 0", "nvlink", "HCCL_GROUP_2", ... */
} hc_topo_group_t;

typedef struct {
    char name[HC_NAME_MAX];
    char addr[HC_NAME_MAX];
    uint32_t rack;
    uint64_t phys;       /* physical host key of its ranks */
    int shared_phys;     /* another declared node is on the same machine */
} hc_topo_node_t;

typedef struct {
    char name[HC_NAME_MAX];
    char sw[HC_NAME_MAX];
} hc_topo_rack_t;

/* A fast link between two ranks of the communicator. */
typedef struct {
    uint32_t a, b;
    char kind[16];
} hc_topo_fastlink_t;

typedef struct hc_topo {
    uint32_t nranks, self;
    char source[1100];   /* "detected", "HCCL_TOPO_FILE=...", "rank table ..." */
    char cluster[HC_NAME_MAX];
    hc_topo_rank_t *r;
    uint32_t ngroups, nnodes, nracks;
    hc_topo_group_t *groups;
    hc_topo_node_t *nodes;
    hc_topo_rack_t *racks;
    hc_topo_fastlink_t *links;
    uint32_t nlinks;
    hc_decl_t decl;      /* devices and links as declared, for the dump */
    hc_topo_link_t level[HC_TOPO_LEVELS];
    int simulated;       /* several declared nodes share one physical host */
    /* the arrays behind the view */
    uint32_t *ring, *pos_of, *group_of, *node_of, *rack_of;
    uint32_t *group_off, *node_off, *rack_off;
    uint32_t *grid, grid_rows, grid_cols;
    const char *unit_level; /* "node" or "group": the unit of HIER / TORUS2D */
} hc_topo_t;

/* One member of the communicator being built. */
typedef struct {
    const char *host;      /* card host name */
    const uint8_t *blob;   /* its hc_topo_local_facts */
    uint32_t world;        /* its world rank (see above) */
} hc_topo_member_t;

/* Describe this process into blob (len bytes, zero-filled first); env: the
 * process-wide configuration (for the override hash), may be NULL. */
void hc_topo_local_facts(const struct hc_config *env, uint8_t *blob, size_t len);

/* Does HCCL_TOPO_FILE place ranks on several nodes? Then a node boundary
 * may run inside one machine (a simulated cluster), and the pairs that
 * cross it need the context's TCP-only UCX worker (a warning without it). */
int hc_topo_wants_tcp(const struct hc_config *env);

/* Two processes (their hc_topo_local_facts) on one machine, one kernel:
 * different host names there are containers or network namespaces, which
 * must talk over the network, not through shared memory or CMA. */
int hc_topo_same_machine(const uint8_t *a, const uint8_t *b);

/* Build the model for n ranks; self is this process's rank. cfg: overrides
 * (HCCL_GROUP_<n>, HCCL_NVLINK_MAP, HCCL_TOPO_FILE, HCCL_TOPO_DUMP_FILE).
 * Returns HCCL_SUCCESS, or HCCL_E_PARA / HCCL_E_MEMORY (logged, naming the
 * variable, file line and value that were wrong). */
int hc_topo_create(uint32_t n, uint32_t self, const hc_topo_member_t *m,
                   const struct hc_config *cfg, hc_topo_t **out);
void hc_topo_destroy(hc_topo_t *t);
/* Forget the first communicator (unit tests build many "first" ones). */
void hc_topo_reset(void);
/* Fill the view algorithms read (points into t). */
void hc_topo_view(const hc_topo_t *t, hc_topo_view_t *v);

/* The lowest level that ranks a and b share (HC_TOPO_GROUP .. CLUSTER);
 * their link is that level's class. a == b gives HC_TOPO_GROUP. */
int hc_topo_pair_level(const hc_topo_t *t, uint32_t a, uint32_t b);
/* Different declared nodes on the same physical host: traffic between
 * them must take the network path (the simulated-host TCP worker). */
int hc_topo_simulated_pair(const hc_topo_t *t, uint32_t a, uint32_t b);

/* Write the model in the topology-file format (topo/topo_file.c). */
int hc_topo_write(const hc_topo_t *t, FILE *f);
/* Human-readable report (hcomm-topo): levels, members, links, ring. */
void hc_topo_print(const hc_topo_t *t, FILE *f);
/* The ring with boundary marks: "0 2 | 4 6 || 1 3 | 5 7" (| group, || node,
 * ||| rack). Returns buf. */
char *hc_topo_ring_text(const hc_topo_t *t, char *buf, size_t len);
/* Crossings of each level boundary along the ring (cyclic). */
void hc_topo_ring_crossings(const hc_topo_t *t, const uint32_t *ring,
                            uint32_t cross[HC_TOPO_LEVELS]);

#endif /* HC_TOPO_H_ */
