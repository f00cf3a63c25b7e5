/* src/exec/transport_loop.c - in-process loopback transport (see transport_loop.h). */
#include "transport_loop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hccl/hccl.h>

#include "src/transport/mover.h"

typedef struct lp_msg {
    struct lp_msg *next;
    uint64_t tag;
    uint32_t src, dst;
    void *buf; /* send: source; recv: destination */
    size_t len;
    hc_xfer_t *x;
    int is_send;
} lp_msg_t;

typedef struct lp_rank {
    hc_loop_t *lp;
    uint32_t rank;
} lp_rank_t;

/* Unmatched messages wait in hash buckets keyed by (src, dst, tag), in post
 * order within a bucket, so that posting and matching cost O(1) however
 * many messages are outstanding (a ring allgather pre-posts n-1 receives on
 * every rank); the table doubles as it fills. */
typedef struct {
    lp_msg_t *head, *tail;
} lp_bucket_t;

struct hc_loop {
    uint32_t n;
    lp_rank_t *ranks;
    lp_bucket_t *sends, *recvs; /* unmatched sends / receives */
    uint32_t mask;              /* buckets - 1 */
    size_t nsends, nrecvs;
    uint64_t *traffic;
    int error;
    /* simulated shared staging */
    char *seg;
    char **halves; /* [parity * n + rank] */
    uint64_t half, epoch0;
    uint8_t *prev_all; /* per rank */
    uint64_t *seen_done; /* per rank (hc_shm_bind_t) */
    int32_t *pid;        /* per rank: all this process (single-copy reads) */
    hc_win_t *win;       /* NULL, or every rank's memory registered (identity) */
};

hc_loop_t *hc_loop_create(uint32_t n)
{
    hc_loop_t *lp = calloc(1, sizeof(*lp));
    if (lp == NULL)
        return NULL;
    uint32_t nb = 64;
    lp->n = n;
    lp->mask = nb - 1;
    lp->ranks = calloc(n, sizeof(*lp->ranks));
    lp->sends = calloc(nb, sizeof(*lp->sends));
    lp->recvs = calloc(nb, sizeof(*lp->recvs));
    lp->traffic = calloc((size_t)n * n, sizeof(uint64_t));
    if (!lp->ranks || !lp->sends || !lp->recvs || !lp->traffic) {
        hc_loop_destroy(lp);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        lp->ranks[i].lp = lp;
        lp->ranks[i].rank = i;
    }
    return lp;
}

static void free_list(lp_msg_t *m)
{
    while (m) {
        lp_msg_t *nx = m->next;
        free(m);
        m = nx;
    }
}

/* Drop the simulated staging and its per-rank state. */
static void shm_free(hc_loop_t *lp)
{
    free(lp->seg);
    free(lp->halves);
    free(lp->prev_all);
    free(lp->seen_done);
    free(lp->pid);
    free(lp->win);
    lp->win = NULL;
    lp->pid = NULL;
    lp->seg = NULL;
    lp->halves = NULL;
    lp->prev_all = NULL;
    lp->seen_done = NULL;
    lp->half = 0;
}

void hc_loop_destroy(hc_loop_t *lp)
{
    if (lp == NULL)
        return;
    for (uint32_t i = 0; lp->sends && lp->recvs && i <= lp->mask; i++) {
        free_list(lp->sends[i].head);
        free_list(lp->recvs[i].head);
    }
    free(lp->ranks);
    free(lp->sends);
    free(lp->recvs);
    free(lp->traffic);
    shm_free(lp);
    free(lp);
}

int hc_loop_shm_alloc(hc_loop_t *lp, uint64_t half)
{
    half = (half + 63) & ~(uint64_t)63;
    shm_free(lp);
    lp->prev_all = calloc(lp->n, 1);
    lp->seen_done = calloc(lp->n, sizeof(uint64_t));
    lp->pid = calloc(lp->n, sizeof(int32_t));
    lp->halves = calloc(2 * (size_t)lp->n, sizeof(char *));
    lp->seg = aligned_alloc(64, 2 * half * lp->n + 64);
    if (lp->seg == NULL || lp->halves == NULL || lp->prev_all == NULL || lp->seen_done == NULL ||
        lp->pid == NULL) {
        shm_free(lp);
        return HCCL_E_MEMORY;
    }
    for (uint32_t r = 0; r < lp->n; r++) /* "peer" memory is ours: READ works */
        lp->pid[r] = (int32_t)getpid();
    memset(lp->seg, 0, 2 * half * lp->n);
    for (uint32_t r = 0; r < lp->n; r++)
        for (uint32_t p = 0; p < 2; p++)
            lp->halves[p * lp->n + r] = lp->seg + (2 * (size_t)r + p) * half;
    lp->half = half;
    lp->epoch0 = 1;
    return HCCL_SUCCESS;
}

void hc_loop_shm_epoch0(hc_loop_t *lp, uint64_t epoch0)
{
    lp->epoch0 = epoch0;
    if (lp->seen_done) /* what was seen belongs to the old numbering */
        memset(lp->seen_done, 0, lp->n * sizeof(uint64_t));
}

void hc_loop_shm_bind(hc_loop_t *lp, uint32_t rank, uint64_t epoch, hc_exec_t *e)
{
    hc_shm_bind_t b = {.half = lp->halves + (epoch & 1) * lp->n, .nranks = lp->n,
                       .epoch = epoch, .epoch0 = lp->epoch0, .gate = NULL,
                       .prev_all = &lp->prev_all[rank], .seen_done = &lp->seen_done[rank],
                       .pid = lp->pid, .wins = lp->win};
    hc_exec_bind_shm(e, &b);
}

int hc_loop_shm_registered(hc_loop_t *lp, int on)
{
    free(lp->win);
    lp->win = NULL;
    if (!on)
        return HCCL_SUCCESS;
    lp->win = calloc(1, sizeof(hc_win_t) + lp->n * sizeof(hc_win_map_t));
    if (lp->win == NULL)
        return HCCL_E_MEMORY;
    lp->win->nranks = lp->n;
    for (uint32_t r = 0; r < lp->n; r++) /* [64, max) seen at the same address */
        lp->win->m[r] = (hc_win_map_t){64, UINT64_MAX - 64, (char *)(uintptr_t)64, NULL, 0};
    return HCCL_SUCCESS;
}

void hc_loop_shm_done(hc_loop_t *lp, uint32_t rank, const hc_exec_t *e)
{
    lp->prev_all[rank] = e->status == HCCL_SUCCESS && e->s->waits_all;
}

char *hc_loop_shm_half(hc_loop_t *lp, uint32_t rank, uint32_t parity)
{
    return lp->halves[(parity & 1) * lp->n + rank];
}

void *hc_loop_tctx(hc_loop_t *lp, uint32_t rank)
{
    return &lp->ranks[rank];
}

const uint64_t *hc_loop_traffic(const hc_loop_t *lp)
{
    return lp->traffic;
}

static lp_bucket_t *bucket(hc_loop_t *lp, int sends, uint32_t src, uint32_t dst, uint64_t tag)
{
    uint64_t h = (tag ^ ((uint64_t)src << 32 | dst) * 0xc2b2ae3d27d4eb4fULL) *
                 0x9e3779b97f4a7c15ULL;
    return &(sends ? lp->sends : lp->recvs)[(uint32_t)(h >> 32) & lp->mask];
}

static void append(lp_bucket_t *b, lp_msg_t *m)
{
    m->next = NULL;
    if (b->tail)
        b->tail->next = m;
    else
        b->head = m;
    b->tail = m;
}

/* Double the buckets when they hold two messages each on average. Messages
 * move bucket by bucket in order, so equal keys stay in post order. */
static void grow(hc_loop_t *lp)
{
    if (lp->nsends + lp->nrecvs <= 2 * ((size_t)lp->mask + 1) || lp->mask >= (1u << 26))
        return;
    uint32_t nb = 2 * (lp->mask + 1);
    lp_bucket_t *ns = calloc(nb, sizeof(*ns)), *nr = calloc(nb, sizeof(*nr));
    if (ns == NULL || nr == NULL) { /* keep the small table: slower, still right */
        free(ns);
        free(nr);
        return;
    }
    lp_bucket_t *os = lp->sends, *orc = lp->recvs;
    uint32_t ob = lp->mask + 1;
    lp->sends = ns;
    lp->recvs = nr;
    lp->mask = nb - 1;
    for (uint32_t b = 0; b < ob; b++) {
        for (int k = 0; k < 2; k++) {
            lp_msg_t *m = (k ? orc : os)[b].head;
            while (m) {
                lp_msg_t *nx = m->next;
                append(bucket(lp, !k, m->src, m->dst, m->tag), m);
                m = nx;
            }
        }
    }
    free(os);
    free(orc);
}

/* Unlink m (or, with m NULL, the first message from src to dst with tag). */
static lp_msg_t *take(lp_bucket_t *b, lp_msg_t *m, uint32_t src, uint32_t dst, uint64_t tag)
{
    lp_msg_t *prev = NULL;
    for (lp_msg_t *p = b->head; p; prev = p, p = p->next) {
        if (m ? p != m : (p->src != src || p->dst != dst || p->tag != tag))
            continue;
        if (prev)
            prev->next = p->next;
        else
            b->head = p->next;
        if (b->tail == p)
            b->tail = prev;
        return p;
    }
    return NULL;
}

static void deliver(hc_loop_t *lp, lp_msg_t *snd, lp_msg_t *rcv)
{
    if (snd->len != rcv->len) {
        snd->x->status = HCCL_E_INTERNAL;
        rcv->x->status = HCCL_E_INTERNAL;
        lp->error = 1;
    } else {
        if (snd->len)
            memcpy(rcv->buf, snd->buf, snd->len);
        lp->traffic[(size_t)snd->src * lp->n + snd->dst] += snd->len;
        snd->x->status = HCCL_SUCCESS;
        rcv->x->status = HCCL_SUCCESS;
    }
    free(snd);
    free(rcv);
}

static int post(void *tctx, uint32_t peer, void *buf, size_t len, uint64_t tag,
                hc_xfer_t *x, int is_send)
{
    lp_rank_t *r = tctx;
    hc_loop_t *lp = r->lp;
    if (peer >= lp->n)
        return HCCL_E_PARA;
    lp_msg_t *m = malloc(sizeof(*m));
    if (m == NULL)
        return HCCL_E_MEMORY;
    m->tag = tag;
    m->src = is_send ? r->rank : peer;
    m->dst = is_send ? peer : r->rank;
    m->buf = buf;
    m->len = len;
    m->x = x;
    m->is_send = is_send;
    x->req = m;
    lp_msg_t *other = take(bucket(lp, !is_send, m->src, m->dst, tag), NULL, m->src, m->dst, tag);
    if (other) {
        *(is_send ? &lp->nrecvs : &lp->nsends) -= 1;
        x->req = NULL;
        other->x->req = NULL;
        if (is_send)
            deliver(lp, m, other);
        else
            deliver(lp, other, m);
    } else {
        append(bucket(lp, is_send, m->src, m->dst, tag), m);
        *(is_send ? &lp->nsends : &lp->nrecvs) += 1;
        grow(lp);
    }
    return HCCL_SUCCESS;
}

static int lp_isend(void *tctx, uint32_t peer, const void *buf, size_t len, uint64_t tag,
                    hc_xfer_t *x)
{
    return post(tctx, peer, (void *)buf, len, tag, x, 1);
}

static int lp_irecv(void *tctx, uint32_t peer, void *buf, size_t len, uint64_t tag,
                    hc_xfer_t *x)
{
    return post(tctx, peer, buf, len, tag, x, 0);
}

static void lp_cancel(void *tctx, hc_xfer_t *x)
{
    lp_rank_t *r = tctx;
    hc_loop_t *lp = r->lp;
    lp_msg_t *m = x->req;
    if (m) {
        if (take(bucket(lp, m->is_send, m->src, m->dst, m->tag), m, 0, 0, 0))
            *(m->is_send ? &lp->nsends : &lp->nrecvs) -= 1;
        free(m);
        x->req = NULL;
    }
    if (x->status == HCCL_E_AGAIN)
        x->status = HCCL_E_INTERNAL;
}

static int lp_progress(void *tctx)
{
    (void)tctx;
    return 0;
}

const hc_transport_ops_t hc_loop_ops = {
    .name = "loopback",
    .isend = lp_isend,
    .irecv = lp_irecv,
    .cancel = lp_cancel,
    .progress = lp_progress,
};

int hc_loop_run(hc_loop_t *lp, hc_exec_t *ex, char *err, size_t errlen)
{
    uint32_t n = lp->n;
    for (;;) {
        int all_done = 1, progressed = 0;
        for (uint32_t r = 0; r < n; r++) {
            uint32_t before = ex[r].ndone + ex[r].nissued;
            int rc = hc_exec_progress(&ex[r]);
            if (rc == HCCL_E_AGAIN)
                all_done = 0;
            else if (rc != HCCL_SUCCESS) {
                snprintf(err, errlen, "rank %u failed with %d%s", r, rc,
                         lp->error ? " (message size mismatch)" : "");
                for (uint32_t q = 0; q < n; q++)
                    hc_exec_cancel(&ex[q], HCCL_E_INTERNAL);
                return rc;
            }
            if (ex[r].ndone + ex[r].nissued != before)
                progressed = 1;
        }
        if (all_done)
            break;
        if (!progressed) {
            size_t off = 0;
            off += snprintf(err + off, errlen - off, "deadlock:");
            for (uint32_t r = 0; r < n && off < errlen; r++) {
                char what[160];
                if (ex[r].status != HCCL_E_AGAIN)
                    continue;
                hc_exec_describe_wait(&ex[r], what, sizeof(what), NULL);
                off += snprintf(err + off, errlen - off, " [rank %u: %s]", r, what);
            }
            for (uint32_t q = 0; q < n; q++)
                hc_exec_cancel(&ex[q], HCCL_E_INTERNAL);
            return HCCL_E_INTERNAL;
        }
    }
    for (uint32_t b = 0; (lp->nsends || lp->nrecvs) && b <= lp->mask; b++) {
        lp_msg_t *m = lp->sends[b].head ? lp->sends[b].head : lp->recvs[b].head;
        if (m) {
            snprintf(err, errlen, "unmatched %s %u -> %u (tag %#llx, %zu B) after completion",
                     m->is_send ? "send" : "receive", m->src, m->dst,
                     (unsigned long long)m->tag, m->len);
            return HCCL_E_INTERNAL;
        }
    }
    return HCCL_SUCCESS;
}
