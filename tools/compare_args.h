/* zerobench compare's command line (compare_args.c), for the command
 * (compare.c): the options as given and the files, BASE... then NEW... */
#ifndef ZB_COMPARE_ARGS_H
#define ZB_COMPARE_ARGS_H

#include <stdbool.h>

#include "compare.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_CMP_MAX_TOL 64
#define ZB_CMP_MAX_BASES 256 /* base files, folders expanded */

typedef struct cmp_args {
    const char *files[2 * ZB_CMP_MAX_BASES]; /* as given: bases, then NEW (files or folders) */
    int n_files;
    bool dashdash; /* "--" seen: the files after it are NEW */
    int n_before;  /* files before "--" */
    zb_cmp_format format;
    int github_tool; /* -1 unset, 0 smaller, 1 bigger */
    const char *output;
    zb_cmp_tolerance tol[ZB_CMP_MAX_TOL];
    int n_tol;
    unsigned ignore_env;
    bool no_gate; /* --no-gate: write the output, exit 0 whatever the verdicts */
    bool gate_all;
    const zb_metric_def *gate[64];
    int n_gate;
    bool help;
} cmp_args;

/* The usage text (-h). */
extern const char *const zb_compare_usage;
/* The flags and files into `a` (ZB_ERR_INVALID with a one-line message):
 * BASE NEW, or BASE... -- NEW...; --format github-benchmark with its
 * --github-tool; the output and the files checked distinct. */
zb_status zb_compare_parse_args(int argc, char **argv, cmp_args *a);

#ifdef __cplusplus
}
#endif
#endif
