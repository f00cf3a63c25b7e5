/*
 * topo/topo.c - the topology model (see topo.h): placement of every rank
 * (node, NUMA, device, fast group, rack) from declarations, overrides and
 * detected facts, in that order of precedence; the ring order; the level
 * link classes; logging and the human-readable report.
 *
 * Placement, per rank:
 *   node   the file's / rank table's rank line, else its host name (plus
 *          the machine's boot id: equal host names on two machines stay two
 *          nodes);
 *   rack   the node's declared rack, else one rack for all;
 *   group  HCCL_GROUP_<n> > the file's group= label > NVLink components
 *          (file links, HCCL_NVLINK_MAP, hwloc's NVLink) > the NUMA node the
 *          rank is bound to > the whole node.
 *
 * Ring: racks, then nodes, then groups, each a contiguous run, in order of
 * their lowest communicator rank; inside a group, along its fast links
 * when it has them (so that an NVLink ring is followed), else by rank.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "topo.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <hccl/hccl_types.h>

#include "src/base/env.h"
#include "src/base/file.h"
#include "src/base/log.h"

const char *const hc_topo_level_names[HC_TOPO_LEVELS] = {"group", "node", "rack", "cluster"};

/* Nominal link classes. Where each number comes from: */
static const struct {
    const char *kind;
    double bw, lat;
} link_table[] = {
    /* NVLink 3 (A100): 12 links x 25 GB/s per direction; ~1.5 us through NCCL */
    {"nvlink", 300e9, 1.5e-6},
    /* this machine (PERF.md): memcpy 14.7 GB/s per core, UCX shm tag latency 0.53 us */
    {"shm", 14e9, 0.5e-6},
    /* across NUMA nodes: about 70% of local memory bandwidth, a little more latency */
    {"shm-xnuma", 10e9, 0.7e-6},
    /* UCX over TCP loopback on this machine (UCX-FACTS.md): 3.6 GB/s, 8.8 us */
    {"tcp", 3.6e9, 8.8e-6},
    /* 100 Gb/s InfiniBand / RoCE through one switch: 12.5 GB/s, ~2 us */
    {"net", 12.5e9, 2e-6},
    /* between racks over a 2:1 oversubscribed spine: half the bandwidth, two more hops */
    {"spine", 6.25e9, 4e-6},
};

static int link_lookup(const char *kind, double *bw, double *lat)
{
    for (size_t i = 0; i < sizeof(link_table) / sizeof(link_table[0]); i++)
        if (strcmp(link_table[i].kind, kind) == 0) {
            *bw = link_table[i].bw;
            *lat = link_table[i].lat;
            return 0;
        }
    return -1;
}

/* Local indices (position of a world rank among its node's world ranks),
 * learnt from the first communicator, so that HCCL_NVLINK_MAP keeps its
 * meaning in a split that sees only part of a node. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_first_done;
static uint32_t g_nworld, *g_local;

static char g_err[1400];

static int err_para(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int err_para(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_err, sizeof(g_err), fmt, ap);
    va_end(ap);
    HC_ERROR(HC_SUB_TOPO, "%s", g_err);
    return HCCL_E_PARA;
}

/* ---- small helpers ------------------------------------------------------- */

static uint32_t uf_find(uint32_t *p, uint32_t x)
{
    while (p[x] != x)
        x = p[x] = p[p[x]];
    return x;
}

static void uf_join(uint32_t *p, uint32_t a, uint32_t b)
{
    a = uf_find(p, a);
    b = uf_find(p, b);
    if (a != b)
        p[a < b ? b : a] = a < b ? a : b; /* the smaller rank is the root */
}

/* "0,1,4-7" (world ranks). Returns 0, or -1 with why. */
static int parse_rank_list(const char *s, uint32_t **out, uint32_t *n, char *why, size_t wl)
{
    uint32_t cap = 0, cnt = 0, *v = NULL;
    const char *p = s;
    while (*p) {
        char *end;
        if (*p < '0' || *p > '9')
            goto bad;
        unsigned long a = strtoul(p, &end, 10), b = a;
        p = end;
        if (*p == '-') {
            p++;
            if (*p < '0' || *p > '9')
                goto bad;
            b = strtoul(p, &end, 10);
            p = end;
        }
        if (b < a || b >= (1u << 20))
            goto bad;
        for (unsigned long r = a; r <= b; r++) {
            if (cnt == cap) {
                cap = cap ? cap * 2 : 16;
                uint32_t *nv = realloc(v, cap * sizeof(uint32_t));
                if (nv == NULL) {
                    free(v);
                    snprintf(why, wl, "out of memory");
                    return -1;
                }
                v = nv;
            }
            v[cnt++] = (uint32_t)r;
        }
        if (*p == ',')
            p++;
        else if (*p)
            goto bad;
    }
    if (cnt == 0)
        goto bad;
    *out = v;
    *n = cnt;
    return 0;
bad:
    free(v);
    snprintf(why, wl, "expected a comma list of rank numbers, e.g. 0,1,2,3 or 0-3");
    return -1;
}

/* ---- building ------------------------------------------------------------- */

typedef struct {
    char node_key[160]; /* declared name, or host name + machine */
    int decl_node;      /* index in decl.nodes, -1 */
    uint32_t node;      /* provisional node index */
    char gkey[48];      /* group key inside the node */
    char why[64];
    uint32_t local;     /* index among the node's ranks, by world rank */
} place_t;

typedef struct {
    hc_topo_t *t;
    const struct hc_config *cfg;
    place_t *pl;
    uint32_t *uf;       /* fast-link union-find over comm ranks */
    int *linked;        /* rank has a fast link */
    int first;          /* the process's first communicator */
    const char *srcname; /* "HCCL_TOPO_FILE=x" or "rank table x" */
} build_t;

static int add_fastlink(build_t *b, uint32_t x, uint32_t y, const char *kind)
{
    hc_topo_t *t = b->t;
    for (uint32_t k = 0; k < t->nlinks; k++)
        if ((t->links[k].a == x && t->links[k].b == y) || (t->links[k].a == y && t->links[k].b == x))
            return HCCL_SUCCESS;
    hc_topo_fastlink_t *nl = realloc(t->links, (t->nlinks + 1) * sizeof(*nl));
    if (nl == NULL)
        return HCCL_E_MEMORY;
    t->links = nl;
    nl[t->nlinks].a = x;
    nl[t->nlinks].b = y;
    snprintf(nl[t->nlinks].kind, sizeof(nl[t->nlinks].kind), "%s", kind);
    t->nlinks++;
    uf_join(b->uf, x, y);
    b->linked[x] = b->linked[y] = 1;
    return HCCL_SUCCESS;
}

static int comm_rank_of_world(const hc_topo_t *t, uint32_t w)
{
    for (uint32_t i = 0; i < t->nranks; i++)
        if (t->r[i].world == w)
            return (int)i;
    return -1;
}

/* Every card must carry the same override hash; a rank that could not
 * read the file says so. Same verdict on every rank: same cards. */
static int check_overrides(build_t *b)
{
    hc_topo_t *t = b->t;
    for (uint32_t i = 0; i < t->nranks; i++) {
        const hc_topo_facts_t *f = &t->r[i].facts;
        if (!t->r[i].have_facts)
            continue;
        char why[128];
        if (f->ovr_errno)
            return err_para("rank %u cannot read HCCL_TOPO_FILE=%s: %s; every rank must see the "
                            "same topology file", i, b->cfg->topo_file,
                            hc_file_strerror(f->ovr_errno, HC_TOPO_FILE_MAX, why, sizeof(why)));
    }
    for (uint32_t i = 1; i < t->nranks; i++)
        if (t->r[i].have_facts && t->r[0].have_facts &&
            t->r[i].facts.ovr_hash != t->r[0].facts.ovr_hash)
            return err_para("rank 0 and rank %u see different topology overrides "
                            "(HCCL_GROUP_<n>, HCCL_NVLINK_MAP or the contents of HCCL_TOPO_FILE); "
                            "they must be the same on every rank", i);
    return HCCL_SUCCESS;
}

/* Whether the declarations place the ranks (*any: all of them; some but
 * not all, or a rank beyond the job, is an error). */
static int check_declared(build_t *b, int *any)
{
    hc_topo_t *t = b->t;
    const hc_decl_t *d = &t->decl;
    const uint32_t n = t->nranks;
    int any_declared = 0, all_declared = 1;
    for (uint32_t i = 0; i < n; i++) {
        int dr = (int)t->r[i].world < d->nranks && d->ranks[t->r[i].world].set;
        any_declared |= dr;
        all_declared &= dr;
    }
    if (any_declared && !all_declared) {
        for (uint32_t i = 0; i < n; i++)
            if (!((int)t->r[i].world < d->nranks && d->ranks[t->r[i].world].set))
                return err_para("%s places some ranks but not rank %u: give every rank a rank "
                                "line, or none (then ranks are placed by host name)", b->srcname,
                                t->r[i].world);
    }
    /* a rank beyond the job is a mistake even when no rank is in it (then
     * nothing would be placed by the file at all) */
    if (b->first && d->nranks > (int)n && !d->json) {
        for (int w = (int)n; w < d->nranks; w++)
            if (d->ranks[w].set)
                return err_para("%s line %d: rank %d, but the job has %u ranks (0..%u)",
                                b->srcname, d->ranks[w].line, w, n, n - 1);
    }
    if (b->first && d->json && d->nranks != (int)n)
        return err_para("%s lists %d ranks but the communicator has %u", b->srcname, d->nranks, n);
    *any = any_declared;
    return HCCL_SUCCESS;
}

/* Each rank's node key: its declared node, else its host and machine. */
static void node_keys(build_t *b, int any_declared)
{
    hc_topo_t *t = b->t;
    const hc_decl_t *d = &t->decl;
    const uint32_t n = t->nranks;
    for (uint32_t i = 0; i < n; i++) {
        place_t *p = &b->pl[i];
        hc_topo_rank_t *r = &t->r[i];
        p->decl_node = -1;
        if (any_declared) {
            const hc_decl_rank_t *dr = &d->ranks[r->world];
            p->decl_node = dr->node;
            snprintf(p->node_key, sizeof(p->node_key), "%s", d->nodes[dr->node].name);
            r->numa = dr->numa;
            if (dr->dev >= 0)
                snprintf(r->device, sizeof(r->device), "%s", d->devs[dr->dev].name);
        } else {
            /* by host name, told apart by machine */
            snprintf(p->node_key, sizeof(p->node_key), "%s\001%016llx", r->host,
                     (unsigned long long)(r->have_facts ? r->facts.phys : 0));
            p->decl_node = hc_decl_find_node(d, r->host);
            r->numa = -1;
        }
        if (r->numa < 0 && r->have_facts)
            r->numa = r->facts.numa;
    }
}

/* The nodes, in order of their lowest comm rank, and each rank's node
 * (b->pl[i].node); *out has *nn entries. */
static int collect_nodes(build_t *b, int any_declared, hc_topo_node_t **out, uint32_t *nn_out)
{
    hc_topo_t *t = b->t;
    const hc_decl_t *d = &t->decl;
    const uint32_t n = t->nranks;
    hc_topo_node_t *nodes = calloc(n, sizeof(*nodes));
    char (*keys)[160] = calloc(n, 160);
    if (nodes == NULL || keys == NULL) {
        free(nodes);
        free(keys);
        return HCCL_E_MEMORY;
    }
    uint32_t nn = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k;
        for (k = 0; k < nn; k++)
            if (strcmp(keys[k], b->pl[i].node_key) == 0)
                break;
        if (k == nn) {
            snprintf(keys[nn], 160, "%s", b->pl[i].node_key);
            hc_topo_node_t *nd = &nodes[nn];
            if (any_declared) {
                snprintf(nd->name, sizeof(nd->name), "%s", b->pl[i].node_key);
            } else {
                /* the host name; a second machine with the same name gets #2 */
                int dup = 0;
                for (uint32_t j = 0; j < nn; j++)
                    dup += strncmp(nodes[j].name, t->r[i].host, strlen(t->r[i].host)) == 0;
                if (dup)
                    snprintf(nd->name, sizeof(nd->name), "%.50s#%d", t->r[i].host, dup + 1);
                else
                    snprintf(nd->name, sizeof(nd->name), "%s", t->r[i].host);
            }
            int dn = b->pl[i].decl_node;
            if (dn >= 0 && d->nodes[dn].addr[0])
                snprintf(nd->addr, sizeof(nd->addr), "%s", d->nodes[dn].addr);
            nd->phys = t->r[i].have_facts ? t->r[i].facts.phys : 0;
            nd->rack = UINT32_MAX;
            nn++;
        }
        b->pl[i].node = k;
    }
    free(keys);
    *out = nodes;
    *nn_out = nn;
    return HCCL_SUCCESS;
}

/* A declared node cannot span machines (no shared memory). */
static int check_span(build_t *b, int any_declared, const hc_topo_node_t *nodes)
{
    hc_topo_t *t = b->t;
    const hc_decl_t *d = &t->decl;
    const uint32_t n = t->nranks;
    for (uint32_t i = 0; i < n; i++) {
        const hc_topo_node_t *nd = &nodes[b->pl[i].node];
        if (t->r[i].have_facts && nd->phys && t->r[i].facts.phys != nd->phys) {
            uint32_t j;
            for (j = 0; j < i; j++)
                if (b->pl[j].node == b->pl[i].node)
                    break;
            int line = any_declared ? d->ranks[t->r[i].world].line : 0;
            if (line > 0)
                return err_para("%s line %d: node '%s' holds rank %u (on host %s) and rank %u "
                                "(on host %s), which run on different machines", b->srcname,
                                line, nd->name, t->r[j].world, t->r[j].host, t->r[i].world,
                                t->r[i].host);
            return err_para("%s: node '%s' holds rank %u (on host %s) and rank %u (on host %s), "
                            "which run on different machines", b->srcname, nd->name,
                            t->r[j].world, t->r[j].host, t->r[i].world, t->r[i].host);
        }
    }
    return HCCL_SUCCESS;
}

/* Local indices: by world rank inside the node; a split keeps those of
 * the first communicator. */
static void local_indices(build_t *b)
{
    hc_topo_t *t = b->t;
    const uint32_t n = t->nranks;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t l = 0;
        for (uint32_t j = 0; j < n; j++)
            l += b->pl[j].node == b->pl[i].node && t->r[j].world < t->r[i].world;
        b->pl[i].local = l;
    }
    pthread_mutex_lock(&g_lock);
    if (b->first) {
        uint32_t maxw = 0;
        for (uint32_t i = 0; i < n; i++)
            if (t->r[i].world + 1 > maxw)
                maxw = t->r[i].world + 1;
        free(g_local);
        g_local = calloc(maxw, sizeof(uint32_t));
        g_nworld = g_local ? maxw : 0;
        for (uint32_t i = 0; i < n && g_local; i++)
            g_local[t->r[i].world] = b->pl[i].local;
    } else if (g_local) {
        for (uint32_t i = 0; i < n; i++)
            if (t->r[i].world < g_nworld)
                b->pl[i].local = g_local[t->r[i].world];
    }
    pthread_mutex_unlock(&g_lock);
}

static int place_nodes(build_t *b)
{
    int any_declared = 0;
    int rc = check_declared(b, &any_declared);
    if (rc != HCCL_SUCCESS)
        return rc;
    node_keys(b, any_declared);
    hc_topo_node_t *nodes;
    uint32_t nn;
    rc = collect_nodes(b, any_declared, &nodes, &nn);
    if (rc != HCCL_SUCCESS)
        return rc;
    rc = check_span(b, any_declared, nodes);
    if (rc != HCCL_SUCCESS) {
        free(nodes);
        return rc;
    }
    b->t->nodes = nodes;
    b->t->nnodes = nn;
    local_indices(b);
    return HCCL_SUCCESS;
}

static int place_racks(build_t *b)
{
    hc_topo_t *t = b->t;
    const hc_decl_t *d = &t->decl;
    t->racks = calloc(t->nnodes + 1, sizeof(hc_topo_rack_t));
    if (t->racks == NULL)
        return HCCL_E_MEMORY;
    for (uint32_t i = 0; i < t->nranks; i++) {
        hc_topo_node_t *nd = &t->nodes[b->pl[i].node];
        if (nd->rack != UINT32_MAX)
            continue;
        int dn = b->pl[i].decl_node;
        const char *rname = dn >= 0 && d->nodes[dn].rack >= 0 ? d->racks[d->nodes[dn].rack].name
                                                                : (d->nracks ? "default" : "rack0");
        const char *sw = dn >= 0 && d->nodes[dn].rack >= 0 ? d->racks[d->nodes[dn].rack].sw : "";
        uint32_t k;
        for (k = 0; k < t->nracks; k++)
            if (strcmp(t->racks[k].name, rname) == 0)
                break;
        if (k == t->nracks) {
            snprintf(t->racks[k].name, sizeof(t->racks[k].name), "%s", rname);
            snprintf(t->racks[k].sw, sizeof(t->racks[k].sw), "%s", sw);
            t->nracks++;
        }
        nd->rack = k;
    }
    snprintf(t->cluster, sizeof(t->cluster), "%s", d->cluster[0] ? d->cluster : "cluster");
    return HCCL_SUCCESS;
}

/* Fast links from the file, HCCL_NVLINK_MAP and hwloc. */
static int place_links(build_t *b)
{
    hc_topo_t *t = b->t;
    const hc_decl_t *d = &t->decl;
    const uint32_t n = t->nranks;
    int rc;
    for (int k = 0; k < d->nlinks; k++) {
        const hc_decl_link_t *l = &d->links[k];
        if (l->ra >= 0) {
            int a = comm_rank_of_world(t, (uint32_t)l->ra), c = comm_rank_of_world(t, (uint32_t)l->rb);
            if (a < 0 || c < 0)
                continue; /* not in this communicator */
            if (b->pl[a].node != b->pl[c].node)
                return err_para("%s line %d: link %d %d joins ranks on different nodes (%s, %s); "
                                "fast links join ranks of one node", b->srcname, l->line, l->ra,
                                l->rb, t->nodes[b->pl[a].node].name, t->nodes[b->pl[c].node].name);
            if ((rc = add_fastlink(b, (uint32_t)a, (uint32_t)c, l->kind)))
                return rc;
        } else {
            /* devices: every pair of ranks using the two devices */
            for (uint32_t i = 0; i < n; i++)
                for (uint32_t j = 0; j < n; j++) {
                    if (i == j || b->pl[i].decl_node != d->devs[l->da].node ||
                        b->pl[j].decl_node != d->devs[l->db].node)
                        continue;
                    if (strcmp(t->r[i].device, d->devs[l->da].name) == 0 &&
                        strcmp(t->r[j].device, d->devs[l->db].name) == 0 &&
                        (rc = add_fastlink(b, i, j, l->kind)))
                        return rc;
                }
        }
    }
    const char *map = b->cfg->nvlink_map;
    if (map[0]) {
        const char *p = map;
        while (*p) {
            char *end;
            if (*p < '0' || *p > '9')
                goto bad;
            unsigned long x = strtoul(p, &end, 10);
            if (*end != ':' || end[1] < '0' || end[1] > '9')
                goto bad;
            unsigned long y = strtoul(end + 1, &end, 10);
            p = end;
            if (*p == ',' && p[1] != '\0')
                p++;
            else if (*p)
                goto bad;
            if (x == y)
                return err_para("HCCL_NVLINK_MAP='%s': %lu:%lu links a device to itself", map, x, y);
            int hit = 0;
            for (uint32_t i = 0; i < n; i++)
                for (uint32_t j = 0; j < n; j++)
                    if (b->pl[i].node == b->pl[j].node && b->pl[i].local == x &&
                        b->pl[j].local == y) {
                        hit = 1;
                        if ((rc = add_fastlink(b, i, j, "nvlink")))
                            return rc;
                    }
            if (!hit && b->first)
                return err_para("HCCL_NVLINK_MAP='%s': %lu:%lu names a local index that no node "
                                "has (indices count the ranks of one node, from 0)", map, x, y);
        }
    } else {
        /* hwloc's NVLink: local rank i drives the node's GPU i (mod count) */
        for (uint32_t i = 0; i < n; i++) {
            const hc_topo_facts_t *fi = &t->r[i].facts;
            if (!t->r[i].have_facts || t->r[i].device[0])
                continue;
            int gi[HC_FACTS_MAXDEV], ng = 0;
            for (int k = 0; k < fi->ndev; k++)
                if (fi->dev[k].kind == HC_DEV_GPU)
                    gi[ng++] = k;
            if (ng == 0)
                continue;
            const hc_facts_dev_t *mine = &fi->dev[gi[b->pl[i].local % (uint32_t)ng]];
            for (uint32_t j = 0; j < n; j++) {
                if (j == i || b->pl[j].node != b->pl[i].node)
                    continue;
                const hc_facts_dev_t *theirs = &fi->dev[gi[b->pl[j].local % (uint32_t)ng]];
                int idx = (int)(theirs - fi->dev);
                if ((mine->nvlink >> idx) & 1) {
                    if ((rc = add_fastlink(b, i, j, "nvlink")))
                        return rc;
                }
            }
        }
    }
    return HCCL_SUCCESS;
bad:
    return err_para("HCCL_NVLINK_MAP='%s': expected pairs a:b of local device / rank indices "
                    "separated by commas, e.g. 0:1,1:2,2:3,3:0", map);
}

static int place_groups(build_t *b)
{
    hc_topo_t *t = b->t;
    const hc_decl_t *d = &t->decl;
    const struct hc_config *cfg = b->cfg;
    const uint32_t n = t->nranks;
    char why[160];
    /* default: links, then NUMA, then the node */
    for (uint32_t i = 0; i < n; i++) {
        place_t *p = &b->pl[i];
        const hc_topo_rank_t *r = &t->r[i];
        const hc_decl_rank_t *dr = (int)r->world < d->nranks && d->ranks[r->world].set
                                       ? &d->ranks[r->world] : NULL;
        if (dr && dr->group[0]) {
            snprintf(p->gkey, sizeof(p->gkey), "l:%s", dr->group);
            if (d->json)
                snprintf(p->why, sizeof(p->why), "rank table server");
            else
                snprintf(p->why, sizeof(p->why), "group=%s (line %d)", dr->group, dr->line);
        } else if (b->linked[i]) {
            snprintf(p->gkey, sizeof(p->gkey), "c:%u", uf_find(b->uf, i));
            snprintf(p->why, sizeof(p->why), "%s", "nvlink");
        } else if (r->numa >= 0) {
            snprintf(p->gkey, sizeof(p->gkey), "n:%d", r->numa);
            snprintf(p->why, sizeof(p->why), "numa %d", r->numa);
        } else {
            snprintf(p->gkey, sizeof(p->gkey), "u");
            snprintf(p->why, sizeof(p->why), "node (no NUMA binding)");
        }
    }
    /* HCCL_GROUP_<n> wins */
    int *owner = malloc(n * sizeof(int));
    if (owner == NULL)
        return HCCL_E_MEMORY;
    for (uint32_t i = 0; i < n; i++)
        owner[i] = -1;
    for (uint32_t g = 0; g < cfg->ngroups; g++) {
        if (cfg->groups[g] == NULL)
            continue;
        uint32_t *list, cnt;
        if (parse_rank_list(cfg->groups[g], &list, &cnt, why, sizeof(why))) {
            free(owner);
            return err_para("HCCL_GROUP_%u='%s': %s", g, cfg->groups[g], why);
        }
        int first_member = -1;
        for (uint32_t k = 0; k < cnt; k++) {
            int c = comm_rank_of_world(t, list[k]);
            if (c < 0) {
                if (b->first) {
                    const uint32_t bad = list[k];
                    free(list);
                    free(owner);
                    return err_para("HCCL_GROUP_%u='%s': rank %u does not exist (the job has %u "
                                    "ranks)", g, cfg->groups[g], bad, n);
                }
                continue; /* not in this communicator */
            }
            if (owner[c] >= 0) {
                free(list);
                int prev = owner[c];
                free(owner);
                if ((uint32_t)prev == g)
                    return err_para("HCCL_GROUP_%u='%s': rank %u is listed twice", g,
                                    cfg->groups[g], t->r[c].world);
                return err_para("HCCL_GROUP_%u='%s': rank %u is already in HCCL_GROUP_%d", g,
                                cfg->groups[g], t->r[c].world, prev);
            }
            if (first_member < 0)
                first_member = c;
            else if (b->pl[c].node != b->pl[first_member].node) {
                free(list);
                free(owner);
                return err_para("HCCL_GROUP_%u='%s': ranks %u and %u are on different nodes (%s, "
                                "%s); a fast group lies inside one node", g, cfg->groups[g],
                                t->r[first_member].world, t->r[c].world,
                                t->nodes[b->pl[first_member].node].name,
                                t->nodes[b->pl[c].node].name);
            }
            owner[c] = (int)g;
            snprintf(b->pl[c].gkey, sizeof(b->pl[c].gkey), "h:%u", g);
            snprintf(b->pl[c].why, sizeof(b->pl[c].why), "HCCL_GROUP_%u", g);
        }
        free(list);
    }
    free(owner);
    return HCCL_SUCCESS;
}

/* Order: rack, node, group by lowest comm rank; inside a group by links. */
/* Group g's ranks onto the ring from position *pos: along fast links
 * from its lowest rank (first), else by rank; its ranks take group index
 * gi, and grp->numa stays only if every rank shares it. */
static void walk_group(hc_topo_t *t, hc_topo_group_t *grp, uint32_t g, uint32_t gi,
                       uint32_t first, const uint32_t *pg, int *done, uint32_t *pos)
{
    const uint32_t n = t->nranks;
    uint32_t cur = first;
    for (;;) {
        t->ring[(*pos)++] = cur;
        done[cur] = 1;
        t->r[cur].group = gi;
        if (t->r[cur].numa != grp->numa)
            grp->numa = -1;
        uint32_t next = UINT32_MAX;
        for (uint32_t k = 0; k < t->nlinks; k++) {
            uint32_t o = t->links[k].a == cur ? t->links[k].b
                                               : t->links[k].b == cur ? t->links[k].a : UINT32_MAX;
            if (o != UINT32_MAX && !done[o] && pg[o] == g && o < next)
                next = o;
        }
        if (next == UINT32_MAX)
            for (uint32_t i = first; i < n; i++)
                if (!done[i] && pg[i] == g) {
                    next = i;
                    break;
                }
        if (next == UINT32_MAX)
            break;
        cur = next;
    }
}

/* Nodes and racks renumbered in ring order (nmap, rmap: scratch of
 * nnodes and nracks entries). */
static int renumber(build_t *b, uint32_t *nmap, uint32_t *rmap)
{
    hc_topo_t *t = b->t;
    const uint32_t n = t->nranks;
    uint32_t nnew = 0, rnew = 0;
    for (uint32_t k = 0; k < t->nnodes; k++)
        nmap[k] = UINT32_MAX;
    for (uint32_t k = 0; k < t->nracks; k++)
        rmap[k] = UINT32_MAX;
    for (uint32_t p = 0; p < n; p++) {
        uint32_t nd = b->pl[t->ring[p]].node;
        if (nmap[nd] == UINT32_MAX)
            nmap[nd] = nnew++;
        uint32_t rk = t->nodes[nd].rack;
        if (rmap[rk] == UINT32_MAX)
            rmap[rk] = rnew++;
    }
    hc_topo_node_t *nodes = calloc(t->nnodes, sizeof(*nodes));
    hc_topo_rack_t *racks = calloc(t->nracks, sizeof(*racks));
    if (!nodes || !racks) {
        free(nodes);
        free(racks);
        return HCCL_E_MEMORY;
    }
    for (uint32_t k = 0; k < t->nnodes; k++) {
        nodes[nmap[k]] = t->nodes[k];
        nodes[nmap[k]].rack = rmap[t->nodes[k].rack];
    }
    for (uint32_t k = 0; k < t->nracks; k++)
        racks[rmap[k]] = t->racks[k];
    free(t->nodes);
    free(t->racks);
    t->nodes = nodes;
    t->racks = racks;
    for (uint32_t i = 0; i < n; i++) {
        t->r[i].node = nmap[b->pl[i].node];
        t->r[i].rack = t->nodes[t->r[i].node].rack;
    }
    for (uint32_t g = 0; g < t->ngroups; g++)
        t->groups[g].node = nmap[t->groups[g].node];
    return HCCL_SUCCESS;
}

static int order(build_t *b)
{
    hc_topo_t *t = b->t;
    const uint32_t n = t->nranks;
    /* provisional group ids: (node, gkey) in order of lowest rank */
    uint32_t *pg = malloc(n * sizeof(uint32_t)), *gnode = malloc(n * sizeof(uint32_t));
    uint32_t *gfirst = malloc(n * sizeof(uint32_t)), *nfirst = malloc(n * sizeof(uint32_t));
    uint32_t *rfirst = malloc(n * sizeof(uint32_t)), *key = malloc(n * sizeof(uint32_t));
    int *done = calloc(n, sizeof(int));
    t->ring = malloc(n * sizeof(uint32_t));
    int rc = HCCL_SUCCESS;
    if (!pg || !gnode || !gfirst || !nfirst || !rfirst || !key || !done || !t->ring) {
        rc = HCCL_E_MEMORY;
        goto out;
    }
    uint32_t ng = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g;
        for (g = 0; g < ng; g++)
            if (gnode[g] == b->pl[i].node && strcmp(b->pl[gfirst[g]].gkey, b->pl[i].gkey) == 0)
                break;
        if (g == ng) {
            gnode[ng] = b->pl[i].node;
            gfirst[ng++] = i;
        }
        pg[i] = g;
    }
    for (uint32_t k = 0; k < t->nnodes; k++)
        nfirst[k] = UINT32_MAX;
    for (uint32_t k = 0; k < t->nracks; k++)
        rfirst[k] = UINT32_MAX;
    for (uint32_t i = n; i-- > 0;) {
        nfirst[b->pl[i].node] = i;
        rfirst[t->nodes[b->pl[i].node].rack] = i;
    }
    /* sort groups by (rack first rank, node first rank, group first rank) */
    for (uint32_t g = 0; g < ng; g++)
        key[g] = g;
    for (uint32_t x = 1; x < ng; x++) { /* insertion sort: ng is small next to n */
        uint32_t v = key[x], y = x;
        for (; y > 0; y--) {
            uint32_t u = key[y - 1];
            uint32_t ru = rfirst[t->nodes[gnode[u]].rack], rv = rfirst[t->nodes[gnode[v]].rack];
            uint32_t nu = nfirst[gnode[u]], nv = nfirst[gnode[v]];
            if (ru < rv || (ru == rv && (nu < nv || (nu == nv && gfirst[u] < gfirst[v]))))
                break;
            key[y] = u;
        }
        key[y] = v;
    }
    t->groups = calloc(ng, sizeof(hc_topo_group_t));
    if (t->groups == NULL) {
        rc = HCCL_E_MEMORY;
        goto out;
    }
    t->ngroups = ng;
    uint32_t pos = 0;
    for (uint32_t gi = 0; gi < ng; gi++) {
        const uint32_t g = key[gi];
        hc_topo_group_t *grp = &t->groups[gi];
        grp->node = gnode[g];
        snprintf(grp->why, sizeof(grp->why), "%s", b->pl[gfirst[g]].why);
        grp->numa = t->r[gfirst[g]].numa;
        walk_group(t, grp, g, gi, gfirst[g], pg, done, &pos);
    }
    /* renumber nodes and racks in ring order (key and gfirst no longer needed) */
    rc = renumber(b, key, gfirst);
out:
    free(pg);
    free(gnode);
    free(gfirst);
    free(nfirst);
    free(rfirst);
    free(key);
    free(done);
    return rc;
}

static int make_arrays(hc_topo_t *t)
{
    const uint32_t n = t->nranks;
    t->pos_of = malloc(n * sizeof(uint32_t));
    t->group_of = malloc(n * sizeof(uint32_t));
    t->node_of = malloc(n * sizeof(uint32_t));
    t->rack_of = malloc(n * sizeof(uint32_t));
    t->group_off = calloc(t->ngroups + 1, sizeof(uint32_t));
    t->node_off = calloc(t->nnodes + 1, sizeof(uint32_t));
    t->rack_off = calloc(t->nracks + 1, sizeof(uint32_t));
    if (!t->pos_of || !t->group_of || !t->node_of || !t->rack_of || !t->group_off ||
        !t->node_off || !t->rack_off)
        return HCCL_E_MEMORY;
    for (uint32_t i = 0; i < n; i++) {
        t->group_of[i] = t->r[i].group;
        t->node_of[i] = t->r[i].node;
        t->rack_of[i] = t->r[i].rack;
    }
    for (uint32_t p = 0; p < n; p++) {
        uint32_t r = t->ring[p];
        t->pos_of[r] = p;
        t->group_off[t->group_of[r] + 1] = p + 1;
        t->node_off[t->node_of[r] + 1] = p + 1;
        t->rack_off[t->rack_of[r] + 1] = p + 1;
    }
    /* units of HIER and TORUS2D: nodes when there are several, else groups */
    const uint32_t *off = t->nnodes > 1 ? t->node_off : t->group_off;
    const uint32_t nu = t->nnodes > 1 ? t->nnodes : t->ngroups;
    t->unit_level = t->nnodes > 1 ? "node" : "group";
    uint32_t sz = off[1] - off[0];
    int equal = nu > 1 && sz > 1;
    for (uint32_t u = 1; u < nu && equal; u++)
        equal = off[u + 1] - off[u] == sz;
    if (equal) {
        t->grid = malloc(n * sizeof(uint32_t));
        if (t->grid == NULL)
            return HCCL_E_MEMORY;
        t->grid_rows = nu;
        t->grid_cols = sz;
        memcpy(t->grid, t->ring, n * sizeof(uint32_t)); /* row u = unit u, in ring order */
    }
    return HCCL_SUCCESS;
}

static int make_levels(build_t *b)
{
    hc_topo_t *t = b->t;
    const hc_decl_t *d = &t->decl;
    for (uint32_t i = 0; i < t->nnodes; i++)
        for (uint32_t j = 0; j < t->nnodes; j++)
            if (i != j && t->nodes[i].phys && t->nodes[i].phys == t->nodes[j].phys) {
                t->nodes[i].shared_phys = 1;
                t->simulated = 1;
            }
    int nvl = 0, xnuma = 0;
    for (uint32_t g = 0; g < t->ngroups; g++) {
        nvl |= strcmp(t->groups[g].why, "nvlink") == 0;
        for (uint32_t h = 0; h < t->ngroups; h++)
            xnuma |= t->groups[g].node == t->groups[h].node && t->groups[g].numa >= 0 &&
                     t->groups[h].numa >= 0 && t->groups[g].numa != t->groups[h].numa;
    }
    const char *kinds[HC_TOPO_LEVELS] = {nvl ? "nvlink" : "shm", xnuma ? "shm-xnuma" : "shm",
                                         t->simulated ? "tcp" : "net",
                                         t->simulated ? "tcp" : "spine"};
    for (int lv = 0; lv < HC_TOPO_LEVELS; lv++) {
        hc_topo_link_t *l = &t->level[lv];
        snprintf(l->kind, sizeof(l->kind), "%s", kinds[lv]);
        snprintf(l->from, sizeof(l->from), "built-in");
        const hc_decl_level_t *dl = &d->level[lv];
        if (dl->set) {
            if (dl->kind[0])
                snprintf(l->kind, sizeof(l->kind), "%s", dl->kind);
            snprintf(l->from, sizeof(l->from), "file line %d", dl->line);
        }
        double bw = 0, lat = 0;
        if (link_lookup(l->kind, &bw, &lat) && !(dl->set && dl->bw > 0 && dl->lat > 0))
            return err_para("%s line %d: level %s: link kind '%s' is not one hcomm knows (nvlink, "
                            "shm, shm-xnuma, tcp, net, spine); give bw= and lat= for it",
                            b->srcname, dl->line, hc_topo_level_names[lv], l->kind);
        l->bw = dl->set && dl->bw > 0 ? dl->bw : bw;
        l->lat = dl->set && dl->lat > 0 ? dl->lat : lat;
    }
    return HCCL_SUCCESS;
}

/* What a level's link class covers: two ranks whose lowest shared level
 * is this one. */
static const char *const level_where[HC_TOPO_LEVELS] = {
    "inside a fast group", "between the groups of a node", "between the nodes of a rack",
    "between racks"};

static void log_model(const hc_topo_t *t)
{
    if (!HC_LOG_ON(HC_LOG_INFO, HC_SUB_TOPO))
        return;
    char *buf = malloc(16384);
    if (buf == NULL)
        return;
    HC_INFO(HC_SUB_TOPO, "topology: %u ranks, %u rack(s), %u node(s), %u group(s)%s; source: %s",
            t->nranks, t->nracks, t->nnodes, t->ngroups,
            t->simulated ? " (simulated: declared nodes share a machine)" : "", t->source);
    if (t->self == 0) {
        for (uint32_t g = 0; g < t->ngroups && g < 64; g++) {
            size_t o = 0;
            for (uint32_t p = t->group_off[g]; p < t->group_off[g + 1] && o < 16000; p++)
                o += snprintf(buf + o, 16384 - o, "%s%u", o ? "," : "", t->ring[p]);
            HC_INFO(HC_SUB_TOPO, "group g%u: node %s rack %s (%s): ranks %s", g,
                    t->nodes[t->groups[g].node].name, t->racks[t->nodes[t->groups[g].node].rack].name,
                    t->groups[g].why, buf);
        }
        for (int lv = 0; lv < HC_TOPO_LEVELS; lv++) {
            char a[32], c[32];
            hc_fmt_bw(t->level[lv].bw, a, sizeof(a));
            hc_fmt_lat(t->level[lv].lat, c, sizeof(c));
            HC_INFO(HC_SUB_TOPO, "%s-level links (%s): %s, %s, %s (%s)", hc_topo_level_names[lv],
                    level_where[lv], t->level[lv].kind, a, c, t->level[lv].from);
        }
        HC_INFO(HC_SUB_TOPO, "ring order: %s", hc_topo_ring_text(t, buf, 16384));
        if (t->grid_rows)
            HC_INFO(HC_SUB_TOPO, "units of HIER / TORUS2D: %u %ss of %u ranks (grid %u x %u)",
                    t->grid_rows, t->unit_level, t->grid_cols, t->grid_rows, t->grid_cols);
    }
    free(buf);
}

static void dump(const hc_topo_t *t, const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        HC_WARN(HC_SUB_TOPO, "HCCL_TOPO_DUMP_FILE=%s: cannot write: %m", path);
        return;
    }
    int rc = hc_topo_write(t, f);
    if (fclose(f) != 0 || rc != HCCL_SUCCESS)
        HC_WARN(HC_SUB_TOPO, "HCCL_TOPO_DUMP_FILE=%s: writing failed", path);
    else
        HC_INFO(HC_SUB_TOPO, "topology written to %s (HCCL_TOPO_DUMP_FILE)", path);
}

int hc_topo_create(uint32_t n, uint32_t self, const hc_topo_member_t *m,
                   const struct hc_config *cfg, hc_topo_t **out)
{
    build_t b;
    memset(&b, 0, sizeof(b));
    hc_topo_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return HCCL_E_MEMORY;
    hc_decl_init(&t->decl);
    t->nranks = n;
    t->self = self;
    t->r = calloc(n ? n : 1, sizeof(hc_topo_rank_t));
    b.pl = calloc(n ? n : 1, sizeof(place_t));
    b.uf = malloc((n ? n : 1) * sizeof(uint32_t));
    b.linked = calloc(n ? n : 1, sizeof(int));
    int rc = HCCL_SUCCESS;
    if (!t->r || !b.pl || !b.uf || !b.linked) {
        rc = HCCL_E_MEMORY;
        goto fail;
    }
    b.t = t;
    b.cfg = cfg;
    pthread_mutex_lock(&g_lock);
    b.first = !g_first_done;
    pthread_mutex_unlock(&g_lock);
    for (uint32_t i = 0; i < n; i++) {
        t->r[i].world = m[i].world;
        t->r[i].host = m[i].host;
        t->r[i].have_facts = hc_facts_decode(m[i].blob, &t->r[i].facts);
        b.uf[i] = i;
    }
    if ((rc = check_overrides(&b)) != HCCL_SUCCESS)
        goto fail;
    char srcname[1060];
    if (cfg->topo_file[0]) {
        const struct hc_config *env = NULL;
        int from_env = hc_env_global(&env) == HCCL_SUCCESS &&
                       strcmp(env->topo_file, cfg->topo_file) == 0;
        char err[600];
        rc = hc_decl_load(cfg->topo_file, &t->decl, err, sizeof(err));
        /* HcclCommInitClusterInfo passes its rank table the same way */
        snprintf(srcname, sizeof(srcname), "%s%s%s",
                 from_env ? "HCCL_TOPO_FILE=" : t->decl.json ? "rank table " : "topology file ",
                 cfg->topo_file, from_env && t->decl.json ? " (a rank table)" : "");
        if (rc != HCCL_SUCCESS) {
            err_para("%s: %s", srcname, err);
            rc = HCCL_E_PARA;
            goto fail;
        }
        snprintf(t->source, sizeof(t->source), "%s", srcname);
    } else {
        snprintf(srcname, sizeof(srcname), "detection");
        snprintf(t->source, sizeof(t->source), "detected (host names, hwloc)");
    }
    if (cfg->ngroups || cfg->nvlink_map[0]) {
        size_t l = strlen(t->source);
        snprintf(t->source + l, sizeof(t->source) - l, "%s%s", cfg->ngroups ? " + HCCL_GROUP_<n>" : "",
                 cfg->nvlink_map[0] ? " + HCCL_NVLINK_MAP" : "");
    }
    b.srcname = srcname;
    if ((rc = place_nodes(&b)) || (rc = place_racks(&b)) || (rc = place_links(&b)) ||
        (rc = place_groups(&b)) || (rc = order(&b)) || (rc = make_arrays(t)) ||
        (rc = make_levels(&b)))
        goto fail;
    pthread_mutex_lock(&g_lock);
    int first = !g_first_done;
    g_first_done = 1;
    pthread_mutex_unlock(&g_lock);
    log_model(t);
    if (first && self == 0 && cfg->topo_dump_file[0])
        dump(t, cfg->topo_dump_file);
    free(b.pl);
    free(b.uf);
    free(b.linked);
    *out = t;
    return HCCL_SUCCESS;
fail:
    free(b.pl);
    free(b.uf);
    free(b.linked);
    hc_topo_destroy(t);
    return rc;
}

int hc_topo_wants_tcp(const struct hc_config *env)
{
    if (env == NULL || env->topo_file[0] == '\0')
        return 0;
    hc_decl_t d;
    char err[600];
    hc_decl_init(&d);
    int node = -1, several = 0;
    if (hc_decl_load(env->topo_file, &d, err, sizeof(err)) == HCCL_SUCCESS && !d.json)
        for (int r = 0; r < d.nranks && !several; r++) {
            if (!d.ranks[r].set)
                continue;
            several = node >= 0 && d.ranks[r].node != node;
            node = d.ranks[r].node;
        }
    hc_decl_free(&d); /* a bad file fails the communicator later, on every rank */
    return several;
}

int hc_topo_same_machine(const uint8_t *a, const uint8_t *b)
{
    hc_topo_facts_t fa, fb;
    return hc_facts_decode(a, &fa) && hc_facts_decode(b, &fb) && fa.phys == fb.phys;
}

void hc_topo_reset(void)
{
    pthread_mutex_lock(&g_lock);
    g_first_done = 0;
    free(g_local);
    g_local = NULL;
    g_nworld = 0;
    pthread_mutex_unlock(&g_lock);
}

void hc_topo_destroy(hc_topo_t *t)
{
    if (t == NULL)
        return;
    hc_decl_free(&t->decl);
    free(t->r);
    free(t->groups);
    free(t->nodes);
    free(t->racks);
    free(t->links);
    free(t->ring);
    free(t->pos_of);
    free(t->group_of);
    free(t->node_of);
    free(t->rack_of);
    free(t->group_off);
    free(t->node_off);
    free(t->rack_off);
    free(t->grid);
    free(t);
}

void hc_topo_view(const hc_topo_t *t, hc_topo_view_t *v)
{
    memset(v, 0, sizeof(*v));
    int identity = 1;
    for (uint32_t p = 0; p < t->nranks && identity; p++)
        identity = t->ring[p] == p;
    v->ring = identity ? NULL : t->ring;
    v->ngroups = t->ngroups;
    v->group_of = t->group_of;
    v->nnodes = t->nnodes;
    v->node_of = t->node_of;
    v->nracks = t->nracks;
    v->rack_of = t->rack_of;
    v->pos_of = t->pos_of;
    v->group_off = t->group_off;
    v->node_off = t->node_off;
    v->rack_off = t->rack_off;
    v->grid_rows = t->grid_rows;
    v->grid_cols = t->grid_cols;
    v->grid = t->grid;
    v->flags = 0;
    if (t->ngroups > 1 || t->nnodes > 1)
        v->flags |= HC_TOPO_F_HIER;
    if (t->nnodes > 1)
        v->flags |= HC_TOPO_F_MULTINODE;
    for (int lv = 0; lv < HC_TOPO_LEVELS; lv++) {
        v->level_bw[lv] = t->level[lv].bw;
        v->level_lat[lv] = t->level[lv].lat;
    }
}

int hc_topo_pair_level(const hc_topo_t *t, uint32_t a, uint32_t b)
{
    if (t->group_of[a] == t->group_of[b])
        return HC_TOPO_GROUP;
    if (t->node_of[a] == t->node_of[b])
        return HC_TOPO_NODE;
    if (t->rack_of[a] == t->rack_of[b])
        return HC_TOPO_RACK;
    return HC_TOPO_CLUSTER;
}

int hc_topo_simulated_pair(const hc_topo_t *t, uint32_t a, uint32_t b)
{
    return t->node_of[a] != t->node_of[b] && t->r[a].have_facts && t->r[b].have_facts &&
           t->r[a].facts.phys == t->r[b].facts.phys;
}

void hc_topo_ring_crossings(const hc_topo_t *t, const uint32_t *ring, uint32_t cross[HC_TOPO_LEVELS])
{
    memset(cross, 0, HC_TOPO_LEVELS * sizeof(uint32_t));
    const uint32_t n = t->nranks;
    if (n < 2)
        return;
    for (uint32_t p = 0; p < n; p++) {
        uint32_t a = ring ? ring[p] : p, c = ring ? ring[(p + 1) % n] : (p + 1) % n;
        int lv = hc_topo_pair_level(t, a, c);
        for (int k = 0; k < lv; k++)
            cross[k]++; /* leaving a node also leaves its group */
    }
}

char *hc_topo_ring_text(const hc_topo_t *t, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (uint32_t p = 0; p < t->nranks && o + 16 < len; p++) {
        uint32_t r = t->ring[p];
        if (p > 0) {
            int lv = hc_topo_pair_level(t, t->ring[p - 1], r);
            static const char *mark[] = {" ", " | ", " || ", " ||| "};
            o += snprintf(buf + o, len - o, "%s", mark[lv]);
        }
        o += snprintf(buf + o, len - o, "%u", r);
    }
    if (o + 16 >= len && len > 4)
        snprintf(buf + len - 5, 5, "...");
    return buf;
}

static const char *bw_class(double bw)
{
    return bw >= 100e9 ? "(very high)" : bw >= 10e9 ? "(high)" : bw >= 3e9 ? "(medium)" : "(low)";
}

static const char *lat_class(double lat)
{
    return lat <= 1e-6 ? "(low latency)" : lat <= 5e-6 ? "(medium latency)" : "(high latency)";
}

void hc_topo_print(const hc_topo_t *t, FILE *f)
{
    char a[32], c[32];
    fprintf(f, "topology: %u ranks; %u rack(s), %u node(s), %u fast group(s)\n", t->nranks,
            t->nracks, t->nnodes, t->ngroups);
    fprintf(f, "source:   %s\n", t->source);
    if (t->simulated)
        fprintf(f, "simulated: several declared nodes run on one machine; traffic between them "
                "takes UCX's TCP transport\n");
    fprintf(f, "\nlinks, by the lowest level two ranks share:\n");
    for (int lv = 0; lv < HC_TOPO_LEVELS; lv++) {
        hc_fmt_bw(t->level[lv].bw, a, sizeof(a));
        hc_fmt_lat(t->level[lv].lat, c, sizeof(c));
        fprintf(f, "  %-8s %-10s %9s %-11s %7s %-16s %-29s %s\n", hc_topo_level_names[lv],
                t->level[lv].kind, a, bw_class(t->level[lv].bw), c, lat_class(t->level[lv].lat),
                level_where[lv], t->level[lv].from);
    }
    fprintf(f, "\ncluster %s\n", t->cluster);
    for (uint32_t k = 0; k < t->nracks; k++) {
        fprintf(f, "  rack %s%s%s\n", t->racks[k].name, t->racks[k].sw[0] ? "  switch " : "",
                t->racks[k].sw);
        for (uint32_t nd = 0; nd < t->nnodes; nd++) {
            if (t->nodes[nd].rack != k)
                continue;
            const hc_topo_node_t *node = &t->nodes[nd];
            fprintf(f, "    node %s%s%s%s\n", node->name, node->addr[0] ? "  addr " : "",
                    node->addr, node->shared_phys ? "  (shares its machine with other nodes)" : "");
            for (uint32_t g = 0; g < t->ngroups; g++) {
                if (t->groups[g].node != nd)
                    continue;
                fprintf(f, "      group g%-3u %-26s ranks", g, t->groups[g].why);
                for (uint32_t p = t->group_off[g]; p < t->group_off[g + 1]; p++)
                    fprintf(f, " %u", t->ring[p]);
                fputc('\n', f);
            }
        }
    }
    fprintf(f, "\nranks:\n  %-5s %-5s %-12s %-5s %-4s %-14s %s\n", "rank", "world", "node", "group",
            "numa", "cpus", "devices (* = near)");
    for (uint32_t i = 0; i < t->nranks; i++) {
        const hc_topo_rank_t *r = &t->r[i];
        char devs[256] = "";
        size_t o = 0;
        if (r->device[0])
            o += snprintf(devs + o, sizeof(devs) - o, "[%s] ", r->device);
        for (int k = 0; r->have_facts && k < r->facts.ndev && o < sizeof(devs); k++)
            o += snprintf(devs + o, sizeof(devs) - o, "%s%s ", r->facts.dev[k].name,
                          r->facts.dev[k].near ? "*" : "");
        char numa[8];
        snprintf(numa, sizeof(numa), "%d", r->numa);
        fprintf(f, "  %-5u %-5u %-12s g%-4u %-4s %-14s %s\n", i, r->world, t->nodes[r->node].name,
                r->group, r->numa >= 0 ? numa : "-",
                r->have_facts && r->facts.cpus[0] ? r->facts.cpus : "?", devs);
    }
    if (t->nlinks) {
        fprintf(f, "\nfast links:");
        for (uint32_t k = 0; k < t->nlinks; k++)
            fprintf(f, " %u-%u(%s)", t->links[k].a, t->links[k].b, t->links[k].kind);
        fputc('\n', f);
    }
    char *buf = malloc(65536);
    if (buf) {
        uint32_t cr[HC_TOPO_LEVELS], cb[HC_TOPO_LEVELS];
        hc_topo_ring_crossings(t, t->ring, cr);
        hc_topo_ring_crossings(t, NULL, cb);
        fprintf(f, "\nring order (| group, || node, ||| rack boundary):\n  %s\n",
                hc_topo_ring_text(t, buf, 65536));
        fprintf(f, "  boundary crossings around the ring: group %u, node %u, rack %u "
                "(rank order 0..n-1 would cross: group %u, node %u, rack %u)\n", cr[0], cr[1],
                cr[2], cb[0], cb[1], cb[2]);
        free(buf);
    }
    if (t->grid_rows)
        fprintf(f, "hierarchical units (HIER, TORUS2D): %u %ss x %u ranks\n", t->grid_rows,
                t->unit_level, t->grid_cols);
    else if ((t->nnodes > 1 ? t->nnodes : t->ngroups) > 1)
        fprintf(f, "hierarchical units (HIER): %u %ss of unequal size or of one rank each "
                "(no TORUS2D grid)\n", t->nnodes > 1 ? t->nnodes : t->ngroups, t->unit_level);
    else
        fprintf(f, "hierarchical units: none (one node, one fast group: a flat topology)\n");
}
