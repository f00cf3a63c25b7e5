/* coll/sched.c - appending steps to a schedule (see coll.h). */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

void hc_sched_init(hc_sched_t *s, size_t esize)
{
    memset(s, 0, sizeof(*s));
    s->esize = esize;
}

void hc_sched_reset(hc_sched_t *s)
{
    s->nsteps = 0;
    s->ndeps = 0;
    s->tmp_bytes = 0;
    s->err = HCCL_SUCCESS;
    s->algo = NULL;
}

void hc_sched_free(hc_sched_t *s)
{
    free(s->steps);
    free(s->deps);
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
    *t = *st;
    t->dep_off = s->ndeps;
    t->ndeps = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (deps[i] < 0)
            continue;
        if ((uint32_t)deps[i] >= s->nsteps) { /* must point backwards */
            s->err = HCCL_E_INTERNAL;
            return -1;
        }
        s->deps[s->ndeps++] = (uint32_t)deps[i];
        t->ndeps++;
    }
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
    return add(s, &st, deps, UINT32_MAX);
}

int32_t hc_sched_recv(hc_sched_t *s, uint32_t peer, uint32_t tag, hc_loc_t dst,
                      uint64_t bytes, const int32_t *deps)
{
    hc_step_t st = {.kind = HC_STEP_RECV, .peer = peer, .tag = tag, .dst = dst, .bytes = bytes};
    if (tag > HC_TAG_MAX) {
        s->err = HCCL_E_INTERNAL;
        return -1;
    }
    return add(s, &st, deps, UINT32_MAX);
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
