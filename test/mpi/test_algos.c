/*
 * test/mpi/test_algos.c - every algorithm of every collective, forced one
 * at a time, on real ranks (public API only), and deterministic mode.
 *
 * Part 1: for each collective and each algorithm name (some aliases), a
 * communicator over every rank (a sub-communicator with its own
 * HcclCommConfig) whose hcclAlgo forces it
 * ("allreduce=level0:NA;level1:DBTREE"); then the collective over a few
 * counts (0, 1, around n, and sizes that cut into several chunks), roots
 * and in-place settings, bit for bit against the references of refcheck.c
 * (inputs exact in any order; guard zones checked). An algorithm that
 * cannot run here (TORUS2D on a prime rank count, HIER on a flat topology,
 * BRUCK for AlltoAllV) falls back with a warning: the result must still be
 * right. An unknown name must fail the communicator with HCCL_E_PARA.
 *
 * Part 2: deterministic mode (hcclDeterministic = 1). Float, fp16 and bf16
 * sums of arbitrary values (whose rounding depends on the order), through
 * every forced AllReduce algorithm, both Reduce and both ReduceScatter
 * algorithms: every result must equal, bit for bit, the canonical order
 * evaluated locally from all ranks' inputs (docs/ALGORITHMS.md), so they
 * are identical across algorithms, sizes and runs. On 3+ ranks the test
 * also shows that the inputs are order-sensitive (the sum taken from the
 * last rank to the first differs somewhere).
 *
 * References come from the inputs regenerated locally (refcheck.c,
 * rc_reference_reduce_gen), never from MPI between hcomm operations: Open
 * MPI moves a message it has completed locally only while the sender is
 * inside an MPI call, so a rank that leaves an MPI collective with its
 * last message still queued and enters an hcomm collective leaves a peer
 * stuck in MPI, and the hcomm collective that peer owes data to stalls
 * until HCCL_EXEC_TIMEOUT (docs/CLUSTER.md, "Two libraries, one thread").
 *
 * Usage: test_algos [-v] [-c OP]. -c: part 1 for collective OP only
 * (allreduce, broadcast, ...; an unknown OP runs none), then part 2
 * (test/mpi/cluster.sh: every AllReduce algorithm across hosts). Exit status
 * 0 if every check passed.
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refcheck.h"

#define MAX_PRINTED 20

static int rank, nranks, verbose;
static long checks, failures;
static uint64_t seed = 20240917;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    failures++;
    if (failures > MAX_PRINTED)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rank %d: FAIL ", rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* got vs exp over count elements; guard zones of b */
static void compare(const char *what, const char *algo, uint64_t count, const void *got,
                    const void *exp, HcclDataType t, const rc_buf_t *b)
{
    checks++;
    long d = rc_first_diff(got, exp, count, rc_esize(t));
    if (d >= 0) {
        char g[96], e[96];
        rc_format_elem(g, sizeof(g), got, (size_t)d, t);
        rc_format_elem(e, sizeof(e), exp, (size_t)d, t);
        fail("%s %s count=%llu: element %ld: got %s, want %s", what, algo,
             (unsigned long long)count, d, g, e);
    }
    if (b && rc_buf_guard_check(b) != 0)
        fail("%s %s count=%llu: guard zone overwritten", what, algo, (unsigned long long)count);
}

static void check_rc(const char *what, const char *algo, HcclResult rc)
{
    if (rc != HCCL_SUCCESS)
        fail("%s %s: returned %d (%s)", what, algo, (int)rc, HcclGetErrorString(rc));
}

/* ------------------------------------------------------------ collectives */

static void t_allreduce(HcclComm comm, const char *algo)
{
    const uint64_t counts[] = {0, 1, (uint64_t)nranks + 1, 40009};
    const struct {
        HcclDataType t;
        HcclReduceOp op;
    } tops[] = {{HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM}, {HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MAX}};
    /* float sum in and out of place; int max once, at n+1 */
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++)
        for (size_t ti = 0; ti < (ci == 2 ? 2u : 1u); ti++)
            for (int ip = 0; ip < 2 - (int)ti; ip++) {
                const uint64_t c = counts[ci];
                const size_t es = rc_esize(tops[ti].t);
                rc_buf_t sb, rb;
                void *in = malloc(c * es + 1), *ref = malloc(c * es + 1);
                rc_buf_alloc(&sb, c * es, es);
                rc_buf_alloc(&rb, c * es, es);
                rc_fill_reduce(in, c, tops[ti].t, tops[ti].op, rank, nranks, seed + c);
                memcpy(sb.p, in, c * es);
                rc_buf_poison(&rb, 3);
                rc_reference_reduce_gen(ref, c, tops[ti].t, tops[ti].op, nranks, seed + c);
                void *out = ip ? sb.p : rb.p;
                check_rc("allreduce", algo,
                         HcclAllReduce(sb.p, out, c, tops[ti].t, tops[ti].op, comm, NULL));
                compare(ip ? "allreduce(in place)" : "allreduce", algo, c, out, ref, tops[ti].t,
                        ip ? &sb : &rb);
                rc_buf_free(&sb);
                rc_buf_free(&rb);
                free(in);
                free(ref);
            }
}

static void t_broadcast(HcclComm comm, const char *algo)
{
    const uint64_t counts[] = {1, 70001};
    const uint32_t roots[] = {0, (uint32_t)nranks - 1};
    for (size_t ci = 0; ci < 2; ci++)
        for (int ri = 0; ri < (nranks > 1 ? 2 : 1); ri++) {
            const uint64_t c = counts[ci], bytes = c * 4;
            const uint32_t root = roots[ri];
            rc_buf_t b;
            void *exp = malloc(bytes);
            rc_buf_alloc(&b, bytes, 4);
            rc_fill_bytes(exp, bytes, (int)root, seed + c);
            if ((uint32_t)rank == root)
                memcpy(b.p, exp, bytes);
            else
                rc_buf_poison(&b, 5);
            check_rc("broadcast", algo,
                     HcclBroadcast(b.p, c, HCCL_DATA_TYPE_FP32, root, comm, NULL));
            compare("broadcast", algo, c, b.p, exp, HCCL_DATA_TYPE_UINT32, &b);
            rc_buf_free(&b);
            free(exp);
        }
}

static void t_reduce(HcclComm comm, const char *algo)
{
    const uint64_t counts[] = {1, 40009};
    const uint32_t roots[] = {0, (uint32_t)nranks - 1};
    for (size_t ci = 0; ci < 2; ci++)
        for (int ri = 0; ri < (nranks > 1 ? 2 : 1); ri++) {
            const uint64_t c = counts[ci];
            const uint32_t root = roots[ri];
            rc_buf_t sb, rb;
            void *ref = malloc(c * 4);
            rc_buf_alloc(&sb, c * 4, 4);
            rc_buf_alloc(&rb, c * 4, 4);
            rc_fill_reduce(sb.p, c, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, rank, nranks, seed + c);
            rc_buf_poison(&rb, 7);
            rc_reference_reduce_gen(ref, c, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, nranks,
                                    seed + c);
            check_rc("reduce", algo,
                     HcclReduce(sb.p, (uint32_t)rank == root ? rb.p : NULL, c,
                                HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, root, comm, NULL));
            if ((uint32_t)rank == root)
                compare("reduce", algo, c, rb.p, ref, HCCL_DATA_TYPE_FP32, &rb);
            rc_buf_free(&sb);
            rc_buf_free(&rb);
            free(ref);
        }
}

static void t_reducescatter(HcclComm comm, const char *algo)
{
    const uint64_t counts[] = {1, 8193};
    for (size_t ci = 0; ci < 2; ci++)
        for (int ip = 0; ip < 2; ip++) {
            const uint64_t c = counts[ci], all = c * (uint64_t)nranks;
            rc_buf_t sb, rb;
            void *in = malloc(all * 4), *ref = malloc(all * 4);
            rc_buf_alloc(&sb, all * 4, 4);
            rc_buf_alloc(&rb, c * 4, 4);
            rc_fill_reduce(in, all, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, rank, nranks, seed + c);
            memcpy(sb.p, in, all * 4);
            rc_buf_poison(&rb, 9);
            rc_reference_reduce_gen(ref, all, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, nranks,
                                    seed + c);
            void *out = ip ? (void *)((char *)sb.p + (uint64_t)rank * c * 4) : (void *)rb.p;
            check_rc("reducescatter", algo,
                     HcclReduceScatter(sb.p, out, c, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm,
                                       NULL));
            compare(ip ? "reducescatter(in place)" : "reducescatter", algo, c, out,
                    (char *)ref + (uint64_t)rank * c * 4, HCCL_DATA_TYPE_FP32, ip ? &sb : &rb);
            rc_buf_free(&sb);
            rc_buf_free(&rb);
            free(in);
            free(ref);
        }
}

static void t_allgather(HcclComm comm, const char *algo)
{
    const uint64_t counts[] = {1, 8193};
    for (size_t ci = 0; ci < 2; ci++)
        for (int ip = 0; ip < 2; ip++) {
            const uint64_t c = counts[ci], blk = c * 4;
            rc_buf_t sb, rb;
            char *exp = malloc(blk * (uint64_t)nranks);
            for (int q = 0; q < nranks; q++)
                rc_fill_bytes(exp + (uint64_t)q * blk, blk, q, seed + c);
            rc_buf_alloc(&sb, blk, 4);
            rc_buf_alloc(&rb, blk * (uint64_t)nranks, 4);
            rc_buf_poison(&rb, 11);
            memcpy(sb.p, exp + (uint64_t)rank * blk, blk);
            void *in = sb.p;
            if (ip) {
                in = (char *)rb.p + (uint64_t)rank * blk;
                memcpy(in, sb.p, blk);
            }
            check_rc("allgather", algo,
                     HcclAllGather(in, rb.p, c, HCCL_DATA_TYPE_FP32, comm, NULL));
            compare(ip ? "allgather(in place)" : "allgather", algo, c * (uint64_t)nranks, rb.p,
                    exp, HCCL_DATA_TYPE_UINT32, &rb);
            rc_buf_free(&sb);
            rc_buf_free(&rb);
            free(exp);
        }
}

/* block from s to d: bytes of "rank" s * 4096 + d */
static void a2a_block(void *p, uint64_t bytes, int s, int d, uint64_t c)
{
    rc_fill_bytes(p, bytes, s * 4096 + d, seed + c);
}

static void t_alltoall(HcclComm comm, const char *algo)
{
    const uint64_t counts[] = {1, 2049};
    for (size_t ci = 0; ci < 2; ci++) {
        const uint64_t c = counts[ci], blk = c * 4, all = blk * (uint64_t)nranks;
        rc_buf_t sb, rb;
        char *exp = malloc(all);
        rc_buf_alloc(&sb, all, 4);
        rc_buf_alloc(&rb, all, 4);
        rc_buf_poison(&rb, 13);
        for (int q = 0; q < nranks; q++) {
            a2a_block((char *)sb.p + (uint64_t)q * blk, blk, rank, q, c);
            a2a_block(exp + (uint64_t)q * blk, blk, q, rank, c);
        }
        check_rc("alltoall", algo,
                 HcclAlltoAll(sb.p, c, HCCL_DATA_TYPE_FP32, rb.p, c, HCCL_DATA_TYPE_FP32, comm,
                              NULL));
        compare("alltoall", algo, c * (uint64_t)nranks, rb.p, exp, HCCL_DATA_TYPE_UINT32, &rb);
        rc_buf_free(&sb);
        rc_buf_free(&rb);
        free(exp);
    }
    /* AlltoAllV through the same forced name (BRUCK falls back) */
    uint64_t *sc = calloc((size_t)nranks, 8), *sd = calloc((size_t)nranks, 8);
    uint64_t *rcn = calloc((size_t)nranks, 8), *rd = calloc((size_t)nranks, 8);
    uint64_t stot = 0, rtot = 0;
    for (int q = 0; q < nranks; q++) {
        sc[q] = (uint64_t)((rank + 2 * q) % 5) * 37;
        rcn[q] = (uint64_t)((q + 2 * rank) % 5) * 37;
        sd[q] = stot;
        rd[q] = rtot;
        stot += sc[q];
        rtot += rcn[q];
    }
    rc_buf_t sb, rb;
    char *exp = malloc(rtot * 4 + 1);
    rc_buf_alloc(&sb, stot * 4, 4);
    rc_buf_alloc(&rb, rtot * 4, 4);
    rc_buf_poison(&rb, 17);
    for (int q = 0; q < nranks; q++) {
        a2a_block((char *)sb.p + sd[q] * 4, sc[q] * 4, rank, q, 777);
        a2a_block(exp + rd[q] * 4, rcn[q] * 4, q, rank, 777);
    }
    check_rc("alltoallv", algo,
             HcclAlltoAllV(sb.p, sc, sd, HCCL_DATA_TYPE_FP32, rb.p, rcn, rd, HCCL_DATA_TYPE_FP32,
                           comm, NULL));
    compare("alltoallv", algo, rtot, rb.p, exp, HCCL_DATA_TYPE_UINT32, &rb);
    rc_buf_free(&sb);
    rc_buf_free(&rb);
    free(exp);
    free(sc);
    free(sd);
    free(rcn);
    free(rd);
}

static const struct {
    const char *op;
    void (*run)(HcclComm, const char *);
    const char *names[12];
} cases[] = {
    {"allreduce", t_allreduce,
     {"RING", "RD", "DOUBLE_BINARY_TREE", "2D-TORUS", "H-D_R", "HIER", "DIRECT", "CMA", NULL}},
    {"broadcast", t_broadcast, {"BINOMIAL", "PIPELINE", "SCATTER_ALLGATHER", "HIER", "DIRECT",
                                "CMA", NULL}},
    {"reduce", t_reduce, {"BINOMIAL", "RS_GATHER", NULL}},
    {"reducescatter", t_reducescatter, {"RING", "HD", "HIER", "DIRECT", NULL}},
    {"allgather", t_allgather, {"RING", "RD", "BRUCK", "HIER", "DIRECT", "CMA", NULL}},
    {"alltoall", t_alltoall, {"PAIRWISE", "BRUCK", "DIRECT", "CMA", NULL}},
};

/* A communicator over every rank with its own configuration: a
 * sub-communicator of `world` (no new connections, and the shared-memory
 * setup of world is reused: a fresh HcclCommInitMpiConfig per algorithm
 * costs seconds at 8 oversubscribed ranks). */
static HcclComm world;
static uint32_t *world_ids;
static uint64_t next_sub_id = 1000;

static int make_comm(const char *algo_value, int det, HcclComm *comm)
{
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    snprintf(cfg.hcclAlgo, sizeof(cfg.hcclAlgo), "%s", algo_value);
    if (det)
        cfg.hcclDeterministic = 1;
    return (int)HcclCreateSubCommConfig(&world, (uint32_t)nranks, world_ids, next_sub_id++,
                                        (uint32_t)rank, &cfg, comm);
}

/* ------------------------------------------------------------ deterministic mode */

/* The canonical order (coll/prims.h) over all ranks' inputs: pairs
 * (x_2k op x_2k+1) for k < rem, then recursive doubling with the partner
 * at distance p2/2 first, the lower virtual rank on the left. */
static void canonical(void *out, const char *all, uint64_t count, HcclDataType t)
{
    const size_t es = rc_esize(t), b = count * es;
    int p2 = 1;
    while (p2 <= nranks / 2)
        p2 *= 2;
    const int rem = nranks - p2;
    char *v = malloc((size_t)p2 * b + 1);
    for (int q = 0; q < p2; q++) {
        if (q < rem) {
            memcpy(v + q * b, all + 2 * q * b, b);
            rc_reduce_local(v + q * b, all + (2 * q + 1) * b, count, t, HCCL_REDUCE_SUM);
        } else {
            memcpy(v + q * b, all + (q + rem) * b, b);
        }
    }
    for (int m = p2 / 2; m > 0; m /= 2)
        for (int q = 0; q < m; q++)
            rc_reduce_local(v + q * b, v + (q + m) * b, count, t, HCCL_REDUCE_SUM);
    memcpy(out, v, b);
    free(v);
}

static void deterministic(void)
{
    static const HcclDataType types[] = {HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_FP16,
                                         HCCL_DATA_TYPE_BFP16};
    static const uint64_t counts[] = {7, 1000, 70001};
    static const struct {
        const char *op;
        const char *names[10];
    } det[] = {
        {"allreduce", {"RING", "RD", "DBTREE", "TORUS2D", "HD", "HIER", "DIRECT", NULL}},
        {"reduce", {"BINOMIAL", "RS_GATHER", NULL}},
        {"reducescatter", {"RING", "HD", NULL}},
    };
    long sensitive = 0;
    for (size_t di = 0; di < sizeof(det) / sizeof(det[0]); di++)
        for (int ni = 0; det[di].names[ni]; ni++) {
            char value[128];
            HcclComm comm;
            snprintf(value, sizeof(value), "%s=level0:NA;level1:%s", det[di].op,
                     det[di].names[ni]);
            int rc = make_comm(value, 1, &comm);
            if (rc != HCCL_SUCCESS) {
                fail("deterministic %s: init returned %d", value, rc);
                continue;
            }
            /* float at every size, fp16 and bf16 at one (routed to HD) */
            for (size_t ti = 0; ti < 3; ti++)
                for (size_t ci = ti ? 2 : 0; ci < 3; ci++) {
                    const HcclDataType t = types[ti];
                    const size_t es = rc_esize(t);
                    const int rs = strcmp(det[di].op, "reducescatter") == 0;
                    /* ReduceScatter: about counts[ci] in all */
                    const uint64_t c = rs ? counts[ci] / (uint64_t)nranks + 1 : counts[ci];
                    const uint64_t len = rs ? c * (uint64_t)nranks : c;
                    const uint32_t root = (uint32_t)(ci % (size_t)nranks);
                    char *in = malloc(len * es), *all = malloc(len * es * (uint64_t)nranks);
                    char *exp = malloc(len * es), *out = malloc(len * es), *lin = malloc(len * es);
                    rc_set_inexact(1);
                    for (int q = 0; q < nranks; q++) /* every rank's input, regenerated */
                        rc_fill_reduce(all + (uint64_t)q * len * es, len, t, HCCL_REDUCE_SUM, q,
                                       nranks, seed + 31 * c + ti);
                    rc_set_inexact(0);
                    memcpy(in, all + (uint64_t)rank * len * es, len * es);
                    canonical(exp, all, len, t);
                    /* order matters for these inputs: the sum from the last rank to the
                     * first differs */
                    memcpy(lin, all + (uint64_t)(nranks - 1) * len * es, len * es);
                    for (int q = nranks - 2; q >= 0; q--)
                        rc_reduce_local(lin, all + (uint64_t)q * len * es, len, t, HCCL_REDUCE_SUM);
                    sensitive += rc_first_diff(lin, exp, len, es) >= 0;
                    memset(out, 0xd5, len * es);
                    const char *what = det[di].op;
                    if (di == 0) {
                        check_rc(what, value,
                                 HcclAllReduce(in, out, c, t, HCCL_REDUCE_SUM, comm, NULL));
                        compare("deterministic allreduce", value, c, out, exp, t, NULL);
                    } else if (di == 1) {
                        check_rc(what, value,
                                 HcclReduce(in, out, c, t, HCCL_REDUCE_SUM, root, comm, NULL));
                        if ((uint32_t)rank == root)
                            compare("deterministic reduce", value, c, out, exp, t, NULL);
                    } else {
                        check_rc(what, value,
                                 HcclReduceScatter(in, out, c, t, HCCL_REDUCE_SUM, comm, NULL));
                        compare("deterministic reducescatter", value, c, out,
                                exp + (uint64_t)rank * c * es, t, NULL);
                    }
                    free(in);
                    free(all);
                    free(exp);
                    free(out);
                    free(lin);
                }
            HcclCommDestroy(comm);
        }
    if (nranks >= 3) {
        checks++;
        if (sensitive == 0)
            fail("deterministic: no input set was order-sensitive (the test proves nothing)");
    }
    if (rank == 0 && verbose)
        printf("deterministic: %ld of the input sets give other bits in right-to-left order\n",
               sensitive);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *only = NULL; /* -c OP: part 1 for that collective only, then part 2 */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0) {
            verbose = 1;
        } else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else {
            if (rank == 0)
                fprintf(stderr, "usage: test_algos [-v] [-c allreduce|broadcast|reduce|"
                        "reducescatter|allgather|alltoall]\n");
            MPI_Finalize();
            return 2;
        }
    }
    const double t0 = MPI_Wtime();
    world_ids = malloc((size_t)nranks * sizeof(uint32_t));
    for (int i = 0; i < nranks; i++)
        world_ids[i] = (uint32_t)i;
    if (HcclCommInitMpi(MPI_COMM_WORLD, &world) != HCCL_SUCCESS) {
        fprintf(stderr, "rank %d: HcclCommInitMpi failed\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
        for (int i = 0; cases[k].names[i] && (!only || strcmp(only, cases[k].op) == 0); i++) {
            char value[128];
            HcclComm comm;
            snprintf(value, sizeof(value), "%s=level0:NA;level1:%s", cases[k].op,
                     cases[k].names[i]);
            int rc = make_comm(value, 0, &comm);
            checks++;
            if (rc != HCCL_SUCCESS) {
                fail("init with hcclAlgo '%s' returned %d", value, rc);
                continue;
            }
            cases[k].run(comm, cases[k].names[i]);
            HcclCommDestroy(comm);
            if (rank == 0 && verbose)
                printf("%s %s: done at %.1f s\n", cases[k].op, cases[k].names[i],
                       MPI_Wtime() - t0);
        }
    /* HCCL's own spelling for everything at once */
    if (!only) {
        HcclComm comm;
        checks++;
        if (make_comm("level0:NA;level1:H-D_R", 0, &comm) != HCCL_SUCCESS) {
            fail("init with hcclAlgo 'level0:NA;level1:H-D_R' failed");
        } else {
            t_allreduce(comm, "H-D_R (global)");
            t_allgather(comm, "H-D_R (global)");
            HcclCommDestroy(comm);
        }
    }
    /* an unknown name fails the communicator on every rank (both ways) */
    if (!only) {
        HcclComm comm = NULL;
        HcclCommConfig cfg;
        HcclCommConfigInit(&cfg);
        snprintf(cfg.hcclAlgo, sizeof(cfg.hcclAlgo), "allreduce=level0:NA;level1:SPIRAL");
        if (rank == 0)
            printf("test_algos: ERROR lines about SPIRAL are expected next\n");
        fflush(stdout);
        checks += 2;
        int rc = (int)HcclCommInitMpiConfig(MPI_COMM_WORLD, &cfg, &comm);
        if (rc != HCCL_E_PARA)
            fail("init with an unknown algorithm returned %d, want HCCL_E_PARA (%d)", rc,
                 (int)HCCL_E_PARA);
        /* a sub-communicator builds its table at its first operation: the
         * error shows there at the latest */
        rc = make_comm("allreduce=level0:NA;level1:SPIRAL", 0, &comm);
        if (rc == HCCL_SUCCESS) {
            float x = 1, y;
            rc = (int)HcclAllReduce(&x, &y, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL);
            HcclCommDestroy(comm);
        }
        if (rc != HCCL_E_PARA)
            fail("sub-communicator with an unknown algorithm: %d, want HCCL_E_PARA", rc);
    }
    deterministic();
    if (rank == 0 && verbose)
        printf("deterministic: done at %.1f s\n", MPI_Wtime() - t0);

    HcclCommDestroy(world);
    free(world_ids);
    long tot[2] = {checks, failures}, sum[2];
    MPI_Allreduce(tot, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_algos on %d ranks: %ld checks, %ld failures\n", nranks, sum[0], sum[1]);
    MPI_Finalize();
    return sum[1] ? 1 : 0;
}
