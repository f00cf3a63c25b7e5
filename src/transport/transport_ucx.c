/*
 * src/transport/transport_ucx.c - hcomm's data path over UCX tagged messages.
 *
 * Every request carries a private slot (ucp_params.request_size) holding
 * the hc_xfer_t it completes. Cancelling detaches the slot first, so a
 * request that completes after its operation was abandoned (a hung peer
 * that wakes up, a receive cancelled at the deadline) never writes into
 * memory the caller has reused. UCX may also complete a request, callback
 * included, inside the ucp_tag_*_nbx call that returns it (a receive that
 * finds every fragment of an eager message already there:
 * openucx/ucx#9131); the slot then keeps the status until finish_post
 * attaches it, which completes the transfer there (test_soak found
 * AlltoAllV hanging on such a receive, its data delivered; docs/DESIGN.md,
 * "Failures and timeouts"). Endpoints use peer error handling so that
 * a dead peer fails the operation instead of hanging it; UCX then drops
 * shared memory unless UCX_MM_ERROR_HANDLING=y, which we set unless the
 * user did (UCX-FACTS.md); likewise UCX_KEEPALIVE_INTERVAL=1s, so that a
 * peer that dies marks its entry failed within about a second.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "transport_ucx.h"

#include <stdlib.h>
#include <string.h>
#include <hccl/hccl.h>

#include "src/base/log.h"
#include "src/base/util.h"
#include "topo/topo.h"

typedef struct {
    hc_xfer_t *x;        /* NULL until attached, and once detached */
    uint8_t attached;    /* finish_post has run: x (or its detachment) is valid */
    uint8_t early;       /* completed before that, inside the posting call */
    ucs_status_t status; /* of an early completion */
    uint8_t recv;        /* a receive: got is the length that arrived */
    uint64_t got;
    hc_peer_t *from;     /* a receive's peer (its heard mark); NULL: a send */
    int *done;           /* set when it completes (ucx_cancel waits on it) */
} req_slot_t;

/* ucp_params.request_init: a slot starts out unattached; xfer_done and
 * finish_post put it back so before the request is freed. */
static void slot_init(void *request)
{
    memset(request, 0, sizeof(req_slot_t));
}

int hc_ucx_status_to_hccl(ucs_status_t st)
{
    switch (st) {
    case UCS_OK:
        return HCCL_SUCCESS;
    case UCS_ERR_CANCELED:
        return HCCL_E_TIMEOUT;
    case UCS_ERR_NO_MEMORY:
        return HCCL_E_MEMORY;
    case UCS_ERR_MESSAGE_TRUNCATED:
        return HCCL_E_INTERNAL;
    case UCS_ERR_TIMED_OUT:
        return HCCL_E_TIMEOUT;
    default:
        return HCCL_E_REMOTE; /* endpoint timeout, reset, unreachable, ... */
    }
}

/* ---- failure notices --------------------------------------------------
 * A survivor that calls HcclCommRemoveMember tells the other survivors
 * which process it removes (an active message carrying the process's uid).
 * They mark it failed in their address book, so that whatever of theirs
 * still waits on it (a hung process is noticed by no endpoint, a dead one
 * over shared memory only by keepalive) fails now instead of at its
 * deadline, and they reach HcclCommRemoveMember about when the first
 * survivor did (docs/ELASTIC.md, "Leaving"). */
enum { HC_AM_FAILED = 1, HC_AM_BYE = 2 };

/* A notice's header is the uid of the process it is about: 0 when the
 * context is closing or the header is not one. */
static uint64_t notice_uid(const hc_context_t *ctx, const void *header, size_t header_length)
{
    uint64_t uid = 0;
    if (!ctx->closing && header_length == sizeof(uid))
        memcpy(&uid, header, sizeof(uid));
    return uid;
}

static hc_peer_t *peer_of_uid(hc_context_t *ctx, uint64_t uid)
{
    for (uint32_t i = 0; i < ctx->npeers && uid; i++)
        if (ctx->peers[i]->card.uid == uid)
            return ctx->peers[i];
    return NULL;
}

static ucs_status_t failed_notice_cb(void *arg, const void *header, size_t header_length,
                                     void *data, size_t length,
                                     const ucp_am_recv_param_t *param)
{
    (void)data;
    (void)length;
    (void)param;
    hc_context_t *ctx = arg;
    const uint64_t uid = notice_uid(ctx, header, header_length);
    if (uid != 0 && uid == ctx->self.uid) {
        HC_ERROR(HC_SUB_ELASTIC, "another member removed this process from a communicator "
                 "(HcclCommRemoveMember): it took this process for failed");
        return UCS_OK;
    }
    hc_peer_t *p = peer_of_uid(ctx, uid);
    if (p && !p->failed) {
        HC_WARN(HC_SUB_ELASTIC, "process %s:%d was removed by another member "
                "(HcclCommRemoveMember): operations that wait on it here fail now",
                p->card.host, p->card.pid);
        p->failed = HCCL_E_REMOTE;
    }
    return UCS_OK;
}

/* ---- leaving -----------------------------------------------------------
 * A process whose last communicator is destroyed says goodbye on each of
 * its endpoints before it closes them (hc_ucx_say_bye), and on one made to
 * each peer it heard from (that peer holds an endpoint to it, whose
 * connection closes too). The goodbye travels
 * behind everything the process sent on that endpoint, and the process had
 * finished every operation: whatever of its data a peer still waits for has
 * arrived, or never will. The peer marks it departed (and failed, so that
 * nothing new is sent to it): a receive still pending from it fails now, a
 * receive posted later still takes what arrived before the goodbye, and a
 * collective does not give up merely because a departed member is gone
 * (its part is done). The connection reset that follows is expected, not
 * an error; one seen before the goodbye counts as a failure only when no
 * goodbye came within HC_BYE_GRACE_S (hc_peer_failed). So communicators
 * may be destroyed in any order on different ranks (a torch.distributed
 * job tears its groups down in the order Python frees them), without a
 * closing agreement. */
static ucs_status_t bye_cb(void *arg, const void *header, size_t header_length, void *data,
                           size_t length, const ucp_am_recv_param_t *param)
{
    (void)data;
    (void)length;
    (void)param;
    hc_context_t *ctx = arg;
    hc_peer_t *p = peer_of_uid(ctx, notice_uid(ctx, header, header_length));
    if (p == NULL || p->departed)
        return UCS_OK;
    HC_INFO(HC_SUB_TRANSPORT, "process %s:%d left (destroyed its last communicator)",
            p->card.host, p->card.pid);
    p->departed = 1;
    if (!p->failed)
        p->failed = HCCL_E_REMOTE;
    return UCS_OK;
}

void hc_ucx_say_bye(hc_context_t *ctx, uint32_t to)
{
    hc_peer_t *p = ctx->peers[to];
    int rc;
    /* every peer connected to us: those we sent to (p->ep) and those that
     * sent to us (their connection is matched by the endpoint made here) */
    if (p->failed || (p->ep == NULL && !p->heard) || hc_ctx_ep(ctx, to, &rc) == NULL)
        return;
    ucp_request_param_t prm;
    memset(&prm, 0, sizeof(prm));
    /* the uid lives in this context's card until the endpoint is closed,
     * which flushes the message first */
    ucs_status_ptr_t r = ucp_am_send_nbx(p->ep, HC_AM_BYE, &ctx->self.uid,
                                         sizeof(ctx->self.uid), NULL, 0, &prm);
    if (UCS_PTR_IS_PTR(r))
        ucp_request_free(r);
}

static ucs_status_t set_notice_handler(hc_context_t *ctx, ucp_worker_h w)
{
    ucp_am_handler_param_t hp;
    memset(&hp, 0, sizeof(hp));
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG;
    hp.id = HC_AM_FAILED;
    hp.cb = failed_notice_cb;
    hp.arg = ctx;
    ucs_status_t st = ucp_worker_set_am_recv_handler(w, &hp);
    if (st != UCS_OK)
        return st;
    hp.id = HC_AM_BYE;
    hp.cb = bye_cb;
    return ucp_worker_set_am_recv_handler(w, &hp);
}

void hc_ucx_notice_failed(hc_context_t *ctx, uint32_t to, uint32_t failed)
{
    int rc;
    ucp_ep_h ep = ctx->peers[to]->failed ? NULL : hc_ctx_ep(ctx, to, &rc);
    if (ep == NULL)
        return;
    /* the header lives in the address book, whose entries never move: it
     * stays valid however long the send takes */
    const uint64_t *uid = &ctx->peers[failed]->card.uid;
    ucp_request_param_t prm;
    memset(&prm, 0, sizeof(prm));
    ucs_status_ptr_t r = ucp_am_send_nbx(ep, HC_AM_FAILED, uid, sizeof(*uid), NULL, 0, &prm);
    if (UCS_PTR_IS_PTR(r))
        ucp_request_free(r); /* completes by itself; nothing waits for it */
    else if (UCS_PTR_STATUS(r) != UCS_OK)
        HC_WARN(HC_SUB_ELASTIC, "could not tell process %s:%d of the removal: %s",
                ctx->peers[to]->card.host, ctx->peers[to]->card.pid,
                ucs_status_string(UCS_PTR_STATUS(r)));
}

/* A second context restricted to TCP (context.h): pairs of processes on
 * one machine with different host names (network namespaces, containers:
 * hosts of their own) and pairs on different nodes that HCCL_TOPO_FILE
 * declares there (a simulated cluster) talk through it. Every context has
 * one, since which peers will need it is known only when their cards
 * arrive; an idle TCP worker costs a few ns a poll. Not fatal: without it
 * such pairs keep the default transports (a warning where a topology file
 * asks for it, and context.c warns when a peer on another host needs it). */
static void tcp_worker_init(hc_context_t *ctx)
{
    ucp_config_t *config = NULL;
    ucp_address_t *addr = NULL;
    size_t len = 0;
    const char *what = "ucp_config_read";
    ucs_status_t st = ucp_config_read(NULL, NULL, &config);
    /* Messages up to 64 KiB eager between hosts, as Open MPI's tcp btl
     * sends them: a sender does not wait for a late receiver's reply (a
     * Broadcast root ahead of the others took ~3.7 ms a 32 KiB call from a
     * barrier across 4 hosts, 70-150 us eager; docs/CLUSTER.md), and a
     * send ended by an error holds its buffer only until TCP has taken it.
     * UCX_RNDV_THRESH, when set, wins. */
    if (st == UCS_OK && getenv("UCX_RNDV_THRESH") == NULL)
        what = "UCX_RNDV_THRESH=65536", st = ucp_config_modify(config, "RNDV_THRESH", "65536");
    if (st == UCS_OK && (what = "UCX_TLS=tcp", st = ucp_config_modify(config, "TLS", "tcp")) == UCS_OK) {
        ucp_params_t p;
        memset(&p, 0, sizeof(p));
        p.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_REQUEST_SIZE |
                       UCP_PARAM_FIELD_REQUEST_INIT;
        p.features = UCP_FEATURE_TAG | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
        p.request_size = sizeof(req_slot_t);
        p.request_init = slot_init;
        what = "ucp_init";
        st = ucp_init(&p, config, &ctx->ucp_tcp);
    }
    if (config)
        ucp_config_release(config);
    if (st == UCS_OK) {
        ucp_worker_params_t wp;
        memset(&wp, 0, sizeof(wp));
        wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
        wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
        what = "ucp_worker_create";
        st = ucp_worker_create(ctx->ucp_tcp, &wp, &ctx->worker_tcp);
    }
    if (st == UCS_OK)
        what = "ucp_worker_set_am_recv_handler", st = set_notice_handler(ctx, ctx->worker_tcp);
    if (st == UCS_OK && (what = "ucp_worker_get_address",
                         st = ucp_worker_get_address(ctx->worker_tcp, &addr, &len)) == UCS_OK) {
        if (len <= HC_ADDR_TCP_MAX) {
            memcpy(ctx->self.addr_tcp, addr, len);
            ctx->self.addr_tcp_len = (uint32_t)len;
        } else {
            what = "the address size";
            st = UCS_ERR_BUFFER_TOO_SMALL;
        }
        ucp_worker_release_address(ctx->worker_tcp, addr);
    }
    if (st != UCS_OK) {
        if (hc_topo_wants_tcp(ctx->env))
            HC_WARN(HC_SUB_TRANSPORT, "simulated cluster: no TCP-only UCX worker (%s: %s); "
                    "traffic between declared nodes of one machine keeps the default "
                    "transports", what, ucs_status_string(st));
        else
            HC_INFO(HC_SUB_TRANSPORT, "no TCP-only UCX worker (%s: %s)", what,
                    ucs_status_string(st));
        if (ctx->worker_tcp)
            ucp_worker_destroy(ctx->worker_tcp);
        if (ctx->ucp_tcp)
            ucp_cleanup(ctx->ucp_tcp);
        ctx->worker_tcp = NULL;
        ctx->ucp_tcp = NULL;
        return;
    }
    HC_INFO(HC_SUB_TRANSPORT, "TCP-only UCX worker ready (address %zu bytes) for traffic "
            "between hosts (or declared nodes) that share this machine", len);
}

int hc_ucx_init(hc_context_t *ctx)
{
    ucp_config_t *config = NULL;
    ucs_status_t st;
    /* Peer error handling without shared memory would fall back to TCP. */
    setenv("UCX_MM_ERROR_HANDLING", "y", 0);
    /* Over shared memory only keepalive notices a dead peer: 20 s by
     * default, about 1 s with this; no cost measured on small-message
     * latency (docs/ELASTIC.md). The user's setting wins. */
    setenv("UCX_KEEPALIVE_INTERVAL", "1s", 0);
    st = ucp_config_read(NULL, NULL, &config);
    if (st != UCS_OK) {
        HC_ERROR(HC_SUB_TRANSPORT, "ucp_config_read failed: %s", ucs_status_string(st));
        return HCCL_E_NETWORK;
    }
    ucp_params_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_REQUEST_SIZE |
                   UCP_PARAM_FIELD_REQUEST_INIT | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    p.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    p.request_size = sizeof(req_slot_t);
    p.request_init = slot_init;
    p.mt_workers_shared = 0;
    st = ucp_init(&p, config, &ctx->ucp);
    ucp_config_release(config);
    if (st != UCS_OK) {
        HC_ERROR(HC_SUB_TRANSPORT, "ucp_init failed: %s", ucs_status_string(st));
        return HCCL_E_NETWORK;
    }
    ucp_worker_params_t wp;
    memset(&wp, 0, sizeof(wp));
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    st = ucp_worker_create(ctx->ucp, &wp, &ctx->worker);
    if (st != UCS_OK) {
        HC_ERROR(HC_SUB_TRANSPORT, "ucp_worker_create failed: %s", ucs_status_string(st));
        ucp_cleanup(ctx->ucp);
        return HCCL_E_NETWORK;
    }
    st = set_notice_handler(ctx, ctx->worker);
    if (st != UCS_OK) {
        HC_ERROR(HC_SUB_TRANSPORT, "ucp_worker_set_am_recv_handler failed: %s",
                 ucs_status_string(st));
        ucp_worker_destroy(ctx->worker);
        ucp_cleanup(ctx->ucp);
        return HCCL_E_NETWORK;
    }
    ucp_address_t *addr;
    size_t len;
    st = ucp_worker_get_address(ctx->worker, &addr, &len);
    if (st != UCS_OK) {
        HC_ERROR(HC_SUB_TRANSPORT, "ucp_worker_get_address failed: %s", ucs_status_string(st));
        ucp_worker_destroy(ctx->worker);
        ucp_cleanup(ctx->ucp);
        return HCCL_E_NETWORK;
    }
    if (len > HC_ADDR_MAX) {
        HC_ERROR(HC_SUB_TRANSPORT,
                 "UCX worker address is %zu bytes, more than the %d hcomm exchanges; "
                 "restrict UCX_TLS or UCX_NET_DEVICES", len, HC_ADDR_MAX);
        ucp_worker_release_address(ctx->worker, addr);
        ucp_worker_destroy(ctx->worker);
        ucp_cleanup(ctx->ucp);
        return HCCL_E_NOT_SUPPORT;
    }
    memcpy(ctx->self.addr, addr, len);
    ctx->self.addr_len = (uint32_t)len;
    ucp_worker_release_address(ctx->worker, addr);
    HC_INFO(HC_SUB_TRANSPORT, "UCX worker ready, address %zu bytes", len);
    tcp_worker_init(ctx);
    /* the fds a waiter sleeps on (src/exec/wait.h); -1: it yields instead */
    ctx->wfd = ctx->wfd_tcp = -1;
    if (ucp_worker_get_efd(ctx->worker, &ctx->wfd) != UCS_OK)
        ctx->wfd = -1;
    if (ctx->worker_tcp && ucp_worker_get_efd(ctx->worker_tcp, &ctx->wfd_tcp) != UCS_OK)
        ctx->wfd_tcp = -1;
    if (ctx->wfd < 0 || (ctx->worker_tcp && ctx->wfd_tcp < 0)) {
        HC_WARN(HC_SUB_TRANSPORT, "ucp_worker_get_efd failed: waits yield instead of sleeping");
        ctx->wfd = -1;
    }
    return HCCL_SUCCESS;
}

void hc_ucx_fini(hc_context_t *ctx)
{
    if (ctx->worker_tcp)
        ucp_worker_destroy(ctx->worker_tcp);
    if (ctx->ucp_tcp)
        ucp_cleanup(ctx->ucp_tcp);
    ctx->worker_tcp = NULL;
    ctx->ucp_tcp = NULL;
    if (ctx->worker)
        ucp_worker_destroy(ctx->worker);
    if (ctx->ucp)
        ucp_cleanup(ctx->ucp);
    ctx->worker = NULL;
    ctx->ucp = NULL;
}

typedef struct {
    hc_context_t *ctx;
    uint32_t peer;
} ep_err_arg_t;

static void ep_error_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    hc_context_t *ctx = arg;
    if (ctx->closing) /* peers leave at the end too; ctx->peers is being freed */
        return;
    for (uint32_t i = 0; i < ctx->npeers; i++) {
        hc_peer_t *p = ctx->peers[i];
        if (p->ep == ep) {
            if (p->departed) { /* its goodbye came first (hc_ucx_say_bye) */
                HC_INFO(HC_SUB_TRANSPORT, "connection to process %s:%d closed after it left: "
                        "%s", p->card.host, p->card.pid, ucs_status_string(status));
            } else if (!p->failed) { /* failed, unless its goodbye follows (hc_peer_failed) */
                HC_INFO(HC_SUB_TRANSPORT, "connection to process %s:%d closed: %s", p->card.host,
                        p->card.pid, ucs_status_string(status));
                p->lost_at = hc_now_s();
                p->lost_why = ucs_status_string(status);
            }
            p->failed = hc_ucx_status_to_hccl(status);
            return;
        }
    }
}

int hc_ucx_ep_create(hc_context_t *ctx, uint32_t peer, ucp_ep_h *ep)
{
    hc_peer_t *p = ctx->peers[peer];
    ucp_ep_params_t ep_p;
    memset(&ep_p, 0, sizeof(ep_p));
    ep_p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep_p.address = (const ucp_address_t *)(p->via_tcp ? p->card.addr_tcp : p->card.addr);
    ep_p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    ep_p.err_handler.cb = ep_error_cb;
    ep_p.err_handler.arg = ctx;
    ucs_status_t st = ucp_ep_create(hc_ctx_worker_of(ctx, peer), &ep_p, ep);
    if (st != UCS_OK) {
        HC_ERROR(HC_SUB_TRANSPORT, "cannot create an endpoint to %s:%d: %s", p->card.host,
                 p->card.pid, ucs_status_string(st));
        return hc_ucx_status_to_hccl(st);
    }
    HC_TRACE(HC_SUB_TRANSPORT, "endpoint to %s:%d created%s", p->card.host, p->card.pid,
             p->via_tcp ? " on the TCP-only worker (another host or declared node of this machine)" : "");
    return HCCL_SUCCESS;
}

void hc_ucx_ep_close(hc_context_t *ctx, ucp_ep_h ep, int force)
{
    ucp_request_param_t prm;
    memset(&prm, 0, sizeof(prm));
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    prm.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    ucs_status_ptr_t r = ucp_ep_close_nbx(ep, &prm);
    if (UCS_PTR_IS_PTR(r)) {
        /* A graceful close waits for the peer; bound it (the peer may be
         * gone or may already have destroyed its worker). */
        for (int i = 0; i < 100000 && ucp_request_check_status(r) == UCS_INPROGRESS; i++)
            hc_ctx_poll(ctx);
        if (ucp_request_check_status(r) == UCS_INPROGRESS) {
            ucp_worker_h w = ctx->worker;
            for (uint32_t i = 0; i < ctx->npeers; i++)
                if (ctx->peers[i]->ep == ep)
                    w = hc_ctx_worker_of(ctx, i);
            ucp_request_cancel(w, r);
        }
        ucp_request_free(r);
    }
}

/* ---- the data path -------------------------------------------------- */

/* A transfer's result. A receive must get exactly the bytes it expects:
 * a shorter or a longer message means the ranks disagree on the
 * operation's count or type (HCCL_E_PARA; a longer one was not written
 * past the buffer: UCX truncates it). */
static int xfer_status(ucs_status_t status, const req_slot_t *slot, const hc_xfer_t *x)
{
    if (slot->recv && (status == UCS_ERR_MESSAGE_TRUNCATED ||
                       (status == UCS_OK && slot->got != x->len))) {
        HC_ERROR(HC_SUB_TRANSPORT, "receive from rank %u: %s bytes arrived where %llu were "
                 "expected: the ranks disagree on the count or the type (HCCL_E_PARA)",
                 x->peer, status == UCS_OK ? "fewer" : "more", (unsigned long long)x->len);
        return HCCL_E_PARA;
    }
    return hc_ucx_status_to_hccl(status);
}

static void xfer_done(void *request, ucs_status_t status, hc_context_t *ctx)
{
    req_slot_t *slot = request;
    if (!slot->attached) { /* inside the posting call: finish_post ends it */
        slot->early = 1;
        slot->status = status;
        return;
    }
    hc_xfer_t *x = slot->x;
    if (x) {
        x->req = NULL;
        x->status = xfer_status(status, slot, x);
    } else {
        ctx->n_detached--; /* an abandoned request finally completed */
    }
    if (slot->from && status == UCS_OK)
        slot->from->heard = 1;
    if (slot->done)
        *slot->done = 1;
    slot->done = NULL;
    slot->from = NULL;
    slot->x = NULL;
    slot->attached = 0;
    slot->recv = 0;
    ucp_request_free(request);
}

static void send_cb(void *request, ucs_status_t status, void *user_data)
{
    xfer_done(request, status, user_data);
}

static void recv_cb(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info,
                    void *user_data)
{
    req_slot_t *slot = request;
    slot->recv = 1;
    slot->got = status == UCS_OK && info ? info->length : 0;
    xfer_done(request, status, user_data);
}

static int finish_post(ucs_status_ptr_t r, hc_xfer_t *x, hc_peer_t *from)
{
    if (r == NULL) {
        if (from)
            from->heard = 1;
        x->req = NULL;
        x->status = HCCL_SUCCESS;
        return HCCL_SUCCESS;
    }
    if (UCS_PTR_IS_ERR(r)) {
        x->req = NULL;
        x->status = hc_ucx_status_to_hccl(UCS_PTR_STATUS(r));
        return HCCL_SUCCESS; /* the executor sees the failed status */
    }
    req_slot_t *slot = r;
    if (slot->early) { /* completed, callback included, before it returned */
        x->req = NULL;
        x->status = xfer_status(slot->status, slot, x);
        if (from && slot->status == UCS_OK)
            from->heard = 1;
        slot->early = 0;
        slot->recv = 0;
        ucp_request_free(r);
        return HCCL_SUCCESS;
    }
    slot->x = x;
    slot->from = from;
    slot->attached = 1;
    x->req = r;
    return HCCL_SUCCESS;
}

static int ucx_isend(void *tctx, uint32_t peer, const void *buf, size_t len, uint64_t tag,
                     hc_xfer_t *x)
{
    const hc_eps_t *c = tctx;
    int rc;
    ucp_ep_h ep = hc_ctx_ep(c->ctx, c->peer[peer], &rc);
    if (ep == NULL)
        return rc;
    ucp_request_param_t prm;
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_DATATYPE |
                       UCP_OP_ATTR_FIELD_USER_DATA;
    prm.cb.send = send_cb;
    prm.user_data = c->ctx;
    prm.datatype = ucp_dt_make_contig(1);
    return finish_post(ucp_tag_send_nbx(ep, buf, len, tag, &prm), x, NULL);
}

static int ucx_irecv(void *tctx, uint32_t peer, void *buf, size_t len, uint64_t tag,
                     hc_xfer_t *x)
{
    const hc_eps_t *c = tctx;
    hc_peer_t *p = c->ctx->peers[c->peer[peer]];
    if (hc_peer_failed(p) && !p->departed) /* a departed peer's data may be here */
        return p->failed;
    x->len = len;
    ucp_request_param_t prm;
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_DATATYPE |
                       UCP_OP_ATTR_FIELD_USER_DATA;
    prm.cb.recv = recv_cb;
    prm.user_data = c->ctx;
    prm.datatype = ucp_dt_make_contig(1);
    return finish_post(ucp_tag_recv_nbx(hc_ctx_worker_of(c->ctx, c->peer[peer]), buf, len, tag,
                                        (ucp_tag_t)-1, &prm),
                       x, p);
}

/* A receive that ucp_request_cancel could not remove (its message already
 * matched: a rendezvous under way) still writes into the caller's buffer.
 * Wait for it, bounded; then close the sender's connection by force, which
 * ends the request (ctx->lock held). */
#define HC_CANCEL_DRAIN_S 2.0
static void drain_recv(hc_context_t *ctx, uint32_t peer, req_slot_t *slot, int *done)
{
    hc_peer_t *p = ctx->peers[peer];
    const double t0 = hc_now_s();
    while (!*done && hc_now_s() - t0 < HC_CANCEL_DRAIN_S)
        hc_ctx_poll(ctx);
    if (*done)
        return;
    HC_ERROR(HC_SUB_TRANSPORT, "a receive from process %s:%d abandoned at an error was still "
             "arriving after %g s: closing the connection so that it cannot write into the "
             "buffer", p->card.host, p->card.pid, HC_CANCEL_DRAIN_S);
    ucp_ep_h ep = p->ep;
    if (ep != NULL || hc_ucx_ep_create(ctx, peer, &ep) == HCCL_SUCCESS)
        hc_ucx_ep_close(ctx, ep, 1);
    p->ep = NULL;
    if (p->failed == 0)
        p->failed = HCCL_E_TIMEOUT;
    for (int i = 0; i < 1000 && !*done; i++)
        hc_ctx_poll(ctx);
    if (!*done) {
        slot->done = NULL;
        HC_ERROR(HC_SUB_TRANSPORT, "the receive from process %s:%d is still not ended",
                 p->card.host, p->card.pid);
    }
}

static void ucx_cancel(void *tctx, hc_xfer_t *x)
{
    const hc_eps_t *c = tctx;
    void *r = x->req;
    if (r) {
        req_slot_t *slot = r;
        slot->x = NULL; /* detach: the callback frees the request later */
        x->req = NULL;
        c->ctx->n_detached++;
        /* A receive not matched yet ends here; one matched is waited for.
         * A send completes when the peer reads it or fails when its
         * endpoint is closed. */
        int done = 0, recv = slot->from != NULL;
        if (recv)
            slot->done = &done;
        ucp_request_cancel(hc_ctx_worker_of(c->ctx, c->peer[x->peer]), r);
        if (recv)
            drain_recv(c->ctx, c->peer[x->peer], slot, &done);
    }
    if (x->status == HCCL_E_AGAIN)
        x->status = HCCL_E_TIMEOUT;
}

static int ucx_progress(void *tctx)
{
    const hc_eps_t *c = tctx;
    return (int)hc_ctx_poll(c->ctx);
}

/* ---- diagnostics at a deadline ---------------------------------------- */

static const char *worker_name(const hc_context_t *ctx, ucp_worker_h w)
{
    return w == ctx->worker_tcp ? "TCP-only" : "default";
}

/* What `w` holds unmatched with the tag `tag` (under `mask`): "none" or
 * "tag T, L bytes". */
static void probe_str(ucp_worker_h w, ucp_tag_t tag, ucp_tag_t mask, char *buf, size_t len)
{
    ucp_tag_recv_info_t info;
    if (w == NULL) {
        snprintf(buf, len, "no worker");
        return;
    }
    ucp_tag_message_h m = ucp_tag_probe_nb(w, tag, mask, 0, &info);
    if (m == NULL)
        snprintf(buf, len, "none");
    else
        snprintf(buf, len, "tag %#llx, %zu B", (unsigned long long)info.sender_tag, info.length);
}

void hc_ucx_explain(const hc_eps_t *eps, int send, uint32_t peer, uint64_t tag,
                    uint64_t peer_mask, const char *what)
{
    hc_context_t *ctx = eps->ctx;
    const uint32_t ai = eps->peer[peer];
    const hc_peer_t *p = ctx->peers[ai];
    ucp_worker_h w = hc_ctx_worker_of(ctx, ai);
    ucp_worker_h other = w == ctx->worker ? ctx->worker_tcp : ctx->worker;
    if (send) {
        HC_ERROR(HC_SUB_TRANSPORT, "%s (%s:%d, tag %#llx) not completed, sent on the %s worker",
                 what, p->card.host, p->card.pid, (unsigned long long)tag, worker_name(ctx, w));
        if (p->ep)
            ucp_ep_print_info(p->ep, stderr); /* its lanes: which transports */
        return;
    }
    char same[64], same_any[64], oth[64], oth_any[64];
    probe_str(w, tag, (ucp_tag_t)-1, same, sizeof(same));
    probe_str(w, tag, peer_mask, same_any, sizeof(same_any));
    probe_str(other, tag, (ucp_tag_t)-1, oth, sizeof(oth));
    probe_str(other, tag, peer_mask, oth_any, sizeof(oth_any));
    HC_ERROR(HC_SUB_TRANSPORT, "%s (%s:%d, tag %#llx) posted on the %s worker (endpoint %s); "
             "unmatched there: this tag %s, from that rank on this comm %s; on the %s worker: "
             "this tag %s, from that rank on this comm %s", what, p->card.host, p->card.pid,
             (unsigned long long)tag, worker_name(ctx, w), p->ep ? "made" : "not made", same,
             same_any, other ? worker_name(ctx, other) : "other", oth, oth_any);
}

const hc_transport_ops_t hc_ucx_tp = {
    .name = "ucx",
    .isend = ucx_isend,
    .irecv = ucx_irecv,
    .cancel = ucx_cancel,
    .progress = ucx_progress,
};
