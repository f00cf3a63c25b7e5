/*
 * test/unit/check_sched.c - every algorithm of every collective, run for
 * all ranks in one process: build each rank's schedule, run them together
 * through the executor over the rendezvous loopback transport, and compare
 * every byte of every buffer with an image computed here independently of
 * the builders (inputs, outputs from a plain reference, untouched parts,
 * guard bytes around SEND/RECV/TMP).
 *
 * Besides the results, each schedule is checked statically: every region
 * inside its declared buffer (NULL buffers never touched), offsets and
 * lengths in whole elements, tags < 2^20 and unique per (peer, direction),
 * REDUCE operands equal or disjoint; and, for schedules up to a few thousand
 * steps, free of data races: any two steps touching the same bytes (after
 * in-place aliasing), one of them writing, must be ordered by the
 * dependencies, so the result holds for every executor and timing. A second
 * driver progresses ranks in random order with random skips, and results
 * whose bits depend on the reduction order (inexact float sums, float max
 * over signed zeros) must come out bit-identical on every rank and under
 * both drivers.
 *
 * HC_TEST_FULL=1 in the environment adds more roots, counts and ring
 * orders (slower).
 */
#define _GNU_SOURCE /* sched_getcpu, sched_setaffinity */
#include <sched.h>

#include <check.h>
#include <ctype.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/algos.h"
#include "coll/prims.h"
#include "coll/coll.h"
#include "coll/shm_util.h"
#include "src/exec/exec.h"
#include "src/base/reduce.h"
#include "src/exec/transport_loop.h"

#define GUARD 64
#define RACE_MAX_STEPS 4096u

/* Simulated shared staging (coll.h top, hc_loop_shm_alloc): every case
 * offers halves from just above the least the builders need (HC_SHM_MIN_HALF)
 * to 16 KB of data room more (by seed), so that the shared-memory
 * algorithms run like the others and small messages already take several
 * chunks. (Fixed sizes of 8-16 KB would fall below HC_SHM_MIN_HALF, and
 * every shared-memory algorithm would be skipped there.) */
static uint64_t shm_half(uint32_t seed)
{
    static const uint64_t h[4] = {HC_SHM_MIN_HALF + 512, HC_SHM_MIN_HALF + 4096,
                                  HC_SHM_MIN_HALF + 8192, HC_SHM_MIN_HALF + 16384};
    return h[seed % 4];
}

static int full_mode;

/* ------------------------------------------------------------ values */

/* VK_F32_INEXACT: float sums that round, so the order of the operands
 * shows in the bits. VK_F32_MAXZ: float max over -0.0, +0.0 and negative
 * numbers; max(-0, +0) depends on the operand order, so this catches two
 * partners that compute a op b and b op a. Both are compared with the
 * reference numerically, and bit for bit between ranks and drivers. */
typedef enum {
    VK_I32_SUM,
    VK_F32_SUM,
    VK_U8_MAX,
    VK_I32_PROD,
    VK_F32_INEXACT,
    VK_F32_MAXZ,
    VK_F16_SUM, /* deterministic cases only: the reference is the canonical order */
    VK_BF16_SUM,
    VK_LAST
} vk_t;

static const struct {
    HcclDataType dt;
    HcclReduceOp op;
    size_t es;
    const char *name;
} vk_info[VK_LAST] = {
    {HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, 4, "int32/sum"},
    {HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 4, "float/sum"},
    {HCCL_DATA_TYPE_UINT8, HCCL_REDUCE_MAX, 1, "uint8/max"},
    {HCCL_DATA_TYPE_INT32, HCCL_REDUCE_PROD, 4, "int32/prod"},
    {HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 4, "float/sum-inexact"},
    {HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, 4, "float/max-signed-zeros"},
    {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 2, "fp16/sum-inexact"},
    {HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_SUM, 2, "bf16/sum-inexact"},
};

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Input element i of rank r (the bits of one element). Sums stay exact
 * except for VK_F32_INEXACT: |int32| < 2^19, floats are integers below
 * 2^12, products have at most three factors other than +-1; uint8 values
 * stay below 200 so that they never equal the 0xD0.. garbage. */
static uint32_t gen(vk_t vk, uint32_t seed, uint32_t r, uint64_t i)
{
    uint64_t h = mix64(((uint64_t)seed << 48) ^ ((uint64_t)r << 32) ^ i ^ 0x9e3779b97f4a7c15ULL);
    switch (vk) {
    case VK_I32_SUM:
        return (uint32_t)((int32_t)(h % (1u << 20)) - (1 << 19));
    case VK_F32_SUM:
        return fbits((float)((int32_t)(h % 8192) - 4096));
    case VK_U8_MAX:
        return (uint32_t)(h % 200);
    case VK_I32_PROD: {
        int32_t v = (h & 1) ? -1 : 1;
        if (r < 3 && ((h >> 1) & 1))
            v *= 2 + (int32_t)((h >> 2) % 2);
        return (uint32_t)v;
    }
    case VK_F32_MAXZ:
        return fbits(h % 3 == 0 ? -0.0f : h % 3 == 1 ? 0.0f : -(float)(1 + (h >> 8) % 5));
    case VK_F16_SUM: /* |x| in [2^-5, 2^6): sums of up to 1024 stay finite */
        return (uint32_t)(((h >> 20) & 1) << 15 | (10 + (h >> 24) % 11) << 10 | (h & 0x3ff));
    case VK_BF16_SUM:
        return (uint32_t)(((h >> 20) & 1) << 15 | (120 + (h >> 24) % 12) << 7 | (h & 0x7f));
    default: {
        float f = ((float)(h % 1000000) + 0.37f) / 3.0f;
        return fbits((h >> 40) & 1 ? -f : f);
    }
    }
}

/* Reference reduction over all n ranks of input element idx; for floats
 * *mag gets sum |x| (the scale of the rounding error). */
static uint32_t fold(vk_t vk, uint32_t seed, uint32_t n, uint64_t idx, double *mag)
{
    int64_t is = 0, ip = 1;
    double ds = 0, dm = 0;
    uint32_t mx = 0;
    for (uint32_t q = 0; q < n; q++) {
        uint32_t v = gen(vk, seed, q, idx);
        switch (vk) {
        case VK_I32_SUM:
            is += (int32_t)v;
            break;
        case VK_I32_PROD:
            ip *= (int32_t)v;
            break;
        case VK_U8_MAX:
            mx = v > mx ? v : mx;
            break;
        case VK_F32_MAXZ:
            ds = q == 0 || bitsf(v) > ds ? bitsf(v) : ds;
            break;
        default:
            ds += bitsf(v);
            dm += bitsf(v) < 0 ? -bitsf(v) : bitsf(v);
            break;
        }
    }
    if (mag)
        *mag = dm;
    switch (vk) {
    case VK_I32_SUM:
        return (uint32_t)(int32_t)is;
    case VK_I32_PROD:
        return (uint32_t)(int32_t)ip;
    case VK_U8_MAX:
        return mx;
    default:
        return fbits((float)ds);
    }
}

static void put(uint8_t *p, size_t es, uint32_t v)
{
    if (es == 4) {
        memcpy(p, &v, 4);
    } else if (es == 2) {
        uint16_t h = (uint16_t)v;
        memcpy(p, &h, 2);
    } else {
        *p = (uint8_t)v;
    }
}

static uint32_t get(const uint8_t *p, size_t es)
{
    uint32_t v;
    if (es == 4) {
        memcpy(&v, p, 4);
    } else if (es == 2) {
        uint16_t h;
        memcpy(&h, p, 2);
        v = h;
    } else {
        v = *p;
    }
    return v;
}

/* The canonical reduction order of deterministic mode (coll/prims.h),
 * evaluated here with the library's own kernel one element at a time:
 * pairs (x_2k op x_2k+1) for k < rem, then recursive doubling with the
 * partner at distance p2/2 first, the lower virtual rank on the left. */
static uint32_t canon(vk_t vk, uint32_t seed, uint32_t n, uint64_t idx)
{
    static uint8_t v[1024][4];
    const size_t es = vk_info[vk].es;
    const HcclDataType dt = vk_info[vk].dt;
    const HcclReduceOp op = vk_info[vk].op;
    uint32_t p2 = 1;
    while (p2 <= n / 2)
        p2 *= 2;
    const uint32_t rem = n - p2;
    for (uint32_t q = 0; q < p2; q++) {
        uint8_t x[4], y[4];
        if (q < rem) {
            put(x, es, gen(vk, seed, 2 * q, idx));
            put(y, es, gen(vk, seed, 2 * q + 1, idx));
            hc_reduce(v[q], x, y, 1, dt, op);
        } else {
            put(v[q], es, gen(vk, seed, q + rem, idx));
        }
    }
    for (uint32_t m = p2 / 2; m > 0; m /= 2)
        for (uint32_t q = 0; q < m; q++)
            hc_reduce(v[q], v[q], v[q + m], 1, dt, op);
    return get(v[0], es);
}

/* ------------------------------------------------------------ cases */

typedef struct {
    hc_coll_t coll;
    const hc_algo_t *algo;
    uint32_t n, root;
    uint64_t count;
    int in_place;
    uint64_t chunk;
    vk_t vk;
    const uint32_t *ring; /* NULL = 0..n-1 */
    const hc_topo_view_t *topo; /* a whole view instead (then ring unused) */
    int deterministic;    /* args->deterministic */
    int shuffled;         /* random-order driver */
    int uneven;           /* ReduceScatter: blocks of rsv_count elements (args->scounts) */
    uint32_t seed;
} tc_t;

typedef struct {
    uint8_t *raw; /* GUARD + size + GUARD */
    uint8_t *exp; /* expected data afterwards (size) */
    size_t size;
} region_t;

typedef struct {
    region_t reg[2], tmp;
    region_t seg; /* shadow of the staging half: static and race checks only */
    void *bufs[HC_NBUFS];
    size_t bsize[HC_NBUFS]; /* declared size of each buffer */
    hc_sched_t s;
    uint64_t *sc, *sd, *rc, *rd; /* ALLTOALLV */
} rank_t;

static char desc_buf[512];

static const char *describe(const tc_t *t)
{
    snprintf(desc_buf, sizeof(desc_buf),
             "%s/%s n=%u count=%llu root=%u %s chunk=%llu %s%s%s%s%s%s", hc_coll_name(t->coll),
             t->algo->name, t->n, (unsigned long long)t->count, t->root,
             t->in_place ? "in-place" : "out-of-place", (unsigned long long)t->chunk,
             vk_info[t->vk].name, t->ring ? " custom-ring" : "",
             t->topo ? " topology-grid" : "", t->deterministic ? " deterministic" : "",
             t->shuffled ? " shuffled" : "", t->uneven ? " uneven" : "");
    return desc_buf;
}

static uint8_t guard_byte(size_t k)
{
    return (uint8_t)(0x5a ^ (k * 31));
}

static uint8_t garbage_byte(uint32_t r, size_t k)
{
    return (uint8_t)(0xd0 | ((k * 13 + r * 7) & 0x2f));
}

static void region_alloc(region_t *g, size_t size, uint32_t r, int garbage)
{
    g->size = size;
    g->raw = malloc(size + 2 * GUARD);
    g->exp = malloc(size ? size : 1);
    if (g->raw == NULL || g->exp == NULL)
        ck_abort_msg("out of memory (%zu B)", size);
    for (size_t k = 0; k < GUARD; k++) {
        g->raw[k] = guard_byte(k);
        g->raw[GUARD + size + k] = guard_byte(k + 7);
    }
    for (size_t k = 0; k < size; k++)
        g->raw[GUARD + k] = garbage ? garbage_byte(r, k) : 0xe7;
    memcpy(g->exp, g->raw + GUARD, size);
}

static uint8_t *rdata(region_t *g)
{
    return g->raw + GUARD;
}

/* set element i of a region, both now and in the expected image */
static void init_elem(region_t *g, size_t es, uint64_t i, uint32_t v)
{
    put(rdata(g) + i * es, es, v);
    put(g->exp + i * es, es, v);
}

static void expect_elem(region_t *g, size_t es, uint64_t i, uint32_t v)
{
    put(g->exp + i * es, es, v);
}

static void region_free(region_t *g)
{
    free(g->raw);
    free(g->exp);
    g->raw = g->exp = NULL;
}

/* ALLTOALLV counts: block from s to d, in elements, some empty; displs
 * packed with gaps, the receive side in reverse source order. */
static uint64_t v_count(const tc_t *t, uint32_t s, uint32_t d)
{
    uint64_t h = mix64(((uint64_t)s << 32) ^ d ^ t->seed);
    if (h % 4 == 0)
        return 0;
    return (h >> 8) % (t->count + 1);
}

static uint64_t v_gap(uint32_t a, uint32_t b)
{
    return (a * 3u + b) % 3u;
}

/* ReduceScatter's uneven blocks: block q of every rank, in elements: 0,
 * 1, count, 2 count + 1 or anything up to count. */
static uint64_t rsv_count(const tc_t *t, uint32_t q)
{
    uint64_t h = mix64((uint64_t)q ^ ((uint64_t)t->seed << 24));
    switch (h % 5) {
    case 0: return 0;
    case 1: return 1;
    case 2: return t->count;
    case 3: return 2 * t->count + 1;
    default: return (h >> 8) % (t->count + 1);
    }
}

/* Fill the buffers and the expected images of rank r. */
static void setup_rank(const tc_t *t, uint32_t r, rank_t *k, const uint32_t *ref,
                       const uint64_t *const *sdispl_of)
{
    const size_t es = vk_info[t->vk].es;
    const uint64_t c = t->count, n = t->n;
    const vk_t vk = t->vk;
    const uint32_t sd = t->seed, root = t->root;
    const int ip = t->in_place;
    memset(k->bufs, 0, sizeof(k->bufs));
    memset(k->bsize, 0, sizeof(k->bsize));
    region_t *g0 = &k->reg[0], *g1 = &k->reg[1];

    switch (t->coll) {
    case HC_COLL_ALLREDUCE:
        region_alloc(g0, c * es, r, 0);
        for (uint64_t i = 0; i < c; i++)
            init_elem(g0, es, i, gen(vk, sd, r, i));
        k->bufs[HC_BUF_SEND] = rdata(g0);
        if (ip) {
            k->bufs[HC_BUF_RECV] = rdata(g0);
            g1 = g0;
        } else {
            region_alloc(g1, c * es, r, 1);
            k->bufs[HC_BUF_RECV] = rdata(g1);
        }
        for (uint64_t i = 0; i < c; i++)
            expect_elem(g1, es, i, ref[i]);
        k->bsize[HC_BUF_SEND] = k->bsize[HC_BUF_RECV] = c * es;
        break;
    case HC_COLL_BROADCAST:
        region_alloc(g0, c * es, r, r != root);
        for (uint64_t i = 0; i < c; i++) {
            if (r == root)
                init_elem(g0, es, i, gen(vk, sd, root, i));
            expect_elem(g0, es, i, gen(vk, sd, root, i));
        }
        k->bufs[HC_BUF_SEND] = k->bufs[HC_BUF_RECV] = rdata(g0);
        k->bsize[HC_BUF_SEND] = k->bsize[HC_BUF_RECV] = c * es;
        break;
    case HC_COLL_REDUCE:
        region_alloc(g0, c * es, r, 0);
        for (uint64_t i = 0; i < c; i++)
            init_elem(g0, es, i, gen(vk, sd, r, i));
        k->bufs[HC_BUF_SEND] = rdata(g0);
        k->bsize[HC_BUF_SEND] = c * es;
        if (r == root) {
            if (ip) {
                g1 = g0;
            } else {
                region_alloc(g1, c * es, r, 1);
            }
            for (uint64_t i = 0; i < c; i++)
                expect_elem(g1, es, i, ref[i]);
            k->bufs[HC_BUF_RECV] = rdata(g1);
            k->bsize[HC_BUF_RECV] = c * es;
        }
        break;
    case HC_COLL_REDUCESCATTER:
        if (k->sc) { /* uneven: blocks in reverse rank order with gaps */
            const uint64_t end = k->sd[0] + k->sc[0] + v_gap(0, 2), me = k->sc[r];
            region_alloc(g0, end * es, r, 0);
            for (uint64_t i = 0; i < end; i++)
                init_elem(g0, es, i, gen(vk, sd, r, i));
            k->bufs[HC_BUF_SEND] = rdata(g0);
            k->bsize[HC_BUF_SEND] = end * es;
            k->bsize[HC_BUF_RECV] = me * es;
            if (!ip)
                region_alloc(g1, me * es, r, 1);
            else
                g1 = g0;
            k->bufs[HC_BUF_RECV] = ip ? rdata(g0) + k->sd[r] * es : rdata(g1);
            for (uint64_t i = 0; i < me; i++)
                expect_elem(g1, es, (ip ? k->sd[r] : 0) + i, ref[k->sd[r] + i]);
            break;
        }
        region_alloc(g0, n * c * es, r, 0);
        for (uint64_t i = 0; i < n * c; i++)
            init_elem(g0, es, i, gen(vk, sd, r, i));
        k->bufs[HC_BUF_SEND] = rdata(g0);
        k->bsize[HC_BUF_SEND] = n * c * es;
        k->bsize[HC_BUF_RECV] = c * es;
        if (ip) {
            k->bufs[HC_BUF_RECV] = rdata(g0) + r * c * es;
            for (uint64_t i = 0; i < c; i++)
                expect_elem(g0, es, r * c + i, ref[r * c + i]);
        } else {
            region_alloc(g1, c * es, r, 1);
            k->bufs[HC_BUF_RECV] = rdata(g1);
            for (uint64_t i = 0; i < c; i++)
                expect_elem(g1, es, i, ref[r * c + i]);
        }
        break;
    case HC_COLL_ALLGATHER:
        k->bsize[HC_BUF_SEND] = c * es;
        k->bsize[HC_BUF_RECV] = n * c * es;
        if (ip) {
            region_alloc(g0, n * c * es, r, 1);
            for (uint64_t i = 0; i < c; i++)
                init_elem(g0, es, r * c + i, gen(vk, sd, r, i));
            k->bufs[HC_BUF_RECV] = rdata(g0);
            k->bufs[HC_BUF_SEND] = rdata(g0) + r * c * es;
            g1 = g0;
        } else {
            region_alloc(g0, c * es, r, 0);
            for (uint64_t i = 0; i < c; i++)
                init_elem(g0, es, i, gen(vk, sd, r, i));
            region_alloc(g1, n * c * es, r, 1);
            k->bufs[HC_BUF_SEND] = rdata(g0);
            k->bufs[HC_BUF_RECV] = rdata(g1);
        }
        for (uint32_t q = 0; q < n; q++)
            for (uint64_t i = 0; i < c; i++)
                expect_elem(g1, es, q * c + i, gen(vk, sd, q, i));
        break;
    case HC_COLL_SCATTER:
        k->bsize[HC_BUF_RECV] = c * es;
        if (r == root) {
            region_alloc(g0, n * c * es, r, 0);
            for (uint64_t i = 0; i < n * c; i++)
                init_elem(g0, es, i, gen(vk, sd, root, i));
            k->bufs[HC_BUF_SEND] = rdata(g0);
            k->bsize[HC_BUF_SEND] = n * c * es;
            if (ip) {
                k->bufs[HC_BUF_RECV] = rdata(g0) + r * c * es;
                break; /* already holds its block */
            }
        } else {
            region_alloc(g0, 0, r, 0); /* nothing: SEND is NULL */
        }
        region_alloc(g1, c * es, r, 1);
        k->bufs[HC_BUF_RECV] = rdata(g1);
        for (uint64_t i = 0; i < c; i++)
            expect_elem(g1, es, i, gen(vk, sd, root, r * c + i));
        break;
    case HC_COLL_ALLTOALL:
        region_alloc(g0, n * c * es, r, 0);
        for (uint64_t i = 0; i < n * c; i++)
            init_elem(g0, es, i, gen(vk, sd, r, i));
        k->bufs[HC_BUF_SEND] = rdata(g0);
        if (ip) {
            g1 = g0;
        } else {
            region_alloc(g1, n * c * es, r, 1);
        }
        k->bufs[HC_BUF_RECV] = rdata(g1);
        k->bsize[HC_BUF_SEND] = k->bsize[HC_BUF_RECV] = n * c * es;
        for (uint32_t q = 0; q < n; q++)
            for (uint64_t i = 0; i < c; i++)
                expect_elem(g1, es, q * c + i, gen(vk, sd, q, r * c + i));
        break;
    case HC_COLL_ALLTOALLV: {
        uint64_t send_end = k->sd[n - 1] + k->sc[n - 1] + v_gap(r, 9);
        uint64_t recv_end = k->rd[0] + k->rc[0] + v_gap(r, 5);
        region_alloc(g0, send_end * es, r, 0);
        for (uint64_t i = 0; i < send_end; i++)
            init_elem(g0, es, i, gen(vk, sd, r, i));
        region_alloc(g1, recv_end * es, r, 1);
        for (uint32_t q = 0; q < n; q++)
            for (uint64_t i = 0; i < k->rc[q]; i++)
                expect_elem(g1, es, k->rd[q] + i, gen(vk, sd, q, sdispl_of[q][r] + i));
        k->bufs[HC_BUF_SEND] = rdata(g0);
        k->bufs[HC_BUF_RECV] = rdata(g1);
        k->bsize[HC_BUF_SEND] = send_end * es;
        k->bsize[HC_BUF_RECV] = recv_end * es;
        break;
    }
    default: /* BARRIER: no buffers */
        break;
    }
}

/* ------------------------------------------------------------ static checks */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}


/* Where a location is, for the checks: the rank's buffers, its staging
 * half (HC_BUF_SEG, or HC_BUF_PEER naming itself: the shadow region), or
 * NULL for a peer's staging. */
static char *loc_ptr(rank_t *k, uint32_t r, hc_loc_t l)
{
    if (l.buf < HC_NBUFS)
        return (char *)k->bufs[l.buf] + l.off;
    if (l.buf == HC_BUF_SEG || (l.buf == HC_BUF_PEER && l.peer == r))
        return (char *)rdata(&k->seg) + l.off;
    return NULL;
}

/* The new step kinds of shared staging: flags inside the staging used,
 * in whole 8-byte words, WAIT only on others' flags; REDUCE_MULTI's
 * regions inside their buffers and each equal to or disjoint from dst. */
static const char *check_shm_step(const tc_t *t, uint32_t r, rank_t *k, uint32_t i,
                                  char *msg, size_t len)
{
    const hc_sched_t *s = &k->s;
    const hc_step_t *st = &s->steps[i];
    const size_t es = vk_info[t->vk].es;
    const uint64_t half = shm_half(t->seed);
    if (s->seg_bytes > half) {
        snprintf(msg, len, "rank %u: uses %llu B of staging, more than the %llu offered", r,
                 (unsigned long long)s->seg_bytes, (unsigned long long)half);
        return msg;
    }
    if (st->kind == HC_STEP_PUBLISH || st->kind == HC_STEP_WAIT) {
        hc_loc_t f = st->kind == HC_STEP_PUBLISH ? st->dst : st->a;
        int ok = f.off % 8 == 0 && f.off + 8 <= s->seg_bytes &&
                 (f.off >= HC_SEG_BASE || (st->kind == HC_STEP_WAIT && f.off == HC_SEG_DONE)) &&
                 st->bytes <= UINT32_MAX && st->ago % 2 == 0 &&
                 (st->kind == HC_STEP_PUBLISH
                      ? f.buf == HC_BUF_SEG
                      : f.buf == HC_BUF_PEER && st->peer == f.peer &&
                            (f.peer == HC_PEERS_ALL || (f.peer < t->n && f.peer != r)));
        if (st->kind == HC_STEP_WAIT && st->tag) /* the prefetch hint stays in staging */
            ok = ok && st->dst.buf == HC_BUF_PEER &&
                 st->dst.off + (uint64_t)st->tag * 64 <= s->seg_bytes;
        if (!ok) {
            snprintf(msg, len, "rank %u step %u: bad %s flag (buf %u peer %u +%llu)", r, i,
                     st->kind == HC_STEP_PUBLISH ? "PUBLISH" : "WAIT", f.buf, f.peer,
                     (unsigned long long)f.off);
            return msg;
        }
        return NULL;
    }
    if (st->kind == HC_STEP_XREDUCE) {
        /* our SEND (a) folded with the peer's (b) into both RECVs (dst);
         * scratch for the READ in place */
        const int in_place = k->bufs[HC_BUF_SEND] == k->bufs[HC_BUF_RECV];
        int ok = st->peer < t->n && st->peer != r && s->exposes && st->dst.buf == HC_BUF_RECV &&
                 st->a.buf == HC_BUF_SEND && st->b.buf == HC_BUF_SEND &&
                 st->dst.off + st->bytes <= k->bsize[HC_BUF_RECV] &&
                 st->a.off + st->bytes <= k->bsize[HC_BUF_SEND] &&
                 st->b.off + st->bytes <= k->bsize[HC_BUF_SEND] && st->bytes % es == 0 &&
                 (!in_place || s->tmp_bytes >= st->bytes);
        if (!ok) {
            snprintf(msg, len, "rank %u step %u: bad XREDUCE (peer %u, +%llu, %llu B, tmp %llu)",
                     r, i, st->peer, (unsigned long long)st->dst.off,
                     (unsigned long long)st->bytes, (unsigned long long)s->tmp_bytes);
            return msg;
        }
        return NULL;
    }
    if (st->kind == HC_STEP_READ || st->kind == HC_STEP_WRITE) {
        /* ours must be in our buffers; theirs in the same buffer of the
         * peer (every collective with single-copy steps has equal sizes) */
        const hc_loc_t mine = st->kind == HC_STEP_READ ? st->dst : st->a;
        const hc_loc_t theirs = st->kind == HC_STEP_READ ? st->a : st->dst;
        int ok = st->peer < t->n && st->peer != r && s->exposes;
        ok = ok && mine.buf <= HC_BUF_TMP && theirs.buf < HC_BUF_TMP &&
             (st->kind == HC_STEP_READ || theirs.buf == HC_BUF_RECV) &&
             (st->kind == HC_STEP_WRITE || mine.buf != HC_BUF_SEND);
        const uint64_t msize = mine.buf == HC_BUF_TMP ? s->tmp_bytes
                              : mine.buf < HC_BUF_TMP ? k->bsize[mine.buf] : 0;
        ok = ok && mine.off + st->bytes <= msize &&
             theirs.off + st->bytes <= k->bsize[theirs.buf] && k->bufs[mine.buf] != NULL;
        if (!ok) {
            snprintf(msg, len, "rank %u step %u: bad %s (peer %u, buf %u +%llu, %llu B)", r, i,
                     st->kind == HC_STEP_READ ? "READ" : "WRITE", st->peer, theirs.buf,
                     (unsigned long long)theirs.off, (unsigned long long)st->bytes);
            return msg;
        }
        return NULL;
    }
    if (st->kind != HC_STEP_REDUCE_MULTI || st->src_off + st->nsrc > s->nsrcs ||
        (st->nsrc == 0 && (st->a.buf != HC_BUF_PEER || st->a.peer != HC_PEERS_ALL))) {
        snprintf(msg, len, "rank %u step %u: bad kind %u or sources", r, i, st->kind);
        return msg;
    }
    char *d = loc_ptr(k, r, st->dst);
    /* per-rank form: ours (b) and one peer's region stand for all */
    const uint32_t nl = st->nsrc ? st->nsrc : 2;
    for (uint32_t q = 0; q <= nl; q++) {
        hc_loc_t l = q == 0 ? st->dst : st->nsrc ? s->srcs[st->src_off + q - 1]
                                      : q == 1 ? st->b : HC_PEER((r + 1) % t->n, st->a.off);
        uint64_t size = l.buf < HC_NBUFS ? k->bsize[l.buf] : s->seg_bytes;
        if (l.buf == HC_BUF_TMP)
            size = s->tmp_bytes;
        if (l.buf >= HC_NBUFS_ALL || l.off + st->bytes > size ||
            (l.buf == HC_BUF_PEER && l.peer >= t->n) || (q == 0 && l.buf == HC_BUF_PEER) ||
            (st->bytes && l.buf < HC_BUF_TMP && k->bufs[l.buf] == NULL) || l.off % es ||
            st->bytes % es) {
            snprintf(msg, len, "rank %u step %u: REDUCE_MULTI region %u (buf %u [%llu, +%llu))"
                     " invalid", r, i, q, l.buf, (unsigned long long)l.off,
                     (unsigned long long)st->bytes);
            return msg;
        }
        char *o = loc_ptr(k, r, l);
        if (q && o && d && o != d && o < d + st->bytes && d < o + st->bytes) {
            snprintf(msg, len, "rank %u step %u: REDUCE_MULTI operands overlap partially", r, i);
            return msg;
        }
    }
    return NULL;
}

/* Check one rank's schedule; returns NULL or a static message. */
static const char *check_static(const tc_t *t, uint32_t r, rank_t *k, char *msg, size_t len)
{
    const hc_sched_t *s = &k->s;
    const size_t es = vk_info[t->vk].es;
    size_t size[HC_NBUFS];
    memcpy(size, k->bsize, sizeof(size));
    size[HC_BUF_TMP] = s->tmp_bytes;
    uint64_t *keys = malloc(((size_t)s->nsteps + 1) * sizeof(uint64_t) * 2);
    size_t nsend = 0, nrecv = 0;
    uint64_t *rkeys = keys + s->nsteps + 1;
    const char *bad = NULL;
    for (uint32_t i = 0; i < s->nsteps && !bad; i++) {
        const hc_step_t *st = &s->steps[i];
        hc_loc_t loc[3];
        int nl = 0;
        if (st->kind >= HC_STEP_PUBLISH && st->kind < HC_STEP_KINDS) {
            bad = check_shm_step(t, r, k, i, msg, len);
            continue;
        }
        switch (st->kind) {
        case HC_STEP_SEND:
            loc[nl++] = st->a;
            break;
        case HC_STEP_RECV:
            loc[nl++] = st->dst;
            break;
        case HC_STEP_REDUCE:
            loc[nl++] = st->dst;
            loc[nl++] = st->a;
            loc[nl++] = st->b;
            break;
        case HC_STEP_COPY:
            loc[nl++] = st->dst;
            loc[nl++] = st->a;
            break;
        case HC_STEP_NOP:
            break;
        default:
            snprintf(msg, len, "rank %u step %u: bad kind %u", r, i, st->kind);
            bad = msg;
        }
        for (int q = 0; q < nl && !bad; q++) {
            if (loc[q].buf == HC_BUF_SEG || loc[q].buf == HC_BUF_PEER) { /* shared staging */
                if (loc[q].off + st->bytes > k->s.seg_bytes ||
                    k->s.seg_bytes > shm_half(t->seed) ||
                    (loc[q].buf == HC_BUF_PEER && loc[q].peer >= t->n) ||
                    /* a rank writes only its own half */
                    (loc[q].buf == HC_BUF_PEER && q == 0 && st->kind != HC_STEP_SEND)) {
                    snprintf(msg, len, "rank %u step %u: staging region buf %u peer %u "
                             "[%llu, +%llu) invalid", r, i, loc[q].buf, loc[q].peer,
                             (unsigned long long)loc[q].off, (unsigned long long)st->bytes);
                    bad = msg;
                } else if (loc[q].off % es || st->bytes % es) {
                    snprintf(msg, len, "rank %u step %u: offset/length not whole elements", r, i);
                    bad = msg;
                }
                continue;
            }
            if (loc[q].buf >= HC_NBUFS || loc[q].off + st->bytes > size[loc[q].buf] ||
                (st->bytes && k->bufs[loc[q].buf] == NULL && loc[q].buf != HC_BUF_TMP)) {
                snprintf(msg, len, "rank %u step %u: region buf %u [%llu, +%llu) outside %zu B",
                         r, i, loc[q].buf, (unsigned long long)loc[q].off,
                         (unsigned long long)st->bytes, size[loc[q].buf < HC_NBUFS ? loc[q].buf : 0]);
                bad = msg;
            } else if (loc[q].off % es || st->bytes % es) {
                snprintf(msg, len, "rank %u step %u: offset/length not whole elements", r, i);
                bad = msg;
            }
        }
        if (bad)
            break;
        if (st->kind == HC_STEP_SEND || st->kind == HC_STEP_RECV) {
            if (st->peer >= t->n || st->peer == r || st->tag > HC_TAG_MAX) {
                snprintf(msg, len, "rank %u step %u: peer %u / tag %u invalid", r, i, st->peer,
                         st->tag);
                bad = msg;
                break;
            }
            uint64_t key = ((uint64_t)st->peer << 32) | st->tag;
            if (st->kind == HC_STEP_SEND)
                keys[nsend++] = key;
            else
                rkeys[nrecv++] = key;
        }
        if (st->kind == HC_STEP_REDUCE) {
            /* operands equal or disjoint (after aliasing) */
            uintptr_t d = (uintptr_t)loc_ptr(k, r, st->dst);
            for (int q = 1; q < 3; q++) {
                uintptr_t o = (uintptr_t)loc_ptr(k, r, loc[q]);
                if (o && d && o != d && o < d + st->bytes && d < o + st->bytes) {
                    snprintf(msg, len, "rank %u step %u: REDUCE operands overlap partially", r, i);
                    bad = msg;
                }
            }
        }
    }
    if (!bad) {
        qsort(keys, nsend, sizeof(uint64_t), cmp_u64);
        qsort(rkeys, nrecv, sizeof(uint64_t), cmp_u64);
        for (size_t i = 1; i < nsend && !bad; i++)
            if (keys[i] == keys[i - 1]) {
                snprintf(msg, len, "rank %u: two sends to %llu with tag %llu", r,
                         (unsigned long long)(keys[i] >> 32),
                         (unsigned long long)(keys[i] & 0xffffffffu));
                bad = msg;
            }
        for (size_t i = 1; i < nrecv && !bad; i++)
            if (rkeys[i] == rkeys[i - 1]) {
                snprintf(msg, len, "rank %u: two receives from %llu with tag %llu", r,
                         (unsigned long long)(rkeys[i] >> 32),
                         (unsigned long long)(rkeys[i] & 0xffffffffu));
                bad = msg;
            }
    }
    free(keys);
    return bad;
}

/* Data races: steps touching the same bytes (after in-place aliasing), one
 * of them writing, must be ordered by the (transitive) dependencies. With
 * shadow memory per element and the steps in index order (a topological
 * order: dependencies point backwards), it suffices that every access
 * follows the last write before it and precedes the next write after it;
 * every other conflicting pair is then ordered through those writes. */
static int reaches(const uint64_t *reach, uint32_t W, uint32_t from, uint32_t to)
{
    return (reach[(size_t)to * W + from / 64] >> (from % 64)) & 1;
}

typedef struct {
    int32_t *sh[4]; /* per region element: last / next writing step */
    region_t *g[4]; /* SEND/RECV regions, TMP, own staging half */
    size_t es;
} shadow_t;

/* The shadow slots of [p, p+bytes): region index and first element. */
static int locate(const shadow_t *sh, const char *p, uint64_t bytes, size_t *e0)
{
    for (int q = 0; q < 4; q++) {
        const region_t *g = sh->g[q];
        if (g->raw && p >= (char *)g->raw + GUARD && p + bytes <= (char *)g->raw + GUARD + g->size) {
            *e0 = (size_t)(p - ((char *)g->raw + GUARD)) / sh->es;
            return q;
        }
    }
    return -1;
}

static const char *check_races(uint32_t r, rank_t *k, size_t es, char *msg, size_t len)
{
    static const char *kn[HC_STEP_KINDS] = {"SEND", "RECV",    "REDUCE", "COPY",
                                            "NOP",  "PUBLISH", "WAIT",   "REDUCE_MULTI"};
    const hc_sched_t *s = &k->s;
    const uint32_t S = s->nsteps, W = (S + 63) / 64;
    if (S == 0 || S > RACE_MAX_STEPS)
        return NULL;
    uint64_t *reach = calloc((size_t)S * W, sizeof(uint64_t));
    for (uint32_t i = 0; i < S; i++) {
        uint64_t *ri = reach + (size_t)i * W;
        const uint32_t *d = s->deps + s->steps[i].dep_off;
        for (uint32_t q = 0; q < s->steps[i].ndeps; q++) {
            const uint64_t *rd = reach + (size_t)d[q] * W;
            for (uint32_t w = 0; w <= d[q] / 64; w++) /* ancestors have lower indices */
                ri[w] |= rd[w];
            ri[d[q] / 64] |= 1ull << (d[q] % 64);
        }
    }
    shadow_t sh = {.g = {&k->reg[0], &k->reg[1], &k->tmp, &k->seg}, .es = es};
    for (int q = 0; q < 4; q++) {
        size_t ne = sh.g[q]->raw ? sh.g[q]->size / es : 0;
        sh.sh[q] = malloc((ne + 1) * sizeof(int32_t));
    }
    const char *bad = NULL;
    for (int pass = 0; pass < 2 && !bad; pass++) {
        for (int q = 0; q < 4; q++)
            if (sh.g[q]->raw)
                memset(sh.sh[q], 0xff, (sh.g[q]->size / es + 1) * sizeof(int32_t)); /* -1 */
        for (uint32_t x = 0; x < S && !bad; x++) {
            const uint32_t i = pass == 0 ? x : S - 1 - x;
            const hc_step_t *st = &s->steps[i];
            enum { LOCS = 66 }; /* REDUCE_MULTI: up to 64 sources here (n <= 64) */
            hc_loc_t loc[LOCS];
            int wr[LOCS], nl = 0;
            uint64_t nb = st->bytes;
            switch (st->kind) {
            case HC_STEP_SEND:
                loc[nl] = st->a, wr[nl++] = 0;
                break;
            case HC_STEP_PUBLISH: /* the flag word (WAIT reads a peer's) */
                loc[nl] = st->dst, wr[nl++] = 1;
                nb = 8;
                break;
            case HC_STEP_REDUCE_MULTI:
                for (uint32_t q = 0; q < st->nsrc && nl < LOCS - 1; q++)
                    loc[nl] = s->srcs[st->src_off + q], wr[nl++] = 0;
                if (st->nsrc == 0) /* per-rank form: ours, and our own half's region */
                    loc[nl] = st->b, wr[nl++] = 0, loc[nl] = HC_PEER(r, st->a.off),
                    wr[nl++] = 0;
                loc[nl] = st->dst, wr[nl++] = 1;
                break;
            case HC_STEP_RECV:
                loc[nl] = st->dst, wr[nl++] = 1;
                break;
            case HC_STEP_REDUCE:
                loc[nl] = st->a, wr[nl++] = 0;
                loc[nl] = st->b, wr[nl++] = 0;
                loc[nl] = st->dst, wr[nl++] = 1;
                break;
            case HC_STEP_COPY:
                loc[nl] = st->a, wr[nl++] = 0;
                loc[nl] = st->dst, wr[nl++] = 1;
                break;
            case HC_STEP_READ: /* ours only: the peer's side is ordered by flags */
                loc[nl] = st->dst, wr[nl++] = 1;
                break;
            case HC_STEP_WRITE:
                loc[nl] = st->a, wr[nl++] = 0;
                break;
            case HC_STEP_XREDUCE: /* ours (its scratch is read and written inside it) */
                loc[nl] = st->a, wr[nl++] = 0;
                loc[nl] = st->dst, wr[nl++] = 1;
                break;
            default:
                break;
            }
            if (nb == 0)
                nl = 0;
            /* check every access of the step, then record its writes */
            for (int phase = 0; phase < 2 && !bad; phase++)
                for (int a = 0; a < nl && !bad; a++) {
                    size_t e0;
                    const char *p = loc_ptr(k, r, loc[a]);
                    if (p == NULL)
                        continue; /* a peer's staging: ordered by its flags */
                    int q = locate(&sh, p, nb, &e0);
                    if (q < 0) {
                        snprintf(msg, len, "rank %u step %u: region outside every buffer", r, i);
                        bad = msg;
                        break;
                    }
                    int32_t *v = sh.sh[q] + e0;
                    for (size_t e = 0; e < nb / es; e++) {
                        if (phase == 1) {
                            if (wr[a])
                                v[e] = (int32_t)i;
                            continue;
                        }
                        if (v[e] < 0 || (uint32_t)v[e] == i)
                            continue;
                        uint32_t o = (uint32_t)v[e];
                        if (pass == 0 ? !reaches(reach, W, o, i) : !reaches(reach, W, i, o)) {
                            snprintf(msg, len,
                                     "rank %u: race between step %u (%s) and step %u (%s)", r,
                                     o < i ? o : i, kn[s->steps[o < i ? o : i].kind],
                                     o < i ? i : o, kn[s->steps[o < i ? i : o].kind]);
                            bad = msg;
                            break;
                        }
                    }
                }
        }
    }
    for (int q = 0; q < 4; q++)
        free(sh.sh[q]);
    free(reach);
    return bad;
}

/* ------------------------------------------------------------ drivers */

static uint64_t xs_state;
static uint64_t xs(void)
{
    xs_state ^= xs_state << 13;
    xs_state ^= xs_state >> 7;
    xs_state ^= xs_state << 17;
    return xs_state;
}

/* Progress the executors in random order with random skips. */
static int run_shuffled(hc_exec_t *ex, uint32_t n, uint64_t seed, char *err, size_t len)
{
    uint32_t *perm = malloc(n * sizeof(uint32_t));
    int rc = HCCL_SUCCESS, calm = 0;
    xs_state = seed * 2654435761u + 88172645463325252ull;
    for (uint32_t i = 0; i < n; i++)
        perm[i] = i;
    for (;;) {
        for (uint32_t i = n; i > 1; i--) {
            uint32_t j = (uint32_t)(xs() % i), tmp = perm[i - 1];
            perm[i - 1] = perm[j];
            perm[j] = tmp;
        }
        int all_done = 1, progressed = 0;
        for (uint32_t q = 0; q < n; q++) {
            hc_exec_t *e = &ex[perm[q]];
            if (!calm && xs() % 3 == 0) { /* skew: leave this rank behind */
                if (e->status == HCCL_E_AGAIN)
                    all_done = 0;
                continue;
            }
            uint32_t before = e->ndone + e->nissued;
            int x = hc_exec_progress(e);
            if (x == HCCL_E_AGAIN)
                all_done = 0;
            else if (x != HCCL_SUCCESS) {
                snprintf(err, len, "rank %u failed with %d", perm[q], x);
                rc = x;
                goto out;
            }
            if (e->ndone + e->nissued != before)
                progressed = 1;
        }
        if (all_done)
            break;
        if (!progressed) {
            if (calm) { /* a full sweep without skips did nothing */
                snprintf(err, len, "deadlock (shuffled driver)");
                rc = HCCL_E_INTERNAL;
                goto out;
            }
            calm = 1;
        } else {
            calm = 0;
        }
    }
out:
    if (rc != HCCL_SUCCESS)
        for (uint32_t q = 0; q < n; q++)
            hc_exec_cancel(&ex[q], HCCL_E_INTERNAL);
    free(perm);
    return rc;
}

/* ------------------------------------------------------------ one case */

static uint64_t hash_bytes(uint64_t h, const uint8_t *p, size_t len)
{
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = mix64(h ^ w);
    }
    for (; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* Cases the algorithm declines (usable() says why: TORUS2D on a prime
 * number of ranks, BRUCK on AlltoAllV); the tuner never runs those. */
static uint64_t n_skipped;

static int case_usable(const tc_t *t)
{
    if (t->algo->usable == NULL)
        return 1;
    hc_topo_view_t topo = {.ring = t->ring};
    hc_coll_args_t a = {.coll = t->coll, .rank = 0, .nranks = t->n, .root = t->root,
                        .count = t->count, .esize = vk_info[t->vk].es,
                        .dtype = vk_info[t->vk].dt, .op = vk_info[t->vk].op,
                        .in_place = t->in_place, .chunk_bytes = t->chunk,
                        .shm_bytes = shm_half(t->seed), .cma = 1,
                        .topo = t->topo ? t->topo : &topo};
    if (t->algo->usable(&a) == NULL)
        return 1;
    n_skipped++;
    return 0;
}

/* Run one case; fails the test on any mismatch. Returns a hash of every
 * rank's user buffers afterwards (to compare drivers). */
static uint64_t run_case_timed(const tc_t *t);

/* HC_TEST_TIMES=1 (with CK_FORK=no): seconds spent per algorithm, printed
 * at the end, to keep an eye on this program's run time. */
static int times_on;
static double times_s[HC_COLL_LAST][16];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t run_case(const tc_t *t)
{
    if (!case_usable(t))
        return 0;
    if (!times_on)
        return run_case_timed(t);
    double t0 = now_s();
    uint64_t h = run_case_timed(t);
    if (t->algo->id < 16)
        times_s[t->coll][t->algo->id] += now_s() - t0;
    return h;
}

static void print_times(void)
{
    for (int c = 0; c < HC_COLL_LAST; c++) {
        int na;
        const hc_algo_t *al = hc_coll_algos((hc_coll_t)c, &na);
        for (int i = 0; i < na && i < 16; i++)
            if (times_s[c][i] > 0)
                fprintf(stderr, "%-14s %-18s %7.2f s\n", hc_coll_name((hc_coll_t)c), al[i].name,
                        times_s[c][i]);
    }
}

static uint64_t run_case_timed(const tc_t *t)
{
    const uint32_t n = t->n;
    const size_t es = vk_info[t->vk].es;
    const int reducing = t->coll == HC_COLL_ALLREDUCE || t->coll == HC_COLL_REDUCE ||
                         t->coll == HC_COLL_REDUCESCATTER;
    /* results that may differ in the last bits (or the sign of a zero)
     * from the reference, but must still agree between ranks */
    const int inexact = !t->deterministic && (t->vk == VK_F32_INEXACT || t->vk == VK_F32_MAXZ);
    char msg[512], err[4096];
    rank_t *rk = calloc(n, sizeof(rank_t));
    hc_exec_t *ex = calloc(n, sizeof(hc_exec_t));
    uint32_t *ref = NULL;
    double *mag = NULL;
    hc_topo_view_t topo = {.ring = t->ring};
    if (t->topo)
        topo = *t->topo;
    uint64_t **sdispl_of = NULL;
    uint64_t hash = 14695981039346656037ULL;
    if (rk == NULL || ex == NULL)
        ck_abort_msg("out of memory");

    /* uneven ReduceScatter: the same arrays on every rank */
    uint64_t v_end = 0;
    if (t->uneven) {
        for (uint32_t r = 0; r < n; r++) {
            rank_t *k = &rk[r];
            k->sc = malloc(n * sizeof(uint64_t));
            k->sd = malloc(n * sizeof(uint64_t));
            uint64_t pos = 1;
            for (uint32_t q = n; q-- > 0;) {
                k->sc[q] = rsv_count(t, q);
                k->sd[q] = pos;
                pos += k->sc[q] + v_gap(q, 2);
            }
            v_end = pos;
        }
    }

    /* reference for the reducing collectives */
    if (reducing) {
        uint64_t len = t->coll != HC_COLL_REDUCESCATTER ? t->count
                       : t->uneven                      ? v_end
                                                        : (uint64_t)n * t->count;
        ref = malloc((len + 1) * sizeof(uint32_t));
        mag = malloc((len + 1) * sizeof(double));
        for (uint64_t i = 0; i < len; i++) {
            if (t->deterministic) {
                /* ReduceScatter: element i of the whole vector */
                ref[i] = canon(t->vk, t->seed, n, i);
                mag[i] = 0;
            } else {
                ref[i] = fold(t->vk, t->seed, n, i, &mag[i]);
            }
        }
    }
    if (t->coll == HC_COLL_ALLTOALLV) {
        sdispl_of = calloc(n, sizeof(uint64_t *));
        for (uint32_t r = 0; r < n; r++) {
            rank_t *k = &rk[r];
            k->sc = malloc(n * sizeof(uint64_t));
            k->sd = malloc(n * sizeof(uint64_t));
            k->rc = malloc(n * sizeof(uint64_t));
            k->rd = malloc(n * sizeof(uint64_t));
            uint64_t pos = v_gap(r, 0);
            for (uint32_t d = 0; d < n; d++) {
                k->sc[d] = v_count(t, r, d);
                k->sd[d] = pos;
                pos += k->sc[d] + v_gap(r, d);
            }
            pos = v_gap(r, 1);
            for (uint32_t q = n; q-- > 0;) {
                k->rc[q] = v_count(t, q, r);
                k->rd[q] = pos;
                pos += k->rc[q] + v_gap(q, r);
            }
            sdispl_of[r] = k->sd;
        }
    }

    /* build, set up, check statically */
    for (uint32_t r = 0; r < n; r++) {
        rank_t *k = &rk[r];
        int root_only_ip = t->coll == HC_COLL_REDUCE || t->coll == HC_COLL_SCATTER;
        hc_coll_args_t a = {
            .coll = t->coll,
            .rank = r,
            .nranks = n,
            .root = t->root,
            .count = t->coll == HC_COLL_BARRIER || t->coll == HC_COLL_ALLTOALLV ? 0
                     : t->uneven                                               ? k->sc[r]
                                                                               : t->count,
            .esize = es,
            .dtype = vk_info[t->vk].dt,
            .op = vk_info[t->vk].op,
            .in_place = t->in_place && (!root_only_ip || r == t->root),
            .deterministic = t->deterministic,
            .chunk_bytes = t->chunk,
            .shm_bytes = shm_half(t->seed),
            .cma = 1, /* the loopback's ranks are one process: READ works */
            .oversub = (int)((t->seed >> 2) & 1), /* half the cases as if ranks > cores */
            .nt_recv = (int)((t->seed >> 3) & 1), /* DIRECT AllReduce at 2 ranks: two-phase */
            .registered = (int)((t->seed >> 1) & 1), /* CMA AllReduce: XREDUCE steps */
            .scounts = k->sc,
            .sdispls = k->sd,
            .rcounts = k->rc,
            .rdispls = k->rd,
            .topo = &topo,
        };
        hc_sched_init(&k->s, es);
        int rc = t->algo->build(&a, &k->s);
        if (rc != HCCL_SUCCESS || k->s.err)
            ck_abort_msg("%s: rank %u build failed: %d", describe(t), r, rc);
        setup_rank(t, r, k, ref, (const uint64_t *const *)sdispl_of);
        region_alloc(&k->tmp, k->s.tmp_bytes, r, 0);
        k->bufs[HC_BUF_TMP] = k->s.tmp_bytes ? rdata(&k->tmp) : NULL;
        region_alloc(&k->seg, k->s.seg_bytes, r, 0);
        const char *bad = check_static(t, r, k, msg, sizeof(msg));
        /* the small communicators cover the patterns; above 16 ranks a
         * sample of ranks (every position relative to the root is covered
         * at smaller n) */
        if (!bad && n <= 64 &&
            (n <= 16 || r < 3 || r + 1 == n || r % 5 == 0 || r == t->root ||
             r == (t->root + 1) % n))
            bad = check_races(r, k, es, msg, sizeof(msg));
        if (bad)
            ck_abort_msg("%s: %s", describe(t), bad);
    }

    /* run */
    hc_loop_t *lp = hc_loop_create(n);
    if (lp == NULL)
        ck_abort_msg("hc_loop_create failed");
    int shm_used = 0; /* shared staging, simulated: epoch 1 */
    for (uint32_t r = 0; r < n; r++)
        shm_used |= rk[r].s.seg_bytes != 0;
    if (shm_used && hc_loop_shm_alloc(lp, shm_half(t->seed)) != HCCL_SUCCESS)
        ck_abort_msg("out of memory");
    /* registered: half of them mapped (XREDUCE's loads and stores), half
     * not (its single-copy steps) */
    if (shm_used && hc_loop_shm_registered(lp, (int)((t->seed >> 1) & (t->seed >> 2) & 1)))
        ck_abort_msg("out of memory");
    for (uint32_t r = 0; r < n; r++) {
        int rc = hc_exec_start(&ex[r], &rk[r].s, rk[r].bufs, &hc_loop_ops, hc_loop_tctx(lp, r),
                               r, 1, 0, vk_info[t->vk].dt, vk_info[t->vk].op, NULL);
        if (rc != HCCL_SUCCESS)
            ck_abort_msg("%s: hc_exec_start failed: %d", describe(t), rc);
        if (shm_used)
            hc_loop_shm_bind(lp, r, 1, &ex[r]);
    }
    err[0] = 0;
    int rc = t->shuffled ? run_shuffled(ex, n, t->seed * 7u + t->shuffled * 1000003u + n, err, sizeof(err)) : HCCL_SUCCESS;
    if (rc == HCCL_SUCCESS) /* also reports messages left unmatched */
        rc = hc_loop_run(lp, ex, err, sizeof(err));
    if (rc != HCCL_SUCCESS)
        ck_abort_msg("%s: run failed (%d): %.1500s", describe(t), rc, err);

    /* verify */
    double tol = 0;
    if (t->vk == VK_F32_INEXACT && reducing) {
        uint64_t len = t->coll != HC_COLL_REDUCESCATTER ? t->count
                       : t->uneven                      ? v_end
                                                        : (uint64_t)n * t->count;
        for (uint64_t i = 0; i < len; i++)
            tol = mag[i] > tol ? mag[i] : tol;
        tol *= (double)n * 1.2e-7; /* n roundings of at most 2^-23 relative each */
    }
    for (uint32_t r = 0; r < n; r++) {
        rank_t *k = &rk[r];
        region_t *gs[3] = {&k->reg[0], &k->reg[1], &k->tmp};
        for (int q = 0; q < 3; q++) {
            region_t *g = gs[q];
            if (g->raw == NULL)
                continue;
            for (size_t b = 0; b < GUARD; b++)
                if (g->raw[b] != guard_byte(b) || g->raw[GUARD + g->size + b] != guard_byte(b + 7))
                    ck_abort_msg("%s: rank %u %s: guard byte %s the region overwritten",
                                 describe(t), r, q == 2 ? "TMP" : "user buffer",
                                 g->raw[b] != guard_byte(b) ? "before" : "after");
            if (q == 2)
                continue;
            hash = hash_bytes(hash, rdata(g), g->size);
            if (memcmp(rdata(g), g->exp, g->size) == 0)
                continue;
            size_t b = 0;
            while (rdata(g)[b] == g->exp[b])
                b++;
            if (inexact && reducing) {
                /* float sums in another order: within rounding of the
                 * reference, element by element; untouched parts exact */
                size_t x;
                for (x = 0; x + es <= g->size; x += es) {
                    float gv = bitsf(get(rdata(g) + x, es)), wv = bitsf(get(g->exp + x, es));
                    double d = (double)gv - (double)wv;
                    if (gv != wv && !(d < tol && -d < tol))
                        break;
                }
                if (x + es > g->size)
                    continue;
                ck_abort_msg("%s: rank %u byte %zu: got %.9g, want %.9g", describe(t), r, x,
                             (double)bitsf(get(rdata(g) + x, es)),
                             (double)bitsf(get(g->exp + x, es)));
            }
            ck_abort_msg("%s: rank %u %s byte %zu (element %zu): got 0x%02x, want 0x%02x",
                         describe(t), r, q == 0 ? "buffer 0" : "buffer 1", b, b / es,
                         rdata(g)[b], g->exp[b]);
        }
    }
    /* every rank bit-identical (the tolerance above allows otherwise) */
    if (t->coll == HC_COLL_ALLREDUCE)
        for (uint32_t r = 1; r < n; r++)
            if (memcmp(rk[r].bufs[HC_BUF_RECV], rk[0].bufs[HC_BUF_RECV], t->count * es))
                ck_abort_msg("%s: rank %u's result differs from rank 0's", describe(t), r);

    for (uint32_t r = 0; r < n; r++) {
        hc_exec_fini(&ex[r]);
        hc_sched_free(&rk[r].s);
        region_free(&rk[r].reg[0]);
        region_free(&rk[r].reg[1]);
        region_free(&rk[r].tmp);
        region_free(&rk[r].seg);
        free(rk[r].sc);
        free(rk[r].sd);
        free(rk[r].rc);
        free(rk[r].rd);
    }
    hc_loop_destroy(lp);
    free(sdispl_of);
    free(ref);
    free(mag);
    free(rk);
    free(ex);
    return hash;
}

/* ------------------------------------------------------------ enumeration */

static int has_in_place(hc_coll_t c)
{
    return c != HC_COLL_BROADCAST && c != HC_COLL_ALLTOALLV && c != HC_COLL_BARRIER;
}

static int is_rooted(hc_coll_t c)
{
    return c == HC_COLL_BROADCAST || c == HC_COLL_REDUCE || c == HC_COLL_SCATTER;
}

static int is_reducing(hc_coll_t c)
{
    return c == HC_COLL_ALLREDUCE || c == HC_COLL_REDUCE || c == HC_COLL_REDUCESCATTER;
}

static uint32_t add_unique(uint64_t *v, uint32_t nv, uint64_t x)
{
    for (uint32_t i = 0; i < nv; i++)
        if (v[i] == x)
            return nv;
    v[nv] = x;
    return nv + 1;
}

/* 0, 1, 2, 3, 7, primes, n-1, n, n+1, and sizes whose blocks span several
 * 64-byte chunks. */
static uint32_t counts_for(hc_coll_t c, uint32_t n, uint64_t *v)
{
    static const uint64_t fixed[] = {0, 1, 2, 3, 7, 13, 61};
    uint32_t nv = 0;
    if (c == HC_COLL_BARRIER) {
        v[0] = 0;
        return 1;
    }
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        nv = add_unique(v, nv, fixed[i]);
    nv = add_unique(v, nv, n - 1);
    nv = add_unique(v, nv, n);
    nv = add_unique(v, nv, n + 1);
    /* the per-rank-block collectives already multiply by n */
    int per_block = c == HC_COLL_REDUCESCATTER || c == HC_COLL_ALLGATHER ||
                    c == HC_COLL_SCATTER || c == HC_COLL_ALLTOALL || c == HC_COLL_ALLTOALLV;
    nv = add_unique(v, nv, per_block ? 37 : 17 * (uint64_t)n + 5);
    if (full_mode)
        nv = add_unique(v, nv, per_block ? 101 : 40 * (uint64_t)n + 3);
    return nv;
}

static uint32_t roots_for(hc_coll_t c, uint32_t n, uint32_t *v)
{
    uint32_t nv = 0;
    if (!is_rooted(c)) {
        v[0] = 0;
        return 1;
    }
    if (n <= (full_mode ? 24u : 8u)) {
        for (uint32_t r = 0; r < n; r++)
            v[nv++] = r;
        return nv;
    }
    const uint32_t cand[] = {0, 1, n / 2, n - 1, n / 3 + 1};
    for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
        int dup = 0;
        for (uint32_t j = 0; j < nv; j++)
            dup |= v[j] == cand[i];
        if (!dup)
            v[nv++] = cand[i];
    }
    return nv;
}

static const vk_t red_kinds[] = {VK_I32_SUM,  VK_F32_SUM,     VK_U8_MAX,
                                 VK_I32_PROD, VK_F32_INEXACT, VK_F32_MAXZ};
static const vk_t move_kinds[] = {VK_I32_SUM, VK_U8_MAX};

/* Pipelining chunk (bytes) for a case: the algorithm's default, or one that
 * cuts a rank's block (count/n elements for AllReduce, count otherwise)
 * into 2..8 pieces, down to single elements (so that some chunks are
 * empty), or a size that is not a whole number of elements. */
static uint64_t pick_chunk(hc_coll_t c, uint32_t n, uint64_t count, size_t es, uint32_t mode)
{
    uint64_t blk = c == HC_COLL_ALLREDUCE ? (count + n - 1) / n : count;
    switch (mode % 4) {
    case 0:
        return 0;
    case 1:
        return blk <= 6 ? es : (blk + 2) / 3 * es;
    case 2:
        return (blk + 1) / 2 * es + (es > 1);
    default: {
        uint64_t ch = 64;
        return ch < (blk + 7) / 8 * es ? (blk + 7) / 8 * es : ch;
    }
    }
}

static vk_t pick_kind(hc_coll_t c, uint32_t k)
{
    return is_reducing(c) ? red_kinds[k % 6] : move_kinds[k % 2];
}

/* every algorithm, n = 1..64, every count, root and in-place setting */
START_TEST(test_small)
{
    const hc_coll_t c = (hc_coll_t)_i;
    int na;
    const hc_algo_t *al = hc_coll_algos(c, &na);
    uint32_t k = 0;
    ck_assert_ptr_nonnull(al);
    for (int ai = 0; ai < na; ai++)
        for (uint32_t n = 1; n <= 64; n++) {
            uint64_t cv[16];
            uint32_t rv[32];
            uint32_t ncv = counts_for(c, n, cv), nrv = roots_for(c, n, rv);
            for (uint32_t ci = 0; ci < ncv; ci++)
                for (uint32_t ri = 0; ri < nrv; ri++)
                    for (int ip = 0; ip <= has_in_place(c); ip++, k++) {
                        const vk_t vk = pick_kind(c, k);
                        tc_t t = {.coll = c, .algo = &al[ai], .n = n, .root = rv[ri],
                                  .count = cv[ci], .in_place = ip,
                                  .chunk = pick_chunk(c, n, cv[ci], vk_info[vk].es, k / 2),
                                  .vk = vk, .seed = k};
                        run_case(&t);
                    }
        }
}
END_TEST

/* The service collectives' one-round AllGather (src/comm/service.h), which is
 * in no table: every size up to 40 ranks, in and out of place. */
START_TEST(test_allgather_flat)
{
    static const hc_algo_t flat = {.id = 16, .name = "FLAT", .desc = "service allgather",
                                   .build = hc_allgather_flat_build};
    uint32_t k = 0;
    for (uint32_t n = 1; n <= 40; n++) {
        uint64_t cv[16];
        uint32_t ncv = counts_for(HC_COLL_ALLGATHER, n, cv);
        for (uint32_t ci = 0; ci < ncv; ci++)
            for (int ip = 0; ip <= 1; ip++, k++) {
                const vk_t vk = pick_kind(HC_COLL_ALLGATHER, k);
                tc_t t = {.coll = HC_COLL_ALLGATHER, .algo = &flat, .n = n, .count = cv[ci],
                          .in_place = ip, .vk = vk, .seed = k};
                run_case(&t); /* checks every rank against the reference */
            }
    }
}
END_TEST

/* a few large communicators */
START_TEST(test_large)
{
    static const uint32_t ns[] = {100, 127, 128, 255, 256, 1000, 1024};
    const hc_coll_t c = (hc_coll_t)_i;
    int na;
    const hc_algo_t *al = hc_coll_algos(c, &na);
    uint32_t k = 7;
    for (int ai = 0; ai < na; ai++)
        for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
            const uint32_t n = ns[ni];
            if (c == HC_COLL_ALLTOALLV && n > 256)
                continue; /* n^2 count arrays */
            int per_block = c == HC_COLL_REDUCESCATTER || c == HC_COLL_ALLGATHER ||
                            c == HC_COLL_SCATTER || c == HC_COLL_ALLTOALL ||
                            c == HC_COLL_ALLTOALLV;
            const uint64_t cv[] = {1, per_block ? 3 : (uint64_t)n + 3};
            for (size_t ci = 0; ci < 2; ci++, k++) {
                if (c == HC_COLL_BARRIER && ci)
                    continue;
                /* the O(n)-step algorithms cost a few hundred MB of schedules
                 * at 1000+ ranks: one count each (mostly empty blocks at 1000,
                 * full ones at 1024) */
                if (n >= 1000 && ci != (n == 1000 ? 0u : 1u) && c != HC_COLL_BARRIER)
                    continue;
                tc_t t = {.coll = c, .algo = &al[ai], .n = n,
                          .root = is_rooted(c) ? (uint32_t)((k * 7919u) % n) : 0,
                          .count = c == HC_COLL_BARRIER ? 0 : cv[ci],
                          .in_place = has_in_place(c) && (k & 1),
                          /* several chunks per block below 1000 ranks; above, the
                           * schedules of all ranks would take a gigabyte */
                          .chunk = ci && n < 1000 ? 4 : 0,
                          .vk = pick_kind(c, k), .seed = k};
                run_case(&t);
            }
        }
}
END_TEST

/* ring algorithms over rings that are not 0..n-1 */
START_TEST(test_ring_order)
{
    static const uint32_t ns[] = {2, 3, 4, 5, 8, 13, 31, 64};
    static const hc_coll_t cs[] = {HC_COLL_ALLREDUCE, HC_COLL_REDUCESCATTER, HC_COLL_ALLGATHER};
    uint32_t ring[64];
    uint32_t k = 3;
    for (size_t ci = 0; ci < 3; ci++) {
        int na;
        const hc_algo_t *al = hc_coll_algos(cs[ci], &na);
        for (int ai = 0; ai < na; ai++)
            for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++)
                for (int kind = 0; kind < 3 && (al[ai].flags & HC_ALGO_F_RING_ORDER); kind++) {
                    const uint32_t n = ns[ni];
                    xs_state = 12345 + n * 3 + (uint64_t)kind;
                    for (uint32_t i = 0; i < n; i++)
                        ring[i] = kind == 0 ? n - 1 - i : i;
                    if (kind == 1) /* a stride coprime to n */
                        for (uint32_t i = 0, st = (n % 2 ? 2 : 1) + (n > 4 && n % 3 ? 2 : 0); i < n; i++)
                            ring[i] = (uint32_t)(((uint64_t)i * st + 1) % n);
                    if (kind == 2) /* shuffled */
                        for (uint32_t i = n; i > 1; i--) {
                            uint32_t j = (uint32_t)(xs() % i), tmp = ring[i - 1];
                            ring[i - 1] = ring[j];
                            ring[j] = tmp;
                        }
                    const uint64_t cv[] = {n + 1, 17 * (uint64_t)n + 5, 3};
                    for (size_t q = 0; q < 3; q++, k++) {
                        const vk_t vk = pick_kind(cs[ci], k);
                        const uint64_t cnt = cs[ci] == HC_COLL_ALLREDUCE ? cv[q] : (q ? 21 : 2);
                        tc_t t = {.coll = cs[ci], .algo = &al[ai], .n = n, .count = cnt,
                                  .in_place = (int)(k & 1),
                                  .chunk = pick_chunk(cs[ci], n, cnt, vk_info[vk].es, q + 1),
                                  .vk = vk, .ring = ring, .seed = k};
                        run_case(&t);
                    }
                }
    }
}
END_TEST

/* ReduceScatter RING over blocks of different sizes (args->scounts, the
 * same on every rank; some empty, the largest not every rank's own), in
 * place and not, chunked down to single elements (so that the shorter
 * blocks' last chunks are empty placeholders), rank order and a reversed
 * ring; each case also in two random progress orders, which must give the
 * same bits. */
START_TEST(test_reducescatter_uneven)
{
    static const uint32_t ns[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17};
    const hc_algo_t *ring_algo = hc_coll_find_algo(HC_COLL_REDUCESCATTER, "RING");
    uint32_t ring[17];
    uint32_t k = 5;
    ck_assert_ptr_nonnull(ring_algo);
    for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
        const uint32_t n = ns[ni];
        for (uint32_t i = 0; i < n; i++)
            ring[i] = n - 1 - i;
        uint64_t cv[16];
        const uint32_t ncv = counts_for(HC_COLL_REDUCESCATTER, n, cv);
        for (uint32_t ci = 0; ci < ncv; ci++)
            for (int ip = 0; ip <= 1; ip++, k++) {
                const vk_t vk = pick_kind(HC_COLL_REDUCESCATTER, k);
                tc_t t = {.coll = HC_COLL_REDUCESCATTER, .algo = ring_algo, .n = n,
                          .count = cv[ci], .in_place = ip,
                          .chunk = pick_chunk(HC_COLL_REDUCESCATTER, n, cv[ci],
                                              vk_info[vk].es, k / 2),
                          .vk = vk, .ring = k % 3 == 0 ? ring : NULL, .uneven = 1, .seed = k};
                const uint64_t h1 = run_case(&t);
                t.shuffled = 1;
                const uint64_t h2 = run_case(&t);
                t.shuffled = 2;
                if (h1 != h2 || h1 != run_case(&t))
                    ck_abort_msg("%s: results depend on the progress order", describe(&t));
            }
    }
}
END_TEST

/* random progress order: same bits (also for inexact float sums), no
 * deadlock, nothing left unmatched */
START_TEST(test_shuffled)
{
    const hc_coll_t c = (hc_coll_t)_i;
    static const uint32_t ns[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 31, 33, 64};
    int na;
    const hc_algo_t *al = hc_coll_algos(c, &na);
    uint32_t k = 11;
    for (int ai = 0; ai < na; ai++)
        for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++)
            for (int rep = 0; rep < 2; rep++, k++) {
                const uint32_t n = ns[ni];
                const uint64_t cnt = c == HC_COLL_BARRIER ? 0 : (rep ? 3 * (uint64_t)n + 1 : 23);
                tc_t t = {.coll = c, .algo = &al[ai], .n = n, .root = (k * 5) % n,
                          .count = cnt, .in_place = has_in_place(c) && rep,
                          .chunk = pick_chunk(c, n, cnt, 4, rep ? 2 + ni % 2 : 0),
                          .vk = !is_reducing(c) ? VK_I32_SUM : rep ? VK_F32_MAXZ : VK_F32_INEXACT,
                          .seed = k};
                uint64_t h1 = run_case(&t);
                t.shuffled = 1;
                uint64_t h2 = run_case(&t);
                /* same data, another random order */
                t.shuffled = 2;
                uint64_t h3 = run_case(&t);
                if (h1 != h2 || h1 != h3)
                    ck_abort_msg("%s: results depend on the progress order", describe(&t));
            }
}
END_TEST

/* The single-copy AllReduce and ReduceScatter on a communicator with
 * registered buffers (HC_STEP_XREDUCE): not registered, registered but not
 * mapped (the kernel-copy path inside the step), mapped (loads and stores
 * through the loopback's identity windows); counts across the fold's
 * 16 KiB pieces and the chunks, in place and not, every reduction kind
 * (nt or not by seed), both drivers. */
START_TEST(test_registered)
{
    const hc_coll_t c = _i ? HC_COLL_REDUCESCATTER : HC_COLL_ALLREDUCE;
    const hc_algo_t *al = hc_coll_find_algo(c, "CMA");
    ck_assert_ptr_nonnull(al);
    static const uint64_t counts[] = {0, 1, 2, 7, 61, 4096, 4099, 8195, 24577};
    const uint64_t before = n_skipped;
    uint32_t k = 0;
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++)
        for (uint32_t mode = 0; mode < 3; mode++)
            for (int ip = 0; ip < 2; ip++, k++) {
                const vk_t vk = red_kinds[k % 6];
                /* seed bit 1: registered, bit 2: mapped (run_case_timed) */
                tc_t t = {.coll = c, .algo = al, .n = 2, .count = counts[ci], .in_place = ip,
                          .chunk = k % 3 == 0 ? 0 : pick_chunk(c, 2, counts[ci],
                                                                vk_info[vk].es, k / 3),
                          .vk = vk, .seed = (k << 3) | (mode ? 2u : 0u) | (mode == 2 ? 4u : 0u),
                          .shuffled = k % 2};
                run_case(&t);
            }
    ck_assert_uint_eq(n_skipped, before); /* every case ran */
}
END_TEST

/* TORUS2D on grids given by the topology: rows of ranks in any order (a
 * shuffled permutation, as nodes of a scattered job would give). */
START_TEST(test_topo_grid)
{
    static const uint32_t shapes[][2] = {{2, 2}, {2, 3}, {3, 2}, {4, 4}, {2, 8}, {3, 5},
                                         {8, 2}, {5, 7}};
    const hc_algo_t *al = hc_coll_find_algo(HC_COLL_ALLREDUCE, "TORUS2D");
    uint32_t grid[64];
    uint32_t k = 5;
    ck_assert_ptr_nonnull(al);
    for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++) {
        const uint32_t R = shapes[si][0], C = shapes[si][1], n = R * C;
        xs_state = 777 + si;
        for (uint32_t i = 0; i < n; i++)
            grid[i] = i;
        for (uint32_t i = n; i > 1; i--) {
            uint32_t j = (uint32_t)(xs() % i), tmp = grid[i - 1];
            grid[i - 1] = grid[j];
            grid[j] = tmp;
        }
        const hc_topo_view_t topo = {.grid_rows = R, .grid_cols = C, .grid = grid};
        const uint64_t cv[] = {1, C - 1, (uint64_t)n + 1, 17 * (uint64_t)n + 5};
        for (size_t ci = 0; ci < 4; ci++, k++) {
            const vk_t vk = pick_kind(HC_COLL_ALLREDUCE, k);
            tc_t t = {.coll = HC_COLL_ALLREDUCE, .algo = al, .n = n, .count = cv[ci],
                      .in_place = (int)(k & 1),
                      .chunk = pick_chunk(HC_COLL_ALLREDUCE, n, cv[ci], vk_info[vk].es, k),
                      .vk = vk, .topo = &topo, .seed = k};
            run_case(&t);
            t.shuffled = 1;
            run_case(&t);
        }
    }
}
END_TEST

/* Deterministic mode: every algorithm that claims the canonical order
 * (HC_ALGO_F_DET) gives exactly the canonical bits (evaluated here with the
 * kernel, element by element) for float, fp16 and bf16 sums that round and
 * float max over signed zeros, so they all agree with each other; the
 * tuner routes the others to them (check_tune). */
START_TEST(test_deterministic)
{
    static const hc_coll_t cs[] = {HC_COLL_ALLREDUCE, HC_COLL_REDUCE, HC_COLL_REDUCESCATTER};
    static const uint32_t ns[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17, 24, 31, 32, 33, 64,
                                  100};
    static const vk_t kinds[] = {VK_F32_INEXACT, VK_F16_SUM, VK_BF16_SUM, VK_F32_MAXZ};
    uint32_t k = 21, ndet = 0;
    for (size_t ci = 0; ci < sizeof(cs) / sizeof(cs[0]); ci++) {
        int na;
        const hc_algo_t *al = hc_coll_algos(cs[ci], &na);
        for (int ai = 0; ai < na; ai++) {
            if (!(al[ai].flags & HC_ALGO_F_DET))
                continue;
            ndet++;
            for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++)
                for (int q = 0; q < 3; q++, k++) {
                    const uint32_t n = ns[ni];
                    const uint64_t cnt = cs[ci] == HC_COLL_REDUCESCATTER
                                             ? (q == 0 ? 1 : q == 1 ? 3 : 10)
                                             : (q == 0 ? 1 : q == 1 ? (uint64_t)n + 1 : 5 * (uint64_t)n + 3);
                    const vk_t vk = kinds[k % 4];
                    tc_t t = {.coll = cs[ci], .algo = &al[ai], .n = n, .root = (k * 3) % n,
                              .count = cnt, .in_place = (int)(k & 1),
                              .chunk = pick_chunk(cs[ci], n, cnt, vk_info[vk].es, k / 4),
                              .vk = vk, .deterministic = 1, .seed = k};
                    run_case(&t);
                }
        }
    }
    ck_assert_uint_ge(ndet, 5); /* RD, HD; BINOMIAL, RS_GATHER; HD */
}
END_TEST

/* hc_sched_canon_fold (for algorithms that read every rank's data
 * themselves): the canonical bits for every n, run by the executor. */
START_TEST(test_canon_fold)
{
    static const vk_t kinds[] = {VK_F32_INEXACT, VK_F16_SUM, VK_BF16_SUM, VK_F32_MAXZ};
    const uint64_t count = 37;
    for (uint32_t n = 1; n <= 70; n++) {
        const vk_t vk = kinds[n % 4];
        const size_t es = vk_info[vk].es;
        const uint64_t bytes = count * es;
        uint8_t *in = malloc(n * bytes), *out = malloc(bytes);
        uint8_t *tmp = malloc(hc_canon_fold_slots(n) * bytes);
        hc_loc_t src[70];
        for (uint32_t q = 0; q < n; q++) {
            src[q] = HC_SEND(q * bytes);
            for (uint64_t i = 0; i < count; i++)
                put(in + q * bytes + i * es, es, gen(vk, n, q, i));
        }
        hc_sched_t s;
        hc_sched_init(&s, es);
        hc_sched_canon_fold(&s, HC_RECV(0), src, n, bytes, HC_TMP(0), HC_NODEPS);
        ck_assert_int_eq(s.err, 0);
        ck_assert_uint_eq(s.nsteps, n == 1 ? 1 : n - 1);
        void *bufs[HC_NBUFS] = {in, out, tmp};
        hc_loop_t *lp = hc_loop_create(1);
        hc_exec_t ex;
        ck_assert_int_eq(hc_exec_start(&ex, &s, bufs, &hc_loop_ops, hc_loop_tctx(lp, 0), 0, 1, 0,
                                       vk_info[vk].dt, vk_info[vk].op, NULL),
                         HCCL_SUCCESS);
        char err[256];
        ck_assert_int_eq(hc_loop_run(lp, &ex, err, sizeof(err)), HCCL_SUCCESS);
        for (uint64_t i = 0; i < count; i++)
            ck_assert_msg(get(out + i * es, es) == canon(vk, n, n, i),
                          "n=%u element %llu: 0x%x, want 0x%x", n, (unsigned long long)i,
                          get(out + i * es, es), canon(vk, n, n, i));
        hc_exec_fini(&ex);
        hc_loop_destroy(lp);
        hc_sched_free(&s);
        free(in);
        free(out);
        free(tmp);
    }
}
END_TEST

/* Barrier semantics: no rank may finish before every rank has started.
 * Knowledge propagates along dependencies and from a send to its receive. */
START_TEST(test_barrier_causality)
{
    const hc_algo_t *al;
    int na;
    al = hc_coll_algos(HC_COLL_BARRIER, &na);
    for (int ai = 0; ai < na; ai++)
        for (uint32_t n = 1; n <= 64; n++) {
            hc_sched_t *s = calloc(n, sizeof(hc_sched_t));
            uint64_t **know = calloc(n, sizeof(uint64_t *));
            hc_topo_view_t topo = {0};
            for (uint32_t r = 0; r < n; r++) {
                hc_coll_args_t a = {.coll = HC_COLL_BARRIER, .rank = r, .nranks = n,
                                    .esize = 1, .topo = &topo};
                hc_sched_init(&s[r], 1);
                ck_assert_int_eq(al[ai].build(&a, &s[r]), HCCL_SUCCESS);
                know[r] = calloc(s[r].nsteps + 1, sizeof(uint64_t));
            }
            for (int changed = 1; changed;) {
                changed = 0;
                for (uint32_t r = 0; r < n; r++)
                    for (uint32_t i = 0; i < s[r].nsteps; i++) {
                        const hc_step_t *st = &s[r].steps[i];
                        uint64_t kn = 1ull << r;
                        for (uint32_t d = 0; d < st->ndeps; d++)
                            kn |= know[r][s[r].deps[st->dep_off + d]];
                        if (st->kind == HC_STEP_RECV) {
                            const hc_sched_t *ps = &s[st->peer];
                            for (uint32_t j = 0; j < ps->nsteps; j++)
                                if (ps->steps[j].kind == HC_STEP_SEND && ps->steps[j].peer == r &&
                                    ps->steps[j].tag == st->tag)
                                    kn |= know[st->peer][j];
                        }
                        if (kn != know[r][i]) {
                            know[r][i] = kn;
                            changed = 1;
                        }
                    }
            }
            const uint64_t all = n == 64 ? ~0ull : (1ull << n) - 1;
            for (uint32_t r = 0; r < n; r++) {
                uint64_t done = 1ull << r;
                for (uint32_t i = 0; i < s[r].nsteps; i++)
                    done |= know[r][i];
                if (done != all)
                    ck_abort_msg("barrier/%s n=%u: rank %u can finish before all ranks entered",
                                 al[ai].name, n, r);
                hc_sched_free(&s[r]);
                free(know[r]);
            }
            free(s);
            free(know);
        }
}
END_TEST

/* Tags stay below 2^20 and unique with many chunks and many ranks (static:
 * a few ranks' schedules only). */
START_TEST(test_tags)
{
    static const uint32_t ns[] = {2, 3, 1024, 4096};
    static const hc_coll_t cs[] = {HC_COLL_ALLREDUCE, HC_COLL_REDUCESCATTER, HC_COLL_ALLGATHER,
                                   HC_COLL_BROADCAST, HC_COLL_REDUCE, HC_COLL_SCATTER,
                                   HC_COLL_BARRIER};
    hc_topo_view_t topo = {0};
    for (size_t ci = 0; ci < sizeof(cs) / sizeof(cs[0]); ci++) {
        int na;
        const hc_algo_t *al = hc_coll_algos(cs[ci], &na);
        for (int ai = 0; ai < na; ai++)
            for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
                const uint32_t n = ns[ni];
                /* blocks of 4096 one-byte chunks: far more chunks than allowed */
                uint64_t count = n <= 3 ? 4096 * 64 * (uint64_t)n : 8;
                if (n > 3 && cs[ci] == HC_COLL_ALLREDUCE)
                    count = 8 * (uint64_t)n; /* 8 chunks per block */
                for (uint32_t r = 0; r < n; r += n / 2 + 1) {
                    hc_coll_args_t a = {.coll = cs[ci], .rank = r, .nranks = n, .root = 1 % n,
                                        .count = cs[ci] == HC_COLL_BARRIER ? 0 : count,
                                        .esize = 1, .dtype = HCCL_DATA_TYPE_UINT8,
                                        .op = HCCL_REDUCE_MAX, .chunk_bytes = 1, .topo = &topo};
                    if (al[ai].usable && al[ai].usable(&a))
                        continue;
                    rank_t k;
                    memset(&k, 0, sizeof(k));
                    hc_sched_init(&k.s, 1);
                    ck_assert_int_eq(al[ai].build(&a, &k.s), HCCL_SUCCESS);
                    /* declared sizes large enough: only tags/peers matter here */
                    static char dummy;
                    for (int b = 0; b < HC_NBUFS; b++) {
                        k.bufs[b] = &dummy;
                        k.bsize[b] = SIZE_MAX / 4;
                    }
                    tc_t t = {.coll = cs[ci], .algo = &al[ai], .n = n, .vk = VK_U8_MAX};
                    char msg[256];
                    const char *bad = check_static(&t, r, &k, msg, sizeof(msg));
                    if (bad)
                        ck_abort_msg("%s/%s n=%u: %s", hc_coll_name(cs[ci]), al[ai].name, n, bad);
                    hc_sched_free(&k.s);
                }
            }
    }
    /* the chunk cap itself, up to 65536 ranks */
    for (uint32_t n = 2; n <= 65536; n *= 2) {
        hc_coll_args_t a = {.nranks = n, .esize = 1, .chunk_bytes = 1, .topo = &topo};
        uint64_t c = hc_ring_nchunks(&a, 1ull << 40, 2 * (uint64_t)(n - 1));
        ck_assert_uint_ge(c, 1);
        ck_assert_uint_le(c, HC_RING_MAX_CHUNKS);
        ck_assert_uint_le(c * 2 * (n - 1), (uint64_t)HC_TAG_MAX + 1);
    }
}
END_TEST

START_TEST(test_tables)
{
    static const char *names[HC_COLL_LAST] = {"allreduce", "broadcast", "reduce",
                                              "reducescatter", "allgather", "scatter",
                                              "alltoall", "alltoallv", "barrier"};
    static const char *want[][8] = {
        {"RING", "RD", "DBTREE", "DOUBLE_BINARY_TREE", "TORUS2D", "2D-TORUS", "HD", "H-D_R"},
        {"BINOMIAL", "PIPELINE", "SCATTER_ALLGATHER", NULL},
        {"BINOMIAL", "RS_GATHER", NULL},
        {"RING", "HD", "H-D_R", NULL},
        {"RING", "RD", "BRUCK", NULL},
        {"BINOMIAL", NULL},
        {"PAIRWISE", "BRUCK", NULL},
        {"PAIRWISE", "BRUCK", NULL},
        {"DISSEMINATION", NULL}};
    for (int c = 0; c < HC_COLL_LAST; c++) {
        int na = -1;
        const hc_algo_t *al = hc_coll_algos((hc_coll_t)c, &na);
        ck_assert_str_eq(hc_coll_name((hc_coll_t)c), names[c]);
        ck_assert_ptr_nonnull(al);
        ck_assert_int_ge(na, 1);
        for (int i = 0; i < na; i++) {
            char lower[64];
            size_t j;
            ck_assert_int_eq(al[i].id, i);
            ck_assert_ptr_nonnull(al[i].build);
            ck_assert_ptr_nonnull(al[i].desc);
            ck_assert_ptr_eq(hc_coll_find_algo((hc_coll_t)c, al[i].name), &al[i]);
            for (j = 0; al[i].name[j] && j < sizeof(lower) - 1; j++)
                lower[j] = (char)tolower((unsigned char)al[i].name[j]);
            lower[j] = 0;
            ck_assert_ptr_eq(hc_coll_find_algo((hc_coll_t)c, lower), &al[i]);
            if (al[i].alias)
                ck_assert_ptr_eq(hc_coll_find_algo((hc_coll_t)c, al[i].alias), &al[i]);
        }
        for (int i = 0; i < 8 && want[c][i]; i++)
            ck_assert_ptr_nonnull(hc_coll_find_algo((hc_coll_t)c, want[c][i]));
        ck_assert_ptr_null(hc_coll_find_algo((hc_coll_t)c, "NO_SUCH_ALGO"));
        ck_assert_ptr_null(hc_coll_find_algo((hc_coll_t)c, ""));
        ck_assert_ptr_null(hc_coll_find_algo((hc_coll_t)c, NULL));
    }
    ck_assert_ptr_null(hc_coll_algos(HC_COLL_LAST, NULL));
    ck_assert_ptr_null(hc_coll_find_algo(HC_COLL_LAST, "RING"));
    ck_assert_str_eq(hc_coll_name(HC_COLL_LAST), "unknown");
    ck_assert_str_eq(hc_coll_algos(HC_COLL_ALLREDUCE, NULL)[0].name, "RING");
}
END_TEST

/* A ring without this rank is refused, not built wrong. */
START_TEST(test_bad_ring)
{
    const uint32_t ring[4] = {0, 1, 2, 2};
    hc_topo_view_t topo = {.ring = ring};
    static const hc_coll_t cs[] = {HC_COLL_ALLREDUCE, HC_COLL_REDUCESCATTER, HC_COLL_ALLGATHER};
    for (size_t ci = 0; ci < 3; ci++) {
        hc_coll_args_t a = {.coll = cs[ci], .rank = 3, .nranks = 4, .count = 8, .esize = 4,
                            .topo = &topo};
        hc_sched_t s;
        hc_sched_init(&s, 4);
        const hc_algo_t *al = hc_coll_find_algo(cs[ci], "RING");
        ck_assert_int_eq(al->build(&a, &s), HCCL_E_PARA);
        hc_sched_free(&s);
    }
}
END_TEST

/* Start rank r's executor of s (uint8 SUM) on the loopback transport
 * with its staging bound for epoch. */
static void loop_exec_start(hc_loop_t *lp, const hc_sched_t *s, void *const bufs[HC_NBUFS],
                            uint32_t r, uint64_t epoch, hc_exec_t *ex)
{
    ck_assert_int_eq(hc_exec_start(ex, s, bufs, &hc_loop_ops, hc_loop_tctx(lp, r), r, 1, 0,
                                   HCCL_DATA_TYPE_UINT8, HCCL_REDUCE_SUM, NULL),
                     HCCL_SUCCESS);
    hc_loop_shm_bind(lp, r, epoch, ex);
}

/* Chains (coll.h, hc_sched_t.branched): a schedule whose every step
 * depends on the one before it, with no messages, runs in step order
 * without the dependency index (src/exec/exec.c, run_chain). A WAIT that is not
 * satisfied stays the posted step (describe and cancel see it), progress
 * resumes there, and the result is the general executor's. */
static void chain_scheds(hc_sched_t *s, uint64_t bytes)
{
    const uint64_t data = HC_SHM_DATA, flag = HC_SHM_FLAG(0);
    /* rank 0: raise the flag, wait for rank 1's, copy its staged data */
    hc_sched_init(&s[0], 4);
    int32_t p = hc_sched_publish(&s[0], flag, 1, HC_NODEPS);
    int32_t w = hc_sched_wait(&s[0], 1, flag, 1, 0, HC_DEPS(p));
    hc_sched_copy(&s[0], HC_RECV(0), HC_PEER(1, data), bytes, HC_DEPS(w));
    /* rank 1: stage its SEND, raise the flag, wait for rank 0's */
    hc_sched_init(&s[1], 4);
    int32_t c = hc_sched_copy(&s[1], HC_SEG(data), HC_SEND(0), bytes, HC_NODEPS);
    p = hc_sched_publish(&s[1], flag, 1, HC_DEPS(c));
    hc_sched_wait(&s[1], 0, flag, 1, 0, HC_DEPS(p));
}

START_TEST(test_chain)
{
    const uint64_t bytes = 40;
    hc_sched_t s[2];
    chain_scheds(s, bytes);
    ck_assert_int_eq(s[0].err | s[1].err, HCCL_SUCCESS);
    ck_assert_int_eq(s[0].branched, 0);
    ck_assert_int_eq(s[1].branched, 0);
    /* not chains: a step without the one before it, a message */
    hc_sched_t b;
    hc_sched_init(&b, 4);
    hc_sched_copy(&b, HC_RECV(0), HC_SEND(0), 8, HC_NODEPS);
    ck_assert_int_eq(b.branched, 0);
    hc_sched_copy(&b, HC_RECV(8), HC_SEND(8), 8, HC_NODEPS);
    ck_assert_int_eq(b.branched, 1);
    hc_sched_reset(&b);
    ck_assert_int_eq(b.branched, 0);
    hc_sched_send(&b, 1, 0, HC_SEND(0), 8, HC_NODEPS);
    ck_assert_int_eq(b.branched, 1);
    hc_sched_free(&b);

    uint8_t in[2][64], out[2][64];
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 64; i++) {
            in[r][i] = (uint8_t)(r * 100 + i);
            out[r][i] = 0xEE;
        }
    hc_loop_t *lp = hc_loop_create(2);
    ck_assert_int_eq(hc_loop_shm_alloc(lp, HC_SHM_MIN_HALF + 4096), HCCL_SUCCESS);
    for (uint64_t epoch = 1; epoch <= 2; epoch++) {
        hc_exec_t ex[2];
        for (uint32_t r = 0; r < 2; r++) {
            void *bufs[HC_NBUFS] = {in[r], out[r], NULL};
            loop_exec_start(lp, &s[r], bufs, r, epoch, &ex[r]);
        }
        /* rank 0 raises its flag and waits at step 1 */
        ck_assert_int_eq(hc_exec_progress(&ex[0]), HCCL_E_AGAIN);
        ck_assert_int_eq(hc_exec_progress(&ex[0]), HCCL_E_AGAIN);
        ck_assert_uint_eq(ex[0].ndone, 1);
        char why[256];
        uint32_t peer = 99;
        ck_assert_int_eq(hc_exec_describe_wait(&ex[0], why, sizeof(why), &peer), 1);
        ck_assert_uint_eq(peer, 1);
        ck_assert_msg(strstr(why, "WAIT for rank 1") != NULL, "%s", why);
        if (epoch == 2) { /* a chain waiting at a WAIT cancels like any executor */
            hc_exec_cancel(&ex[0], HCCL_E_TIMEOUT);
            ck_assert_int_eq(hc_exec_progress(&ex[0]), HCCL_E_TIMEOUT);
            ck_assert_int_eq(ex[0].nposted, 0);
            for (int r = 0; r < 2; r++)
                hc_exec_fini(&ex[r]);
            break;
        }
        /* rank 1 runs through (rank 0's flag is up), then rank 0 */
        ck_assert_int_eq(hc_exec_progress(&ex[1]), HCCL_SUCCESS);
        ck_assert_uint_eq(ex[1].ndone, 3);
        ck_assert_int_eq(hc_exec_progress(&ex[0]), HCCL_SUCCESS);
        ck_assert_uint_eq(ex[0].ndone, 3);
        ck_assert_int_eq(memcmp(out[0], in[1], bytes), 0);
        ck_assert_uint_eq(out[0][bytes], 0xEE); /* nothing past it */
        for (uint32_t r = 0; r < 2; r++) {
            hc_loop_shm_done(lp, r, &ex[r]);
            hc_exec_fini(&ex[r]);
        }
    }
    hc_loop_destroy(lp);
    hc_sched_free(&s[0]);
    hc_sched_free(&s[1]);
}
END_TEST

/* What the fast lane may run inline (src/comm/fastlane.h, hc_sched_t.fast):
 * only steps hc_exec_inline_run knows, no scratch, no exposed addresses,
 * every dependency on an earlier step (index order is a valid order). */
static void check_fast_shape(const hc_sched_t *s)
{
    ck_assert_int_eq(s->err, HCCL_SUCCESS);
    ck_assert_uint_eq(s->nmsgs, 0);
    ck_assert_uint_eq(s->tmp_bytes, 0);
    ck_assert_int_eq(s->exposes, 0);
    ck_assert_uint_gt(s->seg_bytes, 0);
    for (uint32_t i = 0; i < s->nsteps; i++) {
        const hc_step_t *t = &s->steps[i];
        ck_assert_msg(t->kind == HC_STEP_COPY || t->kind == HC_STEP_REDUCE ||
                          t->kind == HC_STEP_REDUCE_MULTI || t->kind == HC_STEP_PUBLISH ||
                          t->kind == HC_STEP_WAIT,
                      "%s step %u: kind %d", s->algo, i, (int)t->kind);
        for (uint32_t k = 0; k < t->ndeps; k++)
            ck_assert_uint_lt(s->deps[t->dep_off + k], i);
    }
}

/* The builders mark exactly the tiny shapes, for every rank. */
START_TEST(test_fast_shapes)
{
    static const struct {
        hc_coll_t coll;
        hc_build_fn build;
    } b[] = {{HC_COLL_ALLREDUCE, hc_allreduce_direct_build},
             {HC_COLL_BROADCAST, hc_bcast_direct_build},
             {HC_COLL_ALLGATHER, hc_allgather_direct_build},
             {HC_COLL_REDUCESCATTER, hc_reducescatter_direct_build},
             {HC_COLL_ALLTOALL, hc_alltoall_direct_build}};
    for (uint32_t n = 2; n <= 5; n++)
        for (uint32_t r = 0; r < n; r++)
            for (uint64_t count = 1; count <= HC_SHM_TINY_MAX + 1; count += 4)
                for (size_t bi = 0; bi < sizeof(b) / sizeof(b[0]); bi++) {
                    hc_coll_args_t a = {.coll = b[bi].coll, .rank = r, .nranks = n,
                                        .root = (uint32_t)((r + count) % n), .count = count,
                                        .esize = 1, .dtype = HCCL_DATA_TYPE_INT8,
                                        .op = HCCL_REDUCE_SUM, .in_place = (int)(count & 1),
                                        .shm_bytes = HC_SHM_MIN_HALF + 4096};
                    if (b[bi].coll == HC_COLL_BROADCAST)
                        a.in_place = 1;
                    /* the bytes staged in one slot */
                    uint64_t staged = count;
                    if (b[bi].coll == HC_COLL_REDUCESCATTER)
                        staged = (n == 2 && !a.in_place ? 1 : n) * count; /* (a pair: one block) */
                    else if (b[bi].coll == HC_COLL_ALLTOALL)
                        staged = (n - 1) * count;
                    const uint64_t max = b[bi].coll == HC_COLL_BROADCAST ? HC_SHM_RING_MAX
                                                                         : HC_SHM_TINY_MAX;
                    hc_sched_t s;
                    hc_sched_init(&s, 1);
                    ck_assert_int_eq(b[bi].build(&a, &s), HCCL_SUCCESS);
                    ck_assert_msg(s.fast == (staged <= max), "%s n=%u r=%u count=%llu: fast %d",
                                  s.algo, n, r, (unsigned long long)count, s.fast);
                    if (s.fast)
                        check_fast_shape(&s);
                    hc_sched_reset(&s); /* a rebuilt entry starts unmarked */
                    ck_assert_int_eq(s.fast, 0);
                    hc_sched_free(&s);
                }
}
END_TEST

/* Broadcast DIRECT with more ranks than cores (args.oversub) cuts the
 * message into halves up to a slot's room, then into whole slots; without
 * it, into quarters of 32-256 KiB (coll/bcast_direct.c). Every rank copies
 * once per chunk: the root into its staging, a reader out of the root's. */
START_TEST(test_bcast_oversub_chunks)
{
    const uint64_t half = 2u << 20, room = (half - HC_SHM_DATA) / 2 & ~(uint64_t)(HC_SHM_LINE - 1);
    const uint64_t re = room / 4; /* floats per slot */
    static const uint64_t counts[] = {16385, 262144, (2u << 20) + 1};
    for (int over = 0; over < 2; over++)
        for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++)
            for (uint32_t r = 0; r < 4; r++) {
                const uint64_t count = counts[ci];
                hc_coll_args_t a = {.coll = HC_COLL_BROADCAST, .rank = r, .nranks = 4,
                                    .root = 1, .count = count, .esize = 4,
                                    .dtype = HCCL_DATA_TYPE_FP32, .in_place = 1,
                                    .shm_bytes = half, .chunk_bytes = 1u << 20,
                                    .oversub = over};
                uint64_t ce; /* the chunk in floats */
                if (over)
                    ce = (count + 1) / 2 < 8192 ? 8192 : (count + 1) / 2 < re ? (count + 1) / 2 : re;
                else
                    ce = count / 4 < 8192 ? 8192 : count / 4 > 65536 ? 65536 : count / 4;
                const uint64_t nch = (count + ce - 1) / ce;
                hc_sched_t s;
                hc_sched_init(&s, 1);
                ck_assert_int_eq(hc_bcast_direct_build(&a, &s), HCCL_SUCCESS);
                uint64_t copies = 0;
                for (uint32_t i = 0; i < s.nsteps; i++)
                    copies += s.steps[i].kind == HC_STEP_COPY;
                ck_assert_msg(copies == nch, "oversub %d count %llu rank %u: %llu copies, want %llu",
                              over, (unsigned long long)count, r, (unsigned long long)copies,
                              (unsigned long long)nch);
                hc_sched_free(&s);
            }
}
END_TEST

/* Presence (more ranks than cores): a Broadcast reader whose root fills
 * at most two slots keeps its CPU while the root runs this operation on
 * another CPU and does not yield (hc_exec_awaits_running), and not when
 * the root yields, runs on the reader's CPU, is in another operation or
 * has said nothing; a reader of more chunks, and any rank without
 * presence, always yields. The executor announces its CPU when it starts
 * and says when it yields (hc_exec_set_yielding). */
START_TEST(test_presence)
{
    cpu_set_t old, one;
    ck_assert_int_eq(sched_getaffinity(0, sizeof(old), &old), 0);
    const int cpu = sched_getcpu();
    ck_assert_int_ge(cpu, 0);
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0); /* cpu stays ours */
    const uint64_t half = HC_SHM_MIN_HALF + (512u << 10);
    for (int many = 0; many < 2; many++) {
        const uint64_t count = many ? 256u << 10 : 64u << 10; /* 4 or 2 chunks */
        hc_sched_t s[2];
        for (uint32_t r = 0; r < 2; r++) {
            hc_coll_args_t a = {.coll = HC_COLL_BROADCAST, .rank = r, .nranks = 2, .root = 0,
                                .count = count, .esize = 1, .dtype = HCCL_DATA_TYPE_UINT8,
                                .in_place = 1, .shm_bytes = half};
            hc_sched_init(&s[r], 1);
            ck_assert_int_eq(hc_bcast_direct_build(&a, &s[r]), HCCL_SUCCESS);
        }
        ck_assert_int_eq(s[0].spin_on_producer, 0); /* the root */
        ck_assert_int_eq(s[1].spin_on_producer, !many);
        uint8_t *buf[2] = {malloc(count), malloc(count)};
        ck_assert(buf[0] && buf[1]);
        for (uint64_t i = 0; i < count; i++)
            buf[0][i] = (uint8_t)(i * 7 + 1);
        memset(buf[1], 0, count);
        hc_loop_t *lp = hc_loop_create(2);
        ck_assert_int_eq(hc_loop_shm_alloc(lp, half), HCCL_SUCCESS);
        hc_exec_t ex[2];
        for (uint32_t r = 0; r < 2; r++) {
            void *bufs[HC_NBUFS] = {buf[r], buf[r], NULL};
            loop_exec_start(lp, &s[r], bufs, r, 1, &ex[r]);
        }
        hc_exec_t *rd = &ex[1];
        uint64_t *root_word = (uint64_t *)(rd->half[0] + HC_SEG_PRESENCE);
        const uint64_t *own = (const uint64_t *)(rd->half[1] + HC_SEG_PRESENCE);
        /* without presence nothing is announced and the reader yields */
        ck_assert_int_eq(hc_exec_progress(rd), HCCL_E_AGAIN);
        ck_assert_uint_eq(*own, 0);
        *root_word = 1ull << 32 | (uint64_t)(cpu + 2) << 1;
        ck_assert_int_eq(hc_exec_awaits_running(rd), 0);
        /* with it: the start announced the reader's CPU */
        rd->presence = 1;
        rd->cpu = 0;
        *root_word = 0;
        ck_assert_int_eq(hc_exec_progress(rd), HCCL_E_AGAIN);
        ck_assert_int_eq(rd->cpu, cpu + 1);
        ck_assert_uint_eq(*own, 1ull << 32 | (uint64_t)(cpu + 1) << 1);
        hc_exec_set_yielding(rd, 1);
        ck_assert_uint_eq(*own, 1ull << 32 | (uint64_t)(cpu + 1) << 1 | 1);
        hc_exec_set_yielding(rd, 0);
        ck_assert_uint_eq(*own, 1ull << 32 | (uint64_t)(cpu + 1) << 1);
        /* the root: silent, running elsewhere, yielding, on our CPU, in
         * the operation before */
        ck_assert_int_eq(hc_exec_awaits_running(rd), 0);
        *root_word = 1ull << 32 | (uint64_t)(cpu + 2) << 1;
        ck_assert_int_eq(hc_exec_awaits_running(rd), !many);
        *root_word |= 1;
        ck_assert_int_eq(hc_exec_awaits_running(rd), 0);
        *root_word = 1ull << 32 | (uint64_t)(cpu + 1) << 1;
        ck_assert_int_eq(hc_exec_awaits_running(rd), 0);
        *root_word = 0ull << 32 | (uint64_t)(cpu + 2) << 1;
        ck_assert_int_eq(hc_exec_awaits_running(rd), 0);
        /* the operation itself is untouched: the root runs, the reader ends */
        for (int k = 0; k < 64 && (ex[0].status == HCCL_E_AGAIN || rd->status == HCCL_E_AGAIN);
             k++) {
            hc_exec_progress(&ex[0]);
            hc_exec_progress(rd);
        }
        ck_assert_int_eq(ex[0].status, HCCL_SUCCESS);
        ck_assert_int_eq(rd->status, HCCL_SUCCESS);
        ck_assert_int_eq(hc_exec_awaits_running(rd), 0); /* done: nothing to wait on */
        ck_assert_int_eq(memcmp(buf[0], buf[1], count), 0);
        for (uint32_t r = 0; r < 2; r++) {
            hc_loop_shm_done(lp, r, &ex[r]);
            hc_exec_fini(&ex[r]);
            hc_sched_free(&s[r]);
            free(buf[r]);
        }
        hc_loop_destroy(lp);
    }
    ck_assert_int_eq(sched_setaffinity(0, sizeof(old), &old), 0);
}
END_TEST

/* hc_exec_inline_run stops at a WAIT whose peer has not published; an
 * executor resumes there (hc_exec_resume_at) and finishes the operation
 * once the peer, running inline, has: for a chain (AllReduce) and for a
 * schedule with branches (AllGather, out of place), two epochs each. */
START_TEST(test_fast_resume)
{
    enum { COUNT = 40 };
    const uint64_t count = COUNT;
    for (int kind = 0; kind < 2; kind++) {
        const hc_coll_t coll = kind ? HC_COLL_ALLGATHER : HC_COLL_ALLREDUCE;
        hc_sched_t s[2];
        for (uint32_t r = 0; r < 2; r++) {
            hc_coll_args_t a = {.coll = coll, .rank = r, .nranks = 2, .count = count,
                                .esize = 1, .dtype = HCCL_DATA_TYPE_UINT8,
                                .op = HCCL_REDUCE_SUM, .shm_bytes = HC_SHM_MIN_HALF + 4096};
            hc_sched_init(&s[r], 1);
            const hc_build_fn build = kind ? hc_allgather_direct_build : hc_allreduce_direct_build;
            ck_assert_int_eq(build(&a, &s[r]), HCCL_SUCCESS);
            ck_assert_int_eq(s[r].fast, 1);
        }
        ck_assert_int_eq(s[0].branched, kind);
        hc_loop_t *lp = hc_loop_create(2);
        ck_assert_int_eq(hc_loop_shm_alloc(lp, HC_SHM_MIN_HALF + 4096), HCCL_SUCCESS);
        for (uint64_t epoch = 1; epoch <= 2; epoch++) {
            uint8_t in[2][COUNT], out[2][2 * COUNT];
            for (int r = 0; r < 2; r++)
                for (uint64_t i = 0; i < count; i++)
                    in[r][i] = (uint8_t)(r * 100 + i + epoch);
            memset(out, 0xEE, sizeof(out));
            void *bufs[2][HC_NBUFS] = {{in[0], out[0], NULL}, {in[1], out[1], NULL}};
            /* rank 0 inline: stops at the wait for rank 1 */
            hc_exec_t in0, ex0, in1;
            hc_exec_inline_init(&in0, &s[0], bufs[0], 0, HCCL_DATA_TYPE_UINT8, HCCL_REDUCE_SUM);
            hc_loop_shm_bind(lp, 0, epoch, &in0);
            const uint32_t at = hc_exec_inline_run(&in0, 4);
            ck_assert_uint_gt(at, 0);
            ck_assert_uint_lt(at, s[0].nsteps);
            ck_assert_int_eq(s[0].steps[at].kind, HC_STEP_WAIT);
            /* an executor takes over there */
            loop_exec_start(lp, &s[0], bufs[0], 0, epoch, &ex0);
            hc_exec_resume_at(&ex0, at);
            ck_assert_int_eq(hc_exec_progress(&ex0), HCCL_E_AGAIN);
            ck_assert_uint_eq(ex0.ndone, at);
            /* rank 1 inline: rank 0's flag is up, it runs through */
            hc_exec_inline_init(&in1, &s[1], bufs[1], 1, HCCL_DATA_TYPE_UINT8, HCCL_REDUCE_SUM);
            hc_loop_shm_bind(lp, 1, epoch, &in1);
            ck_assert_uint_eq(hc_exec_inline_run(&in1, 4), s[1].nsteps);
            ck_assert_int_eq(in1.status, HCCL_SUCCESS);
            ck_assert_int_eq(hc_exec_progress(&ex0), HCCL_SUCCESS);
            ck_assert_uint_eq(ex0.ndone, s[0].nsteps);
            for (int r = 0; r < 2; r++)
                for (uint64_t i = 0; i < count; i++) {
                    if (kind) {
                        ck_assert_uint_eq(out[r][i], in[0][i]);
                        ck_assert_uint_eq(out[r][count + i], in[1][i]);
                    } else {
                        ck_assert_uint_eq(out[r][i], (uint8_t)(in[0][i] + in[1][i]));
                    }
                }
            if (!kind)
                ck_assert_uint_eq(out[0][count], 0xEE); /* nothing past it */
            hc_loop_shm_done(lp, 0, &ex0);
            hc_loop_shm_done(lp, 1, &in1);
            hc_exec_fini(&ex0);
        }
        hc_loop_destroy(lp);
        hc_sched_free(&s[0]);
        hc_sched_free(&s[1]);
    }
}
END_TEST

static Suite *sched_suite(void)
{
    Suite *su = suite_create("sched");
    TCase *tc = tcase_create("tables");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_tables);
    tcase_add_test(tc, test_bad_ring);
    tcase_add_test(tc, test_tags);
    tcase_add_test(tc, test_allgather_flat);
    tcase_add_test(tc, test_barrier_causality);
    suite_add_tcase(su, tc);
    tc = tcase_create("loopback");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_small, 0, HC_COLL_LAST);
    tcase_add_loop_test(tc, test_large, 0, HC_COLL_LAST);
    tcase_add_test(tc, test_ring_order);
    tcase_add_test(tc, test_reducescatter_uneven);
    tcase_add_loop_test(tc, test_shuffled, 0, HC_COLL_LAST);
    tcase_add_test(tc, test_topo_grid);
    tcase_add_loop_test(tc, test_registered, 0, 2);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_canon_fold);
    tcase_add_test(tc, test_chain);
    tcase_add_test(tc, test_fast_shapes);
    tcase_add_test(tc, test_fast_resume);
    tcase_add_test(tc, test_bcast_oversub_chunks);
    tcase_add_test(tc, test_presence);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    const char *f = getenv("HC_TEST_FULL");
    full_mode = f && *f && *f != '0';
    times_on = getenv("HC_TEST_TIMES") != NULL;
    /* the cases allocate and free large blocks all the time: keep them in
     * the heap instead of paying for fresh pages each time */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    SRunner *sr = srunner_create(sched_suite());
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (times_on)
        print_times();
    return nf ? 1 : 0;
}
