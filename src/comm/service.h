/*
 * src/comm/service.h - service collectives: the control-plane exchanges of
 * hcomm itself (shared staging setup, HcclCommSplit's allgather, the
 * control agreement of group creation and elastic membership) run as
 * schedules from coll/'s ordinary builders, on the executor, through the
 * communicator's transport, with the one wait (src/exec/wait.h): the same
 * machinery as a user's collective, minus selection, the schedule cache
 * and shared staging.
 *
 * A service collective runs over a team: a subset of a communicator's
 * ranks (members[i] is the communicator rank of team rank i), or the whole
 * communicator. The builder sees team ranks 0 .. n-1; its SEND and RECV
 * peers are mapped to communicator ranks afterwards, and its tags are
 * or-ed into tag_base, so exchanges that share a sequence value
 * (HC_TAG_CTRL_SEQ) keep apart by their base (kind, salt: src/features/elastic.h).
 */
#ifndef HC_SERVICE_H_
#define HC_SERVICE_H_

#include "comm.h"

/* Builder tags must stay below this when tag_base is not 0. */
#define HC_SERVICE_TAGS 32u

typedef struct hc_team {
    const uint32_t *members; /* NULL: every rank of the communicator, in order */
    uint32_t n, me;          /* team size, our team rank */
} hc_team_t;

/* Run build over the team: a->coll, count, esize, dtype, op and in_place
 * are the caller's; rank, nranks and topo are set here. Scratch (TMP) is
 * allocated here when the schedule needs it. Returns when the exchange is
 * done, failed or timed out (HCCL_EXEC_TIMEOUT, hc_wait_timeout). */
int hc_service_run(hc_comm_t *c, const hc_team_t *team, hc_build_fn build, hc_coll_args_t *a,
                   void *send, void *recv, uint32_t seq, uint32_t tag_base, const char *what);

#endif
