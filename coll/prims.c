/* coll/prims.c - building blocks shared by several algorithm files (see prims.h). */
#include "prims.h"

#include <stdlib.h>

/* ---- the canonical fold ------------------------------------------------- */

typedef struct {
    hc_sched_t *s;
    const hc_loc_t *src;
    uint32_t p2, rem;
    uint64_t bytes;
    hc_loc_t scratch;
    const int32_t *deps;
    int32_t last; /* steps form one chain: scratch slots are reused */
} fold_t;

static int32_t fold_reduce(fold_t *f, hc_loc_t dst, hc_loc_t a, hc_loc_t b)
{
    int32_t d[40] = {INT32_MIN};
    for (uint32_t i = 0; f->deps[i] != INT32_MIN; i++)
        hc_deps_add(d, 40, f->deps[i]);
    hc_deps_add(d, 40, f->last);
    f->last = hc_sched_reduce(f->s, dst, a, b, f->bytes, d);
    return f->last;
}

/* E(res mod md) into want (or a source location for a bare leaf); depth d
 * = log2(md) picks the scratch slots (left child d, right child d + 1). */
static hc_loc_t fold_eval(fold_t *f, uint32_t res, uint32_t md, uint32_t d, hc_loc_t want)
{
    if (md == f->p2) {
        if (res >= f->rem)
            return f->src[res + f->rem];
        fold_reduce(f, want, f->src[2 * res], f->src[2 * res + 1]);
        return want;
    }
    hc_loc_t sl = f->scratch, sr = f->scratch;
    sl.off += d * f->bytes;
    sr.off += (d + 1) * f->bytes;
    hc_loc_t l = fold_eval(f, res, 2 * md, d + 1, sl);
    hc_loc_t r = fold_eval(f, res + md, 2 * md, d + 1, sr);
    fold_reduce(f, want, l, r);
    return want;
}

int32_t hc_sched_canon_fold(hc_sched_t *s, hc_loc_t dst, const hc_loc_t *src, uint32_t n,
                            uint64_t bytes, hc_loc_t scratch, const int32_t *deps)
{
    if (n <= 1)
        return n ? hc_sched_copy(s, dst, src[0], bytes, deps) : -1;
    const uint32_t p2 = hc_pow2_floor(n);
    fold_t f = {.s = s, .src = src, .p2 = p2, .rem = n - p2, .bytes = bytes,
                .scratch = scratch, .deps = deps, .last = -1};
    fold_eval(&f, 0, 1, 0, dst);
    return f.last;
}

/* ---- trees ------------------------------------------------------------ */

void hc_btree(uint32_t m, uint32_t i, int64_t *parent, int64_t *c0, int64_t *c1)
{
    *parent = *c0 = *c1 = -1;
    if (m <= 1 || i >= m)
        return;
    uint64_t bit = 1;
    while (bit < m && !(bit & i))
        bit <<= 1;
    if (i == 0) { /* bit is the first power of two >= m: one child */
        *c1 = (int64_t)(bit >> 1);
        return;
    }
    uint64_t up = (i ^ bit) | (bit << 1);
    if (up >= m)
        up = i ^ bit;
    *parent = (int64_t)up;
    const uint64_t lb = bit >> 1;
    if (lb == 0)
        return;
    *c0 = (int64_t)(i - lb);
    for (uint64_t l = lb; l > 0; l >>= 1)
        if (i + l < m) {
            *c1 = (int64_t)(i + l);
            break;
        }
}

void hc_btree2(uint32_t m, uint32_t i, int64_t *parent, int64_t *c0, int64_t *c1)
{
    if (m <= 1 || i >= m) {
        *parent = *c0 = *c1 = -1;
        return;
    }
    int64_t x[3];
    if (m % 2 == 0) {
        hc_btree(m, m - 1 - i, &x[0], &x[1], &x[2]);
        for (int k = 0; k < 3; k++)
            x[k] = x[k] < 0 ? -1 : (int64_t)(m - 1) - x[k];
    } else {
        hc_btree(m, (i + m - 1) % m, &x[0], &x[1], &x[2]);
        for (int k = 0; k < 3; k++)
            x[k] = x[k] < 0 ? -1 : (x[k] + 1) % m;
    }
    *parent = x[0];
    *c0 = x[1];
    *c1 = x[2];
}

uint32_t hc_btree_depth(uint32_t m)
{
    return m <= 1 ? 0 : hc_ceil_log2(m);
}

/* ---- pipeline chunks ---------------------------------------------------- */

static uint64_t isqrt(uint64_t v)
{
    uint64_t x = v, y = (v + 1) / 2;
    if (v < 2)
        return v;
    while (y < x) {
        x = y;
        y = (x + v / x) / 2;
    }
    return x;
}

uint64_t hc_pipe_nchunks(uint64_t bytes, size_t esize, uint32_t depth, uint64_t cap,
                         uint64_t maxchunks)
{
    if (bytes == 0 || esize == 0)
        return 1;
    const uint64_t elems = bytes / esize;
    uint64_t c;
    if (cap == 0)
        cap = HC_PIPE_CHUNK_MAX;
    if (cap < HC_PIPE_CHUNK_MIN) {
        c = cap;
    } else {
        c = isqrt(bytes * (uint64_t)HC_PIPE_AB / (depth ? depth : 1));
        if (c < HC_PIPE_CHUNK_MIN)
            c = HC_PIPE_CHUNK_MIN;
        if (c > cap)
            c = cap;
    }
    uint64_t ce = c / esize ? c / esize : 1;
    uint64_t k = (elems + ce - 1) / ce;
    if (k > maxchunks)
        k = maxchunks;
    if (k > elems)
        k = elems;
    return k ? k : 1;
}

/* ---- phases ------------------------------------------------------------ */

int32_t hc_sched_join(hc_sched_t *s, uint32_t from, int32_t prev)
{
    if (s->err)
        return -1;
    if (from >= s->nsteps)
        return prev;
    const uint32_t n = s->nsteps - from;
    int32_t *d = malloc(n * sizeof(int32_t));
    if (d == NULL) {
        s->err = HCCL_E_MEMORY;
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        d[i] = (int32_t)(from + i);
    int32_t j = hc_sched_nop(s, d, n);
    free(d);
    return j;
}

void hc_deps_add(int32_t *deps, uint32_t cap, int32_t x)
{
    uint32_t n = 0;
    while (deps[n] != INT32_MIN)
        n++;
    if (x < 0 || n + 1 >= cap)
        return;
    deps[n] = x;
    deps[n + 1] = INT32_MIN;
}

/* ---- recursive halving --------------------------------------------------- */

int hc_rh_reduce_scatter(hc_sched_t *s, const hc_coll_args_t *a, hc_rh_t *h)
{
    const uint32_t n = a->nranks, r = a->rank;
    const uint64_t es = a->esize;
    const uint32_t p2 = hc_pow2_floor(n), rem = n - p2;
    const uint64_t total = h->voff[p2];
    const uint64_t ce = (a->chunk_bytes ? a->chunk_bytes : HC_RH_CHUNK) / es
                            ? (a->chunk_bytes ? a->chunk_bytes : HC_RH_CHUNK) / es
                            : 1;
#define ACC(e) hc_loc(h->acc, h->acc_off + (e) * es)
#define PIECES(len) ((len) == 0 ? 0 : (len + ce - 1) / ce > HC_RH_MAX_CHUNKS ? HC_RH_MAX_CHUNKS \
                                                                      : (len + ce - 1) / ce)

    h->p2 = p2;
    h->rem = rem;
    h->in_acc = 0;
    h->last = -1;
    h->fix_send = -1;
    for (int i = 0; i < 32; i++)
        h->sent[i] = -1;
    h->v = hc_core_vrank(r, rem);
    if (h->v < 0) {
        h->fix_send = hc_sched_send(s, r + 1, h->tag0, HC_SEND(0), total * es, HC_NODEPS);
        return s->err;
    }
    if (r < 2 * rem) { /* x_(r-1) op x_r */
        int32_t rv = hc_sched_recv(s, r - 1, h->tag0, HC_TMP(h->rcv_off), total * es, HC_NODEPS);
        h->last = hc_sched_reduce(s, ACC(0), HC_TMP(h->rcv_off), HC_SEND(0), total * es,
                                  HC_DEPS(rv));
        h->in_acc = 1;
    }
    const uint32_t v = (uint32_t)h->v;
    uint32_t lo = 0, hi = p2, round = 0;
    for (uint32_t mask = p2 / 2; mask > 0; mask >>= 1, round++) {
        const uint32_t mid = lo + mask;
        const int upper = (v & mask) != 0;
        const uint32_t klo = upper ? mid : lo, khi = upper ? hi : mid;
        const uint32_t slo = upper ? lo : mid, shi = upper ? mid : hi;
        const uint32_t peer = hc_core_rank(v ^ mask, rem);
        const uint32_t tag = h->tag0 + 1 + round * HC_RH_MAX_CHUNKS;
        const uint64_t se = h->voff[slo], sn = h->voff[shi] - se;
        const uint64_t ke = h->voff[klo], kn = h->voff[khi] - ke;
        const uint64_t ks = PIECES(sn), kk = PIECES(kn);
        /* the partner cuts its kept range (our sent one) the same way */
        uint32_t from = s->nsteps;
        for (uint64_t j = 0; j < ks; j++) {
            const uint64_t o = se + hc_block_start(sn, ks, j), l = hc_block_len(sn, ks, j);
            hc_sched_send(s, peer, tag + (uint32_t)j, h->in_acc ? ACC(o) : HC_SEND(o * es),
                          l * es, HC_DEPS(h->last));
        }
        h->sent[round] = hc_sched_join(s, from, -1);
        if (kn == 0)
            break; /* every later range is inside this empty one */
        const uint64_t slot = (kn + kk - 1) / kk * es;
        int32_t red[2] = {h->last, h->last}; /* the reduce that last read each slot */
        from = s->nsteps;
        for (uint64_t j = 0; j < kk; j++) {
            const uint64_t o = ke + hc_block_start(kn, kk, j), l = hc_block_len(kn, kk, j);
            const hc_loc_t rcv = HC_TMP(h->rcv_off + (j % 2) * slot);
            const hc_loc_t mine = h->in_acc ? ACC(o) : HC_SEND(o * es);
            int32_t rv = hc_sched_recv(s, peer, tag + (uint32_t)j, rcv, l * es, HC_DEPS(red[j % 2]));
            if (upper) /* the partner has the lower virtual rank: its part first */
                red[j % 2] = hc_sched_reduce(s, ACC(o), rcv, mine, l * es, HC_DEPS(rv, h->last));
            else
                red[j % 2] = hc_sched_reduce(s, ACC(o), mine, rcv, l * es, HC_DEPS(rv, h->last));
        }
        /* every reduce of the round (the receives are among their deps) */
        int32_t d[2 * HC_RH_MAX_CHUNKS + 1];
        uint32_t nd = 0;
        for (uint32_t q = from; q < s->nsteps; q++)
            if (s->steps[q].kind == HC_STEP_REDUCE)
                d[nd++] = (int32_t)q;
        h->last = hc_sched_nop(s, d, nd);
        h->in_acc = 1;
        lo = klo;
        hi = khi;
    }
#undef PIECES
#undef ACC
    return s->err;
}

/* ---- rings over a subset ---------------------------------------------------- */

/* Chunks per block: hc_ring_nchunks, within the tag range. */
static uint32_t gring_chunks(const hc_coll_args_t *a, const hc_gring_t *g, uint64_t maxblk)
{
    uint64_t c = hc_ring_nchunks(a, maxblk, 0);
    uint64_t cap = g->tags / (g->m - 1);
    if (c > cap)
        c = cap;
    return c ? (uint32_t)c : 1;
}

int32_t hc_gring_reduce_scatter(hc_sched_t *s, const hc_coll_args_t *a, const hc_gring_t *g,
                                int32_t entry)
{
    const uint32_t m = g->m, p = g->pos;
    const uint64_t es = a->esize;
    if (m <= 1 || g->count == 0)
        return entry;
    const uint32_t next = hc_gring_rank(g, (p + 1) % m), prev = hc_gring_rank(g, (p + m - 1) % m);
    const uint64_t maxblk = hc_block_len(g->count, m, 0);
    const uint32_t C = gring_chunks(a, g, maxblk);
    const uint64_t slot = (maxblk + C - 1) / C * es;
    const uint32_t from = s->nsteps;
    const int32_t b = (int32_t)s->nsteps;
#define RED(j) (b + 3 * (int32_t)(j) + 2)
#define RCV(j) (b + 3 * (int32_t)(j) + 1)
    hc_sched_need_tmp(s, HC_RING_SLOTS * slot);
    for (uint32_t st = 0; st + 1 < m; st++) {
        const uint32_t sb = (p + 2 * m - st - 1) % m, rb = (p + 2 * m - st - 2) % m;
        const uint64_t s0 = hc_block_start(g->count, m, sb), sl = hc_block_len(g->count, m, sb);
        const uint64_t r0 = hc_block_start(g->count, m, rb), rl = hc_block_len(g->count, m, rb);
        for (uint32_t k = 0; k < C; k++) {
            const uint32_t j = st * C + k, tag = g->tag0 + j;
            const uint64_t so = (g->base + s0 + hc_block_start(sl, C, k)) * es;
            const uint64_t sn = hc_block_len(sl, C, k) * es;
            const uint64_t ro = (g->base + r0 + hc_block_start(rl, C, k)) * es;
            const uint64_t rn = hc_block_len(rl, C, k) * es;
            const hc_loc_t tmp = HC_TMP((j % HC_RING_SLOTS) * slot);
            if (st == 0)
                hc_sched_send_or_nop(s, next, tag, hc_loc(g->src, so), sn, HC_DEPS(entry));
            else
                hc_sched_send_or_nop(s, next, tag, HC_RECV(so), sn, HC_DEPS(RED(j - C)));
            hc_sched_recv_or_nop(s, prev, tag, tmp, rn,
                                 HC_DEPS(entry, j >= HC_RING_SLOTS ? RED(j - HC_RING_SLOTS) : -1));
            /* the partial of the earlier ring positions first, then ours */
            hc_sched_reduce_or_nop(s, HC_RECV(ro), tmp, hc_loc(g->src, ro), rn,
                                   HC_DEPS(RCV(j)));
        }
    }
#undef RED
#undef RCV
    return hc_sched_join(s, from, entry);
}

int32_t hc_gring_allgather(hc_sched_t *s, const hc_coll_args_t *a, const hc_gring_t *g,
                           int32_t entry)
{
    const uint32_t m = g->m, p = g->pos;
    const uint64_t es = a->esize;
    if (m <= 1 || g->count == 0)
        return entry;
    const uint32_t next = hc_gring_rank(g, (p + 1) % m), prev = hc_gring_rank(g, (p + m - 1) % m);
    const uint64_t maxblk = hc_block_len(g->count, m, 0);
    const uint32_t C = gring_chunks(a, g, maxblk);
    const uint32_t from = s->nsteps;
    const int32_t b = (int32_t)s->nsteps;
#define RCV(j) (b + 2 * (int32_t)(j) + 1)
    for (uint32_t st = 0; st + 1 < m; st++) {
        const uint32_t sb = (p + m - st) % m, rb = (p + 2 * m - st - 1) % m;
        const uint64_t s0 = hc_block_start(g->count, m, sb), sl = hc_block_len(g->count, m, sb);
        const uint64_t r0 = hc_block_start(g->count, m, rb), rl = hc_block_len(g->count, m, rb);
        for (uint32_t k = 0; k < C; k++) {
            const uint32_t j = st * C + k, tag = g->tag0 + j;
            const uint64_t so = (g->base + s0 + hc_block_start(sl, C, k)) * es;
            const uint64_t sn = hc_block_len(sl, C, k) * es;
            const uint64_t ro = (g->base + r0 + hc_block_start(rl, C, k)) * es;
            const uint64_t rn = hc_block_len(rl, C, k) * es;
            hc_sched_send_or_nop(s, next, tag, HC_RECV(so), sn,
                                 HC_DEPS(st == 0 ? entry : RCV(j - C)));
            hc_sched_recv_or_nop(s, prev, tag, HC_RECV(ro), rn, HC_DEPS(entry));
        }
    }
#undef RCV
    return hc_sched_join(s, from, entry);
}
