/*
 * test/unit/check_sim.c - tools/hcomm-sim's model against cases with
 * answers in closed form (docs/SCALE.md): the ring AllReduce over uniform
 * links, the binomial Broadcast (its concurrent sends sharing the NIC),
 * two messages sharing a NIC, an uplink or the CPU link (half the bandwidth
 * each), the same answer bit for bit on every run, the replay by symmetry
 * against the replay of every rank (bit for bit, on symmetric machines and
 * on one that has no symmetry), and clear errors for bad input
 * (unknown algorithms, shapes, unmatched or deadlocked schedules).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hccl/hccl.h>

#include "coll/algos.h"
#include "tools/hcomm-sim.h"

static void clean_env(void)
{
    static const char *const vars[] = {"HCCL_TUNE_FILE", "HCCL_RING_CHUNK_SIZE",
                                       "HCCL_BCAST_CHUNK_SIZE", "HCCL_ALGO",
                                       "HCCL_ALLREDUCE_ALGO", "HCCL_BCAST_ALGO",
                                       "HCCL_DETERMINISTIC", "HCCL_TOPO_FILE"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        unsetenv(vars[i]);
}

/* nodes x rpn in one rack; NIC alpha, beta; local work free */
static hs_machine_t uniform(uint32_t nodes, uint32_t rpn, double lat, double bw)
{
    hs_machine_t m = *hs_preset("emu");
    m.name = "test";
    m.nodes = nodes;
    m.rpn = rpn;
    m.racks = 1;
    m.nic.lat = lat;
    m.nic.bw = bw;
    m.intra = m.nic;
    m.uplink_bw = 0;
    m.spine_lat = 0;
    m.reduce_bw = 1e30;
    m.copy_bw = 1e30;
    m.cpu_bw = 0;
    m.cpu_msg = 0;
    return m;
}

/* the fattree preset in another shape */
static hs_machine_t fattree(uint32_t nodes, uint32_t rpn, uint32_t racks)
{
    hs_machine_t m = *hs_preset("fattree");
    m.nodes = nodes;
    m.rpn = rpn;
    m.racks = racks;
    return m;
}

static void expect_close(double got, double want, const char *what)
{
    ck_assert_msg(fabs(got - want) <= 1e-9 * want, "%s: %.12g s, expected %.12g s", what, got,
                  want);
}

START_TEST(test_ring_analytic)
{
    clean_env();
    static const uint32_t ps[] = {2, 3, 4, 8, 16};
    const double alpha = 10e-6, beta = 1e9;
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        const uint32_t p = ps[i];
        hs_machine_t m = uniform(p, 1, alpha, beta);
        char err[512];
        hs_sim_t *s = hs_create(&m, NULL, err, sizeof(err));
        ck_assert_msg(s != NULL, "%s", err);
        const uint64_t n = (uint64_t)p * 65536; /* equal blocks, each sent whole */
        hs_result_t r;
        const hc_algo_t *al;
        int rc = hs_run(s, HC_COLL_ALLREDUCE, n, "RING", 0, &al, &r, err, sizeof(err));
        ck_assert_msg(rc == HCCL_SUCCESS, "%s", err);
        ck_assert_str_eq(al->name, "RING");
        const double want = 2.0 * (p - 1) * alpha + 2.0 * (p - 1) / p * (double)n / beta;
        char what[64];
        snprintf(what, sizeof(what), "ring allreduce, %u ranks", p);
        expect_close(r.time, want, what);
        /* every rank sends 2(p-1) messages */
        ck_assert_uint_eq(r.messages, (uint64_t)p * 2 * (p - 1));
        hs_destroy(s);
    }
}
END_TEST

START_TEST(test_binomial_analytic)
{
    clean_env();
    static const uint32_t ps[] = {2, 4, 8, 16};
    const double alpha = 5e-6, beta = 2e9;
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        const uint32_t p = ps[i];
        hs_machine_t m = uniform(p, 1, alpha, beta);
        char err[512];
        hs_sim_t *s = hs_create(&m, NULL, err, sizeof(err));
        ck_assert_msg(s != NULL, "%s", err);
        const uint64_t n = 1 << 20;
        hs_result_t r;
        int rc = hs_run(s, HC_COLL_BROADCAST, n, "BINOMIAL", 0, NULL, &r, err, sizeof(err));
        ck_assert_msg(rc == HCCL_SUCCESS, "%s", err);
        /* L = log2 p rounds. A rank posts its sends to all its children at
         * once and they share its NIC: the root's L messages all end at
         * L n / beta, the child with the largest subtree then sends L - 1
         * at once, ...: sum over k = 1..L of (alpha + k n / beta) */
        const double L = log2((double)p);
        char what[64];
        snprintf(what, sizeof(what), "binomial broadcast, %u ranks", p);
        expect_close(r.time, L * alpha + L * (L + 1) / 2 * (double)n / beta, what);
        ck_assert_uint_eq(r.messages, p - 1);
        hs_destroy(s);
    }
}
END_TEST

/* Hand-made schedules: ranks 0 and 1 each send n bytes, to 2 and to 3. */
static int two_flows(void *ctx, uint32_t rank, hc_sched_t *s)
{
    const uint64_t n = *(const uint64_t *)ctx;
    if (rank < 2)
        hc_sched_send(s, rank + 2, 7, HC_SEND(0), n, HC_NODEPS);
    else
        hc_sched_recv(s, rank - 2, 7, HC_RECV(0), n, HC_NODEPS);
    return s->err;
}

START_TEST(test_contention)
{
    clean_env();
    const double alpha = 3e-6, beta = 1e9;
    uint64_t n = 8 << 20;
    char err[512];
    hs_result_t shared, alone;
    /* 0 and 1 on one node, 2 and 3 on the other: one NIC each way */
    hs_machine_t m = uniform(2, 2, alpha, beta);
    m.intra.bw = 1e15; /* not on the path */
    hs_sim_t *s = hs_create(&m, NULL, err, sizeof(err));
    ck_assert_msg(s != NULL, "%s", err);
    ck_assert_int_eq(hs_replay(s, two_flows, &n, &shared, err, sizeof(err)), HCCL_SUCCESS);
    hs_destroy(s);
    /* every rank on its own node */
    m = uniform(4, 1, alpha, beta);
    s = hs_create(&m, NULL, err, sizeof(err));
    ck_assert_msg(s != NULL, "%s", err);
    ck_assert_int_eq(hs_replay(s, two_flows, &n, &alone, err, sizeof(err)), HCCL_SUCCESS);
    hs_destroy(s);
    expect_close(alone.time, alpha + (double)n / beta, "two flows, own NICs");
    expect_close(shared.time, alpha + 2.0 * (double)n / beta, "two flows, one NIC");
    /* the bandwidth each flow saw halved */
    expect_close(shared.time - alpha, 2 * (alone.time - alpha), "halved bandwidth");

    /* a rack uplink of one NIC's bandwidth shared by two flows between racks */
    m = uniform(4, 1, alpha, beta);
    m.racks = 2;
    m.uplink_bw = beta; /* one lane */
    m.spine_lat = 1e-6;
    s = hs_create(&m, NULL, err, sizeof(err));
    ck_assert_msg(s != NULL, "%s", err);
    hs_result_t up;
    ck_assert_int_eq(hs_replay(s, two_flows, &n, &up, err, sizeof(err)), HCCL_SUCCESS);
    expect_close(up.time, alpha + 1e-6 + 2.0 * (double)n / beta, "two flows, one uplink");
    hs_destroy(s);

    /* the machine-wide CPU link: each of the two flows needs n / C + M of
     * it and gets half, so both end at 2 (n / C + M), slower than their NICs */
    const double cpu = 1e9, msg = 1e-3;
    m = uniform(4, 1, alpha, beta);
    m.cpu_bw = cpu;
    m.cpu_msg = msg;
    s = hs_create(&m, NULL, err, sizeof(err));
    ck_assert_msg(s != NULL, "%s", err);
    hs_result_t c2;
    ck_assert_int_eq(hs_replay(s, two_flows, &n, &c2, err, sizeof(err)), HCCL_SUCCESS);
    expect_close(c2.time, alpha + 2.0 * ((double)n / cpu + msg), "two flows, one CPU link");
    hs_destroy(s);
    /* a CPU link wider than the NICs leaves them the bottleneck */
    m.cpu_bw = 1e12;
    m.cpu_msg = 0;
    s = hs_create(&m, NULL, err, sizeof(err));
    ck_assert_msg(s != NULL, "%s", err);
    ck_assert_int_eq(hs_replay(s, two_flows, &n, &c2, err, sizeof(err)), HCCL_SUCCESS);
    expect_close(c2.time, alone.time, "two flows, a wide CPU link");
    hs_destroy(s);
}
END_TEST

START_TEST(test_deterministic)
{
    clean_env();
    const hs_machine_t m = fattree(6, 4, 2);
    static const char *const algos[] = {"RING", "HIER", "DBTREE", "TORUS2D", "HD", NULL};
    for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
        double t[3];
        for (int k = 0; k < 3; k++) {
            char err[512];
            hs_sim_t *s = hs_create(&m, NULL, err, sizeof(err));
            ck_assert_msg(s != NULL, "%s", err);
            hs_result_t r;
            int rc = hs_run(s, HC_COLL_ALLREDUCE, 3 << 20, algos[i], 0, NULL, &r, err,
                            sizeof(err));
            ck_assert_msg(rc == HCCL_SUCCESS, "%s: %s", algos[i] ? algos[i] : "table", err);
            t[k] = r.time;
            if (k == 2) { /* and again in the same simulator */
                rc = hs_run(s, HC_COLL_ALLREDUCE, 3 << 20, algos[i], 0, NULL, &r, err,
                            sizeof(err));
                ck_assert_int_eq(rc, HCCL_SUCCESS);
                ck_assert_msg(memcmp(&r.time, &t[k], sizeof(double)) == 0,
                              "%s: second run differs", algos[i] ? algos[i] : "table");
            }
            hs_destroy(s);
        }
        ck_assert_msg(t[0] > 0 && memcmp(&t[0], &t[1], sizeof(double)) == 0 &&
                          memcmp(&t[0], &t[2], sizeof(double)) == 0,
                      "%s: %.17g %.17g %.17g", algos[i] ? algos[i] : "table", t[0], t[1], t[2]);
    }
}
END_TEST

/* Each collective and algorithm on machine m (topology file topo, or
 * NULL), replayed by symmetry and every rank: the same time bit for bit,
 * steps and messages. Returns the fewest ranks any run replayed. */
static uint32_t same_as_every_rank(const hs_machine_t *m, const char *topo, const char *what)
{
    static const struct {
        hc_coll_t coll;
        const char *algo;
    } runs[] = {
        {HC_COLL_ALLREDUCE, "RING"},    {HC_COLL_ALLREDUCE, "HIER"},
        {HC_COLL_ALLREDUCE, "DBTREE"},  {HC_COLL_ALLREDUCE, "TORUS2D"},
        {HC_COLL_ALLREDUCE, "HD"},      {HC_COLL_ALLREDUCE, "RD"},
        {HC_COLL_ALLREDUCE, NULL},      {HC_COLL_ALLGATHER, NULL},
        {HC_COLL_REDUCESCATTER, NULL},  {HC_COLL_BROADCAST, NULL},
        {HC_COLL_ALLTOALL, NULL},
    };
    /* blocks that divide evenly, and a count that does not */
    static const uint64_t sizes[] = {3 << 20, (1 << 20) + 4 * 7};
    char err[512];
    hs_sim_t *sym = hs_create(m, topo, err, sizeof(err));
    ck_assert_msg(sym != NULL, "%s: %s", what, err);
    hs_sim_t *all = hs_create(m, topo, err, sizeof(err));
    ck_assert_msg(all != NULL, "%s: %s", what, err);
    hs_set_every_rank(all, 1);
    const uint32_t n = hs_nranks(sym);
    uint32_t fewest = n;
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
        for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
            hs_result_t a, b;
            const char *name = runs[i].algo ? runs[i].algo : hc_coll_name(runs[i].coll);
            int ra = hs_run(all, runs[i].coll, sizes[z], runs[i].algo, 0, NULL, &a, err,
                            sizeof(err));
            int rb = hs_run(sym, runs[i].coll, sizes[z], runs[i].algo, 0, NULL, &b, err,
                            sizeof(err));
            ck_assert_msg(ra == rb, "%s %s: %d by symmetry, %d every rank (%s)", what, name,
                          rb, ra, err);
            if (ra != HCCL_SUCCESS)
                continue;
            ck_assert_uint_eq(a.ranks, n);
            ck_assert_msg(memcmp(&a.time, &b.time, sizeof(double)) == 0 &&
                              a.steps == b.steps && a.messages == b.messages,
                          "%s %s %llu bytes: %.17g s %llu steps %llu messages (%u ranks "
                          "replayed), every rank %.17g s %llu %llu",
                          what, name, (unsigned long long)sizes[z], b.time,
                          (unsigned long long)b.steps, (unsigned long long)b.messages, b.ranks,
                          a.time, (unsigned long long)a.steps, (unsigned long long)a.messages);
            ck_assert(b.ranks >= 1 && b.ranks <= n && n % b.ranks == 0);
            if (b.ranks < fewest)
                fewest = b.ranks;
        }
    hs_destroy(sym);
    hs_destroy(all);
    return fewest;
}

START_TEST(test_symmetry)
{
    clean_env();
    /* 16 nodes x 8 in 4 racks: a rotation by a rack's ranks */
    hs_machine_t m = fattree(16, 8, 4);
    ck_assert_uint_lt(same_as_every_rank(&m, NULL, "fattree 16x8"), 128);
    /* uplinks that limit: their flows counted for the whole machine */
    m = fattree(12, 4, 3);
    m.uplink_bw = m.nic.bw;
    ck_assert_uint_lt(same_as_every_rank(&m, NULL, "fattree 12x4, uplinks"), 48);
    /* round robin: a node's ranks are rotations of each other */
    m = fattree(8, 4, 1);
    m.round_robin = 1;
    ck_assert_uint_lt(same_as_every_rank(&m, NULL, "round robin 8x4"), 32);
    /* the machine-wide CPU link: every rotation keeps it */
    m = *hs_preset("emu");
    m.nodes = 16;
    ck_assert_uint_lt(same_as_every_rank(&m, NULL, "emu 16"), 16);
    /* no latency: not replayed by symmetry, the same times */
    m = fattree(8, 4, 2);
    m.intra.lat = 0;
    m.nic.lat = 0;
    ck_assert_uint_eq(same_as_every_rank(&m, NULL, "no latency"), 32);
    /* nodes of 3, 5, 4 and 4 ranks: no rotation of the machine */
    char path[] = "/tmp/check_sim-XXXXXX";
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "hcomm-topology 1\ncluster uneven\nrack r0\nnode n0 rack=r0\nnode n1 rack=r0\n"
               "node n2 rack=r0\nnode n3 rack=r0\nrank 0-2 node=n0\nrank 3-7 node=n1\n"
               "rank 8-11 node=n2\nrank 12-15 node=n3\n");
    fclose(f);
    m = *hs_preset("fattree");
    ck_assert_uint_eq(same_as_every_rank(&m, path, "uneven nodes"), 16);
    unlink(path);
}
END_TEST

static int unmatched(void *ctx, uint32_t rank, hc_sched_t *s)
{
    (void)ctx;
    if (rank == 0)
        hc_sched_send(s, 1, 3, HC_SEND(0), 64, HC_NODEPS);
    else
        hc_sched_recv(s, 0, 4, HC_RECV(0), 64, HC_NODEPS); /* another tag */
    return s->err;
}

/* each rank receives first, then sends: nobody starts */
static int deadlock(void *ctx, uint32_t rank, hc_sched_t *s)
{
    (void)ctx;
    int32_t r = hc_sched_recv(s, 1 - rank, 0, HC_RECV(0), 64, HC_NODEPS);
    hc_sched_send(s, 1 - rank, 0, HC_SEND(0), 64, HC_DEPS(r));
    return s->err;
}

START_TEST(test_errors)
{
    clean_env();
    char err[512];
    hs_machine_t m = uniform(2, 1, 1e-6, 1e9);
    m.racks = 3; /* more racks than nodes */
    ck_assert_ptr_null(hs_create(&m, NULL, err, sizeof(err)));
    ck_assert_msg(strstr(err, "bad shape") != NULL, "%s", err);
    ck_assert_ptr_null(hs_create(&m, "/nonexistent/topo", err, sizeof(err)));
    ck_assert_msg(strstr(err, "/nonexistent/topo") != NULL, "%s", err);
    m = uniform(2, 1, 1e-6, 1e9);
    hs_sim_t *s = hs_create(&m, NULL, err, sizeof(err));
    ck_assert_msg(s != NULL, "%s", err);
    hs_result_t r;
    ck_assert_int_eq(hs_run(s, HC_COLL_ALLREDUCE, 1024, "NOPE", 0, NULL, &r, err, sizeof(err)),
                     HCCL_E_PARA);
    ck_assert_msg(strstr(err, "unknown allreduce algorithm 'NOPE'") != NULL, "%s", err);
    /* HIER needs several nodes with several ranks or groups */
    ck_assert_int_eq(hs_run(s, HC_COLL_ALLREDUCE, 1024, "HIER", 0, NULL, &r, err, sizeof(err)),
                     HCCL_E_NOT_SUPPORT);
    ck_assert_int_eq(hs_run(s, HC_COLL_BARRIER, 0, NULL, 0, NULL, &r, err, sizeof(err)),
                     HCCL_E_PARA);
    ck_assert_int_eq(hs_replay(s, unmatched, NULL, &r, err, sizeof(err)), HCCL_E_INTERNAL);
    ck_assert_msg(strstr(err, "tag 3") != NULL, "%s", err);
    ck_assert_int_eq(hs_replay(s, deadlock, NULL, &r, err, sizeof(err)), HCCL_E_INTERNAL);
    ck_assert_msg(strstr(err, "never ran") != NULL, "%s", err);
    /* too many steps for the limit: refused, not attempted */
    hs_set_max_steps(s, 3);
    ck_assert_int_eq(hs_run(s, HC_COLL_ALLREDUCE, 1 << 20, "RING", 0, NULL, &r, err,
                            sizeof(err)),
                     HCCL_E_MEMORY);
    ck_assert_msg(strstr(err, "--max-steps") != NULL, "%s", err);
    hs_destroy(s);
    double v;
    ck_assert_int_eq(hs_parse_bw("100Gb/s", &v), 0);
    ck_assert(v == 12.5e9);
    ck_assert_int_eq(hs_parse_bw("300mbit", &v), 0);
    ck_assert(v == 37.5e6);
    ck_assert_int_eq(hs_parse_bw("12.5GB/s", &v), 0);
    ck_assert(v == 12.5e9);
    ck_assert_int_eq(hs_parse_bw("fast", &v), -1);
    ck_assert_int_eq(hs_parse_time("2us", &v), 0);
    ck_assert(fabs(v - 2e-6) < 1e-18);
    ck_assert_int_eq(hs_parse_time("2 us", &v), -1);
}
END_TEST

static Suite *sim_suite(void)
{
    Suite *s = suite_create("sim");
    TCase *tc = tcase_create("sim");
    tcase_add_test(tc, test_ring_analytic);
    tcase_add_test(tc, test_binomial_analytic);
    tcase_add_test(tc, test_contention);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_symmetry);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(sim_suite());
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
