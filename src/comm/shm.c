/* src/comm/shm.c - shared staging segments and per-communicator regions (see shm.h). */
#define _GNU_SOURCE /* process_vm_readv */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "shm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <hccl/hccl.h>

#include "src/features/elastic.h"
#include "src/base/log.h"
#include "service.h"
#include "src/base/util.h"
#include "coll/algos.h"

enum { SLOT_FRESH = 0, SLOT_FREE, SLOT_USED, SLOT_HELD };

/* A released region some peer may still read: free once every flag in
 * done[] has reached `want`. */
typedef struct held {
    struct held *next;
    uint32_t slot, n;
    uint64_t want;
    const volatile uint64_t **done;
} held_t;

typedef struct hc_shm_ctx {
    ucp_mem_h memh;
    char *base;
    uint64_t size;
    uint64_t half;      /* this process's H */
    uint32_t nslots;
    uint8_t *slot;      /* SLOT_* */
    held_t *held;
    uint64_t epoch_hw;  /* highest epoch any released communicator used here
                         * (ctx->lock): a reused slot's flags are below it */
} hc_shm_ctx_t;

/* ---- what dead processes left in /dev/shm --------------------------- */

/* UCX 1.13's name for a POSIX segment (src/uct/sm/mm/posix/mm_posix.c). */
#define UCX_POSIX_PREFIX "ucx_shm_posix_"

typedef struct {
    dev_t dev;
    ino_t ino;
    off_t bytes;
    int held;
    char name[64];
} stale_t;

static void mark(stale_t *c, size_t n, dev_t dev, ino_t ino)
{
    for (size_t i = 0; i < n; i++)
        if (c[i].ino == ino && c[i].dev == dev)
            c[i].held = 1;
}

/* Mark the candidates that process `pid` (a /proc entry) has open or
 * mapped. Open descriptors first: a creator that maps its file and then
 * closes the descriptor is seen in one list or the other. */
static void mark_process(const char *pid, stale_t *c, size_t n)
{
    char path[600];
    snprintf(path, sizeof(path), "/proc/%s/fd", pid);
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            struct stat st;
            if (e->d_name[0] == '.')
                continue;
            snprintf(path, sizeof(path), "/proc/%s/fd/%s", pid, e->d_name);
            if (stat(path, &st) == 0)
                mark(c, n, st.st_dev, st.st_ino);
        }
        closedir(d);
    }
    snprintf(path, sizeof(path), "/proc/%s/maps", pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        unsigned maj, min;
        unsigned long long ino;
        if (sscanf(line, "%*s %*s %*s %x:%x %llu", &maj, &min, &ino) == 3 && ino != 0)
            mark(c, n, makedev(maj, min), (ino_t)ino);
        while (strchr(line, '\n') == NULL && fgets(line, sizeof(line), f)) {
        } /* the rest of a long line */
    }
    fclose(f);
}

void hc_shm_sweep(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    const uid_t me = geteuid();
    stale_t *c = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (strncmp(e->d_name, UCX_POSIX_PREFIX, strlen(UCX_POSIX_PREFIX)) != 0 ||
            strlen(e->d_name) >= sizeof(c->name) ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode) || st.st_uid != me)
            continue;
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            stale_t *nc = realloc(c, ncap * sizeof(*c));
            if (nc == NULL)
                break;
            c = nc;
            cap = ncap;
        }
        c[n] = (stale_t){.dev = st.st_dev, .ino = st.st_ino, .bytes = st.st_size};
        strcpy(c[n].name, e->d_name);
        n++;
    }
    /* Every process that existed when the file was listed: a live file's
     * creator holds it from its creation (shm_open) to its removal. */
    DIR *proc = n ? opendir("/proc") : NULL;
    if (proc) {
        while ((e = readdir(proc)) != NULL)
            if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
                mark_process(e->d_name, c, n);
        closedir(proc);
    }
    unsigned removed = 0;
    unsigned long long bytes = 0;
    for (size_t i = 0; proc && i < n; i++) {
        struct stat st;
        if (c[i].held || fstatat(dirfd(d), c[i].name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            st.st_ino != c[i].ino || st.st_dev != c[i].dev)
            continue;
        if (unlinkat(dirfd(d), c[i].name, 0) == 0) {
            removed++;
            bytes += (unsigned long long)c[i].bytes;
        } else
            HC_INFO(HC_SUB_INIT, "%s/%s: left by a process that died, cannot remove it: %s",
                    dir, c[i].name, strerror(errno));
    }
    if (removed)
        HC_INFO(HC_SUB_INIT, "removed %u UCX shared-memory file%s (%llu MB) from %s that "
                "processes of this user left when they died", removed, removed > 1 ? "s" : "",
                bytes >> 20, dir);
    free(c);
    closedir(d);
}

/* One process of a host at a time checks the free space and creates its
 * segment: a POSIX segment is written whole before the lock is let go, so
 * the next process sees the space it took. The lock is flock(2) on the
 * directory itself (no file to leave behind), dropped by the kernel when
 * its holder dies; after `timeout_s` a process goes on without it. */
static int space_lock(const char *dir, double timeout_s)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    const struct timespec tick = {0, 10 * 1000 * 1000};
    for (double waited = 0; flock(fd, LOCK_EX | LOCK_NB) != 0; waited += 0.01) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            HC_INFO(HC_SUB_INIT, "flock(%s): %s: shared staging space checked without it",
                    dir, strerror(errno));
            break;
        }
        if (waited >= timeout_s) {
            HC_WARN(HC_SUB_INIT, "flock(%s): another process has held it for %.0f s "
                    "(HCCL_CONNECT_TIMEOUT): shared staging space checked without it", dir,
                    timeout_s);
            break;
        }
        nanosleep(&tick, NULL);
    }
    return fd; /* closing it lets go */
}

int hc_shm_space_check(const char *dir, uint64_t size)
{
    struct statvfs vfs;
    if (statvfs(dir, &vfs) != 0) {
        HC_INFO(HC_SUB_INIT | HC_SUB_TRANSPORT, "statvfs(%s): %s: shared staging space not "
                "checked", dir, strerror(errno));
        return HCCL_SUCCESS;
    }
    const uint64_t mb = 1 << 20;
    const uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
    if (size <= avail)
        return HCCL_SUCCESS;
    HC_ERROR(HC_SUB_INIT | HC_SUB_TRANSPORT, "HCCL_BUFFSIZE: the shared staging segment of "
             "%llu MB (%llu B) does not fit in %s: %llu MB free of %llu MB; every process "
             "of a host maps one such segment: lower HCCL_BUFFSIZE or enlarge %s",
             (unsigned long long)(size / mb), (unsigned long long)size, dir,
             (unsigned long long)(avail / mb),
             (unsigned long long)((uint64_t)vfs.f_blocks * vfs.f_frsize / mb), dir);
    return HCCL_E_MEMORY;
}

/* Map the segment (under the space lock); without it, no fast path. */
static void shm_map(hc_context_t *ctx, uint64_t size)
{
    hc_card_t *me = &ctx->self;
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t half = size / 2 < HC_SHM_HALF_MAX ? size / 2 : HC_SHM_HALF_MAX;
    half -= half % page;
    if (half < page) {
        HC_INFO(HC_SUB_TRANSPORT, "no shared staging: HCCL_BUFFSIZE %llu B is below two pages",
                (unsigned long long)size);
        return;
    }
    hc_shm_ctx_t *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return;
    ucp_mem_map_params_t mp;
    memset(&mp, 0, sizeof(mp));
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                    UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.address = NULL;
    mp.length = size;
    mp.flags = UCP_MEM_MAP_ALLOCATE;
    ucs_status_t st = ucp_mem_map(ctx->ucp, &mp, &s->memh);
    if (st != UCS_OK) {
        HC_INFO(HC_SUB_TRANSPORT, "no shared staging: ucp_mem_map(%llu B) failed: %s",
                (unsigned long long)size, ucs_status_string(st));
        free(s);
        return;
    }
    ucp_mem_attr_t attr;
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
    void *rkey = NULL;
    size_t rkey_len = 0;
    st = ucp_mem_query(s->memh, &attr);
    if (st == UCS_OK)
        st = ucp_rkey_pack(ctx->ucp, s->memh, &rkey, &rkey_len);
    if (st != UCS_OK || rkey_len > HC_RKEY_MAX) {
        HC_INFO(HC_SUB_TRANSPORT, "no shared staging: %s", st != UCS_OK ?
                ucs_status_string(st) : "its remote key is larger than the bootstrap record's");
        if (rkey)
            ucp_rkey_buffer_release(rkey);
        ucp_mem_unmap(ctx->ucp, s->memh);
        free(s);
        return;
    }
    s->base = attr.address;
    s->size = attr.length < size ? attr.length : size;
    s->half = half;
    s->nslots = (uint32_t)(s->size / (2 * half));
    s->slot = calloc(s->nslots ? s->nslots : 1, 1);
    if (s->slot == NULL || s->nslots == 0) {
        ucp_rkey_buffer_release(rkey);
        ucp_mem_unmap(ctx->ucp, s->memh);
        free(s->slot);
        free(s);
        return;
    }
    memcpy(me->shm_rkey, rkey, rkey_len);
    me->shm_rkey_len = (uint32_t)rkey_len;
    me->shm_base = (uint64_t)(uintptr_t)s->base;
    me->shm_size = s->size;
    ucp_rkey_buffer_release(rkey);
    ctx->shm = s;
    HC_INFO(HC_SUB_TRANSPORT, "shared staging: %llu B at %p, %u regions of 2 x %llu B, "
            "remote key %zu B", (unsigned long long)s->size, (void *)s->base, s->nslots,
            (unsigned long long)half, rkey_len);
}

int hc_shm_ctx_init(hc_context_t *ctx)
{
    ctx->self.shm_size = 0;
    const uint64_t size = ctx->env->buffsize;
    const int lock = space_lock(HC_SHM_DIR, ctx->env->connect_timeout);
    hc_shm_sweep(HC_SHM_DIR);
    int rc = hc_shm_space_check(HC_SHM_DIR, size);
    if (rc == HCCL_SUCCESS)
        shm_map(ctx, size);
    if (lock >= 0)
        close(lock);
    return rc;
}

void hc_shm_ctx_fini(hc_context_t *ctx)
{
    for (uint32_t i = 0; i < ctx->npeers; i++) {
        hc_peer_t *p = ctx->peers[i];
        if (p->shm_rkey)
            ucp_rkey_destroy(p->shm_rkey);
        p->shm_rkey = NULL;
        p->shm_ptr = NULL;
        p->shm_state = 0;
    }
    hc_shm_ctx_t *s = ctx->shm;
    if (s) {
        while (s->held) {
            held_t *h = s->held;
            s->held = h->next;
            free(h->done);
            free(h);
        }
        ucp_mem_unmap(ctx->ucp, s->memh);
        free(s->slot);
        free(s);
        ctx->shm = NULL;
    }
    hc_shm_sweep(HC_SHM_DIR); /* what local peers that died during the job left */
}

/* ---- regions ---------------------------------------------------------- */

static int held_over(const held_t *h)
{
    for (uint32_t i = 0; i < h->n; i++)
        if (__atomic_load_n(h->done[i], __ATOMIC_ACQUIRE) < h->want)
            return 0;
    return 1;
}

/* A free slot (ctx->lock held), or UINT32_MAX. *fresh: never touched. */
static uint32_t slot_get(hc_shm_ctx_t *s, int *fresh)
{
    for (held_t **pp = &s->held; *pp;) {
        held_t *h = *pp;
        if (!held_over(h)) {
            pp = &h->next;
            continue;
        }
        s->slot[h->slot] = SLOT_FREE;
        *pp = h->next;
        free(h->done);
        free(h);
    }
    uint32_t pick = UINT32_MAX;
    for (uint32_t i = 0; i < s->nslots; i++) {
        if (s->slot[i] == SLOT_FREE) {
            pick = i;
            break;
        }
        if (s->slot[i] == SLOT_FRESH && pick == UINT32_MAX)
            pick = i;
    }
    if (pick != UINT32_MAX) {
        *fresh = s->slot[pick] == SLOT_FRESH;
        s->slot[pick] = SLOT_USED;
    }
    return pick;
}

/* Map peer idx's segment here (ctx->lock held); NULL if unreachable. */
static char *peer_attach(hc_context_t *ctx, uint32_t idx)
{
    hc_peer_t *p = ctx->peers[idx];
    if (p->shm_state)
        return p->shm_state > 0 ? p->shm_ptr : NULL;
    p->shm_state = -1;
    if (p->card.uid == ctx->self.uid) {
        p->shm_ptr = ctx->shm->base;
        p->shm_state = 1;
        return p->shm_ptr;
    }
    int rc;
    ucp_ep_h ep = hc_ctx_ep(ctx, idx, &rc);
    if (ep == NULL)
        return NULL;
    ucs_status_t st = ucp_ep_rkey_unpack(ep, p->card.shm_rkey, &p->shm_rkey);
    if (st != UCS_OK) {
        HC_INFO(HC_SUB_TRANSPORT, "staging of %s:%d: cannot unpack its key: %s", p->card.host,
                p->card.pid, ucs_status_string(st));
        p->shm_rkey = NULL;
        return NULL;
    }
    void *ptr = NULL;
    st = ucp_rkey_ptr(p->shm_rkey, p->card.shm_base, &ptr);
    if (st != UCS_OK) {
        HC_INFO(HC_SUB_TRANSPORT, "staging of %s:%d is not reachable here (%s): tagged "
                "messages only", p->card.host, p->card.pid, ucs_status_string(st));
        ucp_rkey_destroy(p->shm_rkey);
        p->shm_rkey = NULL;
        return NULL;
    }
    p->shm_ptr = ptr;
    p->shm_state = 1;
    return ptr;
}

/* What each rank tells the others at setup. */
typedef struct {
    int32_t status;  /* 0: ready; else why not (below) */
    uint32_t cma;    /* 1: it can read every peer's memory (probe_cma) */
    uint64_t half;   /* its H */
    uint64_t off;    /* its region in its segment */
    uint64_t epoch;  /* proposal: above every epoch it used */
} rec_t;

enum { ST_OK = 0, ST_NOSEG, ST_UNREACHABLE, ST_FULL, ST_MEMORY };
static const char *st_text[] = {"ready", "no segment", "a peer's segment is unreachable",
                                "no free region (HCCL_BUFFSIZE)", "out of memory"};

/* Every rank sends its record to every other rank: an AllGather FLAT
 * (coll/allgather_flat.c) as a service collective on the control sequence,
 * so it cannot match collectives. */
static int exchange(hc_comm_t *c, rec_t *recs)
{
    hc_team_t team = {NULL, c->nranks, c->rank};
    hc_coll_args_t a = {.coll = HC_COLL_ALLGATHER, .count = sizeof(rec_t), .esize = 1,
                        .dtype = HCCL_DATA_TYPE_UINT8, .op = HCCL_REDUCE_SUM, .in_place = 1};
    const uint32_t base = (HC_CTRL_SHM << 17 | (c->epoch & 0xfffu) << 5) & HC_TAG_MAX;
    return hc_service_run(c, &team, hc_allgather_flat_build, &a, recs, recs, HC_TAG_CTRL_SEQ,
                          base, "shared staging setup");
}

/* Whether this process can read each local peer's memory with
 * process_vm_readv (the kernel's cross-memory attach, as UCX's cma
 * transport and Open MPI's vader use it): 8 bytes of the peer's segment,
 * at the address its card gives. Ptrace rules (Yama, containers) or a
 * kernel without it say no; then no algorithm reads from a peer. */
static int probe_cma(hc_comm_t *c)
{
    for (uint32_t q = 0; q < c->nranks; q++) {
        if (q == c->rank)
            continue;
        const hc_card_t *cd = &hc_comm_peer(c, q)->card;
        uint64_t v = 0;
        struct iovec l = {&v, sizeof(v)}, r = {(void *)(uintptr_t)cd->shm_base, sizeof(v)};
        if (cd->shm_base == 0 || process_vm_readv(cd->pid, &l, 1, &r, 1, 0) != sizeof(v)) {
            HC_INFO(HC_SUB_TRANSPORT, "comm %s: no single-copy reads from rank %u (pid %d): %s",
                    c->name, q, (int)cd->pid, strerror(errno));
            return 0;
        }
    }
    return 1;
}

/* Touch every page of a peer's region so that its page-table entries
 * exist here before the first timed operation. */
static void pretouch(const char *p, uint64_t len)
{
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    for (uint64_t o = 0; o < len; o += page)
        (void)*(const volatile char *)(p + o);
}

/* Every member's card has a shared segment on this host. */
static int all_with_segments_here(hc_comm_t *c)
{
    hc_context_t *ctx = c->ctx;
    int all = 1;
    pthread_mutex_lock(&ctx->lock);
    for (uint32_t q = 0; q < c->nranks; q++) {
        const hc_card_t *cd = &hc_comm_peer(c, q)->card;
        all &= cd->shm_size != 0 && strcmp(cd->host, ctx->self.host) == 0;
    }
    pthread_mutex_unlock(&ctx->lock);
    return all;
}

/* This rank's record for the exchange: the members' segments attached
 * (segs), a slot of its own segment taken (*slot; *fresh: never used), its
 * half size, whether single-copy reads work, its next epoch. */
static void my_record(hc_comm_t *c, char **segs, rec_t *mine, uint32_t *slot, int *fresh)
{
    hc_context_t *ctx = c->ctx;
    hc_shm_ctx_t *s = ctx->shm;
    mine->status = ST_OK;
    pthread_mutex_lock(&ctx->lock);
    for (uint32_t q = 0; q < c->nranks && mine->status == ST_OK; q++) {
        segs[q] = peer_attach(ctx, c->peer[q]);
        if (segs[q] == NULL)
            mine->status = ST_UNREACHABLE;
    }
    if (mine->status == ST_OK) {
        *slot = slot_get(s, fresh);
        if (*slot == UINT32_MAX)
            mine->status = ST_FULL;
    }
    mine->half = s->half;
    mine->off = *slot == UINT32_MAX ? 0 : (uint64_t)*slot * 2 * s->half;
    if (c->cfg->single_copy)
        mine->cma = (uint32_t)probe_cma(c);
    else
        HC_INFO(HC_SUB_TRANSPORT, "comm %s: no single-copy reads (HCCL_SINGLE_COPY=0)",
                c->name);
    mine->epoch = s->epoch_hw + 1;
    pthread_mutex_unlock(&ctx->lock);
}

/* The communicator's view of the members' slots (sh->half_bytes and
 * sh->base set): each member's two halves (halves[2n], pretouched but this
 * rank's), the epochs, the members' pids (pids[n]). */
static void comm_shm_fill(hc_comm_t *c, hc_shm_comm_t *sh, char **segs, const rec_t *recs,
                          char **halves, int32_t *pids)
{
    const uint32_t n = c->nranks;
    for (uint32_t q = 0; q < n; q++) {
        char *r = segs[q] + recs[q].off;
        halves[q] = r;
        halves[n + q] = r + sh->half_bytes;
        if (q != c->rank)
            pretouch(r, 2 * sh->half_bytes);
    }
    sh->nranks = n;
    sh->rank = c->rank;
    sh->epoch = sh->base - 1;
    sh->done = sh->base - 1;
    sh->half[0] = halves;
    sh->half[1] = halves + n;
    pthread_mutex_lock(&c->ctx->lock);
    for (uint32_t q = 0; q < n; q++)
        pids[q] = hc_comm_peer(c, q)->card.pid;
    pthread_mutex_unlock(&c->ctx->lock);
    sh->pid = pids;
}

void hc_shm_comm_setup(hc_comm_t *c)
{
    hc_context_t *ctx = c->ctx;
    hc_shm_ctx_t *s = ctx->shm;
    const uint32_t n = c->nranks, me = c->rank;
    c->shm_state = -1;
    /* What every rank sees alike (the cards): no exchange needed to say no. */
    if (n < 2 || c->view.nnodes > 1 || !all_with_segments_here(c))
        return;

    rec_t *recs = calloc(n, sizeof(rec_t));
    char **segs = calloc(n, sizeof(char *));
    hc_shm_comm_t *sh = calloc(1, sizeof(*sh));
    char **halves = calloc(2 * (size_t)n, sizeof(char *));
    rec_t local = {.status = ST_MEMORY};
    rec_t *mine = recs ? &recs[me] : &local;
    mine->status = ST_MEMORY;
    uint32_t slot = UINT32_MAX;
    int fresh = 0;
    if (s == NULL)
        mine->status = ST_NOSEG;
    else if (segs && sh && halves)
        my_record(c, segs, mine, &slot, &fresh);
    if (fresh) /* first use of this slot: fault its pages in now */
        memset(s->base + mine->off, 0, 2 * s->half);

    /* Without memory for the answers this rank cannot take part: its peers
     * then time out in their exchange and turn shared memory off as well. */
    int rc = recs ? exchange(c, recs) : HCCL_E_MEMORY;
    int32_t why = ST_OK;
    uint32_t who = 0;
    uint64_t half = UINT64_MAX, base = 0;
    int cma = 1;
    int32_t *pids = calloc(n, sizeof(int32_t));
    if (pids == NULL)
        rc = HCCL_E_MEMORY;
    if (rc == HCCL_SUCCESS) {
        for (uint32_t q = 0; q < n; q++) {
            cma &= recs[q].cma == 1;
            if (recs[q].status != ST_OK && why == ST_OK) {
                why = recs[q].status;
                who = q;
            }
            if (recs[q].half < half)
                half = recs[q].half;
            if (recs[q].epoch > base)
                base = recs[q].epoch;
        }
    }
    if (rc != HCCL_SUCCESS || why != ST_OK || base >= UINT32_MAX - (1u << 20)) {
        if (rc != HCCL_SUCCESS)
            HC_WARN(HC_SUB_TRANSPORT, "comm %s: shared staging setup failed (%d): tagged "
                    "messages only", c->name, rc);
        else
            HC_INFO(HC_SUB_TRANSPORT, "comm %s: no shared staging (rank %u: %s): tagged "
                    "messages only", c->name, who,
                    (unsigned)why < sizeof(st_text) / sizeof(st_text[0]) ? st_text[why] : "?");
        if (slot != UINT32_MAX) {
            pthread_mutex_lock(&ctx->lock);
            s->slot[slot] = SLOT_FREE; /* nobody has seen it */
            pthread_mutex_unlock(&ctx->lock);
        }
        free(recs);
        free(segs);
        free(sh);
        free(halves);
        free(pids);
        return;
    }
    sh->slot = slot;
    sh->half_bytes = half;
    sh->base = base;
    sh->cma = cma;
    comm_shm_fill(c, sh, segs, recs, halves, pids);
    c->shm = sh;
    c->shm_state = 1;
    HC_INFO(HC_SUB_TRANSPORT, "comm %s: shared staging on, %u ranks, 2 x %llu B each, "
            "epochs from %llu, single-copy reads %s", c->name, n, (unsigned long long)half,
            (unsigned long long)base, cma ? "on" : "off");
    free(recs);
    free(segs);
}

void hc_shm_comm_release(hc_comm_t *c)
{
    hc_shm_comm_t *sh = c->shm;
    c->shm = NULL;
    c->shm_state = 0;
    if (sh == NULL)
        return;
    hc_context_t *ctx = c->ctx;
    hc_shm_ctx_t *s = ctx->shm;
    const uint32_t n = sh->nranks, me = sh->rank;
    const uint64_t last = sh->epoch;
    held_t *h = NULL;
    if (last >= sh->base) { /* peers may still read our half of `last` */
        h = calloc(1, sizeof(*h));
        if (h)
            h->done = calloc(n, sizeof(*h->done));
        if (h && h->done) {
            for (uint32_t q = 0; q < n; q++)
                if (q != me)
                    h->done[h->n++] = (const volatile uint64_t *)sh->half[last & 1][q];
            h->want = last << 32;
            h->slot = sh->slot;
        } else if (h) {
            free(h);
            h = NULL;
        }
    }
    pthread_mutex_lock(&ctx->lock);
    if (last > s->epoch_hw) /* the slot's next user starts above its flags */
        s->epoch_hw = last;
    if (last >= sh->base && h == NULL)
        s->slot[sh->slot] = SLOT_HELD; /* cannot track it: never reuse it */
    else if (h && !held_over(h)) {
        s->slot[sh->slot] = SLOT_HELD;
        h->next = s->held;
        s->held = h;
        h = NULL;
    } else
        s->slot[sh->slot] = SLOT_FREE;
    pthread_mutex_unlock(&ctx->lock);
    if (h) {
        free(h->done);
        free(h);
    }
    free(sh->half[0]);
    free(sh->pid);
    free(sh);
}

/* ---- operations ------------------------------------------------------- */

HC_HOT void hc_shm_bind(hc_comm_t *c, hc_exec_t *e)
{
    hc_shm_comm_t *sh = c->shm;
    /* Begins of one communicator are ordered (program order, or their turn
     * once it has had stream operations: src/sched/stream.h), so a plain
     * increment. No locked instruction on an operation's path: it would
     * wait for every store still buffered (the last operation's flags, the
     * lines peers read) to reach the other cores, one cross-core round trip
     * (a Broadcast root of 8 B at 4 ranks: 0.65 us with, 0.26 without). */
    const uint64_t ep = __atomic_load_n(&sh->epoch, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&sh->epoch, ep, __ATOMIC_RELAXED);
    hc_shm_bind_t b = {.half = sh->half[ep & 1], .nranks = sh->nranks, .epoch = ep,
                       .epoch0 = sh->base, .gate = &sh->done, .prev_all = &sh->prev_all,
                       .seen_done = &sh->seen_done, .pid = sh->pid, .wins = c->wins,
                       .presence = hc_comm_oversubscribed(c)};
    hc_exec_bind_shm(e, &b);
}

HC_HOT void hc_shm_op_end(hc_comm_t *c, const hc_exec_t *e)
{
    hc_shm_comm_t *sh = c->shm;
    if (sh == NULL)
        return;
    sh->prev_all = e->status == HCCL_SUCCESS && e->s->waits_all;
    /* (the context's high-water epoch is raised when the communicator
     * releases its slot, not here: see hc_shm_bind) */
    __atomic_store_n(&sh->done, e->epoch, __ATOMIC_RELEASE);
}
