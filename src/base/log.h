/*
 * src/base/log.h - leveled, per-subsystem logging (HCCL_DEBUG, HCCL_DEBUG_FILE,
 * HCCL_DEBUG_SUBSYS). Log where an error is first detected; say what failed
 * and with which values; after a failed system call print %m.
 *
 * Line format:  <host>:<pid>:<rank> [<time>] hcomm <LEVEL> <SUBSYS> <file>:<line> <message>
 */
#ifndef HC_LOG_H_
#define HC_LOG_H_

#include <stdio.h>

typedef enum {
    HC_LOG_NONE = 0,
    HC_LOG_ERROR = 1,
    HC_LOG_WARN = 2,
    HC_LOG_INFO = 3,
    HC_LOG_TRACE = 4
} hc_log_level_t;

/* Subsystems: bit masks, names as in HCCL_DEBUG_SUBSYS. */
enum {
    HC_SUB_INIT = 1u << 0,
    HC_SUB_COLL = 1u << 1,
    HC_SUB_TOPO = 1u << 2,
    HC_SUB_TUNE = 1u << 3,
    HC_SUB_ELASTIC = 1u << 4,
    HC_SUB_TRANSPORT = 1u << 5,
    HC_SUB_ENV = 1u << 6,
    HC_SUB_STREAM = 1u << 7,
    HC_SUB_ALL = 0xffu
};

extern int hc_log_level;           /* current level (hc_log_level_t) */
extern unsigned hc_log_subsys;     /* enabled subsystems mask */

/* Apply the logging settings (from the env table, src/base/env.c). The file name
 * may contain %h (host), %p (pid), %r (rank; "x" until a rank is known). */
void hc_log_configure(int level, unsigned subsys_mask, const char *file);
/* Tell the logger this process's rank in its first communicator. */
void hc_log_set_rank(int rank);
/* Parse "INIT,COLL" / "^TOPO" / "ALL" into a mask; -1 on a bad name. */
long hc_log_parse_subsys(const char *s);
/* Parse "NONE" .. "TRACE" (case-insensitive); -1 on a bad name. */
int hc_log_parse_level(const char *s);
const char *hc_log_subsys_name(unsigned sub);

void hc_log_write(int level, unsigned sub, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#define HC_LOG_ON(lvl, sub) ((lvl) <= hc_log_level && ((sub) & hc_log_subsys))
#define HC_LOG(lvl, sub, ...) \
    do { \
        if (HC_LOG_ON(lvl, sub)) \
            hc_log_write(lvl, sub, __FILE__, __LINE__, __VA_ARGS__); \
    } while (0)
#define HC_ERROR(sub, ...) HC_LOG(HC_LOG_ERROR, sub, __VA_ARGS__)
#define HC_WARN(sub, ...) HC_LOG(HC_LOG_WARN, sub, __VA_ARGS__)
#define HC_INFO(sub, ...) HC_LOG(HC_LOG_INFO, sub, __VA_ARGS__)
#define HC_TRACE(sub, ...) HC_LOG(HC_LOG_TRACE, sub, __VA_ARGS__)

/* Status propagation that leaves a trail (NCCLCHECK style): on failure log
 * "file:line -> code" at TRACE... and return / jump. */
#define HC_CHECK(call) \
    do { \
        int hc_rc_ = (call); \
        if (hc_rc_ != 0) { \
            HC_LOG(HC_LOG_INFO, HC_SUB_ALL, "%s -> %d", #call, hc_rc_); \
            return hc_rc_; \
        } \
    } while (0)
#define HC_CHECK_GOTO(call, rc, label) \
    do { \
        (rc) = (call); \
        if ((rc) != 0) { \
            HC_LOG(HC_LOG_INFO, HC_SUB_ALL, "%s -> %d", #call, (int)(rc)); \
            goto label; \
        } \
    } while (0)

#endif /* HC_LOG_H_ */
