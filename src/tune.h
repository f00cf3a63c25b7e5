/*
 * src/tune.h - algorithm selection: (collective, message size, rank count,
 * topology) -> algorithm and chunk size, from the built-in table, the
 * HCCL_*_ALGO / HCCL_ALGO overrides and the tuning file.
 */
#ifndef HC_TUNE_H_
#define HC_TUNE_H_

#include <stddef.h>
#include <stdint.h>
#include "../coll/coll.h"
#include "env.h"

typedef struct hc_tune hc_tune_t;

/* Resolve the overrides for a communicator of nranks. An unknown algorithm
 * name is HCCL_E_PARA (logged, naming the variable). */
int hc_tune_create(const hc_config_t *cfg, uint32_t nranks, const hc_topo_view_t *view,
                   hc_tune_t **out);
void hc_tune_destroy(hc_tune_t *t);
/* Choose the algorithm for args (sets args->chunk_bytes). Never NULL. */
const hc_algo_t *hc_tune_select(hc_tune_t *t, hc_coll_args_t *args);
/* Canonical text of the forced algorithms in cfg (for the cross-rank
 * agreement check at init). */
void hc_tune_forced_text(const hc_config_t *cfg, char *buf, size_t len);

#endif /* HC_TUNE_H_ */
