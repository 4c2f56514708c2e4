/* The collective records (bench/coll.h) and their one value generator:
 * every collective benchmark has a record under its own name and comm kind;
 * buffer sizes, sweep counts and in-place layouts follow comm.h's
 * conventions; def->expected equals the result worked out here from every
 * rank's zb_coll_value input (all-gather: concatenation; reduce-scatter and
 * all-reduce: sums), for several rank counts; zb_coll_count_wrong finds a
 * single changed element; the inputs are small integers, so bf16 holds them
 * and their sums exactly. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "coll.h"
#include "dtype_access.h"
#include "zb_test.h"

#define SEED 0x5eedULL

static void test_registry(void) {
    static const zb_coll kinds[] = {ZB_COLL_ALLGATHER, ZB_COLL_REDUCESCATTER, ZB_COLL_ALLREDUCE};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const zb_coll_def *def = zb_coll_find(kinds[i]);
        ZB_CHECK_MSG(def != NULL, "no record for %s", zb_coll_name(kinds[i]));
        if (!def) continue;
        ZB_CHECK(def->kind == kinds[i] && !strcmp(def->name, zb_coll_name(kinds[i])));
        ZB_CHECK(def->busbw_factor && def->sent_bytes && def->expected && def->issue && def->direct && def->redop);
    }
    ZB_CHECK(zb_coll_find(ZB_COLL_BARRIER) == NULL);
    /* Every collective benchmark runs the record found for its kind, under its name. */
    for (int c = 0; c < ZB_CMD_COUNT; c++) {
        const zb_bench *b = zb_bench_find((zb_command)c);
        ZB_CHECK(b != NULL && !strcmp(b->name, zb_command_name((zb_command)c)));
        if (b && b->coll) {
            ZB_CHECK_MSG(!strcmp(b->name, b->coll->name), "bench %s runs record %s", b->name, b->coll->name);
            ZB_CHECK_MSG(zb_coll_find(b->coll->kind) == b->coll, "bench %s: its kind finds another record", b->name);
        }
    }
    ZB_CHECK(zb_bench_find(ZB_CMD_STEP)->coll == NULL && zb_bench_find(ZB_CMD_GEMM)->coll == NULL);
}

static void test_shapes(void) {
    const zb_coll_def *ag = zb_coll_find(ZB_COLL_ALLGATHER), *rs = zb_coll_find(ZB_COLL_REDUCESCATTER),
                      *ar = zb_coll_find(ZB_COLL_ALLREDUCE);
    ZB_CHECK(zb_coll_send_elems(ag, 10, 4) == 10 && zb_coll_recv_elems(ag, 10, 4) == 40);
    ZB_CHECK(zb_coll_send_elems(rs, 10, 4) == 40 && zb_coll_recv_elems(rs, 10, 4) == 10);
    ZB_CHECK(zb_coll_send_elems(ar, 10, 4) == 10 && zb_coll_recv_elems(ar, 10, 4) == 10);
    ZB_CHECK(zb_coll_size_bytes(ag, 10, 4, 4) == 160 && zb_coll_size_bytes(ar, 10, 4, 4) == 40);
    ZB_CHECK(zb_coll_count_for(rs, 4096, 2, 4) == 512 && zb_coll_count_for(ar, 4096, 2, 4) == 2048);
    ZB_CHECK(zb_coll_count_for(ag, 1000, 4, 3) == 83); /* rounds down */

    char a[400], b[400];
    zb_coll_args x = {NULL, NULL, 10, ZB_DTYPE_F32, 2, 4, false, SEED};
    zb_coll_place(ag, &x, a, b);
    ZB_CHECK(x.send == a && x.recv == b);
    x.in_place = true;
    zb_coll_place(ag, &x, a, b);
    ZB_CHECK(x.recv == b && x.send == b + 2 * 10 * 4); /* send = recv + rank*count */
    zb_coll_place(rs, &x, a, b);
    ZB_CHECK(x.send == a && x.recv == a + 2 * 10 * 4); /* recv = send + rank*count */
    zb_coll_place(ar, &x, a, b);
    ZB_CHECK(x.send == b && x.recv == b);
}

/* --rotate-bytes' parts: page-aligned, as large as the call's larger
 * buffer, each call's send and receive inside the buffers, consecutive
 * calls on disjoint parts, the cycle n long; one part when the buffers
 * hold no second. Pointers are offsets from a fake base (nothing is
 * dereferenced). */
static void test_slots(void) {
    const zb_coll kinds[] = {ZB_COLL_ALLGATHER, ZB_COLL_REDUCESCATTER, ZB_COLL_ALLREDUCE};
    const size_t counts[] = {1, 1000, (size_t)1 << 18};
    char *const a = (char *)(uintptr_t)0x100000000ULL, *const b = (char *)(uintptr_t)0x900000000ULL;
    for (int k = 0; k < 3; k++) {
        const zb_coll_def *def = zb_coll_find(kinds[k]);
        for (int n = 2; n <= 4; n++) {
            for (int c = 0; c < 3; c++) {
                for (int ip = 0; ip < 2; ip++) {
                    zb_coll_args x = {NULL, NULL, counts[c], ZB_DTYPE_F32, n - 1, n, ip == 1, SEED};
                    size_t send = zb_coll_send_elems(def, x.count, n) * 4, recv = zb_coll_recv_elems(def, x.count, n) * 4;
                    size_t big = send > recv ? send : recv;
                    zb_coll_place(def, &x, a, b);
                    zb_coll_slots one = zb_coll_slots_for(def, &x, big);
                    ZB_CHECK(one.n == 1 && zb_coll_slot_args(&x, &one, 5).send == x.send);
                    size_t buffer = (size_t)64 << 20;
                    zb_coll_slots sl = zb_coll_slots_for(def, &x, buffer);
                    ZB_CHECK_MSG(sl.stride % 4096 == 0 && sl.stride >= big && sl.stride < big + 4096 &&
                                     sl.n == (int64_t)(buffer / sl.stride),
                                 "%s n %d count %zu: %lld parts of %zu", def->name, n, counts[c], (long long)sl.n,
                                 sl.stride);
                    for (int64_t i = 0; i < 2 * sl.n + 1; i += sl.n > 64 ? sl.n / 7 + 1 : 1) {
                        zb_coll_args p = zb_coll_slot_args(&x, &sl, i), q = zb_coll_slot_args(&x, &sl, i + 1);
                        zb_coll_args r = zb_coll_slot_args(&x, &sl, i + sl.n);
                        char *base = ip ? (char *)x.send < (char *)x.recv ? (char *)x.send : (char *)x.recv : a;
                        bool inside = (char *)p.send >= (ip ? base : a) && (char *)p.send + send <= (ip ? base : a) + buffer &&
                                      (char *)p.recv >= (ip ? base : b) && (char *)p.recv + recv <= (ip ? base : b) + buffer;
                        bool apart = (char *)q.send - (char *)p.send == (ptrdiff_t)sl.stride ||
                                     (i + 1) % sl.n == 0;
                        ZB_CHECK_MSG(inside && apart && r.send == p.send && r.recv == p.recv &&
                                         (char *)p.recv - (char *)p.send == (char *)x.recv - (char *)x.send,
                                     "%s n %d count %zu %s: call %lld", def->name, n, counts[c],
                                     ip ? "in place" : "out of place", (long long)i);
                    }
                }
            }
        }
    }
}

/* Every rank's input, then each rank's result by hand, against the record. */
static void test_expected(zb_coll kind, int n, size_t count, zb_dtype t) {
    const zb_coll_def *def = zb_coll_find(kind);
    size_t send_n = zb_coll_send_elems(def, count, n), recv_n = zb_coll_recv_elems(def, count, n);
    size_t es = zb_dtype_size(t);
    float *in = (float *)calloc((size_t)n * send_n, sizeof(float));
    char *send = (char *)calloc(send_n, es), *recv = (char *)calloc(recv_n, es);
    for (int r = 0; r < n; r++) {
        zb_coll_args a = {send, recv, count, t, r, n, false, SEED};
        zb_coll_fill_input(def, &a);
        for (size_t j = 0; j < send_n; j++) {
            in[(size_t)r * send_n + j] = zb_dtype_load(send, j, t);
            float v = zb_coll_value(SEED, r, j);
            ZB_CHECK_MSG(in[(size_t)r * send_n + j] == v && v >= -2 && v <= 2 && v == (float)(int)v,
                         "%s rank %d input %zu: %g", def->name, r, j, (double)v);
        }
    }
    long wrong = 0;
    for (int r = 0; r < n; r++) {
        zb_coll_args a = {send, recv, count, t, r, n, false, SEED};
        for (size_t j = 0; j < recv_n; j++) {
            float want = 0;
            if (kind == ZB_COLL_ALLGATHER) {
                want = in[(j / count) * send_n + j % count];
            } else {
                size_t at = kind == ZB_COLL_REDUCESCATTER ? (size_t)r * count + j : j;
                for (int q = 0; q < n; q++) want += in[(size_t)q * send_n + at];
            }
            wrong += def->expected(&a, j) != want;
            zb_dtype_store(recv, j, t, want);
        }
        ZB_CHECK(zb_coll_count_wrong(def, &a) == 0);
        if (recv_n > 0) {
            zb_dtype_store(recv, recv_n / 2, t, zb_dtype_load(recv, recv_n / 2, t) + 1.0f);
            ZB_CHECK_MSG(zb_coll_count_wrong(def, &a) == 1, "%s: one changed element not found", def->name);
        }
    }
    ZB_CHECK_MSG(wrong == 0, "%s n %d count %zu %s: %ld expected values differ", def->name, n, count,
                 zb_dtype_name(t), wrong);
    free(in);
    free(send);
    free(recv);
}

int main(void) {
    test_registry();
    test_shapes();
    test_slots();
    static const zb_coll kinds[] = {ZB_COLL_ALLGATHER, ZB_COLL_REDUCESCATTER, ZB_COLL_ALLREDUCE};
    for (size_t k = 0; k < 3; k++) {
        for (int n = 1; n <= 5; n++) {
            test_expected(kinds[k], n, 7, ZB_DTYPE_F32);
            test_expected(kinds[k], n, 33, ZB_DTYPE_BF16);
        }
        test_expected(kinds[k], 128, 3, ZB_DTYPE_BF16); /* sums of 128 inputs: still exact in bf16 */
    }
    /* Different seeds, ranks and elements give different values. */
    int differ = 0;
    for (size_t j = 0; j < 64; j++) differ += zb_coll_value(SEED, 0, j) != zb_coll_value(SEED + 1, 0, j);
    ZB_CHECK(differ > 16);
    return zb_test_finish("test_coll_defs");
}
