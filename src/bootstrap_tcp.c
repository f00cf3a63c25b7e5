/*
 * src/bootstrap_tcp.c - root-info bootstrap without MPI (HCCL's
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
 * (src/bootstrap_cluster.c), whose root address comes from a rank table.
 */
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
#include "log.h"

#define RI_MAGIC 0x68637269u /* "hcri" */
#define HELLO_MAGIC 0x68636865u

typedef struct {
    uint32_t magic;
    uint32_t version;
    uint64_t uid;      /* identifies this rendezvous */
    uint32_t family;   /* AF_INET or AF_INET6 */
    uint32_t port;
    char ip[64];
} rootinfo_t;

typedef char rootinfo_fits[sizeof(rootinfo_t) <= HCCL_ROOT_INFO_BYTES ? 1 : -1];

typedef struct {
    uint32_t magic, nranks, rank, pad;
    uint64_t uid;
} hello_t;

typedef struct {
    int32_t status;
    uint32_t nranks;
} reply_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Read or write exactly len bytes before the deadline. */
static int xfer_all(int fd, void *buf, size_t len, double deadline, int writing)
{
    char *p = buf;
    while (len > 0) {
        double left = deadline - now_s();
        if (left <= 0)
            return HCCL_E_TIMEOUT;
        struct pollfd pf = {fd, writing ? POLLOUT : POLLIN, 0};
        int r = poll(&pf, 1, (int)(left * 1000) + 1);
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

/* Does interface `name` match an HCCL_SOCKET_IFNAME list ("eth,ib",
 * "^docker,lo" to exclude, "=eth0" for exact names)? */
static int ifname_matches(const char *spec, const char *name)
{
    int exclude = 0, exact = 0;
    if (*spec == '^') {
        exclude = 1;
        spec++;
    }
    if (*spec == '=') {
        exact = 1;
        spec++;
    }
    int hit = 0;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", spec);
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (exact ? strcmp(tok, name) == 0 : strncmp(tok, name, strlen(tok)) == 0)
            hit = 1;
    }
    return exclude ? !hit : hit;
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
                if (!ifname_matches(cfg->socket_ifname, i->ifa_name))
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

/* ---- the root's server thread ---------------------------------------- */

typedef struct {
    int lfd;
    uint64_t uid;
    double timeout;
} server_t;

static void *serve(void *arg)
{
    server_t *sv = arg;
    double deadline = now_s() + sv->timeout;
    uint32_t nranks = 0, got = 0;
    int *fds = NULL;
    hc_card_t *cards = NULL;
    int32_t status = HCCL_SUCCESS;
    while (status == HCCL_SUCCESS && (nranks == 0 || got < nranks)) {
        double left = deadline - now_s();
        if (left <= 0) {
            status = HCCL_E_TIMEOUT;
            HC_ERROR(HC_SUB_INIT, "root info rendezvous: %u of %u ranks arrived within "
                     "HCCL_CONNECT_TIMEOUT (%.0f s)", got, nranks, sv->timeout);
            break;
        }
        struct pollfd pf = {sv->lfd, POLLIN, 0};
        if (poll(&pf, 1, (int)(left * 1000) + 1) <= 0)
            continue;
        int fd = accept(sv->lfd, NULL, NULL);
        if (fd < 0)
            continue;
        hello_t h;
        if (xfer_all(fd, &h, sizeof(h), deadline, 0) != HCCL_SUCCESS || h.magic != HELLO_MAGIC ||
            h.uid != sv->uid) {
            close(fd); /* a stray connection: ignore it */
            continue;
        }
        if (nranks == 0) {
            nranks = h.nranks;
            fds = malloc(nranks * sizeof(int));
            cards = calloc(nranks, sizeof(hc_card_t));
            if (!fds || !cards) {
                status = HCCL_E_MEMORY;
                close(fd);
                break;
            }
            for (uint32_t i = 0; i < nranks; i++)
                fds[i] = -1;
        }
        if (h.nranks != nranks || h.rank >= nranks || fds[h.rank] >= 0) {
            HC_ERROR(HC_SUB_INIT, "root info rendezvous: rank %u says nRanks %u, expected %u "
                     "ranks with distinct ids", h.rank, h.nranks, nranks);
            status = HCCL_E_PARA;
            reply_t r = {HCCL_E_PARA, nranks};
            xfer_all(fd, &r, sizeof(r), deadline, 1);
            close(fd);
            break;
        }
        if (xfer_all(fd, &cards[h.rank], sizeof(hc_card_t), deadline, 0) != HCCL_SUCCESS) {
            close(fd);
            status = HCCL_E_TCP_TRANSFER;
            break;
        }
        fds[h.rank] = fd;
        got++;
    }
    reply_t r = {status, nranks};
    double wdeadline = now_s() + sv->timeout;
    for (uint32_t i = 0; i < nranks && fds; i++) {
        if (fds[i] < 0)
            continue;
        if (xfer_all(fds[i], &r, sizeof(r), wdeadline, 1) == HCCL_SUCCESS && status == HCCL_SUCCESS)
            xfer_all(fds[i], cards, (size_t)nranks * sizeof(hc_card_t), wdeadline, 1);
        close(fds[i]);
    }
    close(sv->lfd);
    free(fds);
    free(cards);
    free(sv);
    return NULL;
}

int hc_tcp_serve_start(int family, const char *ip, uint32_t base_port, uint32_t tries,
                       uint64_t uid, double timeout, uint32_t *port)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
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
    sv->timeout = timeout > 0 ? timeout : 1e9;
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&th, &at, serve, sv) != 0) {
        pthread_attr_destroy(&at);
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
    rootinfo_t ri;
    memset(&ri, 0, sizeof(ri));
    int family;
    rc = choose_addr(cfg, ri.ip, sizeof(ri.ip), &family);
    if (rc != HCCL_SUCCESS)
        return rc;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ri.uid = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
    rc = hc_tcp_serve_start(family, ri.ip, cfg->if_base_port, cfg->if_base_port ? 64 : 1, ri.uid,
                            cfg->connect_timeout, &ri.port);
    if (rc != HCCL_SUCCESS)
        return rc;
    ri.magic = RI_MAGIC;
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
    double deadline = now_s() + timeout;
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
        if (now_s() >= deadline) {
            HC_ERROR(HC_SUB_INIT, "cannot reach the root at %s port %u within "
                     "HCCL_CONNECT_TIMEOUT (%.0f s): %m", ip, port, timeout);
            return HCCL_E_TCP_CONNECT;
        }
        usleep(20000);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    hello_t h = {HELLO_MAGIC, nranks, mine->rank, 0, uid};
    reply_t r = {0};
    int rc = xfer_all(fd, &h, sizeof(h), deadline, 1);
    if (rc == HCCL_SUCCESS)
        rc = xfer_all(fd, (void *)mine, sizeof(*mine), deadline, 1);
    if (rc == HCCL_SUCCESS)
        rc = xfer_all(fd, &r, sizeof(r), deadline, 0);
    if (rc == HCCL_SUCCESS && r.status != HCCL_SUCCESS)
        rc = r.status;
    if (rc == HCCL_SUCCESS && r.nranks != nranks)
        rc = HCCL_E_PARA;
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
    if (nRanks == 0 || rank >= nRanks) {
        HC_ERROR(HC_SUB_INIT, "HcclCommInitRootInfo: rank %u with nRanks %u: need rank < nRanks",
                 rank, nRanks);
        return HCCL_E_PARA;
    }
    rootinfo_t ri;
    memcpy(&ri, rootInfo->internal, sizeof(ri));
    if (ri.magic != RI_MAGIC || (ri.family != AF_INET && ri.family != AF_INET6) ||
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
