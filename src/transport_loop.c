/* src/transport_loop.c - in-process loopback transport (see transport_loop.h). */
#include "transport_loop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hccl/hccl.h>

typedef struct lp_msg {
    struct lp_msg *next;
    uint64_t tag;
    uint32_t src, dst;
    void *buf; /* send: source; recv: destination */
    size_t len;
    hc_xfer_t *x;
} lp_msg_t;

typedef struct lp_rank {
    hc_loop_t *lp;
    uint32_t rank;
} lp_rank_t;

struct hc_loop {
    uint32_t n;
    lp_rank_t *ranks;
    lp_msg_t **sends; /* per destination: unmatched sends, in post order */
    lp_msg_t **recvs; /* per destination: unmatched receives, in post order */
    uint64_t *traffic;
    int error;
};

hc_loop_t *hc_loop_create(uint32_t n)
{
    hc_loop_t *lp = calloc(1, sizeof(*lp));
    if (lp == NULL)
        return NULL;
    lp->n = n;
    lp->ranks = calloc(n, sizeof(*lp->ranks));
    lp->sends = calloc(n, sizeof(*lp->sends));
    lp->recvs = calloc(n, sizeof(*lp->recvs));
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

void hc_loop_destroy(hc_loop_t *lp)
{
    if (lp == NULL)
        return;
    for (uint32_t i = 0; lp->sends && lp->recvs && i < lp->n; i++) {
        free_list(lp->sends[i]);
        free_list(lp->recvs[i]);
    }
    free(lp->ranks);
    free(lp->sends);
    free(lp->recvs);
    free(lp->traffic);
    free(lp);
}

void *hc_loop_tctx(hc_loop_t *lp, uint32_t rank)
{
    return &lp->ranks[rank];
}

const uint64_t *hc_loop_traffic(const hc_loop_t *lp)
{
    return lp->traffic;
}

/* Find and unlink the first message in *list from src with tag. */
static lp_msg_t *take(lp_msg_t **list, uint32_t src, uint64_t tag)
{
    for (lp_msg_t **pp = list; *pp; pp = &(*pp)->next) {
        if ((*pp)->src == src && (*pp)->tag == tag) {
            lp_msg_t *m = *pp;
            *pp = m->next;
            return m;
        }
    }
    return NULL;
}

static void append(lp_msg_t **list, lp_msg_t *m)
{
    while (*list)
        list = &(*list)->next;
    m->next = NULL;
    *list = m;
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
    x->req = m;
    lp_msg_t *other = take(is_send ? &lp->recvs[m->dst] : &lp->sends[m->dst], m->src, tag);
    if (other) {
        x->req = NULL;
        other->x->req = NULL;
        if (is_send)
            deliver(lp, m, other);
        else
            deliver(lp, other, m);
    } else {
        append(is_send ? &lp->sends[m->dst] : &lp->recvs[m->dst], m);
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

static void unlink_msg(lp_msg_t **list, lp_msg_t *m)
{
    for (lp_msg_t **pp = list; *pp; pp = &(*pp)->next)
        if (*pp == m) {
            *pp = m->next;
            return;
        }
}

static void lp_cancel(void *tctx, hc_xfer_t *x)
{
    lp_rank_t *r = tctx;
    lp_msg_t *m = x->req;
    if (m) {
        unlink_msg(&r->lp->sends[m->dst], m);
        unlink_msg(&r->lp->recvs[m->dst], m);
        free(m);
        x->req = NULL;
    }
    if (x->status == HCCL_E_AGAIN)
        x->status = HCCL_E_INTERNAL;
}

static int lp_progress(void *tctx)
{
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
    for (uint32_t d = 0; d < n; d++) {
        if (lp->sends[d] || lp->recvs[d]) {
            lp_msg_t *m = lp->sends[d] ? lp->sends[d] : lp->recvs[d];
            snprintf(err, errlen, "unmatched %s %u -> %u (tag %#llx, %zu B) after completion",
                     lp->sends[d] ? "send" : "receive", m->src, m->dst,
                     (unsigned long long)m->tag, m->len);
            return HCCL_E_INTERNAL;
        }
    }
    return HCCL_SUCCESS;
}
