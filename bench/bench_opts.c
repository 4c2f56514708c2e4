/* The option groups shared by several benchmarks (bench_opts.h). */
#include "bench_opts.h"

#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "parse.h"

#define TB 1099511627776.0 /* 1T: the largest size a flag takes */

bool zb_opt_given(const zb_opt_seen *seen, const zb_opt *o) {
    for (int i = 0; i < seen->n; i++) {
        if (seen->given[i] == o) return true;
    }
    return false;
}

const zb_opt zb_opt_minbytes = {"minbytes", 'b', ZB_OPT_SIZE, ZB_OPT_FIELD(min_bytes), 1, TB,
                                "smallest size in bytes (gemm: smallest M=N=K); K, M, G, T suffixes"};
const zb_opt zb_opt_maxbytes = {"maxbytes", 'e', ZB_OPT_SIZE, ZB_OPT_FIELD(max_bytes), 1, TB,
                                "largest size (gemm: largest M=N=K)"};
const zb_opt zb_opt_stepfactor = {"stepfactor", 'f', ZB_OPT_INT, ZB_OPT_FIELD(step_factor), 2, 1024,
                                  "multiply the size by this each step"};

static zb_status check_range(zb_config *cfg, const zb_opt_seen *seen) {
    (void)seen;
    if (cfg->min_bytes > cfg->max_bytes) {
        char lo[32], hi[32];
        zb_format_size(cfg->min_bytes, lo, sizeof lo);
        zb_format_size(cfg->max_bytes, hi, sizeof hi);
        return ZB_FAIL(ZB_ERR_INVALID, "-b/--minbytes %s is larger than -e/--maxbytes %s", lo, hi);
    }
    return ZB_OK;
}

static const zb_opt *const sweep_range[] = {&zb_opt_minbytes, &zb_opt_maxbytes, &zb_opt_stepfactor, NULL};
const zb_opt_group zb_opts_sweep_range = {sweep_range, check_range};

static const zb_opt opt_iters = {"iters", 'n', ZB_OPT_INT, ZB_OPT_FIELD(iters), 1, 1e7, "timed iterations per size"};
static const zb_opt opt_warmup = {"warmup_iters", 'w', ZB_OPT_INT, ZB_OPT_FIELD(warmup_iters), 0, 1e6,
                                  "untimed warm-up iterations per size"};
static const zb_opt opt_check = {"check", 'c', ZB_OPT_INT, ZB_OPT_FIELD(check), 0, 1,
                                 "1: check results from seeded data (outside the timed loop), 0: skip"};
static const zb_opt opt_dtype = {"datatype", 'd', ZB_OPT_DTYPE, ZB_OPT_FIELD(dtype), 0, 0,
                                 "float or bf16 (gemm: bf16 on GPUs only)"};
static const zb_opt opt_average = {"average", 'a', ZB_OPT_INT, ZB_OPT_FIELD(average), 0, 3,
                                   "time across ranks: 0 rank 0, 1 mean, 2 min, 3 max"};
static const zb_opt opt_direct = {
    "compare-direct", 0, ZB_OPT_FLAG, ZB_OPT_FIELD(compare_direct), 0, 0,
    "also time the library called directly on the same buffers (MPI; gemm: BLAS on cpu, cuBLASLt on cuda)"};

static const zb_opt opt_direct_rounds = {
    "direct-rounds", 0, ZB_OPT_INT, ZB_OPT_FIELD(direct_rounds), 1, 1000,
    "with --compare-direct: time the harness and the direct call alternately, this many rounds in rotated "
    "order, and report each side's best round (collectives: also the median paired overhead)"};

static const zb_opt opt_force = {
    "force", 0, ZB_OPT_FLAG, ZB_OPT_FIELD(force), 0, 0,
    "allocate even when the largest buffers per rank exceed the memory a rank has (else refused, exit 2)"};

static const zb_opt *const sweep_run[] = {&opt_iters,   &opt_warmup, &opt_check,         &opt_dtype,
                                          &opt_average, &opt_direct, &opt_direct_rounds, &opt_force, NULL};
const zb_opt_group zb_opts_sweep_run = {sweep_run, NULL};

const zb_opt zb_opt_straggler_pct = {
    "straggler-pct", 0, ZB_OPT_REAL, ZB_OPT_FIELD(straggler_pct), 0, 1e6,
    "name the ranks whose figures deviate from the median rank by more than this % (percentages: points)"};

const zb_opt zb_opt_model = {"model", 0, ZB_OPT_TEXT, ZB_OPT_FIELD(model), 0, 0,
                             "model profile (profiles/models/NAME.json)"};

/* ---- one flag's value (bench_opts.h: zb_opt_set) ----------------------------- */

/* "-b/--minbytes" or "--json": how messages name a flag. */
void zb_opt_flag_display(const zb_opt *o, char *out, size_t n) {
    if (o->short_name) {
        snprintf(out, n, "-%c/--%s", o->short_name, o->name);
    } else {
        snprintf(out, n, "--%s", o->name);
    }
}

/* At most 64 bytes of a value, so that a long one never pushes what is
 * accepted out of the one-line message (ZB_ERROR_MAX), escaped (escape.h)
 * so that a newline inside an argument keeps the message one line. */
static const char *shown(const char *value, char out[72]) { return zb_escape(value, 64, out, 72); }

static zb_status bad_value(const zb_opt *o, const char *value, const char *accepted) {
    char flag[64], v[72];
    zb_opt_flag_display(o, flag, sizeof flag);
    return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': %s", flag, shown(value, v), accepted);
}

static zb_status set_number(const zb_opt *o, const char *value, zb_config *cfg) {
    char accepted[160];
    char *field = (char *)cfg + o->offset;
    if (o->kind == ZB_OPT_SIZE) {
        uint64_t v;
        char lo[32], hi[32];
        zb_format_size((uint64_t)o->min, lo, sizeof lo);
        zb_format_size((uint64_t)o->max, hi, sizeof hi);
        snprintf(accepted, sizeof accepted, "expected a size from %s to %s bytes (e.g. 4K, 64M, 1G)", lo, hi);
        if (zb_parse_size(value, &v) != ZB_OK || (double)v < o->min || (double)v > o->max) {
            return bad_value(o, value, accepted);
        }
        memcpy(field, &v, sizeof v);
        return ZB_OK;
    }
    if (o->kind == ZB_OPT_INT) {
        int64_t v;
        snprintf(accepted, sizeof accepted, "expected an integer from %.0f to %.0f", o->min, o->max);
        if (zb_parse_int64(value, &v) != ZB_OK || (double)v < o->min || (double)v > o->max) {
            return bad_value(o, value, accepted);
        }
        if (o->size == sizeof(int64_t)) {
            memcpy(field, &v, sizeof v);
        } else { /* int-sized fields: check, average (enum) */
            int small = (int)v;
            memcpy(field, &small, sizeof small);
        }
        return ZB_OK;
    }
    double v;
    snprintf(accepted, sizeof accepted, "expected a number from %g to %g", o->min, o->max);
    if (zb_parse_double(value, &v) != ZB_OK || v < o->min || v > o->max) {
        return bad_value(o, value, accepted);
    }
    memcpy(field, &v, sizeof v);
    return ZB_OK;
}

/* N or N1,N2,...: each an integer in [min, max], at most ZB_MAX_INT_LIST. */
static zb_status set_int_list(const zb_opt *o, const char *value, zb_int_list *out) {
    char accepted[160], item[32];
    snprintf(accepted, sizeof accepted, "expected an integer from %.0f to %.0f, or a comma-separated list of "
             "at most %d such", o->min, o->max, ZB_MAX_INT_LIST);
    zb_int_list l;
    memset(&l, 0, sizeof l);
    const char *p = value;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        int64_t v;
        if (n == 0 || n >= sizeof item || l.n == ZB_MAX_INT_LIST) return bad_value(o, value, accepted);
        memcpy(item, p, n);
        item[n] = '\0';
        if (zb_parse_int64(item, &v) != ZB_OK || (double)v < o->min || (double)v > o->max) {
            return bad_value(o, value, accepted);
        }
        l.v[l.n++] = v;
        if (!comma) break;
        p = comma + 1;
    }
    *out = l;
    return ZB_OK;
}

/* Stores the index of `value` in o->choices ("a|b|c") as an int. */
static zb_status set_choice(const zb_opt *o, const char *value, char *field) {
    const char *p = o->choices;
    size_t len = strlen(value);
    for (int index = 0; p && *p; index++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && !strncmp(p, value, n)) {
            memcpy(field, &index, sizeof index);
            return ZB_OK;
        }
        p = bar ? bar + 1 : NULL;
    }
    char accepted[160] = "accepted: ";
    size_t used = strlen(accepted);
    for (const char *c = o->choices; *c && used + 3 < sizeof accepted; c++) {
        if (*c == '|') {
            accepted[used++] = ',';
            accepted[used++] = ' ';
        } else {
            accepted[used++] = *c;
        }
    }
    accepted[used] = '\0';
    return bad_value(o, value, accepted);
}

/* A flag kept for nccl-tests' command lines (coll_compat.c): its one no-op
 * value, as text or as the same integer ("01", "0x1"), or the refusal that
 * says what zerobench does instead. */
static zb_status set_accept(const zb_opt *o, const char *value) {
    int64_t got, want;
    if (o->choices && (!strcmp(value, o->choices) || (zb_parse_int64(value, &got) == ZB_OK &&
                                                      zb_parse_int64(o->choices, &want) == ZB_OK && got == want))) {
        return ZB_OK;
    }
    char accepted[256];
    if (o->choices) {
        snprintf(accepted, sizeof accepted, "%s (accepted: %s)", o->instead, o->choices);
    } else {
        snprintf(accepted, sizeof accepted, "%s; leave the flag out", o->instead);
    }
    return bad_value(o, value, accepted);
}

zb_status zb_opt_set(const zb_opt *o, const char *value, zb_config *cfg) {
    char *field = (char *)cfg + o->offset;
    switch (o->kind) {
    case ZB_OPT_SIZE:
    case ZB_OPT_INT:
    case ZB_OPT_REAL: return set_number(o, value, cfg);
    case ZB_OPT_TEXT:
        if (value[0] == '\0' || strlen(value) >= o->size) {
            char accepted[96];
            snprintf(accepted, sizeof accepted, "expected a non-empty value shorter than %zu characters", o->size);
            return bad_value(o, value, accepted);
        }
        strcpy(field, value);
        return ZB_OK;
    case ZB_OPT_ONOFF:
        if (strcmp(value, "on") && strcmp(value, "off")) return bad_value(o, value, "expected on or off");
        *(bool *)field = !strcmp(value, "on");
        return ZB_OK;
    case ZB_OPT_DTYPE: { /* every ZB_OPT_DTYPE field is a zb_dtype */
        zb_dtype t;
        if (zb_dtype_parse(value, &t) != ZB_OK) {
            return bad_value(o, value, "accepted: float, bf16 (or fp32, bfloat16)");
        }
        memcpy(field, &t, sizeof t);
        return ZB_OK;
    }
    case ZB_OPT_SHAPE:
        if (cfg->n_shapes >= ZB_MAX_SHAPES) return bad_value(o, value, "too many shapes (at most 64)");
        if (zb_parse_shape(value, cfg->shapes[cfg->n_shapes]) != ZB_OK) {
            return bad_value(o, value, "expected MxNxK with positive integers up to 2^30");
        }
        cfg->n_shapes++;
        return ZB_OK;
    case ZB_OPT_FLAG: *(bool *)field = true; return ZB_OK;
    case ZB_OPT_CHOICE: return set_choice(o, value, field);
    case ZB_OPT_INT_LIST: return set_int_list(o, value, (zb_int_list *)field);
    case ZB_OPT_ACCEPT: return set_accept(o, value);
    }
    return ZB_FAIL(ZB_ERR_INTERNAL, "unhandled option kind");
}
