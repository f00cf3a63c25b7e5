/* src/exec.c - the schedule executor (see exec.h). */
#include "exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hccl/hccl.h>

#include "log.h"
#include "reduce.h"

static const char *kind_name[HC_STEP_KINDS] = {"SEND", "RECV", "REDUCE", "COPY", "NOP"};

/* Workspace layout: st, x, npend, rdep_off, rdep, ready, posted. */
static size_t al8(size_t v)
{
    return (v + 7) & ~(size_t)7;
}

size_t hc_exec_ws_size(const hc_sched_t *s)
{
    size_t n = s->nsteps;
    if (n == 0)
        return 0;
    return al8(n) + al8(n * sizeof(hc_xfer_t)) + al8(n * 4) + al8((n + 1) * 4) +
           al8((size_t)s->ndeps * 4) + al8(n * 4) + al8(n * 4);
}

int hc_exec_start(hc_exec_t *e, const hc_sched_t *s, void *const bufs[HC_NBUFS],
                  const hc_transport_ops_t *tp, void *tctx, uint32_t rank,
                  uint32_t comm_id, uint32_t seq, HcclDataType dtype, HcclReduceOp op,
                  void *ws)
{
    memset(e, 0, sizeof(*e));
    e->s = s;
    for (int i = 0; i < HC_NBUFS; i++)
        e->base[i] = bufs[i];
    e->tp = tp;
    e->tctx = tctx;
    e->rank = rank;
    e->comm_id = comm_id;
    e->seq = seq;
    e->dtype = dtype;
    e->op = op == HCCL_REDUCE_AVG ? HCCL_REDUCE_SUM : op;
    const uint32_t n = s->nsteps;
    e->status = n ? HCCL_E_AGAIN : HCCL_SUCCESS;
    if (n == 0)
        return HCCL_SUCCESS;
    size_t wsz = hc_exec_ws_size(s);
    if (ws == NULL) {
        ws = malloc(wsz);
        if (ws == NULL) {
            HC_ERROR(HC_SUB_COLL, "cannot allocate %zu bytes of executor state", wsz);
            e->status = HCCL_E_MEMORY;
            return HCCL_E_MEMORY;
        }
        e->ws_owned = 1;
    }
    e->ws = ws;
    char *p = ws;
    e->st = (uint8_t *)p;
    p += al8(n);
    e->x = (hc_xfer_t *)p;
    p += al8(n * sizeof(hc_xfer_t));
    e->npend = (uint32_t *)p;
    p += al8((size_t)n * 4);
    e->rdep_off = (uint32_t *)p;
    p += al8(((size_t)n + 1) * 4);
    e->rdep = (uint32_t *)p;
    p += al8((size_t)s->ndeps * 4);
    e->ready = (uint32_t *)p;
    p += al8((size_t)n * 4);
    e->posted = (uint32_t *)p;

    /* dependents index (CSR); `posted` serves as the fill cursor */
    memset(e->st, HC_ST_WAIT, n);
    memset(e->rdep_off, 0, ((size_t)n + 1) * 4);
    for (uint32_t i = 0; i < n; i++) {
        const hc_step_t *t = &s->steps[i];
        e->npend[i] = t->ndeps;
        for (uint32_t k = 0; k < t->ndeps; k++)
            e->rdep_off[s->deps[t->dep_off + k] + 1]++;
    }
    for (uint32_t i = 0; i < n; i++) {
        e->rdep_off[i + 1] += e->rdep_off[i];
        e->posted[i] = e->rdep_off[i];
    }
    for (uint32_t i = 0; i < n; i++) {
        const hc_step_t *t = &s->steps[i];
        for (uint32_t k = 0; k < t->ndeps; k++)
            e->rdep[e->posted[s->deps[t->dep_off + k]]++] = i;
        if (t->ndeps == 0)
            e->ready[e->rtail++] = i;
    }
    return HCCL_SUCCESS;
}

static inline char *ptr(const hc_exec_t *e, hc_loc_t l)
{
    return e->base[l.buf] + l.off;
}

/* Step i is done: release its dependents. */
static void complete(hc_exec_t *e, uint32_t i)
{
    e->st[i] = HC_ST_DONE;
    e->ndone++;
    for (uint32_t k = e->rdep_off[i]; k < e->rdep_off[i + 1]; k++) {
        uint32_t j = e->rdep[k];
        if (--e->npend[j] == 0)
            e->ready[e->rtail++] = j;
    }
}

/* Start step i: post a transfer, or run a local step to completion. */
static int issue(hc_exec_t *e, uint32_t i)
{
    const hc_step_t *t = &e->s->steps[i];
    hc_xfer_t *x = &e->x[i];
    int rc;
    e->nissued++;
    switch (t->kind) {
    case HC_STEP_SEND:
        x->status = HCCL_E_AGAIN;
        x->peer = t->peer;
        rc = e->tp->isend(e->tctx, t->peer, ptr(e, t->a), t->bytes,
                          hc_tag_make(e->rank, e->comm_id, e->seq, t->tag), x);
        if (rc != HCCL_SUCCESS)
            return rc;
        e->bytes_sent += t->bytes;
        e->st[i] = HC_ST_POSTED;
        return HCCL_SUCCESS;
    case HC_STEP_RECV:
        x->status = HCCL_E_AGAIN;
        x->peer = t->peer;
        rc = e->tp->irecv(e->tctx, t->peer, ptr(e, t->dst), t->bytes,
                          hc_tag_make(t->peer, e->comm_id, e->seq, t->tag), x);
        if (rc != HCCL_SUCCESS)
            return rc;
        e->st[i] = HC_ST_POSTED;
        return HCCL_SUCCESS;
    case HC_STEP_REDUCE:
        hc_reduce(ptr(e, t->dst), ptr(e, t->a), ptr(e, t->b), t->bytes / e->s->esize,
                  e->dtype, e->op);
        break;
    case HC_STEP_COPY: {
        char *d = ptr(e, t->dst), *src = ptr(e, t->a);
        if (d != src && t->bytes)
            memmove(d, src, t->bytes);
        break;
    }
    default:
        break;
    }
    complete(e, i);
    return HCCL_SUCCESS;
}

int hc_exec_progress(hc_exec_t *e)
{
    if (e->status != HCCL_E_AGAIN)
        return e->status;
    const hc_sched_t *s = e->s;
    /* collect finished transfers */
    for (uint32_t k = 0; k < e->nposted;) {
        const uint32_t i = e->posted[k];
        const int xs = e->x[i].status;
        if (xs == HCCL_E_AGAIN) {
            k++;
            continue;
        }
        e->posted[k] = e->posted[--e->nposted];
        if (xs != HCCL_SUCCESS) {
            const hc_step_t *t = &s->steps[i];
            HC_ERROR(HC_SUB_COLL, "%s step %u/%u %s peer %u failed: %d (%s)",
                     s->algo ? s->algo : "?", i, s->nsteps, kind_name[t->kind], t->peer, xs,
                     HcclGetErrorString(xs));
            hc_exec_cancel(e, xs);
            return e->status;
        }
        complete(e, i);
    }
    /* start what is ready (local steps complete at once, releasing more) */
    while (e->rhead != e->rtail) {
        const uint32_t i = e->ready[e->rhead++];
        int rc = issue(e, i);
        if (rc != HCCL_SUCCESS) {
            HC_ERROR(HC_SUB_COLL, "%s step %u/%u: posting %s to peer %u failed: %d",
                     s->algo ? s->algo : "?", i, s->nsteps, kind_name[s->steps[i].kind],
                     s->steps[i].peer, rc);
            hc_exec_cancel(e, rc);
            return e->status;
        }
        if (e->st[i] == HC_ST_POSTED) {
            if (e->x[i].status == HCCL_SUCCESS) /* completed inline */
                complete(e, i);
            else
                e->posted[e->nposted++] = i;
        }
    }
    while (e->lo < s->nsteps && e->st[e->lo] == HC_ST_DONE)
        e->lo++;
    if (e->ndone == s->nsteps)
        e->status = HCCL_SUCCESS;
    return e->status;
}

void hc_exec_cancel(hc_exec_t *e, int rc)
{
    if (e->status != HCCL_E_AGAIN)
        return;
    for (uint32_t k = 0; k < e->nposted; k++) {
        hc_xfer_t *x = &e->x[e->posted[k]];
        if (x->status == HCCL_E_AGAIN)
            e->tp->cancel(e->tctx, x);
    }
    e->nposted = 0;
    e->status = rc;
}

void hc_exec_fini(hc_exec_t *e)
{
    if (e->ws_owned)
        free(e->ws);
    e->ws = NULL;
    e->ws_owned = 0;
}

int hc_exec_describe_wait(const hc_exec_t *e, char *buf, size_t len, uint32_t *peer)
{
    const hc_sched_t *s = e->s;
    int first_wait = -1;
    for (uint32_t i = e->lo; i < s->nsteps; i++) {
        if (e->st[i] == HC_ST_POSTED) {
            const hc_step_t *t = &s->steps[i];
            snprintf(buf, len, "step %u/%u %s %s rank %u (tag %u, %llu B)", i, s->nsteps,
                     kind_name[t->kind], t->kind == HC_STEP_SEND ? "to" : "from", t->peer,
                     t->tag, (unsigned long long)t->bytes);
            if (peer)
                *peer = t->peer;
            return (int)i;
        }
        if (e->st[i] == HC_ST_WAIT && first_wait < 0)
            first_wait = (int)i;
    }
    if (first_wait >= 0) {
        snprintf(buf, len, "step %d/%u %s (waiting for its dependencies)", first_wait,
                 s->nsteps, kind_name[s->steps[first_wait].kind]);
        return first_wait;
    }
    snprintf(buf, len, "nothing");
    return -1;
}
