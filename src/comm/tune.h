/*
 * src/comm/tune.h - algorithm selection: (collective, message size, rank count,
 * topology, deterministic mode) -> algorithm and chunk size.
 *
 * One representation for everything that decides (docs/ALGORITHMS.md):
 * rules "collective bytes ranks ALGO [chunk=SIZE] [when=COND]", the syntax
 * of an HCCL_TUNE_FILE. The built-in table is such a text; HCCL_<COLL>_ALGO
 * and HCCL_ALGO become rules over every size; a communicator keeps, per
 * collective, the rules that apply to its rank count and topology, in
 * priority order (HCCL_<COLL>_ALGO, HCCL_ALGO per op, HCCL_ALGO global,
 * the tuning file, the built-in table), and a call takes the first rule
 * whose size range holds it and whose algorithm can run (usable(), and the
 * canonical order in deterministic mode); a forced algorithm that cannot
 * run is reported once (WARN), then the next rule decides.
 */
#ifndef HC_TUNE_H_
#define HC_TUNE_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "coll/coll.h"
#include "src/base/env.h"

typedef struct hc_tune hc_tune_t;

/* Resolve the table for a communicator of nranks with this view. An
 * unknown algorithm or a malformed HCCL_ALGO / tuning file is HCCL_E_PARA
 * (logged, naming the variable, or the file and line). With HCCL_DEBUG=INFO
 * the resolved table is logged (TUNE). */
int hc_tune_create(const hc_config_t *cfg, uint32_t nranks, const hc_topo_view_t *view,
                   hc_tune_t **out);
void hc_tune_destroy(hc_tune_t *t);
/* Just the checks of hc_tune_create (names, HCCL_ALGO, tuning file), for
 * constructors that build the table later (split, sub-communicators):
 * HCCL_SUCCESS or the error hc_tune_create would return (logged). */
int hc_tune_check_config(const hc_config_t *cfg);
/* Choose the algorithm for args (sets args->chunk_bytes). Never NULL. Not
 * thread-safe per table (the communicator's lock covers it). */
const hc_algo_t *hc_tune_select(hc_tune_t *t, hc_coll_args_t *args);
/* Canonical text of what decides the algorithms in cfg besides HCCL_ALGO
 * (forced algorithms, a hash of the tuning file's contents), for the
 * cross-rank agreement check at init. */
void hc_tune_forced_text(const hc_config_t *cfg, char *buf, size_t len);

/* ---- for tests and tools -------------------------------------------- */

/* The built-in table, in tuning-file syntax. */
const char *hc_tune_builtin_text(void);
/* Check rules text (tuning-file syntax); origin names it in messages.
 * HCCL_E_PARA with "origin:line: why" in err on the first bad line. */
int hc_tune_check_text(const char *text, const char *origin, char *err, size_t errlen);
/* Check an HCCL_ALGO value; HCCL_E_PARA with the reason in err. */
int hc_tune_check_hccl_algo(const char *value, char *err, size_t errlen);
/* Print the resolved table, one rule a line, in tuning-file syntax. */
void hc_tune_print(const hc_tune_t *t, FILE *f);
/* Give the rules of coll that HCCL_<COLL>_ALGO or HCCL_ALGO (a
 * communicator's hcclAlgo) forced the option nt (tools/hcomm-tune's
 * "ALGO+nt" candidates). Before the communicator's first operation of
 * coll: schedules already built keep what they were built with. */
void hc_tune_force_nt(hc_tune_t *t, hc_coll_t coll);

#endif /* HC_TUNE_H_ */
