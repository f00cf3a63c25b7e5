/*
 * src/fastlane.h - the fast lane: a tiny blocking Broadcast or AllReduce
 * over shared staging that repeats the previous operation, run inline
 * instead of through hc_op_begin, the executor and hc_comm_wait.
 *
 * Two schedules are short chains of shared-memory steps (their builders
 * mark them, hc_sched_t.fast): the Broadcast of at most HC_SHM_RING_MAX
 * (504) bytes through the ring entry of its epoch (coll/bcast_direct.c:
 * the root waits until the entry is free, copies in, publishes; a reader
 * waits for the flag, copies out) and the one-shot AllReduce of at most
 * HC_SHM_TINY_MAX (568) bytes (coll/allreduce_direct.c: guard, copy into
 * the tiny slot, publish, wait for every rank, fold). Through the general
 * path such a call costs ~1500-1900 instructions, most of them set-up and
 * bookkeeping, and in the benchmark's loops that was most of the time
 * (docs/PERFORMANCE.md, "The tiny call inline").
 *
 * hc_fastlane_run does the same loads and stores inline, and only when
 * nothing else can happen: the previous operation on the communicator was
 * the same one with a marked schedule (hc_op_begin's memo would run that
 * schedule again, the same decision on every rank), the call is blocking
 * (not in a group, not on a stream), the communicator never had stream
 * operations, and no timeline trace is on. It takes the epoch and the
 * sequence number as hc_op_begin would, and leaves the completion flag,
 * the gate, prev_all and seen_done as the executor and hc_shm_op_end
 * would, so the two ways mix freely across ranks and calls.
 *
 * It never waits longer than the spin of a shared-staging wait
 * (hc_comm_spin_polls). A Broadcast root whose ring entry is not free at
 * once, a reader whose flag is not up, or an AllReduce rank whose guard
 * does not hold, changes nothing and returns 0: the caller runs the
 * operation the general way. An AllReduce rank that has published and
 * does not see every peer's flag in time hands the operation to the
 * executor at its WAIT step (hc_op_t.resume_at), which keeps yielding,
 * the deadline, cancel and failure detection in one place. An INFO log of
 * collectives (HCCL_DEBUG=INFO) says "inline" for each operation run here.
 */
#ifndef HC_FASTLANE_H_
#define HC_FASTLANE_H_

#include "comm.h"

/* 1: the operation ran, *rc its result; 0: not taken, nothing changed. */
int hc_fastlane_run(hc_comm_t *c, const hc_op_t *op, int *rc);

#endif /* HC_FASTLANE_H_ */
