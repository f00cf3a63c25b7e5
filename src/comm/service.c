/* src/comm/service.c - service collectives (see service.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "service.h"

#include <stdlib.h>
#include <hccl/hccl.h>

#include "src/base/log.h"

int hc_service_run(hc_comm_t *c, const hc_team_t *team, hc_build_fn build, hc_coll_args_t *a,
                   void *send, void *recv, uint32_t seq, uint32_t tag_base, const char *what)
{
    static const hc_topo_view_t flat; /* builders of service collectives read none */
    a->rank = team->me;
    a->nranks = team->n;
    a->topo = &flat;
    hc_sched_t s;
    hc_sched_init(&s, a->esize);
    int rc = build(a, &s);
    if (rc == HCCL_SUCCESS)
        rc = s.err;
    for (uint32_t i = 0; rc == HCCL_SUCCESS && i < s.nsteps; i++) {
        hc_step_t *t = &s.steps[i];
        if (t->kind != HC_STEP_SEND && t->kind != HC_STEP_RECV)
            continue;
        if (tag_base != 0 && t->tag >= HC_SERVICE_TAGS) {
            HC_ERROR(HC_SUB_COLL, "%s on comm %s: %s uses tag %u, above the %u of a service "
                     "collective", what, c->name, s.algo ? s.algo : "?", t->tag,
                     HC_SERVICE_TAGS);
            rc = HCCL_E_INTERNAL;
            break;
        }
        t->tag |= tag_base;
        if (team->members)
            t->peer = team->members[t->peer];
    }
    void *tmp = NULL;
    if (rc == HCCL_SUCCESS && s.tmp_bytes > 0 && (tmp = malloc(s.tmp_bytes)) == NULL) {
        HC_ERROR(HC_SUB_COLL, "%s on comm %s: out of memory (%llu bytes of scratch)", what,
                 c->name, (unsigned long long)s.tmp_bytes);
        rc = HCCL_E_MEMORY;
    }
    if (rc == HCCL_SUCCESS) {
        void *bufs[HC_NBUFS] = {send, recv, tmp};
        hc_exec_t e;
        rc = hc_exec_start(&e, &s, bufs, c->ctx->tp, &c->eps, c->rank, c->id, seq, a->dtype, a->op,
                           NULL);
        if (rc == HCCL_SUCCESS) {
            hc_exec_t *ex = &e;
            rc = hc_comm_wait(c, &ex, 1, what);
            hc_exec_fini(&e);
        }
    }
    free(tmp);
    hc_sched_free(&s);
    return rc;
}
