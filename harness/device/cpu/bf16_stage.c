/* The bf16 storage path of the CPU kernel table (kernels.h, "Storage
 * dtype"): the bf16 REFERENCE. Every activation or weight an op reads is
 * widened (exactly) into fp32 scratch, the fp32 reference kernel runs on the
 * scratch, and every activation it writes is rounded once, to nearest even,
 * into its bf16 destination. fp32 arguments (inv_rms, lse, loss, dweight,
 * dtable) pass through untouched. Scratch lives for one op only.
 *
 * Shapes as in kernels.h: N = B*T tokens, activations [N, C], q
 * [B, T, H, D], k, v [B, T, KVH, D], lse [B, H, T] (fp32). */
#include <stdlib.h>
#include <string.h>

#include "bf16_stage.h"
#include "zb_cpu_kernels.h"

/* a*b*c*d elements; a negative dimension counts as 0 (the kernel then
 * reads nothing). */
static size_t elems(int a, int b, int c, int d) {
    if (a <= 0 || b <= 0 || c <= 0 || d <= 0) return 0;
    return (size_t)a * (size_t)b * (size_t)c * (size_t)d;
}

/* Element counts of the slots that hold activations or weights (the entry's
 * void * arguments); 0 for the fp32 ones (inv_rms, lse, loss, dweight,
 * dtable) and for unused slots. */
static void storage_counts(const cpu_kargs *a, size_t in[6], size_t out[3]) {
    const int *d = a->d;
    memset(in, 0, 6 * sizeof *in);
    memset(out, 0, 3 * sizeof *out);
    switch (a->op) {
    case KOP_EMBEDDING_FWD: /* out [N, C], table [V, C] */
        out[0] = elems(d[0], d[1], 1, 1);
        in[0] = elems(d[2], d[1], 1, 1);
        break;
    case KOP_EMBEDDING_BWD: in[0] = elems(d[0], d[1], 1, 1); break; /* dout */
    case KOP_RMSNORM_FWD: /* out, x [N, C]; weight [C] */
        out[0] = in[0] = elems(d[0], d[1], 1, 1);
        in[1] = elems(d[1], 1, 1, 1);
        break;
    case KOP_RMSNORM_BWD: /* dx, dout, x [N, C]; weight [C] */
        out[0] = in[0] = in[1] = elems(d[0], d[1], 1, 1);
        in[2] = elems(d[1], 1, 1, 1);
        break;
    case KOP_ROPE_FWD:
    case KOP_ROPE_BWD: out[0] = in[0] = elems(d[0], d[1], d[2], d[3]); break;
    case KOP_ATTENTION_FWD: /* out, q [B,T,H,D]; k, v [B,T,KVH,D]; lse fp32 */
        out[0] = in[0] = elems(d[0], d[1], d[2], d[4]);
        in[1] = in[2] = elems(d[0], d[1], d[3], d[4]);
        break;
    case KOP_ATTENTION_BWD: /* dq, dout, q, out; dk, dv, k, v; lse fp32 */
        out[0] = in[0] = in[1] = in[4] = elems(d[0], d[1], d[2], d[4]);
        out[1] = out[2] = in[2] = in[3] = elems(d[0], d[1], d[3], d[4]);
        break;
    case KOP_SWIGLU_FWD: out[0] = in[0] = in[1] = a->n; break;
    case KOP_SWIGLU_BWD: out[0] = out[1] = in[0] = in[1] = in[2] = a->n; break;
    case KOP_RESIDUAL_FWD: out[0] = in[0] = in[1] = a->n; break;
    case KOP_ACCUMULATE: out[0] = in[0] = a->n; break;
    case KOP_CROSS_ENTROPY_FWD: in[0] = elems(d[0], d[1], 1, 1); break; /* logits */
    case KOP_CROSS_ENTROPY_BWD: out[0] = in[0] = elems(d[0], d[1], 1, 1); break;
    case KOP_ADAMW:
    case KOP_FILL:
    case KOP_CAST_F32_TO_BF16:
    case KOP_CAST_BF16_TO_F32: break; /* these ignore c->dtype (kernels.h) */
    }
}

/* Widens every bf16 input into fp32 scratch, runs the fp32 kernel there and
 * rounds each bf16 output once into its destination. Inputs and outputs get
 * separate scratch and every input is widened before any output is stored,
 * so the aliasing the fp32 kernels allow (out == x ...) stays allowed. A
 * failed op stores nothing (the stream's error is sticky anyway). */
zb_status zb_cpu_kargs_run_bf16(const cpu_kargs *a) {
    size_t n_in[6], n_out[3], total = 0;
    storage_counts(a, n_in, n_out);
    for (int i = 0; i < 6; i++) total += n_in[i];
    for (int i = 0; i < 3; i++) total += n_out[i];
    /* +1: malloc(0) may return NULL */
    float *scratch = total < SIZE_MAX / sizeof(float) ? malloc((total + 1) * sizeof(float)) : NULL;
    if (!scratch) {
        return ZB_FAIL(ZB_ERR_NOMEM, "%s: out of memory for %zu floats of bf16 scratch", a->name,
                       total);
    }
    cpu_kargs w = *a; /* the same op on fp32 scratch */
    float *next = scratch;
    for (int i = 0; i < 6; i++) {
        if (!n_in[i]) continue;
        zb_cpu_bf16_to_f32(next, a->in[i], n_in[i]);
        w.in[i] = next;
        next += n_in[i];
    }
    for (int i = 0; i < 3; i++) {
        if (!n_out[i]) continue;
        /* accumulate's dst is read as well as written */
        if (a->op == KOP_ACCUMULATE) zb_cpu_bf16_to_f32(next, a->o[i], n_out[i]);
        w.o[i] = next;
        next += n_out[i];
    }
    zb_status st = zb_cpu_kargs_run_f32(&w);
    for (int i = 0; i < 3 && st == ZB_OK; i++) {
        if (n_out[i]) zb_cpu_f32_to_bf16(a->o[i], w.o[i], n_out[i]);
    }
    free(scratch);
    return st;
}
