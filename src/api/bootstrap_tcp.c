/*
 * src/api/bootstrap_tcp.c - root-info bootstrap without MPI (HCCL's
 * HcclGetRootInfo / HcclCommInitRootInfo).
 *
 * HcclGetRootInfo opens a listening TCP socket on the address chosen by
 * HCCL_IF_IP / HCCL_SOCKET_IFNAME (else the first non-loopback IPv4
 * interface, else loopback) and the port HCCL_IF_BASE_PORT (or any), and
 * starts a short-lived thread that serves exactly one rendezvous: every
 * rank (the root's own process included) connects, sends its card, and
 * receives the cards of all ranks. Every wait is bounded by
 * HCCL_CONNECT_TIMEOUT. The server and the join (hc_tcp_serve_start,
 * hc_tcp_rendezvous in bootstrap.h) also serve HcclCommInitClusterInfo
 * (src/api/bootstrap_cluster.c), whose root address comes from a rank table.
 */
#define _GNU_SOURCE /* accept4 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <hccl/hccl.h>

#include "bootstrap.h"
#include "src/base/log.h"
#include "rendezvous.h"
#include "src/base/util.h"

typedef char rootinfo_fits[sizeof(hc_rootinfo_t) <= HCCL_ROOT_INFO_BYTES ? 1 : -1];

/* A poll timeout for `left` seconds (at most a day at a time). */
static int poll_ms(double left)
{
    return left > 86400 ? 86400000 : (int)(left * 1000) + 1;
}

/* Read or write exactly len bytes before the deadline. */
static int xfer_all(int fd, void *buf, size_t len, double deadline, int writing)
{
    char *p = buf;
    while (len > 0) {
        double left = deadline - hc_now_s();
        if (left <= 0)
            return HCCL_E_TIMEOUT;
        struct pollfd pf = {fd, writing ? POLLOUT : POLLIN, 0};
        int r = poll(&pf, 1, poll_ms(left));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        ssize_t n = writing ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return HCCL_E_TCP_TRANSFER;
        p += n;
        len -= (size_t)n;
    }
    return HCCL_SUCCESS;
}

static int choose_addr(const hc_config_t *cfg, char *ip, size_t iplen, int *family)
{
    if (cfg->if_ip[0]) {
        struct in6_addr a6;
        struct in_addr a4;
        if (inet_pton(AF_INET, cfg->if_ip, &a4) == 1)
            *family = AF_INET;
        else if (inet_pton(AF_INET6, cfg->if_ip, &a6) == 1)
            *family = AF_INET6;
        else {
            HC_ERROR(HC_SUB_INIT, "HCCL_IF_IP='%s' is not an IPv4 or IPv6 address", cfg->if_ip);
            return HCCL_E_PARA;
        }
        snprintf(ip, iplen, "%s", cfg->if_ip);
        return HCCL_SUCCESS;
    }
    struct ifaddrs *ifs, *i;
    if (getifaddrs(&ifs) != 0) {
        HC_ERROR(HC_SUB_INIT, "getifaddrs failed: %m");
        return HCCL_E_SYSCALL;
    }
    int found = 0;
    /* two passes: IPv4 first, then IPv6; loopback only as a last resort */
    for (int pass = 0; pass < 3 && !found; pass++) {
        for (i = ifs; i && !found; i = i->ifa_next) {
            if (!i->ifa_addr || !(i->ifa_flags & IFF_UP))
                continue;
            int fam = i->ifa_addr->sa_family;
            if (fam != AF_INET && fam != AF_INET6)
                continue;
            if (pass < 2 && fam != (pass == 0 ? AF_INET : AF_INET6))
                continue;
            int loop = (i->ifa_flags & IFF_LOOPBACK) != 0;
            if (cfg->socket_ifname[0]) {
                if (!hc_env_ifname_matches(cfg->socket_ifname, i->ifa_name))
                    continue;
            } else if (loop != (pass == 2)) {
                continue;
            }
            if (fam == AF_INET6 &&
                IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr))
                continue;
            const void *src = fam == AF_INET
                                  ? (const void *)&((struct sockaddr_in *)i->ifa_addr)->sin_addr
                                  : (const void *)&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
            inet_ntop(fam, src, ip, (socklen_t)iplen);
            *family = fam;
            found = 1;
            HC_INFO(HC_SUB_INIT, "root info: using interface %s address %s", i->ifa_name, ip);
        }
    }
    freeifaddrs(ifs);
    if (!found) {
        if (cfg->socket_ifname[0])
            HC_ERROR(HC_SUB_INIT, "HCCL_SOCKET_IFNAME='%s' matches no interface that is up",
                     cfg->socket_ifname);
        else
            HC_ERROR(HC_SUB_INIT, "no network interface is up");
        return cfg->socket_ifname[0] ? HCCL_E_PARA : HCCL_E_NETWORK;
    }
    return HCCL_SUCCESS;
}

static socklen_t make_sockaddr(int family, const char *ip, uint32_t port,
                               struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    if (family == AF_INET) {
        struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        inet_pton(AF_INET, ip, &s4->sin_addr);
        return sizeof(*s4);
    }
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons((uint16_t)port);
    inet_pton(AF_INET6, ip, &s6->sin6_addr);
    return sizeof(*s6);
}

/* ---- the root's server thread ----------------------------------------
 *
 * One thread polls the listening socket and every connection that has not
 * yet sent a whole message, so no connection waits for another: a rank's
 * message is judged (src/api/rendezvous.c) as soon as its bytes are in and the
 * rank count is known, and a stranger (silence, a few bytes, a malformed
 * or foreign hello) is dropped with a log line without delaying anybody.
 * The rank count comes from the rank table, or from the HcclCommInitRootInfo
 * call in this process (hc_tcp_serve_expect). All of it ends at the
 * deadline, HCCL_CONNECT_TIMEOUT after the server started. */

/* Connections at once that have not sent a whole message yet; beyond this
 * the one that has been quiet the longest is dropped. */
#define PENDING_MAX 1024
/* Dropped connections logged one by one; later ones are only counted. */
#define DROP_LOG_MAX 16

typedef struct server {
    int lfd;
    uint64_t uid;
    uint32_t nranks; /* expected (atomic: hc_tcp_serve_expect sets it); 0 not yet */
    double timeout;
    struct server *next;
} server_t;

/* The servers running in this process. */
static pthread_mutex_t g_servers_lock = PTHREAD_MUTEX_INITIALIZER;
static server_t *g_servers;

static void servers_link(server_t *sv, int add)
{
    pthread_mutex_lock(&g_servers_lock);
    server_t **pp = &g_servers;
    while (*pp && *pp != sv)
        pp = &(*pp)->next;
    if (add && *pp == NULL) {
        sv->next = g_servers;
        g_servers = sv;
    } else if (!add && *pp) {
        *pp = sv->next;
    }
    pthread_mutex_unlock(&g_servers_lock);
}

void hc_tcp_serve_expect(uint64_t uid, uint32_t nranks)
{
    pthread_mutex_lock(&g_servers_lock);
    for (server_t *sv = g_servers; sv; sv = sv->next)
        if (sv->uid == uid)
            __atomic_store_n(&sv->nranks, nranks, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_servers_lock);
}

typedef struct {
    int fd;
    size_t have;   /* bytes of msg received; all: waits for the rank count */
    double active; /* when bytes last arrived */
    char peer[INET6_ADDRSTRLEN + 8];
    unsigned char msg[HC_RDV_MSG_BYTES];
} conn_t;

typedef struct {
    hc_rdv_t rdv;            /* owner[i]: rank i's conn_t */
    conn_t *pend[PENDING_MAX];
    uint32_t npend;
    uint64_t dropped;
} serve_t;

static void conn_close(conn_t *c)
{
    close(c->fd);
    free(c);
}

static void drop(serve_t *st, conn_t *c, const char *why)
{
    st->dropped++;
    if (st->dropped <= DROP_LOG_MAX)
        HC_WARN(HC_SUB_INIT, "bootstrap: dropped a connection from %s: %s%s", c->peer, why,
                st->dropped == DROP_LOG_MAX ? " (further drops are only counted)" : "");
    conn_close(c);
}

/* Drop the pending connection that has been quiet the longest. */
static void drop_quietest(serve_t *st)
{
    uint32_t q = 0;
    for (uint32_t i = 1; i < st->npend; i++)
        if (st->pend[i]->active < st->pend[q]->active)
            q = i;
    conn_t *c = st->pend[q];
    st->pend[q] = st->pend[--st->npend];
    drop(st, c, "quiet the longest of too many connections at once");
}

static void serve_accept(serve_t *st, int lfd)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && errno == EINTR)
            continue;
        if (fd < 0 && (errno == EMFILE || errno == ENFILE) && st->npend > 0) {
            drop_quietest(st);
            continue;
        }
        if (fd < 0)
            return; /* EAGAIN: none left; else try at the next poll */
        if (st->npend == PENDING_MAX)
            drop_quietest(st);
        conn_t *c = malloc(sizeof(*c));
        if (c == NULL) {
            close(fd);
            st->dropped++;
            continue;
        }
        c->fd = fd;
        c->have = 0;
        c->active = hc_now_s();
        char a[INET6_ADDRSTRLEN] = "?";
        uint16_t port = 0;
        if (ss.ss_family == AF_INET) {
            inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, a, sizeof(a));
            port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, a, sizeof(a));
            port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
        }
        snprintf(c->peer, sizeof(c->peer), "%s:%u", a, port);
        st->pend[st->npend++] = c;
    }
}

/* Judge c's whole message. Returns 1 while c stays pending (HC_RDV_WAIT),
 * 0 once it is gone (accepted as a rank, refused or dropped); *status gets
 * a fatal error. */
static int serve_judge(serve_t *st, conn_t *c, int32_t *status)
{
    char why[256];
    switch (hc_rdv_offer(&st->rdv, c->msg, c->have, c, why, sizeof(why))) {
    case HC_RDV_OK:
        return 0; /* st->rdv.owner holds it */
    case HC_RDV_WAIT:
        return 1;
    case HC_RDV_CONFLICT: {
        HC_ERROR(HC_SUB_INIT, "bootstrap: refused %s: %s", c->peer, why);
        hc_reply_t r = {HCCL_E_PARA, st->rdv.nranks};
        if (send(c->fd, &r, sizeof(r), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(r))
            HC_WARN(HC_SUB_INIT, "bootstrap: could not tell %s why: %m", c->peer);
        conn_close(c);
        return 0;
    }
    case HC_RDV_NOMEM:
        HC_ERROR(HC_SUB_INIT, "bootstrap: %s", why);
        *status = HCCL_E_MEMORY;
        conn_close(c);
        return 0;
    default:
        drop(st, c, why);
        return 0;
    }
}

/* Take what c sent; then as serve_judge. */
static int serve_read(serve_t *st, conn_t *c, int32_t *status)
{
    ssize_t n = recv(c->fd, c->msg + c->have, sizeof(c->msg) - c->have, 0);
    char why[256];
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
        return 1;
    if (n <= 0) {
        if (n == 0)
            snprintf(why, sizeof(why), "closed after %zu bytes", c->have);
        else
            snprintf(why, sizeof(why), "receive failed after %zu bytes: %s", c->have,
                     strerror(errno));
        drop(st, c, why);
        return 0;
    }
    c->have += (size_t)n;
    c->active = hc_now_s();
    if (c->have < sizeof(hc_hello_t))
        return 1;
    if (c->have < sizeof(c->msg)) {
        if (hc_rdv_hello(&st->rdv, c->msg, c->have, why, sizeof(why)) == HC_RDV_OK)
            return 1;
        drop(st, c, why);
        return 0;
    }
    return serve_judge(st, c, status);
}

static void log_timeout(const serve_t *st, double timeout)
{
    const hc_rdv_t *r = &st->rdv;
    char missing[160] = "";
    size_t len = 0;
    for (uint32_t i = 0; i < r->nranks && r->owner && len < sizeof(missing) - 16; i++)
        if (r->owner[i] == NULL)
            len += (size_t)snprintf(missing + len, sizeof(missing) - len, " %u", i);
    if (len >= sizeof(missing) - 16)
        snprintf(missing + len, sizeof(missing) - len, " ...");
    if (r->nranks == 0) {
        HC_ERROR(HC_SUB_INIT, "bootstrap: the process that made the root info did not call "
                 "HcclCommInitRootInfo within HCCL_CONNECT_TIMEOUT (%.0f s), so the number "
                 "of ranks is unknown; %u connections waited, %llu were dropped", timeout,
                 st->npend, (unsigned long long)st->dropped);
        return;
    }
    HC_ERROR(HC_SUB_INIT, "bootstrap: %u of %u ranks arrived within HCCL_CONNECT_TIMEOUT "
             "(%.0f s); missing ranks:%s; %llu other connections dropped, %u incomplete",
             r->got, r->nranks, timeout, missing, (unsigned long long)st->dropped, st->npend);
}

/* The rendezvous: accept connections and read their messages until every
 * rank of the job has sent its card, or the deadline. Returns the status
 * of the job's creation (HCCL_SUCCESS: st->rdv has every card). */
static int32_t gather(server_t *sv, serve_t *st, struct pollfd *pf, int32_t status)
{
    const double deadline = hc_now_s() + sv->timeout;
    while (status == HCCL_SUCCESS && (st->rdv.nranks == 0 || st->rdv.got < st->rdv.nranks)) {
        double left = deadline - hc_now_s();
        if (left <= 0) {
            status = HCCL_E_TIMEOUT;
            log_timeout(st, sv->timeout);
            break;
        }
        uint32_t expect = __atomic_load_n(&sv->nranks, __ATOMIC_ACQUIRE);
        int judge = 0;
        if (st->rdv.nranks == 0 && expect != 0) {
            int v = hc_rdv_expect(&st->rdv, expect);
            if (v != HC_RDV_OK) {
                HC_ERROR(HC_SUB_INIT, "bootstrap: no memory for %u ranks", expect);
                status = HCCL_E_MEMORY;
                break;
            }
            judge = 1; /* the messages that waited for it */
        }
        /* a whole message waits for the rank count: not polled (fd -1) */
        pf[0] = (struct pollfd){sv->lfd, POLLIN, 0};
        for (uint32_t i = 0; i < st->npend; i++)
            pf[1 + i] = (struct pollfd){
                st->pend[i]->have == HC_RDV_MSG_BYTES ? -1 : st->pend[i]->fd, POLLIN, 0};
        /* hc_tcp_serve_expect sets the rank count just before its own rank
         * connects, and that connection ends this wait */
        if (!judge && poll(pf, 1 + st->npend, poll_ms(left)) <= 0)
            continue;
        uint32_t keep = 0, n = st->npend;
        for (uint32_t i = 0; i < n; i++) {
            conn_t *c = st->pend[i];
            int stays = 1;
            if (judge && c->have == HC_RDV_MSG_BYTES)
                stays = serve_judge(st, c, &status);
            else if (!judge && pf[1 + i].revents)
                stays = serve_read(st, c, &status);
            if (stays)
                st->pend[keep++] = c;
        }
        st->npend = keep;
        if (judge)
            continue;
        if (pf[0].revents & POLLIN)
            serve_accept(st, sv->lfd);
    }
    return status;
}

/* The verdict to every accepted rank, with all the cards on success;
 * *rep_out: the verdict. */
static void reply_all(server_t *sv, serve_t *st, int32_t status, hc_reply_t *rep_out)
{
    const hc_rdv_t *r = st ? &st->rdv : NULL;
    hc_card_t *cards = NULL;
    if (status == HCCL_SUCCESS) {
        cards = malloc((size_t)r->nranks * sizeof(hc_card_t));
        if (cards == NULL)
            status = HCCL_E_MEMORY;
        for (uint32_t i = 0; cards && i < r->nranks; i++)
            memcpy(&cards[i], ((conn_t *)r->owner[i])->msg + sizeof(hc_hello_t),
                   sizeof(hc_card_t));
    }
    hc_reply_t rep = {status, r ? r->nranks : 0};
    *rep_out = rep;
    const double wdeadline = hc_now_s() + sv->timeout;
    for (uint32_t i = 0; r && r->owner && i < r->nranks; i++) {
        conn_t *c = r->owner[i];
        if (c == NULL)
            continue;
        if (xfer_all(c->fd, &rep, sizeof(rep), wdeadline, 1) == HCCL_SUCCESS && cards)
            xfer_all(c->fd, cards, (size_t)r->nranks * sizeof(hc_card_t), wdeadline, 1);
        conn_close(c);
    }
    free(cards);
}

/* Connections still pending when the rendezvous ends: a rank that sent a
 * whole message is told the verdict rep; then the state goes. */
static void close_pending(serve_t *st, const hc_reply_t *rep)
{
    uint32_t partial = 0;
    for (uint32_t i = 0; i < st->npend; i++) {
        conn_t *c = st->pend[i];
        if (c->have == HC_RDV_MSG_BYTES) { /* a rank that waited: tell it why */
            if (send(c->fd, rep, sizeof(*rep), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                HC_WARN(HC_SUB_INIT, "bootstrap: could not tell %s: %m", c->peer);
        } else {
            partial++;
        }
        conn_close(c);
    }
    if (partial)
        HC_WARN(HC_SUB_INIT, "bootstrap: closed %u connections that had not sent a whole "
                "message when the rendezvous ended", partial);
    if (st->dropped > DROP_LOG_MAX)
        HC_WARN(HC_SUB_INIT, "bootstrap: %llu connections dropped in all",
                (unsigned long long)st->dropped);
    hc_rdv_free(&st->rdv);
}

static void *serve(void *arg)
{
    server_t *sv = arg;
    serve_t *st = calloc(1, sizeof(*st));
    struct pollfd *pf = malloc((PENDING_MAX + 1) * sizeof(*pf));
    int32_t status = st && pf ? HCCL_SUCCESS : HCCL_E_MEMORY;
    if (st)
        hc_rdv_init(&st->rdv, sv->uid);
    status = gather(sv, st, pf, status);
    close(sv->lfd);
    hc_reply_t rep;
    reply_all(sv, st, status, &rep);
    if (st)
        close_pending(st, &rep);
    free(pf);
    free(st);
    servers_link(sv, 0);
    free(sv);
    return NULL;
}

int hc_tcp_serve_start(int family, const char *ip, uint32_t base_port, uint32_t tries,
                       uint64_t uid, uint32_t nranks, double timeout, uint32_t *port)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        HC_ERROR(HC_SUB_INIT, "bootstrap: socket failed: %m");
        return HCCL_E_SYSCALL;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_storage ss;
    int bound = 0;
    for (uint32_t k = 0; k < tries && !bound; k++) {
        uint32_t p = base_port ? base_port + k : 0;
        if (p > 65535)
            break;
        socklen_t sl = make_sockaddr(family, ip, p, &ss);
        bound = bind(fd, (struct sockaddr *)&ss, sl) == 0;
    }
    if (!bound || listen(fd, 1024) != 0) {
        HC_ERROR(HC_SUB_INIT, "bootstrap: cannot listen on %s port %u%s: %m", ip, base_port,
                 tries > 1 ? " (HCCL_IF_BASE_PORT) or the ports after it" : "");
        close(fd);
        return HCCL_E_TCP_CONNECT;
    }
    socklen_t sl = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    *port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                    : ((struct sockaddr_in6 *)&ss)->sin6_port);
    server_t *sv = malloc(sizeof(*sv));
    if (sv == NULL) {
        close(fd);
        return HCCL_E_MEMORY;
    }
    sv->lfd = fd;
    sv->uid = uid;
    sv->nranks = nranks;
    sv->timeout = timeout > 0 ? timeout : 1e9;
    servers_link(sv, 1);
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&th, &at, serve, sv) != 0) {
        pthread_attr_destroy(&at);
        servers_link(sv, 0);
        close(fd);
        free(sv);
        HC_ERROR(HC_SUB_INIT, "bootstrap: cannot start the rendezvous thread");
        return HCCL_E_SYSCALL;
    }
    pthread_attr_destroy(&at);
    return HCCL_SUCCESS;
}

HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo)
{
    if (rootInfo == NULL) {
        HC_ERROR(HC_SUB_INIT, "HcclGetRootInfo: rootInfo is NULL");
        return HCCL_E_PTR;
    }
    const hc_config_t *cfg;
    int rc = hc_env_global(&cfg);
    if (rc != HCCL_SUCCESS)
        return rc;
    hc_rootinfo_t ri;
    memset(&ri, 0, sizeof(ri));
    int family;
    rc = choose_addr(cfg, ri.ip, sizeof(ri.ip), &family);
    if (rc != HCCL_SUCCESS)
        return rc;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ri.uid = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
    rc = hc_tcp_serve_start(family, ri.ip, cfg->if_base_port, cfg->if_base_port ? 64 : 1, ri.uid,
                            0, cfg->connect_timeout, &ri.port);
    if (rc != HCCL_SUCCESS)
        return rc;
    ri.magic = HC_ROOTINFO_MAGIC;
    ri.version = HCOMM_VERSION_CODE;
    ri.family = (uint32_t)family;
    memset(rootInfo, 0, sizeof(*rootInfo));
    memcpy(rootInfo->internal, &ri, sizeof(ri));
    HC_INFO(HC_SUB_INIT, "root info: rendezvous at %s port %u", ri.ip, ri.port);
    return HCCL_SUCCESS;
}

/* Connect to the root, send our card, receive everybody's. */
int hc_tcp_rendezvous(int family, const char *ip, uint32_t port, uint64_t uid, uint32_t nranks,
                      const hc_card_t *mine, hc_card_t *cards, double timeout)
{
    double deadline = hc_now_s() + timeout;
    struct sockaddr_storage ss;
    socklen_t sl = make_sockaddr(family, ip, port, &ss);
    int fd = -1;
    for (;;) {
        fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            HC_ERROR(HC_SUB_INIT, "socket failed: %m");
            return HCCL_E_SYSCALL;
        }
        if (connect(fd, (struct sockaddr *)&ss, sl) == 0)
            break;
        close(fd);
        fd = -1;
        if (hc_now_s() >= deadline) {
            HC_ERROR(HC_SUB_INIT, "cannot reach the root at %s port %u within "
                     "HCCL_CONNECT_TIMEOUT (%.0f s): %m", ip, port, timeout);
            return HCCL_E_TCP_CONNECT;
        }
        usleep(20000);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    hc_hello_t h = {HC_HELLO_MAGIC, nranks, mine->rank, 0, uid};
    hc_reply_t r = {0};
    int rc = xfer_all(fd, &h, sizeof(h), deadline, 1);
    if (rc == HCCL_SUCCESS)
        rc = xfer_all(fd, (void *)mine, sizeof(*mine), deadline, 1);
    if (rc == HCCL_SUCCESS)
        rc = xfer_all(fd, &r, sizeof(r), deadline, 0);
    if (rc == HCCL_SUCCESS && r.status == HCCL_SUCCESS && r.nranks != nranks)
        r.status = HCCL_E_PARA;
    if (rc == HCCL_SUCCESS && r.status != HCCL_SUCCESS) {
        rc = r.status;
        if (r.nranks != 0 && r.nranks != nranks)
            HC_ERROR(HC_SUB_INIT, "bootstrap: rank %u was given nRanks %u, the ranks at the "
                     "root have %u", mine->rank, nranks, r.nranks);
    }
    if (rc == HCCL_SUCCESS)
        rc = xfer_all(fd, cards, (size_t)nranks * sizeof(hc_card_t), deadline, 0);
    close(fd);
    if (rc != HCCL_SUCCESS)
        HC_ERROR(HC_SUB_INIT, "bootstrap rendezvous at %s port %u failed: %s", ip, port,
                 HcclGetErrorString(rc));
    return rc;
}

HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo *rootInfo,
                                      uint32_t rank, const HcclCommConfig *config,
                                      HcclComm *comm)
{
    if (rootInfo == NULL || comm == NULL) {
        HC_ERROR(HC_SUB_INIT, "HcclCommInitRootInfo: %s is NULL", rootInfo ? "comm" : "rootInfo");
        return HCCL_E_PTR;
    }
    if (nRanks == 0 || nRanks > HC_RDV_MAX_RANKS || rank >= nRanks) {
        HC_ERROR(HC_SUB_INIT, "HcclCommInitRootInfo: rank %u with nRanks %u: need rank < nRanks "
                 "<= %u", rank, nRanks, HC_RDV_MAX_RANKS);
        return HCCL_E_PARA;
    }
    hc_rootinfo_t ri;
    memcpy(&ri, rootInfo->internal, sizeof(ri));
    if (ri.magic != HC_ROOTINFO_MAGIC || (ri.family != AF_INET && ri.family != AF_INET6) ||
        memchr(ri.ip, '\0', sizeof(ri.ip)) == NULL || ri.port == 0 || ri.port > 65535) {
        HC_ERROR(HC_SUB_INIT, "HcclCommInitRootInfo: rootInfo was not produced by "
                 "HcclGetRootInfo (bad magic or address)");
        return HCCL_E_PARA;
    }
    if (ri.version != HCOMM_VERSION_CODE) {
        HC_ERROR(HC_SUB_INIT, "HcclCommInitRootInfo: root info from hcomm version %u, this is %u",
                 ri.version, HCOMM_VERSION_CODE);
        return HCCL_E_NOT_SUPPORT;
    }
    hc_card_t *cards = malloc((size_t)nRanks * sizeof(hc_card_t));
    hc_card_t *mine = malloc(sizeof(hc_card_t));
    if (cards == NULL || mine == NULL) {
        free(cards);
        free(mine);
        return HCCL_E_MEMORY;
    }
    hc_context_t *ctx;
    hc_config_t cfg;
    hc_bootstrap_prepare(config, rank, &ctx, &cfg, mine);
    const hc_config_t *env;
    double timeout = 120;
    if (hc_env_global(&env) == HCCL_SUCCESS && env->connect_timeout > 0)
        timeout = env->connect_timeout;
    hc_tcp_serve_expect(ri.uid, nRanks); /* if this process serves it */
    int rc = hc_tcp_rendezvous((int)ri.family, ri.ip, ri.port, ri.uid, nRanks, mine, cards,
                               timeout);
    if (rc == HCCL_SUCCESS)
        rc = hc_bootstrap_finish(ctx, &cfg, rank, nRanks, cards, config, comm);
    else if (ctx) {
        hc_env_free(&cfg);
        hc_ctx_release(ctx);
    }
    free(cards);
    free(mine);
    return rc;
}

HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
                                HcclComm *comm)
{
    return HcclCommInitRootInfoConfig(nRanks, rootInfo, rank, NULL, comm);
}
