/*
 * test/mpi/test_split.c - communicators made from a communicator
 * (public API only): HcclCommSplit, HcclCommCreateGroup,
 * HcclCreateSubCommConfig.
 *
 *  1. Split semantics (MPI_Comm_split's): for several (color, key)
 *     patterns, the size, the rank and the rank order (an AllGather of the
 *     world ranks) equal what MPI_Comm_split gives for the same arguments;
 *     HCCL_SPLIT_NOCOLOR gives NULL; an AllReduce on each child is right;
 *     a split of a split works; a child outlives its destroyed parent.
 *  2. CreateGroup: only the listed ranks call it (the others build another
 *     group meanwhile); new rank = index in the list.
 *  3. HcclCreateSubCommConfig with and without a config (the name comes
 *     from the config).
 *  4. Concurrency: parent and two sibling splits run interleaved in one
 *     HcclGroupStart/End (queued in a rank-dependent order), on three
 *     streams (several operations in flight each), and from three threads
 *     at once, every result checked.
 *  5. Counters (HcclGetDebugCounters): after an AlltoAll has connected
 *     every pair, creating 50 splits and groups creates no endpoint and no
 *     buffer, and neither does running on (four of) them.
 *  6. Memory per extra communicator (glibc mallinfo2) is at most 64 KB:
 *     200 splits just made, and 8 splits after one AllReduce each.
 *  7. Errors: a bad color on one rank fails the split on every rank;
 *     CreateGroup with a repeated or out-of-range rank, SubCommConfig with a
 *     wrong subCommRankId: HCCL_E_PARA.
 *
 * Prints "test_split: N checks, M failures" on rank 0; exit 1 on failure.
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_n;
static long g_checks, g_fails;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void failf(const char *fmt, ...)
{
    pthread_mutex_lock(&g_lock);
    g_fails++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[rank %d] FAIL ", g_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    pthread_mutex_unlock(&g_lock);
}

static void check(int cond, const char *fmt, ...)
{
    pthread_mutex_lock(&g_lock);
    g_checks++;
    pthread_mutex_unlock(&g_lock);
    if (cond)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    failf("%s", buf);
}

static int ok(const char *what, HcclResult r, HcclResult exp)
{
    check(r == exp, "%s returned %d (%s), expected %d", what, (int)r, HcclGetErrorString(r),
          (int)exp);
    return r == exp;
}

/* The world ranks of comm's members in comm-rank order, by AllGather. */
static void members_of(HcclComm comm, int32_t *out)
{
    int32_t me = g_rank;
    uint32_t n = 0;
    HcclGetRankSize(comm, &n);
    ok("HcclAllGather (world ranks)",
       HcclAllGather(&me, out, 1, HCCL_DATA_TYPE_INT32, comm, NULL), HCCL_SUCCESS);
}

/* An AllReduce of rank-dependent values on comm whose members (world
 * ranks, in order) are mem[0..n); checks every element. */
static int check_allreduce(HcclComm comm, const int32_t *mem, int n, int count, int salt,
                           const char *label)
{
    int32_t *in = malloc(count * sizeof *in), *out = malloc(count * sizeof *out);
    for (int i = 0; i < count; i++)
        in[i] = g_rank * 1000 + i + salt;
    int good = ok(label, HcclAllReduce(in, out, count, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM,
                                       comm, NULL), HCCL_SUCCESS);
    for (int i = 0; good && i < count; i++) {
        int32_t e = 0;
        for (int k = 0; k < n; k++)
            e += mem[k] * 1000 + i + salt;
        if (out[i] != e) {
            check(0, "%s: [%d] = %d, expected %d", label, i, out[i], e);
            good = 0;
        }
    }
    free(in);
    free(out);
    return good;
}

/* ---- 1. split semantics ------------------------------------------------ */

static void split_case(HcclComm world, int color, int key, const char *label)
{
    MPI_Comm mc;
    MPI_Comm_split(MPI_COMM_WORLD, color == HCCL_SPLIT_NOCOLOR ? MPI_UNDEFINED : color, key,
                   &mc);
    HcclComm child = (HcclComm)0x1;
    if (!ok(label, HcclCommSplit(world, color, key, &child), HCCL_SUCCESS))
        return;
    if (color == HCCL_SPLIT_NOCOLOR) {
        check(child == NULL, "%s: NOCOLOR gave %p, expected NULL", label, child);
        check(mc == MPI_COMM_NULL, "%s: MPI disagrees about NOCOLOR", label);
        return;
    }
    int msize, mrank;
    MPI_Comm_size(mc, &msize);
    MPI_Comm_rank(mc, &mrank);
    uint32_t n = 0, r = 0;
    HcclGetRankSize(child, &n);
    HcclGetRankId(child, &r);
    check((int)n == msize && (int)r == mrank, "%s: size/rank %u/%u, MPI_Comm_split gives %d/%d",
          label, n, r, msize, mrank);
    int32_t *mem = malloc(n * sizeof *mem), *mmem = malloc(msize * sizeof *mmem);
    members_of(child, mem);
    int32_t me = g_rank;
    MPI_Allgather(&me, 1, MPI_INT32_T, mmem, 1, MPI_INT32_T, mc);
    for (int i = 0; i < msize && i < (int)n; i++)
        check(mem[i] == mmem[i], "%s: child rank %d is world rank %d, MPI says %d", label, i,
              mem[i], mmem[i]);
    check_allreduce(child, mem, n, 1000, color, label);
    free(mem);
    free(mmem);
    MPI_Comm_free(&mc);
    ok("HcclCommDestroy (split)", HcclCommDestroy(child), HCCL_SUCCESS);
}

static void test_split_semantics(HcclComm world)
{
    split_case(world, g_rank % 2, g_rank, "split color=rank%2 key=rank");
    split_case(world, g_rank / 2, -g_rank, "split color=rank/2 key=-rank");
    split_case(world, 7, 0, "split one color, equal keys");
    split_case(world, 0, (g_rank * 7) % 5, "split one color, key=(7 rank)%5");
    split_case(world, g_rank % 3 == 1 ? HCCL_SPLIT_NOCOLOR : g_rank % 3, g_n - g_rank,
               "split with NOCOLOR ranks");
    split_case(world, g_rank, 0, "split into singletons");

    /* a split of a split, used after its parent is destroyed */
    HcclComm a = NULL, b = NULL;
    if (!ok("HcclCommSplit (level 1)", HcclCommSplit(world, g_rank % 2, g_rank, &a),
            HCCL_SUCCESS))
        return;
    uint32_t an = 0, ar = 0;
    HcclGetRankSize(a, &an);
    HcclGetRankId(a, &ar);
    if (ok("HcclCommSplit (level 2)", HcclCommSplit(a, ar < an / 2 ? 0 : 1, -(int)ar, &b),
           HCCL_SUCCESS)) {
        ok("HcclCommDestroy (level-1 parent first)", HcclCommDestroy(a), HCCL_SUCCESS);
        a = NULL;
        uint32_t bn = 0;
        HcclGetRankSize(b, &bn);
        int32_t *mem = malloc(bn * sizeof *mem);
        members_of(b, mem);
        for (uint32_t i = 1; i < bn; i++)
            check(mem[i] < mem[i - 1], "level-2 split: order by key -rank broken at %u", i);
        check_allreduce(b, mem, bn, 3000, 11, "AllReduce on a split of a split");
        free(mem);
        HcclCommDestroy(b);
    }
    if (a)
        HcclCommDestroy(a);
}

/* ---- 2/3. groups and sub-communicators --------------------------------- */

static void test_groups(HcclComm world)
{
    /* even ranks, in reverse order; the odd ranks make their own group */
    int even = g_rank % 2 == 0;
    uint32_t list[256];
    int n = 0;
    for (int r = g_n - 1; r >= 0; r--)
        if ((r % 2 == 0) == even)
            list[n++] = (uint32_t)r;
    HcclComm g = NULL;
    if (ok("HcclCommCreateGroup", HcclCommCreateGroup(&g, world, n, list), HCCL_SUCCESS)) {
        uint32_t gn = 0, gr = 0;
        HcclGetRankSize(g, &gn);
        HcclGetRankId(g, &gr);
        check((int)gn == n && list[gr] == (uint32_t)g_rank,
              "CreateGroup: size %u rank %u (list[%u] = %u), expected size %d", gn, gr, gr,
              list[gr], n);
        int32_t mem[256];
        members_of(g, mem);
        for (int i = 0; i < n; i++)
            check(mem[i] == (int32_t)list[i], "CreateGroup: rank %d is world %d, listed %u", i,
                  mem[i], list[i]);
        check_allreduce(g, mem, n, 777, 5, "AllReduce on a group");
        HcclCommDestroy(g);
    }

    /* HCCL's sub-communicator: ranks 0..k-1 (k = max(1, n/2)) with a name */
    int k = g_n / 2 > 0 ? g_n / 2 : 1;
    if (g_rank < k) {
        uint32_t ids[256];
        for (int i = 0; i < k; i++)
            ids[i] = (uint32_t)i;
        HcclCommConfig cfg;
        HcclCommConfigInit(&cfg);
        snprintf(cfg.hcclCommName, sizeof cfg.hcclCommName, "subcomm_%d", k);
        HcclComm s = NULL;
        if (ok("HcclCreateSubCommConfig", HcclCreateSubCommConfig(&world, k, ids, 42, g_rank,
                                                                  &cfg, &s), HCCL_SUCCESS)) {
            char name[128] = "";
            HcclGetCommName(s, name);
            check(strcmp(name, cfg.hcclCommName) == 0, "SubComm name '%s', expected '%s'", name,
                  cfg.hcclCommName);
            int32_t mem[256];
            members_of(s, mem);
            check_allreduce(s, mem, k, 100, 9, "AllReduce on a sub-communicator");
            HcclCommDestroy(s);
        }
        if (ok("HcclCreateSubCommConfig (config NULL)",
               HcclCreateSubCommConfig(&world, k, ids, 43, g_rank, NULL, &s), HCCL_SUCCESS)) {
            int32_t mem[256];
            members_of(s, mem);
            check_allreduce(s, mem, k, 10, 1, "AllReduce on a sub-communicator (no config)");
            HcclCommDestroy(s);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- 4. concurrency ---------------------------------------------------- */

typedef struct {
    HcclComm comm;
    int32_t mem[256];
    int n, iters, salt;
    const char *label;
} loop_arg_t;

static void *loop_thread(void *p)
{
    loop_arg_t *a = p;
    for (int it = 0; it < a->iters; it++)
        if (!check_allreduce(a->comm, a->mem, a->n, 257 + 64 * (it % 3), a->salt + it,
                             a->label))
            break;
    return NULL;
}

static void test_concurrency(HcclComm world)
{
    HcclComm sa = NULL, sb = NULL;
    ok("HcclCommSplit (sibling A)", HcclCommSplit(world, g_rank % 2, g_rank, &sa),
       HCCL_SUCCESS);
    ok("HcclCommSplit (sibling B)", HcclCommSplit(world, g_rank < g_n / 2, -g_rank, &sb),
       HCCL_SUCCESS);
    if (!sa || !sb)
        return;
    loop_arg_t w = {.comm = world, .n = g_n, .iters = 20, .salt = 100, .label = "world"};
    loop_arg_t a = {.comm = sa, .iters = 20, .salt = 200, .label = "sibling A"};
    loop_arg_t b = {.comm = sb, .iters = 20, .salt = 300, .label = "sibling B"};
    for (int i = 0; i < g_n; i++)
        w.mem[i] = i;
    uint32_t n;
    HcclGetRankSize(sa, &n);
    a.n = (int)n;
    members_of(sa, a.mem);
    HcclGetRankSize(sb, &n);
    b.n = (int)n;
    members_of(sb, b.mem);

    /* interleaved in one group, queued in a rank-dependent order */
    enum { C = 3001 };
    int32_t *in = malloc(3 * C * sizeof *in), *out = malloc(3 * C * sizeof *out);
    int32_t *gat = malloc((size_t)g_n * C * sizeof *gat);
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 3 * C; i++)
            in[i] = g_rank * 10 + i % 97 + round;
        HcclGroupStart();
        for (int q = 0; q < 3; q++) {
            int which = (q + g_rank + round) % 3;
            HcclComm cm = which == 0 ? world : which == 1 ? sa : sb;
            if (which == 2)
                HcclAllGather(in + which * C, gat, C, HCCL_DATA_TYPE_INT32, cm, NULL);
            else
                HcclAllReduce(in + which * C, out + which * C, C, HCCL_DATA_TYPE_INT32,
                              HCCL_REDUCE_SUM, cm, NULL);
        }
        if (!ok("HcclGroupEnd (world + siblings interleaved)", HcclGroupEnd(), HCCL_SUCCESS))
            break;
        int bad = 0;
        for (int i = 0; i < C && !bad; i++) {
            int32_t ew = 0, ea = 0;
            for (int k = 0; k < g_n; k++)
                ew += k * 10 + i % 97 + round;
            for (int k = 0; k < a.n; k++)
                ea += a.mem[k] * 10 + (C + i) % 97 + round;
            if (out[i] != ew || out[C + i] != ea) {
                check(0, "interleaved round %d: [%d] world %d (exp %d), A %d (exp %d)", round, i,
                      out[i], ew, out[C + i], ea);
                bad = 1;
            }
            for (int k = 0; k < b.n && !bad; k++) {
                int32_t eb = b.mem[k] * 10 + (2 * C + i) % 97 + round;
                if (gat[k * C + i] != eb) {
                    check(0, "interleaved round %d: AllGather B block %d [%d] = %d, exp %d",
                          round, k, i, gat[k * C + i], eb);
                    bad = 1;
                }
            }
        }
        check(!bad, "interleaved round %d", round);
    }
    free(in);
    free(out);
    free(gat);

    /* three streams, one communicator each, several operations in flight */
    enum { SC = 2049, SOPS = 4 };
    HcclStream st[3] = {NULL, NULL, NULL};
    int sok = 1;
    for (int k = 0; k < 3; k++)
        sok &= ok("HcclStreamCreate", HcclStreamCreate(&st[k]), HCCL_SUCCESS);
    if (sok) {
        HcclComm cms[3] = {world, sa, sb};
        loop_arg_t *la[3] = {&w, &a, &b};
        int32_t *sin = malloc(3 * SOPS * SC * sizeof *sin);
        int32_t *sout = malloc(3 * SOPS * SC * sizeof *sout);
        for (int q = 0; q < 3 * SOPS; q++)
            for (int i = 0; i < SC; i++)
                sin[q * SC + i] = g_rank * 100 + q + i % 31;
        for (int op = 0; op < SOPS; op++) /* interleaved: world, A, B, world, ... */
            for (int k = 0; k < 3; k++) {
                int q = k * SOPS + op;
                ok("HcclAllReduce on a stream",
                   HcclAllReduce(sin + q * SC, sout + q * SC, SC, HCCL_DATA_TYPE_INT32,
                                 HCCL_REDUCE_SUM, cms[k], st[k]), HCCL_SUCCESS);
            }
        for (int k = 0; k < 3; k++)
            ok("HcclStreamSynchronize", HcclStreamSynchronize(st[k]), HCCL_SUCCESS);
        for (int k = 0; k < 3; k++)
            for (int op = 0; op < SOPS; op++) {
                int q = k * SOPS + op;
                for (int i = 0; i < SC; i++) {
                    int32_t e = 0;
                    for (int m = 0; m < la[k]->n; m++)
                        e += la[k]->mem[m] * 100 + q + i % 31;
                    if (sout[q * SC + i] != e) {
                        check(0, "stream AllReduce on %s, op %d: [%d] = %d, expected %d",
                              la[k]->label, op, i, sout[q * SC + i], e);
                        break;
                    }
                }
            }
        free(sin);
        free(sout);
    }
    for (int k = 0; k < 3; k++)
        if (st[k])
            HcclStreamDestroy(st[k]);

    /* three threads, one communicator each, at once */
    pthread_t t1, t2;
    pthread_create(&t1, NULL, loop_thread, &a);
    pthread_create(&t2, NULL, loop_thread, &b);
    loop_thread(&w);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    HcclCommDestroy(sa);
    HcclCommDestroy(sb);
}

/* ---- 5/6. counters and memory ------------------------------------------ */

static void test_counters(HcclComm world)
{
    /* connect every pair, and use scratch of the sizes used below */
    enum { C = 4096 };
    int32_t *s = malloc((size_t)g_n * C * sizeof *s), *r = calloc((size_t)g_n * C, sizeof *r);
    for (int i = 0; i < g_n * C; i++)
        s[i] = i;
    ok("HcclAlltoAll (connect every pair)",
       HcclAlltoAll(s, C, HCCL_DATA_TYPE_INT32, r, C, HCCL_DATA_TYPE_INT32, world, NULL),
       HCCL_SUCCESS);
    int32_t all[256];
    for (int i = 0; i < g_n; i++)
        all[i] = i;
    check_allreduce(world, all, g_n, 1000, 0, "AllReduce (warm-up)");
    uint64_t ep0, b0, by0, ep1, b1, by1, ep2, b2, by2;
    ok("HcclGetDebugCounters", HcclGetDebugCounters(&ep0, &b0, &by0), HCCL_SUCCESS);
    enum { K = 25 };
    HcclComm kids[2 * K];
    int nk = 0;
    for (int i = 0; i < K; i++) {
        HcclComm c = NULL;
        if (HcclCommSplit(world, (g_rank + i) % 2, i * g_rank, &c) == HCCL_SUCCESS)
            kids[nk++] = c;
        uint32_t list[256];
        for (int k = 0; k < g_n; k++)
            list[k] = (uint32_t)((k + i) % g_n);
        c = NULL;
        if (HcclCommCreateGroup(&c, world, g_n, list) == HCCL_SUCCESS)
            kids[nk++] = c;
    }
    check(nk == 2 * K, "only %d of %d communicators were created", nk, 2 * K);
    HcclGetDebugCounters(&ep1, &b1, &by1);
    check(ep1 == ep0 && b1 == b0 && by1 == by0,
          "creating %d communicators changed the counters: endpoints %llu -> %llu, buffers "
          "%llu -> %llu (%llu -> %llu B)", nk, (unsigned long long)ep0, (unsigned long long)ep1,
          (unsigned long long)b0, (unsigned long long)b1, (unsigned long long)by0,
          (unsigned long long)by1);
    /* run on a few of them (each communicator's first collective sets up
     * its shared staging region: keep the test short) */
    for (int i = 0; i < nk && i < 4; i++) {
        uint32_t n = 0;
        HcclGetRankSize(kids[i], &n);
        int32_t mem[256];
        members_of(kids[i], mem);
        check_allreduce(kids[i], mem, n, 1000, i, "AllReduce on a new communicator");
    }
    HcclGetDebugCounters(&ep2, &b2, &by2);
    check(ep2 == ep0, "running on the new communicators created %llu endpoints (the parent's "
          "connections should serve)", (unsigned long long)(ep2 - ep0));
    check(b2 == b0, "running on the new communicators allocated %llu buffers",
          (unsigned long long)(b2 - b0));
    for (int i = 0; i < nk; i++)
        HcclCommDestroy(kids[i]);
    if (g_rank == 0)
        printf("test_split: counters: endpoints %llu, buffers %llu (%llu B), unchanged by %d "
               "creations and AllReduces on 4 of them\n", (unsigned long long)ep2,
               (unsigned long long)b2, (unsigned long long)by2, nk);
    free(s);
    free(r);

    /* memory per communicator */
    enum { M = 200 };
    HcclComm *many = calloc(M, sizeof *many);
    HcclComm c0 = NULL;
    HcclCommSplit(world, 0, 0, &c0); /* the parent's allgather schedule is cached now */
    HcclCommDestroy(c0);
    struct mallinfo2 m0 = mallinfo2();
    int made = 0;
    for (int i = 0; i < M; i++)
        if (HcclCommSplit(world, 0, g_rank, &many[i]) == HCCL_SUCCESS)
            made++;
    struct mallinfo2 m1 = mallinfo2();
    double per = made ? ((double)(m1.uordblks + m1.hblkhd) - (double)(m0.uordblks + m0.hblkhd)) /
                            made : 1e9;
    check(made == M && per <= 65536.0, "memory per split communicator: %.0f B (%d made); at most "
          "64 KB expected", per, made);
    if (g_rank == 0)
        printf("test_split: memory per split communicator of %d ranks: %.0f B\n", g_n, per);
    for (int i = 0; i < M; i++)
        if (many[i])
            HcclCommDestroy(many[i]);
    /* and once used: schedule cache, executor state, shared-staging state */
    enum { U = 8 };
    int32_t in[64], out[64];
    for (int i = 0; i < 64; i++)
        in[i] = i;
    m0 = mallinfo2();
    made = 0;
    for (int i = 0; i < U; i++)
        if (HcclCommSplit(world, 0, g_rank, &many[i]) == HCCL_SUCCESS &&
            HcclAllReduce(in, out, 64, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, many[i], NULL) ==
                HCCL_SUCCESS)
            made++;
    m1 = mallinfo2();
    per = made ? ((double)(m1.uordblks + m1.hblkhd) - (double)(m0.uordblks + m0.hblkhd)) / made
               : 1e9;
    check(made == U && per <= 65536.0, "memory per used split communicator: %.0f B (%d made); "
          "at most 64 KB expected", per, made);
    if (g_rank == 0)
        printf("test_split: memory per split communicator of %d ranks after one AllReduce: "
               "%.0f B\n", g_n, per);
    for (int i = 0; i < U; i++)
        if (many[i])
            HcclCommDestroy(many[i]);
    free(many);
}

/* ---- 7. errors --------------------------------------------------------- */

static void test_errors(HcclComm world)
{
    HcclComm c = (HcclComm)0x1;
    /* one rank passes a bad color: every rank must fail, none hang */
    HcclResult r = HcclCommSplit(world, g_rank == g_n - 1 ? -5 : 0, 0, &c);
    ok("HcclCommSplit with a bad color on one rank", r, HCCL_E_PARA);
    check(c == (HcclComm)0x1, "a failed split wrote newComm");
    ok("HcclCommSplit(newComm NULL) ...", HcclCommSplit(world, 0, 0, NULL), HCCL_E_PTR);
    uint32_t dup[2] = {(uint32_t)g_rank, (uint32_t)g_rank};
    ok("HcclCommCreateGroup (repeated rank)", HcclCommCreateGroup(&c, world, 2, dup),
       HCCL_E_PARA);
    uint32_t oor[1] = {(uint32_t)g_n};
    ok("HcclCommCreateGroup (out of range)", HcclCommCreateGroup(&c, world, 1, oor),
       HCCL_E_PARA);
    uint32_t self[1] = {(uint32_t)g_rank};
    ok("HcclCreateSubCommConfig (wrong subCommRankId)",
       HcclCreateSubCommConfig(&world, 1, self, 1, 1, NULL, &c), HCCL_E_PARA);
    ok("HcclCommSplit (NULL comm)", HcclCommSplit(NULL, 0, 0, &c), HCCL_E_PTR);
    /* the world still works */
    int32_t all[256];
    for (int i = 0; i < g_n; i++)
        all[i] = i;
    check_allreduce(world, all, g_n, 100, 3, "AllReduce after the errors");
}

int main(int argc, char **argv)
{
    int prov;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &prov);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_n);
    if (g_n > 256) {
        if (g_rank == 0)
            fprintf(stderr, "test_split: at most 256 ranks\n");
        MPI_Finalize();
        return 2;
    }
    HcclComm world = NULL;
    if (!ok("HcclCommInitMpi", HcclCommInitMpi(MPI_COMM_WORLD, &world), HCCL_SUCCESS))
        MPI_Abort(MPI_COMM_WORLD, 1);
    test_split_semantics(world);
    test_groups(world);
    test_concurrency(world);
    test_counters(world);
    test_errors(world);
    HcclCommDestroy(world);
    long loc[2] = {g_checks, g_fails}, tot[2];
    MPI_Allreduce(loc, tot, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test_split: %d ranks: %ld checks, %ld failures\n", g_n, tot[0], tot[1]);
    MPI_Finalize();
    return tot[1] ? 1 : 0;
}
