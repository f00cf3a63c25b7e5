/*
 * topo/ranktable.c - HCCL's rank table (the JSON file that
 * HcclCommInitClusterInfo takes), read with json-c into the same
 * declarations as a topology file, so that one model serves both.
 *
 * HCCL's version 1.0 layout, plus what hcomm reads from 1.2 and its own
 * optional extensions (marked *):
 *
 *   { "version": "1.0", "status": "completed", "server_count": "2",
 *     "hcomm_port": "60000",                                   * rendezvous port
 *     "server_list": [
 *       { "server_id": "10.0.0.1", "host_ip": "10.0.0.1",       host_ip optional
 *         "rack_id": "rack0", "switch_id": "tor0",              * placement
 *         "device": [ { "device_id": "0", "device_ip": "192.168.1.1",
 *                       "rank_id": "0", "numa_id": "0" } ] } ],  * numa_id
 *     "super_pod_list": [ { "super_pod_id": "0",                 1.2: pods = racks
 *                           "server_list": [ { "server_id": "10.0.0.1" } ] } ] }
 *
 * Numbers may be strings (HCCL writes them so) or JSON integers. A server
 * is a node; its address is host_ip, else server_id when that is an IP
 * address, else container_ip. The NPUs of one server form one fast group
 * (HCCS joins them) unless numa_id / the overrides say otherwise. Errors
 * name the JSON line (syntax) or the path of the bad field (content).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hccl/hccl_types.h>

#include "topo.h"
#include "topo_int.h"

static int jfail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int jfail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return HCCL_E_PARA;
}

/* A string or integer field as text: 0 (with *present), or -1 if present
 * with another type or too long. */
static int get_text(json_object *o, const char *key, char *buf, size_t len, int *present)
{
    json_object *v;
    *present = 0;
    if (!json_object_object_get_ex(o, key, &v) || v == NULL)
        return 0;
    *present = 1;
    if (json_object_is_type(v, json_type_string)) {
        const char *s = json_object_get_string(v);
        if (strlen(s) >= len)
            return -1;
        snprintf(buf, len, "%s", s);
        return 0;
    }
    if (json_object_is_type(v, json_type_int)) {
        snprintf(buf, len, "%lld", (long long)json_object_get_int64(v));
        return 0;
    }
    return -1;
}

/* 0: *out set; 1: absent (and not required); -1: bad (err says why). */
static int get_uint(json_object *o, const char *key, const char *path, uint32_t max,
                    uint32_t *out, int required, char *err, size_t errlen)
{
    char buf[64], field[128];
    int present;
    snprintf(field, sizeof(field), "%s%s%s", path, path[0] ? "." : "", key);
    if (get_text(o, key, buf, sizeof(buf), &present)) {
        jfail(err, errlen, "%s: expected a number (or a string holding one)", field);
        return -1;
    }
    if (!present) {
        if (!required)
            return 1;
        jfail(err, errlen, "%s: the field is missing", field);
        return -1;
    }
    char *end;
    errno = 0;
    unsigned long v = strtoul(buf, &end, 10);
    if (buf[0] < '0' || buf[0] > '9' || *end || errno || v > max) {
        jfail(err, errlen, "%s: '%s' is not a number in 0..%u", field, buf, max);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* A text field that becomes a name in the model (and in its dump, which
 * must read back as a topology file): 0, or -1 with err set. */
static int check_name(const char *field, const char *s, size_t max, char *err, size_t errlen)
{
    if (hc_decl_name_ok(s, max))
        return 0;
    jfail(err, errlen, "%s: '%s' is not a name hcomm takes (letters, digits and _.:-+@, at "
          "most %zu characters)", field, s, max - 1);
    return -1;
}

static int is_ip(const char *s)
{
    unsigned char b[16];
    return inet_pton(AF_INET, s, b) == 1 || inet_pton(AF_INET6, s, b) == 1;
}

static int json_line(const char *text, size_t off)
{
    int line = 1;
    for (size_t i = 0; i < off && text[i]; i++)
        line += text[i] == '\n';
    return line;
}

static int parse_server(json_object *srv, int si, hc_decl_t *d, char *err, size_t errlen)
{
    char path[64], id[HC_NAME_MAX], txt[HC_NAME_MAX];
    int present;
    snprintf(path, sizeof(path), "server_list[%d]", si);
    if (!json_object_is_type(srv, json_type_object))
        return jfail(err, errlen, "%s: expected an object", path);
    char field[128];
    if (get_text(srv, "server_id", id, sizeof(id), &present) || !present || !id[0])
        return jfail(err, errlen, "%s.server_id: missing or not a string", path);
    snprintf(field, sizeof(field), "%s.server_id", path);
    if (check_name(field, id, sizeof(id), err, errlen))
        return HCCL_E_PARA;
    if (hc_decl_find_node(d, id) >= 0)
        return jfail(err, errlen, "%s.server_id: '%s' appears twice", path, id);
    int node = hc_decl_node(d, id, si + 1);
    if (node < 0)
        return HCCL_E_MEMORY;
    hc_decl_node_t *nd = &d->nodes[node];
    if (get_text(srv, "host_ip", txt, sizeof(txt), &present))
        return jfail(err, errlen, "%s.host_ip: expected a string", path);
    if (present && !is_ip(txt))
        return jfail(err, errlen, "%s.host_ip: '%s' is not an IP address", path, txt);
    if (!present && is_ip(id))
        snprintf(txt, sizeof(txt), "%s", id), present = 1;
    if (!present && (get_text(srv, "container_ip", txt, sizeof(txt), &present) != 0 ||
                     (present && !is_ip(txt))))
        present = 0; /* a container_ip that is no IP address is not used */
    if (present)
        snprintf(nd->addr, sizeof(nd->addr), "%s", txt);
    if (get_text(srv, "rack_id", txt, sizeof(txt), &present))
        return jfail(err, errlen, "%s.rack_id: expected a string", path);
    snprintf(field, sizeof(field), "%s.rack_id", path);
    if (present && check_name(field, txt, HC_NAME_MAX, err, errlen))
        return HCCL_E_PARA;
    if (present) {
        int r = hc_decl_rack(d, txt, 0);
        if (r < 0)
            return HCCL_E_MEMORY;
        d->nodes[node].rack = r;
        if (get_text(srv, "switch_id", txt, sizeof(txt), &present))
            return jfail(err, errlen, "%s.switch_id: expected a string", path);
        snprintf(field, sizeof(field), "%s.switch_id", path);
        if (present && check_name(field, txt, sizeof(d->racks[r].sw), err, errlen))
            return HCCL_E_PARA;
        if (present)
            snprintf(d->racks[r].sw, sizeof(d->racks[r].sw), "%s", txt);
    }
    json_object *devs;
    if (!json_object_object_get_ex(srv, "device", &devs) ||
        !json_object_is_type(devs, json_type_array))
        return jfail(err, errlen, "%s.device: missing or not an array", path);
    size_t nd_ = json_object_array_length(devs);
    for (size_t k = 0; k < nd_; k++) {
        json_object *dv = json_object_array_get_idx(devs, k);
        char dpath[96], name[32];
        uint32_t dev_id, rank, numa = 0;
        snprintf(dpath, sizeof(dpath), "%s.device[%zu]", path, k);
        if (!json_object_is_type(dv, json_type_object))
            return jfail(err, errlen, "%s: expected an object", dpath);
        if (get_uint(dv, "device_id", dpath, 65535, &dev_id, 1, err, errlen) ||
            get_uint(dv, "rank_id", dpath, (1u << 20) - 1, &rank, 1, err, errlen))
            return HCCL_E_PARA;
        int has_numa = get_uint(dv, "numa_id", dpath, 1023, &numa, 0, err, errlen);
        if (has_numa < 0)
            return HCCL_E_PARA;
        snprintf(name, sizeof(name), "npu%u", dev_id);
        int di = hc_decl_dev(d, node, name, 0);
        if (di < 0)
            return HCCL_E_MEMORY;
        snprintf(d->devs[di].kind, sizeof(d->devs[di].kind), "npu");
        if (get_text(dv, "device_ip", txt, sizeof(txt), &present))
            return jfail(err, errlen, "%s.device_ip: expected a string", dpath);
        snprintf(field, sizeof(field), "%s.device_ip", dpath);
        if (present && txt[0] && check_name(field, txt, sizeof(d->devs[di].addr), err, errlen))
            return HCCL_E_PARA;
        if (present)
            snprintf(d->devs[di].addr, sizeof(d->devs[di].addr), "%s", txt);
        hc_decl_rank_t *r = hc_decl_rank(d, (int)rank);
        if (r == NULL)
            return HCCL_E_MEMORY;
        if (r->set)
            return jfail(err, errlen, "%s.rank_id: rank %u appears twice", dpath, rank);
        r->set = 1;
        r->node = node;
        r->dev = di;
        r->numa = has_numa == 0 ? (int)numa : -1;
        r->line = 0;
        /* the NPUs of a server share one fast domain unless NUMA splits them */
        snprintf(r->group, sizeof(r->group), "%s", has_numa == 0 ? "" : "server");
    }
    return HCCL_SUCCESS;
}

/* The table's header: a JSON object, status "completed", version 1.0 to
 * 1.2, the optional hcomm_port. */
static int parse_header(json_object *root, hc_decl_t *d, char *err, size_t errlen)
{
    char txt[64];
    int present;
    if (!json_object_is_type(root, json_type_object))
        return jfail(err, errlen, "the rank table must be a JSON object");
    if (get_text(root, "status", txt, sizeof(txt), &present) == 0 && present &&
        strcmp(txt, "completed") != 0)
        return jfail(err, errlen, "status is '%s', not 'completed' (the table is not final)",
                     txt);
    if (get_text(root, "version", txt, sizeof(txt), &present) == 0 && present &&
        strcmp(txt, "1.0") != 0 && strcmp(txt, "1.1") != 0 && strcmp(txt, "1.2") != 0)
        return jfail(err, errlen, "version '%s': hcomm reads rank tables 1.0 to 1.2", txt);
    uint32_t port = 0;
    int g = get_uint(root, "hcomm_port", "", 65535, &port, 0, err, errlen);
    if (g < 0)
        return HCCL_E_PARA;
    if (g == 0)
        d->port = port;
    return HCCL_SUCCESS;
}

/* server_list (every server and its devices' ranks) and server_count. */
static int parse_server_list(json_object *root, hc_decl_t *d, char *err, size_t errlen)
{
    json_object *list;
    if (!json_object_object_get_ex(root, "server_list", &list) ||
        !json_object_is_type(list, json_type_array))
        return jfail(err, errlen, "server_list: missing or not an array");
    size_t ns = json_object_array_length(list);
    if (ns == 0)
        return jfail(err, errlen, "server_list is empty");
    int rc = HCCL_SUCCESS;
    for (size_t i = 0; i < ns && rc == HCCL_SUCCESS; i++)
        rc = parse_server(json_object_array_get_idx(list, i), (int)i, d, err, errlen);
    if (rc != HCCL_SUCCESS)
        return rc;
    uint32_t count;
    int g = get_uint(root, "server_count", "", 1u << 20, &count, 0, err, errlen);
    if (g < 0)
        return HCCL_E_PARA;
    if (g == 0 && count != ns)
        return jfail(err, errlen, "server_count says %u but server_list has %zu servers", count,
                     ns);
    return HCCL_SUCCESS;
}

/* 1.2: super pods group servers, like racks. */
static int parse_pods(json_object *root, hc_decl_t *d, char *err, size_t errlen)
{
    json_object *pods;
    int present;
    if (!json_object_object_get_ex(root, "super_pod_list", &pods) ||
        !json_object_is_type(pods, json_type_array))
        return HCCL_SUCCESS;
    for (size_t p = 0; p < json_object_array_length(pods); p++) {
        json_object *pod = json_object_array_get_idx(pods, p), *srvs;
        char pid[48], rname[HC_NAME_MAX];
        if (get_text(pod, "super_pod_id", pid, sizeof(pid), &present) || !present)
            return jfail(err, errlen, "super_pod_list[%zu].super_pod_id: missing", p);
        snprintf(rname, sizeof(rname), "pod%s", pid);
        char field[64];
        snprintf(field, sizeof(field), "super_pod_list[%zu].super_pod_id", p);
        if (check_name(field, rname, sizeof(rname), err, errlen))
            return HCCL_E_PARA;
        int r = hc_decl_rack(d, rname, 0);
        if (r < 0)
            return HCCL_E_MEMORY;
        if (!json_object_object_get_ex(pod, "server_list", &srvs) ||
            !json_object_is_type(srvs, json_type_array))
            continue;
        for (size_t k = 0; k < json_object_array_length(srvs); k++) {
            char sid[HC_NAME_MAX];
            if (get_text(json_object_array_get_idx(srvs, k), "server_id", sid, sizeof(sid),
                         &present) || !present)
                continue;
            int nd = hc_decl_find_node(d, sid);
            if (nd < 0)
                return jfail(err, errlen, "super_pod_list[%zu].server_list[%zu]: server "
                             "'%s' is not in server_list", p, k, sid);
            if (d->nodes[nd].rack < 0)
                d->nodes[nd].rack = r;
        }
    }
    return HCCL_SUCCESS;
}

int hc_decl_parse_json(const char *text, hc_decl_t *d, char *err, size_t errlen)
{
    json_tokener *tok = json_tokener_new();
    if (tok == NULL)
        return HCCL_E_MEMORY;
    size_t len = strlen(text);
    json_object *root = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error je = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (root == NULL || je != json_tokener_success) {
        if (root)
            json_object_put(root);
        if (je == json_tokener_continue)
            return jfail(err, errlen, "line %d: the JSON ends too early (unclosed { or [)",
                         json_line(text, len));
        return jfail(err, errlen, "line %d: JSON syntax error: %s", json_line(text, end),
                     json_tokener_error_desc(je));
    }
    int rc = HCCL_SUCCESS;
    d->json = 1;
    while (end < len && (text[end] == ' ' || text[end] == '\n' || text[end] == '\t' ||
                         text[end] == '\r'))
        end++;
    if (end < len) {
        rc = jfail(err, errlen, "line %d: text after the end of the JSON object",
                   json_line(text, end));
        goto out;
    }
    if ((rc = parse_header(root, d, err, errlen)) != HCCL_SUCCESS ||
        (rc = parse_server_list(root, d, err, errlen)) != HCCL_SUCCESS ||
        (rc = parse_pods(root, d, err, errlen)) != HCCL_SUCCESS)
        goto out;
    for (int r = 0; r < d->nranks; r++)
        if (!d->ranks[r].set) {
            rc = jfail(err, errlen, "rank_id %d is missing (rank ids must be 0..%d, each once)",
                       r, d->nranks - 1);
            goto out;
        }
out:
    json_object_put(root);
    return rc;
}
