/* Fuzz target for the command line: the input bytes, split on '\0' or '\n',
 * become up to 64 arguments after argv[0] = "zerobench"; zb_cli_parse must
 * never crash, leak or hang, must fail only with ZB_ERR_INVALID and a
 * one-line message, and on success must give a configuration that keeps the
 * CLI's rules (checked here; a violation aborts). zb_cli_usage is then
 * written into a buffer. Replayed over tests/fuzz/corpus/fuzz_cli/ by CTest;
 * with -DZB_FUZZ=ON (clang) it builds as a libFuzzer binary. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ZB_FUZZ_MAX_ARGS 64

static int zb_fuzz_terminated(const char *s, size_t n) { return memchr(s, '\0', n) != NULL; }

static void zb_fuzz_check_config(const zb_config *c) {
    if (c->command < ZB_CMD_STEP || c->command >= ZB_CMD_COUNT) abort();
    if (!zb_fuzz_terminated(c->backend, sizeof c->backend) || !zb_fuzz_terminated(c->comm, sizeof c->comm) ||
        !zb_fuzz_terminated(c->model, sizeof c->model) || !zb_fuzz_terminated(c->hw, sizeof c->hw) ||
        !zb_fuzz_terminated(c->hostfile, sizeof c->hostfile) ||
        !zb_fuzz_terminated(c->json_path, sizeof c->json_path) ||
        !zb_fuzz_terminated(c->csv_path, sizeof c->csv_path) ||
        !zb_fuzz_terminated(c->trace_path, sizeof c->trace_path) ||
        !zb_fuzz_terminated(c->trace_steps, sizeof c->trace_steps))
        abort();
    if (c->n_shapes < 0 || c->n_shapes > ZB_MAX_SHAPES) abort();
    for (int i = 0; i < c->n_shapes; i++) {
        for (int d = 0; d < 3; d++) {
            if (c->shapes[i][d] < 1 || c->shapes[i][d] > (1 << 30)) abort();
        }
    }
    if (c->help) return; /* --help skips the checks between flags */
    if (c->min_bytes < 1 || c->min_bytes > c->max_bytes) abort();
    if (c->iters < 1 || c->warmup_iters < 0 || (c->check != 0 && c->check != 1)) abort();
    if (c->average < ZB_AVERAGE_RANK0 || c->average > ZB_AVERAGE_MAX) abort();
    if (c->step_factor == 0 ? c->step_bytes < 1 : c->step_factor < 2) abort();
    /* A parsed --trace-steps is a range of steps the run reaches. */
    if (c->trace_steps[0] && (c->trace_step_first < 1 || c->trace_step_last < c->trace_step_first ||
                              c->trace_step_first > c->warmup_steps + c->steps || !c->trace_path[0]))
        abort();
    if (!(c->timeout_s >= 0.1) || !(c->peak_gflops >= 0.0) || c->nodes < 0 || c->threads < 0) abort();
    if (c->emulate_nodes && c->nodes == 0) abort();
    if (strcmp(c->backend, "auto") && strcmp(c->backend, "cpu")) abort();
    if (strcmp(c->comm, "auto") && strcmp(c->comm, "mpi")) abort();
    if (c->command == ZB_CMD_GEMM && c->max_bytes > (1u << 20)) abort();
    if (c->command != ZB_CMD_GEMM && (c->n_shapes != 0 || c->tokens != 0)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* One copy with a terminator after every piece. */
    char *text = (char *)malloc(size + 1);
    if (text == NULL) return 0;
    if (size > 0) memcpy(text, data, size);
    text[size] = '\0';
    char *argv[ZB_FUZZ_MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)"zerobench";
    char *start = text;
    for (size_t i = 0; i <= size && argc < ZB_FUZZ_MAX_ARGS + 1; i++) {
        if (text[i] == '\0' || text[i] == '\n') {
            text[i] = '\0';
            argv[argc++] = start;
            start = text + i + 1;
        }
    }
    if (size == 0) argc = 1; /* no bytes: no arguments */
    argv[argc] = NULL;

    zb_config cfg;
    zb_error_clear();
    zb_status s = zb_cli_parse(argc, argv, &cfg);
    if (s == ZB_OK) {
        zb_fuzz_check_config(&cfg);
        char usage[8192];
        zb_cli_usage(cfg.command, usage, sizeof usage);
        if (!zb_fuzz_terminated(usage, sizeof usage) || strncmp(usage, "usage: zerobench", 16) != 0) abort();
        char small[40];
        zb_cli_usage(cfg.command, small, sizeof small);
        if (!zb_fuzz_terminated(small, sizeof small)) abort();
    } else {
        const char *msg = zb_error_message();
        if (s != ZB_ERR_INVALID || msg[0] == '\0' || strchr(msg, '\n') != NULL) abort();
    }
    free(text);
    return 0;
}
