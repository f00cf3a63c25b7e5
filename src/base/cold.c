/*
 * src/base/cold.c - writing a destination whose lines another core holds (see
 * cold.h).
 *
 * Why: a store to a cache line that another core holds must first take the
 * line from it (a read for ownership at the core-to-core latency, 65-300
 * ns on the development VM), and a core keeps only so many of those in
 * flight. Open MPI's default single-copy path reads the peer's buffer with
 * process_vm_readv, so in a benchmark that alternates with it on the same
 * buffers (PERF.md's rule) every RECV line hcomm is about to write was
 * just read by the other core: a 2-rank 2 MiB AllReduce folding into RECV
 * took 340-430 us instead of 130-150, and writing 2 MiB of such lines took
 * 131 us with 64-byte stores against 51 us with non-temporal ones, which
 * do not read the line first. Into lines of our own cache, non-temporal
 * stores are the slow ones (51 vs 22 us for 2 MiB, 7.4 vs 1.4 us for 256
 * KiB), and into lines only in memory the two are equal; so the writer
 * times its first 16 KiB with ordinary stores and streams the rest only
 * when that ran slower than HC_SLOW_LINE_NS a line. Measurements:
 * docs/PERFORMANCE.md, "Destinations another core has read".
 */
#include "cold.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <pthread.h>

/* Slow: more than this many ns per 64-byte line over the timed sample.
 * Measured per 16 KiB sample of a 2-rank AllReduce fold into RECV: 1.5-4.5
 * ns with RECV in this core's cache or in memory, 7-12 with RECV lines
 * that the other core had read (docs/PERFORMANCE.md). */
#define HC_SLOW_LINE_NS 6.0

static pthread_once_t cal_once = PTHREAD_ONCE_INIT;
static uint64_t slow_ticks_klines = UINT64_MAX >> 32; /* per 1024 lines; never, uncalibrated */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* TSC ticks per ns, measured once over ~100 us. */
static void calibrate(void)
{
    const double t0 = now_ns();
    const uint64_t c0 = __rdtsc();
    double t1;
    do
        t1 = now_ns();
    while (t1 - t0 < 100e3);
    const uint64_t c1 = __rdtsc();
    const double per_ns = (double)(c1 - c0) / (t1 - t0);
    if (per_ns > 0.1 && per_ns < 100)
        slow_ticks_klines = (uint64_t)(HC_SLOW_LINE_NS * per_ns * 1024);
}

uint64_t hc_tsc(void)
{
    return __rdtsc();
}

static int force; /* hc_cold_force */

void hc_cold_force(int mode)
{
    __atomic_store_n(&force, mode, __ATOMIC_RELAXED);
}

int hc_lines_slow(uint64_t ticks, size_t bytes)
{
    const int f = __atomic_load_n(&force, __ATOMIC_RELAXED);
    if (f)
        return f > 0;
    pthread_once(&cal_once, calibrate);
    return ticks > (bytes / 64) * slow_ticks_klines / 1024;
}

__attribute__((target("avx512f"))) static void copy_nt512(char *d, const char *s, size_t n)
{
    for (; n >= 256; n -= 256, d += 256, s += 256) {
        __m512i a = _mm512_loadu_si512(s), b = _mm512_loadu_si512(s + 64);
        __m512i c = _mm512_loadu_si512(s + 128), e = _mm512_loadu_si512(s + 192);
        _mm512_stream_si512((__m512i *)d, a);
        _mm512_stream_si512((__m512i *)(d + 64), b);
        _mm512_stream_si512((__m512i *)(d + 128), c);
        _mm512_stream_si512((__m512i *)(d + 192), e);
    }
    for (; n >= 64; n -= 64, d += 64, s += 64)
        _mm512_stream_si512((__m512i *)d, _mm512_loadu_si512(s));
    _mm256_zeroupper();
    memcpy(d, s, n);
}

static void copy_nt128(char *d, const char *s, size_t n)
{
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)s), b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + 32)), e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    memcpy(d, s, n);
}

void hc_copy_nt(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    const size_t head = (size_t)(-(uintptr_t)d & 63); /* up to d's first whole line */
    if (n < head + 64) {
        memmove(d, s, n);
        return;
    }
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    if (__builtin_cpu_supports("avx512f")) /* (a load: libgcc detects at start-up) */
        copy_nt512(d, s, n);
    else
        copy_nt128(d, s, n);
}

#else /* not x86-64: ordinary stores everywhere */

uint64_t hc_tsc(void)
{
    return 0;
}

static int force;

void hc_cold_force(int mode)
{
    force = mode;
}

int hc_lines_slow(uint64_t ticks, size_t bytes)
{
    (void)ticks, (void)bytes;
    return force > 0;
}

void hc_copy_nt(void *dst, const void *src, size_t n)
{
    memmove(dst, src, n);
}

#endif
