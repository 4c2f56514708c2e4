/* Per-tag live/peak accounting keyed by pointer (see mem_account.h). */
#include "mem_account.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t zb_ptr_hash(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33; /* murmur3's 64-bit finalizer */
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return (size_t)x;
}

zb_status zb_mem_account_init(zb_mem_account *a) {
    memset(a, 0, sizeof *a);
    if (pthread_mutex_init(&a->lock, NULL) != 0) {
        return ZB_FAIL(ZB_ERR_INTERNAL, "pthread_mutex_init failed for memory accounting");
    }
    return ZB_OK;
}

void zb_mem_account_destroy(zb_mem_account *a) {
    free(a->slots);
    a->slots = NULL;
    a->capacity = a->count = 0;
    pthread_mutex_destroy(&a->lock);
}

/* Index of ptr's slot, or of the empty slot where it would go. */
static size_t zb_find_slot(const zb_mem_entry *slots, size_t capacity, const void *ptr) {
    size_t mask = capacity - 1;
    size_t i = zb_ptr_hash(ptr) & mask;
    while (slots[i].ptr && slots[i].ptr != ptr) i = (i + 1) & mask;
    return i;
}

static zb_status zb_grow(zb_mem_account *a) {
    size_t cap = a->capacity ? a->capacity * 2 : 64;
    zb_mem_entry *slots = (zb_mem_entry *)calloc(cap, sizeof *slots);
    if (!slots) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory growing the allocation table");
    for (size_t i = 0; i < a->capacity; i++) {
        if (a->slots[i].ptr) slots[zb_find_slot(slots, cap, a->slots[i].ptr)] = a->slots[i];
    }
    free(a->slots);
    a->slots = slots;
    a->capacity = cap;
    return ZB_OK;
}

zb_status zb_mem_account_add(zb_mem_account *a, const void *ptr, size_t n_bytes, zb_mem_tag tag) {
    if (!ptr) return ZB_FAIL(ZB_ERR_INVALID, "accounting asked to track a NULL allocation");
    if ((int)tag < 0 || tag >= ZB_MEM_TAG_COUNT) {
        return ZB_FAIL(ZB_ERR_INVALID, "memory tag %d out of range", (int)tag);
    }
    zb_status st = ZB_OK;
    pthread_mutex_lock(&a->lock);
    if ((a->count + 1) * 2 > a->capacity) st = zb_grow(a); /* load <= 1/2 */
    if (st == ZB_OK) {
        size_t i = zb_find_slot(a->slots, a->capacity, ptr);
        if (a->slots[i].ptr) {
            st = ZB_FAIL(ZB_ERR_INVALID, "allocation %p is already live (%s)", ptr,
                         zb_mem_tag_name(a->slots[i].tag));
        } else {
            a->slots[i].ptr = ptr;
            a->slots[i].n_bytes = n_bytes;
            a->slots[i].tag = tag;
            a->count++;
            zb_mem_stats *s = &a->stats;
            s->live_bytes[tag] += n_bytes;
            if (s->live_bytes[tag] > s->peak_bytes[tag]) s->peak_bytes[tag] = s->live_bytes[tag];
            if (!zb_mem_tag_is_host(tag)) { /* the totals are device memory (device.h) */
                s->live_total_bytes += n_bytes;
                if (s->live_total_bytes > s->peak_total_bytes) s->peak_total_bytes = s->live_total_bytes;
            }
            zb_trace_mem_sample_add(a->trace, s->live_bytes, ZB_MEM_TAG_COUNT); /* under the lock: in order */
        }
    }
    pthread_mutex_unlock(&a->lock);
    return st;
}

zb_status zb_mem_account_remove(zb_mem_account *a, const void *ptr, size_t *n_bytes,
                                zb_mem_tag *tag) {
    pthread_mutex_lock(&a->lock);
    size_t i = a->capacity ? zb_find_slot(a->slots, a->capacity, ptr) : 0;
    if (!ptr || !a->capacity || a->slots[i].ptr != ptr) {
        pthread_mutex_unlock(&a->lock);
        return ZB_FAIL(ZB_ERR_INVALID, "free of %p, which is not a live allocation of this "
                       "device (a double free or a foreign pointer)", ptr);
    }
    zb_mem_entry e = a->slots[i];
    /* Backward-shift deletion keeps every probe chain unbroken. */
    size_t mask = a->capacity - 1;
    size_t hole = i;
    for (size_t j = (i + 1) & mask; a->slots[j].ptr; j = (j + 1) & mask) {
        size_t home = zb_ptr_hash(a->slots[j].ptr) & mask;
        /* Move j into the hole unless its home lies cyclically in (hole, j]. */
        int home_after_hole = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!home_after_hole) {
            a->slots[hole] = a->slots[j];
            hole = j;
        }
    }
    a->slots[hole].ptr = NULL;
    a->count--;
    a->stats.live_bytes[e.tag] -= e.n_bytes;
    if (!zb_mem_tag_is_host(e.tag)) a->stats.live_total_bytes -= e.n_bytes;
    zb_trace_mem_sample_add(a->trace, a->stats.live_bytes, ZB_MEM_TAG_COUNT);
    pthread_mutex_unlock(&a->lock);
    if (n_bytes) *n_bytes = e.n_bytes;
    if (tag) *tag = e.tag;
    return ZB_OK;
}

void zb_mem_account_stats(zb_mem_account *a, zb_mem_stats *out) {
    pthread_mutex_lock(&a->lock);
    *out = a->stats;
    pthread_mutex_unlock(&a->lock);
}

void zb_mem_account_reset_peak(zb_mem_account *a) {
    pthread_mutex_lock(&a->lock);
    for (int t = 0; t < ZB_MEM_TAG_COUNT; t++) a->stats.peak_bytes[t] = a->stats.live_bytes[t];
    a->stats.peak_total_bytes = a->stats.live_total_bytes;
    pthread_mutex_unlock(&a->lock);
}

size_t zb_mem_account_count(zb_mem_account *a) {
    pthread_mutex_lock(&a->lock);
    size_t n = a->count;
    pthread_mutex_unlock(&a->lock);
    return n;
}

void zb_mem_account_each(zb_mem_account *a, void (*fn)(void *arg, const zb_mem_entry *e),
                         void *arg) {
    pthread_mutex_lock(&a->lock);
    for (size_t i = 0; i < a->capacity; i++) {
        if (a->slots[i].ptr) fn(arg, &a->slots[i]);
    }
    pthread_mutex_unlock(&a->lock);
}

void zb_mem_trace_names(zb_trace *t) {
    if (!t) return;
    for (int k = 0; k < ZB_MEM_TAG_COUNT; k++) {
        t->mem_tag_names[k] = zb_mem_tag_name((zb_mem_tag)k);
        if (zb_mem_tag_is_host((zb_mem_tag)k)) t->mem_host_mask |= 1u << k;
    }
}

const char *zb_mem_tag_name(zb_mem_tag tag) {
    static const char *const names[ZB_MEM_TAG_COUNT] = {
        "param_shard", "grad_shard",  "optim_state", "gathered_param", "gathered_grad",
        "activation",  "workspace",   "comm_buffer", "bench_buffer",   "host_staging",
    };
    return (tag >= 0 && tag < ZB_MEM_TAG_COUNT) ? names[tag] : "unknown";
}
