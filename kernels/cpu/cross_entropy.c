/* Softmax cross-entropy over the vocabulary, forward and backward.
 * Shapes: logits, dlogits [N, V] (N = B*T tokens, V vocab); targets [N];
 * lse [N] (log-sum-exp of each row, saved for the backward). The loss is the
 * mean over the N tokens. Row maxima and sums accumulate in double. */
#include <math.h>

#include "zb_cpu_kernels.h"

/* *loss = mean_i (lse_i - logits[i, targets[i]]); lse [N] saved. */
zb_status zb_cpu_cross_entropy_fwd(float *loss, float *lse, const float *logits,
                                   const int32_t *targets, int N, int V) {
    int n_bad = 0, first_bad = -1;
    double total = 0.0;
    for (int i = 0; i < N; i++) {
        const float *row = logits + (size_t)i * (size_t)V;
        double mx = -INFINITY;
        for (int j = 0; j < V; j++) {
            if ((double)row[j] > mx) mx = (double)row[j];
        }
        double sum = 0.0;
        for (int j = 0; j < V; j++) sum += exp((double)row[j] - mx);
        double l = mx + log(sum);
        lse[i] = (float)l;
        int32_t tgt = targets[i];
        if (tgt < 0 || tgt >= V) {
            if (n_bad++ == 0) first_bad = i;
            continue;
        }
        total += l - (double)row[tgt];
    }
    *loss = N > 0 ? (float)(total / (double)N) : 0.0f;
    if (n_bad > 0) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "cross-entropy: target %d at position %d is outside [0, %d) (%d bad)",
                       (int)targets[first_bad], first_bad, V, n_bad);
    }
    return ZB_OK;
}

/* dlogits [N, V] = dloss / N * (exp(logits - lse) - onehot(targets)).
 * A row with a bad target gets the softmax term only and is reported. */
zb_status zb_cpu_cross_entropy_bwd(float *dlogits, const float *logits, const float *lse,
                                   const int32_t *targets, int N, int V, float dloss) {
    int n_bad = 0, first_bad = -1;
    double scale = N > 0 ? (double)dloss / (double)N : 0.0;
    for (int i = 0; i < N; i++) {
        const float *row = logits + (size_t)i * (size_t)V;
        float *drow = dlogits + (size_t)i * (size_t)V;
        double l = (double)lse[i];
        int32_t tgt = targets[i];
        if (tgt < 0 || tgt >= V) {
            if (n_bad++ == 0) first_bad = i;
        }
        for (int j = 0; j < V; j++) {
            double p = exp((double)row[j] - l);
            double onehot = (j == tgt) ? 1.0 : 0.0;
            drow[j] = (float)(scale * (p - onehot));
        }
    }
    if (n_bad > 0) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "cross-entropy backward: target %d at position %d is outside [0, %d) "
                       "(%d bad)",
                       (int)targets[first_bad], first_bad, V, n_bad);
    }
    return ZB_OK;
}
