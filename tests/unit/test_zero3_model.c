/* The ZeRO-3 workload's model definition: unit layout (contiguous, sizes
 * match the formulas), seeded init (independent of slicing, the stated
 * std per tensor, padding zero), config validation messages, and the
 * synthetic data stream (deterministic, shifted targets, ~90% successor).
 * The forward/backward is checked in test_zero3_unit.c, the reference
 * trainer in test_zero3_reference.c.
 *
 * Shapes: B sequences, T tokens each; L layers, C dim, H heads, KVH kv
 * heads, D head dim, F ffn dim, V vocab. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "model.h"
#include "zb_test.h"

static zb_model_cfg tiny_grad_cfg(void) {
    zb_model_cfg c = {2, 8, 2, 1, 4, 12, 11, 5, 2, 1e-5, 10000.0, 7};
    return c;
}

/* ---- (a) layout, init, counts, validation ------------------------------- */

static void test_layout(const zb_model_cfg *c) {
    double C = c->dim, HD = (double)c->heads * c->head_dim, KD = (double)c->kv_heads * c->head_dim;
    double F = c->ffn_dim, V = c->vocab, L = c->layers, total = 0.0;
    ZB_CHECK(zb_model_n_units(c) == c->layers + 2);
    for (int u = 0; u < zb_model_n_units(c); u++) {
        zb_unit_layout lay;
        zb_model_unit_layout(c, u, &lay);
        size_t off = 0;
        for (int t = 0; t < lay.n_tensors; t++) {
            ZB_CHECK_MSG(lay.tensors[t].offset == off, "unit %d tensor %s not contiguous", u,
                         lay.tensors[t].name);
            off += lay.tensors[t].numel;
        }
        ZB_CHECK(off == lay.numel && off == zb_model_unit_numel(c, u));
        double want = u == 0 ? V * C
                      : u <= c->layers ? 2 * C + HD * C + 2 * KD * C + C * HD + 3 * F * C
                                       : C + V * C;
        ZB_CHECK_MSG((double)lay.numel == want, "unit %d numel %zu, formula %.0f", u, lay.numel,
                     want);
        total += (double)lay.numel;
    }
    ZB_CHECK(total == zb_model_total_params(c));
    ZB_CHECK(zb_model_matmul_params(c) == L * (2 * HD * C + 2 * KD * C + 3 * F * C) + V * C);
}

static void test_init(void) {
    zb_model_cfg c = tiny_grad_cfg();
    for (int u = 0; u < zb_model_n_units(&c); u++) {
        size_t n = zb_model_unit_numel(&c, u);
        float *a = (float *)malloc((n + 7) * sizeof(float));
        float *b = (float *)malloc((n + 7) * sizeof(float));
        zb_model_init_unit(&c, u, a, 0, n + 7); /* 7 padding elements */
        size_t cuts[3] = {1, n / 3, n - 1};
        for (int k = 0; k < 3; k++) {
            zb_model_init_unit(&c, u, b, 0, cuts[k]);
            zb_model_init_unit(&c, u, b + cuts[k], cuts[k], n + 7);
            ZB_CHECK_MSG(!memcmp(a, b, (n + 7) * sizeof(float)),
                         "unit %d: init split at %zu differs", u, cuts[k]);
        }
        for (size_t i = n; i < n + 7; i++) ZB_CHECK(a[i] == 0.0f);
        c.seed++;
        zb_model_init_unit(&c, u, b, 0, n);
        c.seed--;
        ZB_CHECK_MSG(memcmp(a, b, n * sizeof(float)) != 0, "unit %d ignores the seed", u);
        free(a);
        free(b);
    }
    /* statistics on a larger layer: std 0.02, wo/w_down 0.02/sqrt(2L), gains 1 */
    zb_model_cfg big = {4, 256, 8, 2, 32, 512, 1000, 16, 1, 1e-5, 1e4, 3};
    zb_unit_layout lay;
    zb_model_unit_layout(&big, 1, &lay);
    float *w = (float *)malloc(lay.numel * sizeof(float));
    zb_model_init_unit(&big, 1, w, 0, lay.numel);
    for (int t = 0; t < lay.n_tensors; t++) {
        const zb_tensor_layout *tl = &lay.tensors[t];
        double s = 0, s2 = 0;
        for (size_t i = 0; i < tl->numel; i++) {
            s += w[tl->offset + i];
            s2 += (double)w[tl->offset + i] * w[tl->offset + i];
        }
        double mean = s / (double)tl->numel, sd = sqrt(s2 / (double)tl->numel - mean * mean);
        if (!tl->is_matrix) { /* norm gains: all 1, no decay */
            ZB_CHECK(mean == 1.0 && sd == 0.0 && !zb_model_decays(&lay, tl->offset));
            continue;
        }
        double want = (t == ZB_LAYER_WO || t == ZB_LAYER_W_DOWN) ? 0.02 / sqrt(8.0) : 0.02;
        ZB_CHECK_MSG(fabs(sd - want) <= 0.03 * want && fabs(mean) < 0.05 * want,
                     "%s: mean %g std %g, want std %g", tl->name, mean, sd, want);
        ZB_CHECK(zb_model_decays(&lay, tl->offset + tl->numel - 1));
    }
    free(w);
}

/* A range large enough to be split across threads (model_init.c) gives the
 * values that ranges too small to be split give, bit for bit, wherever the
 * cuts fall. */
static void test_init_threaded(void) {
    zb_model_cfg c = {1, 1024, 8, 8, 128, 2048, 1000, 16, 1, 1e-5, 1e4, 5};
    size_t n = zb_model_unit_numel(&c, 1), piece = ((size_t)1 << 19) + 13; /* ~10.5M; serial pieces */
    float *a = (float *)malloc(n * sizeof(float)), *b = (float *)malloc(n * sizeof(float));
    zb_model_init_unit(&c, 1, a, 0, n);
    for (size_t i = 0; i < n; i += piece) zb_model_init_unit(&c, 1, b + i, i, i + piece < n ? i + piece : n);
    ZB_CHECK_MSG(!memcmp(a, b, n * sizeof(float)), "threaded init of %zu elements differs", n);
    zb_model_init_unit(&c, 1, b, 1000, n); /* an unaligned start, threaded too */
    ZB_CHECK(!memcmp(a + 1000, b, (n - 1000) * sizeof(float)));
    free(a);
    free(b);
}

static void expect_invalid(zb_model_cfg c, const char *field) {
    zb_status st = zb_model_cfg_validate(&c);
    ZB_CHECK_MSG(st == ZB_ERR_INVALID && strstr(zb_error_message(), field),
                 "validate: want ZB_ERR_INVALID naming '%s', got %d '%s'", field, (int)st,
                 zb_error_message());
}

static void test_validate(void) {
    zb_model_cfg c = tiny_grad_cfg();
    ZB_CHECK_OK(zb_model_cfg_validate(&c));
    zb_model_cfg x = c;
    x.heads = 3, x.kv_heads = 2;
    expect_invalid(x, "kv_heads");
    x = c, x.head_dim = 5;
    expect_invalid(x, "head_dim");
    x = c, x.batch = 0;
    expect_invalid(x, "batch");
    x = c, x.seq = 0;
    expect_invalid(x, "seq");
    x = c, x.layers = -1;
    expect_invalid(x, "layers");
    x = c, x.norm_eps = 0;
    expect_invalid(x, "norm_eps");
    x = c, x.seq = 1 << 20, x.batch = 4096;
    expect_invalid(x, "batch * seq");
}

/* ---- (d) data ------------------------------------------------------------ */

static void test_data(void) {
    enum { T = 64, V = 97 };
    int32_t a[T], at[T], b[T], bt[T];
    zb_data_sample(5, 17, T, V, a, at);
    zb_data_sample(5, 17, T, V, b, bt);
    ZB_CHECK(!memcmp(a, b, sizeof a) && !memcmp(at, bt, sizeof at));
    zb_data_sample(5, 18, T, V, b, bt);
    ZB_CHECK(memcmp(a, b, sizeof a) != 0);
    zb_data_sample(6, 17, T, V, b, bt);
    ZB_CHECK(memcmp(a, b, sizeof a) != 0);
    int follow = 0, total = 0, in_range = 1, shifted = 1;
    for (uint64_t s = 0; s < 200; s++) {
        zb_data_sample(9, s, T, V, a, at);
        for (int t = 0; t < T; t++) {
            in_range &= a[t] >= 0 && a[t] < V && at[t] >= 0 && at[t] < V;
            if (t + 1 < T) shifted &= at[t] == a[t + 1];
            follow += at[t] == zb_data_successor(9, a[t], V);
            total++;
        }
    }
    ZB_CHECK(in_range && shifted);
    double frac = (double)follow / total; /* 0.9 + 0.1/V expected */
    ZB_CHECK_MSG(frac > 0.88 && frac < 0.93, "successor followed %.3f of the time", frac);
    int32_t tok[3 * T], tgt[3 * T];
    zb_data_batch(9, zb_data_sample_index(2, 3, 1, 3, 0), 3, T, V, tok, tgt);
    zb_data_sample(9, 2 * 9 + 3 + 1, T, V, a, at);
    ZB_CHECK(!memcmp(tok + T, a, sizeof a) && !memcmp(tgt + T, at, sizeof at));
}

int main(void) {
    zb_model_cfg tiny = tiny_grad_cfg();
    test_layout(&tiny);
    zb_model_profile prof;
    const char *names[2] = {"tiny", "llama3_8b"};
    for (int i = 0; i < 2; i++) {
        ZB_CHECK_OK(zb_model_profile_load(names[i], &prof));
        zb_model_cfg c;
        zb_model_cfg_from_profile(&prof, 1, &c);
        ZB_CHECK_OK(zb_model_cfg_validate(&c));
        test_layout(&c);
    }
    test_init();
    test_init_threaded();
    test_validate();
    test_data();
    return zb_test_finish("test_zero3_model");
}
