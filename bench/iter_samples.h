/* Per-iteration times of a back-to-back timed loop (collectives, GEMM), for
 * compare's two-sample test (JSON metrics.samples.time_us).
 *
 * The loop stays back to back: an event is recorded on the loop's stream
 * after each block of iterations (one iteration per block up to
 * ZB_ITER_MAX_SAMPLES iterations, evenly sized blocks above), and the
 * stream's own time between two events over the block's iterations is one
 * sample. No extra synchronisation enters the loop, so the host-timed
 * figure keeps nccl-tests' meaning. */
#ifndef ZB_ITER_SAMPLES_H
#define ZB_ITER_SAMPLES_H

#include "bench.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_ITER_MAX_SAMPLES 1000 /* bounds a results file like the step's samples */

typedef struct zb_iter_samples {
    double us[ZB_ITER_MAX_SAMPLES]; /* microseconds per iteration */
    int n;
} zb_iter_samples;

/* The events of one loop, created once and reused (marks_begin). */
typedef struct zb_iter_marks {
    zb_device *dev;
    zb_stream *stream;
    zb_event *ev[ZB_ITER_MAX_SAMPLES + 1];
    int n_created, n_blocks, next;
    int64_t iters;
} zb_iter_marks;

/* Records the start mark of a loop of `iters` iterations on `stream`. */
zb_status zb_iter_marks_begin(zb_iter_marks *m, zb_device *dev, zb_stream *stream, int64_t iters);
/* After iteration i (0-based) was issued: the end mark of its block, if it ends one. */
zb_status zb_iter_marks_after(zb_iter_marks *m, int64_t i);
/* After the loop's stream was synchronised: the samples into *out. */
zb_status zb_iter_marks_read(zb_iter_marks *m, zb_iter_samples *out);
void zb_iter_marks_free(zb_iter_marks *m);

/* Collective: each sample reduced across the ranks as -a reduces the
 * figure (every rank has the same count: the same iterations). */
zb_status zb_iter_samples_reduce(const zb_bench_ctx *ctx, zb_iter_samples *s);

/* The samples as a JSON array (a new reference), NULL when out of memory. */
json_t *zb_iter_samples_json(const zb_iter_samples *s);

#ifdef __cplusplus
}
#endif
#endif
