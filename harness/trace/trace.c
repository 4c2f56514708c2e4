/* Per-rank trace buffer (see trace.h). */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "escape.h"

/* The value's syntax alone, without recording an error: zb_now_ns may run
 * on a thread that has an error message of its own to keep. */
static bool skew_value(const char *value, int64_t *out) {
    if (!value || !value[0] || value[0] == ' ' || value[0] == '\t') return false;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (errno != 0 || *end != '\0' || v > ZB_TEST_CLOCK_SKEW_MAX_NS || v < -ZB_TEST_CLOCK_SKEW_MAX_NS) {
        return false;
    }
    *out = (int64_t)v;
    return true;
}

zb_status zb_clock_skew_parse(const char *value, int64_t *out) {
    if (skew_value(value, out)) return ZB_OK;
    char shown[96];
    zb_escape(value, 64, shown, sizeof shown); /* one line, at most 64 characters of it */
    return ZB_FAIL(ZB_ERR_INVALID, "%s='%s': expected an integer number of nanoseconds within +-%lld "
                   "(a test hook that shifts this process's clock)", ZB_TEST_CLOCK_SKEW_ENV,
                   shown, (long long)ZB_TEST_CLOCK_SKEW_MAX_NS);
}

zb_status zb_clock_skew_check(void) {
    const char *v = getenv(ZB_TEST_CLOCK_SKEW_ENV);
    int64_t skew;
    return v ? zb_clock_skew_parse(v, &skew) : ZB_OK;
}

static pthread_once_t skew_once = PTHREAD_ONCE_INIT;
static int64_t skew_ns; /* written once, under skew_once */

static void skew_read(void) {
    int64_t v = 0;
    if (skew_value(getenv(ZB_TEST_CLOCK_SKEW_ENV), &v)) skew_ns = v;
}

int64_t zb_now_ns(void) {
    pthread_once(&skew_once, skew_read);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + (int64_t)ts.tv_nsec + skew_ns;
}

const char *zb_op_kind_name(zb_op_kind k) {
    switch (k) {
    case ZB_OP_COMPUTE: return "compute";
    case ZB_OP_COMM: return "comm";
    case ZB_OP_COPY: return "copy";
    case ZB_OP_KIND_COUNT: break;
    }
    return "unknown";
}

zb_status zb_trace_init(zb_trace *t, int rank, bool enabled) {
    memset(t, 0, sizeof *t);
    t->enabled = enabled;
    t->rank = rank;
    if (pthread_mutex_init(&t->lock, NULL) != 0) {
        return ZB_FAIL(ZB_ERR_INTERNAL, "pthread_mutex_init failed for the trace buffer");
    }
    return ZB_OK;
}

void zb_trace_destroy(zb_trace *t) {
    if (!t) return;
    free(t->records);
    free(t->steps);
    free(t->mem);
    pthread_mutex_destroy(&t->lock);
    memset(t, 0, sizeof *t);
}

void zb_trace_clear(zb_trace *t) {
    pthread_mutex_lock(&t->lock);
    t->n_records = 0; /* n_dropped keeps counting: drops are never forgotten */
    t->n_steps = 0;
    t->n_mem = 0;
    pthread_mutex_unlock(&t->lock);
}

void zb_trace_truncate(zb_trace *t, size_t first) {
    if (!t) return;
    pthread_mutex_lock(&t->lock);
    if (first < t->n_records) t->n_records = first;
    pthread_mutex_unlock(&t->lock);
}

int zb_trace_phase_begin(zb_trace *t, const char *mode, int stage, int warmup_steps, int steps) {
    if (!t || !t->enabled) return -1;
    pthread_mutex_lock(&t->lock);
    int i = t->n_phases < ZB_TRACE_MAX_PHASES ? t->n_phases++ : -1;
    if (i >= 0) {
        zb_trace_phase *p = &t->phases[i];
        memset(p, 0, sizeof *p);
        snprintf(p->name, sizeof p->name, "stage %d %s", stage, mode ? mode : "");
        strncpy(p->mode, mode ? mode : "", sizeof p->mode - 1);
        p->stage = stage;
        p->warmup_steps = warmup_steps;
        p->steps = steps;
        p->first_written = 1;
        p->last_written = 0; /* none yet */
    }
    pthread_mutex_unlock(&t->lock);
    return i;
}

void zb_trace_mark_step(zb_trace *t, int phase, int index, bool warmup, int64_t start_ns, int64_t end_ns) {
    if (!t || !t->enabled || phase < 0 || phase >= t->n_phases) return;
    pthread_mutex_lock(&t->lock);
    if (t->n_steps == t->cap_steps) {
        size_t cap = t->cap_steps ? t->cap_steps * 2 : 64;
        zb_trace_step *grown = (zb_trace_step *)realloc(t->steps, cap * sizeof *grown);
        if (!grown) { /* the step's slice is lost, its records stay: counted like a record */
            t->n_dropped++;
            pthread_mutex_unlock(&t->lock);
            return;
        }
        t->steps = grown;
        t->cap_steps = cap;
    }
    zb_trace_step *s = &t->steps[t->n_steps++];
    s->index = index;
    s->warmup = warmup;
    s->phase = phase;
    s->start_ns = start_ns;
    s->end_ns = end_ns;
    zb_trace_phase *p = &t->phases[phase];
    if (p->last_written < p->first_written) p->first_written = index;
    p->last_written = index;
    pthread_mutex_unlock(&t->lock);
}

void zb_trace_mem_sample_add(zb_trace *t, const size_t *live_bytes, int n_tags) {
    if (!t || !t->enabled) return;
    zb_trace_mem_sample_at(t, zb_now_ns(), live_bytes, n_tags);
}

void zb_trace_mem_sample_at(zb_trace *t, int64_t now, const size_t *live_bytes, int n_tags) {
    if (!t || !t->enabled) return;
    pthread_mutex_lock(&t->lock);
    if (t->n_mem == t->cap_mem) {
        size_t cap = t->cap_mem ? t->cap_mem * 2 : 256;
        zb_trace_mem_sample *grown = t->cap_mem >= ZB_TRACE_MAX_MEM_SAMPLES
                                         ? NULL
                                         : (zb_trace_mem_sample *)realloc(t->mem, cap * sizeof *grown);
        if (!grown) {
            t->n_mem_dropped++;
            pthread_mutex_unlock(&t->lock);
            return;
        }
        t->mem = grown;
        t->cap_mem = cap;
    }
    zb_trace_mem_sample *m = &t->mem[t->n_mem++];
    memset(m, 0, sizeof *m);
    m->time_ns = now;
    for (int i = 0; i < n_tags && i < ZB_TRACE_MEM_TAGS; i++) m->live_bytes[i] = live_bytes[i];
    pthread_mutex_unlock(&t->lock);
}

size_t zb_trace_collectives(const zb_trace_record *recs, size_t n, int rank, int64_t t0_ns, int64_t t1_ns,
                            size_t *idx) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const zb_trace_record *r = &recs[i];
        if (r->rank == rank && r->coll[0] && r->start_ns >= t0_ns && r->start_ns <= t1_ns) idx[m++] = i;
    }
    /* Records are appended when an op ends, so streams' records may
     * interleave out of issue order: sort by seq (insertion sort: the input
     * is nearly sorted, one comm stream's records come in order). */
    for (size_t i = 1; i < m; i++) {
        size_t v = idx[i], j = i;
        while (j > 0 && recs[idx[j - 1]].seq > recs[v].seq) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
    return m;
}

void zb_trace_name_stream(zb_trace *t, int stream, const char *name) {
    if (!t || stream < 0 || stream >= 16) return;
    pthread_mutex_lock(&t->lock);
    strncpy(t->stream_names[stream], name ? name : "", sizeof t->stream_names[stream] - 1);
    pthread_mutex_unlock(&t->lock);
}

void zb_trace_retime(zb_trace *t, uint64_t seq, int64_t start_ns, int64_t end_ns) {
    if (!t || !t->enabled) return;
    pthread_mutex_lock(&t->lock);
    for (size_t i = t->n_records; i-- > 0;) {
        zb_trace_record *r = &t->records[i];
        if (r->seq == seq && r->rank == t->rank) {
            r->start_ns = start_ns;
            r->end_ns = end_ns;
            break;
        }
        if (r->seq < seq) break; /* records are in issue order: it is gone */
    }
    pthread_mutex_unlock(&t->lock);
}

void zb_trace_add(zb_trace *t, int stream, const zb_op_info *info, uint64_t seq,
                  int64_t start_ns, int64_t end_ns) {
    if (!t || !t->enabled) return;
    pthread_mutex_lock(&t->lock);
    if (t->n_records == t->capacity) {
        size_t cap = t->capacity ? t->capacity * 2 : 4096;
        zb_trace_record *grown = (zb_trace_record *)realloc(t->records, cap * sizeof *grown);
        if (!grown) {
            t->n_dropped++;
            pthread_mutex_unlock(&t->lock);
            return;
        }
        t->records = grown;
        t->capacity = cap;
    }
    zb_trace_record *r = &t->records[t->n_records++];
    r->rank = t->rank;
    r->stream = stream;
    r->kind = info->kind;
    r->unit = info->unit;
    r->bytes = info->bytes;
    r->flops = info->flops;
    r->start_ns = start_ns;
    r->end_ns = end_ns;
    r->seq = seq;
    r->label[0] = '\0';
    r->coll[0] = '\0';
    if (info->coll) {
        strncpy(r->coll, info->coll, sizeof r->coll - 1);
        r->coll[sizeof r->coll - 1] = '\0';
    }
    if (info->label) {
        strncpy(r->label, info->label, sizeof r->label - 1);
        r->label[sizeof r->label - 1] = '\0';
    }
    pthread_mutex_unlock(&t->lock);
}
