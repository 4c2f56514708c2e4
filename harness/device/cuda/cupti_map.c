/* Activity records -> trace records: correlation, classification, counting
 * (see cupti_map.h for the rules). Plain C; the CUPTI tracer feeds it. */
#include "cupti_map.h"

#include <stdlib.h>
#include <string.h>

/* NCCL's kernel names, matched against the full kernel name (a trace
 * record keeps only the first ZB_LABEL_MAX - 1 bytes); the one place a
 * record is made comm by its name. */
static const char *const zb_cupti_nccl_names[] = {"ncclDevKernel", "ncclSymkDevKernel",
                                                   "ncclKernel", "oneRankReduce"};

const char *zb_act_kind_name(zb_act_kind k) {
    switch (k) {
    case ZB_ACT_KERNEL: return "kernel";
    case ZB_ACT_MEMCPY: return "memcpy";
    case ZB_ACT_MEMSET: return "memset";
    case ZB_ACT_RUNTIME: return "runtime";
    case ZB_ACT_DRIVER: return "driver";
    case ZB_ACT_EXTERNAL_CORRELATION: return "external-correlation";
    case ZB_ACT_SYNCHRONIZATION: return "synchronization";
    case ZB_ACT_OVERHEAD: return "overhead";
    case ZB_ACT_OTHER: return "other";
    case ZB_ACT_KIND_COUNT: break;
    }
    return "unknown";
}

bool zb_cupti_is_nccl_kernel(const char *name) {
    if (!name) return false;
    for (size_t i = 0; i < sizeof zb_cupti_nccl_names / sizeof zb_cupti_nccl_names[0]; i++) {
        if (strstr(name, zb_cupti_nccl_names[i])) return true;
    }
    return false;
}

/* Appends src[0..len) to out (capacity out_size, position *pos), truncating. */
static void zb_append(char *out, size_t out_size, size_t *pos, const char *src, size_t len) {
    while (len-- > 0 && *pos + 1 < out_size) out[(*pos)++] = *src++;
    out[*pos] = '\0';
}

/* Reads an Itanium <source-name> (<length><identifier>) at *p. */
static bool zb_source_name(const char **p, const char **id, size_t *len) {
    const char *s = *p;
    size_t n = 0;
    if (*s < '0' || *s > '9') return false;
    while (*s >= '0' && *s <= '9') {
        n = n * 10 + (size_t)(*s - '0');
        if (n > 4096) return false;
        s++;
    }
    if (strnlen(s, n) < n) return false;
    *id = s;
    *len = n;
    *p = s + n;
    return true;
}

void zb_cupti_short_name(const char *name, char *out, size_t out_size) {
    if (!out || out_size == 0) return;
    out[0] = '\0';
    if (!name) return;
    size_t pos = 0;
    if (strncmp(name, "_Z", 2) == 0) {
        const char *p = name + 2;
        bool nested = false;
        if (*p == 'L') p++; /* internal linkage */
        if (*p == 'N') {
            nested = true;
            p++;
            while (*p == 'K' || *p == 'V' || *p == 'r') p++; /* cv-qualifiers */
        }
        const char *id;
        size_t len;
        int parts = 0;
        while (zb_source_name(&p, &id, &len)) {
            if (parts++ > 0) zb_append(out, out_size, &pos, "::", 2);
            zb_append(out, out_size, &pos, id, len);
            if (!nested) break;
        }
        if (parts > 0) return;
        pos = 0;
        out[0] = '\0';
    }
    const char *paren = strchr(name, '(');
    size_t len = paren ? (size_t)(paren - name) : strlen(name);
    zb_append(out, out_size, &pos, name, len);
}

/* ---- uint64 -> uint64 table ------------------------------------------------ */

static size_t zb_u64_hash(uint64_t k, size_t cap) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

static void zb_u64_table_free(zb_u64_table *t) {
    free(t->keys);
    free(t->vals);
    memset(t, 0, sizeof *t);
}

static bool zb_u64_table_get(const zb_u64_table *t, uint64_t key, uint64_t *val) {
    if (t->cap == 0 || key == 0) return false;
    for (size_t i = zb_u64_hash(key, t->cap);; i = (i + 1) & (t->cap - 1)) {
        if (t->keys[i] == 0) return false;
        if (t->keys[i] == key) {
            *val = t->vals[i];
            return true;
        }
    }
}

static zb_status zb_u64_table_put(zb_u64_table *t, uint64_t key, uint64_t val);

static zb_status zb_u64_table_grow(zb_u64_table *t) {
    zb_u64_table bigger = {0};
    bigger.cap = t->cap ? t->cap * 2 : 1024;
    bigger.keys = (uint64_t *)calloc(bigger.cap, sizeof *bigger.keys);
    bigger.vals = (uint64_t *)calloc(bigger.cap, sizeof *bigger.vals);
    if (!bigger.keys || !bigger.vals) {
        zb_u64_table_free(&bigger);
        return ZB_FAIL(ZB_ERR_NOMEM, "CUPTI correlation table: out of memory");
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (t->keys[i] != 0) (void)zb_u64_table_put(&bigger, t->keys[i], t->vals[i]);
    }
    zb_u64_table_free(t);
    *t = bigger;
    return ZB_OK;
}

static zb_status zb_u64_table_put(zb_u64_table *t, uint64_t key, uint64_t val) {
    if (key == 0) return ZB_FAIL(ZB_ERR_INVALID, "CUPTI correlation table: key 0");
    if (2 * (t->n + 1) > t->cap) ZB_TRY(zb_u64_table_grow(t));
    for (size_t i = zb_u64_hash(key, t->cap);; i = (i + 1) & (t->cap - 1)) {
        if (t->keys[i] == key) {
            t->vals[i] = val;
            return ZB_OK;
        }
        if (t->keys[i] == 0) {
            t->keys[i] = key;
            t->vals[i] = val;
            t->n++;
            return ZB_OK;
        }
    }
}

static void zb_cupti_gen_free(zb_cupti_gen *g) {
    zb_u64_table_free(&g->corr_to_ext);
    zb_u64_table_free(&g->ext_to_op);
    free(g->ops);
    memset(g, 0, sizeof *g);
}

/* ---- the map --------------------------------------------------------------- */

zb_status zb_cupti_map_init(zb_cupti_map *m, int64_t comm_stream_id) {
    memset(m, 0, sizeof *m);
    m->comm_stream_id = comm_stream_id < 0 ? -1 : comm_stream_id;
    zb_clock_map_init(&m->clock);
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
        return ZB_FAIL(ZB_ERR_INTERNAL, "pthread_mutex_init failed for the CUPTI map");
    }
    return ZB_OK;
}

void zb_cupti_map_free(zb_cupti_map *m) {
    if (!m) return;
    zb_cupti_gen_free(&m->gen[0]);
    zb_cupti_gen_free(&m->gen[1]);
    free(m->pending);
    free(m->colls);
    pthread_mutex_destroy(&m->lock);
    memset(m, 0, sizeof *m);
}

zb_status zb_cupti_map_set_stream(zb_cupti_map *m, uint32_t cupti_stream_id, int zb_stream,
                                  bool is_comm) {
    zb_status s = ZB_OK;
    pthread_mutex_lock(&m->lock);
    size_t i = 0;
    while (i < m->n_streams && m->streams[i].cupti_id != cupti_stream_id) i++;
    if (i == ZB_CUPTI_MAX_STREAMS) {
        s = ZB_FAIL(ZB_ERR_INVALID, "CUPTI map: more than %d registered streams",
                    ZB_CUPTI_MAX_STREAMS);
    } else {
        if (i == m->n_streams) m->n_streams++;
        m->streams[i].cupti_id = cupti_stream_id;
        m->streams[i].zb_stream = zb_stream;
        m->streams[i].is_comm = is_comm;
    }
    pthread_mutex_unlock(&m->lock);
    return s;
}

/* ---- NCCL kernels matched by order (see cupti_map.h) ------------------------ */

/* Called with the lock held. */
static zb_status zb_coll_slot_add(zb_cupti_map *m, uint64_t id, const zb_cupti_op *op) {
    if (m->n_colls == m->cap_colls) {
        size_t cap = m->cap_colls ? m->cap_colls * 2 : 256;
        zb_cupti_coll_slot *grown = (zb_cupti_coll_slot *)realloc(m->colls, cap * sizeof *grown);
        if (!grown) return ZB_FAIL(ZB_ERR_NOMEM, "CUPTI map: out of memory for %zu collective ops", cap);
        m->colls = grown;
        m->cap_colls = cap;
    }
    zb_cupti_coll_slot *c = &m->colls[m->n_colls++];
    memset(c, 0, sizeof *c);
    c->ext = id;
    c->stream = op->stream;
    memcpy(c->coll, op->coll, sizeof c->coll);
    return ZB_OK;
}

/* The collective an NCCL kernel's name says, as the comm layer names it;
 * NULL when the name says none (a generic kernel). */
static const char *zb_nccl_kernel_coll(const char *name) {
    if (strstr(name, "AllGather")) return "allgather";
    if (strstr(name, "ReduceScatter")) return "reducescatter";
    if (strstr(name, "AllReduce")) return "allreduce";
    return NULL;
}

zb_status zb_cupti_map_push_op(zb_cupti_map *m, uint64_t id, const zb_op_info *info, int zb_stream) {
    if (id == 0 || !info) return ZB_FAIL(ZB_ERR_INVALID, "CUPTI map: op id 0 or no op info");
    zb_status s = ZB_OK;
    pthread_mutex_lock(&m->lock);
    zb_cupti_gen *g = &m->gen[0];
    if (g->n_ops == g->cap_ops) {
        size_t cap = g->cap_ops ? g->cap_ops * 2 : 1024;
        zb_cupti_op *grown = (zb_cupti_op *)realloc(g->ops, cap * sizeof *grown);
        if (!grown) {
            s = ZB_FAIL(ZB_ERR_NOMEM, "CUPTI map: out of memory for %zu ops", cap);
            goto out;
        }
        g->ops = grown;
        g->cap_ops = cap;
    }
    s = zb_u64_table_put(&g->ext_to_op, id, (uint64_t)g->n_ops);
    if (s != ZB_OK) goto out;
    zb_cupti_op *op = &g->ops[g->n_ops++];
    memset(op, 0, sizeof *op);
    if (info->label) strncpy(op->label, info->label, sizeof op->label - 1);
    op->unit = info->unit;
    op->kind = info->kind;
    op->bytes = info->bytes;
    op->flops = info->flops;
    if (info->coll) strncpy(op->coll, info->coll, sizeof op->coll - 1);
    op->stream = zb_stream;
    m->stats.n_ops++;
    if (op->kind == ZB_OP_COMM && op->coll[0]) s = zb_coll_slot_add(m, id, op);
out:
    pthread_mutex_unlock(&m->lock);
    return s;
}

static bool zb_is_gpu_kind(zb_act_kind k) {
    return k == ZB_ACT_KERNEL || k == ZB_ACT_MEMCPY || k == ZB_ACT_MEMSET;
}

static int64_t zb_span_ns(const zb_act_record *r) {
    if (r->start_ns == 0 || r->end_ns < r->start_ns) return 0;
    return (int64_t)(r->end_ns - r->start_ns);
}

/* Called with the lock held. */
static void zb_cupti_hold(zb_cupti_map *m, const zb_act_record *r) {
    if (m->n_pending == m->cap_pending) {
        size_t cap = m->cap_pending ? m->cap_pending * 2 : 4096;
        zb_cupti_pending *grown = (zb_cupti_pending *)realloc(m->pending, cap * sizeof *grown);
        if (!grown) {
            m->stats.n_discarded++; /* no memory to hold it: counted, not kept */
            return;
        }
        m->pending = grown;
        m->cap_pending = cap;
    }
    zb_cupti_pending *p = &m->pending[m->n_pending++];
    memset(p, 0, sizeof *p);
    p->kind = r->kind;
    p->stream_id = r->stream_id;
    p->correlation_id = r->correlation_id;
    p->runtime_correlation_id = r->runtime_correlation_id;
    p->start_ns = r->start_ns;
    p->end_ns = r->end_ns;
    p->bytes = r->bytes;
    if (r->kind == ZB_ACT_KERNEL) {
        p->nccl_name = zb_cupti_is_nccl_kernel(r->name);
        zb_cupti_short_name(r->name ? r->name : "kernel", p->name, sizeof p->name);
    } else {
        const char *fallback = r->kind == ZB_ACT_MEMCPY ? "memcpy" : "memset";
        strncpy(p->name, r->name && r->name[0] ? r->name : fallback, sizeof p->name - 1);
    }
}

void zb_cupti_map_record(zb_cupti_map *m, const zb_act_record *r) {
    pthread_mutex_lock(&m->lock);
    zb_act_kind k = (unsigned)r->kind < ZB_ACT_KIND_COUNT ? r->kind : ZB_ACT_OTHER;
    m->stats.n_by_kind[k]++;
    if (zb_is_gpu_kind(k)) {
        m->stats.n_gpu_records++;
        if (r->start_ns == 0 || r->end_ns == 0) {
            m->stats.n_zero_timestamp++;
        } else if (r->end_ns < r->start_ns) {
            m->stats.n_inverted++;
        } else {
            zb_cupti_hold(m, r);
        }
    } else if (k == ZB_ACT_EXTERNAL_CORRELATION) {
        if (!r->external_is_zb) {
            m->stats.n_foreign_external++;
        } else if (zb_u64_table_put(&m->gen[0].corr_to_ext, r->correlation_id, r->external_id) !=
                   ZB_OK) {
            m->stats.n_buffer_errors++; /* no memory (or id 0): the op stays uncorrelated */
        }
    } else if (k == ZB_ACT_SYNCHRONIZATION) {
        m->stats.sync_ns += zb_span_ns(r);
    } else if (k == ZB_ACT_OVERHEAD) {
        m->stats.overhead_ns += zb_span_ns(r);
    }
    m->stats.n_pending = m->n_pending;
    pthread_mutex_unlock(&m->lock);
}

void zb_cupti_map_add_clock_pair(zb_cupti_map *m, int64_t cupti_ns, int64_t mono_ns,
                                 int64_t *residual_ns) {
    pthread_mutex_lock(&m->lock);
    zb_clock_map_add(&m->clock, cupti_ns, mono_ns, residual_ns);
    m->stats.n_clock_pairs = m->clock.n_pairs;
    m->stats.clock_max_residual_ns = m->clock.max_residual_ns;
    pthread_mutex_unlock(&m->lock);
}

void zb_cupti_map_add_dropped(zb_cupti_map *m, size_t n_records) {
    pthread_mutex_lock(&m->lock);
    m->stats.n_dropped += n_records;
    pthread_mutex_unlock(&m->lock);
}

void zb_cupti_map_add_buffer_error(zb_cupti_map *m) {
    pthread_mutex_lock(&m->lock);
    m->stats.n_buffer_errors++;
    pthread_mutex_unlock(&m->lock);
}

/* Looks a key up in the current generation, then the previous one. */
static bool zb_gen_lookup_ext(const zb_cupti_map *m, uint32_t corr, uint64_t *ext) {
    return corr != 0 && (zb_u64_table_get(&m->gen[0].corr_to_ext, corr, ext) ||
                         zb_u64_table_get(&m->gen[1].corr_to_ext, corr, ext));
}

static const zb_cupti_op *zb_gen_lookup_op(const zb_cupti_map *m, uint64_t ext) {
    uint64_t idx;
    for (int g = 0; g < 2; g++) {
        if (zb_u64_table_get(&m->gen[g].ext_to_op, ext, &idx) && idx < m->gen[g].n_ops) {
            return &m->gen[g].ops[idx];
        }
    }
    return NULL;
}

static const zb_cupti_op *zb_resolve(const zb_cupti_map *m, const zb_cupti_pending *p,
                                     uint64_t *ext) {
    if (zb_gen_lookup_ext(m, p->correlation_id, ext) ||
        zb_gen_lookup_ext(m, p->runtime_correlation_id, ext)) {
        return zb_gen_lookup_op(m, *ext);
    }
    return NULL;
}

static void zb_stream_of(const zb_cupti_map *m, uint32_t cupti_id, int *zb_stream, bool *is_comm);

static void zb_coll_mark(zb_cupti_map *m, uint64_t ext) {
    for (size_t c = 0; c < m->n_colls; c++) {
        if (m->colls[c].ext == ext) m->colls[c].matched = true;
    }
}

typedef struct zb_start_index {
    uint64_t start_ns;
    size_t i;
} zb_start_index;

static int zb_by_start(const void *a, const void *b) {
    const zb_start_index *x = (const zb_start_index *)a, *y = (const zb_start_index *)b;
    if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Gives each uncorrelated NCCL kernel held in pending the id of its
 * collective op (assigned[i], 0: none), by order (see cupti_map.h), then
 * forgets the ops matched or no longer resolvable. Lock held. An
 * allocation failure leaves them uncorrelated. */
static void zb_match_by_order(zb_cupti_map *m, uint64_t *assigned) {
    zb_start_index *idx = (zb_start_index *)malloc((m->n_pending ? m->n_pending : 1) * sizeof *idx);
    size_t n = 0;
    for (size_t i = 0; i < m->n_pending; i++) {
        const zb_cupti_pending *p = &m->pending[i];
        if (p->kind != ZB_ACT_KERNEL || !p->nccl_name) continue;
        uint64_t ext = 0;
        if (zb_resolve(m, p, &ext)) zb_coll_mark(m, ext); /* came correlated */
        else if (idx) idx[n++] = (zb_start_index){p->start_ns, i};
    }
    if (idx) qsort(idx, n, sizeof *idx, zb_by_start);
    for (size_t k = 0; k < n; k++) {
        const zb_cupti_pending *p = &m->pending[idx[k].i];
        int stream;
        bool on_comm;
        zb_stream_of(m, p->stream_id, &stream, &on_comm);
        const char *kind = zb_nccl_kernel_coll(p->name);
        for (size_t c = 0; stream >= 0 && c < m->n_colls; c++) {
            zb_cupti_coll_slot *slot = &m->colls[c];
            if (slot->matched || slot->stream != stream || (kind && strcmp(kind, slot->coll) != 0)) continue;
            if (!zb_gen_lookup_op(m, slot->ext)) continue; /* aged out */
            slot->matched = true;
            assigned[idx[k].i] = slot->ext;
            break;
        }
    }
    free(idx);
    size_t kept = 0;
    for (size_t c = 0; c < m->n_colls; c++) {
        if (!m->colls[c].matched && zb_gen_lookup_op(m, m->colls[c].ext)) m->colls[kept++] = m->colls[c];
    }
    m->n_colls = kept;
}

static void zb_stream_of(const zb_cupti_map *m, uint32_t cupti_id, int *zb_stream, bool *is_comm) {
    *zb_stream = -1;
    *is_comm = m->comm_stream_id >= 0 && (int64_t)cupti_id == m->comm_stream_id;
    for (size_t i = 0; i < m->n_streams; i++) {
        if (m->streams[i].cupti_id == cupti_id) {
            *zb_stream = m->streams[i].zb_stream;
            *is_comm = *is_comm || m->streams[i].is_comm;
            return;
        }
    }
}

zb_status zb_cupti_map_flush(zb_cupti_map *m, zb_trace *t) {
    pthread_mutex_lock(&m->lock);
    if (m->n_pending > 0 && m->clock.n_pairs == 0) {
        pthread_mutex_unlock(&m->lock);
        return ZB_FAIL(ZB_ERR_INVALID, "CUPTI map: %zu records but no clock pair to convert them",
                       m->n_pending);
    }
    bool tracing = t && t->enabled;
    uint64_t *assigned = tracing ? (uint64_t *)calloc(m->n_pending ? m->n_pending : 1, sizeof *assigned) : NULL;
    if (assigned) zb_match_by_order(m, assigned);
    for (size_t i = 0; i < m->n_pending; i++) {
        const zb_cupti_pending *p = &m->pending[i];
        if (!tracing) {
            m->stats.n_discarded++;
            continue;
        }
        uint64_t ext = 0;
        const zb_cupti_op *op = zb_resolve(m, p, &ext);
        if (!op && assigned && assigned[i]) {
            ext = assigned[i];
            op = zb_gen_lookup_op(m, ext);
            if (op) m->stats.n_order_matched++;
        }
        int stream;
        bool on_comm;
        zb_stream_of(m, p->stream_id, &stream, &on_comm);
        if (stream < 0) {
            stream = op ? op->stream : ZB_CUPTI_FOREIGN_STREAM_BASE + (int)p->stream_id;
        }
        zb_op_info info;
        memset(&info, 0, sizeof info);
        if (p->kind == ZB_ACT_KERNEL) {
            if (p->nccl_name || on_comm) {
                info.kind = ZB_OP_COMM;
            } else {
                info.kind = op ? op->kind : ZB_OP_COMPUTE;
            }
            info.bytes = op ? op->bytes : 0;
            info.flops = op ? op->flops : 0.0;
        } else {
            /* A copy or memset is comm when it is part of a collective (by
             * correlation: a one-rank NCCL collective launches no kernel,
             * only a device-to-device copy) or runs on the comm stream (the
             * mpi comm's staging copies); else a copy. */
            bool comm_op = op && op->kind == ZB_OP_COMM;
            info.kind = comm_op || on_comm ? ZB_OP_COMM : ZB_OP_COPY;
            info.bytes = p->bytes;
        }
        info.label = op ? op->label : p->name;
        info.unit = op ? op->unit : -1;
        /* A collective's kernel carries its name: one record per instance
         * and rank, whose start is the arrival (docs/design.md §6). Copies
         * inside it (a one-rank NCCL collective has only those) stay
         * unnamed, so no instance is counted twice. */
        info.coll = op && op->coll[0] && p->kind == ZB_ACT_KERNEL ? op->coll : NULL;
        if (!op) m->stats.n_uncorrelated++;
        int64_t start = zb_clock_map_convert(&m->clock, (int64_t)p->start_ns);
        int64_t end = zb_clock_map_convert(&m->clock, (int64_t)p->end_ns);
        if (end < start) end = start; /* rounding of the drift term can never invert */
        zb_trace_add(t, stream, &info, op ? ext : 0, start, end);
        m->stats.n_emitted++;
        m->stats.n_emitted_by_kind[info.kind]++;
    }
    free(assigned);
    m->n_pending = 0;
    m->stats.n_pending = 0;
    /* Age the id tables: the previous generation goes, the current one stays
     * resolvable for one more window. */
    zb_cupti_gen_free(&m->gen[1]);
    m->gen[1] = m->gen[0];
    memset(&m->gen[0], 0, sizeof m->gen[0]);
    pthread_mutex_unlock(&m->lock);
    return ZB_OK;
}

void zb_cupti_map_get_stats(zb_cupti_map *m, zb_cupti_stats *out) {
    pthread_mutex_lock(&m->lock);
    *out = m->stats;
    pthread_mutex_unlock(&m->lock);
}
