/*
 * src/api/mpidrop.c - libhcomm_mpi.so: the collectives of an unmodified MPI
 * program run on hcomm (docs/MPI-DROPIN.md).
 *
 * The library defines MPI_Allreduce, MPI_Bcast, ... (the MPI profiling
 * interface): loaded with LD_PRELOAD, or linked before -lmpi, its
 * definitions win over libmpi's. Each call either runs on the hcomm
 * communicator of its MPI communicator or goes, unchanged, to the PMPI_
 * function. The choice must be the same on every rank of the call, or the
 * ranks that went to hcomm would wait for ranks that went to MPI: it is made
 * only from what MPI requires to be the same on every rank (the
 * communicator, the operation, the datatype of a reduction, root, message
 * sizes), from the settings (the same on every rank: mpirun -x) and from the
 * state of the communicator, which every rank changes at the same call.
 * What is local to a rank (the layout of a datatype of a data-moving
 * collective, MPI_IN_PLACE) never decides: a datatype with gaps is packed
 * into a byte copy and unpacked after the call.
 *
 * Communicators: the hcomm communicator of an MPI communicator is made by
 * HcclCommInitMpi at its first routed call, or by HcclCommSplit of its
 * parent's when MPI_Comm_split or MPI_Comm_dup made it from a mapped one;
 * the ranks then agree (one PMPI_Allreduce) that every one of them has it,
 * else none uses it. It hangs on the MPI communicator as an attribute whose
 * delete callback destroys it (MPI_Comm_free; MPI_Finalize destroys the
 * rest).
 *
 * Nonblocking calls run on an hcomm stream (one per request, from a pool);
 * their MPI_Request is a generalized request (MPI_Grequest_start) that this
 * library completes when the stream is done, from the MPI_Wait and MPI_Test
 * families, which it also defines.
 *
 * hcomm calls MPI itself (HcclCommInitMpi's MPI_Allgather): while this
 * library is inside hcomm (`inside`), every MPI call goes straight to PMPI.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <hccl/hccl_mpi.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ settings */

enum coll {
    C_ALLREDUCE, C_BCAST, C_REDUCE, C_ALLGATHER, C_ALLGATHERV, C_RSB, C_RS, C_ALLTOALL,
    C_ALLTOALLV, C_SCATTER, C_GATHER, C_BARRIER, C_IALLREDUCE, C_IBCAST, C_IALLGATHER, C_N
};
static const char *const coll_name[C_N] = {
    "allreduce", "bcast", "reduce", "allgather", "allgatherv", "reduce_scatter_block",
    "reduce_scatter", "alltoall", "alltoallv", "scatter", "gather", "barrier", "iallreduce",
    "ibcast", "iallgather"
};

/* Where a call went: W_HCOMM, or why it fell through to MPI. */
enum why {
    W_HCOMM, W_DISABLED, W_NOT_LISTED, W_SMALL, W_BUILTIN, W_COMM, W_DATATYPE, W_OP,
    W_UNAVAILABLE, W_ARGS, W_UNEVEN, W_N
};
static const char *const why_name[W_N] = {
    "hcomm", "disabled", "not in HCOMM_MPI_COLLS", "below HCOMM_MPI_MIN_BYTES",
    "built-in MPI size", "intercommunicator", "datatype", "op", "no hcomm communicator",
    "arguments for MPI to check", "blocks of different sizes"
};
/* A key of the rows below only: MPI_Reduce_scatter whose blocks differ in
 * size (HcclReduceScatterV), whose small sizes go to MPI (W_UNEVEN). */
#define C_RS_UNEVEN C_N

/* Built-in sizes that go to MPI: a call of collective c whose message
 * (bytes, as defined per collective in docs/MPI-DROPIN.md) is in [lo, hi),
 * on a communicator inside one host (ONE_HOST: nmin..nmax ranks) or
 * spanning several (HOSTS: nmin..nmax hosts, MPI_COMM_TYPE_SHARED's
 * count). MPI was faster there side by side: on one host in the OSU runs
 * of that page ("Speed"; the 4-rank runs set the rows for 3 ranks and
 * more), across hosts in the emulated cluster's (docs/CLUSTER.md). A
 * collective named in HCOMM_MPI_MIN_BYTES uses that floor instead of its
 * rows here. */
#define KiB 1024ull
#define MiB (1024ull * 1024)
enum { ONE_HOST, HOSTS };
static const struct {
    enum coll c;
    int where;
    int nmin, nmax;
    uint64_t lo, hi;
} builtin_mpi[] = {
    {C_ALLREDUCE, ONE_HOST, 2, 2, 0, 4 * KiB},
    {C_ALLREDUCE, ONE_HOST, 3, INT_MAX, 0, 512},
    {C_BCAST, ONE_HOST, 2, 2, 0, 4 * KiB},
    {C_BCAST, ONE_HOST, 2, 2, 16 * KiB, 2 * MiB},
    {C_BCAST, ONE_HOST, 3, INT_MAX, 0, 512},
    {C_BCAST, ONE_HOST, 3, INT_MAX, 16 * KiB, 512 * KiB},
    {C_ALLGATHER, ONE_HOST, 2, 2, 0, 4 * KiB},
    {C_ALLGATHER, ONE_HOST, 2, 2, 8 * KiB, 512 * KiB},
    {C_ALLGATHER, ONE_HOST, 3, INT_MAX, 0, 256},
    {C_ALLTOALL, ONE_HOST, 2, 2, 0, 4 * MiB},
    {C_ALLTOALL, ONE_HOST, 3, INT_MAX, 0, 4 * KiB},
    {C_ALLTOALL, ONE_HOST, 3, INT_MAX, 512 * KiB, UINT64_MAX},
    {C_RS, ONE_HOST, 3, INT_MAX, 0, 1 * KiB},
    {C_RS_UNEVEN, ONE_HOST, 2, 2, 0, 4 * KiB},
    {C_RS_UNEVEN, ONE_HOST, 3, INT_MAX, 0, 8 * KiB},
    {C_BARRIER, ONE_HOST, 2, INT_MAX, 0, UINT64_MAX},
    /* 2 hosts: Open MPI's eager root moves on while its message is on the
     * link, hcomm's rendezvous waits for the receiver */
    {C_BCAST, HOSTS, 2, 2, 4 * KiB, 256 * KiB},
};
#undef KiB
#undef MiB

static struct {
    int state;          /* 0: not yet, 1: ready (atomic) */
    int enabled;
    unsigned colls;     /* bit per enum coll */
    uint64_t min_bytes[C_N];
    unsigned min_set;   /* bit per enum coll: named in HCOMM_MPI_MIN_BYTES */
    int stats;
    int keyval;
    int hosts_keyval;   /* a communicator's host count, once asked (hosts_count) */
    unsigned comm_gen;  /* bumped when such a communicator is freed (comm_shape) */
    int wrank;
} g;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int inside; /* >0: inside hcomm, MPI calls go to PMPI */
static uint64_t tally_[C_N][W_N];

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logmsg(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "hcomm-mpi[%d]: %s\n", g.wrank, line);
}

static int coll_index(const char *name, size_t len)
{
    for (int c = 0; c < C_N; c++)
        if (strlen(coll_name[c]) == len && strncmp(coll_name[c], name, len) == 0)
            return c;
    return -1;
}

/* HCOMM_MPI_COLLS: a comma-separated list of names (or "all", "none"). */
static int parse_colls(const char *s, unsigned *out)
{
    unsigned m = 0;
    while (*s) {
        size_t len = strcspn(s, ",");
        if (len == 3 && strncmp(s, "all", 3) == 0)
            m = (1u << C_N) - 1;
        else if (len == 4 && strncmp(s, "none", 4) == 0)
            ;
        else if (len > 0) {
            int c = coll_index(s, len);
            if (c < 0) {
                logmsg("HCOMM_MPI_COLLS: unknown collective '%.*s' (names: allreduce, bcast, "
                       "reduce, allgather, allgatherv, reduce_scatter_block, reduce_scatter, "
                       "alltoall, alltoallv, scatter, gather, barrier, iallreduce, ibcast, "
                       "iallgather, all, none)", (int)len, s);
                return -1;
            }
            m |= 1u << c;
        }
        s += len + (s[len] == ',');
    }
    *out = m;
    return 0;
}

/* HCOMM_MPI_MIN_BYTES: name:bytes,... ("all" names every collective); *set
 * gets a bit per collective named. */
static int parse_min_bytes(const char *s, uint64_t *min, unsigned *set)
{
    while (*s) {
        size_t len = strcspn(s, ",");
        const char *colon = memchr(s, ':', len);
        int all = colon && colon - s == 3 && strncmp(s, "all", 3) == 0;
        int c = colon && !all ? coll_index(s, (size_t)(colon - s)) : -1;
        char *end = NULL;
        errno = 0;
        unsigned long long v = colon ? strtoull(colon + 1, &end, 10) : 0;
        if ((c < 0 && !all) || end == colon + 1 || end != s + len || errno != 0 ||
            colon[1] == '-') {
            logmsg("HCOMM_MPI_MIN_BYTES: '%.*s' is not COLLECTIVE:BYTES", (int)len, s);
            return -1;
        }
        for (int i = 0; i < C_N; i++)
            if (all || i == c) {
                min[i] = v;
                *set |= 1u << i;
            }
        s += len + (s[len] == ',');
    }
    return 0;
}

static int comm_delete(MPI_Comm comm, int keyval, void *attr, void *extra);
static int hosts_delete(MPI_Comm comm, int keyval, void *attr, void *extra);

/* First call after MPI_Init: the settings, the keyval. 0 while MPI is not
 * initialised (or finalised): the call goes to PMPI, which reports it. */
static int init_slow(void)
{
    int ok = 0, ini = 0, fin = 0;
    pthread_mutex_lock(&lock);
    if (g.state) {
        ok = 1;
        goto out;
    }
    PMPI_Initialized(&ini);
    PMPI_Finalized(&fin);
    if (!ini || fin)
        goto out;
    PMPI_Comm_rank(MPI_COMM_WORLD, &g.wrank);
    const char *e = getenv("HCOMM_MPI_DISABLE");
    g.enabled = !(e && *e && strcmp(e, "0") != 0);
    g.colls = (1u << C_N) - 1;
    memset(g.min_bytes, 0, sizeof g.min_bytes);
    g.min_set = 0;
    e = getenv("HCOMM_MPI_STATS");
    g.stats = e && *e && strcmp(e, "0") != 0;
    if ((e = getenv("HCOMM_MPI_COLLS")) && parse_colls(e, &g.colls) != 0)
        g.enabled = 0;
    if ((e = getenv("HCOMM_MPI_MIN_BYTES")) && parse_min_bytes(e, g.min_bytes, &g.min_set) != 0)
        g.enabled = 0;
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete, &g.keyval, NULL) !=
        MPI_SUCCESS) {
        logmsg("MPI_Comm_create_keyval failed: every collective goes to MPI");
        g.enabled = 0;
        g.keyval = MPI_KEYVAL_INVALID;
    }
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, hosts_delete, &g.hosts_keyval, NULL) !=
        MPI_SUCCESS)
        g.hosts_keyval = MPI_KEYVAL_INVALID; /* counted again at each call */
    __atomic_store_n(&g.state, 1, __ATOMIC_RELEASE);
    ok = 1;
out:
    pthread_mutex_unlock(&lock);
    return ok;
}

/* 1: this call may be routed (decide on it); 0: straight to PMPI. */
static inline int ready(void)
{
    if (__builtin_expect(inside, 0))
        return 0;
    if (__builtin_expect(__atomic_load_n(&g.state, __ATOMIC_ACQUIRE), 1))
        return 1;
    return init_slow();
}

/* Counts the call (for HCOMM_MPI_STATS); 1 when it falls through to MPI. */
static inline int falls(enum coll c, int w)
{
    if (g.stats)
        __atomic_fetch_add(&tally_[c][w], 1, __ATOMIC_RELAXED);
    return w != W_HCOMM;
}

/* An hcomm call, with hcomm's own MPI calls sent to PMPI (inside counts
 * from before the call is evaluated until left_hcomm); its result also in
 * hres_. */
static inline HcclResult left_hcomm(HcclResult r)
{
    inside--;
    return r;
}
#define HC(call) (inside++, hres_ = left_hcomm(call))

/* ------------------------------------------------------------ datatypes */

static int dtype_map(MPI_Datatype t, HcclDataType *ht, size_t *es)
{
#define M(mt, h, sz)         \
    if (t == (mt)) {         \
        *ht = (h);           \
        *es = (sz);          \
        return 1;            \
    }
#define INT_OF(sz, sgn)                                                                      \
    ((sz) == 1 ? ((sgn) ? HCCL_DATA_TYPE_INT8 : HCCL_DATA_TYPE_UINT8)                        \
     : (sz) == 2 ? ((sgn) ? HCCL_DATA_TYPE_INT16 : HCCL_DATA_TYPE_UINT16)                    \
     : (sz) == 4 ? ((sgn) ? HCCL_DATA_TYPE_INT32 : HCCL_DATA_TYPE_UINT32)                    \
                 : ((sgn) ? HCCL_DATA_TYPE_INT64 : HCCL_DATA_TYPE_UINT64))
    M(MPI_INT, INT_OF(sizeof(int), 1), sizeof(int));
    M(MPI_DOUBLE, HCCL_DATA_TYPE_FP64, 8);
    M(MPI_FLOAT, HCCL_DATA_TYPE_FP32, 4);
    M(MPI_LONG, INT_OF(sizeof(long), 1), sizeof(long));
    M(MPI_UNSIGNED, INT_OF(sizeof(unsigned), 0), sizeof(unsigned));
    M(MPI_UNSIGNED_LONG, INT_OF(sizeof(unsigned long), 0), sizeof(unsigned long));
    M(MPI_LONG_LONG, INT_OF(sizeof(long long), 1), sizeof(long long));
    M(MPI_LONG_LONG_INT, INT_OF(sizeof(long long), 1), sizeof(long long));
    M(MPI_UNSIGNED_LONG_LONG, INT_OF(sizeof(long long), 0), sizeof(long long));
    M(MPI_SHORT, INT_OF(sizeof(short), 1), sizeof(short));
    M(MPI_UNSIGNED_SHORT, INT_OF(sizeof(short), 0), sizeof(short));
    M(MPI_SIGNED_CHAR, HCCL_DATA_TYPE_INT8, 1);
    M(MPI_UNSIGNED_CHAR, HCCL_DATA_TYPE_UINT8, 1);
    M(MPI_INT8_T, HCCL_DATA_TYPE_INT8, 1);
    M(MPI_UINT8_T, HCCL_DATA_TYPE_UINT8, 1);
    M(MPI_INT16_T, HCCL_DATA_TYPE_INT16, 2);
    M(MPI_UINT16_T, HCCL_DATA_TYPE_UINT16, 2);
    M(MPI_INT32_T, HCCL_DATA_TYPE_INT32, 4);
    M(MPI_UINT32_T, HCCL_DATA_TYPE_UINT32, 4);
    M(MPI_INT64_T, HCCL_DATA_TYPE_INT64, 8);
    M(MPI_UINT64_T, HCCL_DATA_TYPE_UINT64, 8);
#undef M
#undef INT_OF
    return 0;
}

static int op_map(MPI_Op op, HcclReduceOp *ho)
{
    if (op == MPI_SUM)
        *ho = HCCL_REDUCE_SUM;
    else if (op == MPI_PROD)
        *ho = HCCL_REDUCE_PROD;
    else if (op == MPI_MAX)
        *ho = HCCL_REDUCE_MAX;
    else if (op == MPI_MIN)
        *ho = HCCL_REDUCE_MIN;
    else
        return 0;
    return 1;
}

/* A reduction: MPI requires the same count, datatype and op on every rank. */
static int red_check(int count, MPI_Datatype dt, MPI_Op op, HcclDataType *ht, HcclReduceOp *ho,
                     size_t *es)
{
    if (count < 0 || dt == MPI_DATATYPE_NULL || op == MPI_OP_NULL)
        return W_ARGS;
    if (!dtype_map(dt, ht, es))
        return W_DATATYPE;
    if (!op_map(op, ho))
        return W_OP;
    return W_HCOMM;
}

/* Bytes of count elements of a datatype of a data-moving collective (its
 * type signature, which matches between ranks). */
static int move_bytes(int count, MPI_Datatype dt, uint64_t *bytes)
{
    int sz;
    if (count < 0 || dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &sz) != MPI_SUCCESS ||
        sz == MPI_UNDEFINED || sz < 0)
        return W_ARGS;
    *bytes = (uint64_t)count * (uint64_t)sz;
    return W_HCOMM;
}

/* Elements sit back to back from the address, with no gaps. */
static int dense(MPI_Datatype t)
{
    HcclDataType ht;
    size_t es;
    if (t == MPI_BYTE || t == MPI_CHAR || dtype_map(t, &ht, &es))
        return 1;
    int sz;
    MPI_Aint lb, ext, tlb, text;
    if (PMPI_Type_size(t, &sz) != MPI_SUCCESS || PMPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS)
        return 0;
    return lb == 0 && tlb == 0 && ext == sz && text == sz;
}

/* A byte view of blocks of a user buffer: block i is counts[i] elements of
 * type at buf + displs[i] * extent (one block: count elements at buf). A
 * dense type gives the user's memory itself (bytes at base + off[i]); any
 * other, or copy, a packed copy (loaded now when load) that release()
 * unpacks when store. */
typedef struct {
    void *base;          /* what off[] is relative to */
    void *tmp;           /* packed copy, or NULL */
    uint64_t *cnt, *off; /* bytes; NULL for one block */
    uint64_t total;
    void *user;
    int n, count;        /* blocks (0: one block of count) */
    const int *counts, *displs;
    MPI_Datatype type;   /* a duplicate when kept for a request */
    int owned_type;
} view_t;

static int view_open(view_t *v, void *buf, int count, const int *counts, const int *displs,
                     int n, MPI_Datatype type, int load, int copy, int keep, MPI_Comm comm)
{
    memset(v, 0, sizeof *v);
    v->user = buf;
    v->count = count;
    v->counts = counts;
    v->displs = displs;
    v->n = n;
    v->type = type;
    int sz;
    MPI_Aint lb, ext;
    if (PMPI_Type_size(type, &sz) != MPI_SUCCESS || PMPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    if (n > 0) {
        v->cnt = malloc(2 * (size_t)n * sizeof(uint64_t));
        if (v->cnt == NULL)
            return MPI_ERR_NO_MEM;
        v->off = v->cnt + n;
        for (int i = 0; i < n; i++) {
            v->cnt[i] = (uint64_t)counts[i] * (uint64_t)sz;
            v->total += v->cnt[i];
        }
    } else {
        v->total = (uint64_t)count * (uint64_t)sz;
    }
    if (!copy && dense(type)) {
        v->base = buf;
        if (n > 0)
            for (int i = 0; i < n; i++)
                v->off[i] = (uint64_t)((MPI_Aint)displs[i] * ext);
        return MPI_SUCCESS;
    }
    if (v->total > INT_MAX) {
        logmsg("a %llu-byte buffer of a datatype with gaps: too large to pack (at most %d)",
               (unsigned long long)v->total, INT_MAX);
        return MPI_ERR_COUNT;
    }
    v->tmp = malloc(v->total ? v->total : 1);
    if (v->tmp == NULL)
        return MPI_ERR_NO_MEM;
    v->base = v->tmp;
    if (keep) {
        if (PMPI_Type_dup(type, &v->type) != MPI_SUCCESS)
            return MPI_ERR_TYPE;
        v->owned_type = 1;
    }
    int pos = 0, rc = MPI_SUCCESS;
    if (n == 0) {
        if (load)
            rc = PMPI_Pack(buf, count, type, v->tmp, (int)v->total, &pos, comm);
    } else {
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
            v->off[i] = (uint64_t)pos;
            if (load)
                rc = PMPI_Pack((char *)buf + (MPI_Aint)displs[i] * ext, counts[i], type, v->tmp,
                               (int)v->total, &pos, comm);
            else
                pos += (int)v->cnt[i];
        }
    }
    if (rc == MPI_SUCCESS && load && (uint64_t)pos != v->total) {
        logmsg("MPI_Pack wrote %d bytes for %llu of data: not the native layout", pos,
               (unsigned long long)v->total);
        rc = MPI_ERR_INTERN;
    }
    return rc;
}

/* Unpacks a packed copy into the user's buffer when store, and frees it. */
static int view_close(view_t *v, int store, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    if (v->tmp && store) {
        MPI_Aint lb, ext;
        PMPI_Type_get_extent(v->type, &lb, &ext);
        int pos = 0;
        if (v->n == 0)
            rc = PMPI_Unpack(v->tmp, (int)v->total, &pos, v->user, v->count, v->type, comm);
        else
            for (int i = 0; i < v->n && rc == MPI_SUCCESS; i++) {
                pos = (int)v->off[i];
                rc = PMPI_Unpack(v->tmp, (int)v->total, &pos,
                                 (char *)v->user + (MPI_Aint)v->displs[i] * ext, v->counts[i],
                                 v->type, comm);
            }
    }
    if (v->owned_type)
        PMPI_Type_free(&v->type);
    free(v->tmp);
    free(v->cnt);
    memset(v, 0, sizeof *v);
    return rc;
}

static inline void *at(view_t *v, uint64_t off)
{
    return v->base ? (char *)v->base + off : NULL;
}

/* ------------------------------------------------------------ communicators */

typedef struct dc_comm {
    HcclComm h;     /* NULL: none (why says why) */
    int why;
    int rank, size;
    struct dc_comm *prev, *next;
} dc_comm_t;
static dc_comm_t *comms_head, *comms_tail; /* creation order (lock) */

typedef struct dc_req dc_req_t;
static void reqs_finish_comm(dc_comm_t *s);

static void comm_link(dc_comm_t *s)
{
    pthread_mutex_lock(&lock);
    s->prev = comms_tail;
    if (comms_tail)
        comms_tail->next = s;
    else
        comms_head = s;
    comms_tail = s;
    pthread_mutex_unlock(&lock);
}

static void comm_release(dc_comm_t *s)
{
    HcclResult hres_;
    reqs_finish_comm(s);
    if (s->h) {
        if (HC(HcclCommDestroy(s->h)) != HCCL_SUCCESS)
            logmsg("HcclCommDestroy failed: %s", HcclGetErrorString(hres_));
        s->h = NULL;
    }
}

static int comm_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    dc_comm_t *s = attr;
    comm_release(s);
    pthread_mutex_lock(&lock);
    if (s->prev)
        s->prev->next = s->next;
    else
        comms_head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else
        comms_tail = s->prev;
    pthread_mutex_unlock(&lock);
    free(s);
    return MPI_SUCCESS;
}

/* Every rank of comm says whether it has its hcomm communicator; all keep
 * it only if all have it. */
static int agree(MPI_Comm comm, int ok)
{
    int all = 0;
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return 0;
    return all;
}

/* Attaches the state of comm (h, or none for why). */
static dc_comm_t *comm_attach(MPI_Comm comm, HcclComm h, int why)
{
    dc_comm_t *s = calloc(1, sizeof *s);
    if (s == NULL) {
        logmsg("out of memory for a communicator's state");
        return NULL;
    }
    s->h = h;
    s->why = why;
    PMPI_Comm_rank(comm, &s->rank);
    PMPI_Comm_size(comm, &s->size);
    if (PMPI_Comm_set_attr(comm, g.keyval, s) != MPI_SUCCESS) {
        logmsg("MPI_Comm_set_attr failed");
        free(s);
        return NULL;
    }
    comm_link(s);
    return s;
}

static dc_comm_t *comm_lookup(MPI_Comm comm)
{
    void *v = NULL;
    int flag = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_get_attr(comm, g.keyval, &v, &flag) != MPI_SUCCESS ||
        !flag)
        return NULL;
    return v;
}

/* The hcomm communicator of comm, made at its first routed call. */
static int comm_get(MPI_Comm comm, dc_comm_t **out)
{
    dc_comm_t *s = comm_lookup(comm);
    if (s == NULL) {
        int inter = 0;
        HcclComm h = NULL;
        HcclResult hres_;
        PMPI_Comm_test_inter(comm, &inter);
        if (inter) {
            s = comm_attach(comm, NULL, W_COMM);
        } else {
            const HcclResult r = HC(HcclCommInitMpi(comm, &h));
            int ok = r == HCCL_SUCCESS;
            if (!ok)
                logmsg("HcclCommInitMpi failed (%s): this communicator's collectives go to MPI",
                       HcclGetErrorString(r));
            if (!agree(comm, ok) && h) {
                if (ok)
                    logmsg("another rank has no hcomm communicator: this communicator's "
                           "collectives go to MPI");
                HC(HcclCommDestroy(h));
                h = NULL;
            }
            s = comm_attach(comm, h, h ? W_HCOMM : W_UNAVAILABLE);
            if (s == NULL && h)
                HC(HcclCommDestroy(h));
        }
        if (s == NULL)
            return W_UNAVAILABLE;
    }
    *out = s;
    return s->h ? W_HCOMM : s->why;
}

/* The hosts comm spans (MPI_COMM_TYPE_SHARED's groups), counted at the
 * first call that asks and kept with the communicator; 0 when MPI cannot
 * say. A collective call: every rank asks at the same call (the routing
 * of a call is decided alike on every rank). */
static int hosts_count(MPI_Comm comm)
{
    void *v = NULL;
    int flag = 0;
    if (g.hosts_keyval != MPI_KEYVAL_INVALID &&
        PMPI_Comm_get_attr(comm, g.hosts_keyval, &v, &flag) == MPI_SUCCESS && flag)
        return (int)(intptr_t)v;
    MPI_Comm local;
    int lrank = 0, first, hosts = 0, inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return 0;
    if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) !=
        MPI_SUCCESS)
        return 0;
    PMPI_Comm_rank(local, &lrank);
    PMPI_Comm_free(&local);
    first = lrank == 0;
    if (PMPI_Allreduce(&first, &hosts, 1, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS)
        return 0;
    if (g.hosts_keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_set_attr(comm, g.hosts_keyval, (void *)(intptr_t)hosts);
    return hosts;
}

/* The last communicators a thread routed, with their size and host count:
 * a call that goes to MPI then costs no attribute lookup (Open MPI's takes
 * a lock). An entry is valid while g.comm_gen is unchanged: freeing any
 * communicator that has a host count bumps it (hosts_delete), so a handle
 * that MPI reuses is never taken for the freed one. */
#define SHAPE_CACHE 4
static __thread struct {
    MPI_Comm comm;
    unsigned gen;
    int n, hosts;
} shape_[SHAPE_CACHE];
static __thread unsigned shape_next_;

static int hosts_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)keyval, (void)attr, (void)extra;
    __atomic_add_fetch(&g.comm_gen, 1, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

/* comm's size and host count (0 hosts: unknown); 0 when MPI cannot say its
 * size. */
static int comm_shape(MPI_Comm comm, int *n, int *hosts)
{
    const unsigned gen = __atomic_load_n(&g.comm_gen, __ATOMIC_ACQUIRE);
    for (int i = 0; i < SHAPE_CACHE; i++)
        if (shape_[i].comm == comm && shape_[i].gen == gen) {
            *n = shape_[i].n;
            *hosts = shape_[i].hosts;
            return 1;
        }
    if (PMPI_Comm_size(comm, n) != MPI_SUCCESS)
        return 0;
    *hosts = *n < 2 ? 0 : hosts_count(comm);
    if (*hosts > 0 && g.hosts_keyval != MPI_KEYVAL_INVALID) { /* kept: its free bumps gen */
        const unsigned i = shape_next_++ % SHAPE_CACHE;
        shape_[i].comm = comm;
        shape_[i].gen = gen;
        shape_[i].n = *n;
        shape_[i].hosts = *hosts;
    }
    return 1;
}

/* Whether a built-in row sends this call to MPI. The size of comm is the
 * same on every rank of an intracommunicator (an intercommunicator's calls
 * go to MPI either way), and so is its host count. */
static int builtin_to_mpi(enum coll c, MPI_Comm comm, uint64_t bytes)
{
    int n = -1, hosts = -1;
    for (size_t i = 0; i < sizeof builtin_mpi / sizeof builtin_mpi[0]; i++) {
        if (builtin_mpi[i].c != c || bytes < builtin_mpi[i].lo || bytes >= builtin_mpi[i].hi)
            continue;
        if (n < 0 && !comm_shape(comm, &n, &hosts))
            return 0; /* comm_get and MPI will say why */
        if (n < 2 || hosts < 1)
            return 0;
        if ((builtin_mpi[i].where == ONE_HOST) != (hosts == 1))
            continue;
        const int k = builtin_mpi[i].where == ONE_HOST ? n : hosts;
        if (k >= builtin_mpi[i].nmin && k <= builtin_mpi[i].nmax)
            return 1;
    }
    return 0;
}

/* Whether a call of collective c on comm, moving `bytes` (the same on every
 * rank), goes to hcomm; *cs its communicator. */
static int route(enum coll c, MPI_Comm comm, uint64_t bytes, int root, dc_comm_t **cs)
{
    if (!g.enabled)
        return W_DISABLED;
    if (!(g.colls & (1u << c)))
        return W_NOT_LISTED;
    if (comm == MPI_COMM_NULL)
        return W_ARGS;
    if (g.min_set & (1u << c)) {
        if (bytes < g.min_bytes[c])
            return W_SMALL;
    } else if (builtin_to_mpi(c, comm, bytes))
        return W_BUILTIN;
    int w = comm_get(comm, cs);
    if (w == W_HCOMM && root != -1 && (root < 0 || root >= (*cs)->size))
        return W_ARGS;
    return w;
}

/* A child made by MPI_Comm_split/MPI_Comm_dup of a mapped parent: the
 * parent's hcomm communicator split the same way (no new endpoints). */
static void comm_derive(MPI_Comm parent, int color, int key, MPI_Comm child)
{
    dc_comm_t *p = comm_lookup(parent);
    if (p == NULL || p->h == NULL)
        return; /* the same on every rank of parent: the child maps lazily */
    reqs_finish_comm(p); /* every rank posted them before this collective */
    HcclComm h = NULL;
    HcclResult hres_;
    int ok = HC(HcclCommSplit(p->h, color, key, &h)) == HCCL_SUCCESS;
    if (!ok)
        logmsg("HcclCommSplit failed (%s): the new communicator will have its own",
               HcclGetErrorString(hres_));
    if (child == MPI_COMM_NULL) {
        if (h)
            HC(HcclCommDestroy(h));
        return;
    }
    int r, n;
    uint32_t hr = UINT32_MAX, hn = 0;
    PMPI_Comm_rank(child, &r);
    PMPI_Comm_size(child, &n);
    if (ok && h)
        ok = HcclGetRankId(h, &hr) == HCCL_SUCCESS && HcclGetRankSize(h, &hn) == HCCL_SUCCESS &&
             hr == (uint32_t)r && hn == (uint32_t)n;
    else
        ok = 0;
    if (!agree(child, ok)) {
        if (h)
            HC(HcclCommDestroy(h));
        return; /* no attribute: mapped at its first routed call */
    }
    if (comm_attach(child, h, W_HCOMM) == NULL)
        HC(HcclCommDestroy(h));
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_split(comm, color, key, newcomm);
    if (rc == MPI_SUCCESS && ready() && g.enabled)
        comm_derive(comm, color == MPI_UNDEFINED ? HCCL_SPLIT_NOCOLOR : color, key, *newcomm);
    return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_dup(comm, newcomm);
    if (rc == MPI_SUCCESS && ready() && g.enabled) {
        int r;
        PMPI_Comm_rank(comm, &r);
        comm_derive(comm, 0, r, *newcomm);
    }
    return rc;
}

/* An hcomm call failed: a log line, and MPI's error handler of comm. */
static int hfail(MPI_Comm comm, const char *fn, HcclResult r)
{
    logmsg("%s on hcomm failed: %s (HcclResult %d)", fn, HcclGetErrorString(r), (int)r);
    PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
    return MPI_ERR_OTHER;
}

static int mfail(MPI_Comm comm, const char *fn, int rc)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (PMPI_Error_string(rc, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "MPI error %d", rc);
    logmsg("%s: preparing the buffers for hcomm failed: %s", fn, s);
    PMPI_Comm_call_errhandler(comm, rc);
    return rc;
}

/* ------------------------------------------------------------ requests */

#define POOL_MAX 64
static HcclStream pool[POOL_MAX];
static int npool;

struct dc_req {
    MPI_Request req;     /* the generalized request */
    HcclStream stream;
    dc_comm_t *cs;
    MPI_Comm comm;
    int done, err;
    view_t v[2];         /* released at completion */
    int store[2];        /* unpack v[i] */
    dc_req_t *next;      /* pending list */
};
static dc_req_t *pending; /* lock */

static int grq_query(void *extra, MPI_Status *st)
{
    dc_req_t *r = extra;
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    st->MPI_ERROR = r->err;
    return r->err;
}

static int grq_free(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}

static int grq_cancel(void *extra, int complete)
{
    return MPI_SUCCESS; /* a collective is not cancelled */
}

static dc_req_t *req_new(dc_comm_t *cs, MPI_Comm comm)
{
    dc_req_t *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    HcclResult hres_ = HCCL_SUCCESS;
    pthread_mutex_lock(&lock);
    if (npool > 0)
        r->stream = pool[--npool];
    pthread_mutex_unlock(&lock);
    if (r->stream == NULL && HC(HcclStreamCreate(&r->stream)) != HCCL_SUCCESS) {
        logmsg("HcclStreamCreate failed: %s", HcclGetErrorString(hres_));
        free(r);
        return NULL;
    }
    r->cs = cs;
    r->comm = comm;
    return r;
}

/* Gives the stream back and frees the views (lock held or r private). */
static void req_release(dc_req_t *r, int ok)
{
    HcclResult hres_;
    (void)hres_; /* read by HC() only where its value is used */
    for (int i = 0; i < 2; i++)
        if (view_close(&r->v[i], ok && r->store[i], r->comm) != MPI_SUCCESS && ok)
            r->err = MPI_ERR_INTERN;
    if (npool < POOL_MAX)
        pool[npool++] = r->stream;
    else
        HC(HcclStreamDestroy(r->stream));
    r->stream = NULL;
}

/* Completes r if its stream is done (lock held). */
static int req_poll(dc_req_t *r)
{
    HcclResult hres_;
    if (r->done)
        return 1;
    HcclResult q = HC(HcclStreamQuery(r->stream));
    if (q == HCCL_E_AGAIN)
        return 0;
    r->done = 1;
    if (q != HCCL_SUCCESS) {
        logmsg("a nonblocking collective on hcomm failed: %s", HcclGetErrorString(q));
        r->err = MPI_ERR_OTHER;
    }
    req_release(r, q == HCCL_SUCCESS);
    for (dc_req_t **pp = &pending; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    PMPI_Grequest_complete(r->req);
    return 1;
}

static void reqs_poll_all(void)
{
    pthread_mutex_lock(&lock);
    for (dc_req_t *r = pending, *nx; r; r = nx) {
        nx = r->next;
        req_poll(r);
    }
    pthread_mutex_unlock(&lock);
}

static dc_req_t *req_find(MPI_Request q)
{
    if (q == MPI_REQUEST_NULL)
        return NULL;
    dc_req_t *r;
    pthread_mutex_lock(&lock);
    for (r = pending; r; r = r->next)
        if (r->req == q)
            break;
    pthread_mutex_unlock(&lock);
    return r;
}

/* Waits for r (not locked: the stream synchronizes in this thread). */
static void req_wait(dc_req_t *r)
{
    HcclResult hres_;
    (void)hres_; /* read by HC() only where its value is used */
    HC(HcclStreamSynchronize(r->stream));
    pthread_mutex_lock(&lock);
    req_poll(r);
    pthread_mutex_unlock(&lock);
}

/* Before a communicator is split, duplicated or freed: its requests are
 * waited for (every rank has posted them). */
static void reqs_finish_comm(dc_comm_t *s)
{
    for (;;) {
        dc_req_t *r;
        pthread_mutex_lock(&lock);
        for (r = pending; r && !(s == NULL || r->cs == s); r = r->next)
            ;
        pthread_mutex_unlock(&lock);
        if (r == NULL)
            return;
        req_wait(r);
    }
}

/* The end of a blocking collective: the views closed (unpacked when all
 * went well), and the first error reported. rc: preparing the views; hr:
 * the hcomm call. */
static int finish(MPI_Comm comm, const char *fn, int rc, HcclResult hr, view_t v[2],
                  const int store[2])
{
    int ok = rc == MPI_SUCCESS && hr == HCCL_SUCCESS, crc = MPI_SUCCESS;
    for (int i = 0; i < 2; i++) {
        int e = view_close(&v[i], ok && store[i], comm);
        if (crc == MPI_SUCCESS)
            crc = e;
    }
    if (rc != MPI_SUCCESS)
        return mfail(comm, fn, rc);
    if (hr != HCCL_SUCCESS)
        return hfail(comm, fn, hr);
    return crc == MPI_SUCCESS ? MPI_SUCCESS : mfail(comm, fn, crc);
}

/* The end of posting a nonblocking collective (rc, hr as in finish): the
 * request, which completes when r's stream is done. */
static int req_post(dc_req_t *r, int rc, HcclResult hr, MPI_Comm comm, const char *fn,
                    MPI_Request *request)
{
    if (rc == MPI_SUCCESS && hr == HCCL_SUCCESS)
        rc = PMPI_Grequest_start(grq_query, grq_free, grq_cancel, r, &r->req);
    else if (rc == MPI_SUCCESS)
        rc = -1;
    if (rc != MPI_SUCCESS) {
        HcclResult hres_;
    (void)hres_; /* read by HC() only where its value is used */
        if (hr == HCCL_SUCCESS)
            HC(HcclStreamSynchronize(r->stream)); /* posted: let it end before the views go */
        pthread_mutex_lock(&lock);
        req_release(r, 0);
        pthread_mutex_unlock(&lock);
        free(r);
        return rc == -1 ? hfail(comm, fn, hr) : mfail(comm, fn, rc);
    }
    *request = r->req;
    pthread_mutex_lock(&lock);
    r->next = pending;
    __atomic_store_n(&pending, r, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
    return MPI_SUCCESS;
}

static inline int any_pending(void)
{
    return __atomic_load_n(&pending, __ATOMIC_ACQUIRE) != NULL;
}

static int ours_in(int n, const MPI_Request *reqs)
{
    for (int i = 0; i < n; i++)
        if (req_find(reqs[i]))
            return 1;
    return 0;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    dc_req_t *r;
    if (any_pending() && request && (r = req_find(*request)))
        req_wait(r);
    return PMPI_Wait(request, status);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (any_pending())
        reqs_poll_all();
    return PMPI_Test(request, flag, status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    dc_req_t *r;
    if (any_pending() && requests)
        for (int i = 0; i < count; i++)
            if ((r = req_find(requests[i])))
                req_wait(r);
    return PMPI_Waitall(count, requests, statuses);
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    if (any_pending())
        reqs_poll_all();
    return PMPI_Testall(count, requests, flag, statuses);
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    if (any_pending())
        reqs_poll_all();
    return PMPI_Testany(count, requests, index, flag, status);
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    if (any_pending())
        reqs_poll_all();
    return PMPI_Testsome(incount, requests, outcount, indices, statuses);
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    if (!any_pending() || !requests || !ours_in(count, requests))
        return PMPI_Waitany(count, requests, index, status);
    for (;;) {
        int flag = 0;
        reqs_poll_all();
        int rc = PMPI_Testany(count, requests, index, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        sched_yield();
    }
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    if (!any_pending() || !requests || !ours_in(incount, requests))
        return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    for (;;) {
        reqs_poll_all();
        int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
        if (rc != MPI_SUCCESS || *outcount != 0)
            return rc;
        sched_yield();
    }
}

/* ------------------------------------------------------------ collectives */

/* Allreduce, blocking (r NULL) or on r's stream. */
static int do_allreduce(const void *sb, void *rb, int count, HcclDataType ht, HcclReduceOp ho,
                        dc_comm_t *cs, HcclStream s)
{
    HcclResult hres_;
    void *src = sb == MPI_IN_PLACE ? rb : (void *)sb;
    return HC(HcclAllReduce(src, rb, (uint64_t)count, ht, ho, cs->h, s));
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
    HcclDataType ht;
    HcclReduceOp ho;
    size_t es;
    dc_comm_t *cs = NULL;
    if (!ready())
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    int w = red_check(count, datatype, op, &ht, &ho, &es);
    if (w == W_HCOMM)
        w = route(C_ALLREDUCE, comm, (uint64_t)count * es, -1, &cs);
    if (falls(C_ALLREDUCE, w))
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    HcclResult hr = do_allreduce(sendbuf, recvbuf, count, ht, ho, cs, NULL);
    return hr == HCCL_SUCCESS ? MPI_SUCCESS : hfail(comm, "MPI_Allreduce", hr);
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    HcclDataType ht;
    HcclReduceOp ho;
    size_t es;
    dc_comm_t *cs = NULL;
    if (!ready())
        return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
    int w = red_check(count, datatype, op, &ht, &ho, &es);
    if (w == W_HCOMM && request == NULL)
        w = W_ARGS;
    if (w == W_HCOMM)
        w = route(C_IALLREDUCE, comm, (uint64_t)count * es, -1, &cs);
    if (falls(C_IALLREDUCE, w))
        return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
    dc_req_t *r = req_new(cs, comm);
    if (r == NULL)
        return mfail(comm, "MPI_Iallreduce", MPI_ERR_NO_MEM);
    return req_post(r, MPI_SUCCESS, do_allreduce(sendbuf, recvbuf, count, ht, ho, cs, r->stream),
                    comm, "MPI_Iallreduce", request);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
    HcclDataType ht;
    HcclReduceOp ho;
    size_t es;
    dc_comm_t *cs = NULL;
    HcclResult hres_;
    if (!ready())
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    int w = red_check(count, datatype, op, &ht, &ho, &es);
    if (w == W_HCOMM)
        w = route(C_REDUCE, comm, (uint64_t)count * es, root, &cs);
    if (falls(C_REDUCE, w))
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    int me = cs->rank == root;
    void *src = sendbuf == MPI_IN_PLACE && me ? recvbuf : (void *)sendbuf;
    HC(HcclReduce(src, me ? recvbuf : NULL, (uint64_t)count, ht, ho, (uint32_t)root, cs->h, NULL));
    return hres_ == HCCL_SUCCESS ? MPI_SUCCESS : hfail(comm, "MPI_Reduce", hres_);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    HcclDataType ht;
    HcclReduceOp ho;
    size_t es;
    dc_comm_t *cs = NULL;
    HcclResult hres_;
    if (!ready())
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    int w = red_check(recvcount, datatype, op, &ht, &ho, &es);
    if (w == W_HCOMM)
        w = route(C_RSB, comm, (uint64_t)recvcount * es, -1, &cs);
    if (falls(C_RSB, w))
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    /* in place: the input is recvbuf; hcomm's in-place form leaves this
     * rank's block where it was, moved to the front after */
    size_t blk = (size_t)recvcount * es;
    void *src = sendbuf == MPI_IN_PLACE ? recvbuf : (void *)sendbuf;
    void *dst = sendbuf == MPI_IN_PLACE ? (char *)recvbuf + (size_t)cs->rank * blk : recvbuf;
    HC(HcclReduceScatter(src, dst, (uint64_t)recvcount, ht, ho, cs->h, NULL));
    if (hres_ != HCCL_SUCCESS)
        return hfail(comm, "MPI_Reduce_scatter_block", hres_);
    if (dst != recvbuf)
        memmove(recvbuf, dst, blk);
    return MPI_SUCCESS;
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    HcclDataType ht;
    HcclReduceOp ho;
    size_t es;
    dc_comm_t *cs = NULL;
    HcclResult hres_;
    if (!ready())
        return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    int w = red_check(0, datatype, op, &ht, &ho, &es), n = 0;
    uint64_t total = 0;
    if (w == W_HCOMM && (comm == MPI_COMM_NULL || recvcounts == NULL ||
                         PMPI_Comm_size(comm, &n) != MPI_SUCCESS))
        w = W_ARGS;
    for (int i = 0; w == W_HCOMM && i < n; i++) {
        if (recvcounts[i] < 0)
            w = W_ARGS;
        total += (uint64_t)recvcounts[i];
    }
    int even = 1; /* equal blocks: HcclReduceScatter, else HcclReduceScatterV */
    for (int i = 1; w == W_HCOMM && i < n; i++)
        even &= recvcounts[i] == recvcounts[0];
    if (w == W_HCOMM)
        w = route(C_RS, comm, total * es, -1, &cs);
    /* small blocks of different sizes: to MPI by rows of their own
     * (recvcounts are the same on every rank); with a floor of its own
     * (HCOMM_MPI_MIN_BYTES) the collective keeps no built-in rule */
    if (w == W_HCOMM && !even && !(g.min_set & (1u << C_RS)) &&
        builtin_to_mpi(C_RS_UNEVEN, comm, total * es))
        w = W_UNEVEN;
    if (falls(C_RS, w))
        return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    uint64_t *v = malloc(2 * (size_t)n * sizeof(uint64_t));
    if (v == NULL)
        return mfail(comm, "MPI_Reduce_scatter", MPI_ERR_NO_MEM);
    uint64_t off = 0;
    for (int i = 0; i < n; i++) {
        v[i] = (uint64_t)recvcounts[i];
        v[n + i] = off;
        off += v[i];
    }
    void *src = (void *)sendbuf, *tmp = NULL;
    if (sendbuf == MPI_IN_PLACE) { /* the input is recvbuf, which hcomm must not write into */
        tmp = malloc(total * es + 1);
        if (tmp == NULL) {
            free(v);
            return mfail(comm, "MPI_Reduce_scatter", MPI_ERR_NO_MEM);
        }
        memcpy(tmp, recvbuf, total * es);
        src = tmp;
    }
    if (even)
        HC(HcclReduceScatter(src, recvbuf, v[0], ht, ho, cs->h, NULL));
    else
        HC(HcclReduceScatterV(src, v, v + n, recvbuf, v[cs->rank], ht, ho, cs->h, NULL));
    free(tmp);
    free(v);
    return hres_ == HCCL_SUCCESS ? MPI_SUCCESS : hfail(comm, "MPI_Reduce_scatter", hres_);
}


/* The data-moving collectives below run in two steps: *_run opens the byte
 * views of the buffers (v[], store[]: unpack v[i] at the end) and makes
 * the hcomm call (*hr), blocking (s NULL) or on a stream; it returns an
 * MPI error of the preparation. finish() or req_post() ends the call. */

static int bcast_run(void *buf, int count, MPI_Datatype dt, uint64_t bytes, int root,
                     MPI_Comm comm, dc_comm_t *cs, view_t v[2], int store[2], HcclStream s,
                     HcclResult *hr)
{
    HcclResult hres_;
    int me = cs->rank == root;
    int rc = view_open(&v[0], buf, count, NULL, NULL, 0, dt, me, 0, s != NULL, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    store[0] = !me;
    *hr = HC(HcclBroadcast(at(&v[0], 0), bytes, HCCL_DATA_TYPE_UINT8, (uint32_t)root, cs->h, s));
    return MPI_SUCCESS;
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    uint64_t bytes = 0;
    dc_comm_t *cs = NULL;
    if (!ready())
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    int w = move_bytes(count, datatype, &bytes);
    if (w == W_HCOMM)
        w = route(C_BCAST, comm, bytes, root, &cs);
    if (falls(C_BCAST, w))
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    view_t v[2] = {{0}};
    int store[2] = {0, 0};
    HcclResult hr = HCCL_SUCCESS;
    int rc = bcast_run(buffer, count, datatype, bytes, root, comm, cs, v, store, NULL, &hr);
    return finish(comm, "MPI_Bcast", rc, hr, v, store);
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request)
{
    uint64_t bytes = 0;
    dc_comm_t *cs = NULL;
    if (!ready())
        return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
    int w = move_bytes(count, datatype, &bytes);
    if (w == W_HCOMM && request == NULL)
        w = W_ARGS;
    if (w == W_HCOMM)
        w = route(C_IBCAST, comm, bytes, root, &cs);
    if (falls(C_IBCAST, w))
        return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
    dc_req_t *r = req_new(cs, comm);
    if (r == NULL)
        return mfail(comm, "MPI_Ibcast", MPI_ERR_NO_MEM);
    HcclResult hr = HCCL_SUCCESS;
    int rc = bcast_run(buffer, count, datatype, bytes, root, comm, cs, r->v, r->store, r->stream,
                       &hr);
    return req_post(r, rc, hr, comm, "MPI_Ibcast", request);
}

/* Allgather: block = recvcount elements of recvtype, the same on all ranks. */
static int allgather_run(const void *sb, int scount, MPI_Datatype stype, void *rb, int rcount,
                         MPI_Datatype rtype, uint64_t blk, MPI_Comm comm, dc_comm_t *cs,
                         view_t v[2], int store[2], HcclStream s, HcclResult *hr)
{
    HcclResult hres_;
    int inplace = sb == MPI_IN_PLACE;
    int rc = view_open(&v[0], rb, rcount * cs->size, NULL, NULL, 0, rtype, inplace, 0, s != NULL,
                       comm);
    if (rc != MPI_SUCCESS)
        return rc;
    store[0] = 1;
    void *src = at(&v[0], (uint64_t)cs->rank * blk); /* hcomm's in-place form */
    if (!inplace) {
        if ((rc = view_open(&v[1], (void *)sb, scount, NULL, NULL, 0, stype, 1, 0, 0, comm)))
            return rc;
        src = at(&v[1], 0);
    }
    *hr = HC(HcclAllGather(src, at(&v[0], 0), blk, HCCL_DATA_TYPE_UINT8, cs->h, s));
    return MPI_SUCCESS;
}

/* The block of an allgather/alltoall/scatter/gather from the receive side
 * (or the send side where the receive side is not given); a send side that
 * says otherwise is an error for MPI to report. */
static int block_bytes(const void *sb, int scount, MPI_Datatype stype, int use_s, int rcount,
                       MPI_Datatype rtype, int use_r, uint64_t *blk)
{
    uint64_t sbytes = 0, rbytes = 0;
    if (use_s && sb != MPI_IN_PLACE && move_bytes(scount, stype, &sbytes) != W_HCOMM)
        return W_ARGS;
    if (use_r && move_bytes(rcount, rtype, &rbytes) != W_HCOMM)
        return W_ARGS;
    if (use_s && use_r && sb != MPI_IN_PLACE && sbytes != rbytes)
        return W_ARGS;
    *blk = use_r ? rbytes : sbytes;
    return W_HCOMM;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    uint64_t blk = 0;
    dc_comm_t *cs = NULL;
    if (!ready())
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    int w = block_bytes(sendbuf, sendcount, sendtype, 1, recvcount, recvtype, 1, &blk);
    if (w == W_HCOMM)
        w = route(C_ALLGATHER, comm, blk, -1, &cs);
    if (falls(C_ALLGATHER, w))
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    view_t v[2] = {{0}};
    int store[2] = {0, 0};
    HcclResult hr = HCCL_SUCCESS;
    int rc = allgather_run(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, blk, comm,
                           cs, v, store, NULL, &hr);
    return finish(comm, "MPI_Allgather", rc, hr, v, store);
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    uint64_t blk = 0;
    dc_comm_t *cs = NULL;
    if (!ready())
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                               request);
    int w = block_bytes(sendbuf, sendcount, sendtype, 1, recvcount, recvtype, 1, &blk);
    if (w == W_HCOMM && request == NULL)
        w = W_ARGS;
    if (w == W_HCOMM)
        w = route(C_IALLGATHER, comm, blk, -1, &cs);
    if (falls(C_IALLGATHER, w))
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                               request);
    dc_req_t *r = req_new(cs, comm);
    if (r == NULL)
        return mfail(comm, "MPI_Iallgather", MPI_ERR_NO_MEM);
    HcclResult hr = HCCL_SUCCESS;
    int rc = allgather_run(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, blk, comm,
                           cs, r->v, r->store, r->stream, &hr);
    return req_post(r, rc, hr, comm, "MPI_Iallgather", request);
}

/* Sum of counts[i] elements of type over n ranks (W_ARGS if a count is bad). */
static int counts_bytes(const int *counts, int n, MPI_Datatype type, uint64_t *total)
{
    uint64_t b;
    *total = 0;
    if (counts == NULL)
        return W_ARGS;
    for (int i = 0; i < n; i++) {
        if (move_bytes(counts[i], type, &b) != W_HCOMM)
            return W_ARGS;
        *total += b;
    }
    return W_HCOMM;
}

static int comm_size_of(MPI_Comm comm, int *n)
{
    return comm != MPI_COMM_NULL && PMPI_Comm_size(comm, n) == MPI_SUCCESS ? W_HCOMM : W_ARGS;
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    uint64_t total = 0;
    int n = 0;
    dc_comm_t *cs = NULL;
    HcclResult hres_ = HCCL_SUCCESS;
    if (!ready())
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, comm);
    int w = comm_size_of(comm, &n);
    if (w == W_HCOMM)
        w = counts_bytes(recvcounts, n, recvtype, &total);
    if (w == W_HCOMM && displs == NULL)
        w = W_ARGS;
    if (w == W_HCOMM)
        w = route(C_ALLGATHERV, comm, total, -1, &cs);
    if (w == W_HCOMM) {
        uint64_t sb = 0, rb = 0;
        if (sendbuf != MPI_IN_PLACE && (move_bytes(sendcount, sendtype, &sb) != W_HCOMM ||
                                        move_bytes(recvcounts[cs->rank], recvtype, &rb) != W_HCOMM ||
                                        sb != rb))
            w = W_ARGS; /* for MPI to report */
    }
    if (falls(C_ALLGATHERV, w))
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, comm);
    view_t v[2] = {{0}};
    int store[2] = {1, 0};
    int me = cs->rank;
    int rc = view_open(&v[0], recvbuf, 0, recvcounts, displs, n, recvtype, sendbuf == MPI_IN_PLACE,
                       0, 0, comm);
    if (rc == MPI_SUCCESS) {
        /* in place: this rank's block, copied (hcomm sends it to itself too) */
        if (sendbuf == MPI_IN_PLACE) {
            rc = view_open(&v[1], at(&v[0], v[0].off[me]), (int)v[0].cnt[me], NULL, NULL, 0,
                           MPI_BYTE, 1, 1, 0, comm);
        } else {
            rc = view_open(&v[1], (void *)sendbuf, sendcount, NULL, NULL, 0, sendtype, 1, 0, 0,
                           comm);
        }
    }
    if (rc == MPI_SUCCESS)
        HC(HcclAllGatherV(at(&v[1], 0), v[0].cnt[me], at(&v[0], 0), v[0].cnt, v[0].off,
                          HCCL_DATA_TYPE_UINT8, cs->h, NULL));
    return finish(comm, "MPI_Allgatherv", rc, hres_, v, store);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    uint64_t blk = 0;
    dc_comm_t *cs = NULL;
    HcclResult hres_ = HCCL_SUCCESS;
    if (!ready())
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    int w = block_bytes(sendbuf, sendcount, sendtype, 1, recvcount, recvtype, 1, &blk);
    if (w == W_HCOMM)
        w = route(C_ALLTOALL, comm, blk, -1, &cs);
    if (falls(C_ALLTOALL, w))
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    view_t v[2] = {{0}};
    int store[2] = {1, 0}, n = cs->size;
    int rc = view_open(&v[0], recvbuf, recvcount * n, NULL, NULL, 0, recvtype, 0, 0, 0, comm);
    if (rc == MPI_SUCCESS) {
        if (sendbuf == MPI_IN_PLACE) /* the input is recvbuf: a packed copy */
            rc = view_open(&v[1], recvbuf, recvcount * n, NULL, NULL, 0, recvtype, 1, 1, 0, comm);
        else
            rc = view_open(&v[1], (void *)sendbuf, sendcount * n, NULL, NULL, 0, sendtype, 1, 0, 0,
                           comm);
    }
    if (rc == MPI_SUCCESS)
        HC(HcclAlltoAll(at(&v[1], 0), blk, HCCL_DATA_TYPE_UINT8, at(&v[0], 0), blk,
                        HCCL_DATA_TYPE_UINT8, cs->h, NULL));
    return finish(comm, "MPI_Alltoall", rc, hres_, v, store);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    uint64_t total = 0;
    int n = 0;
    dc_comm_t *cs = NULL;
    HcclResult hres_ = HCCL_SUCCESS;
    if (!ready())
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
    /* no size the same on every rank: no threshold */
    int w = comm_size_of(comm, &n);
    if (w == W_HCOMM)
        w = counts_bytes(recvcounts, n, recvtype, &total);
    if (w == W_HCOMM && sendbuf != MPI_IN_PLACE)
        w = counts_bytes(sendcounts, n, sendtype, &total);
    if (w == W_HCOMM && (rdispls == NULL || (sendbuf != MPI_IN_PLACE && sdispls == NULL)))
        w = W_ARGS;
    if (w == W_HCOMM)
        w = route(C_ALLTOALLV, comm, UINT64_MAX, -1, &cs);
    if (falls(C_ALLTOALLV, w))
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
    view_t v[2] = {{0}};
    int store[2] = {1, 0};
    int rc = view_open(&v[0], recvbuf, 0, recvcounts, rdispls, n, recvtype, 0, 0, 0, comm);
    if (rc == MPI_SUCCESS) {
        if (sendbuf == MPI_IN_PLACE)
            rc = view_open(&v[1], recvbuf, 0, recvcounts, rdispls, n, recvtype, 1, 1, 0, comm);
        else
            rc = view_open(&v[1], (void *)sendbuf, 0, sendcounts, sdispls, n, sendtype, 1, 0, 0,
                           comm);
    }
    if (rc == MPI_SUCCESS)
        HC(HcclAlltoAllV(at(&v[1], 0), v[1].cnt, v[1].off, HCCL_DATA_TYPE_UINT8, at(&v[0], 0),
                         v[0].cnt, v[0].off, HCCL_DATA_TYPE_UINT8, cs->h, NULL));
    return finish(comm, "MPI_Alltoallv", rc, hres_, v, store);
}

/* Scatter's and Gather's routing: whether this rank is the root (-1: the
 * communicator is not usable), whether the call is in place there (the
 * root's recvbuf for Scatter, its sendbuf for Gather is MPI_IN_PLACE), the
 * block's bytes and the route. The buffers significant only at the root
 * (Scatter's send, Gather's receive) count there alone. */
static int route_rooted(enum coll c, MPI_Comm comm, int root, const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, const void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int *isroot, int *inplace, uint64_t *blk,
                        dc_comm_t **cs)
{
    int me = 0, w = W_HCOMM;
    *isroot = -1;
    if (comm == MPI_COMM_NULL || PMPI_Comm_rank(comm, &me) != MPI_SUCCESS)
        w = W_ARGS;
    else
        *isroot = me == root;
    const int scatter = c == C_SCATTER;
    *inplace = *isroot == 1 && (scatter ? recvbuf : sendbuf) == MPI_IN_PLACE;
    if (w == W_HCOMM)
        w = block_bytes(sendbuf, sendcount, sendtype, scatter ? *isroot == 1 : !*inplace,
                        recvcount, recvtype, scatter ? !*inplace : *isroot == 1, blk);
    if (w == W_HCOMM)
        w = route(c, comm, *blk, root, cs);
    return w;
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    uint64_t blk = 0;
    dc_comm_t *cs = NULL;
    HcclResult hres_ = HCCL_SUCCESS;
    if (!ready())
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                            comm);
    /* sendcount/sendtype count at the root only; recvbuf is ignored there in place */
    int isroot, inplace;
    const int w = route_rooted(C_SCATTER, comm, root, sendbuf, sendcount, sendtype, recvbuf,
                               recvcount, recvtype, &isroot, &inplace, &blk, &cs);
    if (falls(C_SCATTER, w))
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                            comm);
    view_t v[2] = {{0}};
    int store[2] = {1, 0}, rc = MPI_SUCCESS;
    void *dst = NULL;
    if (isroot)
        rc = view_open(&v[1], (void *)sendbuf, sendcount * cs->size, NULL, NULL, 0, sendtype, 1,
                       0, 0, comm);
    if (rc == MPI_SUCCESS && inplace) {
        store[0] = 0;
        dst = at(&v[1], (uint64_t)root * blk); /* hcomm's in-place form */
    } else if (rc == MPI_SUCCESS) {
        rc = view_open(&v[0], recvbuf, recvcount, NULL, NULL, 0, recvtype, 0, 0, 0, comm);
        dst = at(&v[0], 0);
    }
    if (rc == MPI_SUCCESS)
        HC(HcclScatter(isroot ? at(&v[1], 0) : NULL, dst, blk, HCCL_DATA_TYPE_UINT8,
                       (uint32_t)root, cs->h, NULL));
    return finish(comm, "MPI_Scatter", rc, hres_, v, store);
}

/* Gather: an AlltoAllV in which every rank sends only to the root. */
int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    uint64_t blk = 0;
    dc_comm_t *cs = NULL;
    HcclResult hres_ = HCCL_SUCCESS;
    if (!ready())
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                           comm);
    int isroot, inplace;
    const int w = route_rooted(C_GATHER, comm, root, sendbuf, sendcount, sendtype, recvbuf,
                               recvcount, recvtype, &isroot, &inplace, &blk, &cs);
    if (falls(C_GATHER, w))
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                           comm);
    int n = cs->size;
    view_t v[2] = {{0}};
    int store[2] = {isroot, 0}, rc = MPI_SUCCESS;
    uint64_t *a = calloc(4 * (size_t)n, sizeof(uint64_t)); /* sc, sd, rc, rd */
    if (a == NULL)
        return mfail(comm, "MPI_Gather", MPI_ERR_NO_MEM);
    if (isroot) /* in place: the root's own block stays (loaded for a packed copy) */
        rc = view_open(&v[0], recvbuf, recvcount * n, NULL, NULL, 0, recvtype, inplace, 0, 0, comm);
    if (rc == MPI_SUCCESS && !inplace)
        rc = view_open(&v[1], (void *)sendbuf, sendcount, NULL, NULL, 0, sendtype, 1, 0, 0, comm);
    if (rc == MPI_SUCCESS) {
        if (!inplace)
            a[root] = blk;
        if (isroot)
            for (int i = 0; i < n; i++) {
                a[2 * n + i] = i == root && inplace ? 0 : blk;
                a[3 * n + i] = (uint64_t)i * blk;
            }
        HC(HcclAlltoAllV(at(&v[1], 0), a, a + n, HCCL_DATA_TYPE_UINT8, at(&v[0], 0), a + 2 * n,
                         a + 3 * n, HCCL_DATA_TYPE_UINT8, cs->h, NULL));
    }
    free(a);
    return finish(comm, "MPI_Gather", rc, hres_, v, store);
}

int MPI_Barrier(MPI_Comm comm)
{
    dc_comm_t *cs = NULL;
    HcclResult hres_;
    if (!ready())
        return PMPI_Barrier(comm);
    if (falls(C_BARRIER, route(C_BARRIER, comm, 0, -1, &cs)))
        return PMPI_Barrier(comm);
    HC(HcclBarrier(cs->h, NULL));
    return hres_ == HCCL_SUCCESS ? MPI_SUCCESS : hfail(comm, "MPI_Barrier", hres_);
}

/* ------------------------------------------------------------ finalize */

/* HCOMM_MPI_STATS=1: rank 0 prints the calls of all ranks. */
static void print_stats(void)
{
    uint64_t all[C_N][W_N];
    int n = 1;
    PMPI_Comm_size(MPI_COMM_WORLD, &n);
    if (PMPI_Reduce(tally_, all, C_N * W_N, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD) !=
            MPI_SUCCESS || g.wrank != 0)
        return;
    fprintf(stderr, "hcomm-mpi: calls of %d rank(s) (HCOMM_MPI_STATS)%s\n", n,
            g.enabled ? "" : "; the drop-in is off (HCOMM_MPI_DISABLE or a bad setting)");
    for (int c = 0; c < C_N; c++) {
        uint64_t fell = 0;
        for (int w = 1; w < W_N; w++)
            fell += all[c][w];
        if (all[c][W_HCOMM] + fell == 0)
            continue;
        char why[400] = "";
        size_t len = 0;
        for (int w = 1; w < W_N && len < sizeof why; w++)
            if (all[c][w])
                len += (size_t)snprintf(why + len, sizeof why - len, "%s%s %llu",
                                        len ? ", " : " (", why_name[w],
                                        (unsigned long long)all[c][w]);
        if (len && len < sizeof why - 1)
            strcat(why, ")");
        fprintf(stderr, "hcomm-mpi: %-20s hcomm %llu  mpi %llu%s\n", coll_name[c],
                (unsigned long long)all[c][W_HCOMM], (unsigned long long)fell, why);
    }
}

int MPI_Finalize(void)
{
    if (!inside && __atomic_load_n(&g.state, __ATOMIC_ACQUIRE)) {
        HcclResult hres_;
    (void)hres_; /* read by HC() only where its value is used */
        reqs_finish_comm(NULL);
        if (g.stats)
            print_stats();
        /* newest first: a split child before its parent */
        pthread_mutex_lock(&lock);
        dc_comm_t *s = comms_tail;
        pthread_mutex_unlock(&lock);
        for (; s; s = s->prev)
            comm_release(s); /* the attributes go with their communicators */
        for (int i = 0; i < npool; i++)
            HC(HcclStreamDestroy(pool[i]));
        npool = 0;
    }
    return PMPI_Finalize();
}
