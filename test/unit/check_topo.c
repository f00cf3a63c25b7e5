/*
 * test/unit/check_topo.c - the topology model (topo/) and the hierarchical
 * algorithms (coll/hier.c and friends), in one process:
 *
 *  - the topology file parser: good files, and bad ones that must fail
 *    with the right line number and reason; HCCL rank tables (JSON);
 *  - the model from synthetic cards (host names, hwloc facts) for large
 *    simulated clusters (64 nodes x 8 ranks): every group, node and rack
 *    a contiguous run of the ring, the fewest boundary crossings, the
 *    TORUS2D grid; the overrides (HCCL_GROUP_<n>, HCCL_NVLINK_MAP, the
 *    file) and their errors; the dump read back;
 *  - HIER AllReduce / ReduceScatter / AllGather / Broadcast run on the
 *    loopback transport over flat, equal and unequal units, in and out of
 *    place, many chunk sizes, checked element by element;
 *  - bytes across nodes: HIER and the topology-ordered RING send fewer
 *    bytes across the declared host boundary than a topology-blind ring;
 *  - the broadcast tree crosses each boundary once per receiving unit.
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hccl/hccl.h>

#include "coll/algos.h"
#include "coll/hier.h"
#include "src/base/env.h"
#include "src/exec/exec.h"
#include "src/base/log.h"
#include "src/exec/transport_loop.h"
#include "topo/topo.h"
#include "topo/topo_int.h"

/* ------------------------------------------------------------ helpers */

/* ck_assert records its location through a pipe on every call: in loops
 * over elements, call Check only on a failure. */
#define EXPECT(cond, ...) \
    do { \
        if (!(cond)) \
            ck_abort_msg(__VA_ARGS__); \
    } while (0)

static void mkblob(uint8_t *blob, uint64_t phys, int numa, int nnuma)
{
    hc_topo_facts_t f;
    memset(&f, 0, sizeof(f));
    f.magic = HC_FACTS_MAGIC;
    f.version = HC_FACTS_VERSION;
    f.phys = phys;
    f.numa = (int16_t)numa;
    f.nnuma = (uint16_t)nnuma;
    f.package = -1;
    f.hw_ok = 1;
    snprintf(f.cpus, sizeof(f.cpus), "%d", numa < 0 ? 0 : numa);
    memset(blob, 0, 512);
    memcpy(blob, &f, sizeof(f));
}

typedef struct {
    uint32_t n;
    char (*host)[64];
    uint8_t (*blob)[512];
    hc_topo_member_t *m;
} cards_t;

static cards_t *cards_new(uint32_t n)
{
    cards_t *c = calloc(1, sizeof(*c));
    c->n = n;
    c->host = calloc(n, 64);
    c->blob = calloc(n, 512);
    c->m = calloc(n, sizeof(hc_topo_member_t));
    for (uint32_t i = 0; i < n; i++) {
        snprintf(c->host[i], 64, "vm");
        mkblob(c->blob[i], 42, -1, 1);
        c->m[i].host = c->host[i];
        c->m[i].blob = c->blob[i];
        c->m[i].world = i;
    }
    return c;
}

static void cards_free(cards_t *c)
{
    free(c->host);
    free(c->blob);
    free(c->m);
    free(c);
}

static hc_config_t *cfg_new(void)
{
    hc_config_t *cfg = calloc(1, sizeof(*cfg));
    return cfg;
}

static void cfg_group(hc_config_t *cfg, uint32_t g, const char *v)
{
    free(cfg->groups[g]);
    cfg->groups[g] = strdup(v);
    if (g + 1 > cfg->ngroups)
        cfg->ngroups = g + 1;
}

static void cfg_free(hc_config_t *cfg)
{
    for (uint32_t g = 0; g < HC_MAX_GROUPS; g++)
        free(cfg->groups[g]);
    free(cfg);
}

static char tmpdir[256];

static const char *write_tmp(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void setup(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_topo.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    hc_topo_reset();
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", tmpdir);
}

/* Ring checks: every group, node and rack contiguous; offsets agree. */
static void check_contiguous(const hc_topo_t *t)
{
    const uint32_t n = t->nranks;
    uint32_t *seen = calloc(n, sizeof(uint32_t));
    for (uint32_t p = 0; p < n; p++) {
        EXPECT(t->ring[p] < n, "%s", "t->ring[p] < n");
        EXPECT((seen[t->ring[p]]++) == (0), "%s", "seen[t->ring[p]]++ == 0");
        EXPECT((t->pos_of[t->ring[p]]) == (p), "%s", "t->pos_of[t->ring[p]] == p");
    }
    for (uint32_t g = 0; g < t->ngroups; g++) {
        EXPECT(t->group_off[g] < t->group_off[g + 1], "%s", "t->group_off[g] < t->group_off[g + 1]");
        for (uint32_t p = t->group_off[g]; p < t->group_off[g + 1]; p++)
            EXPECT((t->group_of[t->ring[p]]) == (g), "%s", "t->group_of[t->ring[p]] == g");
        /* a group lies inside one node */
        ck_assert_uint_eq(t->node_of[t->ring[t->group_off[g]]],
                          t->node_of[t->ring[t->group_off[g + 1] - 1]]);
    }
    for (uint32_t k = 0; k < t->nnodes; k++)
        for (uint32_t p = t->node_off[k]; p < t->node_off[k + 1]; p++)
            EXPECT((t->node_of[t->ring[p]]) == (k), "%s", "t->node_of[t->ring[p]] == k");
    for (uint32_t k = 0; k < t->nracks; k++)
        for (uint32_t p = t->rack_off[k]; p < t->rack_off[k + 1]; p++)
            EXPECT((t->rack_of[t->ring[p]]) == (k), "%s", "t->rack_of[t->ring[p]] == k");
    EXPECT((t->group_off[t->ngroups]) == (n), "%s", "t->group_off[t->ngroups] == n");
    EXPECT((t->node_off[t->nnodes]) == (n), "%s", "t->node_off[t->nnodes] == n");
    EXPECT((t->rack_off[t->nracks]) == (n), "%s", "t->rack_off[t->nracks] == n");
    free(seen);
}

/* ------------------------------------------------------------ the parser */

static const char *SIM222 =
    "# 8 ranks as 2 hosts x 2 NUMA x 2, hosts interleaved as mpirun --map-by node does\n"
    "hcomm-topology 1\n"
    "cluster sim\n"
    "rack r0 switch=tor0\n"
    "node hostA rack=r0 numa=2\n"
    "node hostB rack=r0 numa=2\n"
    "rank 0,2 node=hostA numa=0\n"
    "rank 4,6 node=hostA numa=1\n"
    "rank 1,3 node=hostB numa=0\n"
    "rank 5,7 node=hostB numa=1\n";

static const char *RACKS =
    "hcomm-topology 1\n"
    "cluster demo\n"
    "rack rackA switch=torA\n"
    "rack rackB switch=torB\n"
    "node n0 rack=rackA addr=10.0.0.1 numa=2\n"
    "node n1 rack=rackA addr=10.0.0.2 numa=2\n"
    "node n2 rack=rackB addr=10.0.1.1 numa=2\n"
    "node n3 rack=rackB addr=10.0.1.2 numa=2\n"
    "device n0/gpu0 kind=gpu numa=0 pci=0000:17:00.0\n"
    "device n0/gpu1 kind=gpu numa=0\n"
    "link n0/gpu0 n0/gpu1 kind=nvlink bw=300GB/s lat=1.5us\n"
    "rank 0 node=n0 numa=0 device=gpu0\n"
    "rank 1 node=n0 numa=0 device=gpu1\n"
    "rank 2-3 node=n0 numa=1\n"
    "rank 4-7 node=n1\n"
    "rank 8-11 node=n2 group=left\n"
    "rank 12-15 node=n3\n"
    "level rack link=net bw=100Gb/s lat=2us\n"
    "level cluster link=spine bw=50Gb/s lat=5us\n";

START_TEST(test_parse_good)
{
    char err[600] = "";
    hc_decl_t d;
    hc_decl_init(&d);
    ck_assert_int_eq(hc_decl_parse_text(SIM222, &d, err, sizeof(err)), HCCL_SUCCESS);
    ck_assert_str_eq(d.cluster, "sim");
    ck_assert_int_eq(d.nnodes, 2);
    ck_assert_int_eq(d.nracks, 1);
    ck_assert_str_eq(d.racks[0].sw, "tor0");
    ck_assert_int_eq(d.nranks, 8);
    ck_assert_int_eq(d.ranks[6].numa, 1);
    ck_assert_str_eq(d.nodes[d.ranks[6].node].name, "hostA");
    ck_assert_str_eq(d.nodes[d.ranks[7].node].name, "hostB");
    hc_decl_free(&d);

    ck_assert_int_eq(hc_decl_parse_text(RACKS, &d, err, sizeof(err)), HCCL_SUCCESS);
    ck_assert_int_eq(d.nracks, 2);
    ck_assert_int_eq(d.nnodes, 4);
    ck_assert_int_eq(d.nlinks, 1);
    ck_assert(d.links[0].bw == 300e9);
    ck_assert(d.links[0].lat > 1.49e-6 && d.links[0].lat < 1.51e-6);
    ck_assert(d.level[HC_TOPO_RACK].set && d.level[HC_TOPO_RACK].bw == 12.5e9);
    ck_assert_str_eq(d.ranks[9].group, "left");
    ck_assert_str_eq(d.devs[d.ranks[1].dev].name, "gpu1");
    hc_decl_free(&d);

    double v;
    ck_assert_int_eq(hc_parse_bw("12.5GB/s", &v), 0);
    ck_assert(v == 12.5e9);
    ck_assert_int_eq(hc_parse_bw("100Gb/s", &v), 0);
    ck_assert(v == 12.5e9);
    ck_assert_int_eq(hc_parse_bw("12.5", &v), -1);
    ck_assert_int_eq(hc_parse_bw("-1GB/s", &v), -1);
    ck_assert_int_eq(hc_parse_lat("800ns", &v), 0);
    ck_assert(v > 7.99e-7 && v < 8.01e-7);
    ck_assert_int_eq(hc_parse_lat("2 us", &v), -1);
}
END_TEST

static const struct {
    const char *text, *want;
} bad_files[] = {
    {"", "line 1: empty file"},
    {"node a\n", "line 1: the first statement must be 'hcomm-topology 1'"},
    {"hcomm-topology 2\n", "line 1: hcomm-topology: this hcomm reads format version 1"},
    {"# c\n\nhcomm-topology 1\nnod a\n", "line 4: unknown statement 'nod'"},
    {"hcomm-topology 1\nrack r0 swich=x\n", "line 2: rack: unknown attribute 'swich' (known: switch)"},
    {"hcomm-topology 1\nnode a\nnode a\n", "line 3: node 'a' is already declared on line 2"},
    {"hcomm-topology 1\nrank 0-3 node=a\nrank 3 node=b\n",
     "line 3: rank 3 is already declared on line 2"},
    {"hcomm-topology 1\nrank 0-x node=a\n", "line 2: '0-x' is not a rank list"},
    {"hcomm-topology 1\nrank 3-1 node=a\n", "line 2: '3-1' is not a rank list"},
    {"hcomm-topology 1\nrank 0 numa=1\n", "line 2: rank: node=NAME is required"},
    {"hcomm-topology 1\nrank 0 node=a numa=x\n", "line 2: rank: numa='x' is not a number"},
    {"hcomm-topology 1\nrank 0 node=a/b\n", "line 2: rank: 'a/b' is not a valid node name"},
    {"hcomm-topology 1\nlink 0\n", "line 2: link: needs two ends"},
    {"hcomm-topology 1\nlink 0 n/g\n", "line 2: link: '0' and 'n/g' must both be ranks"},
    {"hcomm-topology 1\nlink 2 2\n", "line 2: link: rank 2 linked to itself"},
    {"hcomm-topology 1\nlink a/g0 b/g1\n", "line 2: link: 'a/g0' and 'b/g1' are on different nodes"},
    {"hcomm-topology 1\nlink 0 1 bw=fast\n", "line 2: link: bw='fast' is not a bandwidth"},
    {"hcomm-topology 1\n\nlevel switch\n", "line 3: level: 'switch' is not a level"},
    {"hcomm-topology 1\nlevel rack lat=2\n", "line 2: level: lat='2' is not a latency"},
    {"hcomm-topology 1\nlevel node\nlevel node\n", "line 3: level node is already described on line 2"},
    {"hcomm-topology 1\nrack r0 switch=a switch=b\n", "line 2: rack: attribute 'switch' given twice"},
    {"hcomm-topology 1\nnode a rack\n", "line 2: node: 'rack' is not key=value"},
    {"hcomm-topology 1\ncluster\n", "line 2: cluster: expected 'cluster NAME'"},
    {"hcomm-topology 1\nhcomm-topology 1\n", "line 2: hcomm-topology: given twice"},
};

START_TEST(test_parse_bad)
{
    for (size_t i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
        char err[600] = "";
        hc_decl_t d;
        hc_decl_init(&d);
        int rc = hc_decl_parse_text(bad_files[i].text, &d, err, sizeof(err));
        hc_decl_free(&d);
        ck_assert_msg(rc == HCCL_E_PARA, "case %zu accepted: %s", i, bad_files[i].text);
        ck_assert_msg(strstr(err, bad_files[i].want) != NULL, "case %zu: got '%s', want '%s'", i,
                      err, bad_files[i].want);
    }
    /* hc_decl_load names a missing file */
    char err[600] = "";
    hc_decl_t d;
    hc_decl_init(&d);
    ck_assert_int_eq(hc_decl_load("/nonexistent/topo", &d, err, sizeof(err)),
                     HCCL_E_OPEN_FILE_FAILURE);
    ck_assert_ptr_nonnull(strstr(err, "No such file"));
    hc_decl_free(&d);
}
END_TEST

/* Only regular files, at most HC_TOPO_FILE_MAX bytes, without NUL bytes:
 * a FIFO must not block, /dev/zero must not be read until memory runs out. */
static int load_err(const char *path, char *err, size_t errlen)
{
    hc_decl_t d;
    hc_decl_init(&d);
    err[0] = '\0';
    int rc = hc_decl_load(path, &d, err, errlen);
    hc_decl_free(&d);
    return rc;
}

START_TEST(test_file_kinds)
{
    char dir[] = "/tmp/check_topo_XXXXXX", path[256], err[600];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/fifo", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    ck_assert_int_eq(load_err(path, err, sizeof(err)), HCCL_E_PARA);
    ck_assert_msg(strstr(err, "not a regular file") != NULL, "%s", err);
    unlink(path);
    ck_assert_int_eq(load_err("/dev/zero", err, sizeof(err)), HCCL_E_PARA);
    ck_assert_msg(strstr(err, "not a regular file") != NULL, "%s", err);
    ck_assert_int_eq(load_err(dir, err, sizeof(err)), HCCL_E_OPEN_FILE_FAILURE);
    ck_assert_msg(strstr(err, "directory") != NULL, "%s", err);
    /* one byte over the cap (sparse: nothing is written) */
    snprintf(path, sizeof(path), "%s/big", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("hcomm-topology 1\n", f);
    fclose(f);
    ck_assert_int_eq(truncate(path, (off_t)HC_TOPO_FILE_MAX + 1), 0);
    ck_assert_int_eq(load_err(path, err, sizeof(err)), HCCL_E_PARA);
    ck_assert_msg(strstr(err, "larger than") != NULL, "%s", err);
    /* a NUL byte */
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fwrite("hcomm-topology 1\n\0rank 0 node=a\n", 1, 32, f);
    fclose(f);
    ck_assert_int_eq(load_err(path, err, sizeof(err)), HCCL_E_PARA);
    ck_assert_msg(strstr(err, "NUL byte") != NULL, "%s", err);
    /* a good file through a symbolic link */
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("hcomm-topology 1\nrank 0-1 node=a\n", f);
    fclose(f);
    char link[300];
    snprintf(link, sizeof(link), "%s/link", dir);
    ck_assert_int_eq(symlink(path, link), 0);
    ck_assert_msg(load_err(link, err, sizeof(err)) == HCCL_SUCCESS, "%s", err);
    unlink(link);
    unlink(path);
    rmdir(dir);
}
END_TEST

static const char *RANKTABLE =
    "{\n"
    "  \"version\": \"1.0\", \"status\": \"completed\", \"server_count\": \"4\",\n"
    "  \"hcomm_port\": \"61000\",\n"
    "  \"server_list\": [\n"
    "    {\"server_id\": \"10.0.0.1\", \"rack_id\": \"rackA\", \"switch_id\": \"torA\",\n"
    "     \"device\": [{\"device_id\": \"0\", \"device_ip\": \"192.168.0.1\", \"rank_id\": \"0\"},\n"
    "                {\"device_id\": \"1\", \"device_ip\": \"192.168.0.2\", \"rank_id\": \"1\"}]},\n"
    "    {\"server_id\": \"10.0.0.2\", \"rack_id\": \"rackA\",\n"
    "     \"device\": [{\"device_id\": \"0\", \"rank_id\": \"2\"}, {\"device_id\": 1, \"rank_id\": 3}]},\n"
    "    {\"server_id\": \"node-c\", \"host_ip\": \"10.0.1.1\", \"rack_id\": \"rackB\",\n"
    "     \"device\": [{\"device_id\": \"0\", \"rank_id\": \"4\"}, {\"device_id\": \"1\", \"rank_id\": \"5\"}]},\n"
    "    {\"server_id\": \"10.0.1.2\", \"rack_id\": \"rackB\",\n"
    "     \"device\": [{\"device_id\": \"0\", \"rank_id\": \"6\", \"numa_id\": \"0\"},\n"
    "                {\"device_id\": \"1\", \"rank_id\": \"7\", \"numa_id\": \"1\"}]}\n"
    "  ]\n"
    "}\n";

START_TEST(test_ranktable)
{
    char err[600] = "";
    hc_decl_t d;
    hc_decl_init(&d);
    ck_assert_msg(hc_decl_parse_json(RANKTABLE, &d, err, sizeof(err)) == HCCL_SUCCESS, "%s", err);
    ck_assert_int_eq(d.nnodes, 4);
    ck_assert_int_eq(d.nracks, 2);
    ck_assert_int_eq(d.nranks, 8);
    ck_assert_uint_eq(d.port, 61000);
    ck_assert_str_eq(d.nodes[0].addr, "10.0.0.1");
    ck_assert_str_eq(d.nodes[2].addr, "10.0.1.1");
    ck_assert_str_eq(d.racks[0].sw, "torA");
    ck_assert_str_eq(d.devs[d.ranks[1].dev].addr, "192.168.0.2");
    ck_assert_str_eq(d.ranks[3].group, "server");
    ck_assert_int_eq(d.ranks[7].numa, 1);
    hc_decl_free(&d);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"{\n \"server_list\": [\n  {\"server_id\": \"a\",,}\n ]\n}\n", "line 3: JSON syntax error"},
        {"{\n \"server_list\": [\n", "the JSON ends too early"},
        {"{\"status\": \"initializing\", \"server_list\": []}", "status is 'initializing'"},
        {"{\"server_list\": []}", "server_list is empty"},
        {"{\"server_list\": [{\"device\": []}]}", "server_list[0].server_id: missing"},
        {"{\"server_list\": [{\"server_id\": \"a\", \"device\": [{\"device_id\": \"0\"}]}]}",
         "server_list[0].device[0].rank_id: the field is missing"},
        {"{\"server_list\": [{\"server_id\": \"a\", \"device\": [{\"device_id\": \"0\", "
         "\"rank_id\": \"x\"}]}]}",
         "server_list[0].device[0].rank_id: 'x' is not a number"},
        {"{\"server_list\": [{\"server_id\": \"a\", \"device\": [{\"device_id\": \"0\", "
         "\"rank_id\": \"1\"}]}]}",
         "rank_id 0 is missing"},
        {"{\"server_list\": [{\"server_id\": \"a\", \"device\": [{\"device_id\": \"0\", "
         "\"rank_id\": \"0\"}, {\"device_id\": \"1\", \"rank_id\": \"0\"}]}]}",
         "server_list[0].device[1].rank_id: rank 0 appears twice"},
        {"{\"server_count\": \"2\", \"server_list\": [{\"server_id\": \"a\", \"device\": "
         "[{\"device_id\": \"0\", \"rank_id\": \"0\"}]}]}",
         "server_count says 2 but server_list has 1"},
        {"{\"server_list\": [{\"server_id\": \"a\", \"host_ip\": \"nohost\", \"device\": []}]}",
         "server_list[0].host_ip: 'nohost' is not an IP address"},
        /* names go into the model and its dump: topology-file names only */
        {"{\"server_list\": [{\"server_id\": \"node a\", \"device\": []}]}",
         "server_list[0].server_id: 'node a' is not a name hcomm takes"},
        {"{\"server_list\": [{\"server_id\": \"a\", \"rack_id\": \"r#1\", \"device\": []}]}",
         "server_list[0].rack_id: 'r#1' is not a name"},
        {"{\"server_list\": [{\"server_id\": \"a\", \"device\": [{\"device_id\": \"0\", "
         "\"rank_id\": \"0\", \"device_ip\": \"x y\"}]}]}",
         "server_list[0].device[0].device_ip: 'x y' is not a name"},
        {"{\"server_list\": [{\"server_id\": \"a\", \"device\": [{\"device_id\": \"0\", "
         "\"rank_id\": \"0\"}]}], \"super_pod_list\": [{\"super_pod_id\": \"p 1\"}]}",
         "super_pod_list[0].super_pod_id: 'podp 1' is not a name"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        hc_decl_init(&d);
        err[0] = '\0';
        int rc = hc_decl_parse_json(bad[i].text, &d, err, sizeof(err));
        hc_decl_free(&d);
        ck_assert_msg(rc == HCCL_E_PARA, "case %zu accepted", i);
        ck_assert_msg(strstr(err, bad[i].want) != NULL, "case %zu: got '%s', want '%s'", i, err,
                      bad[i].want);
    }
}
END_TEST

/* ------------------------------------------------------------ the model */

/* 64 hosts x 8 ranks, hosts round-robin over ranks, 2 NUMA nodes a host */
START_TEST(test_detected_64x8)
{
    const uint32_t H = 64, P = 8, n = H * P;
    cards_t *c = cards_new(n);
    for (uint32_t r = 0; r < n; r++) {
        snprintf(c->host[r], 64, "node%02u", r % H);
        mkblob(c->blob[r], 1000 + r % H, (int)((r / H) % 2), 2);
    }
    hc_config_t *cfg = cfg_new();
    hc_topo_t *t = NULL;
    ck_assert_int_eq(hc_topo_create(n, 5, c->m, cfg, &t), HCCL_SUCCESS);
    ck_assert_uint_eq(t->nnodes, H);
    ck_assert_uint_eq(t->ngroups, 2 * H);
    ck_assert_uint_eq(t->nracks, 1);
    ck_assert_int_eq(t->simulated, 0);
    check_contiguous(t);
    uint32_t cr[HC_TOPO_LEVELS], cb[HC_TOPO_LEVELS];
    hc_topo_ring_crossings(t, t->ring, cr);
    hc_topo_ring_crossings(t, NULL, cb);
    ck_assert_uint_eq(cr[HC_TOPO_NODE], H);      /* the minimum: once into each node */
    ck_assert_uint_eq(cr[HC_TOPO_GROUP], 2 * H);
    ck_assert_uint_eq(cr[HC_TOPO_RACK], 0);
    ck_assert_uint_eq(cb[HC_TOPO_NODE], n);      /* rank order crosses on every hop */
    /* groups: NUMA halves of a node, by rank */
    ck_assert_str_eq(t->groups[0].why, "numa 0");
    /* node00 holds 0, 64, 128, ...; NUMA 0 the even multiples of 64 */
    ck_assert_uint_eq(t->ring[0], 0);
    ck_assert_uint_eq(t->ring[1], 128);
    ck_assert_uint_eq(t->ring[4], 64);
    ck_assert_uint_eq(t->ring[8], 1);
    /* view */
    hc_topo_view_t v;
    hc_topo_view(t, &v);
    ck_assert_ptr_nonnull(v.ring);
    ck_assert(v.flags & HC_TOPO_F_HIER);
    ck_assert(v.flags & HC_TOPO_F_MULTINODE);
    ck_assert_uint_eq(v.grid_rows, H);
    ck_assert_uint_eq(v.grid_cols, P);
    for (uint32_t row = 0; row < H; row++)
        for (uint32_t col = 1; col < P; col++)
            EXPECT(v.node_of[v.grid[row * P + col]] == v.node_of[v.grid[row * P]], "grid row %u", row);
    ck_assert_str_eq(t->level[HC_TOPO_NODE].kind, "shm-xnuma");
    ck_assert_str_eq(t->level[HC_TOPO_RACK].kind, "net");
    hc_topo_destroy(t);
    cfg_free(cfg);
    cards_free(c);
}
END_TEST

static hc_topo_t *sim222(const char *extra_groups, int *rc_out)
{
    cards_t *c = cards_new(8);
    hc_config_t *cfg = cfg_new();
    snprintf(cfg->topo_file, sizeof(cfg->topo_file), "%s", write_tmp("sim.topo", SIM222));
    if (extra_groups)
        cfg_group(cfg, 0, extra_groups);
    hc_topo_t *t = NULL;
    int rc = hc_topo_create(8, 0, c->m, cfg, &t);
    if (rc_out)
        *rc_out = rc;
    cfg_free(cfg);
    cards_free(c);
    return t;
}

START_TEST(test_sim_2x2x2)
{
    int rc;
    hc_topo_t *t = sim222(NULL, &rc);
    ck_assert_int_eq(rc, HCCL_SUCCESS);
    ck_assert_uint_eq(t->nnodes, 2);
    ck_assert_uint_eq(t->ngroups, 4);
    ck_assert_int_eq(t->simulated, 1); /* two declared hosts on one machine */
    ck_assert_str_eq(t->nodes[0].name, "hostA");
    ck_assert_str_eq(t->racks[0].sw, "tor0");
    check_contiguous(t);
    static const uint32_t want[8] = {0, 2, 4, 6, 1, 3, 5, 7};
    for (int p = 0; p < 8; p++)
        ck_assert_uint_eq(t->ring[p], want[p]);
    ck_assert(hc_topo_simulated_pair(t, 0, 1));
    ck_assert(!hc_topo_simulated_pair(t, 0, 2));
    ck_assert_int_eq(hc_topo_pair_level(t, 0, 2), HC_TOPO_GROUP);
    ck_assert_int_eq(hc_topo_pair_level(t, 0, 4), HC_TOPO_NODE);
    ck_assert_int_eq(hc_topo_pair_level(t, 0, 1), HC_TOPO_RACK);
    ck_assert_str_eq(t->level[HC_TOPO_RACK].kind, "tcp");
    char buf[256];
    ck_assert_str_eq(hc_topo_ring_text(t, buf, sizeof(buf)), "0 2 | 4 6 || 1 3 | 5 7");
    hc_topo_destroy(t);
}
END_TEST

/* every rank must be placed, and only ranks of the job */
START_TEST(test_file_errors)
{
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"hcomm-topology 1\nrank 0-6 node=a\n", "places some ranks but not rank 7"},
        {"hcomm-topology 1\nrank 0-7 node=a\nrank 9 node=b\n",
         "line 3: rank 9, but the job has 8 ranks"},
        {"hcomm-topology 1\nrank 0-7 node=a\nlink 0 1\nlevel rack link=carrier-pigeon\n",
         "line 4: level rack: link kind 'carrier-pigeon' is not one hcomm knows"},
        {"hcomm-topology 1\nrank 0-3 node=a\nrank 4-7 node=b\nlink 3 4\n",
         "line 4: link 3 4 joins ranks on different nodes"},
        /* every rank out of range: not ignored */
        {"hcomm-topology 1\nnode a\nrank 100-107 node=a\n",
         "bad.topo line 3: rank 100, but the job has 8 ranks (0..7)"},
        {"hcomm-topology 1\nrank 8 node=a\n", "bad.topo line 2: rank 8, but the job has 8 ranks"},
    };
    const hc_config_t *genv; /* loaded first: loading applies HCCL_DEBUG_FILE */
    hc_env_global(&genv);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        hc_topo_reset();
        cards_t *c = cards_new(8);
        hc_config_t *cfg = cfg_new();
        snprintf(cfg->topo_file, sizeof(cfg->topo_file), "%s", write_tmp("bad.topo", bad[i].text));
        hc_topo_t *t = NULL;
        /* the error names the file and the line: read back from the log */
        char log[600];
        snprintf(log, sizeof(log), "%s/log%zu.txt", tmpdir, i);
        hc_log_configure(HC_LOG_ERROR, HC_SUB_ALL, log);
        int rc = hc_topo_create(8, 0, c->m, cfg, &t);
        hc_log_configure(HC_LOG_WARN, HC_SUB_ALL, "");
        ck_assert_msg(rc == HCCL_E_PARA, "case %zu accepted", i);
        ck_assert_ptr_null(t);
        char got[2048] = "";
        FILE *f = fopen(log, "r");
        ck_assert_ptr_nonnull(f);
        got[fread(got, 1, sizeof(got) - 1, f)] = '\0';
        fclose(f);
        ck_assert_msg(strstr(got, bad[i].want) != NULL, "case %zu: got '%s', want '%s'", i, got,
                      bad[i].want);
        cfg_free(cfg);
        cards_free(c);
    }
}
END_TEST

START_TEST(test_groups_override)
{
    /* one host, 8 ranks; HCCL_GROUP_n splits it */
    cards_t *c = cards_new(8);
    hc_config_t *cfg = cfg_new();
    cfg_group(cfg, 0, "0,1,2,3");
    cfg_group(cfg, 1, "4-7");
    hc_topo_t *t = NULL;
    ck_assert_int_eq(hc_topo_create(8, 0, c->m, cfg, &t), HCCL_SUCCESS);
    ck_assert_uint_eq(t->ngroups, 2);
    ck_assert_uint_eq(t->nnodes, 1);
    ck_assert_str_eq(t->groups[0].why, "HCCL_GROUP_0");
    check_contiguous(t);
    hc_topo_view_t v;
    hc_topo_view(t, &v);
    ck_assert(v.flags & HC_TOPO_F_HIER);
    ck_assert(!(v.flags & HC_TOPO_F_MULTINODE));
    ck_assert_uint_eq(v.grid_rows, 2);
    hc_topo_destroy(t);
    /* interleaved groups reorder the ring */
    cfg_group(cfg, 0, "0,2,4,6");
    cfg_group(cfg, 1, "1,3,5,7");
    ck_assert_int_eq(hc_topo_create(8, 0, c->m, cfg, &t), HCCL_SUCCESS);
    char buf[128];
    ck_assert_str_eq(hc_topo_ring_text(t, buf, sizeof(buf)), "0 2 4 6 | 1 3 5 7");
    hc_topo_destroy(t);
    /* errors */
    static const struct {
        uint32_t g;
        const char *v;
    } bad[] = {{1, "0,9"}, {1, "3,5"}, {1, "x"}, {1, "1,1"}, {1, ""}, {1, "2-1"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        hc_topo_reset();
        cfg_group(cfg, 0, "0,1,2,3");
        cfg_group(cfg, bad[i].g, bad[i].v);
        t = NULL;
        ck_assert_msg(hc_topo_create(8, 0, c->m, cfg, &t) == HCCL_E_PARA, "case %zu accepted", i);
        ck_assert_ptr_null(t);
    }
    /* a group across two hosts */
    hc_topo_reset();
    for (int r = 4; r < 8; r++)
        snprintf(c->host[r], 64, "other");
    cfg_group(cfg, 0, "3,4");
    cfg_group(cfg, 1, "0");
    ck_assert_int_eq(hc_topo_create(8, 0, c->m, cfg, &t), HCCL_E_PARA);
    cfg_free(cfg);
    cards_free(c);
}
END_TEST

START_TEST(test_nvlink_map)
{
    cards_t *c = cards_new(8);
    for (uint32_t r = 0; r < 8; r++)
        mkblob(c->blob[r], 42, (int)(r / 4), 2); /* bound: NUMA 0 = 0-3, 1 = 4-7 */
    hc_config_t *cfg = cfg_new();
    hc_topo_t *t = NULL;
    ck_assert_int_eq(hc_topo_create(8, 0, c->m, cfg, &t), HCCL_SUCCESS);
    ck_assert_uint_eq(t->ngroups, 2); /* by NUMA */
    ck_assert_str_eq(t->level[HC_TOPO_GROUP].kind, "shm");
    hc_topo_destroy(t);
    /* a chain 0-2-1-3 and a pair 5-6: groups follow links, the ring the chain */
    snprintf(cfg->nvlink_map, sizeof(cfg->nvlink_map), "0:2,2:1,1:3,5:6");
    ck_assert_int_eq(hc_topo_create(8, 0, c->m, cfg, &t), HCCL_SUCCESS);
    char buf[128];
    ck_assert_str_eq(hc_topo_ring_text(t, buf, sizeof(buf)), "0 2 1 3 | 4 7 | 5 6");
    ck_assert_str_eq(t->groups[0].why, "nvlink");
    ck_assert_str_eq(t->level[HC_TOPO_GROUP].kind, "nvlink");
    ck_assert_uint_eq(t->nlinks, 4);
    hc_topo_destroy(t);
    static const char *bad[] = {"0-1", "0:0", "0:1,", "a:b", "0:99"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        hc_topo_reset();
        snprintf(cfg->nvlink_map, sizeof(cfg->nvlink_map), "%s", bad[i]);
        t = NULL;
        ck_assert_msg(hc_topo_create(8, 0, c->m, cfg, &t) == HCCL_E_PARA, "'%s' accepted", bad[i]);
    }
    cfg_free(cfg);
    cards_free(c);
}
END_TEST

/* overrides that differ between ranks fail everywhere */
START_TEST(test_override_mismatch)
{
    cards_t *c = cards_new(4);
    hc_config_t *cfg = cfg_new();
    hc_topo_facts_t f;
    memcpy(&f, c->blob[2], sizeof(f));
    f.ovr_hash = 7;
    memcpy(c->blob[2], &f, sizeof(f));
    hc_topo_t *t = NULL;
    ck_assert_int_eq(hc_topo_create(4, 0, c->m, cfg, &t), HCCL_E_PARA);
    f.ovr_hash = 0;
    f.ovr_errno = 2;
    memcpy(c->blob[2], &f, sizeof(f));
    ck_assert_int_eq(hc_topo_create(4, 3, c->m, cfg, &t), HCCL_E_PARA);
    ck_assert_ptr_null(t);
    /* the hash of the local overrides changes with them */
    uint8_t b1[512], b2[512];
    hc_topo_local_facts(cfg, b1, sizeof(b1));
    cfg_group(cfg, 0, "0,1");
    hc_topo_local_facts(cfg, b2, sizeof(b2));
    hc_topo_facts_t f1, f2;
    ck_assert(hc_facts_decode(b1, &f1) && hc_facts_decode(b2, &f2));
    ck_assert(f1.ovr_hash != f2.ovr_hash);
    ck_assert(f1.phys == f2.phys);
    snprintf(cfg->topo_file, sizeof(cfg->topo_file), "/nonexistent/x.topo");
    hc_topo_local_facts(cfg, b2, sizeof(b2));
    ck_assert(hc_facts_decode(b2, &f2));
    ck_assert_int_ne(f2.ovr_errno, 0);
    cfg_free(cfg);
    cards_free(c);
}
END_TEST

/* what is dumped reads back into the same model */
START_TEST(test_dump_roundtrip)
{
    int rc;
    hc_topo_t *t = sim222(NULL, &rc);
    ck_assert_int_eq(rc, HCCL_SUCCESS);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_int_eq(hc_topo_write(t, f), HCCL_SUCCESS);
    fclose(f);
    hc_topo_reset();
    cards_t *c = cards_new(8);
    hc_config_t *cfg = cfg_new();
    snprintf(cfg->topo_file, sizeof(cfg->topo_file), "%s", write_tmp("dump.topo", text));
    hc_topo_t *t2 = NULL;
    ck_assert_msg(hc_topo_create(8, 0, c->m, cfg, &t2) == HCCL_SUCCESS, "dump does not parse:\n%s",
                  text);
    ck_assert_uint_eq(t2->ngroups, t->ngroups);
    ck_assert_uint_eq(t2->nnodes, t->nnodes);
    for (uint32_t p = 0; p < 8; p++)
        ck_assert_uint_eq(t2->ring[p], t->ring[p]);
    for (int lv = 0; lv < HC_TOPO_LEVELS; lv++) {
        ck_assert_str_eq(t2->level[lv].kind, t->level[lv].kind);
        ck_assert(t2->level[lv].bw == t->level[lv].bw);
    }
    hc_topo_destroy(t2);
    /* the report mentions every rank and the ring */
    char *rep = NULL;
    f = open_memstream(&rep, &len);
    hc_topo_print(t, f);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(rep, "0 2 | 4 6 || 1 3 | 5 7"));
    ck_assert_ptr_nonnull(strstr(rep, "node hostB"));
    free(rep);
    free(text);
    hc_topo_destroy(t);
    cfg_free(cfg);
    cards_free(c);
}
END_TEST

/* the 2-rack, 4-node example as a file and as a rank table */
START_TEST(test_racks)
{
    cards_t *c = cards_new(16);
    hc_config_t *cfg = cfg_new();
    snprintf(cfg->topo_file, sizeof(cfg->topo_file), "%s", write_tmp("racks.topo", RACKS));
    hc_topo_t *t = NULL;
    ck_assert_int_eq(hc_topo_create(16, 0, c->m, cfg, &t), HCCL_SUCCESS);
    ck_assert_uint_eq(t->nracks, 2);
    ck_assert_uint_eq(t->nnodes, 4);
    /* n0: gpu0-gpu1 linked {0,1}, NUMA 1 {2,3}; n1 unbound {4-7}; n2 label; n3 {12-15} */
    ck_assert_uint_eq(t->ngroups, 5);
    ck_assert_str_eq(t->groups[0].why, "nvlink");
    check_contiguous(t);
    uint32_t cr[HC_TOPO_LEVELS];
    hc_topo_ring_crossings(t, t->ring, cr);
    ck_assert_uint_eq(cr[HC_TOPO_RACK], 2);
    ck_assert_uint_eq(cr[HC_TOPO_NODE], 4);
    ck_assert(t->level[HC_TOPO_CLUSTER].bw == 6.25e9);
    hc_topo_destroy(t);
    cards_free(c);
    /* rank table */
    hc_topo_reset();
    c = cards_new(8);
    snprintf(cfg->topo_file, sizeof(cfg->topo_file), "%s", write_tmp("rt.json", RANKTABLE));
    ck_assert_int_eq(hc_topo_create(8, 0, c->m, cfg, &t), HCCL_SUCCESS);
    ck_assert_uint_eq(t->nracks, 2);
    ck_assert_uint_eq(t->nnodes, 4);
    ck_assert_uint_eq(t->ngroups, 5); /* one per server, the last split by numa_id */
    ck_assert_str_eq(t->nodes[2].addr, "10.0.1.1");
    hc_topo_destroy(t);
    /* a rank table of 8 ranks for a communicator of 4 */
    hc_topo_reset();
    cards_free(c);
    c = cards_new(4);
    ck_assert_int_eq(hc_topo_create(4, 0, c->m, cfg, &t), HCCL_E_PARA);
    cfg_free(cfg);
    cards_free(c);
}
END_TEST

/* a split: world ranks 1,3,5,7 of the simulated cluster */
START_TEST(test_split_members)
{
    int rc;
    hc_topo_t *t = sim222(NULL, &rc); /* the "world": the first communicator */
    ck_assert_int_eq(rc, HCCL_SUCCESS);
    hc_topo_destroy(t);
    cards_t *c = cards_new(4);
    for (uint32_t i = 0; i < 4; i++)
        c->m[i].world = 2 * i + 1;
    hc_config_t *cfg = cfg_new();
    snprintf(cfg->topo_file, sizeof(cfg->topo_file), "%s", write_tmp("sim.topo", SIM222));
    ck_assert_int_eq(hc_topo_create(4, 1, c->m, cfg, &t), HCCL_SUCCESS);
    ck_assert_uint_eq(t->nnodes, 1); /* all on hostB */
    ck_assert_uint_eq(t->ngroups, 2);
    ck_assert_uint_eq(t->r[2].world, 5);
    ck_assert_int_eq(t->r[2].numa, 1);
    hc_topo_destroy(t);
    cfg_free(cfg);
    cards_free(c);
}
END_TEST

/* ------------------------------------------------------------ running schedules */

static int32_t val(uint32_t r, uint64_t i)
{
    return (int32_t)((r + 1) * 131u + (uint32_t)i * 7u + (uint32_t)(i * i % 97));
}

typedef struct {
    hc_sched_t s;
    int32_t *send, *recv;
    void *sendbuf, *recvbuf, *tmp;
} rk_t;

/* Run one collective with algorithm al over view v; check every element. */
static void run_coll(hc_coll_t coll, const hc_algo_t *al, const hc_topo_view_t *v, uint32_t n,
                     uint64_t count, int in_place, uint32_t root, uint64_t chunk, const char *what)
{
    rk_t *rk = calloc(n, sizeof(rk_t));
    hc_exec_t *ex = calloc(n, sizeof(hc_exec_t));
    hc_loop_t *lp = hc_loop_create(n);
    ck_assert_ptr_nonnull(lp);
    const uint64_t big = (uint64_t)n * count;
    for (uint32_t r = 0; r < n; r++) {
        rk_t *k = &rk[r];
        switch (coll) {
        case HC_COLL_ALLREDUCE:
            k->recv = calloc(count + 1, 4);
            k->send = in_place ? k->recv : calloc(count + 1, 4);
            for (uint64_t i = 0; i < count; i++)
                k->send[i] = val(r, i);
            break;
        case HC_COLL_REDUCESCATTER:
            k->send = calloc(big + 1, 4);
            k->recv = in_place ? k->send + (uint64_t)r * count : calloc(count + 1, 4);
            for (uint64_t i = 0; i < big; i++)
                k->send[i] = val(r, i);
            break;
        case HC_COLL_ALLGATHER:
            k->recv = calloc(big + 1, 4);
            k->send = in_place ? k->recv + (uint64_t)r * count : calloc(count + 1, 4);
            for (uint64_t i = 0; i < count; i++)
                k->send[i] = val(r, i);
            break;
        case HC_COLL_BROADCAST:
            k->recv = calloc(count + 1, 4);
            k->send = k->recv;
            for (uint64_t i = 0; i < count; i++)
                k->recv[i] = r == root ? val(r, i) : -1;
            break;
        default:
            ck_abort_msg("unsupported");
        }
        hc_coll_args_t a = {.coll = coll, .rank = r, .nranks = n, .root = root, .count = count,
                            .esize = 4, .dtype = HCCL_DATA_TYPE_INT32, .op = HCCL_REDUCE_SUM,
                            .in_place = in_place, .chunk_bytes = chunk, .topo = v};
        hc_sched_init(&k->s, 4);
        int rc = al->build(&a, &k->s);
        EXPECT(rc == HCCL_SUCCESS && k->s.err == 0, "%s: rank %u build failed: %d", what, r, rc);
        k->tmp = k->s.tmp_bytes ? malloc(k->s.tmp_bytes) : NULL;
        void *bufs[HC_NBUFS] = {k->send, k->recv, k->tmp};
        rc = hc_exec_start(&ex[r], &k->s, bufs, &hc_loop_ops, hc_loop_tctx(lp, r), r, 1, 0,
                           HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, NULL);
        EXPECT(rc == HCCL_SUCCESS, "%s: hc_exec_start failed", what);
    }
    char err[4096] = "";
    int rc = hc_loop_run(lp, ex, err, sizeof(err));
    EXPECT(rc == HCCL_SUCCESS, "%s: run failed (%d): %s", what, rc, err);
    /* check */
    for (uint32_t r = 0; r < n; r++) {
        rk_t *k = &rk[r];
        switch (coll) {
        case HC_COLL_ALLREDUCE:
            for (uint64_t i = 0; i < count; i++) {
                int32_t want = 0;
                for (uint32_t q = 0; q < n; q++)
                    want = (int32_t)((uint32_t)want + (uint32_t)val(q, i));
                EXPECT(k->recv[i] == want, "%s: rank %u [%llu] = %d, want %d", what, r,
                              (unsigned long long)i, k->recv[i], want);
            }
            break;
        case HC_COLL_REDUCESCATTER:
            for (uint64_t i = 0; i < count; i++) {
                int32_t want = 0;
                for (uint32_t q = 0; q < n; q++)
                    want = (int32_t)((uint32_t)want + (uint32_t)val(q, (uint64_t)r * count + i));
                EXPECT(k->recv[i] == want, "%s: rank %u [%llu] = %d, want %d", what, r,
                              (unsigned long long)i, k->recv[i], want);
            }
            break;
        case HC_COLL_ALLGATHER:
            for (uint32_t q = 0; q < n; q++)
                for (uint64_t i = 0; i < count; i++)
                    EXPECT(k->recv[(uint64_t)q * count + i] == val(q, i),
                                  "%s: rank %u block %u [%llu] = %d, want %d", what, r, q,
                                  (unsigned long long)i, k->recv[(uint64_t)q * count + i],
                                  val(q, i));
            break;
        case HC_COLL_BROADCAST:
            for (uint64_t i = 0; i < count; i++)
                EXPECT(k->recv[i] == val(root, i), "%s: rank %u [%llu] = %d, want %d",
                              what, r, (unsigned long long)i, k->recv[i], val(root, i));
            break;
        default:
            break;
        }
    }
    hc_loop_destroy(lp);
    for (uint32_t r = 0; r < n; r++) {
        rk_t *k = &rk[r];
        hc_exec_fini(&ex[r]);
        hc_sched_free(&k->s);
        free(k->tmp);
        if (coll == HC_COLL_ALLREDUCE || coll == HC_COLL_BROADCAST) {
            if (k->send != k->recv)
                free(k->send);
            free(k->recv);
        } else if (coll == HC_COLL_REDUCESCATTER) {
            if (!in_place)
                free(k->recv);
            free(k->send);
        } else {
            if (!in_place)
                free(k->send);
            free(k->recv);
        }
    }
    free(rk);
    free(ex);
}

/* A view from HCCL_GROUP-style group sizes on one node, or nodes. */
static hc_topo_t *model_units(const uint32_t *sizes, uint32_t nu, int as_nodes, int interleave)
{
    uint32_t n = 0;
    for (uint32_t u = 0; u < nu; u++)
        n += sizes[u];
    cards_t *c = cards_new(n);
    hc_config_t *cfg = cfg_new();
    /* unit of each rank: interleaved (round robin over units with room) or blocked */
    uint32_t *unit = calloc(n, sizeof(uint32_t)), *left = calloc(nu, sizeof(uint32_t));
    memcpy(left, sizes, nu * sizeof(uint32_t));
    uint32_t r = 0, u = 0;
    while (r < n) {
        if (interleave) {
            while (left[u % nu] == 0)
                u++;
            unit[r++] = u % nu;
            left[u % nu]--;
            u++;
        } else {
            while (left[u] == 0)
                u++;
            unit[r++] = u;
            left[u]--;
        }
    }
    char lists[64][1024];
    memset(lists, 0, sizeof(lists));
    for (r = 0; r < n; r++) {
        if (as_nodes)
            snprintf(c->host[r], 64, "host%u", unit[r]);
        size_t l = strlen(lists[unit[r]]);
        snprintf(lists[unit[r]] + l, sizeof(lists[0]) - l, "%s%u", l ? "," : "", r);
    }
    if (!as_nodes)
        for (u = 0; u < nu; u++)
            cfg_group(cfg, u, lists[u]);
    hc_topo_t *t = NULL;
    hc_topo_reset();
    ck_assert_int_eq(hc_topo_create(n, 0, c->m, cfg, &t), HCCL_SUCCESS);
    free(unit);
    free(left);
    cfg_free(cfg);
    cards_free(c);
    return t;
}

static void run_all_hier(const hc_topo_view_t *v, uint32_t n, const char *name)
{
    static const hc_coll_t colls[] = {HC_COLL_ALLREDUCE, HC_COLL_REDUCESCATTER, HC_COLL_ALLGATHER,
                                      HC_COLL_BROADCAST};
    const uint64_t counts[] = {1, 3, (uint64_t)n - 1 ? (uint64_t)n - 1 : 1, (uint64_t)n + 3, 1000};
    const uint64_t chunks[] = {0, 4, 12};
    char what[256];
    for (size_t ci = 0; ci < 4; ci++) {
        const hc_algo_t *al = hc_coll_find_algo(colls[ci], "HIER");
        ck_assert_ptr_nonnull(al);
        for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++)
            for (size_t ch = 0; ch < 3; ch++)
                for (int ip = 0; ip < (colls[ci] == HC_COLL_BROADCAST ? 1 : 2); ip++) {
                    uint32_t root = colls[ci] == HC_COLL_BROADCAST ? (uint32_t)(k * 5 + ch) % n : 0;
                    snprintf(what, sizeof(what), "%s %s count %llu chunk %llu %s root %u",
                             hc_coll_name(colls[ci]), name, (unsigned long long)counts[k],
                             (unsigned long long)chunks[ch], ip ? "in place" : "", root);
                    run_coll(colls[ci], al, v, n, counts[k], ip, root, chunks[ch], what);
                }
    }
}

START_TEST(test_hier_flat)
{
    /* no topology at all: the HIER builders degenerate into rings / trees */
    for (uint32_t n = 1; n <= 9; n++) {
        hc_topo_view_t v;
        memset(&v, 0, sizeof(v));
        char name[32];
        snprintf(name, sizeof(name), "flat n=%u", n);
        run_all_hier(&v, n, name);
    }
}
END_TEST

START_TEST(test_hier_units)
{
    static const struct {
        uint32_t sizes[6], nu;
        int nodes, inter;
    } cases[] = {
        {{4, 4}, 2, 1, 1},       {{2, 2, 2, 2}, 4, 1, 0}, {{4, 4}, 2, 0, 1},
        {{3, 5}, 2, 1, 1},       {{1, 4, 2}, 3, 1, 0},    {{2, 3, 1, 2}, 4, 0, 1},
        {{1, 1, 1}, 3, 1, 0},    {{5, 2}, 2, 0, 0},       {{2, 2, 2}, 3, 1, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hc_topo_t *t = model_units(cases[i].sizes, cases[i].nu, cases[i].nodes, cases[i].inter);
        hc_topo_view_t v;
        hc_topo_view(t, &v);
        char name[64];
        snprintf(name, sizeof(name), "units case %zu", i);
        run_all_hier(&v, t->nranks, name);
        hc_topo_destroy(t);
    }
    /* the simulated 2x2x2 (nodes of two NUMA groups: 3 levels) */
    int rc;
    hc_topo_t *t = sim222(NULL, &rc);
    hc_topo_view_t v;
    hc_topo_view(t, &v);
    run_all_hier(&v, 8, "sim 2x2x2");
    hc_topo_destroy(t);
}
END_TEST

/* Large declarations: a rank table of 100000 ranks (12500 servers of 8)
 * and a topology file of 40000 nodes, each with a device, parse into the
 * right places, and a name given twice is still found at that size. */
static char *big_ranktable(uint32_t servers, const char *extra)
{
    size_t cap = (size_t)servers * 8 * 64 + 4096, o = 0;
    char *t = malloc(cap);
    ck_assert_ptr_nonnull(t);
    o += (size_t)snprintf(t + o, cap - o, "{\"version\": \"1.0\", \"server_list\": [\n");
    for (uint32_t s = 0; s < servers; s++) {
        o += (size_t)snprintf(t + o, cap - o, "%s{\"server_id\": \"10.%u.%u.%u\", \"device\": [",
                              s ? ",\n" : "", s >> 16, (s >> 8) & 255, s & 255);
        for (uint32_t k = 0; k < 8; k++)
            o += (size_t)snprintf(t + o, cap - o, "%s{\"device_id\": %u, \"rank_id\": %u}",
                                  k ? ", " : "", k, s * 8 + k);
        o += (size_t)snprintf(t + o, cap - o, "]}");
    }
    snprintf(t + o, cap - o, "%s]}\n", extra);
    return t;
}

START_TEST(test_large_decl)
{
    const uint32_t S = 12500;
    char err[600] = "";
    hc_decl_t d;
    hc_decl_init(&d);
    char *text = big_ranktable(S, "");
    ck_assert_msg(hc_decl_parse_json(text, &d, err, sizeof(err)) == HCCL_SUCCESS, "%s", err);
    ck_assert_int_eq(d.nnodes, (int)S);
    ck_assert_int_eq(d.ndevs, (int)S * 8);
    ck_assert_int_eq(d.nranks, (int)S * 8);
    for (uint32_t r = 0; r < S * 8; r += 997) {
        char want[32];
        snprintf(want, sizeof(want), "10.%u.%u.%u", (r / 8) >> 16, ((r / 8) >> 8) & 255,
                 (r / 8) & 255);
        ck_assert_str_eq(d.nodes[d.ranks[r].node].name, want);
        ck_assert_int_eq(d.devs[d.ranks[r].dev].node, d.ranks[r].node);
        ck_assert_int_eq(d.devs[d.ranks[r].dev].name[3] - '0', (int)(r % 8));
        ck_assert_int_eq(hc_decl_find_node(&d, want), d.ranks[r].node);
    }
    hc_decl_free(&d);
    free(text);
    /* the first server again, at the end */
    text = big_ranktable(S, ",\n{\"server_id\": \"10.0.0.0\", \"device\": []}");
    hc_decl_init(&d);
    ck_assert_int_eq(hc_decl_parse_json(text, &d, err, sizeof(err)), HCCL_E_PARA);
    ck_assert_msg(strstr(err, "server_list[12500].server_id: '10.0.0.0' appears twice"), "%s", err);
    hc_decl_free(&d);
    free(text);

    const uint32_t N = 40000;
    size_t cap = (size_t)N * 64 + 256, o = 0;
    text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    o += (size_t)snprintf(text, cap, "hcomm-topology 1\n");
    for (uint32_t i = 0; i < N; i++)
        o += (size_t)snprintf(text + o, cap - o, "node n%u rack=r%u\ndevice n%u/gpu0\n", i,
                              i / 40, i);
    o += (size_t)snprintf(text + o, cap - o, "rank 0 node=n%u device=gpu0\n", N - 1);
    hc_decl_init(&d);
    ck_assert_msg(hc_decl_parse_text(text, &d, err, sizeof(err)) == HCCL_SUCCESS, "%s", err);
    ck_assert_int_eq(d.nnodes, (int)N);
    ck_assert_int_eq(d.ndevs, (int)N);
    ck_assert_int_eq(d.nracks, (int)N / 40);
    ck_assert_int_eq(d.ranks[0].node, (int)N - 1);
    ck_assert_int_eq(d.ranks[0].dev, (int)N - 1);
    ck_assert_int_eq(d.nodes[N - 1].rack, (int)(N - 1) / 40);
    hc_decl_free(&d);
    /* a node declared twice */
    snprintf(text + o, cap - o, "node n%u\n", N / 2);
    hc_decl_init(&d);
    ck_assert_int_eq(hc_decl_parse_text(text, &d, err, sizeof(err)), HCCL_E_PARA);
    ck_assert_msg(strstr(err, "already declared on line"), "%s", err);
    hc_decl_free(&d);
    free(text);
}
END_TEST

/* 64 nodes x 8, 2 racks: construction and a run of every HIER collective */
START_TEST(test_hier_large)
{
    const uint32_t H = 64, P = 8, n = H * P;
    cards_t *c = cards_new(n);
    char text[8192] = "hcomm-topology 1\nrack ra\nrack rb\n";
    for (uint32_t h = 0; h < H; h++) {
        size_t l = strlen(text);
        snprintf(text + l, sizeof(text) - l, "node n%u rack=%s\n", h, h < H / 2 ? "ra" : "rb");
    }
    for (uint32_t r = 0; r < n; r++) {
        snprintf(c->host[r], 64, "n%u", r / P);
        mkblob(c->blob[r], 1000 + r / P, (int)(r % P) / 4, 2);
    }
    hc_config_t *cfg = cfg_new();
    snprintf(cfg->topo_file, sizeof(cfg->topo_file), "%s", write_tmp("big.topo", text));
    hc_topo_t *t = NULL;
    ck_assert_int_eq(hc_topo_create(n, 0, c->m, cfg, &t), HCCL_SUCCESS);
    ck_assert_uint_eq(t->nracks, 2);
    ck_assert_uint_eq(t->nnodes, H);
    ck_assert_uint_eq(t->ngroups, 2 * H);
    check_contiguous(t);
    uint32_t cr[HC_TOPO_LEVELS];
    hc_topo_ring_crossings(t, t->ring, cr);
    ck_assert_uint_eq(cr[HC_TOPO_RACK], 2);
    ck_assert_uint_eq(cr[HC_TOPO_NODE], H);
    hc_topo_view_t v;
    hc_topo_view(t, &v);
    ck_assert_uint_eq(v.grid_rows, H);
    ck_assert_uint_eq(v.grid_cols, P);
    run_coll(HC_COLL_ALLREDUCE, hc_coll_find_algo(HC_COLL_ALLREDUCE, "HIER"), &v, n, n + 5, 0, 0,
             0, "allreduce HIER 64x8");
    run_coll(HC_COLL_ALLREDUCE, hc_coll_find_algo(HC_COLL_ALLREDUCE, "HIER"), &v, n, n - 3, 1, 0,
             0, "allreduce HIER 64x8 in place");
    run_coll(HC_COLL_REDUCESCATTER, hc_coll_find_algo(HC_COLL_REDUCESCATTER, "HIER"), &v, n, 2, 0,
             0, 0, "reducescatter HIER 64x8");
    run_coll(HC_COLL_ALLGATHER, hc_coll_find_algo(HC_COLL_ALLGATHER, "HIER"), &v, n, 2, 1, 0, 0,
             "allgather HIER 64x8");
    run_coll(HC_COLL_BROADCAST, hc_coll_find_algo(HC_COLL_BROADCAST, "HIER"), &v, n, 1000, 0, 77,
             400, "broadcast HIER 64x8");
    hc_topo_destroy(t);
    cfg_free(cfg);
    cards_free(c);
}
END_TEST

/* ------------------------------------------------------------ bytes and trees */

static uint64_t xnode_total(const hc_topo_t *t, const hc_topo_view_t *v, hc_coll_t coll,
                            const char *algo, uint64_t count, uint32_t root)
{
    const hc_algo_t *al = hc_coll_find_algo(coll, algo);
    ck_assert_ptr_nonnull(al);
    hc_topo_view_t machine; /* where the bytes go, whatever view built the schedule */
    hc_topo_view(t, &machine);
    uint64_t sum = 0;
    for (uint32_t r = 0; r < t->nranks; r++) {
        hc_coll_args_t a = {.coll = coll, .rank = r, .nranks = t->nranks, .root = root,
                            .count = count, .esize = 4, .dtype = HCCL_DATA_TYPE_FP32,
                            .op = HCCL_REDUCE_SUM, .topo = v};
        hc_sched_t s;
        hc_sched_init(&s, 4);
        ck_assert_int_eq(al->build(&a, &s), HCCL_SUCCESS);
        sum += hc_sched_xnode_bytes(&s, &machine, r, t->nranks);
        hc_sched_free(&s);
    }
    return sum;
}

START_TEST(test_xnode_bytes)
{
    int rc;
    hc_topo_t *t = sim222(NULL, &rc);
    ck_assert_int_eq(rc, HCCL_SUCCESS);
    hc_topo_view_t v, blind;
    hc_topo_view(t, &v);
    memset(&blind, 0, sizeof(blind)); /* rank order, no topology */
    const uint64_t N = 1 << 16;       /* elements */
    uint64_t hier = xnode_total(t, &v, HC_COLL_ALLREDUCE, "HIER", N, 0);
    uint64_t ring = xnode_total(t, &v, HC_COLL_ALLREDUCE, "RING", N, 0);
    uint64_t flat = xnode_total(t, &blind, HC_COLL_ALLREDUCE, "RING", N, 0);
    /* 2 nodes: HIER moves 2 (G-1) N = 2N bytes' worth across; the ordered
     * ring crosses twice per step: 2 * 2 (n-1) N/n; the blind ring crosses
     * on each of its n links every step: n * 2 (n-1) N/n */
    ck_assert_uint_eq(hier, 2 * N * 4);
    ck_assert_uint_eq(ring, 2 * 2 * 7 * N / 8 * 4);
    ck_assert_uint_eq(flat, 8 * 2 * 7 * N / 8 * 4);
    ck_assert_uint_lt(hier, ring);
    ck_assert_uint_lt(ring, flat);
    /* the others: HIER against the flat default */
    ck_assert_uint_lt(xnode_total(t, &v, HC_COLL_ALLGATHER, "HIER", N, 0),
                      xnode_total(t, &blind, HC_COLL_ALLGATHER, "RING", N, 0));
    ck_assert_uint_lt(xnode_total(t, &v, HC_COLL_REDUCESCATTER, "HIER", N, 0),
                      xnode_total(t, &blind, HC_COLL_REDUCESCATTER, "RING", N, 0));
    ck_assert_uint_eq(xnode_total(t, &v, HC_COLL_BROADCAST, "HIER", N, 3), N * 4);
    ck_assert_uint_lt(xnode_total(t, &v, HC_COLL_BROADCAST, "HIER", N, 3),
                      xnode_total(t, &blind, HC_COLL_BROADCAST, "BINOMIAL", N, 3));
    hc_topo_destroy(t);
}
END_TEST

/* 2 racks x 2 nodes x 2 groups x 2 ranks: the broadcast tree enters every
 * rack, node and group once */
START_TEST(test_bcast_tree)
{
    static const char *text = "hcomm-topology 1\nnode a rack=r0\nnode b rack=r0\nnode c rack=r1\n"
                              "node d rack=r1\nrank 0-1 node=a numa=0\nrank 2-3 node=a numa=1\n"
                              "rank 4-5 node=b numa=0\nrank 6-7 node=b numa=1\n"
                              "rank 8-9 node=c numa=0\nrank 10-11 node=c numa=1\n"
                              "rank 12-13 node=d numa=0\nrank 14-15 node=d numa=1\n";
    cards_t *c = cards_new(16);
    hc_config_t *cfg = cfg_new();
    snprintf(cfg->topo_file, sizeof(cfg->topo_file), "%s", write_tmp("tree.topo", text));
    hc_topo_t *t = NULL;
    ck_assert_int_eq(hc_topo_create(16, 0, c->m, cfg, &t), HCCL_SUCCESS);
    hc_topo_view_t v;
    hc_topo_view(t, &v);
    const hc_algo_t *al = hc_coll_find_algo(HC_COLL_BROADCAST, "HIER");
    for (uint32_t root = 0; root < 16; root += 5) {
        uint32_t parents[16], cross[HC_TOPO_LEVELS] = {0};
        for (uint32_t r = 0; r < 16; r++) {
            hc_coll_args_t a = {.coll = HC_COLL_BROADCAST, .rank = r, .nranks = 16, .root = root,
                                .count = 10, .esize = 4, .topo = &v};
            hc_sched_t s;
            hc_sched_init(&s, 4);
            ck_assert_int_eq(al->build(&a, &s), HCCL_SUCCESS);
            parents[r] = UINT32_MAX;
            for (uint32_t i = 0; i < s.nsteps; i++) {
                if (s.steps[i].kind == HC_STEP_RECV) {
                    ck_assert_uint_eq(parents[r], UINT32_MAX); /* one parent */
                    parents[r] = s.steps[i].peer;
                }
                if (s.steps[i].kind == HC_STEP_SEND) {
                    int lv = hc_topo_pair_level(t, r, s.steps[i].peer);
                    for (int k = 0; k < lv; k++)
                        cross[k]++;
                }
            }
            hc_sched_free(&s);
        }
        for (uint32_t r = 0; r < 16; r++)
            ck_assert(r == root ? parents[r] == UINT32_MAX : parents[r] != UINT32_MAX);
        ck_assert_uint_eq(cross[HC_TOPO_RACK], 1);  /* into the other rack */
        ck_assert_uint_eq(cross[HC_TOPO_NODE], 3);  /* into the 3 other nodes */
        ck_assert_uint_eq(cross[HC_TOPO_GROUP], 7); /* into the 7 other groups */
    }
    hc_topo_destroy(t);
    cfg_free(cfg);
    cards_free(c);
}
END_TEST

/* HIER says why not on a flat topology, and yes otherwise */
START_TEST(test_usable)
{
    hc_topo_view_t flat;
    memset(&flat, 0, sizeof(flat));
    hc_coll_args_t a = {.coll = HC_COLL_ALLREDUCE, .rank = 1, .nranks = 4, .count = 4, .esize = 4,
                        .topo = &flat};
    const hc_algo_t *al = hc_coll_find_algo(HC_COLL_ALLREDUCE, "HIER");
    ck_assert_ptr_nonnull(al->usable);
    ck_assert_ptr_nonnull(strstr(al->usable(&a), "flat topology"));
    int rc;
    hc_topo_t *t = sim222(NULL, &rc);
    hc_topo_view_t v;
    hc_topo_view(t, &v);
    a.nranks = 8;
    a.topo = &v;
    ck_assert_ptr_null(al->usable(&a));
    hc_topo_destroy(t);
}
END_TEST


/* The stages pipeline: with several chunks, the first send across nodes
 * depends on the intra-node stage of its own chunk only, not on all of it. */
START_TEST(test_pipelined)
{
    int rc;
    hc_topo_t *t = sim222(NULL, &rc);
    ck_assert_int_eq(rc, HCCL_SUCCESS);
    hc_topo_view_t v;
    hc_topo_view(t, &v);
    const hc_algo_t *al = hc_coll_find_algo(HC_COLL_ALLREDUCE, "HIER");
    hc_coll_args_t a = {.coll = HC_COLL_ALLREDUCE, .rank = 0, .nranks = 8, .count = 8 * 4096,
                        .esize = 4, .dtype = HCCL_DATA_TYPE_FP32, .op = HCCL_REDUCE_SUM,
                        .chunk_bytes = 1024, .topo = &v};
    hc_sched_t s;
    hc_sched_init(&s, 4);
    ck_assert_int_eq(al->build(&a, &s), HCCL_SUCCESS);
    int32_t first = -1;
    uint32_t intra_recvs = 0;
    for (uint32_t i = 0; i < s.nsteps; i++) {
        const hc_step_t *st = &s.steps[i];
        if (st->kind == HC_STEP_SEND && t->node_of[st->peer] != t->node_of[0] && first < 0)
            first = (int32_t)i;
        if (st->kind == HC_STEP_RECV && t->node_of[st->peer] == t->node_of[0] && first < 0)
            intra_recvs++;
    }
    ck_assert_int_ge(first, 0);
    /* the dependency closure of that send */
    uint8_t *in = calloc(s.nsteps, 1);
    uint32_t *stack = malloc(s.nsteps * sizeof(uint32_t)), sp = 0, closure_recvs = 0;
    stack[sp++] = (uint32_t)first;
    in[first] = 1;
    while (sp) {
        const hc_step_t *st = &s.steps[stack[--sp]];
        if (st->kind == HC_STEP_RECV && t->node_of[st->peer] == t->node_of[0])
            closure_recvs++;
        for (uint32_t k = 0; k < st->ndeps; k++) {
            uint32_t d = s.deps[st->dep_off + k];
            if (!in[d]) {
                in[d] = 1;
                stack[sp++] = d;
            }
        }
    }
    /* 4 chunks per block here: a quarter of the intra-node receives, at most */
    ck_assert_uint_gt(intra_recvs, 0);
    ck_assert_msg(closure_recvs * 4 <= intra_recvs,
                  "the first send across nodes waits for %u of %u intra-node receives",
                  closure_recvs, intra_recvs);
    free(in);
    free(stack);
    hc_sched_free(&s);
    hc_topo_destroy(t);
}
END_TEST

/* NVLink as hwloc reports it (NVML distances): local rank i drives GPU i */
START_TEST(test_hwloc_nvlink)
{
    cards_t *c = cards_new(4);
    for (uint32_t r = 0; r < 4; r++) {
        hc_topo_facts_t f;
        memcpy(&f, c->blob[r], sizeof(f));
        f.ndev = 4;
        for (int g = 0; g < 4; g++) {
            snprintf(f.dev[g].name, sizeof(f.dev[g].name), "cuda%d", g);
            snprintf(f.dev[g].pci, sizeof(f.dev[g].pci), "0000:%02x:00.0", 0x17 + g);
            f.dev[g].kind = HC_DEV_GPU;
            f.dev[g].near = 1;
            f.dev[g].numa = -1;
            f.dev[g].nvlink = (uint8_t)(1u << (g ^ 1)); /* pairs 0-1, 2-3 */
        }
        memcpy(c->blob[r], &f, sizeof(f));
    }
    hc_config_t *cfg = cfg_new();
    hc_topo_t *t = NULL;
    ck_assert_int_eq(hc_topo_create(4, 0, c->m, cfg, &t), HCCL_SUCCESS);
    ck_assert_uint_eq(t->ngroups, 2);
    ck_assert_str_eq(t->groups[0].why, "nvlink");
    char buf[64];
    ck_assert_str_eq(hc_topo_ring_text(t, buf, sizeof(buf)), "0 1 | 2 3");
    hc_topo_destroy(t);
    cfg_free(cfg);
    cards_free(c);
}
END_TEST


/* The example files of docs/topology/ load into the models the doc shows. */
START_TEST(test_doc_examples)
{
    const char *src = getenv("top_srcdir");
    char path[1024];
    if (src == NULL)
        src = "../.."; /* run by hand from the build tree */
    static const struct {
        const char *file;
        uint32_t n, racks, nodes, groups;
        const char *ring;
    } ex[] = {
        {"cluster-2rack.topo", 8, 2, 4, 4, "0 1 || 2 3 ||| 4 5 || 6 7"},
        {"cluster-2rack.json", 8, 2, 4, 4, "0 1 || 2 3 ||| 4 5 || 6 7"},
        {"sim-2x2x2.topo", 8, 1, 2, 4, "0 2 | 4 6 || 1 3 | 5 7"},
    };
    for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
        snprintf(path, sizeof(path), "%s/docs/topology/%s", src, ex[i].file);
        if (access(path, R_OK) != 0) {
            fprintf(stderr, "test_doc_examples: %s not found (top_srcdir unset?); skipped\n", path);
            continue;
        }
        hc_topo_reset();
        cards_t *c = cards_new(ex[i].n);
        hc_config_t *cfg = cfg_new();
        snprintf(cfg->topo_file, sizeof(cfg->topo_file), "%s", path);
        hc_topo_t *t = NULL;
        ck_assert_msg(hc_topo_create(ex[i].n, 0, c->m, cfg, &t) == HCCL_SUCCESS, "%s", path);
        ck_assert_uint_eq(t->nracks, ex[i].racks);
        ck_assert_uint_eq(t->nnodes, ex[i].nodes);
        ck_assert_uint_eq(t->ngroups, ex[i].groups);
        char buf[128];
        ck_assert_str_eq(hc_topo_ring_text(t, buf, sizeof(buf)), ex[i].ring);
        hc_topo_destroy(t);
        cfg_free(cfg);
        cards_free(c);
    }
}
END_TEST

static Suite *topo_suite(void)
{
    Suite *su = suite_create("topo");
    TCase *tc = tcase_create("parse");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_parse_good);
    tcase_add_test(tc, test_parse_bad);
    tcase_add_test(tc, test_ranktable);
    suite_add_tcase(su, tc);
    tc = tcase_create("files");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_file_kinds);
    suite_add_tcase(su, tc);
    tc = tcase_create("model");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_detected_64x8);
    tcase_add_test(tc, test_sim_2x2x2);
    tcase_add_test(tc, test_file_errors);
    tcase_add_test(tc, test_groups_override);
    tcase_add_test(tc, test_nvlink_map);
    tcase_add_test(tc, test_override_mismatch);
    tcase_add_test(tc, test_dump_roundtrip);
    tcase_add_test(tc, test_racks);
    tcase_add_test(tc, test_split_members);
    tcase_add_test(tc, test_hwloc_nvlink);
    tcase_add_test(tc, test_doc_examples);
    suite_add_tcase(su, tc);
    tc = tcase_create("hier");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_hier_flat);
    tcase_add_test(tc, test_hier_units);
    tcase_add_test(tc, test_xnode_bytes);
    tcase_add_test(tc, test_bcast_tree);
    tcase_add_test(tc, test_usable);
    tcase_add_test(tc, test_pipelined);
    suite_add_tcase(su, tc);
    tc = tcase_create("large");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_hier_large);
    tcase_add_test(tc, test_large_decl);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(topo_suite());
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
