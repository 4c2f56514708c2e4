/* zerobench plan's outputs (plan.h): one table per ZeRO stage, its rows the
 * ledger's terms and its columns the cluster sizes, and with --json one
 * zerobench/1 run per cluster size, stage and schedule (bench "plan"). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "meta.h"
#include "plan.h"
#include "report.h"
#include "row.h"
#include "table.h"

static const char *const stage_what[4] = {
    "DDP: nothing sharded, gradients all-reduced",
    "optimizer states sharded",
    "optimizer states and gradients sharded",
    "parameters, gradients and optimizer states sharded (FSDP FULL_SHARD)",
};

/* The one unit every figure of the tables is printed in. */
typedef struct plan_unit {
    const char *name, *bytes; /* "GiB", "2^30" */
    double div;
} plan_unit;

static plan_unit unit_for(const zb_plan *p) {
    double biggest = 0;
    for (int i = 0; i < p->n_cols; i++) {
        zb_plan_cell c;
        if (zb_plan_cell_compute(&p->in, 0, ZB_MODE_PREFETCH, p->cols[i].ranks, &c) == ZB_OK &&
            (double)c.total_bytes > biggest)
            biggest = (double)c.total_bytes;
    }
    /* binary units, as the step and scale tables print memory */
    if (biggest >= 0x1p30) return (plan_unit){"GiB", "2^30", 0x1p30};
    if (biggest >= 0x1p20) return (plan_unit){"MiB", "2^20", 0x1p20};
    return (plan_unit){"KiB", "2^10", 0x1p10};
}

/* The cells of one stage: [column][0 sync, 1 prefetch]. */
static zb_status stage_cells(const zb_plan *p, int stage, zb_plan_cell cells[][2]) {
    for (int i = 0; i < p->n_cols; i++) {
        ZB_TRY(zb_plan_cell_compute(&p->in, stage, ZB_MODE_SYNC, p->cols[i].ranks, &cells[i][0]));
        ZB_TRY(zb_plan_cell_compute(&p->in, stage, ZB_MODE_PREFETCH, p->cols[i].ranks, &cells[i][1]));
    }
    return ZB_OK;
}

typedef enum row_kind { ROW_BYTES, ROW_FITS, ROW_HEADROOM, ROW_MEMORY } row_kind;

/* One table row: `what` of each column's cell (mode 0 sync, 1 prefetch). */
static zb_status add_row(zb_table *t, const zb_plan *p, zb_plan_cell cells[][2], const char *label, int mode,
                         size_t offset, row_kind kind, plan_unit u) {
    ZB_TRY(zb_table_add_row(t));
    ZB_TRY(zb_table_set(t, 0, "%s", label));
    for (int i = 0; i < p->n_cols; i++) {
        const zb_plan_cell *c = &cells[i][mode];
        double total = (double)c->total_bytes, have = p->mem_per_gpu_bytes;
        switch (kind) {
        case ROW_BYTES: {
            uint64_t v = *(const uint64_t *)((const char *)c + offset);
            ZB_TRY(zb_table_set(t, i + 1, "%.2f", (double)v / u.div));
            break;
        }
        case ROW_MEMORY: ZB_TRY(zb_table_set(t, i + 1, "%.2f", have / u.div)); break;
        case ROW_FITS: ZB_TRY(zb_table_set(t, i + 1, "%s", total <= have ? "yes" : "NO")); break;
        case ROW_HEADROOM: ZB_TRY(zb_table_set(t, i + 1, "%+.2f", (have - total) / u.div)); break;
        }
    }
    return ZB_OK;
}

#define OFF(field) offsetof(zb_plan_cell, field)

static zb_status print_stage(const zb_plan *p, int stage, plan_unit u) {
    zb_plan_cell cells[ZB_PLAN_MAX_COLS][2];
    ZB_TRY(stage_cells(p, stage, cells));
    zb_table *t = zb_table_new();
    if (!t) return ZB_FAIL(ZB_ERR_NOMEM, "plan: out of memory for a table");
    zb_status s = zb_table_add_column(t, "per GPU", NULL, ZB_ALIGN_LEFT);
    for (int i = 0; s == ZB_OK && i < p->n_cols; i++) s = zb_table_add_column(t, p->cols[i].label, u.name, ZB_ALIGN_RIGHT);
    /* Sync and prefetch differ only where a stage keeps gathered buffers. */
    bool split = p->in.have_model && cells[0][0].gathered_bytes != cells[0][1].gathered_bytes;
    const struct { const char *label; size_t off; bool shaped; } terms[] = {
        {"parameters", OFF(params_bytes), false},
        {"gradients", OFF(grads_bytes), false},
        {"optimizer states", OFF(optim_bytes), false},
        {"model states", OFF(model_state_bytes), false},
        {"activations", OFF(activation_bytes), true},
        {"workspace", OFF(workspace_bytes), true},
    };
    for (size_t k = 0; s == ZB_OK && k < sizeof terms / sizeof terms[0]; k++) {
        if (terms[k].shaped && !p->in.have_model) continue;
        s = add_row(t, p, cells, terms[k].label, 0, terms[k].off, ROW_BYTES, u);
    }
    char label[64];
    int depth = p->in.engine.prefetch_depth, n_modes = split ? 2 : 1;
    for (int m = 0; s == ZB_OK && p->in.have_model && m < n_modes; m++) {
        if (!split) snprintf(label, sizeof label, "gathered");
        else if (m == 0) snprintf(label, sizeof label, "gathered, sync");
        else snprintf(label, sizeof label, "gathered, prefetch (depth %d)", depth);
        s = add_row(t, p, cells, label, m, OFF(gathered_bytes), ROW_BYTES, u);
    }
    for (int m = 0; s == ZB_OK && p->in.have_model && m < n_modes; m++) {
        snprintf(label, sizeof label, "total%s", !split ? "" : m == 0 ? ", sync" : ", prefetch");
        s = add_row(t, p, cells, label, m, OFF(total_bytes), ROW_BYTES, u);
    }
    if (s == ZB_OK) s = add_row(t, p, cells, "device memory", 0, 0, ROW_MEMORY, u);
    for (int m = 0; s == ZB_OK && m < (split ? 2 : 1); m++) {
        const char *sfx = !split ? "" : m == 0 ? ", sync" : ", prefetch";
        snprintf(label, sizeof label, "fits%s", sfx);
        s = add_row(t, p, cells, label, m, 0, ROW_FITS, u);
        snprintf(label, sizeof label, "headroom%s", sfx);
        if (s == ZB_OK) s = add_row(t, p, cells, label, m, 0, ROW_HEADROOM, u);
    }
    if (s == ZB_OK) s = add_row(t, p, cells, "sent per rank per step", 0, OFF(comm_bytes), ROW_BYTES, u);
    if (s == ZB_OK) {
        printf("#\n# ZeRO stage %d: %s\n", stage, stage_what[stage]);
        s = zb_table_print(t, stdout, "#");
    }
    zb_table_free(t);
    return s;
}

static void print_header(const zb_plan *p, plan_unit u) {
    const zb_plan_input *in = &p->in;
    int pb = (int)zb_dtype_size(in->param_dtype), gb = (int)zb_dtype_size(in->grad_dtype);
    if (in->have_model) {
        const zb_model_cfg *m = &in->engine.model;
        double np = zb_model_total_params(m);
        printf("# plan: model %s: %d layers, dim %d, heads %d/%d kv, head dim %d, ffn %d, vocab %d; %.4g %s "
               "parameters; seq %d, micro-batch %d per GPU; %.4g model FLOPs per token (full attention)\n",
               p->model, m->layers, m->dim, m->heads, m->kv_heads, m->head_dim, m->ffn_dim, m->vocab,
               np >= 1e9 ? np / 1e9 : np / 1e6, np >= 1e9 ? "B" : "M", m->seq, m->batch, p->model_flops_per_token);
        printf("# recompute %s; prefetch depth %d; activations in %s as this engine keeps them (fused "
               "attention: its output and a log-sum-exp per row, nothing of seq x seq)\n",
               in->engine.recompute ? "full" : "none", in->engine.prefetch_depth, zb_dtype_name(in->param_dtype));
    } else {
        printf("# plan: %.4g B parameters (--params)\n", (double)in->params / 1e9);
    }
    printf("# params %s (p = %d), gradients reduced in %s (g = %d), fp32 master weights and AdamW m, v "
           "(k = 12 bytes per parameter)\n",
           zb_dtype_name(in->param_dtype), pb, zb_dtype_name(in->grad_dtype), gb);
    printf("# hardware %s (%s): %.4g GiB per GPU (%s), %d GPU(s) per node\n", p->hw_name, p->hw.name,
           p->mem_per_gpu_bytes / 0x1p30, p->mem_source, p->cols[0].gpus_per_node);
    printf("# per GPU, in %s (%s = %s bytes); %s; fits: total <= device memory; headroom = device memory - total "
           "(the ledger of docs/design.md section 6)\n",
           u.name, u.name, u.bytes, p->from_gpus ? "columns: GPUs in total" : "columns: nodes x GPUs per node");
    if (!in->have_model) {
        printf("# --params gives no shapes: only the model-state rows (activations, workspace and the gathered "
               "buffers need the model's layers: use --model or the shape flags); comm by the closed form\n");
    }
}

/* ---- JSON ------------------------------------------------------------------ */

static zb_field jint(const char *key, bool metric, int64_t v) {
    zb_field f = {.key = key, .metric = metric, .kind = ZB_FIELD_INT, .i = v};
    return f;
}

static zb_field jtext(const char *key, const char *v) {
    zb_field f = {.key = key, .kind = ZB_FIELD_TEXT, .s = v, .null = v == NULL};
    return f;
}

static zb_status add_run(zb_rows *rows, const zb_plan *p, const zb_plan_col *col, const zb_plan_cell *c,
                         bool with_mode) {
    const zb_plan_input *in = &p->in;
    const zb_model_cfg *m = &in->engine.model;
    bool shaped = in->have_model;
    double have = p->mem_per_gpu_bytes, total = (double)c->total_bytes;
    zb_field f[48];
    int n = 0;
    f[n++] = jtext("bench", "plan");
    f[n++] = jtext("mode", with_mode ? (c->mode == ZB_MODE_SYNC ? "sync" : "prefetch") : NULL);
    f[n++] = jint("stage", false, c->stage);
    f[n++] = jint("ranks", false, c->ranks);
    f[n++] = jint("nodes", false, col->nodes);
    f[n++] = jint("gpus_per_node", false, col->gpus_per_node);
    f[n++] = jtext("model", shaped ? p->model : NULL);
    f[n++] = jint("params", false, (int64_t)(shaped ? (uint64_t)zb_model_total_params(m) : in->params));
    f[n++] = jtext("hw", p->hw_name);
    f[n++] = jtext("param_dtype", zb_dtype_name(in->param_dtype));
    f[n++] = jtext("grad_reduce_dtype", zb_dtype_name(in->grad_dtype));
    f[n++] = jtext("recompute", shaped ? (in->engine.recompute ? "full" : "none") : NULL);
    f[n] = jint("prefetch_depth", false, in->engine.prefetch_depth);
    f[n++].null = !shaped;
    f[n] = jint("seq", false, m->seq);
    f[n++].null = !shaped;
    f[n] = jint("batch", false, m->batch);
    f[n++].null = !shaped;
    /* The shape planned, as the step's runs give it ("shape"; null without shapes). */
    const struct { const char *key; int v; } dims[] = {
        {"layers", m->layers}, {"dim", m->dim}, {"heads", m->heads}, {"kv_heads", m->kv_heads},
        {"head_dim", m->head_dim}, {"ffn_dim", m->ffn_dim}, {"vocab", m->vocab}, {"seq", m->seq},
        {"batch", m->batch}};
    for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++) {
        f[n] = jint(dims[k].key, false, dims[k].v);
        f[n].parent = "shape";
        f[n++].null = !shaped;
    }
    f[n++] = jint("params_bytes", true, (int64_t)c->params_bytes);
    f[n++] = jint("grads_bytes", true, (int64_t)c->grads_bytes);
    f[n++] = jint("optim_bytes", true, (int64_t)c->optim_bytes);
    f[n++] = jint("model_state_bytes", true, (int64_t)c->model_state_bytes);
    const struct { const char *key; uint64_t v; } shaped_terms[] = {
        {"activation_bytes", c->activation_bytes}, {"workspace_bytes", c->workspace_bytes},
        {"gathered_bytes", c->gathered_bytes}};
    for (size_t k = 0; k < 3; k++) {
        f[n] = jint(shaped_terms[k].key, true, (int64_t)shaped_terms[k].v);
        f[n++].null = !shaped; /* unknown without shapes, not 0 */
    }
    f[n++] = jint("total_bytes", true, (int64_t)c->total_bytes);
    f[n++] = jint("device_mem_bytes", true, (int64_t)llround(have));
    f[n++] = (zb_field){.key = "fits", .metric = true, .kind = ZB_FIELD_BOOL, .b = total <= have};
    f[n++] = jint("headroom_bytes", true, (int64_t)llround(have - total));
    f[n++] = jint("comm_bytes_per_step", true, (int64_t)c->comm_bytes);
    f[n] = (zb_field){.key = "model_flops_per_token", .metric = true, .kind = ZB_FIELD_REAL,
                      .d = p->model_flops_per_token};
    f[n++].null = !shaped;
    return zb_rows_add(rows, f, n, 1);
}

/* The resolved plan, for the meta's config. */
static json_t *config_json(const zb_plan *p) {
    json_t *cols = json_array();
    for (int i = 0; cols && i < p->n_cols; i++) json_array_append_new(cols, json_integer(p->cols[i].ranks));
    const zb_plan_input *in = &p->in;
    return json_pack("{s:s, s:s?, s:I, s:s, s:o, s:i, s:s, s:s, s:b, s:i, s:i, s:i}", "command", "plan", "model",
                     in->have_model ? p->model : NULL, "params",
                     (json_int_t)(in->have_model ? (uint64_t)zb_model_total_params(&in->engine.model) : in->params),
                     "hw", p->hw_name, "gpus", cols ? cols : json_array(), "gpus_per_node", p->cols[0].gpus_per_node,
                     "param_dtype", zb_dtype_name(in->param_dtype), "grad_reduce_dtype", zb_dtype_name(in->grad_dtype),
                     "recompute", in->have_model && in->engine.recompute, "prefetch_depth",
                     in->have_model ? in->engine.prefetch_depth : 1, "seq", in->have_model ? in->engine.model.seq : 0,
                     "batch", in->have_model ? in->engine.model.batch : 0);
}

static zb_status write_json(const zb_plan *p, int argc, char **argv) {
    zb_report *r = zb_report_new();
    if (!r) return ZB_FAIL(ZB_ERR_NOMEM, "plan: out of memory for the report");
    zb_rows *rows = zb_rows_new(r, 0);
    json_t *config = config_json(p);
    zb_status s = rows && config ? ZB_OK : ZB_FAIL(ZB_ERR_NOMEM, "plan: out of memory for the report");
    /* argv[-1] is the program: main hands a tool its arguments from the subcommand on. */
    if (s == ZB_OK) s = zb_meta_collect_local(zb_report_meta(r), argc + 1, argv - 1, config);
    if (s == ZB_OK) json_object_set_new(zb_report_meta(r), "hw_profile", json_string(p->hw.path));
    for (int i = 0; s == ZB_OK && i < p->n_cols; i++) {
        for (int stage = 0; s == ZB_OK && stage < 4; stage++) {
            zb_plan_cell cells[ZB_PLAN_MAX_COLS][2];
            s = stage_cells(p, stage, cells);
            /* Without shapes there is no schedule to tell apart: one run per stage. */
            for (int m = 0; s == ZB_OK && m < (p->in.have_model ? 2 : 1); m++) {
                s = add_run(rows, p, &p->cols[i], &cells[i][m], p->in.have_model);
            }
        }
    }
    if (s == ZB_OK) s = zb_report_write_json(r, p->json_path);
    json_decref(config);
    zb_rows_free(rows);
    zb_report_free(r);
    return s;
}

int zb_plan_report(const zb_plan *p, int argc, char **argv) {
    plan_unit u = unit_for(p);
    print_header(p, u);
    zb_status s = ZB_OK;
    for (int stage = 0; s == ZB_OK && stage < 4; stage++) s = print_stage(p, stage, u);
    if (s == ZB_OK && p->json_path[0]) s = write_json(p, argc, argv);
    fflush(stdout);
    if (s != ZB_OK) {
        fprintf(stderr, "zerobench: %s\n", zb_error_message());
        return zb_exit_code(s) == 2 ? 2 : 1;
    }
    return 0;
}
