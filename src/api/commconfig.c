/*
 * src/api/commconfig.c - HCCL's communicator configuration and management calls:
 * HcclCommConfig checked and merged with the environment, the capability
 * query, HcclSetConfig/HcclGetConfig, HcclCommSuspend/Resume/GetStatus
 * (over a registry of the live communicators by name) and HcclCommInitAll
 * (several ranks in one process, one context each).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hccl/hccl.h>

#include "bootstrap.h"
#include "src/comm/comm.h"
#include "src/base/env.h"
#include "src/base/log.h"

/* ---- HcclCommConfig ---------------------------------------------------- */

/* The shortest header HCCL ever wrote (version 1: buffer size and
 * deterministic), and a bound past which a size is garbage. */
#define HC_CONFIG_MIN_SIZE offsetof(HcclCommConfig, hcclCommName)
#define HC_CONFIG_MAX_SIZE (64u * 1024u)

static const hc_env_var_t *env_var(const char *name)
{
    size_t n;
    const hc_env_var_t *t = hc_env_table(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0)
            return &t[i];
    return NULL;
}

/* A numeric field: its NOT_SET value, or within [min, max]. */
static int check_range(const char *field, double v, int not_set, double min, double max,
                       const char *why)
{
    if (not_set || (v >= min && v <= max))
        return HCCL_SUCCESS;
    HC_ERROR(HC_SUB_INIT, "HcclCommConfig.%s = %.0f: must be %.0f-%.0f%s", field, v, min, max,
             why);
    return HCCL_E_PARA;
}

static int check_string(const char *field, const char *s, size_t size)
{
    if (memchr(s, '\0', size))
        return HCCL_SUCCESS;
    HC_ERROR(HC_SUB_INIT, "HcclCommConfig.%s is not NUL-terminated within its %zu bytes",
             field, size);
    return HCCL_E_PARA;
}

#define STRING_FIELD(u, f) check_string(#f, (u)->f, sizeof((u)->f))

int hc_config_read(const HcclCommConfig *config, HcclCommConfig *out)
{
    memset(out, 0, sizeof(*out));
    HcclCommConfigInit(out);
    if (config == NULL)
        return HCCL_SUCCESS;
    hc_comm_config_info_t info;
    memcpy(&info, config->reserved, sizeof(info));
    if (info.magic != HCCL_COMM_CONFIG_MAGIC_WORD) {
        HC_ERROR(HC_SUB_INIT, "HcclCommConfig: magic word 0x%08x, expected 0x%08x: the "
                 "configuration was not initialised by HcclCommConfigInit", info.magic,
                 HCCL_COMM_CONFIG_MAGIC_WORD);
        return HCCL_E_PARA;
    }
    if (info.version == 0 || info.size < HC_CONFIG_MIN_SIZE || info.size > HC_CONFIG_MAX_SIZE) {
        HC_ERROR(HC_SUB_INIT, "HcclCommConfig: header size %llu, version %u: expected a size "
                 "of %zu-%u bytes and a version from 1", (unsigned long long)info.size,
                 info.version, (size_t)HC_CONFIG_MIN_SIZE, HC_CONFIG_MAX_SIZE);
        return HCCL_E_PARA;
    }
    /* an older layout: the fields it has; a newer one: the fields known here */
    size_t n = info.size < sizeof(*out) ? (size_t)info.size : sizeof(*out);
    memcpy((char *)out + sizeof(out->reserved), (const char *)config + sizeof(out->reserved),
           n - sizeof(out->reserved));
    if (n < offsetof(HcclCommConfig, hcclQos) + sizeof(out->hcclQos)) {
        /* the fields past n are HcclCommConfigInit's again (strings empty) */
        HcclCommConfig d;
        memset(&d, 0, sizeof(d));
        HcclCommConfigInit(&d);
        memcpy((char *)out + n, (const char *)&d + n, sizeof(d) - n);
    }
    const hc_env_var_t *mb = env_var("HCCL_BUFFSIZE");
    const hc_env_var_t *to = env_var("HCCL_EXEC_TIMEOUT");
    int rc = HCCL_SUCCESS;
    const HcclCommConfig *u = out;
    if (rc == HCCL_SUCCESS)
        rc = check_range("hcclBufferSize", u->hcclBufferSize,
                         u->hcclBufferSize == HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET, mb->min,
                         mb->max, " (MB, as HCCL_BUFFSIZE)");
    if (rc == HCCL_SUCCESS)
        rc = check_range("hcclDeterministic", u->hcclDeterministic,
                         u->hcclDeterministic == HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET, 0, 1,
                         " (as HCCL_DETERMINISTIC)");
    if (rc == HCCL_SUCCESS)
        rc = check_range("hcclExecTimeOut", u->hcclExecTimeOut,
                         u->hcclExecTimeOut == HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET, to->min,
                         to->max, " seconds (as HCCL_EXEC_TIMEOUT), or -1 for not set");
    if (rc == HCCL_SUCCESS)
        rc = check_range("hcclOpExpansionMode", u->hcclOpExpansionMode, 0, 0, 3,
                         " (HCCL's default, host, AI CPU, AIV)");
    if (rc == HCCL_SUCCESS)
        rc = check_range("hcclRdmaTrafficClass", u->hcclRdmaTrafficClass,
                         u->hcclRdmaTrafficClass == HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET, 0,
                         255, " (as HCCL_RDMA_TC), or NOT_SET");
    if (rc == HCCL_SUCCESS)
        rc = check_range("hcclRdmaServiceLevel", u->hcclRdmaServiceLevel,
                         u->hcclRdmaServiceLevel == HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET, 0,
                         7, " (as HCCL_RDMA_SL), or NOT_SET");
    if (rc == HCCL_SUCCESS)
        rc = check_range("aclGraphZeroCopyEnable", u->aclGraphZeroCopyEnable, 0, 0, 1, "");
    if (rc == HCCL_SUCCESS)
        rc = STRING_FIELD(u, hcclCommName);
    if (rc == HCCL_SUCCESS)
        rc = STRING_FIELD(u, hcclUdi);
    if (rc == HCCL_SUCCESS)
        rc = STRING_FIELD(u, hcclAlgo);
    if (rc == HCCL_SUCCESS)
        rc = STRING_FIELD(u, hcclRetryEnable);
    if (rc == HCCL_SUCCESS)
        rc = STRING_FIELD(u, hcclRetryParams);
    if (rc == HCCL_SUCCESS)
        rc = STRING_FIELD(u, hcclBufferName);
    return rc;
}

/* HcclSetConfig(HCCL_DETERMINISTIC): -1 = not set. */
static int g_deterministic = -1;

int hc_comm_config(const hc_config_t *env, const HcclCommConfig *config, hc_config_t *out)
{
    HcclCommConfig u;
    int rc = hc_config_read(config, &u);
    if (rc != HCCL_SUCCESS)
        return rc;
    rc = hc_env_copy(out, env);
    if (rc != HCCL_SUCCESS)
        return rc;
    int det = __atomic_load_n(&g_deterministic, __ATOMIC_RELAXED);
    if (u.hcclDeterministic != HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET)
        out->deterministic = (int)u.hcclDeterministic;
    else if (det >= 0)
        out->deterministic = det;
    if (u.hcclBufferSize != HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET)
        out->buffsize = (uint64_t)u.hcclBufferSize << 20;
    if (u.hcclExecTimeOut != HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET)
        out->exec_timeout = u.hcclExecTimeOut;
    if (u.hcclAlgo[0])
        snprintf(out->algo, sizeof(out->algo), "%s", u.hcclAlgo);
    return HCCL_SUCCESS;
}

uint32_t HcclGetCommConfigCapability(void)
{
    return HCCL_COMM_CONFIG_RESERVED;
}

HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue configValue)
{
    if (config != HCCL_DETERMINISTIC) {
        HC_ERROR(HC_SUB_INIT, "HcclSetConfig: config %d is not a known HcclConfig", (int)config);
        return HCCL_E_PARA;
    }
    if (configValue.value != 0 && configValue.value != 1) {
        HC_ERROR(HC_SUB_INIT, "HcclSetConfig: HCCL_DETERMINISTIC value %d: must be 0 or 1 "
                 "(as HCCL_DETERMINISTIC)", (int)configValue.value);
        return HCCL_E_PARA;
    }
    __atomic_store_n(&g_deterministic, (int)configValue.value, __ATOMIC_RELAXED);
    HC_INFO(HC_SUB_INIT, "HcclSetConfig: HCCL_DETERMINISTIC = %d for the communicators created "
            "from now on", (int)configValue.value);
    return HCCL_SUCCESS;
}

HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue *configValue)
{
    if (config != HCCL_DETERMINISTIC) {
        HC_ERROR(HC_SUB_INIT, "HcclGetConfig: config %d is not a known HcclConfig", (int)config);
        return HCCL_E_PARA;
    }
    if (configValue == NULL) {
        HC_ERROR(HC_SUB_INIT, "HcclGetConfig: configValue is NULL");
        return HCCL_E_PTR;
    }
    int det = __atomic_load_n(&g_deterministic, __ATOMIC_RELAXED);
    if (det < 0) {
        const hc_config_t *env;
        int rc = hc_env_global(&env);
        if (rc != HCCL_SUCCESS)
            return (HcclResult)rc;
        det = env->deterministic;
    }
    configValue->value = det;
    return HCCL_SUCCESS;
}

/* ---- live communicators by name ---------------------------------------- */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static hc_comm_t **reg;
static size_t nreg, reg_cap;

void hc_comm_registry_add(hc_comm_t *c)
{
    pthread_mutex_lock(&reg_lock);
    if (nreg == reg_cap) {
        size_t cap = reg_cap ? 2 * reg_cap : 16;
        hc_comm_t **r = realloc(reg, cap * sizeof(*r));
        if (r == NULL) { /* only HcclCommGetStatus misses it */
            pthread_mutex_unlock(&reg_lock);
            HC_WARN(HC_SUB_INIT, "communicator %s: out of memory; HcclCommGetStatus will not "
                    "find it", c->name);
            return;
        }
        reg = r;
        reg_cap = cap;
    }
    reg[nreg++] = c;
    pthread_mutex_unlock(&reg_lock);
}

void hc_comm_registry_remove(hc_comm_t *c)
{
    pthread_mutex_lock(&reg_lock);
    for (size_t i = 0; i < nreg; i++)
        if (reg[i] == c) {
            reg[i] = reg[--nreg];
            break;
        }
    pthread_mutex_unlock(&reg_lock);
}

HcclResult HcclCommGetStatus(const char *commId, HcclCommStatus *status)
{
    if (commId == NULL || status == NULL) {
        HC_ERROR(HC_SUB_INIT, "HcclCommGetStatus: %s is NULL", commId ? "status" : "commId");
        return HCCL_E_PTR;
    }
    int found = 0;
    pthread_mutex_lock(&reg_lock);
    for (size_t i = 0; i < nreg && !found; i++)
        if (strncmp(reg[i]->name, commId, sizeof(reg[i]->name)) == 0) {
            found = 1;
            *status = reg[i]->suspended || reg[i]->aborted ? HCCL_COMM_STATUS_SUSPENDING
                                                           : HCCL_COMM_STATUS_READY;
        }
    pthread_mutex_unlock(&reg_lock);
    if (!found) {
        HC_ERROR(HC_SUB_INIT, "HcclCommGetStatus: no live communicator is named '%.128s'",
                 commId);
        return HCCL_E_NOT_FOUND;
    }
    return HCCL_SUCCESS;
}

HcclResult HcclCommSuspend(HcclComm comm)
{
    hc_comm_t *c;
    int rc = hc_comm_get(comm, "HcclCommSuspend", &c);
    if (rc != HCCL_SUCCESS)
        return (HcclResult)rc;
    c->suspended = 1;
    HC_INFO(HC_SUB_INIT, "communicator %s suspended", c->name);
    return HCCL_SUCCESS;
}

HcclResult HcclCommResume(HcclComm comm)
{
    hc_comm_t *c;
    int rc = hc_comm_get(comm, "HcclCommResume", &c);
    if (rc != HCCL_SUCCESS)
        return (HcclResult)rc;
    if (c->aborted) {
        HC_ERROR(HC_SUB_INIT, "HcclCommResume: communicator %s was aborted (HcclCommAbort) and "
                 "cannot resume", c->name);
        return HCCL_E_SUSPENDING;
    }
    c->suspended = 0;
    HC_INFO(HC_SUB_INIT, "communicator %s resumed", c->name);
    return HCCL_SUCCESS;
}

/* ---- HcclCommInitAll ------------------------------------------------- */

HcclResult HcclCommInitAll(uint32_t ndev, int32_t *devices, HcclComm *comms)
{
    static const char fn[] = "HcclCommInitAll";
    if (devices == NULL || comms == NULL) {
        HC_ERROR(HC_SUB_INIT, "%s: %s is NULL", fn, devices ? "comms" : "devices");
        return HCCL_E_PTR;
    }
    if (ndev == 0) {
        HC_ERROR(HC_SUB_INIT, "%s: ndev is 0", fn);
        return HCCL_E_PARA;
    }
    for (uint32_t i = 0; i < ndev; i++) {
        if (devices[i] < 0) {
            HC_ERROR(HC_SUB_INIT, "%s: devices[%u] = %d is negative", fn, i, (int)devices[i]);
            return HCCL_E_PARA;
        }
        for (uint32_t j = 0; j < i; j++)
            if (devices[j] == devices[i]) {
                HC_ERROR(HC_SUB_INIT, "%s: devices[%u] and devices[%u] are both %d", fn, j, i,
                         (int)devices[i]);
                return HCCL_E_PARA;
            }
    }
    /* One context per rank (context.h), so each rank is what it would be
     * in a process of its own; the cards are all here, so no rendezvous.
     * As between processes, a rank whose local setup failed says so in its
     * card and every rank's hc_bootstrap_finish fails alike. */
    hc_context_t **ctx = calloc(ndev, sizeof(*ctx));
    hc_config_t *cfg = calloc(ndev, sizeof(*cfg));
    hc_card_t *cards = calloc(ndev, sizeof(*cards));
    int rc = HCCL_E_MEMORY;
    if (ctx != NULL && cfg != NULL && cards != NULL)
        rc = hc_ctx_create_family(ndev, ctx);
    else
        HC_ERROR(HC_SUB_INIT, "%s: out of memory for %u ranks", fn, ndev);
    if (rc == HCCL_SUCCESS) {
        for (uint32_t i = 0; i < ndev; i++)
            hc_bootstrap_prepare_in(ctx[i], NULL, i, &cfg[i], &cards[i]);
        for (uint32_t i = 0; i < ndev; i++) { /* each takes its context's reference */
            comms[i] = NULL;
            int r = hc_bootstrap_finish(ctx[i], &cfg[i], i, ndev, cards, NULL, &comms[i]);
            if (rc == HCCL_SUCCESS)
                rc = r;
        }
        for (uint32_t i = 0; rc != HCCL_SUCCESS && i < ndev; i++) /* one failed locally */
            if (comms[i] != NULL) {
                HcclCommDestroy(comms[i]);
                comms[i] = NULL;
            }
    }
    if (rc == HCCL_SUCCESS)
        HC_INFO(HC_SUB_INIT, "%s: %u ranks in this process, each with a context of its own",
                fn, ndev);
    free(ctx);
    free(cfg);
    free(cards);
    return (HcclResult)rc;
}
