/* The step benchmark's pieces: step.c plans the runs (one per ZeRO stage and
 * schedule) and checks the model fits, step_run.c runs one and measures it
 * from the trace, step_ranks.c gathers its per-rank figures, step_report.c
 * prints the comparison and writes JSON, step_notes.c adds the per-rank
 * figures, stragglers and readings (step_reading.c) to both. */
#ifndef ZB_STEP_H
#define ZB_STEP_H

#include "bench.h"
#include "engine.h"
#include "flops.h"
#include "model_opts.h"
#include "overlap.h"
#include "paired.h"
#include "row.h"
#include "step_wait.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_STEP_MAX_SAMPLES 1000 /* bounds a results file: at most about 20 KB a figure and run */

typedef struct zb_step_samples {
    double v[ZB_STEP_MAX_SAMPLES];
    int n;
} zb_step_samples;

#define ZB_STEP_N_SAMPLED 7
enum { ZB_SAMPLES_STEP, ZB_SAMPLES_OVERLAP, ZB_SAMPLES_EXPOSED, ZB_SAMPLES_COMPUTE, ZB_SAMPLES_COMM,
       ZB_SAMPLES_HIDDEN, ZB_SAMPLES_SLOWDOWN };
/* Their JSON keys (the figures' own): step_time_ms, overlap_pct, ... */
extern const char *const zb_step_sample_keys[ZB_STEP_N_SAMPLED];
/* Keeps the finite values of v[0..n) into s, thinned evenly to at most
 * ZB_STEP_MAX_SAMPLES (step_run.c). */
void zb_step_keep_samples(zb_step_samples *s, const double *v, size_t n);

/* What one (stage, mode) run measured; times in ms, medians over the
 * measured steps (and ranks, for per-rank trace metrics). */
typedef struct zb_step_stats {
    int stage;
    zb_step_mode mode;
    int steps;
    double step_ms, step_min_ms, step_max_ms; /* per step: max over ranks */
    /* The values each figure is the median of, for compare's two-sample
     * test (JSON metrics.samples.<key>, zb_step_sample_keys): the step
     * times (max over ranks) in step order; the trace metrics' values of
     * every step and rank; --mode both's per-pair hidden % and slowdown.
     * More than ZB_STEP_MAX_SAMPLES are thinned evenly to that many. */
    zb_step_samples samples[ZB_STEP_N_SAMPLED];
    double tokens_per_s;
    double mfu_pct, hfu_pct;
    double overlap_pct, overlap_min_pct;      /* NaN when no comm was traced */
    double exposed_comm_ms, compute_ms, comm_ms;
    double idle_ms, ops_per_step; /* the step's time outside every op (host time between ops), its ops */
    double comm_hold_ms;          /* the compute a collective's start held, a collective (comm_hold.h) */
    double hidden_pct, compute_slowdown_pct;  /* prefetch vs sync; NaN otherwise */
    size_t peak_bytes, peak_tag_bytes[ZB_MEM_TAG_COUNT];
    double mem_per_rank_bytes; /* what a rank may use (zb_step_memory_per_rank): fits when peak_bytes <= it */
    size_t expected_tag_bytes[ZB_MEM_TAG_COUNT];
    uint64_t comm_bytes_per_step, comm_bytes_formula;
    /* GPU only (device_view): the pool's reserved high-water mark, the
     * highest cudaMemGetInfo use seen, and memory outside the pool
     * (CUDA context, NCCL, cuBLASLt, CUPTI). */
    bool device_view;
    size_t pool_reserved_high_bytes, device_used_high_bytes, library_bytes;
    /* Ranks of the job on this rank's device, itself included (1: alone).
     * Above 1, device_used_high_bytes and library_bytes are device-wide
     * figures that include the other ranks (docs/design.md §9). */
    int device_sharing_ranks;
    size_t dropped_records;
    /* The device tracer's own losses in this run, summed over ranks;
     * tracer_ran false (JSON null) where no rank's device has a tracer
     * running (the cpu device records its own ops). */
    bool tracer_ran;
    zb_tracer_stats tracer;
    float loss_first, loss_last;
    /* --mode both, the prefetch run: the paired A/B of the two schedules
     * interleaved on one training state (docs/design.md §6): per pair of
     * steps, prefetch - sync step time, hidden % and compute slowdown, as
     * medians with their 95 % sign-test intervals. paired false: not run. */
    bool paired;
    int pairs;
    const char *stopped_by; /* why the pairs ended: zb_pairs_stop_name */
    double precision_pct;   /* the target the pairs ran for (0: fixed) */
    zb_paired step_diff_ms, hidden, slowdown;
    /* Per rank, rank 0 holding all (step_gather.c): rank r's median over
     * the measured steps of its own step time, overlap, exposed comm,
     * compute and comm time at per_rank[r * ZB_STEP_RANK_FIGS + k], k in
     * zb_step_rank_keys order; NULL until measured (zb_step_stats_release
     * frees it). The worst rank: lowest overlap, highest exposed comm. */
    double *per_rank;
    struct zb_rank_place *places; /* each rank's host and node (rank_report.h) */
    int n_ranks;
    double overlap_worst_pct, exposed_comm_worst_ms;
    zb_step_wait_stats wait; /* waiting told apart from transfer (step_wait.h); zb_step_stats_release frees it */
} zb_step_stats;

#define ZB_STEP_RANK_FIGS 5
enum { ZB_STEP_RANK_STEP, ZB_STEP_RANK_OVERLAP, ZB_STEP_RANK_EXPOSED, ZB_STEP_RANK_COMPUTE, ZB_STEP_RANK_COMM };
/* The per-rank figures' JSON keys: step_time_ms, overlap_pct, ... */
extern const char *const zb_step_rank_keys[ZB_STEP_RANK_FIGS];

typedef struct zb_step_plan {
    zb_engine_cfg engine;
    /* The model as reports name it: the profile, plus the shape flags given
     * ("tiny+dim=512,layers=4"), or "custom" when all of them were. */
    char model_label[192];
    double tokens_global;    /* per step, all ranks */
    zb_flops_breakdown flops; /* per token */
    zb_flops_convention convention;
} zb_step_plan;

/* The plan of the step's runs from the flags and the model profile, for
 * ctx->world_ranks ranks (step.c). */
zb_status zb_step_make_plan(const zb_bench_ctx *ctx, zb_step_plan *plan);
/* ZB_ERR_INVALID when a unit has fewer parameters than world_ranks. */
zb_status zb_step_check_units(const zb_bench_ctx *ctx, const zb_step_plan *plan);
/* The memory one rank may use: the profile's, or on cpu the node's / ranks. */
double zb_step_memory_per_rank(const zb_bench_ctx *ctx);
/* The step's model and run options (--model ... --flops), which scale
 * shares; and the dtype its FLOP peak is taken in. */
extern const zb_opt_group zb_step_model_group;
zb_dtype zb_step_peak_dtype(const zb_config *cfg, zb_dtype device_default);

/* How many of n_ranks ranks name the same device as `rank` does: ids holds
 * each rank's zb_dev_mem_view.device_id, id_bytes apart. An empty id is
 * unknown and shares with no one: 1. */
int zb_step_sharing_ranks(const char *ids, size_t id_bytes, int n_ranks, int rank);

/* The device tracer's counts so far: true when a tracer runs and reports
 * them (the entry's tracer_stats), else false and *out zeroed. */
bool zb_step_tracer_read(const zb_backends *b, zb_tracer_stats *out);

/* What a window added: each count of `after` less `before` (the name and
 * the note from `after`). */
void zb_tracer_stats_window(const zb_tracer_stats *before, const zb_tracer_stats *after, zb_tracer_stats *out);

/* Runs warm-up and measured steps of one configuration (collective). */
zb_status zb_step_run(zb_bench_ctx *ctx, const zb_step_plan *plan, zb_step_stats *out);

/* The options of --mode both's adaptive pairs (--precision, --max-steps,
 * --max-time) and their check (step_pairs.c). */
extern const zb_opt_group zb_step_pairs_group;
extern const zb_opt zb_opt_steps; /* step.c's --steps: given alone, it fixes the pairs */
/* The most pairs a paired run may measure (its arrays' length). */
int zb_step_max_pairs(const zb_config *cfg);

/* Runs sync and prefetch of one stage interleaved on one engine (collective):
 * after warm-up pairs, --steps pairs (then more while --precision asks and
 * the budgets allow, every rank deciding alike), each a sync and a prefetch step back to
 * back, in the order sync-prefetch, prefetch-sync, sync-prefetch, ... (ABBA:
 * neither schedule always goes first). Each schedule's figures are its own
 * steps' (peak memory per schedule: the peak is reset before each step);
 * the prefetch run gets the paired statistics, and its hidden_pct and
 * compute_slowdown_pct are their medians. */
zb_status zb_step_run_paired(zb_bench_ctx *ctx, const zb_step_plan *plan, zb_step_stats *sync_out,
                             zb_step_stats *prefetch_out);

/* The paired A/B in words, for the table's notes: one line (no '#', no
 * newline) of medians, intervals and verdicts ("no significant difference"
 * where an interval spans zero); empty when r is not a paired run
 * (step_paired.c). */
void zb_step_paired_reading(const zb_step_stats *r, char *buf, size_t n);

/* The paired A/B's JSON fields of a run (row.h; `absent` unless r->paired,
 * so the CSV keeps their columns): returns how many were written to f
 * (ZB_STEP_PAIRED_FIELDS). */
#define ZB_STEP_PAIRED_FIELDS 17
int zb_step_paired_fields(zb_field *f, const zb_step_stats *r);
void zb_step_stats_release(zb_step_stats *s);


/* Adds one JSON run per run to the report and, on rank 0, prints the
 * comparison and the memory tables (step_report.c). */
zb_status zb_step_report(zb_bench_ctx *ctx, const zb_step_plan *plan, const zb_step_stats *runs, int n_runs);

#ifdef __cplusplus
}
#endif
#endif
