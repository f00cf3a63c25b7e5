/*
 * src/comm/schedcache.h - a communicator's cache of built schedules, so that a
 * repeated operation allocates and builds nothing: HC_SCHED_CACHE entries
 * by key (collective, algorithm, type, op, count, ...), the least recently
 * used one rebuilt when a new key needs room.
 */
#ifndef HC_SCHEDCACHE_H_
#define HC_SCHEDCACHE_H_

#include <stddef.h>
#include <stdint.h>

#include "coll/coll.h"

#define HC_SCHED_CACHE 64

typedef struct hc_sched_key {
    uint8_t coll, algo, dtype, op, in_place, valid, iov, nt;
    uint8_t reg; /* args.registered */
    uint32_t root;
    uint64_t count, chunk;
} hc_sched_key_t;

typedef struct hc_sched_entry {
    hc_sched_key_t key;
    hc_sched_t sched;
    void *ws;           /* executor workspace for this schedule */
    size_t ws_size;
    int busy;           /* in use by a running operation */
    uint64_t last_use;
    uint64_t xnode_bytes; /* what the schedule sends to ranks on other nodes */
} hc_sched_entry_t;

/* The key of an operation with arguments a run by algorithm `algo_id`. */
void hc_sched_key_set(hc_sched_key_t *k, const hc_coll_args_t *a, unsigned algo_id);
/* The entry for key k, not busy (its last use now on *clock); else the
 * entry to rebuild for it (a free one, else the least recently used); NULL
 * when every entry is busy or the table cannot be allocated. *cache is
 * allocated at the first call. */
hc_sched_entry_t *hc_cache_get(hc_sched_entry_t **cache, uint64_t *clock, const hc_sched_key_t *k);
/* Free every entry and the table (none may be busy). */
void hc_cache_free(hc_sched_entry_t **cache);

#endif /* HC_SCHEDCACHE_H_ */
