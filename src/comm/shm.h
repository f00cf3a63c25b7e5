/*
 * src/comm/shm.h - the node-local fast path: shared staging memory that the
 * ranks of a one-host communicator load from and store to directly, with
 * no copy through a transport and no system call per message.
 *
 * Segment. Each process context maps one segment of HCCL_BUFFSIZE bytes
 * with ucp_mem_map(UCP_MEM_MAP_ALLOCATE), which UCX places in the sysv or
 * posix memory domain, and puts the packed remote key into its bootstrap
 * card. A peer unpacks the key on its endpoint and ucp_rkey_ptr gives a
 * pointer it can use (UCX-FACTS.md). Under UCX_TLS=tcp,self, across hosts,
 * or when the mapping fails, that is unreachable and the communicator keeps
 * the tagged-message path: every algorithm that uses shared memory is
 * usable only when args->shm_bytes > 0.
 *
 * Regions. The segment is cut into slots of two halves of H bytes (H =
 * min(2 MB, HCCL_BUFFSIZE / 2), page-rounded). The first collective of a
 * communicator (hc_op_begin) runs a one-time agreement over its tagged
 * path (every rank sends every other rank {status, region offset, H, epoch
 * proposal}, on the control sequence): each rank takes a slot in its own
 * segment and maps every peer's segment; if any rank cannot, no rank uses
 * shared memory on this communicator. The agreed H is the smallest, the
 * epoch base the largest proposal. So the decision is the same on every
 * rank, split communicators need no extra bootstrap step, and staging is
 * allocated once per process and reused by every communicator.
 *
 * Epochs. Every operation that uses staging takes the next epoch of its
 * communicator (hc_shm_bind); it runs in half (epoch & 1) and its flags
 * carry the epoch (coll.h). Operations of one communicator use staging one
 * after the other (the executor's gate), so streams with several operations
 * in flight stay correct. An executor stores (epoch << 32) at offset 0 of
 * its half when it finishes: the completion flag.
 *
 * Reuse across communicators. A destroyed communicator's slot returns to
 * the pool only when every peer's completion flag shows that it has
 * finished the last operation (a slow peer may still read the half);
 * until then the slot waits in a quarantine that every allocation
 * re-checks (a dead peer's slot is never reused). Flags are never reset:
 * a new communicator's epoch base is above every epoch its members used
 * before, so a stale flag can never satisfy a wait, and a completion flag
 * once reached stays reached.
 */
#ifndef HC_SHM_H_
#define HC_SHM_H_

#include <stdint.h>

#include "comm.h"
#include "op.h"

/* Largest staging half per communicator (the pipelining chunks of the
 * shared-memory algorithms fit in it several times). */
#define HC_SHM_HALF_MAX (2u << 20)

typedef struct hc_shm_comm {
    uint32_t nranks, rank;
    uint32_t slot;             /* own region: slot index in own segment */
    uint64_t half_bytes;       /* H, agreed */
    uint64_t base;             /* first epoch */
    uint64_t epoch;            /* last epoch handed out */
    volatile uint64_t done;    /* last epoch finished here (the gate) */
    volatile uint8_t prev_all; /* its schedule waited for every rank (exec.h) */
    uint64_t seen_done;        /* every peer finished this epoch (exec.h) */
    char **half[2];            /* [parity][rank]: each rank's half, mapped here */
    int32_t *pid;              /* [rank]: process ids (single-copy reads) */
    int cma;                   /* every rank can read every other's memory */
} hc_shm_comm_t;

/* Where the segment may live: UCX maps it System V where it can (no file,
 * pages taken as touched), else as a POSIX file in /dev/shm that it fills
 * whole first and removes once written (a kill meanwhile leaves the file
 * behind: hc_shm_sweep). docs/DESIGN.md, "Shared staging space". */
#define HC_SHM_DIR "/dev/shm"
/* A segment of `size` bytes fits in the free space of `dir`: HCCL_SUCCESS,
 * else HCCL_E_MEMORY with the sizes logged. */
int hc_shm_space_check(const char *dir, uint64_t size);
/* Remove from `dir` the UCX POSIX segment files (ucx_shm_posix_*) of this
 * user that no process has open or mapped: those whose creator died while
 * writing them. Files of processes this one cannot see in /proc (another
 * PID namespace sharing the directory) count as unused. */
void hc_shm_sweep(const char *dir);
/* Map this process's segment and describe it in ctx->self (ctx->lock not
 * held): one process of the host at a time sweeps HC_SHM_DIR, checks the
 * segment against its free space and maps it. HCCL_E_MEMORY (logged) when
 * it does not fit; HCCL_SUCCESS otherwise, with or without a segment
 * (without it there is no fast path). */
int hc_shm_ctx_init(hc_context_t *ctx);
/* Unmap peers' segments and our own (before the worker goes), then sweep
 * HC_SHM_DIR (files of local peers that died during the job). */
void hc_shm_ctx_fini(hc_context_t *ctx);

/* Collective over c, at its first operation: decide whether c uses shared
 * memory (c->shm, c->shm_state). Failures only turn it off. */
void hc_shm_comm_setup(hc_comm_t *c);
/* Give c's region back (destroy, membership change); c->shm_state returns
 * to "not set up". Nothing may be in flight. */
void hc_shm_comm_release(hc_comm_t *c);

/* Bind an executor whose schedule uses staging to c's next epoch. */
void hc_shm_bind(hc_comm_t *c, hc_exec_t *e);
/* The operation bound to e is over (done, failed or cancelled). */
void hc_shm_op_end(hc_comm_t *c, const hc_exec_t *e);

#endif /* HC_SHM_H_ */
