/* What PyTorch eager runs for the engine's element-wise blocks
 * (kernel_bytes.h, zb_keager_*): one kernel per torch op, each reading its
 * inputs and writing its output through memory at the dtype it runs in.
 * The op sequences are those of the published runs' model code: the
 * RMSNorm, RoPE and cross-entropy of torchtitan's Llama (torchtitan
 * models/norms.py, models/llama/model.py, train.py, 2024: x.float() ...
 * .type_as(x), view_as_complex, cross_entropy on .float() logits; fms-fsdp's
 * LayerNormParameterized with its high-precision pow runs the same norm),
 * the SwiGLU `silu(w1(x)) * w3(x)` both use, and torch.optim.AdamW's
 * foreach path (the default on GPUs, not fused=True); the backward of each
 * op is its autograd formula (PyTorch tools/autograd/derivatives.yaml).
 * Per-row reductions and [N]-sized temporaries are counted; a cast to the
 * dtype a tensor already has is no kernel (x.float() of fp32 returns x). */
#include "kernel_bytes.h"

/* bytes of n elements of the storage dtype and of fp32 */
static double st_b(zb_dtype st, double n) { return n * (double)zb_dtype_size(st); }
static double f4(double n) { return 4.0 * n; }
/* a cast between the storage dtype and fp32 of n elements: 0 and no kernel when st is fp32 */
static double cast_b(zb_dtype st, double n) { return st == ZB_DTYPE_F32 ? 0 : st_b(st, n) + f4(n); }
static int cast_ops(zb_dtype st) { return st == ZB_DTYPE_F32 ? 0 : 1; }

zb_kcost zb_keager_rmsnorm_fwd(zb_dtype st, int N, int C) {
    double n = (double)N * C;
    /* x.float(); pow(2) r4 w4; mean(-1) r4; + eps, rsqrt on [N]; x * rsqrt r4 w4; type_as; * weight */
    double bytes = cast_b(st, n) + f4(2 * n) + f4(n) + f4(4.0 * N) + f4(2 * n) + cast_b(st, n) +
                   st_b(st, 2 * n + C);
    return (zb_kcost){bytes, 6 + 2 * cast_ops(st)};
}

zb_kcost zb_keager_rmsnorm_bwd(zb_dtype st, int N, int C) {
    double n = (double)N * C;
    /* * weight: g * w (r g, w) and (g * y).sum(rows) (r g, r y, w, then r); type_as back to fp32;
     * x * r: g * r (r4 w4) and (g * x).sum(-1) (r4 r4 w4, r4); rsqrt and + eps on [N];
     * mean: the [N] grad expanded / C (w4); pow: x * 2 (r4 w4), then * g (r4 r4 w4);
     * the two grads of x added (r4 r4 w4); x.float() back to the storage dtype */
    double bytes = st_b(st, 2 * n + C) + st_b(st, 4 * n) + cast_b(st, n) + f4(2 * n) + f4(4 * n) +
                   f4(4.0 * N) + f4(n) + f4(2 * n) + f4(3 * n) + f4(3 * n) + cast_b(st, n);
    return (zb_kcost){bytes, 11 + 2 * cast_ops(st)};
}

zb_kcost zb_keager_rope(zb_dtype st, int B, int T, int NH, int D) {
    double n = (double)B * T * NH * D;
    /* forward: x.float(); the complex product with freqs_cis (r4 of x, the [T, D/2] complex table, w4);
     * type_as. Backward: the grad cast up, times conj(freqs_cis), cast back: the same traffic. */
    double bytes = cast_b(st, n) + f4(2 * n) + f4((double)T * D) + cast_b(st, n);
    return (zb_kcost){bytes, 1 + 2 * cast_ops(st)};
}

zb_kcost zb_keager_swiglu_fwd(zb_dtype st, size_t n) {
    /* silu(gate) r w; * up r r w */
    return (zb_kcost){st_b(st, 5.0 * (double)n), 2};
}

zb_kcost zb_keager_swiglu_bwd(zb_dtype st, size_t n) {
    /* mul: g * up and g * silu(gate) (r r w each); silu_backward(g_a, gate) r r w */
    return (zb_kcost){st_b(st, 9.0 * (double)n), 3};
}

zb_kcost zb_keager_cross_entropy_fwd(zb_dtype st, int N, int V) {
    double n = (double)N * V;
    /* logits.float(); log_softmax r4 w4; nll_loss gathers [N] */
    return (zb_kcost){cast_b(st, n) + f4(2 * n) + f4(2.0 * N), 2 + cast_ops(st)};
}

zb_kcost zb_keager_cross_entropy_bwd(zb_dtype st, int N, int V) {
    double n = (double)N * V;
    /* nll_loss_backward: a zero-filled fp32 grad (w4) and a scatter of [N]; log_softmax_backward r4 r4 w4;
     * the cast back to the logits' dtype */
    return (zb_kcost){f4(n) + f4(2.0 * N) + f4(3 * n) + cast_b(st, n), 3 + cast_ops(st)};
}

zb_kcost zb_keager_adamw(size_t n) {
    /* foreach AdamW on fp32: param *= 1 - lr wd (r w); m.lerp_(g) (r r w); v *= b2 (r w); v.addcmul_(g, g)
     * (r r r w); sqrt (r w); / bias correction (r w); + eps (r w); param.addcdiv_(m, denom) (r r r w) */
    return (zb_kcost){f4(21.0 * (double)n), 8};
}
