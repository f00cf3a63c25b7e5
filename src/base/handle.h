/*
 * src/base/handle.h - the handles the public API gives out (HcclComm,
 * HcclStream), checked without touching the object they name.
 *
 * A handle is not a pointer: it is (generation << 24) | (slot + 1), a slot
 * of a process-wide table that holds the object's pointer, its kind and
 * the slot's generation. Retiring a handle (HcclCommDestroy,
 * HcclStreamDestroy) bumps the slot's generation before the object is
 * freed, so a destroyed handle no longer matches its slot even after the
 * slot holds a new object; the lookup reads only the table, whose chunks
 * are never freed, so a stale, forged or wrong-kind handle is refused
 * without reading freed memory. The lookup takes no lock (a table read);
 * creating and retiring take one. A handle used while another thread
 * destroys it is the caller's race, as with any HCCL object.
 */
#ifndef HC_HANDLE_H_
#define HC_HANDLE_H_

typedef enum { HC_HANDLE_COMM = 1, HC_HANDLE_STREAM = 2 } hc_handle_kind_t;

/* A new handle for obj, or NULL (out of memory, or 2^24 handles live). */
void *hc_handle_new(hc_handle_kind_t kind, void *obj);
/* The object of h if h is a live handle of this kind, else NULL. */
void *hc_handle_get(const void *h, hc_handle_kind_t kind);
/* h no longer names its object (from now on hc_handle_get(h) is NULL); its
 * slot may serve a later handle. NULL or a stale h: nothing happens. */
void hc_handle_retire(const void *h);

#endif /* HC_HANDLE_H_ */
