/*
 * src/api/bootstrap_mpi.c - HcclCommInitMpi: one MPI_Allgather of every rank's
 * card (UCX worker address, host and topology facts, settings that must
 * agree). Nothing else touches MPI at init; endpoints are created on first
 * use.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <hccl/hccl_mpi.h>

#include "bootstrap.h"
#include "src/base/log.h"

HcclResult HcclCommInitMpiConfig(MPI_Comm mpiComm, const HcclCommConfig *config,
                                 HcclComm *comm)
{
    int inited = 0, finalized = 0;
    if (comm == NULL) {
        HC_ERROR(HC_SUB_INIT, "HcclCommInitMpi: comm (the output handle) is NULL");
        return HCCL_E_PTR;
    }
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized) {
        HC_ERROR(HC_SUB_INIT, "HcclCommInitMpi: MPI is %s", finalized ? "finalized" : "not initialized");
        return HCCL_E_PARA;
    }
    if (mpiComm == MPI_COMM_NULL) {
        HC_ERROR(HC_SUB_INIT, "HcclCommInitMpi: mpiComm is MPI_COMM_NULL");
        return HCCL_E_PARA;
    }
    int rank, size;
    if (MPI_Comm_rank(mpiComm, &rank) != MPI_SUCCESS || MPI_Comm_size(mpiComm, &size) != MPI_SUCCESS) {
        HC_ERROR(HC_SUB_INIT, "HcclCommInitMpi: mpiComm is not a valid intra-communicator");
        return HCCL_E_PARA;
    }
    hc_context_t *ctx;
    hc_config_t cfg;
    hc_card_t *mine = malloc(sizeof(hc_card_t));
    hc_card_t *cards = malloc((size_t)size * sizeof(hc_card_t));
    if (mine == NULL || cards == NULL) {
        HC_ERROR(HC_SUB_INIT, "HcclCommInitMpi: out of memory for %d bootstrap records", size);
        free(mine);
        free(cards);
        return HCCL_E_MEMORY;
    }
    hc_bootstrap_prepare(config, (uint32_t)rank, &ctx, &cfg, mine);
    int mrc = MPI_Allgather(mine, sizeof(hc_card_t), MPI_BYTE, cards, sizeof(hc_card_t),
                            MPI_BYTE, mpiComm);
    int rc;
    if (mrc != MPI_SUCCESS) {
        HC_ERROR(HC_SUB_INIT, "HcclCommInitMpi: MPI_Allgather failed (%d)", mrc);
        if (ctx) {
            hc_env_free(&cfg);
            hc_ctx_release(ctx);
        }
        rc = HCCL_E_INTERNAL;
    } else {
        rc = hc_bootstrap_finish(ctx, &cfg, (uint32_t)rank, (uint32_t)size, cards, config,
                                 comm);
    }
    free(mine);
    free(cards);
    return rc;
}

HcclResult HcclCommInitMpi(MPI_Comm mpiComm, HcclComm *comm)
{
    return HcclCommInitMpiConfig(mpiComm, NULL, comm);
}
