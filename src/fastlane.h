/*
 * src/fastlane.h - the fast lane: a tiny blocking Broadcast over shared
 * staging, run inline instead of through the executor.
 *
 * A Broadcast of at most HC_SHM_RING_MAX bytes with DIRECT is a chain of
 * two or three steps in the ring entry of its epoch (coll/bcast_direct.c):
 * the root waits until the entry is free (the run-ahead guard, immediate
 * in steady state), copies the message in and publishes its flag; every
 * other rank waits for the flag and copies the message out. Through
 * hc_op_begin, the executor and hc_comm_wait that costs ~1400 instructions
 * on a reader (callgrind, 4 ranks), and with more ranks than cores every
 * rank's own time counts (docs/PERFORMANCE.md, "The tiny Broadcast inline").
 *
 * hc_fastlane_run does the same stores and loads inline, and only when
 * nothing else can happen: the previous operation on the communicator was
 * the same Broadcast and ran DIRECT (hc_op_begin's memo, so the selection
 * is the same on every rank), the call is blocking, the communicator never
 * had stream operations, no timeline trace is on, and the step it would
 * wait on is satisfied now: the root's ring entry free at once, a reader's
 * flag set within the spin of a shared-staging wait (hc_comm_spin_polls).
 * Otherwise it changes nothing and returns 0, and the caller runs the
 * operation the general way (which waits with timeouts, failure detection
 * and yielding). It takes the epoch and the sequence number as hc_op_begin
 * would, and leaves the completion flag, the gate and seen_done as the
 * executor and hc_shm_op_end would, so the two ways mix freely across
 * ranks and calls. An INFO log of collectives (HCCL_DEBUG=INFO) says
 * "inline" for each operation run this way.
 */
#ifndef HC_FASTLANE_H_
#define HC_FASTLANE_H_

#include "comm.h"

/* 1: the operation ran, *rc its result; 0: not taken, nothing changed. */
int hc_fastlane_run(hc_comm_t *c, const hc_op_t *op, int *rc);

#endif /* HC_FASTLANE_H_ */
