/*
 * src/base/cold.h - writing a destination whose cache lines this core does not
 * hold (cold.c explains why and what was measured).
 *
 * hc_tsc, hc_lines_slow: a writer times the first HC_COLD_SAMPLE bytes it
 * writes with ordinary stores (hc_tsc before and after); hc_lines_slow says
 * whether that took more than HC_SLOW_LINE_NS (cold.c) per 64-byte line,
 * in which case the rest goes faster with non-temporal stores. Off
 * x86-64 it says no (unless forced, hc_cold_force).
 *
 * hc_copy_nt: memcpy that writes the whole lines of dst with non-temporal
 * stores (no read for ownership); the caller fences (sfence) before it
 * publishes the data. The ranges must not overlap.
 */
#ifndef HC_COLD_H_
#define HC_COLD_H_

#include <stddef.h>
#include <stdint.h>

/* Only steps writing at least HC_COLD_MIN bytes of RECV are sampled, and
 * only in schedules whose RECV ends within HC_COLD_MAX_RECV: a larger RECV
 * is not in any cache in the first place, and there memory bandwidth, not
 * ownership, makes a sample slow (non-temporal stores were slower there on
 * the AMD VM: AllReduce 32 MiB 4.8-5.5 ms against 4.1). A schedule with
 * nt_recv (a tuning rule's option nt) streams every such step without a
 * sample: on the Intel VM, where that won for large messages, the built-in
 * table asks for it (docs/PERFORMANCE.md, "Streaming large messages into
 * RECV"). */
#define HC_COLD_MIN ((size_t)64 << 10)
#define HC_COLD_MAX_RECV ((uint64_t)8 << 20)

#define HC_COLD_SAMPLE ((size_t)16 << 10)

uint64_t hc_tsc(void);
int hc_lines_slow(uint64_t ticks, size_t bytes);
/* Tests: 1 every sample counts as slow, -1 none does, 0 measured (default). */
void hc_cold_force(int mode);
void hc_copy_nt(void *dst, const void *src, size_t n);

#endif /* HC_COLD_H_ */
