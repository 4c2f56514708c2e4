/* The hardware profile zerobench calibrate writes (calib.h). All the
 * mapping from fit results to profile keys is in put_compute() and
 * put_links(): the sim's
 * cost parameters live in the profile's "sim" object (profile.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "atomic_file.h"
#include "calib.h"
#include "profile.h"
#include "report.h"

const char *const zb_calib_colls[ZB_CALIB_N_COLLS] = {"allgather", "reducescatter", "allreduce"};

static json_t *sub_object(json_t *parent, const char *key) {
    json_t *o = json_object_get(parent, key);
    if (!json_is_object(o)) {
        o = json_object();
        json_object_set_new(parent, key, o);
    }
    return o;
}

/* Writing the profile: the base's JSON, the fitted values, and one entry
 * per parameter in calibration.parameters saying where it came from. */
typedef struct calib_out {
    const zb_calib *c;
    json_t *prof, *sources, *sim, *sim_sources, *params;
    char base_name[64];
} calib_out;

static void calibrated_text(const calib_out *o, const char *what, char *text, size_t n) {
    snprintf(text, n, "calibrated on %s at %s from %s", o->c->host, o->c->date_utc, what);
}

/* One parameter's marker; rms < 0: no residual. */
static void mark(calib_out *o, const char *name, const char *status, double rms, double max) {
    json_t *e = json_pack("{s:s}", "status", status);
    if (rms >= 0) {
        json_object_set_new(e, "rms_residual_pct", zb_json_real_or_null(rms));
        json_object_set_new(e, "max_residual_pct", zb_json_real_or_null(max));
    }
    json_object_set_new(o->params, name, e);
}

/* A fitted value at key of obj (the root or sim), its source in src. */
static void put(calib_out *o, json_t *obj, json_t *src, const char *key, const char *name, json_t *value,
                const char *what, double rms, double max) {
    char text[2560];
    calibrated_text(o, what, text, sizeof text);
    json_object_set_new(obj, key, value);
    json_object_set_new(src, key, json_string(text));
    mark(o, name, "calibrated", rms, max);
}

/* Not fitted: the base's value stays, its source says it is the base's. */
static void borrow(calib_out *o, json_t *obj, json_t *src, const char *key, const char *name, bool have) {
    if (!have) {
        mark(o, name, "missing", -1, -1);
        return;
    }
    const char *old = json_string_value(json_object_get(src, key));
    char text[2048];
    snprintf(text, sizeof text, "from base profile %s (not calibrated): %s", o->base_name, old ? old : "");
    json_object_set_new(src, key, json_string(text));
    mark(o, name, "from_base", -1, -1);
}

static bool positive(const json_t *obj, const char *key) {
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) && json_number_value(v) > 0;
}

static void put_compute(calib_out *o) {
    const zb_calib *c = o->c;
    char what[1024];
    /* The per-rank peak the GEMM sweep was measured against, for its dtype;
     * a field the base leaves to measurement ("measure") is the same peak. */
    const char *peak_key = strcmp(c->dtype, "bf16") ? "fp32_flops" : "bf16_flops";
    const char *other_key = strcmp(c->dtype, "bf16") ? "bf16_flops" : "fp32_flops";
    snprintf(what, sizeof what, "the peak '%s %s' measured against (%s)", c->gemm_command, c->dtype, c->peak_source);
    put(o, o->prof, o->sources, peak_key, peak_key, json_real(c->peak_flops), what, -1, -1);
    if (json_is_string(json_object_get(o->prof, other_key))) {
        put(o, o->prof, o->sources, other_key, other_key, json_real(c->peak_flops), what, -1, -1);
    } else {
        borrow(o, o->prof, o->sources, other_key, other_key, positive(o->prof, other_key));
    }
    /* Element-wise: the measured bandwidth is the memory bandwidth itself (efficiency 1). */
    if (c->mem_try.have) {
        snprintf(what, sizeof what, "'%s': least squares of time = per-op overhead + bytes moved / bandwidth, "
                 "%d sizes", c->mem_command, c->mem.n_points);
        put(o, o->prof, o->sources, "hbm_bytes_per_s", "hbm_bytes_per_s", json_real(c->mem.bandwidth_bytes_per_s),
            what, c->mem.rms_residual_pct, c->mem.max_residual_pct);
        put(o, o->sim, o->sim_sources, "mem_efficiency", "sim.mem_efficiency", json_real(1.0),
            "the element-wise bandwidth measured is hbm_bytes_per_s itself", -1, -1);
        if (!c->gap_try.have) {
            put(o, o->sim, o->sim_sources, "op_overhead_s", "sim.op_overhead_s", json_real(c->mem.latency_s), what,
                c->mem.rms_residual_pct, c->mem.max_residual_pct);
        }
    } else {
        borrow(o, o->prof, o->sources, "hbm_bytes_per_s", "hbm_bytes_per_s", positive(o->prof, "hbm_bytes_per_s"));
        borrow(o, o->sim, o->sim_sources, "mem_efficiency", "sim.mem_efficiency",
               json_object_get(o->sim, "mem_efficiency") != NULL);
        if (!c->gap_try.have) {
            borrow(o, o->sim, o->sim_sources, "op_overhead_s", "sim.op_overhead_s",
                   json_object_get(o->sim, "op_overhead_s") != NULL);
        }
    }
    /* The per-op overhead the sim puts before each op: the step's own host time between ops when the step
     * ran (the gap of a loop of one op, the element-wise intercept, is far shorter than the step's) */
    if (c->gap_try.have) {
        snprintf(what, sizeof what, "'%s': the sync step's time outside every op record (idle_ms %.4g ms) over "
                 "its ops (ops_per_step %.4g), the host's time between ops", c->step_command, c->gap_idle_ms,
                 c->gap_ops);
        put(o, o->sim, o->sim_sources, "op_overhead_s", "sim.op_overhead_s", json_real(c->gap_s), what, -1, -1);
    }
    /* Each element-wise kernel's own efficiency over that bandwidth. */
    if (c->kern_try.have) {
        json_t *effs = json_object();
        double worst = 0;
        for (int i = 0; i < c->n_kern; i++) {
            if (zb_sim_kernel_index(c->kern[i].name) < 0) continue; /* one the sim does not price by bytes */
            json_object_set_new(effs, c->kern[i].name, json_real(c->kern[i].eff));
            worst = c->kern[i].fit.rms_residual_pct > worst ? c->kern[i].fit.rms_residual_pct : worst;
        }
        snprintf(what, sizeof what, "'%s': each kernel's bytes over %s, at two shapes, over hbm_bytes_per_s; worst "
                 "rms residual %.1f%%", c->kern_command, c->kern_device ? "the median of its calls' device records "
                 "(the per-op overhead is the gap between calls)" : "(time - per-op overhead)", worst);
        put(o, o->sim, o->sim_sources, "kernel_efficiency", "sim.kernel_efficiency", effs, what, worst, worst);
    } else if (json_object_get(o->sim, "kernel_efficiency")) {
        borrow(o, o->sim, o->sim_sources, "kernel_efficiency", "sim.kernel_efficiency", true);
    }
    /* GEMM efficiency by size, down to the sweep's smallest (the table's first entry covers below it). */
    json_t *table = json_array();
    for (int i = 0; i < c->gemm.n; i++) {
        json_array_append_new(table, json_pack("[I, f]", (json_int_t)(i ? c->gemm.dim[i] : 0), c->gemm.eff[i]));
    }
    int used = snprintf(what, sizeof what, "'%s': measured GFLOP/s of square M=N=K GEMMs over the per-rank peak, "
                        "%s; the first entry (the smallest size, %.0f) from 0", c->gemm_command, c->gemm_device
                        ? "over the median of the calls' device records" : "after the per-op overhead",
                        c->gemm.dim[0]);
    if (c->gemm_model_try.have && used > 0 && (size_t)used < sizeof what) {
        snprintf(what + used, sizeof what - (size_t)used, "; the entries at the smallest dimensions of the model's "
                 "own GEMMs from '%s' (their FLOPs over their time, rms residual %.1f%% over its shapes)",
                 c->gemm_model_command, c->gemm.model_rms_pct);
    }
    put(o, o->sim, o->sim_sources, "gemm_efficiency", "sim.gemm_efficiency", table, what, c->gemm_rms_pct,
        c->gemm_max_pct);
    const char *akey[2] = {"attention_fwd_efficiency", "attention_bwd_efficiency"};
    for (int k = 0; k < 2; k++) {
        char name[64];
        snprintf(name, sizeof name, "sim.%s", akey[k]);
        double eff = c->attn_try.have ? c->attn[k].rate / c->peak_flops : 0;
        if (c->attn_try.have && eff > 0 && eff <= 1) {
            snprintf(what, sizeof what, "'%s': causal FLOPs%s over (time - per-op overhead), over the per-rank peak",
                     c->attn_command, k ? " x 2.5" : "");
            put(o, o->sim, o->sim_sources, akey[k], name, json_real(eff), what, c->attn[k].rms_residual_pct,
                c->attn[k].max_residual_pct);
        } else {
            borrow(o, o->sim, o->sim_sources, akey[k], name, json_object_get(o->sim, akey[k]) != NULL);
        }
    }
    const char *skey[2] = {"interference", "comm_interference"};
    for (int k = 0; k < 2; k++) {
        char name[64];
        snprintf(name, sizeof name, "sim.%s", skey[k]);
        if (c->slow_try[k].have) {
            snprintf(what, sizeof what, "'%s': %s of prefetch over sync, %d pairs of steps, over the overlapped "
                     "time%s", c->step_command, k ? "comm" : "compute", c->slow[k].n_pairs,
                     c->slow[k].clamped ? " (clamped to [0, 10])" : "");
            put(o, o->sim, o->sim_sources, skey[k], name, json_real(c->slow[k].factor), what,
                c->slow[k].rms_residual_pct, c->slow[k].max_residual_pct);
        } else {
            borrow(o, o->sim, o->sim_sources, skey[k], name, json_object_get(o->sim, skey[k]) != NULL);
        }
    }
    if (c->hold_try.have) {
        snprintf(what, sizeof what, "'%s': the prefetch step's comm_hold_ms (%.4g ms), the compute a collective's "
                 "start held back (compute's gap from the collective's start to its next op, where that came "
                 "before the collective's end), over the collectives compute had work beside; median over steps "
                 "and ranks", c->step_command, c->hold_s * 1e3);
        put(o, o->sim, o->sim_sources, "comm_hold_s", "sim.comm_hold_s", json_real(c->hold_s), what, -1, -1);
    } else {
        borrow(o, o->sim, o->sim_sources, "comm_hold_s", "sim.comm_hold_s",
               json_object_get(o->sim, "comm_hold_s") != NULL);
    }
}

/* Links: the pooled fit per link class (the barrier's, and any collective
 * without its own), and each collective's own fit (sim.collectives). */
static void put_links(calib_out *o) {
    const zb_calib *c = o->c;
    json_t *lat = sub_object(o->sim, "link_latency_s");
    json_t *eff = sub_object(o->sim, "link_efficiency");
    json_t *colls = sub_object(o->sim, "collectives");
    const char *old_eff = json_string_value(json_object_get(o->sim_sources, "link_efficiency"));
    char eff_text[2048] = "";
    const char *bw_key[2] = {"nvlink_bytes_per_s", "nic_bytes_per_s"}, *lat_key[2] = {"intra_node", "inter_node"};
    char lat_text[4096] = "", what[1024], text[2560];
    const char *old_lat = json_string_value(json_object_get(o->sim_sources, "link_latency_s"));
    const char *old_coll = json_string_value(json_object_get(o->sim_sources, "collectives"));
    char coll_text[4096] = "";
    for (int pl = 0; pl < 2; pl++) {
        const zb_calib_coll_fit *f = &c->pooled[pl];
        char name[96];
        snprintf(name, sizeof name, "sim.link_latency_s.%s", lat_key[pl]);
        size_t used = strlen(lat_text);
        if (f->have) {
            snprintf(what, sizeof what, "'%s' on %d ranks %s: alpha-beta least-squares fit over all-gather, "
                     "reduce-scatter and all-reduce, rms residual %.1f%%", c->coll_command, f->ranks,
                     pl == ZB_CALIB_INTRA ? "inside one node" : "across nodes", f->fit.rms_residual_pct);
            put(o, o->prof, o->sources, bw_key[pl], bw_key[pl], json_real(f->fit.bandwidth_bytes_per_s), what,
                f->fit.rms_residual_pct, f->fit.max_residual_pct);
            if (pl == ZB_CALIB_INTER) {
                /* The fit is the bus bandwidth a rank measured across nodes, its
                 * node's NICs included: the sim must not multiply it by them. */
                json_object_set_new(o->prof, "nics_per_node", json_integer(1));
                json_object_set_new(o->sources, "nics_per_node",
                                    json_string("calibrated: nic_bytes_per_s is the bus bandwidth measured "
                                                "across nodes, all of a node's NICs together, so counted as one"));
            }
            json_object_set_new(lat, lat_key[pl], json_real(f->fit.latency_s));
            /* the fitted bandwidth is the rate the data moved at: no protocol share to take off */
            json_object_set_new(eff, lat_key[pl], json_real(1.0));
            size_t e_used = strlen(eff_text);
            snprintf(eff_text + e_used, sizeof eff_text - e_used, "%s%s: 1, calibrated (%s is the rate the "
                     "collectives' data moved at)", e_used ? "; " : "", lat_key[pl], bw_key[pl]);
            mark(o, name, "calibrated", f->fit.rms_residual_pct, f->fit.max_residual_pct);
            calibrated_text(o, what, text, sizeof text);
        } else {
            bool have = json_object_get(lat, lat_key[pl]) != NULL;
            borrow(o, o->prof, o->sources, bw_key[pl], bw_key[pl], positive(o->prof, bw_key[pl]));
            mark(o, name, have ? "from_base" : "missing", -1, -1);
            snprintf(text, sizeof text, have ? "from base profile %s (not calibrated): %s" : "", o->base_name,
                     old_lat ? old_lat : "");
            if (json_object_get(eff, lat_key[pl])) {
                size_t e_used = strlen(eff_text);
                snprintf(eff_text + e_used, sizeof eff_text - e_used, "%s%s: from base profile %s (not "
                         "calibrated): %s", e_used ? "; " : "", lat_key[pl], o->base_name, old_eff ? old_eff : "");
            }
        }
        if (text[0]) snprintf(lat_text + used, sizeof lat_text - used, "%s%s: %s", used ? "; " : "", lat_key[pl], text);
        for (int k = 0; k < ZB_CALIB_N_COLLS; k++) {
            const zb_calib_coll_fit *g = &c->coll[pl][k];
            json_t *per = sub_object(colls, zb_calib_colls[k]);
            snprintf(name, sizeof name, "sim.collectives.%s.%s", zb_calib_colls[k], lat_key[pl]);
            used = strlen(coll_text);
            if (g->have) {
                json_object_set_new(per, lat_key[pl], json_pack("{s:f, s:f}", "latency_s", g->fit.latency_s,
                                                                "bandwidth_bytes_per_s", g->fit.bandwidth_bytes_per_s));
                mark(o, name, "calibrated", g->fit.rms_residual_pct, g->fit.max_residual_pct);
                snprintf(coll_text + used, sizeof coll_text - used, "%s%s %s: calibrated on %s at %s from '%s' on "
                         "%d ranks, rms residual %.1f%%", used ? "; " : "", zb_calib_colls[k], lat_key[pl], c->host,
                         c->date_utc, c->coll_command, g->ranks, g->fit.rms_residual_pct);
            } else {
                bool have = json_object_get(per, lat_key[pl]) != NULL;
                mark(o, name, have ? "from_base" : "missing", -1, -1);
                if (have) {
                    snprintf(coll_text + used, sizeof coll_text - used, "%s%s %s: from base profile %s (not "
                             "calibrated): %s", used ? "; " : "", zb_calib_colls[k], lat_key[pl], o->base_name,
                             old_coll ? old_coll : "");
                }
            }
            if (!json_object_size(per)) json_object_del(colls, zb_calib_colls[k]);
        }
    }
    if (lat_text[0]) json_object_set_new(o->sim_sources, "link_latency_s", json_string(lat_text));
    if (eff_text[0]) json_object_set_new(o->sim_sources, "link_efficiency", json_string(eff_text));
    if (!json_object_size(eff)) {
        json_object_del(o->sim, "link_efficiency");
        json_object_del(o->sim_sources, "link_efficiency");
    }
    if (coll_text[0]) json_object_set_new(o->sim_sources, "collectives", json_string(coll_text));
    if (!json_object_size(lat)) json_object_del(o->sim, "link_latency_s");
    if (!json_object_size(colls)) json_object_del(o->sim, "collectives");
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
        json_array_append_new(gemm, json_pack("{s:I, s:o, s:o, s:b, s:b, s:b}", "dim", (json_int_t)c->gemm.dim[i],
                                              "time_s", zb_json_real_or_null(c->gemm.time_s[i]), "efficiency",
                                              zb_json_real_or_null(c->gemm.eff[i]), "clamped_to_1",
                                              c->gemm.clamped[i], "capped_by_larger", c->gemm.capped[i],
                                              "from_model_shapes", c->gemm.from_model[i]));
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
    json_t *extra = json_object();
    json_object_set_new(extra, "threads_per_rank", json_integer(c->threads));
    json_object_set_new(extra, "memory", c->mem_try.have
        ? json_pack("{s:s, s:i, s:o, s:o, s:o, s:o}", "command", c->mem_command, "points", c->mem.n_points,
                    "overhead_s", zb_json_real_or_null(c->mem.latency_s), "bandwidth_bytes_per_s",
                    zb_json_real_or_null(c->mem.bandwidth_bytes_per_s), "rms_residual_pct",
                    zb_json_real_or_null(c->mem.rms_residual_pct), "max_residual_pct",
                    zb_json_real_or_null(c->mem.max_residual_pct))
        : json_pack("{s:s, s:s}", "command", c->mem_command, "not_fitted", c->mem_try.why_not));
    json_t *attn = json_pack("{s:s}", "command", c->attn_command);
    if (!c->attn_try.have) json_object_set_new(attn, "not_fitted", json_string(c->attn_try.why_not));
    for (int k = 0; c->attn_try.have && k < 2; k++) {
        json_object_set_new(attn, k ? "bwd" : "fwd",
                            json_pack("{s:i, s:o, s:o, s:o}", "points", c->attn[k].n_points, "efficiency",
                                      zb_json_real_or_null(c->attn[k].rate / c->peak_flops), "rms_residual_pct",
                                      zb_json_real_or_null(c->attn[k].rms_residual_pct), "max_residual_pct",
                                      zb_json_real_or_null(c->attn[k].max_residual_pct)));
    }
    json_object_set_new(extra, "attention", attn);
    /* the overhead the kernel fits subtracted: none from device records (the gap between calls is the overhead) */
    json_t *kern = json_pack("{s:s, s:b, s:f}", "command", c->kern_command, "device_times", c->kern_device,
                             "fit_overhead_s", c->kern_device || !c->mem_try.have ? 0.0 : c->mem.latency_s);
    if (!c->kern_try.have) json_object_set_new(kern, "not_fitted", json_string(c->kern_try.why_not));
    for (int i = 0; c->kern_try.have && i < c->n_kern; i++) {
        const zb_calib_kernel *k = &c->kern[i];
        json_t *pts = json_array();
        for (int j = 0; j < k->n; j++) {
            json_array_append_new(pts, json_pack("{s:o, s:o}", "bytes", zb_json_real_or_null(k->bytes[j]), "time_s",
                                                 zb_json_real_or_null(k->time_s[j])));
        }
        json_object_set_new(kern, k->name, json_pack("{s:o, s:o, s:b, s:o, s:o}", "points", pts, "efficiency",
                                                     zb_json_real_or_null(k->eff), "clamped", k->clamped,
                                                     "rms_residual_pct", zb_json_real_or_null(k->fit.rms_residual_pct),
                                                     "max_residual_pct",
                                                     zb_json_real_or_null(k->fit.max_residual_pct)));
    }
    json_object_set_new(extra, "kernels", kern);
    json_object_set_new(extra, "op_gap", c->gap_try.have
        ? json_pack("{s:s, s:f, s:f, s:f}", "command", c->step_command, "idle_ms", c->gap_idle_ms, "ops_per_step",
                    c->gap_ops, "op_overhead_s", c->gap_s)
        : json_pack("{s:s}", "not_fitted", c->gap_try.why_not[0] ? c->gap_try.why_not : "one rank: no step run"));
    json_object_set_new(extra, "comm_hold", c->hold_try.have
        ? json_pack("{s:s, s:f}", "command", c->step_command, "comm_hold_s", c->hold_s)
        : json_pack("{s:s, s:s}", "command", c->step_command, "not_fitted",
                    c->hold_try.why_not[0] ? c->hold_try.why_not : "one rank: no step run"));
    const char *skey[2] = {"compute_beside_comm", "comm_beside_compute"};
    for (int k = 0; k < 2; k++) {
        json_object_set_new(extra, skey[k], c->slow_try[k].have
            ? json_pack("{s:s, s:i, s:o, s:b, s:o, s:o}", "command", c->step_command, "pairs", c->slow[k].n_pairs,
                        "factor", zb_json_real_or_null(c->slow[k].factor), "clamped", c->slow[k].clamped,
                        "rms_residual_pct", zb_json_real_or_null(c->slow[k].rms_residual_pct), "max_residual_pct",
                        zb_json_real_or_null(c->slow[k].max_residual_pct))
            : json_pack("{s:s, s:s}", "command", c->step_command, "not_fitted",
                        c->slow_try[k].why_not[0] ? c->slow_try[k].why_not : "one rank: no comm"));
    }
    json_object_set_new(extra, "gemm_model", c->gemm_model_try.have
        ? json_pack("{s:s, s:o, s:o}", "command", c->gemm_model_command, "rms_residual_pct",
                    zb_json_real_or_null(c->gemm.model_rms_pct), "max_residual_pct",
                    zb_json_real_or_null(c->gemm.model_max_pct))
        : json_pack("{s:s, s:s}", "command", c->gemm_model_command, "not_fitted", c->gemm_model_try.why_not));
    json_object_set_new(extra, "gemm_residual", json_pack("{s:o, s:o}", "rms_pct", zb_json_real_or_null(c->gemm_rms_pct),
                                                          "max_pct", zb_json_real_or_null(c->gemm_max_pct)));
    json_t *out = json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:s, s:s, s:s, s:o, s:s, s:o, s:f, s:o, s:o}", "host", c->host,
                     "date_utc", c->date_utc, "backend", c->backend, "comm", c->comm, "nodes", c->nodes,
                     "gpus_per_node", c->gpus_per_node, "base_profile", c->base_path, "gemm_command",
                     c->gemm_command, "coll_command", c->coll_command, "peak_flops",
                     zb_json_real_or_null(c->peak_flops), "peak_source", c->peak_source, "gemm", gemm,
                     "gemm_overhead_s", c->gemm.overhead_s, "collectives", colls, "model",
                     json_string("collective time = steps x latency + bytes sent per rank / bandwidth (ring: "
                                 "n-1 steps, all-reduce 2(n-1)); least squares weighted by 1/time^2"));
    json_object_update(out, extra);
    json_decref(extra);
    return out;
}

/* The names of the parameters with `status`, joined with ", ". */
static void list_status(const json_t *params, const char *status, char *out, size_t n) {
    size_t used = 0;
    const char *key;
    const json_t *e;
    out[0] = '\0';
    json_object_foreach((json_t *)params, key, e) {
        const char *st = json_string_value(json_object_get(e, "status"));
        if (st && !strcmp(st, status) && used < n) used += (size_t)snprintf(out + used, n - used, "%s%s",
                                                                          used ? ", " : "", key);
    }
}

zb_status zb_calib_write_profile(const zb_calib *c, const char *path, char *missing, char *borrowed, size_t n) {
    json_t *prof = json_deep_copy(c->base);
    if (!prof) return ZB_FAIL(ZB_ERR_NOMEM, "calibrate: out of memory for the profile");
    calib_out o = {c, prof, sub_object(prof, "sources"), sub_object(prof, "sim"), NULL, json_object(), ""};
    o.sim_sources = sub_object(o.sim, "sources");
    char name[64];
    const char *base_name = json_string_value(json_object_get(prof, "name"));
    snprintf(o.base_name, sizeof o.base_name, "%s", base_name ? base_name : "?");
    snprintf(name, sizeof name, "%.30s calibrated on %.20s", o.base_name, c->host);
    json_object_set_new(prof, "name", json_string(name));
    put_compute(&o);
    put_links(&o);
    list_status(o.params, "missing", missing, n);
    list_status(o.params, "from_base", borrowed, n);
    json_t *cal = calibration_json(c);
    json_object_set_new(cal, "parameters", o.params);
    json_object_set_new(prof, "calibration", cal);
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
