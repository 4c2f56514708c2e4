/* zerobench calibrate's printout (calib.h): what it measured and fitted,
 * each fit with its residuals, and what came from the base profile. */
#include <stdio.h>

#include "calib.h"

void zb_calib_print_summary(const zb_calib *c, const char *out, const char *missing, const char *borrowed) {
    printf("# calibrate: %s, backend %s, comm %s, %d node(s) x %d rank(s), %d BLAS thread(s) per rank; base profile "
           "%s\n", c->host, c->backend, c->comm, c->nodes, c->gpus_per_node, c->threads, c->base_path);
    if (c->mem_try.have) {
        printf("# element-wise: %.4g GB/s, per-op overhead %.3g us (time = overhead + bytes / bandwidth, %d sizes, "
               "rms resid %.1f %%, max %.1f %%)\n", c->mem.bandwidth_bytes_per_s / 1e9, c->mem.latency_s * 1e6,
               c->mem.n_points, c->mem.rms_residual_pct, c->mem.max_residual_pct);
    } else {
        printf("# element-wise: not fitted (%s)\n", c->mem_try.why_not);
    }
    if (c->kern_try.have) {
        printf("#   kernel              bandwidth (GB/s)  efficiency  rms resid (%%)\n");
        for (int i = 0; i < c->n_kern; i++) {
            const zb_calib_kernel *k = &c->kern[i];
            printf("    %-18s  %16.2f  %10.3f  %13.1f%s\n", k->name, k->fit.rate / 1e9, k->eff,
                   k->fit.rms_residual_pct, k->clamped ? " (clamped to 10: its time is about the per-op overhead)" : "");
        }
    } else {
        printf("# element-wise kernels: not fitted (%s)\n", c->kern_try.why_not);
    }
    printf("# peak %.4g GFLOP/s per rank (%s)\n", c->peak_flops / 1e9, c->peak_source);
    printf("#   GEMM M=N=K   time (us)   efficiency\n");
    for (int i = 0; i < c->gemm.n; i++) {
        printf("    %10.0f  %10.1f   %9.3f%s%s%s\n", c->gemm.dim[i], c->gemm.time_s[i] * 1e6, c->gemm.eff[i],
               c->gemm.from_model[i] ? " (the model's own GEMMs with this smallest dimension, times summed)" : "",
               c->gemm.capped[i] ? " (slower than a larger size: costed at its time)" : "",
               c->gemm.clamped[i] ? " (faster than the peak after the overhead: clamped to 1)" : "");
    }
    if (c->gemm_model_try.have) {
        printf("# the model's own GEMMs (%s) as priced by the table: rms resid %.1f %%, max %.1f %%\n",
               c->gemm_model_command, c->gemm.model_rms_pct, c->gemm.model_max_pct);
    } else {
        printf("# the model's own GEMMs: not fitted (%s)\n", c->gemm_model_try.why_not);
    }
    if (c->attn_try.have) {
        printf("# attention (fused, causal FLOPs): fwd efficiency %.3f (rms resid %.1f %%), bwd %.3f (%.1f %%)\n",
               c->attn[0].rate / c->peak_flops, c->attn[0].rms_residual_pct, c->attn[1].rate / c->peak_flops,
               c->attn[1].rms_residual_pct);
    } else {
        printf("# attention: not fitted (%s)\n", c->attn_try.why_not);
    }
    if (c->gap_try.have) {
        printf("# per-op overhead in the step: %.3g us (the sync step's %.4g ms outside every op over its %.4g ops: "
               "the sim's op_overhead_s)\n", c->gap_s * 1e6, c->gap_idle_ms, c->gap_ops);
    } else if (c->gap_try.why_not[0]) {
        printf("# per-op overhead in the step: not measured (%s)\n", c->gap_try.why_not);
    }
    if (c->hold_try.have) {
        printf("# hold at a collective's start: %.3g us (prefetch's compute held back by a collective's start, "
               "over the collectives compute had work beside: the sim's comm_hold_s)\n", c->hold_s * 1e6);
    } else if (c->hold_try.why_not[0]) {
        printf("# hold at a collective's start: not measured (%s)\n", c->hold_try.why_not);
    }
    const char *sname[2] = {"compute beside comm", "comm beside compute"};
    for (int k = 0; k < 2; k++) {
        if (c->slow_try[k].have) {
            printf("# %s: x(1 + %.3f) inside the overlap%s, %d pairs of steps, rms resid %.1f %%, max %.1f %%\n",
                   sname[k], c->slow[k].factor, c->slow[k].clamped ? " (clamped)" : "", c->slow[k].n_pairs,
                   c->slow[k].rms_residual_pct, c->slow[k].max_residual_pct);
        } else if (c->slow_try[k].why_not[0]) {
            printf("# %s: not fitted (%s)\n", sname[k], c->slow_try[k].why_not);
        }
    }
    printf("# collectives: time = steps x latency + bytes sent per rank / bandwidth, least squares weighted by "
           "1/time^2\n");
    printf("#   collective      placement   ranks  latency/step (us)  bandwidth (GB/s)  rms resid (%%)  max resid (%%)\n");
    const char *pl_name[2] = {"intra-node", "inter-node"};
    for (int pl = 0; pl < 2; pl++) {
        for (int k = 0; k <= ZB_CALIB_N_COLLS; k++) {
            const zb_calib_coll_fit *f = k < ZB_CALIB_N_COLLS ? &c->coll[pl][k] : &c->pooled[pl];
            const char *label = k < ZB_CALIB_N_COLLS ? zb_calib_colls[k] : "pooled (link)";
            if (!f->have && f->ranks) printf("    %-14s  %-10s  %5d  not fitted: %s\n", label, pl_name[pl], f->ranks, f->why_not);
            if (!f->have) continue;
            printf("    %-14s  %-10s  %5d  %17.3f  %16.4f  %13.1f  %13.1f%s\n", label, pl_name[pl], f->ranks,
                   f->fit.latency_s * 1e6, f->fit.bandwidth_bytes_per_s / 1e9, f->fit.rms_residual_pct,
                   f->fit.max_residual_pct, f->fit.latency_clamped ? " (latency fit < 0: 0)" : "");
        }
    }
    if (!c->pooled[0].ranks && !c->pooled[1].ranks) printf("# one rank: no link to fit\n");
    if (borrowed[0]) printf("# from the base profile (not calibrated here): %s\n", borrowed);
    if (missing[0]) {
        printf("# neither calibrated nor in the base profile: %s (a sim that needs one refuses the profile; "
               "give a base that has them, --base BASE)\n", missing);
    }
    printf("# wrote %s\n", out);
}
