/*
 * src/api/api_coll.c - the collective entry points: check every argument
 * (one log line naming the bad one, no communication started, no user
 * buffer touched), describe the operation, dispatch it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <hccl/hccl.h>

#include "src/comm/argcheck.h"
#include "src/sched/group.h"
#include "src/comm/comm.h"
#include "src/comm/op.h"
#include "src/features/elastic.h"
#include "src/sched/gpu_coll.h"
#include "src/base/log.h"
#include "src/base/reduce.h"
#include "src/sched/progress.h"
#include "src/sched/stream.h"
#include "src/base/util.h"

HC_HOT static int check_op(const char *fn, HcclDataType dt, HcclReduceOp op)
{
    int rc = hc_reduce_check(dt, op);
    if (rc == HCCL_E_PARA)
        HC_ERROR(HC_SUB_COLL, "%s: op %d is not a known HcclReduceOp", fn, (int)op);
    else if (rc != HCCL_SUCCESS)
        HC_ERROR(HC_SUB_COLL, "%s: op %s is not supported for dataType %s", fn, hc_op_name(op),
                 hc_dtype_name(dt));
    return rc;
}

HC_HOT static int check_root(const char *fn, const char *what, uint32_t root, const hc_comm_t *c)
{
    if (root >= c->nranks) {
        HC_ERROR(HC_SUB_COLL, "%s: %s %u is out of range (communicator %s has %u ranks)", fn,
                 what, root, c->name, c->nranks);
        return HCCL_E_PARA;
    }
    return HCCL_SUCCESS;
}

/* count * esize * mult must fit in 63 bits. */
static int check_size(const char *fn, uint64_t count, size_t esize, uint64_t mult)
{
    uint64_t bytes; /* count * esize * mult <= 2^63 - 1, without two divisions per call */
    if (__builtin_mul_overflow(count, (uint64_t)esize * mult, &bytes) || bytes > (UINT64_MAX >> 1)) {
        HC_ERROR(HC_SUB_COLL, "%s: count %llu is too large", fn, (unsigned long long)count);
        return HCCL_E_PARA;
    }
    return HCCL_SUCCESS;
}

/* Regions [a, a+la) and [b, b+lb) overlap (both non-empty)? */
static int overlap(const void *a, uint64_t la, const void *b, uint64_t lb)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return la && lb && x < y + lb && y < x + la;
}

static int bad_overlap(const char *fn)
{
    HC_ERROR(HC_SUB_COLL, "%s: sendBuf and recvBuf overlap, and not at the in-place position "
             "API.md allows", fn);
    return HCCL_E_PARA;
}

HC_HOT static void entry_log(const hc_comm_t *c, const char *fn, uint64_t count, HcclDataType dt,
                             int op, int root)
{
    if (c->cfg->entry_log && HC_LOG_ON(HC_LOG_INFO, HC_SUB_COLL))
        hc_log_write(HC_LOG_INFO, HC_SUB_COLL, __FILE__, __LINE__,
                     "%s: comm %s rank %u/%u count %llu type %s%s%s root %d", fn, c->name,
                     c->rank, c->nranks, (unsigned long long)count, hc_dtype_name(dt),
                     op >= 0 ? " op " : "", op >= 0 ? hc_op_name((HcclReduceOp)op) : "", root);
}

/* HCCL_CHECK_ARGS: what every rank must agree on, gathered from all of
 * them before the operation starts (an AllGather on the communicator
 * itself, in its order with the other operations), so that a rank that
 * disagrees fails the call on every rank before anything is written. */
typedef struct {
    uint32_t coll, dtype, op, root;
    uint32_t device; /* device buffers (src/sched/gpu_coll.h) */
    uint32_t blocks; /* ReduceScatterV: hash of sendCounts (the block sizes), else 0 */
    uint64_t count;
} agree_rec_t;

static int check_agree(hc_comm_t *c, const hc_op_t *op)
{
    const hc_coll_args_t *a = &op->args;
    const int rooted = a->coll == HC_COLL_BROADCAST || a->coll == HC_COLL_REDUCE ||
                       a->coll == HC_COLL_SCATTER;
    const int reduces = a->coll == HC_COLL_ALLREDUCE || a->coll == HC_COLL_REDUCE ||
                        a->coll == HC_COLL_REDUCESCATTER;
    const uint32_t n = c->nranks;
    const int blocks = a->coll == HC_COLL_REDUCESCATTER && hc_args_v(a);
    agree_rec_t mine = {.coll = (uint32_t)a->coll, .dtype = (uint32_t)a->dtype,
                        .op = reduces ? (uint32_t)a->op : 0, .root = rooted ? a->root : 0,
                        .device = (uint32_t)hc_gpu_claims(op, NULL),
                        .blocks = blocks ? hc_hash32(HC_HASH32_INIT, a->scounts,
                                                     n * sizeof(uint64_t)) : 0,
                        .count = hc_args_v(a) ? 0 : a->count};
    if (n < 2)
        return HCCL_SUCCESS;
    agree_rec_t stack[64], *all = n <= 64 ? stack : malloc((size_t)n * sizeof(*all));
    if (all == NULL)
        return HCCL_E_MEMORY;
    hc_op_t g;
    hc_op_init(&g, op->api, HC_COLL_ALLGATHER, sizeof(mine), HCCL_DATA_TYPE_UINT8, 1,
               HCCL_REDUCE_SUM, &mine, all);
    int rc = hc_comm_run(c, &g);
    for (uint32_t q = 1; rc == HCCL_SUCCESS && q < n; q++) {
        const agree_rec_t *r0 = &all[0], *r = &all[q];
        if (memcmp(r, r0, sizeof(*r)) == 0)
            continue;
        const char *what = r->coll != r0->coll    ? "the collective"
                           : r->dtype != r0->dtype ? "the data type"
                           : r->op != r0->op       ? "the reduction op"
                           : r->count != r0->count ? "the count"
                           : r->blocks != r0->blocks ? "the block sizes (sendCounts)"
                           : r->device != r0->device ? "host or device buffers"
                                                   : "the root";
        HC_ERROR(HC_SUB_COLL, "%s on comm %s (HCCL_CHECK_ARGS): ranks disagree on %s: rank 0 "
                 "passes count %llu, type %s, op %s, root %u; rank %u passes count %llu, type "
                 "%s, op %s, root %u (HCCL_E_PARA on every rank, nothing written)", op->api,
                 c->name, what, (unsigned long long)r0->count,
                 hc_dtype_name((HcclDataType)r0->dtype), hc_op_name((HcclReduceOp)r0->op),
                 r0->root, q, (unsigned long long)r->count,
                 hc_dtype_name((HcclDataType)r->dtype), hc_op_name((HcclReduceOp)r->op), r->root);
        rc = HCCL_E_PARA;
    }
    if (all != stack)
        free(all);
    return rc;
}

/* Queue in the open group, run blocking, or enqueue on the stream (the
 * arguments are all checked by now: nothing is enqueued on an error). */
HC_HOT static int dispatch(hc_comm_t *c, hc_op_t *op, HcclStream handle)
{
    void *stream;
    int rc = hc_stream_get(handle, op->api, &stream);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (c->cfg->check_args && (rc = check_agree(c, op)) != HCCL_SUCCESS)
        return rc;
    if (hc_gpu_claims(op, stream)) /* device buffers, CUDA streams (src/sched/gpu_coll.h) */
        return hc_gpu_run(c, op, handle, stream);
    if (hc_group_active())
        return hc_group_add_coll(c, op, stream);
    if (stream == NULL)
        return hc_comm_run(c, op);
    hc_task_t *t = hc_task_coll(c, op, stream, NULL, &rc);
    return t ? hc_task_dispatch(t) : rc;
}

#define CHECK(x) \
    do { \
        int rc_ = (x); \
        if (rc_ != HCCL_SUCCESS) \
            return (HcclResult)rc_; \
    } while (0)

HC_HOT HcclResult HcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                                HcclReduceOp op, HcclComm comm, void *stream)
{
    static const char fn[] = "HcclAllReduce";
    hc_comm_t *c;
    size_t es;
    CHECK(hc_api_check_comm_type(comm, fn, dataType, &es, &c));
    CHECK(check_op(fn, dataType, op));
    CHECK(hc_api_check_ptr(fn, "sendBuf", sendBuf, count));
    CHECK(hc_api_check_ptr(fn, "recvBuf", recvBuf, count));
    CHECK(check_size(fn, count, es, 1));
    entry_log(c, fn, count, dataType, op, -1);
    if (count == 0)
        return HCCL_SUCCESS;
    int in_place = sendBuf == recvBuf;
    if (!in_place && overlap(sendBuf, count * es, recvBuf, count * es))
        return bad_overlap(fn);
    hc_op_t o;
    hc_op_init(&o, fn, HC_COLL_ALLREDUCE, count, dataType, es, op, sendBuf, recvBuf);
    o.args.in_place = in_place;
    return dispatch(c, &o, stream);
}

HC_HOT HcclResult HcclBroadcast(void *buf, uint64_t count, HcclDataType dataType, uint32_t root,
                                HcclComm comm, void *stream)
{
    static const char fn[] = "HcclBroadcast";
    hc_comm_t *c;
    size_t es;
    CHECK(hc_api_check_comm_type(comm, fn, dataType, &es, &c));
    CHECK(check_root(fn, "root", root, c));
    CHECK(hc_api_check_ptr(fn, "buf", buf, count));
    CHECK(check_size(fn, count, es, 1));
    entry_log(c, fn, count, dataType, -1, (int)root);
    if (count == 0)
        return HCCL_SUCCESS;
    hc_op_t o;
    hc_op_init(&o, fn, HC_COLL_BROADCAST, count, dataType, es, HCCL_REDUCE_SUM, buf, buf);
    o.args.root = root;
    o.args.in_place = 1;
    return dispatch(c, &o, stream);
}

HC_HOT HcclResult HcclReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                             HcclReduceOp op, uint32_t root, HcclComm comm, void *stream)
{
    static const char fn[] = "HcclReduce";
    hc_comm_t *c;
    size_t es;
    CHECK(hc_api_check_comm_type(comm, fn, dataType, &es, &c));
    CHECK(check_op(fn, dataType, op));
    CHECK(check_root(fn, "root", root, c));
    CHECK(hc_api_check_ptr(fn, "sendBuf", sendBuf, count));
    if (c->rank == root)
        CHECK(hc_api_check_ptr(fn, "recvBuf (at the root)", recvBuf, count));
    CHECK(check_size(fn, count, es, 1));
    entry_log(c, fn, count, dataType, op, (int)root);
    if (count == 0)
        return HCCL_SUCCESS;
    int in_place = c->rank == root && sendBuf == recvBuf;
    if (c->rank == root && !in_place && overlap(sendBuf, count * es, recvBuf, count * es))
        return bad_overlap(fn);
    hc_op_t o;
    hc_op_init(&o, fn, HC_COLL_REDUCE, count, dataType, es, op, sendBuf,
            c->rank == root ? recvBuf : NULL);
    o.args.root = root;
    o.args.in_place = in_place;
    return dispatch(c, &o, stream);
}

HC_HOT HcclResult HcclReduceScatter(void *sendBuf, void *recvBuf, uint64_t recvCount,
                                    HcclDataType dataType, HcclReduceOp op, HcclComm comm,
                                    void *stream)
{
    static const char fn[] = "HcclReduceScatter";
    hc_comm_t *c;
    size_t es;
    CHECK(hc_api_check_comm_type(comm, fn, dataType, &es, &c));
    CHECK(check_op(fn, dataType, op));
    CHECK(hc_api_check_ptr(fn, "sendBuf", sendBuf, recvCount));
    CHECK(hc_api_check_ptr(fn, "recvBuf", recvBuf, recvCount));
    CHECK(check_size(fn, recvCount, es, c->nranks));
    entry_log(c, fn, recvCount, dataType, op, -1);
    if (recvCount == 0)
        return HCCL_SUCCESS;
    uint64_t blk = recvCount * es;
    int in_place = (char *)recvBuf == (char *)sendBuf + (uint64_t)c->rank * blk;
    if (!in_place && overlap(sendBuf, blk * c->nranks, recvBuf, blk))
        return bad_overlap(fn);
    hc_op_t o;
    hc_op_init(&o, fn, HC_COLL_REDUCESCATTER, recvCount, dataType, es, op, sendBuf, recvBuf);
    o.args.in_place = in_place;
    return dispatch(c, &o, stream);
}

HC_HOT HcclResult HcclAllGather(void *sendBuf, void *recvBuf, uint64_t sendCount,
                                HcclDataType dataType, HcclComm comm, void *stream)
{
    static const char fn[] = "HcclAllGather";
    hc_comm_t *c;
    size_t es;
    CHECK(hc_api_check_comm_type(comm, fn, dataType, &es, &c));
    CHECK(hc_api_check_ptr(fn, "sendBuf", sendBuf, sendCount));
    CHECK(hc_api_check_ptr(fn, "recvBuf", recvBuf, sendCount));
    CHECK(check_size(fn, sendCount, es, c->nranks));
    entry_log(c, fn, sendCount, dataType, -1, -1);
    if (sendCount == 0)
        return HCCL_SUCCESS;
    uint64_t blk = sendCount * es;
    int in_place = (char *)sendBuf == (char *)recvBuf + (uint64_t)c->rank * blk;
    if (!in_place && overlap(sendBuf, blk, recvBuf, blk * c->nranks))
        return bad_overlap(fn);
    hc_op_t o;
    hc_op_init(&o, fn, HC_COLL_ALLGATHER, sendCount, dataType, es, HCCL_REDUCE_SUM, sendBuf,
            recvBuf);
    o.args.in_place = in_place;
    return dispatch(c, &o, stream);
}

HC_HOT HcclResult HcclScatter(void *sendBuf, void *recvBuf, uint64_t recvCount,
                              HcclDataType dataType, uint32_t root, HcclComm comm, void *stream)
{
    static const char fn[] = "HcclScatter";
    hc_comm_t *c;
    size_t es;
    CHECK(hc_api_check_comm_type(comm, fn, dataType, &es, &c));
    CHECK(check_root(fn, "root", root, c));
    if (c->rank == root)
        CHECK(hc_api_check_ptr(fn, "sendBuf (at the root)", sendBuf, recvCount));
    CHECK(hc_api_check_ptr(fn, "recvBuf", recvBuf, recvCount));
    CHECK(check_size(fn, recvCount, es, c->nranks));
    entry_log(c, fn, recvCount, dataType, -1, (int)root);
    if (recvCount == 0)
        return HCCL_SUCCESS;
    uint64_t blk = recvCount * es;
    int in_place = 0;
    if (c->rank == root) {
        in_place = (char *)recvBuf == (char *)sendBuf + (uint64_t)root * blk;
        if (!in_place && overlap(sendBuf, blk * c->nranks, recvBuf, blk))
            return bad_overlap(fn);
    }
    hc_op_t o;
    hc_op_init(&o, fn, HC_COLL_SCATTER, recvCount, dataType, es, HCCL_REDUCE_SUM,
            c->rank == root ? sendBuf : NULL, recvBuf);
    o.args.root = root;
    o.args.in_place = in_place;
    return dispatch(c, &o, stream);
}

static int check_same_type(const char *fn, HcclDataType s, HcclDataType r)
{
    if (s != r) {
        HC_ERROR(HC_SUB_COLL, "%s: sendType %d and recvType %d differ; hcomm moves bytes and "
                 "needs one type", fn, (int)s, (int)r);
        return HCCL_E_PARA;
    }
    return HCCL_SUCCESS;
}

HC_HOT HcclResult HcclAlltoAll(const void *sendBuf, uint64_t sendCount, HcclDataType sendType,
                               const void *recvBuf, uint64_t recvCount, HcclDataType recvType,
                               HcclComm comm, void *stream)
{
    static const char fn[] = "HcclAlltoAll";
    hc_comm_t *c;
    size_t es, es2;
    CHECK(hc_api_check_comm_type(comm, fn, sendType, &es, &c));
    CHECK(hc_api_check_comm_type(comm, fn, recvType, &es2, &c));
    CHECK(check_same_type(fn, sendType, recvType));
    if (sendCount != recvCount) {
        HC_ERROR(HC_SUB_COLL, "%s: sendCount %llu != recvCount %llu", fn,
                 (unsigned long long)sendCount, (unsigned long long)recvCount);
        return HCCL_E_PARA;
    }
    CHECK(hc_api_check_ptr(fn, "sendBuf", sendBuf, sendCount));
    CHECK(hc_api_check_ptr(fn, "recvBuf", recvBuf, recvCount));
    CHECK(check_size(fn, sendCount, es, c->nranks));
    entry_log(c, fn, sendCount, sendType, -1, -1);
    if (sendCount == 0)
        return HCCL_SUCCESS;
    uint64_t total = sendCount * es * c->nranks;
    if (overlap(sendBuf, total, recvBuf, total))
        return bad_overlap(fn);
    hc_op_t o;
    hc_op_init(&o, fn, HC_COLL_ALLTOALL, sendCount, sendType, es, HCCL_REDUCE_SUM,
            (void *)sendBuf, (void *)recvBuf);
    return dispatch(c, &o, stream);
}

HcclResult HcclAlltoAllV(const void *sendBuf, const void *sendCounts, const void *sdispls,
                         HcclDataType sendType, const void *recvBuf, const void *recvCounts,
                         const void *rdispls, HcclDataType recvType, HcclComm comm,
                         void *stream)
{
    static const char fn[] = "HcclAlltoAllV";
    hc_comm_t *c;
    size_t es, es2;
    CHECK(hc_api_check_comm_type(comm, fn, sendType, &es, &c));
    CHECK(hc_api_check_comm_type(comm, fn, recvType, &es2, &c));
    CHECK(check_same_type(fn, sendType, recvType));
    CHECK(hc_api_check_ptr(fn, "sendCounts", sendCounts, 1));
    CHECK(hc_api_check_ptr(fn, "sdispls", sdispls, 1));
    CHECK(hc_api_check_ptr(fn, "recvCounts", recvCounts, 1));
    CHECK(hc_api_check_ptr(fn, "rdispls", rdispls, 1));
    const uint64_t *sc = sendCounts, *sd = sdispls, *rcn = recvCounts, *rd = rdispls;
    uint64_t sany = 0, rany = 0;
    for (uint32_t i = 0; i < c->nranks; i++) {
        CHECK(check_size(fn, sc[i], es, 1));
        CHECK(check_size(fn, rcn[i], es, 1));
        CHECK(check_size(fn, sd[i], es, 1));
        CHECK(check_size(fn, rd[i], es, 1));
        sany |= sc[i];
        rany |= rcn[i];
    }
    CHECK(hc_api_check_ptr(fn, "sendBuf", sendBuf, sany));
    CHECK(hc_api_check_ptr(fn, "recvBuf", recvBuf, rany));
    entry_log(c, fn, 0, sendType, -1, -1);
    hc_op_t o;
    hc_op_init(&o, fn, HC_COLL_ALLTOALLV, 0, sendType, es, HCCL_REDUCE_SUM, (void *)sendBuf,
            (void *)recvBuf);
    o.args.scounts = sc;
    o.args.sdispls = sd;
    o.args.rcounts = rcn;
    o.args.rdispls = rd;
    return dispatch(c, &o, stream);
}

HC_HOT HcclResult HcclBarrier(HcclComm comm, void *stream)
{
    static const char fn[] = "HcclBarrier";
    hc_comm_t *c;
    size_t es;
    CHECK(hc_api_check_comm_type(comm, fn, HCCL_DATA_TYPE_INT8, &es, &c));
    entry_log(c, fn, 0, HCCL_DATA_TYPE_INT8, -1, -1);
    hc_op_t o;
    hc_op_init(&o, fn, HC_COLL_BARRIER, 0, HCCL_DATA_TYPE_INT8, 1, HCCL_REDUCE_SUM, NULL, NULL);
    return dispatch(c, &o, stream);
}

/* ---- HCCL's variable-size calls, built on the calls above -------------- */

/* The count arrays of the calls below are built here and live only during
 * the call: a group would keep pointers to them until HcclGroupEnd.
 * (ReduceScatterV, one ReduceScatter over the caller's arrays, is refused
 * as well: in deterministic mode it is a Reduce per rank.) */
static int refuse_in_group(const char *fn)
{
    if (!hc_group_active())
        return HCCL_SUCCESS;
    HC_ERROR(HC_SUB_COLL, "%s: not supported between HcclGroupStart and HcclGroupEnd", fn);
    return HCCL_E_NOT_SUPPORT;
}

/* AlltoAllV over arrays of 4 * n elements that the caller fills (counts,
 * displacements: send, then receive) and this frees. */
static int alltoallv_owned(uint64_t *v, uint32_t n, const void *sendBuf, const void *recvBuf,
                           HcclDataType dt, HcclComm comm, void *stream)
{
    int rc = HcclAlltoAllV(sendBuf, v, v + n, dt, recvBuf, v + 2 * n, v + 3 * n, dt, comm, stream);
    free(v);
    return rc;
}

static uint64_t *count_arrays(const char *fn, uint32_t n)
{
    uint64_t *v = calloc(4 * (size_t)n, sizeof(uint64_t));
    if (v == NULL)
        HC_ERROR(HC_SUB_COLL, "%s: out of memory for %u ranks' counts", fn, n);
    return v;
}

HcclResult HcclAllGatherV(void *sendBuf, uint64_t sendCount, void *recvBuf,
                          const void *recvCounts, const void *recvDispls, HcclDataType dataType,
                          HcclComm comm, aclrtStream stream)
{
    static const char fn[] = "HcclAllGatherV";
    hc_comm_t *c;
    size_t es;
    CHECK(hc_api_check_comm_type(comm, fn, dataType, &es, &c));
    CHECK(hc_api_check_ptr(fn, "recvCounts", recvCounts, 1));
    CHECK(hc_api_check_ptr(fn, "recvDispls", recvDispls, 1));
    CHECK(refuse_in_group(fn));
    const uint64_t *rc_ = recvCounts, *rd = recvDispls;
    if (rc_[c->rank] != sendCount) {
        HC_ERROR(HC_SUB_COLL, "%s: sendCount %llu != recvCounts[%u] %llu (this rank's block)",
                 fn, (unsigned long long)sendCount, c->rank,
                 (unsigned long long)rc_[c->rank]);
        return HCCL_E_PARA;
    }
    uint64_t *v = count_arrays(fn, c->nranks);
    if (v == NULL)
        return HCCL_E_MEMORY;
    uint32_t n = c->nranks;
    for (uint32_t i = 0; i < n; i++) {
        v[i] = sendCount; /* the same block to every rank, from offset 0 */
        v[2 * n + i] = rc_[i];
        v[3 * n + i] = rd[i];
    }
    return (HcclResult)alltoallv_owned(v, n, sendBuf, recvBuf, dataType, comm, stream);
}

HcclResult HcclAlltoAllVC(const void *sendBuf, const void *sendCountMatrix, HcclDataType sendType,
                          const void *recvBuf, HcclDataType recvType, HcclComm comm,
                          aclrtStream stream)
{
    static const char fn[] = "HcclAlltoAllVC";
    hc_comm_t *c;
    size_t es, es2;
    CHECK(hc_api_check_comm_type(comm, fn, sendType, &es, &c));
    CHECK(hc_api_check_comm_type(comm, fn, recvType, &es2, &c));
    CHECK(check_same_type(fn, sendType, recvType));
    CHECK(hc_api_check_ptr(fn, "sendCountMatrix", sendCountMatrix, 1));
    CHECK(refuse_in_group(fn));
    const uint64_t *m = sendCountMatrix; /* m[i * n + j]: rank i sends to rank j */
    uint32_t n = c->nranks, me = c->rank;
    uint64_t *v = count_arrays(fn, n);
    if (v == NULL)
        return HCCL_E_MEMORY;
    uint64_t so = 0, ro = 0;
    int rc = HCCL_SUCCESS;
    for (uint32_t j = 0; j < n && rc == HCCL_SUCCESS; j++) {
        v[j] = m[(size_t)me * n + j];
        v[n + j] = so;
        v[2 * n + j] = m[(size_t)j * n + me];
        v[3 * n + j] = ro;
        if (__builtin_add_overflow(so, v[j], &so) || __builtin_add_overflow(ro, v[2 * n + j], &ro)) {
            HC_ERROR(HC_SUB_COLL, "%s: sendCountMatrix sums overflow", fn);
            rc = HCCL_E_PARA;
        }
    }
    if (rc != HCCL_SUCCESS) {
        free(v);
        return (HcclResult)rc;
    }
    return (HcclResult)alltoallv_owned(v, n, sendBuf, recvBuf, sendType, comm, stream);
}

HcclResult HcclReduceScatterV(void *sendBuf, const void *sendCounts, const void *sendDispls,
                              void *recvBuf, uint64_t recvCount, HcclDataType dataType,
                              HcclReduceOp op, HcclComm comm, aclrtStream stream)
{
    static const char fn[] = "HcclReduceScatterV";
    hc_comm_t *c;
    size_t es;
    CHECK(hc_api_check_comm_type(comm, fn, dataType, &es, &c));
    CHECK(check_op(fn, dataType, op));
    CHECK(hc_api_check_ptr(fn, "sendCounts", sendCounts, 1));
    CHECK(hc_api_check_ptr(fn, "sendDispls", sendDispls, 1));
    CHECK(refuse_in_group(fn));
    const uint64_t *sc = sendCounts, *sd = sendDispls;
    if (sc[c->rank] != recvCount) {
        HC_ERROR(HC_SUB_COLL, "%s: recvCount %llu != sendCounts[%u] %llu (this rank's block)",
                 fn, (unsigned long long)recvCount, c->rank, (unsigned long long)sc[c->rank]);
        return HCCL_E_PARA;
    }
    uint64_t any = 0;
    for (uint32_t i = 0; i < c->nranks; i++) {
        CHECK(check_size(fn, sc[i], es, 1));
        CHECK(check_size(fn, sd[i], es, 1));
        any |= sc[i];
    }
    CHECK(hc_api_check_ptr(fn, "sendBuf", sendBuf, any));
    CHECK(hc_api_check_ptr(fn, "recvBuf", recvBuf, recvCount));
    entry_log(c, fn, recvCount, dataType, op, -1);
    if (any == 0)
        return HCCL_SUCCESS;
    if (c->cfg->deterministic) {
        /* RING's order is not the canonical one (docs/ALGORITHMS.md): block i
         * reduced onto rank i, one Reduce per rank, in rank order on every
         * rank (the same stream keeps them in that order) */
        for (uint32_t i = 0; i < c->nranks; i++) {
            char *blk = (char *)sendBuf + sd[i] * es;
            CHECK(HcclReduce(blk, i == c->rank ? recvBuf : NULL, sc[i], dataType, op, i, comm,
                             stream));
        }
        return HCCL_SUCCESS;
    }
    char *own = (char *)sendBuf + sd[c->rank] * es;
    const int in_place = recvCount && (char *)recvBuf == own;
    if (!in_place &&
        overlap(sendBuf, hc_v_end(sc, sd, c->nranks) * es, recvBuf, recvCount * es))
        return bad_overlap(fn);
    for (uint32_t i = 0; in_place && i < c->nranks; i++) {
        const char *blk = (char *)sendBuf + sd[i] * es;
        if (i != c->rank && overlap(own, recvCount * es, blk, sc[i] * es)) {
            HC_ERROR(HC_SUB_COLL, "%s: in place, and block %u of sendBuf overlaps this rank's "
                     "block %u (the result overwrites it)", fn, i, c->rank);
            return HCCL_E_PARA;
        }
    }
    /* one ReduceScatter over blocks of different sizes (coll.h) */
    hc_op_t o;
    hc_op_init(&o, fn, HC_COLL_REDUCESCATTER, recvCount, dataType, es, op, sendBuf, recvBuf);
    o.args.in_place = in_place;
    o.args.scounts = sc;
    o.args.sdispls = sd;
    return dispatch(c, &o, stream);
}

HcclResult HcclBatchSendRecv(HcclSendRecvItem *sendRecvInfo, uint32_t itemNum, HcclComm comm,
                             aclrtStream stream)
{
    static const char fn[] = "HcclBatchSendRecv";
    hc_comm_t *c;
    size_t es;
    CHECK(hc_api_check_comm_type(comm, fn, HCCL_DATA_TYPE_INT8, &es, &c));
    CHECK(hc_api_check_ptr(fn, "sendRecvInfo", sendRecvInfo, itemNum));
    for (uint32_t i = 0; i < itemNum; i++) {
        const HcclSendRecvItem *it = &sendRecvInfo[i];
        if (it->sendRecvType != HCCL_SEND && it->sendRecvType != HCCL_RECV) {
            HC_ERROR(HC_SUB_COLL, "%s: sendRecvInfo[%u].sendRecvType %d is neither HCCL_SEND "
                     "nor HCCL_RECV", fn, i, (int)it->sendRecvType);
            return HCCL_E_PARA;
        }
        if (hc_dtype_size(it->dataType) == 0) {
            HC_ERROR(HC_SUB_COLL, "%s: sendRecvInfo[%u].dataType %d is not a known HcclDataType",
                     fn, i, (int)it->dataType);
            return HCCL_E_PARA;
        }
        if (it->remoteRank >= c->nranks) {
            HC_ERROR(HC_SUB_COLL, "%s: sendRecvInfo[%u].remoteRank %u is out of range "
                     "(communicator %s has %u ranks)", fn, i, it->remoteRank, c->name,
                     c->nranks);
            return HCCL_E_PARA;
        }
        if (it->buf == NULL && it->count > 0) {
            HC_ERROR(HC_SUB_COLL, "%s: sendRecvInfo[%u].buf is NULL with count %llu", fn, i,
                     (unsigned long long)it->count);
            return HCCL_E_PTR;
        }
    }
    /* all checked: one group, so that no order of the items can deadlock */
    HcclGroupStart();
    int rc = HCCL_SUCCESS;
    for (uint32_t i = 0; i < itemNum && rc == HCCL_SUCCESS; i++) {
        const HcclSendRecvItem *it = &sendRecvInfo[i];
        rc = it->sendRecvType == HCCL_SEND
                 ? HcclSend(it->buf, it->count, it->dataType, it->remoteRank, comm, stream)
                 : HcclRecv(it->buf, it->count, it->dataType, it->remoteRank, comm, stream);
    }
    int end = HcclGroupEnd();
    return (HcclResult)(rc != HCCL_SUCCESS ? rc : end);
}
