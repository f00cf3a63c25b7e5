/*
 * src/features/elastic.h - dynamic communicators: split and groups (src/features/split.c),
 * adding and removing members (src/features/elastic.c), and the small control
 * agreement both use.
 *
 * The control agreement runs among some members of an existing
 * communicator over its own endpoints (no MPI, no new connection): tags on
 * the communicator's id with the reserved sequence value HC_TAG_CTRL_SEQ
 * and the sender's rank in that communicator, so it cannot match the
 * communicator's collectives or Send/Recv, nor an agreement of another
 * subset (the source field differs); `salt` separates agreements that the
 * same members run one after the other.
 */
#ifndef HC_ELASTIC_H_
#define HC_ELASTIC_H_

#include <stdint.h>
#include "src/comm/comm.h"

/* Kinds of control agreement (the top bits of the step tag). */
enum { HC_CTRL_GROUP = 1, HC_CTRL_SUBCOMM = 2, HC_CTRL_REMOVE = 3, HC_CTRL_ADD = 4,
       HC_CTRL_SHM = 5 /* shared staging setup (src/comm/shm.c) */ };
#define HC_CTRL_MAXVALS 8

/* Element-wise max of vals[0..nvals) over the n members (ranks of c, in
 * members[]; this process is members[me]); the result replaces vals.
 * Dissemination: ceil(log2 n) rounds of one small message each way.
 * Waits with c's deadline; HCCL_E_REMOTE / HCCL_E_TIMEOUT if a member is
 * gone. Collective over the members only. */
int hc_ctrl_max(hc_comm_t *c, const uint32_t *members, uint32_t n, uint32_t me,
                uint32_t kind, uint32_t salt, uint32_t *vals, uint32_t nvals, const char *what);

/* 32-bit FNV-1a, for salts and agreement checks. */
uint32_t hc_hash32(uint32_t h, const void *data, size_t len);
#define HC_HASH32_INIT 2166136261u

/* How many members of c are marked failed in the address book (ctx->lock
 * held). */
uint32_t hc_elastic_failed_count(const hc_comm_t *c);

/* Release a communicator's join state (hc_comm_destroy calls it). */
void hc_elastic_free(hc_comm_t *c);

#endif /* HC_ELASTIC_H_ */
