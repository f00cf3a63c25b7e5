/*
 * test/mpi/test_errors.c - argument checking of the public API under mpirun
 * (public API only).
 *
 * For every bad input: the exact result code that API.md promises, no
 * communication started (the communicator stays usable: a correct AllReduce
 * right after the bad call must give the right answer, and in the "local"
 * section only rank 0 makes the bad calls, which must return without any
 * peer taking part), and the user's buffers not written (pre-filled with a
 * pattern and compared afterwards). Every rank passes the same bad argument
 * in the collective section, so a library that wrongly starts communication
 * shows up as a wrong answer or a hang (mpirun.sh's timeout), not as a
 * deadlock of the test itself.
 *
 * Choices where API.md is not explicit (documented here, and reported to
 * the lead):
 *  - NULL comm -> HCCL_E_PTR (HCCL's own behaviour: CHK_PTR_NULL(comm)).
 *  - AlltoAll(V) with sendType != recvType -> HCCL_E_PARA: it is a mismatch
 *    between two arguments, not an op/type combination that the library
 *    lacks (HCCL_E_NOT_SUPPORT is kept for "valid but unsupported", e.g. FP8
 *    with a reduction). HCCL also answers HCCL_E_PARA here.
 *  - AlltoAll with sendCount != recvCount (same type) -> HCCL_E_PARA (the
 *    send and receive blocks must have the same size, as in MPI).
 *  - HcclCommDestroy(NULL) -> HCCL_E_PTR or HCCL_SUCCESS (both accepted).
 *  - A bad destRank inside a group: HcclSend returns HCCL_E_PARA; the
 *    HcclGroupEnd that follows may return HCCL_SUCCESS or HCCL_E_PARA.
 *  - Reduce with a NULL recvBuf and Scatter with a NULL sendBuf are not
 *    tested: those buffers are only significant at the root.
 *  - Registered buffers (extensions): HcclMemAlloc(NULL, n) -> HCCL_E_PTR,
 *    size 0 -> HCCL_E_PARA; HcclMemFree(NULL) -> HCCL_SUCCESS, of memory not
 *    from HcclMemAlloc, freed twice or still registered -> HCCL_E_PARA;
 *    HcclCommRegister with NULL buff or handle -> HCCL_E_PTR (no peer
 *    involved), size 0 or inside a group -> HCCL_E_PARA (likewise), memory
 *    not from HcclMemAlloc on any rank -> HCCL_E_PARA on every rank;
 *    HcclCommDeregister of NULL -> HCCL_E_PTR, of an unknown or already
 *    dropped handle -> HCCL_E_PARA.
 *  - A destroyed communicator or stream, used after a new one was created
 *    in its place (the memory a pointer handle would reuse), and a stream
 *    handle given as a communicator -> HCCL_E_PARA; the new object's
 *    handle differs from the destroyed one's and the new object is
 *    untouched.
 *  - Threads that ran a group and exited leave no heap memory behind
 *    (glibc's mallinfo2 before and after 200 of them).
 *  - HcclCommConfig (comm_config): a bad header (magic, size, version) or a
 *    field outside its environment variable's range -> HCCL_E_PARA from
 *    init on every rank; HCCL's 32-byte version 1 layout still works.
 *  - HCCL's calls added for compatibility (hccl_calls): NULL arrays ->
 *    HCCL_E_PTR; a count that disagrees with this rank's entry, a bad
 *    type, op or item -> HCCL_E_PARA; AllGatherV inside a group ->
 *    HCCL_E_NOT_SUPPORT; HIF8/FP8E8M0 with a reduction ->
 *    HCCL_E_NOT_SUPPORT; HcclCommRegister with flag != 0 -> HCCL_E_PARA.
 *  - HcclCommInitClusterInfo of a FIFO or a device (no regular file) ->
 *    HCCL_E_PARA, of a directory -> HCCL_E_OPEN_FILE_FAILURE (like a missing
 *    file), without reading it.
 *
 * Usage: test_errors                   the checks above
 *        test_errors --expect-init-fail [CODE]
 *                                        HcclCommInitMpi must fail with
 *                                        HCCL_E_PARA (or HcclResult CODE) on
 *                                        every rank (run with a bad HCCL_*
 *                                        value in the environment)
 * Prints "test_errors: N checks, M failures" on rank 0; exit 1 on failure.
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <unistd.h>

#define BUFBYTES 4096 /* room for 64 INT128 elements and any count used here */
#define CNT 8         /* non-zero count used by the bad calls */

static int g_rank, g_n;
static long g_checks, g_fails;
static HcclComm g_comm;
static unsigned char *g_sbuf, *g_rbuf, *g_sref, *g_rref;
static uint64_t *g_counts, *g_displs; /* valid AlltoAllV arrays */

static void failf(const char *fmt, ...)
{
    g_fails++;
    if (g_fails > 40)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[rank %d] FAIL ", g_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static const char *rs(HcclResult r)
{
    const char *s = HcclGetErrorString(r);
    return s ? s : "(null)";
}

/* Fill both user buffers with a pattern before a bad call. */
static void arm(void)
{
    for (int i = 0; i < BUFBYTES; i++) {
        g_sbuf[i] = (unsigned char)(0x5a ^ i);
        g_rbuf[i] = (unsigned char)(0xc3 ^ (i * 7));
    }
    memcpy(g_sref, g_sbuf, BUFBYTES);
    memcpy(g_rref, g_rbuf, BUFBYTES);
}

static void buffers_untouched(const char *what)
{
    g_checks++;
    if (memcmp(g_sbuf, g_sref, BUFBYTES))
        failf("%s: sendBuf written by a rejected call", what);
    g_checks++;
    if (memcmp(g_rbuf, g_rref, BUFBYTES))
        failf("%s: recvBuf written by a rejected call", what);
}

/* The communicator still works and nothing is in flight on it. */
static void comm_usable(const char *after)
{
    int32_t in[5], out[5] = {0};
    for (int i = 0; i < 5; i++)
        in[i] = g_rank + i;
    HcclResult r = HcclAllReduce(in, out, 5, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, g_comm, NULL);
    g_checks++;
    if (r != HCCL_SUCCESS) {
        failf("after %s: a correct HcclAllReduce returned %d (%s)", after, (int)r, rs(r));
        return;
    }
    for (int i = 0; i < 5; i++) {
        int32_t exp = g_n * (g_n - 1) / 2 + g_n * i;
        g_checks++;
        if (out[i] != exp) {
            failf("after %s: a correct HcclAllReduce gave out[%d] = %d, expected %d", after, i,
                  out[i], exp);
            return;
        }
    }
}

/* One bad call: r must be exp (or exp2 if exp2 >= 0), buffers untouched,
 * communicator usable (collective: every rank got here the same way). */
static void expect2(const char *what, HcclResult r, HcclResult exp, int exp2)
{
    g_checks++;
    if (r != exp && (exp2 < 0 || r != (HcclResult)exp2)) {
        if (exp2 >= 0)
            failf("%s returned %d (%s), expected %d (%s) or %d (%s)", what, (int)r, rs(r),
                  (int)exp, rs(exp), exp2, rs((HcclResult)exp2));
        else
            failf("%s returned %d (%s), expected %d (%s)", what, (int)r, rs(r), (int)exp,
                  rs(exp));
    }
    buffers_untouched(what);
    comm_usable(what);
}

static void expect(const char *what, HcclResult r, HcclResult exp)
{
    expect2(what, r, exp, -1);
}

#define EXPECT(exp, call)              \
    do {                               \
        arm();                         \
        HcclResult r_ = (call);        \
        expect(#call, r_, (exp));      \
    } while (0)

#define EXPECT2(exp, exp2, call)       \
    do {                               \
        arm();                         \
        HcclResult r_ = (call);        \
        expect2(#call, r_, (exp), (exp2)); \
    } while (0)

/* ------------------------------------------------------------- cases */

static void null_buffers(void)
{
    void *s = g_sbuf, *r = g_rbuf;
    HcclComm c = g_comm;
    const HcclDataType T = HCCL_DATA_TYPE_INT32;
    const HcclReduceOp O = HCCL_REDUCE_SUM;
    uint32_t right = (uint32_t)((g_rank + 1) % g_n);
    EXPECT(HCCL_E_PTR, HcclAllReduce(NULL, r, CNT, T, O, c, NULL));
    EXPECT(HCCL_E_PTR, HcclAllReduce(s, NULL, CNT, T, O, c, NULL));
    EXPECT(HCCL_E_PTR, HcclAllReduce(NULL, NULL, CNT, T, O, c, NULL));
    EXPECT(HCCL_E_PTR, HcclBroadcast(NULL, CNT, T, 0, c, NULL));
    EXPECT(HCCL_E_PTR, HcclReduce(NULL, r, CNT, T, O, 0, c, NULL));
    EXPECT(HCCL_E_PTR, HcclReduceScatter(NULL, r, CNT, T, O, c, NULL));
    EXPECT(HCCL_E_PTR, HcclReduceScatter(s, NULL, CNT, T, O, c, NULL));
    EXPECT(HCCL_E_PTR, HcclAllGather(NULL, r, CNT, T, c, NULL));
    EXPECT(HCCL_E_PTR, HcclAllGather(s, NULL, CNT, T, c, NULL));
    EXPECT(HCCL_E_PTR, HcclScatter(s, NULL, CNT, T, 0, c, NULL));
    EXPECT(HCCL_E_PTR, HcclAlltoAll(NULL, CNT, T, r, CNT, T, c, NULL));
    EXPECT(HCCL_E_PTR, HcclAlltoAll(s, CNT, T, NULL, CNT, T, c, NULL));
    EXPECT(HCCL_E_PTR, HcclAlltoAllV(NULL, g_counts, g_displs, T, r, g_counts, g_displs, T, c, NULL));
    EXPECT(HCCL_E_PTR, HcclAlltoAllV(s, g_counts, g_displs, T, NULL, g_counts, g_displs, T, c, NULL));
    EXPECT(HCCL_E_PTR, HcclAlltoAllV(s, NULL, g_displs, T, r, g_counts, g_displs, T, c, NULL));
    EXPECT(HCCL_E_PTR, HcclAlltoAllV(s, g_counts, NULL, T, r, g_counts, g_displs, T, c, NULL));
    EXPECT(HCCL_E_PTR, HcclAlltoAllV(s, g_counts, g_displs, T, r, NULL, g_displs, T, c, NULL));
    EXPECT(HCCL_E_PTR, HcclAlltoAllV(s, g_counts, g_displs, T, r, g_counts, NULL, T, c, NULL));
    EXPECT(HCCL_E_PTR, HcclSend(NULL, CNT, T, right, c, NULL));
    EXPECT(HCCL_E_PTR, HcclRecv(NULL, CNT, T, right, c, NULL));
    EXPECT(HCCL_E_PTR, HcclAllReduceMulti(NULL, (void **)&r, (const uint64_t[]){CNT}, 1, T, O, c, NULL));
}

/* Handles of destroyed objects: refused, never taken for the object that
 * replaced them (src/base/handle.h). Collective (the splits). */
static void stale_handles(void)
{
    void *s = g_sbuf, *r = g_rbuf;
    const HcclDataType T = HCCL_DATA_TYPE_INT32;
    const HcclReduceOp O = HCCL_REDUCE_SUM;
    HcclComm old = NULL, cur = NULL;
    uint32_t u = 77;
    g_checks++;
    if (HcclCommSplit(g_comm, 0, g_rank, &old) != HCCL_SUCCESS ||
        HcclCommDestroy(old) != HCCL_SUCCESS ||
        HcclCommSplit(g_comm, 0, g_n - 1 - g_rank, &cur) != HCCL_SUCCESS) {
        failf("stale_handles: split/destroy/split failed");
        return;
    }
    g_checks++;
    if (cur == old)
        failf("a new communicator got the handle of a destroyed one (%p)", cur);
    EXPECT(HCCL_E_PARA, HcclGetRankSize(old, &u));
    EXPECT(HCCL_E_PARA, HcclGetRankId(old, &u));
    EXPECT(HCCL_E_PARA, HcclAllReduce(s, r, CNT, T, O, old, NULL));
    EXPECT(HCCL_E_PARA, HcclBroadcast(s, CNT, T, 0, old, NULL));
    EXPECT(HCCL_E_PARA, HcclSend(s, CNT, T, 0, old, NULL));
    EXPECT(HCCL_E_PARA, HcclBarrier(old, NULL));
    EXPECT(HCCL_E_PARA, HcclCommAbort(old));
    EXPECT(HCCL_E_PARA, HcclCommDestroy(old));
    g_checks++;
    if (u != 77)
        failf("HcclGetRankSize/Id of a destroyed communicator wrote the output (%u)", u);
    /* the new communicator was neither aborted nor destroyed: its rank is
     * the one its split asked for, and it still reduces */
    int32_t in = g_rank + 1, out = 0;
    g_checks++;
    if (HcclGetRankId(cur, &u) != HCCL_SUCCESS || u != (uint32_t)(g_n - 1 - g_rank))
        failf("the communicator created after a destroyed one: HcclGetRankId gave %u, "
              "expected %d", u, g_n - 1 - g_rank);
    g_checks++;
    if (HcclAllReduce(&in, &out, 1, T, O, cur, NULL) != HCCL_SUCCESS ||
        out != g_n * (g_n + 1) / 2)
        failf("the communicator created after a destroyed one no longer reduces (%d)", out);
    g_checks++;
    if (HcclCommDestroy(cur) != HCCL_SUCCESS)
        failf("HcclCommDestroy of the new communicator failed");

    HcclStream st_old = NULL, st_cur = NULL;
    g_checks++;
    if (HcclStreamCreate(&st_old) != HCCL_SUCCESS || HcclStreamDestroy(st_old) != HCCL_SUCCESS ||
        HcclStreamCreate(&st_cur) != HCCL_SUCCESS) {
        failf("stale_handles: stream create/destroy/create failed");
        return;
    }
    g_checks++;
    if (st_cur == st_old)
        failf("a new stream got the handle of a destroyed one (%p)", st_cur);
    EXPECT(HCCL_E_PARA, HcclStreamQuery(st_old));
    EXPECT(HCCL_E_PARA, HcclStreamSynchronize(st_old));
    EXPECT(HCCL_E_PARA, HcclAllReduce(s, r, CNT, T, O, g_comm, st_old));
    EXPECT(HCCL_E_PARA, HcclSend(s, CNT, T, 0, g_comm, st_old));
    EXPECT(HCCL_E_PARA, HcclStreamDestroy(st_old));
    /* a live handle of the wrong kind */
    EXPECT(HCCL_E_PARA, HcclGetRankSize((HcclComm)st_cur, &u));
    EXPECT(HCCL_E_PARA, HcclAllReduce(s, r, CNT, T, O, (HcclComm)st_cur, NULL));
    EXPECT(HCCL_E_PARA, HcclStreamQuery((HcclStream)g_comm));
    g_checks++;
    if (HcclStreamQuery(st_cur) != HCCL_SUCCESS || HcclStreamDestroy(st_cur) != HCCL_SUCCESS)
        failf("the stream created after a destroyed one is not usable");
}

/* A thread that used a group leaves nothing behind when it exits: threads
 * one after the other each run a group (a Send and a Recv to this rank),
 * and the heap in use may not grow with their number. The group state's
 * item array alone is several KB; the bound allows 256 B per thread. */
#define LEAK_THREADS 200
static void *group_thread(void *arg)
{
    HcclResult *res = arg;
    int32_t in = g_rank, out = -1;
    HcclGroupStart();
    HcclResult a = HcclSend(&in, 1, HCCL_DATA_TYPE_INT32, (uint32_t)g_rank, g_comm, NULL);
    HcclResult b = HcclRecv(&out, 1, HCCL_DATA_TYPE_INT32, (uint32_t)g_rank, g_comm, NULL);
    HcclResult c = HcclGroupEnd();
    *res = a != HCCL_SUCCESS ? a : b != HCCL_SUCCESS ? b : c != HCCL_SUCCESS ? c :
           out != g_rank ? HCCL_E_INTERNAL : HCCL_SUCCESS;
    return NULL;
}

static size_t group_threads(int n)
{
    for (int i = 0; i < n; i++) {
        pthread_t t;
        HcclResult res = HCCL_E_RESERVED;
        g_checks++;
        if (pthread_create(&t, NULL, group_thread, &res) != 0) {
            failf("pthread_create failed");
            return 0;
        }
        pthread_join(t, NULL);
        if (res != HCCL_SUCCESS) {
            failf("a group of Send/Recv to self in a new thread returned %d (%s)", (int)res,
                  rs(res));
            return 0;
        }
    }
    return mallinfo2().uordblks;
}

static void thread_leak(void)
{
    const size_t before = group_threads(10); /* warm-up: arenas, pools */
    const size_t after = group_threads(LEAK_THREADS);
    g_checks++;
    if (before && after > before + LEAK_THREADS * 256)
        failf("%d threads that ran a group left %zu B of heap in use behind", LEAK_THREADS,
              after - before);
}

static void null_comm(void)
{
    void *s = g_sbuf, *r = g_rbuf;
    const HcclDataType T = HCCL_DATA_TYPE_INT32;
    const HcclReduceOp O = HCCL_REDUCE_SUM;
    EXPECT(HCCL_E_PTR, HcclAllReduce(s, r, CNT, T, O, NULL, NULL));
    EXPECT(HCCL_E_PTR, HcclBroadcast(s, CNT, T, 0, NULL, NULL));
    EXPECT(HCCL_E_PTR, HcclReduce(s, r, CNT, T, O, 0, NULL, NULL));
    EXPECT(HCCL_E_PTR, HcclReduceScatter(s, r, CNT, T, O, NULL, NULL));
    EXPECT(HCCL_E_PTR, HcclAllGather(s, r, CNT, T, NULL, NULL));
    EXPECT(HCCL_E_PTR, HcclScatter(s, r, CNT, T, 0, NULL, NULL));
    EXPECT(HCCL_E_PTR, HcclAlltoAll(s, CNT, T, r, CNT, T, NULL, NULL));
    EXPECT(HCCL_E_PTR, HcclAlltoAllV(s, g_counts, g_displs, T, r, g_counts, g_displs, T, NULL, NULL));
    EXPECT(HCCL_E_PTR, HcclSend(s, CNT, T, 0, NULL, NULL));
    EXPECT(HCCL_E_PTR, HcclRecv(r, CNT, T, 0, NULL, NULL));
    EXPECT(HCCL_E_PTR, HcclBarrier(NULL, NULL));

    uint32_t u = 77;
    char name[128];
    HcclResult ae;
    EXPECT(HCCL_E_PTR, HcclGetRankSize(NULL, &u));
    EXPECT(HCCL_E_PTR, HcclGetRankSize(g_comm, NULL));
    EXPECT(HCCL_E_PTR, HcclGetRankId(NULL, &u));
    EXPECT(HCCL_E_PTR, HcclGetRankId(g_comm, NULL));
    EXPECT(HCCL_E_PTR, HcclGetCommName(NULL, name));
    EXPECT(HCCL_E_PTR, HcclGetCommName(g_comm, NULL));
    EXPECT(HCCL_E_PTR, HcclGetCommAsyncError(NULL, &ae));
    EXPECT(HCCL_E_PTR, HcclGetCommAsyncError(g_comm, NULL));
    g_checks++;
    if (u != 77)
        failf("HcclGetRankSize/Id(NULL, &u) wrote the output (%u)", u);
    uint32_t fr[4] = {77, 77, 77, 77};
    EXPECT(HCCL_E_PTR, HcclCommGetFailedRanks(NULL, fr, 4, &u));
    EXPECT(HCCL_E_PTR, HcclCommGetFailedRanks(g_comm, fr, 4, NULL));
    EXPECT(HCCL_E_PTR, HcclCommGetFailedRanks(g_comm, NULL, 1, &u));
    g_checks++;
    if (u != 77 || fr[0] != 77)
        failf("a failed call wrote an output (%u, ranks[0] %u)", u, fr[0]);
    /* a healthy communicator: no rank listed, nothing written to ranks */
    EXPECT(HCCL_SUCCESS, HcclCommGetFailedRanks(g_comm, fr, 4, &u));
    g_checks++;
    if (u != 0 || fr[0] != 77)
        failf("HcclCommGetFailedRanks on a healthy communicator: %u ranks (ranks[0] %u)", u,
              fr[0]);
    u = 77;
    EXPECT(HCCL_SUCCESS, HcclCommGetFailedRanks(g_comm, NULL, 0, &u));
    g_checks++;
    if (u != 0)
        failf("HcclCommGetFailedRanks(comm, NULL, 0, &n): n = %u", u);
    EXPECT2(HCCL_E_PTR, HCCL_SUCCESS, HcclCommDestroy(NULL));
    EXPECT(HCCL_E_PTR, HcclCommInitMpi(MPI_COMM_WORLD, NULL));
}

static void bad_types_ops(void)
{
    void *s = g_sbuf, *r = g_rbuf;
    HcclComm c = g_comm;
    static const int bad_types[] = {13, 18, 99, 255, -1}; /* 14, 17: HIF8, FP8E8M0 */
    static const int bad_ops[] = {5, 99, 255, -1};
    char what[160];
    uint32_t right = (uint32_t)((g_rank + 1) % g_n);
    uint32_t left = (uint32_t)((g_rank - 1 + g_n) % g_n);

    for (size_t i = 0; i < sizeof bad_types / sizeof bad_types[0]; i++) {
        HcclDataType t = (HcclDataType)bad_types[i];
        snprintf(what, sizeof what, "bad dataType %d:", bad_types[i]);
#define BT(call)                                                          \
        do {                                                              \
            char w_[256];                                                 \
            arm();                                                        \
            HcclResult r_ = (call);                                       \
            snprintf(w_, sizeof w_, "%s %s", what, #call);                \
            expect(w_, r_, HCCL_E_PARA);                                  \
        } while (0)
        BT(HcclAllReduce(s, r, CNT, t, HCCL_REDUCE_SUM, c, NULL));
        BT(HcclAllReduce(s, r, CNT, t, HCCL_REDUCE_MAX, c, NULL));
        BT(HcclBroadcast(s, CNT, t, 0, c, NULL));
        BT(HcclReduce(s, r, CNT, t, HCCL_REDUCE_SUM, 0, c, NULL));
        BT(HcclReduceScatter(s, r, CNT, t, HCCL_REDUCE_SUM, c, NULL));
        BT(HcclAllGather(s, r, CNT, t, c, NULL));
        BT(HcclScatter(s, r, CNT, t, 0, c, NULL));
        BT(HcclAlltoAll(s, CNT, t, r, CNT, t, c, NULL));
        BT(HcclAlltoAllV(s, g_counts, g_displs, t, r, g_counts, g_displs, t, c, NULL));
        BT(HcclSend(s, CNT, t, right, c, NULL));
        BT(HcclRecv(r, CNT, t, left, c, NULL));
    }
    for (size_t i = 0; i < sizeof bad_ops / sizeof bad_ops[0]; i++) {
        HcclReduceOp op = (HcclReduceOp)bad_ops[i];
        snprintf(what, sizeof what, "bad op %d:", bad_ops[i]);
        BT(HcclAllReduce(s, r, CNT, HCCL_DATA_TYPE_FP32, op, c, NULL));
        BT(HcclAllReduce(s, r, CNT, HCCL_DATA_TYPE_INT32, op, c, NULL));
        BT(HcclReduce(s, r, CNT, HCCL_DATA_TYPE_FP32, op, 0, c, NULL));
        BT(HcclReduceScatter(s, r, CNT, HCCL_DATA_TYPE_INT8, op, c, NULL));
    }
#undef BT
}

static void not_supported(void)
{
    void *s = g_sbuf, *r = g_rbuf;
    HcclComm c = g_comm;
    static const HcclDataType fp8[] = {HCCL_DATA_TYPE_FP8E4M3, HCCL_DATA_TYPE_FP8E5M2};
    for (int i = 0; i < 2; i++) {
        HcclDataType t = fp8[i];
        for (int op = HCCL_REDUCE_SUM; op <= HCCL_REDUCE_AVG; op++) {
            EXPECT(HCCL_E_NOT_SUPPORT, HcclAllReduce(s, r, CNT, t, (HcclReduceOp)op, c, NULL));
            EXPECT(HCCL_E_NOT_SUPPORT, HcclReduce(s, r, CNT, t, (HcclReduceOp)op, 0, c, NULL));
            EXPECT(HCCL_E_NOT_SUPPORT,
                   HcclReduceScatter(s, r, CNT, t, (HcclReduceOp)op, c, NULL));
        }
    }
    static const HcclDataType ints[] = {
        HCCL_DATA_TYPE_INT8,   HCCL_DATA_TYPE_INT16,  HCCL_DATA_TYPE_INT32,
        HCCL_DATA_TYPE_INT64,  HCCL_DATA_TYPE_UINT8,  HCCL_DATA_TYPE_UINT16,
        HCCL_DATA_TYPE_UINT32, HCCL_DATA_TYPE_UINT64, HCCL_DATA_TYPE_INT128};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        EXPECT(HCCL_E_NOT_SUPPORT,
               HcclAllReduce(s, r, CNT, ints[i], HCCL_REDUCE_AVG, c, NULL));
    }
    EXPECT(HCCL_E_NOT_SUPPORT, HcclReduce(s, r, CNT, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_AVG, 0, c, NULL));
    EXPECT(HCCL_E_NOT_SUPPORT, HcclReduceScatter(s, r, CNT, HCCL_DATA_TYPE_UINT8, HCCL_REDUCE_AVG, c, NULL));
    EXPECT(HCCL_E_NOT_SUPPORT, HcclAllReduce(s, r, CNT, HCCL_DATA_TYPE_INT128, HCCL_REDUCE_PROD, c, NULL));
    EXPECT(HCCL_E_NOT_SUPPORT, HcclReduce(s, r, CNT, HCCL_DATA_TYPE_INT128, HCCL_REDUCE_PROD, 0, c, NULL));
    EXPECT(HCCL_E_NOT_SUPPORT, HcclReduceScatter(s, r, CNT, HCCL_DATA_TYPE_INT128, HCCL_REDUCE_PROD, c, NULL));
    const void *in[1] = {s};
    void *out[1] = {r};
    uint64_t cnt[1] = {CNT};
    EXPECT(HCCL_E_NOT_SUPPORT, HcclAllReduceMulti(in, out, cnt, 1, HCCL_DATA_TYPE_FP8E4M3, HCCL_REDUCE_SUM, c, NULL));
}

/* HcclAllReduceMulti with a tensor count past its limit (1 << 20, a
 * garbage num_ops such as a negative int cast to size_t): HCCL_E_PARA
 * before any array is read. The one-entry counts array ends at a guard
 * page, so a call that reads past it faults instead of passing by luck. */
static void huge_tensor_count(void)
{
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect(m + pg, pg, PROT_NONE) != 0) {
        failf("huge_tensor_count: cannot map a guarded page");
        return;
    }
    uint64_t *cnt = (uint64_t *)(m + pg) - 1;
    *cnt = CNT;
    const void *in[1] = {g_sbuf};
    void *out[1] = {g_rbuf};
    HcclComm c = g_comm;
    const HcclDataType T = HCCL_DATA_TYPE_INT32;
    const HcclReduceOp O = HCCL_REDUCE_SUM;
    EXPECT(HCCL_E_PARA, HcclAllReduceMulti(in, out, cnt, (size_t)-1, T, O, c, NULL));
    EXPECT(HCCL_E_PARA, HcclAllReduceMulti(in, out, cnt, (size_t)(uint32_t)-2, T, O, c, NULL));
    EXPECT(HCCL_E_PARA, HcclAllReduceMulti(in, out, cnt, ((size_t)1 << 20) + 1, T, O, c, NULL));
    munmap(m, 2 * pg);
}

static void bad_ranks(void)
{
    void *s = g_sbuf, *r = g_rbuf;
    HcclComm c = g_comm;
    const HcclDataType T = HCCL_DATA_TYPE_INT32;
    uint32_t n = (uint32_t)g_n;
    EXPECT(HCCL_E_PARA, HcclBroadcast(s, CNT, T, n, c, NULL));
    EXPECT(HCCL_E_PARA, HcclBroadcast(s, CNT, T, UINT32_MAX, c, NULL));
    EXPECT(HCCL_E_PARA, HcclReduce(s, r, CNT, T, HCCL_REDUCE_SUM, n, c, NULL));
    EXPECT(HCCL_E_PARA, HcclReduce(s, r, CNT, T, HCCL_REDUCE_SUM, n + 100, c, NULL));
    EXPECT(HCCL_E_PARA, HcclScatter(s, r, CNT, T, n, c, NULL));
    EXPECT(HCCL_E_PARA, HcclScatter(s, r, CNT, T, UINT32_MAX, c, NULL));
    EXPECT(HCCL_E_PARA, HcclSend(s, CNT, T, n, c, NULL));
    EXPECT(HCCL_E_PARA, HcclSend(s, CNT, T, UINT32_MAX, c, NULL));
    EXPECT(HCCL_E_PARA, HcclRecv(r, CNT, T, n, c, NULL));
    EXPECT(HCCL_E_PARA, HcclRecv(r, CNT, T, n + 1, c, NULL));

    /* inside a group */
    arm();
    HcclResult r1 = HcclGroupStart();
    HcclResult r2 = HcclSend(s, CNT, T, n, c, NULL);
    HcclResult r3 = HcclRecv(r, CNT, T, n, c, NULL);
    HcclResult r4 = HcclGroupEnd();
    g_checks++;
    if (r1 != HCCL_SUCCESS)
        failf("HcclGroupStart returned %d (%s)", (int)r1, rs(r1));
    g_checks++;
    if (r2 != HCCL_E_PARA)
        failf("HcclSend(destRank = n) in a group returned %d (%s), expected HCCL_E_PARA",
              (int)r2, rs(r2));
    g_checks++;
    if (r3 != HCCL_E_PARA)
        failf("HcclRecv(srcRank = n) in a group returned %d (%s), expected HCCL_E_PARA",
              (int)r3, rs(r3));
    expect2("HcclGroupEnd after rejected Send/Recv", r4, HCCL_SUCCESS, HCCL_E_PARA);
}

static void type_mismatch(void)
{
    void *s = g_sbuf, *r = g_rbuf;
    HcclComm c = g_comm;
    EXPECT(HCCL_E_PARA, HcclAlltoAll(s, CNT, HCCL_DATA_TYPE_INT32, r, CNT, HCCL_DATA_TYPE_FP32, c, NULL));
    EXPECT(HCCL_E_PARA, HcclAlltoAll(s, CNT, HCCL_DATA_TYPE_INT16, r, CNT, HCCL_DATA_TYPE_INT32, c, NULL));
    EXPECT(HCCL_E_PARA, HcclAlltoAll(s, CNT, HCCL_DATA_TYPE_INT32, r, CNT + 1, HCCL_DATA_TYPE_INT32, c, NULL));
    EXPECT(HCCL_E_PARA, HcclAlltoAllV(s, g_counts, g_displs, HCCL_DATA_TYPE_INT8, r, g_counts,
                                      g_displs, HCCL_DATA_TYPE_UINT8, c, NULL));
}

/* count == 0 with NULL buffers is a valid no-op. */
static void zero_counts(void)
{
    HcclComm c = g_comm;
    const HcclDataType T = HCCL_DATA_TYPE_FP32;
    const HcclReduceOp O = HCCL_REDUCE_SUM;
    uint64_t *z = calloc((size_t)g_n, sizeof(uint64_t));
    uint32_t right = (uint32_t)((g_rank + 1) % g_n);
    uint32_t left = (uint32_t)((g_rank - 1 + g_n) % g_n);
    EXPECT(HCCL_SUCCESS, HcclAllReduce(NULL, NULL, 0, T, O, c, NULL));
    EXPECT(HCCL_SUCCESS, HcclBroadcast(NULL, 0, T, 0, c, NULL));
    EXPECT(HCCL_SUCCESS, HcclReduce(NULL, NULL, 0, T, O, 0, c, NULL));
    EXPECT(HCCL_SUCCESS, HcclReduceScatter(NULL, NULL, 0, T, O, c, NULL));
    EXPECT(HCCL_SUCCESS, HcclAllGather(NULL, NULL, 0, T, c, NULL));
    EXPECT(HCCL_SUCCESS, HcclScatter(NULL, NULL, 0, T, 0, c, NULL));
    EXPECT(HCCL_SUCCESS, HcclAlltoAll(NULL, 0, T, NULL, 0, T, c, NULL));
    EXPECT(HCCL_SUCCESS, HcclAlltoAllV(NULL, z, z, T, NULL, z, z, T, c, NULL));
    /* grouped, so the order of the two calls cannot matter */
    arm();
    HcclResult r1 = HcclGroupStart();
    HcclResult r2 = HcclSend(NULL, 0, T, right, c, NULL);
    HcclResult r3 = HcclRecv(NULL, 0, T, left, c, NULL);
    HcclResult r4 = HcclGroupEnd();
    g_checks++;
    if (r1 || r2 || r3)
        failf("count 0 grouped Send/Recv with NULL buffers: GroupStart %d, Send %d, Recv %d",
              (int)r1, (int)r2, (int)r3);
    expect("HcclGroupEnd (count 0 Send/Recv)", r4, HCCL_SUCCESS);
    free(z);
}

/* Only rank 0 makes bad calls: they must fail locally and at once, with no
 * peer involved; then everybody does a correct operation. */
/* Calls made on one rank: res[i] must be exp[i]. */
static void expect_codes(const char *what, const HcclResult *res, const HcclResult *exp, int n)
{
    for (int i = 0; i < n; i++) {
        g_checks++;
        if (res[i] != exp[i])
            failf("%s #%d returned %d (%s), expected %d (%s)", what, i, (int)res[i], rs(res[i]),
                  (int)exp[i], rs(exp[i]));
    }
}

static void local_only(void)
{
    if (g_rank == 0) {
        void *s = g_sbuf, *r = g_rbuf;
        HcclComm c = g_comm;
        const HcclDataType T = HCCL_DATA_TYPE_INT32;
        HcclResult res[8];
        arm();
        res[0] = HcclAllReduce(NULL, r, CNT, T, HCCL_REDUCE_SUM, c, NULL);
        res[1] = HcclAllReduce(s, r, CNT, (HcclDataType)99, HCCL_REDUCE_SUM, c, NULL);
        res[2] = HcclAllReduce(s, r, CNT, T, (HcclReduceOp)99, c, NULL);
        res[3] = HcclAllReduce(s, r, CNT, HCCL_DATA_TYPE_FP8E4M3, HCCL_REDUCE_SUM, c, NULL);
        res[4] = HcclBroadcast(s, CNT, T, (uint32_t)g_n, c, NULL);
        res[5] = HcclSend(s, CNT, T, (uint32_t)g_n, c, NULL);
        res[6] = HcclAlltoAll(s, CNT, T, r, CNT, HCCL_DATA_TYPE_FP32, c, NULL);
        res[7] = HcclReduceScatter(s, r, CNT, T, HCCL_REDUCE_AVG, c, NULL);
        static const HcclResult exp[8] = {HCCL_E_PTR, HCCL_E_PARA, HCCL_E_PARA,
                                          HCCL_E_NOT_SUPPORT, HCCL_E_PARA, HCCL_E_PARA,
                                          HCCL_E_PARA, HCCL_E_NOT_SUPPORT};
        expect_codes("rank-0-only bad call", res, exp, 8);
        buffers_untouched("rank-0-only bad calls");
    }
    comm_usable("rank-0-only bad calls");
}

/* HcclCommInitClusterInfo on what is no regular file: refused at once,
 * without reading it (a FIFO would block, /dev/zero never ends), comm not
 * written. Every rank, each on its own (no rendezvous starts). */
static void rank_table_not_a_file(void)
{
    char fifo[64];
    snprintf(fifo, sizeof(fifo), "/tmp/test_errors_fifo.%d", (int)getpid());
    if (mkfifo(fifo, 0600) != 0) {
        failf("mkfifo %s: %s", fifo, strerror(errno));
        return;
    }
    const char *paths[3] = {fifo, "/dev/zero", "/"};
    static const HcclResult exp[3] = {HCCL_E_PARA, HCCL_E_PARA, HCCL_E_OPEN_FILE_FAILURE};
    HcclResult res[3];
    HcclComm sentinel = (HcclComm)(uintptr_t)0x5a5a, c;
    for (int i = 0; i < 3; i++) {
        c = sentinel;
        res[i] = HcclCommInitClusterInfo(paths[i], (uint32_t)g_rank, &c);
        g_checks++;
        if (c != sentinel)
            failf("HcclCommInitClusterInfo(%s) wrote comm", paths[i]);
    }
    unlink(fifo);
    expect_codes("HcclCommInitClusterInfo of a FIFO, /dev/zero, /", res, exp, 3);
    comm_usable("HcclCommInitClusterInfo of files that are not rank tables");
}

/* HcclMemAlloc / HcclCommRegister and their refusals (see the top). */
static void registration(void)
{
    HcclComm c = g_comm;
    void *p = NULL, *h = NULL, *junk = (void *)(uintptr_t)0x40;
    if (g_rank == 0) { /* the local refusals: no peer takes part */
        HcclResult res[9];
        res[0] = HcclMemAlloc(NULL, 64);
        p = junk;
        res[1] = HcclMemAlloc(&p, 0);
        g_checks++;
        if (p != NULL)
            failf("HcclMemAlloc(&p, 0) left p = %p, expected NULL", p);
        res[2] = HcclMemFree(NULL);
        res[3] = HcclMemFree(g_sbuf);
        res[4] = HcclCommRegister(NULL, g_sbuf, 64, &h, 0);
        res[5] = HcclCommRegister(c, NULL, 64, &h, 0);
        res[6] = HcclCommRegister(c, g_sbuf, 0, &h, 0);
        res[7] = HcclCommRegister(c, g_sbuf, 64, NULL, 0);
        HcclGroupStart();
        res[8] = HcclCommRegister(c, g_sbuf, 64, &h, 0);
        HcclGroupEnd();
        static const HcclResult exp[9] = {HCCL_E_PTR, HCCL_E_PARA, HCCL_SUCCESS,
                                          HCCL_E_PARA, HCCL_E_PTR, HCCL_E_PTR,
                                          HCCL_E_PARA, HCCL_E_PTR, HCCL_E_PARA};
        expect_codes("registration refusal", res, exp, 9);
    }
    comm_usable("rank-0-only registration refusals");
    /* collective: malloc'd memory on every rank, then on rank 0 only */
    h = junk;
    EXPECT(HCCL_E_PARA, HcclCommRegister(c, g_sbuf, 64, &h, 0));
    g_checks++;
    if (h != NULL)
        failf("a refused HcclCommRegister left handle %p, expected NULL", h);
    expect("HcclMemAlloc(&p, 4096)", HcclMemAlloc(&p, 4096), HCCL_SUCCESS);
    if (p == NULL)
        return;
    EXPECT(HCCL_E_PARA, HcclCommRegister(c, g_rank == 0 ? (void *)g_sbuf : p, 64, &h, 0));
    /* a refused registration leaves the memory free to go */
    EXPECT(HCCL_E_PARA, HcclCommRegister(c, p, 8192, &h, 0)); /* past its end */
    EXPECT(HCCL_SUCCESS, HcclCommRegister(c, (char *)p + 64, 1024, &h, 0));
    EXPECT(HCCL_E_PARA, HcclMemFree(p));
    EXPECT(HCCL_E_PARA, HcclCommDeregister(c, junk));
    EXPECT(HCCL_E_PTR, HcclCommDeregister(c, NULL));
    EXPECT(HCCL_SUCCESS, HcclCommDeregister(c, h));
    EXPECT(HCCL_E_PARA, HcclCommDeregister(c, h));
    EXPECT(HCCL_SUCCESS, HcclMemFree(p));
    EXPECT(HCCL_E_PARA, HcclMemFree(p));
}

static void error_strings(void)
{
    for (int code = 0; code <= (int)HCCL_E_RESERVED + 1; code++) {
        const char *s = HcclGetErrorString((HcclResult)code);
        g_checks++;
        if (!s || !s[0])
            failf("HcclGetErrorString(%d) is %s", code, s ? "empty" : "NULL");
    }
    const char *s = HcclGetErrorString((HcclResult)12345);
    g_checks++;
    if (!s || !s[0])
        failf("HcclGetErrorString(12345) is %s", s ? "empty" : "NULL");
    char s0[256] = "";
    s = HcclGetErrorString(HCCL_SUCCESS);
    snprintf(s0, sizeof s0, "%s", s ? s : "");
    s = HcclGetErrorString(HCCL_E_PARA);
    g_checks++;
    if (s && !strcmp(s0, s))
        failf("HcclGetErrorString gives the same text for SUCCESS and E_PARA: '%s'", s);
}

static int finish(void)
{
    long loc[2] = {g_checks, g_fails}, tot[2];
    MPI_Allreduce(loc, tot, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0) {
        printf("test_errors: %ld checks, %ld failures\n", tot[0], tot[1]);
        fflush(stdout);
    }
    MPI_Finalize();
    return tot[1] ? 1 : 0;
}

/* HcclCommConfig: a bad header or a field out of its environment
 * variable's range fails init with HCCL_E_PARA on every rank (every rank
 * passes the same config); an older, shorter config still works. */
static void config_init(const char *what, const HcclCommConfig *cfg, HcclResult exp)
{
    HcclComm c = NULL;
    HcclResult r = HcclCommInitMpiConfig(MPI_COMM_WORLD, cfg, &c);
    g_checks++;
    if (r != exp)
        failf("HcclCommInitMpiConfig with %s returned %d (%s), expected %d (%s)", what, (int)r,
              rs(r), (int)exp, rs(exp));
    if (r == HCCL_SUCCESS)
        HcclCommDestroy(c);
}

static void set_header(HcclCommConfig *cfg, uint64_t size, uint32_t magic, uint32_t version)
{
    memcpy(cfg->reserved, &size, sizeof(size));
    memcpy(cfg->reserved + 8, &magic, sizeof(magic));
    memcpy(cfg->reserved + 12, &version, sizeof(version));
}

static void comm_config(void)
{
    HcclCommConfig cfg;
#define BAD_CONFIG(what, stmt) \
    do { \
        HcclCommConfigInit(&cfg); \
        stmt; \
        config_init(what, &cfg, HCCL_E_PARA); \
    } while (0)
    BAD_CONFIG("magic 0", set_header(&cfg, sizeof(cfg), 0, HCCL_COMM_CONFIG_VERSION));
    BAD_CONFIG("size 8", set_header(&cfg, 8, HCCL_COMM_CONFIG_MAGIC_WORD, 1));
    BAD_CONFIG("size 1 GB", set_header(&cfg, 1u << 30, HCCL_COMM_CONFIG_MAGIC_WORD, 1));
    BAD_CONFIG("version 0", set_header(&cfg, sizeof(cfg), HCCL_COMM_CONFIG_MAGIC_WORD, 0));
    BAD_CONFIG("memset 0", memset(&cfg, 0, sizeof(cfg)));
    BAD_CONFIG("hcclBufferSize 0", cfg.hcclBufferSize = 0);
    BAD_CONFIG("hcclBufferSize 65537", cfg.hcclBufferSize = 65537);
    BAD_CONFIG("hcclBufferSize 0xFFFFFFFE", cfg.hcclBufferSize = 0xFFFFFFFEu);
    BAD_CONFIG("hcclDeterministic 2", cfg.hcclDeterministic = 2);
    BAD_CONFIG("hcclExecTimeOut -7", cfg.hcclExecTimeOut = -7);
    BAD_CONFIG("hcclOpExpansionMode 9", cfg.hcclOpExpansionMode = 9);
    BAD_CONFIG("hcclRdmaTrafficClass 256", cfg.hcclRdmaTrafficClass = 256);
    BAD_CONFIG("hcclRdmaServiceLevel 8", cfg.hcclRdmaServiceLevel = 8);
    BAD_CONFIG("aclGraphZeroCopyEnable 2", cfg.aclGraphZeroCopyEnable = 2);
    BAD_CONFIG("unterminated hcclCommName", memset(cfg.hcclCommName, 'a', sizeof(cfg.hcclCommName)));
    BAD_CONFIG("unterminated hcclBufferName",
               memset(cfg.hcclBufferName, 'a', sizeof(cfg.hcclBufferName)));
#undef BAD_CONFIG
    /* HCCL's version 1 layout (32 bytes): the fields after it are not read */
    HcclCommConfigInit(&cfg);
    set_header(&cfg, 32, HCCL_COMM_CONFIG_MAGIC_WORD, 1);
    cfg.hcclBufferSize = 16;
    cfg.hcclExecTimeOut = -7; /* past the 32 bytes: ignored */
    config_init("an older 32-byte config", &cfg, HCCL_SUCCESS);
    /* limits themselves are fine */
    HcclCommConfigInit(&cfg);
    cfg.hcclBufferSize = 1;
    cfg.hcclExecTimeOut = 0;
    cfg.hcclRdmaServiceLevel = 7;
    config_init("limits", &cfg, HCCL_SUCCESS);
    comm_usable("bad configurations");
}

/* HCCL's calls that hcomm added: bad arguments. */
static void hccl_calls(void)
{
    HcclComm c = g_comm;
    void *s = g_sbuf, *r = g_rbuf;
    EXPECT(HCCL_E_PTR, HcclAllGatherV(s, 2, r, NULL, g_displs, HCCL_DATA_TYPE_INT32, c, NULL));
    EXPECT(HCCL_E_PTR, HcclAllGatherV(s, 2, r, g_counts, NULL, HCCL_DATA_TYPE_INT32, c, NULL));
    EXPECT(HCCL_E_PARA, HcclAllGatherV(s, 3, r, g_counts, g_displs, HCCL_DATA_TYPE_INT32, c,
                                       NULL)); /* != recvCounts[rank] */
    EXPECT(HCCL_E_PARA, HcclAllGatherV(s, 2, r, g_counts, g_displs, (HcclDataType)99, c, NULL));
    EXPECT(HCCL_E_PTR, HcclAllGatherV(s, 2, r, g_counts, g_displs, HCCL_DATA_TYPE_INT32, NULL,
                                      NULL));
    EXPECT(HCCL_E_PTR, HcclReduceScatterV(s, NULL, g_displs, r, 2, HCCL_DATA_TYPE_INT32,
                                          HCCL_REDUCE_SUM, c, NULL));
    EXPECT(HCCL_E_PARA, HcclReduceScatterV(s, g_counts, g_displs, r, 3, HCCL_DATA_TYPE_INT32,
                                           HCCL_REDUCE_SUM, c, NULL));
    EXPECT(HCCL_E_PARA, HcclReduceScatterV(s, g_counts, g_displs, r, 2, HCCL_DATA_TYPE_INT32,
                                           (HcclReduceOp)77, c, NULL));
    EXPECT(HCCL_E_PTR, HcclReduceScatterV(NULL, g_counts, g_displs, r, 2, HCCL_DATA_TYPE_INT32,
                                          HCCL_REDUCE_SUM, c, NULL));
    /* recvBuf inside sendBuf's blocks, not at this rank's; in place with
     * every block at 0, so that the others overlap this rank's */
    EXPECT(HCCL_E_PARA, HcclReduceScatterV(s, g_counts, g_displs, (char *)s + 1, 2,
                                           HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, c, NULL));
    uint64_t *zeros = calloc((size_t)g_n, sizeof(uint64_t));
    if (zeros && g_n > 1)
        EXPECT(HCCL_E_PARA, HcclReduceScatterV(s, g_counts, zeros, s, 2, HCCL_DATA_TYPE_INT32,
                                               HCCL_REDUCE_SUM, c, NULL));
    free(zeros);
    EXPECT(HCCL_E_PTR, HcclAlltoAllVC(s, NULL, HCCL_DATA_TYPE_INT32, r, HCCL_DATA_TYPE_INT32, c,
                                      NULL));
    EXPECT(HCCL_E_PARA, HcclAlltoAllVC(s, g_counts, HCCL_DATA_TYPE_INT32, r, HCCL_DATA_TYPE_INT8,
                                       c, NULL));
    HcclSendRecvItem it;
    memset(&it, 0, sizeof(it));
    it.sendRecvType = HCCL_SEND;
    it.buf = s;
    it.count = 1;
    it.dataType = HCCL_DATA_TYPE_INT32;
    it.remoteRank = (uint32_t)g_n; /* out of range */
    EXPECT(HCCL_E_PARA, HcclBatchSendRecv(&it, 1, c, NULL));
    it.remoteRank = 0;
    it.sendRecvType = (HcclSendRecvType)5;
    EXPECT(HCCL_E_PARA, HcclBatchSendRecv(&it, 1, c, NULL));
    it.sendRecvType = HCCL_SEND;
    it.dataType = (HcclDataType)99;
    EXPECT(HCCL_E_PARA, HcclBatchSendRecv(&it, 1, c, NULL));
    it.dataType = HCCL_DATA_TYPE_INT32;
    it.buf = NULL;
    EXPECT(HCCL_E_PTR, HcclBatchSendRecv(&it, 1, c, NULL));
    EXPECT(HCCL_E_PTR, HcclBatchSendRecv(NULL, 1, c, NULL));
    EXPECT(HCCL_SUCCESS, HcclBatchSendRecv(NULL, 0, c, NULL));
    /* inside a group: the V calls are refused, nothing queued */
    HcclGroupStart();
    HcclResult g1 = HcclAllGatherV(s, 2, r, g_counts, g_displs, HCCL_DATA_TYPE_INT32, c, NULL);
    HcclResult g2 = HcclGroupEnd();
    expect("HcclAllGatherV inside a group", g1, HCCL_E_NOT_SUPPORT);
    expect("HcclGroupEnd after a refused HcclAllGatherV", g2, HCCL_SUCCESS);
    /* new data types move but do not reduce */
    EXPECT(HCCL_E_NOT_SUPPORT, HcclAllReduce(s, r, CNT, HCCL_DATA_TYPE_HIF8, HCCL_REDUCE_SUM, c,
                                             NULL));
    EXPECT(HCCL_E_NOT_SUPPORT, HcclAllReduce(s, r, CNT, HCCL_DATA_TYPE_FP8E8M0, HCCL_REDUCE_MAX,
                                             c, NULL));
    /* local calls */
    HcclConfigValue v;
    v.value = 2;
    EXPECT(HCCL_E_PARA, HcclSetConfig(HCCL_DETERMINISTIC, v));
    v.value = 0;
    EXPECT(HCCL_E_PARA, HcclSetConfig(HCCL_CONFIG_RESERVED, v));
    EXPECT(HCCL_E_PTR, HcclGetConfig(HCCL_DETERMINISTIC, NULL));
    EXPECT(HCCL_E_PARA, HcclGetConfig((HcclConfig)7, &v));
    HcclCommStatus st;
    EXPECT(HCCL_E_PTR, HcclCommGetStatus(NULL, &st));
    EXPECT(HCCL_E_PTR, HcclCommGetStatus("x", NULL));
    EXPECT(HCCL_E_NOT_FOUND, HcclCommGetStatus("no such communicator", &st));
    EXPECT(HCCL_E_PTR, HcclCommSuspend(NULL));
    EXPECT(HCCL_E_PTR, HcclCommResume(NULL));
    int32_t dev[3] = {0, 0, 1};
    HcclComm cs[3];
    EXPECT(HCCL_E_PTR, HcclCommInitAll(1, NULL, cs));
    EXPECT(HCCL_E_PTR, HcclCommInitAll(1, dev, NULL));
    EXPECT(HCCL_E_PARA, HcclCommInitAll(0, dev, cs));
    EXPECT(HCCL_E_PARA, HcclCommInitAll(2, dev, cs)); /* duplicate device */
    dev[0] = -1;
    EXPECT(HCCL_E_PARA, HcclCommInitAll(1, dev, cs));
    EXPECT(HCCL_E_PTR, HcclCommInitClusterInfoConfig(NULL, 0, NULL, cs));
    void *h = NULL;
    EXPECT(HCCL_E_PARA, HcclCommRegister(c, g_sbuf, 64, &h, 1)); /* flag reserved */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_n);
    int expect_init_fail = argc > 1 && !strcmp(argv[1], "--expect-init-fail");
    const HcclResult init_exp = argc > 2 ? (HcclResult)atoi(argv[2]) : HCCL_E_PARA;

    HcclComm sentinel = (HcclComm)(uintptr_t)0x1234;
    g_comm = sentinel;
    HcclResult r = HcclCommInitMpi(MPI_COMM_WORLD, &g_comm);
    if (expect_init_fail) {
        g_checks++;
        if (r != init_exp)
            failf("HcclCommInitMpi with a bad HCCL_* value returned %d (%s), expected %d (%s)",
                  (int)r, rs(r), (int)init_exp, rs(init_exp));
        g_checks++;
        if (r != HCCL_SUCCESS && g_comm != sentinel && g_comm != NULL)
            failf("failed HcclCommInitMpi wrote a non-NULL communicator");
        if (r == HCCL_SUCCESS)
            HcclCommDestroy(g_comm);
        /* MPI must still be fine */
        int x = 1, y = 0;
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        g_checks++;
        if (y != g_n)
            failf("MPI_Allreduce after the failed init gave %d", y);
        return finish();
    }
    g_checks++;
    if (r != HCCL_SUCCESS) {
        failf("HcclCommInitMpi returned %d (%s)", (int)r, rs(r));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    g_sbuf = malloc(BUFBYTES);
    g_rbuf = malloc(BUFBYTES);
    g_sref = malloc(BUFBYTES);
    g_rref = malloc(BUFBYTES);
    g_counts = malloc(sizeof(uint64_t) * (size_t)g_n);
    g_displs = malloc(sizeof(uint64_t) * (size_t)g_n);
    for (int i = 0; i < g_n; i++) {
        g_counts[i] = 2;
        g_displs[i] = 2 * (uint64_t)i;
    }

    comm_usable("init");
    error_strings();
    null_buffers();
    null_comm();
    stale_handles();
    thread_leak();
    bad_types_ops();
    not_supported();
    bad_ranks();
    huge_tensor_count();
    type_mismatch();
    zero_counts();
    local_only();
    rank_table_not_a_file();
    registration();
    comm_config();
    hccl_calls();

    g_checks++;
    r = HcclCommDestroy(g_comm);
    if (r != HCCL_SUCCESS)
        failf("HcclCommDestroy returned %d (%s)", (int)r, rs(r));
    free(g_sbuf);
    free(g_rbuf);
    free(g_sref);
    free(g_rref);
    free(g_counts);
    free(g_displs);
    return finish();
}
