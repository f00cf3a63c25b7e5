/*
 * src/exec/trace.h - the timeline (HCCL_TRACE_FILE): every operation and every
 * schedule step, written as Chrome trace JSON, one file per rank.
 *
 * Recording is cheap enough to leave on in a benchmark: each event is one
 * fixed-size 64-byte record (a time stamp from the TSC where it is
 * constant, otherwise CLOCK_MONOTONIC, plus a few integers and pointers to
 * static strings) stored into a ring that belongs to the recording thread,
 * so there is no lock and no allocation after the thread's first event.
 * Nothing is formatted until the file is written: when the process context
 * is destroyed (the last HcclCommDestroy) and at exit. The ring keeps the
 * last HC_TRACE_RING events of each thread; the file says how many older
 * ones were overwritten.
 *
 * When tracing is off the only cost is a pointer test in the executor
 * (exec->trace == NULL) and a flag test at the start and end of an
 * operation.
 *
 * The writer pairs begin/end records into complete ("X") events: operations
 * on tracks "stream S ops", transfers (post -> completion, i.e. data sent /
 * data arrived) on tracks "stream S transfers", local work (REDUCE, COPY,
 * fusion pack/unpack) on the track of the thread that did it. Overlapping
 * intervals of one track are spread over lanes so every track nests
 * properly. Time stamps are microseconds of CLOCK_REALTIME, so the files of
 * several ranks (and a program's own events) line up; tools/trace-merge.sh
 * merges them into one timeline. Format details: docs/STREAMS.md.
 */
#ifndef HC_TRACE_H_
#define HC_TRACE_H_

#include <stdint.h>

#include "coll/coll.h"
#include "src/base/env.h"

#define HC_TRACE_RING (1u << 18) /* records per thread (16 MiB) */

/* What the records of one operation carry; filled by the code that runs
 * it, referenced by the executor (hc_exec_t.trace). Strings are static. */
typedef struct hc_trace_op {
    uint64_t id;        /* unique in the process, assigned at begin */
    uint64_t t_enq;     /* when it was enqueued on a stream (trace clock; 0 = blocking) */
    uint64_t bytes;     /* payload of the operation */
    const char *name;   /* "AllReduce", ... */
    const char *algo;   /* algorithm name, "fused", "p2p" */
    uint32_t comm_id, seq, stream;
} hc_trace_op_t;

/* Phases of a step. */
enum { HC_TRACE_STEP_START = 0, HC_TRACE_STEP_DONE = 1 };

/* Non-zero when HCCL_TRACE_FILE is set (read once). */
extern int hc_trace_on;

/* Read the setting (once per process; later calls do nothing). */
void hc_trace_setup(const hc_config_t *env);
/* The rank that names the file (%r): the first call wins, as for the log. */
void hc_trace_set_rank(int rank);
/* Name the calling thread's track ("hcomm progress", ...). */
void hc_trace_thread_name(const char *name);

/* The trace clock (raw units; converted when the file is written). */
uint64_t hc_trace_now(void);

/* An operation starts / ends (rc: its result). begin assigns op->id. */
void hc_trace_op_begin(hc_trace_op_t *op);
void hc_trace_op_end(const hc_trace_op_t *op, int rc);
/* A schedule step starts (posted, or a local step begins) or completes. */
void hc_trace_step(const hc_trace_op_t *op, uint32_t idx, const hc_step_t *st, int phase);
/* A piece of local work of an operation (fusion pack/unpack): `name` is
 * static, t0 from hc_trace_now, the end is now. */
void hc_trace_span(const hc_trace_op_t *op, const char *name, uint64_t t0, uint64_t bytes);

/* Write the file now (all threads' records so far). Called when the
 * process context is destroyed and at exit; safe to call repeatedly. */
void hc_trace_flush(void);

#endif /* HC_TRACE_H_ */
