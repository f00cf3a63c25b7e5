/*
 * src/base/log.c - leveled, per-subsystem logging (see log.h).
 *
 * Usable before any configuration (WARN, all subsystems, stderr) and from
 * any thread. Each line is formatted in full, then written with one write(2)
 * under a mutex, so lines from threads never interleave; the file is opened
 * O_APPEND so lines from processes sharing one file do not either.
 *
 * HCCL_DEBUG_FILE is opened lazily, on the first message. %h is the short
 * host name, %p the pid, %r the rank ("x" until hc_log_set_rank), %% a '%'.
 * When the name holds %r and the file was opened before the rank was
 * known, hc_log_set_rank closes it and the next message opens the file of
 * the real rank: early lines stay in the "x" file.
 */
#define _GNU_SOURCE
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define LOG_NAME_MAX 1024
#define LOG_LINE_MAX 4096

int hc_log_level = HC_LOG_WARN;
unsigned hc_log_subsys = HC_SUB_ALL;

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char log_name[LOG_NAME_MAX]; /* template; "" = stderr */
static int log_fd = -1;             /* -1: open on the next message */
static int log_rank = -1;
static char log_host[64];
static int log_t0_set;
static struct timespec log_t0;

static const char *const level_names[] = {"NONE", "ERROR", "WARN", "INFO", "TRACE"};

static const struct {
    const char *name;
    unsigned mask;
} subsys_names[] = {
    {"INIT", HC_SUB_INIT},       {"COLL", HC_SUB_COLL},
    {"TOPO", HC_SUB_TOPO},       {"TUNE", HC_SUB_TUNE},
    {"ELASTIC", HC_SUB_ELASTIC}, {"TRANSPORT", HC_SUB_TRANSPORT},
    {"ENV", HC_SUB_ENV},         {"STREAM", HC_SUB_STREAM},
    {"ALL", HC_SUB_ALL},
};
#define NSUBSYS (sizeof(subsys_names) / sizeof(subsys_names[0]))

/* Short host name (up to the first '.'), as NCCL prints it. */
static const char *host_locked(void)
{
    if (log_host[0] == '\0') {
        if (gethostname(log_host, sizeof(log_host) - 1) != 0)
            strcpy(log_host, "unknown");
        log_host[sizeof(log_host) - 1] = '\0';
        char *dot = strchr(log_host, '.');
        if (dot != NULL && dot != log_host)
            *dot = '\0';
    }
    return log_host;
}

static void expand_name_locked(char *out, size_t n)
{
    size_t o = 0;
    for (const char *p = log_name; *p != '\0' && o + 1 < n; p++) {
        char tmp[32];
        const char *add = NULL;
        if (p[0] == '%' && p[1] != '\0') {
            switch (p[1]) {
            case 'h': add = host_locked(); break;
            case 'p': snprintf(tmp, sizeof(tmp), "%d", (int)getpid()); add = tmp; break;
            case 'r':
                if (log_rank >= 0)
                    snprintf(tmp, sizeof(tmp), "%d", log_rank);
                else
                    strcpy(tmp, "x");
                add = tmp;
                break;
            case '%': add = "%"; break;
            }
        }
        if (add == NULL) { /* not an escape we know: keep it literally */
            out[o++] = *p;
            continue;
        }
        p++;
        for (; *add != '\0' && o + 1 < n; add++)
            out[o++] = *add;
    }
    out[o] = '\0';
}

static void write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return; /* nowhere left to report it */
        }
        buf += w;
        len -= (size_t)w;
    }
}

static int fd_locked(void)
{
    if (log_fd >= 0)
        return log_fd;
    log_fd = STDERR_FILENO;
    if (log_name[0] != '\0') {
        char path[LOG_NAME_MAX + 128];
        expand_name_locked(path, sizeof(path));
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
            log_fd = fd;
        } else {
            char msg[LOG_NAME_MAX + 256];
            int len = snprintf(msg, sizeof(msg),
                               "hcomm: cannot open HCCL_DEBUG_FILE '%s': %m; logging to stderr\n",
                               path);
            if (len > 0)
                write_all(STDERR_FILENO, msg, (size_t)len < sizeof(msg) ? (size_t)len : sizeof(msg) - 1);
        }
    }
    return log_fd;
}

static void close_locked(void)
{
    if (log_fd > STDERR_FILENO)
        close(log_fd);
    log_fd = -1;
}

void hc_log_configure(int level, unsigned subsys_mask, const char *file)
{
    if (level < HC_LOG_NONE)
        level = HC_LOG_NONE;
    if (level > HC_LOG_TRACE)
        level = HC_LOG_TRACE;
    pthread_mutex_lock(&log_mu);
    hc_log_level = level;
    hc_log_subsys = subsys_mask;
    if (file == NULL)
        file = "";
    if (strcmp(file, log_name) != 0 || log_fd < 0) {
        close_locked();
        snprintf(log_name, sizeof(log_name), "%s", file);
    }
    pthread_mutex_unlock(&log_mu);
}

void hc_log_set_rank(int rank)
{
    pthread_mutex_lock(&log_mu);
    /* the first communicator's rank names the process for good */
    if (log_rank < 0 && rank >= 0) {
        log_rank = rank;
        if (strstr(log_name, "%r") != NULL)
            close_locked();
    }
    pthread_mutex_unlock(&log_mu);
}

int hc_log_parse_level(const char *s)
{
    if (s == NULL)
        return -1;
    for (int i = HC_LOG_NONE; i <= HC_LOG_TRACE; i++)
        if (strcasecmp(s, level_names[i]) == 0)
            return i;
    return -1;
}

long hc_log_parse_subsys(const char *s)
{
    if (s == NULL)
        return -1;
    int exclude = 0;
    if (*s == '^') {
        exclude = 1;
        s++;
    }
    unsigned mask = 0;
    const char *p = s;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        /* tolerate blanks around a name: "INIT, COLL" */
        while (len > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            len--;
        }
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (len == 0)
            return -1;
        size_t i;
        for (i = 0; i < NSUBSYS; i++)
            if (strlen(subsys_names[i].name) == len && strncasecmp(p, subsys_names[i].name, len) == 0)
                break;
        if (i == NSUBSYS)
            return -1;
        mask |= subsys_names[i].mask;
        if (end == NULL)
            break;
        p = end + 1;
    }
    return exclude ? (long)(HC_SUB_ALL & ~mask) : (long)mask;
}

const char *hc_log_subsys_name(unsigned sub)
{
    if ((sub & HC_SUB_ALL) == HC_SUB_ALL)
        return "ALL";
    for (size_t i = 0; i < NSUBSYS; i++)
        if (sub & subsys_names[i].mask)
            return subsys_names[i].name; /* table order = lowest bit first */
    return "NONE";
}

void hc_log_write(int level, unsigned sub, const char *file, int line, const char *fmt, ...)
{
    if (!HC_LOG_ON(level, sub) || level <= HC_LOG_NONE)
        return;
    int saved_errno = errno; /* for %m, and callers keep theirs */
    char msg[LOG_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    int mlen = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (mlen < 0) {
        snprintf(msg, sizeof(msg), "(bad log format \"%s\")", fmt);
    } else if ((size_t)mlen >= sizeof(msg)) {
        memcpy(msg + sizeof(msg) - 4, "...", 4);
    }
    size_t ml = strlen(msg);
    while (ml > 0 && msg[ml - 1] == '\n') /* we add the newline */
        msg[--ml] = '\0';

    const char *base = file != NULL ? strrchr(file, '/') : NULL;
    base = base != NULL ? base + 1 : (file != NULL ? file : "?");
    const char *lname = level <= HC_LOG_TRACE ? level_names[level] : "TRACE";

    pthread_mutex_lock(&log_mu);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!log_t0_set) {
        log_t0 = now;
        log_t0_set = 1;
    }
    double t = (double)(now.tv_sec - log_t0.tv_sec) + (double)(now.tv_nsec - log_t0.tv_nsec) * 1e-9;
    char rank[16];
    if (log_rank >= 0)
        snprintf(rank, sizeof(rank), "%d", log_rank);
    else
        strcpy(rank, "x");
    char out[LOG_LINE_MAX + 512];
    int len = snprintf(out, sizeof(out), "%s:%d:%s [%.6f] hcomm %s %s %s:%d %s\n", host_locked(),
                       (int)getpid(), rank, t, lname, hc_log_subsys_name(sub), base, line, msg);
    if (len > 0) {
        if ((size_t)len >= sizeof(out)) {
            len = (int)sizeof(out) - 1;
            out[len - 1] = '\n';
        }
        write_all(fd_locked(), out, (size_t)len);
    }
    pthread_mutex_unlock(&log_mu);
    errno = saved_errno;
}
