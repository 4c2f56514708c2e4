/* Command-line options as data, so that each benchmark entry (bench.h)
 * carries its own: an option names a zb_config field, its kind of value,
 * its accepted range and its --help line; options come in groups, and a
 * group may check combinations of its flags once all are read. The CLI
 * (harness/cli/cli.c) parses any command from its entry's groups, followed
 * by the options every command takes (the CLI's own), and prints --help in
 * that order.
 *
 * Shared here: the sweep groups the collectives and gemm take, --model,
 * which gemm and step both take, and the one value parser (zb_opt_set).
 * The model's shape and run flags, which step, scale and the plan tool
 * take, are in model_opts.h. A benchmark's own options live next to it
 * (coll_bench.c: -i; gemm.c; step.c). */
#ifndef ZB_BENCH_OPTS_H
#define ZB_BENCH_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "bench_config.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum zb_opt_kind {
    ZB_OPT_SIZE,   /* uint64_t bytes with K/M/G/T suffixes, in [min, max] */
    ZB_OPT_INT,    /* int64_t, or int for an int-sized field, in [min, max] */
    ZB_OPT_REAL,   /* double in [min, max] */
    ZB_OPT_TEXT,   /* char[size], non-empty */
    ZB_OPT_FLAG,   /* bool set to true; takes no value */
    ZB_OPT_ONOFF,  /* bool from on|off */
    ZB_OPT_DTYPE,  /* zb_dtype */
    ZB_OPT_SHAPE,  /* appends MxNxK to cfg->shapes (repeatable) */
    ZB_OPT_CHOICE, /* int: the index of the value in `choices` */
    ZB_OPT_INT_LIST, /* zb_int_list: N or N1,N2,... each an integer in [min, max] */
    ZB_OPT_ACCEPT, /* no field: the one value in `choices` (NULL: none) is taken as a no-op,
                    * any other is refused with `instead` (coll_compat.c) */
} zb_opt_kind;

typedef struct zb_opt {
    const char *name; /* long name without "--" */
    char short_name;  /* 0 when none */
    zb_opt_kind kind;
    size_t offset; /* into zb_config */
    size_t size;   /* of the field */
    double min, max;
    const char *help;
    const char *choices; /* ZB_OPT_CHOICE: "a|b|c"; ZB_OPT_ACCEPT: the value taken */
    const char *instead; /* ZB_OPT_ACCEPT: what zerobench does instead, for the refusal */
    /* A second name of another option's field (nccl-tests' -J for --json):
     * the ranks' configuration check compares and names that option only. */
    bool alias;
} zb_opt;

/* offset and size of a zb_config field, for a zb_opt initializer. */
#define ZB_OPT_FIELD(field) offsetof(zb_config, field), sizeof(((zb_config *)0)->field)

/* The options given on a command line, each once (the parser fills it). */
#define ZB_OPT_SEEN_MAX 128
typedef struct zb_opt_seen {
    const zb_opt *given[ZB_OPT_SEEN_MAX];
    int n;
} zb_opt_seen;

bool zb_opt_given(const zb_opt_seen *seen, const zb_opt *o);

/* Sets o's zb_config field from the text of its value (a ZB_OPT_FLAG's is
 * ""), checked against the option's kind and range. Bad input is
 * ZB_ERR_INVALID with one line naming the flag, the value and what is
 * accepted ("--layers '0': expected an integer from 1 to 1048576"). The one
 * value parser: the CLI's for every command, and a tool's for the step's
 * flags it takes (tools/plan.c), so both say the same. */
zb_status zb_opt_set(const zb_opt *o, const char *value, zb_config *cfg);
/* How messages and --help name a flag: "-b/--minbytes" or "--json". */
void zb_opt_flag_display(const zb_opt *o, char *out, size_t n);

typedef struct zb_opt_group {
    const zb_opt *const *opts; /* NULL-terminated, in --help order */
    /* Checks combinations once every flag is read, and sets what they imply
     * (ZB_ERR_INVALID with a one-line message naming the flags); NULL: none.
     * Skipped under --help. */
    zb_status (*check)(zb_config *cfg, const zb_opt_seen *seen);
} zb_opt_group;

/* -b -e -f: the size sweep (gemm: M=N=K), checked -b <= -e. */
extern const zb_opt_group zb_opts_sweep_range;
/* -n -w -c -d -a --compare-direct --direct-rounds --force: how each size is
 * run and checked. */
extern const zb_opt_group zb_opts_sweep_run;
/* --model, shared by gemm and step. */
extern const zb_opt zb_opt_model;
/* --straggler-pct, shared by the step and the collectives. */
extern const zb_opt zb_opt_straggler_pct;
extern const zb_opt zb_opt_minbytes, zb_opt_maxbytes, zb_opt_stepfactor;

#ifdef __cplusplus
}
#endif
#endif
