/* The device tracer's own losses in the step's outputs (bench/step_run.c,
 * step_report.c, harness/device/cuda/cupti_stats.c), on the CPU with fake
 * registry entries and synthetic runs: CUPTI's counters become the
 * backend-neutral zb_tracer_stats field by field; the step reads them only
 * where a tracer runs and reports them, and a run's window is after less
 * before; the JSON carries tracer_records_dropped, tracer_zero_timestamps,
 * tracer_inverted_records and tracer_buffer_errors under "metrics" (integers
 * where a tracer ran, null where none did, as on the cpu device) next to the
 * unchanged trace_records_dropped; the table's notes name the losses of
 * each traced run (a WARNING when any), and say nothing where no tracer ran.
 * The tracer's clock note (records converted from another clock) reaches
 * the window, the table's notes (once) and the meta's tracer_note. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_map.h"
#include "registry.h"
#include "step.h"
#include "zb_test.h"

/* ---- CUPTI's counters -> zb_tracer_stats ------------------------------------ */

static void test_convert(void) {
    zb_cupti_stats s;
    memset(&s, 0, sizeof s);
    s.n_dropped = 11;
    s.n_zero_timestamp = 22;
    s.n_inverted = 33;
    s.n_buffer_errors = 44;
    s.n_emitted = 1000; /* not a loss: not reported */
    zb_tracer_stats t;
    memset(&t, 0xff, sizeof t);
    zb_cupti_tracer_stats(&s, &t);
    ZB_CHECK(t.name && strcmp(t.name, "CUPTI") == 0);
    ZB_CHECK(t.records_dropped == 11);
    ZB_CHECK(t.zero_timestamps == 22);
    ZB_CHECK(t.inverted == 33);
    ZB_CHECK(t.buffer_errors == 44);
}

/* ---- reading through the registry entry ------------------------------------ */

static zb_tracer_stats g_fake;
static zb_status g_fake_status;

static zb_status fake_tracer_stats(zb_tracer_stats *out) {
    if (g_fake_status != ZB_OK) return g_fake_status;
    *out = g_fake;
    return ZB_OK;
}

static void test_read_and_window(void) {
    zb_device_backend fake = {.name = "fake", .tracer_stats = fake_tracer_stats};
    zb_backends b = {.device = &fake, .tracer_active = true};
    g_fake = (zb_tracer_stats){.name = "FAKE", .records_dropped = 5, .zero_timestamps = 7, .inverted = 1,
                               .buffer_errors = 2};
    g_fake_status = ZB_OK;
    zb_tracer_stats before, after, w;
    ZB_CHECK(zb_step_tracer_read(&b, &before));
    ZB_CHECK(before.records_dropped == 5 && before.zero_timestamps == 7 && strcmp(before.name, "FAKE") == 0);
    g_fake.records_dropped = 9;
    g_fake.zero_timestamps = 7;
    g_fake.inverted = 4;
    g_fake.buffer_errors = 3;
    ZB_CHECK(zb_step_tracer_read(&b, &after));
    zb_tracer_stats_window(&before, &after, &w);
    ZB_CHECK(w.records_dropped == 4);
    ZB_CHECK(w.zero_timestamps == 0);
    ZB_CHECK(w.inverted == 3);
    ZB_CHECK(w.buffer_errors == 1);
    ZB_CHECK(w.name && strcmp(w.name, "FAKE") == 0);
    ZB_CHECK(w.note[0] == '\0');
    snprintf(g_fake.note, sizeof g_fake.note, "FAKE clock is 2 s behind: converted");
    ZB_CHECK(zb_step_tracer_read(&b, &after));
    zb_tracer_stats_window(&before, &after, &w);
    ZB_CHECK(strcmp(w.note, "FAKE clock is 2 s behind: converted") == 0);

    /* The meta says it too, only while a tracer with a note runs. */
    zb_comm_backend comm = {.name = "fakecomm"};
    b.comm = &comm;
    json_t *meta = json_object();
    zb_backends_meta(&b, 0, meta);
    const json_t *note = json_object_get(meta, "tracer_note");
    ZB_CHECK(note && strcmp(json_string_value(note), "FAKE clock is 2 s behind: converted") == 0);
    json_decref(meta);
    g_fake.note[0] = '\0';
    meta = json_object();
    zb_backends_meta(&b, 0, meta);
    ZB_CHECK(json_object_get(meta, "tracer_note") == NULL);
    json_decref(meta);
    snprintf(g_fake.note, sizeof g_fake.note, "FAKE clock is 2 s behind: converted");
    b.tracer_active = false;
    meta = json_object();
    zb_backends_meta(&b, 0, meta);
    ZB_CHECK(json_object_get(meta, "tracer_note") == NULL);
    json_decref(meta);
    b.tracer_active = true;
    g_fake.note[0] = '\0';

    /* No tracer running, none offered, or one that cannot say: nothing. */
    b.tracer_active = false;
    ZB_CHECK(!zb_step_tracer_read(&b, &after) && after.records_dropped == 0);
    b.tracer_active = true;
    fake.tracer_stats = NULL;
    ZB_CHECK(!zb_step_tracer_read(&b, &after));
    fake.tracer_stats = fake_tracer_stats;
    g_fake_status = ZB_ERR_UNSUPPORTED;
    ZB_CHECK(!zb_step_tracer_read(&b, &after) && after.records_dropped == 0 && after.name == NULL);

    /* The registry's own entries: cpu has no tracer; cuda's (when built)
     * reports nothing before CUPTI ever started. */
    const zb_device_backend *cpu = zb_device_backend_find("cpu");
    ZB_CHECK(cpu && cpu->tracer_stats == NULL);
    const zb_device_backend *cuda = zb_device_backend_find("cuda");
    ZB_CHECK(cuda != NULL);
    if (cuda && !cuda->not_built) {
        ZB_CHECK(cuda->tracer_stats != NULL);
        zb_backends bc = {.device = cuda, .tracer_active = true};
        ZB_CHECK(!zb_step_tracer_read(&bc, &after));
    }
}

/* ---- the step's JSON runs and table notes ---------------------------------- */

static char *report(zb_report *rep, zb_step_stats *runs, int n_runs) {
    zb_config cfg;
    zb_config_defaults(&cfg);
    zb_bench_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cfg = &cfg;
    ctx.topo.n_ranks = 1;
    ctx.topo.n_nodes = 1;
    ctx.report = rep;
    ctx.peak_flops = 1e12;
    snprintf(ctx.peak_source, sizeof ctx.peak_source, "test");
    zb_step_plan plan;
    memset(&plan, 0, sizeof plan);
    snprintf(plan.model_label, sizeof plan.model_label, "tiny");
    plan.engine.model = (zb_model_cfg){.layers = 2, .dim = 64, .heads = 4, .kv_heads = 2, .head_dim = 16,
                                       .ffn_dim = 128, .vocab = 256, .seq = 32, .batch = 2};
    plan.engine.stage = 3;
    char *text = NULL;
    size_t len = 0;
    ctx.out = open_memstream(&text, &len);
    ZB_CHECK_OK(zb_step_report(&ctx, &plan, runs, n_runs));
    fclose(ctx.out);
    return text;
}

static void base_run(zb_step_stats *r, zb_step_mode mode) {
    memset(r, 0, sizeof *r);
    r->stage = 3;
    r->mode = mode;
    r->steps = 2;
    r->step_ms = r->step_min_ms = r->step_max_ms = 10.0;
    r->overlap_pct = r->overlap_min_pct = 50.0;
    r->hidden_pct = r->compute_slowdown_pct = NAN;
    r->dropped_records = 6;
}

/* metrics.key of run i: its integer, or -1 when null, -2 when absent. */
static json_int_t metric_of(zb_report *rep, size_t i, const char *key) {
    const json_t *m = json_object_get(zb_report_run(rep, i), "metrics");
    const json_t *v = json_object_get(m, key);
    if (!v) return -2;
    if (json_is_null(v)) return -1;
    return json_is_integer(v) ? json_integer_value(v) : -3;
}

static void test_report_traced(void) {
    zb_step_stats runs[2];
    base_run(&runs[0], ZB_MODE_SYNC);
    base_run(&runs[1], ZB_MODE_PREFETCH);
    for (int i = 0; i < 2; i++) {
        runs[i].tracer_ran = true;
        runs[i].tracer.name = "CUPTI";
    }
    runs[1].tracer.records_dropped = 3;
    runs[1].tracer.zero_timestamps = 2;
    runs[1].tracer.inverted = 1;
    runs[1].tracer.buffer_errors = 4;
    const char *clock = "CUPTI clock is 1.7e+09 s ahead of CLOCK_MONOTONIC: records converted (why)";
    for (int i = 0; i < 2; i++) snprintf(runs[i].tracer.note, sizeof runs[i].tracer.note, "%s", clock);
    zb_report *rep = zb_report_new();
    char *text = report(rep, runs, 2);
    ZB_CHECK(zb_report_n_runs(rep) == 2);
    ZB_CHECK(metric_of(rep, 0, "tracer_records_dropped") == 0);
    ZB_CHECK(metric_of(rep, 0, "tracer_buffer_errors") == 0);
    ZB_CHECK(metric_of(rep, 1, "tracer_records_dropped") == 3);
    ZB_CHECK(metric_of(rep, 1, "tracer_zero_timestamps") == 2);
    ZB_CHECK(metric_of(rep, 1, "tracer_inverted_records") == 1);
    ZB_CHECK(metric_of(rep, 1, "tracer_buffer_errors") == 4);
    ZB_CHECK(metric_of(rep, 1, "trace_records_dropped") == 6); /* the harness's own, unchanged */
    ZB_CHECK_MSG(text && strstr(text, "\n# CUPTI's own losses in stage 3 sync: 0 records dropped, 0 without "
                                      "timestamps, 0 inverted, 0 buffer errors\n"),
                 "no sync note in:\n%s", text ? text : "");
    ZB_CHECK_MSG(text && strstr(text, "\n# WARNING: CUPTI's own losses in stage 3 prefetch: 3 records dropped, "
                                      "2 without timestamps, 1 inverted, 4 buffer errors: its trace metrics "
                                      "are incomplete\n"),
                 "no prefetch warning in:\n%s", text ? text : "");
    const char *at = text ? strstr(text, "\n# CUPTI clock is 1.7e+09 s ahead of CLOCK_MONOTONIC: records converted "
                                         "(why)\n") : NULL;
    ZB_CHECK_MSG(at && !strstr(at + 2, "# CUPTI clock"), "the clock note is not there once in:\n%s",
                 text ? text : "");
    free(text);
    zb_report_free(rep);
}

static void test_report_untraced(void) {
    zb_step_stats runs[1];
    base_run(&runs[0], ZB_MODE_PREFETCH);
    runs[0].tracer.records_dropped = 9; /* ignored: no tracer ran */
    snprintf(runs[0].tracer.note, sizeof runs[0].tracer.note, "stale clock note");
    zb_report *rep = zb_report_new();
    char *text = report(rep, runs, 1);
    const char *keys[] = {"tracer_records_dropped", "tracer_zero_timestamps", "tracer_inverted_records",
                          "tracer_buffer_errors"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        ZB_CHECK_MSG(metric_of(rep, 0, keys[k]) == -1, "%s is not null without a tracer", keys[k]);
    }
    ZB_CHECK(metric_of(rep, 0, "trace_records_dropped") == 6);
    ZB_CHECK_MSG(text && !strstr(text, "own losses") && !strstr(text, "stale clock note"),
                 "a tracer note without a tracer:\n%s", text ? text : "");
    free(text);
    zb_report_free(rep);
}

int main(void) {
    test_convert();
    test_read_and_window();
    test_report_traced();
    test_report_untraced();
    return zb_test_finish("test_step_tracer");
}
