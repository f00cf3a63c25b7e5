/*
 * src/base/file.c - reading a file that a user names (see file.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int check_mode(mode_t m)
{
    if (S_ISREG(m))
        return 0;
    return S_ISDIR(m) ? EISDIR : HC_FILE_NOT_REGULAR;
}

int hc_file_read(const char *path, size_t max, char **text, size_t *len)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno ? errno : EIO;
    int code = check_mode(st.st_mode);
    if (code != 0)
        return code;
    if ((unsigned long long)st.st_size > max)
        return HC_FILE_TOO_LARGE;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return errno ? errno : EIO;
    if (fstat(fd, &st) != 0 || (code = check_mode(st.st_mode)) != 0) {
        code = code ? code : errno ? errno : EIO;
        close(fd);
        return code;
    }
    /* st_size is a hint (0 in /proc, the file may grow): read to the end,
     * one byte past the cap at most */
    size_t cap = (size_t)st.st_size + 1, n = 0; /* st_size <= max */
    if (cap < 4096)
        cap = max + 1 < 4096 ? max + 1 : 4096;
    char *buf = malloc(cap + 1);
    if (buf == NULL) {
        close(fd);
        return ENOMEM;
    }
    for (;;) {
        if (n == cap) {
            if (cap > max) {
                code = HC_FILE_TOO_LARGE;
                break;
            }
            size_t ncap = cap > max / 2 ? max + 1 : cap * 2;
            char *nb = realloc(buf, ncap + 1);
            if (nb == NULL) {
                code = ENOMEM;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            code = errno ? errno : EIO;
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    if (code == 0 && n > max)
        code = HC_FILE_TOO_LARGE;
    if (code == 0 && memchr(buf, '\0', n) != NULL)
        code = HC_FILE_NOT_TEXT;
    if (code != 0) {
        free(buf);
        return code;
    }
    buf[n] = '\0';
    *text = buf;
    if (len != NULL)
        *len = n;
    return 0;
}

const char *hc_file_strerror(int code, size_t max, char *buf, size_t buflen)
{
    switch (code) {
    case HC_FILE_NOT_REGULAR:
        snprintf(buf, buflen, "not a regular file (a FIFO, socket or device)");
        break;
    case HC_FILE_TOO_LARGE:
        snprintf(buf, buflen, "larger than %zu bytes (the limit for this file)", max);
        break;
    case HC_FILE_NOT_TEXT:
        snprintf(buf, buflen, "contains a NUL byte (not a text file?)");
        break;
    case EISDIR:
        snprintf(buf, buflen, "a directory, not a file");
        break;
    default:
        snprintf(buf, buflen, "%s", strerror(code));
        break;
    }
    return buf;
}
