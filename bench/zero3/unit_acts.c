/* Activation and workspace storage of the per-unit forward/backward
 * (unit.h), and the units' FLOP counts. Each zb_unit_acts and the workspace
 * is one device allocation carved into [N, *] slices (N = B*T), each slice
 * starting on a 256-byte boundary; activation slices hold the storage
 * dtype, the per-row statistics fp32. */
#include <string.h>

#include "unit.h"

#define ZB_ACTS_ALIGN_BYTES 256

/* Reserves n elements of esize bytes at byte offset *off and returns where
 * they start (NULL while only counting, base == NULL). */
static void *carve_bytes(char *base, size_t *off, size_t n, size_t esize) {
    void *slot = base ? base + *off : NULL;
    *off += (n * esize + ZB_ACTS_ALIGN_BYTES - 1) / ZB_ACTS_ALIGN_BYTES * ZB_ACTS_ALIGN_BYTES;
    return slot;
}

typedef struct dims {
    size_t N, C, HD, KD, F, V, rows; /* rows: B*H attention rows of T */
    size_t esize; /* bytes of a storage-dtype element */
} dims;

/* A storage-dtype slice of n elements, and an fp32 one. */
static void carve(char *base, size_t *off, const dims *d, size_t n, void **slot) {
    *slot = carve_bytes(base, off, n, d->esize);
}
static void carve_f32(char *base, size_t *off, size_t n, float **slot) {
    *slot = (float *)carve_bytes(base, off, n, sizeof(float));
}

static dims dims_of(const zb_model_cfg *cfg, int B, zb_dtype dtype) {
    dims d;
    d.esize = zb_dtype_size(dtype);
    d.N = (size_t)B * (size_t)cfg->seq;
    d.C = (size_t)cfg->dim;
    d.HD = (size_t)cfg->heads * (size_t)cfg->head_dim;
    d.KD = (size_t)cfg->kv_heads * (size_t)cfg->head_dim;
    d.F = (size_t)cfg->ffn_dim;
    d.V = (size_t)cfg->vocab;
    d.rows = (size_t)B * (size_t)cfg->heads * (size_t)cfg->seq;
    return d;
}

static void carve_layer(const dims *d, char *base, size_t *off, zb_layer_saved *s) {
    carve(base, off, d, d->N * d->C, &s->xn1);
    carve_f32(base, off, d->N, &s->rstd1);
    carve(base, off, d, d->N * d->HD, &s->q);
    carve(base, off, d, d->N * d->KD, &s->k);
    carve(base, off, d, d->N * d->KD, &s->v);
    carve_f32(base, off, d->rows, &s->lse);
    carve(base, off, d, d->N * d->HD, &s->att);
    carve(base, off, d, d->N * d->C, &s->h);
    carve(base, off, d, d->N * d->C, &s->xn2);
    carve_f32(base, off, d->N, &s->rstd2);
    carve(base, off, d, d->N * d->F, &s->gate);
    carve(base, off, d, d->N * d->F, &s->up);
    carve(base, off, d, d->N * d->F, &s->act);
}

/* Lays out (or, with base NULL, sizes) one unit's acts; returns bytes. */
static size_t carve_acts(const zb_model_cfg *cfg, int unit, int B, bool keep, zb_dtype dtype,
                         char *base, zb_unit_acts *a) {
    dims d = dims_of(cfg, B, dtype);
    size_t off = 0;
    switch (zb_model_unit_kind(cfg, unit)) {
    case ZB_UNIT_EMBED: carve(base, &off, &d, d.N * d.C, &a->out); break;
    case ZB_UNIT_LAYER:
        carve(base, &off, &d, d.N * d.C, &a->out);
        if (keep) carve_layer(&d, base, &off, &a->layer);
        break;
    case ZB_UNIT_HEAD:
        carve(base, &off, &d, d.N * d.C, &a->head.xn);
        carve_f32(base, &off, d.N, &a->head.rstd);
        carve(base, &off, &d, d.N * d.V, &a->head.logits);
        carve_f32(base, &off, d.N, &a->head.lse);
        break;
    }
    return off;
}

static size_t carve_ws(const zb_model_cfg *cfg, int B, bool recompute, zb_dtype dtype,
                       char *base, zb_unit_workspace *w) {
    dims d = dims_of(cfg, B, dtype);
    size_t off = 0;
    for (int i = 0; i < 2; i++) {
        carve(base, &off, &d, d.N * d.F, &w->d_f[i]);
        carve(base, &off, &d, d.N * d.C, &w->d_c[i]);
        carve(base, &off, &d, d.N * d.HD, &w->d_hd[i]);
        carve(base, &off, &d, d.N * d.KD, &w->d_kd[i]);
    }
    if (recompute) carve_layer(&d, base, &off, &w->re);
    return off;
}

size_t zb_unit_acts_bytes(const zb_model_cfg *cfg, int unit, int B, bool keep_intermediates,
                          zb_dtype dtype) {
    zb_unit_acts a;
    memset(&a, 0, sizeof a);
    return carve_acts(cfg, unit, B, keep_intermediates, dtype, NULL, &a);
}

size_t zb_unit_workspace_bytes(const zb_model_cfg *cfg, int B, bool recompute, zb_dtype dtype) {
    zb_unit_workspace w;
    memset(&w, 0, sizeof w);
    return carve_ws(cfg, B, recompute, dtype, NULL, &w);
}

static zb_status check_unit(const zb_model_cfg *cfg, int unit, int B, const char *what) {
    if (unit < 0 || unit >= zb_model_n_units(cfg)) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s: unit %d is outside [0, %d)", what, unit,
                       zb_model_n_units(cfg));
    }
    if (B <= 0) return ZB_FAIL(ZB_ERR_INVALID, "%s: batch %d must be positive", what, B);
    return ZB_OK;
}

static zb_status check_dtype(zb_dtype dtype, const char *what) {
    if (dtype == ZB_DTYPE_F32 || dtype == ZB_DTYPE_BF16) return ZB_OK;
    return ZB_FAIL(ZB_ERR_INVALID, "%s: storage dtype %d is neither float nor bf16", what,
                   (int)dtype);
}

zb_status zb_unit_acts_alloc(zb_device *dev, const zb_model_cfg *cfg, int unit, int B,
                             bool keep_intermediates, zb_dtype dtype, zb_unit_acts *out) {
    memset(out, 0, sizeof *out);
    ZB_TRY(check_unit(cfg, unit, B, "activations"));
    ZB_TRY(check_dtype(dtype, "activations"));
    zb_unit_kind kind = zb_model_unit_kind(cfg, unit);
    bool keep = kind == ZB_UNIT_LAYER ? keep_intermediates : true;
    size_t bytes = zb_unit_acts_bytes(cfg, unit, B, keep, dtype);
    void *block = NULL;
    ZB_TRY(zb_dev_alloc(dev, bytes, ZB_MEM_ACTIVATION, &block));
    carve_acts(cfg, unit, B, keep, dtype, (char *)block, out);
    out->unit = unit;
    out->kind = kind;
    out->B = B;
    out->dtype = dtype;
    out->keep = keep;
    out->block = block;
    out->bytes = bytes;
    return ZB_OK;
}

void zb_unit_acts_free(zb_device *dev, zb_unit_acts *acts) {
    if (acts->block) zb_dev_free(dev, acts->block);
    memset(acts, 0, sizeof *acts);
}

zb_status zb_unit_workspace_alloc(zb_device *dev, const zb_model_cfg *cfg, int B, bool recompute,
                                  zb_dtype dtype, zb_unit_workspace *out) {
    memset(out, 0, sizeof *out);
    if (B <= 0) return ZB_FAIL(ZB_ERR_INVALID, "workspace: batch %d must be positive", B);
    ZB_TRY(check_dtype(dtype, "workspace"));
    size_t bytes = zb_unit_workspace_bytes(cfg, B, recompute, dtype);
    void *block = NULL;
    ZB_TRY(zb_dev_alloc(dev, bytes, ZB_MEM_WORKSPACE, &block));
    carve_ws(cfg, B, recompute, dtype, (char *)block, out);
    out->B = B;
    out->dtype = dtype;
    out->recompute = recompute;
    out->block = block;
    out->bytes = bytes;
    return ZB_OK;
}

void zb_unit_workspace_free(zb_device *dev, zb_unit_workspace *ws) {
    if (ws->block) zb_dev_free(dev, ws->block);
    memset(ws, 0, sizeof *ws);
}

/* ---- FLOPs ----------------------------------------------------------------- */

double zb_unit_forward_flops(const zb_model_cfg *cfg, int unit, int B) {
    double N = (double)B * cfg->seq, C = cfg->dim, F = cfg->ffn_dim;
    double HD = (double)cfg->heads * cfg->head_dim, KD = (double)cfg->kv_heads * cfg->head_dim;
    switch (zb_model_unit_kind(cfg, unit)) {
    case ZB_UNIT_EMBED: return 0.0;
    case ZB_UNIT_LAYER: {
        double mm = HD * C + 2.0 * KD * C + C * HD + 3.0 * F * C;
        double attn = zb_attention_fwd_flops(B, cfg->seq, cfg->heads, cfg->head_dim);
        return 2.0 * N * mm + attn;
    }
    case ZB_UNIT_HEAD: return 2.0 * N * (double)cfg->vocab * C;
    }
    return 0.0;
}

double zb_unit_backward_flops(const zb_model_cfg *cfg, int unit, int B, bool recompute) {
    double fwd = zb_unit_forward_flops(cfg, unit, B);
    double bwd = 2.0 * fwd;
    if (recompute && zb_model_unit_kind(cfg, unit) == ZB_UNIT_LAYER) {
        double N = (double)B * cfg->seq;
        bwd += fwd - 2.0 * N * (double)cfg->dim * (double)cfg->ffn_dim; /* no w_down */
    }
    return bwd;
}
