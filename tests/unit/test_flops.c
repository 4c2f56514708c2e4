/* FLOPs per token (harness/metrics/flops.h) for Llama 3 8B and a decoupled-head-dim
 * shape, checked term by term against products written out here, and MFU. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "flops.h"
#include "zb_test.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(1.0, fabs(b)); }

static void test_llama3_8b(void) {
    /* meta-llama/Meta-Llama-3-8B config.json, at the 8192 pre-training length. */
    zb_flops_shape s = {32, 4096, 32, 8, 128, 14336, 128256, 8192};
    zb_flops_breakdown b;
    ZB_CHECK_OK(zb_flops_per_token(&s, ZB_FLOPS_FULL, ZB_RECOMPUTE_NONE, &b));

    /* Linear weights of one layer, matrix by matrix. */
    double wq = 4096.0 * (32 * 128), wk = 4096.0 * (8 * 128), wv = wk, wo = (32 * 128) * 4096.0;
    double w1 = 4096.0 * 14336, w3 = w1, w2 = 14336.0 * 4096;
    double layer = wq + wk + wv + wo + w1 + w3 + w2;
    ZB_CHECK_MSG(layer == 218103808.0, "per-layer linear weights %.0f", layer);
    ZB_CHECK(b.n_matmul_layers == 32.0 * layer);
    ZB_CHECK(b.n_matmul_head == 4096.0 * 128256.0);
    ZB_CHECK(b.n_matmul == 32.0 * layer + 4096.0 * 128256.0);
    /* Adding back what N_matmul leaves out (the embedding table, two norms
     * per layer and the final norm) gives the model's published parameter
     * count, 8,030,261,248: nothing was dropped or counted twice. */
    double total = b.n_matmul + 128256.0 * 4096 + 32.0 * 2 * 4096 + 4096;
    ZB_CHECK_MSG(total == 8030261248.0, "Llama 3 8B parameters %.0f", total);

    double attn_full = 12.0 * 32 * (32 * 128) * 8192;
    ZB_CHECK(b.matmul_flops == 6.0 * b.n_matmul);
    ZB_CHECK(b.attn_flops == attn_full);
    ZB_CHECK(b.model_flops == 6.0 * b.n_matmul + attn_full);
    ZB_CHECK(b.hardware_flops == b.model_flops && b.recompute_flops == 0.0);
    ZB_CHECK(zb_model_flops_per_token(&s, ZB_FLOPS_FULL) == b.model_flops);
    printf("Llama 3 8B, s = 8192: N_matmul = %.0f (%.4g), 6N = %.4g, attention (full) = %.4g, "
           "model FLOPs/token = %.6g\n",
           b.n_matmul, b.n_matmul, b.matmul_flops, b.attn_flops, b.model_flops);
    /* About 6 * 7.5e9 + 1.29e10 = 5.79e10. */
    ZB_CHECK(b.model_flops > 5.7e10 && b.model_flops < 5.9e10);

    /* Causal: half the attention term, the matmul term unchanged. */
    zb_flops_breakdown c;
    ZB_CHECK_OK(zb_flops_per_token(&s, ZB_FLOPS_CAUSAL, ZB_RECOMPUTE_NONE, &c));
    ZB_CHECK(c.attn_flops == 6.0 * 32 * 4096 * 8192 && c.matmul_flops == b.matmul_flops);
    ZB_CHECK(c.model_flops == b.model_flops - attn_full / 2);

    /* Recomputing every block: the blocks' forward again (2 N_layers and the
     * 4 L d_attn s forward attention), not the head's:
     * 8 N_layers + 6 N_head + 16 L d_attn s. */
    zb_flops_breakdown r;
    ZB_CHECK_OK(zb_flops_per_token(&s, ZB_FLOPS_FULL, ZB_RECOMPUTE_BLOCKS, &r));
    ZB_CHECK(r.model_flops == b.model_flops);
    ZB_CHECK(near(r.hardware_flops, 8.0 * b.n_matmul_layers + 6.0 * b.n_matmul_head +
                                        16.0 * 32 * 4096 * 8192));
    /* Recomputing everything: 8 N_matmul + 16 L d_attn s = 4/3 of model. */
    ZB_CHECK_OK(zb_flops_per_token(&s, ZB_FLOPS_FULL, ZB_RECOMPUTE_ALL, &r));
    ZB_CHECK(near(r.hardware_flops, 8.0 * b.n_matmul + 16.0 * 32 * 4096 * 8192));
    ZB_CHECK(near(r.hardware_flops, b.model_flops * 4.0 / 3.0));
    ZB_CHECK_OK(zb_flops_per_token(&s, ZB_FLOPS_CAUSAL, ZB_RECOMPUTE_ALL, &r));
    ZB_CHECK(near(r.hardware_flops, 8.0 * b.n_matmul + 8.0 * 32 * 4096 * 8192));
}

static void test_decoupled_head_dim(void) {
    /* Qwen3 4B: heads * head_dim = 4096 > dim = 2560. d_attn is 4096. */
    zb_flops_shape s = {36, 2560, 32, 8, 128, 9728, 151936, 4096};
    zb_flops_breakdown b;
    ZB_CHECK_OK(zb_flops_per_token(&s, ZB_FLOPS_FULL, ZB_RECOMPUTE_NONE, &b));
    double layer = 2560.0 * 4096 * 2 + 2560.0 * 1024 * 2 + 3.0 * 2560 * 9728;
    ZB_CHECK(b.n_matmul == 36.0 * layer + 2560.0 * 151936);
    ZB_CHECK(b.attn_flops == 12.0 * 36 * 4096 * 4096);
}

static void test_names_and_bad_input(void) {
    ZB_CHECK(strcmp(zb_flops_convention_name(ZB_FLOPS_FULL), "full") == 0);
    ZB_CHECK(strcmp(zb_flops_convention_name(ZB_FLOPS_CAUSAL), "causal") == 0);
    ZB_CHECK(strcmp(zb_flops_convention_name(ZB_FLOPS_CONVENTION_COUNT), "?") == 0);
    zb_flops_convention c = ZB_FLOPS_FULL;
    ZB_CHECK_OK(zb_flops_convention_parse("causal", &c));
    ZB_CHECK(c == ZB_FLOPS_CAUSAL);
    ZB_CHECK(zb_flops_convention_parse("half", &c) == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "full, causal") != NULL);
    zb_recompute r = ZB_RECOMPUTE_NONE;
    ZB_CHECK_OK(zb_recompute_parse("blocks", &r));
    ZB_CHECK(r == ZB_RECOMPUTE_BLOCKS && strcmp(zb_recompute_name(r), "blocks") == 0);
    ZB_CHECK(zb_recompute_parse("some", &r) == ZB_ERR_INVALID);

    zb_flops_shape bad = {32, 4096, 32, 8, 128, 14336, 128256, 0};
    zb_flops_breakdown b;
    ZB_CHECK(zb_flops_per_token(&bad, ZB_FLOPS_FULL, ZB_RECOMPUTE_NONE, &b) == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "seq") != NULL);
    ZB_CHECK(isnan(zb_model_flops_per_token(&bad, ZB_FLOPS_FULL)));
    zb_flops_shape gqa = {2, 64, 4, 3, 16, 176, 256, 32};
    ZB_CHECK(zb_flops_shape_check(&gqa) == ZB_ERR_INVALID);
}

static void test_mfu(void) {
    /* 6e9 FLOPs/token, 1e6 tokens per step, 1 s, 8 ranks of 1e15 FLOP/s:
     * 6e15 / 8e15 = 75 %. */
    ZB_CHECK(near(zb_mfu_pct(6e9, 1e6, 1.0, 8, 1e15), 75.0));
    /* Twice the step time halves it; twice the ranks too. */
    ZB_CHECK(near(zb_mfu_pct(6e9, 1e6, 2.0, 8, 1e15), 37.5));
    ZB_CHECK(near(zb_mfu_pct(6e9, 1e6, 1.0, 16, 1e15), 37.5));
    /* Llama 3 8B, 8 H100 (989e12 dense bf16), 8 * 8192 tokens in 1.2 s. */
    zb_flops_shape s = {32, 4096, 32, 8, 128, 14336, 128256, 8192};
    double f = zb_model_flops_per_token(&s, ZB_FLOPS_FULL);
    double mfu = zb_mfu_pct(f, 8.0 * 8192, 1.2, 8, 989e12);
    ZB_CHECK(near(mfu, 100.0 * f * 65536.0 / (1.2 * 8 * 989e12)));
    printf("Llama 3 8B on 8 H100, 64 Ki tokens in 1.2 s: MFU %.1f %%\n", mfu);
    /* Nothing measured: NaN, never 0. */
    ZB_CHECK(isnan(zb_mfu_pct(6e9, 1e6, 0.0, 8, 1e15)));
    ZB_CHECK(isnan(zb_mfu_pct(6e9, 1e6, 1.0, 0, 1e15)));
    ZB_CHECK(isnan(zb_mfu_pct(6e9, 1e6, 1.0, 8, 0.0)));
    ZB_CHECK(isnan(zb_mfu_pct(NAN, 1e6, 1.0, 8, 1e15)));
}

int main(void) {
    test_llama3_8b();
    test_decoupled_head_dim();
    test_names_and_bad_input();
    test_mfu();
    return zb_test_finish("test_flops");
}
