/* The step's memory view when ranks share one device (docs/design.md §9):
 * which ranks name the same device (zb_step_sharing_ranks, on synthetic
 * device ids), and what the step reports from it (zb_step_report on
 * synthetic runs): device_memory_shared and device_sharing_ranks next to
 * the device-wide keys, and the table's note saying the device-wide figures
 * include N ranks on the same GPU; a run alone on its device says neither,
 * and a run without a memory view (cpu) has none of these keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "step.h"
#include "zb_test.h"

#define ID ZB_DEV_ID_BYTES

static void set_ids(char *ids, const char *const *names, int n) {
    memset(ids, 0, (size_t)n * ID);
    for (int r = 0; r < n; r++) snprintf(ids + (size_t)r * ID, ID, "%s", names[r]);
}

static void test_sharing_ranks(void) {
    char ids[8 * ID];
    const char *four_on_one[] = {"GPU-a", "GPU-a", "GPU-a", "GPU-a"};
    set_ids(ids, four_on_one, 4);
    for (int r = 0; r < 4; r++) ZB_CHECK(zb_step_sharing_ranks(ids, ID, 4, r) == 4);
    /* Two GPUs, two ranks each, interleaved (not by local rank). */
    const char *two_by_two[] = {"GPU-a", "GPU-b", "GPU-a", "GPU-b"};
    set_ids(ids, two_by_two, 4);
    for (int r = 0; r < 4; r++) ZB_CHECK(zb_step_sharing_ranks(ids, ID, 4, r) == 2);
    /* One GPU each; a prefix is not the same device. */
    const char *alone[] = {"GPU-a", "GPU-ab", "GPU-b", "GPU-c"};
    set_ids(ids, alone, 4);
    for (int r = 0; r < 4; r++) ZB_CHECK(zb_step_sharing_ranks(ids, ID, 4, r) == 1);
    /* Unknown ids ("") share with no one, not with each other. */
    const char *unknown[] = {"", "", "GPU-a", "GPU-a", ""};
    set_ids(ids, unknown, 5);
    ZB_CHECK(zb_step_sharing_ranks(ids, ID, 5, 0) == 1 && zb_step_sharing_ranks(ids, ID, 5, 4) == 1);
    ZB_CHECK(zb_step_sharing_ranks(ids, ID, 5, 2) == 2);
    /* Ids that use the whole field compare on all of it. */
    memset(ids, 'x', 2 * ID);
    ids[2 * ID - 1] = 'y';
    ZB_CHECK(zb_step_sharing_ranks(ids, ID, 2, 0) == 1);
}

static const json_t *metric_of(const zb_report *rep, size_t run, const char *key) {
    const json_t *r = zb_report_run(rep, run);
    return r ? json_object_get(json_object_get(r, "metrics"), key) : NULL;
}

static void test_report(void) {
    zb_config cfg;
    zb_config_defaults(&cfg);
    zb_bench_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cfg = &cfg;
    ctx.topo.n_ranks = 4;
    ctx.topo.n_nodes = 1;
    ctx.peak_flops = 1e12;
    snprintf(ctx.peak_source, sizeof ctx.peak_source, "test");
    ctx.report = zb_report_new();
    ctx.out = tmpfile();
    ZB_CHECK(ctx.report && ctx.out);
    if (!ctx.report || !ctx.out) return;
    zb_step_plan plan;
    memset(&plan, 0, sizeof plan);
    snprintf(plan.model_label, sizeof plan.model_label, "synthetic");
    plan.engine.stage = 3;
    plan.engine.prefetch_depth = 1;
    plan.engine.model.layers = 1;
    plan.engine.model.dim = plan.engine.model.heads = plan.engine.model.kv_heads = 1;
    plan.engine.model.head_dim = plan.engine.model.ffn_dim = plan.engine.model.vocab = 1;
    plan.engine.model.seq = plan.engine.model.batch = 1;
    zb_step_stats runs[3];
    memset(runs, 0, sizeof runs);
    for (int i = 0; i < 3; i++) {
        runs[i].stage = 3;
        runs[i].mode = i == 0 ? ZB_MODE_SYNC : ZB_MODE_PREFETCH;
        runs[i].steps = 1;
        runs[i].step_ms = 1;
        runs[i].device_view = i < 2;
        runs[i].pool_reserved_high_bytes = 1 << 20;
        runs[i].device_used_high_bytes = 9 << 20;
        runs[i].library_bytes = 8 << 20;
    }
    runs[0].device_sharing_ranks = 4; /* four ranks on one GPU */
    runs[1].device_sharing_ranks = 1; /* alone on its GPU */
    runs[2].device_sharing_ranks = 1; /* no memory view (cpu) */
    ZB_CHECK_OK(zb_step_report(&ctx, &plan, runs, 3));
    const json_t *shared = metric_of(ctx.report, 0, "device_memory_shared");
    const json_t *n = metric_of(ctx.report, 0, "device_sharing_ranks");
    ZB_CHECK_MSG(json_is_true(shared) && json_integer_value(n) == 4, "4 ranks on one GPU: shared %s, ranks %lld",
                 shared ? (json_is_true(shared) ? "true" : "not true") : "missing", (long long)json_integer_value(n));
    ZB_CHECK(json_integer_value(metric_of(ctx.report, 0, "device_used_high_bytes")) == 9 << 20);
    ZB_CHECK(json_is_false(metric_of(ctx.report, 1, "device_memory_shared")) &&
             json_integer_value(metric_of(ctx.report, 1, "device_sharing_ranks")) == 1);
    ZB_CHECK(!metric_of(ctx.report, 2, "device_memory_shared") && !metric_of(ctx.report, 2, "device_sharing_ranks") &&
             !metric_of(ctx.report, 2, "device_used_high_bytes"));
    long len = ftell(ctx.out);
    char *text = (char *)calloc((size_t)len + 1, 1);
    rewind(ctx.out);
    ZB_CHECK(text && fread(text, 1, (size_t)len, ctx.out) == (size_t)len);
    const char *note = "device-wide figures include 4 ranks on the same GPU";
    const char *hit = text ? strstr(text, note) : NULL;
    ZB_CHECK_MSG(hit != NULL, "the table's note lacks \"%s\":\n%s", note, text ? text : "");
    ZB_CHECK(hit && !strstr(hit + 1, "device-wide figures include")); /* only the shared run says it */
    ZB_CHECK(text && strstr(text, "# device view, stage 3 sync: pool reserved high 1.00 MiB (this rank's pool)"));
    ZB_CHECK(text && strstr(text, "# device view, stage 3 prefetch: pool reserved high 1.00 MiB, GPU memory used "
                                  "high 9.00 MiB"));
    free(text);
    fclose(ctx.out);
    zb_report_free(ctx.report);
}

int main(void) {
    test_sharing_ranks();
    test_report();
    return zb_test_finish("test_step_mem_share");
}
