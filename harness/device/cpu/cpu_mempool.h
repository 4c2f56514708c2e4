/* The CPU device's caching memory pool.
 *
 * The build machines fault fresh pages in slowly (docs/design.md §10: ~12 us per
 * 4 KiB page), so a benchmark that allocates and frees per step would measure
 * page faults. Like a GPU framework's caching allocator, the pool keeps freed
 * blocks and hands them out again for the same rounded size; a fresh block is
 * zero-filled once on allocation, which also faults its pages in before any
 * timing. Accounting stays exact: live and peak bytes per tag count what the
 * caller asked for, reserved bytes what the pool holds from the OS. */
#ifndef ZB_CPU_MEMPOOL_H
#define ZB_CPU_MEMPOOL_H

#include <pthread.h>

#include "device.h"

typedef struct zb_pool_block zb_pool_block;

typedef struct zb_mempool {
    pthread_mutex_t lock;
    zb_pool_block *cached; /* freed blocks kept for reuse */
    zb_mem_stats stats;
    zb_trace *trace; /* NULL: none; else every alloc and free samples live memory into it */
} zb_mempool;

zb_status zb_mempool_init(zb_mempool *p);
/* Frees every cached block; live blocks are the caller's to free first. */
void zb_mempool_destroy(zb_mempool *p);
zb_status zb_mempool_alloc(zb_mempool *p, size_t n_bytes, zb_mem_tag tag, void **out);
void zb_mempool_free(zb_mempool *p, void *ptr);
/* Returns cached blocks to the OS (reserved drops to live). */
void zb_mempool_trim(zb_mempool *p);
void zb_mempool_stats(zb_mempool *p, zb_mem_stats *out);
void zb_mempool_reset_peak(zb_mempool *p);

#endif
