/*
 * src/features/window.h - registered buffers: memory from HcclMemAlloc that the
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

#include "src/transport/mover.h"

struct hc_comm;
/* Unmap and free every registration of c (destroy, membership change). */
void hc_win_comm_fini(struct hc_comm *c);

#endif /* HC_WINDOW_H_ */
