/*
 * coll/shm_util.h - small helpers shared by the builders that use shared
 * staging (coll.h top; allreduce_direct.c, *_shm.c).
 *
 * One layout for all of them, because a communicator runs many schedules
 * (sizes, algorithms) over the same two halves and a flag word must never
 * hold data of another schedule (a stale data word could satisfy a WAIT,
 * or make a flag shrink):
 *   HC_SHM_FLAG(i), i < HC_SHM_NFLAGS: flag words, each on a cache line of
 *     its own (only the line's first word is used);
 *   HC_SHM_TINY: HC_SHM_TINY_LINES lines whose last word is a flag and
 *     whose HC_SHM_TINY_MAX bytes before it carry a tiny message, placed
 *     to end at the flag (hc_shm_tiny_at): up to 56 bytes share the flag's
 *     line, longer ones take the lines just before it, which the reader
 *     prefetches while it polls the flag, so the message arrives with the
 *     flag in one transfer instead of one more after it (2 ranks, 300 ns
 *     core-to-core: 64-512 B AllGather 0.64-0.70 -> 0.46-0.53 us; the
 *     writer stores line by line, hc_copy_lines in src/base/util.h). Nine
 *     lines, up to 568 bytes: with the line-by-line stores a 512-byte
 *     message is faster this way than through a data slot (2-rank
 *     AllReduce 512 B 0.52-0.55 against 0.69-0.71 us), while 17 lines
 *     (1 KiB) were much slower (1.6 against 0.9 us; docs/PERFORMANCE.md);
 *   HC_SHM_RING: HC_SEG_RING_SLOTS entries of HC_SEG_RING_BYTES, each a flag
 *     in its first word and up to HC_SHM_RING_MAX data bytes after it (so
 *     up to 56 bytes travel in the flag's line), used as ring
 *     locations (coll.h): a small root-driven operation (Broadcast) puts
 *     its data and flag in the entry of its epoch and may run ahead;
 *   HC_SHM_DATA onwards: data slots, 64-byte aligned.
 * Flag values count chunks (chunk k done: value k + 1), so one flag serves
 * a whole pipeline and only grows within an operation; publishes of one
 * flag are chained by dependencies.
 */
#ifndef HC_COLL_SHM_UTIL_H_
#define HC_COLL_SHM_UTIL_H_

#include "algos.h"

#define HC_SHM_LINE 64u
#define HC_SHM_NFLAGS 8u
#define HC_SHM_FLAG(i) (HC_SEG_BASE + (uint64_t)(i) * HC_SHM_LINE)
#define HC_SHM_TINY HC_SHM_FLAG(HC_SHM_NFLAGS)
#define HC_SHM_TINY_LINES 9u
#define HC_SHM_TINY_MAX (HC_SHM_TINY_LINES * HC_SHM_LINE - 8u)
#define HC_SHM_TINY_FLAG (HC_SHM_TINY + HC_SHM_TINY_MAX)
#define HC_SHM_RING (HC_SHM_TINY + HC_SHM_TINY_LINES * HC_SHM_LINE)
#define HC_SHM_RING_MAX (HC_SEG_RING_BYTES - 8u)
#define HC_SHM_RING_FLAG HC_SHM_RING
#define HC_SHM_RING_DATA (HC_SHM_RING + 8u)
#define HC_SHM_DATA (HC_SHM_RING + HC_SEG_RING_SLOTS * HC_SEG_RING_BYTES)
/* Where a tiny message of len bytes starts: it ends at the tiny flag (8-byte
 * aligned), so up to 56 bytes share the flag's line and longer ones take
 * the lines just before it. */
static inline uint64_t hc_shm_tiny_at(uint64_t len)
{
    return HC_SHM_TINY_FLAG - ((len + 7) & ~(uint64_t)7);
}

/* The least staging half the builders need (a few slots of a line). */
#define HC_SHM_MIN_HALF (HC_SHM_DATA + 8u * HC_SHM_LINE)

static inline uint64_t hc_shm_align(uint64_t v)
{
    return (v + HC_SHM_LINE - 1) & ~(uint64_t)(HC_SHM_LINE - 1);
}

/* Usable check of every shared-memory algorithm. */
static inline const char *hc_shm_usable(const hc_coll_args_t *a)
{
    return a->nranks > 1 && a->shm_bytes < HC_SHM_MIN_HALF
               ? "the ranks share no staging memory (not one host, or UCX cannot map it)"
               : NULL;
}

/* Bytes of one of `slots` equal slots after the flag lines, whole cache
 * lines; 0 when there is no staging. */
static inline uint64_t hc_shm_slot_room(const hc_coll_args_t *a, uint32_t slots)
{
    return a->shm_bytes < HC_SHM_MIN_HALF
               ? 0
               : (a->shm_bytes - HC_SHM_DATA) / slots & ~(uint64_t)(HC_SHM_LINE - 1);
}

/* Usable check of the per-block algorithms, whose slot holds one block
 * for every rank. */
static inline const char *hc_shm_blocks_usable(const hc_coll_args_t *a, uint32_t slots)
{
    const char *why = hc_shm_usable(a);
    if (why == NULL && a->nranks > 1 && hc_shm_slot_room(a, slots) < a->nranks * a->esize)
        why = "the shared staging is too small for one element of every rank";
    return why;
}

/* Elements per pipeline chunk: args->chunk_bytes if set, else def_bytes;
 * at most cap_bytes (the room of one slot); at least one element. */
static inline uint64_t hc_shm_chunk_elems(const hc_coll_args_t *a, uint64_t cap_bytes,
                                          uint64_t def_bytes)
{
    uint64_t want = a->chunk_bytes ? a->chunk_bytes : def_bytes;
    if (want > cap_bytes)
        want = cap_bytes;
    uint64_t e = want / a->esize;
    return e ? e : 1;
}

/* What every first write of a schedule into its staging half depends on:
 * every rank has finished the operation two epochs back, the last one that
 * used this half (coll.h top; free when our previous operation waited for
 * every rank). */
static inline int32_t hc_shm_guard(hc_sched_t *s)
{
    return hc_sched_wait(s, HC_PEERS_ALL, HC_SEG_DONE, 0, 2, HC_NODEPS);
}

/* The guard of a writer of ring entries: every rank has finished the
 * operation that last used this epoch's entry (2 * HC_SEG_RING_SLOTS back);
 * usually known without reading a flag (hc_shm_bind_t.seen_done). */
static inline int32_t hc_shm_ring_guard(hc_sched_t *s)
{
    return hc_sched_wait(s, HC_PEERS_ALL, HC_SEG_DONE, 0, 2 * HC_SEG_RING_SLOTS, HC_NODEPS);
}

/* WAIT for flag `off` >= value of every other rank (one step); ids gets
 * it and INT32_MIN after it, so it is a dependency list. */
static inline void hc_shm_wait_others(hc_sched_t *s, uint64_t off, uint32_t value, uint8_t ago,
                                      const int32_t *deps, int32_t *ids)
{
    ids[0] = hc_sched_wait(s, HC_PEERS_ALL, off, value, ago, deps);
    ids[1] = INT32_MIN;
}

/* While WAIT step w polls, prefetch the lines of the awaited rank's half
 * that hold [off, off + len): a small chunk then arrives with its flag
 * instead of one cache miss later. Larger chunks are left to the copy.
 * Up to 9 lines, a whole tiny message (2-rank AllReduce 512 B through a
 * data slot: 0.91 -> 0.77 us against 4 lines; 16 lines bounced between
 * the cores, docs/PERFORMANCE.md). */
#define HC_SHM_PREFETCH_MAX (HC_SHM_TINY_LINES * HC_SHM_LINE)
static inline void hc_shm_wait_prefetch(hc_sched_t *s, int32_t w, uint64_t off, uint64_t len)
{
    if (len == 0 || len > HC_SHM_PREFETCH_MAX)
        return;
    const uint64_t a = off & ~(uint64_t)(HC_SHM_LINE - 1);
    hc_sched_wait_prefetch(s, w, a, (uint32_t)((off + len - a + HC_SHM_LINE - 1) / HC_SHM_LINE));
}

#endif /* HC_COLL_SHM_UTIL_H_ */
