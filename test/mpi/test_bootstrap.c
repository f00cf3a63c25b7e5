/*
 * test/mpi/test_bootstrap.c - the TCP bootstrap against strangers and bad
 * input (no MPI call; the wire format comes from src/api/rendezvous.h).
 *
 * test_bootstrap strangers N
 *     forks N-1 children (ranks 1..N-1) before any hcomm call; the parent
 *     (rank 0) calls HcclGetRootInfo, then connects to the root's port as
 *     strangers: 300 idle connections, 5 bytes, hellos with bad magic, a
 *     foreign id, pad != 0, nRanks UINT32_MAX, nRanks 1000000, rank ==
 *     nRanks, a hello for rank 0 with no card, a card of another rank; all
 *     stay open. Then every rank calls HcclCommInitRootInfo (run with a
 *     short HCCL_CONNECT_TIMEOUT: a root stalled by a stranger cannot meet
 *     it) and checks an AllReduce. Afterwards the root must have closed
 *     every stranger, and the root process's stdin (fd 0) must be the file
 *     it was before.
 * test_bootstrap hostname-table
 *     HcclCommInitClusterInfo with a rank table whose rank-0 server is a
 *     host name (no IP) must fail with HCCL_E_PARA (the error path that
 *     read freed memory: run it under valgrind to see that it does not).
 *
 * Every process arms alarm() so that a hang ends as a failure. Exit status
 * 0 only if every process passed.
 */
#include <hccl/hccl.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/api/rendezvous.h"

#define MAXN 16
#define IDLE 300
#define WATCHDOG_S 300

static int g_rank = -1, g_fails;

#define CHECK(cond, ...) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "[test_bootstrap rank %d] FAIL %s:%d: ", g_rank, __FILE__, \
                    __LINE__); \
            fprintf(stderr, __VA_ARGS__); \
            fputc('\n', stderr); \
            g_fails++; \
        } \
    } while (0)

static int xfer(int fd, void *p, size_t n, int writing)
{
    char *c = p;
    while (n) {
        ssize_t k = writing ? write(fd, c, n) : read(fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* ---------------------------------------------------------- a rank */

static void run_rank(uint32_t n, const HcclRootInfo *info)
{
    HcclComm comm = NULL;
    HcclResult r = HcclCommInitRootInfo(n, info, (uint32_t)g_rank, &comm);
    CHECK(r == HCCL_SUCCESS, "HcclCommInitRootInfo returned %d (%s)", (int)r,
          HcclGetErrorString(r));
    if (r != HCCL_SUCCESS)
        return;
    enum { C = 4099 };
    int32_t a[C], b[C];
    for (int i = 0; i < C; i++)
        a[i] = g_rank * 1000 + i;
    r = HcclAllReduce(a, b, C, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, NULL);
    CHECK(r == HCCL_SUCCESS, "HcclAllReduce returned %d", (int)r);
    for (int i = 0; r == HCCL_SUCCESS && i < C; i++)
        if (b[i] != (int32_t)(1000 * n * (n - 1) / 2 + n * (uint32_t)i)) {
            CHECK(0, "AllReduce [%d] = %d", i, b[i]);
            break;
        }
    CHECK(HcclCommDestroy(comm) == HCCL_SUCCESS, "HcclCommDestroy");
}

/* ------------------------------------------------------ the strangers */

static int g_nstrangers;
static int g_stranger[IDLE + 32];

static int dial(const hc_rootinfo_t *ri)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    memset(&ss, 0, sizeof(ss));
    if (ri->family == AF_INET) {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)ri->port);
        inet_pton(AF_INET, ri->ip, &s4->sin_addr);
        sl = sizeof(*s4);
    } else {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)ri->port);
        inet_pton(AF_INET6, ri->ip, &s6->sin6_addr);
        sl = sizeof(*s6);
    }
    int fd = socket((int)ri->family, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&ss, sl) != 0) {
        CHECK(0, "connecting to the root at %s port %u: %s", ri->ip, ri->port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    g_stranger[g_nstrangers++] = fd;
    return fd;
}

/* A stranger that sends len bytes of msg and then stays silent. */
static void stranger(const hc_rootinfo_t *ri, const void *msg, size_t len)
{
    int fd = dial(ri);
    if (fd >= 0 && len > 0)
        CHECK(xfer(fd, (void *)msg, len, 1) == 0, "stranger: send: %s", strerror(errno));
}

static void hello_stranger(const hc_rootinfo_t *ri, uint32_t magic, uint32_t nranks,
                           uint32_t rank, uint32_t pad, uint64_t uid, int card_rank)
{
    static unsigned char msg[HC_RDV_MSG_BYTES];
    memset(msg, 0xa5, sizeof(msg));
    hc_hello_t h = {magic, nranks, rank, pad, uid};
    memcpy(msg, &h, sizeof(h));
    size_t len = sizeof(h);
    if (card_rank >= 0) { /* a card of card_rank follows */
        hc_card_t *c = (hc_card_t *)(msg + sizeof(h));
        c->magic = HC_CARD_MAGIC;
        c->rank = (uint32_t)card_rank;
        len = sizeof(msg);
    }
    stranger(ri, msg, len);
}

static void send_strangers(const hc_rootinfo_t *ri, uint32_t n)
{
    for (int i = 0; i < IDLE / 2; i++)
        stranger(ri, NULL, 0);
    stranger(ri, "hello", 5);
    hello_stranger(ri, 0x12345678u, n, 1, 0, ri->uid, -1);         /* bad magic */
    hello_stranger(ri, HC_HELLO_MAGIC, n, 1, 0, ri->uid ^ 1, -1);  /* foreign id */
    hello_stranger(ri, HC_HELLO_MAGIC, n, 1, 7, ri->uid, -1);      /* pad */
    hello_stranger(ri, HC_HELLO_MAGIC, UINT32_MAX, 0, 0, ri->uid, 0);
    hello_stranger(ri, HC_HELLO_MAGIC, 1000000, 5, 0, ri->uid, 5);
    hello_stranger(ri, HC_HELLO_MAGIC, n, n, 0, ri->uid, (int)n);  /* rank == nRanks */
    hello_stranger(ri, HC_HELLO_MAGIC, n, 0, 0, ri->uid, -1);      /* rank 0, no card */
    hello_stranger(ri, HC_HELLO_MAGIC, n, 0, 0, ri->uid, 1);       /* another's card */
    for (int i = 0; i < IDLE / 2; i++)
        stranger(ri, NULL, 0);
}

/* The root must have closed every stranger: each reads end of file (or a
 * reset), after at most a refusal (an hc_reply_t with an error), rather
 * than blocking; the watchdog ends a wait that never does. */
static void check_strangers_closed(void)
{
    int bad = 0;
    for (int i = 0; i < g_nstrangers; i++) {
        unsigned char buf[64];
        size_t got = 0;
        for (;;) {
            struct pollfd pf = {g_stranger[i], POLLIN, 0};
            if (poll(&pf, 1, -1) < 0 && errno == EINTR)
                continue;
            ssize_t k = recv(g_stranger[i], buf + got, sizeof(buf) - got, 0);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0 || (got += (size_t)k) == sizeof(buf))
                break;
        }
        hc_reply_t rep;
        memcpy(&rep, buf, sizeof(rep));
        if (got != 0 && (got != sizeof(rep) || rep.status == HCCL_SUCCESS))
            bad++;
        close(g_stranger[i]);
    }
    CHECK(bad == 0, "%d of %d strangers were answered other than by a refusal and a close",
          bad, g_nstrangers);
}

static int mode_strangers(uint32_t n)
{
    /* fd 0 must stay the file it is: make sure it is one */
    struct stat in0, in1;
    if (fstat(0, &in0) != 0) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd != 0 || fstat(0, &in0) != 0) {
            fprintf(stderr, "test_bootstrap: cannot put /dev/null on fd 0\n");
            return 1;
        }
    }
    int wfd[MAXN] = {0};
    pid_t pid[MAXN];
    for (uint32_t i = 1; i < n; i++) {
        int p[2];
        if (pipe(p) != 0)
            return 1;
        fflush(NULL);
        pid[i] = fork();
        if (pid[i] < 0)
            return 1;
        if (pid[i] == 0) {
            close(p[1]);
            for (uint32_t j = 1; j < i; j++)
                close(wfd[j]);
            g_rank = (int)i;
            alarm(WATCHDOG_S);
            HcclRootInfo info;
            if (xfer(p[0], &info, sizeof(info), 0) != 0)
                exit(3);
            run_rank(n, &info);
            exit(g_fails ? 1 : 0);
        }
        close(p[0]);
        wfd[i] = p[1];
    }
    g_rank = 0;
    alarm(WATCHDOG_S);
    HcclRootInfo info;
    HcclResult r = HcclGetRootInfo(&info);
    CHECK(r == HCCL_SUCCESS, "HcclGetRootInfo returned %d", (int)r);
    hc_rootinfo_t ri;
    memcpy(&ri, info.internal, sizeof(ri));
    if (r == HCCL_SUCCESS)
        send_strangers(&ri, n);
    printf("test_bootstrap: %d strangers connected to %s port %u\n", g_nstrangers, ri.ip,
           ri.port);
    for (uint32_t i = 1; i < n; i++) {
        CHECK(xfer(wfd[i], &info, sizeof(info), 1) == 0, "root info to rank %u", i);
        close(wfd[i]);
    }
    if (r == HCCL_SUCCESS)
        run_rank(n, &info);
    check_strangers_closed();
    for (uint32_t i = 1; i < n; i++) {
        int st = 0;
        CHECK(waitpid(pid[i], &st, 0) == pid[i] && WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "rank %u: status 0x%x%s", i, st,
              WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM ? " (watchdog: hang)" : "");
    }
    CHECK(fstat(0, &in1) == 0 && in1.st_dev == in0.st_dev && in1.st_ino == in0.st_ino,
          "the root process's fd 0 was closed or replaced");
    printf("test_bootstrap strangers %u: %s\n", n, g_fails ? "FAILED" : "ok");
    return g_fails ? 1 : 0;
}

/* ------------------------------------------------- the rank table */

static int mode_hostname_table(void)
{
    char path[] = "/tmp/hcomm-bootstrap-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    const char *json =
        "{\"version\": \"1.0\", \"status\": \"completed\", \"server_count\": \"1\",\n"
        " \"server_list\": [{\"server_id\": \"node-a\", \"device\": [\n"
        "   {\"device_id\": \"0\", \"device_ip\": \"192.168.0.1\", \"rank_id\": \"0\"},\n"
        "   {\"device_id\": \"1\", \"device_ip\": \"192.168.0.2\", \"rank_id\": \"1\"}]}]}\n";
    CHECK(xfer(fd, (void *)json, strlen(json), 1) == 0, "writing %s", path);
    close(fd);
    g_rank = 0;
    HcclComm comm = NULL;
    HcclResult r = HcclCommInitClusterInfo(path, 0, &comm);
    CHECK(r == HCCL_E_PARA, "HcclCommInitClusterInfo(rank 0 on a host name) returned %d (%s)",
          (int)r, HcclGetErrorString(r));
    unlink(path);
    printf("test_bootstrap hostname-table: %s\n", g_fails ? "FAILED" : "ok");
    return g_fails ? 1 : 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && !strcmp(argv[1], "strangers") && atoi(argv[2]) >= 1 &&
        atoi(argv[2]) <= MAXN)
        return mode_strangers((uint32_t)atoi(argv[2]));
    if (argc == 2 && !strcmp(argv[1], "hostname-table"))
        return mode_hostname_table();
    fprintf(stderr, "usage: test_bootstrap strangers N (1..%d) | hostname-table\n", MAXN);
    return 2;
}
