/*
 * src/transport/mover.c - node-local movers (src/transport/mover.h): the kernel's copy between
 * two processes.
 */
#define _GNU_SOURCE /* process_vm_readv */
#include "mover.h"

#include <errno.h>
#include <sys/uio.h>

int hc_mover_cma(pid_t pid, int read, void *mine, uint64_t theirs, uint64_t len, uint64_t *done)
{
    *done = 0;
    if (pid == 0)
        return EFAULT;
    while (*done < len) {
        struct iovec l = {(char *)mine + *done, len - *done};
        struct iovec r = {(void *)(uintptr_t)(theirs + *done), len - *done};
        ssize_t k = read ? process_vm_readv(pid, &l, 1, &r, 1, 0)
                         : process_vm_writev(pid, &l, 1, &r, 1, 0);
        if (k > 0) {
            *done += (uint64_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        return k < 0 ? errno : EFAULT;
    }
    return 0;
}
