/* Caching pool with per-tag accounting (see cpu_mempool.h).
 *
 * Each block carries a 64-byte header in front of the caller's pointer, so
 * free needs no lookup table and the caller's data stays 64-byte aligned. */
#include "cpu_mempool.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZB_POOL_HEADER 64
#define ZB_POOL_MAGIC 0x7a62706f6f6c2121ULL /* "zbpool!!" */
#define ZB_POOL_FREED 0x7a62667265656421ULL /* "zbfreed!" */

struct zb_pool_block {
    uint64_t magic;
    size_t n_bytes;     /* what the caller asked for */
    size_t block_bytes; /* rounded size the block can hold */
    zb_mem_tag tag;
    zb_pool_block *next; /* in the cached list */
};

_Static_assert(sizeof(zb_pool_block) <= ZB_POOL_HEADER, "pool header too large");

static size_t zb_pool_round(size_t n) {
    size_t q = n >= 4096 ? 4096 : 64;
    return (n + q - 1) / q * q;
}

static zb_pool_block *zb_block_of(void *ptr) {
    return (zb_pool_block *)((char *)ptr - ZB_POOL_HEADER);
}

zb_status zb_mempool_init(zb_mempool *p) {
    memset(p, 0, sizeof *p);
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        return ZB_FAIL(ZB_ERR_INTERNAL, "pthread_mutex_init failed for the memory pool");
    }
    return ZB_OK;
}

void zb_mempool_trim(zb_mempool *p) {
    pthread_mutex_lock(&p->lock);
    zb_pool_block *b = p->cached;
    while (b) {
        zb_pool_block *next = b->next;
        p->stats.reserved_bytes -= b->block_bytes + ZB_POOL_HEADER;
        free(b);
        b = next;
    }
    p->cached = NULL;
    pthread_mutex_unlock(&p->lock);
}

void zb_mempool_destroy(zb_mempool *p) {
    zb_mempool_trim(p);
    pthread_mutex_destroy(&p->lock);
}

/* Takes a cached block of exactly this rounded size, or NULL. */
static zb_pool_block *zb_pool_take_cached(zb_mempool *p, size_t block_bytes) {
    for (zb_pool_block **link = &p->cached; *link; link = &(*link)->next) {
        if ((*link)->block_bytes == block_bytes) {
            zb_pool_block *b = *link;
            *link = b->next;
            return b;
        }
    }
    return NULL;
}

static void zb_pool_account(zb_mempool *p, zb_mem_tag tag, size_t n_bytes, int sign) {
    zb_mem_stats *s = &p->stats;
    bool in_total = !zb_mem_tag_is_host(tag); /* the totals are device memory (device.h) */
    if (sign > 0) {
        s->live_bytes[tag] += n_bytes;
        if (s->live_bytes[tag] > s->peak_bytes[tag]) s->peak_bytes[tag] = s->live_bytes[tag];
        if (in_total) s->live_total_bytes += n_bytes;
        if (s->live_total_bytes > s->peak_total_bytes) s->peak_total_bytes = s->live_total_bytes;
    } else {
        s->live_bytes[tag] -= n_bytes;
        if (in_total) s->live_total_bytes -= n_bytes;
    }
    zb_trace_mem_sample_add(p->trace, s->live_bytes, ZB_MEM_TAG_COUNT); /* under the pool's lock: in order */
}

zb_status zb_mempool_alloc(zb_mempool *p, size_t n_bytes, zb_mem_tag tag, void **out) {
    *out = NULL;
    if (tag < 0 || tag >= ZB_MEM_TAG_COUNT) {
        return ZB_FAIL(ZB_ERR_INVALID, "memory tag %d out of range", (int)tag);
    }
    if (n_bytes > SIZE_MAX / 2) {
        return ZB_FAIL(ZB_ERR_NOMEM, "allocation of %zu bytes (%s) is too large", n_bytes,
                       zb_mem_tag_name(tag));
    }
    size_t block_bytes = zb_pool_round(n_bytes ? n_bytes : 1);
    pthread_mutex_lock(&p->lock);
    zb_pool_block *b = zb_pool_take_cached(p, block_bytes);
    pthread_mutex_unlock(&p->lock);
    if (!b) {
        b = (zb_pool_block *)aligned_alloc(ZB_POOL_HEADER, block_bytes + ZB_POOL_HEADER);
        if (!b) {
            return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory allocating %zu bytes (%s)", n_bytes,
                           zb_mem_tag_name(tag));
        }
        /* Zero-fill: faults every page in now, not inside a timed region. */
        memset((char *)b + ZB_POOL_HEADER, 0, block_bytes);
        b->block_bytes = block_bytes;
        pthread_mutex_lock(&p->lock);
        p->stats.reserved_bytes += block_bytes + ZB_POOL_HEADER;
        if (p->stats.reserved_bytes > p->stats.peak_reserved_bytes) {
            p->stats.peak_reserved_bytes = p->stats.reserved_bytes;
        }
        pthread_mutex_unlock(&p->lock);
    }
    b->magic = ZB_POOL_MAGIC;
    b->n_bytes = n_bytes;
    b->tag = tag;
    b->next = NULL;
    pthread_mutex_lock(&p->lock);
    zb_pool_account(p, tag, n_bytes, +1);
    pthread_mutex_unlock(&p->lock);
    *out = (char *)b + ZB_POOL_HEADER;
    return ZB_OK;
}

void zb_mempool_free(zb_mempool *p, void *ptr) {
    if (!ptr) return;
    zb_pool_block *b = zb_block_of(ptr);
    if (b->magic != ZB_POOL_MAGIC) {
        /* A double free or a foreign pointer is a bug in the caller. */
        fprintf(stderr, "zerobench: internal error: %s of %p not from the CPU pool\n",
                b->magic == ZB_POOL_FREED ? "double free" : "free", ptr);
        abort();
    }
    b->magic = ZB_POOL_FREED;
    pthread_mutex_lock(&p->lock);
    zb_pool_account(p, b->tag, b->n_bytes, -1);
    b->next = p->cached;
    p->cached = b;
    pthread_mutex_unlock(&p->lock);
}

void zb_mempool_stats(zb_mempool *p, zb_mem_stats *out) {
    pthread_mutex_lock(&p->lock);
    *out = p->stats;
    pthread_mutex_unlock(&p->lock);
}

void zb_mempool_reset_peak(zb_mempool *p) {
    pthread_mutex_lock(&p->lock);
    for (int t = 0; t < ZB_MEM_TAG_COUNT; t++) p->stats.peak_bytes[t] = p->stats.live_bytes[t];
    p->stats.peak_total_bytes = p->stats.live_total_bytes;
    p->stats.peak_reserved_bytes = p->stats.reserved_bytes;
    pthread_mutex_unlock(&p->lock);
}
