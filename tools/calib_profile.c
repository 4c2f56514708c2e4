/* The hardware profile zerobench calibrate writes (calib.h). All the
 * mapping from fit results to profile keys is in put_measured(): the sim's
 * cost parameters live in the profile's "sim" object (profile.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "atomic_file.h"
#include "calib.h"
#include "profile.h"
#include "report.h"

const char *const zb_calib_colls[ZB_CALIB_N_COLLS] = {"allgather", "reducescatter", "allreduce"};

/* The sim parameters a profile may give (profile.h) and that calibrate does
 * not measure: kept from the base profile when it has them. */
static const char *const sim_unmeasured[] = {"mem_efficiency", "attention_fwd_efficiency", "attention_bwd_efficiency", "interference"};

static json_t *sub_object(json_t *parent, const char *key) {
    json_t *o = json_object_get(parent, key);
    if (!json_is_object(o)) {
        o = json_object();
        json_object_set_new(parent, key, o);
    }
    return o;
}

static void set_source(json_t *sources, const char *key, const zb_calib *c, const char *what) {
    char text[2560];
    snprintf(text, sizeof text, "calibrated on %s at %s from %s", c->host, c->date_utc, what);
    json_object_set_new(sources, key, json_string(text));
}

/* Fit results to profile keys: the one place that knows the names. */
static void put_measured(const zb_calib *c, json_t *prof) {
    json_t *sources = sub_object(prof, "sources"), *sim = sub_object(prof, "sim");
    json_t *sim_sources = sub_object(sim, "sources");
    char what[1024];
    /* The peak the GEMM sweep was measured against, for its dtype; a field the
     * base leaves to measurement ("measure") is the same measured peak. */
    const char *peak_key = strcmp(c->dtype, "bf16") ? "fp32_flops" : "bf16_flops";
    const char *other_key = strcmp(c->dtype, "bf16") ? "bf16_flops" : "fp32_flops";
    snprintf(what, sizeof what, "the peak '%s %s' measured against (%s)", c->gemm_command, c->dtype, c->peak_source);
    json_object_set_new(prof, peak_key, json_real(c->peak_flops));
    set_source(sources, peak_key, c, what);
    if (json_is_string(json_object_get(prof, other_key))) {
        json_object_set_new(prof, other_key, json_real(c->peak_flops));
        set_source(sources, other_key, c, what);
    }
    /* GEMM efficiency by size, and the per-op overhead that goes with it. */
    json_t *table = json_array();
    for (int i = 0; i < c->gemm.n; i++) {
        json_array_append_new(table, json_pack("[I, f]", (json_int_t)c->gemm.dim[i], c->gemm.eff[i]));
    }
    json_object_set_new(sim, "gemm_efficiency", table);
    snprintf(what, sizeof what, "'%s': measured GFLOP/s of square M=N=K GEMMs over the peak, after the "
             "per-op overhead", c->gemm_command);
    set_source(sim_sources, "gemm_efficiency", c, what);
    json_object_set_new(sim, "op_overhead_s", json_real(c->gemm.overhead_s));
    snprintf(what, sizeof what, "'%s': the least time a GEMM size spent beyond its FLOPs at the peak",
             c->gemm_command);
    set_source(sim_sources, "op_overhead_s", c, what);
    /* Links: the pooled alpha-beta fit of the three collectives, inside a
     * node (nvlink_bytes_per_s: the intra-node link) and across nodes. */
    json_t *lat = sub_object(sim, "link_latency_s");
    const char *bw_key[2] = {"nvlink_bytes_per_s", "nic_bytes_per_s"}, *lat_key[2] = {"intra_node", "inter_node"};
    char lat_what[1024] = "";
    for (int pl = 0; pl < 2; pl++) {
        const zb_calib_coll_fit *f = &c->pooled[pl];
        if (!f->have) continue;
        json_object_set_new(prof, bw_key[pl], json_real(f->fit.bandwidth_bytes_per_s));
        json_object_set_new(lat, lat_key[pl], json_real(f->fit.latency_s));
        snprintf(what, sizeof what, "'%s' on %d ranks %s: alpha-beta least-squares fit over all-gather, "
                 "reduce-scatter and all-reduce, rms residual %.1f%%", c->coll_command, f->ranks,
                 pl == ZB_CALIB_INTRA ? "inside one node" : "across nodes", f->fit.rms_residual_pct);
        set_source(sources, bw_key[pl], c, what);
        size_t used = strlen(lat_what);
        snprintf(lat_what + used, sizeof lat_what - used, "%s%s: %s", used ? "; " : "", lat_key[pl], what);
    }
    if (lat_what[0]) {
        /* A latency kept from the base keeps its source beside the calibrated one. */
        const char *old = json_string_value(json_object_get(sim_sources, "link_latency_s"));
        bool kept = false;
        for (int pl = 0; pl < 2; pl++) kept = kept || (!c->pooled[pl].have && json_object_get(lat, lat_key[pl]));
        char text[2048];
        snprintf(text, sizeof text, "%s%s%s", lat_what, kept && old ? "; the rest from the base profile: " : "",
                 kept && old ? old : "");
        set_source(sim_sources, "link_latency_s", c, text);
    }
    if (!json_object_size(lat)) json_object_del(sim, "link_latency_s");
}

static json_t *fit_json(const zb_calib_coll_fit *f) {
    if (!f->ranks) return json_null(); /* not swept */
    if (!f->have) return json_pack("{s:i, s:s}", "ranks", f->ranks, "not_fitted", f->why_not);
    return json_pack("{s:i, s:i, s:o, s:o, s:b, s:o, s:o}", "ranks", f->ranks, "points", f->fit.n_points,
                     "latency_per_step_s", zb_json_real_or_null(f->fit.latency_s), "bandwidth_bytes_per_s",
                     zb_json_real_or_null(f->fit.bandwidth_bytes_per_s), "latency_clamped_to_0",
                     f->fit.latency_clamped, "rms_residual_pct", zb_json_real_or_null(f->fit.rms_residual_pct),
                     "max_residual_pct", zb_json_real_or_null(f->fit.max_residual_pct));
}

/* Everything measured and fitted, residuals included, for a reader of the profile. */
static json_t *calibration_json(const zb_calib *c) {
    json_t *gemm = json_array();
    for (int i = 0; i < c->gemm.n; i++) {
        json_array_append_new(gemm, json_pack("{s:I, s:o, s:o, s:b}", "dim", (json_int_t)c->gemm.dim[i], "time_s",
                                              zb_json_real_or_null(c->gemm.time_s[i]), "efficiency",
                                              zb_json_real_or_null(c->gemm.eff[i]), "clamped_to_1",
                                              c->gemm.clamped[i]));
    }
    json_t *colls = json_object();
    const char *pl_name[2] = {"intra_node", "inter_node"};
    for (int k = 0; k < ZB_CALIB_N_COLLS; k++) {
        json_t *o = json_object();
        for (int pl = 0; pl < 2; pl++) json_object_set_new(o, pl_name[pl], fit_json(&c->coll[pl][k]));
        json_object_set_new(colls, zb_calib_colls[k], o);
    }
    json_t *pooled = json_object();
    for (int pl = 0; pl < 2; pl++) json_object_set_new(pooled, pl_name[pl], fit_json(&c->pooled[pl]));
    json_object_set_new(colls, "pooled", pooled);
    return json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:s, s:s, s:s, s:o, s:s, s:o, s:f, s:o, s:o}", "host", c->host,
                     "date_utc", c->date_utc, "backend", c->backend, "comm", c->comm, "nodes", c->nodes,
                     "gpus_per_node", c->gpus_per_node, "base_profile", c->base_path, "gemm_command",
                     c->gemm_command, "coll_command", c->coll_command, "peak_flops",
                     zb_json_real_or_null(c->peak_flops), "peak_source", c->peak_source, "gemm", gemm,
                     "gemm_overhead_s", c->gemm.overhead_s, "collectives", colls, "model",
                     json_string("collective time = steps x latency + bytes sent per rank / bandwidth (ring: "
                                 "n-1 steps, all-reduce 2(n-1)); least squares weighted by 1/time^2"));
}

static void list_missing(const json_t *prof, char *out, size_t n) {
    const json_t *sim = json_object_get(prof, "sim");
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof sim_unmeasured / sizeof sim_unmeasured[0]; i++) {
        if (!json_object_get(sim, sim_unmeasured[i]) && used < n)
            used += (size_t)snprintf(out + used, n - used, "%ssim.%s", used ? ", " : "", sim_unmeasured[i]);
    }
    const json_t *hbm = json_object_get(prof, "hbm_bytes_per_s");
    if (!(json_is_number(hbm) && json_number_value(hbm) > 0) && used < n)
        snprintf(out + used, n - used, "%shbm_bytes_per_s", used ? ", " : "");
}

zb_status zb_calib_write_profile(const zb_calib *c, const char *path, char *missing, size_t n) {
    json_t *prof = json_deep_copy(c->base);
    if (!prof) return ZB_FAIL(ZB_ERR_NOMEM, "calibrate: out of memory for the profile");
    char name[64];
    const char *base_name = json_string_value(json_object_get(prof, "name"));
    snprintf(name, sizeof name, "%.30s calibrated on %.20s", base_name ? base_name : "?", c->host);
    json_object_set_new(prof, "name", json_string(name));
    put_measured(c, prof);
    json_object_set_new(prof, "calibration", calibration_json(c));
    list_missing(prof, missing, n);
    size_t len = 0;
    char *text = zb_json_dump(prof, 2, &len);
    json_decref(prof);
    if (!text) return ZB_FAIL(ZB_ERR_NOMEM, "calibrate: out of memory for the profile text");
    zb_hw_profile check;
    zb_status s = zb_hw_profile_parse(text, len, path, &check); /* it must load as any profile does */
    if (s != ZB_OK) {
        char why[ZB_ERROR_MAX];
        snprintf(why, sizeof why, "%s", zb_error_message());
        s = ZB_FAIL(ZB_ERR_INTERNAL, "calibrate: the profile built does not load: %s", why);
    }
    if (s == ZB_OK) s = zb_atomic_write(path, text, len);
    free(text);
    return s;
}
