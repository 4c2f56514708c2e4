/* Per-iteration samples of a timed loop (iter_samples.h). */
#include <jansson.h>
#include <stdio.h>

#include "iter_samples.h"
#include "mpi_wait.h"

zb_status zb_iter_marks_begin(zb_iter_marks *m, zb_device *dev, zb_stream *stream, int64_t iters) {
    if (m->dev != dev) { /* first use (the struct starts zeroed) or another device */
        zb_iter_marks_free(m);
        m->dev = dev;
    }
    m->stream = stream;
    m->iters = iters;
    m->n_blocks = iters < ZB_ITER_MAX_SAMPLES ? (int)iters : ZB_ITER_MAX_SAMPLES;
    m->next = 0;
    for (; m->n_created <= m->n_blocks; m->n_created++) {
        ZB_TRY(dev->ops->event_create(dev, &m->ev[m->n_created]));
    }
    if (m->n_blocks < 1) return ZB_OK;
    return dev->ops->event_record(m->ev[m->next++], stream);
}

/* Block j (0-based) ends after iteration (j + 1) iters / n_blocks - 1. */
static int64_t block_end(const zb_iter_marks *m, int j) {
    return (int64_t)(j + 1) * m->iters / m->n_blocks - 1;
}

zb_status zb_iter_marks_after(zb_iter_marks *m, int64_t i) {
    if (m->next > m->n_blocks || i != block_end(m, m->next - 1)) return ZB_OK;
    return m->dev->ops->event_record(m->ev[m->next++], m->stream);
}

zb_status zb_iter_marks_read(zb_iter_marks *m, zb_iter_samples *out) {
    out->n = 0;
    if (m->next != m->n_blocks + 1) return ZB_OK; /* a loop cut short: no samples */
    for (int j = 0; j < m->n_blocks; j++) {
        double ms = 0.0;
        ZB_TRY(m->dev->ops->event_elapsed_ms(m->ev[j], m->ev[j + 1], &ms));
        int64_t first = j ? block_end(m, j - 1) + 1 : 0, count = block_end(m, j) - first + 1;
        out->us[out->n++] = ms * 1e3 / (double)count;
    }
    return ZB_OK;
}

void zb_iter_marks_free(zb_iter_marks *m) {
    for (int i = 0; i < m->n_created; i++) m->dev->ops->event_destroy(m->ev[i]);
    m->n_created = 0;
}

zb_status zb_iter_samples_reduce(const zb_bench_ctx *ctx, zb_iter_samples *s) {
    double t = ctx->cfg->timeout_s, v[ZB_ITER_MAX_SAMPLES];
    zb_status st = ZB_OK;
    if (ctx->topo.n_ranks == 1 || s->n == 0) return ZB_OK;
    switch (ctx->cfg->average) {
    case ZB_AVERAGE_RANK0:
        return zb_mpi_bcast_bounded(s->us, s->n, MPI_DOUBLE, 0, MPI_COMM_WORLD, "broadcasting rank 0's samples", t);
    case ZB_AVERAGE_MEAN:
        st = zb_mpi_allreduce_bounded(s->us, v, s->n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, "summing the ranks' samples", t);
        for (int i = 0; i < s->n; i++) v[i] /= ctx->topo.n_ranks;
        break;
    case ZB_AVERAGE_MIN:
        st = zb_mpi_allreduce_bounded(s->us, v, s->n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD, "the ranks' minimum samples", t);
        break;
    case ZB_AVERAGE_MAX:
        st = zb_mpi_allreduce_bounded(s->us, v, s->n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, "the ranks' maximum samples", t);
        break;
    }
    for (int i = 0; st == ZB_OK && i < s->n; i++) s->us[i] = v[i];
    return st;
}

json_t *zb_iter_samples_json(const zb_iter_samples *s) {
    json_t *a = json_array();
    for (int i = 0; a && i < s->n; i++) {
        if (json_array_append_new(a, json_real(s->us[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}
