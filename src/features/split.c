/*
 * src/features/split.c - communicators made from a communicator: HcclCommSplit,
 * HcclCommCreateGroup, HCCL's HcclCreateSubCommConfig; the control
 * agreement (elastic.h); the debug counters.
 *
 * A child is a new rank map over the parent's address book: it shares the
 * parent's endpoints (created on first use, once per process pair, whatever
 * the communicator), scratch buffers (the context's pool), configuration
 * (read-only, reference counted) and topology facts (the cards in the
 * address book). So a split makes no MPI call, no endpoint and no buffer:
 * the cost is one small exchange and a few hundred bytes plus O(n) arrays.
 *
 * Communicator ids (20 bits, in every tag) must differ between the live
 * communicators of a process, or messages of one could match receives of
 * another. The rule of comm.c holds everywhere: each process proposes its
 * own counter, the id is the max of the members' proposals, and every
 * member moves its counter past it, so the ids of one process only grow.
 *  - Split: the proposals travel in its one allgather (with color and key).
 *    Every child gets the same id, the max over the whole parent: children
 *    of different colors have no process in common, so they may share it.
 *  - CreateGroup / SubCommConfig: only the listed ranks take part, and the
 *    rest of the parent cannot be asked. An id derived locally (a hash of
 *    parent id, rank list and a creation counter, in a reserved range)
 *    would need no message, but two live groups of one process could hash
 *    to the same id, and that failure would be silent (crossed messages,
 *    wrong results). So the members run a tiny agreement instead: a
 *    dissemination max of (proposal, status, list hash) over the parent's
 *    endpoints, ceil(log2 n) rounds of 16-32 bytes (microseconds), which
 *    also catches members that passed different lists or settings.
 * Limit: creations in flight at once in one process (several threads)
 * reserve different proposals (hc_comm_propose_id), but each takes the max
 * over its own members, so two of them over overlapping groups can still
 * agree on the same id when other members' counters are ahead. Make the
 * communicators of one process from one thread at a time (or in the same
 * order everywhere), as MPI requires of collectives on a communicator.
 * A clash is caught where it happens: every process keeps its live ids
 * (hc_ctx_claim_id), and the creation that finds its id taken fails
 * instead of mixing two communicators' messages; HcclCommRemoveMember
 * agrees again instead (src/features/elastic.c).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hccl/hccl.h>

#include "src/comm/comm.h"
#include "src/comm/comm_id.h"
#include "src/comm/op.h"
#include "elastic.h"
#include "src/base/log.h"
#include "src/comm/service.h"
#include "src/comm/tune.h"
#include "coll/algos.h"

uint32_t hc_hash32(uint32_t h, const void *data, size_t len)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

/* ---- the control agreement ------------------------------------------ */

int hc_ctrl_max(hc_comm_t *c, const uint32_t *members, uint32_t n, uint32_t me,
                uint32_t kind, uint32_t salt, uint32_t *vals, uint32_t nvals, const char *what)
{
    if (n <= 1)
        return HCCL_SUCCESS;
    /* an AllReduce MAX over the members, recursive doubling (coll/
     * allreduce_rd.c), in place in vals */
    hc_team_t team = {members, n, me};
    hc_coll_args_t a = {.coll = HC_COLL_ALLREDUCE, .count = nvals, .esize = sizeof(uint32_t),
                        .dtype = HCCL_DATA_TYPE_UINT32, .op = HCCL_REDUCE_MAX,
                        .in_place = 1};
    const uint32_t base = ((kind & 7u) << 17 | (salt & 0xfffu) << 5) & HC_TAG_MAX;
    return hc_service_run(c, &team, hc_allreduce_rd_build, &a, vals, vals, HC_TAG_CTRL_SEQ,
                          base, what);
}

/* ---- split ------------------------------------------------------------ */

/* Allgather of one `rec`-byte record per rank over c, as a collective of
 * c (its next sequence number), all in caller memory, so that a split
 * never takes a scratch buffer. Rounds cost the most when ranks share
 * cores (each round waits for every peer to be scheduled), so up to
 * HC_SPLIT_FLAT_MAX ranks everybody sends its record to everybody at once
 * (coll/allgather_flat.c, one round); above, Bruck's algorithm
 * (coll/allgather_bruck.c, ceil(log2 n) rounds). */
#define HC_SPLIT_FLAT_MAX 32
static int msg_allgather(hc_comm_t *c, const void *mine, void *all, size_t rec,
                         const char *what)
{
    if (c->nranks == 1) {
        memcpy(all, mine, rec);
        return HCCL_SUCCESS;
    }
    hc_team_t team = {NULL, c->nranks, c->rank};
    hc_coll_args_t a = {.coll = HC_COLL_ALLGATHER, .count = rec, .esize = 1,
                        .dtype = HCCL_DATA_TYPE_UINT8, .op = HCCL_REDUCE_SUM};
    const uint32_t seq = hc_comm_next_seq_begun(c); /* uses no staging */
    return hc_service_run(c, &team,
                          c->nranks <= HC_SPLIT_FLAT_MAX ? hc_allgather_flat_build
                                                         : hc_allgather_bruck_build,
                          &a, (void *)mine, all, seq, 0, what);
}

/* The split's allgather: through the parent's shared staging when it is
 * already set up there and the parent's table runs this allgather DIRECT
 * (one cache line per rank and flag, no message: about half the time of
 * the message round at 4 ranks on 2 cores), else as messages. Either way
 * nothing is allocated: the staging is the parent's (src/comm/shm.h). Every
 * rank decides alike: shm_state and the table are the same on all of them
 * (set up by the parent's first collective, which all ran). */
static int split_allgather(hc_comm_t *c, const void *mine, void *all, size_t rec,
                           const char *what)
{
    if (c->shm_state == 1 && c->nranks > 1) {
        hc_op_t o;
        hc_op_init(&o, what, HC_COLL_ALLGATHER, rec, HCCL_DATA_TYPE_UINT8, 1, HCCL_REDUCE_SUM,
                   (void *)mine, all);
        const hc_algo_t *algo = hc_comm_select(c, &o.args);
        if (algo != NULL && algo->id == HC_ALLGATHER_DIRECT)
            return hc_comm_run(c, &o);
    }
    return msg_allgather(c, mine, all, rec, what);
}

typedef struct {
    int32_t color, key;
    uint32_t proposal;
    int32_t status;
} split_rec_t;

typedef struct {
    int32_t key;
    uint32_t rank;
} split_member_t;

static int member_cmp(const void *a, const void *b)
{
    const split_member_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* A child over parent ranks list[0..n); this process is list[me]. */
static int make_child(hc_comm_t *parent, const hc_config_t *cfg, const uint32_t *list,
                      uint32_t n, uint32_t me, uint32_t id, const char *name,
                      hc_comm_t **out)
{
    enum { STACK_RANKS = 64 };
    uint32_t peers_s[STACK_RANKS], *peers = peers_s;
    if (n > STACK_RANKS && (peers = malloc(n * sizeof(*peers))) == NULL)
        return HCCL_E_MEMORY;
    for (uint32_t i = 0; i < n; i++)
        peers[i] = parent->peer[list[i]];
    hc_ctx_retain(parent->ctx); /* the child holds the context like any comm */
    int rc = hc_comm_create_map(parent, cfg, me, n, peers, id, name, out);
    if (rc != HCCL_SUCCESS)
        hc_ctx_release(parent->ctx);
    if (peers != peers_s)
        free(peers);
    return rc;
}

HcclResult HcclCommSplit(HcclComm comm, int color, int key, HcclComm *newComm)
{
    static const char fn[] = "HcclCommSplit";
    hc_comm_t *c;
    int rc = hc_comm_get(comm, fn, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (c->aborted) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: communicator %s was aborted (HcclCommAbort)", fn, c->name);
        return HCCL_E_SUSPENDING;
    }
    /* A bad argument still takes part in the exchange (with its error), so
     * that every rank fails together instead of the others hanging. */
    split_rec_t mine = {color, key, hc_comm_propose_id(c->ctx), HCCL_SUCCESS};
    if (newComm == NULL) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: newComm is NULL", fn);
        mine.status = HCCL_E_PTR;
    } else if (color < 0 && color != HCCL_SPLIT_NOCOLOR) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: color %d is negative and not HCCL_SPLIT_NOCOLOR (%d)", fn,
                 color, HCCL_SPLIT_NOCOLOR);
        mine.status = HCCL_E_PARA;
    }
    enum { STACK_RANKS = 64 };
    split_rec_t all_s[STACK_RANKS], *all = all_s;
    split_member_t mem_s[STACK_RANKS], *mem = mem_s;
    uint32_t list_s[STACK_RANKS], *list = list_s;
    const uint32_t n = c->nranks;
    if (n > STACK_RANKS) {
        all = malloc(n * sizeof(*all));
        mem = malloc(n * sizeof(*mem));
        list = malloc(n * sizeof(*list));
        if (all == NULL || mem == NULL || list == NULL) {
            rc = HCCL_E_MEMORY; /* the others time out in the allgather */
            goto out;
        }
    }
    rc = split_allgather(c, &mine, all, sizeof(split_rec_t), fn);
    if (rc != HCCL_SUCCESS)
        goto out;
    uint32_t id = 0, nm = 0;
    for (uint32_t r = 0; r < n; r++) {
        if (all[r].status != HCCL_SUCCESS && rc == HCCL_SUCCESS) {
            rc = all[r].status;
            if (r != c->rank)
                HC_ERROR(HC_SUB_ELASTIC, "%s on %s: rank %u passed a bad argument (%s)", fn,
                         c->name, r, HcclGetErrorString(rc));
        }
        if (all[r].proposal > id)
            id = all[r].proposal;
        if (all[r].color == color && color != HCCL_SPLIT_NOCOLOR) {
            mem[nm].key = all[r].key;
            mem[nm].rank = r;
            nm++;
        }
    }
    id = hc_comm_note_id(c->ctx, id);
    if (rc != HCCL_SUCCESS)
        goto out;
    if (color == HCCL_SPLIT_NOCOLOR) {
        *newComm = NULL;
        goto out;
    }
    qsort(mem, nm, sizeof(*mem), member_cmp);
    uint32_t me = 0;
    for (uint32_t i = 0; i < nm; i++) {
        list[i] = mem[i].rank;
        if (mem[i].rank == c->rank)
            me = i;
    }
    char name[COMM_NAME_MAX_LENGTH];
    snprintf(name, sizeof(name), "%.100s.split%d", c->name, color);
    hc_comm_t *child;
    rc = make_child(c, NULL, list, nm, me, id, name, &child);
    if (rc == HCCL_SUCCESS) {
        HC_INFO(HC_SUB_ELASTIC, "%s: %s rank %u -> %s rank %u of %u (color %d key %d, id %u)",
                fn, c->name, c->rank, child->name, me, nm, color, key, id);
        *newComm = child->handle;
    }
out:
    if (all != all_s) {
        free(all);
    }
    if (mem != mem_s)
        free(mem);
    if (list != list_s)
        free(list);
    return (HcclResult)rc;
}

/* ---- groups ----------------------------------------------------------- */

/* Check a rank list against the parent: in range, no repeats, caller in
 * it (its index in *me). */
static int check_list(const char *fn, const hc_comm_t *p, uint32_t n, const uint32_t *ids,
                      uint32_t *me)
{
    if (ids == NULL) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: the rank list is NULL", fn);
        return HCCL_E_PTR;
    }
    if (n == 0 || n > p->nranks) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: %u ranks listed; must be 1..%u (the size of %s)", fn, n,
                 p->nranks, p->name);
        return HCCL_E_PARA;
    }
    uint8_t *seen = calloc(p->nranks, 1);
    if (seen == NULL)
        return HCCL_E_MEMORY;
    int rc = HCCL_SUCCESS;
    *me = UINT32_MAX;
    for (uint32_t i = 0; i < n && rc == HCCL_SUCCESS; i++) {
        if (ids[i] >= p->nranks) {
            HC_ERROR(HC_SUB_ELASTIC, "%s: rank list entry %u is %u, out of range (%s has %u "
                     "ranks)", fn, i, ids[i], p->name, p->nranks);
            rc = HCCL_E_PARA;
        } else if (seen[ids[i]]++) {
            HC_ERROR(HC_SUB_ELASTIC, "%s: rank %u is listed twice", fn, ids[i]);
            rc = HCCL_E_PARA;
        } else if (ids[i] == p->rank) {
            *me = i;
        }
    }
    free(seen);
    if (rc == HCCL_SUCCESS && *me == UINT32_MAX) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: the caller (rank %u of %s) is not in the rank list; only "
                 "listed ranks call it", fn, p->rank, p->name);
        rc = HCCL_E_PARA;
    }
    return rc;
}

/* Shared by CreateGroup and SubCommConfig. `settings` hashes what must
 * agree; cfg NULL: share the parent's configuration. */
static int create_group(const char *fn, uint32_t kind, hc_comm_t *p, uint32_t n,
                        const uint32_t *ids, uint32_t me, uint64_t user_id,
                        const hc_config_t *cfg, const char *name, hc_comm_t **out)
{
    uint32_t h = hc_hash32(HC_HASH32_INIT, ids, n * sizeof(uint32_t));
    h = hc_hash32(h, &user_id, sizeof(user_id));
    uint32_t set = HC_HASH32_INIT;
    const hc_config_t *eff = cfg ? cfg : p->cfg;
    char algos[256];
    hc_tune_forced_text(eff, algos, sizeof(algos));
    set = hc_hash32(set, &eff->deterministic, sizeof(eff->deterministic));
    set = hc_hash32(set, &eff->buffsize, sizeof(eff->buffsize));
    set = hc_hash32(set, algos, strlen(algos));
    set = hc_hash32(set, eff->algo, strlen(eff->algo));
    /* max of x and of ~x: everybody had the same x iff both come back */
    uint32_t v[6] = {hc_comm_propose_id(p->ctx), 0, h, ~h, set, ~set};
    int rc = hc_ctrl_max(p, ids, n, me, kind, h, v, 6, fn);
    if (rc != HCCL_SUCCESS)
        return rc;
    uint32_t id = hc_comm_note_id(p->ctx, v[0]);
    if (v[2] != h || v[3] != (uint32_t)~h) {
        HC_ERROR(HC_SUB_ELASTIC, "%s on %s: the members passed different rank lists%s", fn,
                 p->name, kind == HC_CTRL_SUBCOMM ? " or subCommIds" : "");
        return HCCL_E_PARA;
    }
    if (v[4] != set || v[5] != (uint32_t)~set) {
        HC_ERROR(HC_SUB_ELASTIC, "%s on %s: the members disagree on settings that must agree "
                 "(deterministic, buffer size, forced algorithms)", fn, p->name);
        return HCCL_E_PARA;
    }
    rc = make_child(p, cfg, ids, n, me, id, name, out);
    if (rc == HCCL_SUCCESS)
        HC_INFO(HC_SUB_ELASTIC, "%s: %s rank %u -> %s rank %u of %u (id %u)", fn, p->name,
                p->rank, (*out)->name, me, n, id);
    return rc;
}

HcclResult HcclCommCreateGroup(HcclComm *newComm, HcclComm parent, uint32_t nRanks,
                               const uint32_t *parentRankIds)
{
    static const char fn[] = "HcclCommCreateGroup";
    hc_comm_t *p;
    int rc = hc_comm_get(parent, fn, &p);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (newComm == NULL) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: newComm is NULL", fn);
        return HCCL_E_PTR;
    }
    if (p->aborted) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: communicator %s was aborted (HcclCommAbort)", fn, p->name);
        return HCCL_E_SUSPENDING;
    }
    uint32_t me;
    rc = check_list(fn, p, nRanks, parentRankIds, &me);
    if (rc != HCCL_SUCCESS)
        return rc;
    char name[COMM_NAME_MAX_LENGTH];
    snprintf(name, sizeof(name), "%.100s.group%08x", p->name,
             hc_hash32(HC_HASH32_INIT, parentRankIds, nRanks * sizeof(uint32_t)));
    hc_comm_t *child;
    rc = create_group(fn, HC_CTRL_GROUP, p, nRanks, parentRankIds, me, 0, NULL, name, &child);
    if (rc == HCCL_SUCCESS)
        *newComm = child->handle;
    return (HcclResult)rc;
}

HcclResult HcclCreateSubCommConfig(HcclComm *comm, uint32_t rankNum, uint32_t *rankIds,
                                   uint64_t subCommId, uint32_t subCommRankId,
                                   HcclCommConfig *config, HcclComm *subComm)
{
    static const char fn[] = "HcclCreateSubCommConfig";
    if (comm == NULL) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: comm (pointer to the parent handle) is NULL", fn);
        return HCCL_E_PTR;
    }
    hc_comm_t *p;
    int rc = hc_comm_get(*comm, fn, &p);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (subComm == NULL) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: subComm is NULL", fn);
        return HCCL_E_PTR;
    }
    if (p->aborted) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: communicator %s was aborted (HcclCommAbort)", fn, p->name);
        return HCCL_E_SUSPENDING;
    }
    uint32_t me;
    rc = check_list(fn, p, rankNum, rankIds, &me);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (subCommRankId != me) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: subCommRankId %u does not match the caller's position %u "
                 "in rankIds (rank %u of %s)", fn, subCommRankId, me, p->rank, p->name);
        return HCCL_E_PARA;
    }
    hc_config_t merged, *cfg = NULL;
    HcclCommConfig u;
    rc = hc_config_read(config, &u);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (config != NULL) {
        rc = hc_comm_config(p->cfg, config, &merged);
        if (rc != HCCL_SUCCESS)
            return rc;
        cfg = &merged;
    }
    char name[COMM_NAME_MAX_LENGTH];
    if (u.hcclCommName[0])
        snprintf(name, sizeof(name), "%s", u.hcclCommName);
    else
        snprintf(name, sizeof(name), "%.100s.sub%llu", p->name, (unsigned long long)subCommId);
    hc_comm_t *child;
    rc = create_group(fn, HC_CTRL_SUBCOMM, p, rankNum, rankIds, me, subCommId, cfg, name,
                      &child);
    if (cfg)
        hc_env_free(cfg);
    if (rc == HCCL_SUCCESS)
        *subComm = child->handle;
    return (HcclResult)rc;
}

/* ---- counters --------------------------------------------------------- */

HcclResult HcclGetDebugCounters(uint64_t *endpointsCreated, uint64_t *buffersAllocated,
                                uint64_t *bufferBytes)
{
    hc_ctx_counters(endpointsCreated, buffersAllocated, bufferBytes);
    return HCCL_SUCCESS;
}
