/*
 * src/base/util.h - small helpers for the hot paths.
 *
 * hc_zero: memset(p, 0, n) that stays a call into the C library. For a
 * constant size GCC inlines memset as `rep stosq` (generic tuning), whose
 * start-up costs ~30 ns on the machines measured here (AMD, virtualized)
 * whatever the size, while glibc's memset clears a few hundred bytes with
 * vector stores in a few ns; a blocking 8-byte AllReduce took four such
 * memsets before (docs/PERFORMANCE.md). The empty asm hides the size.
 *
 * hc_copy: memmove(d, s, n) that hands the C library at most HC_COPY_PIECE
 * bytes at a time when the ranges do not overlap. glibc (2.36, Debian 12)
 * copies with `rep movsb` below x86_rep_movsb_stop_threshold, which on AMD
 * is the L2 size (1 MiB on the machines measured here), and above it with a
 * vector loop that is 3-4x slower when the source was just written by
 * another core: a 1 MiB chunk handed from one process to another through
 * shared staging moved at 6.5 GB/s, the same chunk in 512 KiB pieces at
 * 25.6 GB/s (docs/PERFORMANCE.md, "Copies of 1 MiB and more").
 *
 * HC_HOT: on the functions every small collective call runs (the API
 * entry, begin/end, the executor, the staging binding). GCC puts them in
 * .text.hot, which the linker gathers in one place: the per-call code
 * then spans 6 pages of the library instead of 12. Where the TLB is
 * flushed between calls (a process switch with more ranks than cores, any
 * system call on a kernel without PCID, as here) each page costs a miss;
 * 4-rank Broadcast of 8-256 B went from 0.40 to 0.36 us
 * (docs/PERFORMANCE.md, "Hot code in one place"). Keep the set small:
 * every function added spreads it again.
 */
#ifndef HC_UTIL_H_
#define HC_UTIL_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define HC_HOT __attribute__((hot))

/* Seconds on the monotonic clock: deadlines and timings. */
static inline double hc_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline void hc_zero(void *p, size_t n)
{
    __asm__("" : "+r"(n));
    memset(p, 0, n);
}

#define HC_COPY_PIECE ((size_t)512 << 10)

static inline void hc_copy(void *d, const void *s, size_t n)
{
    char *dp = (char *)d;
    const char *sp = (const char *)s;
    const uintptr_t da = (uintptr_t)d, sa = (uintptr_t)s;
    if (n > HC_COPY_PIECE && (da + n <= sa || sa + n <= da)) {
        for (; n > HC_COPY_PIECE; n -= HC_COPY_PIECE, dp += HC_COPY_PIECE, sp += HC_COPY_PIECE)
            memcpy(dp, sp, HC_COPY_PIECE);
    }
    memmove(dp, sp, n);
}

/* hc_copy_lines: memcpy for a few lines that another core is polling (a
 * small message in shared staging): every 64-byte line of dst is written
 * by stores that fall in that line only, one line after the other. The C
 * library copies 256 bytes with four unaligned 64-byte stores, each of
 * which splits two lines, so that a line can be taken back by the reader's
 * prefetch between its two stores and must be fetched again. */
#define HC_COPY_LINES_MAX 576u /* at least HC_SHM_TINY_MAX (coll/shm_util.h) */

static inline void hc_copy_lines(void *d, const void *s, size_t n)
{
    char *dp = (char *)d;
    const char *sp = (const char *)s;
    size_t head = (size_t)(-(uintptr_t)dp & 63);
    if (head > n)
        head = n;
    memcpy(dp, sp, head);
    dp += head, sp += head, n -= head;
    for (; n >= 64; n -= 64, dp += 64, sp += 64)
        memcpy(dp, sp, 64);
    memcpy(dp, sp, n);
}

#endif /* HC_UTIL_H_ */
