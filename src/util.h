/*
 * src/util.h - small helpers for the hot paths.
 *
 * hc_zero: memset(p, 0, n) that stays a call into the C library. For a
 * constant size GCC inlines memset as `rep stosq` (generic tuning), whose
 * start-up costs ~30 ns on the machines measured here (AMD, virtualized)
 * whatever the size, while glibc's memset clears a few hundred bytes with
 * vector stores in a few ns; a blocking 8-byte AllReduce took four such
 * memsets before (docs/PERFORMANCE.md). The empty asm hides the size.
 */
#ifndef HC_UTIL_H_
#define HC_UTIL_H_

#include <stddef.h>
#include <string.h>

static inline void hc_zero(void *p, size_t n)
{
    __asm__("" : "+r"(n));
    memset(p, 0, n);
}

#endif /* HC_UTIL_H_ */
