/*
 * test/unit/check_env.c - the HCCL_* table (src/env.c), logging (src/log.c)
 * and the error strings / config init (src/errors.c).
 *
 * Every test runs in its own process (Check's fork mode): the tests change
 * the environment and the process-wide logger freely.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hccl/hccl.h>

#include "src/env.h"
#include "src/log.h"

extern char **environ;

static char tmpdir[256];

/* ------------------------------------------------------------ helpers */

static void clear_hccl_env(void)
{
    /* collect first: unsetenv reshuffles environ */
    char *names[512];
    int n = 0;
    for (char **e = environ; *e != NULL && n < 512; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, "HCCL_", 5) == 0 && eq != NULL)
            names[n++] = strndup(*e, (size_t)(eq - *e));
    }
    for (int i = 0; i < n; i++) {
        unsetenv(names[i]);
        free(names[i]);
    }
}

static void setup(void)
{
    clear_hccl_env();
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_env.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
    DIR *d = opendir(tmpdir);
    if (d != NULL) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (de->d_name[0] == '.')
                continue;
            char p[600];
            snprintf(p, sizeof(p), "%s/%s", tmpdir, de->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(tmpdir);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    size_t r;
    while ((r = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += r;
        if (cap - len < 2) {
            cap *= 2;
            char *more = realloc(buf, cap);
            ck_assert_ptr_nonnull(more);
            buf = more;
        }
    }
    buf[len] = '\0';
    fclose(f);
    return buf;
}

static int count_substr(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static const hc_env_var_t *table_var(const char *name)
{
    size_t n;
    const hc_env_var_t *t = hc_env_table(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0)
            return &t[i];
    return NULL;
}

static void load_ok(hc_config_t *cfg)
{
    char err[512];
    int rc = hc_env_load(cfg, err, sizeof(err));
    ck_assert_msg(rc == HCCL_SUCCESS, "hc_env_load: %d (%s)", rc, err);
}

/* Expects HCCL_E_PARA with the variable name in the message. */
static void load_bad(const char *name, const char *val)
{
    hc_config_t *cfg = malloc(sizeof(*cfg));
    char err[512];
    setenv(name, val, 1);
    int rc = hc_env_load(cfg, err, sizeof(err));
    ck_assert_msg(rc == HCCL_E_PARA, "%s='%s' gave %d, expected HCCL_E_PARA", name, val, rc);
    ck_assert_msg(strncmp(err, name, strlen(name)) == 0 && err[strlen(name)] == '=',
                  "%s='%s': message '%s' does not name the variable", name, val, err);
    ck_assert_msg(strstr(err, "': ") != NULL, "no reason in '%s'", err);
    ck_assert_uint_eq(cfg->ngroups, 0);
    hc_env_free(cfg);
    free(cfg);
    unsetenv(name);
}

/* ------------------------------------------------------------ every variable */

enum { K_INT, K_U64, K_DBL, K_STR };

typedef struct {
    const char *name;
    const char *good;
    int kind;
    uint64_t u;      /* K_INT, K_U64 */
    double d;        /* K_DBL */
    const char *s;   /* K_STR (NULL: same as good) */
    const char *bad; /* NULL: a string longer than the field */
} var_case_t;

static const var_case_t cases[] = {
    {"HCCL_DEBUG", "info", K_INT, HC_LOG_INFO, 0, NULL, "LOUD"},
    {"HCCL_DEBUG_FILE", "/tmp/x.%h.%p.%r.%%.log", K_STR, 0, 0, NULL, "/tmp/x.%q.log"},
    {"HCCL_DEBUG_SUBSYS", "INIT,COLL", K_INT, HC_SUB_INIT | HC_SUB_COLL, 0, NULL, "INIT,BOGUS"},
    {"HCCL_ENTRY_LOG_ENABLE", "yes", K_INT, 1, 0, NULL, "2"},
    {"HCCL_ALGO", "level0:NA;level1:ring", K_STR, 0, 0, NULL, NULL},
    {"HCCL_ALLREDUCE_ALGO", "RING", K_STR, 0, 0, NULL, NULL},
    {"HCCL_BCAST_ALGO", "binomial", K_STR, 0, 0, NULL, NULL},
    {"HCCL_ALLGATHER_ALGO", "RING", K_STR, 0, 0, NULL, NULL},
    {"HCCL_REDUCESCATTER_ALGO", "RING", K_STR, 0, 0, NULL, NULL},
    {"HCCL_ALLTOALL_ALGO", "PAIRWISE", K_STR, 0, 0, NULL, NULL},
    {"HCCL_REDUCE_ALGO", "BINOMIAL", K_STR, 0, 0, NULL, NULL},
    {"HCCL_RING_CHUNK_SIZE", "256KB", K_U64, 256 << 10, 0, NULL, "4XB"},
    {"HCCL_BCAST_CHUNK_SIZE", "2mb", K_U64, 2 << 20, 0, NULL, "0"},
    {"HCCL_TUNE_FILE", "/tmp/tune.txt", K_STR, 0, 0, NULL, NULL},
    {"HCCL_DETERMINISTIC", "TRUE", K_INT, 1, 0, NULL, "maybe"},
    {"HCCL_CHECK_ARGS", "on", K_INT, 1, 0, NULL, "2"},
    {"HCCL_GPU_IPC", "1", K_INT, 1, 0, NULL, "gpu"},
    {"HCCL_BUFFSIZE", "64", K_U64, 64ull << 20, 0, NULL, "64MB"},
    {"HCCL_BUFFER_SIZE", "1GB", K_U64, 1ull << 30, 0, NULL, "1KB"},
    {"HCCL_FUSION_THRESHOLD", "16MB", K_U64, 16 << 20, 0, NULL, "-1"},
    {"HCCL_OVERLAP_MEMCPY", "off", K_INT, 0, 0, NULL, "disabled"},
    {"HCCL_SINGLE_COPY", "0", K_INT, 0, 0, NULL, "sometimes"},
    {"HCCL_MAX_CONCURRENT", "16", K_INT, 16, 0, NULL, "0"},
    {"HCCL_CONNECT_TIMEOUT", "2.5", K_DBL, 0, 2.5, NULL, "1e3"},
    {"HCCL_EXEC_TIMEOUT", "0", K_DBL, 0, 0.0, NULL, "0.0001"},
    {"HCCL_IF_IP", "10.0.0.1", K_STR, 0, 0, NULL, "10.0.0.256"},
    {"HCCL_SOCKET_IFNAME", "lo,eth", K_STR, 0, 0, NULL, "=nosuchif0"},
    {"HCCL_IF_BASE_PORT", "60000", K_INT, 60000, 0, NULL, "70000"},
    {"HCCL_SPAWN_HOST", "10.213.47.4", K_STR, 0, 0, NULL, NULL},
    {"HCCL_NVLINK_MAP", "0:1,1:2,2:3,3:0", K_STR, 0, 0, NULL, NULL},
    {"HCCL_TOPO_FILE", "/tmp/topo.txt", K_STR, 0, 0, NULL, NULL},
    {"HCCL_TOPO_DUMP_FILE", "/tmp/topo.dump", K_STR, 0, 0, NULL, NULL},
    {"HCCL_TOPO_RING_ORDER", "off", K_INT, 0, 0, NULL, "rank"},
    {"HCCL_TRACE_FILE", "/tmp/trace.%r.json", K_STR, 0, 0, NULL, NULL},
};
#define NCASES (int)(sizeof(cases) / sizeof(cases[0]))

/* A good value lands in its field and nowhere else; a bad one is
 * HCCL_E_PARA naming the variable. */
START_TEST(test_each_var)
{
    const var_case_t *c = &cases[_i];
    const hc_env_var_t *v = table_var(c->name);
    ck_assert_msg(v != NULL, "%s is not in the table", c->name);

    hc_config_t *def = malloc(sizeof(*def)), *cfg = malloc(sizeof(*cfg));
    load_ok(def);
    setenv(c->name, c->good, 1);
    load_ok(cfg);
    const char *field = (const char *)cfg + v->offset;
    switch (c->kind) {
    case K_INT: {
        uint32_t x;
        memcpy(&x, field, sizeof(x));
        ck_assert_msg(x == c->u, "%s=%s gave %u", c->name, c->good, x);
        break;
    }
    case K_U64: {
        uint64_t x;
        memcpy(&x, field, sizeof(x));
        ck_assert_msg(x == c->u, "%s=%s gave %llu", c->name, c->good, (unsigned long long)x);
        break;
    }
    case K_DBL: {
        double x;
        memcpy(&x, field, sizeof(x));
        ck_assert_msg(x == c->d, "%s=%s gave %g", c->name, c->good, x);
        break;
    }
    case K_STR:
        ck_assert_str_eq(field, c->s != NULL ? c->s : c->good);
        break;
    }
    /* the rest of the config is untouched */
    memcpy((char *)cfg + v->offset, (char *)def + v->offset, v->size);
    ck_assert_msg(memcmp(cfg, def, sizeof(*cfg)) == 0, "%s changed another field", c->name);
    unsetenv(c->name);

    if (c->bad != NULL) {
        load_bad(c->name, c->bad);
    } else {
        ck_assert_int_eq(v->type, HC_ENV_STRING);
        char *longv = malloc(v->size + 1);
        memset(longv, 'a', v->size);
        longv[v->size] = '\0';
        load_bad(c->name, longv);
        longv[v->size - 1] = '\0'; /* exactly fits */
        setenv(c->name, longv, 1);
        load_ok(cfg);
        ck_assert_uint_eq(strlen((char *)cfg + v->offset), v->size - 1);
        unsetenv(c->name);
        free(longv);
    }
    free(def);
    free(cfg);
}
END_TEST

/* The test table covers the whole env table, and every entry is sane. */
START_TEST(test_table_complete)
{
    size_t n;
    const hc_env_var_t *t = hc_env_table(&n);
    ck_assert_uint_ge(n, 30);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(strncmp(t[i].name, "HCCL_", 5) == 0, "%s", t[i].name);
        ck_assert_msg(t[i].help != NULL && t[i].help[0] != '\0', "%s: no help", t[i].name);
        ck_assert_msg(t[i].def != NULL, "%s: no default", t[i].name);
        ck_assert_msg(t[i].offset + t[i].size <= sizeof(hc_config_t), "%s", t[i].name);
        if (t[i].type == HC_ENV_PREFIX)
            continue;
        int found = 0;
        for (int c = 0; c < NCASES; c++)
            found |= strcmp(cases[c].name, t[i].name) == 0;
        ck_assert_msg(found, "%s has no test case", t[i].name);
        for (size_t j = 0; j < i; j++)
            ck_assert_msg(strcmp(t[i].name, t[j].name) != 0, "%s twice", t[i].name);
    }
}
END_TEST

START_TEST(test_defaults)
{
    hc_config_t *cfg = malloc(sizeof(*cfg));
    load_ok(cfg);
    ck_assert_int_eq(cfg->debug_level, HC_LOG_WARN);
    ck_assert_str_eq(cfg->debug_file, "");
    ck_assert_uint_eq(cfg->debug_subsys, HC_SUB_ALL);
    ck_assert_int_eq(cfg->entry_log, 0);
    ck_assert_str_eq(cfg->algo, "");
    ck_assert_str_eq(cfg->allreduce_algo, "");
    ck_assert_str_eq(cfg->bcast_algo, "");
    ck_assert_str_eq(cfg->allgather_algo, "");
    ck_assert_str_eq(cfg->reducescatter_algo, "");
    ck_assert_str_eq(cfg->alltoall_algo, "");
    ck_assert_str_eq(cfg->reduce_algo, "");
    ck_assert_uint_eq(cfg->ring_chunk, 0);
    ck_assert_uint_eq(cfg->bcast_chunk, 1 << 20);
    ck_assert_str_eq(cfg->tune_file, "");
    ck_assert_int_eq(cfg->deterministic, 0);
    ck_assert_uint_eq(cfg->buffsize, 200ull << 20);
    ck_assert_uint_eq(cfg->fusion_threshold, 0);
    ck_assert_int_eq(cfg->overlap_memcpy, 1);
    ck_assert_uint_eq(cfg->max_concurrent, 4);
    ck_assert(cfg->connect_timeout == 120.0);
    ck_assert(cfg->exec_timeout == 1836.0);
    ck_assert_str_eq(cfg->if_ip, "");
    ck_assert_str_eq(cfg->socket_ifname, "");
    ck_assert_uint_eq(cfg->if_base_port, 0);
    ck_assert_str_eq(cfg->nvlink_map, "");
    ck_assert_str_eq(cfg->topo_file, "");
    ck_assert_str_eq(cfg->topo_dump_file, "");
    ck_assert_uint_eq(cfg->ngroups, 0);
    for (int i = 0; i < HC_MAX_GROUPS; i++)
        ck_assert_ptr_null(cfg->groups[i]);
    ck_assert_str_eq(cfg->trace_file, "");
    ck_assert_str_eq(cfg->unknown_vars, "");
    hc_env_free(cfg);
    free(cfg);
}
END_TEST

/* `export HCCL_X=` means "use the default". */
START_TEST(test_empty_is_unset)
{
    hc_config_t *cfg = malloc(sizeof(*cfg));
    setenv("HCCL_DEBUG", "", 1);
    setenv("HCCL_MAX_CONCURRENT", "", 1);
    setenv("HCCL_GROUP_2", "", 1);
    load_ok(cfg);
    ck_assert_int_eq(cfg->debug_level, HC_LOG_WARN);
    ck_assert_uint_eq(cfg->max_concurrent, 4);
    ck_assert_uint_eq(cfg->ngroups, 0);
    free(cfg);
}
END_TEST

START_TEST(test_more_values)
{
    hc_config_t *cfg = malloc(sizeof(*cfg));
    /* auto where the default is auto, nowhere else */
    setenv("HCCL_FUSION_THRESHOLD", "AUTO", 1);
    setenv("HCCL_RING_CHUNK_SIZE", "auto", 1);
    load_ok(cfg);
    ck_assert_uint_eq(cfg->fusion_threshold, 0);
    ck_assert_uint_eq(cfg->ring_chunk, 0);
    load_bad("HCCL_MAX_CONCURRENT", "auto");
    load_bad("HCCL_BCAST_CHUNK_SIZE", "auto");
    /* range ends */
    setenv("HCCL_MAX_CONCURRENT", "1024", 1);
    setenv("HCCL_IF_BASE_PORT", "65535", 1);
    setenv("HCCL_BUFFSIZE", "65536", 1);
    setenv("HCCL_EXEC_TIMEOUT", "2147483647", 1);
    setenv("HCCL_CONNECT_TIMEOUT", "0.5", 1);
    load_ok(cfg);
    ck_assert_uint_eq(cfg->max_concurrent, 1024);
    ck_assert_uint_eq(cfg->if_base_port, 65535);
    ck_assert_uint_eq(cfg->buffsize, 65536ull << 20);
    ck_assert(cfg->exec_timeout == 2147483647.0);
    ck_assert(cfg->connect_timeout == 0.5);
    load_bad("HCCL_MAX_CONCURRENT", "1025");
    load_bad("HCCL_BUFFSIZE", "65537");
    load_bad("HCCL_BUFFSIZE", "0");
    load_bad("HCCL_BUFFSIZE", "1.5");
    load_bad("HCCL_EXEC_TIMEOUT", "2147483648");
    load_bad("HCCL_MAX_CONCURRENT", "99999999999999999999999");
    load_bad("HCCL_MAX_CONCURRENT", " 4");
    load_bad("HCCL_MAX_CONCURRENT", "+4");
    load_bad("HCCL_MAX_CONCURRENT", "0x10");
    /* seconds: plain decimals only */
    static const char *const bad_s[] = {"0", ".5", "5.", "inf", "nan", "0x10", "1e3", "-1",
                                        "1s", " 1"};
    for (size_t i = 0; i < sizeof(bad_s) / sizeof(bad_s[0]); i++)
        load_bad("HCCL_CONNECT_TIMEOUT", bad_s[i]);
    /* booleans */
    static const char *const t[] = {"1", "true", "True", "YES", "on", "On"};
    static const char *const f[] = {"0", "false", "FALSE", "no", "off", "OFF"};
    for (int i = 0; i < 6; i++) {
        setenv("HCCL_DETERMINISTIC", t[i], 1);
        load_ok(cfg);
        ck_assert_int_eq(cfg->deterministic, 1);
        setenv("HCCL_DETERMINISTIC", f[i], 1);
        load_ok(cfg);
        ck_assert_int_eq(cfg->deterministic, 0);
    }
    load_bad("HCCL_DETERMINISTIC", "2");
    load_bad("HCCL_DETERMINISTIC", "y");
    /* levels and subsystems through the env */
    setenv("HCCL_DEBUG", "Trace", 1);
    setenv("HCCL_DEBUG_SUBSYS", "^TOPO,TUNE", 1);
    load_ok(cfg);
    ck_assert_int_eq(cfg->debug_level, HC_LOG_TRACE);
    ck_assert_uint_eq(cfg->debug_subsys, HC_SUB_ALL & ~(HC_SUB_TOPO | HC_SUB_TUNE));
    load_bad("HCCL_DEBUG", "3");
    free(cfg);
}
END_TEST

/* HCCL_IF_IP must parse, HCCL_SOCKET_IFNAME must select an interface of
 * this host (every Linux host has lo), HCCL_EXEC_TIMEOUT is whole seconds. */
START_TEST(test_net_and_timeout)
{
    hc_config_t *cfg = malloc(sizeof(*cfg));
    static const char *const good_ip[] = {"127.0.0.1", "10.0.0.1", "::1", "fe80::1"};
    static const char *const bad_ip[] = {"abc", "10.0.0", "1.2.3.4.5", "::g", " 10.0.0.1",
                                         "localhost"};
    for (size_t i = 0; i < sizeof(good_ip) / sizeof(good_ip[0]); i++) {
        setenv("HCCL_IF_IP", good_ip[i], 1);
        load_ok(cfg);
        ck_assert_str_eq(cfg->if_ip, good_ip[i]);
    }
    for (size_t i = 0; i < sizeof(bad_ip) / sizeof(bad_ip[0]); i++)
        load_bad("HCCL_IF_IP", bad_ip[i]);
    unsetenv("HCCL_IF_IP");
    static const char *const good_if[] = {"lo", "=lo", "l", "nosuch,lo", "^=nosuchif0",
                                          "^nosuch"};
    static const char *const bad_if[] = {"nosuchif0", "=nosuchif0", "=l", ",", "lo,", ",lo",
                                         "lo,,eth", "=", "^", "^=", "lo eth", "^lo/x",
                                         "=^lo", "averyveryverylongname"};
    for (size_t i = 0; i < sizeof(good_if) / sizeof(good_if[0]); i++) {
        setenv("HCCL_SOCKET_IFNAME", good_if[i], 1);
        load_ok(cfg);
        ck_assert_str_eq(cfg->socket_ifname, good_if[i]);
    }
    for (size_t i = 0; i < sizeof(bad_if) / sizeof(bad_if[0]); i++)
        load_bad("HCCL_SOCKET_IFNAME", bad_if[i]);
    char err[512];
    setenv("HCCL_SOCKET_IFNAME", "=nosuchif0", 1);
    ck_assert_int_eq(hc_env_load(cfg, err, sizeof(err)), HCCL_E_PARA);
    ck_assert_msg(strstr(err, "selects no network interface of this host") != NULL &&
                      strstr(err, "lo") != NULL, "'%s'", err);
    unsetenv("HCCL_SOCKET_IFNAME");
    ck_assert(hc_env_ifname_matches("eth,ib", "ib0"));
    ck_assert(hc_env_ifname_matches("eth,ib", "eth1"));
    ck_assert(!hc_env_ifname_matches("eth,ib", "lo"));
    ck_assert(hc_env_ifname_matches("=eth0,ib0", "eth0"));
    ck_assert(!hc_env_ifname_matches("=eth0,ib0", "eth01"));
    ck_assert(!hc_env_ifname_matches("^lo", "lo"));
    ck_assert(hc_env_ifname_matches("^lo", "eth0"));
    ck_assert(!hc_env_ifname_matches("^=eth0", "eth0"));
    ck_assert(hc_env_ifname_matches("^=eth0", "eth00"));
    static const char *const bad_t[] = {"0.0001", "0.5", "1.0", "-3"};
    for (size_t i = 0; i < sizeof(bad_t) / sizeof(bad_t[0]); i++)
        load_bad("HCCL_EXEC_TIMEOUT", bad_t[i]);
    setenv("HCCL_EXEC_TIMEOUT", "1", 1);
    load_ok(cfg);
    ck_assert(cfg->exec_timeout == 1.0);
    unsetenv("HCCL_EXEC_TIMEOUT");
    free(cfg);
}
END_TEST

START_TEST(test_err_message)
{
    hc_config_t *cfg = malloc(sizeof(*cfg));
    char err[512];
    setenv("HCCL_BUFFER_SIZE", "12XB", 1);
    ck_assert_int_eq(hc_env_load(cfg, err, sizeof(err)), HCCL_E_PARA);
    ck_assert_str_eq(err, "HCCL_BUFFER_SIZE='12XB': expected a size like 4MB (a byte count, "
                          "or a whole number with B, KB, MB or GB)");
    setenv("HCCL_BUFFER_SIZE", "1KB", 1);
    ck_assert_int_eq(hc_env_load(cfg, err, sizeof(err)), HCCL_E_PARA);
    ck_assert_str_eq(err, "HCCL_BUFFER_SIZE='1KB': out of range [4KB, 64GB]");
    unsetenv("HCCL_BUFFER_SIZE");
    setenv("HCCL_MAX_CONCURRENT", "0", 1);
    ck_assert_int_eq(hc_env_load(cfg, err, sizeof(err)), HCCL_E_PARA);
    ck_assert_str_eq(err, "HCCL_MAX_CONCURRENT='0': out of range [1, 1024]");
    /* a small err buffer is cut, not overrun; NULL is allowed */
    char small[8];
    ck_assert_int_eq(hc_env_load(cfg, small, sizeof(small)), HCCL_E_PARA);
    ck_assert_str_eq(small, "HCCL_MA");
    ck_assert_int_eq(hc_env_load(cfg, NULL, 0), HCCL_E_PARA);
    /* a huge value is cut in the message so the reason still shows */
    unsetenv("HCCL_MAX_CONCURRENT");
    char *big = malloc(5000);
    memset(big, '7', 4999);
    big[4999] = '\0';
    setenv("HCCL_RING_CHUNK_SIZE", big, 1);
    ck_assert_int_eq(hc_env_load(cfg, err, sizeof(err)), HCCL_E_PARA);
    ck_assert_msg(strstr(err, "...': too large") != NULL, "%s", err);
    free(big);
    free(cfg);
}
END_TEST

/* ------------------------------------------------------------ sizes */

START_TEST(test_parse_size)
{
    static const struct {
        const char *s;
        int rc;
        uint64_t v;
    } t[] = {
        {"0", 0, 0},
        {"1", 0, 1},
        {"4096", 0, 4096},
        {"4KB", 0, 4096},
        {"4kb", 0, 4096},
        {"4Kb", 0, 4096},
        {"4K", 0, 4096},
        {"4KiB", 0, 4096},
        {"1MB", 0, 1 << 20},
        {"1m", 0, 1 << 20},
        {"2GB", 0, 2ull << 30},
        {"16GiB", 0, 16ull << 30},
        {"7B", 0, 7},
        {"7b", 0, 7},
        {"18446744073709551615", 0, UINT64_MAX},
        {"17179869183GB", 0, 17179869183ull << 30},
        {"1.5MB", -1, 0},
        {"", -1, 0},
        {"-1", -1, 0},
        {"+1", -1, 0},
        {"12XB", -1, 0},
        {"MB", -1, 0},
        {"4 MB", -1, 0},
        {" 4MB", -1, 0},
        {"4MB ", -1, 0},
        {"4MBB", -1, 0},
        {"4TB", -1, 0},
        {"0x10", -1, 0},
        {"18446744073709551616", -1, 0},
        {"17179869184GB", -1, 0},
        {"99999999999999999999GB", -1, 0},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        uint64_t v = 12345;
        int rc = hc_parse_size(t[i].s, &v);
        ck_assert_msg(rc == t[i].rc, "'%s': rc %d, expected %d", t[i].s, rc, t[i].rc);
        if (rc == 0)
            ck_assert_msg(v == t[i].v, "'%s': %llu", t[i].s, (unsigned long long)v);
        else
            ck_assert_msg(v == 12345, "'%s': output written on failure", t[i].s);
    }
    uint64_t v;
    ck_assert_int_eq(hc_parse_size(NULL, &v), -1);
}
END_TEST

START_TEST(test_buffsize_precedence)
{
    hc_config_t *cfg = malloc(sizeof(*cfg));
    setenv("HCCL_BUFFSIZE", "64", 1);
    load_ok(cfg);
    ck_assert_uint_eq(cfg->buffsize, 64ull << 20);
    unsetenv("HCCL_BUFFSIZE");
    setenv("HCCL_BUFFER_SIZE", "1MB", 1);
    load_ok(cfg);
    ck_assert_uint_eq(cfg->buffsize, 1ull << 20);
    setenv("HCCL_BUFFSIZE", "64", 1);
    load_ok(cfg);
    ck_assert_uint_eq(cfg->buffsize, 1ull << 20); /* HCCL_BUFFER_SIZE wins */
    setenv("HCCL_BUFFER_SIZE", "12KB", 1);
    load_ok(cfg);
    ck_assert_uint_eq(cfg->buffsize, 12 << 10);
    /* both are checked, even the one that loses */
    setenv("HCCL_BUFFSIZE", "lots", 1);
    ck_assert_int_eq(hc_env_load(cfg, NULL, 0), HCCL_E_PARA);
    free(cfg);
}
END_TEST

/* ------------------------------------------------------------ groups */

START_TEST(test_groups)
{
    hc_config_t *cfg = malloc(sizeof(*cfg)), *cp = malloc(sizeof(*cp));
    setenv("HCCL_GROUP_0", "0,1,2,3", 1);
    setenv("HCCL_GROUP_1", "4,5,6,7", 1);
    setenv("HCCL_GROUP_7", "8", 1);
    load_ok(cfg);
    ck_assert_uint_eq(cfg->ngroups, 8);
    ck_assert_str_eq(cfg->groups[0], "0,1,2,3");
    ck_assert_str_eq(cfg->groups[1], "4,5,6,7");
    ck_assert_str_eq(cfg->groups[7], "8");
    for (int i = 2; i < 7; i++)
        ck_assert_ptr_null(cfg->groups[i]);
    ck_assert_str_eq(cfg->unknown_vars, "");

    ck_assert_int_eq(hc_env_copy(cp, cfg), HCCL_SUCCESS);
    ck_assert_ptr_ne(cp->groups[0], cfg->groups[0]);
    hc_env_free(cfg);
    ck_assert_uint_eq(cfg->ngroups, 0);
    ck_assert_ptr_null(cfg->groups[0]);
    ck_assert_uint_eq(cp->ngroups, 8);
    ck_assert_str_eq(cp->groups[7], "8");
    ck_assert_uint_eq(cp->max_concurrent, 4);
    hc_env_free(cp);

    unsetenv("HCCL_GROUP_0");
    unsetenv("HCCL_GROUP_1");
    unsetenv("HCCL_GROUP_7");
    setenv("HCCL_GROUP_1023", "5,3", 1);
    load_ok(cfg);
    ck_assert_uint_eq(cfg->ngroups, 1024);
    ck_assert_str_eq(cfg->groups[1023], "5,3");
    hc_env_free(cfg);
    unsetenv("HCCL_GROUP_1023");

    static const char *const bad_names[] = {"HCCL_GROUP_x", "HCCL_GROUP_1024", "HCCL_GROUP_01",
                                            "HCCL_GROUP_", "HCCL_GROUP_1a",
                                            "HCCL_GROUP_99999999999999999999999"};
    for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
        setenv("HCCL_GROUP_3", "0,1", 1); /* a good one is freed on the error path */
        load_bad(bad_names[i], "0,1");
    }
    static const char *const bad_vals[] = {"0,,1", "a,b", "0;1", "-1", "1,", ",1", " 1",
                                           "0, 1", "3000000000"};
    for (size_t i = 0; i < sizeof(bad_vals) / sizeof(bad_vals[0]); i++)
        load_bad("HCCL_GROUP_2", bad_vals[i]);
    free(cfg);
    free(cp);
}
END_TEST

START_TEST(test_unknown_vars)
{
    hc_config_t *cfg = malloc(sizeof(*cfg));
    setenv("HCCL_WHITELIST_DISABLE", "1", 1);
    setenv("HCCL_INTRA_ROCE_ENABLE", "0", 1);
    setenv("HCCL_DEBUG", "WARN", 1);
    setenv("HCCLX", "1", 1);
    load_ok(cfg);
    ck_assert_msg(strstr(cfg->unknown_vars, "HCCL_WHITELIST_DISABLE") != NULL, "%s",
                  cfg->unknown_vars);
    ck_assert_msg(strstr(cfg->unknown_vars, "HCCL_INTRA_ROCE_ENABLE") != NULL, "%s",
                  cfg->unknown_vars);
    ck_assert(strstr(cfg->unknown_vars, "HCCL_DEBUG") == NULL);
    ck_assert(strstr(cfg->unknown_vars, "HCCLX") == NULL);
    /* many: the list is cut with "...", never overrun */
    for (int i = 0; i < 200; i++) {
        char name[64];
        snprintf(name, sizeof(name), "HCCL_SOMETHING_UNUSED_%03d", i);
        setenv(name, "1", 1);
    }
    load_ok(cfg);
    size_t len = strlen(cfg->unknown_vars);
    ck_assert_uint_lt(len, sizeof(cfg->unknown_vars));
    ck_assert_str_eq(cfg->unknown_vars + len - 4, ",...");
    free(cfg);
}
END_TEST

START_TEST(test_print)
{
    hc_config_t *cfg = malloc(sizeof(*cfg));
    setenv("HCCL_BUFFER_SIZE", "12KB", 1);
    setenv("HCCL_GROUP_1", "2,3", 1);
    setenv("HCCL_DEBUG_SUBSYS", "^TOPO", 1);
    setenv("HCCL_ALGO", "level0:NA;level1:ring", 1);
    setenv("HCCL_NOT_OURS", "1", 1);
    load_ok(cfg);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hc_env_print(f, cfg);
    fclose(f);
    size_t n;
    const hc_env_var_t *t = hc_env_table(&n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(strstr(buf, t[i].name) != NULL, "%s not printed", t[i].name);
    ck_assert_msg(strstr(buf, "HCCL_BUFFSIZE            12KB ") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "HCCL_BCAST_CHUNK_SIZE    1MB              1MB") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "HCCL_DEBUG_SUBSYS        ^TOPO ") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "HCCL_DETERMINISTIC       false ") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "HCCL_FUSION_THRESHOLD    auto ") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "level0:NA;level1:ring") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "HCCL_GROUP_1") != NULL && strstr(buf, "2,3") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "not used by hcomm: HCCL_NOT_OURS") != NULL, "%s", buf);
    free(buf);
    hc_env_free(cfg);
    free(cfg);
}
END_TEST

/* What hc_env_print / hc_env_log print parses back to the same value. */
START_TEST(test_print_roundtrip)
{
    hc_config_t *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
    static const char *const subs[] = {"INIT", "^ALL", "ALL", "INIT,COLL,TOPO,TUNE,ELASTIC",
                                       "^STREAM", "ENV,STREAM"};
    for (size_t s = 0; s < sizeof(subs) / sizeof(subs[0]); s++) {
        clear_hccl_env();
        setenv("HCCL_DEBUG_SUBSYS", subs[s], 1);
        setenv("HCCL_BUFFER_SIZE", "4097", 1);
        setenv("HCCL_CONNECT_TIMEOUT", "0.25", 1);
        setenv("HCCL_BCAST_CHUNK_SIZE", "512MB", 1);
        setenv("HCCL_EXEC_TIMEOUT", "2147483647", 1);
        setenv("HCCL_GROUP_3", "1,2", 1);
        load_ok(a);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        hc_env_print(f, a);
        fclose(f);
        /* feed every "NAME value" line back in */
        clear_hccl_env();
        char *save = NULL;
        for (char *line = strtok_r(buf, "\n", &save); line != NULL;
             line = strtok_r(NULL, "\n", &save)) {
            char name[64], val[2048];
            if (sscanf(line, "%63s %2047s", name, val) == 2 && strncmp(name, "HCCL_", 5) == 0 &&
                strcmp(val, "-") != 0 && strchr(name, '<') == NULL)
                setenv(name, val, 1);
        }
        free(buf);
        load_ok(b);
        ck_assert_uint_eq(b->ngroups, 4);
        ck_assert_str_eq(b->groups[3], "1,2");
        hc_env_free(a); /* the group strings are compared; the pointers differ */
        hc_env_free(b);
        ck_assert_msg(memcmp(a, b, sizeof(*a)) == 0, "round trip of %s", subs[s]);
    }
    free(a);
    free(b);
}
END_TEST

/* ------------------------------------------------------------ log parsing */

START_TEST(test_parse_level)
{
    ck_assert_int_eq(hc_log_parse_level("NONE"), HC_LOG_NONE);
    ck_assert_int_eq(hc_log_parse_level("error"), HC_LOG_ERROR);
    ck_assert_int_eq(hc_log_parse_level("Warn"), HC_LOG_WARN);
    ck_assert_int_eq(hc_log_parse_level("INFO"), HC_LOG_INFO);
    ck_assert_int_eq(hc_log_parse_level("trace"), HC_LOG_TRACE);
    ck_assert_int_eq(hc_log_parse_level("WARNING"), -1);
    ck_assert_int_eq(hc_log_parse_level("2"), -1);
    ck_assert_int_eq(hc_log_parse_level(""), -1);
    ck_assert_int_eq(hc_log_parse_level(" INFO"), -1);
    ck_assert_int_eq(hc_log_parse_level(NULL), -1);
}
END_TEST

START_TEST(test_parse_subsys)
{
    ck_assert_int_eq(hc_log_parse_subsys("ALL"), HC_SUB_ALL);
    ck_assert_int_eq(hc_log_parse_subsys("all"), HC_SUB_ALL);
    ck_assert_int_eq(hc_log_parse_subsys("INIT"), HC_SUB_INIT);
    ck_assert_int_eq(hc_log_parse_subsys("INIT,COLL"), HC_SUB_INIT | HC_SUB_COLL);
    ck_assert_int_eq(hc_log_parse_subsys("init, coll"), HC_SUB_INIT | HC_SUB_COLL);
    ck_assert_int_eq(hc_log_parse_subsys("TOPO,TUNE,ELASTIC,TRANSPORT,ENV,STREAM"),
                     HC_SUB_TOPO | HC_SUB_TUNE | HC_SUB_ELASTIC | HC_SUB_TRANSPORT |
                         HC_SUB_ENV | HC_SUB_STREAM);
    ck_assert_int_eq(hc_log_parse_subsys("^TOPO"), HC_SUB_ALL & ~HC_SUB_TOPO);
    ck_assert_int_eq(hc_log_parse_subsys("^TOPO,COLL"), HC_SUB_ALL & ~(HC_SUB_TOPO | HC_SUB_COLL));
    ck_assert_int_eq(hc_log_parse_subsys("^ALL"), 0);
    ck_assert_int_eq(hc_log_parse_subsys("COLL,ALL"), HC_SUB_ALL);
    ck_assert_int_eq(hc_log_parse_subsys(""), -1);
    ck_assert_int_eq(hc_log_parse_subsys("^"), -1);
    ck_assert_int_eq(hc_log_parse_subsys("INIT,,COLL"), -1);
    ck_assert_int_eq(hc_log_parse_subsys("INIT,"), -1);
    ck_assert_int_eq(hc_log_parse_subsys(",INIT"), -1);
    ck_assert_int_eq(hc_log_parse_subsys("BOGUS"), -1);
    ck_assert_int_eq(hc_log_parse_subsys("INITX"), -1);
    ck_assert_int_eq(hc_log_parse_subsys("INI"), -1);
    ck_assert_int_eq(hc_log_parse_subsys("INIT^COLL"), -1);
    ck_assert_int_eq(hc_log_parse_subsys(NULL), -1);

    ck_assert_str_eq(hc_log_subsys_name(HC_SUB_INIT), "INIT");
    ck_assert_str_eq(hc_log_subsys_name(HC_SUB_STREAM), "STREAM");
    ck_assert_str_eq(hc_log_subsys_name(HC_SUB_TOPO | HC_SUB_COLL), "COLL");
    ck_assert_str_eq(hc_log_subsys_name(HC_SUB_ENV | HC_SUB_TRANSPORT), "TRANSPORT");
    ck_assert_str_eq(hc_log_subsys_name(HC_SUB_ALL), "ALL");
}
END_TEST

/* ------------------------------------------------------------ logging */

START_TEST(test_log_defaults)
{
    /* a fresh process: usable before any configuration */
    ck_assert_int_eq(hc_log_level, HC_LOG_WARN);
    ck_assert_uint_eq(hc_log_subsys, HC_SUB_ALL);
    ck_assert(HC_LOG_ON(HC_LOG_WARN, HC_SUB_COLL));
    ck_assert(!HC_LOG_ON(HC_LOG_INFO, HC_SUB_COLL));
}
END_TEST

static void host_short(char *h, size_t n)
{
    gethostname(h, n);
    h[n - 1] = '\0';
    char *dot = strchr(h, '.');
    if (dot != NULL && dot != h)
        *dot = '\0';
}

START_TEST(test_log_file)
{
    char tmpl[512], path[600], host[64];
    host_short(host, sizeof(host));
    snprintf(tmpl, sizeof(tmpl), "%s/log.%%h.%%p.%%r.%%%%.txt", tmpdir);
    hc_log_configure(HC_LOG_WARN, HC_SUB_ALL, tmpl);
    HC_WARN(HC_SUB_COLL, "first %d", 1);
    HC_TRACE(HC_SUB_COLL, "not at WARN");
    HC_INFO(HC_SUB_COLL, "not at WARN either");
    HC_ERROR(HC_SUB_TOPO | HC_SUB_INIT, "second\n");
    /* before the rank is known: x */
    snprintf(path, sizeof(path), "%s/log.%s.%d.x.%%.txt", tmpdir, host, (int)getpid());
    char *s = slurp(path);
    ck_assert_msg(s != NULL, "%s not written", path);
    ck_assert_int_eq(count_substr(s, "\n"), 2);
    ck_assert(strstr(s, "not at WARN") == NULL);
    /* the line format */
    char h[64], lvl[16], sub[16], where[64], msg[64];
    int pid, nread;
    double t;
    char rank[8];
    ck_assert_int_eq(sscanf(s, "%63[^:]:%d:%7[^ ] [%lf] hcomm %15s %15s %63s %63[^\n]%n", h, &pid,
                            rank, &t, lvl, sub, where, msg, &nread),
                     8);
    ck_assert_str_eq(h, host);
    ck_assert_int_eq(pid, getpid());
    ck_assert_str_eq(rank, "x");
    ck_assert(t >= 0.0 && t < 5.0);
    ck_assert_str_eq(lvl, "WARN");
    ck_assert_str_eq(sub, "COLL");
    ck_assert_msg(strncmp(where, "check_env.c:", 12) == 0, "%s", where);
    ck_assert_str_eq(msg, "first 1");
    const char *l2 = strchr(s, '\n') + 1;
    ck_assert_msg(strstr(l2, " hcomm ERROR INIT check_env.c:") != NULL, "%s", l2);
    ck_assert_msg(strstr(l2, " second\n") != NULL && strstr(l2, "second\n\n") == NULL, "%s", l2);
    free(s);

    /* the rank is known: the next line goes to the rank's file */
    hc_log_set_rank(3);
    hc_log_set_rank(5); /* the first communicator's rank stays */
    HC_WARN(HC_SUB_INIT, "third");
    snprintf(path, sizeof(path), "%s/log.%s.%d.3.%%.txt", tmpdir, host, (int)getpid());
    s = slurp(path);
    ck_assert_msg(s != NULL, "%s not written", path);
    ck_assert_int_eq(count_substr(s, "\n"), 1);
    char prefix[128];
    snprintf(prefix, sizeof(prefix), "%s:%d:3 [", host, (int)getpid());
    ck_assert_msg(strncmp(s, prefix, strlen(prefix)) == 0, "%s", s);
    ck_assert(strstr(s, " third\n") != NULL);
    free(s);
}
END_TEST

START_TEST(test_log_append_and_filters)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/plain.log", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("existing line\n", f);
    fclose(f);
    hc_log_configure(HC_LOG_INFO, HC_SUB_COLL | HC_SUB_ENV, path);
    ck_assert_int_eq(hc_log_level, HC_LOG_INFO);
    HC_INFO(HC_SUB_COLL, "coll info");
    HC_INFO(HC_SUB_TOPO, "topo info");
    HC_WARN(HC_SUB_TOPO, "topo warn");
    HC_TRACE(HC_SUB_COLL, "coll trace");
    HC_INFO(HC_SUB_TOPO | HC_SUB_ENV, "topo+env info"); /* any enabled bit logs */
    /* a direct call is filtered too */
    hc_log_write(HC_LOG_TRACE, HC_SUB_COLL, __FILE__, __LINE__, "direct trace");
    hc_log_configure(HC_LOG_NONE, HC_SUB_ALL, path);
    HC_ERROR(HC_SUB_COLL, "error at NONE");
    hc_log_configure(HC_LOG_TRACE, HC_SUB_ALL, path);
    HC_TRACE(HC_SUB_STREAM, "stream trace");
    char *s = slurp(path);
    ck_assert_msg(strncmp(s, "existing line\n", 14) == 0, "%s", s);
    ck_assert(strstr(s, "coll info") != NULL);
    ck_assert(strstr(s, "topo info") == NULL);
    ck_assert(strstr(s, "topo warn") == NULL);
    ck_assert(strstr(s, "coll trace") == NULL);
    ck_assert(strstr(s, "direct trace") == NULL);
    ck_assert(strstr(s, "error at NONE") == NULL);
    ck_assert(strstr(s, "hcomm INFO TOPO check_env.c") != NULL); /* lowest bit's name */
    ck_assert(strstr(s, "hcomm TRACE STREAM check_env.c") != NULL);
    ck_assert_int_eq(count_substr(s, "\n"), 4);
    free(s);
}
END_TEST

START_TEST(test_log_errno)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/errno.log", tmpdir);
    hc_log_configure(HC_LOG_WARN, HC_SUB_ALL, path);
    errno = ENOENT;
    HC_WARN(HC_SUB_INIT, "open failed: %m");
    ck_assert_int_eq(errno, ENOENT); /* logging keeps the caller's errno */
    char *s = slurp(path);
    ck_assert_msg(strstr(s, "open failed: No such file or directory\n") != NULL, "%s", s);
    free(s);
    /* an over-long message is cut, still one line */
    char *big = malloc(10000);
    memset(big, 'z', 9999);
    big[9999] = '\0';
    HC_WARN(HC_SUB_INIT, "%s", big);
    free(big);
    s = slurp(path);
    ck_assert_int_eq(count_substr(s, "\n"), 2);
    ck_assert(strstr(s, "zzz...\n") != NULL);
    free(s);
}
END_TEST

START_TEST(test_log_bad_file)
{
    /* an unopenable file falls back to stderr, and keeps working */
    char path[600];
    snprintf(path, sizeof(path), "%s/stderr.txt", tmpdir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
    close(fd);
    hc_log_configure(HC_LOG_WARN, HC_SUB_ALL, "/nonexistent-dir/x/log.txt");
    HC_WARN(HC_SUB_INIT, "to stderr");
    char *e = slurp(path);
    ck_assert_msg(strstr(e, "hcomm: cannot open HCCL_DEBUG_FILE '/nonexistent-dir/x/log.txt': "
                            "No such file or directory; logging to stderr\n") != NULL, "%s", e);
    ck_assert_msg(strstr(e, " hcomm WARN INIT check_env.c:") != NULL, "%s", e);
    ck_assert(strstr(e, " to stderr\n") != NULL);
    free(e);
    snprintf(path, sizeof(path), "%s/after.log", tmpdir);
    hc_log_configure(HC_LOG_WARN, HC_SUB_ALL, path);
    HC_WARN(HC_SUB_INIT, "to the file");
    char *s = slurp(path);
    ck_assert(s != NULL && strstr(s, "to the file") != NULL);
    free(s);
}
END_TEST

#define NTHREADS 4
#define NLINES 500

static void *log_thread(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int i = 0; i < NLINES; i++)
        HC_WARN(HC_SUB_COLL, "thread %d line %d %s", id, i,
                "padding padding padding padding padding padding padding padding");
    return NULL;
}

START_TEST(test_log_threads)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/threads.log", tmpdir);
    hc_log_configure(HC_LOG_WARN, HC_SUB_ALL, path);
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, log_thread, (void *)(intptr_t)i);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    char *s = slurp(path);
    int lines = 0;
    int seen[NTHREADS] = {0};
    char *save = NULL;
    double last = 0;
    for (char *l = strtok_r(s, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
        int id, n;
        double t;
        const char *b = strchr(l, '[');
        ck_assert_msg(b != NULL && sscanf(b, "[%lf]", &t) == 1, "%s", l);
        ck_assert(t >= last); /* time stamps in file order */
        last = t;
        const char *m = strstr(l, " thread ");
        ck_assert_msg(m != NULL && sscanf(m, " thread %d line %d", &id, &n) == 2, "torn: %s", l);
        ck_assert_msg(id >= 0 && id < NTHREADS && n == seen[id], "out of order: %s", l);
        size_t ll = strlen(l);
        ck_assert_msg(ll > 8 && strcmp(l + ll - 8, " padding") == 0 && count_substr(l, "hcomm") == 1,
                      "torn: %s", l);
        seen[id]++;
        lines++;
    }
    ck_assert_int_eq(lines, NTHREADS * NLINES);
    free(s);
}
END_TEST

START_TEST(test_env_log_once)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/env.log", tmpdir);
    hc_config_t *cfg = malloc(sizeof(*cfg));
    setenv("HCCL_GROUP_0", "0,1", 1);
    setenv("HCCL_NOT_OURS", "1", 1);
    setenv("HCCL_MAX_CONCURRENT", "9", 1);
    load_ok(cfg);
    hc_log_configure(HC_LOG_INFO, HC_SUB_ENV, path);
    hc_env_log(cfg);
    hc_env_log(cfg);
    char *s = slurp(path);
    size_t n;
    hc_env_table(&n);
    ck_assert_int_eq(count_substr(s, " hcomm INFO ENV "), (int)n - 1 + 1 + 1);
    ck_assert_int_eq(count_substr(s, " HCCL_DEBUG=WARN\n"), 1);
    ck_assert(strstr(s, " HCCL_MAX_CONCURRENT=9\n") != NULL);
    ck_assert(strstr(s, " HCCL_BUFFSIZE=200\n") != NULL);
    ck_assert(strstr(s, " HCCL_GROUP_0=0,1\n") != NULL);
    ck_assert(strstr(s, " not used by hcomm: HCCL_NOT_OURS\n") != NULL);
    free(s);
    hc_env_free(cfg);
    free(cfg);
}
END_TEST

/* ------------------------------------------------------------ process-wide */

START_TEST(test_global_ok)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/global.%%p.log", tmpdir);
    setenv("HCCL_DEBUG", "INFO", 1);
    setenv("HCCL_DEBUG_SUBSYS", "ENV,COLL", 1);
    setenv("HCCL_DEBUG_FILE", path, 1);
    setenv("HCCL_MAX_CONCURRENT", "7", 1);
    const hc_config_t *a = NULL, *b = NULL;
    ck_assert_int_eq(hc_env_global(&a), HCCL_SUCCESS);
    setenv("HCCL_MAX_CONCURRENT", "8", 1); /* loaded once: no effect */
    ck_assert_int_eq(hc_env_global(&b), HCCL_SUCCESS);
    ck_assert_ptr_eq(a, b);
    ck_assert_uint_eq(a->max_concurrent, 7);
    ck_assert_int_eq(hc_log_level, HC_LOG_INFO);
    ck_assert_uint_eq(hc_log_subsys, HC_SUB_ENV | HC_SUB_COLL);
    snprintf(path, sizeof(path), "%s/global.%d.log", tmpdir, (int)getpid());
    char *s = slurp(path);
    ck_assert_msg(s != NULL, "%s", path);
    ck_assert_int_eq(count_substr(s, " HCCL_MAX_CONCURRENT=7\n"), 1);
    free(s);
}
END_TEST

START_TEST(test_global_bad)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/global.log", tmpdir);
    setenv("HCCL_DEBUG_FILE", path, 1);
    setenv("HCCL_EXEC_TIMEOUT", "soon", 1);
    const hc_config_t *a = (const hc_config_t *)0x1;
    ck_assert_int_eq(hc_env_global(&a), HCCL_E_PARA);
    ck_assert_int_eq(hc_env_global(&a), HCCL_E_PARA);
    ck_assert_ptr_eq(a, (const hc_config_t *)0x1); /* not written on failure */
    char *s = slurp(path);
    ck_assert_msg(s != NULL, "%s", path);
    ck_assert_int_eq(count_substr(s, " hcomm ERROR ENV "), 1);
    ck_assert_msg(strstr(s, "HCCL_EXEC_TIMEOUT='soon': expected a number of seconds") != NULL,
                  "%s", s);
    free(s);
}
END_TEST

/* ------------------------------------------------------------ errors.c */

START_TEST(test_error_strings)
{
    for (int i = HCCL_SUCCESS; i < HCCL_E_RESERVED; i++) {
        const char *s = HcclGetErrorString((HcclResult)i);
        ck_assert_ptr_nonnull(s);
        ck_assert_msg(strcmp(s, "unknown error code") != 0, "code %d has no string", i);
        for (int j = HCCL_SUCCESS; j < i; j++)
            ck_assert_msg(strcmp(s, HcclGetErrorString((HcclResult)j)) != 0, "%d and %d", i, j);
    }
    ck_assert_str_eq(HcclGetErrorString(HCCL_SUCCESS), "success");
    ck_assert_str_eq(HcclGetErrorString(HCCL_E_TIMEOUT), "timed out");
    ck_assert_str_eq(HcclGetErrorString(HCCL_E_RESERVED), "unknown error code");
    ck_assert_str_eq(HcclGetErrorString((HcclResult)1000), "unknown error code");
    ck_assert_str_eq(HcclGetErrorString((HcclResult)-1), "unknown error code");
}
END_TEST

START_TEST(test_config_init)
{
    HcclCommConfig c;
    memset(&c, 0x5a, sizeof(c));
    HcclCommConfigInit(&c);
    hc_comm_config_info_t info;
    memcpy(&info, c.reserved, sizeof(info));
    ck_assert_uint_eq(info.size, sizeof(HcclCommConfig));
    ck_assert_uint_eq(info.magic, HCCL_COMM_CONFIG_MAGIC_WORD);
    ck_assert_uint_eq(info.version, HCCL_COMM_CONFIG_VERSION);
    ck_assert_uint_eq(c.hcclBufferSize, HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET);
    ck_assert_uint_eq(c.hcclDeterministic, HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET);
    ck_assert_uint_eq(c.hcclOpExpansionMode, HCCL_COMM_DEFAULT_OP_EXPANSION_MODE);
    ck_assert_uint_eq(c.hcclRdmaTrafficClass, HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET);
    ck_assert_uint_eq(c.hcclRdmaServiceLevel, HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET);
    ck_assert_uint_eq(c.hcclWorldRankID, 0);
    ck_assert_uint_eq(c.hcclJobID, 0);
    ck_assert_uint_eq(c.aclGraphZeroCopyEnable, 0);
    ck_assert_int_eq(c.hcclExecTimeOut, HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET);
    ck_assert_uint_eq(c.hcclQos, HCCL_COMM_QOS_CONFIG_NOT_SET);
    ck_assert_str_eq(c.hcclCommName, "");
    ck_assert_str_eq(c.hcclUdi, "");
    ck_assert_str_eq(c.hcclAlgo, "");
    ck_assert_str_eq(c.hcclRetryEnable, "");
    ck_assert_str_eq(c.hcclRetryParams, "");
    ck_assert_str_eq(c.hcclBufferName, "");
    HcclCommConfigInit(NULL); /* harmless */
}
END_TEST

/* ------------------------------------------------------------ main */

static Suite *env_suite(void)
{
    Suite *s = suite_create("env");
    TCase *tc = tcase_create("env");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_each_var, 0, NCASES);
    tcase_add_test(tc, test_table_complete);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_empty_is_unset);
    tcase_add_test(tc, test_more_values);
    tcase_add_test(tc, test_net_and_timeout);
    tcase_add_test(tc, test_err_message);
    tcase_add_test(tc, test_parse_size);
    tcase_add_test(tc, test_buffsize_precedence);
    tcase_add_test(tc, test_groups);
    tcase_add_test(tc, test_unknown_vars);
    tcase_add_test(tc, test_print);
    tcase_add_test(tc, test_print_roundtrip);
    tcase_add_test(tc, test_global_ok);
    tcase_add_test(tc, test_global_bad);
    suite_add_tcase(s, tc);

    TCase *tl = tcase_create("log");
    tcase_add_checked_fixture(tl, setup, teardown);
    tcase_set_timeout(tl, 60);
    tcase_add_test(tl, test_parse_level);
    tcase_add_test(tl, test_parse_subsys);
    tcase_add_test(tl, test_log_defaults);
    tcase_add_test(tl, test_log_file);
    tcase_add_test(tl, test_log_append_and_filters);
    tcase_add_test(tl, test_log_errno);
    tcase_add_test(tl, test_log_bad_file);
    tcase_add_test(tl, test_log_threads);
    tcase_add_test(tl, test_env_log_once);
    suite_add_tcase(s, tl);

    TCase *te = tcase_create("errors");
    tcase_add_test(te, test_error_strings);
    tcase_add_test(te, test_config_init);
    suite_add_tcase(s, te);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(env_suite());
    /* the tests change the environment and the logger: one process each */
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
