/*
 * tools/hugepages.h - the benchmark tools' -H: buffers in transparent huge
 * pages, as a program that keeps its tensors in them has them. The buffer
 * is 2 MiB aligned and advised MADV_HUGEPAGE before its first touch (THP
 * "madvise" mode, the usual setting, backs only ranges advised so; "always"
 * backs large aligned ones anyway). On the AMD development VM this changes
 * what is fastest: 4 KiB pages were up to ~3 us each to touch again after
 * default Open MPI's call, huge pages were not, and single-copy (CMA)
 * reads of huge pages cost the kernel far less (docs/PERFORMANCE.md,
 * "Transparent huge pages").
 */
#ifndef HC_TOOLS_HUGEPAGES_H_
#define HC_TOOLS_HUGEPAGES_H_

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HC_THP_SIZE ((size_t)2 << 20)

/* *p = at least `bytes`, rounded up to whole huge pages, 2 MiB aligned
 * and advised huge. 0: allocated and advised; -1: no memory (*p NULL);
 * else the errno of a failed madvise (a kernel without THP: *p is
 * allocated, in ordinary pages). */
static inline int hc_alloc_huge(void **p, size_t bytes)
{
    bytes = (bytes + HC_THP_SIZE - 1) / HC_THP_SIZE * HC_THP_SIZE;
    if (posix_memalign(p, HC_THP_SIZE, bytes) != 0) {
        *p = NULL;
        return -1;
    }
#ifdef MADV_HUGEPAGE
    return madvise(*p, bytes, MADV_HUGEPAGE) == 0 ? 0 : errno;
#else
    return ENOSYS;
#endif
}

/* Bytes of [p, p + len) the kernel backs with huge pages: AnonHugePages of
 * the mappings that overlap it in /proc/self/smaps (at most len). */
static inline uint64_t hc_huge_bytes(const void *p, size_t len)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (f == NULL)
        return 0;
    const uintptr_t lo = (uintptr_t)p, hi = lo + len;
    char line[512];
    int in = 0;
    uint64_t sum = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long a, b, kb;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = a < hi && b > lo;
        else if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
            sum += (uint64_t)kb << 10;
    }
    fclose(f);
    return sum < len ? sum : len;
}

#endif /* HC_TOOLS_HUGEPAGES_H_ */
