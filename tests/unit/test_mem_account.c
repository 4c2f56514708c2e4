/* Pointer-keyed per-tag accounting (harness/device/mem_account.h), used by the CUDA
 * device: it must account exactly as the CPU pool does. A random sequence of
 * allocations, frees and peak resets runs against both the CPU pool
 * (cpu_mempool.h) and the accounting (keyed by the pool's pointers); live
 * and peak bytes, per tag and in total, must agree after every step. Also:
 * bad input (double and foreign frees, duplicates, bad tags), many
 * entries removed in random order (the hash table's deletion), and host
 * tags (pinned staging) kept per tag but out of the device totals, in both. */
#include <stdlib.h>
#include <string.h>

#include "cpu_mempool.h"
#include "mem_account.h"
#include "zb_test.h"

static unsigned next_rand(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static int same_accounting(const zb_mem_stats *x, const zb_mem_stats *y) {
    for (int t = 0; t < ZB_MEM_TAG_COUNT; t++) {
        if (x->live_bytes[t] != y->live_bytes[t] || x->peak_bytes[t] != y->peak_bytes[t]) return 0;
    }
    return x->live_total_bytes == y->live_total_bytes && x->peak_total_bytes == y->peak_total_bytes;
}

static void test_matches_cpu_pool(void) {
    zb_mempool pool;
    zb_mem_account acct;
    ZB_CHECK_OK(zb_mempool_init(&pool));
    ZB_CHECK_OK(zb_mem_account_init(&acct));
    enum { SLOTS = 48 };
    void *live[SLOTS];
    memset(live, 0, sizeof live);
    unsigned seed = 12345;
    int mismatches = 0;
    for (int step = 0; step < 3000; step++) {
        unsigned r = next_rand(&seed);
        int slot = (int)(r % SLOTS);
        if (step % 500 == 499) {
            zb_mempool_reset_peak(&pool);
            zb_mem_account_reset_peak(&acct);
        } else if (live[slot]) {
            size_t n1 = 0;
            zb_mem_tag t1 = ZB_MEM_TAG_COUNT;
            ZB_CHECK_OK(zb_mem_account_remove(&acct, live[slot], &n1, &t1));
            ZB_CHECK(t1 < ZB_MEM_TAG_COUNT);
            zb_mempool_free(&pool, live[slot]);
            live[slot] = NULL;
        } else {
            size_t n = (size_t)(next_rand(&seed) % 9000); /* 0 included */
            zb_mem_tag tag = (zb_mem_tag)(next_rand(&seed) % ZB_MEM_TAG_COUNT);
            ZB_CHECK_OK(zb_mempool_alloc(&pool, n, tag, &live[slot]));
            ZB_CHECK_OK(zb_mem_account_add(&acct, live[slot], n, tag));
        }
        zb_mem_stats a, b;
        zb_mempool_stats(&pool, &a);
        zb_mem_account_stats(&acct, &b);
        mismatches += !same_accounting(&a, &b);
        ZB_CHECK(b.reserved_bytes == 0 && b.peak_reserved_bytes == 0);
    }
    ZB_CHECK_MSG(mismatches == 0, "%d steps where the accounting differed from the CPU pool",
                 mismatches);
    size_t n_live = 0;
    for (int i = 0; i < SLOTS; i++) {
        if (live[i]) {
            n_live++;
            ZB_CHECK_OK(zb_mem_account_remove(&acct, live[i], NULL, NULL));
            zb_mempool_free(&pool, live[i]);
        }
    }
    ZB_CHECK(zb_mem_account_count(&acct) == 0 && n_live > 0);
    zb_mem_stats s;
    zb_mem_account_stats(&acct, &s);
    ZB_CHECK(s.live_total_bytes == 0 && s.peak_total_bytes > 0);
    zb_mem_account_destroy(&acct);
    zb_mempool_destroy(&pool);
}

static void test_bad_input(void) {
    zb_mem_account a;
    ZB_CHECK_OK(zb_mem_account_init(&a));
    int x, y;
    ZB_CHECK(zb_mem_account_remove(&a, &x, NULL, NULL) == ZB_ERR_INVALID); /* empty table */
    ZB_CHECK_OK(zb_mem_account_add(&a, &x, 100, ZB_MEM_ACTIVATION));
    ZB_CHECK(zb_mem_account_add(&a, &x, 5, ZB_MEM_WORKSPACE) == ZB_ERR_INVALID); /* already live */
    ZB_CHECK(zb_mem_account_add(&a, NULL, 5, ZB_MEM_WORKSPACE) == ZB_ERR_INVALID);
    ZB_CHECK(zb_mem_account_add(&a, &y, 5, ZB_MEM_TAG_COUNT) == ZB_ERR_INVALID);
    ZB_CHECK(zb_mem_account_add(&a, &y, 5, (zb_mem_tag)-1) == ZB_ERR_INVALID);
    ZB_CHECK(zb_mem_account_remove(&a, &y, NULL, NULL) == ZB_ERR_INVALID); /* foreign */
    ZB_CHECK(strstr(zb_error_message(), "double free or a foreign pointer") != NULL);
    size_t n = 0;
    zb_mem_tag t = ZB_MEM_PARAM_SHARD;
    ZB_CHECK_OK(zb_mem_account_remove(&a, &x, &n, &t));
    ZB_CHECK(n == 100 && t == ZB_MEM_ACTIVATION);
    ZB_CHECK(zb_mem_account_remove(&a, &x, NULL, NULL) == ZB_ERR_INVALID); /* double free */
    zb_mem_stats s;
    zb_mem_account_stats(&a, &s);
    ZB_CHECK(s.live_bytes[ZB_MEM_ACTIVATION] == 0 && s.peak_bytes[ZB_MEM_ACTIVATION] == 100);
    ZB_CHECK(s.live_bytes[ZB_MEM_WORKSPACE] == 0 && s.peak_bytes[ZB_MEM_WORKSPACE] == 0);
    zb_mem_account_reset_peak(&a);
    zb_mem_account_stats(&a, &s);
    ZB_CHECK(s.peak_bytes[ZB_MEM_ACTIVATION] == 0 && s.peak_total_bytes == 0);
    zb_mem_account_destroy(&a);
}

static void add_size(void *arg, const zb_mem_entry *e) { *(size_t *)arg += e->n_bytes; }

/* Many entries at addresses that collide in the low bits, removed in a
 * random order: every removal must still find its entry. */
static void test_many_entries(void) {
    zb_mem_account a;
    ZB_CHECK_OK(zb_mem_account_init(&a));
    enum { N = 20000 };
    char *base = (char *)malloc((size_t)N * 256);
    int *order = (int *)malloc(N * sizeof *order);
    size_t expect = 0, expect_device = 0;
    for (int i = 0; i < N; i++) {
        order[i] = i;
        zb_mem_tag tag = (zb_mem_tag)(i % ZB_MEM_TAG_COUNT);
        ZB_CHECK_OK(zb_mem_account_add(&a, base + (size_t)i * 256, (size_t)i + 1, tag));
        expect += (size_t)i + 1;
        if (!zb_mem_tag_is_host(tag)) expect_device += (size_t)i + 1;
    }
    size_t sum = 0;
    zb_mem_account_each(&a, add_size, &sum);
    ZB_CHECK(sum == expect && zb_mem_account_count(&a) == N);
    unsigned seed = 99;
    for (int i = N - 1; i > 0; i--) {
        int j = (int)(next_rand(&seed) % (unsigned)(i + 1));
        int tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
    int wrong = 0;
    for (int i = 0; i < N; i++) {
        size_t n = 0;
        zb_mem_tag t = ZB_MEM_TAG_COUNT;
        zb_status st = zb_mem_account_remove(&a, base + (size_t)order[i] * 256, &n, &t);
        wrong += st != ZB_OK || n != (size_t)order[i] + 1 ||
                 t != (zb_mem_tag)(order[i] % ZB_MEM_TAG_COUNT);
    }
    ZB_CHECK_MSG(wrong == 0, "%d removals lost or mismatched their entry", wrong);
    zb_mem_stats s;
    zb_mem_account_stats(&a, &s);
    ZB_CHECK(zb_mem_account_count(&a) == 0 && s.live_total_bytes == 0 &&
             s.peak_total_bytes == expect_device && expect_device < expect);
    free(order);
    free(base);
    zb_mem_account_destroy(&a);
}

/* One sequence on both the pool and the accounting: device bytes D, host
 * staging bytes H. The staging has its per-tag live and peak bytes; the
 * totals (device memory, device.h) never see it, in either. */
static void check_host_tag(const char *who, const zb_mem_stats *s, size_t live_h, size_t peak_h, size_t live_d,
                           size_t peak_d) {
    ZB_CHECK_MSG(s->live_bytes[ZB_MEM_HOST_STAGING] == live_h && s->peak_bytes[ZB_MEM_HOST_STAGING] == peak_h &&
                     s->live_total_bytes == live_d && s->peak_total_bytes == peak_d,
                 "%s: host staging live %zu peak %zu (expected %zu, %zu); totals live %zu peak %zu (expected %zu, "
                 "%zu: device memory only)", who, s->live_bytes[ZB_MEM_HOST_STAGING],
                 s->peak_bytes[ZB_MEM_HOST_STAGING], live_h, peak_h, s->live_total_bytes, s->peak_total_bytes,
                 live_d, peak_d);
}

static void test_host_tag_out_of_totals(void) {
    ZB_CHECK(zb_mem_tag_is_host(ZB_MEM_HOST_STAGING));
    for (int t = 0; t < ZB_MEM_TAG_COUNT; t++) {
        if (t != ZB_MEM_HOST_STAGING) ZB_CHECK(!zb_mem_tag_is_host((zb_mem_tag)t));
    }
    ZB_CHECK(strcmp(zb_mem_tag_name(ZB_MEM_HOST_STAGING), "host_staging") == 0);
    const size_t D = 3000, H = 70000;
    zb_mempool pool;
    zb_mem_account acct;
    ZB_CHECK_OK(zb_mempool_init(&pool));
    ZB_CHECK_OK(zb_mem_account_init(&acct));
    void *d = NULL, *h = NULL;
    ZB_CHECK_OK(zb_mempool_alloc(&pool, D, ZB_MEM_ACTIVATION, &d));
    ZB_CHECK_OK(zb_mempool_alloc(&pool, H, ZB_MEM_HOST_STAGING, &h));
    ZB_CHECK_OK(zb_mem_account_add(&acct, d, D, ZB_MEM_ACTIVATION));
    ZB_CHECK_OK(zb_mem_account_add(&acct, h, H, ZB_MEM_HOST_STAGING));
    zb_mem_stats a, b;
    zb_mempool_stats(&pool, &a);
    zb_mem_account_stats(&acct, &b);
    check_host_tag("pool", &a, H, H, D, D);
    check_host_tag("accounting", &b, H, H, D, D);
    /* Freed and reset: the staging's peak goes to 0, the device's stays D. */
    zb_mempool_free(&pool, h);
    ZB_CHECK_OK(zb_mem_account_remove(&acct, h, NULL, NULL));
    zb_mempool_stats(&pool, &a);
    zb_mem_account_stats(&acct, &b);
    check_host_tag("pool after free", &a, 0, H, D, D);
    check_host_tag("accounting after free", &b, 0, H, D, D);
    zb_mempool_reset_peak(&pool);
    zb_mem_account_reset_peak(&acct);
    zb_mempool_stats(&pool, &a);
    zb_mem_account_stats(&acct, &b);
    check_host_tag("pool after reset", &a, 0, 0, D, D);
    check_host_tag("accounting after reset", &b, 0, 0, D, D);
    zb_mempool_free(&pool, d);
    ZB_CHECK_OK(zb_mem_account_remove(&acct, d, NULL, NULL));
    zb_mem_account_destroy(&acct);
    zb_mempool_destroy(&pool);
}

int main(void) {
    test_matches_cpu_pool();
    test_bad_input();
    test_many_entries();
    test_host_tag_out_of_totals();
    return zb_test_finish("test_mem_account");
}
