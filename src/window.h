/*
 * src/window.h - registered buffers: memory from HcclMemAlloc that the
 * ranks of a communicator on one host map into each other's address space
 * (HcclCommRegister), so that a single-copy algorithm reads and writes a
 * peer's SEND and RECV with loads and stores instead of system calls
 * (docs/DESIGN.md, "Registered buffers").
 *
 * HcclMemAlloc backs each allocation with a memfd; HcclCommRegister
 * gathers every rank's (pid, fd, inode, address, size) and opens each
 * peer's memfd through /proc/PID/fd, checking the inode, and maps it. A
 * peer whose memory cannot be mapped (another host, ptrace rules) keeps a
 * NULL map: the executor then copies with the kernel (process_vm_readv),
 * as without registration.
 */
#ifndef HC_WINDOW_H_
#define HC_WINDOW_H_

#include <stdint.h>

/* Rank q's registered range [base, base + size) of its address space, seen
 * at map here (NULL: not mapped). */
typedef struct hc_win_map {
    uint64_t base, size;
    char *map;
    void *mbase;  /* what to munmap: mbase, mlen */
    size_t mlen;
} hc_win_map_t;

/* One registration on a communicator (the handle HcclCommRegister gives). */
typedef struct hc_win {
    struct hc_win *next;
    uint32_t nranks;
    void *buf;             /* our own range */
    uint64_t size;
    hc_win_map_t m[];      /* [nranks]; ours has map NULL */
} hc_win_t;

/* Where rank q's bytes [addr, addr + len) are mapped here, or NULL. */
static inline char *hc_win_find(const hc_win_t *w, uint32_t q, uint64_t addr, uint64_t len)
{
    for (; w; w = w->next) {
        const hc_win_map_t *m = &w->m[q];
        if (m->map && addr >= m->base && addr - m->base <= m->size &&
            len <= m->size - (addr - m->base))
            return m->map + (addr - m->base);
    }
    return 0;
}

struct hc_comm;
/* Unmap and free every registration of c (destroy, membership change). */
void hc_win_comm_fini(struct hc_comm *c);

#endif /* HC_WINDOW_H_ */
