/* The measured CPU peak, pinned per host (peak_cache.c).
 *
 * The FMA loop's figure moves with whatever else the machine runs (61 to
 * 116 GFLOP/s per core between runs here), and MFU moved with it: a run on
 * a 2.4x slower BLAS kernel once scored 11 points *better* MFU because its
 * measured peak fell. So the first measurement on a host is kept in a small
 * JSON file and later runs reuse it; `--peak-measure` times it afresh and
 * replaces it. The file: $ZB_PEAK_CACHE, else
 * $XDG_CACHE_HOME/zerobench/peak-HOST.json, else
 * $HOME/.cache/zerobench/peak-HOST.json; ZB_PEAK_CACHE=off: no cache (every
 * run measures, as the tests do). A record from another host, CPU model or
 * instruction set is ignored with a note, as is a malformed one or one
 * behind a symbolic link: reading the cache never fails a run. */
#ifndef ZB_PEAK_CACHE_H
#define ZB_PEAK_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_PEAK_CACHE_ENV "ZB_PEAK_CACHE"
#define ZB_PEAK_CACHE_SCHEMA "zerobench-peak/1"
#define ZB_PEAK_CACHE_MAX_BYTES 65536

/* What a cached figure is valid for: the host and the CPU it timed. */
typedef struct zb_peak_host {
    char host[64];       /* gethostname */
    char cpu_model[128]; /* /proc/cpuinfo "model name" ("unknown" without one) */
    int cores;           /* online cores (recorded, not compared: the figure is per core) */
    char isa[16];        /* the FMA loop's instructions ("avx512f", ...) */
} zb_peak_host;

typedef struct zb_peak_record {
    zb_peak_host host;
    int runs;
    /* GFLOP/s of one core: the best run (the peak), and the spread. */
    double best_gflops, min_gflops, median_gflops, max_gflops;
    char date[24]; /* UTC, "2025-06-01T15:20:03Z" */
} zb_peak_record;

/* This machine: hostname, CPU model, cores, and `isa` as given. */
void zb_peak_host_here(const char *isa, zb_peak_host *h);

/* The cache file for `host` into out (n bytes); false when caching is off
 * (ZB_PEAK_CACHE=off) or no path can be formed (no HOME, too long). */
bool zb_peak_cache_path(const char *host, char *out, size_t n);

/* True with *rec when `path` holds a valid record measured on `here`
 * (host, CPU model and ISA equal). False otherwise, with why in note (n
 * bytes; "" when there is simply no file yet). Never fails the caller. */
bool zb_peak_cache_read(const char *path, const zb_peak_host *here, zb_peak_record *rec, char *note, size_t n);

/* Writes rec to path atomically (a temporary file, then rename), creating
 * its folder; a symbolic link at the path is refused, not written through.
 * ZB_ERR_INVALID / ZB_ERR_IO with a message naming the path. */
zb_status zb_peak_cache_write(const char *path, const zb_peak_record *rec);

/* `t` as the record's date format (UTC) into out (at least 24 bytes). */
void zb_peak_date(long long t, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
