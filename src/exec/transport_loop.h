/*
 * src/exec/transport_loop.h - the in-process loopback transport: all ranks of a
 * communicator live in one process (the unit tests, the simulator).
 *
 * Semantics are rendezvous, the strictest UCX can show: a send completes
 * only when a matching receive has been posted and the data copied, so a
 * schedule that reuses a send buffer too early, or that only works because
 * sends are buffered, fails here. Matching is by (source, destination, tag);
 * a size mismatch is an error.
 */
#ifndef HC_TRANSPORT_LOOP_H_
#define HC_TRANSPORT_LOOP_H_

#include <stddef.h>
#include <stdint.h>
#include "exec.h"
#include "src/transport/transport.h"

typedef struct hc_loop hc_loop_t;

extern const hc_transport_ops_t hc_loop_ops;

hc_loop_t *hc_loop_create(uint32_t nranks);
void hc_loop_destroy(hc_loop_t *lp);
/* The transport context of one rank (pass to hc_exec_start with hc_loop_ops). */
void *hc_loop_tctx(hc_loop_t *lp, uint32_t rank);

/* Progress all nranks executors round-robin until every one is done.
 * HCCL_SUCCESS; HCCL_E_INTERNAL on deadlock or a leftover unmatched message
 * (err says which ranks wait for what); or an executor's error. */
int hc_loop_run(hc_loop_t *lp, hc_exec_t *execs, char *err, size_t errlen);

/* Simulated shared staging (coll.h top): every rank gets two zeroed halves
 * of `half` bytes, 64-byte aligned, in one allocation, so that schedules
 * using HC_BUF_SEG / HC_BUF_PEER run here as they do across processes.
 * HCCL_SUCCESS or HCCL_E_MEMORY; again to resize (contents are lost). */
int hc_loop_shm_alloc(hc_loop_t *lp, uint64_t half);
/* Bind rank r's started executor to the halves of `epoch` (>= 1; the
 * operations of one test must use consecutive epochs, as a communicator
 * does). No gate: the driver runs one operation per rank at a time. */
void hc_loop_shm_bind(hc_loop_t *lp, uint32_t rank, uint64_t epoch, hc_exec_t *e);
/* Rank r's bound operation is over (as hc_shm_op_end: what the next one
 * may assume, coll.h top); tests that run several operations call it. */
void hc_loop_shm_done(hc_loop_t *lp, uint32_t rank, const hc_exec_t *e);
/* Whether every rank's buffers count as registered (src/features/window.h): the
 * ranks are one process, so each sees the others' memory where they do;
 * HC_STEP_XREDUCE then takes its load-and-store path. Call after
 * hc_loop_shm_alloc (which resets it); HCCL_E_MEMORY or HCCL_SUCCESS. */
int hc_loop_shm_registered(hc_loop_t *lp, int on);
/* The simulated communicator's first epoch (default 1): flags older than
 * it may be left in the halves, as a reused region has them. */
void hc_loop_shm_epoch0(hc_loop_t *lp, uint64_t epoch0);
/* Rank r's half `parity` (for tests that inspect or poison it). */
char *hc_loop_shm_half(hc_loop_t *lp, uint32_t rank, uint32_t parity);

/* Bytes moved so far between each ordered pair (src * nranks + dst). */
const uint64_t *hc_loop_traffic(const hc_loop_t *lp);

#endif /* HC_TRANSPORT_LOOP_H_ */
