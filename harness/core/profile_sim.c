/* The sim's cost parameters in a hardware profile: the optional "sim" object
 * (profile.h lists its fields), its validation when the profile is loaded,
 * and the check, when the sim starts, that the parameters it needs are
 * there. A profile without "sim" loads as before: only the sim needs it. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "out_path.h"
#include "profile.h"

/* "file: field "sim.<key>": expected ..., got <value>" */
static zb_status bad(const char *file, const char *key, const char *expected, const json_t *got) {
    char desc[48] = "nothing";
    if (json_is_number(got)) snprintf(desc, sizeof desc, "%.6g", json_number_value(got));
    else if (json_is_string(got)) snprintf(desc, sizeof desc, "a string");
    else if (json_is_array(got)) snprintf(desc, sizeof desc, "an array");
    else if (json_is_object(got)) snprintf(desc, sizeof desc, "an object");
    else if (got) snprintf(desc, sizeof desc, "%s", json_is_null(got) ? "null" : "a boolean");
    return ZB_FAIL(ZB_ERR_INVALID, "%s: field \"sim.%s\": expected %s, got %s", file, key, expected, desc);
}

/* obj's `key`, when present, a number in [lo, hi] (lo_open: > lo); `shown`
 * names it in messages (NULL: key). */
static zb_status number_at(const char *file, const json_t *obj, const char *key, const char *shown, double lo,
                           bool lo_open, double hi, const char *expected, double *out, bool *given) {
    const json_t *v = json_object_get(obj, key);
    *given = v != NULL;
    if (!v) return ZB_OK;
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    bool ok = isfinite(x) && (lo_open ? x > lo : x >= lo) && x <= hi;
    if (!ok) return bad(file, shown ? shown : key, expected, v);
    *out = x;
    return ZB_OK;
}

static zb_status number(const char *file, const json_t *obj, const char *key, double lo, bool lo_open, double hi,
                        const char *expected, double *out, bool *given) {
    return number_at(file, obj, key, NULL, lo, lo_open, hi, expected, out, given);
}

static zb_status gemm_table(const char *file, const json_t *v, zb_hw_sim *s) {
    const char *expected = "a non-empty array of at most 16 [min_dim, efficiency] pairs, min_dim an "
                           "integer >= 0 increasing, efficiency in (0, 1]";
    size_t n = json_is_array(v) ? json_array_size(v) : 0;
    if (n == 0 || n > ZB_SIM_MAX_GEMM_EFF) return bad(file, "gemm_efficiency", expected, v);
    for (size_t i = 0; i < n; i++) {
        const json_t *pair = json_array_get(v, i);
        const json_t *d = json_array_get(pair, 0), *e = json_array_get(pair, 1);
        double dim = json_is_integer(d) ? (double)json_integer_value(d) : -1.0;
        double eff = json_is_number(e) ? json_number_value(e) : NAN;
        bool ok = json_is_array(pair) && json_array_size(pair) == 2 && dim >= 0 && isfinite(eff) && eff > 0 &&
                  eff <= 1 && (i == 0 || dim > s->gemm_min_dim[i - 1]);
        if (!ok) {
            char key[48];
            snprintf(key, sizeof key, "gemm_efficiency[%zu]", i);
            return bad(file, key, expected, pair);
        }
        s->gemm_min_dim[i] = dim;
        s->gemm_eff[i] = eff;
    }
    s->n_gemm_eff = (int)n;
    s->have |= ZB_SIM_GEMM_EFFICIENCY;
    return ZB_OK;
}

static zb_status latencies(const char *file, const json_t *v, zb_hw_sim *s) {
    if (!json_is_object(v)) {
        return bad(file, "link_latency_s", "an object {\"intra_node\": seconds, \"inter_node\": seconds}", v);
    }
    bool given = false;
    ZB_TRY(number_at(file, v, "intra_node", "link_latency_s.intra_node", 0, false, 1.0, "seconds in [0, 1]",
                     &s->latency_intra_s, &given));
    if (given) s->have |= ZB_SIM_LATENCY_INTRA;
    ZB_TRY(number_at(file, v, "inter_node", "link_latency_s.inter_node", 0, false, 1.0, "seconds in [0, 1]",
                     &s->latency_inter_s, &given));
    if (given) s->have |= ZB_SIM_LATENCY_INTER;
    return ZB_OK;
}

/* "link_efficiency": {"intra_node": e, "inter_node": e}, each in (0, 1]. */
static zb_status link_effs(const char *file, const json_t *v, zb_hw_sim *s) {
    if (!json_is_object(v)) {
        return bad(file, "link_efficiency", "an object {\"intra_node\": fraction, \"inter_node\": fraction}", v);
    }
    bool given = false;
    ZB_TRY(number_at(file, v, "intra_node", "link_efficiency.intra_node", 0, true, 1.0, "a number in (0, 1]",
                     &s->link_eff[0], &given));
    if (given) s->have |= ZB_SIM_LINK_EFFICIENCY;
    ZB_TRY(number_at(file, v, "inter_node", "link_efficiency.inter_node", 0, true, 1.0, "a number in (0, 1]",
                     &s->link_eff[1], &given));
    if (given) s->have |= ZB_SIM_LINK_EFFICIENCY;
    return ZB_OK;
}

/* "collectives": {"<coll>": {"<link>": {"latency_s", "bandwidth_bytes_per_s"}}}. */
static zb_status collectives(const char *file, const json_t *v, zb_hw_sim *s) {
    static const char *const colls[3] = {"allgather", "reducescatter", "allreduce"};
    static const char *const links[2] = {"intra_node", "inter_node"};
    const char *expected = "an object {\"allgather\"|\"reducescatter\"|\"allreduce\": {\"intra_node\"|"
                           "\"inter_node\": {\"latency_s\": seconds, \"bandwidth_bytes_per_s\": bytes/s}}}";
    if (!json_is_object(v)) return bad(file, "collectives", expected, v);
    const char *key;
    const json_t *per;
    json_object_foreach((json_t *)v, key, per) {
        int k = -1;
        for (int i = 0; i < 3; i++) k = strcmp(key, colls[i]) ? k : i;
        char shown[96];
        snprintf(shown, sizeof shown, "collectives.%.40s", key);
        if (k < 0 || !json_is_object(per)) return bad(file, shown, expected, per);
        for (int pl = 0; pl < 2; pl++) {
            const json_t *fit = json_object_get(per, links[pl]);
            if (!fit) continue;
            char lat[128], bw[128];
            snprintf(lat, sizeof lat, "%s.%s.latency_s", shown, links[pl]);
            snprintf(bw, sizeof bw, "%s.%s.bandwidth_bytes_per_s", shown, links[pl]);
            bool g1 = false, g2 = false;
            ZB_TRY(number_at(file, fit, "latency_s", lat, 0, false, 1.0, "seconds in [0, 1]",
                             &s->coll_latency_s[k][pl], &g1));
            ZB_TRY(number_at(file, fit, "bandwidth_bytes_per_s", bw, 0, true, 1e15, "bytes/s in (0, 1e15]",
                             &s->coll_bw[k][pl], &g2));
            if (!g1 || !g2) return bad(file, g1 ? bw : lat, "a number (latency_s and bandwidth_bytes_per_s go "
                                       "together)", NULL);
            s->have |= ZB_SIM_COLLECTIVES;
        }
    }
    return ZB_OK;
}

const char *const zb_sim_kernel_names[ZB_SIM_N_KERNELS] = {
    "embedding_fwd", "embedding_bwd", "rmsnorm_fwd",  "rmsnorm_bwd",       "rope_fwd",
    "rope_bwd",      "swiglu_fwd",    "swiglu_bwd",   "residual_fwd",      "accumulate",
    "cross_entropy_fwd", "cross_entropy_bwd", "adamw", "fill",            "cast"};

int zb_sim_kernel_index(const char *name) {
    for (int i = 0; name && i < ZB_SIM_N_KERNELS; i++) {
        if (!strcmp(name, zb_sim_kernel_names[i])) return i;
    }
    return -1;
}

/* "kernel_efficiency": {"<kernel>": eff}, each kernel one the sim prices by its bytes. */
static zb_status kernel_effs(const char *file, const json_t *v, zb_hw_sim *s) {
    const char *expected = "an object {\"<kernel>\": efficiency in (0, 10]}, the kernels: embedding_fwd, "
                           "embedding_bwd, rmsnorm_fwd, rmsnorm_bwd, rope_fwd, rope_bwd, swiglu_fwd, swiglu_bwd, "
                           "residual_fwd, accumulate, cross_entropy_fwd, cross_entropy_bwd, adamw, fill, cast";
    if (!json_is_object(v)) return bad(file, "kernel_efficiency", expected, v);
    const char *key;
    const json_t *e;
    json_object_foreach((json_t *)v, key, e) {
        int k = zb_sim_kernel_index(key);
        char shown[96];
        snprintf(shown, sizeof shown, "kernel_efficiency.%.40s", key);
        if (k < 0) return bad(file, shown, expected, e);
        bool given = false;
        ZB_TRY(number_at(file, v, key, shown, 0, true, 10, "a number in (0, 10]", &s->kernel_eff[k], &given));
        s->have |= ZB_SIM_KERNEL_EFFICIENCY;
    }
    return ZB_OK;
}

/* Each parameter given names its source in sim.sources. */
static zb_status sources(const char *file, const json_t *sim, unsigned have) {
    static const struct {
        unsigned bits;
        const char *key;
    } params[] = {{ZB_SIM_GEMM_EFFICIENCY, "gemm_efficiency"},
                  {ZB_SIM_MEM_EFFICIENCY, "mem_efficiency"},
                  {ZB_SIM_ATTENTION_EFFICIENCY, "attention_fwd_efficiency"},
                  {ZB_SIM_ATTENTION_EFFICIENCY, "attention_bwd_efficiency"},
                  {ZB_SIM_LATENCY_INTRA | ZB_SIM_LATENCY_INTER, "link_latency_s"},
                  {ZB_SIM_LINK_EFFICIENCY, "link_efficiency"},
                  {ZB_SIM_INTERFERENCE, "interference"},
                  {ZB_SIM_COMM_INTERFERENCE, "comm_interference"},
                  {ZB_SIM_COMM_HOLD, "comm_hold_s"},
                  {ZB_SIM_COLLECTIVES, "collectives"},
                  {ZB_SIM_KERNEL_EFFICIENCY, "kernel_efficiency"},
                  {ZB_SIM_ELEMENTWISE, "elementwise"},
                  {ZB_SIM_OP_OVERHEAD, "op_overhead_s"}};
    const json_t *src = json_object_get(sim, "sources");
    if (have && !json_is_object(src)) {
        return bad(file, "sources", "an object naming the source of each sim parameter given", src);
    }
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        if (!(have & params[i].bits)) continue;
        const json_t *v = json_object_get(src, params[i].key);
        if (!json_is_string(v) || json_string_length(v) == 0) {
            char key[64];
            snprintf(key, sizeof key, "sources.%s", params[i].key);
            return bad(file, key, "a non-empty string naming the source", v);
        }
    }
    return ZB_OK;
}

zb_status zb_hw_sim_parse(const void *json_root, const char *file, zb_hw_sim *out) {
    memset(out, 0, sizeof *out);
    const json_t *sim = json_object_get((const json_t *)json_root, "sim");
    if (!sim) return ZB_OK;
    if (!json_is_object(sim)) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s: field \"sim\": expected an object of the sim's cost parameters", file);
    }
    zb_hw_sim s;
    memset(&s, 0, sizeof s);
    const json_t *g = json_object_get(sim, "gemm_efficiency");
    if (g) ZB_TRY(gemm_table(file, g, &s));
    bool given = false;
    ZB_TRY(number(file, sim, "mem_efficiency", 0, true, 1, "a number in (0, 1]", &s.mem_efficiency, &given));
    if (given) s.have |= ZB_SIM_MEM_EFFICIENCY;
    bool fwd_given = false, bwd_given = false;
    ZB_TRY(number(file, sim, "attention_fwd_efficiency", 0, true, 1, "a number in (0, 1]",
                  &s.attention_fwd_efficiency, &fwd_given));
    ZB_TRY(number(file, sim, "attention_bwd_efficiency", 0, true, 1, "a number in (0, 1]",
                  &s.attention_bwd_efficiency, &bwd_given));
    if (fwd_given != bwd_given) {
        const char *missing = fwd_given ? "attention_bwd_efficiency" : "attention_fwd_efficiency";
        return ZB_FAIL(ZB_ERR_INVALID, "%s: field \"sim.%s\": missing (attention_fwd_efficiency and "
                       "attention_bwd_efficiency go together)", file, missing);
    }
    if (json_object_get(sim, "attention_efficiency")) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s: field \"sim.attention_efficiency\": replaced by "
                       "attention_fwd_efficiency and attention_bwd_efficiency (fused attention, "
                       "costed over its causal FLOPs)", file);
    }
    if (fwd_given) s.have |= ZB_SIM_ATTENTION_EFFICIENCY;
    const json_t *lat = json_object_get(sim, "link_latency_s");
    if (lat) ZB_TRY(latencies(file, lat, &s));
    s.link_eff[0] = s.link_eff[1] = 1.0; /* line rate unless given */
    const json_t *leff = json_object_get(sim, "link_efficiency");
    if (leff) ZB_TRY(link_effs(file, leff, &s));
    ZB_TRY(number(file, sim, "interference", 0, false, 10, "a number in [0, 10]", &s.interference, &given));
    if (given) s.have |= ZB_SIM_INTERFERENCE;
    ZB_TRY(number(file, sim, "comm_interference", 0, false, 10, "a number in [0, 10]", &s.comm_interference,
                  &given));
    if (given) s.have |= ZB_SIM_COMM_INTERFERENCE;
    ZB_TRY(number(file, sim, "comm_hold_s", 0, false, 1, "seconds in [0, 1]", &s.comm_hold_s, &given));
    if (given) s.have |= ZB_SIM_COMM_HOLD;
    const json_t *colls = json_object_get(sim, "collectives");
    if (colls) ZB_TRY(collectives(file, colls, &s));
    const json_t *keff = json_object_get(sim, "kernel_efficiency");
    if (keff) ZB_TRY(kernel_effs(file, keff, &s));
    const json_t *ew = json_object_get(sim, "elementwise");
    if (ew) {
        const char *v = json_string_value(ew);
        if (!v) return bad(file, "elementwise", "\"fused\" or \"eager\"", ew);
        if (strcmp(v, "fused") && strcmp(v, "eager")) {
            char shown[72];
            return ZB_FAIL(ZB_ERR_INVALID, "%s: field \"sim.elementwise\": expected \"fused\" or \"eager\", got "
                           "'%s'", file, zb_shown_path(v, shown));
        }
        s.eager_elementwise = !strcmp(v, "eager");
        s.have |= ZB_SIM_ELEMENTWISE;
    }
    ZB_TRY(number(file, sim, "op_overhead_s", 0, false, 1, "seconds in [0, 1]", &s.op_overhead_s, &given));
    if (given) s.have |= ZB_SIM_OP_OVERHEAD;
    ZB_TRY(sources(file, sim, s.have));
    *out = s;
    return ZB_OK;
}

zb_status zb_hw_sim_require(const zb_hw_profile *hw, unsigned needs) {
    static const struct {
        unsigned bit;
        const char *what;
    } params[] = {{ZB_SIM_GEMM_EFFICIENCY, "sim.gemm_efficiency"},
                  {ZB_SIM_MEM_EFFICIENCY, "sim.mem_efficiency"},
                  {ZB_SIM_ATTENTION_EFFICIENCY, "sim.attention_fwd_efficiency"},
                  {ZB_SIM_LATENCY_INTRA, "sim.link_latency_s.intra_node"},
                  {ZB_SIM_LATENCY_INTER, "sim.link_latency_s.inter_node"},
                  {ZB_SIM_INTERFERENCE, "sim.interference"},
                  {ZB_SIM_OP_OVERHEAD, "sim.op_overhead_s"}};
    const char *file = hw->path[0] ? hw->path : "<profile>";
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        if ((needs & params[i].bit) && !(hw->sim.have & params[i].bit)) {
            return ZB_FAIL(ZB_ERR_INVALID, "hardware profile '%s' (%s): the sim needs %s, which it does not give "
                           "(docs/design.md §6)", hw->name, file, params[i].what);
        }
    }
    const struct {
        unsigned bit;
        const char *what;
        double v;
    } fields[] = {{ZB_SIM_NEEDS_PEAKS, "bf16_flops", hw->bf16_flops},
                  {ZB_SIM_NEEDS_PEAKS, "fp32_flops", hw->fp32_flops},
                  {ZB_SIM_NEEDS_HBM, "hbm_bytes_per_s", hw->hbm_bytes_per_s},
                  {ZB_SIM_NEEDS_NVLINK, "nvlink_bytes_per_s", hw->nvlink_bytes_per_s},
                  {ZB_SIM_NEEDS_NIC, "nic_bytes_per_s", hw->nic_bytes_per_s}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if ((needs & fields[i].bit) && !(fields[i].v > 0)) {
            return ZB_FAIL(ZB_ERR_INVALID, "hardware profile '%s' (%s): the sim needs %s as a positive number "
                           "(it is %s)", hw->name, file, fields[i].what,
                           fields[i].v == 0 ? "0 or \"measure\"" : "not positive");
        }
    }
    return ZB_OK;
}

double zb_hw_sim_gemm_eff(const zb_hw_sim *s, double min_dim) {
    if (s->n_gemm_eff <= 0) return 0.0;
    double eff = s->gemm_eff[0];
    for (int i = 1; i < s->n_gemm_eff && s->gemm_min_dim[i] <= min_dim; i++) eff = s->gemm_eff[i];
    return eff;
}

double zb_hw_sim_kernel_eff(const zb_hw_sim *s, const char *name) {
    int k = zb_sim_kernel_index(name);
    return k >= 0 && s->kernel_eff[k] > 0 ? s->kernel_eff[k] : s->mem_efficiency;
}
