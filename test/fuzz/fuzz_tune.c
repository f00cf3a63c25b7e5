/*
 * test/fuzz/fuzz_tune.c - the tuning file (HCCL_TUNE_FILE, src/comm/tune.c).
 */
#include "fuzz.h"
#include "src/comm/tune.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size), err[600];
    hc_tune_check_text(text, "fuzz", err, sizeof(err));
    free(text);
    return 0;
}
