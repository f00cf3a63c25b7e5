/*
 * test/fuzz/fuzz_topo.c - the topology file (HCCL_TOPO_FILE, topo/topo_file.c):
 * parse; when it parses, build the model over its ranks (topo/topo.c), and
 * what the model writes (HCCL_TOPO_DUMP_FILE) must parse again.
 */
#include "fuzz.h"

/* The model of a parsed file, written and read back. */
static void model_roundtrip(const char *text, int nranks)
{
    hc_config_t *cfg = calloc(1, sizeof(*cfg));
    if (cfg == NULL)
        abort();
    snprintf(cfg->topo_file, sizeof(cfg->topo_file), "%s", fuzz_file(text));
    hc_topo_t *t = fuzz_model(nranks >= 1 && nranks <= 64 ? (uint32_t)nranks : 8, cfg);
    if (t != NULL) {
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
    free(cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size), err[600];
    hc_decl_t d;
    hc_decl_init(&d);
    int rc = hc_decl_parse_text(text, &d, err, sizeof(err));
    int nranks = d.nranks;
    hc_decl_free(&d);
    if (rc == 0)
        model_roundtrip(text, nranks);
    free(text);
    return 0;
}
