/*
 * test/unit/check_tune.c - algorithm selection (src/comm/tune.c): the built-in
 * table, the tuning-file syntax and its errors (with line numbers),
 * HCCL_ALGO parsing and mapping, priorities between the sources, chunk
 * sizes, fallback when a forced algorithm cannot run, topology conditions,
 * and deterministic mode routing every reducing collective to an algorithm
 * that keeps the canonical order (whose bits check_sched verifies).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "coll/algos.h"
#include "src/base/env.h"
#include "src/base/log.h"
#include "src/comm/tune.h"

static hc_config_t cfg;
static const hc_topo_view_t flat = {0};

static void setup(void)
{
    char err[256];
    extern char **environ;
    /* a clean configuration: defaults only */
    for (int again = 1; again;) {
        again = 0;
        for (char **e = environ; *e; e++)
            if (strncmp(*e, "HCCL_", 5) == 0) {
                char name[128];
                size_t l = strcspn(*e, "=");
                snprintf(name, sizeof(name), "%.*s", (int)l, *e);
                unsetenv(name);
                again = 1;
                break;
            }
    }
    ck_assert_int_eq(hc_env_load(&cfg, err, sizeof(err)), HCCL_SUCCESS);
    hc_log_configure(HC_LOG_NONE, HC_SUB_ALL, ""); /* the expected errors stay quiet */
}

static void teardown(void)
{
    hc_env_free(&cfg);
}

/* The algorithm chosen for coll with count elements of esize bytes. */
static const char *pick(hc_tune_t *t, hc_coll_t coll, uint32_t n, uint64_t count, size_t esize,
                        const hc_topo_view_t *v, uint64_t *chunk)
{
    hc_coll_args_t a = {.coll = coll, .rank = 0, .nranks = n, .count = count, .esize = esize,
                        .dtype = HCCL_DATA_TYPE_FP32, .op = HCCL_REDUCE_SUM,
                        .deterministic = cfg.deterministic, .topo = v ? v : &flat};
    const hc_algo_t *al = hc_tune_select(t, &a);
    ck_assert_ptr_nonnull(al);
    if (chunk)
        *chunk = a.chunk_bytes;
    return al->name;
}

static hc_tune_t *make(uint32_t n, const hc_topo_view_t *v)
{
    hc_tune_t *t = NULL;
    ck_assert_int_eq(hc_tune_create(&cfg, n, v ? v : &flat, &t), HCCL_SUCCESS);
    ck_assert_ptr_nonnull(t);
    return t;
}

START_TEST(test_builtin)
{
    char err[512];
    ck_assert_int_eq(hc_tune_check_text(hc_tune_builtin_text(), "built-in", err, sizeof(err)),
                     HCCL_SUCCESS);
    /* every collective, every size, every rank count: an algorithm that runs */
    static const uint32_t ns[] = {1, 2, 3, 4, 5, 7, 8, 16, 31, 64, 1024};
    static const uint64_t bytes[] = {0, 4, 100, 4096, 65536, 1 << 20, 64 << 20};
    for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
        hc_tune_t *t = make(ns[ni], NULL);
        for (int c = 0; c < HC_COLL_LAST; c++)
            for (size_t bi = 0; bi < sizeof(bytes) / sizeof(bytes[0]); bi++) {
                hc_coll_args_t a = {.coll = (hc_coll_t)c, .nranks = ns[ni], .count = bytes[bi] / 4,
                                    .esize = 4, .topo = &flat};
                const hc_algo_t *al = hc_tune_select(t, &a);
                ck_assert_ptr_nonnull(al);
                ck_assert_msg(al->usable == NULL || al->usable(&a) == NULL,
                              "%s %llu B n=%u: %s cannot run", hc_coll_name((hc_coll_t)c),
                              (unsigned long long)bytes[bi], ns[ni], al->name);
            }
        hc_tune_destroy(t);
    }
    /* the defaults of the starting table */
    hc_tune_t *t = make(4, NULL);
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 4, 256, 4, NULL, NULL), "RD");
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 4, 8192, 4, NULL, NULL), "DBTREE");
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 4, 1 << 18, 4, NULL, NULL), "RING");
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 4, 1 << 24, 4, NULL, NULL), "TORUS2D");
    hc_tune_destroy(t);
    /* with shared staging (one host) DIRECT comes first */
    hc_coll_args_t sa = {.coll = HC_COLL_ALLREDUCE, .nranks = 4, .count = 1000, .esize = 4,
                         .shm_bytes = 1 << 20, .topo = &flat};
    t = make(4, NULL);
    ck_assert_str_eq(hc_tune_select(t, &sa)->name, "DIRECT");
    hc_tune_destroy(t);
    /* TORUS2D cannot run on a prime count: the next built-in rule, silently */
    t = make(5, NULL);
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 5, 1 << 24, 4, NULL, NULL), "RING");
    hc_tune_destroy(t);
    /* several hosts, one rank each: HIER cannot run (units of one rank);
     * TORUS2D from 128 KB to 1 MB at 4 ranks, RING above, as measured
     * on the emulated cluster (docs/CLUSTER.md, "Crossovers across hosts") */
    const uint32_t hosts[4] = {0, 1, 2, 3}, hoff[5] = {0, 1, 2, 3, 4};
    const hc_topo_view_t mn = {.nnodes = 4, .node_of = hosts, .node_off = hoff,
                               .flags = HC_TOPO_F_HIER | HC_TOPO_F_MULTINODE};
    t = make(4, &mn);
    /* counts of 4-byte elements: 64 KB, 256 KB, 1 MB, 16 MB */
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 4, 1 << 14, 4, &mn, NULL), "DBTREE");
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 4, 1 << 16, 4, &mn, NULL), "TORUS2D");
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 4, 1 << 18, 4, &mn, NULL), "RING");
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 4, 1 << 22, 4, &mn, NULL), "TORUS2D");
    hc_tune_destroy(t);
    /* 8 hosts, one rank each: RING (TORUS2D led only on 4) */
    const uint32_t hosts8[8] = {0, 1, 2, 3, 4, 5, 6, 7}, hoff8[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    const hc_topo_view_t mn8 = {.nnodes = 8, .node_of = hosts8, .node_off = hoff8,
                                .flags = HC_TOPO_F_HIER | HC_TOPO_F_MULTINODE};
    t = make(8, &mn8);
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 8, 1 << 16, 4, &mn8, NULL), "RING");
    hc_tune_destroy(t);
    /* one host (no multinode): RING at 256 KB as before */
    t = make(4, NULL);
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 4, 1 << 16, 4, NULL, NULL), "RING");
    hc_tune_destroy(t);
}
END_TEST

/* The CPU vendor, read here independently of src/comm/tune.c: 'i' Intel, 'a'
 * AMD, 0 anything else. */
static char vendor(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    char v[13] = "";
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        memcpy(v, &b, 4);
        memcpy(v + 4, &d, 4);
        memcpy(v + 8, &c, 4);
    }
    if (strcmp(v, "GenuineIntel") == 0)
        return 'i';
    if (strcmp(v, "AuthenticAMD") == 0)
        return 'a';
#endif
    return 0;
}

/* The vendor rows of the built-in table (when=intel, when=amd) on this
 * machine's CPU: 2 ranks on one host with single-copy reads allowed. */
START_TEST(test_vendor_rows)
{
    const char v = vendor();
    hc_tune_t *t = make(2, NULL);
    hc_coll_args_t a = {.coll = HC_COLL_ALLREDUCE, .nranks = 2, .count = 16 << 10, .esize = 4,
                        .dtype = HCCL_DATA_TYPE_FP32, .op = HCCL_REDUCE_SUM, .topo = &flat,
                        .shm_bytes = 64 << 20, .cma = 1};
    /* 64 KiB AllReduce: CMA on Intel (malloc'd or registered), on AMD only
     * registered */
    ck_assert_str_eq(hc_tune_select(t, &a)->name, v == 'i' ? "CMA" : "DIRECT");
    a.registered = 1;
    ck_assert_str_eq(hc_tune_select(t, &a)->name, v ? "CMA" : "DIRECT");
    ck_assert_int_eq(a.nt_recv, 0);
    /* 1 MiB registered: streamed into RECV on AMD only (Intel from 32 MiB) */
    a.count = 256 << 10;
    a.nt_recv = 0;
    ck_assert_str_eq(hc_tune_select(t, &a)->name, v ? "CMA" : "DIRECT");
    ck_assert_int_eq(a.nt_recv, v == 'a');
    /* 1 MiB Broadcast, malloc'd: CMA on both vendors; 1 KiB: staging */
    hc_coll_args_t b = {.coll = HC_COLL_BROADCAST, .nranks = 2, .count = 1 << 20, .esize = 1,
                        .dtype = HCCL_DATA_TYPE_INT8, .topo = &flat, .shm_bytes = 64 << 20,
                        .cma = 1};
    ck_assert_str_eq(hc_tune_select(t, &b)->name, v ? "CMA" : "DIRECT");
    b.count = 1024;
    ck_assert_str_eq(hc_tune_select(t, &b)->name, "DIRECT");
    /* AlltoAll, malloc'd (the rules see one block): 1 MiB blocks single
     * copy on both, 32 MiB blocks through staging (streamed on Intel) */
    b.coll = HC_COLL_ALLTOALL;
    ck_assert_str_eq(hc_tune_select(t, &b)->name, "DIRECT");
    b.count = 1 << 20;
    ck_assert_str_eq(hc_tune_select(t, &b)->name, v ? "CMA" : "DIRECT");
    b.count = 32 << 20;
    ck_assert_str_eq(hc_tune_select(t, &b)->name, "DIRECT");
    ck_assert_int_eq(b.nt_recv, v == 'i');
    /* AllGather, malloc'd, blocks of 256 KiB: single copy on both; blocks
     * of 2 MiB: staging on AMD (its row ends at 1 MiB) */
    b.coll = HC_COLL_ALLGATHER;
    b.count = 256 << 10;
    ck_assert_str_eq(hc_tune_select(t, &b)->name, v ? "CMA" : "DIRECT");
    b.count = 2 << 20;
    ck_assert_str_eq(hc_tune_select(t, &b)->name, v == 'i' ? "CMA" : "DIRECT");
    /* without single-copy reads: the staging rows */
    a.cma = 0;
    ck_assert_str_eq(hc_tune_select(t, &a)->name, "DIRECT");
    hc_tune_destroy(t);
    /* 4 ranks, registered: Broadcast of 4 MiB single copy on AMD only;
     * AlltoAll of 1 MiB blocks on both (Intel: its malloc'd row) */
    t = make(4, NULL);
    hc_coll_args_t c = {.coll = HC_COLL_BROADCAST, .nranks = 4, .count = 4 << 20, .esize = 1,
                        .dtype = HCCL_DATA_TYPE_INT8, .topo = &flat, .shm_bytes = 64 << 20,
                        .cma = 1, .registered = 1};
    ck_assert_str_eq(hc_tune_select(t, &c)->name, v == 'a' ? "CMA" : "DIRECT");
    c.registered = 0;
    ck_assert_str_eq(hc_tune_select(t, &c)->name, "DIRECT");
    c.coll = HC_COLL_ALLTOALL;
    c.count = 1 << 20;
    c.registered = 1;
    ck_assert_str_eq(hc_tune_select(t, &c)->name, v ? "CMA" : "DIRECT");
    hc_tune_destroy(t);
}
END_TEST

START_TEST(test_file_syntax)
{
    char err[512];
    ck_assert_int_eq(hc_tune_check_text("# comment\n\n"
                                        "allreduce 0-64K * RD\n"
                                        "allreduce 64KB-8MB 2-16 RING chunk=256K  # trailing\n"
                                        "allreduce 8M-* 4-* TORUS2D when=flat,nodet\n"
                                        "bcast * 8 PIPELINE chunk=2MB\n"
                                        "allreduce 32MB-* 2 DIRECT chunk=1MB nt when=intel\n"
                                        "allgather 2MB-* 3-* DIRECT NT\n"
                                        "allreduce 32KB-* 2 CMA when=intel,registered\n"
                                        "alltoall 128KB-16MB 2 CMA when=AMD\n"
                                        "alltoall 0-1K * bruck\n"
                                        "allreduce 4096 * 2D-TORUS\n",
                                        "t", err, sizeof(err)),
                     HCCL_SUCCESS);
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"allreduce 0-64K * RD\nallreduce 0-1K *\n", "t:2:"},
        {"\n\nallreduc * * RING\n", "t:3: unknown collective 'allreduc'"},
        {"allreduce 0-64Q * RD\n", "t:1: bad byte range '0-64Q'"},
        {"allreduce 64K-1K * RD\n", "t:1: empty byte range"},
        {"allreduce * 8-4 RD\n", "t:1: bad rank range '8-4'"},
        {"allreduce * 4K RD\n", "t:1: bad rank range"},
        {"# x\nallreduce * * NOPE\n", "t:2: unknown allreduce algorithm 'NOPE' (known: RING"},
        {"reduce * * RING\n", "t:1: unknown reduce algorithm 'RING'"},
        {"allreduce * * RD chunk=\n", "t:1: bad chunk size"},
        {"allreduce * * RD chunk=0\n", "t:1: bad chunk size"},
        {"allreduce * * RD speed=1\n", "t:1: unknown option 'speed=1' (chunk=SIZE, nt, when=COND)"},
        {"allreduce * * RD nt=1\n", "t:1: unknown option 'nt=1'"},
        {"allreduce * * RD when=fast\n", "t:1: unknown condition 'fast'"},
        {"a b c d e f g h i\n", "t:1: too many fields"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(hc_tune_check_text(bad[i].text, "t", err, sizeof(err)), HCCL_E_PARA);
        ck_assert_msg(strstr(err, bad[i].want) != NULL, "'%s': got '%s', want '%s'", bad[i].text,
                      err, bad[i].want);
    }
}
END_TEST

START_TEST(test_hccl_algo_syntax)
{
    char err[512];
    static const char *good[] = {"level0:NA;level1:ring",
                                 "level0:NA;level1:H-D_R",
                                 " level0:NA ; level1:NB ",
                                 "level1:NHR",
                                 "level0:NA;level1:pipeline",
                                 "level0:NA;level1:NA",
                                 "allreduce=level0:NA;level1:H-D_R/allgather=level0:NA;level1:ring",
                                 "alltoall=level0:NA;level1:pairwise",
                                 "allreduce=level1:DBTREE/broadcast=level1:PIPELINE",
                                 "reduce=level1:RS_GATHER/",
                                 "level0:fullmesh"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        ck_assert_msg(hc_tune_check_hccl_algo(good[i], err, sizeof(err)) == HCCL_SUCCESS,
                      "'%s': %s", good[i], err);
    static const struct {
        const char *v, *want;
    } bad[] = {
        {"level1:foo", "unknown algorithm 'foo'"},
        {"ring", "expected level0:ALGO"},
        {"level3:ring", "expected level0:ALGO"},
        {"level1:", "no algorithm"},
        {"allreduce=level1:pairwise", "'pairwise' has no allreduce algorithm"},
        {"allreduc=level1:ring", "unknown operation 'allreduc'"},
        {"alltoall=level1:H-D_R", "'H-D_R' has no alltoall algorithm"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(hc_tune_check_hccl_algo(bad[i].v, err, sizeof(err)), HCCL_E_PARA);
        ck_assert_msg(strstr(err, bad[i].want) != NULL, "'%s': got '%s'", bad[i].v, err);
    }
}
END_TEST

START_TEST(test_hccl_algo_mapping)
{
    snprintf(cfg.algo, sizeof(cfg.algo), "level0:NA;level1:H-D_R");
    hc_tune_t *t = make(8, NULL);
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 8, 1 << 20, 4, NULL, NULL), "HD");
    ck_assert_str_eq(pick(t, HC_COLL_REDUCESCATTER, 8, 100, 4, NULL, NULL), "HD");
    ck_assert_str_eq(pick(t, HC_COLL_ALLGATHER, 8, 100, 4, NULL, NULL), "RD");
    ck_assert_str_eq(pick(t, HC_COLL_REDUCE, 8, 100, 4, NULL, NULL), "RS_GATHER");
    ck_assert_str_eq(pick(t, HC_COLL_BROADCAST, 8, 1 << 24, 4, NULL, NULL), "BINOMIAL");
    ck_assert_str_eq(pick(t, HC_COLL_ALLTOALL, 8, 1 << 20, 4, NULL, NULL), "PAIRWISE");
    hc_tune_destroy(t);

    /* per op; the others stay automatic */
    snprintf(cfg.algo, sizeof(cfg.algo),
             "allreduce=level0:NA;level1:ring/allgather=level0:NA;level1:NB/alltoall=level1:NB");
    t = make(8, NULL);
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 8, 16, 4, NULL, NULL), "RING");
    ck_assert_str_eq(pick(t, HC_COLL_ALLGATHER, 8, 1 << 20, 4, NULL, NULL), "BRUCK");
    ck_assert_str_eq(pick(t, HC_COLL_REDUCESCATTER, 8, 1 << 20, 4, NULL, NULL), "RING");
    ck_assert_str_eq(pick(t, HC_COLL_ALLTOALL, 8, 1 << 20, 4, NULL, NULL), "BRUCK");
    /* AlltoAllV cannot use BRUCK: falls back (with a warning) */
    ck_assert_str_eq(pick(t, HC_COLL_ALLTOALLV, 8, 0, 4, NULL, NULL), "PAIRWISE");
    hc_tune_destroy(t);

    /* the per-collective variable wins over HCCL_ALGO; per op over global */
    snprintf(cfg.algo, sizeof(cfg.algo), "level1:ring/allgather=level1:H-D_R");
    snprintf(cfg.allreduce_algo, sizeof(cfg.allreduce_algo), "DOUBLE_BINARY_TREE");
    t = make(8, NULL);
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 8, 1 << 22, 4, NULL, NULL), "DBTREE");
    ck_assert_str_eq(pick(t, HC_COLL_ALLGATHER, 8, 16, 4, NULL, NULL), "RD");
    ck_assert_str_eq(pick(t, HC_COLL_REDUCESCATTER, 8, 16, 4, NULL, NULL), "RING");
    hc_tune_destroy(t);

    /* bad values fail the communicator */
    hc_tune_t *bad = NULL;
    snprintf(cfg.algo, sizeof(cfg.algo), "level1:warp");
    ck_assert_int_eq(hc_tune_create(&cfg, 8, &flat, &bad), HCCL_E_PARA);
    ck_assert_ptr_null(bad);
    ck_assert_int_eq(hc_tune_check_config(&cfg), HCCL_E_PARA);
    cfg.algo[0] = '\0';
    ck_assert_int_eq(hc_tune_check_config(&cfg), HCCL_SUCCESS);
    snprintf(cfg.allreduce_algo, sizeof(cfg.allreduce_algo), "RINGG");
    ck_assert_int_eq(hc_tune_create(&cfg, 8, &flat, &bad), HCCL_E_PARA);
    ck_assert_ptr_null(bad);
}
END_TEST

/* Lines of the log file that contain s. */
static int count_lines(const char *path, const char *s)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    int n = 0;
    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof(line), f))
        n += strstr(line, s) != NULL;
    fclose(f);
    return n;
}

/* Warnings and worse go to a new file named after log ("..XXXXXX"). */
static void log_to_tmp(char *log)
{
    int fd = mkstemp(log);
    ck_assert_int_ge(fd, 0);
    close(fd);
    hc_log_configure(HC_LOG_WARN, HC_SUB_ALL, log);
}

START_TEST(test_forced_fallback)
{
    /* TORUS2D on 3 ranks: cannot run; the default decides, with one WARN
     * line that says why */
    char log[] = "/tmp/check_tune_log_XXXXXX";
    log_to_tmp(log);
    snprintf(cfg.allreduce_algo, sizeof(cfg.allreduce_algo), "2D-TORUS");
    hc_tune_t *t = make(3, NULL);
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 3, 16, 4, NULL, NULL), "RD");
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 3, 1 << 20, 4, NULL, NULL), "RING");
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 3, 1 << 20, 4, NULL, NULL), "RING");
    hc_tune_destroy(t);
    hc_log_configure(HC_LOG_NONE, HC_SUB_ALL, "");
    ck_assert_int_eq(count_lines(log, "WARN"), 1);
    ck_assert_int_eq(count_lines(log, "forced algorithm TORUS2D (HCCL_ALLREDUCE_ALGO) cannot run "
                                      "here (fewer than 4 ranks: no 2-D grid); using RD"), 1);
    unlink(log);
    t = make(6, NULL);
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 6, 16, 4, NULL, NULL), "TORUS2D");
    hc_tune_destroy(t);
    /* every forced algorithm of every collective gives something that runs */
    for (int c = 0; c < HC_COLL_LAST; c++) {
        int na;
        const hc_algo_t *al = hc_coll_algos((hc_coll_t)c, &na);
        for (int i = 0; i < na; i++) {
            hc_config_t *x = &cfg;
            char *field = c == HC_COLL_ALLREDUCE       ? x->allreduce_algo
                          : c == HC_COLL_BROADCAST     ? x->bcast_algo
                          : c == HC_COLL_REDUCE        ? x->reduce_algo
                          : c == HC_COLL_REDUCESCATTER ? x->reducescatter_algo
                          : c == HC_COLL_ALLGATHER     ? x->allgather_algo
                          : c == HC_COLL_ALLTOALL || c == HC_COLL_ALLTOALLV ? x->alltoall_algo
                                                                            : NULL;
            if (field == NULL)
                continue;
            snprintf(field, 64, "%s", al[i].name);
            for (uint32_t n = 1; n <= 9; n++) {
                t = make(n, NULL);
                hc_coll_args_t a = {.coll = (hc_coll_t)c, .nranks = n, .count = 1000, .esize = 4,
                                    .topo = &flat};
                const hc_algo_t *got = hc_tune_select(t, &a);
                ck_assert(got->usable == NULL || got->usable(&a) == NULL);
                if (al[i].usable == NULL || al[i].usable(&a) == NULL)
                    ck_assert_ptr_eq(got, &al[i]);
                hc_tune_destroy(t);
            }
            field[0] = '\0';
        }
    }
}
END_TEST

/* ReduceScatter with blocks of different sizes (args->scounts) runs on RING
 * whatever the table, the size or the forced algorithm; a forced one that
 * cannot says so once. */
START_TEST(test_uneven_blocks)
{
    char log[] = "/tmp/check_tune_log_XXXXXX";
    log_to_tmp(log);
    static const uint64_t counts[] = {0, 1, 5, 3, 1 << 20, 7, 0, 2, 9};
    int na, warned = 0;
    const hc_algo_t *al = hc_coll_algos(HC_COLL_REDUCESCATTER, &na);
    for (int i = -1; i < na; i++) {
        snprintf(cfg.reducescatter_algo, sizeof(cfg.reducescatter_algo), "%s",
                 i < 0 ? "" : al[i].name);
        for (uint32_t n = 1; n <= 9; n++) {
            hc_tune_t *t = make(n, NULL);
            for (int reg = 0; reg < 2; reg++) {
                hc_coll_args_t a = {.coll = HC_COLL_REDUCESCATTER, .rank = 0, .nranks = n,
                                    .count = counts[0], .esize = 4,
                                    .dtype = HCCL_DATA_TYPE_FP32, .op = HCCL_REDUCE_SUM,
                                    .shm_bytes = 1 << 20, .cma = 1, .registered = reg,
                                    .scounts = counts, .sdispls = counts, .topo = &flat};
                const hc_algo_t *got = hc_tune_select(t, &a);
                ck_assert_str_eq(got->name, "RING");
                a.scounts = NULL; /* equal blocks: the forced one, where it can run */
                got = hc_tune_select(t, &a);
                if (i >= 0 && (al[i].usable == NULL || al[i].usable(&a) == NULL))
                    ck_assert_ptr_eq(got, &al[i]);
            }
            hc_tune_destroy(t);
        }
        if (i >= 0 && strcmp(al[i].name, "RING") != 0)
            warned++;
    }
    cfg.reducescatter_algo[0] = '\0';
    hc_log_configure(HC_LOG_NONE, HC_SUB_ALL, "");
    /* one line per forced algorithm and communicator (9 sizes each) */
    ck_assert_int_eq(count_lines(log, "cannot run here (needs equal blocks (ReduceScatter, not "
                                      "ReduceScatterV)); using RING"), warned * 9);
    unlink(log);
}
END_TEST

/* A tuning file with text in a new file named after tmpl ("..XXXXXX"),
 * sparse up to size bytes when that is more. */
static void write_tmp_tune(char *tmpl, const char *text, off_t size)
{
    int fd = mkstemp(tmpl);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    if (size > (off_t)strlen(text))
        ck_assert_int_eq(ftruncate(fd, size), 0);
    close(fd);
}

/* HCCL_TUNE_FILE=path fails the communicator. */
static void tune_file_refused(const char *path)
{
    snprintf(cfg.tune_file, sizeof(cfg.tune_file), "%s", path);
    hc_tune_t *none = NULL;
    ck_assert_int_eq(hc_tune_create(&cfg, 4, &flat, &none), HCCL_E_PARA);
    ck_assert_ptr_null(none);
}

START_TEST(test_tune_file)
{
    char path[] = "/tmp/check_tune_XXXXXX", err[64];
    const char *text = "# from hcomm-tune\n"
                       "allreduce 0-4K     *    RD\n"
                       "allreduce 4K-1M    2-4  HD   chunk=64K\n"
                       "allreduce 1M-*     *    DIRECT nt when=registered\n"
                       "allreduce 1M-*     *    RING chunk=128K\n"
                       "allreduce *        *    RD   when=hier\n"
                       "broadcast 1M-*     *    SCATTER_ALLGATHER\n"
                       "reducescatter 1M-* *    RING chunk=32K nt\n";
    write_tmp_tune(path, text, 0);
    snprintf(cfg.tune_file, sizeof(cfg.tune_file), "%s", path);
    uint64_t chunk;
    hc_tune_t *t = make(4, NULL);
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 4, 100, 4, NULL, NULL), "RD");
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 4, 1024, 4, NULL, &chunk), "HD");
    ck_assert_uint_eq(chunk, 64 << 10);
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 4, 1 << 20, 4, NULL, &chunk), "RING");
    ck_assert_uint_eq(chunk, 128 << 10);
    /* when=registered: decided per operation, from args.registered */
    hc_coll_args_t ra = {.coll = HC_COLL_ALLREDUCE, .nranks = 4, .count = 1 << 20, .esize = 4,
                         .dtype = HCCL_DATA_TYPE_FP32, .op = HCCL_REDUCE_SUM, .topo = &flat,
                         .shm_bytes = 1 << 20};
    ck_assert_str_eq(hc_tune_select(t, &ra)->name, "RING");
    ra.registered = 1;
    ck_assert_str_eq(hc_tune_select(t, &ra)->name, "DIRECT");
    ck_assert_int_eq(ra.nt_recv, 1);
    ck_assert_str_eq(pick(t, HC_COLL_BROADCAST, 4, 1 << 20, 4, NULL, NULL), "SCATTER_ALLGATHER");
    /* option nt reaches the arguments (and only from its rule) */
    hc_coll_args_t na = {.coll = HC_COLL_REDUCESCATTER, .nranks = 4, .count = 1 << 20, .esize = 4,
                         .dtype = HCCL_DATA_TYPE_FP32, .op = HCCL_REDUCE_SUM, .topo = &flat};
    ck_assert_str_eq(hc_tune_select(t, &na)->name, "RING");
    ck_assert_int_eq(na.nt_recv, 1);
    ck_assert_uint_eq(na.chunk_bytes, 32 << 10);
    na.count = 16;
    ck_assert_str_eq(hc_tune_select(t, &na)->name, "HD");
    ck_assert_int_eq(na.nt_recv, 0);
    /* not covered by the file: the built-in table */
    ck_assert_str_eq(pick(t, HC_COLL_ALLGATHER, 4, 1 << 20, 4, NULL, NULL), "RING");
    hc_tune_destroy(t);
    /* rank ranges: the 2-4 rule does not apply to 8 ranks */
    t = make(8, NULL);
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 8, 4096, 4, NULL, NULL), "DBTREE");
    hc_tune_destroy(t);
    /* topology conditions */
    const uint32_t groups[4] = {0, 0, 1, 1};
    const hc_topo_view_t hier = {.ngroups = 2, .group_of = groups, .flags = HC_TOPO_F_HIER};
    t = make(8, &hier);
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 8, 1 << 22, 4, &hier, NULL), "RING");
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 8, 1 << 12, 4, &hier, NULL), "RD");
    hc_tune_destroy(t);
    t = make(8, NULL);
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 8, 1 << 12, 4, NULL, NULL), "DBTREE");
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 8, 100, 4, NULL, NULL), "RD");
    hc_tune_destroy(t);
    /* the agreement text carries the contents */
    char forced[256];
    hc_tune_forced_text(&cfg, forced, sizeof(forced));
    ck_assert_ptr_nonnull(strstr(forced, "tune="));
    ck_assert_ptr_null(strstr(forced, "tune=0000000000000000"));
    unlink(path);

    /* a bad file fails the communicator */
    char bad[] = "/tmp/check_tune_XXXXXX";
    write_tmp_tune(bad, "allreduce * * RING\nallreduce * * SPIRAL\n", 0);
    tune_file_refused(bad);
    unlink(bad);
    tune_file_refused("/nonexistent/tune.txt");
    /* not a regular file: refused, not read (a FIFO would block forever) */
    char fifo[] = "/tmp/check_tune_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(fifo));
    char fpath[64];
    snprintf(fpath, sizeof(fpath), "%s/fifo", fifo);
    ck_assert_int_eq(mkfifo(fpath, 0600), 0);
    tune_file_refused(fpath);
    unlink(fpath);
    rmdir(fifo);
    tune_file_refused("/dev/zero");
    /* larger than 1 MB: refused, whatever it holds */
    char big[] = "/tmp/check_tune_XXXXXX";
    write_tmp_tune(big, "allreduce * * RING\n", (1 << 20) + 1);
    tune_file_refused(big);
    unlink(big);
    (void)err;
}
END_TEST

START_TEST(test_chunks)
{
    uint64_t chunk;
    cfg.ring_chunk = 4096;
    cfg.bcast_chunk = 3 << 20;
    hc_tune_t *t = make(4, NULL);
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 4, 1 << 20, 4, NULL, &chunk), "RING");
    ck_assert_uint_eq(chunk, 4096);
    ck_assert_str_eq(pick(t, HC_COLL_ALLREDUCE, 4, 16, 4, NULL, &chunk), "RD");
    ck_assert_uint_eq(chunk, 0);
    ck_assert_str_eq(pick(t, HC_COLL_BROADCAST, 4, 1 << 24, 4, NULL, &chunk), "PIPELINE");
    ck_assert_uint_eq(chunk, 3 << 20);
    hc_tune_destroy(t);
}
END_TEST

/* Deterministic mode: whatever is forced, a reducing collective runs an
 * algorithm that keeps the canonical order (HC_ALGO_F_DET). */
START_TEST(test_deterministic_routing)
{
    static const hc_coll_t cs[] = {HC_COLL_ALLREDUCE, HC_COLL_REDUCESCATTER, HC_COLL_REDUCE};
    static const uint64_t counts[] = {1, 100, 1 << 14, 1 << 18, 1 << 22};
    cfg.deterministic = 1;
    for (size_t ci = 0; ci < 3; ci++) {
        int na;
        const hc_algo_t *al = hc_coll_algos(cs[ci], &na);
        char *field = cs[ci] == HC_COLL_ALLREDUCE       ? cfg.allreduce_algo
                      : cs[ci] == HC_COLL_REDUCESCATTER ? cfg.reducescatter_algo
                                                        : cfg.reduce_algo;
        for (int i = -1; i < na; i++) {
            snprintf(field, 64, "%s", i < 0 ? "" : al[i].name);
            for (uint32_t n = 1; n <= 12; n += (n < 4 ? 1 : 3)) {
                hc_tune_t *t = make(n, NULL);
                for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
                    hc_coll_args_t a = {.coll = cs[ci], .nranks = n, .count = counts[k],
                                        .esize = 4, .deterministic = 1, .topo = &flat};
                    const hc_algo_t *got = hc_tune_select(t, &a);
                    ck_assert_msg(got->flags & HC_ALGO_F_DET, "%s forced %s n=%u: got %s",
                                  hc_coll_name(cs[ci]), field, n, got->name);
                    if (i >= 0 && (al[i].flags & HC_ALGO_F_DET))
                        ck_assert_ptr_eq(got, &al[i]);
                }
                hc_tune_destroy(t);
            }
        }
        field[0] = '\0';
    }
}
END_TEST

static Suite *tune_suite(void)
{
    Suite *s = suite_create("tune");
    TCase *tc = tcase_create("tune");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_builtin);
    tcase_add_test(tc, test_vendor_rows);
    tcase_add_test(tc, test_file_syntax);
    tcase_add_test(tc, test_hccl_algo_syntax);
    tcase_add_test(tc, test_hccl_algo_mapping);
    tcase_add_test(tc, test_forced_fallback);
    tcase_add_test(tc, test_uneven_blocks);
    tcase_add_test(tc, test_tune_file);
    tcase_add_test(tc, test_chunks);
    tcase_add_test(tc, test_deterministic_routing);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(tune_suite());
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
