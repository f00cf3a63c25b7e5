/*
 * src/features/elastic.c - members join and leave a live communicator:
 * HcclCommAddMember / HcclCommJoin / HcclCommGetJoinInfo and
 * HcclCommRemoveMember. The handle stays valid and changes size in place.
 *
 * Joining. One member, the "root", talks MPI with the newcomer over an
 * intercommunicator of just the two of them; the other members never call
 * MPI, so no MPI communicator has to contain exactly the current members
 * (after a removal none does: MPI_COMM_WORLD still holds the dead rank).
 *  - Spawn (no join info requested): the root calls MPI_Comm_spawn on
 *    MPI_COMM_SELF with its own program and arguments, forwarding
 *    LD_LIBRARY_PATH and the HCCL_* / UCX_* variables; the newcomer calls
 *    HcclCommJoin(NULL) and finds the root with MPI_Comm_get_parent.
 *  - Connect/accept: HcclCommGetJoinInfo (collective over the members) has
 *    one member open an MPI port and returns "hcomm-join:1:<port>" on
 *    every member; the newcomer, started in any way (another mpirun with
 *    --ompi-server), calls HcclCommJoin(string); from then on AddMember's
 *    root is the port's owner and it accepts on that port.
 * Steps of HcclCommAddMember: (1) the members agree on newRank and on the
 * max of their id proposals (control agreement, elastic.h); (2) the root
 * gets the newcomer's card over the intercommunicator and checks it;
 * (3) the root broadcasts (an hcomm Broadcast on the communicator) the
 * verdict, the new id and the card; (4) the root sends the newcomer the
 * header and every member's card (from the address book) and disconnects;
 * (5) everybody rebuilds the rank map: new id (stale messages of the old
 * one can never match), p2p counters and sequence reset, schedule cache
 * dropped, topology and tuning rebuilt. Endpoints to the newcomer are
 * created on first use, as always.
 *
 * Removing. HcclCommRemoveMember runs while the failed process is dead or
 * hung: it marks the process failed and force-closes its endpoint (which
 * completes sends abandoned to it), then the survivors agree on the new id
 * over their own endpoints (control agreement among survivors only) and
 * rebuild. No MPI, nothing sent to the failed process. Cost: twice
 * ceil(log2 n) rounds of one small message (the second round takes the
 * id in every survivor's process). Other members already known failed go
 * with it (several can die at once, and no agreement can include a dead
 * one); survivors that know different sets agree again until they know
 * the same (HcclCommRemoveMember below).
 *
 * MPI with ULFM (MPIX_ERR_PROC_FAILED, detected by configure): MPI errors
 * of that class are reported as HCCL_E_REMOTE. Open MPI 4.1 has none;
 * hcomm's own failure detection (src/comm/comm.c, src/transport/transport_ucx.c) does not
 * depend on it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <mpi.h>
#if defined(HAVE_DECL_MPIX_ERR_PROC_FAILED) && HAVE_DECL_MPIX_ERR_PROC_FAILED && \
    defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif
#include <hccl/hccl.h>

#include "src/api/bootstrap.h"
#include "src/comm/comm.h"
#include "src/comm/comm_id.h"
#include "src/comm/op.h"
#include "elastic.h"
#include "src/base/log.h"
#include "src/transport/transport_ucx.h"
#include "src/base/util.h"

#define JOIN_PREFIX "hcomm-join:1:"
#define JOIN_TAG 0x4843 /* MPI tag of the join messages ("HC") */
#define PORT_MAX 1024   /* >= MPI_MAX_PORT_NAME of Open MPI and MPICH */

struct hc_elastic {
    char port[PORT_MAX];  /* the join port ("" = none) */
    int owner;            /* this process opened it */
    uint32_t owner_rank;  /* comm rank of the process that opened it */
};

/* What the root sends the newcomer before the cards. */
typedef struct {
    int32_t status;
    uint32_t id, rank, nranks, epoch, owner_rank;
    int32_t deterministic, check_args;
    uint64_t buffsize;
    double exec_timeout;
    char name[COMM_NAME_MAX_LENGTH];
    char port[PORT_MAX];
} join_hdr_t;

/* What the root broadcasts to the members. */
typedef struct {
    int32_t status;
    uint32_t id;
    hc_card_t card;
} join_bcast_t;

void hc_elastic_free(hc_comm_t *c)
{
    struct hc_elastic *el = c->el;
    if (el == NULL)
        return;
    int fin = 1;
    MPI_Finalized(&fin);
    if (el->owner && el->port[0] && !fin)
        MPI_Close_port(el->port);
    free(el);
    c->el = NULL;
}

static struct hc_elastic *el_get(hc_comm_t *c)
{
    if (c->el == NULL) {
        c->el = calloc(1, sizeof(*c->el));
        if (c->el)
            c->el->owner_rank = UINT32_MAX;
    }
    return c->el;
}

/* An MPI error code as an HcclResult (logged by the caller). */
static int mpi_err(int mrc)
{
    if (mrc == MPI_SUCCESS)
        return HCCL_SUCCESS;
#if defined(HAVE_DECL_MPIX_ERR_PROC_FAILED) && HAVE_DECL_MPIX_ERR_PROC_FAILED
    int cls = 0;
    MPI_Error_class(mrc, &cls);
    if (cls == MPIX_ERR_PROC_FAILED)
        return HCCL_E_REMOTE;
#endif
    return HCCL_E_NETWORK;
}

static const char *mpi_msg(int mrc, char *buf)
{
    int len = 0;
    if (MPI_Error_string(mrc, buf, &len) != MPI_SUCCESS)
        snprintf(buf, MPI_MAX_ERROR_STRING, "MPI error %d", mrc);
    return buf;
}

static int mpi_ready(const char *fn)
{
    int inited = 0, fin = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&fin);
    if (!inited || fin) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: MPI is %s; joining uses MPI dynamic processes", fn,
                 fin ? "finalized" : "not initialized");
        return HCCL_E_PARA;
    }
    return HCCL_SUCCESS;
}

/* An hcomm Broadcast of raw bytes on c (a collective of the members). */
static int bcast_bytes(hc_comm_t *c, void *buf, size_t bytes, uint32_t root, const char *api)
{
    hc_op_t op;
    memset(&op, 0, sizeof(op));
    op.api = api;
    op.args.coll = HC_COLL_BROADCAST;
    op.args.count = bytes;
    op.args.dtype = HCCL_DATA_TYPE_UINT8;
    op.args.esize = 1;
    op.args.root = root;
    op.args.op = op.user_op = HCCL_REDUCE_SUM;
    op.send = op.recv = buf;
    return hc_comm_run(c, &op);
}

/* ---- join info --------------------------------------------------------- */

typedef struct {
    int32_t status;
    uint32_t owner_rank;
    char port[PORT_MAX];
} port_bcast_t;

HcclResult HcclCommGetJoinInfo(HcclComm comm, char *joinInfo, size_t len)
{
    static const char fn[] = "HcclCommGetJoinInfo";
    hc_comm_t *c;
    int rc = hc_comm_get(comm, fn, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (joinInfo == NULL) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: joinInfo is NULL", fn);
        return HCCL_E_PTR;
    }
    struct hc_elastic *el = el_get(c);
    port_bcast_t *pb = calloc(1, sizeof(*pb));
    if (el == NULL || pb == NULL) {
        free(pb);
        return HCCL_E_MEMORY; /* the others time out in the broadcast */
    }
    uint32_t root = el->owner_rank < c->nranks ? el->owner_rank : 0;
    if (c->rank == root) {
        pb->owner_rank = root;
        if (el->port[0] == '\0' && (rc = mpi_ready(fn)) == HCCL_SUCCESS) {
            char port[MPI_MAX_PORT_NAME + 1] = "";
            int mrc = MPI_Open_port(MPI_INFO_NULL, port);
            if (mrc != MPI_SUCCESS) {
                char m[MPI_MAX_ERROR_STRING];
                HC_ERROR(HC_SUB_ELASTIC, "%s: MPI_Open_port failed: %s", fn, mpi_msg(mrc, m));
                rc = mpi_err(mrc);
            } else if (strlen(port) >= sizeof(el->port)) {
                HC_ERROR(HC_SUB_ELASTIC, "%s: the MPI port name is %zu bytes, more than %d", fn,
                         strlen(port), PORT_MAX - 1);
                MPI_Close_port(port);
                rc = HCCL_E_NOT_SUPPORT;
            } else {
                snprintf(el->port, sizeof(el->port), "%s", port);
                el->owner = 1;
            }
        }
        pb->status = rc;
        snprintf(pb->port, sizeof(pb->port), "%s", el->port);
    }
    rc = bcast_bytes(c, pb, sizeof(*pb), root, fn);
    if (rc == HCCL_SUCCESS)
        rc = pb->status;
    if (rc == HCCL_SUCCESS) {
        if (c->rank != root)
            snprintf(el->port, sizeof(el->port), "%s", pb->port);
        el->owner_rank = pb->owner_rank;
        size_t need = strlen(JOIN_PREFIX) + strlen(pb->port) + 1;
        if (len < need) {
            HC_ERROR(HC_SUB_ELASTIC, "%s: len %zu is too small for the join info (%zu bytes)",
                     fn, len, need);
            rc = HCCL_E_PARA;
        } else {
            snprintf(joinInfo, len, "%s%s", JOIN_PREFIX, pb->port);
            HC_INFO(HC_SUB_ELASTIC, "%s: %s accepts newcomers on port %s (owned by rank %u)", fn,
                    c->name, pb->port, pb->owner_rank);
        }
    }
    free(pb);
    return (HcclResult)rc;
}

/* ---- the root's MPI side of a join ------------------------------------- */

/* argv of this process (after argv[0]), NULL-terminated, from /proc. */
static char **self_args(char **blob)
{
    *blob = NULL;
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(b, cap * 2);
            if (nb == NULL) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (b == NULL)
        return NULL;
    size_t nargs = 0;
    for (size_t i = 0; i < n; i++)
        nargs += b[i] == '\0';
    char **argv = calloc(nargs + 1, sizeof(char *));
    if (argv == NULL) {
        free(b);
        return NULL;
    }
    size_t k = 0, idx = 0;
    for (size_t i = 0; i < n; i += strlen(b + i) + 1, idx++)
        if (idx > 0) /* not argv[0]: MPI_Comm_spawn takes the program apart */
            argv[k++] = b + i;
    argv[k] = NULL;
    *blob = b;
    return argv;
}

/* "LD_LIBRARY_PATH=..\nHCCL_..=..\n...": what the newcomer must see as we
 * do (Open MPI starts spawned processes with mpirun's environment). */
static char *spawn_env(void)
{
    extern char **environ;
    size_t len = 1;
    for (char **e = environ; *e; e++)
        if (!strncmp(*e, "HCCL_", 5) || !strncmp(*e, "UCX_", 4) ||
            !strncmp(*e, "LD_LIBRARY_PATH=", 16))
            len += strlen(*e) + 1;
    char *s = malloc(len);
    if (s == NULL)
        return NULL;
    size_t o = 0;
    for (char **e = environ; *e; e++)
        if (!strncmp(*e, "HCCL_", 5) || !strncmp(*e, "UCX_", 4) ||
            !strncmp(*e, "LD_LIBRARY_PATH=", 16))
            o += (size_t)sprintf(s + o, "%s%s", o ? "\n" : "", *e);
    s[o] = '\0';
    return s;
}

/* The intercommunicator to the newcomer: accept on the port, or spawn. */
static int root_connect(hc_comm_t *c, const char *fn, MPI_Comm *inter)
{
    char m[MPI_MAX_ERROR_STRING];
    int rc = mpi_ready(fn);
    if (rc != HCCL_SUCCESS)
        return rc;
    MPI_Errhandler saved;
    MPI_Comm_get_errhandler(MPI_COMM_SELF, &saved);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int mrc;
    if (c->el && c->el->owner && c->el->port[0]) {
        HC_INFO(HC_SUB_ELASTIC, "%s on %s: accepting a newcomer on port %s", fn, c->name,
                c->el->port);
        mrc = MPI_Comm_accept(c->el->port, MPI_INFO_NULL, 0, MPI_COMM_SELF, inter);
        if (mrc != MPI_SUCCESS)
            HC_ERROR(HC_SUB_ELASTIC, "%s: MPI_Comm_accept on %s failed: %s", fn, c->el->port,
                     mpi_msg(mrc, m));
    } else {
        char exe[PATH_MAX + 1], cwd[PATH_MAX + 1], *blob = NULL;
        ssize_t l = readlink("/proc/self/exe", exe, PATH_MAX);
        char **args = self_args(&blob);
        char *env = spawn_env();
        if (l <= 0 || args == NULL || env == NULL) {
            HC_ERROR(HC_SUB_ELASTIC, "%s: cannot read this process's command line (/proc)", fn);
            free(args);
            free(blob);
            free(env);
            MPI_Comm_set_errhandler(MPI_COMM_SELF, saved);
            return HCCL_E_SYSCALL;
        }
        exe[l] = '\0';
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "env", env);
        if (getcwd(cwd, sizeof(cwd)))
            MPI_Info_set(info, "wdir", cwd);
        if (c->cfg->spawn_host[0])
            MPI_Info_set(info, "host", c->cfg->spawn_host);
        HC_INFO(HC_SUB_ELASTIC, "%s on %s: spawning %s%s%s", fn, c->name, exe,
                c->cfg->spawn_host[0] ? " on host " : "", c->cfg->spawn_host);
        int errcode = MPI_SUCCESS;
        mrc = MPI_Comm_spawn(exe, args[0] ? args : MPI_ARGV_NULL, 1, info, 0, MPI_COMM_SELF,
                             inter, &errcode);
        if (mrc == MPI_SUCCESS && errcode != MPI_SUCCESS)
            mrc = errcode;
        if (mrc != MPI_SUCCESS)
            HC_ERROR(HC_SUB_ELASTIC, "%s: MPI_Comm_spawn of %s%s%s failed: %s (are there free "
                     "slots? mpirun --oversubscribe or a hostfile with slots)", fn, exe,
                     c->cfg->spawn_host[0] ? " on host " : "", c->cfg->spawn_host,
                     mpi_msg(mrc, m));
        MPI_Info_free(&info);
        free(args);
        free(blob);
        free(env);
    }
    MPI_Comm_set_errhandler(MPI_COMM_SELF, saved);
    if (mrc != MPI_SUCCESS)
        return mpi_err(mrc);
    MPI_Comm_set_errhandler(*inter, MPI_ERRORS_RETURN);
    return HCCL_SUCCESS;
}

/* The newcomer's card against this communicator's settings. */
static int check_newcomer(hc_comm_t *c, const hc_card_t *ref, const hc_card_t *n,
                          const char *fn)
{
    if (n->magic != HC_CARD_MAGIC || n->abi != HC_ABI || n->version != ref->version) {
        HC_ERROR(HC_SUB_ELASTIC, "%s on %s: the newcomer runs an incompatible hcomm (version "
                 "%u ABI %u; here %u / %u)", fn, c->name, n->version, n->abi, ref->version,
                 ref->abi);
        return HCCL_E_NOT_SUPPORT;
    }
    if (n->status != HCCL_SUCCESS) {
        HC_ERROR(HC_SUB_ELASTIC, "%s on %s: the newcomer failed to initialise (%s)", fn,
                 c->name, HcclGetErrorString(n->status));
        return n->status;
    }
    if (strncmp(n->algos, ref->algos, sizeof(n->algos)) != 0) {
        HC_ERROR(HC_SUB_ELASTIC, "%s on %s: the newcomer forces other algorithms ('%.*s'; here "
                 "'%.*s')", fn, c->name, (int)sizeof(n->algos), n->algos,
                 (int)sizeof(ref->algos), ref->algos);
        return HCCL_E_PARA;
    }
    return HCCL_SUCCESS;
}

/* ---- add --------------------------------------------------------------- */

/* HcclCommAddMember (2), at the root: accept the newcomer, receive its card
 * and check it; the verdict, the id (the larger of the members' and the
 * newcomer's proposals) and the card, renumbered newRank, go into jb. */
static void meet_newcomer(hc_comm_t *c, const char *fn, uint32_t id, uint32_t newRank,
                          MPI_Comm *inter, hc_card_t *ref, join_bcast_t *jb)
{
    hc_comm_fill_card(c->ctx, c->cfg, 0, ref);
    jb->status = root_connect(c, fn, inter);
    if (jb->status == HCCL_SUCCESS) {
        int mrc = MPI_Recv(&jb->card, sizeof(hc_card_t), MPI_BYTE, 0, JOIN_TAG, *inter,
                           MPI_STATUS_IGNORE);
        if (mrc != MPI_SUCCESS) {
            char m[MPI_MAX_ERROR_STRING];
            HC_ERROR(HC_SUB_ELASTIC, "%s: receiving the newcomer's card failed: %s", fn,
                     mpi_msg(mrc, m));
            jb->status = mpi_err(mrc);
        } else {
            jb->status = check_newcomer(c, ref, &jb->card, fn);
        }
    }
    if (jb->card.comm_id_proposal > id)
        id = jb->card.comm_id_proposal;
    jb->id = id;
    jb->card.rank = newRank; /* its "world" rank in the address books */
}

/* HcclCommAddMember (4), at the root: the newcomer's header (status rc, the
 * communicator's settings) and, when rc is success, every member's card in
 * the new rank order (members: address-book entries); then the
 * intercommunicator is let go. Returns rc, or HCCL_E_MEMORY (the newcomer
 * then fails in its receive). */
static int send_newcomer(hc_comm_t *c, const char *fn, int rc, uint32_t id, uint32_t newRank,
                         uint32_t owner, const uint32_t *members, const hc_card_t *ref,
                         join_hdr_t *hdr, MPI_Comm *inter)
{
    const uint32_t n = c->nranks;
    const struct hc_elastic *el = c->el;
    hdr->status = rc;
    hdr->id = id;
    hdr->rank = newRank;
    hdr->nranks = n + 1;
    hdr->epoch = c->epoch + 1;
    hdr->owner_rank = owner;
    hdr->deterministic = c->cfg->deterministic;
    hdr->check_args = c->cfg->check_args;
    hdr->buffsize = c->cfg->buffsize;
    hdr->exec_timeout = c->cfg->exec_timeout;
    snprintf(hdr->name, sizeof(hdr->name), "%s", c->name);
    if (el && el->port[0])
        snprintf(hdr->port, sizeof(hdr->port), "%s", el->port);
    int mrc = MPI_Send(hdr, sizeof(*hdr), MPI_BYTE, 0, JOIN_TAG, *inter);
    if (mrc == MPI_SUCCESS && rc == HCCL_SUCCESS) {
        hc_card_t *cards = malloc(((size_t)n + 1) * sizeof(hc_card_t));
        if (cards == NULL) {
            rc = HCCL_E_MEMORY;
        } else {
            pthread_mutex_lock(&c->ctx->lock);
            for (uint32_t r = 0; r <= n; r++) {
                cards[r] = c->ctx->peers[members[r]]->card;
                cards[r].rank = r;
                cards[r].status = HCCL_SUCCESS;
                cards[r].comm_id_proposal = id;
                cards[r].deterministic = ref->deterministic;
                cards[r].check_args = ref->check_args;
                cards[r].buffsize = ref->buffsize;
                memcpy(cards[r].algos, ref->algos, sizeof(ref->algos));
            }
            pthread_mutex_unlock(&c->ctx->lock);
            mrc = MPI_Send(cards, (int)((n + 1) * sizeof(hc_card_t)), MPI_BYTE, 0, JOIN_TAG,
                           *inter);
            free(cards);
        }
    }
    if (mrc != MPI_SUCCESS) {
        char m[MPI_MAX_ERROR_STRING];
        HC_ERROR(HC_SUB_ELASTIC, "%s: sending the newcomer its cards failed: %s", fn,
                 mpi_msg(mrc, m));
    }
    MPI_Comm_disconnect(inter);
    return rc;
}

HcclResult HcclCommAddMember(HcclComm comm, uint32_t newRank)
{
    static const char fn[] = "HcclCommAddMember";
    hc_comm_t *c;
    int rc = hc_comm_get(comm, fn, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    const uint32_t n = c->nranks;
    int status = HCCL_SUCCESS;
    if (newRank > n) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: newRank %u is out of range (0..%u for %s)", fn, newRank, n,
                 c->name);
        status = HCCL_E_PARA;
    }
    c->aborted = 0; /* a recovery call: an aborted communicator is rebuilt */
    double t0 = hc_now_s();
    uint32_t *members = malloc(((size_t)n + 1) * sizeof(uint32_t));
    join_bcast_t *jb = calloc(1, sizeof(*jb));
    join_hdr_t *hdr = calloc(1, sizeof(*hdr));
    if (members == NULL || jb == NULL || hdr == NULL) {
        rc = HCCL_E_MEMORY;
        goto out;
    }
    for (uint32_t i = 0; i < n; i++)
        members[i] = i;
    /* (1) agree on newRank and the members' max id proposal */
    uint32_t salt = hc_hash32(HC_HASH32_INIT, &c->epoch, sizeof(c->epoch));
    uint32_t v[4] = {hc_comm_propose_id(c->ctx), (uint32_t)status, newRank, ~newRank};
    rc = hc_ctrl_max(c, members, n, c->rank, HC_CTRL_ADD, salt, v, 4, fn);
    if (rc == HCCL_SUCCESS && v[1] != HCCL_SUCCESS)
        rc = (int)v[1];
    if (rc == HCCL_SUCCESS && (v[2] != newRank || v[3] != (uint32_t)~newRank)) {
        HC_ERROR(HC_SUB_ELASTIC, "%s on %s: the members passed different newRank values", fn,
                 c->name);
        rc = HCCL_E_PARA;
    }
    if (rc != HCCL_SUCCESS)
        goto out;
    uint32_t id = v[0];
    struct hc_elastic *el = c->el;
    const uint32_t root = el && el->owner_rank < n ? el->owner_rank : 0;
    MPI_Comm inter = MPI_COMM_NULL;
    hc_card_t ref;
    /* (2) the root meets the newcomer */
    if (c->rank == root)
        meet_newcomer(c, fn, id, newRank, &inter, &ref, jb);
    /* (3) verdict, id and card to every member */
    rc = bcast_bytes(c, jb, sizeof(*jb), root, fn);
    if (rc == HCCL_SUCCESS)
        rc = jb->status;
    id = hc_comm_note_id(c->ctx, jb->id);
    uint32_t npeer = UINT32_MAX;
    if (rc == HCCL_SUCCESS) {
        pthread_mutex_lock(&c->ctx->lock);
        npeer = hc_ctx_add_peer(c->ctx, &jb->card);
        pthread_mutex_unlock(&c->ctx->lock);
        if (npeer == UINT32_MAX)
            rc = HCCL_E_MEMORY;
    }
    /* new map: the newcomer at newRank, members at or above it move up */
    for (uint32_t r = 0, k = 0; r <= n; r++)
        members[r] = r == newRank ? npeer : c->peer[k++];
    const uint32_t myrank = c->rank + (c->rank >= newRank);
    const uint32_t owner = el && el->owner_rank < n ? el->owner_rank + (el->owner_rank >= newRank)
                                                    : UINT32_MAX;
    /* (4) the newcomer gets the header and everybody's card */
    if (c->rank == root && inter != MPI_COMM_NULL)
        rc = send_newcomer(c, fn, rc, id, newRank, owner, members, &ref, hdr, &inter);
    if (rc != HCCL_SUCCESS)
        goto out;
    /* (5) everybody rebuilds */
    rc = hc_comm_rebuild(c, myrank, n + 1, members, id, 0);
    if (rc == HCCL_SUCCESS && el)
        el->owner_rank = owner;
    if (rc == HCCL_SUCCESS)
        HC_INFO(HC_SUB_ELASTIC, "%s: %s now has %u ranks (newcomer %s:%d at rank %u), id %u, "
                "this process rank %u; %.1f ms", fn, c->name, n + 1, jb->card.host,
                jb->card.pid, newRank, id, myrank, (hc_now_s() - t0) * 1e3);
out:
    free(members);
    free(jb);
    free(hdr);
    return (HcclResult)rc;
}

/* ---- join (the newcomer) ------------------------------------------------ */

/* The newcomer's intercommunicator to the members: its parent's (joinInfo
 * NULL: started by MPI_Comm_spawn) or a connection to the port in joinInfo
 * (HcclCommGetJoinInfo); errors returned, not fatal. */
static int join_connect(const char *fn, const char *joinInfo, MPI_Comm *inter)
{
    if (joinInfo == NULL) {
        MPI_Comm_get_parent(inter);
        if (*inter == MPI_COMM_NULL) {
            HC_ERROR(HC_SUB_ELASTIC, "%s: joinInfo is NULL but this process was not started by "
                     "MPI_Comm_spawn (no parent)", fn);
            return HCCL_E_PARA;
        }
    } else {
        if (strncmp(joinInfo, JOIN_PREFIX, strlen(JOIN_PREFIX)) != 0) {
            HC_ERROR(HC_SUB_ELASTIC, "%s: joinInfo '%.60s' is not a string from "
                     "HcclCommGetJoinInfo", fn, joinInfo);
            return HCCL_E_PARA;
        }
        char port[PORT_MAX], m[MPI_MAX_ERROR_STRING];
        snprintf(port, sizeof(port), "%s", joinInfo + strlen(JOIN_PREFIX));
        MPI_Errhandler saved;
        MPI_Comm_get_errhandler(MPI_COMM_SELF, &saved);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        int mrc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, inter);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, saved);
        if (mrc != MPI_SUCCESS) {
            HC_ERROR(HC_SUB_ELASTIC, "%s: MPI_Comm_connect to %s failed: %s (two mpiruns need "
                     "ompi-server and --ompi-server on both)", fn, port, mpi_msg(mrc, m));
            return mpi_err(mrc);
        }
    }
    MPI_Comm_set_errhandler(*inter, MPI_ERRORS_RETURN);
    return HCCL_SUCCESS;
}

HcclResult HcclCommJoin(const char *joinInfo, HcclComm *comm)
{
    static const char fn[] = "HcclCommJoin";
    char m[MPI_MAX_ERROR_STRING];
    if (comm == NULL) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: comm (the output handle) is NULL", fn);
        return HCCL_E_PTR;
    }
    int rc = mpi_ready(fn);
    if (rc != HCCL_SUCCESS)
        return rc;
    MPI_Comm inter = MPI_COMM_NULL;
    int mrc;
    rc = join_connect(fn, joinInfo, &inter);
    if (rc != HCCL_SUCCESS)
        return rc;
    hc_context_t *ctx;
    hc_config_t cfg;
    hc_card_t *mine = malloc(sizeof(*mine));
    join_hdr_t *hdr = calloc(1, sizeof(*hdr));
    hc_card_t *cards = NULL;
    if (mine == NULL || hdr == NULL) {
        free(mine);
        free(hdr);
        MPI_Comm_disconnect(&inter);
        return HCCL_E_MEMORY;
    }
    hc_bootstrap_prepare(NULL, 0, &ctx, &cfg, mine); /* a failure travels in the card */
    mrc = MPI_Send(mine, sizeof(*mine), MPI_BYTE, 0, JOIN_TAG, inter);
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Recv(hdr, sizeof(*hdr), MPI_BYTE, 0, JOIN_TAG, inter, MPI_STATUS_IGNORE);
    if (mrc != MPI_SUCCESS) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: talking to the members failed: %s", fn, mpi_msg(mrc, m));
        rc = mpi_err(mrc);
    } else if (hdr->status != HCCL_SUCCESS) {
        rc = hdr->status;
        HC_ERROR(HC_SUB_ELASTIC, "%s: the members refused or failed to add this process: %s",
                 fn, HcclGetErrorString(rc));
    } else if (hdr->nranks == 0 || hdr->rank >= hdr->nranks ||
               (cards = malloc((size_t)hdr->nranks * sizeof(hc_card_t))) == NULL) {
        rc = hdr->nranks ? HCCL_E_MEMORY : HCCL_E_INTERNAL;
    } else {
        mrc = MPI_Recv(cards, (int)(hdr->nranks * sizeof(hc_card_t)), MPI_BYTE, 0, JOIN_TAG,
                       inter, MPI_STATUS_IGNORE);
        if (mrc != MPI_SUCCESS) {
            HC_ERROR(HC_SUB_ELASTIC, "%s: receiving the members' cards failed: %s", fn,
                     mpi_msg(mrc, m));
            rc = mpi_err(mrc);
        }
    }
    MPI_Comm_disconnect(&inter);
    hc_comm_t *c = NULL;
    if (rc == HCCL_SUCCESS && ctx == NULL)
        rc = mine->status;
    if (rc == HCCL_SUCCESS) {
        /* the communicator's settings, whatever this process's environment */
        cfg.deterministic = hdr->deterministic;
        cfg.check_args = hdr->check_args;
        cfg.buffsize = hdr->buffsize;
        cfg.exec_timeout = hdr->exec_timeout;
        rc = hc_comm_create(ctx, &cfg, hdr->rank, hdr->nranks, cards,
                            hc_comm_note_id(ctx, hdr->id), hdr->name, &c);
    }
    if (rc == HCCL_SUCCESS) {
        c->epoch = hdr->epoch;
        if (hdr->port[0] && hdr->owner_rank < hdr->nranks && el_get(c)) {
            snprintf(c->el->port, sizeof(c->el->port), "%s", hdr->port);
            c->el->owner_rank = hdr->owner_rank;
        }
        hc_log_set_rank((int)hdr->rank);
        HC_INFO(HC_SUB_ELASTIC, "%s: joined %s as rank %u of %u (id %u)", fn, c->name,
                hdr->rank, hdr->nranks, hdr->id);
        *comm = c->handle;
    }
    if (ctx) {
        hc_env_free(&cfg);
        if (rc != HCCL_SUCCESS)
            hc_ctx_release(ctx);
    }
    free(mine);
    free(hdr);
    free(cards);
    return (HcclResult)rc;
}

/* ---- remove ------------------------------------------------------------- */

/* The members of c this process holds failed now (failedRank always),
 * their endpoints force-closed (which completes the sends abandoned to
 * them); gone[r] = 1 for each; returns how many. ctx->lock held. */
static uint32_t gone_members(hc_comm_t *c, uint32_t failedRank, uint8_t *gone)
{
    uint32_t k = 0;
    hc_ctx_poll(c->ctx); /* failures and notices that are due */
    for (uint32_t r = 0; r < c->nranks; r++) {
        hc_peer_t *p = hc_comm_peer(c, r);
        gone[r] = r != c->rank && (r == failedRank || p->failed != 0);
        if (!gone[r])
            continue;
        if (p->failed == 0)
            p->failed = HCCL_E_REMOTE;
        if (p->ep) { /* (the close finds the worker of the endpoint through p->ep) */
            hc_ucx_ep_close(c->ctx, p->ep, 1);
            p->ep = NULL;
        }
        k++;
    }
    return k;
}

/* Members of c marked failed (ctx->lock held). */
uint32_t hc_elastic_failed_count(const hc_comm_t *c)
{
    uint32_t k = 0;
    for (uint32_t r = 0; r < c->nranks; r++)
        k += r != c->rank && hc_comm_peer(c, r)->failed != 0;
    return k;
}

/* HcclCommRemoveMember's agreement among the survivors of c on who is gone
 * (gone[n]; told[n]: members already announced failed) and on the new
 * communicator's id. On success surv[0..*ns) are the survivors' ranks, *me
 * this process's place among them, *nf the number gone and *id the id,
 * claimed in this process. */
static int agree_removal(hc_comm_t *c, uint32_t failedRank, uint8_t *gone, uint8_t *told,
                         uint32_t *surv, uint32_t *ns_out, uint32_t *me_out, uint32_t *nf_out,
                         uint32_t *id_out, const char *fn)
{
    const uint32_t n = c->nranks;
    hc_context_t *ctx = c->ctx;
    uint32_t ns = 0, me = 0, nf = 0, id = 0, clashes = 0;
    int rc = HCCL_SUCCESS;
    /* The survivors agree among themselves on who is gone: failedRank and
     * any other member known failed (several processes can die at once,
     * a whole host). Members that know different sets use different tags,
     * so they never pair up; each tells the others what it knows, and an
     * attempt that learns of one more failure meanwhile stops and starts
     * again over the larger set, until all agree. */
    for (uint32_t attempt = 0;; attempt++) {
        pthread_mutex_lock(&ctx->lock);
        nf = gone_members(c, failedRank, gone);
        /* tell the other survivors, whose operations may still wait on
         * these (until their deadline, for a hung process): they come
         * sooner, and agree on the same set. Nothing is sent to them. */
        for (uint32_t g = 0; g < n; g++) {
            if (!gone[g] || told[g])
                continue;
            told[g] = 1;
            for (uint32_t r = 0; r < n; r++)
                if (!gone[r] && r != c->rank)
                    hc_ucx_notice_failed(ctx, c->peer[r], c->peer[g]);
        }
        pthread_mutex_unlock(&ctx->lock);
        uint32_t h = hc_hash32(HC_HASH32_INIT, &c->epoch, sizeof(c->epoch));
        ns = 0;
        for (uint32_t r = 0; r < n; r++) {
            if (gone[r]) {
                h = hc_hash32(h, &r, sizeof(r));
                continue;
            }
            if (r == c->rank)
                me = ns;
            surv[ns++] = r;
        }
        const uint32_t salt = hc_hash32(h, &clashes, sizeof(clashes));
        uint32_t v[4] = {hc_comm_propose_id(ctx), 0, h, ~h};
        /* A survivor can come up to one deadline after another (one that
         * only waited on survivors learns of the failure by the notice
         * above, or by its deadline): twice HCCL_EXEC_TIMEOUT for this
         * agreement. */
        c->wait_scale = 2;
        c->remove_known = nf; /* hc_comm_wait stops it if one more fails */
        rc = ns > 1 ? hc_ctrl_max(c, surv, ns, me, HC_CTRL_REMOVE, salt, v, 4, fn) : HCCL_SUCCESS;
        if (rc == HCCL_SUCCESS && (v[2] != h || v[3] != ~h)) {
            HC_ERROR(HC_SUB_ELASTIC, "%s on %s: the survivors disagree on the failed ranks", fn,
                     c->name);
            rc = HCCL_E_PARA;
        }
        /* Then every survivor takes the id. Another communicator of one of
         * their processes may have got the same one from a creation at the
         * same time (another thread's removal, say): then all of them
         * agree again with new proposals (src/features/split.c, "Limit"). */
        int clash = 0;
        if (rc == HCCL_SUCCESS) {
            id = hc_comm_note_id(ctx, v[0]);
            /* (out of memory counts as a clash: all try again, alike) */
            clash = hc_ctx_claim_id(ctx, id) != HCCL_SUCCESS;
        }
        int again = 0;
        if (rc == HCCL_SUCCESS) {
            uint32_t w[1] = {(uint32_t)clash};
            rc = ns > 1 ? hc_ctrl_max(c, surv, ns, me, HC_CTRL_REMOVE, salt ^ 0x800u, w, 1, fn)
                        : HCCL_SUCCESS;
            if ((rc != HCCL_SUCCESS || w[0]) && !clash)
                hc_ctx_release_id(ctx, id);
            again = rc == HCCL_SUCCESS && w[0];
        }
        c->remove_known = 0;
        c->wait_scale = 0;
        if (again && ++clashes <= 16) {
            HC_INFO(HC_SUB_ELASTIC, "%s on %s: id %u is taken in a survivor's process; agreeing "
                    "again", fn, c->name, id);
            continue;
        }
        if (again) {
            HC_ERROR(HC_SUB_ELASTIC, "%s on %s: no free communicator id after %u tries", fn,
                     c->name, clashes);
            rc = HCCL_E_INTERNAL;
            break;
        }
        if (rc == HCCL_SUCCESS)
            break;
        pthread_mutex_lock(&ctx->lock);
        const uint32_t now_failed = hc_elastic_failed_count(c);
        pthread_mutex_unlock(&ctx->lock);
        if (rc != HCCL_E_REMOTE || now_failed <= nf || attempt >= n)
            break;
        HC_WARN(HC_SUB_ELASTIC, "%s on %s: another member failed during the agreement (%u "
                "failed, %u before): agreeing again", fn, c->name, now_failed, nf);
    }
    *ns_out = ns;
    *me_out = me;
    *nf_out = nf;
    *id_out = id;
    return rc;
}

HcclResult HcclCommRemoveMember(HcclComm comm, uint32_t failedRank)
{
    static const char fn[] = "HcclCommRemoveMember";
    hc_comm_t *c;
    int rc = hc_comm_get(comm, fn, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    const uint32_t n = c->nranks;
    if (failedRank >= n) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: failedRank %u is out of range (%s has %u ranks)", fn,
                 failedRank, c->name, n);
        return HCCL_E_PARA;
    }
    if (failedRank == c->rank) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: failedRank %u is the caller; only the survivors call it",
                 fn, failedRank);
        return HCCL_E_PARA;
    }
    double t0 = hc_now_s();
    c->aborted = 0; /* a recovery call: an aborted communicator is rebuilt */
    hc_context_t *ctx = c->ctx;
    uint32_t *surv = malloc((size_t)n * sizeof(uint32_t));
    uint8_t *gone = calloc(n, 2); /* gone[n], then told[n] */
    if (surv == NULL || gone == NULL) {
        free(surv);
        free(gone);
        return HCCL_E_MEMORY;
    }
    uint8_t *told = gone + n;
    uint32_t ns = 0, me = 0, nf = 0, id = 0;
    rc = agree_removal(c, failedRank, gone, told, surv, &ns, &me, &nf, &id, fn);
    if (rc == HCCL_SUCCESS) {
        const uint32_t old_rank = c->rank;
        for (uint32_t k = 0; k < ns; k++)
            surv[k] = c->peer[surv[k]];
        rc = hc_comm_rebuild(c, me, ns, surv, id, 1);
        if (rc != HCCL_SUCCESS)
            hc_ctx_release_id(ctx, id);
        struct hc_elastic *el = c->el;
        if (rc == HCCL_SUCCESS && el && el->owner_rank < n) {
            uint32_t below = 0;
            for (uint32_t r = 0; r < el->owner_rank; r++)
                below += gone[r];
            if (gone[el->owner_rank]) {
                el->port[0] = '\0'; /* only its owner could accept on it */
                el->owner_rank = UINT32_MAX;
            } else {
                el->owner_rank -= below;
            }
        }
        if (rc == HCCL_SUCCESS)
            HC_INFO(HC_SUB_ELASTIC, "%s: %s dropped rank %u%s (%u failed); %u ranks left, id %u, "
                    "this process rank %u -> %u; %.3f ms", fn, c->name, failedRank,
                    nf > 1 ? " and the other failed ranks" : "", nf, ns, id, old_rank, me,
                    (hc_now_s() - t0) * 1e3);
    }
    free(surv);
    free(gone);
    return (HcclResult)rc;
}

/* What this process knows: the address book's failed marks (set by the
 * endpoint error callback, keepalive included, by the removal notice of
 * another member, and by our own HcclCommRemoveMember). Progressing once
 * runs callbacks that are due. A process that only ever received from a
 * peer has no endpoint to it, and only an endpoint notices a death: open
 * the missing ones (as the wait of src/comm/comm.c does after a long wait), so
 * that polling this call finds a dead member within about
 * UCX_KEEPALIVE_INTERVAL (an endpoint is made once per process pair). */
HcclResult HcclCommGetFailedRanks(HcclComm comm, uint32_t *ranks, uint32_t maxRanks,
                                  uint32_t *nFailed)
{
    static const char fn[] = "HcclCommGetFailedRanks";
    hc_comm_t *c;
    int rc = hc_comm_get(comm, fn, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (nFailed == NULL) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: nFailed is NULL", fn);
        return HCCL_E_PTR;
    }
    if (ranks == NULL && maxRanks > 0) {
        HC_ERROR(HC_SUB_ELASTIC, "%s: ranks is NULL but maxRanks is %u", fn, maxRanks);
        return HCCL_E_PTR;
    }
    hc_context_t *ctx = c->ctx;
    uint32_t k = 0;
    pthread_mutex_lock(&ctx->lock);
    hc_ctx_poll(ctx);
    for (uint32_t r = 0; r < c->nranks; r++) {
        if (r == c->rank)
            continue;
        hc_ctx_watch(ctx, c->peer[r]);
        if (hc_comm_peer(c, r)->failed == 0)
            continue;
        if (k < maxRanks)
            ranks[k] = r;
        k++;
    }
    pthread_mutex_unlock(&ctx->lock);
    *nFailed = k;
    return HCCL_SUCCESS;
}
