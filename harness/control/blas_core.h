/* Which OpenBLAS kernel set ("core") the process runs, and why
 * (docs/design.md §9, "The BLAS core").
 *
 * OpenBLAS built with DYNAMIC_ARCH picks its kernels once, in a constructor
 * that runs when the library is loaded, from its own CPU detection or from
 * OPENBLAS_CORETYPE. Its detection can miss a CPU (a processor that names
 * itself only "Intel(R) Xeon(R) Processor" gets the SSE3 Prescott kernels
 * although it has AVX-512), and nothing can change the choice after load.
 * So zerobench decides before MPI starts and, when another core must run,
 * executes itself again with OPENBLAS_CORETYPE set and a marker variable
 * (ZB_BLAS_CORE_SET) that says the variable is zerobench's, what the
 * library chose on its own and how the choice was made. The process that
 * finds the marker never re-executes, and removes both variables from its
 * environment so the processes it starts decide for themselves.
 *
 * --blas-core auto (default): the strongest core the CPU's flags
 * (/proc/cpuinfo) support when the library chose a weaker known x86 core;
 * keep: the library's own choice; NAME: that core. A user's
 * OPENBLAS_CORETYPE is never overridden (NAME that disagrees with it is bad
 * input). Test hook: ZB_TEST_BLAS_DETECTED=NAME makes zerobench treat NAME
 * as the library's own choice (and run it where the decision keeps it), so
 * tests can force a weak detection on any machine.
 *
 * The pure parts (names, ranks, the decision) need no OpenBLAS and are unit
 * tested; zb_blas_core_decide_here and zb_blas_core_check use the library. */
#ifndef ZB_BLAS_CORE_H
#define ZB_BLAS_CORE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_BLAS_CORE_ENV "OPENBLAS_CORETYPE"
#define ZB_BLAS_CORE_MARKER_ENV "ZB_BLAS_CORE_SET"
#define ZB_BLAS_CORE_TEST_ENV "ZB_TEST_BLAS_DETECTED"

typedef enum zb_blas_core_mode {
    ZB_BLAS_CORE_AUTO,
    ZB_BLAS_CORE_KEEP,
    ZB_BLAS_CORE_NAMED,
} zb_blas_core_mode;

/* The canonical spelling of an OpenBLAS x86-64 core name (matched without
 * case), or NULL when `name` is not one. */
const char *zb_blas_core_canonical(const char *name);
/* The accepted names, "|"-separated, for messages and --help. */
const char *zb_blas_core_names(void);
/* Strength of a core for fp32 GEMM (higher is stronger: Prescott 2,
 * Haswell 6, SkylakeX 7); -1 when the name is not a known x86 core. */
int zb_blas_core_rank(const char *name);
/* The strongest core the CPU flags (the "flags" line of /proc/cpuinfo,
 * space-separated) support, and in `why` the flags that decided it; NULL
 * when the flags do not even show SSE3 (not x86, or unreadable). */
const char *zb_blas_core_best(const char *flags, char *why, size_t why_n);

/* "auto", "keep" or a core name (any case) into mode and canonical name;
 * else ZB_ERR_INVALID naming --blas-core, the value and what is accepted. */
zb_status zb_blas_core_parse(const char *value, zb_blas_core_mode *mode, const char **name);

/* What the process found, before deciding. */
typedef struct zb_blas_core_env {
    const char *coretype; /* OPENBLAS_CORETYPE, NULL when unset */
    const char *marker;   /* ZB_BLAS_CORE_SET, NULL when unset */
    const char *detected; /* the library's own choice (or the test hook's) */
    const char *running;  /* openblas_get_corename() now */
    const char *flags;    /* CPU flags */
} zb_blas_core_env;

/* The decision: run as is, or execute again with OPENBLAS_CORETYPE=exec_core
 * and ZB_BLAS_CORE_SET=marker; and how to describe the core that runs. */
typedef struct zb_blas_core_state {
    char exec_core[32];  /* "": no re-execution */
    char marker[96];     /* "how:library_choice:asked" for the re-executed process */
    char how[24];        /* auto | keep | --blas-core | OPENBLAS_CORETYPE */
    char library[32];    /* what the library chose on its own */
    char asked[32];      /* the core asked for ("" when none was) */
    char best[32];       /* the strongest the CPU supports ("" unknown) */
    char why[96];        /* the CPU flags that make `best` supported */
    char ran[32];        /* openblas_get_corename() of the process that runs */
    bool changed;        /* the core that runs is not the library's own choice */
    char reason[256];    /* one line: which core runs and why */
} zb_blas_core_state;

/* Pure: decides from `env` (ZB_ERR_INVALID when --blas-core NAME disagrees
 * with the user's OPENBLAS_CORETYPE or a marker is malformed). When
 * exec_core is empty, `ran` is env->running and `reason` is final. */
zb_status zb_blas_core_decide(zb_blas_core_mode mode, const char *named, const zb_blas_core_env *env,
                              zb_blas_core_state *st);

/* The same on this process: reads the environment, the CPU flags and the
 * library. When the state says to re-execute, the caller sets the two
 * variables and executes itself; otherwise, when the marker was set, both
 * variables are removed from the environment here. */
zb_status zb_blas_core_decide_here(zb_blas_core_mode mode, const char *named, zb_blas_core_state *st);

/* A sampled check of the running kernels: cblas_sgemm on small odd shapes,
 * every transpose combination, against a double-accumulating product of
 * the same inputs, within fp32's bound; ZB_ERR_WRONG naming the core. */
zb_status zb_blas_core_check(const char *core);

/* {"ran", "library_choice", "asked", "best_supported", "how", "changed",
 * "reason"} for the JSON meta ("blas_core"). */
json_t *zb_blas_core_json(const zb_blas_core_state *st);

#ifdef __cplusplus
}
#endif
#endif
