/* The median over ranks, deviations and straggler selection (stragglers.h). */
#include "stragglers.h"

#include <math.h>
#include <stdlib.h>

#include "overlap.h"

#define ZB_RANKS_ON_STACK 64

double zb_rank_median(const double *v, int n) {
    if (!v || n <= 0) return NAN;
    double small[ZB_RANKS_ON_STACK];
    double *copy = n <= ZB_RANKS_ON_STACK ? small : (double *)malloc(sizeof(double) * (size_t)n);
    if (!copy) return NAN; /* out of memory: not measured rather than wrong */
    for (int i = 0; i < n; i++) copy[i] = v[i];
    double m = zb_median(copy, (size_t)n);
    if (copy != small) free(copy);
    return m;
}

double zb_deviation_of(double value, double median, zb_deviation how) {
    if (isnan(value) || isnan(median)) return NAN;
    if (how == ZB_DEVIATION_POINTS) return value - median;
    if (!(median > 0)) return NAN;
    return 100.0 * (value - median) / median;
}

int zb_stragglers_find(const char *metric, const double *v, int n_ranks, zb_deviation how, zb_worse worse,
                       double threshold_pct, zb_straggler *out, int cap, int *n_out) {
    if (!v || n_ranks < 2) return 0;
    double med = zb_rank_median(v, n_ranks);
    int found = 0;
    for (int r = 0; r < n_ranks; r++) {
        double d = zb_deviation_of(v[r], med, how);
        if (isnan(d) || !(fabs(d) > threshold_pct)) continue;
        if (n_ranks == 2 && (worse == ZB_WORSE_HIGHER ? d < 0 : d > 0)) continue; /* the better of two */
        found++;
        if (out && n_out && *n_out < cap) {
            zb_straggler s = {r, metric, v[r], med, d};
            out[(*n_out)++] = s;
        }
    }
    return found;
}
