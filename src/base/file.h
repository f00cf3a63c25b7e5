/*
 * src/base/file.h - reading a file that a user names (HCCL_TOPO_FILE, the rank
 * table of HcclCommInitClusterInfo, HCCL_TUNE_FILE): one rule for all.
 *
 * Only a regular file is read: a FIFO would block init forever, /dev/zero
 * would be read until memory runs out. The path is checked with stat before
 * it is opened (a device is never opened), opened without blocking and
 * checked again with fstat (it may have been replaced in between). The
 * caller gives a size cap; the contents are text, so a NUL byte is refused.
 */
#ifndef HC_FILE_H_
#define HC_FILE_H_

#include <stddef.h>

/* Codes of hc_file_read besides the errno values (all negative). */
#define HC_FILE_NOT_REGULAR (-1) /* a FIFO, socket or device */
#define HC_FILE_TOO_LARGE (-2)   /* more than the cap */
#define HC_FILE_NOT_TEXT (-3)    /* holds a NUL byte */

/* Read the text file at path, at most max bytes. Returns 0 with *text
 * (malloc'ed, NUL-terminated) and *len (may be NULL), or a code: an errno
 * value (ENOENT, EACCES, EISDIR, ENOMEM, EIO ...) or HC_FILE_*. */
int hc_file_read(const char *path, size_t max, char **text, size_t *len);

/* A code of hc_file_read in words ("not a regular file (a FIFO, socket or
 * device)", "larger than 1048576 bytes", strerror); max is the cap given. */
const char *hc_file_strerror(int code, size_t max, char *buf, size_t buflen);

#endif /* HC_FILE_H_ */
