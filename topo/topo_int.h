/*
 * topo/topo_int.h - what topo/'s files share and nobody else sees:
 *
 *  - hc_topo_facts_t, the fixed-size record one process writes about itself
 *    (hwloc: packages, NUMA nodes, its binding, GPUs and NICs near it) and
 *    that travels, opaque, in the bootstrap card (hc_card_t.topo);
 *  - hc_decl_t, a parsed description of a cluster: what a topology file
 *    (topo/topo_file.c) or an HCCL rank table (topo/ranktable.c) declares.
 *    hc_topo_create (topo/topo.c) merges declarations, overrides and facts
 *    into the model.
 */
#ifndef HC_TOPO_INT_H_
#define HC_TOPO_INT_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HC_FACTS_MAGIC 0x68746f70u /* "htop" */
#define HC_FACTS_VERSION 1u
#define HC_FACTS_MAXDEV 8
#define HC_NAME_MAX 64

enum { HC_DEV_GPU = 1, HC_DEV_NIC = 2, HC_DEV_IB = 3 };

/* One PCI device near (or not near) this process, as hwloc names it. */
typedef struct {
    char name[16];    /* "cuda0", "eth0", "mlx5_0" */
    char pci[13];     /* "0000:17:00.0", "" when not on PCI */
    uint8_t kind;     /* HC_DEV_* */
    uint8_t near;     /* its locality intersects this process's binding */
    uint8_t nvlink;   /* bit i: NVLink to dev[i] (hwloc NVLinkBandwidth) */
    int16_t numa;     /* NUMA node it hangs off, -1 unknown */
} hc_facts_dev_t;

/* What a process knows about itself (hc_topo_local_facts). Fits HC_TOPO_BLOB. */
typedef struct {
    uint32_t magic, version;
    uint64_t phys;       /* physical host: hash of boot id and host name */
    uint64_t ovr_hash;   /* hash of the topology overrides this process sees */
    int32_t ovr_errno;   /* reading HCCL_TOPO_FILE failed: hc_file_read's code */
    uint8_t hw_ok;       /* hwloc ran */
    uint8_t ndev;
    uint16_t npackages, nnuma, ncores, npus;
    int16_t package, numa; /* the one package / NUMA node holding the binding, -1 */
    uint16_t bound_cores;  /* cores the binding touches */
    uint8_t bound_all;     /* the binding is the whole machine (not bound) */
    char cpus[47];         /* the binding as a list, "0-3,8" */
    hc_facts_dev_t dev[HC_FACTS_MAXDEV];
} hc_topo_facts_t;

/* Decode a blob; 0 if it is not a facts record. */
int hc_facts_decode(const uint8_t *blob, hc_topo_facts_t *f);
/* FNV-1a, for the override hash and the physical host key. */
uint64_t hc_topo_hash(uint64_t h, const void *p, size_t len);
#define HC_HASH_INIT 1469598103934665603ull

/* ---- declarations (topology file, rank table) ------------------------- */

typedef struct {
    char name[HC_NAME_MAX];
    char sw[HC_NAME_MAX]; /* switch */
    int line;
} hc_decl_rack_t;

typedef struct {
    char name[HC_NAME_MAX];
    int rack;             /* index in racks, -1 none */
    char addr[HC_NAME_MAX];
    int nnuma;            /* 0 = not said */
    int line;
} hc_decl_node_t;

typedef struct {
    int node;
    char name[32];
    char kind[16];        /* gpu, nic, npu, ... */
    int numa;             /* -1 not said */
    char pci[32];
    char addr[HC_NAME_MAX];
    int line;
} hc_decl_dev_t;

/* A fast link between two ranks (ra, rb >= 0) or two devices (da, db). */
typedef struct {
    int ra, rb, da, db;
    char kind[16];
    double bw, lat;       /* 0 = not said */
    int line;
} hc_decl_link_t;

typedef struct {
    int set;              /* declared */
    int node;
    int numa;             /* -1 not said */
    int dev;              /* -1 none */
    char group[32];       /* explicit fast-group label, "" none */
    int line;
} hc_decl_rank_t;

typedef struct {
    int set;
    char kind[16];
    double bw, lat;
    int line;
} hc_decl_level_t;

/* A hash index over racks, nodes or devices (topo/topo_file.c). */
typedef struct {
    int *slot;            /* entry index, -1 free */
    uint32_t cap, n;
} hc_decl_index_t;

typedef struct hc_decl {
    char path[1024];
    int json;             /* an HCCL rank table */
    char cluster[HC_NAME_MAX];
    hc_decl_rack_t *racks;
    int nracks, racks_cap;
    hc_decl_node_t *nodes;
    int nnodes, nodes_cap;
    hc_decl_dev_t *devs;
    int ndevs, devs_cap;
    hc_decl_link_t *links;
    int nlinks, links_cap;
    hc_decl_rank_t *ranks; /* indexed by rank */
    int nranks, ranks_cap;
    hc_decl_level_t level[4];
    uint32_t port;        /* rank table: rendezvous port ("hcomm_port"), 0 = not said */
    hc_decl_index_t ix[3]; /* by name: racks, nodes, devices (node and name) */
} hc_decl_t;

void hc_decl_init(hc_decl_t *d);
void hc_decl_free(hc_decl_t *d);
/* Find or add; index, or -1 without memory. */
int hc_decl_rack(hc_decl_t *d, const char *name, int line);
int hc_decl_node(hc_decl_t *d, const char *name, int line);
int hc_decl_dev(hc_decl_t *d, int node, const char *name, int line);
int hc_decl_find_node(const hc_decl_t *d, const char *name);
/* Make room for rank r; the entry, or NULL without memory. */
hc_decl_rank_t *hc_decl_rank(hc_decl_t *d, int r);
hc_decl_link_t *hc_decl_add_link(hc_decl_t *d);

/* The largest topology file or rank table read (src/base/file.h): a rank table
 * of 100k ranks takes about 10 MB. */
#define HC_TOPO_FILE_MAX ((size_t)64 << 20)

/* Read a topology file or a rank table (JSON, detected by its first
 * character) into d. On error returns HCCL_E_PARA (or
 * HCCL_E_OPEN_FILE_FAILURE) and writes "line N: what" into err. */
int hc_decl_load(const char *path, hc_decl_t *d, char *err, size_t errlen);
int hc_decl_parse_text(const char *text, hc_decl_t *d, char *err, size_t errlen);
int hc_decl_parse_json(const char *text, hc_decl_t *d, char *err, size_t errlen);

/* A name the topology file can hold (and so the dump of a model): letters,
 * digits and _.:-+@, 1 to max-1 characters. */
int hc_decl_name_ok(const char *s, size_t max);

/* "12.5GB/s", "100Gb/s" -> bytes/s; "2us" -> seconds. 0 ok, -1 bad. */
int hc_parse_bw(const char *s, double *out);
int hc_parse_lat(const char *s, double *out);
/* The reverse, for files and logs ("12.5GB/s", "2us"). */
void hc_fmt_bw(double bw, char *buf, size_t len);
void hc_fmt_lat(double lat, char *buf, size_t len);

/* Level names, in order: group, node, rack, cluster. */
int hc_topo_level_index(const char *name);

#endif /* HC_TOPO_INT_H_ */
