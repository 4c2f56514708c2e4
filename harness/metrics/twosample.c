/* Mann-Whitney U and the Hodges-Lehmann ratio interval (twosample.h). */
#include <math.h>
#include <stdlib.h>

#include "twosample.h"

typedef struct tagged {
    double v;
    int from_b;
} tagged;

static int cmp_tagged(const void *x, const void *y) {
    double a = ((const tagged *)x)->v, b = ((const tagged *)y)->v;
    return (a > b) - (a < b);
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double zb_normal_cdf(double z) { return 0.5 * erfc(-z / sqrt(2.0)); }

/* The finite values of v into out; their count. */
static size_t finite_copy(const double *v, size_t n, double *out) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(v[i])) out[k++] = v[i];
    }
    return k;
}

static double median_sorted(const double *v, size_t n) {
    if (!n) return NAN;
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* U of b over a with mid-ranks for ties, and the ties' sum of t^3 - t. */
static double mann_whitney_u(const double *a, size_t m, const double *b, size_t n, tagged *all, double *ties) {
    size_t N = m + n;
    for (size_t i = 0; i < m; i++) all[i] = (tagged){a[i], 0};
    for (size_t j = 0; j < n; j++) all[m + j] = (tagged){b[j], 1};
    qsort(all, N, sizeof *all, cmp_tagged);
    double rank_b = 0.0;
    *ties = 0.0;
    for (size_t i = 0; i < N;) {
        size_t j = i;
        while (j < N && all[j].v == all[i].v) j++;
        double t = (double)(j - i), mid = 0.5 * (double)(i + 1 + j); /* ranks i+1 .. j */
        for (size_t k = i; k < j; k++) rank_b += all[k].from_b ? mid : 0.0;
        *ties += t * t * t - t;
        i = j;
    }
    return rank_b - 0.5 * (double)n * (double)(n + 1);
}

/* The Hodges-Lehmann ratio b/a and its 95 % interval, on log values, from
 * the sorted samples. Each side is thinned to ZB_TWOSAMPLE_HL_MAX evenly
 * spaced order statistics first: the mn differences are all sorted, and a
 * hostile file's 10^6 x 10^6 would never finish (the test uses every value). */
static void ratio_interval(const double *a_all, size_t m_all, const double *b_all, size_t n_all, zb_twosample *r) {
    if (a_all[0] <= 0 || b_all[0] <= 0) return;
    double a[ZB_TWOSAMPLE_HL_MAX], b[ZB_TWOSAMPLE_HL_MAX];
    size_t m = m_all < ZB_TWOSAMPLE_HL_MAX ? m_all : ZB_TWOSAMPLE_HL_MAX;
    size_t n = n_all < ZB_TWOSAMPLE_HL_MAX ? n_all : ZB_TWOSAMPLE_HL_MAX;
    for (size_t i = 0; i < m; i++) a[i] = a_all[i * m_all / m];
    for (size_t j = 0; j < n; j++) b[j] = b_all[j * n_all / n];
    size_t mn = m * n;
    double *d = (double *)malloc(mn * sizeof *d);
    if (!d) return;
    for (size_t i = 0; i < m; i++) {
        for (size_t j = 0; j < n; j++) d[i * n + j] = log(b[j]) - log(a[i]);
    }
    qsort(d, mn, sizeof *d, cmp_double);
    r->ratio = exp(median_sorted(d, mn));
    double c = 0.5 * (double)mn - 1.959964 * sqrt((double)mn * (double)(m + n + 1) / 12.0);
    size_t k = c < 1.0 ? 1 : (size_t)floor(c);
    r->ratio_lo = exp(d[k - 1]);
    r->ratio_hi = exp(d[mn - k]);
    free(d);
}

zb_twosample zb_twosample_test(const double *a, size_t na, const double *b, size_t nb) {
    zb_twosample r = {0};
    r.u = r.z = r.median_a = r.median_b = NAN;
    r.ratio = r.ratio_lo = r.ratio_hi = NAN;
    r.p = 1.0;
    double *va = (double *)malloc((na + nb + 1) * sizeof *va);
    tagged *all = (tagged *)malloc((na + nb + 1) * sizeof *all);
    if (!va || !all) {
        free(va);
        free(all);
        return r;
    }
    size_t m = finite_copy(a, na, va), n = finite_copy(b, nb, va + na);
    double *vb = va + na;
    r.n_a = m;
    r.n_b = n;
    if (m && n) {
        double ties;
        r.u = mann_whitney_u(va, m, vb, n, all, &ties);
        double mn = (double)m * (double)n, N = (double)(m + n), centre = 0.5 * mn;
        double var = mn / 12.0 * ((N + 1.0) - ties / (N * (N - 1.0)));
        r.direction = r.u > centre ? 1 : r.u < centre ? -1 : 0;
        r.z = 0.0;
        if (var > 0) {
            double dev = fabs(r.u - centre) - 0.5; /* continuity correction */
            r.z = dev > 0 ? dev / sqrt(var) : 0.0;
        }
        r.judged = m >= ZB_TWOSAMPLE_MIN_N && n >= ZB_TWOSAMPLE_MIN_N;
        if (r.judged) r.p = 2.0 * (1.0 - zb_normal_cdf(r.z));
        r.significant = r.judged && r.p < ZB_TWOSAMPLE_ALPHA;
        qsort(va, m, sizeof *va, cmp_double);
        qsort(vb, n, sizeof *vb, cmp_double);
        r.median_a = median_sorted(va, m);
        r.median_b = median_sorted(vb, n);
        ratio_interval(va, m, vb, n, &r);
    }
    free(va);
    free(all);
    return r;
}
