/* What makes two runs of results files (zerobench/1) the same measurement,
 * for the tools that pair or select runs (compare, accept): one table of
 * identity keys, the pairing of two files' runs over it, and a short label
 * naming a run in tables and messages. */
#ifndef ZB_RUN_IDENTITY_H
#define ZB_RUN_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The identity keys, in label order; NULL-terminated. Two runs are the same
 * measurement when every key is absent from both or holds equal JSON in both
 * (a key present in one run only makes them different). Everything else in a
 * run (metrics, per-rank figures, peak_source, count, a "simulated" marker)
 * is what was measured or how, not which measurement. */
extern const char *const zb_run_identity_keys[];

bool zb_run_same_identity(const json_t *a, const json_t *b);

/* True when the run says it was simulated rather than measured (a "simulated"
 * key that is true, a non-empty string or an object). */
bool zb_run_is_simulated(const json_t *run);

/* "allgather 4M out-of-place float ranks=2 nodes=1": the bench, then each
 * identity key the run has, briefly, leaving out usual values (no
 * recompute, prefetch depth 1, ...) and an object-valued shape (the model
 * names it). Escaped (escape.h): a value's newline or terminal escape
 * cannot reach a table or a message raw. */
void zb_run_label(const json_t *run, char *out, size_t n);

/* Pairs the runs of `base` and `new_runs` (JSON arrays): pair[i] is the index
 * in new_runs of base run i's partner, or -1. Runs with equal identity pair
 * up in order of appearance (the second such run of base with the second of
 * new). `pair` has json_array_size(base) entries; *n_pairs counts the pairs.
 * Returns false when out of memory. */
bool zb_run_pair(const json_t *base, const json_t *new_runs, long *pair, size_t *n_pairs);

#ifdef __cplusplus
}
#endif
#endif
