/* src/comm/schedcache.c - the schedule cache (see schedcache.h). */
#include "schedcache.h"

#include <stdlib.h>
#include <string.h>

void hc_sched_key_set(hc_sched_key_t *k, const hc_coll_args_t *a, unsigned algo_id)
{
    memset(k, 0, sizeof(*k));
    k->coll = (uint8_t)a->coll;
    k->algo = (uint8_t)algo_id;
    k->dtype = (uint8_t)a->dtype;
    k->op = (uint8_t)a->op;
    k->in_place = (uint8_t)a->in_place;
    k->iov = (uint8_t)a->iov;
    k->nt = (uint8_t)a->nt_recv;
    k->reg = (uint8_t)a->registered;
    k->valid = 1;
    k->root = a->root;
    k->count = a->count;
    k->chunk = a->chunk_bytes;
}

hc_sched_entry_t *hc_cache_get(hc_sched_entry_t **cache, uint64_t *clock, const hc_sched_key_t *k)
{
    hc_sched_entry_t *victim = NULL;
    if (*cache == NULL) { /* a communicator that never runs costs no cache */
        *cache = calloc(HC_SCHED_CACHE, sizeof(**cache));
        if (*cache == NULL)
            return NULL; /* the caller uses a private entry */
    }
    for (int i = 0; i < HC_SCHED_CACHE; i++) {
        hc_sched_entry_t *e = &(*cache)[i];
        if (e->key.valid && !e->busy && memcmp(&e->key, k, sizeof(*k)) == 0) {
            e->last_use = ++*clock;
            return e;
        }
        if (e->busy)
            continue;
        /* the first free entry, else the least recently used: new keys
         * fill the table from the front, so a lookup stops early */
        if (victim == NULL ||
            (victim->key.valid && (!e->key.valid || e->last_use < victim->last_use)))
            victim = e;
    }
    return victim; /* caller rebuilds it (NULL: all busy) */
}

void hc_cache_free(hc_sched_entry_t **cache)
{
    if (*cache == NULL)
        return;
    for (int i = 0; i < HC_SCHED_CACHE; i++) {
        if ((*cache)[i].key.valid || (*cache)[i].ws) {
            hc_sched_free(&(*cache)[i].sched);
            free((*cache)[i].ws);
        }
    }
    free(*cache);
    *cache = NULL;
}
