/* Token embedding, forward (gather rows) and backward (scatter-add).
 * Shapes: tokens [N] (N = B*T), table and dtable [V, C], out and dout [N, C]. */
#include <string.h>

#include "zb_cpu_kernels.h"

/* out [N, C] = table [tokens[i], :] */
zb_status zb_cpu_embedding_fwd(float *out, const int32_t *tokens, const float *table, int N,
                               int C, int V) {
    int n_bad = 0, first_bad = -1;
    for (int i = 0; i < N; i++) {
        float *row = out + (size_t)i * (size_t)C;
        int32_t tok = tokens[i];
        if (tok < 0 || tok >= V) {
            if (n_bad++ == 0) first_bad = i;
            memset(row, 0, (size_t)C * sizeof *row);
            continue;
        }
        memcpy(row, table + (size_t)tok * (size_t)C, (size_t)C * sizeof *row);
    }
    if (n_bad > 0) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "embedding: token id %d at position %d is outside [0, %d) (%d bad ids)",
                       (int)tokens[first_bad], first_bad, V, n_bad);
    }
    return ZB_OK;
}

/* dtable [V, C] += dout [i, :] for every i, at row tokens[i] */
zb_status zb_cpu_embedding_bwd(float *dtable, const int32_t *tokens, const float *dout, int N,
                               int C, int V) {
    int n_bad = 0, first_bad = -1;
    for (int i = 0; i < N; i++) {
        int32_t tok = tokens[i];
        if (tok < 0 || tok >= V) {
            if (n_bad++ == 0) first_bad = i;
            continue;
        }
        float *dst = dtable + (size_t)tok * (size_t)C;
        const float *src = dout + (size_t)i * (size_t)C;
        for (int c = 0; c < C; c++) dst[c] += src[c];
    }
    if (n_bad > 0) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "embedding backward: token id %d at position %d is outside [0, %d) "
                       "(%d bad ids)",
                       (int)tokens[first_bad], first_bad, V, n_bad);
    }
    return ZB_OK;
}
