/*
 * test/mpi/test_mpidrop.c - a plain MPI program (no hcomm header, no hcomm
 * library) that test/mpi/mpidrop.sh runs with libhcomm_mpi.so preloaded.
 * Every intercepted collective runs twice on the same input: once by its
 * MPI_ name (hcomm, when the drop-in routes it) and once by its PMPI_ name
 * (Open MPI itself, never intercepted); the two results must be equal byte
 * for byte, on the whole receive buffer, gaps of derived datatypes included.
 * Reductions use small integers, so that every summation order gives the
 * same floating-point result. The verdict is gathered with PMPI_Allreduce,
 * which a broken drop-in cannot touch.
 *
 * Covered: every intercepted collective (blocking, and MPI_Iallreduce,
 * MPI_Ibcast, MPI_Iallgather completed by MPI_Wait, MPI_Test, MPI_Waitall
 * and MPI_Waitany), every mapped datatype with MPI_SUM and four with
 * MPI_PROD/MAX/MIN, MPI_IN_PLACE, counts 0 and primes, ranks passing
 * different datatypes of one type signature (MPI_INT, a contiguous type, a
 * vector with gaps), MPI_COMM_WORLD and communicators made by MPI_Comm_dup
 * and MPI_Comm_split (reordered, and with MPI_UNDEFINED), calls that fall
 * through (MPI_MAXLOC, a user op, MPI_LONG_DOUBLE, an intercommunicator).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nerr, wrank;

#define FAIL(...)                                                                            \
    do {                                                                                     \
        if (nerr++ < 20) {                                                                   \
            fprintf(stderr, "test_mpidrop: rank %d: FAIL: ", wrank);                         \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
        }                                                                                    \
    } while (0)

#define SAME(a, b, n, ...)                                                                   \
    do {                                                                                     \
        if (memcmp((a), (b), (n)) != 0)                                                      \
            FAIL(__VA_ARGS__);                                                               \
    } while (0)

/* ------------------------------------------------------------ reductions */

typedef struct {
    MPI_Datatype t;
    const char *name;
    int kind; /* 0 signed, 1 unsigned, 2 float */
} rtype_t;

static void put(void *p, const rtype_t *rt, int sz, size_t i, long v)
{
    char *q = (char *)p + i * (size_t)sz;
    if (rt->kind == 2) {
        if (sz == 4) {
            float f = (float)v;
            memcpy(q, &f, 4);
        } else {
            double d = (double)v;
            memcpy(q, &d, 8);
        }
        return;
    }
    int64_t x = v;
    if (rt->kind == 1 && x < 0)
        x = -x;
    memcpy(q, &x, (size_t)sz); /* little endian: the low bytes */
}

/* Input of rank r, element i, for op o: small enough that no product or sum
 * overflows the narrowest type on 5 ranks. */
static long value(int r, size_t i, MPI_Op op)
{
    if (op == MPI_PROD)
        return (long)((r + i) % 3 == 0 ? 2 : ((r + i) % 3 == 1 ? 1 : -1));
    return (long)((r * 7 + (long)i * 3) % 23) - 11;
}

static void fill(void *p, const rtype_t *rt, int sz, size_t n, int r, MPI_Op op, int salt)
{
    for (size_t i = 0; i < n; i++)
        put(p, rt, sz, i, value(r + salt, i, op));
}

static const char *opname(MPI_Op op)
{
    return op == MPI_SUM ? "SUM" : op == MPI_PROD ? "PROD" : op == MPI_MAX ? "MAX" : "MIN";
}

static void test_reduction(MPI_Comm comm, const rtype_t *rt, MPI_Op op, int count)
{
    int r, n, sz;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    MPI_Type_size(rt->t, &sz);
    size_t full = (size_t)count * (size_t)n * (size_t)sz + 8;
    char *s = malloc(full), *a = malloc(full), *b = malloc(full);
    const char *tn = rt->name, *on = opname(op);

    /* MPI_Allreduce, out of place and in place; MPI_Iallreduce */
    fill(s, rt, sz, (size_t)count, r, op, 0);
    memset(a, 0x5a, full);
    memset(b, 0x5a, full);
    MPI_Allreduce(s, a, count, rt->t, op, comm);
    PMPI_Allreduce(s, b, count, rt->t, op, comm);
    SAME(a, b, full, "MPI_Allreduce %s %s count %d", tn, on, count);
    memcpy(a, s, (size_t)count * sz);
    memcpy(b, s, (size_t)count * sz);
    MPI_Allreduce(MPI_IN_PLACE, a, count, rt->t, op, comm);
    PMPI_Allreduce(MPI_IN_PLACE, b, count, rt->t, op, comm);
    SAME(a, b, full, "MPI_Allreduce(MPI_IN_PLACE) %s %s count %d", tn, on, count);
    MPI_Request q;
    memset(a, 0x5a, full);
    MPI_Iallreduce(s, a, count, rt->t, op, comm, &q);
    if (count % 2) {
        int flag = 0;
        while (!flag)
            MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    if (q != MPI_REQUEST_NULL)
        FAIL("MPI_Iallreduce: the request is not MPI_REQUEST_NULL after completion");
    PMPI_Allreduce(s, b, count, rt->t, op, comm);
    SAME(a, b, (size_t)count * sz, "MPI_Iallreduce %s %s count %d", tn, on, count);

    /* MPI_Reduce, at a root that moves; in place at the root */
    int root = (count + 1) % n;
    memset(a, 0x5a, full);
    memset(b, 0x5a, full);
    MPI_Reduce(s, a, count, rt->t, op, root, comm);
    PMPI_Reduce(s, b, count, rt->t, op, root, comm);
    SAME(a, b, full, "MPI_Reduce %s %s count %d root %d", tn, on, count, root);
    memcpy(a, s, (size_t)count * sz);
    memcpy(b, s, (size_t)count * sz);
    MPI_Reduce(r == root ? MPI_IN_PLACE : s, a, count, rt->t, op, root, comm);
    PMPI_Reduce(r == root ? MPI_IN_PLACE : s, b, count, rt->t, op, root, comm);
    SAME(a, b, full, "MPI_Reduce(MPI_IN_PLACE) %s %s count %d root %d", tn, on, count, root);

    /* MPI_Reduce_scatter_block: count per rank */
    fill(s, rt, sz, (size_t)count * n, r, op, 0);
    memset(a, 0x5a, full);
    memset(b, 0x5a, full);
    MPI_Reduce_scatter_block(s, a, count, rt->t, op, comm);
    PMPI_Reduce_scatter_block(s, b, count, rt->t, op, comm);
    SAME(a, b, full, "MPI_Reduce_scatter_block %s %s count %d", tn, on, count);
    memcpy(a, s, (size_t)count * n * sz);
    memcpy(b, s, (size_t)count * n * sz);
    MPI_Reduce_scatter_block(MPI_IN_PLACE, a, count, rt->t, op, comm);
    PMPI_Reduce_scatter_block(MPI_IN_PLACE, b, count, rt->t, op, comm);
    SAME(a, b, (size_t)count * sz, "MPI_Reduce_scatter_block(MPI_IN_PLACE) %s %s count %d", tn,
         on, count);

    /* MPI_Reduce_scatter: counts that differ between blocks, some 0 (the V
     * form), then equal ones (the drop-in's reduce-scatter path) */
    int *rc = malloc(sizeof(int) * n);
    for (int even = 0; even < 2; even++) {
        int tot = 0;
        for (int i = 0; i < n; i++)
            tot += rc[i] = even ? count : (count + 3 * i) % (count + 2);
        size_t tb = (size_t)tot * sz + 8;
        char *s2 = malloc(tb), *a2 = malloc(tb), *b2 = malloc(tb);
        fill(s2, rt, sz, (size_t)tot, r, op, 1);
        memset(a2, 0x5a, tb);
        memset(b2, 0x5a, tb);
        MPI_Reduce_scatter(s2, a2, rc, rt->t, op, comm);
        PMPI_Reduce_scatter(s2, b2, rc, rt->t, op, comm);
        SAME(a2, b2, tb, "MPI_Reduce_scatter %s %s count %d%s", tn, on, count,
             even ? " (equal blocks)" : "");
        memcpy(a2, s2, (size_t)tot * sz);
        memcpy(b2, s2, (size_t)tot * sz);
        MPI_Reduce_scatter(MPI_IN_PLACE, a2, rc, rt->t, op, comm);
        PMPI_Reduce_scatter(MPI_IN_PLACE, b2, rc, rt->t, op, comm);
        SAME(a2, b2, (size_t)rc[r] * sz, "MPI_Reduce_scatter(MPI_IN_PLACE) %s %s count %d%s", tn,
             on, count, even ? " (equal blocks)" : "");
        free(s2);
        free(a2);
        free(b2);
    }
    free(rc);
    free(s);
    free(a);
    free(b);
}

static const int counts[] = {0, 1, 13, 1031};
#define NCOUNTS (int)(sizeof counts / sizeof counts[0])

static void test_reductions(MPI_Comm comm)
{
    static const rtype_t types[] = {
        {MPI_INT, "MPI_INT", 0},
        {MPI_DOUBLE, "MPI_DOUBLE", 2},
        {MPI_FLOAT, "MPI_FLOAT", 2},
        {MPI_LONG, "MPI_LONG", 0},
        {MPI_UNSIGNED, "MPI_UNSIGNED", 1},
        {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 1},
        {MPI_LONG_LONG, "MPI_LONG_LONG", 0},
        {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 1},
        {MPI_SHORT, "MPI_SHORT", 0},
        {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", 1},
        {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 0},
        {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1},
        {MPI_INT8_T, "MPI_INT8_T", 0},
        {MPI_UINT8_T, "MPI_UINT8_T", 1},
        {MPI_INT16_T, "MPI_INT16_T", 0},
        {MPI_UINT16_T, "MPI_UINT16_T", 1},
        {MPI_INT32_T, "MPI_INT32_T", 0},
        {MPI_UINT32_T, "MPI_UINT32_T", 1},
        {MPI_INT64_T, "MPI_INT64_T", 0},
        {MPI_UINT64_T, "MPI_UINT64_T", 1},
    };
    const int ntypes = (int)(sizeof types / sizeof types[0]);
    for (int t = 0; t < ntypes; t++)
        for (int c = 0; c < NCOUNTS; c++)
            test_reduction(comm, &types[t], MPI_SUM, counts[c]);
    const MPI_Op ops[] = {MPI_PROD, MPI_MAX, MPI_MIN};
    const int some[] = {0, 1, 2, 11}; /* int, double, float, unsigned char */
    for (int o = 0; o < 3; o++)
        for (int t = 0; t < 4; t++)
            for (int c = 0; c < NCOUNTS; c++)
                test_reduction(comm, &types[some[t]], ops[o], counts[c]);
}

/* ------------------------------------------------------------ data movement */

/* A rank's view of k units of 4 ints: MPI_INT (4k), a contiguous type of
 * 4 ints (k), or a vector of 4 ints with gaps (k). The same signature. */
typedef struct {
    MPI_Datatype t;
    int per;     /* units per element: 4 for MPI_INT, 1 for the others */
    int extent;  /* ints per element */
    const char *name;
} layout_t;

static MPI_Datatype t_contig, t_vector;

static layout_t layout_of(int r, int salt)
{
    switch ((r + salt) % 3) {
    case 0:
        return (layout_t){MPI_INT, 4, 1, "MPI_INT"};
    case 1:
        return (layout_t){t_contig, 1, 4, "contiguous(4 ints)"};
    default:
        return (layout_t){t_vector, 1, 7, "vector(4 ints, gaps)"};
    }
}

/* ints spanned by k units */
static size_t span(const layout_t *l, int k)
{
    return l->per == 4 ? (size_t)k * 4 : (size_t)k * (size_t)l->extent;
}

static int cnt(const layout_t *l, int k)
{
    return l->per == 4 ? 4 * k : k;
}

static int *ints(size_t n, int seed)
{
    int *p = malloc(n * sizeof(int) + 16);
    for (size_t i = 0; i < n; i++)
        p[i] = seed * 100003 + (int)i;
    return p;
}

static void test_moves(MPI_Comm comm, int k, int salt)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    layout_t L = layout_of(r, salt);
    const char *ln = L.name;
    size_t one = span(&L, k), all = span(&L, k * n), ob = one * 4, ab = all * 4;
    int *s = ints(all, r + 1), *a = ints(all, -1), *b = ints(all, -1);
    int root = (k + salt) % n;
    MPI_Request q[3];

    /* MPI_Bcast, MPI_Ibcast */
    int *x = ints(one, r == root ? 7 : -2), *y = ints(one, r == root ? 7 : -2);
    MPI_Bcast(x, cnt(&L, k), L.t, root, comm);
    PMPI_Bcast(y, cnt(&L, k), L.t, root, comm);
    SAME(x, y, ob, "MPI_Bcast %s k %d root %d", ln, k, root);
    free(x);
    x = ints(one, r == root ? 9 : -3);
    MPI_Ibcast(x, cnt(&L, k), L.t, root, comm, &q[0]);
    MPI_Waitall(1, q, MPI_STATUSES_IGNORE);
    free(y);
    y = ints(one, r == root ? 9 : -3);
    PMPI_Bcast(y, cnt(&L, k), L.t, root, comm);
    SAME(x, y, ob, "MPI_Ibcast %s k %d root %d", ln, k, root);
    free(x);
    free(y);

    /* MPI_Allgather, MPI_Iallgather, in place */
    layout_t S = layout_of(r, salt + 1); /* the send side: another layout */
    int *s2 = ints(span(&S, k * n), r + 11);
    MPI_Allgather(s2, cnt(&S, k), S.t, a, cnt(&L, k), L.t, comm);
    PMPI_Allgather(s2, cnt(&S, k), S.t, b, cnt(&L, k), L.t, comm);
    SAME(a, b, ab, "MPI_Allgather send %s recv %s k %d", S.name, ln, k);
    int idx = -1;
    MPI_Iallgather(s2, cnt(&S, k), S.t, a, cnt(&L, k), L.t, comm, &q[0]);
    MPI_Waitany(1, q, &idx, MPI_STATUS_IGNORE);
    if (idx != 0)
        FAIL("MPI_Waitany gave index %d for the one MPI_Iallgather", idx);
    SAME(a, b, ab, "MPI_Iallgather send %s recv %s k %d", S.name, ln, k);
    memcpy(a, s, ab);
    memcpy(b, s, ab);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, cnt(&L, k), L.t, comm);
    PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, cnt(&L, k), L.t, comm);
    SAME(a, b, ab, "MPI_Allgather(MPI_IN_PLACE) %s k %d", ln, k);

    /* MPI_Alltoall, in place */
    memset(a, 0x33, ab);
    memset(b, 0x33, ab);
    MPI_Alltoall(s2, cnt(&S, k), S.t, a, cnt(&L, k), L.t, comm);
    PMPI_Alltoall(s2, cnt(&S, k), S.t, b, cnt(&L, k), L.t, comm);
    SAME(a, b, ab, "MPI_Alltoall send %s recv %s k %d", S.name, ln, k);
    memcpy(a, s, ab);
    memcpy(b, s, ab);
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, cnt(&L, k), L.t, comm);
    PMPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, cnt(&L, k), L.t, comm);
    SAME(a, b, ab, "MPI_Alltoall(MPI_IN_PLACE) %s k %d", ln, k);

    /* MPI_Scatter, MPI_Gather, in place at the root */
    memset(a, 0x44, ab);
    memset(b, 0x44, ab);
    MPI_Scatter(s2, cnt(&S, k), S.t, a, cnt(&L, k), L.t, root, comm);
    PMPI_Scatter(s2, cnt(&S, k), S.t, b, cnt(&L, k), L.t, root, comm);
    SAME(a, b, ab, "MPI_Scatter send %s recv %s k %d root %d", S.name, ln, k, root);
    MPI_Scatter(s2, cnt(&S, k), S.t, r == root ? MPI_IN_PLACE : a, cnt(&L, k), L.t, root, comm);
    PMPI_Scatter(s2, cnt(&S, k), S.t, r == root ? MPI_IN_PLACE : b, cnt(&L, k), L.t, root, comm);
    SAME(a, b, ab, "MPI_Scatter(MPI_IN_PLACE) k %d root %d", k, root);
    memset(a, 0x55, ab);
    memset(b, 0x55, ab);
    MPI_Gather(s2, cnt(&S, k), S.t, a, cnt(&L, k), L.t, root, comm);
    PMPI_Gather(s2, cnt(&S, k), S.t, b, cnt(&L, k), L.t, root, comm);
    SAME(a, b, ab, "MPI_Gather send %s recv %s k %d root %d", S.name, ln, k, root);
    memcpy(a, s, ab);
    memcpy(b, s, ab);
    MPI_Gather(r == root ? MPI_IN_PLACE : s2, cnt(&S, k), S.t, a, cnt(&L, k), L.t, root, comm);
    PMPI_Gather(r == root ? MPI_IN_PLACE : s2, cnt(&S, k), S.t, b, cnt(&L, k), L.t, root, comm);
    SAME(a, b, ab, "MPI_Gather(MPI_IN_PLACE) k %d root %d", k, root);
    free(s2);

    /* MPI_Allgatherv, MPI_Alltoallv: counts that differ, displacements with
     * gaps, in MPI_INT (the v-variants' units are the receive type's) */
    int *rc = malloc(sizeof(int) * 4 * n), *rd = rc + n, *sc = rc + 2 * n, *sd = rc + 3 * n;
    int tot = 0;
    for (int i = 0; i < n; i++) {
        rc[i] = (k + 5 * i) % (k + 3);
        rd[i] = tot + 1;
        tot += rc[i] + 2;
    }
    int *v1 = ints((size_t)tot, -4), *v2 = ints((size_t)tot, -4), *src = ints((size_t)rc[r], r + 5);
    MPI_Allgatherv(src, rc[r], MPI_INT, v1, rc, rd, MPI_INT, comm);
    PMPI_Allgatherv(src, rc[r], MPI_INT, v2, rc, rd, MPI_INT, comm);
    SAME(v1, v2, (size_t)tot * 4, "MPI_Allgatherv k %d", k);
    memcpy(v1 + rd[r], src, (size_t)rc[r] * 4);
    memcpy(v2 + rd[r], src, (size_t)rc[r] * 4);
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v1, rc, rd, MPI_INT, comm);
    PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v2, rc, rd, MPI_INT, comm);
    SAME(v1, v2, (size_t)tot * 4, "MPI_Allgatherv(MPI_IN_PLACE) k %d", k);
    free(v1);
    free(v2);
    free(src);
    /* alltoallv: rank i sends (i + j + k) % 4 ints to rank j */
    int st = 0, rt = 0;
    for (int j = 0; j < n; j++) {
        sc[j] = (r + j + k) % 4;
        sd[j] = st;
        st += sc[j] + 1;
        rc[j] = (j + r + k) % 4;
        rd[j] = rt + 2;
        rt += rc[j] + 2;
    }
    int *sv = ints((size_t)st, r + 21), *w1 = ints((size_t)rt, -6), *w2 = ints((size_t)rt, -6);
    MPI_Alltoallv(sv, sc, sd, MPI_INT, w1, rc, rd, MPI_INT, comm);
    PMPI_Alltoallv(sv, sc, sd, MPI_INT, w2, rc, rd, MPI_INT, comm);
    SAME(w1, w2, (size_t)rt * 4, "MPI_Alltoallv k %d", k);
    /* in place: symmetric counts */
    for (int j = 0; j < n; j++)
        rc[j] = (r + j + k) % 4;
    rt = 0;
    for (int j = 0; j < n; j++) {
        rd[j] = rt + 1;
        rt += rc[j] + 1;
    }
    free(w1);
    free(w2);
    w1 = ints((size_t)rt, r + 31);
    w2 = ints((size_t)rt, r + 31);
    MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, w1, rc, rd, MPI_INT, comm);
    PMPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, w2, rc, rd, MPI_INT, comm);
    SAME(w1, w2, (size_t)rt * 4, "MPI_Alltoallv(MPI_IN_PLACE) k %d", k);
    free(w1);
    free(w2);
    free(sv);
    free(rc);

    MPI_Barrier(comm);
    free(s);
    free(a);
    free(b);
}

/* ------------------------------------------------------------ fall-through */

static void my_sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void test_fallthrough(MPI_Comm comm)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    struct {
        double v;
        int i;
    } di[5], da[5], db[5];
    for (int i = 0; i < 5; i++) {
        di[i].v = (double)((r * 3 + i) % 4);
        di[i].i = r;
    }
    MPI_Allreduce(di, da, 5, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
    PMPI_Allreduce(di, db, 5, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
    for (int i = 0; i < 5; i++)
        if (da[i].v != db[i].v || da[i].i != db[i].i)
            FAIL("MPI_Allreduce MPI_MAXLOC element %d", i);
    MPI_Op op;
    MPI_Op_create(my_sum, 1, &op);
    int x[7], ya[7], yb[7];
    for (int i = 0; i < 7; i++)
        x[i] = r * i;
    MPI_Allreduce(x, ya, 7, MPI_INT, op, comm);
    PMPI_Allreduce(x, yb, 7, MPI_INT, op, comm);
    SAME(ya, yb, sizeof ya, "MPI_Allreduce with a user op");
    MPI_Op_free(&op);
    long double ld = r + 1, la = 0, lb = 0;
    MPI_Allreduce(&ld, &la, 1, MPI_LONG_DOUBLE, MPI_SUM, comm);
    PMPI_Allreduce(&ld, &lb, 1, MPI_LONG_DOUBLE, MPI_SUM, comm);
    if (la != lb)
        FAIL("MPI_Allreduce MPI_LONG_DOUBLE");
    /* an intercommunicator: the even and the odd ranks */
    if (n >= 2) {
        MPI_Comm half, inter;
        PMPI_Comm_split(comm, r % 2, r, &half);
        PMPI_Intercomm_create(half, 0, comm, r % 2 ? 0 : 1, 99, &inter);
        int v = r + 1, ia = 0, ib = 0;
        MPI_Allreduce(&v, &ia, 1, MPI_INT, MPI_SUM, inter);
        PMPI_Allreduce(&v, &ib, 1, MPI_INT, MPI_SUM, inter);
        if (ia != ib)
            FAIL("MPI_Allreduce on an intercommunicator: %d, MPI says %d", ia, ib);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
}

static void test_comm(MPI_Comm comm, const char *what)
{
    int before = nerr;
    test_reductions(comm);
    for (int c = 0; c < NCOUNTS; c++)
        test_moves(comm, counts[c], c);
    test_fallthrough(comm);
    if (nerr > before)
        fprintf(stderr, "test_mpidrop: rank %d: %d failure(s) on %s\n", wrank, nerr - before,
                what);
}

/* HC_MPIDROP_SHAPE=1 (mpidrop.sh, 4 ranks, the built-in sizes): 3 rounds of
 * 100 MPI_Allreduce of 1 KiB on a 2-rank split, freed, then 100 on a
 * duplicate of MPI_COMM_WORLD, freed. A 2-rank communicator sends 1 KiB to
 * MPI and a 4-rank one to hcomm; MPI may give the duplicate the handle the
 * split had, and the library's per-thread record of a communicator's size
 * must not survive its MPI_Comm_free (HCOMM_MPI_STATS: 1200 on hcomm, 1200
 * to MPI). */
static void shape_rounds(void)
{
    float a[256], b[256];
    for (int i = 0; i < 256; i++)
        a[i] = (float)(wrank + i);
    for (int round = 0; round < 3; round++) {
        MPI_Comm c;
        MPI_Comm_split(MPI_COMM_WORLD, wrank / 2, wrank, &c);
        for (int i = 0; i < 100; i++)
            MPI_Allreduce(a, b, 256, MPI_FLOAT, MPI_SUM, c);
        MPI_Comm_free(&c);
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        for (int i = 0; i < 100; i++)
            MPI_Allreduce(a, b, 256, MPI_FLOAT, MPI_SUM, c);
        MPI_Comm_free(&c);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *shape = getenv("HC_MPIDROP_SHAPE");
    if (shape && strcmp(shape, "1") == 0) {
        shape_rounds();
        MPI_Finalize();
        return 0;
    }
    MPI_Type_contiguous(4, MPI_INT, &t_contig);
    MPI_Type_commit(&t_contig);
    MPI_Type_vector(4, 1, 2, MPI_INT, &t_vector);
    MPI_Datatype tv;
    MPI_Type_create_resized(t_vector, 0, 7 * (MPI_Aint)sizeof(int), &tv);
    MPI_Type_free(&t_vector);
    t_vector = tv;
    MPI_Type_commit(&t_vector);

    test_comm(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    MPI_Comm dup, split, sub, dup2;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    test_comm(dup, "a duplicate of MPI_COMM_WORLD");
    MPI_Comm_split(dup, wrank % 2, -wrank, &split); /* reversed order */
    test_comm(split, "a split (even/odd, reversed)");
    MPI_Comm_dup(split, &dup2);
    test_comm(dup2, "a duplicate of the split");
    MPI_Comm_split(MPI_COMM_WORLD, wrank == 0 && n > 1 ? MPI_UNDEFINED : 0, 0, &sub);
    if (wrank == 0 && n > 1 && sub != MPI_COMM_NULL)
        FAIL("MPI_Comm_split with MPI_UNDEFINED gave a communicator");
    if (sub != MPI_COMM_NULL) {
        test_comm(sub, "a split without rank 0");
        MPI_Comm_free(&sub);
    }
    MPI_Comm_free(&dup2);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    /* freed communicators do not disturb the ones that remain */
    test_moves(MPI_COMM_WORLD, 5, 1);

    int bad = 0;
    PMPI_Allreduce(&nerr, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0)
        printf("test_mpidrop: %d rank(s): %s (%d failure(s))\n", n, bad ? "FAILED" : "passed",
               bad);
    MPI_Type_free(&t_contig);
    MPI_Type_free(&t_vector);
    MPI_Finalize();
    return bad ? 1 : 0;
}
