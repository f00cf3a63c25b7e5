/*
 * src/api/rendezvous.c - the root's checks on rendezvous messages (see
 * src/api/rendezvous.h). No sockets, no logging: the caller logs the reason.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous.h"

void hc_rdv_init(hc_rdv_t *r, uint64_t uid)
{
    memset(r, 0, sizeof(*r));
    r->uid = uid;
}

void hc_rdv_free(hc_rdv_t *r)
{
    free(r->owner);
    r->owner = NULL;
}

int hc_rdv_expect(hc_rdv_t *r, uint32_t nranks)
{
    if (r->nranks != 0)
        return nranks == r->nranks ? HC_RDV_OK : HC_RDV_CONFLICT;
    if (nranks == 0 || nranks > HC_RDV_MAX_RANKS)
        return HC_RDV_CONFLICT;
    r->owner = calloc(nranks, sizeof(*r->owner));
    if (r->owner == NULL)
        return HC_RDV_NOMEM;
    r->nranks = nranks;
    return HC_RDV_OK;
}

int hc_rdv_hello(const hc_rdv_t *r, const void *buf, size_t len, char *why, size_t whylen)
{
    hc_hello_t h;
    if (len < sizeof(h)) {
        snprintf(why, whylen, "%zu bytes, shorter than a hello (%zu)", len, sizeof(h));
        return HC_RDV_STRANGER;
    }
    memcpy(&h, buf, sizeof(h));
    if (h.magic != HC_HELLO_MAGIC || h.pad != 0)
        snprintf(why, whylen, "not a hello (magic 0x%08x, pad %u)", h.magic, h.pad);
    else if (h.uid != r->uid)
        snprintf(why, whylen, "a hello for another rendezvous (id 0x%016llx)",
                 (unsigned long long)h.uid);
    else if (h.nranks == 0 || h.nranks > HC_RDV_MAX_RANKS)
        snprintf(why, whylen, "a hello with nRanks %u (1..%u)", h.nranks, HC_RDV_MAX_RANKS);
    else if (h.rank >= h.nranks)
        snprintf(why, whylen, "a hello with rank %u >= nRanks %u", h.rank, h.nranks);
    else
        return HC_RDV_OK;
    return HC_RDV_STRANGER;
}

int hc_rdv_offer(hc_rdv_t *r, const void *msg, size_t len, void *who, char *why,
                 size_t whylen)
{
    if (len != HC_RDV_MSG_BYTES) {
        snprintf(why, whylen, "a message of %zu bytes, not %zu", len, HC_RDV_MSG_BYTES);
        return HC_RDV_STRANGER;
    }
    int v = hc_rdv_hello(r, msg, len, why, whylen);
    if (v != HC_RDV_OK)
        return v;
    hc_hello_t h;
    hc_card_t card;
    memcpy(&h, msg, sizeof(h));
    memcpy(&card, (const char *)msg + sizeof(h), sizeof(card));
    if (card.magic != HC_CARD_MAGIC || card.rank != h.rank) {
        snprintf(why, whylen, "rank %u's hello followed by no card of rank %u (magic 0x%08x, "
                 "rank %u)", h.rank, h.rank, card.magic, card.rank);
        return HC_RDV_STRANGER;
    }
    if (r->nranks == 0)
        return HC_RDV_WAIT;
    if (h.nranks != r->nranks) {
        snprintf(why, whylen, "rank %u says nRanks %u; this rendezvous has %u ranks", h.rank,
                 h.nranks, r->nranks);
        return HC_RDV_CONFLICT;
    }
    if (r->owner[h.rank] != NULL) {
        snprintf(why, whylen, "rank %u arrived twice (two processes were given rank %u)",
                 h.rank, h.rank);
        return HC_RDV_CONFLICT;
    }
    r->owner[h.rank] = who;
    r->got++;
    return HC_RDV_OK;
}
