/* Judging acceptance checks (accept.h): a metric against its threshold over
 * the runs a check selects, stragglers from the runs' per-rank figures, and
 * the devices a node shows. Pure over the results documents, so the tests
 * judge synthetic results; accept.c runs the benchmarks.
 *
 * Every selected run is judged on its own (a bandwidth check at >= 256 MiB
 * judges each size and placement, never their average) and the check
 * reports the worst; repeats of a run are combined first, by best or median. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accept.h"
#include "registry.h"
#include "run_identity.h"
#include "stragglers.h"

void zb_check_outcome_clear(zb_check_outcome *o) {
    json_decref(o->culprit_list);
    memset(o, 0, sizeof *o);
}

double zb_accept_margin_pct(const zb_accept_check *c, double value) {
    /* a straggler's threshold is a maximum deviation */
    bool is_min = c->kind == ZB_CHECK_METRIC && c->is_min;
    return is_min ? 100.0 * (value / c->threshold - 1.0) : 100.0 * (1.0 - value / c->threshold);
}

/* Ranks (or nodes) a straggler check groups: past this it cannot judge. */
#define ZB_ACCEPT_MAX_GROUPS 1024

/* The run's and accept's median over ranks are one function (stragglers.h). */
static double median_of(const double *v, int n) { return zb_rank_median(v, n); }

/* Best of repeats: the highest for a minimum, the lowest for a maximum. */
static double combine(const double *v, int n, zb_judge judge, bool higher_is_best) {
    if (judge == ZB_JUDGE_MEDIAN) return median_of(v, n);
    double b = v[0];
    for (int i = 1; i < n; i++) b = higher_is_best ? fmax(b, v[i]) : fmin(b, v[i]);
    return b;
}

static bool run_selected(const zb_accept_check *c, const json_t *run) {
    const char *bench = json_string_value(json_object_get(run, "bench"));
    if (!bench || strcmp(bench, c->bench)) return false;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)c->where, k, v) {
        const json_t *x = json_object_get(run, k);
        if (!x || !json_equal(x, v)) return false;
    }
    if (c->min_size_bytes > 0) {
        const json_t *sz = json_object_get(run, "size_bytes");
        if (!json_is_integer(sz) || json_integer_value(sz) < c->min_size_bytes) return false;
    }
    return true;
}

static void say_selection(const zb_accept_check *c, char *out, size_t n) {
    char *w = c->where ? json_dumps(c->where, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    snprintf(out, n, "no %s run in the results matches the check (where %s, size_bytes >= %lld)", c->bench,
             w ? w : "{}", (long long)c->min_size_bytes);
    free(w);
}

/* The index in docs[r]'s runs of the partner of docs[0]'s run i, or -1. */
static long partner(json_t *const *docs, int r, size_t i) {
    const json_t *r0 = json_object_get(docs[0], "runs"), *rr = json_object_get(docs[r], "runs");
    if (r == 0) return (long)i;
    size_t n0 = json_array_size(r0), n_pairs;
    long *pair = (long *)malloc((n0 ? n0 : 1) * sizeof *pair);
    long j = -1;
    if (pair && zb_run_pair(r0, rr, pair, &n_pairs)) j = pair[i];
    free(pair);
    return j;
}

static void judge_metric(const zb_accept_check *c, json_t *const *docs, int n_docs, zb_check_outcome *o) {
    const json_t *runs0 = json_object_get(docs[0], "runs");
    size_t n_sel = 0, n_bad = 0;
    bool have_worst = false;
    for (size_t i = 0; i < json_array_size(runs0); i++) {
        if (!run_selected(c, json_array_get(runs0, i))) continue;
        n_sel++;
        double v[ZB_ACCEPT_MAX_REPEAT];
        int nv = 0;
        for (int r = 0; r < n_docs; r++) {
            long j = partner(docs, r, i);
            if (j < 0) continue;
            const json_t *run = json_array_get(json_object_get(docs[r], "runs"), (size_t)j);
            if (zb_metric_value(json_object_get(run, "metrics"), c->metric, &v[nv])) nv++;
        }
        char label[160];
        zb_run_label(json_array_get(runs0, i), label, sizeof label);
        if (nv == 0) {
            o->verdict = ZB_CHECK_FAIL;
            snprintf(o->reason, sizeof o->reason, "%s was not measured (null or absent) in %s", c->metric, label);
            snprintf(o->where, sizeof o->where, "%s", label);
            o->have_value = false;
            return;
        }
        double x = combine(v, nv, c->judge, c->is_min);
        bool ok = c->is_min ? x >= c->threshold : x <= c->threshold;
        n_bad += !ok;
        bool worse = !have_worst || (c->is_min ? x < o->value : x > o->value);
        if (worse) {
            have_worst = true;
            o->value = x;
            o->n_values = nv;
            memcpy(o->values, v, (size_t)nv * sizeof *v);
            snprintf(o->where, sizeof o->where, "%s", label);
        }
    }
    if (!n_sel) {
        o->verdict = ZB_CHECK_FAIL;
        say_selection(c, o->reason, sizeof o->reason);
        return;
    }
    o->have_value = true;
    o->verdict = n_bad ? ZB_CHECK_FAIL : ZB_CHECK_PASS;
    if (n_bad) {
        snprintf(o->reason, sizeof o->reason, "%zu of %zu judged run(s) %s the threshold; the worst is %s", n_bad,
                 n_sel, c->is_min ? "below" : "above", o->where);
    }
}

/* ---- stragglers --------------------------------------------------------- */

typedef struct group_val {
    long id;       /* rank or node */
    char host[64];
    double value;  /* the rank's figure, or the mean of the node's ranks */
    int n;
} group_val;

typedef struct run_dev {
    double deviation_pct, median;
    group_val groups[ZB_ACCEPT_MAX_GROUPS];
    int n_groups;
    char label[160];
} run_dev;

/* Groups run's per_rank entries by rank or node; a false return says why in `why`. */
static bool per_rank_groups(const zb_accept_check *c, const json_t *run, run_dev *d, char *why, size_t n) {
    const json_t *pr = json_object_get(run, "per_rank");
    zb_run_label(run, d->label, sizeof d->label);
    d->n_groups = 0;
    if (!json_is_array(pr) || !json_array_size(pr)) {
        snprintf(why, n, "cannot be judged: %s carries no per-rank figures (\"per_rank\")", d->label);
        return false;
    }
    for (size_t i = 0; i < json_array_size(pr); i++) {
        const json_t *e = json_array_get(pr, i);
        double v;
        const json_t *idv = json_object_get(e, c->by_node ? "node" : "rank");
        if (!zb_metric_value(e, c->metric, &v) || !json_is_integer(idv)) {
            snprintf(why, n, "cannot be judged: per_rank[%zu] of %s has no numeric \"%s\" and \"%s\"", i, d->label,
                     c->metric, c->by_node ? "node" : "rank");
            return false;
        }
        long id = (long)json_integer_value(idv);
        int g = 0;
        while (g < d->n_groups && d->groups[g].id != id) g++;
        if (g == d->n_groups) {
            if (g == (int)(sizeof d->groups / sizeof d->groups[0])) {
                snprintf(why, n, "cannot be judged: more than %d ranks", g);
                return false;
            }
            memset(&d->groups[g], 0, sizeof d->groups[g]);
            d->groups[g].id = id;
            const char *host = json_string_value(json_object_get(e, "host"));
            snprintf(d->groups[g].host, sizeof d->groups[g].host, "%s", host ? host : "?");
            d->n_groups++;
        }
        d->groups[g].value += v;
        d->groups[g].n++;
    }
    double vals[ZB_ACCEPT_MAX_GROUPS];
    for (int g = 0; g < d->n_groups; g++) {
        d->groups[g].value /= d->groups[g].n;
        vals[g] = d->groups[g].value;
    }
    d->median = median_of(vals, d->n_groups);
    double mx = vals[0];
    for (int g = 1; g < d->n_groups; g++) mx = fmax(mx, vals[g]);
    double dev = zb_deviation_of(mx, d->median, ZB_DEVIATION_RELATIVE);
    d->deviation_pct = isnan(dev) ? 0.0 : dev;
    return true;
}

static void name_culprits(const zb_accept_check *c, const run_dev *d, zb_check_outcome *o) {
    size_t used = 0;
    o->culprit_list = json_array();
    for (int g = 0; g < d->n_groups; g++) {
        const group_val *x = &d->groups[g];
        double dev = zb_deviation_of(x->value, d->median, ZB_DEVIATION_RELATIVE);
        if (isnan(dev)) dev = 0.0;
        if (dev <= c->threshold) continue;
        if (used < sizeof o->culprits) {
            used += (size_t)snprintf(o->culprits + used, sizeof o->culprits - used,
                                     "%s%s %ld (host %s): %s %.4g, %+.1f %% against the median %.4g", used ? "; " : "",
                                     c->by_node ? "node" : "rank", x->id, x->host, c->metric, x->value, dev, d->median);
        }
        json_t *e = json_object();
        json_object_set_new(e, c->by_node ? "node" : "rank", json_integer(x->id));
        json_object_set_new(e, "host", json_string(x->host));
        json_object_set_new(e, c->metric, json_real(x->value));
        json_object_set_new(e, "deviation_pct", json_real(dev));
        json_array_append_new(o->culprit_list, e);
    }
}

static void judge_straggler(const zb_accept_check *c, json_t *const *docs, int n_docs, zb_check_outcome *o) {
    /* per repeat: the run with the largest deviation */
    if (n_docs > ZB_ACCEPT_MAX_REPEAT) n_docs = ZB_ACCEPT_MAX_REPEAT;
    run_dev *worst = (run_dev *)calloc((size_t)n_docs + 1, sizeof *worst); /* per repeat, + the run at hand */
    double devs[ZB_ACCEPT_MAX_REPEAT];
    if (!worst) {
        o->verdict = ZB_CHECK_FAIL;
        snprintf(o->reason, sizeof o->reason, "out of memory");
        return;
    }
    run_dev *const d = worst + n_docs;
    int n_judged = 0;
    bool any_selected = false;
    for (int r = 0; r < n_docs; r++) {
        const json_t *runs = json_object_get(docs[r], "runs");
        bool have = false;
        for (size_t i = 0; i < json_array_size(runs); i++) {
            const json_t *run = json_array_get(runs, i);
            if (!run_selected(c, run)) continue;
            any_selected = true;
            if (!per_rank_groups(c, run, d, o->reason, sizeof o->reason)) {
                o->verdict = ZB_CHECK_FAIL;
                free(worst);
                return;
            }
            if (d->n_groups < 2) continue;
            if (!have || d->deviation_pct > worst[n_judged].deviation_pct) worst[n_judged] = *d;
            have = true;
        }
        if (have) {
            devs[n_judged] = worst[n_judged].deviation_pct;
            n_judged++;
        }
    }
    if (!any_selected || !n_judged) {
        o->verdict = any_selected ? ZB_CHECK_SKIP : ZB_CHECK_FAIL;
        if (any_selected) snprintf(o->reason, sizeof o->reason, "not applicable: one %s only", c->by_node ? "node" : "rank");
        else say_selection(c, o->reason, sizeof o->reason);
        free(worst);
        return;
    }
    o->have_value = true;
    o->value = combine(devs, n_judged, c->judge, false);
    o->n_values = n_judged;
    memcpy(o->values, devs, (size_t)n_judged * sizeof *devs);
    /* the repeat that gave the judged figure names the culprits */
    int pick = 0;
    for (int r = 1; r < n_judged; r++) {
        if (fabs(devs[r] - o->value) < fabs(devs[pick] - o->value)) pick = r;
    }
    snprintf(o->where, sizeof o->where, "%s", worst[pick].label);
    o->verdict = o->value <= c->threshold ? ZB_CHECK_PASS : ZB_CHECK_FAIL;
    if (o->verdict == ZB_CHECK_FAIL) {
        name_culprits(c, &worst[pick], o);
        snprintf(o->reason, sizeof o->reason, "the slowest %s is %.1f %% above the median in %s",
                 c->by_node ? "node" : "rank", o->value, o->where);
    }
    free(worst);
}

void zb_accept_judge(const zb_accept_check *c, json_t *const *docs, int n_docs, zb_check_outcome *o) {
    if (n_docs < 1) {
        o->verdict = ZB_CHECK_FAIL;
        snprintf(o->reason, sizeof o->reason, "no results to judge");
        return;
    }
    if (c->kind == ZB_CHECK_METRIC) judge_metric(c, docs, n_docs, o);
    else if (c->kind == ZB_CHECK_STRAGGLER) judge_straggler(c, docs, n_docs, o);
}

void zb_accept_devices(const zb_accept_check *c, zb_check_outcome *o) {
    const zb_device_backend *b = zb_device_backend_find(c->backend);
    char host[64] = "?", why[ZB_ERROR_MAX] = "";
    gethostname(host, sizeof host - 1);
    if (!b) {
        o->verdict = ZB_CHECK_FAIL;
        snprintf(o->reason, sizeof o->reason, "unknown device backend '%s'", c->backend);
    } else if (b->not_built) {
        o->verdict = ZB_CHECK_FAIL;
        snprintf(o->reason, sizeof o->reason, "host %s: the %s backend is not in this build (%s)", host, c->backend,
                 b->not_built);
    } else if (!b->count_devices) {
        o->verdict = ZB_CHECK_SKIP;
        snprintf(o->reason, sizeof o->reason, "not applicable: the %s backend has one device per rank", c->backend);
    } else {
        int count = 0;
        zb_status s = b->count_devices(&count, why, sizeof why);
        o->have_value = s == ZB_OK;
        o->value = count;
        o->n_values = 1;
        o->values[0] = count;
        snprintf(o->where, sizeof o->where, "host %s", host);
        if (s != ZB_OK) {
            o->verdict = ZB_CHECK_FAIL;
            snprintf(o->reason, sizeof o->reason, "host %s: %s", host, why[0] ? why : zb_error_message());
        } else if (count != c->per_node) {
            o->verdict = ZB_CHECK_FAIL;
            snprintf(o->reason, sizeof o->reason, "host %s shows %d %s device(s), expected %d", host, count,
                     c->backend, c->per_node);
            snprintf(o->culprits, sizeof o->culprits, "host %s", host);
        } else {
            o->verdict = ZB_CHECK_PASS;
        }
    }
}
