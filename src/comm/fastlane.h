/*
 * src/comm/fastlane.h - the fast lane: a tiny blocking collective over shared
 * staging that repeats the previous operation, run inline instead of
 * through hc_op_begin, hc_exec_start and hc_comm_wait.
 *
 * The DIRECT schedules of one tiny message are a handful of steps on
 * shared staging, which their builders mark (hc_sched_t.fast): Broadcast
 * of at most HC_SHM_RING_MAX (504) bytes through its epoch's ring entry,
 * and AllReduce, AllGather, ReduceScatter and AlltoAll whose staged data
 * fits the tiny slot before its flag (HC_SHM_TINY_MAX, 568 bytes): the
 * guard, the copies in, the flag, the wait for the peers' flags, the
 * copies or the fold out. Through the general path such a call costs
 * ~1500-1900 instructions, most of them set-up and bookkeeping, and in a
 * loop of small calls that is most of the time (docs/PERFORMANCE.md, "The
 * tiny call inline").
 *
 * hc_fastlane_run runs the cached schedule's own steps
 * (hc_exec_inline_run: the executor's code for each step, without its
 * set-up), and only when nothing else can happen: the previous operation
 * on the communicator was the same one and its schedule is marked
 * (hc_op_begin's memo would run it again, the same decision on every
 * rank), the call is blocking (not in a group, not on a stream), the
 * communicator never had stream operations, and no timeline trace is on.
 * It takes the sequence number and the epoch as hc_op_begin does and ends
 * as the executor and hc_shm_op_end do, so the two ways mix freely across
 * ranks and calls.
 *
 * It never waits longer than the spin of a shared-staging wait
 * (hc_comm_spin_polls). At a WAIT that is not satisfied by then it gives
 * the epoch back and hands the operation to the general path, which
 * resumes at that step (hc_op_t.resume_at, hc_exec_resume_at) and keeps
 * the yielding, the deadline, cancel and failure detection in one place.
 * An INFO log of collectives (HCCL_DEBUG=INFO) says "inline" for each
 * operation run here.
 */
#ifndef HC_FASTLANE_H_
#define HC_FASTLANE_H_

#include "comm.h"
#include "op.h"

/* 1: the operation ran, *rc its result; 0: not taken, nothing changed. */
int hc_fastlane_run(hc_comm_t *c, const hc_op_t *op, int *rc);

#endif /* HC_FASTLANE_H_ */
