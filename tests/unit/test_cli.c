/* Unit tests of the command line (harness/cli/cli.c): every error path of
 * zb_cli_parse returns ZB_ERR_INVALID with a one-line message naming the
 * flag and the value given; the accepted spellings (--name=V, --name V,
 * -xV, -x V), the defaults (nccl-tests' for the collectives, 256..2048 for
 * gemm), the default subcommand (step), --help, and zb_cli_usage listing
 * exactly the flags of a command. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "zb_test.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define MAX_ARGS 200

/* Parses "zerobench" + `args` (NULL-terminated). */
static zb_status parse(const char *const *args, zb_config *cfg) {
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)"zerobench";
    for (int i = 0; args[i] != NULL && argc < MAX_ARGS; i++) argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    return zb_cli_parse(argc, argv, cfg);
}

static void join(const char *const *args, char *out, size_t n) {
    out[0] = '\0';
    for (int i = 0; args[i] != NULL; i++) {
        size_t used = strlen(out);
        if (used + 2 >= n) break;
        snprintf(out + used, n - used, "%s%s", i ? " " : "", args[i]);
    }
}

/* The parse must fail with ZB_ERR_INVALID and a one-line message that
 * contains `need1` and `need2` (the flag and the value, usually). */
static void expect_bad_at(int line, const char *const *args, const char *need1, const char *need2) {
    zb_config cfg;
    char cmd[160];
    join(args, cmd, sizeof cmd);
    zb_status s = parse(args, &cfg);
    const char *msg = zb_error_message();
    ZB_CHECK_MSG(s == ZB_ERR_INVALID, "line %d: `%s` gave status %d, want ZB_ERR_INVALID", line, cmd, (int)s);
    if (s != ZB_ERR_INVALID) return;
    ZB_CHECK_MSG(need1 == NULL || strstr(msg, need1) != NULL, "line %d: `%s`: message lacks \"%s\": %s", line,
                 cmd, need1, msg);
    ZB_CHECK_MSG(need2 == NULL || strstr(msg, need2) != NULL, "line %d: `%s`: message lacks \"%s\": %s", line,
                 cmd, need2, msg);
    ZB_CHECK_MSG(strchr(msg, '\n') == NULL && msg[0] != '\0', "line %d: `%s`: message is not one line: %s", line,
                 cmd, msg);
    /* Not cut off at ZB_ERROR_MAX: the message ends with its "(file:line)". */
    size_t len = strlen(msg);
    ZB_CHECK_MSG(len > 0 && len < ZB_ERROR_MAX - 1 && msg[len - 1] == ')',
                 "line %d: `%s`: message truncated or malformed: %s", line, cmd, msg);
}
#define BAD(args, need1, need2) expect_bad_at(__LINE__, args, need1, need2)

static void expect_ok_at(int line, const char *const *args, zb_config *cfg) {
    char cmd[160];
    join(args, cmd, sizeof cmd);
    zb_status s = parse(args, cfg);
    ZB_CHECK_MSG(s == ZB_OK, "line %d: `%s` gave status %d: %s", line, cmd, (int)s, zb_error_message());
}
#define OK(args, cfg) expect_ok_at(__LINE__, args, cfg)

static void test_unknown(void) {
    BAD(ARGS("allgather", "--bogus"), "--bogus", "unknown option");
    BAD(ARGS("allgather", "--bogus=3"), "--bogus=3", "unknown option");
    BAD(ARGS("allgather", "-Z"), "'-Z'", "unknown option");
    BAD(ARGS("allgather", "--minbytesx=4K"), "--minbytesx=4K", NULL);
    BAD(ARGS("allgather", "--minbyte", "4K"), "--minbyte", NULL);
    BAD(ARGS("allgather", "--=4K"), "--=4K", NULL);
    BAD(ARGS("allgather", "stray"), "'stray'", NULL);
    BAD(ARGS("allgather", "--"), "'--'", NULL);
    BAD(ARGS("allgather", "-"), "'-'", NULL);
    BAD(ARGS("-b"), "-b/--minbytes", "needs a value"); /* step is the default command */
    BAD(ARGS("bogus"), "'bogus'", "allgather");
    BAD(ARGS("Allgather"), "'Allgather'", "unknown subcommand");
    BAD(ARGS(""), "''", "unknown subcommand");
    BAD(ARGS("allgather", "allreduce"), "'allreduce'", NULL);
    BAD(ARGS("allgather", "--help=yes"), "--help=yes", "no value");
    BAD(ARGS("allgather", "-hx"), "-hx", "no value");
    BAD(ARGS("gemm", "--compare-direct=1"), "--compare-direct=1", "no value");
    BAD(ARGS("allreduce", "--direct-rounds", "0"), "--direct-rounds", "0");
    BAD(ARGS("gemm", "--direct-rounds", "x"), "--direct-rounds", "'x'");
    BAD(ARGS("allgather", "--emulate-nodes=on"), "--emulate-nodes=on", "no value");
}

static void test_missing_value(void) {
    BAD(ARGS("allgather", "-b"), "-b/--minbytes", "needs a value");
    BAD(ARGS("allgather", "--minbytes"), "-b/--minbytes", "needs a value");
    BAD(ARGS("allgather", "-b", "1K", "-e"), "-e/--maxbytes", "needs a value");
    BAD(ARGS("gemm", "--shape"), "--shape", "needs a value");
    BAD(ARGS("allgather", "--json"), "--json", "needs a value");
    BAD(ARGS("allgather", "--timeout"), "--timeout", "needs a value");
    BAD(ARGS("--model"), "--model", "needs a value");
    /* The next flag is taken as the value, and rejected as such. */
    BAD(ARGS("allgather", "-b", "--json", "x.json"), "-b/--minbytes", "'--json'");
}

static void test_wrong_command(void) {
    BAD(ARGS("allgather", "--shape", "1x1x1"), "--shape", "'allgather'");
    BAD(ARGS("allreduce", "--model", "tiny"), "--model", "'allreduce'");
    BAD(ARGS("reducescatter", "--tokens", "4"), "--tokens", "'reducescatter'");
    BAD(ARGS("gemm", "-i", "4K"), "-i/--stepbytes", "'gemm'");
    BAD(ARGS("gemm", "-i", "4K"), "-i/--stepbytes", "'gemm'");
    BAD(ARGS("-b", "4K"), "-b/--minbytes", "'step'");
    BAD(ARGS("step", "-n", "5"), "-n/--iters", "'step'");
    BAD(ARGS("--shape", "1x1x1"), "--shape", "'step'");
    BAD(ARGS("step", "--compare-direct"), "--compare-direct", "'step'");
}

static void test_sizes(void) {
    BAD(ARGS("allgather", "-b", "64M", "-e", "1M"), "-b/--minbytes 64M", "-e/--maxbytes 1M");
    BAD(ARGS("allgather", "-e", "1K"), "-b/--minbytes 32M", "-e/--maxbytes 1K"); /* default -b 32M */
    BAD(ARGS("allgather", "-b", "0"), "-b/--minbytes", "'0'");
    BAD(ARGS("allgather", "-b", "-1"), "-b/--minbytes", "'-1'");
    BAD(ARGS("allgather", "-b", "abc"), "-b/--minbytes", "'abc'");
    BAD(ARGS("allgather", "-b", "12Q"), "-b/--minbytes", "'12Q'");
    BAD(ARGS("allgather", "-b", "1.5M"), "-b/--minbytes", "'1.5M'");
    BAD(ARGS("allgather", "-b", ""), "-b/--minbytes", "''");
    BAD(ARGS("allgather", "--minbytes="), "-b/--minbytes", "''");
    BAD(ARGS("allgather", "-b", "99999999999999999999"), "-b/--minbytes", "'99999999999999999999'");
    BAD(ARGS("allgather", "-b", "16777216T"), "-b/--minbytes", "'16777216T'");
    BAD(ARGS("allgather", "-b", "2T", "-e", "2T"), "-b/--minbytes", "'2T'"); /* above 1T */
    BAD(ARGS("allgather", "-e", "0"), "-e/--maxbytes", "'0'");
    BAD(ARGS("allgather", "-e", "-4K"), "-e/--maxbytes", "'-4K'");
    BAD(ARGS("allgather", "-e", "junk"), "-e/--maxbytes", "'junk'");
    BAD(ARGS("allgather", "-e", "99999999999999999999"), "-e/--maxbytes", "'99999999999999999999'");
    BAD(ARGS("allgather", "-e", "1025G"), "-e/--maxbytes", "'1025G'");
    BAD(ARGS("allgather", "-e1x"), "-e/--maxbytes", "'1x'");
    BAD(ARGS("allgather", "-b=4K"), "-b/--minbytes", "'=4K'");
    BAD(ARGS("allgather", "-i", "0"), "-i/--stepbytes", "'0'");
    BAD(ARGS("allgather", "-i", "x"), "-i/--stepbytes", "'x'");
}

static void test_numbers(void) {
    BAD(ARGS("allgather", "-f", "1"), "-f/--stepfactor", "'1'");
    BAD(ARGS("allgather", "-f", "0"), "-f/--stepfactor", "'0'");
    BAD(ARGS("allgather", "-f", "1025"), "-f/--stepfactor", "'1025'");
    BAD(ARGS("allgather", "-f", "2.5"), "-f/--stepfactor", "'2.5'");
    BAD(ARGS("allgather", "-f", "2", "-i", "1K"), "-f/--stepfactor", "-i/--stepbytes");
    BAD(ARGS("allgather", "-i", "1K", "-f", "2"), "-f/--stepfactor", "-i/--stepbytes");
    BAD(ARGS("allgather", "-n", "0"), "-n/--iters", "'0'");
    BAD(ARGS("allgather", "-n", "-5"), "-n/--iters", "'-5'");
    BAD(ARGS("allgather", "-n", "1e3"), "-n/--iters", "'1e3'");
    BAD(ARGS("allgather", "-n", "10000001"), "-n/--iters", "'10000001'");
    BAD(ARGS("allgather", "-n", "99999999999999999999"), "-n/--iters", "'99999999999999999999'");
    BAD(ARGS("allgather", "-w", "-1"), "-w/--warmup_iters", "'-1'");
    BAD(ARGS("allgather", "-w", "x"), "-w/--warmup_iters", "'x'");
    BAD(ARGS("allgather", "-c", "2"), "-c/--check", "'2'");
    BAD(ARGS("allgather", "-c", "-1"), "-c/--check", "'-1'");
    BAD(ARGS("allgather", "-c", "yes"), "-c/--check", "'yes'");
    BAD(ARGS("allgather", "-a", "4"), "-a/--average", "'4'");
    BAD(ARGS("allgather", "-a", "-1"), "-a/--average", "'-1'");
    BAD(ARGS("allgather", "-d", "fp8"), "-d/--datatype", "'fp8'");
    BAD(ARGS("allgather", "-d", ""), "-d/--datatype", "''");
    BAD(ARGS("allgather", "--malloc-keep", "maybe"), "--malloc-keep", "'maybe'");
    BAD(ARGS("allgather", "--malloc-keep", "ON"), "--malloc-keep", "'ON'");
    BAD(ARGS("allgather", "--timeout", "0"), "--timeout", "'0'");
    BAD(ARGS("allgather", "--timeout", "nan"), "--timeout", "'nan'");
    BAD(ARGS("allgather", "--timeout", "inf"), "--timeout", "'inf'");
    BAD(ARGS("allgather", "--timeout", "-3"), "--timeout", "'-3'");
    BAD(ARGS("allgather", "--timeout", "1e999"), "--timeout", "'1e999'");
    BAD(ARGS("allgather", "--timeout", "5s"), "--timeout", "'5s'");
    BAD(ARGS("allgather", "--nodes", "0"), "--nodes", "'0'");
    BAD(ARGS("allgather", "--nodes", "-2"), "--nodes", "'-2'");
    BAD(ARGS("allgather", "--gpus-per-node", "0"), "--gpus-per-node", "'0'");
    BAD(ARGS("allgather", "--threads", "0"), "--threads", "'0'");
    BAD(ARGS("allgather", "--threads", "4097"), "--threads", "'4097'");
    BAD(ARGS("gemm", "--peak-gflops", "0"), "--peak-gflops", "'0'");
    BAD(ARGS("gemm", "--peak-gflops", "nan"), "--peak-gflops", "'nan'");
    BAD(ARGS("gemm", "--model", "tiny", "--tokens", "0"), "--tokens", "'0'");
}

static void test_text_and_combinations(void) {
    BAD(ARGS("allgather", "--emulate-nodes"), "--emulate-nodes", "--nodes");
    BAD(ARGS("allgather", "--backend", "gpu"), "--backend", "'gpu'");
    BAD(ARGS("allgather", "--backend", "junk"), "--backend", "'junk'");
    BAD(ARGS("allgather", "--backend", "averyveryverylongname"), "--backend", "'averyveryverylongname'");
    BAD(ARGS("allgather", "--backend", ""), "--backend", "''");
    BAD(ARGS("allgather", "--comm", "junk"), "--comm", "'junk'");
    BAD(ARGS("allgather", "--comm", "gloo"), "--comm", "'gloo'");
    BAD(ARGS("allgather", "--json", ""), "--json", "''");
    BAD(ARGS("allgather", "--hw", ""), "--hw", "''");
    /* Control characters in a value never break the one-line message. */
    BAD(ARGS("allgather", "-b", "4\nK"), "-b/--minbytes", "'4\\nK'");
    BAD(ARGS("allgather", "--backend", "c\npu"), "--backend", "'c\\npu'");
    BAD(ARGS("allgather", "--comm", "m\rpi"), "--comm", "'m\\rpi'");
    BAD(ARGS("allgather", "--bo\ngus"), "'--bo\\ngus'", NULL);
    BAD(ARGS("bo\ngus"), "'bo\\ngus'", NULL);

    /* Paths of ZB_PATH_MAX characters or more are refused; the message
     * still ends with what is accepted (the value is shortened). */
    char *long_path = (char *)malloc(ZB_PATH_MAX + 1);
    memset(long_path, 'p', ZB_PATH_MAX);
    long_path[ZB_PATH_MAX] = '\0';
    BAD(ARGS("allgather", "--json", long_path), "--json 'pppp", "shorter than 1024");
    BAD(ARGS("allgather", "--csv", long_path), "--csv", "shorter than 1024");
    BAD(ARGS("allgather", "--trace", long_path), "--trace", "shorter than 1024");
    BAD(ARGS("allgather", "--hostfile", long_path), "--hostfile", "shorter than 1024");
    BAD(ARGS(long_path), "unknown subcommand 'pppp", "accepted: step");
    long_path[0] = '-';
    long_path[1] = '-';
    BAD(ARGS("allgather", long_path), "unknown option '--ppp", "see --help");
    long_path[ZB_PATH_MAX - 1] = '\0'; /* 1023 characters: accepted */
    long_path[0] = 'p';
    long_path[1] = 'p';
    zb_config cfg;
    OK(ARGS("allgather", "--json", long_path), &cfg);
    ZB_CHECK(strlen(cfg.json_path) == ZB_PATH_MAX - 1);
    free(long_path);

    char long_model[200];
    memset(long_model, 'm', sizeof long_model - 1);
    long_model[sizeof long_model - 1] = '\0';
    BAD(ARGS("gemm", "--model", long_model), "--model", "shorter than 128");

    BAD(ARGS("gemm", "--shape", "1x1x1", "--model", "tiny"), "--shape", "--model");
    BAD(ARGS("gemm", "-b", "256", "--shape", "1x1x1"), "-b/-e", "--shape");
    BAD(ARGS("gemm", "-e", "1024", "--model", "tiny"), "-b/-e", "--model");
    BAD(ARGS("gemm", "-b", "256", "-e", "2M"), "-e/--maxbytes", "2097152");
    BAD(ARGS("gemm", "-e", "1048577"), "-e/--maxbytes", "1048577");
    BAD(ARGS("gemm", "-b", "4096"), "-b/--minbytes 4K", "-e/--maxbytes 2K"); /* default -e 2048 */
    BAD(ARGS("gemm", "--shape", "0x1x1"), "--shape", "'0x1x1'");
    BAD(ARGS("gemm", "--shape", "1x2"), "--shape", "'1x2'");
    BAD(ARGS("gemm", "--shape=axbxc"), "--shape", "'axbxc'");

    /* 64 shapes are accepted, the 65th is refused. */
    const char *args[2 * 65 + 2];
    int n = 0;
    args[n++] = "gemm";
    for (int i = 0; i < 64; i++) {
        args[n++] = "--shape";
        args[n++] = "8x16x32";
    }
    args[n] = NULL;
    OK(args, &cfg);
    ZB_CHECK(cfg.n_shapes == 64 && cfg.shapes[63][0] == 8 && cfg.shapes[63][1] == 16 && cfg.shapes[63][2] == 32);
    args[n++] = "--shape";
    args[n++] = "9x9x9";
    args[n] = NULL;
    BAD(args, "--shape", "'9x9x9'");
}

static void test_accepted(void) {
    zb_config cfg;
    const char *const *forms[] = {ARGS("allgather", "--minbytes=4K"), ARGS("allgather", "--minbytes", "4K"),
                                  ARGS("allgather", "-b4K"), ARGS("allgather", "-b", "4K"),
                                  ARGS("allgather", "-b", "4096"), ARGS("allgather", "-b", "4KiB")};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        OK(forms[i], &cfg);
        ZB_CHECK_MSG(cfg.min_bytes == 4096 && cfg.max_bytes == 32u << 20, "form %zu: min %llu max %llu", i,
                     (unsigned long long)cfg.min_bytes, (unsigned long long)cfg.max_bytes);
    }

    /* nccl-tests' defaults. */
    OK(ARGS("allgather"), &cfg);
    ZB_CHECK(cfg.command == ZB_CMD_ALLGATHER);
    ZB_CHECK(cfg.min_bytes == 32u << 20 && cfg.max_bytes == 32u << 20);
    ZB_CHECK(cfg.step_factor == 2 && cfg.step_bytes == 0);
    ZB_CHECK(cfg.iters == 20 && cfg.warmup_iters == 5 && cfg.check == 1);
    ZB_CHECK(cfg.average == ZB_AVERAGE_MEAN && cfg.dtype == ZB_DTYPE_F32);
    ZB_CHECK(!strcmp(cfg.backend, "auto") && !strcmp(cfg.comm, "auto"));
    ZB_CHECK(cfg.timeout_s == 300.0 && cfg.malloc_keep && !cfg.help && !cfg.compare_direct);
    ZB_CHECK(cfg.nodes == 0 && cfg.gpus_per_node == 0 && !cfg.emulate_nodes && cfg.threads == 0);
    ZB_CHECK(cfg.json_path[0] == '\0' && cfg.csv_path[0] == '\0' && cfg.trace_path[0] == '\0');
    ZB_CHECK(cfg.hostfile[0] == '\0' && cfg.hw[0] == '\0' && cfg.model[0] == '\0' && cfg.n_shapes == 0);

    OK(ARGS("reducescatter"), &cfg);
    ZB_CHECK(cfg.command == ZB_CMD_REDUCESCATTER);
    OK(ARGS("allreduce"), &cfg);
    ZB_CHECK(cfg.command == ZB_CMD_ALLREDUCE);

    /* gemm: default sweep M=N=K 256..2048; -b or -e alone keeps the other. */
    OK(ARGS("gemm"), &cfg);
    ZB_CHECK(cfg.command == ZB_CMD_GEMM && cfg.min_bytes == 256 && cfg.max_bytes == 2048 && !cfg.gemm_sweep_given);
    OK(ARGS("gemm", "-e", "1024"), &cfg);
    ZB_CHECK_MSG(cfg.min_bytes == 256 && cfg.max_bytes == 1024 && cfg.gemm_sweep_given, "gemm -e 1024: %llu..%llu",
                 (unsigned long long)cfg.min_bytes, (unsigned long long)cfg.max_bytes);
    OK(ARGS("gemm", "-b", "512"), &cfg);
    ZB_CHECK(cfg.min_bytes == 512 && cfg.max_bytes == 2048 && cfg.gemm_sweep_given);
    OK(ARGS("gemm", "-b", "1M", "-e", "1M"), &cfg); /* the largest dimension */
    ZB_CHECK(cfg.min_bytes == 1u << 20 && cfg.max_bytes == 1u << 20);
    OK(ARGS("gemm", "--shape", "4096x4096x4096", "--shape=1x2x3"), &cfg);
    ZB_CHECK(cfg.n_shapes == 2 && cfg.shapes[0][0] == 4096 && cfg.shapes[1][0] == 1 && cfg.shapes[1][1] == 2 &&
             cfg.shapes[1][2] == 3 && !cfg.gemm_sweep_given);
    OK(ARGS("gemm", "--model", "tiny", "--tokens", "128", "--peak-gflops", "1.5"), &cfg);
    ZB_CHECK(!strcmp(cfg.model, "tiny") && cfg.tokens == 128 && cfg.peak_gflops == 1.5);
    OK(ARGS("gemm", "--compare-direct", "-n", "3", "-w", "0", "-c", "0", "-a", "3", "-f", "4"), &cfg);
    ZB_CHECK(cfg.compare_direct && cfg.iters == 3 && cfg.warmup_iters == 0 && cfg.check == 0 &&
             cfg.average == ZB_AVERAGE_MAX && cfg.step_factor == 4 && cfg.direct_rounds == 3);
    OK(ARGS("reducescatter", "--compare-direct", "--direct-rounds", "7"), &cfg);
    ZB_CHECK(cfg.direct_rounds == 7 && !cfg.force);
    OK(ARGS("allreduce", "--force"), &cfg);
    ZB_CHECK(cfg.force);
    OK(ARGS("gemm", "--force", "--shape", "8x8x8"), &cfg);
    ZB_CHECK(cfg.force);
    BAD(ARGS("step", "--force"), "--force", "'step'");
    BAD(ARGS("allgather", "--force=yes"), "--force", "takes no value");

    /* step is the default command when argv[1] is a flag or absent. */
    OK(ARGS("--timeout", "5"), &cfg);
    ZB_CHECK(cfg.command == ZB_CMD_STEP && cfg.timeout_s == 5.0);
    const char *argv0[] = {"zerobench", NULL};
    ZB_CHECK_OK(zb_cli_parse(1, (char *const *)argv0, &cfg));
    ZB_CHECK(cfg.command == ZB_CMD_STEP);
    OK(ARGS("step", "--model", "tiny"), &cfg);
    ZB_CHECK(cfg.command == ZB_CMD_STEP && !strcmp(cfg.model, "tiny"));

    /* Mixed precision: --param-dtype (default -1: by device), --act-dtype
     * and --grad-reduce-dtype (default -1: follow the param dtype); only
     * float and bf16, step only. zb_config_step_dtypes resolves them. */
    zb_dtype pd, ad, gd;
    ZB_CHECK(cfg.param_dtype == ZB_DTYPE_UNSET && cfg.act_dtype == ZB_DTYPE_UNSET && cfg.grad_reduce_dtype == ZB_DTYPE_UNSET);
    zb_config_step_dtypes(&cfg, ZB_DTYPE_F32, &pd, &ad, &gd);
    ZB_CHECK(pd == ZB_DTYPE_F32 && ad == ZB_DTYPE_F32 && gd == ZB_DTYPE_F32);
    zb_config_step_dtypes(&cfg, ZB_DTYPE_BF16, &pd, &ad, &gd);
    ZB_CHECK(pd == ZB_DTYPE_BF16 && ad == ZB_DTYPE_BF16 && gd == ZB_DTYPE_BF16);
    OK(ARGS("--param-dtype", "bf16"), &cfg);
    ZB_CHECK(cfg.param_dtype == ZB_DTYPE_BF16 && cfg.grad_reduce_dtype == ZB_DTYPE_UNSET);
    zb_config_step_dtypes(&cfg, ZB_DTYPE_F32, &pd, &ad, &gd);
    ZB_CHECK(pd == ZB_DTYPE_BF16 && ad == ZB_DTYPE_BF16 && gd == ZB_DTYPE_BF16);
    OK(ARGS("--param-dtype=bf16", "--grad-reduce-dtype", "float"), &cfg);
    ZB_CHECK(cfg.param_dtype == ZB_DTYPE_BF16 && cfg.grad_reduce_dtype == ZB_DTYPE_F32);
    OK(ARGS("--param-dtype=bf16", "--act-dtype", "float"), &cfg);
    zb_config_step_dtypes(&cfg, ZB_DTYPE_BF16, &pd, &ad, &gd);
    ZB_CHECK(pd == ZB_DTYPE_BF16 && ad == ZB_DTYPE_F32 && gd == ZB_DTYPE_BF16);
    OK(ARGS("--grad-reduce-dtype", "bf16"), &cfg);
    ZB_CHECK(cfg.param_dtype == ZB_DTYPE_UNSET && cfg.grad_reduce_dtype == ZB_DTYPE_BF16);
    OK(ARGS("--param-dtype", "float"), &cfg);
    zb_config_step_dtypes(&cfg, ZB_DTYPE_BF16, &pd, &ad, &gd);
    ZB_CHECK(pd == ZB_DTYPE_F32 && ad == ZB_DTYPE_F32 && gd == ZB_DTYPE_F32);
    OK(ARGS("--grad-reduce-dtype", "fp32", "--act-dtype", "bfloat16"), &cfg); /* the issue's spelling */
    ZB_CHECK(cfg.grad_reduce_dtype == ZB_DTYPE_F32 && cfg.act_dtype == ZB_DTYPE_BF16);
    BAD(ARGS("--act-dtype", "fp16"), "--act-dtype", "accepted: float, bf16");
    BAD(ARGS("--param-dtype", "fp16"), "--param-dtype", "accepted: float, bf16");
    BAD(ARGS("--param-dtype", "bf16x"), "--param-dtype", "'bf16x'");
    BAD(ARGS("--grad-reduce-dtype", "half"), "--grad-reduce-dtype", "accepted: float, bf16");
    BAD(ARGS("--grad-reduce-dtype", ""), "--grad-reduce-dtype", NULL);
    BAD(ARGS("allgather", "--param-dtype", "bf16"), "--param-dtype", "'allgather'");

    /* Flags of every kind. */
    OK(ARGS("allgather", "-i", "1M", "-b", "1M", "-e", "8M", "-d", "bf16", "-a0", "--malloc-keep", "off"), &cfg);
    ZB_CHECK(cfg.step_bytes == 1u << 20 && cfg.step_factor == 0 && cfg.dtype == ZB_DTYPE_BF16 &&
             cfg.average == ZB_AVERAGE_RANK0 && !cfg.malloc_keep);
    OK(ARGS("allreduce", "-d", "float", "--malloc-keep=on", "--timeout=0.5", "--threads", "4096"), &cfg);
    ZB_CHECK(cfg.dtype == ZB_DTYPE_F32 && cfg.malloc_keep && cfg.timeout_s == 0.5 && cfg.threads == 4096);
    OK(ARGS("allgather", "--nodes", "2", "--gpus-per-node", "4", "--emulate-nodes", "--hostfile", "hosts"), &cfg);
    ZB_CHECK(cfg.nodes == 2 && cfg.gpus_per_node == 4 && cfg.emulate_nodes && !strcmp(cfg.hostfile, "hosts"));
    OK(ARGS("allgather", "--backend", "cpu", "--comm", "mpi", "--hw", "h200_sxm"), &cfg);
    ZB_CHECK(!strcmp(cfg.backend, "cpu") && !strcmp(cfg.comm, "mpi") && !strcmp(cfg.hw, "h200_sxm"));
    OK(ARGS("allgather", "--json", "a.json", "--csv=b.csv", "--trace", "t.json"), &cfg);
    ZB_CHECK(!strcmp(cfg.json_path, "a.json") && !strcmp(cfg.csv_path, "b.csv") &&
             !strcmp(cfg.trace_path, "t.json"));
    OK(ARGS("allgather", "-b", "1", "-e", "1T"), &cfg); /* the whole accepted range */
    ZB_CHECK(cfg.min_bytes == 1 && cfg.max_bytes == 1ULL << 40);
    OK(ARGS("allgather", "-n", "1", "-n", "7"), &cfg); /* the last one wins */
    ZB_CHECK(cfg.iters == 7);

    /* --help: sets help, skips the checks between flags. */
    OK(ARGS("allgather", "--help"), &cfg);
    ZB_CHECK(cfg.help && cfg.command == ZB_CMD_ALLGATHER);
    OK(ARGS("gemm", "-h"), &cfg);
    ZB_CHECK(cfg.help && cfg.command == ZB_CMD_GEMM);
    OK(ARGS("--help"), &cfg);
    ZB_CHECK(cfg.help && cfg.command == ZB_CMD_STEP);
    OK(ARGS("allgather", "-b", "64M", "-e", "1M", "--help"), &cfg);
    ZB_CHECK(cfg.help);

    /* A failed parse leaves nothing behind for the next one. */
    BAD(ARGS("allgather", "-n", "5", "-b", "0"), "-b/--minbytes", "'0'");
    OK(ARGS("allgather"), &cfg);
    ZB_CHECK(cfg.iters == 20 && cfg.min_bytes == 32u << 20);
}

static void test_usage(void) {
    char out[8192];
    zb_cli_usage(ZB_CMD_ALLGATHER, out, sizeof out);
    ZB_CHECK(strstr(out, "usage: zerobench") != NULL && strstr(out, "'allgather'") != NULL);
    const char *coll_has[] = {"-b/--minbytes", "-e/--maxbytes", "-f/--stepfactor", "-i/--stepbytes",
                              "-n/--iters", "-w/--warmup_iters", "-c/--check", "-d/--datatype",
                              "-a/--average", "--json", "--csv", "--trace", "--timeout", "--nodes",
                              "-h/--help", "--force"};
    for (size_t i = 0; i < sizeof coll_has / sizeof coll_has[0]; i++) {
        ZB_CHECK_MSG(strstr(out, coll_has[i]) != NULL, "allgather usage lacks %s", coll_has[i]);
    }
    ZB_CHECK_MSG(strstr(out, "--shape") == NULL && strstr(out, "--model") == NULL && strstr(out, "--tokens") == NULL,
                 "allgather usage lists gemm flags:\n%s", out);

    zb_cli_usage(ZB_CMD_GEMM, out, sizeof out);
    const char *gemm_has[] = {"'gemm'", "--shape", "--model", "--tokens", "-b/--minbytes", "--peak-gflops",
                              "--compare-direct", "-d/--datatype", "--force"};
    for (size_t i = 0; i < sizeof gemm_has / sizeof gemm_has[0]; i++) {
        ZB_CHECK_MSG(strstr(out, gemm_has[i]) != NULL, "gemm usage lacks %s", gemm_has[i]);
    }
    ZB_CHECK_MSG(strstr(out, "-i/--stepbytes") == NULL,
                 "gemm usage lists collective-only flags:\n%s", out);

    zb_cli_usage(ZB_CMD_STEP, out, sizeof out);
    ZB_CHECK(strstr(out, "'step'") != NULL && strstr(out, "--model") != NULL && strstr(out, "--json") != NULL);
    ZB_CHECK_MSG(strstr(out, "-b/--minbytes") == NULL && strstr(out, "--shape") == NULL &&
                 strstr(out, "-n/--iters") == NULL && strstr(out, "--force") == NULL,
                 "step usage lists benchmark flags:\n%s", out);

    /* Small buffers are truncated, terminated, and never overrun. */
    for (size_t n = 1; n < 300; n += 7) {
        char buf[320];
        memset(buf, '#', sizeof buf);
        zb_cli_usage(ZB_CMD_ALLGATHER, buf, n);
        ZB_CHECK_MSG(memchr(buf, '\0', n) != NULL, "usage into %zu bytes is not terminated", n);
        int overrun = 0;
        for (size_t i = n; i < sizeof buf; i++) overrun |= buf[i] != '#';
        ZB_CHECK_MSG(!overrun, "usage into %zu bytes wrote past the end", n);
    }
    char untouched = '#';
    zb_cli_usage(ZB_CMD_GEMM, &untouched, 0);
    ZB_CHECK(untouched == '#');

    ZB_CHECK(!strcmp(zb_command_name(ZB_CMD_GEMM), "gemm") && !strcmp(zb_command_name(ZB_CMD_STEP), "step"));
    ZB_CHECK(!strcmp(zb_command_name(ZB_CMD_COUNT), "unknown"));
}

/* The digests of two command lines, and the index of the first that
 * differs (-1: none), with its name. */
static int first_digest_diff(const char *const *a, const char *const *b, char *name, size_t n) {
    zb_config ca, cb;
    uint64_t da[ZB_CLI_DIGESTS_MAX], db[ZB_CLI_DIGESTS_MAX];
    OK(a, &ca);
    OK(b, &cb);
    int na = zb_cli_config_digests(&ca, da, ZB_CLI_DIGESTS_MAX);
    int nb = zb_cli_config_digests(&cb, db, ZB_CLI_DIGESTS_MAX);
    ZB_CHECK(na > 10 && nb > 10);
    bool same_fold = zb_cli_digests_fold(da, na) == zb_cli_digests_fold(db, nb);
    for (int i = 0; i < na && i < nb; i++) {
        if (da[i] == db[i]) continue;
        ZB_CHECK_MSG(!same_fold, "digest %d differs but the folds agree", i);
        zb_cli_digest_name(ca.command, i, name, n);
        return i;
    }
    ZB_CHECK(same_fold && na == nb);
    snprintf(name, n, "-");
    return -1;
}

/* Ranks compare these digests (config_agree.c): equal for the same
 * configuration however it was spelled, different in the flag that
 * differs, and named by that flag. */
static void test_digests(void) {
    char name[64];
    ZB_CHECK(first_digest_diff(ARGS("allgather", "-b", "1K", "-n", "3"), ARGS("allgather", "-n3", "--minbytes=1K"),
                               name, sizeof name) < 0);
    /* The bytes after a shorter text's end are not its value. */
    ZB_CHECK(first_digest_diff(ARGS("--model", "llama3_8b", "--model", "tiny"), ARGS("--model", "tiny"), name,
                               sizeof name) < 0);
    ZB_CHECK(first_digest_diff(ARGS("--model", "tiny"), ARGS("--model", "llama3_8b", "--layers", "1"), name,
                               sizeof name) > 0);
    ZB_CHECK_MSG(!strcmp(name, "--model"), "named %s", name);
    ZB_CHECK(first_digest_diff(ARGS("--layers", "1"), ARGS("--layers", "2"), name, sizeof name) > 0);
    ZB_CHECK_MSG(!strcmp(name, "--layers"), "named %s", name);
    ZB_CHECK(first_digest_diff(ARGS("allgather", "-b", "1K", "-e", "1M"), ARGS("allgather", "-b", "1K", "-e", "2M"), name, sizeof name) > 0);
    ZB_CHECK_MSG(!strcmp(name, "-e/--maxbytes"), "named %s", name);
    ZB_CHECK(first_digest_diff(ARGS("gemm", "--shape", "8x8x8"), ARGS("gemm", "--shape", "8x8x8", "--shape", "8x8x8"),
                               name, sizeof name) > 0);
    ZB_CHECK_MSG(!strcmp(name, "--shape"), "named %s", name);
    ZB_CHECK(first_digest_diff(ARGS("scale", "--nodes", "1,2"), ARGS("scale", "--nodes", "1,2,4"), name,
                               sizeof name) > 0);
    ZB_CHECK_MSG(!strcmp(name, "--nodes"), "named %s", name);
    ZB_CHECK(first_digest_diff(ARGS("allreduce"), ARGS("allreduce", "--force"), name, sizeof name) > 0);
    ZB_CHECK_MSG(!strcmp(name, "--force"), "named %s", name);
    ZB_CHECK(first_digest_diff(ARGS("allreduce", "--json", "a.json"), ARGS("allreduce", "--json", "b.json"), name,
                               sizeof name) > 0);
    ZB_CHECK_MSG(!strcmp(name, "--json"), "named %s", name);
    /* The command is digest 0, kept as itself so that a message can name it. */
    ZB_CHECK(first_digest_diff(ARGS("allgather"), ARGS("gemm"), name, sizeof name) == 0);
    ZB_CHECK_MSG(!strcmp(name, "the command"), "named %s", name);
    zb_config cfg;
    uint64_t d[ZB_CLI_DIGESTS_MAX];
    OK(ARGS("gemm"), &cfg);
    ZB_CHECK(zb_cli_config_digests(&cfg, d, ZB_CLI_DIGESTS_MAX) > 1 && d[0] == (uint64_t)ZB_CMD_GEMM);
    ZB_CHECK(zb_cli_config_digests(&cfg, d, 1) == 1 && zb_cli_config_digests(&cfg, d, 0) == 0);
    zb_cli_digest_name(ZB_CMD_GEMM, 10000, name, sizeof name);
    ZB_CHECK_MSG(!strcmp(name, "its configuration"), "named %s", name);
}

/* nccl-tests' flags (bench/coll_compat.c): its defaults are taken, -T and -J
 * map to --timeout and --json, and every other value is refused in one
 * whole line naming the flag, the value and what zerobench does instead. */
static void test_nccl_tests_flags(void) {
    zb_config cfg;
    const char *defaults[] = {"allreduce", "-t", "1", "-g", "01", "-o", "sum", "-r", "0", "-m", "1", "-N", "1",
                              "-p", "0", "-z", "0", "-y", "0", "-G", "0", "-C", "0", "-S", "0", "-R", "0", "-D",
                              "0", "-M", "0", "-u", "0", "-I", "0", "-T", "7", "-J", "nccl.json", NULL};
    OK(defaults, &cfg);
    ZB_CHECK(cfg.timeout_s == 7.0 && !strcmp(cfg.json_path, "nccl.json"));
    const char *long_forms[] = {"allgather", "--ngpus=1", "--op", "sum", "--output_file", "o.json", NULL};
    OK(long_forms, &cfg);
    ZB_CHECK(!strcmp(cfg.json_path, "o.json"));
    static const char *const refused[][3] = {
        {"-t", "2", "launch N ranks with mpirun"}, {"-g", "8", "launch N ranks with mpirun"},
        {"-o", "max", "collectives sum"},          {"-r", "1", "have no root"},
        {"-m", "4", "raise -n/--iters"},           {"-N", "0", "sweeps the sizes once"},
        {"-p", "1", "one thread"},                 {"-z", "1", "back to back"},
        {"-y", "1", "own comm stream"},            {"-G", "1", "no CUDA graph"},
        {"-C", "1", "time to completion"},         {"-S", "1", "--trace"},
        {"-R", "1", "register"},                   {"-x", "0", "CTA policy"},
        {"-D", "1", "host API"},                   {"-V", "16", "device implementation"},
        {"-M", "1", "memory report"},              {"-u", "1", "aligns"},
        {"-I", "1", "one loop"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        const char *args[] = {"reducescatter", refused[i][0], refused[i][1], NULL};
        BAD(args, refused[i][0], refused[i][2]);
    }
    const char *gemm[] = {"gemm", "--shape", "8x8x8", "-g", "1", NULL};
    BAD(gemm, "-g/--ngpus", "not an option of 'gemm'");
}

int main(void) {
    test_unknown();
    test_missing_value();
    test_wrong_command();
    test_sizes();
    test_numbers();
    test_text_and_combinations();
    test_accepted();
    test_usage();
    test_digests();
    test_nccl_tests_flags();
    return zb_test_finish("test_cli");
}
