/*
 * coll/hier.c - units, slices and the two stage engines of the
 * hierarchical algorithms (the design is in hier.h).
 *
 * Step indices are kept in small arrays built per schedule (the layouts
 * are irregular when units differ in size); schedules are cached, so this
 * runs once per (communicator, operation, size).
 */
#include "hier.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

int hc_hier_init(const hc_coll_args_t *a, hc_hier_t *h)
{
    const hc_topo_view_t *v = a->topo;
    memset(h, 0, sizeof(*h));
    h->n = a->nranks;
    h->me = a->rank;
    h->ring = v ? v->ring : NULL;
    h->flat_off[0] = 0;
    h->flat_off[1] = a->nranks;
    h->off = h->flat_off;
    h->G = 1;
    h->level = "flat";
    if (v && v->nnodes > 1 && v->node_off && v->node_off[v->nnodes] == a->nranks) {
        h->off = v->node_off;
        h->G = v->nnodes;
        h->level = "node";
    } else if (v && v->ngroups > 1 && v->group_off && v->group_off[v->ngroups] == a->nranks) {
        h->off = v->group_off;
        h->G = v->ngroups;
        h->level = "group";
    }
    int64_t pos = -1;
    if (v && v->pos_of && v->ring) {
        pos = v->pos_of[a->rank];
    } else if (h->ring) { /* the topology's ring, whatever the ring algorithms follow */
        for (uint32_t i = 0; i < a->nranks && pos < 0; i++)
            if (h->ring[i] == a->rank)
                pos = i;
    } else {
        pos = a->rank;
    }
    if (pos < 0 || (uint64_t)pos >= a->nranks || (h->ring && h->ring[pos] != a->rank))
        return HCCL_E_PARA;
    h->pos = (uint32_t)pos;
    for (uint32_t u = 0; u < h->G; u++) {
        if (h->off[u + 1] < h->off[u])
            return HCCL_E_PARA;
        uint32_t sz = h->off[u + 1] - h->off[u];
        if (sz > h->smax)
            h->smax = sz;
        if (h->pos >= h->off[u] && h->pos < h->off[u + 1]) {
            h->g = u;
            h->m = h->pos - h->off[u];
        }
    }
    return h->smax ? HCCL_SUCCESS : HCCL_E_PARA;
}

const char *hc_hier_usable(const hc_coll_args_t *a)
{
    hc_hier_t h;
    if (hc_hier_init(a, &h) != HCCL_SUCCESS)
        return "the topology view does not contain this rank";
    if (h.G < 2)
        return "flat topology (one node, one fast group): declare groups with HCCL_GROUP_<n> "
               "or HCCL_TOPO_FILE";
    if (h.smax < 2)
        return "every unit holds one rank: the same as RING";
    return NULL;
}

int hc_hplan_init(hc_hplan_t *p, const hc_coll_args_t *a, const hc_hblocks_t *map,
                  uint32_t phases)
{
    memset(p, 0, sizeof(*p));
    int rc = hc_hier_init(a, &p->h);
    if (rc != HCCL_SUCCESS)
        return rc;
    const hc_hier_t *h = &p->h;
    p->map = *map;
    p->es = a->esize;
    for (uint32_t b = 0; b < a->nranks; b++)
        if (hc_hblk_len(map, b) > p->maxblk)
            p->maxblk = hc_hblk_len(map, b);
    /* cnt[j]: units that have a member j */
    uint32_t *cnt = calloc(h->smax, sizeof(uint32_t));
    if (cnt == NULL)
        return HCCL_E_MEMORY;
    for (uint32_t u = 0; u < h->G; u++)
        for (uint32_t j = 0; j < hc_hier_usize(h, u); j++)
            cnt[j]++;
    /* the longest intra-unit phase over all units: (S_g - 1) * LMAX_g */
    uint64_t intra = 0;
    for (uint32_t u = 0; u < h->G; u++) {
        const uint32_t su = hc_hier_usize(h, u);
        uint32_t lm = 0;
        for (uint32_t i = 0; i < su; i++) {
            uint32_t l = 0;
            for (uint32_t j = i; j < h->smax; j += su)
                l += cnt[j];
            if (l > lm)
                lm = l;
        }
        if ((uint64_t)(su - 1) * lm > intra)
            intra = (uint64_t)(su - 1) * lm;
        if (u == h->g)
            p->lmax = lm;
    }
    const uint64_t per_chunk = (uint64_t)h->smax * (h->G - 1) + intra;
    const uint64_t steps = per_chunk * phases;
    p->C = (uint32_t)hc_ring_nchunks(a, p->maxblk, steps ? steps : 1);
    p->span = (uint32_t)(per_chunk * p->C);
    /* my unit's lists and my slices */
    p->S = hc_hier_usize(h, h->g);
    p->lst_off = calloc(p->S + 1, sizeof(uint32_t));
    p->lst = malloc((a->nranks ? a->nranks : 1) * sizeof(uint32_t));
    p->slices = malloc(h->smax * sizeof(uint32_t));
    if (!p->lst_off || !p->lst || !p->slices) {
        free(cnt);
        hc_hplan_free(p);
        return HCCL_E_MEMORY;
    }
    /* A list holds its slices' blocks unit by unit in the order the
     * inter-unit ring needs this unit's partials: unit g-1's first (sent
     * at the first step), then g-2, ... So the network starts as soon as
     * the intra-unit stage has made the first of them, and every unit's
     * schedule is unit 0's with the units renumbered by g (hcomm-sim
     * replays such schedules by symmetry). */
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->S; i++) {
        p->lst_off[i] = k;
        for (uint32_t j = i; j < h->smax; j += p->S)
            for (uint32_t uu = 0; uu < h->G; uu++) {
                const uint32_t u = (h->g + h->G - 1 - uu) % h->G;
                if (j < hc_hier_usize(h, u))
                    p->lst[k++] = hc_hier_member(h, u, j);
            }
        if (i == h->m)
            for (uint32_t j = i; j < h->smax; j += p->S)
                p->slices[p->nslices++] = j;
    }
    p->lst_off[p->S] = k;
    free(cnt);
    return HCCL_SUCCESS;
}

void hc_hplan_free(hc_hplan_t *p)
{
    free(p->lst);
    free(p->lst_off);
    free(p->slices);
    p->lst = p->lst_off = p->slices = NULL;
}

/* ---- helpers ---------------------------------------------------------------- */

static inline uint32_t list_len(const hc_hplan_t *p, uint32_t i)
{
    return p->lst_off[i + 1] - p->lst_off[i];
}
static inline uint32_t list_at(const hc_hplan_t *p, uint32_t i, uint32_t idx)
{
    return p->lst[p->lst_off[i] + idx];
}
/* Index of block b in my own list L(m). */
static uint32_t my_index(const hc_hplan_t *p, uint32_t b)
{
    const uint32_t m = p->h.m;
    for (uint32_t i = 0; i < list_len(p, m); i++)
        if (list_at(p, m, i) == b)
            return i;
    return NONE;
}
/* Block of unit u in slice j, or NONE. */
static inline uint32_t slice_block(const hc_hier_t *h, uint32_t u, uint32_t j)
{
    return j < hc_hier_usize(h, u) ? hc_hier_member(h, u, j) : NONE;
}
/* Who serves slice j in unit u. */
static inline uint32_t slice_peer(const hc_hier_t *h, uint32_t u, uint32_t j)
{
    return hc_hier_member(h, u, j % hc_hier_usize(h, u));
}
static inline hc_loc_t loc_add(hc_loc_t l, uint64_t off)
{
    l.off += off;
    return l;
}
static inline uint64_t ck_start(const hc_hplan_t *p, uint64_t bl, uint32_t k)
{
    return hc_block_start(bl, p->C, k);
}
static inline uint64_t ck_len(const hc_hplan_t *p, uint64_t bl, uint32_t k)
{
    return hc_block_len(bl, p->C, k);
}

/* ---- reduce-scatter ------------------------------------------------------- */

/* The state hc_hier_rs's stages share. */
typedef struct {
    const hc_hplan_t *p;
    hc_sched_t *s;
    uint32_t tagbase, t_intra, LM;
    uint64_t R0, R1, P, I; /* TMP: list buffers, partials, inter-unit slots */
    hc_loc_t out;
    int32_t *out_step, *rd;
    int32_t *ired, *rlast, *xred, *xsend;
} rs_t;

#define IX(st, idx, k) (((size_t)(st) * rs->LM + (idx)) * rs->p->C + (k))
#define RL(par, idx, k) rs->rlast[((size_t)(par) * rs->LM + (idx)) * rs->p->C + (k)]
#define XX(ji, t, k) (((size_t)(ji) * (rs->p->h.G - 1) + (t)) * rs->p->C + (k))

/* Intra-unit ring reduce-scatter of the lists: L(m-1-st) goes out at
 * step st and L(m-2-st) comes in; L(m) is complete after S-1 steps */
static void rs_intra(rs_t *rs)
{
    const hc_hplan_t *p = rs->p;
    hc_sched_t *s = rs->s;
    const hc_hier_t *h = &p->h;
    const hc_hblocks_t *map = &p->map;
    const uint32_t S = p->S, G = h->G, m = h->m, g = h->g, C = p->C;
    const uint64_t es = p->es, mb = p->maxblk * es;
    const uint64_t R0 = rs->R0, R1 = rs->R1, P = rs->P;
    const uint32_t t_intra = rs->t_intra;
    const hc_loc_t out = rs->out;
    int32_t *out_step = rs->out_step, *rd = rs->rd, *ired = rs->ired;
    const uint32_t next = hc_hier_member(h, g, (m + 1) % S);
    const uint32_t prev = hc_hier_member(h, g, (m + S - 1) % S);
    for (uint32_t st = 0; st + 1 < S; st++) {
        const uint32_t sl = (m + 2 * S - 1 - st) % S, rl = (m + 2 * S - 2 - st) % S;
        const int last = st + 2 == S;
        const uint64_t Rs = (st % 2) ? R1 : R0, Rp = (st % 2) ? R0 : R1;
        for (uint32_t idx = 0; idx < list_len(p, sl); idx++) {
            const uint32_t b = list_at(p, sl, idx);
            const uint64_t bl = hc_hblk_len(map, b), bo = hc_hblk_off(map, b);
            for (uint32_t k = 0; k < C; k++) {
                const uint64_t cs = ck_start(p, bl, k), cl = ck_len(p, bl, k) * es;
                const uint32_t tag = t_intra + (uint32_t)IX(st, idx, k);
                int32_t x;
                if (st == 0) {
                    x = hc_sched_send_or_nop(s, next, tag, HC_SEND((bo + cs) * es), cl,
                                             HC_NODEPS);
                    if (rd)
                        rd[(size_t)b * C + k] = x;
                } else {
                    x = hc_sched_send_or_nop(s, next, tag, HC_TMP(Rp + idx * mb + cs * es), cl,
                                             HC_DEPS(ired[IX(st - 1, idx, k)]));
                    RL((st - 1) % 2, idx, k) = x;
                }
            }
        }
        for (uint32_t idx = 0; idx < list_len(p, rl); idx++) {
            const uint32_t b = list_at(p, rl, idx);
            const uint64_t bl = hc_hblk_len(map, b), bo = hc_hblk_off(map, b);
            for (uint32_t k = 0; k < C; k++) {
                const uint64_t cs = ck_start(p, bl, k), cl = ck_len(p, bl, k) * es;
                const uint32_t tag = t_intra + (uint32_t)IX(st, idx, k);
                const hc_loc_t slot = HC_TMP(Rs + idx * mb + cs * es);
                /* the slot's previous content must have been forwarded */
                const int32_t r = hc_sched_recv_or_nop(s, prev, tag, slot, cl,
                                                       HC_DEPS(RL(st % 2, idx, k)));
                hc_loc_t dst = slot;
                if (last)
                    dst = G == 1 ? loc_add(out, cs * es) : HC_TMP(P + idx * mb + cs * es);
                const int32_t x = hc_sched_reduce_or_nop(s, dst, slot, HC_SEND((bo + cs) * es),
                                                         cl, HC_DEPS(r));
                ired[IX(st, idx, k)] = x;
                if (rd)
                    rd[(size_t)b * C + k] = x;
                if (last && G == 1)
                    out_step[k] = x;
            }
        }
    }
}

/* One rank: its block copied to out. */
static void rs_one(rs_t *rs)
{
    const hc_hplan_t *p = rs->p;
    hc_sched_t *s = rs->s;
    const hc_hier_t *h = &p->h;
    const hc_hblocks_t *map = &p->map;
    const uint32_t C = p->C;
    const uint64_t es = p->es;
    const hc_loc_t out = rs->out;
    int32_t *out_step = rs->out_step, *rd = rs->rd;
    const uint64_t bl = hc_hblk_len(map, h->me), bo = hc_hblk_off(map, h->me);
    for (uint32_t k = 0; k < C; k++) {
        const uint64_t cs = ck_start(p, bl, k), cl = ck_len(p, bl, k) * es;
        out_step[k] = cl ? hc_sched_copy(s, loc_add(out, cs * es), HC_SEND((bo + cs) * es),
                                         cl, HC_NODEPS)
                         : hc_sched_nop_list(s, HC_NODEPS);
        if (rd)
            rd[(size_t)h->me * C + k] = out_step[k];
    }
}

/* Inter-unit ring reduce-scatter per slice: position g sends the
 * partial of unit g-1-t's block and folds unit g-2-t's in; its own
 * block arrives complete at the last step */
static void rs_inter(rs_t *rs)
{
    const hc_hplan_t *p = rs->p;
    hc_sched_t *s = rs->s;
    const hc_hier_t *h = &p->h;
    const hc_hblocks_t *map = &p->map;
    const uint32_t S = p->S, G = h->G, g = h->g, C = p->C;
    const uint64_t es = p->es, mb = p->maxblk * es;
    const uint64_t P = rs->P, I = rs->I;
    const uint32_t tagbase = rs->tagbase;
    const hc_loc_t out = rs->out;
    int32_t *out_step = rs->out_step, *rd = rs->rd, *ired = rs->ired, *xred = rs->xred;
    int32_t *xsend = rs->xsend;
    for (uint32_t ji = 0; ji < p->nslices; ji++) {
        const uint32_t j = p->slices[ji];
        const uint32_t next = slice_peer(h, (g + 1) % G, j), prev = slice_peer(h, (g + G - 1) % G, j);
        const uint64_t I0 = I + (uint64_t)ji * 2 * mb;
        for (uint32_t t = 0; t + 1 < G; t++) {
            const uint32_t sb = slice_block(h, (g + 2 * G - 1 - t) % G, j);
            const uint32_t rb = slice_block(h, (g + 2 * G - 2 - t) % G, j);
            const uint32_t si = sb == NONE ? NONE : my_index(p, sb);
            const uint32_t ri = rb == NONE ? NONE : my_index(p, rb);
            const uint64_t sbl = sb == NONE ? 0 : hc_hblk_len(map, sb);
            const uint64_t rbl = rb == NONE ? 0 : hc_hblk_len(map, rb);
            const uint64_t sbo = sb == NONE ? 0 : hc_hblk_off(map, sb);
            const uint64_t rbo = rb == NONE ? 0 : hc_hblk_off(map, rb);
            const int last = t + 2 == G;
            for (uint32_t k = 0; k < C; k++) {
                const uint32_t tag = tagbase + (uint32_t)((j * (G - 1) + t) * C + k);
                const uint64_t scs = ck_start(p, sbl, k), scl = ck_len(p, sbl, k) * es;
                const uint64_t rcs = ck_start(p, rbl, k), rcl = ck_len(p, rbl, k) * es;
                /* send */
                int32_t x;
                if (t == 0) {
                    hc_loc_t src = S > 1 ? HC_TMP(P + (si == NONE ? 0 : si) * mb + scs * es)
                                         : HC_SEND((sbo + scs) * es);
                    int32_t dep = S > 1 && si != NONE ? ired[IX(S - 2, si, k)] : -1;
                    x = hc_sched_send_or_nop(s, next, tag, src, scl, HC_DEPS(dep));
                    if (S == 1 && rd && sb != NONE)
                        rd[(size_t)sb * C + k] = x;
                } else {
                    x = hc_sched_send_or_nop(s, next, tag,
                                             HC_TMP(I0 + ((t - 1) % 2) * mb + scs * es), scl,
                                             HC_DEPS(xred[XX(ji, t - 1, k)]));
                }
                xsend[XX(ji, t, k)] = x;
                /* receive into the slot, fold our partial in */
                const hc_loc_t slot = HC_TMP(I0 + (t % 2) * mb + rcs * es);
                const int32_t r = hc_sched_recv_or_nop(
                    s, prev, tag, slot, rcl, HC_DEPS(t >= 2 ? xsend[XX(ji, t - 1, k)] : -1));
                if (rb == NONE) {
                    xred[XX(ji, t, k)] = hc_sched_nop_list(s, HC_DEPS(r));
                    continue;
                }
                const hc_loc_t part = S > 1 ? HC_TMP(P + ri * mb + rcs * es) : HC_SEND((rbo + rcs) * es);
                const int32_t pdep = S > 1 ? ired[IX(S - 2, ri, k)] : -1;
                const hc_loc_t dst = last ? loc_add(out, rcs * es) : slot;
                x = hc_sched_reduce_or_nop(s, dst, slot, part, rcl, HC_DEPS(r, pdep));
                xred[XX(ji, t, k)] = x;
                if (S == 1 && rd)
                    rd[(size_t)rb * C + k] = x;
                if (last)
                    out_step[k] = x;
            }
        }
    }
}

#undef IX
#undef RL
#undef XX

uint64_t hc_hier_rs(const hc_hplan_t *p, hc_sched_t *s, uint32_t tagbase, uint64_t tmp_base,
                    hc_loc_t out, int32_t *out_step, int32_t *rd)
{
    const hc_hier_t *h = &p->h;
    const uint32_t S = p->S, G = h->G, m = h->m, C = p->C;
    const uint64_t es = p->es, mb = p->maxblk * es;
    const uint32_t LM = p->lmax, nmy = list_len(p, m);
    const uint64_t rsz = S > 1 ? LM * mb : 0; /* no intra stage: no list buffers */
    const uint64_t R0 = tmp_base, R1 = R0 + rsz, P = R1 + rsz;
    const uint64_t I = P + (S > 1 ? nmy * mb : 0);
    const uint64_t used = I + (G > 1 ? (uint64_t)p->nslices * 2 * mb : 0) - tmp_base;
    const uint32_t t_intra = tagbase + h->smax * (G - 1) * C;
    int32_t *ired = NULL, *rlast = NULL, *xred = NULL, *xsend = NULL;

    for (uint32_t k = 0; k < C; k++)
        out_step[k] = -1;
    if (S > 1) {
        ired = malloc((size_t)(S - 1) * LM * C * sizeof(int32_t));
        /* per list-buffer slot (parity, index, chunk): the last send that
         * read it; lists differ in length, so it may be older than st-1 */
        rlast = malloc((size_t)2 * LM * C * sizeof(int32_t));
        for (size_t i = 0; rlast && i < (size_t)2 * LM * C; i++)
            rlast[i] = -1;
    }
    if (G > 1) {
        xred = malloc((size_t)p->nslices * (G - 1) * C * sizeof(int32_t));
        xsend = malloc((size_t)p->nslices * (G - 1) * C * sizeof(int32_t));
    }
    if ((S > 1 && (!ired || !rlast)) || (G > 1 && (!xred || !xsend))) {
        s->err = HCCL_E_MEMORY;
        goto out;
    }
    rs_t rs = {p, s, tagbase, t_intra, LM, R0, R1, P, I, out, out_step, rd,
               ired, rlast, xred, xsend};
    if (S > 1)
        rs_intra(&rs);
    if (G == 1 && S == 1)
        rs_one(&rs);
    if (G > 1)
        rs_inter(&rs);
out:
    free(ired);
    free(rlast);
    free(xred);
    free(xsend);
    return used;
}

/* ---- allgather ---------------------------------------------------------- */

void hc_hier_ag(const hc_hplan_t *p, hc_sched_t *s, uint32_t tagbase, hc_loc_t own,
                const int32_t *own_ready, const int32_t *war)
{
    const hc_hier_t *h = &p->h;
    const uint32_t S = p->S, G = h->G, m = h->m, g = h->g, C = p->C;
    const uint64_t es = p->es;
    const uint32_t LM = p->lmax, nmy = list_len(p, m);
    const uint32_t t_intra = tagbase + h->smax * (G - 1) * C;
    const hc_hblocks_t *map = &p->map;
    int32_t *got = malloc((size_t)(nmy ? nmy : 1) * C * sizeof(int32_t));
    int32_t *xrecv = G > 1 ? malloc((size_t)p->nslices * (G - 1) * C * sizeof(int32_t)) : NULL;
    int32_t *irecv = S > 1 ? malloc((size_t)(S - 1) * LM * C * sizeof(int32_t)) : NULL;
    if (!got || (G > 1 && !xrecv) || (S > 1 && !irecv)) {
        s->err = HCCL_E_MEMORY;
        goto out;
    }
    for (size_t i = 0; i < (size_t)(nmy ? nmy : 1) * C; i++)
        got[i] = -1;
#define W(b, k) (war ? war[(size_t)(b) * C + (k)] : -1)
#define OWN(k) (own_ready ? own_ready[k] : -1)

    /* inter-unit ring allgather per slice: position g sends unit g-t's block */
    for (uint32_t ji = 0; ji < p->nslices && G > 1; ji++) {
        const uint32_t j = p->slices[ji];
        const uint32_t next = slice_peer(h, (g + 1) % G, j), prev = slice_peer(h, (g + G - 1) % G, j);
        for (uint32_t t = 0; t + 1 < G; t++) {
            const uint32_t sb = slice_block(h, (g + G - t) % G, j);
            const uint32_t rb = slice_block(h, (g + 2 * G - t - 1) % G, j);
            const uint64_t sbl = sb == NONE ? 0 : hc_hblk_len(map, sb);
            const uint64_t rbl = rb == NONE ? 0 : hc_hblk_len(map, rb);
            const uint64_t sbo = sb == NONE ? 0 : hc_hblk_off(map, sb);
            const uint64_t rbo = rb == NONE ? 0 : hc_hblk_off(map, rb);
            const uint32_t ri = rb == NONE ? NONE : my_index(p, rb);
            for (uint32_t k = 0; k < C; k++) {
                const uint32_t tag = tagbase + (uint32_t)((j * (G - 1) + t) * C + k);
                const uint64_t scs = ck_start(p, sbl, k), scl = ck_len(p, sbl, k) * es;
                const uint64_t rcs = ck_start(p, rbl, k), rcl = ck_len(p, rbl, k) * es;
                if (t == 0) /* sb is this rank's block, or absent */
                    hc_sched_send_or_nop(s, next, tag, loc_add(own, scs * es), scl,
                                         HC_DEPS(sb == NONE ? -1 : OWN(k)));
                else
                    hc_sched_send_or_nop(s, next, tag, HC_RECV((sbo + scs) * es), scl,
                                         HC_DEPS(xrecv[((size_t)ji * (G - 1) + t - 1) * C + k]));
                const int32_t r = hc_sched_recv_or_nop(s, prev, tag, HC_RECV((rbo + rcs) * es), rcl,
                                                       HC_DEPS(rb == NONE ? -1 : W(rb, k)));
                xrecv[((size_t)ji * (G - 1) + t) * C + k] = r;
                if (ri != NONE)
                    got[(size_t)ri * C + k] = r;
            }
        }
    }

    /* intra-unit ring allgather of the lists: L(m-st) goes out at step st */
    if (S > 1) {
        const uint32_t next = hc_hier_member(h, g, (m + 1) % S);
        const uint32_t prev = hc_hier_member(h, g, (m + S - 1) % S);
        for (uint32_t st = 0; st + 1 < S; st++) {
            const uint32_t sl = (m + S - st) % S, rl = (m + 2 * S - st - 1) % S;
            for (uint32_t idx = 0; idx < list_len(p, sl); idx++) {
                const uint32_t b = list_at(p, sl, idx);
                const uint64_t bl = hc_hblk_len(map, b), bo = hc_hblk_off(map, b);
                for (uint32_t k = 0; k < C; k++) {
                    const uint64_t cs = ck_start(p, bl, k), cl = ck_len(p, bl, k) * es;
                    const uint32_t tag = t_intra + (uint32_t)(((size_t)st * LM + idx) * C + k);
                    if (st == 0 && b == h->me)
                        hc_sched_send_or_nop(s, next, tag, loc_add(own, cs * es), cl,
                                             HC_DEPS(OWN(k)));
                    else if (st == 0)
                        hc_sched_send_or_nop(s, next, tag, HC_RECV((bo + cs) * es), cl,
                                             HC_DEPS(got[(size_t)idx * C + k]));
                    else
                        hc_sched_send_or_nop(s, next, tag, HC_RECV((bo + cs) * es), cl,
                                             HC_DEPS(irecv[((size_t)(st - 1) * LM + idx) * C + k]));
                }
            }
            for (uint32_t idx = 0; idx < list_len(p, rl); idx++) {
                const uint32_t b = list_at(p, rl, idx);
                const uint64_t bl = hc_hblk_len(map, b), bo = hc_hblk_off(map, b);
                for (uint32_t k = 0; k < C; k++) {
                    const uint64_t cs = ck_start(p, bl, k), cl = ck_len(p, bl, k) * es;
                    const uint32_t tag = t_intra + (uint32_t)(((size_t)st * LM + idx) * C + k);
                    irecv[((size_t)st * LM + idx) * C + k] = hc_sched_recv_or_nop(
                        s, prev, tag, HC_RECV((bo + cs) * es), cl, HC_DEPS(W(b, k)));
                }
            }
        }
    }
#undef W
#undef OWN
out:
    free(got);
    free(xrecv);
    free(irecv);
}
