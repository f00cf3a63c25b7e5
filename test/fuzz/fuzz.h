/*
 * test/fuzz/fuzz.h - what the harnesses share (docs/FUZZING.md).
 *
 * A harness is test/fuzz/fuzz_NAME.c with LLVMFuzzerTestOneInput; its seed
 * corpus is test/fuzz/corpus/NAME/. libFuzzer drives it under clang
 * (make fuzz, test/fuzz/run.sh); test/fuzz/replay.c feeds it the corpus
 * under the normal compiler (make check). A harness must not write files,
 * keep state from one input to the next, or log (the expected errors would
 * flood the output).
 */
#ifndef HC_FUZZ_H_
#define HC_FUZZ_H_

#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/base/env.h"
#include "src/base/log.h"
#include "topo/topo.h"
#include "topo/topo_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a C string (cut at a NUL byte), malloc'ed; logging off. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    hc_log_configure(HC_LOG_NONE, 0, "");
    char *s = malloc(size + 1);
    if (s == NULL)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* A file holding text, for the code that takes a path: a memfd (a regular
 * file in memory), rewritten for each input. Its path, /proc/self/fd/N. */
static inline const char *fuzz_file(const char *text)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("hcomm-fuzz", MFD_CLOEXEC);
        if (fd < 0)
            abort();
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    }
    size_t len = strlen(text);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, len, 0) != (ssize_t)len)
        abort();
    return path;
}

/* The topology model of n ranks on one host (cfg: the overrides, and the
 * file in cfg->topo_file). Returns the model or NULL (an error). */
static inline hc_topo_t *fuzz_model(uint32_t n, const hc_config_t *cfg)
{
    static char host[] = "fuzzhost";
    static uint8_t blob[512];
    hc_topo_member_t *m = calloc(n, sizeof(*m));
    if (m == NULL)
        abort();
    for (uint32_t i = 0; i < n; i++) {
        m[i].host = host;
        m[i].blob = blob; /* no facts: not detected */
        m[i].world = i;
    }
    hc_topo_t *t = NULL;
    hc_topo_reset();
    if (hc_topo_create(n, 0, m, cfg, &t) != 0)
        t = NULL;
    free(m);
    return t;
}

/* The model of n ranks over the declarations in text (a topology file or
 * a rank table that parsed), and what it writes (HCCL_TOPO_DUMP_FILE) must
 * parse as a topology file: abort() otherwise. */
static inline void fuzz_model_dump(const char *text, uint32_t n)
{
    hc_config_t *cfg = calloc(1, sizeof(*cfg));
    if (cfg == NULL)
        abort();
    snprintf(cfg->topo_file, sizeof(cfg->topo_file), "%s", fuzz_file(text));
    hc_topo_t *t = fuzz_model(n, cfg);
    free(cfg);
    if (t == NULL)
        return;
    char *out = NULL, err[600];
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (f == NULL)
        abort();
    int rc = hc_topo_write(t, f);
    fclose(f);
    hc_decl_t d;
    hc_decl_init(&d);
    if (rc == 0 && hc_decl_parse_text(out, &d, err, sizeof(err)) != 0) {
        fprintf(stderr, "the written model does not parse: %s\n%s", err, out);
        abort();
    }
    hc_decl_free(&d);
    free(out);
    hc_topo_destroy(t);
}

#endif /* HC_FUZZ_H_ */
