/*
 * src/api/rendezvous.h - the TCP rendezvous's wire format and the root's
 * judgement of what arrives, without sockets (src/api/rendezvous.c), so that
 * the server (src/api/bootstrap_tcp.c) and the fuzz harness
 * (test/fuzz/fuzz_bootstrap.c) run the same checks.
 *
 * A rank connects to the root and sends one message: an hc_hello_t, then
 * its hc_card_t. The root answers every accepted rank with an hc_reply_t
 * and, on success, the cards of all ranks. Anything else that connects is
 * a stranger: it is judged on its bytes only, and nothing is allocated or
 * indexed with a value a message sent. The rank count comes from the
 * root's own side, never from a message: the rank table, or the nRanks of
 * the HcclCommInitRootInfo call in the process that made the root info;
 * until then whole messages wait (HC_RDV_WAIT).
 */
#ifndef HC_RENDEZVOUS_H_
#define HC_RENDEZVOUS_H_

#include <stddef.h>
#include <stdint.h>

#include "src/transport/context.h"

/* At most this many ranks (as many as topology files and rank tables). */
#define HC_RDV_MAX_RANKS (1u << 20)
#define HC_HELLO_MAGIC 0x68636865u /* "hche" */

/* What HcclGetRootInfo writes into HcclRootInfo.internal. */
typedef struct {
    uint32_t magic;    /* HC_ROOTINFO_MAGIC */
    uint32_t version;  /* HCOMM_VERSION_CODE */
    uint64_t uid;      /* identifies this rendezvous */
    uint32_t family;   /* AF_INET or AF_INET6 */
    uint32_t port;
    char ip[64];
} hc_rootinfo_t;
#define HC_ROOTINFO_MAGIC 0x68637269u /* "hcri" */

typedef struct {
    uint32_t magic;  /* HC_HELLO_MAGIC */
    uint32_t nranks; /* 1 .. HC_RDV_MAX_RANKS */
    uint32_t rank;   /* < nranks; the card that follows says the same */
    uint32_t pad;    /* 0 */
    uint64_t uid;    /* the rendezvous's */
} hc_hello_t;

/* A rank's whole message: hello, then card. */
#define HC_RDV_MSG_BYTES (sizeof(hc_hello_t) + sizeof(hc_card_t))

typedef struct {
    int32_t status;  /* HCCL_SUCCESS: all nranks cards follow */
    uint32_t nranks; /* the rendezvous's rank count (0: none known) */
} hc_reply_t;

/* Verdicts on a message. */
enum {
    HC_RDV_OK = 0,   /* accepted (a hello: well formed so far) */
    HC_RDV_STRANGER, /* not a message a rank of this rendezvous sends: drop it */
    HC_RDV_CONFLICT, /* well formed, but not what the root expects (another
                      * nRanks, a rank already taken): answer HCCL_E_PARA, so
                      * that a misconfigured rank fails at once */
    HC_RDV_WAIT,     /* well formed; judge it again once the rank count is known */
    HC_RDV_NOMEM
};

/* The root's state of one rendezvous. */
typedef struct {
    uint64_t uid;
    uint32_t nranks; /* expected; 0 until hc_rdv_expect */
    uint32_t got;    /* ranks accepted */
    void **owner;    /* [nranks]: who sent rank i (NULL: nobody yet) */
} hc_rdv_t;

void hc_rdv_init(hc_rdv_t *r, uint64_t uid);
void hc_rdv_free(hc_rdv_t *r);
/* The rank count, from the root's side (1 .. HC_RDV_MAX_RANKS). HC_RDV_OK,
 * HC_RDV_CONFLICT (out of range, or another count was set) or
 * HC_RDV_NOMEM. */
int hc_rdv_expect(hc_rdv_t *r, uint32_t nranks);
/* Judge the first len bytes of a message (the hello: every field against
 * what this rendezvous accepts). HC_RDV_OK or HC_RDV_STRANGER; why gets
 * the reason. */
int hc_rdv_hello(const hc_rdv_t *r, const void *buf, size_t len, char *why, size_t whylen);
/* Judge a whole message (len must be HC_RDV_MSG_BYTES) from `who`
 * (non-NULL, the caller's token); on HC_RDV_OK it holds its rank's place
 * (r->owner[rank] = who). Any other verdict changes nothing; HC_RDV_WAIT
 * while the rank count is not known. */
int hc_rdv_offer(hc_rdv_t *r, const void *msg, size_t len, void *who, char *why,
                 size_t whylen);

#endif /* HC_RENDEZVOUS_H_ */
