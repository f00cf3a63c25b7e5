/* src/api/api_topo.c - the topology extension of the public API: how many bytes
 * a communicator's collectives sent across node boundaries (declared or
 * detected hosts, docs/TOPOLOGY.md), for benchmarks and tests. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <hccl/hccl.h>

#include "src/comm/comm.h"
#include "src/base/log.h"
#include "src/sched/stream.h" /* hc_comm_lock */

HcclResult HcclCommGetInterNodeBytes(HcclComm comm, uint64_t *lastOp, uint64_t *total)
{
    hc_comm_t *c;
    int rc = hc_comm_get(comm, "HcclCommGetInterNodeBytes", &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    hc_comm_lock(c);
    if (lastOp)
        *lastOp = c->xnode_last;
    if (total)
        *total = c->xnode_total;
    hc_comm_unlock(c);
    return HCCL_SUCCESS;
}
