/*
 * src/transport/mover.h - node-local movers: how this process reaches the memory of
 * another process on its host, for the executor's single-copy steps
 * (HC_STEP_READ, WRITE, XREDUCE). Either the peer's range is mapped here
 * (a registered window: HcclCommRegister, src/features/window.h, fills the maps),
 * or the kernel copies it (cross-memory attach: process_vm_readv/writev).
 */
#ifndef HC_MOVER_H_
#define HC_MOVER_H_

#include <stdint.h>
#include <sys/types.h>

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

/* Where rank q's bytes [addr, addr + len) are mapped here (a registered
 * window), or NULL. */
static inline char *hc_mover_map(const hc_win_t *w, uint32_t q, uint64_t addr, uint64_t len)
{
    for (; w; w = w->next) {
        const hc_win_map_t *m = &w->m[q];
        if (m->map && addr >= m->base && addr - m->base <= m->size &&
            len <= m->size - (addr - m->base))
            return m->map + (addr - m->base);
    }
    return 0;
}

/* Copy len bytes between our `mine` and address `theirs` in process pid
 * (read: from it into mine; else from mine into it), by the kernel. On
 * return *done bytes moved; 0, or the errno that stopped it (EFAULT when
 * pid is 0: no process known). */
int hc_mover_cma(pid_t pid, int read, void *mine, uint64_t theirs, uint64_t len, uint64_t *done);

#endif /* HC_MOVER_H_ */
