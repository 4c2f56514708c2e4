/* nccl-tests' flags that zerobench's collectives do not otherwise take, so
 * that a command line pasted from nccl-tests either means the same here or
 * stops with one line saying what zerobench does instead (exit 2). The flags
 * are those of nccl-tests' src/common.cu (getopt string and long options);
 * -b -e -i -f -n -w -c -d -a are the sweep's own (bench_opts.c,
 * coll_bench.c) and -T is --timeout's short form (harness/cli/cli.c).
 *
 * A ZB_OPT_ACCEPT flag takes nccl-tests' default, which changes nothing
 * here (-g 1, -o sum, -z 0), and refuses every other value; one without a
 * no-op value (-x, -V) refuses them all. -J is --json under nccl-tests'
 * name: the file is zerobench's JSON, not nccl-tests'. */
#include "coll_bench.h"

#define ACCEPT(long_, short_, value, help, instead) \
    {long_, short_, ZB_OPT_ACCEPT, 0, 0, 0, 0, "nccl-tests' flag: " help, value, instead}

static const char ONE_GPU[] = "zerobench runs one GPU per rank: launch N ranks with mpirun instead";

static const zb_opt opt_nthreads = ACCEPT("nthreads", 't', "1", "1 only (one thread, one GPU per rank)", ONE_GPU);
static const zb_opt opt_ngpus = ACCEPT("ngpus", 'g', "1", "1 only (one GPU per rank)", ONE_GPU);
static const zb_opt opt_op = ACCEPT("op", 'o', "sum", "sum only (all-gather: ignored)",
                                    "zerobench's collectives sum; other ops are not measured");
static const zb_opt opt_root =
    ACCEPT("root", 'r', "0", "0 only",
           "allgather, reducescatter and allreduce have no root (the table's root column shows -1)");
static const zb_opt opt_agg = ACCEPT("agg_iters", 'm', "1", "1 only",
                                     "zerobench issues one collective per iteration: raise -n/--iters instead");
static const zb_opt opt_cycles = ACCEPT("run_cycles", 'N', "1", "1 only",
                                        "zerobench sweeps the sizes once: run the command again to repeat");
static const zb_opt opt_parallel = ACCEPT("parallel_init", 'p', "0", "0 only",
                                          "zerobench initializes one comm per rank from one thread");
static const zb_opt opt_blocking = ACCEPT(
    "blocking", 'z', "0", "0 only (back-to-back, as zerobench times)",
    "zerobench issues the -n collectives back to back and waits once; --compare-direct (cpu) also times the "
    "plain blocking MPI call");
static const zb_opt opt_stream_null = ACCEPT("stream_null", 'y', "0", "0 only",
                                             "zerobench issues collectives on its own comm stream");
static const zb_opt opt_graph = ACCEPT("cudagraph", 'G', "0", "0 only",
                                       "zerobench launches every collective from the host and captures no CUDA graph");
static const zb_opt opt_cputime = ACCEPT(
    "report_cputime", 'C', "0", "0 only",
    "zerobench reports the time to completion (host timer around a stream sync), not the time to launch");
static const zb_opt opt_timestamps = ACCEPT("report_timestamps", 'S', "0", "0 only",
                                            "zerobench prints no timestamp per row: --trace FILE records every op's time");
static const zb_opt opt_register = ACCEPT("local_register", 'R', "0", "0 only",
                                          "zerobench does not register its buffers with the comm");
static const zb_opt opt_cta = ACCEPT("cta_policy", 'x', NULL, "refused", "zerobench leaves NCCL's CTA policy unset");
static const zb_opt opt_device_impl = ACCEPT("device_implementation", 'D', "0", "0 only",
                                             "zerobench calls the comm's host API only");
static const zb_opt opt_device_ctas = ACCEPT("device_cta_count", 'V', NULL, "refused",
                                             "zerobench has no device implementation (-D) to size");
static const zb_opt opt_memory = ACCEPT("memory", 'M', "0", "0 only",
                                        "zerobench prints no memory report: a rank holds two -e buffers and a host copy "
                                        "(see --force)");
static const zb_opt opt_unalign = ACCEPT("unalign", 'u', "0", "0 only",
                                         "zerobench's buffers start where the allocator aligns them");
static const zb_opt opt_per_iter = ACCEPT("per_iter_timing", 'I', "0", "0 only",
                                          "zerobench times the -n iterations as one loop; per-rank times are in --json");

/* -J FILE: nccl-tests writes its own JSON there; zerobench writes its own. */
static const zb_opt opt_output_file = {"output_file", 'J', ZB_OPT_TEXT, ZB_OPT_FIELD(json_path), 0, 0,
                                       "nccl-tests' flag: same as --json (zerobench/1 schema, not nccl-tests' JSON)",
                                       .alias = true};

static const zb_opt *const compat_opts[] = {
    &opt_nthreads,    &opt_ngpus,      &opt_op,          &opt_root,     &opt_agg,
    &opt_cycles,      &opt_parallel,   &opt_blocking,    &opt_stream_null, &opt_graph,
    &opt_cputime,     &opt_timestamps, &opt_register,    &opt_cta,      &opt_device_impl,
    &opt_device_ctas, &opt_memory,     &opt_unalign,     &opt_per_iter, &opt_output_file,
    NULL};
const zb_opt_group zb_coll_opts_nccl_tests = {compat_opts, NULL};
