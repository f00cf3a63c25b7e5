/*
 * src/comm/tune.c - algorithm selection (see tune.h; docs/ALGORITHMS.md has the
 * table's origins, the tuning-file format and the HCCL_ALGO mapping).
 *
 * Rules are parsed from text: the built-in table below (once per process),
 * the tuning file (once per process and path), HCCL_ALGO and the
 * HCCL_<COLL>_ALGO variables (per communicator: they may come from an
 * HcclCommConfig). hc_tune_create keeps, per collective, the rules whose
 * rank range and `when` conditions hold for the communicator, in priority
 * order; hc_tune_select scans the few of one collective: no allocation, no
 * string formatting unless TUNE logging is on.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "tune.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <hccl/hccl.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "src/base/file.h"
#include "src/base/log.h"

/* ---------------------------------------------------------------- table */

/*
 * The built-in table (bytes: one rank's count; first match wins). Where
 * each number comes from is in docs/ALGORITHMS.md ("Default ranges"):
 * tools/hcomm-tune at 2 and 4 ranks on the development machine, and the
 * alpha-beta model for what one small machine cannot show (many ranks,
 * several nodes).
 */
static const char builtin_text[] =
    "# deterministic mode: only algorithms that keep the canonical order\n"
    "allreduce      0-8KB      *     RD                 when=det\n"
    "allreduce      8KB-*      *     HD                 when=det\n"
    "reducescatter  *          *     HD                 when=det\n"
    "reduce         0-256KB    *     BINOMIAL           when=det\n"
    "reduce         256KB-*    5-*   RS_GATHER          when=det\n"
    "reduce         *          *     BINOMIAL           when=det\n"
    "# several nodes or fast groups: the hierarchical algorithms; from 128\n"
    "# ranks HIER's rings across the nodes cost 2 (nodes - 1) latencies and\n"
    "# the trees win below these sizes (hcomm-sim, docs/SCALE.md)\n"
    "allreduce      128KB-2MB  128-511 DBTREE           when=hier\n"
    "allreduce      128KB-8MB  512-* DBTREE             when=hier\n"
    "allreduce      128KB-*    *     HIER               when=hier\n"
    "reducescatter  64KB-*     *     HIER               when=hier\n"
    "allgather      64KB-*     *     HIER               when=hier\n"
    "broadcast      256KB-*    *     HIER               when=hier\n"
    "# registered buffers (HcclCommRegister), Intel CPUs: single-copy steps\n"
    "# as loads and stores between the two processes\n"
    "allreduce      2KB-32MB   2     CMA                when=intel,registered\n"
    "allreduce      32MB-*     2     CMA nt             when=intel,registered\n"
    "reducescatter  4KB-32MB   2     CMA                when=intel,registered\n"
    "reducescatter  32MB-*     2     CMA nt             when=intel,registered\n"
    "broadcast      2KB-32MB   2     CMA                when=intel,registered\n"
    "broadcast      32MB-*     2     CMA nt             when=intel,registered\n"
    "allgather      4KB-32MB   2     CMA                when=intel,registered\n"
    "allgather      32MB-*     2     CMA nt             when=intel,registered\n"
    "alltoall       4KB-32MB   2     CMA                when=intel,registered\n"
    "alltoall       32MB-*     2     CMA nt             when=intel,registered\n"
    "# registered buffers, AMD CPUs: the same, measured on an AMD EPYC VM\n"
    "allreduce      2KB-512KB  2     CMA                when=amd,registered\n"
    "allreduce      512KB-*    2     CMA nt             when=amd,registered\n"
    "reducescatter  2KB-*      2     CMA                when=amd,registered\n"
    "broadcast      4KB-*      2     CMA                when=amd,registered\n"
    "allgather      4KB-*      2     CMA                when=amd,registered\n"
    "alltoall       8KB-*      2     CMA                when=amd,registered\n"
    "broadcast      1MB-*      3-4   CMA                when=amd,registered\n"
    "allgather      1MB-*      3-4   CMA                when=amd,registered\n"
    "alltoall       256KB-*    3-4   CMA                when=amd,registered\n"
    "# one host, Intel CPUs: large messages through staging, streamed into RECV\n"
    "allreduce      32MB-*     2     DIRECT chunk=1MB nt when=intel\n"
    "allreduce      8MB-*      3-4   DIRECT nt          when=intel\n"
    "reducescatter  16MB-*     2     DIRECT nt          when=intel\n"
    "allgather      16MB-*     2     DIRECT nt          when=intel\n"
    "allgather      2MB-*      3-*   DIRECT nt          when=intel\n"
    "broadcast      8MB-*      3-*   DIRECT nt          when=intel\n"
    "alltoall       16MB-*     2     DIRECT nt          when=intel\n"
    "alltoall       8MB-64MB   3-*   DIRECT nt          when=intel\n"
    "# one host, Intel CPUs: single-copy reads where they beat staging\n"
    "allreduce      32KB-*     2     CMA                when=intel\n"
    "broadcast      8KB-*      2     CMA                when=intel\n"
    "allgather      16KB-*     2     CMA                when=intel\n"
    "alltoall       32KB-*     2     CMA                when=intel\n"
    "alltoall       64KB-*     3-*   CMA                when=intel\n"
    "# one host, AMD CPUs: single-copy reads where they beat staging\n"
    "broadcast      256KB-16MB 2     CMA                when=amd\n"
    "alltoall       128KB-16MB 2     CMA                when=amd\n"
    "allgather      128KB-1MB  2     CMA                when=amd\n"
    "# one host: shared staging (DIRECT cannot run without it: next rule)\n"
    "allreduce      *          *     DIRECT\n"
    "broadcast      *          *     DIRECT\n"
    "reducescatter  *          *     DIRECT\n"
    "allgather      *          *     DIRECT\n"
    "alltoall       0-64MB     *     DIRECT\n"
    "alltoall       *          2     DIRECT\n"
    "# message passing\n"
    "allreduce      0-8KB      *     RD\n"
    "# 2 ranks: RD is one exchange, a tree two steps (2 hosts, 8 KB: 29 against\n"
    "# 36 us; docs/CLUSTER.md, \"Crossovers across hosts\")\n"
    "allreduce      8KB-128KB  2     RD\n"
    "allreduce      8KB-128KB  *     DBTREE\n"
    "# 16 ranks and more: RING pays 2 (n - 1) latencies (hcomm-sim, docs/SCALE.md)\n"
    "allreduce      128KB-2MB  16-*  DBTREE\n"
    "allreduce      2MB-*      16-*  TORUS2D\n"
    "# 4 hosts, one rank each (HIER cannot run): TORUS2D's 4 steps beat\n"
    "# RING's 6 from 128 KB to 1 MB; on 8 hosts neither leads there\n"
    "# (docs/CLUSTER.md, \"Crossovers across hosts\")\n"
    "allreduce      128KB-1MB  4     TORUS2D            when=multinode\n"
    "allreduce      128KB-8MB  *     RING\n"
    "allreduce      8MB-*      *     TORUS2D\n"
    "allreduce      *          *     RING\n"
    "broadcast      256KB-*    16-*  PIPELINE\n"
    "broadcast      1MB-*      *     PIPELINE\n"
    "broadcast      *          *     BINOMIAL\n"
    "reduce         256KB-*    5-*   RS_GATHER\n"
    "reduce         *          *     BINOMIAL\n"
    "reducescatter  0-256KB    *     HD\n"
    "reducescatter  *          *     RING\n"
    "allgather      0-256KB    *     BRUCK\n"
    "allgather      *          *     RING\n"
    "alltoall       0-1KB      8-*   BRUCK\n"
    "alltoall       *          *     PAIRWISE\n"
    "alltoallv      *          *     PAIRWISE\n"
    "scatter        *          *     BINOMIAL\n"
    "barrier        *          *     DISSEMINATION\n";

const char *hc_tune_builtin_text(void)
{
    return builtin_text;
}

/* rule sources, in priority order */
enum { SRC_ENV, SRC_ALGO_OP, SRC_ALGO_ALL, SRC_FILE, SRC_BUILTIN };
/* `when` conditions */
enum { W_FLAT = 1, W_HIER = 2, W_MULTINODE = 4, W_DET = 8, W_NODET = 16, W_INTEL = 32,
       W_REG = 64 /* per operation: args.registered (hc_tune_select) */, W_AMD = 128 };
/* hc_rule_t.noted: what was logged already (once per communicator) */
enum { NOTED_UNUSABLE = 1, NOTED_DET = 2 };

typedef struct hc_rule {
    const hc_algo_t *algo;
    uint64_t lo, hi;   /* message bytes [lo, hi); hi = UINT64_MAX: no bound */
    uint64_t chunk;    /* 0: the algorithm's default (HCCL_*_CHUNK_SIZE) */
    uint32_t rlo, rhi; /* ranks [rlo, rhi] */
    uint8_t nt;        /* option nt: RECV written with non-temporal stores */
    uint32_t line;     /* in its source */
    const char *origin; /* file name (SRC_FILE) */
    uint8_t coll, when, src, noted;
} hc_rule_t;

typedef struct {
    hc_rule_t *v;
    uint32_t n, cap;
} rules_t;

struct hc_tune {
    uint32_t nranks;
    uint64_t ring_chunk, bcast_chunk;
    hc_rule_t *rules[HC_COLL_LAST];
    uint32_t nrules[HC_COLL_LAST];
    hc_rule_t all[]; /* every rule of this communicator */
};

static int rules_push(rules_t *r, const hc_rule_t *x)
{
    if (r->n == r->cap) {
        uint32_t nc = r->cap ? 2 * r->cap : 32;
        hc_rule_t *nv = realloc(r->v, nc * sizeof(hc_rule_t));
        if (nv == NULL)
            return HCCL_E_MEMORY;
        r->v = nv;
        r->cap = nc;
    }
    r->v[r->n++] = *x;
    return HCCL_SUCCESS;
}

static void rules_free(rules_t *r)
{
    free(r->v);
    memset(r, 0, sizeof(*r));
}

static const char *src_name(uint8_t src)
{
    static const char *const names[] = {"HCCL_*_ALGO", "HCCL_ALGO", "HCCL_ALGO", "tuning file",
                                        "built-in"};
    return src <= SRC_BUILTIN ? names[src] : "?";
}

/* ---------------------------------------------------------------- text */

static int find_coll(const char *s, hc_coll_t *c)
{
    if (strcasecmp(s, "bcast") == 0) {
        *c = HC_COLL_BROADCAST;
        return 1;
    }
    for (int i = 0; i < HC_COLL_LAST; i++)
        if (strcasecmp(s, hc_coll_name((hc_coll_t)i)) == 0) {
            *c = (hc_coll_t)i;
            return 1;
        }
    return 0;
}

/* "4096", "128K", "128KB", "8M", "1GB", "16B" */
static int parse_size(const char *s, uint64_t *out)
{
    if (!isdigit((unsigned char)*s))
        return -1;
    uint64_t v = 0;
    for (; isdigit((unsigned char)*s); s++) {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    uint64_t mul = 1;
    if (*s) {
        char u = (char)toupper((unsigned char)*s);
        if (u == 'K')
            mul = 1ull << 10;
        else if (u == 'M')
            mul = 1ull << 20;
        else if (u == 'G')
            mul = 1ull << 30;
        else if (u != 'B')
            return -1;
        s++;
        if (mul != 1 && (*s == 'b' || *s == 'B'))
            s++;
        if (*s)
            return -1;
    }
    if (v > UINT64_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

/* "*", "LO-HI", "LO-*", "N" -> [lo, hi]; sizes or plain numbers */
static int parse_range(char *s, uint64_t *lo, uint64_t *hi, int sizes)
{
    if (strcmp(s, "*") == 0) {
        *lo = 0;
        *hi = UINT64_MAX;
        return 0;
    }
    char *dash = strchr(s, '-');
    if (dash)
        *dash = '\0';
    if (parse_size(s, lo) != 0 || (!sizes && !isdigit((unsigned char)s[strlen(s) - 1])))
        return -1;
    if (dash == NULL) {
        *hi = *lo;
        return 0;
    }
    const char *h = dash + 1;
    if (strcmp(h, "*") == 0 || strcasecmp(h, "inf") == 0) {
        *hi = UINT64_MAX;
        return 0;
    }
    if (parse_size(h, hi) != 0 || (!sizes && !isdigit((unsigned char)h[strlen(h) - 1])))
        return -1;
    return 0;
}

static void known_algos(hc_coll_t c, char *buf, size_t len)
{
    int n;
    const hc_algo_t *tab = hc_coll_algos(c, &n);
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", tab[i].name);
}

/* One line of rules text. Returns 0 (rule in *r), 1 (nothing on the line)
 * or -1 (why says why). */
static int parse_line(char *line, hc_rule_t *r, char *why, size_t wl)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *tok[8], *save = NULL;
    int nt = 0;
    for (char *p = strtok_r(line, " \t\r\n", &save); p; p = strtok_r(NULL, " \t\r\n", &save)) {
        if (nt == 8) {
            snprintf(why, wl, "too many fields");
            return -1;
        }
        tok[nt++] = p;
    }
    if (nt == 0)
        return 1;
    if (nt < 4) {
        snprintf(why, wl, "expected: collective bytes ranks ALGORITHM [chunk=SIZE] [nt] [when=COND]");
        return -1;
    }
    hc_coll_t c;
    memset(r, 0, sizeof(*r));
    if (!find_coll(tok[0], &c)) {
        snprintf(why, wl, "unknown collective '%s' (allreduce, broadcast, reduce, "
                 "reducescatter, allgather, scatter, alltoall, alltoallv, barrier)", tok[0]);
        return -1;
    }
    r->coll = (uint8_t)c;
    char f[64];
    snprintf(f, sizeof(f), "%s", tok[1]); /* parse_range cuts it */
    if (parse_range(f, &r->lo, &r->hi, 1) != 0) {
        snprintf(why, wl, "bad byte range '%s' (LO-HI with K/M/G suffixes, LO-*, or *)", tok[1]);
        return -1;
    }
    if (r->hi == r->lo && r->hi != UINT64_MAX)
        r->hi = r->lo + 1; /* one size */
    if (r->hi <= r->lo) {
        snprintf(why, wl, "empty byte range '%s'", tok[1]);
        return -1;
    }
    uint64_t rlo, rhi;
    snprintf(f, sizeof(f), "%s", tok[2]);
    if (parse_range(f, &rlo, &rhi, 0) != 0 || rlo > UINT32_MAX ||
        (rhi != UINT64_MAX && (rhi > UINT32_MAX || rhi < rlo))) {
        snprintf(why, wl, "bad rank range '%s' (N, LO-HI, LO-* or *)", tok[2]);
        return -1;
    }
    r->rlo = (uint32_t)rlo;
    r->rhi = rhi == UINT64_MAX ? UINT32_MAX : (uint32_t)rhi;
    r->algo = hc_coll_find_algo(c, tok[3]);
    if (r->algo == NULL) {
        char known[256];
        known_algos(c, known, sizeof(known));
        snprintf(why, wl, "unknown %s algorithm '%s' (known: %s)", hc_coll_name(c), tok[3], known);
        return -1;
    }
    for (int i = 4; i < nt; i++) {
        if (strncasecmp(tok[i], "chunk=", 6) == 0) {
            if (parse_size(tok[i] + 6, &r->chunk) != 0 || r->chunk == 0) {
                snprintf(why, wl, "bad chunk size '%s'", tok[i] + 6);
                return -1;
            }
        } else if (strcasecmp(tok[i], "nt") == 0) {
            r->nt = 1;
        } else if (strncasecmp(tok[i], "when=", 5) == 0) {
            char *s2 = NULL;
            for (char *w = strtok_r(tok[i] + 5, ",", &s2); w; w = strtok_r(NULL, ",", &s2)) {
                if (strcasecmp(w, "flat") == 0)
                    r->when |= W_FLAT;
                else if (strcasecmp(w, "hier") == 0)
                    r->when |= W_HIER;
                else if (strcasecmp(w, "multinode") == 0)
                    r->when |= W_MULTINODE;
                else if (strcasecmp(w, "det") == 0)
                    r->when |= W_DET;
                else if (strcasecmp(w, "nodet") == 0)
                    r->when |= W_NODET;
                else if (strcasecmp(w, "intel") == 0)
                    r->when |= W_INTEL;
                else if (strcasecmp(w, "registered") == 0)
                    r->when |= W_REG;
                else if (strcasecmp(w, "amd") == 0)
                    r->when |= W_AMD;
                else {
                    snprintf(why, wl, "unknown condition '%s' (flat, hier, multinode, det, "
                             "nodet, intel, amd, registered)", w);
                    return -1;
                }
            }
        } else {
            snprintf(why, wl, "unknown option '%s' (chunk=SIZE, nt, when=COND)", tok[i]);
            return -1;
        }
    }
    return 0;
}

/* Parse rules text into out (appended). */
static int parse_text(const char *text, uint8_t src, const char *origin, rules_t *out,
                      char *err, size_t errlen)
{
    const char *p = text;
    for (uint32_t lineno = 1; *p; lineno++) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[1024], why[320];
        if (len >= sizeof(line)) {
            snprintf(err, errlen, "%s:%u: line too long", origin, lineno);
            return HCCL_E_PARA;
        }
        memcpy(line, p, len);
        line[len] = '\0';
        hc_rule_t r;
        int rc = parse_line(line, &r, why, sizeof(why));
        if (rc < 0) {
            snprintf(err, errlen, "%s:%u: %s", origin, lineno, why);
            return HCCL_E_PARA;
        }
        if (rc == 0) {
            r.src = src;
            r.line = lineno;
            r.origin = origin;
            if (rules_push(out, &r) != HCCL_SUCCESS) {
                snprintf(err, errlen, "%s: out of memory", origin);
                return HCCL_E_MEMORY;
            }
        }
        p += len + (nl != NULL);
    }
    return HCCL_SUCCESS;
}

int hc_tune_check_text(const char *text, const char *origin, char *err, size_t errlen)
{
    rules_t r = {0};
    err[0] = '\0';
    int rc = parse_text(text, SRC_FILE, origin, &r, err, errlen);
    rules_free(&r);
    return rc;
}

/* ---------------------------------------------------------------- HCCL_ALGO */

/* HCCL's algorithm names (HCCL_ALGO levelN values) and the nearest hcomm
 * algorithm per collective ("A|B": the first one the table has). */
static const struct {
    const char *hccl;
    const char *algo[HC_COLL_LAST];
} hccl_map[] = {
    {"ring", {[HC_COLL_ALLREDUCE] = "RING", [HC_COLL_REDUCESCATTER] = "RING",
              [HC_COLL_ALLGATHER] = "RING", [HC_COLL_BROADCAST] = "SCATTER_ALLGATHER"}},
    {"H-D_R", {[HC_COLL_ALLREDUCE] = "HD", [HC_COLL_REDUCESCATTER] = "HD",
               [HC_COLL_ALLGATHER] = "RD", [HC_COLL_BROADCAST] = "BINOMIAL",
               [HC_COLL_REDUCE] = "RS_GATHER"}},
    {"NHR", {[HC_COLL_ALLREDUCE] = "HD", [HC_COLL_REDUCESCATTER] = "HD",
             [HC_COLL_ALLGATHER] = "BRUCK", [HC_COLL_BROADCAST] = "SCATTER_ALLGATHER",
             [HC_COLL_REDUCE] = "RS_GATHER"}},
    {"NHR_V1", {[HC_COLL_ALLREDUCE] = "HD", [HC_COLL_REDUCESCATTER] = "HD",
                [HC_COLL_ALLGATHER] = "BRUCK", [HC_COLL_BROADCAST] = "SCATTER_ALLGATHER",
                [HC_COLL_REDUCE] = "RS_GATHER"}},
    {"NB", {[HC_COLL_ALLREDUCE] = "HD", [HC_COLL_REDUCESCATTER] = "HD",
            [HC_COLL_ALLGATHER] = "BRUCK", [HC_COLL_BROADCAST] = "SCATTER_ALLGATHER",
            [HC_COLL_REDUCE] = "RS_GATHER", [HC_COLL_ALLTOALL] = "BRUCK"}},
    {"pipeline", {[HC_COLL_ALLREDUCE] = "HIER|TORUS2D", [HC_COLL_REDUCESCATTER] = "HIER",
                  [HC_COLL_ALLGATHER] = "HIER", [HC_COLL_BROADCAST] = "PIPELINE"}},
    {"AHC", {[HC_COLL_ALLREDUCE] = "HIER", [HC_COLL_REDUCESCATTER] = "HIER",
             [HC_COLL_ALLGATHER] = "HIER", [HC_COLL_BROADCAST] = "HIER"}},
    {"pairwise", {[HC_COLL_ALLTOALL] = "PAIRWISE", [HC_COLL_ALLTOALLV] = "PAIRWISE"}},
    {"fullmesh", {[HC_COLL_ALLREDUCE] = "DIRECT"}},
    {"mesh", {[HC_COLL_ALLREDUCE] = "DIRECT"}},
};

/* name -> algorithm of coll: HCCL's names first, then the table's own.
 * *known: the name means something for some collective. */
static const hc_algo_t *map_name(const char *name, hc_coll_t c, int *known)
{
    for (size_t i = 0; i < sizeof(hccl_map) / sizeof(hccl_map[0]); i++) {
        if (strcasecmp(name, hccl_map[i].hccl) != 0)
            continue;
        *known = 1;
        const char *list = hccl_map[i].algo[c];
        while (list && *list) {
            char one[32];
            size_t l = strcspn(list, "|");
            snprintf(one, sizeof(one), "%.*s", (int)l, list);
            const hc_algo_t *a = hc_coll_find_algo(c, one);
            if (a)
                return a;
            list += l + (list[l] == '|');
        }
        return NULL;
    }
    for (int k = 0; k < HC_COLL_LAST; k++)
        if (hc_coll_find_algo((hc_coll_t)k, name))
            *known = 1;
    return hc_coll_find_algo(c, name);
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* "level0:NA;level1:ring" -> the name that decides ("" = automatic):
 * level1, else level0, else level2 (hcomm has one algorithm per call). */
static int parse_levels(char *s, const char **name, char *why, size_t wl)
{
    const char *lv[3] = {NULL, NULL, NULL};
    char *save = NULL;
    for (char *p = strtok_r(s, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
        p = trim(p);
        if (*p == '\0')
            continue;
        char *colon = strchr(p, ':');
        if (colon == NULL || strncasecmp(p, "level", 5) != 0 || colon != p + 6 ||
            p[5] < '0' || p[5] > '2') {
            snprintf(why, wl, "'%s': expected level0:ALGO, level1:ALGO or level2:ALGO", p);
            return -1;
        }
        const char *v = trim(colon + 1);
        if (*v == '\0') {
            snprintf(why, wl, "'%s': no algorithm after the colon", p);
            return -1;
        }
        lv[p[5] - '0'] = v;
    }
    static const int order[3] = {1, 0, 2};
    *name = "";
    for (int i = 0; i < 3; i++)
        if (lv[order[i]] && strcasecmp(lv[order[i]], "NA") != 0) {
            *name = lv[order[i]];
            break;
        }
    return 0;
}

/* HCCL_ALGO -> rules (per op: SRC_ALGO_OP, global: SRC_ALGO_ALL). */
static int hccl_algo_rules(const char *value, rules_t *out, char *why, size_t wl)
{
    size_t len = strlen(value);
    char *buf = malloc(len + 1);
    if (buf == NULL) {
        snprintf(why, wl, "out of memory");
        return HCCL_E_MEMORY;
    }
    memcpy(buf, value, len + 1);
    int rc = HCCL_SUCCESS;
    char *save = NULL;
    for (char *part = strtok_r(buf, "/", &save); part && rc == HCCL_SUCCESS;
         part = strtok_r(NULL, "/", &save)) {
        part = trim(part);
        if (*part == '\0')
            continue;
        char *eq = strchr(part, '=');
        hc_coll_t op = HC_COLL_LAST;
        char *levels = part;
        if (eq) {
            *eq = '\0';
            char *opname = trim(part);
            if (!find_coll(opname, &op)) {
                snprintf(why, wl, "unknown operation '%s' (allreduce, broadcast, reduce, "
                         "reducescatter, allgather, scatter, alltoall)", opname);
                rc = HCCL_E_PARA;
                break;
            }
            levels = eq + 1;
        }
        const char *name;
        if (parse_levels(levels, &name, why, wl) != 0) {
            rc = HCCL_E_PARA;
            break;
        }
        if (*name == '\0')
            continue; /* NA: automatic */
        int known = 0;
        for (int c = 0; c < HC_COLL_LAST; c++) {
            if (op != HC_COLL_LAST && c != (int)op &&
                !(op == HC_COLL_ALLTOALL && c == HC_COLL_ALLTOALLV))
                continue;
            const hc_algo_t *a = map_name(name, (hc_coll_t)c, &known);
            if (a == NULL) {
                if (op == (hc_coll_t)c && known) {
                    snprintf(why, wl, "'%s' has no %s algorithm", name, hc_coll_name(op));
                    rc = HCCL_E_PARA;
                    break;
                }
                continue;
            }
            hc_rule_t r = {.algo = a, .lo = 0, .hi = UINT64_MAX, .rlo = 0, .rhi = UINT32_MAX,
                           .coll = (uint8_t)c,
                           .src = op == HC_COLL_LAST ? SRC_ALGO_ALL : SRC_ALGO_OP};
            if (rules_push(out, &r) != HCCL_SUCCESS) {
                snprintf(why, wl, "out of memory");
                rc = HCCL_E_MEMORY;
                break;
            }
        }
        if (rc == HCCL_SUCCESS && !known) {
            snprintf(why, wl, "unknown algorithm '%s' (HCCL's ring, H-D_R, NHR, NHR_V1, NB, "
                     "pipeline, AHC, pairwise, fullmesh, NA, or an hcomm name such as "
                     "DBTREE, TORUS2D, HD, PIPELINE)", name);
            rc = HCCL_E_PARA;
        }
    }
    free(buf);
    return rc;
}

int hc_tune_check_hccl_algo(const char *value, char *err, size_t errlen)
{
    rules_t r = {0};
    err[0] = '\0';
    int rc = hccl_algo_rules(value, &r, err, errlen);
    rules_free(&r);
    return rc;
}

/* ---------------------------------------------------------------- sources */

static const char *forced_name(const hc_config_t *cfg, hc_coll_t coll, const char **var)
{
    switch (coll) {
    case HC_COLL_ALLREDUCE:
        *var = "HCCL_ALLREDUCE_ALGO";
        return cfg->allreduce_algo;
    case HC_COLL_BROADCAST:
        *var = "HCCL_BCAST_ALGO";
        return cfg->bcast_algo;
    case HC_COLL_ALLGATHER:
        *var = "HCCL_ALLGATHER_ALGO";
        return cfg->allgather_algo;
    case HC_COLL_REDUCESCATTER:
        *var = "HCCL_REDUCESCATTER_ALGO";
        return cfg->reducescatter_algo;
    case HC_COLL_ALLTOALL:
    case HC_COLL_ALLTOALLV:
        *var = "HCCL_ALLTOALL_ALGO";
        return cfg->alltoall_algo;
    case HC_COLL_REDUCE:
        *var = "HCCL_REDUCE_ALGO";
        return cfg->reduce_algo;
    default:
        *var = NULL;
        return "";
    }
}

/* The built-in rules and the tuning files, parsed once per process. */
typedef struct file_cache {
    struct file_cache *next;
    char *path;
    rules_t rules;
    uint64_t hash; /* FNV-1a of the contents */
    int rc;
    char err[512];
} file_cache_t;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static rules_t builtin_rules;
static int builtin_rc = -1;
static char builtin_err[512];
static file_cache_t *files;

static const rules_t *get_builtin(char *err, size_t errlen)
{
    pthread_mutex_lock(&cache_lock);
    if (builtin_rc < 0)
        builtin_rc = parse_text(builtin_text, SRC_BUILTIN, "built-in table", &builtin_rules,
                                builtin_err, sizeof(builtin_err));
    int rc = builtin_rc;
    pthread_mutex_unlock(&cache_lock);
    if (rc != HCCL_SUCCESS) {
        snprintf(err, errlen, "%s", builtin_err);
        return NULL;
    }
    return &builtin_rules;
}

static uint64_t fnv(const char *p, size_t n)
{
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
    return h;
}

/* The largest tuning file read: hcomm-tune writes a few KB. */
#define TUNE_FILE_MAX ((size_t)1 << 20)

/* The cached parse of a tuning file (the entry stays for the process). */
static const file_cache_t *get_file(const char *path)
{
    pthread_mutex_lock(&cache_lock);
    file_cache_t *f;
    for (f = files; f; f = f->next)
        if (strcmp(f->path, path) == 0)
            break;
    if (f == NULL && (f = calloc(1, sizeof(*f))) != NULL && (f->path = strdup(path)) != NULL) {
        char *text = NULL, why[128];
        size_t n = 0;
        int code = hc_file_read(path, TUNE_FILE_MAX, &text, &n);
        if (code != 0) {
            f->rc = code == ENOMEM ? HCCL_E_MEMORY : HCCL_E_PARA;
            snprintf(f->err, sizeof(f->err), "%s: cannot read: %s", path,
                     hc_file_strerror(code, TUNE_FILE_MAX, why, sizeof(why)));
        } else {
            f->hash = fnv(text, n);
            f->rc = parse_text(text, SRC_FILE, f->path, &f->rules, f->err, sizeof(f->err));
        }
        free(text);
        f->next = files;
        files = f;
    } else if (f == NULL) {
        pthread_mutex_unlock(&cache_lock);
        return NULL;
    }
    pthread_mutex_unlock(&cache_lock);
    return f;
}

void hc_tune_forced_text(const hc_config_t *cfg, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int c = 0; c < HC_COLL_LAST && off < len; c++) {
        const char *var, *name = forced_name(cfg, (hc_coll_t)c, &var);
        if (name[0])
            off += (size_t)snprintf(buf + off, len - off, "%s=%s;", hc_coll_name((hc_coll_t)c),
                                    name);
    }
    if (cfg->tune_file[0] && off < len) {
        const file_cache_t *f = get_file(cfg->tune_file);
        /* the contents, not the path: the ranks must choose alike */
        off += (size_t)snprintf(buf + off, len - off, "tune=%016llx;",
                                f && f->rc == HCCL_SUCCESS ? (unsigned long long)f->hash : 0ull);
    }
    /* rank-ordered rings: every rank must build the same ring */
    if (!cfg->topo_ring_order && off < len)
        off += (size_t)snprintf(buf + off, len - off, "HCCL_TOPO_RING_ORDER=0;");
}

/* ---------------------------------------------------------------- per communicator */

/* The CPU's vendor (x86 CPUID leaf 0): W_INTEL for GenuineIntel, W_AMD for
 * AuthenticAMD, 0 for anything else. */
static unsigned cpu_vendor(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        if (b == 0x756e6547u && d == 0x49656e69u && c == 0x6c65746eu) /* Genu ineI ntel */
            return W_INTEL;
        if (b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u) /* Auth enti cAMD */
            return W_AMD;
    }
#endif
    return 0;
}

static unsigned view_when(const hc_topo_view_t *v, int det)
{
    unsigned w = det ? W_DET : W_NODET;
    w |= cpu_vendor();
    int hier = v && ((v->flags & HC_TOPO_F_HIER) || v->ngroups > 1 || v->nnodes > 1);
    int multi = v && ((v->flags & HC_TOPO_F_MULTINODE) || v->nnodes > 1);
    w |= hier ? W_HIER : W_FLAT;
    if (multi)
        w |= W_MULTINODE;
    return w;
}

static void fmt_size(uint64_t v, char *buf, size_t n)
{
    if (v != 0 && v % (1ull << 30) == 0)
        snprintf(buf, n, "%lluGB", (unsigned long long)(v >> 30));
    else if (v != 0 && v % (1ull << 20) == 0)
        snprintf(buf, n, "%lluMB", (unsigned long long)(v >> 20));
    else if (v != 0 && v % (1ull << 10) == 0)
        snprintf(buf, n, "%lluKB", (unsigned long long)(v >> 10));
    else
        snprintf(buf, n, "%llu", (unsigned long long)v);
}

/* A rule in tuning-file syntax, with its source as a comment. */
static void rule_text(const hc_rule_t *r, char *buf, size_t len)
{
    char lo[24], hi[24], rr[32], ch[40] = "", wh[64] = "", src[160];
    fmt_size(r->lo, lo, sizeof(lo));
    if (r->hi == UINT64_MAX)
        snprintf(hi, sizeof(hi), "*");
    else
        fmt_size(r->hi, hi, sizeof(hi));
    if (r->rlo == 0 && r->rhi == UINT32_MAX)
        snprintf(rr, sizeof(rr), "*");
    else if (r->rhi == UINT32_MAX)
        snprintf(rr, sizeof(rr), "%u-*", r->rlo);
    else
        snprintf(rr, sizeof(rr), "%u-%u", r->rlo, r->rhi);
    if (r->chunk) {
        char c[24];
        fmt_size(r->chunk, c, sizeof(c));
        snprintf(ch, sizeof(ch), " chunk=%s", c);
    }
    if (r->when) {
        static const char *const wn[] = {"flat",  "hier",       "multinode", "det",
                                         "nodet", "intel",      "registered", "amd"};
        size_t o = (size_t)snprintf(wh, sizeof(wh), " when=");
        for (int i = 0, first = 1; i < 8; i++)
            if (r->when & (1u << i)) {
                o += (size_t)snprintf(wh + o, sizeof(wh) - o, "%s%s", first ? "" : ",", wn[i]);
                first = 0;
            }
    }
    if (r->src == SRC_FILE || r->src == SRC_BUILTIN)
        snprintf(src, sizeof(src), "%s:%u", r->src == SRC_FILE ? r->origin : "built-in", r->line);
    else if (r->src == SRC_ENV)
        snprintf(src, sizeof(src), "%s", r->origin);
    else
        snprintf(src, sizeof(src), "HCCL_ALGO%s", r->src == SRC_ALGO_OP ? " (per op)" : "");
    char range[56];
    if (r->lo == 0 && r->hi == UINT64_MAX)
        snprintf(range, sizeof(range), "*");
    else
        snprintf(range, sizeof(range), "%s-%s", lo, hi);
    snprintf(buf, len, "%-13s %-12s %-6s %s%s%s%s  # %s", hc_coll_name((hc_coll_t)r->coll), range,
             rr, r->algo->name, ch, r->nt ? " nt" : "", wh, src);
}

void hc_tune_force_nt(hc_tune_t *t, hc_coll_t coll)
{
    if (t == NULL || (unsigned)coll >= HC_COLL_LAST)
        return;
    for (uint32_t i = 0; i < t->nrules[coll]; i++)
        if (t->rules[coll][i].src <= SRC_ALGO_ALL)
            t->rules[coll][i].nt = 1;
}

void hc_tune_print(const hc_tune_t *t, FILE *f)
{
    char line[400];
    for (int c = 0; c < HC_COLL_LAST; c++)
        for (uint32_t i = 0; i < t->nrules[c]; i++) {
            rule_text(&t->rules[c][i], line, sizeof(line));
            fprintf(f, "%s\n", line);
        }
}

/* The rules the environment forces (HCCL_<COLL>_ALGO, then HCCL_ALGO),
 * appended to *mine; HCCL_E_PARA with a log line for an unknown name. */
static int env_rules(const hc_config_t *cfg, rules_t *mine)
{
    char err[640];
    int rc = HCCL_SUCCESS;
    for (int c = 0; c < HC_COLL_LAST && rc == HCCL_SUCCESS; c++) {
        const char *var, *name = forced_name(cfg, (hc_coll_t)c, &var);
        if (name[0] == '\0')
            continue;
        const hc_algo_t *a = hc_coll_find_algo((hc_coll_t)c, name);
        if (a == NULL) {
            if (c == HC_COLL_ALLTOALLV && hc_coll_find_algo(HC_COLL_ALLTOALL, name))
                continue; /* an AlltoAll-only algorithm: AlltoAllV stays automatic */
            char known[256];
            known_algos((hc_coll_t)c, known, sizeof(known));
            HC_ERROR(HC_SUB_TUNE, "%s='%s': unknown %s algorithm (known: %s)", var, name,
                     hc_coll_name((hc_coll_t)c), known);
            rc = HCCL_E_PARA;
            break;
        }
        hc_rule_t r = {.algo = a, .lo = 0, .hi = UINT64_MAX, .rlo = 0, .rhi = UINT32_MAX,
                       .coll = (uint8_t)c, .src = SRC_ENV, .origin = var};
        rc = rules_push(mine, &r);
    }
    if (rc == HCCL_SUCCESS && cfg->algo[0]) {
        rc = hccl_algo_rules(cfg->algo, mine, err, sizeof(err));
        if (rc != HCCL_SUCCESS)
            HC_ERROR(HC_SUB_TUNE, "HCCL_ALGO='%s': %s", cfg->algo, err);
    }
    return rc;
}

/* The rules of srcs (by source: environment, file, built-in) that apply
 * to nranks ranks and conditions `when`, in priority order, per
 * collective: into t (NULL: only counted). Returns their number. */
static uint32_t pick_rules(const rules_t *const srcs[3], uint32_t nranks, unsigned when,
                           hc_tune_t *t)
{
    uint32_t k = 0;
    for (int c = 0; c < HC_COLL_LAST; c++) {
        if (t)
            t->rules[c] = &t->all[k];
        for (uint8_t src = SRC_ENV; src <= SRC_BUILTIN; src++)
            for (int s = 0; s < 3; s++)
                for (uint32_t i = 0; srcs[s] && i < srcs[s]->n; i++) {
                    const hc_rule_t *r = &srcs[s]->v[i];
                    if (r->coll != c || r->src != src || nranks < r->rlo || nranks > r->rhi ||
                        (r->when & when) != r->when)
                        continue;
                    if (t) {
                        t->all[k] = *r;
                        t->nrules[c]++;
                    }
                    k++;
                }
    }
    return k;
}

/* The resolved table, once per communicator at HCCL_DEBUG=INFO (TUNE). */
static void log_table(const hc_tune_t *t, uint32_t total, uint32_t nranks, unsigned when,
                      int deterministic)
{
    if (!HC_LOG_ON(HC_LOG_INFO, HC_SUB_TUNE))
        return;
    char line[400];
    HC_INFO(HC_SUB_TUNE, "algorithm table for %u ranks%s%s (first match wins):", nranks,
            when & W_HIER ? ", hierarchical topology" : "", deterministic ? ", deterministic" : "");
    for (uint32_t i = 0; i < total; i++) {
        rule_text(&t->all[i], line, sizeof(line));
        HC_INFO(HC_SUB_TUNE, "  %s", line);
    }
}

int hc_tune_create(const hc_config_t *cfg, uint32_t nranks, const hc_topo_view_t *view,
                   hc_tune_t **out)
{
    char err[640];
    rules_t mine = {0}; /* the HCCL_<COLL>_ALGO and HCCL_ALGO rules */
    const rules_t *builtin = get_builtin(err, sizeof(err));
    if (builtin == NULL) {
        HC_ERROR(HC_SUB_TUNE, "%s", err);
        return HCCL_E_INTERNAL;
    }
    const file_cache_t *file = NULL;
    if (cfg->tune_file[0]) {
        file = get_file(cfg->tune_file);
        if (file == NULL || file->rc != HCCL_SUCCESS) {
            HC_ERROR(HC_SUB_TUNE, "HCCL_TUNE_FILE: %s", file ? file->err : "out of memory");
            return file ? file->rc : HCCL_E_MEMORY;
        }
    }
    int rc = env_rules(cfg, &mine);
    if (rc != HCCL_SUCCESS) {
        rules_free(&mine);
        return rc;
    }
    /* keep what applies here, in priority order; registered is decided per
     * operation (hc_tune_select) */
    const unsigned when = view_when(view, cfg->deterministic) | W_REG;
    const rules_t *const srcs[3] = {&mine, file ? &file->rules : NULL, builtin};
    const uint32_t total = pick_rules(srcs, nranks, when, NULL);
    hc_tune_t *t = calloc(1, sizeof(*t) + total * sizeof(hc_rule_t));
    if (t == NULL) {
        rules_free(&mine);
        return HCCL_E_MEMORY;
    }
    t->nranks = nranks;
    t->ring_chunk = cfg->ring_chunk;
    t->bcast_chunk = cfg->bcast_chunk;
    pick_rules(srcs, nranks, when, t);
    rules_free(&mine);
    log_table(t, total, nranks, when, cfg->deterministic);
    *out = t;
    return HCCL_SUCCESS;
}

void hc_tune_destroy(hc_tune_t *t)
{
    free(t);
}

int hc_tune_check_config(const hc_config_t *cfg)
{
    static const hc_topo_view_t flat = {0};
    hc_tune_t *t = NULL;
    int rc = hc_tune_create(cfg, 1, &flat, &t);
    if (t)
        hc_tune_destroy(t);
    return rc;
}

static int is_reducing(hc_coll_t c)
{
    return c == HC_COLL_ALLREDUCE || c == HC_COLL_REDUCE || c == HC_COLL_REDUCESCATTER;
}

/* The size rules compare: one rank's count (a block for the per-rank
 * collectives); AlltoAllV 0 (ranks see different counts but must agree);
 * ReduceScatter's V form its largest block (the same on every rank). */
static uint64_t sel_bytes(const hc_coll_args_t *a)
{
    if (a->coll == HC_COLL_ALLTOALLV)
        return 0;
    if (a->scounts == NULL)
        return a->count * a->esize;
    uint64_t m = 0;
    for (uint32_t i = 0; i < a->nranks; i++)
        if (a->scounts[i] > m)
            m = a->scounts[i];
    return m * a->esize;
}

static void note_fallback(hc_rule_t *r, int det, const char *why, const hc_algo_t *to,
                          hc_coll_t coll)
{
    char src[96];
    if (r->src == SRC_ENV)
        snprintf(src, sizeof(src), "%s", r->origin);
    else if (r->src == SRC_FILE)
        snprintf(src, sizeof(src), "%s:%u", r->origin, r->line);
    else
        snprintf(src, sizeof(src), "%s", src_name(r->src));
    if (det)
        HC_INFO(HC_SUB_TUNE, "%s: %s (%s) does not keep the reduction order of deterministic "
                "mode; using %s", hc_coll_name(coll), r->algo->name, src, to->name);
    else if (r->src == SRC_BUILTIN)
        HC_INFO(HC_SUB_TUNE, "%s: %s cannot run here (%s); using %s", hc_coll_name(coll),
                r->algo->name, why, to->name);
    else
        HC_WARN(HC_SUB_TUNE, "%s: forced algorithm %s (%s) cannot run here (%s); using %s",
                hc_coll_name(coll), r->algo->name, src, why, to->name);
}

const hc_algo_t *hc_tune_select(hc_tune_t *t, hc_coll_args_t *a)
{
    const hc_coll_t c = a->coll;
    const uint64_t bytes = sel_bytes(a);
    hc_rule_t *rv = t->rules[c];
    hc_rule_t *skipped[4];
    const char *why[4];
    int nsk = 0;
    for (uint32_t i = 0; i < t->nrules[c]; i++) {
        hc_rule_t *r = &rv[i];
        if (bytes < r->lo || bytes >= r->hi || ((r->when & W_REG) && !a->registered))
            continue;
        const hc_algo_t *al = r->algo;
        const char *w = NULL;
        if (a->deterministic && is_reducing(c) && !(al->flags & HC_ALGO_F_DET))
            w = "";
        else if (al->usable)
            w = al->usable(a);
        if (w) {
            unsigned bit = *w ? NOTED_UNUSABLE : NOTED_DET;
            if (!(r->noted & bit) && nsk < 4) {
                r->noted |= (uint8_t)bit;
                skipped[nsk] = r;
                why[nsk++] = w;
            }
            continue;
        }
        for (int k = 0; k < nsk; k++)
            note_fallback(skipped[k], *why[k] == '\0', why[k], al, c);
        if (r->chunk)
            a->chunk_bytes = r->chunk;
        else if (al->flags & HC_ALGO_F_RING_CHUNK)
            a->chunk_bytes = t->ring_chunk;
        else if (c == HC_COLL_BROADCAST)
            a->chunk_bytes = t->bcast_chunk;
        else
            a->chunk_bytes = 0;
        a->nt_recv = r->nt;
        if (HC_LOG_ON(HC_LOG_INFO, HC_SUB_TUNE)) {
            char line[400];
            rule_text(r, line, sizeof(line));
            hc_log_write(HC_LOG_INFO, HC_SUB_TUNE, __FILE__, __LINE__,
                         "%s %llu B on %u ranks -> %s, chunk %llu (rule: %s)", hc_coll_name(c),
                         (unsigned long long)bytes, a->nranks, al->name,
                         (unsigned long long)a->chunk_bytes, line);
        }
        return al;
    }
    /* the built-in table ends with a catch-all per collective; in case a
     * rule was edited away: the first row of the table */
    int n;
    const hc_algo_t *tab = hc_coll_algos(c, &n);
    a->chunk_bytes = 0;
    a->nt_recv = 0;
    return &tab[0];
}
