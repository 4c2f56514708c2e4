/* The command line comes from the benchmark registry (bench.h): every
 * registered command parses with no flags, its --help lists every option of
 * its entry's groups in group order and then the common ones, an option of
 * another command's groups only is refused with "is not an option of", the
 * entry's defaults hook runs before the flags, and the entries' flags say
 * what main asks of them (peak, header line, always-trace). */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "zb_test.h"

static bool takes(const zb_bench *b, const zb_opt *o) {
    for (const zb_opt_group *const *g = b->groups; g && *g; g++) {
        for (const zb_opt *const *p = (*g)->opts; *p; p++) {
            if (*p == o) return true;
        }
    }
    return false;
}

static void flag_of(const zb_opt *o, char *out, size_t n) {
    if (o->short_name) snprintf(out, n, "-%c/--%s ", o->short_name, o->name);
    else snprintf(out, n, "--%s ", o->name);
}

static void test_usage_order(const zb_bench *b, zb_command c) {
    char usage[8192];
    zb_cli_usage(c, usage, sizeof usage);
    const char *at = usage;
    for (const zb_opt_group *const *g = b->groups; g && *g; g++) {
        for (const zb_opt *const *p = (*g)->opts; *p; p++) {
            char flag[80];
            flag_of(*p, flag, sizeof flag);
            const char *hit = strstr(at, flag);
            ZB_CHECK_MSG(hit != NULL, "%s --help lacks %s (or lists it out of order)", b->name, flag);
            if (hit) at = hit;
            ZB_CHECK_MSG(strstr(usage, (*p)->help) != NULL, "%s --help lacks the help of %s", b->name, flag);
        }
    }
    const char *common = strstr(at, "--backend ");
    ZB_CHECK_MSG(common != NULL, "%s --help: the common options do not follow its own", b->name);
    ZB_CHECK(strstr(usage, "-h/--help ") != NULL);
}

static void test_foreign_options(const zb_bench *b, zb_command c) {
    for (int other = 0; other < ZB_CMD_COUNT; other++) {
        const zb_bench *ob = zb_bench_find((zb_command)other);
        for (const zb_opt_group *const *g = ob->groups; g && *g; g++) {
            for (const zb_opt *const *p = (*g)->opts; *p; p++) {
                if (takes(b, *p)) continue;
                char opt[80];
                snprintf(opt, sizeof opt, "--%s", (*p)->name);
                char *argv[] = {(char *)"zerobench", (char *)b->name, opt, (char *)"1", NULL};
                zb_config cfg;
                zb_status st = zb_cli_parse(4, argv, &cfg);
                ZB_CHECK_MSG(st == ZB_ERR_INVALID && strstr(zb_error_message(), "is not an option of") != NULL,
                             "%s %s: %s", b->name, opt, zb_error_message());
                (void)c;
            }
        }
    }
}

int main(void) {
    for (int c = 0; c < ZB_CMD_COUNT; c++) {
        const zb_bench *b = zb_bench_find((zb_command)c);
        ZB_CHECK(b && b->name && b->run);
        if (!b) continue;
        char *argv[] = {(char *)"zerobench", (char *)b->name, NULL};
        zb_config cfg, plain;
        ZB_CHECK_OK(zb_cli_parse(2, argv, &cfg));
        ZB_CHECK(cfg.command == (zb_command)c && !strcmp(zb_command_name(cfg.command), b->name));
        zb_config_defaults(&plain);
        plain.command = (zb_command)c;
        if (b->defaults) b->defaults(&plain);
        ZB_CHECK_MSG(cfg.min_bytes == plain.min_bytes && cfg.max_bytes == plain.max_bytes,
                     "%s: parse without flags is not its defaults", b->name);
        test_usage_order(b, (zb_command)c);
        test_foreign_options(b, (zb_command)c);
        /* The collectives print the sweep line, need no peak and trace only when asked. */
        if (b->coll) ZB_CHECK(b->flags == ZB_BENCH_SWEEP_HEADER && !b->peak_dtype && !b->defaults);
    }
    /* gemm and step need a FLOP peak (gemm in its -d dtype, step in its
     * activations'); step always traces and has no sweep line; gemm has
     * its own default sweep. */
    const zb_bench *step = zb_bench_find(ZB_CMD_STEP), *gemm = zb_bench_find(ZB_CMD_GEMM);
    ZB_CHECK(step->flags == ZB_BENCH_ALWAYS_TRACE && step->peak_dtype);
    ZB_CHECK(gemm->flags == ZB_BENCH_SWEEP_HEADER && gemm->peak_dtype && gemm->defaults && gemm->check);
    zb_config cfg;
    zb_config_defaults(&cfg);
    cfg.dtype = ZB_DTYPE_BF16;
    ZB_CHECK(gemm->peak_dtype(&cfg, ZB_DTYPE_F32) == ZB_DTYPE_BF16);
    ZB_CHECK(step->peak_dtype(&cfg, ZB_DTYPE_F32) == ZB_DTYPE_F32 && step->peak_dtype(&cfg, ZB_DTYPE_BF16) == ZB_DTYPE_BF16);
    cfg.act_dtype = ZB_DTYPE_F32;
    ZB_CHECK(step->peak_dtype(&cfg, ZB_DTYPE_BF16) == ZB_DTYPE_F32);
    ZB_CHECK(zb_bench_find(ZB_CMD_COUNT) == NULL);
    return zb_test_finish("test_cli_registry");
}
