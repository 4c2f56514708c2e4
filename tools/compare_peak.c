/* compare: whether two runs' MFU and % of peak share a denominator
 * (compare.h; the BLAS kernels and the rest of the environment:
 * compare_env.c).
 *
 * A run's peak is its document's meta.peak (the per-rank figure, its source
 * and its basis: "measurement of DATE on host H", "--peak-gflops", the
 * profile), or, in files written before meta.peak, the run's own
 * peak_source. Two runs measured against different peaks cannot be judged
 * on MFU: a run on a slower BLAS kernel once scored 11 points better
 * because its freshly measured peak fell. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "escape.h"

typedef struct run_peak {
    bool known, has_gflops;
    double gflops;
    const char *basis, *source;
} run_peak;

static run_peak peak_of(const json_t *doc, const json_t *run) {
    run_peak p = {false, false, 0.0, NULL, NULL};
    const json_t *m = json_object_get(json_object_get(doc, "meta"), "peak");
    if (json_is_object(m)) {
        const json_t *g = json_object_get(m, "gflops_per_rank");
        p.has_gflops = json_is_number(g) && isfinite(json_number_value(g));
        p.gflops = p.has_gflops ? json_number_value(g) : 0.0;
        p.basis = json_string_value(json_object_get(m, "basis"));
        p.source = json_string_value(json_object_get(m, "source"));
        if (!p.source) p.source = p.basis;
        if (!p.basis) p.basis = p.source;
        p.known = p.basis != NULL || p.has_gflops;
        return p;
    }
    /* Older files: the run's peak_source, which named a measured figure. */
    p.source = p.basis = json_string_value(json_object_get(run, "peak_source"));
    p.known = p.basis != NULL;
    return p;
}

/* Equal figures (where both have one) and equal bases. */
static bool same_peak(const run_peak *a, const run_peak *b) {
    if (a->has_gflops && b->has_gflops && fabs(a->gflops - b->gflops) > 1e-9 * fmax(fabs(a->gflops), fabs(b->gflops))) {
        return false;
    }
    return !a->basis || !b->basis || !strcmp(a->basis, b->basis);
}

static void describe(const char *side, const run_peak *p, char *out, size_t n) {
    char src[160];
    zb_escape(p->source ? p->source : "source not recorded", 150, src, sizeof src);
    if (p->has_gflops) snprintf(out, n, "%s %.6g GFLOP/s per rank (%s)", side, p->gflops, src);
    else snprintf(out, n, "%s %s", side, src);
}

bool zb_compare_peaks_differ(const json_t *base_doc, const json_t *base_run, const json_t *new_doc,
                             const json_t *new_run, char *line, size_t n) {
    run_peak b = peak_of(base_doc, base_run), w = peak_of(new_doc, new_run);
    if (n) line[0] = '\0';
    if (!b.known || !w.known || same_peak(&b, &w)) return false;
    char db[256], dn[256];
    describe("BASE", &b, db, sizeof db);
    describe("NEW", &w, dn, sizeof dn);
    snprintf(line, n, "different peaks: %s; %s: mfu_pct, hfu_pct and pct_peak are not comparable, not judged", db,
             dn);
    return true;
}
