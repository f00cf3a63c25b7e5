/*
 * test/fuzz/fuzz_env.c - the environment (src/base/env.c): each input line
 * NAME=VALUE with NAME starting HCCL_ is set, the table is loaded, and a
 * configuration that loads is printed and goes through the checks that
 * parse values further: algorithm names (src/comm/tune.c), HCCL_GROUP_<n> and
 * HCCL_NVLINK_MAP (the topology model of 8 ranks, topo/topo.c). Files the
 * values name are neither read nor written.
 */
#include "fuzz.h"
#include "src/comm/tune.h"

#define MAX_VARS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *devnull;
    char *text = fuzz_text(data, size), err[600];
    char *names[MAX_VARS];
    int nset = 0;
    if (devnull == NULL && (devnull = fopen("/dev/null", "w")) == NULL)
        abort();
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line && nset < MAX_VARS;
         line = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(line, '=');
        if (eq == NULL || strncmp(line, "HCCL_", 5) != 0)
            continue;
        *eq = '\0';
        if (setenv(line, eq + 1, 1) == 0)
            names[nset++] = line;
    }
    hc_config_t *cfg = malloc(sizeof(*cfg));
    if (cfg == NULL)
        abort();
    if (hc_env_load(cfg, err, sizeof(err)) == 0) {
        hc_env_print(devnull, cfg);
        cfg->tune_file[0] = cfg->topo_file[0] = cfg->topo_dump_file[0] = '\0';
        hc_tune_check_config(cfg);
        hc_topo_t *t = fuzz_model(8, cfg);
        if (t != NULL)
            hc_topo_destroy(t);
    }
    hc_env_free(cfg);
    free(cfg);
    for (int i = 0; i < nset; i++)
        unsetenv(names[i]);
    free(text);
    return 0;
}
