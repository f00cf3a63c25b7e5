/*
 * src/tune.c - algorithm selection.
 *
 * Issue-2 version: a forced algorithm per collective (HCCL_<COLL>_ALGO),
 * else a size rule for AllReduce (recursive doubling while latency
 * dominates, ring above) and the first table entry for the others.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hccl/hccl.h>

#include "log.h"

struct hc_tune {
    uint32_t nranks;
    const hc_algo_t *forced[HC_COLL_LAST];
    int warned[HC_COLL_LAST];
};

static const char *forced_name(const hc_config_t *cfg, hc_coll_t coll, const char **var)
{
    switch (coll) {
    case HC_COLL_ALLREDUCE:
        *var = "HCCL_ALLREDUCE_ALGO";
        return cfg->allreduce_algo;
    case HC_COLL_BROADCAST:
        *var = "HCCL_BCAST_ALGO";
        return cfg->bcast_algo;
    case HC_COLL_ALLGATHER:
        *var = "HCCL_ALLGATHER_ALGO";
        return cfg->allgather_algo;
    case HC_COLL_REDUCESCATTER:
        *var = "HCCL_REDUCESCATTER_ALGO";
        return cfg->reducescatter_algo;
    case HC_COLL_ALLTOALL:
    case HC_COLL_ALLTOALLV:
        *var = "HCCL_ALLTOALL_ALGO";
        return cfg->alltoall_algo;
    case HC_COLL_REDUCE:
        *var = "HCCL_REDUCE_ALGO";
        return cfg->reduce_algo;
    default:
        *var = NULL;
        return "";
    }
}

void hc_tune_forced_text(const hc_config_t *cfg, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int c = 0; c < HC_COLL_LAST && off < len; c++) {
        const char *var, *name = forced_name(cfg, (hc_coll_t)c, &var);
        if (name[0])
            off += snprintf(buf + off, len - off, "%s=%s;", hc_coll_name((hc_coll_t)c), name);
    }
}

int hc_tune_create(const hc_config_t *cfg, uint32_t nranks, const hc_topo_view_t *view,
                   hc_tune_t **out)
{
    hc_tune_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return HCCL_E_MEMORY;
    t->nranks = nranks;
    for (int c = 0; c < HC_COLL_LAST; c++) {
        const char *var, *name = forced_name(cfg, (hc_coll_t)c, &var);
        if (name[0] == '\0')
            continue;
        const hc_algo_t *a = hc_coll_find_algo((hc_coll_t)c, name);
        if (a == NULL) {
            int n;
            const hc_algo_t *tab = hc_coll_algos((hc_coll_t)c, &n);
            char known[256] = "";
            size_t off = 0;
            for (int i = 0; i < n && off < sizeof(known); i++)
                off += snprintf(known + off, sizeof(known) - off, "%s%s", i ? ", " : "",
                                tab[i].name);
            HC_ERROR(HC_SUB_TUNE, "%s='%s': unknown %s algorithm (known: %s)", var, name,
                     hc_coll_name((hc_coll_t)c), known);
            free(t);
            return HCCL_E_PARA;
        }
        t->forced[c] = a;
    }
    *out = t;
    return HCCL_SUCCESS;
}

void hc_tune_destroy(hc_tune_t *t)
{
    free(t);
}

const hc_algo_t *hc_tune_select(hc_tune_t *t, hc_coll_args_t *args)
{
    int n;
    const hc_algo_t *tab = hc_coll_algos(args->coll, &n);
    const hc_algo_t *a = t->forced[args->coll];
    if (a && a->usable) {
        const char *why = a->usable(args);
        if (why) {
            if (!t->warned[args->coll]++)
                HC_WARN(HC_SUB_TUNE, "%s algorithm %s cannot run here (%s); using the default",
                        hc_coll_name(args->coll), a->name, why);
            a = NULL;
        }
    }
    if (a == NULL) {
        a = &tab[0];
        if (args->coll == HC_COLL_ALLREDUCE) {
            uint64_t bytes = args->count * args->esize;
            const hc_algo_t *rd = hc_coll_find_algo(HC_COLL_ALLREDUCE, "RD");
            const hc_algo_t *ring = hc_coll_find_algo(HC_COLL_ALLREDUCE, "RING");
            a = (bytes <= 16384 || bytes < 64 * (uint64_t)args->nranks) ? rd : ring;
        }
    }
    HC_TRACE(HC_SUB_COLL | HC_SUB_TUNE, "%s count %llu x %zu B on %u ranks -> %s",
             hc_coll_name(args->coll), (unsigned long long)args->count, args->esize,
             args->nranks, a->name);
    return a;
}
