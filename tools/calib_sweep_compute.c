/* calibrate's compute sweeps: element-wise bandwidth, the kernels one by
 * one, the square GEMMs and the model's own, fused attention. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_runs.h"
#include "kernels.h"
#include "profile.h"

/* Element-wise bandwidth and the per-op overhead: zerobench memory over the
 * collective sizes, fitted as time = overhead + bytes moved / bandwidth. */
zb_status zb_calib_mem_sweep(const calib_args *a, const calib_run *r, zb_calib *c) {
    /* Buffers of 4K .. 16M (--quick: 4M): past the caches, where the step's large ops run; at least 20 calls
     * each, not ZB_CALIB_MIN_ITERS: 200 calls on one buffer kept it in the caches (67-74 GB/s against 53 with
     * 20, and the medium step's predictions fell to 0.73-0.81 of the measured). */
    char iters[32];
    snprintf(iters, sizeof iters, "%d", atoi(a->iters) > 20 ? atoi(a->iters) : 20);
    const char *top = a->quick ? "4M" : "16M";
    const char *args[40] = {"memory", "-b", "4K", "-e", top, "-f", "4", "-n", iters, "-w", "2", "-c", "0",
                            "-d", a->dtype};
    int n = zb_calib_layout_args(a, args, 15);
    snprintf(c->mem_command, sizeof c->mem_command, "zerobench memory -b 4K -e %s -f 4 -n %s", top, iters);
    json_t *doc = NULL;
    ZB_TRY(zb_calib_run_child(r, "memory", args, n, false, &doc));
    zb_status s = zb_calib_take_meta(a, doc, c);
    const json_t *runs = json_object_get(doc, "runs");
    zb_calib_point pts[ZB_CALIB_MAX_POINTS];
    int np = 0;
    for (size_t i = 0; s == ZB_OK && i < json_array_size(runs) && np < ZB_CALIB_MAX_POINTS; i++) {
        const json_t *m = json_object_get(json_array_get(runs, i), "metrics");
        pts[np].steps = 1;
        pts[np].sent_bytes = json_number_value(json_object_get(m, "bytes_moved"));
        pts[np++].time_s = zb_calib_op_time_s(json_array_get(runs, i));
    }
    json_decref(doc);
    if (s != ZB_OK) return s;
    c->mem_try.have = zb_calib_fit_alpha_beta(pts, np, &c->mem) == ZB_OK;
    if (!c->mem_try.have) zb_calib_say_not(&c->mem_try);
    return ZB_OK;
}

zb_status zb_calib_gemm_sweep(const calib_args *a, const calib_run *r, zb_calib *c) {
    char iters[32];
    zb_calib_min_iters(a, iters, sizeof iters);
    const char *args[40] = {"gemm", "-b", a->gemm_min, "-e", a->gemm_max, "-f", "2", "-n", iters, "-w", ZB_CALIB_WARMUP,
                            "-c", "0", "-d", a->dtype};
    int n = zb_calib_layout_args(a, args, 15);
    snprintf(c->gemm_command, sizeof c->gemm_command, "zerobench gemm -b %s -e %s -f 2 -n %s -w %s", a->gemm_min,
             a->gemm_max, iters, ZB_CALIB_WARMUP);
    json_t *doc = NULL;
    ZB_TRY(zb_calib_run_child(r, "gemm", args, n, true, &doc));
    const json_t *runs = json_object_get(doc, "runs");
    zb_status s = ZB_OK;
    double peak_sum = 0;
    bool all_device = true;
    for (size_t i = 0; s == ZB_OK && i < json_array_size(runs); i++) {
        const json_t *run = json_array_get(runs, i), *m = json_object_get(run, "metrics");
        double tflops = json_number_value(json_object_get(m, "tflops"));
        double pct = json_number_value(json_object_get(m, "pct_peak"));
        long long dim = 0;
        if (sscanf(zb_calib_str_or(json_string_value(json_object_get(run, "shape")), ""), "%lldx", &dim) != 1 || !(pct > 0) ||
            c->gemm.n >= ZB_CALIB_MAX_POINTS) {
            s = ZB_FAIL(ZB_ERR_IO, "calibrate: the GEMM run gave no %% of peak (no peak known: pass --hw with "
                        "the device's peak)");
            break;
        }
        c->gemm.dim[c->gemm.n] = (double)dim;
        bool device = false;
        c->gemm.time_s[c->gemm.n] = zb_calib_device_time_s(run, &device);
        all_device = all_device && device;
        c->gemm.n++;
        peak_sum += tflops * 1e12 * 100.0 / pct; /* the same peak for every size of one run */
    }
    if (s == ZB_OK && c->gemm.n < 2) s = ZB_FAIL(ZB_ERR_IO, "calibrate: the GEMM run gave %d size(s)", c->gemm.n);
    if (s == ZB_OK) {
        c->peak_flops = peak_sum / c->gemm.n;
        const json_t *field = json_object_get(c->base, strcmp(a->dtype, "bf16") ? "fp32_flops" : "bf16_flops");
        snprintf(c->peak_source, sizeof c->peak_source, "%s, per rank of %s x %d thread(s)", json_is_string(field)
                 ? "measured by the gemm run (the harness's FMA peak)" : "the base profile's peak",
                 a->gpn ? a->gpn : "2", c->threads);
        /* Device times hold no gap between calls; loop times hold the per-op overhead (the element-wise
         * fit's): a GEMM's time beyond it is its FLOPs' */
        c->gemm_device = all_device;
        double over = all_device || !c->mem_try.have ? 0 : c->mem.latency_s;
        s = zb_calib_fit_gemm(&c->gemm, c->peak_flops, over, &c->gemm_rms_pct, &c->gemm_max_pct);
    }
    json_decref(doc);
    return s;
}

/* The element-wise kernels one by one (zerobench kernels) at the model's
 * shapes and at twice its batch: per kernel, time = overhead + bytes /
 * (bandwidth x efficiency), the bandwidth and overhead the element-wise
 * fit's. One bandwidth prices a GPU's kernels; on the cpu backend RoPE,
 * the cross-entropy and the casts are bound by their arithmetic (6-8 GB/s
 * against the residual add's 30-50 on the medium model here). */
zb_status zb_calib_kern_sweep(const calib_args *a, const calib_run *r, zb_calib *c) {
    zb_model_profile mp;
    ZB_TRY(zb_model_profile_load(a->model ? a->model : "tiny", &mp));
    char iters[32];
    snprintf(iters, sizeof iters, "%d", atoi(a->iters) > 50 ? atoi(a->iters) : 50);
    c->n_kern = 0;
    bool all_device = true;
    for (int k = 0; k < ZB_CALIB_KERNEL_SHAPES; k++) {
        char batch[32], name[32];
        snprintf(batch, sizeof batch, "%d", mp.batch << k);
        snprintf(name, sizeof name, "kernels_%d", k);
        const char *args[40] = {"kernels", "--model", a->model ? a->model : "tiny", "--batch", batch, "-n", iters,
                                "-w", "5", "-c", "0", "-d", a->dtype};
        int n = zb_calib_layout_args(a, args, 13);
        json_t *doc = NULL;
        ZB_TRY(zb_calib_run_child(r, name, args, n, true, &doc));
        const json_t *runs = json_object_get(doc, "runs");
        for (size_t i = 0; i < json_array_size(runs) && (int)i < (int)(sizeof c->kern / sizeof c->kern[0]); i++) {
            const json_t *run = json_array_get(runs, i);
            zb_calib_kernel *kk = &c->kern[i];
            if (k == 0) {
                snprintf(kk->name, sizeof kk->name, "%s", zb_calib_str_or(json_string_value(json_object_get(run, "op")), "?"));
                c->n_kern++;
            }
            if ((int)i >= c->n_kern || kk->n >= ZB_CALIB_KERNEL_SHAPES) continue;
            kk->bytes[kk->n] = json_number_value(json_object_get(json_object_get(run, "metrics"), "bytes_moved"));
            bool device = false;
            kk->time_s[kk->n++] = zb_calib_device_time_s(run, &device);
            all_device = all_device && device;
        }
        json_decref(doc);
    }
    snprintf(c->kern_command, sizeof c->kern_command, "zerobench kernels --model %s --batch %d,%d -n %s -w 5",
             a->model ? a->model : "tiny", mp.batch, 2 * mp.batch, iters);
    if (!c->mem_try.have) {
        snprintf(c->kern_try.why_not, sizeof c->kern_try.why_not, "no element-wise bandwidth to scale (%s)",
                 c->mem_try.why_not);
        return ZB_OK;
    }
    c->kern_try.have = c->n_kern > 0;
    c->kern_device = all_device;
    double over = all_device ? 0 : c->mem.latency_s; /* device times hold no gap between calls */
    for (int i = 0; i < c->n_kern && c->kern_try.have; i++) {
        c->kern_try.have = zb_calib_fit_kernel(&c->kern[i], c->mem.bandwidth_bytes_per_s, over) == ZB_OK;
    }
    if (!c->kern_try.have) zb_calib_say_not(&c->kern_try);
    return ZB_OK;
}

/* The model's own GEMMs (zerobench gemm --model: each linear's forward,
 * input gradient and weight gradient, and the LM head's), fitted into the
 * square sweep's table at their smallest dimensions (calib_fit.h). As many
 * calls as the square sweep (its calls of microseconds need them, calib
 * above), fewer where that would take more than about 30 s. */
zb_status zb_calib_gemm_model_sweep(const calib_args *a, const calib_run *r, zb_calib *c) {
    zb_model_profile mp;
    ZB_TRY(zb_model_profile_load(a->model ? a->model : "tiny", &mp));
    double t = (double)mp.batch * mp.seq, q = (double)mp.heads * mp.head_dim, kv = (double)mp.kv_heads * mp.head_dim;
    double per_set = 3 * 2 * t * (2 * q * mp.dim + 2 * kv * mp.dim + 3.0 * mp.ffn_dim * mp.dim + (double)mp.vocab * mp.dim);
    double set_s = per_set / (0.5 * c->peak_flops); /* at half the peak: an upper guess */
    int iters = ZB_CALIB_MIN_ITERS, warm = atoi(ZB_CALIB_WARMUP);
    if ((iters + warm) * set_s > 30.0) {
        iters = (int)(30.0 / set_s) - 2 > 10 ? (int)(30.0 / set_s) - 2 : 10;
        warm = 2;
    }
    char it[32], w[32];
    snprintf(it, sizeof it, "%d", iters);
    snprintf(w, sizeof w, "%d", warm);
    const char *args[40] = {"gemm", "--model", a->model ? a->model : "tiny", "-n", it, "-w", w, "-c", "0", "-d",
                            a->dtype};
    int n = zb_calib_layout_args(a, args, 11);
    snprintf(c->gemm_model_command, sizeof c->gemm_model_command, "zerobench gemm --model %s -n %s -w %s",
             a->model ? a->model : "tiny", it, w);
    json_t *doc = NULL;
    ZB_TRY(zb_calib_run_child(r, "gemm_model", args, n, true, &doc));
    const json_t *runs = json_object_get(doc, "runs");
    zb_calib_gemm_shape shapes[ZB_CALIB_MAX_POINTS];
    int ns = 0;
    bool mixed = false;
    for (size_t i = 0; i < json_array_size(runs) && ns < ZB_CALIB_MAX_POINTS; i++) {
        const json_t *run = json_array_get(runs, i);
        long long m = 0, nn = 0, k = 0;
        if (sscanf(zb_calib_str_or(json_string_value(json_object_get(run, "shape")), ""), "%lldx%lldx%lld", &m, &nn, &k) != 3) {
            continue;
        }
        bool device = false;
        shapes[ns++] = (zb_calib_gemm_shape){(double)m, (double)nn, (double)k, zb_calib_device_time_s(run, &device)};
        mixed = mixed || device != c->gemm_device; /* times of two kinds: not pooled */
    }
    json_decref(doc);
    if (mixed) {
        snprintf(c->gemm_model_try.why_not, sizeof c->gemm_model_try.why_not, "its times and the square sweep's "
                 "are not of one kind (device records against loop times)");
        return ZB_OK;
    }
    c->gemm_model_try.have = zb_calib_gemm_add_shapes(&c->gemm, shapes, ns, c->peak_flops) == ZB_OK;
    if (!c->gemm_model_try.have) zb_calib_say_not(&c->gemm_model_try);
    return ZB_OK;
}

/* Fused attention at the model's shape and at twice its sequence: time =
 * overhead + causal FLOPs / (peak x efficiency), forward and backward. */
zb_status zb_calib_attn_sweep(const calib_args *a, const calib_run *r, zb_calib *c) {
    double work[2][4], t[2][4];
    int np = 0;
    zb_model_profile mp;
    ZB_TRY(zb_model_profile_load(a->model ? a->model : "tiny", &mp));
    for (int k = 0; k < 2; k++) {
        char seq[32], name[32];
        snprintf(seq, sizeof seq, "%d", mp.seq << k);
        snprintf(name, sizeof name, "attention_%d", k);
        const char *args[40] = {"attention", "--model", a->model ? a->model : "tiny", "--seq", seq, "-n", a->iters,
                                "-w", "1", "-c", "0"};
        int n = zb_calib_layout_args(a, args, 11);
        json_t *doc = NULL;
        ZB_TRY(zb_calib_run_child(r, name, args, n, false, &doc));
        const json_t *runs = json_object_get(doc, "runs");
        for (size_t i = 0; i < json_array_size(runs) && i < 2; i++) {
            const json_t *run = json_array_get(runs, i), *sh = json_object_get(run, "shape");
            bool bwd = !strcmp(zb_calib_str_or(json_string_value(json_object_get(run, "pass")), ""), "bwd");
            double f = zb_attention_fwd_causal_flops((int)json_integer_value(json_object_get(sh, "batch")),
                                                     (int)json_integer_value(json_object_get(sh, "seq")),
                                                     (int)json_integer_value(json_object_get(sh, "heads")),
                                                     (int)json_integer_value(json_object_get(sh, "head_dim")));
            work[bwd][np] = bwd ? 2.5 * f : f;
            t[bwd][np] = zb_calib_op_time_s(run);
        }
        np++;
        json_decref(doc);
    }
    snprintf(c->attn_command, sizeof c->attn_command, "zerobench attention --model %s --seq %d,%d -n %s",
             a->model ? a->model : "tiny", mp.seq, 2 * mp.seq, a->iters);
    double over = c->mem_try.have ? c->mem.latency_s : 0;
    c->attn_try.have = zb_calib_fit_rate(work[0], t[0], np, over, &c->attn[0]) == ZB_OK &&
                       zb_calib_fit_rate(work[1], t[1], np, over, &c->attn[1]) == ZB_OK;
    if (!c->attn_try.have) zb_calib_say_not(&c->attn_try);
    return ZB_OK;
}
