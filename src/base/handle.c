/* src/base/handle.c - the handle table (see handle.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "handle.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "util.h"

_Static_assert(sizeof(uintptr_t) == 8, "a handle holds a 40-bit generation and a 24-bit slot");

#define SLOT_BITS 24
#define SLOT_MASK ((UINT64_C(1) << SLOT_BITS) - 1)
#define CHUNK 1024u                          /* slots per chunk */
#define NCHUNKS ((SLOT_MASK + 1) / CHUNK)     /* slot + 1 never exceeds SLOT_MASK */

typedef struct {
    uint64_t gen;   /* generation of the live handle, or of the next one */
    void *obj;      /* NULL while free */
    uint32_t kind;
    uint32_t next;  /* free list: slot + 1, 0 = end */
} slot_t;

static slot_t *g_chunk[NCHUNKS]; /* allocated on demand, never freed */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t g_free;          /* free list head: slot + 1, 0 = empty */
static uint32_t g_used;          /* slots handed out at least once */

static slot_t *slot_at(uint64_t i)
{
    slot_t *ch = __atomic_load_n(&g_chunk[i / CHUNK], __ATOMIC_ACQUIRE);
    return ch ? &ch[i % CHUNK] : NULL;
}

void *hc_handle_new(hc_handle_kind_t kind, void *obj)
{
    pthread_mutex_lock(&g_lock);
    uint32_t i;
    if (g_free) {
        i = g_free - 1;
        g_free = slot_at(i)->next;
    } else if (g_used < SLOT_MASK) {
        i = g_used;
        if (g_chunk[i / CHUNK] == NULL) {
            slot_t *ch = calloc(CHUNK, sizeof(slot_t));
            if (ch == NULL) {
                pthread_mutex_unlock(&g_lock);
                return NULL;
            }
            for (uint32_t k = 0; k < CHUNK; k++)
                ch[k].gen = 1;
            __atomic_store_n(&g_chunk[i / CHUNK], ch, __ATOMIC_RELEASE);
        }
        g_used++;
    } else {
        pthread_mutex_unlock(&g_lock);
        return NULL;
    }
    slot_t *s = slot_at(i);
    s->kind = (uint32_t)kind;
    s->next = 0;
    __atomic_store_n(&s->obj, obj, __ATOMIC_RELEASE);
    const uint64_t h = (s->gen << SLOT_BITS) | (i + 1);
    pthread_mutex_unlock(&g_lock);
    return (void *)(uintptr_t)h;
}

HC_HOT void *hc_handle_get(const void *h, hc_handle_kind_t kind)
{
    const uint64_t v = (uintptr_t)h;
    const uint64_t i = (v & SLOT_MASK) - 1; /* slot 0 of the value: wraps, no chunk */
    if (i >= SLOT_MASK)
        return NULL;
    const slot_t *s = slot_at(i);
    if (s == NULL || __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE) != v >> SLOT_BITS ||
        s->kind != (uint32_t)kind)
        return NULL;
    return __atomic_load_n(&s->obj, __ATOMIC_ACQUIRE);
}

void hc_handle_retire(const void *h)
{
    const uint64_t v = (uintptr_t)h;
    const uint64_t i = (v & SLOT_MASK) - 1;
    if (i >= SLOT_MASK)
        return;
    pthread_mutex_lock(&g_lock);
    slot_t *s = slot_at(i);
    if (s && s->obj && s->gen == v >> SLOT_BITS) {
        /* 40 bits: a slot would need 2^40 reuses to hand out an old value */
        __atomic_store_n(&s->gen, (s->gen + 1) & ((UINT64_C(1) << (64 - SLOT_BITS)) - 1),
                         __ATOMIC_RELEASE);
        __atomic_store_n(&s->obj, NULL, __ATOMIC_RELEASE);
        s->next = g_free;
        g_free = (uint32_t)i + 1;
    }
    pthread_mutex_unlock(&g_lock);
}
