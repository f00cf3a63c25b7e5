/*
 * test/fuzz/fuzz_algo.c - algorithm names: HCCL_ALGO ("level0:NA;level1:ring",
 * "allreduce=level0:H-D_R/...") and the HCCL_<COLL>_ALGO variables, through
 * the checks hc_tune_create makes (src/comm/tune.c).
 */
#include "fuzz.h"
#include "src/comm/tune.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static hc_config_t base; /* the defaults */
    static int loaded;
    char *text = fuzz_text(data, size), err[600];
    if (!loaded) {
        if (hc_env_load(&base, err, sizeof(err)) != 0)
            abort();
        base.tune_file[0] = '\0';
        loaded = 1;
    }
    hc_tune_check_hccl_algo(text, err, sizeof(err));
    hc_config_t *cfg = malloc(sizeof(*cfg));
    if (cfg == NULL)
        abort();
    *cfg = base;
    size_t len = strlen(text);
    if (len < sizeof(cfg->algo))
        memcpy(cfg->algo, text, len + 1);
    if (len < sizeof(cfg->allreduce_algo)) {
        char *const names[] = {cfg->allreduce_algo, cfg->bcast_algo, cfg->allgather_algo,
                               cfg->reducescatter_algo, cfg->alltoall_algo, cfg->reduce_algo};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            memcpy(names[i], text, len + 1);
    }
    hc_tune_check_config(cfg);
    free(cfg);
    free(text);
    return 0;
}
