/*
 * src/features/window.c - HcclMemAlloc / HcclMemFree and HcclCommRegister /
 * HcclCommDeregister (extensions; src/features/window.h, docs/DESIGN.md
 * "Registered buffers").
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hccl/hccl.h>

#include "src/sched/group.h"
#include "src/comm/comm.h"
#include "src/comm/op.h"
#include "src/base/log.h"
#include "src/sched/stream.h"
#include "window.h"

/* ---------------------------------------------------------------- allocations */

typedef struct {
    char *base;
    size_t size; /* mapped bytes (whole pages) */
    int fd;
    uint64_t dev, ino;
    uint32_t refs; /* registrations that name it */
} alloc_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static alloc_t *allocs;
static uint32_t nallocs, cap_allocs;

/* The allocation holding [p, p + len), under lock; NULL if none. */
static alloc_t *alloc_of(const void *p, size_t len)
{
    const char *c = p;
    for (uint32_t i = 0; i < nallocs; i++)
        if (c >= allocs[i].base && (size_t)(c - allocs[i].base) <= allocs[i].size &&
            len <= allocs[i].size - (size_t)(c - allocs[i].base))
            return &allocs[i];
    return NULL;
}

/* Huge pages: an allocation of at least HUGE_MIN bytes is backed by
 * hugetlbfs pages of HUGE_PAGE bytes where the system has enough of them
 * reserved (/proc/sys/vm/nr_hugepages), else by ordinary pages. Fewer
 * pages for the peers' mappings too; with 4 KiB pages a 64 MiB AllReduce
 * ran up to 20x slower after another library unmapped memory in the same
 * process (docs/PERFORMANCE.md, "Huge pages for registered memory"). */
#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_MIN HUGE_PAGE

/* A memfd of `*bytes` (rounded up to its page size) mapped shared and
 * pre-faulted (the first touch of a page costs ~10 us on the development
 * VM: not in a collective's time); in huge pages when `huge`, else
 * MAP_FAILED with *fd -1 (errno set). */
static char *segment(size_t *bytes, int huge, int *fd, struct stat *st)
{
    char *p = MAP_FAILED;
    const size_t pg = huge ? HUGE_PAGE : (size_t)sysconf(_SC_PAGESIZE);
    const size_t b = (*bytes + pg - 1) / pg * pg;
    unsigned flags = MFD_CLOEXEC;
#ifdef MFD_HUGETLB
    if (huge)
        flags |= MFD_HUGETLB;
#else
    if (huge) {
        errno = ENOSYS;
        *fd = -1;
        return MAP_FAILED;
    }
#endif
    *fd = memfd_create("hcomm-mem", flags);
    /* hugetlbfs reserves its pages at mmap: without enough of them it fails */
    if (*fd >= 0 && ftruncate(*fd, (off_t)b) == 0 && fstat(*fd, st) == 0)
        p = mmap(NULL, b, PROT_READ | PROT_WRITE, MAP_SHARED | (huge ? MAP_POPULATE : 0), *fd,
                 0);
    if (p == MAP_FAILED) {
        const int e = errno;
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        errno = e;
        return MAP_FAILED;
    }
    if (!huge) {
#ifdef MADV_HUGEPAGE
        (void)madvise(p, b, MADV_HUGEPAGE); /* where shmem may use huge pages */
#endif
        for (size_t o = 0; o < b; o += pg)
            ((volatile char *)p)[o] = 0;
    }
    *bytes = b;
    return p;
}

HcclResult HcclMemAlloc(void **ptr, size_t size)
{
    if (ptr == NULL) {
        HC_ERROR(HC_SUB_INIT, "HcclMemAlloc: ptr is NULL");
        return HCCL_E_PTR;
    }
    *ptr = NULL;
    if (size == 0) {
        HC_ERROR(HC_SUB_INIT, "HcclMemAlloc: size is 0");
        return HCCL_E_PARA;
    }
    if (size > SIZE_MAX - HUGE_PAGE) {
        HC_ERROR(HC_SUB_INIT, "HcclMemAlloc: size %zu is too large", size);
        return HCCL_E_PARA;
    }
    size_t bytes = size;
    struct stat st;
    int fd;
    char *p = size >= HUGE_MIN ? segment(&bytes, 1, &fd, &st) : MAP_FAILED;
    const int huge = p != MAP_FAILED, huge_errno = errno;
    if (!huge) /* (segment changes bytes only when it succeeds) */
        p = segment(&bytes, 0, &fd, &st);
    if (p == MAP_FAILED) {
        HC_ERROR(HC_SUB_INIT, "HcclMemAlloc: a shared segment of %zu B: %s", size,
                 strerror(errno));
        return HCCL_E_MEMORY;
    }
    if (huge || size < HUGE_MIN)
        HC_INFO(HC_SUB_INIT, "HcclMemAlloc: %zu B at %p in %s", bytes, (void *)p,
                huge ? "2 MiB huge pages" : "ordinary pages");
    else
        HC_INFO(HC_SUB_INIT, "HcclMemAlloc: %zu B at %p in ordinary pages (%s%s)", bytes,
                (void *)p, huge_errno == ENOMEM ? "not enough huge pages reserved: " : "",
                huge_errno == ENOMEM ? "/proc/sys/vm/nr_hugepages" : strerror(huge_errno));
    pthread_mutex_lock(&lock);
    if (nallocs == cap_allocs) {
        uint32_t nc = cap_allocs ? 2 * cap_allocs : 16;
        alloc_t *na = realloc(allocs, nc * sizeof(*na));
        if (na == NULL) {
            pthread_mutex_unlock(&lock);
            munmap(p, bytes);
            close(fd);
            return HCCL_E_MEMORY;
        }
        allocs = na;
        cap_allocs = nc;
    }
    allocs[nallocs++] = (alloc_t){p, bytes, fd, (uint64_t)st.st_dev, (uint64_t)st.st_ino, 0};
    pthread_mutex_unlock(&lock);
    *ptr = p;
    return HCCL_SUCCESS;
}

HcclResult HcclMemFree(void *ptr)
{
    if (ptr == NULL)
        return HCCL_SUCCESS;
    pthread_mutex_lock(&lock);
    uint32_t i = 0;
    while (i < nallocs && allocs[i].base != ptr)
        i++;
    if (i == nallocs) {
        pthread_mutex_unlock(&lock);
        HC_ERROR(HC_SUB_INIT, "HcclMemFree: ptr %p was not returned by HcclMemAlloc (or is "
                 "freed already)", ptr);
        return HCCL_E_PARA;
    }
    if (allocs[i].refs) {
        const uint32_t refs = allocs[i].refs;
        pthread_mutex_unlock(&lock);
        HC_ERROR(HC_SUB_INIT, "HcclMemFree: ptr %p is still registered (%u HcclCommRegister "
                 "handles): HcclCommDeregister first", ptr, refs);
        return HCCL_E_PARA;
    }
    alloc_t a = allocs[i];
    allocs[i] = allocs[--nallocs];
    pthread_mutex_unlock(&lock);
    munmap(a.base, a.size);
    close(a.fd);
    return HCCL_SUCCESS;
}

/* ---------------------------------------------------------------- registration */

/* What each rank tells the others about its range (ok 0: not from
 * HcclMemAlloc). */
typedef struct {
    int32_t ok, pid, fd, pad;
    uint64_t dev, ino, base, size, off; /* off: the range's offset in the memfd */
} win_desc_t;

/* Map rank q's range here, or leave m->map NULL (logged): the executor
 * then copies with system calls. */
static void map_peer(const hc_comm_t *c, uint32_t q, const win_desc_t *d, hc_win_map_t *m)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)d->pid, (int)d->fd);
    const char *why = NULL;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        why = strerror(errno);
    else if (fstat(fd, &st) != 0)
        why = strerror(errno);
    else if ((uint64_t)st.st_dev != d->dev || (uint64_t)st.st_ino != d->ino)
        why = "not the same segment (another host?)";
    if (why == NULL) {
        /* hugetlbfs (st_blksize: its page size) maps whole huge pages */
        uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
        if ((uint64_t)st.st_blksize > pg)
            pg = (uint64_t)st.st_blksize;
        const uint64_t pad = d->off % pg;
        void *p = mmap(NULL, pad + d->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                       (off_t)(d->off - pad));
        if (p == MAP_FAILED) {
            why = strerror(errno);
        } else {
            m->mbase = p;
            m->mlen = (pad + d->size + pg - 1) / pg * pg;
            m->map = (char *)p + pad;
        }
    }
    if (fd >= 0)
        close(fd);
    if (why)
        HC_INFO(HC_SUB_TRANSPORT, "comm %s: rank %u's registered buffer (%s) is not mapped "
                "here: %s; its copies take the kernel's path", c->name, q, path, why);
}

static void win_free(hc_win_t *w)
{
    for (uint32_t q = 0; q < w->nranks; q++)
        if (w->m[q].mbase)
            munmap(w->m[q].mbase, w->m[q].mlen);
    pthread_mutex_lock(&lock);
    alloc_t *a = alloc_of(w->buf, w->size);
    if (a && a->refs)
        a->refs--;
    pthread_mutex_unlock(&lock);
    free(w);
}

/* Registrations change the algorithm table's condition `registered`:
 * forget the previous operation's choice. */
static void changed(hc_comm_t *c)
{
    c->memo.ent = NULL;
}

HcclResult HcclCommRegister(HcclComm comm, void *addr, uint64_t size, void **handle,
                            uint32_t flag)
{
    void *buff = addr;
    static const char fn[] = "HcclCommRegister";
    hc_comm_t *c;
    int rc = hc_comm_get(comm, fn, &c);
    if (rc != HCCL_SUCCESS)
        return (HcclResult)rc;
    if (handle == NULL) {
        HC_ERROR(HC_SUB_INIT, "%s: handle is NULL", fn);
        return HCCL_E_PTR;
    }
    *handle = NULL;
    if (buff == NULL) {
        HC_ERROR(HC_SUB_INIT, "%s: addr is NULL", fn);
        return HCCL_E_PTR;
    }
    if (size == 0 || size > SIZE_MAX / 2) {
        HC_ERROR(HC_SUB_INIT, "%s: size %llu: must be 1 to the size of an allocation", fn,
                 (unsigned long long)size);
        return HCCL_E_PARA;
    }
    if (flag != 0) {
        HC_ERROR(HC_SUB_INIT, "%s: flag %u: HCCL reserves it, and it must be 0", fn, flag);
        return HCCL_E_PARA;
    }
    if (hc_group_active()) {
        HC_ERROR(HC_SUB_INIT, "%s: called between HcclGroupStart and HcclGroupEnd", fn);
        return HCCL_E_PARA;
    }
    const uint32_t n = c->nranks;
    win_desc_t *all = calloc(n, sizeof(*all));
    hc_win_t *w = calloc(1, sizeof(*w) + n * sizeof(hc_win_map_t));
    if (all == NULL || w == NULL) { /* the peers' allgather times out, naming this rank */
        free(all);
        free(w);
        return HCCL_E_MEMORY;
    }
    win_desc_t mine = {0};
    pthread_mutex_lock(&lock);
    alloc_t *a = alloc_of(buff, size);
    if (a) {
        mine = (win_desc_t){1, (int32_t)getpid(), a->fd, 0, a->dev, a->ino,
                            (uint64_t)(uintptr_t)buff, size, (uint64_t)((char *)buff - a->base)};
        a->refs++; /* HcclMemFree refuses it from now on */
    }
    pthread_mutex_unlock(&lock);
    if (!mine.ok)
        HC_ERROR(HC_SUB_INIT, "%s: addr %p (%llu B) is not inside memory from HcclMemAlloc",
                 fn, buff, (unsigned long long)size);
    hc_op_t o;
    hc_op_init(&o, fn, HC_COLL_ALLGATHER, sizeof(mine), HCCL_DATA_TYPE_UINT8, 1,
               HCCL_REDUCE_SUM, &mine, all);
    rc = hc_comm_run(c, &o);
    for (uint32_t q = 0; rc == HCCL_SUCCESS && q < n; q++)
        if (!all[q].ok) {
            if (q != c->rank)
                HC_ERROR(HC_SUB_INIT, "%s: rank %u's addr is not inside memory from "
                         "HcclMemAlloc: nothing registered", fn, q);
            rc = HCCL_E_PARA;
        }
    if (rc != HCCL_SUCCESS) {
        if (mine.ok) {
            pthread_mutex_lock(&lock);
            alloc_t *b = alloc_of(buff, size);
            if (b && b->refs)
                b->refs--;
            pthread_mutex_unlock(&lock);
        }
        free(all);
        free(w);
        return (HcclResult)rc;
    }
    w->nranks = n;
    w->buf = buff;
    w->size = size;
    uint32_t mapped = 0;
    for (uint32_t q = 0; q < n; q++) {
        w->m[q].base = all[q].base;
        w->m[q].size = all[q].size;
        if (q != c->rank)
            map_peer(c, q, &all[q], &w->m[q]);
        mapped += w->m[q].map != NULL;
    }
    free(all);
    hc_comm_lock(c);
    w->next = c->wins;
    c->wins = w;
    changed(c);
    hc_comm_unlock(c);
    HC_INFO(HC_SUB_TRANSPORT, "comm %s: registered %p (%zu B), mapped here from %u of %u "
            "peers", c->name, buff, size, mapped, n - 1);
    *handle = w;
    return HCCL_SUCCESS;
}

HcclResult HcclCommDeregister(HcclComm comm, void *handle)
{
    static const char fn[] = "HcclCommDeregister";
    hc_comm_t *c;
    int rc = hc_comm_get(comm, fn, &c);
    if (rc != HCCL_SUCCESS)
        return (HcclResult)rc;
    hc_comm_lock(c);
    hc_win_t **pp = &c->wins;
    while (*pp && *pp != handle)
        pp = &(*pp)->next;
    hc_win_t *w = *pp;
    if (w)
        *pp = w->next;
    changed(c);
    hc_comm_unlock(c);
    if (w == NULL) {
        HC_ERROR(HC_SUB_INIT, "%s: handle %p is not a registration of communicator %s", fn,
                 handle, c->name);
        return handle ? HCCL_E_PARA : HCCL_E_PTR;
    }
    win_free(w);
    return HCCL_SUCCESS;
}

void hc_win_comm_fini(hc_comm_t *c)
{
    while (c->wins) {
        hc_win_t *w = c->wins;
        c->wins = w->next;
        win_free(w);
    }
    changed(c);
}
