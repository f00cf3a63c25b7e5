/*
 * src/env.c - the table of every HCCL_* environment variable (see env.h).
 *
 * One table, UCX ucp_context_config_table[] style: name, type, default text,
 * range, field, help. hc_env_load applies every default through the same
 * parser as the environment, so a default is always a valid value.
 *
 * Syntax, strictly parsed (see docs/ENV.md):
 *   size     a byte count ("4096") or a whole number with a unit: B, K/KB/KiB,
 *            M/MB/MiB, G/GB/GiB (powers of 1024, any case). No sign, no
 *            fraction ("1.5MB"), no blanks (" 4MB", "4 MB").
 *   uint     decimal digits only; "auto" (= 0) where the default is "auto".
 *   seconds  digits with an optional fraction: "120", "0.5"; whole seconds only
 *            where HCCL takes whole seconds (HCCL_EXEC_TIMEOUT).
 *   bool     0/1, true/false, yes/no, on/off (any case).
 *   level    NONE, ERROR, WARN, INFO, TRACE (any case). Numbers are refused:
 *            Ascend's 0-4 scale runs the opposite way from ours.
 *   subsys   comma list of INIT,COLL,TOPO,TUNE,ELASTIC,TRANSPORT,ENV,STREAM,ALL;
 *            a leading '^' logs everything but the listed ones.
 * A variable set to the empty string counts as unset (`export HCCL_X=`).
 */
#define _GNU_SOURCE
#include "env.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <net/if.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <hccl/hccl_types.h>

#include "log.h"

extern char **environ;

#define KB (1024.0)
#define MB (1024.0 * 1024.0)
#define GB (1024.0 * 1024.0 * 1024.0)
#define INT32_MAX_D 2147483647.0

#define FIELD(f) .offset = offsetof(hc_config_t, f), .size = sizeof(((hc_config_t *)0)->f)
#define GROUP_PREFIX "HCCL_GROUP_"

static const hc_env_var_t env_table[] = {
    /* logging */
    {.name = "HCCL_DEBUG", .type = HC_ENV_LEVEL, .def = "WARN", FIELD(debug_level),
     .help = "log level: NONE, ERROR, WARN, INFO, TRACE"},
    {.name = "HCCL_DEBUG_FILE", .type = HC_ENV_STRING, .def = "", FIELD(debug_file),
     .flags = HC_ENV_F_LOGNAME,
     .help = "log to this file instead of stderr; %h host, %p pid, %r rank (x until known)"},
    {.name = "HCCL_DEBUG_SUBSYS", .type = HC_ENV_SUBSYS, .def = "ALL", FIELD(debug_subsys),
     .help = "subsystems to log: INIT,COLL,TOPO,TUNE,ELASTIC,TRANSPORT,ENV,STREAM,ALL; ^X excludes"},
    {.name = "HCCL_ENTRY_LOG_ENABLE", .type = HC_ENV_BOOL, .def = "0", FIELD(entry_log),
     .help = "1: one INFO line per API call (op, count, type, comm, rank)"},
    /* algorithms and tuning */
    {.name = "HCCL_ALGO", .type = HC_ENV_STRING, .def = "", FIELD(algo),
     .help = "HCCL syntax: level0:NA;level1:ring, or per op allreduce=...;/allgather=..."},
    {.name = "HCCL_ALLREDUCE_ALGO", .type = HC_ENV_STRING, .def = "", FIELD(allreduce_algo),
     .help = "force the AllReduce algorithm (RING, DBTREE, TORUS2D, RD, HD, DIRECT, HIER)"},
    {.name = "HCCL_BCAST_ALGO", .type = HC_ENV_STRING, .def = "", FIELD(bcast_algo),
     .help = "force the Broadcast algorithm"},
    {.name = "HCCL_ALLGATHER_ALGO", .type = HC_ENV_STRING, .def = "", FIELD(allgather_algo),
     .help = "force the AllGather algorithm"},
    {.name = "HCCL_REDUCESCATTER_ALGO", .type = HC_ENV_STRING, .def = "",
     FIELD(reducescatter_algo), .help = "force the ReduceScatter algorithm"},
    {.name = "HCCL_ALLTOALL_ALGO", .type = HC_ENV_STRING, .def = "", FIELD(alltoall_algo),
     .help = "force the AlltoAll algorithm"},
    {.name = "HCCL_REDUCE_ALGO", .type = HC_ENV_STRING, .def = "", FIELD(reduce_algo),
     .help = "force the Reduce algorithm"},
    {.name = "HCCL_RING_CHUNK_SIZE", .type = HC_ENV_SIZE, .def = "auto", .min = 0, .max = GB,
     FIELD(ring_chunk), .flags = HC_ENV_F_AUTO,
     .help = "pipeline chunk of the ring algorithms; auto = chosen per size"},
    {.name = "HCCL_BCAST_CHUNK_SIZE", .type = HC_ENV_SIZE, .def = "1MB", .min = 1, .max = GB,
     FIELD(bcast_chunk), .help = "largest pipeline chunk of Broadcast (PIPELINE and DIRECT adapt below it)"},
    {.name = "HCCL_TUNE_FILE", .type = HC_ENV_STRING, .def = "", FIELD(tune_file),
     .help = "tuning table (from hcomm-tune) that replaces the built-in thresholds"},
    {.name = "HCCL_DETERMINISTIC", .type = HC_ENV_BOOL, .def = "false", FIELD(deterministic),
     .help = "true: fixed reduction order, bitwise reproducible results"},
    {.name = "HCCL_CHECK_ARGS", .type = HC_ENV_BOOL, .def = "0", FIELD(check_args),
     .help = "1: before every collective the ranks compare their arguments (one small "
             "AllGather); a rank that disagrees fails the call with HCCL_E_PARA on every "
             "rank, with nothing written"},
    {.name = "HCCL_GPU_IPC", .type = HC_ENV_BOOL, .def = "0", FIELD(gpu_ipc),
     .help = "1: AllReduce and Broadcast of device buffers among the processes of one host "
             "go through CUDA IPC handles instead of host staging (CUDA builds; docs/GPU.md)"},
    /* buffers, fusion, streams; HCCL_BUFFER_SIZE comes after HCCL_BUFFSIZE so
     * that it wins when both are set (it has no default of its own) */
    {.name = "HCCL_BUFFSIZE", .type = HC_ENV_MB, .def = "200", .min = 1, .max = 65536,
     FIELD(buffsize), .help = "staging buffer per communicator context, in MB (HCCL unit)"},
    {.name = "HCCL_BUFFER_SIZE", .type = HC_ENV_SIZE, .def = "", .min = 4 * KB, .max = 64 * GB,
     FIELD(buffsize), .help = "same as HCCL_BUFFSIZE with a size unit; wins if both are set"},
    {.name = "HCCL_FUSION_THRESHOLD", .type = HC_ENV_SIZE, .def = "auto", .min = 0,
     .max = 64 * GB, FIELD(fusion_threshold), .flags = HC_ENV_F_AUTO,
     .help = "bytes per fused AllReduce of HcclAllReduceMulti (packed bucket or gathered "
              "tensors); auto = 64MB; at most half of HCCL_BUFFSIZE"},
    {.name = "HCCL_OVERLAP_MEMCPY", .type = HC_ENV_BOOL, .def = "1", FIELD(overlap_memcpy),
     .help = "1: fusion pack/unpack and staging copies overlap with transfers"},
    {.name = "HCCL_SINGLE_COPY", .type = HC_ENV_BOOL, .def = "1", FIELD(single_copy),
     .help = "0: no single-copy (CMA) reads between the processes of one host; the CMA "
             "algorithms fall back to DIRECT"},
    {.name = "HCCL_MAX_CONCURRENT", .type = HC_ENV_UINT, .def = "4", .min = 1, .max = 1024,
     FIELD(max_concurrent), .help = "operations in flight per stream"},
    /* bootstrap and failures */
    {.name = "HCCL_CONNECT_TIMEOUT", .type = HC_ENV_SECONDS, .def = "120", .min = 0.001,
     .max = INT32_MAX_D, FIELD(connect_timeout),
     .help = "seconds to wait for bootstrap / connection setup"},
    {.name = "HCCL_EXEC_TIMEOUT", .type = HC_ENV_SECONDS, .def = "1836", .min = 0,
     .max = INT32_MAX_D, FIELD(exec_timeout), .flags = HC_ENV_F_WHOLE,
     .help = "whole seconds an operation may wait on a peer (0 = forever)"},
    {.name = "HCCL_IF_IP", .type = HC_ENV_STRING, .def = "", FIELD(if_ip),
     .flags = HC_ENV_F_IPADDR, .help = "root-info bootstrap: IP address to listen on"},
    {.name = "HCCL_SOCKET_IFNAME", .type = HC_ENV_STRING, .def = "", FIELD(socket_ifname),
     .flags = HC_ENV_F_IFNAMES,
     .help = "root-info bootstrap: network interfaces to use: prefixes eth,ib; =eth0 exact "
             "names; ^ excludes"},
    {.name = "HCCL_IF_BASE_PORT", .type = HC_ENV_UINT, .def = "0", .min = 0, .max = 65535,
     FIELD(if_base_port), .help = "root-info bootstrap: first port to listen on (0 = any)"},
    {.name = "HCCL_SPAWN_HOST", .type = HC_ENV_STRING, .def = "", FIELD(spawn_host),
     .help = "HcclCommAddMember by spawn: the host the newcomer is started on (MPI_Comm_spawn's "
             "\"host\" info key, a name of mpirun's host list); empty = MPI's choice"},
    /* topology */
    {.name = GROUP_PREFIX "<n>", .type = HC_ENV_PREFIX, .def = "", .min = 0,
     .max = HC_MAX_GROUPS - 1, FIELD(groups),
     .help = "force fast group n (0..1023): ranks of one fast domain, e.g. 0,1,2,3"},
    {.name = "HCCL_NVLINK_MAP", .type = HC_ENV_STRING, .def = "", FIELD(nvlink_map),
     .help = "fast links between local devices/ranks: 0:1,1:2,2:3,3:0"},
    {.name = "HCCL_TOPO_FILE", .type = HC_ENV_STRING, .def = "", FIELD(topo_file),
     .help = "topology file that overrides detection"},
    {.name = "HCCL_TOPO_DUMP_FILE", .type = HC_ENV_STRING, .def = "", FIELD(topo_dump_file),
     .help = "write the detected topology to this file"},
    {.name = "HCCL_TOPO_RING_ORDER", .type = HC_ENV_BOOL, .def = "1", FIELD(topo_ring_order),
     .help = "1: the ring algorithms follow the topology's ring (each host's ranks "
             "together); 0: rank order; must agree on every rank"},
    /* tracing */
    {.name = "HCCL_TRACE_FILE", .type = HC_ENV_STRING, .def = "", FIELD(trace_file),
     .help = "write a Chrome-trace JSON timeline of every operation; %r rank"},
};
#define NVARS (sizeof(env_table) / sizeof(env_table[0]))

const hc_env_var_t *hc_env_table(size_t *n)
{
    if (n != NULL)
        *n = NVARS;
    return env_table;
}

/* ------------------------------------------------------------ parsers */

static const struct {
    const char *suffix;
    uint64_t mul;
} size_units[] = {
    {"B", 1},          {"K", 1ull << 10}, {"KB", 1ull << 10}, {"KIB", 1ull << 10},
    {"M", 1ull << 20}, {"MB", 1ull << 20}, {"MIB", 1ull << 20}, {"G", 1ull << 30},
    {"GB", 1ull << 30}, {"GIB", 1ull << 30},
};

/* Whole decimal number at *p, advanced past it. NULL or the reason. */
static const char *parse_digits(const char **p, uint64_t *out)
{
    const char *s = *p;
    if (!isdigit((unsigned char)*s))
        return "expected a non-negative whole number";
    uint64_t v = 0;
    for (; isdigit((unsigned char)*s); s++) {
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return "too large";
        v = v * 10 + d;
    }
    *p = s;
    *out = v;
    return NULL;
}

static const char *size_parse(const char *s, uint64_t *out)
{
    static const char expect[] = "expected a size like 4MB (a byte count, or a whole number "
                                 "with B, KB, MB or GB)";
    uint64_t v;
    if (s == NULL || !isdigit((unsigned char)*s))
        return expect;
    const char *why = parse_digits(&s, &v);
    if (why != NULL)
        return why; /* too large */
    uint64_t mul = 1;
    if (*s != '\0') {
        size_t i;
        for (i = 0; i < sizeof(size_units) / sizeof(size_units[0]); i++)
            if (strcasecmp(s, size_units[i].suffix) == 0)
                break;
        if (i == sizeof(size_units) / sizeof(size_units[0]))
            return expect;
        mul = size_units[i].mul;
    }
    if (v > UINT64_MAX / mul)
        return "too large";
    *out = v * mul;
    return NULL;
}

int hc_parse_size(const char *s, uint64_t *out)
{
    uint64_t v;
    if (size_parse(s, &v) != NULL)
        return -1;
    *out = v;
    return 0;
}

/* "2GB", "1MB", "4KB" when exact, else the byte count. */
static void size_format(uint64_t v, char *buf, size_t n)
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

static const char *uint_parse(const char *s, uint64_t *out)
{
    uint64_t v;
    const char *why = parse_digits(&s, &v);
    if (why != NULL)
        return why;
    if (*s != '\0')
        return "expected a non-negative whole number";
    *out = v;
    return NULL;
}

static const char *seconds_parse(const char *s, double *out)
{
    static const char expect[] = "expected a number of seconds like 120 or 0.5";
    const char *p = s;
    if (!isdigit((unsigned char)*p))
        return expect;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return expect;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p != '\0')
        return expect;
    *out = strtod(s, NULL); /* the syntax is checked: no inf/nan/hex/exponent */
    return NULL;
}

static int bool_parse(const char *s)
{
    static const char *const t[] = {"1", "true", "yes", "on"};
    static const char *const f[] = {"0", "false", "no", "off"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(s, t[i]) == 0)
            return 1;
        if (strcasecmp(s, f[i]) == 0)
            return 0;
    }
    return -1;
}

/* Log file names: only the escapes log.c expands. */
static const char *logname_check(const char *s)
{
    for (const char *p = s; *p != '\0'; p++) {
        if (*p != '%')
            continue;
        p++;
        if (*p != 'h' && *p != 'p' && *p != 'r' && *p != '%')
            return "unknown %-escape in the file name (use %h, %p, %r or %%)";
    }
    return NULL;
}

static const char *ipaddr_check(const char *s)
{
    unsigned char a[sizeof(struct in6_addr)];
    if (inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1)
        return NULL;
    return "expected an IPv4 or IPv6 address like 10.0.0.1 or fe80::1";
}

int hc_env_ifname_matches(const char *spec, const char *name)
{
    int exclude = 0, exact = 0;
    if (*spec == '^') {
        exclude = 1;
        spec++;
    }
    if (*spec == '=') {
        exact = 1;
        spec++;
    }
    int hit = 0;
    for (const char *t = spec;; t++) {
        size_t len = strcspn(t, ",");
        if (len > 0 && strncmp(t, name, len) == 0 && (!exact || name[len] == '\0'))
            hit = 1;
        t += len;
        if (hit || *t == '\0')
            break;
    }
    return exclude ? !hit : hit;
}

/* HCCL_SOCKET_IFNAME: [^][=]name,name,... with names an interface name
 * could start with, selecting at least one interface of this host (up or
 * not: the choice of an address comes later, src/bootstrap_tcp.c). */
static const char *ifnames_check(const char *s, char *buf, size_t n)
{
    static const char expect[] = "expected a comma list of interface name prefixes like eth,ib "
                                 "('=' first for exact names, '^' first to exclude)";
    const char *t = s + (*s == '^');
    t += *t == '=';
    for (;;) {
        size_t len = strcspn(t, ",");
        if (len == 0 || len >= IF_NAMESIZE)
            return expect;
        for (size_t i = 0; i < len; i++)
            if (!isgraph((unsigned char)t[i]) || strchr("/=^", t[i]) != NULL)
                return expect;
        if (t[len] == '\0')
            break;
        t += len + 1;
    }
    struct if_nameindex *ifs = if_nameindex();
    if (ifs == NULL)
        return "cannot list this host's network interfaces to check it";
    int hit = 0;
    size_t o = (size_t)snprintf(buf, n, "selects no network interface of this host (it has");
    for (struct if_nameindex *i = ifs; i->if_name != NULL; i++) {
        hit |= hc_env_ifname_matches(s, i->if_name);
        if (o < n)
            o += (size_t)snprintf(buf + o, n - o, "%s%s", i == ifs ? " " : ", ", i->if_name);
    }
    if_freenameindex(ifs);
    if (o < n)
        snprintf(buf + o, n - o, ")");
    return hit ? NULL : buf;
}

/* HCCL_GROUP_<n> values: "0,1,2,3". Ranks themselves are checked by topo/. */
static const char *rank_list_check(const char *s)
{
    static const char expect[] = "expected a comma-separated list of ranks like 0,1,2,3";
    const char *p = s;
    for (;;) {
        uint64_t r;
        if (parse_digits(&p, &r) != NULL || r > INT32_MAX)
            return expect;
        if (*p == '\0')
            return NULL;
        if (*p != ',')
            return expect;
        p++;
    }
}

static void store_uint(void *field, size_t size, uint64_t v)
{
    if (size == sizeof(uint64_t)) {
        memcpy(field, &v, sizeof(v));
    } else {
        uint32_t v32 = (uint32_t)v; /* int and unsigned fields alike */
        memcpy(field, &v32, sizeof(v32));
    }
}

static uint64_t load_uint(const void *field, size_t size)
{
    if (size == sizeof(uint64_t)) {
        uint64_t v;
        memcpy(&v, field, sizeof(v));
        return v;
    }
    uint32_t v32;
    memcpy(&v32, field, sizeof(v32));
    return v32;
}

/* "[4KB, 64GB]" style range text for an error message. */
static void range_format(const hc_env_var_t *v, char *buf, size_t n)
{
    if (v->type == HC_ENV_SIZE) {
        char lo[32], hi[32];
        size_format((uint64_t)v->min, lo, sizeof(lo));
        size_format((uint64_t)v->max, hi, sizeof(hi));
        snprintf(buf, n, "out of range [%s, %s]", lo, hi);
    } else {
        snprintf(buf, n, "out of range [%g, %.0f]", v->min, v->max);
    }
}

/* Parse val for v into cfg. The field is written only on success;
 * otherwise the reason goes to why. */
static int parse_var(const hc_env_var_t *v, const char *val, hc_config_t *cfg, char *why,
                     size_t whylen)
{
    char *field = (char *)cfg + v->offset;
    const char *reason = NULL;
    uint64_t u = 0;
    double d = 0;
    int range_err = 0;
    char ifs_why[200]; /* HCCL_SOCKET_IFNAME's reason names the host's interfaces */

    switch (v->type) {
    case HC_ENV_BOOL: {
        int b = bool_parse(val);
        if (b < 0)
            reason = "expected a boolean: 0/1, true/false, yes/no, on/off";
        else
            store_uint(field, v->size, (uint64_t)b);
        break;
    }
    case HC_ENV_UINT:
    case HC_ENV_SIZE:
    case HC_ENV_MB:
        if ((v->flags & HC_ENV_F_AUTO) && strcasecmp(val, "auto") == 0) {
            u = 0;
        } else if (v->type == HC_ENV_SIZE) {
            reason = size_parse(val, &u);
        } else {
            reason = uint_parse(val, &u);
            if (reason != NULL && v->type == HC_ENV_MB)
                reason = "expected a whole number of MB like 200 (HCCL_BUFFER_SIZE takes a unit)";
        }
        if (reason == NULL && !(u == 0 && (v->flags & HC_ENV_F_AUTO)) &&
            ((double)u < v->min || (double)u > v->max))
            range_err = 1;
        if (reason == NULL && !range_err)
            store_uint(field, v->size, v->type == HC_ENV_MB ? u << 20 : u);
        break;
    case HC_ENV_SECONDS:
        reason = seconds_parse(val, &d);
        if (reason == NULL && (v->flags & HC_ENV_F_WHOLE) && strchr(val, '.') != NULL)
            reason = "expected a whole number of seconds like 120 (HCCL's unit)";
        if (reason == NULL && (d < v->min || d > v->max))
            range_err = 1;
        if (reason == NULL && !range_err)
            memcpy(field, &d, sizeof(d));
        break;
    case HC_ENV_STRING: {
        size_t len = strlen(val);
        if (len >= v->size) {
            snprintf(why, whylen, "too long (%zu characters, at most %zu)", len, v->size - 1);
            return -1;
        }
        if (v->flags & HC_ENV_F_LOGNAME)
            reason = logname_check(val);
        else if (v->flags & HC_ENV_F_IPADDR)
            reason = ipaddr_check(val);
        else if (v->flags & HC_ENV_F_IFNAMES)
            reason = ifnames_check(val, ifs_why, sizeof(ifs_why));
        if (reason == NULL)
            memcpy(field, val, len + 1);
        break;
    }
    case HC_ENV_LEVEL: {
        int l = hc_log_parse_level(val);
        if (l < 0)
            reason = "expected a log level: NONE, ERROR, WARN, INFO or TRACE";
        else
            memcpy(field, &l, sizeof(l));
        break;
    }
    case HC_ENV_SUBSYS: {
        long m = hc_log_parse_subsys(val);
        if (m < 0) {
            reason = "expected a comma list of INIT, COLL, TOPO, TUNE, ELASTIC, TRANSPORT, "
                     "ENV, STREAM, ALL (^ to exclude)";
        } else {
            unsigned um = (unsigned)m;
            memcpy(field, &um, sizeof(um));
        }
        break;
    }
    case HC_ENV_PREFIX:
        break; /* scanned from environ by load_groups */
    }
    if (range_err)
        range_format(v, why, whylen);
    else if (reason != NULL)
        snprintf(why, whylen, "%s", reason);
    return reason != NULL || range_err ? -1 : 0;
}

/* ------------------------------------------------------------ loading */

static void set_err(char *err, size_t errlen, const char *name, const char *val, const char *why)
{
    if (err == NULL || errlen == 0)
        return;
    /* long values (HCCL_ALGO) are cut so that the reason still shows */
    int vlen = (int)strlen(val);
    snprintf(err, errlen, "%s='%.*s%s': %s", name, vlen > 200 ? 200 : vlen, val,
             vlen > 200 ? "..." : "", why);
}

static int is_group_name(const char *name, size_t len)
{
    return len >= sizeof(GROUP_PREFIX) - 1 &&
           strncmp(name, GROUP_PREFIX, sizeof(GROUP_PREFIX) - 1) == 0;
}

static const hc_env_var_t *find_var(const char *name, size_t len)
{
    for (size_t i = 0; i < NVARS; i++)
        if (env_table[i].type != HC_ENV_PREFIX && strlen(env_table[i].name) == len &&
            strncmp(env_table[i].name, name, len) == 0)
            return &env_table[i];
    return NULL;
}

/* One HCCL_GROUP_<n>=value entry of environ. */
static int load_group(hc_config_t *cfg, const char *entry, size_t namelen, char *err,
                      size_t errlen)
{
    char name[128];
    snprintf(name, sizeof(name), "%.*s", (int)namelen, entry);
    const char *val = entry + namelen + 1;
    const char *num = name + sizeof(GROUP_PREFIX) - 1;
    uint64_t n;
    const char *p = num;
    /* "01" would alias "1": one spelling per group */
    if (parse_digits(&p, &n) != NULL || *p != '\0' || (num[0] == '0' && num[1] != '\0') ||
        n >= HC_MAX_GROUPS) {
        set_err(err, errlen, name, val, "the group number must be 0..1023 (HCCL_GROUP_<n>)");
        return HCCL_E_PARA;
    }
    if (*val == '\0')
        return HCCL_SUCCESS; /* empty = unset */
    const char *why = rank_list_check(val);
    if (why != NULL) {
        set_err(err, errlen, name, val, why);
        return HCCL_E_PARA;
    }
    char *copy = strdup(val);
    if (copy == NULL) {
        set_err(err, errlen, name, val, "out of memory");
        return HCCL_E_MEMORY;
    }
    free(cfg->groups[n]);
    cfg->groups[n] = copy;
    if (n + 1 > cfg->ngroups)
        cfg->ngroups = (uint32_t)n + 1;
    return HCCL_SUCCESS;
}

static void note_unknown(hc_config_t *cfg, const char *name, size_t len)
{
    char *list = cfg->unknown_vars;
    size_t have = strlen(list);
    if (have >= 3 && strcmp(list + have - 3, "...") == 0)
        return; /* already cut */
    size_t need = len + (have > 0 ? 1 : 0);
    /* always leave room for ",..." */
    if (have + need + 4 < sizeof(cfg->unknown_vars))
        sprintf(list + have, "%s%.*s", have > 0 ? "," : "", (int)len, name);
    else
        strcpy(list + have, have > 0 ? ",..." : "...");
}

/* HCCL_GROUP_<n> and the HCCL_* names we do not use. */
static int scan_environ(hc_config_t *cfg, char *err, size_t errlen)
{
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        const char *eq = strchr(*e, '=');
        if (eq == NULL || strncmp(*e, "HCCL_", 5) != 0)
            continue;
        size_t len = (size_t)(eq - *e);
        if (is_group_name(*e, len)) {
            int rc = load_group(cfg, *e, len, err, errlen);
            if (rc != HCCL_SUCCESS)
                return rc;
        } else if (find_var(*e, len) == NULL) {
            note_unknown(cfg, *e, len);
        }
    }
    return HCCL_SUCCESS;
}

void hc_env_free(hc_config_t *cfg)
{
    if (cfg == NULL)
        return;
    for (uint32_t i = 0; i < HC_MAX_GROUPS; i++) {
        free(cfg->groups[i]);
        cfg->groups[i] = NULL;
    }
    cfg->ngroups = 0;
}

static void apply_defaults(hc_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    for (size_t i = 0; i < NVARS; i++) {
        char why[256];
        if (env_table[i].def[0] == '\0' || env_table[i].type == HC_ENV_PREFIX)
            continue; /* zero, or set by an earlier entry (HCCL_BUFFER_SIZE) */
        if (parse_var(&env_table[i], env_table[i].def, cfg, why, sizeof(why)) != 0)
            HC_ERROR(HC_SUB_ENV, "bad built-in default %s='%s': %s", env_table[i].name,
                     env_table[i].def, why); /* a bug; check_env catches it */
    }
}

int hc_env_load(hc_config_t *cfg, char *err, size_t errlen)
{
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    apply_defaults(cfg);
    for (size_t i = 0; i < NVARS; i++) {
        const hc_env_var_t *v = &env_table[i];
        if (v->type == HC_ENV_PREFIX)
            continue;
        const char *val = getenv(v->name);
        if (val == NULL || val[0] == '\0')
            continue;
        char why[256];
        if (parse_var(v, val, cfg, why, sizeof(why)) != 0) {
            set_err(err, errlen, v->name, val, why);
            return HCCL_E_PARA;
        }
    }
    int rc = scan_environ(cfg, err, errlen);
    if (rc != HCCL_SUCCESS)
        hc_env_free(cfg); /* the other fields stay valid */
    return rc;
}

int hc_env_copy(hc_config_t *dst, const hc_config_t *src)
{
    hc_config_t tmp = *src;
    for (uint32_t i = 0; i < HC_MAX_GROUPS; i++) {
        tmp.groups[i] = NULL;
        if (src->groups[i] == NULL)
            continue;
        tmp.groups[i] = strdup(src->groups[i]);
        if (tmp.groups[i] == NULL) {
            hc_env_free(&tmp);
            return HCCL_E_MEMORY;
        }
    }
    *dst = tmp;
    return HCCL_SUCCESS;
}

/* ------------------------------------------------------------ printing */

static void subsys_format(unsigned m, char *buf, size_t n)
{
    static const unsigned bits[] = {HC_SUB_INIT, HC_SUB_COLL, HC_SUB_TOPO, HC_SUB_TUNE,
                                    HC_SUB_ELASTIC, HC_SUB_TRANSPORT, HC_SUB_ENV, HC_SUB_STREAM};
    m &= HC_SUB_ALL;
    if (m == HC_SUB_ALL) {
        snprintf(buf, n, "ALL");
        return;
    }
    /* the shorter of "A,B" and "^C,D", so that the text parses back */
    int set = __builtin_popcount(m);
    int neg = set > 4;
    unsigned show = neg ? (HC_SUB_ALL & ~m) : m;
    size_t o = 0;
    buf[0] = '\0';
    if (neg)
        o += (size_t)snprintf(buf, n, "^");
    if (show == 0) {
        snprintf(buf, n, "^ALL");
        return;
    }
    for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]) && o < n; i++)
        if (show & bits[i])
            o += (size_t)snprintf(buf + o, n - o, "%s%s", o > (size_t)neg ? "," : "",
                                  hc_log_subsys_name(bits[i]));
}

static const char *level_name(int l)
{
    static const char *const names[] = {"NONE", "ERROR", "WARN", "INFO", "TRACE"};
    return l >= 0 && l <= HC_LOG_TRACE ? names[l] : "?";
}

/* The effective value of v in cfg, as text that parses back. */
static void value_format(const hc_env_var_t *v, const hc_config_t *cfg, char *buf, size_t n)
{
    const char *field = (const char *)cfg + v->offset;
    uint64_t u;
    switch (v->type) {
    case HC_ENV_BOOL:
        u = load_uint(field, v->size);
        if (isalpha((unsigned char)v->def[0]))
            snprintf(buf, n, "%s", u ? "true" : "false");
        else
            snprintf(buf, n, "%d", u ? 1 : 0);
        break;
    case HC_ENV_UINT:
    case HC_ENV_SIZE:
        u = load_uint(field, v->size);
        if (u == 0 && (v->flags & HC_ENV_F_AUTO))
            snprintf(buf, n, "auto");
        else if (v->type == HC_ENV_SIZE)
            size_format(u, buf, n);
        else
            snprintf(buf, n, "%llu", (unsigned long long)u);
        break;
    case HC_ENV_MB:
        u = load_uint(field, v->size);
        if (u % (1ull << 20) == 0)
            snprintf(buf, n, "%llu", (unsigned long long)(u >> 20));
        else
            size_format(u, buf, n); /* set through HCCL_BUFFER_SIZE */
        break;
    case HC_ENV_SECONDS: {
        double d;
        memcpy(&d, field, sizeof(d));
        /* plain decimals, as the parser takes them: no exponent */
        snprintf(buf, n, "%.9f", d);
        char *e = buf + strlen(buf);
        while (e > buf && e[-1] == '0')
            *--e = '\0';
        if (e > buf && e[-1] == '.')
            e[-1] = '\0';
        break;
    }
    case HC_ENV_STRING:
        snprintf(buf, n, "%s", field);
        break;
    case HC_ENV_LEVEL: {
        int l;
        memcpy(&l, field, sizeof(l));
        snprintf(buf, n, "%s", level_name(l));
        break;
    }
    case HC_ENV_SUBSYS: {
        unsigned m;
        memcpy(&m, field, sizeof(m));
        subsys_format(m, buf, n);
        break;
    }
    case HC_ENV_PREFIX:
        snprintf(buf, n, "%u", cfg->ngroups);
        break;
    }
}

void hc_env_print(FILE *f, const hc_config_t *cfg)
{
    char val[HC_ENV_STR_MAX + 64];
    fprintf(f, "%-24s %-16s %-10s %s\n", "variable", "value", "default", "meaning");
    for (size_t i = 0; i < NVARS; i++) {
        const hc_env_var_t *v = &env_table[i];
        if (v->type == HC_ENV_PREFIX) {
            fprintf(f, "%-24s %-16s %-10s %s\n", v->name, cfg->ngroups ? "" : "-", "-", v->help);
            for (uint32_t g = 0; g < cfg->ngroups; g++) {
                if (cfg->groups[g] == NULL)
                    continue;
                char name[32];
                snprintf(name, sizeof(name), GROUP_PREFIX "%u", g);
                fprintf(f, "  %-22s %s\n", name, cfg->groups[g]);
            }
            continue;
        }
        value_format(v, cfg, val, sizeof(val));
        fprintf(f, "%-24s %-16s %-10s %s\n", v->name, val[0] ? val : "-",
                v->def[0] ? v->def : "-", v->help);
    }
    if (cfg->unknown_vars[0] != '\0')
        fprintf(f, "not used by hcomm: %s\n", cfg->unknown_vars);
}

void hc_env_log(const hc_config_t *cfg)
{
    static atomic_int logged;
    if (atomic_exchange(&logged, 1))
        return;
    char val[HC_ENV_STR_MAX + 64];
    for (size_t i = 0; i < NVARS; i++) {
        const hc_env_var_t *v = &env_table[i];
        if (v->type == HC_ENV_PREFIX) {
            for (uint32_t g = 0; g < cfg->ngroups; g++)
                if (cfg->groups[g] != NULL)
                    HC_INFO(HC_SUB_ENV, GROUP_PREFIX "%u=%s", g, cfg->groups[g]);
            continue;
        }
        value_format(v, cfg, val, sizeof(val));
        HC_INFO(HC_SUB_ENV, "%s=%s", v->name, val);
    }
    if (cfg->unknown_vars[0] != '\0')
        HC_INFO(HC_SUB_ENV, "not used by hcomm: %s", cfg->unknown_vars);
}

/* ------------------------------------------------------------ process-wide */

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static hc_config_t global_cfg;
static int global_rc;
static char global_err[512];

static void global_load(void)
{
    global_rc = hc_env_load(&global_cfg, global_err, sizeof(global_err));
    /* on failure the logging fields still hold defaults or good values */
    hc_log_configure(global_cfg.debug_level, global_cfg.debug_subsys, global_cfg.debug_file);
    if (global_rc != HCCL_SUCCESS) {
        HC_ERROR(HC_SUB_ENV, "bad environment: %s", global_err);
        return;
    }
    hc_env_log(&global_cfg);
}

int hc_env_global(const hc_config_t **cfg)
{
    pthread_once(&global_once, global_load);
    if (global_rc != HCCL_SUCCESS)
        return global_rc;
    *cfg = &global_cfg;
    return HCCL_SUCCESS;
}
