/*
 * src/env.h - every HCCL_* environment variable, declared once.
 *
 * src/env.c holds one table (name, type, default, range, help, offset into
 * hc_config_t). Nothing else in hcomm calls getenv for an HCCL_* variable.
 * hc_env_load parses the whole table strictly: a value that does not parse
 * is HCCL_E_PARA with a message naming the variable and the value.
 */
#ifndef HC_ENV_H_
#define HC_ENV_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HC_ENV_STR_MAX 1600
#define HC_ENV_PATH_MAX 1024
#define HC_MAX_GROUPS 1024
#define HC_ENV_UNKNOWN_MAX 1024

typedef struct hc_config {
    /* logging */
    int debug_level;                   /* HCCL_DEBUG (hc_log_level_t) */
    char debug_file[HC_ENV_PATH_MAX];  /* HCCL_DEBUG_FILE */
    unsigned debug_subsys;             /* HCCL_DEBUG_SUBSYS (mask) */
    int entry_log;                     /* HCCL_ENTRY_LOG_ENABLE */
    /* algorithms and tuning */
    char algo[HC_ENV_STR_MAX];         /* HCCL_ALGO */
    char allreduce_algo[64];           /* HCCL_ALLREDUCE_ALGO */
    char bcast_algo[64];               /* HCCL_BCAST_ALGO */
    char allgather_algo[64];           /* HCCL_ALLGATHER_ALGO */
    char reducescatter_algo[64];       /* HCCL_REDUCESCATTER_ALGO */
    char alltoall_algo[64];            /* HCCL_ALLTOALL_ALGO */
    char reduce_algo[64];              /* HCCL_REDUCE_ALGO */
    uint64_t ring_chunk;               /* HCCL_RING_CHUNK_SIZE, 0 = per size */
    uint64_t bcast_chunk;              /* HCCL_BCAST_CHUNK_SIZE */
    char tune_file[HC_ENV_PATH_MAX];   /* HCCL_TUNE_FILE */
    int deterministic;                 /* HCCL_DETERMINISTIC */
    int check_args;                    /* HCCL_CHECK_ARGS */
    int gpu_ipc;                       /* HCCL_GPU_IPC */
    /* buffers, fusion, streams */
    uint64_t buffsize;                 /* bytes: HCCL_BUFFSIZE (MB) / HCCL_BUFFER_SIZE */
    uint64_t fusion_threshold;         /* HCCL_FUSION_THRESHOLD, 0 = auto */
    int overlap_memcpy;                /* HCCL_OVERLAP_MEMCPY */
    int single_copy;                   /* HCCL_SINGLE_COPY */
    uint32_t max_concurrent;           /* HCCL_MAX_CONCURRENT */
    /* bootstrap and failures */
    double connect_timeout;            /* HCCL_CONNECT_TIMEOUT, s */
    double exec_timeout;               /* HCCL_EXEC_TIMEOUT, s (0 = forever) */
    char if_ip[64];                    /* HCCL_IF_IP */
    char socket_ifname[256];           /* HCCL_SOCKET_IFNAME */
    uint32_t if_base_port;             /* HCCL_IF_BASE_PORT, 0 = any */
    char spawn_host[256];              /* HCCL_SPAWN_HOST ("" = Open MPI's choice) */
    /* topology */
    char nvlink_map[HC_ENV_STR_MAX];   /* HCCL_NVLINK_MAP */
    char topo_file[HC_ENV_PATH_MAX];   /* HCCL_TOPO_FILE */
    char topo_dump_file[HC_ENV_PATH_MAX]; /* HCCL_TOPO_DUMP_FILE */
    int topo_ring_order;               /* HCCL_TOPO_RING_ORDER: 1 topology, 0 rank order */
    uint32_t ngroups;                  /* HCCL_GROUP_<n>: how many were set */
    char *groups[HC_MAX_GROUPS];       /* HCCL_GROUP_<n> values (owned; NULL = unset) */
    /* tracing */
    char trace_file[HC_ENV_PATH_MAX];  /* HCCL_TRACE_FILE */
    /* HCCL_* names in the environment that hcomm does not use (comma list,
     * ",..." when cut); hc_env_log prints them at INFO */
    char unknown_vars[HC_ENV_UNKNOWN_MAX];
} hc_config_t;

typedef enum {
    HC_ENV_BOOL,    /* 0/1, true/false, yes/no, on/off */
    HC_ENV_UINT,    /* decimal integer in [min, max] */
    HC_ENV_SIZE,    /* bytes with B/KB/MB/GB suffix, or a bare count */
    HC_ENV_MB,      /* megabytes (HCCL_BUFFSIZE), stored in bytes */
    HC_ENV_SECONDS, /* non-negative number of seconds, stored as double */
    HC_ENV_STRING,  /* copied as is (checked later by its user) */
    HC_ENV_LEVEL,   /* NONE..TRACE */
    HC_ENV_SUBSYS,  /* INIT,COLL,... or ^X */
    HC_ENV_PREFIX   /* HCCL_GROUP_<n>: a family of variables */
} hc_env_type_t;

/* hc_env_var_t.flags */
#define HC_ENV_F_AUTO 0x1u    /* "auto" is accepted and stored as 0 */
#define HC_ENV_F_LOGNAME 0x2u /* a file name with %h %p %r %% only */
#define HC_ENV_F_WHOLE 0x4u   /* seconds: whole ones only (HCCL's unit) */
#define HC_ENV_F_IPADDR 0x8u  /* an IPv4 or IPv6 address */
#define HC_ENV_F_IFNAMES 0x10u /* an interface list (HCCL syntax) naming one of this host's */

typedef struct hc_env_var {
    const char *name;
    hc_env_type_t type;
    const char *def;    /* default, as text ("" = none) */
    double min, max;    /* range for numbers */
    size_t offset;      /* into hc_config_t */
    size_t size;        /* field size (strings) */
    const char *help;
    unsigned flags;     /* HC_ENV_F_* */
} hc_env_var_t;

/* The table and its length. */
const hc_env_var_t *hc_env_table(size_t *n);

/* Fill cfg with defaults, then the environment. On a bad value: returns
 * HCCL_E_PARA and writes "HCCL_X='value': why" into err. */
int hc_env_load(hc_config_t *cfg, char *err, size_t errlen);
/* Free what hc_env_load allocated (the HCCL_GROUP_<n> strings). */
void hc_env_free(hc_config_t *cfg);
/* Copy a config (deep). */
int hc_env_copy(hc_config_t *dst, const hc_config_t *src);
/* Print every variable: name, effective value, default, help. */
void hc_env_print(FILE *f, const hc_config_t *cfg);
/* Log every variable's effective value at INFO (once per process). */
void hc_env_log(const hc_config_t *cfg);
/* Does interface `name` match an HCCL_SOCKET_IFNAME list: name prefixes
 * "eth,ib", "=eth0,ib0" for exact names, a leading '^' to exclude
 * ("^lo", "^=docker0")? */
int hc_env_ifname_matches(const char *spec, const char *name);
/* "4MB" -> 4194304. 0 on success, -1 on a bad value. */
int hc_parse_size(const char *s, uint64_t *out);

/* The process-wide configuration: loaded once (thread-safe), logging
 * applied. Returns HCCL_SUCCESS or HCCL_E_PARA (the error was logged). */
int hc_env_global(const hc_config_t **cfg);

/* HcclCommConfig.reserved[] as HcclCommConfigInit (hccl_comm.h) fills it,
 * HCCL's layout: a config without the magic word was not initialised. */
typedef struct hc_comm_config_info {
    uint64_t size;    /* sizeof(HcclCommConfig) of the caller's header */
    uint32_t magic;   /* HCCL_COMM_CONFIG_MAGIC_WORD */
    uint32_t version; /* HCCL_COMM_CONFIG_VERSION of the caller's header */
    uint64_t reserved;
} hc_comm_config_info_t;

#endif /* HC_ENV_H_ */
