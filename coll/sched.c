/* coll/sched.c - appending steps to a schedule (see coll.h). */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

void hc_sched_init(hc_sched_t *s, size_t esize)
{
    memset(s, 0, sizeof(*s));
    s->esize = esize;
}

/* Generations of schedules, unique in the process (hc_sched_t.gen). */
static uint64_t g_gen;

void hc_sched_reset(hc_sched_t *s)
{
    s->gen = 0;
    s->nsteps = 0;
    s->ndeps = 0;
    s->tmp_bytes = 0;
    s->seg_bytes = 0;
    s->nsrcs = 0;
    s->nmsgs = 0;
    s->exposes = 0;
    s->waits_all = 0;
    s->branched = 0;
    s->recv_end = 0;
    s->nt_recv = 0;
    s->fast = 0;
    s->spin_on_producer = 0;
    s->err = HCCL_SUCCESS;
    s->algo = NULL;
}

void hc_sched_free(hc_sched_t *s)
{
    free(s->steps);
    free(s->deps);
    free(s->srcs);
    memset(s, 0, sizeof(*s));
}

void hc_sched_need_tmp(hc_sched_t *s, uint64_t bytes)
{
    if (bytes > s->tmp_bytes)
        s->tmp_bytes = bytes;
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    uint32_t ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap *= 2;
    void *np = realloc(*p, (size_t)ncap * elem);
    if (np == NULL)
        return -1;
    *p = np;
    *cap = ncap;
    return 0;
}

/* deps: terminated by INT32_MIN (HC_DEPS) when n == UINT32_MAX, else n long */
static int32_t add(hc_sched_t *s, const hc_step_t *st, const int32_t *deps, uint32_t n)
{
    if (s->err)
        return -1;
    uint32_t nd = 0;
    if (n == UINT32_MAX) {
        n = 0;
        while (deps[n] != INT32_MIN)
            n++;
    }
    for (uint32_t i = 0; i < n; i++)
        nd += deps[i] >= 0;
    if (grow((void **)&s->steps, &s->steps_cap, s->nsteps + 1, sizeof(hc_step_t)) ||
        grow((void **)&s->deps, &s->deps_cap, s->ndeps + nd, sizeof(uint32_t))) {
        s->err = HCCL_E_MEMORY;
        return -1;
    }
    hc_step_t *t = &s->steps[s->nsteps];
    s->gen = __atomic_add_fetch(&g_gen, 1, __ATOMIC_RELAXED);
    if ((st->kind == HC_STEP_COPY || st->kind == HC_STEP_REDUCE || st->kind == HC_STEP_REDUCE_MULTI) &&
        st->dst.buf == HC_BUF_RECV && st->dst.off + st->bytes > s->recv_end)
        s->recv_end = st->dst.off + st->bytes;
    *t = *st;
    t->dep_off = s->ndeps;
    t->ndeps = 0;
    int after_prev = s->nsteps == 0;
    for (uint32_t i = 0; i < n; i++) {
        if (deps[i] < 0)
            continue;
        after_prev |= (uint32_t)deps[i] + 1 == s->nsteps;
        if ((uint32_t)deps[i] >= s->nsteps) { /* must point backwards */
            s->err = HCCL_E_INTERNAL;
            return -1;
        }
        s->deps[s->ndeps++] = (uint32_t)deps[i];
        t->ndeps++;
    }
    if (!after_prev || st->kind == HC_STEP_SEND || st->kind == HC_STEP_RECV)
        s->branched = 1;
    return (int32_t)s->nsteps++;
}

int32_t hc_sched_send(hc_sched_t *s, uint32_t peer, uint32_t tag, hc_loc_t src,
                      uint64_t bytes, const int32_t *deps)
{
    hc_step_t st = {.kind = HC_STEP_SEND, .peer = peer, .tag = tag, .a = src, .bytes = bytes};
    if (tag > HC_TAG_MAX) {
        s->err = HCCL_E_INTERNAL;
        return -1;
    }
    int32_t i = add(s, &st, deps, UINT32_MAX);
    s->nmsgs += i >= 0;
    return i;
}

int32_t hc_sched_recv(hc_sched_t *s, uint32_t peer, uint32_t tag, hc_loc_t dst,
                      uint64_t bytes, const int32_t *deps)
{
    hc_step_t st = {.kind = HC_STEP_RECV, .peer = peer, .tag = tag, .dst = dst, .bytes = bytes};
    if (tag > HC_TAG_MAX) {
        s->err = HCCL_E_INTERNAL;
        return -1;
    }
    int32_t i = add(s, &st, deps, UINT32_MAX);
    s->nmsgs += i >= 0;
    return i;
}

int32_t hc_sched_reduce(hc_sched_t *s, hc_loc_t dst, hc_loc_t a, hc_loc_t b,
                        uint64_t bytes, const int32_t *deps)
{
    hc_step_t st = {.kind = HC_STEP_REDUCE, .dst = dst, .a = a, .b = b, .bytes = bytes};
    return add(s, &st, deps, UINT32_MAX);
}

int32_t hc_sched_copy(hc_sched_t *s, hc_loc_t dst, hc_loc_t src, uint64_t bytes,
                      const int32_t *deps)
{
    hc_step_t st = {.kind = HC_STEP_COPY, .dst = dst, .a = src, .bytes = bytes};
    return add(s, &st, deps, UINT32_MAX);
}

int32_t hc_sched_nop(hc_sched_t *s, const int32_t *deps, uint32_t n)
{
    hc_step_t st = {.kind = HC_STEP_NOP};
    return add(s, &st, deps, n);
}

/* ---- shared-memory steps (coll.h) ------------------------------------ */

int32_t hc_sched_read(hc_sched_t *s, hc_loc_t dst, uint32_t peer, hc_loc_t src, uint64_t bytes,
                      const int32_t *deps)
{
    hc_step_t st = {.kind = HC_STEP_READ, .peer = peer, .dst = dst, .a = src, .bytes = bytes};
    return add(s, &st, deps, UINT32_MAX);
}

int32_t hc_sched_write(hc_sched_t *s, uint32_t peer, hc_loc_t dst, hc_loc_t src, uint64_t bytes,
                       const int32_t *deps)
{
    hc_step_t st = {.kind = HC_STEP_WRITE, .peer = peer, .dst = dst, .a = src, .bytes = bytes};
    return add(s, &st, deps, UINT32_MAX);
}

int32_t hc_sched_xreduce(hc_sched_t *s, hc_loc_t dst, uint32_t peer, hc_loc_t own,
                         hc_loc_t theirs, uint64_t bytes, uint32_t flags, const int32_t *deps)
{
    hc_step_t st = {.kind = HC_STEP_XREDUCE, .peer = peer, .tag = flags, .dst = dst, .a = own,
                    .b = theirs, .bytes = bytes};
    return add(s, &st, deps, UINT32_MAX);
}

void hc_sched_need_seg(hc_sched_t *s, uint64_t bytes)
{
    if (bytes > s->seg_bytes)
        s->seg_bytes = bytes;
}

int32_t hc_sched_publish(hc_sched_t *s, uint64_t flag_off, uint32_t value, const int32_t *deps)
{
    hc_step_t st = {.kind = HC_STEP_PUBLISH, .dst = HC_SEG(flag_off), .bytes = value};
    if (flag_off % 8 || flag_off < HC_SEG_BASE) {
        s->err = HCCL_E_INTERNAL;
        return -1;
    }
    hc_sched_need_seg(s, flag_off + 8);
    return add(s, &st, deps, UINT32_MAX);
}

int32_t hc_sched_wait(hc_sched_t *s, uint32_t peer, uint64_t flag_off, uint32_t value,
                      uint8_t ago, const int32_t *deps)
{
    hc_step_t st = {.kind = HC_STEP_WAIT, .ago = ago, .peer = peer,
                    .a = HC_PEER(peer, flag_off), .bytes = value};
    /* the half of operation epoch - ago is this operation's only for even
     * ago; offset 0 is the executor's completion flag (HC_SEG_DONE) */
    if (flag_off % 8 || (flag_off < HC_SEG_BASE && flag_off != HC_SEG_DONE) || ago % 2) {
        s->err = HCCL_E_INTERNAL;
        return -1;
    }
    hc_sched_need_seg(s, flag_off + 8);
    int32_t i = add(s, &st, deps, UINT32_MAX);
    if (i >= 0 && peer == HC_PEERS_ALL && ago == 0)
        s->waits_all = 1;
    return i;
}

void hc_sched_ring(hc_sched_t *s, int32_t i)
{
    if (i < 0 || (uint32_t)i >= s->nsteps) {
        if (!s->err)
            s->err = HCCL_E_INTERNAL;
        return;
    }
    hc_step_t *t = &s->steps[i];
    hc_loc_t *l[3] = {&t->dst, &t->a, &t->b};
    for (int k = 0; k < 3; k++)
        if (l[k]->buf == HC_BUF_SEG || l[k]->buf == HC_BUF_PEER) {
            l[k]->ring = 1;
            hc_sched_need_seg(s, l[k]->off + (uint64_t)HC_SEG_RING_SLOTS * HC_SEG_RING_BYTES);
        }
}

void hc_sched_wait_prefetch(hc_sched_t *s, int32_t w, uint64_t data_off, uint32_t lines)
{
    if (w < 0 || (uint32_t)w >= s->nsteps || s->steps[w].kind != HC_STEP_WAIT) {
        if (!s->err)
            s->err = HCCL_E_INTERNAL;
        return;
    }
    s->steps[w].dst = HC_PEER(s->steps[w].peer, data_off);
    s->steps[w].tag = lines;
    hc_sched_need_seg(s, data_off + (uint64_t)lines * 64);
}

int32_t hc_sched_reduce_ranks(hc_sched_t *s, hc_loc_t dst, uint64_t peer_off, hc_loc_t own,
                              uint64_t bytes, const int32_t *deps)
{
    hc_step_t st = {.kind = HC_STEP_REDUCE_MULTI, .nsrc = 0, .dst = dst,
                    .a = HC_PEER(HC_PEERS_ALL, peer_off), .b = own, .bytes = bytes};
    if (dst.buf == HC_BUF_PEER) { /* a rank writes only its own staging */
        s->err = HCCL_E_INTERNAL;
        return -1;
    }
    hc_sched_need_seg(s, peer_off + bytes);
    return add(s, &st, deps, UINT32_MAX);
}

int32_t hc_sched_reduce_multi(hc_sched_t *s, hc_loc_t dst, const hc_loc_t *src, uint32_t nsrc,
                              uint64_t bytes, const int32_t *deps)
{
    if (s->err)
        return -1;
    if (nsrc == 0 || nsrc > UINT16_MAX) {
        s->err = HCCL_E_INTERNAL;
        return -1;
    }
    if (grow((void **)&s->srcs, &s->srcs_cap, s->nsrcs + nsrc, sizeof(hc_loc_t))) {
        s->err = HCCL_E_MEMORY;
        return -1;
    }
    hc_step_t st = {.kind = HC_STEP_REDUCE_MULTI, .nsrc = (uint16_t)nsrc, .src_off = s->nsrcs,
                    .dst = dst, .a = src[0], .bytes = bytes};
    int32_t i = add(s, &st, deps, UINT32_MAX);
    if (i >= 0) {
        memcpy(s->srcs + s->nsrcs, src, nsrc * sizeof(hc_loc_t));
        s->nsrcs += nsrc;
    }
    return i;
}

uint64_t hc_sched_xnode_bytes(const hc_sched_t *s, const hc_topo_view_t *v, uint32_t rank,
                              uint32_t nranks)
{
    uint64_t sum = 0;
    if (v == NULL || v->nnodes < 2 || v->node_of == NULL)
        return 0;
    for (uint32_t i = 0; i < s->nsteps; i++) {
        const hc_step_t *st = &s->steps[i];
        if (st->kind == HC_STEP_SEND && st->peer < nranks &&
            v->node_of[st->peer] != v->node_of[rank])
            sum += st->bytes;
    }
    return sum;
}
