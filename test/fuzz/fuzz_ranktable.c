/*
 * test/fuzz/fuzz_ranktable.c - the HCCL rank table (HcclCommInitClusterInfo,
 * or HCCL_TOPO_FILE holding JSON; topo/ranktable.c): parse; when it parses,
 * build the model over its ranks (topo/topo.c); what the model writes
 * (HCCL_TOPO_DUMP_FILE) must parse as a topology file.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size), err[600];
    hc_decl_t d;
    hc_decl_init(&d);
    int rc = hc_decl_parse_json(text, &d, err, sizeof(err));
    int nranks = d.nranks;
    hc_decl_free(&d);
    if (rc == 0 && nranks >= 1 && nranks <= 64)
        fuzz_model_dump(text, (uint32_t)nranks);
    free(text);
    return 0;
}
