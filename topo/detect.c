/*
 * topo/detect.c - what one process finds out about itself, once, when its
 * context is created: hwloc's view of the machine (packages, NUMA nodes,
 * cores), the CPUs the process is bound to and the package / NUMA node
 * that holds them, the PCI GPUs and NICs (hwloc OS devices: CUDA / NVML /
 * OpenCL / DRM GPUs, network and OpenFabrics devices) with their locality,
 * NVLink between GPUs where hwloc's NVML backend reports it, a key for the
 * physical host (boot id + host name: two containers with one host name
 * stay apart, two host names on one kernel are recognised as one machine),
 * and a hash of the topology overrides the process sees, so that ranks with
 * different HCCL_GROUP_<n> / HCCL_NVLINK_MAP / HCCL_TOPO_FILE contents all
 * refuse the communicator instead of building different models.
 *
 * The record (hc_topo_facts_t) travels in the bootstrap card; a split
 * reuses the cards it already has, so detection runs once per process.
 * Host identity does not use MPI_Comm_split_type: the context may be
 * created by a communicator over part of MPI_COMM_WORLD (a collective over
 * the world would hang there) or without MPI at all (root info, rank
 * table); the cards carry host name and boot id to every path alike.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topo.h"
#include "topo_int.h"
#include "src/base/env.h"
#include "src/base/file.h"
#include "src/base/log.h"

typedef char facts_fit[sizeof(hc_topo_facts_t) <= 512 ? 1 : -1];

uint64_t hc_topo_hash(uint64_t h, const void *p, size_t len)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

int hc_facts_decode(const uint8_t *blob, hc_topo_facts_t *f)
{
    memcpy(f, blob, sizeof(*f));
    return f->magic == HC_FACTS_MAGIC && f->version == HC_FACTS_VERSION;
}

static uint64_t phys_key(void)
{
    char host[256] = "", boot[64] = "";
    gethostname(host, sizeof(host) - 1);
    FILE *fp = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (fp) {
        if (fgets(boot, sizeof(boot), fp) == NULL)
            boot[0] = '\0';
        fclose(fp);
    }
    /* the boot id identifies the kernel; without one, the host name must do */
    uint64_t h = hc_topo_hash(HC_HASH_INIT, boot, strlen(boot));
    if (boot[0] == '\0')
        h = hc_topo_hash(h, host, strlen(host));
    return h;
}

/* Hash the overrides: HCCL_GROUP_<n>, HCCL_NVLINK_MAP, HCCL_TOPO_FILE's
 * bytes. The dump file and the rank table are not overrides. */
static void hash_overrides(const hc_config_t *env, hc_topo_facts_t *f)
{
    uint64_t h = HC_HASH_INIT;
    for (uint32_t g = 0; g < env->ngroups; g++) {
        if (env->groups[g] == NULL)
            continue;
        char tag[32];
        int l = snprintf(tag, sizeof(tag), "G%u=", g);
        h = hc_topo_hash(h, tag, (size_t)l);
        h = hc_topo_hash(h, env->groups[g], strlen(env->groups[g]) + 1);
    }
    h = hc_topo_hash(h, "N=", 2);
    h = hc_topo_hash(h, env->nvlink_map, strlen(env->nvlink_map) + 1);
    if (env->topo_file[0]) {
        size_t len = 0;
        char *text = NULL;
        int code = hc_file_read(env->topo_file, HC_TOPO_FILE_MAX, &text, &len);
        if (code != 0) {
            f->ovr_errno = code;
        } else {
            h = hc_topo_hash(h, "F=", 2);
            h = hc_topo_hash(h, text, len);
            free(text);
        }
    }
    f->ovr_hash = h;
}

/* The NUMA node (logical index) whose cpuset contains `set`, else -1. */
static int numa_of(hwloc_topology_t t, hwloc_const_cpuset_t set)
{
    int found = -1;
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, o)) != NULL) {
        if (o->cpuset && hwloc_bitmap_intersects(o->cpuset, set)) {
            if (found >= 0)
                return -1; /* spans several */
            found = (int)o->logical_index;
        }
    }
    return found;
}

static int package_of(hwloc_topology_t t, hwloc_const_cpuset_t set)
{
    int found = -1;
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PACKAGE, o)) != NULL) {
        if (o->cpuset && hwloc_bitmap_intersects(o->cpuset, set)) {
            if (found >= 0)
                return -1;
            found = (int)o->logical_index;
        }
    }
    return found;
}

/* GPU names in order of preference when one PCI device shows up several
 * times (CUDA, NVML, ROCm SMI, OpenCL, DRM). */
static int gpu_rank(const char *name)
{
    static const char *pref[] = {"cuda", "nvml", "rsmi", "opencl", "card"};
    for (int i = 0; i < 5; i++)
        if (strncmp(name, pref[i], strlen(pref[i])) == 0)
            return i;
    return 9;
}

static void add_device(hwloc_topology_t t, hwloc_obj_t os, hwloc_const_cpuset_t bound,
                       hc_topo_facts_t *f, hwloc_obj_t *objs)
{
    uint8_t kind;
    switch (os->attr->osdev.type) {
    case HWLOC_OBJ_OSDEV_GPU:
    case HWLOC_OBJ_OSDEV_COPROC:
        if (strncmp(os->name, "renderD", 7) == 0 || strncmp(os->name, "controlD", 8) == 0)
            return; /* DRM aliases of a card */
        kind = HC_DEV_GPU;
        break;
    case HWLOC_OBJ_OSDEV_NETWORK:
        kind = HC_DEV_NIC;
        break;
    case HWLOC_OBJ_OSDEV_OPENFABRICS:
        kind = HC_DEV_IB;
        break;
    default:
        return;
    }
    char pci[13] = "";
    hwloc_obj_t p = os->parent;
    while (p && p->type != HWLOC_OBJ_PCI_DEVICE)
        p = p->parent;
    if (p)
        snprintf(pci, sizeof(pci), "%04x:%02x:%02x.%01x", p->attr->pcidev.domain & 0xffffu,
                 p->attr->pcidev.bus, p->attr->pcidev.dev, p->attr->pcidev.func & 0xfu);
    if (kind == HC_DEV_GPU && pci[0]) { /* one entry per PCI GPU */
        for (int i = 0; i < f->ndev; i++) {
            if (f->dev[i].kind == HC_DEV_GPU && strcmp(f->dev[i].pci, pci) == 0) {
                if (gpu_rank(os->name) < gpu_rank(f->dev[i].name)) {
                    snprintf(f->dev[i].name, sizeof(f->dev[i].name), "%s", os->name);
                    objs[i] = os;
                }
                return;
            }
        }
    }
    if (f->ndev >= HC_FACTS_MAXDEV)
        return;
    hc_facts_dev_t *d = &f->dev[f->ndev];
    memset(d, 0, sizeof(*d));
    snprintf(d->name, sizeof(d->name), "%s", os->name);
    memcpy(d->pci, pci, sizeof(d->pci));
    d->kind = kind;
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t, os);
    d->numa = -1;
    d->near = 1;
    if (anc && anc->cpuset) {
        d->near = (uint8_t)hwloc_bitmap_intersects(anc->cpuset, bound);
        d->numa = (int16_t)numa_of(t, anc->cpuset);
    }
    objs[f->ndev++] = os;
}

/* NVLink among the GPUs we listed, from hwloc's NVML distances. */
static void add_nvlinks(hwloc_topology_t t, hc_topo_facts_t *f, hwloc_obj_t *objs)
{
#if HWLOC_API_VERSION >= 0x00020100
    unsigned nr = 1;
    struct hwloc_distances_s *dist = NULL;
    if (hwloc_distances_get_by_name(t, "NVLinkBandwidth", &nr, &dist, 0) != 0 || nr == 0)
        return;
    for (unsigned a = 0; a < dist->nbobjs; a++) {
        for (unsigned b = 0; b < dist->nbobjs; b++) {
            if (a == b || dist->values[a * dist->nbobjs + b] == 0)
                continue;
            int ia = -1, ib = -1;
            for (int i = 0; i < f->ndev; i++) {
                if (f->dev[i].kind != HC_DEV_GPU)
                    continue;
                /* match by PCI bus id: NVML objects are not the ones we kept */
                hwloc_obj_t pa = dist->objs[a], pb = dist->objs[b];
                while (pa && pa->type != HWLOC_OBJ_PCI_DEVICE)
                    pa = pa->parent;
                while (pb && pb->type != HWLOC_OBJ_PCI_DEVICE)
                    pb = pb->parent;
                char bus[13];
                if (pa) {
                    snprintf(bus, sizeof(bus), "%04x:%02x:%02x.%01x",
                             pa->attr->pcidev.domain & 0xffffu, pa->attr->pcidev.bus,
                             pa->attr->pcidev.dev, pa->attr->pcidev.func & 0xfu);
                    if (strcmp(bus, f->dev[i].pci) == 0)
                        ia = i;
                }
                if (pb) {
                    snprintf(bus, sizeof(bus), "%04x:%02x:%02x.%01x",
                             pb->attr->pcidev.domain & 0xffffu, pb->attr->pcidev.bus,
                             pb->attr->pcidev.dev, pb->attr->pcidev.func & 0xfu);
                    if (strcmp(bus, f->dev[i].pci) == 0)
                        ib = i;
                }
            }
            if (ia >= 0 && ib >= 0)
                f->dev[ia].nvlink |= (uint8_t)(1u << ib);
        }
    }
    hwloc_distances_release(t, dist);
#endif
    (void)objs;
}

static void detect_hw(hc_topo_facts_t *f)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0)
        return;
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(t) != 0) {
        HC_WARN(HC_SUB_TOPO, "hwloc could not load the machine topology: %m; "
                "placing ranks by host name only");
        hwloc_topology_destroy(t);
        return;
    }
    hwloc_cpuset_t bound = hwloc_bitmap_alloc();
    hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(t);
    if (bound == NULL) {
        hwloc_topology_destroy(t);
        return;
    }
    if (hwloc_get_cpubind(t, bound, HWLOC_CPUBIND_PROCESS) != 0 || hwloc_bitmap_iszero(bound))
        hwloc_bitmap_copy(bound, all);
    hwloc_bitmap_and(bound, bound, all);
    f->hw_ok = 1;
    f->npackages = (uint16_t)hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
    f->nnuma = (uint16_t)hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    f->ncores = (uint16_t)hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    f->npus = (uint16_t)hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
    f->bound_all = (uint8_t)hwloc_bitmap_isequal(bound, all);
    f->bound_cores = (uint16_t)hwloc_get_nbobjs_inside_cpuset_by_type(t, bound, HWLOC_OBJ_CORE);
    f->numa = (int16_t)numa_of(t, bound);
    f->package = (int16_t)package_of(t, bound);
    if (hwloc_bitmap_list_snprintf(f->cpus, sizeof(f->cpus), bound) >= (int)sizeof(f->cpus))
        memcpy(f->cpus + sizeof(f->cpus) - 4, "...", 4);
    hwloc_obj_t objs[HC_FACTS_MAXDEV];
    hwloc_obj_t os = NULL;
    while ((os = hwloc_get_next_osdev(t, os)) != NULL)
        add_device(t, os, bound, f, objs);
    add_nvlinks(t, f, objs);
    hwloc_bitmap_free(bound);
    hwloc_topology_destroy(t);
}

void hc_topo_local_facts(const hc_config_t *env, uint8_t *blob, size_t len)
{
    hc_topo_facts_t f;
    memset(&f, 0, sizeof(f));
    f.magic = HC_FACTS_MAGIC;
    f.version = HC_FACTS_VERSION;
    f.package = f.numa = -1;
    f.phys = phys_key();
    if (env)
        hash_overrides(env, &f);
    detect_hw(&f);
    memset(blob, 0, len);
    memcpy(blob, &f, sizeof(f) < len ? sizeof(f) : len);
    HC_INFO(HC_SUB_TOPO, "this process: %u package(s), %u NUMA node(s), %u core(s); bound to "
            "cpus %s (%s, NUMA %d, package %d); %u PCI GPU/NIC device(s)", f.npackages, f.nnuma,
            f.ncores, f.cpus[0] ? f.cpus : "?", f.bound_all ? "not bound" : "bound", f.numa,
            f.package, f.ndev);
}
