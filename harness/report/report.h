/* The report document and its writers: JSON and CSV (docs/design.md §7).
 *
 * A zb_report holds one jansson document
 *
 *   {"schema": "zerobench/1", "meta": {...}, "runs": [{...}, ...]}
 *
 * `meta` is filled by zb_meta_collect (meta.h) and by backends; each run is
 * one object per mode or size, e.g.
 *
 *   {"bench":"allgather","size_bytes":1048576,"count":262144,"dtype":"float",
 *    "in_place":false,"ranks":2,"nodes":1,
 *    "metrics":{"time_us":12.3,"algbw_gbps":85.1,"busbw_gbps":42.5,"wrong":0}}
 *
 * Number formatting (JSON and CSV alike): integers print exactly; doubles
 * print in the shortest %g form (at most 17 significant digits) that reads
 * back as the very same double, so 12.3 prints as 12.3, never as
 * 12.300000000000001, and nothing is lost. An integral double keeps a ".0"
 * ("2.0") so it reads back as a real. The output never depends on the C
 * locale.
 *
 * NaN and infinity have no JSON spelling; jansson refuses them (json_real
 * returns NULL). Build metric values with zb_json_real_or_null, which turns
 * a non-finite double into JSON null; null prints as `null` in JSON and as
 * an empty cell in CSV.
 *
 * Both writers go through zb_atomic_write: the output file is replaced whole
 * or not at all. Library code: errors are returned, never printed. */
#ifndef ZB_REPORT_H
#define ZB_REPORT_H

#include <stddef.h>

#include <jansson.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_REPORT_SCHEMA "zerobench/1"

typedef struct zb_report zb_report;

/* A new report with schema, an empty meta object and no runs; NULL when out
 * of memory (with the error recorded). */
zb_report *zb_report_new(void);
void zb_report_free(zb_report *r);

/* The meta object, borrowed: fill it in place (json_object_set_new). */
json_t *zb_report_meta(zb_report *r);

/* Appends `run` and takes ownership of it (the reference is stolen, as with
 * json_array_append_new). A run must be a JSON object; a NULL or non-object
 * run is released and ignored. */
void zb_report_add_run(zb_report *r, json_t *run);
size_t zb_report_n_runs(const zb_report *r);
/* Run `i` (borrowed), or NULL when i >= zb_report_n_runs. */
const json_t *zb_report_run(const zb_report *r, size_t i);
/* The run added last (borrowed, to be completed in place: what a row's
 * fields cannot hold, such as arrays), or NULL when there is none. */
json_t *zb_report_last_run(zb_report *r);
/* The whole document (borrowed), e.g. for a comparison against a baseline. */
const json_t *zb_report_doc(const zb_report *r);

/* Writes the document as pretty JSON (indent 2, object keys in insertion
 * order, a final newline) atomically to `path`. */
zb_status zb_report_write_json(const zb_report *r, const char *path);

/* Writes one CSV row per run, after a header row, atomically to `path`
 * (report_csv.c). Columns: first the run's identity from the meta,
 * "meta.date_utc", "meta.git_describe", "meta.hosts" (the host names joined
 * by spaces), "meta.command_line", "meta.backend", "meta.comm" (empty where
 * the meta lacks one); then the runs' top-level keys (a nested object other
 * than "metrics" flattened to "a.b" columns in its place), then one
 * "metrics.<key>" column per metrics key (nested objects inside metrics
 * flattened likewise, "metrics.a.b"). The columns declared with
 * zb_report_csv_declare come first within each of the two groups, in their
 * order, whether or not a run holds them; then any other a run holds,
 * first seen first. Arrays (per-rank figures, stragglers, samples, rounds)
 * are JSON only: no column. Cells: strings as is, numbers as described
 * above, booleans as 1 and 0 (so that a column with empty cells still reads
 * as numbers), null and missing keys as empty cells. A cell or header
 * containing a comma, a double quote, CR or LF is quoted per RFC 4180
 * (quotes doubled). Lines end in "\n" (not RFC 4180's CRLF: the consumers
 * are gnuplot, pandas and shell tools). A report with no runs writes an
 * empty file. */
zb_status zb_report_write_csv(const zb_report *r, const char *path);

/* Declares the CSV columns of `skeleton`, a run as the CSV flattens it
 * (its values are ignored): every CSV of the report has them, in the order
 * first declared, whether or not a run holds the key. A benchmark declares
 * what some of its runs lack (a device view only cuda has, the collectives
 * of another stage, the paired figures of the other schedule), so that the
 * CSVs of every backend and mode share one column set. ZB_ERR_NOMEM, or
 * ZB_ERR_INVALID for a skeleton that is not an object. */
zb_status zb_report_csv_declare(zb_report *r, const json_t *skeleton);

/* Builds a JSON real from `v`, or JSON null when `v` is NaN or infinite.
 * Returns a new reference (NULL only when out of memory). */
json_t *zb_json_real_or_null(double v);

/* Formats `v` in the shortest round-trip form described above into `buf`
 * ("null" for NaN or infinity). Returns the length written, as snprintf
 * would (buf of 32 bytes always suffices). */
int zb_format_double(char *buf, size_t size, double v);

/* Serializes any JSON value with zerobench's number formatting: indent > 0
 * pretty-prints with that many spaces per level, indent 0 is compact (no
 * spaces at all). Returns a malloc'ed NUL-terminated string (free() it) and
 * its length in *len (when len is not NULL), or NULL when out of memory. */
char *zb_json_dump(const json_t *v, int indent, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
