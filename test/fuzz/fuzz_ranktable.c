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
    if (rc == 0 && nranks >= 1 && nranks <= 64) {
        hc_config_t *cfg = calloc(1, sizeof(*cfg));
        if (cfg == NULL)
            abort();
        snprintf(cfg->topo_file, sizeof(cfg->topo_file), "%s", fuzz_file(text));
        hc_topo_t *t = fuzz_model((uint32_t)nranks, cfg);
        if (t != NULL) {
            char *out = NULL;
            size_t len = 0;
            FILE *f = open_memstream(&out, &len);
            if (f == NULL)
                abort();
            int wrc = hc_topo_write(t, f);
            fclose(f);
            hc_decl_init(&d);
            if (wrc == 0 && hc_decl_parse_text(out, &d, err, sizeof(err)) != 0) {
                fprintf(stderr, "the written model does not parse: %s\n%s", err, out);
                abort();
            }
            hc_decl_free(&d);
            free(out);
            hc_topo_destroy(t);
        }
        free(cfg);
    }
    free(text);
    return 0;
}
