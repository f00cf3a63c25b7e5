/*
 * src/api/bootstrap_cluster.c - HcclCommInitClusterInfo(Config): a communicator from
 * HCCL's rank table (the JSON file; topo/ranktable.c reads it, format in
 * docs/TOPOLOGY.md), without MPI.
 *
 * The table gives the number of ranks and where rank 0 runs: rank 0
 * listens at its server's address (host_ip, else an IP server_id) and the
 * port "hcomm_port" from the table, else HCCL_IF_BASE_PORT, else 60000;
 * every rank joins the same TCP rendezvous as the root-info path
 * (src/api/bootstrap_tcp.c), identified by a hash of the table's bytes, so a
 * rank started with another table is refused. The communicator's
 * topology model then comes from the same table (servers are nodes, an
 * hcomm "rack_id" or a 1.2 super pod is a rack), unless HCCL_TOPO_FILE
 * overrides it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <hccl/hccl.h>

#include "bootstrap.h"
#include "src/base/file.h"
#include "src/base/log.h"
#include "topo/topo_int.h"

#define HC_CLUSTER_PORT 60000 /* HCCL's first host-NIC port */

HcclResult HcclCommInitClusterInfoConfig(const char *clusterInfo, uint32_t rank,
                                         HcclCommConfig *config, HcclComm *comm)
{
    if (clusterInfo == NULL || comm == NULL) {
        HC_ERROR(HC_SUB_INIT, "HcclCommInitClusterInfo: %s is NULL",
                 clusterInfo ? "comm" : "clusterInfo");
        return HCCL_E_PTR;
    }
    const hc_config_t *env;
    int rc = hc_env_global(&env);
    if (rc != HCCL_SUCCESS)
        return rc;
    hc_decl_t d;
    char err[600];
    hc_decl_init(&d);
    rc = hc_decl_load(clusterInfo, &d, err, sizeof(err));
    if (rc == HCCL_SUCCESS && !d.json) {
        snprintf(err, sizeof(err), "not an HCCL rank table (JSON); a topology file goes in "
                 "HCCL_TOPO_FILE");
        rc = HCCL_E_PARA;
    }
    if (rc != HCCL_SUCCESS) {
        HC_ERROR(HC_SUB_INIT, "HcclCommInitClusterInfo: rank table %s: %s", clusterInfo, err);
        hc_decl_free(&d);
        return rc;
    }
    const uint32_t nranks = (uint32_t)d.nranks;
    if (rank >= nranks) {
        HC_ERROR(HC_SUB_INIT, "HcclCommInitClusterInfo: rank %u, but the rank table %s has %u "
                 "ranks", rank, clusterInfo, nranks);
        hc_decl_free(&d);
        return HCCL_E_PARA;
    }
    char ip[HC_NAME_MAX];
    const hc_decl_node_t *root = &d.nodes[d.ranks[0].node];
    snprintf(ip, sizeof(ip), "%s", root->addr);
    uint32_t port = d.port ? d.port : env->if_base_port ? env->if_base_port : HC_CLUSTER_PORT;
    unsigned char tmp[16];
    int family = inet_pton(AF_INET, ip, tmp) == 1 ? AF_INET
                 : inet_pton(AF_INET6, ip, tmp) == 1 ? AF_INET6 : 0;
    if (family == 0)
        HC_ERROR(HC_SUB_INIT, "HcclCommInitClusterInfo: rank table %s: the server of rank 0 "
                 "('%s') has no IP address (give host_ip, or an IP address as server_id)",
                 clusterInfo, root->name);
    hc_decl_free(&d); /* root points into d */
    if (family == 0)
        return HCCL_E_PARA;
    size_t len = 0;
    char *text = NULL, why[128];
    int code = hc_file_read(clusterInfo, HC_TOPO_FILE_MAX, &text, &len);
    if (code != 0) {
        HC_ERROR(HC_SUB_INIT, "HcclCommInitClusterInfo: cannot read %s: %s", clusterInfo,
                 hc_file_strerror(code, HC_TOPO_FILE_MAX, why, sizeof(why)));
        return HCCL_E_OPEN_FILE_FAILURE;
    }
    const uint64_t uid = hc_topo_hash(HC_HASH_INIT, text, len);
    free(text);
    const double timeout = env->connect_timeout > 0 ? env->connect_timeout : 1e9;

    hc_card_t *cards = malloc((size_t)nranks * sizeof(hc_card_t));
    hc_card_t *mine = malloc(sizeof(hc_card_t));
    if (cards == NULL || mine == NULL) {
        free(cards);
        free(mine);
        return HCCL_E_MEMORY;
    }
    hc_context_t *ctx;
    hc_config_t cfg;
    hc_bootstrap_prepare(config, rank, &ctx, &cfg, mine);
    rc = HCCL_SUCCESS;
    if (rank == 0) {
        uint32_t bound;
        rc = hc_tcp_serve_start(family, ip, port, 1, uid, nranks, timeout, &bound);
        if (rc != HCCL_SUCCESS)
            HC_ERROR(HC_SUB_INIT, "HcclCommInitClusterInfo: rank 0 must run on the server of "
                     "rank 0 in %s (%s) and port %u must be free", clusterInfo, ip, port);
        else
            HC_INFO(HC_SUB_INIT, "rank table %s: %u ranks, rendezvous at %s port %u",
                    clusterInfo, nranks, ip, port);
    }
    if (rc == HCCL_SUCCESS)
        rc = hc_tcp_rendezvous(family, ip, port, uid, nranks, mine, cards, timeout);
    if (rc == HCCL_SUCCESS) {
        /* the model reads the same table, unless HCCL_TOPO_FILE overrides */
        if (ctx && cfg.topo_file[0] == '\0')
            snprintf(cfg.topo_file, sizeof(cfg.topo_file), "%s", clusterInfo);
        rc = hc_bootstrap_finish(ctx, &cfg, rank, nranks, cards, config, comm);
    } else if (ctx) {
        hc_env_free(&cfg);
        hc_ctx_release(ctx);
    }
    free(cards);
    free(mine);
    return rc;
}

HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t rank, HcclComm *comm)
{
    return HcclCommInitClusterInfoConfig(clusterInfo, rank, NULL, comm);
}
