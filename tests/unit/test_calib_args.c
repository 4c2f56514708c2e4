/* zerobench calibrate's options (tools/calib_args.c): the collective sweep
 * sizes it picks when none are given, the span of the step's own
 * collectives (the model's largest unit in the sweep's dtype, rounded up
 * to a power of two, and 256x below it, at least 4K); sizes given are
 * kept; --quick's fixed span; a --coll-max too small for the picked
 * --coll-min is bad input. No runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib.h"
#include "zb_test.h"

/* Parses and validates `calibrate -o OUT args...` into a. */
static zb_status parse(calib_args *a, const char *const *args, int n) {
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)"calibrate";
    argv[argc++] = (char *)"-o";
    argv[argc++] = (char *)"/tmp/zb_test_calib_args_unused.json";
    for (int i = 0; i < n; i++) argv[argc++] = (char *)args[i];
    zb_status s = zb_calib_parse_args(argc, argv, a);
    return s == ZB_OK ? zb_calib_validate(a) : s;
}

static void check_span(const calib_args *a, const char *lo, const char *hi) {
    ZB_CHECK_MSG(!strcmp(a->coll_min, lo) && !strcmp(a->coll_max, hi), "sweep %s .. %s, expected %s .. %s",
                 a->coll_min, a->coll_max, lo, hi);
}

int main(void) {
    static calib_args a;
    /* tiny: its largest unit is a layer, 46,208 floats = 184,832 B: up to 256K, and 1K below is under 4K */
    ZB_CHECK_OK(parse(&a, NULL, 0));
    check_span(&a, "4096", "262144");
    /* a medium shape: the embedding and the LM head, 8192 x 512 (+ 512) floats = 16.8 MB: 32M down to 128K */
    char path[] = "/tmp/zb_test_calib_args_XXXXXX";
    int fd = mkstemp(path);
    ZB_CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "{\"name\": \"medium\", \"layers\": 4, \"dim\": 512, \"heads\": 8, \"kv_heads\": 4, \"head_dim\": 64, "
               "\"ffn_dim\": 1408, \"vocab\": 8192, \"seq\": 256, \"batch\": 2, \"norm_eps\": 1e-5, "
               "\"rope_theta\": 10000.0, \"tied_embeddings\": false, \"source\": \"test\"}\n");
    fclose(f);
    const char *medium[] = {"--model", path};
    ZB_CHECK_OK(parse(&a, medium, 2));
    check_span(&a, "131072", "33554432");
    /* in bf16 the units are half as large: 16M down to 64K */
    const char *medium_bf16[] = {"--model", path, "--dtype", "bf16"};
    ZB_CHECK_OK(parse(&a, medium_bf16, 4));
    check_span(&a, "65536", "16777216");
    /* a size given is kept, the other picked */
    const char *given[] = {"--model", path, "--coll-min", "1M"};
    ZB_CHECK_OK(parse(&a, given, 4));
    check_span(&a, "1M", "33554432");
    /* --quick's span */
    const char *quick[] = {"--quick"};
    ZB_CHECK_OK(parse(&a, quick, 1));
    check_span(&a, "1K", "64K");
    /* a --coll-max under 4x the picked --coll-min (4K) is bad input */
    const char *small[] = {"--coll-max", "8K"};
    ZB_CHECK(parse(&a, small, 2) == ZB_ERR_INVALID);
    unlink(path);
    return zb_test_finish("test_calib_args");
}
