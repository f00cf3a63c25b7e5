/*
 * test/unit/check_shm.c - shared staging across operations: sequences of
 * collectives on one simulated communicator, run through the executor with
 * the loopback transport and simulated staging segments (transport_loop.h).
 *
 * check_sched runs every algorithm once on fresh staging. This program
 * runs what a communicator really sees: many operations back to back over
 * the same two halves, mixing collectives, sizes and algorithms (those
 * that use staging and those that send messages), each rank moving on to
 * its next operation as soon as its own part is done, in random order with
 * random stalls, so that a fast rank runs ahead while a slow one still
 * reads. Every operation's output is checked on every rank afterwards
 * (each has its own buffers), so a rank that overwrote staging a peer was
 * still reading, a flag word that another schedule uses for data, or a
 * stale flag that satisfies a wait, all show up as wrong results, a
 * decreasing flag (the executor fails the operation) or a deadlock.
 *
 * Run-ahead: sequences of tiny Broadcasts (their data and flag in a ring
 * entry of the epoch, coll.h HC_SEG_RING_SLOTS) with one rank that is
 * never a root and moves only when every other is blocked, so that roots
 * run as far ahead as their guard lets them; a guard that let them one
 * operation further overwrites a line the laggard has not read (caught:
 * wrong results).
 *
 * Also: every rank agrees whether an operation uses staging (epochs would
 * diverge otherwise), and the staging used fits the half offered; and
 * every other DIRECT AllReduce runs on a scatter/gather list of 1-6
 * segments in memory of their own (hc_exec_set_iov, HcclAllReduceMulti's
 * gathered path) with SEND and RECV unbound, in-place ops mixing in-place
 * and separate segments; and every other operation writes RECV with
 * non-temporal stores (hc_sched_t.nt_recv, a tuning rule's option nt).
 * The single-copy algorithms (coll/cma.c) take part (the loopback's ranks
 * are one process, so process_vm_readv works), half of their AllReduces
 * as on a communicator with registered buffers (HC_STEP_XREDUCE); in every
 * other sequence every rank's memory counts as registered and mapped, so
 * their READ and WRITE steps are plain copies and XREDUCE folds directly.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algos.h"
#include "coll/coll.h"
#include "coll/shm_util.h"
#include "src/base/cold.h"
#include "src/exec/exec.h"
#include "src/exec/transport_loop.h"

static uint64_t rng;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const hc_coll_t colls[] = {HC_COLL_ALLREDUCE,     HC_COLL_BROADCAST, HC_COLL_REDUCE,
                                  HC_COLL_REDUCESCATTER, HC_COLL_ALLGATHER, HC_COLL_ALLTOALL};
#define NCOLLS (sizeof(colls) / sizeof(colls[0]))

typedef struct {
    hc_coll_t coll;
    const hc_algo_t *algo;
    uint64_t count;
    uint32_t root;
    int in_place, fp; /* fp: float sums (exact small integers), else int32 sums */
    hc_sched_t *s;    /* per rank */
    int32_t **in, **out, **want; /* per rank: SEND, RECV (or NULL), expected RECV */
    uint64_t *in_n, *out_n;      /* elements */
    uint64_t seg;     /* 0: no staging */
} op_t;

static int32_t val(uint32_t op, uint32_t r, uint64_t i)
{
    return (int32_t)((op * 131u + r * 31u + (uint32_t)i * 7u) % 1000u) - 500;
}

static void put(const op_t *o, int32_t *p, uint64_t i, int64_t v)
{
    if (o->fp) {
        float f = (float)v;
        memcpy(&p[i], &f, 4);
    } else {
        p[i] = (int32_t)v;
    }
}

static int uses_in_place(hc_coll_t c)
{
    return c != HC_COLL_BROADCAST;
}

/* Buffers and expected results of operation j for every rank. */
static void setup(op_t *o, uint32_t j, uint32_t n)
{
    const uint64_t c = o->count;
    o->in = calloc(n, sizeof(int32_t *));
    o->out = calloc(n, sizeof(int32_t *));
    o->want = calloc(n, sizeof(int32_t *));
    o->in_n = calloc(n, sizeof(uint64_t));
    o->out_n = calloc(n, sizeof(uint64_t));
    for (uint32_t r = 0; r < n; r++) {
        uint64_t ni = c, no = c;
        switch (o->coll) {
        case HC_COLL_REDUCESCATTER: ni = n * c; break;
        case HC_COLL_ALLGATHER: no = n * c; break;
        case HC_COLL_ALLTOALL: ni = no = n * c; break;
        default: break;
        }
        if (o->coll == HC_COLL_REDUCE && r != o->root)
            no = 0;
        o->in_n[r] = ni;
        o->out_n[r] = no;
        o->in[r] = calloc(ni + 1, 4);
        o->want[r] = calloc(no + 1, 4);
        for (uint64_t i = 0; i < ni; i++)
            put(o, o->in[r], i, val(j, r, i));
        if (o->coll == HC_COLL_BROADCAST) { /* one buffer: root's data, others' garbage */
            for (uint64_t i = 0; i < ni; i++)
                put(o, o->in[r], i, r == o->root ? val(j, r, i) : 7777);
            o->out[r] = o->in[r];
        } else if (o->in_place && no) {
            /* the conventions of coll.h for in-place calls */
            if (o->coll == HC_COLL_ALLGATHER) {
                o->out[r] = calloc(no + 1, 4);
                for (uint64_t i = 0; i < c; i++)
                    put(o, o->out[r], r * c + i, val(j, r, i));
                free(o->in[r]);
                o->in[r] = o->out[r] + r * c;
            } else if (o->coll == HC_COLL_REDUCESCATTER) {
                o->out[r] = o->in[r] + r * c;
            } else {
                o->out[r] = o->in[r];
            }
        } else if (no) {
            o->out[r] = calloc(no + 1, 4);
            for (uint64_t i = 0; i < no; i++)
                o->out[r][i] = 0x5a5a5a5a;
        }
        for (uint64_t i = 0; i < no; i++) {
            int64_t v = 0;
            switch (o->coll) {
            case HC_COLL_ALLREDUCE:
            case HC_COLL_REDUCE:
                for (uint32_t q = 0; q < n; q++)
                    v += val(j, q, i);
                break;
            case HC_COLL_REDUCESCATTER:
                for (uint32_t q = 0; q < n; q++)
                    v += val(j, q, r * c + i);
                break;
            case HC_COLL_BROADCAST:
                v = val(j, o->root, i);
                break;
            case HC_COLL_ALLGATHER:
                v = val(j, (uint32_t)(i / c), i % c);
                break;
            default: /* ALLTOALL: block q comes from rank q's block r */
                v = val(j, (uint32_t)(i / c), r * c + i % c);
                break;
            }
            put(o, o->want[r], i, v);
        }
    }
}

static void teardown(op_t *o, uint32_t n)
{
    for (uint32_t r = 0; r < n; r++) {
        if (o->coll == HC_COLL_ALLGATHER && o->in_place)
            free(o->out[r]);
        else {
            if (o->out[r] != o->in[r] && !(o->in_place && o->coll == HC_COLL_REDUCESCATTER))
                free(o->out[r]);
            free(o->in[r]);
        }
        free(o->want[r]);
        hc_sched_free(&o->s[r]);
    }
    free(o->in);
    free(o->out);
    free(o->want);
    free(o->in_n);
    free(o->out_n);
    free(o->s);
}

/* Pick and build operation j (every rank's schedule). */
/* Run-ahead sequences (see the top): only tiny DIRECT Broadcasts, and the
 * rank that moves only when nothing else can (-1: none). */
static int g_tiny_bcast;
static int g_lag = -1;
static int g_big; /* large operations (test_cold) */

static void make_op(op_t *o, uint32_t j, uint32_t n, uint64_t half)
{
    hc_topo_view_t topo = {0};
    for (;;) {
        memset(o, 0, sizeof(*o));
        o->coll = g_tiny_bcast ? HC_COLL_BROADCAST : colls[rnd() % NCOLLS];
        int na;
        const hc_algo_t *al = hc_coll_algos(o->coll, &na);
        o->algo = &al[g_tiny_bcast ? HC_BCAST_DIRECT : rnd() % (uint64_t)na];
        const int per_block = o->coll == HC_COLL_REDUCESCATTER ||
                              o->coll == HC_COLL_ALLGATHER || o->coll == HC_COLL_ALLTOALL;
        /* tiny, a few lines, and several slots of the half */
        const uint64_t sizes[] = {1, 3, 14, 15, 64, 200, 1000, 3 * half / 4};
        const uint64_t big[] = {16411, 3 * half / 8, half / 2 + 17, 3 * half / 4}; /* g_big */
        o->count = g_tiny_bcast ? 1 + rnd() % (HC_SHM_RING_MAX / 4)
                   : g_big      ? big[rnd() % 4] * (per_block ? n : 1) + rnd() % 5
                                : sizes[rnd() % 8] + rnd() % 5;
        if (per_block)
            o->count = (o->count + n - 1) / n;
        if (o->count == 0)
            o->count = 1;
        o->root = (uint32_t)(rnd() % n);
        if (g_tiny_bcast && g_lag >= 0 && o->root == (uint32_t)g_lag) /* never the laggard: */
            o->root = (o->root + 1 + (uint32_t)(rnd() % (n - 1))) % n; /* roots run ahead */
        o->in_place = uses_in_place(o->coll) && (rnd() & 1);
        o->fp = (int)(rnd() & 1);
        hc_coll_args_t a = {.coll = o->coll, .rank = 0, .nranks = n, .root = o->root,
                            .count = o->count, .esize = 4,
                            .dtype = o->fp ? HCCL_DATA_TYPE_FP32 : HCCL_DATA_TYPE_INT32,
                            .op = HCCL_REDUCE_SUM, .in_place = o->in_place,
                            .shm_bytes = half, .oversub = (int)(j & 1),
                            .cma = 1, /* the loopback's ranks are one process */
                            .registered = (int)(rnd() & 1), .topo = &topo};
        const uint8_t nt = (uint8_t)(rnd() & 1);
        a.nt_recv = nt;
        if (o->algo->usable && o->algo->usable(&a))
            continue;
        o->s = calloc(n, sizeof(hc_sched_t));
        for (uint32_t r = 0; r < n; r++) {
            a.rank = r;
            a.in_place = o->in_place && (o->coll != HC_COLL_REDUCE || r == o->root);
            hc_sched_init(&o->s[r], 4);
            int rc = o->algo->build(&a, &o->s[r]);
            ck_assert_msg(rc == HCCL_SUCCESS && o->s[r].err == 0, "op %u %s/%s n=%u count=%llu: "
                          "build failed on rank %u (%d)", j, hc_coll_name(o->coll),
                          o->algo->name, n, (unsigned long long)o->count, r, rc);
            o->s[r].nt_recv = nt;
            ck_assert_msg(o->s[r].seg_bytes <= half, "%s/%s uses %llu B of a %llu B half",
                          hc_coll_name(o->coll), o->algo->name,
                          (unsigned long long)o->s[r].seg_bytes, (unsigned long long)half);
            ck_assert_msg((o->s[r].seg_bytes != 0) == (o->s[0].seg_bytes != 0),
                          "%s/%s n=%u: rank %u and rank 0 disagree on using staging",
                          hc_coll_name(o->coll), o->algo->name, n, r);
        }
        o->seg = o->s[0].seg_bytes;
        setup(o, j, n);
        return;
    }
}

/* HcclAllReduceMulti's gathered path: a DIRECT AllReduce whose SEND and
 * RECV are a scatter/gather list (hc_exec_set_iov). Every other such op
 * runs on 1-6 segments cut at random element boundaries, each in memory of
 * its own (copied from SEND, copied back into RECV when done, so the
 * ordinary check applies); in an in-place op, some segments in place and
 * some not (the schedule is then built in place, as fusion does). */
typedef struct {
    hc_iov_t v[6];
    uint32_t n;
} iov_run_t;

static int iov_eligible(const op_t *o)
{
    return o->coll == HC_COLL_ALLREDUCE && o->seg && strcmp(o->algo->name, "DIRECT") == 0;
}

static void iov_make(iov_run_t *it, const op_t *o, uint32_t r)
{
    const uint64_t bytes = o->count * 4;
    uint64_t cuts[7];
    uint32_t nc = 1 + (uint32_t)(rnd() % 6);
    if (nc > o->count)
        nc = (uint32_t)o->count;
    cuts[0] = 0;
    for (uint32_t i = 1; i < nc; i++)
        cuts[i] = (rnd() % o->count) * 4;
    cuts[nc] = bytes;
    for (uint32_t i = 1; i < nc; i++) /* sort the inner cuts */
        for (uint32_t k = i; k > 1 && cuts[k] < cuts[k - 1]; k--) {
            uint64_t t = cuts[k];
            cuts[k] = cuts[k - 1];
            cuts[k - 1] = t;
        }
    it->n = 0;
    for (uint32_t i = 0; i < nc; i++) {
        const uint64_t len = cuts[i + 1] - cuts[i];
        if (len == 0)
            continue;
        hc_iov_t *v = &it->v[it->n++];
        char *snd = malloc(len);
        memcpy(snd, (const char *)o->in[r] + cuts[i], len);
        v->send = snd;
        v->recv = o->in_place && (rnd() & 1) ? snd : malloc(len);
        if (v->recv != snd)
            memset(v->recv, 0x5a, len);
        v->off = cuts[i];
        v->bytes = len;
    }
}

static void iov_finish(iov_run_t *it, const op_t *o, uint32_t r)
{
    int32_t *dst = o->out[r] ? o->out[r] : o->in[r];
    for (uint32_t i = 0; i < it->n; i++) {
        hc_iov_t *v = &it->v[i];
        memcpy((char *)dst + v->off, v->recv, v->bytes);
        if (v->recv != v->send)
            free(v->recv);
        free((void *)v->send);
    }
    it->n = 0;
}

/* One sequence of nops operations on n ranks with halves of `half` bytes;
 * shm_only: draw only algorithms that use staging. */
static void run_sequence(uint32_t n, uint64_t half, uint32_t nops, uint64_t seed, int shm_only)
{
    rng = seed * 0x9e3779b97f4a7c15ull + n * 1315423911u + half + 1;
    op_t *ops = calloc(nops, sizeof(op_t));
    for (uint32_t j = 0; j < nops; j++) {
        do {
            if (ops[j].s)
                teardown(&ops[j], n);
            make_op(&ops[j], j, n, half);
        } while (shm_only && n > 1 && ops[j].seg == 0);
    }
    hc_loop_t *lp = hc_loop_create(n);
    ck_assert_ptr_nonnull(lp);
    ck_assert_int_eq(hc_loop_shm_alloc(lp, half), HCCL_SUCCESS);
    /* operations with args.registered: in every other sequence mapped */
    ck_assert_int_eq(hc_loop_shm_registered(lp, (int)(seed / 2 % 2)), HCCL_SUCCESS);
    /* staging as a region reused from an older communicator leaves it:
     * data words anything (all ones: a stale data word read as a flag
     * would satisfy any wait), flag words below this epoch (0) */
    for (uint32_t r = 0; r < n; r++)
        for (uint32_t p = 0; p < 2; p++)
            memset(hc_loop_shm_half(lp, r, p) + HC_SHM_DATA, 0xff, half - HC_SHM_DATA);
    /* every other sequence: a communicator whose first epoch follows older
     * ones, whose flags (any value) are left in the flag words */
    const uint64_t e0 = seed % 2 ? 1 : 1000;
    hc_loop_shm_epoch0(lp, e0);
    if (e0 > 1)
        for (uint32_t r = 0; r < n; r++)
            for (uint32_t p = 0; p < 2; p++) {
                uint64_t *h = (uint64_t *)hc_loop_shm_half(lp, r, p);
                for (uint64_t w = 0; w < HC_SHM_DATA / 8; w++)
                    h[w] = (e0 - 1 - rnd() % 3) << 32 | (rnd() & 0xffff);
            }

    hc_exec_t *ex = calloc(n, sizeof(hc_exec_t));
    uint32_t *cur = calloc(n, sizeof(uint32_t));   /* operation each rank is at */
    uint64_t *epoch = calloc(n, sizeof(uint64_t)); /* last epoch each rank used */
    for (uint32_t r = 0; r < n; r++)
        epoch[r] = e0 - 1;
    uint32_t *perm = calloc(n, sizeof(uint32_t));
    int *running = calloc(n, sizeof(int));
    iov_run_t *iv = calloc(n, sizeof(iov_run_t));
    uint32_t done = 0;
    int calm = 0;
    for (uint32_t r = 0; r < n; r++)
        perm[r] = r;
    while (done < n) {
        for (uint32_t i = n; i > 1; i--) {
            uint32_t k = (uint32_t)(rnd() % i), t = perm[i - 1];
            perm[i - 1] = perm[k];
            perm[k] = t;
        }
        int moved = 0;
        for (uint32_t pi = 0; pi < n; pi++) {
            const uint32_t r = perm[pi];
            if (cur[r] == nops)
                continue;
            if (!calm && rnd() % 4 == 0) /* stall: others run ahead */
                continue;
            if (!calm && (int)r == g_lag) /* the laggard: only when all else waits */
                continue;
            op_t *o = &ops[cur[r]];
            if (!running[r]) {
                const int use_iov = iov_eligible(o) && (cur[r] + seed) % 2;
                /* on a list, SEND and RECV are unbound: a step that missed
                 * the list would fault instead of reading the right data */
                void *bufs[HC_NBUFS] = {use_iov ? NULL : o->in[r], use_iov ? NULL : o->out[r],
                                        NULL};
                if (o->s[r].tmp_bytes) /* freed below through ex[r].base */
                    bufs[HC_BUF_TMP] = malloc(o->s[r].tmp_bytes);
                int rc = hc_exec_start(&ex[r], &o->s[r], bufs, &hc_loop_ops, hc_loop_tctx(lp, r),
                                       r, 1, cur[r] % 200, o->fp ? HCCL_DATA_TYPE_FP32
                                                                 : HCCL_DATA_TYPE_INT32,
                                       HCCL_REDUCE_SUM, NULL);
                ck_assert_int_eq(rc, HCCL_SUCCESS);
                if (use_iov) {
                    iov_make(&iv[r], o, r);
                    ck_assert_int_eq(hc_exec_set_iov(&ex[r], iv[r].v, iv[r].n), HCCL_SUCCESS);
                }
                if (o->seg)
                    hc_loop_shm_bind(lp, r, ++epoch[r], &ex[r]);
                running[r] = 1;
                moved = 1;
            }
            uint32_t before = ex[r].ndone + ex[r].nissued;
            int rc = hc_exec_progress(&ex[r]);
            if (ex[r].ndone + ex[r].nissued != before)
                moved = 1;
            if (rc == HCCL_E_AGAIN)
                continue;
            ck_assert_msg(rc == HCCL_SUCCESS, "n=%u half=%llu seed=%llu: op %u (%s/%s count "
                          "%llu) failed on rank %u: %d", n, (unsigned long long)half,
                          (unsigned long long)seed, cur[r], hc_coll_name(o->coll),
                          o->algo->name, (unsigned long long)o->count, r, rc);
            if (o->seg)
                hc_loop_shm_done(lp, r, &ex[r]);
            if (iv[r].n)
                iov_finish(&iv[r], o, r);
            free(ex[r].base[HC_BUF_TMP]);
            hc_exec_fini(&ex[r]);
            running[r] = 0;
            if (++cur[r] == nops)
                done++;
            moved = 1;
        }
        if (moved) {
            calm = 0;
            continue;
        }
        if (!calm) {
            calm = 1;
            continue;
        }
        char what[300] = "";
        for (uint32_t r = 0; r < n; r++)
            if (running[r]) {
                hc_exec_describe_wait(&ex[r], what, sizeof(what), NULL);
                ck_abort_msg("n=%u half=%llu seed=%llu: deadlock; rank %u at op %u (%s/%s "
                             "count %llu): %s", n, (unsigned long long)half,
                             (unsigned long long)seed, r, cur[r],
                             hc_coll_name(ops[cur[r]].coll), ops[cur[r]].algo->name,
                             (unsigned long long)ops[cur[r]].count, what);
            }
        ck_abort_msg("deadlock with nothing running");
    }
    for (uint32_t j = 0; j < nops; j++) {
        op_t *o = &ops[j];
        for (uint32_t r = 0; r < n; r++)
            for (uint64_t i = 0; i < o->out_n[r]; i++)
                if (o->out[r][i] != o->want[r][i])
                    ck_abort_msg("n=%u half=%llu seed=%llu: op %u %s/%s count %llu root %u "
                                 "%s%s: rank %u element %llu is %d, want %d (bits)", n,
                                 (unsigned long long)half, (unsigned long long)seed, j,
                                 hc_coll_name(o->coll), o->algo->name,
                                 (unsigned long long)o->count, o->root,
                                 o->in_place ? "in-place" : "out-of-place",
                                 o->fp ? " float" : "", r, (unsigned long long)i,
                                 o->out[r][i], o->want[r][i]);
        teardown(o, n);
    }
    hc_loop_destroy(lp);
    free(ex);
    free(cur);
    free(epoch);
    free(perm);
    free(running);
    free(iv);
    free(ops);
}

START_TEST(test_sequences)
{
    static const uint32_t ns[] = {1, 2, 3, 4, 5, 8, 13, 64};
    const uint32_t n = ns[_i];
    for (uint64_t seed = 1; seed <= (n > 16 ? 2u : 12u); seed++)
        run_sequence(n, HC_SHM_DATA + ((seed & 1) ? 3072 : 11264), n > 16 ? 12 : 30, seed,
                     (int)(seed % 3 == 0)); /* 3 or 11 KiB of data room: many chunks */
}
END_TEST

/* Staging-only sequences with halves just above the minimum: many chunks,
 * every slot reused many times within and across operations. */
START_TEST(test_tight)
{
    static const uint32_t ns[] = {2, 3, 4, 7};
    for (uint64_t seed = 100; seed < 106; seed++)
        run_sequence(ns[_i], HC_SHM_MIN_HALF + 1024, 24, seed, 1);
}
END_TEST

/* Tiny Broadcasts with a laggard: roots run ahead up to their guard. */
START_TEST(test_runahead)
{
    static const uint32_t ns[] = {2, 3, 4, 5};
    g_tiny_bcast = 1;
    for (uint64_t seed = 200; seed < 204; seed++) {
        g_lag = (int)(seed % ns[_i]);
        run_sequence(ns[_i], HC_SHM_MIN_HALF + 4096, 4 * HC_SEG_RING_SLOTS + 16, seed, 1);
    }
    g_tiny_bcast = 0;
    g_lag = -1;
}
END_TEST

/* Large operations whose writes into RECV go the streamed way after the
 * sample (src/base/cold.h, forced: the sample cannot be made slow on purpose),
 * then the same with the sample never slow. */
START_TEST(test_cold)
{
    static const uint32_t ns[] = {2, 3, 5};
    g_big = 1;
    for (int mode = 1; mode >= -1; mode -= 2) {
        hc_cold_force(mode);
        for (uint64_t seed = 300; seed < 303; seed++)
            run_sequence(ns[_i], 1u << 19, 8, seed, 1);
    }
    hc_cold_force(0);
    g_big = 0;
}
END_TEST

int main(void)
{
    Suite *su = suite_create("shm");
    TCase *tc = tcase_create("sequences");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_sequences, 0, 8);
    tcase_add_loop_test(tc, test_tight, 0, 4);
    tcase_add_loop_test(tc, test_runahead, 0, 4);
    tcase_add_loop_test(tc, test_cold, 0, 3);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
