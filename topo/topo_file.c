/*
 * topo/topo_file.c - the topology file: a line-oriented text format that
 * people write by hand (HCCL_TOPO_FILE) and that hcomm writes back
 * (HCCL_TOPO_DUMP_FILE, hcomm-topo -o). docs/TOPOLOGY.md is its manual.
 *
 *   hcomm-topology 1                  first statement: format version
 *   cluster NAME
 *   rack NAME [switch=NAME]
 *   node NAME [rack=RACK] [addr=IP] [numa=COUNT]
 *   device NODE/DEV [kind=gpu|nic|npu|...] [numa=K] [pci=BUSID] [addr=IP]
 *   link END END [kind=nvlink|...] [bw=BW] [lat=TIME]   END: a rank or NODE/DEV
 *   rank LIST node=NODE [numa=K] [device=DEV] [group=LABEL]   LIST: 0-3,8
 *   level group|node|rack|cluster [link=KIND] [bw=BW] [lat=TIME]
 *
 * '#' starts a comment. Names referred to before (or without) their own
 * statement are created on first use. A mistake stops the parse with
 * "line N: what was wrong"; the caller adds the file name.
 *
 * A file whose first non-blank character is '{' is an HCCL rank table
 * (topo/ranktable.c) and goes through the same model.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <hccl/hccl_types.h>

#include "src/base/file.h"
#include "topo.h"
#include "topo_int.h"

#define MAX_RANK (1u << 20)

/* ---- declarations ------------------------------------------------------ */

void hc_decl_init(hc_decl_t *d)
{
    memset(d, 0, sizeof(*d));
}

void hc_decl_free(hc_decl_t *d)
{
    free(d->racks);
    free(d->nodes);
    free(d->devs);
    free(d->links);
    free(d->ranks);
    for (int k = 0; k < 3; k++)
        free(d->ix[k].slot);
    hc_decl_init(d);
}

static int grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int ncap = *cap ? *cap : 8;
    while (ncap < need)
        ncap *= 2;
    void *np = realloc(*p, (size_t)ncap * elem);
    if (np == NULL)
        return -1;
    memset((char *)np + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
    *p = np;
    *cap = ncap;
    return 0;
}

/* Name indexes: open addressing over the entries of one array, so that
 * find-or-add costs the same for the 100000th node as for the first. A
 * device's key is its node and its name. */
enum { IX_RACK, IX_NODE, IX_DEV };

static const char *ix_key(const hc_decl_t *d, int kind, int i, int *scope)
{
    *scope = kind == IX_DEV ? d->devs[i].node : -1;
    return kind == IX_RACK ? d->racks[i].name : kind == IX_NODE ? d->nodes[i].name
                                                                  : d->devs[i].name;
}

static uint32_t ix_hash(int scope, const char *name)
{
    uint64_t h = hc_topo_hash(HC_HASH_INIT, &scope, sizeof(scope));
    h = hc_topo_hash(h, name, strlen(name));
    return (uint32_t)(h ^ (h >> 32));
}

/* The entry with this key, else -1 and *pos = the free slot for it. */
static int ix_find(const hc_decl_t *d, int kind, int scope, const char *name, uint32_t *pos)
{
    const hc_decl_index_t *ix = &d->ix[kind];
    if (ix->cap == 0)
        return -1;
    for (uint32_t p = ix_hash(scope, name) & (ix->cap - 1);; p = (p + 1) & (ix->cap - 1)) {
        int e = ix->slot[p], sc;
        if (e < 0) {
            *pos = p;
            return -1;
        }
        const char *k = ix_key(d, kind, e, &sc);
        if (sc == scope && strcmp(k, name) == 0)
            return e;
    }
}

/* Index entry i (its key is filled in); the table stays at most half full. */
static int ix_add(hc_decl_t *d, int kind, int i)
{
    hc_decl_index_t *ix = &d->ix[kind];
    int sc;
    uint32_t pos;
    if ((ix->n + 1) * 2 > ix->cap) {
        uint32_t ncap = ix->cap ? ix->cap * 2 : 64;
        int *ns = malloc(ncap * sizeof(int));
        if (ns == NULL)
            return -1;
        for (uint32_t k = 0; k < ncap; k++)
            ns[k] = -1;
        free(ix->slot);
        ix->slot = ns;
        ix->cap = ncap;
        ix->n = 0;
        for (int e = 0; e < i; e++) {
            const char *k = ix_key(d, kind, e, &sc);
            ix_find(d, kind, sc, k, &pos);
            ix->slot[pos] = e;
            ix->n++;
        }
    }
    const char *k = ix_key(d, kind, i, &sc);
    ix_find(d, kind, sc, k, &pos);
    ix->slot[pos] = i;
    ix->n++;
    return 0;
}

int hc_decl_rack(hc_decl_t *d, const char *name, int line)
{
    uint32_t pos;
    int i = ix_find(d, IX_RACK, -1, name, &pos);
    if (i >= 0)
        return i;
    if (grow((void **)&d->racks, &d->racks_cap, d->nracks + 1, sizeof(hc_decl_rack_t)))
        return -1;
    hc_decl_rack_t *r = &d->racks[d->nracks];
    snprintf(r->name, sizeof(r->name), "%s", name);
    r->line = line;
    if (ix_add(d, IX_RACK, d->nracks))
        return -1;
    return d->nracks++;
}

int hc_decl_find_node(const hc_decl_t *d, const char *name)
{
    uint32_t pos;
    return ix_find(d, IX_NODE, -1, name, &pos);
}

int hc_decl_node(hc_decl_t *d, const char *name, int line)
{
    int i = hc_decl_find_node(d, name);
    if (i >= 0)
        return i;
    if (grow((void **)&d->nodes, &d->nodes_cap, d->nnodes + 1, sizeof(hc_decl_node_t)))
        return -1;
    hc_decl_node_t *n = &d->nodes[d->nnodes];
    snprintf(n->name, sizeof(n->name), "%s", name);
    n->rack = -1;
    n->line = line;
    if (ix_add(d, IX_NODE, d->nnodes))
        return -1;
    return d->nnodes++;
}

int hc_decl_dev(hc_decl_t *d, int node, const char *name, int line)
{
    uint32_t pos;
    int i = ix_find(d, IX_DEV, node, name, &pos);
    if (i >= 0)
        return i;
    if (grow((void **)&d->devs, &d->devs_cap, d->ndevs + 1, sizeof(hc_decl_dev_t)))
        return -1;
    hc_decl_dev_t *v = &d->devs[d->ndevs];
    v->node = node;
    snprintf(v->name, sizeof(v->name), "%s", name);
    v->numa = -1;
    v->line = line;
    if (ix_add(d, IX_DEV, d->ndevs))
        return -1;
    return d->ndevs++;
}

hc_decl_rank_t *hc_decl_rank(hc_decl_t *d, int r)
{
    if (r < 0)
        return NULL;
    if (grow((void **)&d->ranks, &d->ranks_cap, r + 1, sizeof(hc_decl_rank_t)))
        return NULL;
    while (d->nranks <= r) {
        hc_decl_rank_t *x = &d->ranks[d->nranks++];
        memset(x, 0, sizeof(*x));
        x->node = x->dev = x->numa = -1;
    }
    return &d->ranks[r];
}

hc_decl_link_t *hc_decl_add_link(hc_decl_t *d)
{
    if (grow((void **)&d->links, &d->links_cap, d->nlinks + 1, sizeof(hc_decl_link_t)))
        return NULL;
    hc_decl_link_t *l = &d->links[d->nlinks++];
    memset(l, 0, sizeof(*l));
    l->ra = l->rb = l->da = l->db = -1;
    return l;
}

int hc_decl_load(const char *path, hc_decl_t *d, char *err, size_t errlen)
{
    char *text, why[128];
    int code = hc_file_read(path, HC_TOPO_FILE_MAX, &text, NULL);
    if (code != 0) {
        snprintf(err, errlen, "cannot read the file: %s",
                 hc_file_strerror(code, HC_TOPO_FILE_MAX, why, sizeof(why)));
        return code == ENOMEM ? HCCL_E_MEMORY : code > 0 ? HCCL_E_OPEN_FILE_FAILURE : HCCL_E_PARA;
    }
    snprintf(d->path, sizeof(d->path), "%s", path);
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    int rc = *p == '{' ? hc_decl_parse_json(text, d, err, errlen)
                       : hc_decl_parse_text(text, d, err, errlen);
    free(text);
    return rc;
}

/* ---- units --------------------------------------------------------------- */

/* The largest bandwidth (B/s) and latency (s) taken: bounded in the unit
 * hcomm stores, so that what hc_topo_write prints in its own units parses
 * back. */
#define MAX_UNIT_VALUE 1e30

static int parse_double(const char *s, double *v, const char **rest)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || errno || !(x >= 0))
        return -1;
    *v = x;
    *rest = end;
    return 0;
}

int hc_parse_bw(const char *s, double *out)
{
    static const struct {
        const char *u;
        double f;
    } units[] = {{"B/s", 1},      {"KB/s", 1e3},   {"MB/s", 1e6},   {"GB/s", 1e9},
                 {"TB/s", 1e12},  {"Kb/s", 125},   {"Mb/s", 125e3}, {"Gb/s", 125e6},
                 {"Tb/s", 125e9}, {"kB/s", 1e3},   {"kb/s", 125}};
    double v;
    const char *u;
    if (parse_double(s, &v, &u))
        return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(u, units[i].u) == 0) {
            *out = v * units[i].f;
            return *out > 0 && *out <= MAX_UNIT_VALUE ? 0 : -1;
        }
    return -1;
}

int hc_parse_lat(const char *s, double *out)
{
    static const struct {
        const char *u;
        double f;
    } units[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}};
    double v;
    const char *u;
    if (parse_double(s, &v, &u))
        return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(u, units[i].u) == 0) {
            *out = v * units[i].f;
            return *out <= MAX_UNIT_VALUE ? 0 : -1;
        }
    return -1;
}

void hc_fmt_bw(double bw, char *buf, size_t len)
{
    if (bw >= 1e9)
        snprintf(buf, len, "%gGB/s", bw / 1e9);
    else if (bw >= 1e6)
        snprintf(buf, len, "%gMB/s", bw / 1e6);
    else
        snprintf(buf, len, "%gB/s", bw);
}

void hc_fmt_lat(double lat, char *buf, size_t len)
{
    if (lat >= 1e-3)
        snprintf(buf, len, "%gms", lat * 1e3);
    else if (lat >= 1e-6 || lat == 0)
        snprintf(buf, len, "%gus", lat * 1e6);
    else
        snprintf(buf, len, "%gns", lat * 1e9);
}

int hc_topo_level_index(const char *name)
{
    for (int i = 0; i < HC_TOPO_LEVELS; i++)
        if (strcasecmp(name, hc_topo_level_names[i]) == 0)
            return i;
    return -1;
}

/* ---- the text parser ------------------------------------------------------ */

typedef struct {
    hc_decl_t *d;
    int line;
    char *err;
    size_t errlen;
} pctx_t;

static int fail(pctx_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(pctx_t *p, const char *fmt, ...)
{
    int o = snprintf(p->err, p->errlen, "line %d: ", p->line);
    va_list ap;
    va_start(ap, fmt);
    if (o >= 0 && (size_t)o < p->errlen)
        vsnprintf(p->err + o, p->errlen - (size_t)o, fmt, ap);
    va_end(ap);
    return HCCL_E_PARA;
}

int hc_decl_name_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n >= max)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_.:-+@", *s))
            return 0;
    return 1;
}

static int parse_uint(const char *s, uint32_t max, uint32_t *v)
{
    if (!isdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    unsigned long x = strtoul(s, &end, 10);
    if (*end || errno || x > max)
        return -1;
    *v = (uint32_t)x;
    return 0;
}

/* "0-3,8" -> calls back per rank. */
static int parse_list(pctx_t *p, const char *s, uint32_t **out, uint32_t *n)
{
    char buf[4096];
    if (strlen(s) >= sizeof(buf))
        return fail(p, "rank list too long");
    snprintf(buf, sizeof(buf), "%s", s);
    uint32_t cap = 0, cnt = 0;
    uint32_t *v = NULL;
    char *save;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint32_t a, b;
        char *dash = strchr(tok, '-');
        if (dash) {
            *dash = '\0';
            if (parse_uint(tok, MAX_RANK - 1, &a) || parse_uint(dash + 1, MAX_RANK - 1, &b) ||
                b < a) {
                free(v);
                return fail(p, "'%s' is not a rank list (ranks 0..%u, e.g. 0-3,8)", s,
                            MAX_RANK - 1);
            }
        } else if (parse_uint(tok, MAX_RANK - 1, &a)) {
            free(v);
            return fail(p, "'%s' is not a rank list (ranks 0..%u, e.g. 0-3,8)", s,
                        MAX_RANK - 1);
        } else {
            b = a;
        }
        for (uint32_t r = a; r <= b; r++) {
            if (cnt == cap) {
                cap = cap ? cap * 2 : 16;
                uint32_t *nv = realloc(v, cap * sizeof(uint32_t));
                if (nv == NULL) {
                    free(v);
                    return HCCL_E_MEMORY;
                }
                v = nv;
            }
            v[cnt++] = r;
        }
    }
    if (cnt == 0)
        return fail(p, "empty rank list");
    *out = v;
    *n = cnt;
    return HCCL_SUCCESS;
}

/* key=value attributes of one statement: known keys, each at most once. */
#define MAX_ATTR 8
typedef struct {
    const char *key[MAX_ATTR];
    const char *val[MAX_ATTR];
    int n;
} attrs_t;

static int get_attrs(pctx_t *p, const char *stmt, char **tok, int ntok, const char *const *known,
                     attrs_t *a)
{
    a->n = 0;
    for (int i = 0; i < ntok; i++) {
        char *eq = strchr(tok[i], '=');
        if (eq == NULL || eq == tok[i] || eq[1] == '\0')
            return fail(p, "%s: '%s' is not key=value", stmt, tok[i]);
        *eq = '\0';
        int k;
        for (k = 0; known[k]; k++)
            if (strcmp(known[k], tok[i]) == 0)
                break;
        if (known[k] == NULL) {
            char list[128] = "";
            size_t o = 0;
            for (int j = 0; known[j] && o < sizeof(list); j++)
                o += snprintf(list + o, sizeof(list) - o, "%s%s", j ? ", " : "", known[j]);
            return fail(p, "%s: unknown attribute '%s' (known: %s)", stmt, tok[i], list);
        }
        for (int j = 0; j < a->n; j++)
            if (strcmp(a->key[j], tok[i]) == 0)
                return fail(p, "%s: attribute '%s' given twice", stmt, tok[i]);
        if (a->n == MAX_ATTR)
            return fail(p, "%s: too many attributes", stmt);
        a->key[a->n] = tok[i];
        a->val[a->n++] = eq + 1;
    }
    return HCCL_SUCCESS;
}

static const char *attr(const attrs_t *a, const char *key)
{
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->key[i], key) == 0)
            return a->val[i];
    return NULL;
}

static int name_arg(pctx_t *p, const char *stmt, const char *what, const char *v, size_t max)
{
    if (!hc_decl_name_ok(v, max))
        return fail(p, "%s: '%s' is not a valid %s (letters, digits and _.:-+@, at most %zu "
                    "characters)", stmt, v, what, max - 1);
    return HCCL_SUCCESS;
}

static int opt_uint(pctx_t *p, const char *stmt, const attrs_t *a, const char *key,
                    uint32_t max, int *out)
{
    const char *v = attr(a, key);
    uint32_t x;
    if (v == NULL)
        return HCCL_SUCCESS;
    if (parse_uint(v, max, &x))
        return fail(p, "%s: %s='%s' is not a number in 0..%u", stmt, key, v, max);
    *out = (int)x;
    return HCCL_SUCCESS;
}

static int link_attrs(pctx_t *p, const char *stmt, const attrs_t *a, const char *kindkey,
                      char *kind, size_t kindlen, double *bw, double *lat)
{
    const char *v = attr(a, kindkey);
    if (v) {
        int rc = name_arg(p, stmt, "link kind", v, kindlen);
        if (rc)
            return rc;
        snprintf(kind, kindlen, "%s", v);
    }
    if ((v = attr(a, "bw")) && hc_parse_bw(v, bw))
        return fail(p, "%s: bw='%s' is not a bandwidth (e.g. 12.5GB/s, 100Gb/s)", stmt, v);
    if ((v = attr(a, "lat")) && hc_parse_lat(v, lat))
        return fail(p, "%s: lat='%s' is not a latency (e.g. 2us, 800ns)", stmt, v);
    return HCCL_SUCCESS;
}

/* NODE/DEV -> device index (created on first use). */
static int dev_ref(pctx_t *p, const char *stmt, const char *ref, int *out)
{
    char buf[160];
    snprintf(buf, sizeof(buf), "%s", ref);
    char *slash = strchr(buf, '/');
    if (slash == NULL)
        return fail(p, "%s: '%s' is neither a rank number nor NODE/DEVICE", stmt, ref);
    *slash = '\0';
    int rc = name_arg(p, stmt, "node name", buf, HC_NAME_MAX);
    if (rc == HCCL_SUCCESS)
        rc = name_arg(p, stmt, "device name", slash + 1, 32);
    if (rc)
        return rc;
    int node = hc_decl_node(p->d, buf, 0);
    int dev = node < 0 ? -1 : hc_decl_dev(p->d, node, slash + 1, p->line);
    if (dev < 0)
        return HCCL_E_MEMORY;
    *out = dev;
    return HCCL_SUCCESS;
}

static int stmt_rack(pctx_t *p, char **tok, int ntok)
{
    static const char *const known[] = {"switch", NULL};
    attrs_t a;
    if (ntok < 2)
        return fail(p, "rack: missing the rack name (rack NAME [switch=NAME])");
    int rc = name_arg(p, "rack", "rack name", tok[1], HC_NAME_MAX);
    if (rc || (rc = get_attrs(p, "rack", tok + 2, ntok - 2, known, &a)))
        return rc;
    int r = hc_decl_rack(p->d, tok[1], p->line);
    if (r < 0)
        return HCCL_E_MEMORY;
    const char *sw = attr(&a, "switch");
    if (sw) {
        if ((rc = name_arg(p, "rack", "switch name", sw, HC_NAME_MAX)))
            return rc;
        snprintf(p->d->racks[r].sw, sizeof(p->d->racks[r].sw), "%s", sw);
    }
    return HCCL_SUCCESS;
}

static int stmt_node(pctx_t *p, char **tok, int ntok)
{
    static const char *const known[] = {"rack", "addr", "numa", NULL};
    attrs_t a;
    if (ntok < 2)
        return fail(p, "node: missing the node name (node NAME [rack=RACK] [addr=IP] [numa=N])");
    int rc = name_arg(p, "node", "node name", tok[1], HC_NAME_MAX);
    if (rc || (rc = get_attrs(p, "node", tok + 2, ntok - 2, known, &a)))
        return rc;
    int i = hc_decl_find_node(p->d, tok[1]);
    if (i >= 0 && p->d->nodes[i].line > 0)
        return fail(p, "node '%s' is already declared on line %d", tok[1], p->d->nodes[i].line);
    if (i < 0 && (i = hc_decl_node(p->d, tok[1], p->line)) < 0)
        return HCCL_E_MEMORY;
    hc_decl_node_t *nd = &p->d->nodes[i];
    nd->line = p->line;
    const char *v;
    if ((v = attr(&a, "rack"))) {
        if ((rc = name_arg(p, "node", "rack name", v, HC_NAME_MAX)))
            return rc;
        int r = hc_decl_rack(p->d, v, 0);
        if (r < 0)
            return HCCL_E_MEMORY;
        p->d->nodes[i].rack = r;
    }
    if ((v = attr(&a, "addr"))) {
        if ((rc = name_arg(p, "node", "address", v, HC_NAME_MAX)))
            return rc;
        snprintf(p->d->nodes[i].addr, sizeof(p->d->nodes[i].addr), "%s", v);
    }
    int numa = 0;
    if ((rc = opt_uint(p, "node", &a, "numa", 1024, &numa)))
        return rc;
    p->d->nodes[i].nnuma = numa;
    return HCCL_SUCCESS;
}

static int stmt_device(pctx_t *p, char **tok, int ntok)
{
    static const char *const known[] = {"kind", "numa", "pci", "addr", NULL};
    attrs_t a;
    if (ntok < 2)
        return fail(p, "device: missing NODE/DEVICE (device NODE/DEV [kind=gpu] [numa=K] "
                    "[pci=BUSID] [addr=IP])");
    int dev, rc = dev_ref(p, "device", tok[1], &dev);
    if (rc || (rc = get_attrs(p, "device", tok + 2, ntok - 2, known, &a)))
        return rc;
    hc_decl_dev_t *v = &p->d->devs[dev];
    const char *s;
    if ((s = attr(&a, "kind"))) {
        if ((rc = name_arg(p, "device", "kind", s, sizeof(v->kind))))
            return rc;
        snprintf(v->kind, sizeof(v->kind), "%s", s);
    }
    if ((rc = opt_uint(p, "device", &a, "numa", 1023, &v->numa)))
        return rc;
    if ((s = attr(&a, "pci"))) {
        if ((rc = name_arg(p, "device", "PCI bus id", s, sizeof(v->pci))))
            return rc;
        snprintf(v->pci, sizeof(v->pci), "%s", s);
    }
    if ((s = attr(&a, "addr"))) {
        if ((rc = name_arg(p, "device", "address", s, sizeof(v->addr))))
            return rc;
        snprintf(v->addr, sizeof(v->addr), "%s", s);
    }
    return HCCL_SUCCESS;
}

static int stmt_link(pctx_t *p, char **tok, int ntok)
{
    static const char *const known[] = {"kind", "bw", "lat", NULL};
    attrs_t a;
    if (ntok < 3)
        return fail(p, "link: needs two ends (link END END [kind=nvlink] [bw=..] [lat=..], "
                    "END: a rank or NODE/DEVICE)");
    int rc = get_attrs(p, "link", tok + 3, ntok - 3, known, &a);
    if (rc)
        return rc;
    hc_decl_link_t *l = hc_decl_add_link(p->d);
    if (l == NULL)
        return HCCL_E_MEMORY;
    l->line = p->line;
    snprintf(l->kind, sizeof(l->kind), "nvlink");
    uint32_t ra, rb;
    int na = parse_uint(tok[1], MAX_RANK - 1, &ra) == 0, nb = parse_uint(tok[2], MAX_RANK - 1, &rb) == 0;
    if (na != nb)
        return fail(p, "link: '%s' and '%s' must both be ranks or both NODE/DEVICE", tok[1],
                    tok[2]);
    if (na) {
        if (ra == rb)
            return fail(p, "link: rank %u linked to itself", ra);
        l->ra = (int)ra;
        l->rb = (int)rb;
    } else {
        if ((rc = dev_ref(p, "link", tok[1], &l->da)) || (rc = dev_ref(p, "link", tok[2], &l->db)))
            return rc;
        if (l->da == l->db)
            return fail(p, "link: device '%s' linked to itself", tok[1]);
        if (p->d->devs[l->da].node != p->d->devs[l->db].node)
            return fail(p, "link: '%s' and '%s' are on different nodes (fast links join devices "
                        "of one node)", tok[1], tok[2]);
    }
    return link_attrs(p, "link", &a, "kind", l->kind, sizeof(l->kind), &l->bw, &l->lat);
}

static int stmt_rank(pctx_t *p, char **tok, int ntok)
{
    static const char *const known[] = {"node", "numa", "device", "group", NULL};
    attrs_t a;
    if (ntok < 2)
        return fail(p, "rank: missing the rank list (rank 0-3 node=NAME [numa=K] [device=DEV] "
                    "[group=LABEL])");
    uint32_t *list = NULL, n = 0;
    int rc = parse_list(p, tok[1], &list, &n);
    if (rc)
        return rc;
    if ((rc = get_attrs(p, "rank", tok + 2, ntok - 2, known, &a))) {
        free(list);
        return rc;
    }
    const char *node = attr(&a, "node"), *dev = attr(&a, "device"), *grp = attr(&a, "group");
    int numa = -1, ni = -1, di = -1;
    if (node == NULL)
        rc = fail(p, "rank: node=NAME is required");
    else if ((rc = name_arg(p, "rank", "node name", node, HC_NAME_MAX)) == HCCL_SUCCESS &&
             (rc = opt_uint(p, "rank", &a, "numa", 1023, &numa)) == HCCL_SUCCESS &&
             (!grp || (rc = name_arg(p, "rank", "group label", grp, 32)) == HCCL_SUCCESS) &&
             (!dev || (rc = name_arg(p, "rank", "device name", dev, 32)) == HCCL_SUCCESS)) {
        ni = hc_decl_node(p->d, node, 0);
        if (ni < 0)
            rc = HCCL_E_MEMORY;
        else if (dev && (di = hc_decl_dev(p->d, ni, dev, p->line)) < 0)
            rc = HCCL_E_MEMORY;
    }
    for (uint32_t i = 0; i < n && rc == HCCL_SUCCESS; i++) {
        hc_decl_rank_t *r = hc_decl_rank(p->d, (int)list[i]);
        if (r == NULL) {
            rc = HCCL_E_MEMORY;
            break;
        }
        if (r->set) {
            rc = fail(p, "rank %u is already declared on line %d", list[i], r->line);
            break;
        }
        r->set = 1;
        r->node = ni;
        r->numa = numa;
        r->dev = di;
        r->line = p->line;
        snprintf(r->group, sizeof(r->group), "%s", grp ? grp : "");
    }
    free(list);
    return rc;
}

static int stmt_level(pctx_t *p, char **tok, int ntok)
{
    static const char *const known[] = {"link", "bw", "lat", NULL};
    attrs_t a;
    if (ntok < 2)
        return fail(p, "level: missing the level (group, node, rack or cluster)");
    int lv = hc_topo_level_index(tok[1]);
    if (lv < 0)
        return fail(p, "level: '%s' is not a level (group, node, rack or cluster)", tok[1]);
    hc_decl_level_t *l = &p->d->level[lv];
    if (l->set)
        return fail(p, "level %s is already described on line %d", tok[1], l->line);
    int rc = get_attrs(p, "level", tok + 2, ntok - 2, known, &a);
    if (rc)
        return rc;
    l->set = 1;
    l->line = p->line;
    return link_attrs(p, "level", &a, "link", l->kind, sizeof(l->kind), &l->bw, &l->lat);
}

int hc_decl_parse_text(const char *text, hc_decl_t *d, char *err, size_t errlen)
{
    pctx_t p = {d, 0, err, errlen};
    int have_version = 0, rc = HCCL_SUCCESS;
    const char *s = text;
    char line[4096];
    while (*s && rc == HCCL_SUCCESS) {
        p.line++;
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len >= sizeof(line))
            return fail(&p, "line longer than %zu characters", sizeof(line) - 1);
        memcpy(line, s, len);
        line[len] = '\0';
        s += len + (e ? 1 : 0);
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *tok[16];
        int ntok = 0;
        char *save;
        for (char *t = strtok_r(line, " \t\r\f\v", &save); t; t = strtok_r(NULL, " \t\r\f\v", &save)) {
            if (ntok == 16)
                return fail(&p, "too many words on one line");
            tok[ntok++] = t;
        }
        if (ntok == 0)
            continue;
        if (!have_version) {
            if (strcmp(tok[0], "hcomm-topology") != 0)
                return fail(&p, "the first statement must be 'hcomm-topology 1' (the format "
                            "version), not '%s'", tok[0]);
            if (ntok != 2 || strcmp(tok[1], "1") != 0)
                return fail(&p, "hcomm-topology: this hcomm reads format version 1");
            have_version = 1;
            continue;
        }
        if (strcmp(tok[0], "cluster") == 0) {
            if (ntok != 2)
                return fail(&p, "cluster: expected 'cluster NAME'");
            if ((rc = name_arg(&p, "cluster", "cluster name", tok[1], HC_NAME_MAX)) == 0)
                snprintf(d->cluster, sizeof(d->cluster), "%s", tok[1]);
        } else if (strcmp(tok[0], "rack") == 0) {
            rc = stmt_rack(&p, tok, ntok);
        } else if (strcmp(tok[0], "node") == 0) {
            rc = stmt_node(&p, tok, ntok);
        } else if (strcmp(tok[0], "device") == 0) {
            rc = stmt_device(&p, tok, ntok);
        } else if (strcmp(tok[0], "link") == 0) {
            rc = stmt_link(&p, tok, ntok);
        } else if (strcmp(tok[0], "rank") == 0) {
            rc = stmt_rank(&p, tok, ntok);
        } else if (strcmp(tok[0], "level") == 0) {
            rc = stmt_level(&p, tok, ntok);
        } else if (strcmp(tok[0], "hcomm-topology") == 0) {
            return fail(&p, "hcomm-topology: given twice");
        } else {
            return fail(&p, "unknown statement '%s' (expected cluster, rack, node, device, link, "
                        "rank or level)", tok[0]);
        }
    }
    if (rc == HCCL_SUCCESS && !have_version) {
        p.line = 1;
        return fail(&p, "empty file: expected 'hcomm-topology 1' first");
    }
    return rc;
}

/* ---- the writer ----------------------------------------------------------- */

static void fmt_ranks(char *buf, size_t len, const uint32_t *v, uint32_t n)
{
    size_t o = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < n && o < len;) {
        uint32_t j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1)
            j++;
        if (j > i)
            o += snprintf(buf + o, len - o, "%s%u-%u", o ? "," : "", v[i], v[j]);
        else
            o += snprintf(buf + o, len - o, "%s%u", o ? "," : "", v[i]);
        i = j + 1;
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* A node's line: rack, address, NUMA nodes (the most of what hwloc saw,
 * what was declared and what ranks use). */
static void write_node(const hc_topo_t *t, FILE *f, uint32_t nd)
{
    const hc_topo_node_t *node = &t->nodes[nd];
    int nnuma = 0;
    for (uint32_t i = 0; i < t->nranks; i++) {
        if (t->r[i].node != nd)
            continue;
        if (t->r[i].have_facts && t->r[i].facts.nnuma > nnuma)
            nnuma = t->r[i].facts.nnuma;
        if (t->r[i].numa + 1 > nnuma)
            nnuma = t->r[i].numa + 1;
    }
    int dn = hc_decl_find_node(&t->decl, node->name);
    if (dn >= 0 && t->decl.nodes[dn].nnuma > nnuma)
        nnuma = t->decl.nodes[dn].nnuma;
    fprintf(f, "\nnode %s rack=%s", node->name, t->racks[node->rack].name);
    if (node->addr[0])
        fprintf(f, " addr=%s", node->addr);
    if (nnuma)
        fprintf(f, " numa=%d", nnuma);
    fputc('\n', f);
}

/* A node's devices: the declared ones, then those hwloc saw (once per name). */
static void write_devices(const hc_topo_t *t, FILE *f, uint32_t nd)
{
    const hc_topo_node_t *node = &t->nodes[nd];
    for (int dv = 0; dv < t->decl.ndevs; dv++) {
        const hc_decl_dev_t *x = &t->decl.devs[dv];
        if (strcmp(t->decl.nodes[x->node].name, node->name) != 0)
            continue;
        fprintf(f, "device %s/%s", node->name, x->name);
        if (x->kind[0])
            fprintf(f, " kind=%s", x->kind);
        if (x->numa >= 0)
            fprintf(f, " numa=%d", x->numa);
        if (x->pci[0])
            fprintf(f, " pci=%s", x->pci);
        if (x->addr[0])
            fprintf(f, " addr=%s", x->addr);
        fputc('\n', f);
    }
    char seen[HC_FACTS_MAXDEV * 4][16];
    int nseen = 0;
    for (uint32_t i = 0; i < t->nranks; i++) {
        if (t->r[i].node != nd || !t->r[i].have_facts)
            continue;
        const hc_topo_facts_t *fx = &t->r[i].facts;
        for (int dv = 0; dv < fx->ndev; dv++) {
            int dup = 0;
            for (int s = 0; s < nseen; s++)
                dup |= strcmp(seen[s], fx->dev[dv].name) == 0;
            int declared = 0;
            for (int s = 0; s < t->decl.ndevs; s++)
                declared |= strcmp(t->decl.devs[s].name, fx->dev[dv].name) == 0 &&
                            strcmp(t->decl.nodes[t->decl.devs[s].node].name, node->name) == 0;
            if (dup || declared || nseen == (int)(sizeof(seen) / sizeof(seen[0])))
                continue;
            snprintf(seen[nseen++], 16, "%s", fx->dev[dv].name);
            static const char *kinds[] = {"other", "gpu", "nic", "ib"};
            fprintf(f, "device %s/%s kind=%s", node->name, fx->dev[dv].name,
                    kinds[fx->dev[dv].kind < 4 ? fx->dev[dv].kind : 0]);
            if (fx->dev[dv].numa >= 0)
                fprintf(f, " numa=%d", fx->dev[dv].numa);
            if (fx->dev[dv].pci[0])
                fprintf(f, " pci=%s", fx->dev[dv].pci);
            fputs("   # detected\n", f);
        }
    }
}

/* A node's ranks: one line per (group, NUMA, device), world rank numbers
 * (v: scratch of nranks entries, list: of 65536 bytes). */
static void write_ranks(const hc_topo_t *t, FILE *f, uint32_t nd, uint32_t *v, char *list)
{
    const hc_topo_node_t *node = &t->nodes[nd];
    for (uint32_t i = 0; i < t->nranks; i++) {
        const hc_topo_rank_t *ri = &t->r[i];
        if (ri->node != nd)
            continue;
        int first = 1;
        uint32_t cnt = 0;
        for (uint32_t j = 0; j < t->nranks && first; j++) {
            const hc_topo_rank_t *rj = &t->r[j];
            if (rj->node != nd || rj->group != ri->group || rj->numa != ri->numa ||
                strcmp(rj->device, ri->device) != 0)
                continue;
            if (rj->world < ri->world)
                first = 0; /* printed with an earlier rank */
            else
                v[cnt++] = rj->world;
        }
        if (!first)
            continue;
        qsort(v, cnt, sizeof(uint32_t), cmp_u32);
        fmt_ranks(list, 65536, v, cnt);
        fprintf(f, "rank %s node=%s", list, node->name);
        if (ri->numa >= 0)
            fprintf(f, " numa=%d", ri->numa);
        if (ri->device[0])
            fprintf(f, " device=%s", ri->device);
        fprintf(f, " group=g%u   # %s\n", ri->group, t->groups[ri->group].why);
    }
}

int hc_topo_write(const hc_topo_t *t, FILE *f)
{
    char a[32], b[32];
    fprintf(f, "# hcomm topology file (docs/TOPOLOGY.md); %u ranks, written from the model of "
            "a communicator\n# source: %s\nhcomm-topology 1\n", t->nranks, t->source);
    fprintf(f, "cluster %s\n", t->cluster);
    for (int lv = 0; lv < HC_TOPO_LEVELS; lv++) {
        hc_fmt_bw(t->level[lv].bw, a, sizeof(a));
        hc_fmt_lat(t->level[lv].lat, b, sizeof(b));
        fprintf(f, "level %-7s link=%s bw=%s lat=%s\n", hc_topo_level_names[lv],
                t->level[lv].kind, a, b);
    }
    for (uint32_t k = 0; k < t->nracks; k++) {
        fprintf(f, "rack %s", t->racks[k].name);
        if (t->racks[k].sw[0])
            fprintf(f, " switch=%s", t->racks[k].sw);
        fputc('\n', f);
    }
    uint32_t *v = malloc((t->nranks ? t->nranks : 1) * sizeof(uint32_t));
    char *list = malloc(65536);
    if (v == NULL || list == NULL) {
        free(v);
        free(list);
        return HCCL_E_MEMORY;
    }
    for (uint32_t nd = 0; nd < t->nnodes; nd++) {
        write_node(t, f, nd);
        write_devices(t, f, nd);
        write_ranks(t, f, nd, v, list);
    }
    if (t->nlinks) {
        fputc('\n', f);
        for (uint32_t k = 0; k < t->nlinks; k++)
            fprintf(f, "link %u %u kind=%s\n", t->r[t->links[k].a].world, t->r[t->links[k].b].world,
                    t->links[k].kind);
    }
    for (int k = 0; k < t->decl.nlinks; k++) {
        const hc_decl_link_t *l = &t->decl.links[k];
        if (l->da < 0)
            continue;
        fprintf(f, "link %s/%s %s/%s kind=%s\n", t->decl.nodes[t->decl.devs[l->da].node].name,
                t->decl.devs[l->da].name, t->decl.nodes[t->decl.devs[l->db].node].name,
                t->decl.devs[l->db].name, l->kind);
    }
    free(v);
    free(list);
    return ferror(f) ? HCCL_E_INTERNAL : HCCL_SUCCESS;
}
