/*
 * src/transport_loop.h - the in-process loopback transport: all ranks of a
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
#include "transport.h"

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

/* Bytes moved so far between each ordered pair (src * nranks + dst). */
const uint64_t *hc_loop_traffic(const hc_loop_t *lp);

#endif /* HC_TRANSPORT_LOOP_H_ */
