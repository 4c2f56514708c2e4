/* Per-tag accounting of live and peak bytes for allocators that cannot keep a
 * header in front of the caller's pointer (device memory).
 *
 * The same rules as the CPU pool (cpu_mempool.c): live bytes count what the
 * caller asked for, per tag and in total; peaks are high-water marks of live
 * bytes, per tag and of the total (not the sum of the per-tag peaks); a reset
 * sets every peak to its live value. A pointer -> (bytes, tag) hash table
 * (open addressing, linear probing, backward-shift deletion) finds what a
 * free releases. Reserved bytes are the backend's to fill. Thread-safe. */
#ifndef ZB_MEM_ACCOUNT_H
#define ZB_MEM_ACCOUNT_H

#include <pthread.h>
#include <stddef.h>

#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_mem_entry {
    const void *ptr; /* NULL: empty slot */
    size_t n_bytes;
    zb_mem_tag tag;
} zb_mem_entry;

typedef struct zb_mem_account {
    pthread_mutex_t lock;
    zb_mem_stats stats; /* reserved_bytes and peak_reserved_bytes stay 0 */
    zb_mem_entry *slots;
    size_t capacity; /* a power of two, or 0 before the first add */
    size_t count;
    zb_trace *trace; /* NULL: none; else every add and remove samples live memory into it */
} zb_mem_account;

zb_status zb_mem_account_init(zb_mem_account *a);
void zb_mem_account_destroy(zb_mem_account *a);
/* Records a live allocation. ZB_ERR_INVALID for a NULL pointer, a tag out of
 * range or a pointer already live; ZB_ERR_NOMEM when the table cannot grow. */
zb_status zb_mem_account_add(zb_mem_account *a, const void *ptr, size_t n_bytes, zb_mem_tag tag);
/* Forgets a live allocation and returns its size and tag (either out may be
 * NULL). ZB_ERR_INVALID when `ptr` is not live (a double or foreign free). */
zb_status zb_mem_account_remove(zb_mem_account *a, const void *ptr, size_t *n_bytes,
                                zb_mem_tag *tag);
/* Names the memory tags in `t` for its live-memory counter (and marks the
 * host tags), so the trace export, which sees no device header, can label
 * them; a no-op for NULL. Every device that samples into a trace calls it. */
void zb_mem_trace_names(zb_trace *t);
/* Copies the stats (reserved fields zero). */
void zb_mem_account_stats(zb_mem_account *a, zb_mem_stats *out);
void zb_mem_account_reset_peak(zb_mem_account *a);
/* Number of live allocations. */
size_t zb_mem_account_count(zb_mem_account *a);
/* Calls fn for each live allocation (under the lock: fn must not call back). */
void zb_mem_account_each(zb_mem_account *a, void (*fn)(void *arg, const zb_mem_entry *e),
                         void *arg);

#ifdef __cplusplus
}
#endif
#endif
