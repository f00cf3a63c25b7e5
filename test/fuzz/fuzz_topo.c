/*
 * test/fuzz/fuzz_topo.c - the topology file (HCCL_TOPO_FILE, topo/topo_file.c):
 * parse; when it parses, build the model over its ranks (topo/topo.c), and
 * what the model writes (HCCL_TOPO_DUMP_FILE) must parse again.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size), err[600];
    hc_decl_t d;
    hc_decl_init(&d);
    int rc = hc_decl_parse_text(text, &d, err, sizeof(err));
    int nranks = d.nranks;
    hc_decl_free(&d);
    if (rc == 0)
        fuzz_model_dump(text, nranks >= 1 && nranks <= 64 ? (uint32_t)nranks : 8);
    free(text);
    return 0;
}
