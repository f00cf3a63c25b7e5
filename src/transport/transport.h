/*
 * src/transport/transport.h - the transport interface (a small function table, as
 * NCCL's transports are): UCX (src/transport/transport_ucx.c) and the in-process
 * loopback used by the unit tests (src/exec/transport_loop.c) sit behind it, so
 * the executor does not care which one it drives.
 *
 * Peers are communicator ranks; the transport context maps them to
 * endpoints. Completion is reported by writing x->status (HCCL_E_AGAIN while
 * pending, then HCCL_SUCCESS or an error code) from inside progress().
 */
#ifndef HC_TRANSPORT_H_
#define HC_TRANSPORT_H_

#include <stddef.h>
#include <stdint.h>

typedef struct hc_xfer {
    volatile int status; /* HCCL_E_AGAIN while pending */
    void *req;           /* the transport's request (for cancel) */
    uint32_t peer;
    uint64_t len;        /* a receive: the bytes it expects (set by irecv) */
} hc_xfer_t;

typedef struct hc_transport_ops {
    const char *name;
    /* Post a non-blocking send/receive. Returns HCCL_SUCCESS (posted, maybe
     * already complete: see x->status) or an error (nothing posted). */
    int (*isend)(void *tctx, uint32_t peer, const void *buf, size_t len, uint64_t tag,
                 hc_xfer_t *x);
    int (*irecv)(void *tctx, uint32_t peer, void *buf, size_t len, uint64_t tag,
                 hc_xfer_t *x);
    /* Cancel a pending transfer; afterwards x->status is not HCCL_E_AGAIN
     * and the transport no longer touches x, nor the buffer of a receive.
     * A send that UCX has started cannot be cancelled (openucx/ucx#9584):
     * its buffer may still be read until the peer takes the message or
     * the endpoint closes (docs/ELASTIC.md, "Limits"). */
    void (*cancel)(void *tctx, hc_xfer_t *x);
    /* Drive communication; returns the number of events processed. */
    int (*progress)(void *tctx);
} hc_transport_ops_t;

#endif /* HC_TRANSPORT_H_ */
