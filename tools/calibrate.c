/* zerobench calibrate -o PROFILE.json: runs the GEMM sweep and the
 * collective sweeps on the machine at hand as child runs of this binary
 * (calib_runs.h, --json to a temporary folder), fits them (calib_fit.h) and
 * writes a hardware profile that loads like any other (calib_profile.c;
 * its options: calib_args.c):
 * the measured peak, GEMM efficiency by size and the per-op overhead, the
 * latency and bandwidth of the links inside a node and, when the job spans
 * nodes, across them; everything else from the base profile.
 *
 *   zerobench calibrate -o /tmp/here.json
 *   zerobench calibrate -o here.json --backend cuda --dtype bf16 --nodes 2 --gpus-per-node 8
 *
 * Exit codes: 0 written, 2 bad input (nothing run, no file), 1 a child run
 * or a fit that failed (no file). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib_runs.h"
#include "tool.h"

static int calibrate_main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            zb_calib_usage(stdout);
            return 0;
        }
    }
    calib_args a;
    if (zb_calib_parse_args(argc, argv, &a) != ZB_OK || zb_calib_validate(&a) != ZB_OK) {
        fprintf(stderr, "zerobench: %s\n", zb_error_message());
        return 2;
    }
    static zb_calib c; /* large: off the stack */
    memset(&c, 0, sizeof c);
    snprintf(c.dtype, sizeof c.dtype, "%s", a.dtype);
    c.nodes = a.nodes ? atoi(a.nodes) : 1;
    c.gpus_per_node = a.gpn ? atoi(a.gpn) : 2;
    calib_run r;
    const char *tmpdir = getenv("TMPDIR");
    snprintf(r.dir, sizeof r.dir, "%s/zb_calibrate.XXXXXX", tmpdir && tmpdir[0] ? tmpdir : "/tmp");
    r.timeout_s = atof(a.timeout);
    if (!mkdtemp(r.dir)) {
        fprintf(stderr, "zerobench: calibrate: cannot make a temporary folder %s: %s\n", r.dir, strerror(errno));
        return 1;
    }
    zb_status s = zb_calib_mem_sweep(&a, &r, &c);
    if (s == ZB_OK) s = zb_calib_kern_sweep(&a, &r, &c);
    if (s == ZB_OK) s = zb_calib_gemm_sweep(&a, &r, &c);
    if (s == ZB_OK) s = zb_calib_gemm_model_sweep(&a, &r, &c);
    if (s == ZB_OK) s = zb_calib_attn_sweep(&a, &r, &c);
    if (s == ZB_OK && c.nodes * c.gpus_per_node > 1) s = zb_calib_step_sweep(&a, &r, &c);
    if (s == ZB_OK && c.gpus_per_node > 1) s = zb_calib_coll_sweeps(&a, &r, ZB_CALIB_INTRA, "1", &c);
    if (s == ZB_OK && c.nodes > 1) s = zb_calib_coll_sweeps(&a, &r, ZB_CALIB_INTER, a.nodes, &c);
    static char missing[2048], borrowed[2048];
    if (s == ZB_OK) s = zb_calib_write_profile(&c, a.out, missing, borrowed, sizeof missing);
    zb_calib_remove_dir(r.dir);
    json_decref(c.base);
    if (s != ZB_OK) {
        fprintf(stderr, "zerobench: %s\n", zb_error_message());
        return s == ZB_ERR_INVALID ? 2 : 1;
    }
    zb_calib_print_summary(&c, a.out, missing, borrowed);
    return 0;
}

const zb_tool zb_tool_calibrate = {
    .name = "calibrate",
    .summary = "run the GEMM and collective sweeps here and write a hardware profile fitted to them",
    .main = calibrate_main,
};
