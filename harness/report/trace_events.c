/* The Chrome trace's events from the gathered trace (see trace_events.h). */
#include "trace_events.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double ts_us(int64_t ns, int64_t t0) { return (double)(ns - t0) / 1e3; }

/* Ids of 1 and up (trace_events.h): Perfetto reads an explicit tid 0 as the
 * pid, which merged a rank's compute stream (0) into its stream `pid`. */
static int pid_of(int rank) { return rank + ZB_TRACE_PID_BASE; }
static int tid_of(int stream) { return stream + ZB_TRACE_TID_BASE; }

int64_t zb_trace_origin(const zb_trace_export_input *in) {
    int64_t t0 = INT64_MAX;
    for (size_t i = 0; i < in->n_records; i++) {
        if (in->records[i].start_ns < t0) t0 = in->records[i].start_ns;
    }
    for (size_t i = 0; i < in->n_steps; i++) {
        if (in->steps[i].start_ns < t0) t0 = in->steps[i].start_ns;
    }
    for (size_t i = 0; i < in->n_mem; i++) {
        if (in->mem[i].time_ns < t0) t0 = in->mem[i].time_ns;
    }
    return t0 == INT64_MAX ? 0 : t0;
}

bool zb_trace_step_index_build(const zb_trace_export_input *in, zb_trace_step_index *ix) {
    ix->begin = (size_t *)calloc((size_t)in->n_ranks, sizeof(size_t));
    ix->end = (size_t *)calloc((size_t)in->n_ranks, sizeof(size_t));
    if (!ix->begin || !ix->end) return false;
    for (size_t i = in->n_steps; i-- > 0;) {
        int r = in->step_rank[i];
        if (r < 0 || r >= in->n_ranks) continue;
        if (ix->end[r] == 0) ix->end[r] = i + 1;
        ix->begin[r] = i;
    }
    return true;
}

void zb_trace_step_index_free(zb_trace_step_index *ix) {
    free(ix->begin);
    free(ix->end);
    ix->begin = ix->end = NULL;
}

const zb_trace_step *zb_trace_step_at(const zb_trace_export_input *in, const zb_trace_step_index *ix, int rank,
                                      int64_t ns) {
    if (rank < 0 || rank >= in->n_ranks) return NULL;
    size_t lo = ix->begin[rank], hi = ix->end[rank]; /* last mark starting at or before ns: in [lo, hi) */
    if (lo >= hi) return NULL;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (in->steps[mid].start_ns <= ns) lo = mid;
        else hi = mid;
    }
    const zb_trace_step *s = &in->steps[lo];
    return s->start_ns <= ns && ns <= s->end_ns ? s : NULL;
}

static json_t *step_or_null(const zb_trace_step *s) { return s ? json_integer(s->index) : json_null(); }

/* A record's event; inside a step of a trace with several runs (stages or
 * modes) its args also say which run, as the step's slice does. */
static json_t *record_event(const zb_trace_record *r, int64_t t0, const zb_trace_step *step,
                            const zb_trace *t) {
    json_t *args = json_pack("{s:i,s:s,s:s,s:I,s:f}", "unit", r->unit, "op", r->label, "kind",
                             zb_op_kind_name(r->kind), "bytes", (json_int_t)r->bytes, "flops", r->flops);
    if (r->coll[0]) json_object_set_new(args, "coll", json_string(r->coll));
    json_object_set_new(args, "step", step_or_null(step));
    if (step && t->n_phases > 1 && step->phase >= 0 && step->phase < t->n_phases) {
        json_object_set_new(args, "mode", json_string(t->phases[step->phase].mode));
        json_object_set_new(args, "stage", json_integer(t->phases[step->phase].stage));
    }
    json_t *e = json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f}", "name", r->label, "cat", zb_op_kind_name(r->kind), "ph",
                          "X", "pid", pid_of(r->rank), "tid", tid_of(r->stream), "ts", ts_us(r->start_ns, t0), "dur",
                          (double)(r->end_ns - r->start_ns) / 1e3);
    json_object_set_new(e, "args", args);
    return e;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void add_meta(json_t *events, const char *what, int pid, int tid, const char *key, json_t *value) {
    json_t *e = json_pack("{s:s,s:s,s:i,s:i}", "name", what, "ph", "M", "pid", pid, "tid", tid);
    json_object_set_new(e, "args", json_pack("{s:o}", key, value));
    json_array_append_new(events, e);
}

/* Processes "rank R on HOST", and one name per (rank, stream) with records.
 * A process's own events (its name, sort index, counters) sit on tid = pid,
 * where an importer puts them when no tid is given. */
static void add_names(json_t *events, const zb_trace_export_input *in, const zb_trace_step_index *ix) {
    const zb_trace *t = in->trace;
    for (int r = 0; r < in->n_ranks; r++) {
        char pname[ZB_TRACE_HOST_MAX + 32];
        snprintf(pname, sizeof pname, "rank %d on %.*s", r, ZB_TRACE_HOST_MAX - 1, in->hosts + (size_t)r * ZB_TRACE_HOST_MAX);
        add_meta(events, "process_name", pid_of(r), pid_of(r), "name", json_string(pname));
        add_meta(events, "process_sort_index", pid_of(r), pid_of(r), "sort_index", json_integer(r));
        if (ix->end[r] > ix->begin[r]) {
            add_meta(events, "thread_name", pid_of(r), ZB_TRACE_STEP_TID, "name", json_string("steps"));
            add_meta(events, "thread_sort_index", pid_of(r), ZB_TRACE_STEP_TID, "sort_index", json_integer(-1));
        }
    }
    /* One name per distinct (rank, stream): the pairs sorted, then each first of its kind. */
    size_t n = in->n_records;
    int64_t *pairs = (int64_t *)malloc((n ? n : 1) * sizeof(int64_t));
    if (!pairs) return; /* names are cosmetic: the events stay */
    for (size_t i = 0; i < n; i++) pairs[i] = ((int64_t)in->records[i].rank << 32) | (uint32_t)in->records[i].stream;
    qsort(pairs, n, sizeof *pairs, cmp_i64);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && pairs[i] == pairs[i - 1]) continue;
        int rank = (int)(pairs[i] >> 32), s = (int)(int32_t)(uint32_t)(pairs[i] & 0xffffffff);
        const char *tname = (s >= 0 && s < 16 && t->stream_names[s][0]) ? t->stream_names[s] : "stream";
        add_meta(events, "thread_name", pid_of(rank), tid_of(s), "name", json_string(tname));
        add_meta(events, "thread_sort_index", pid_of(rank), tid_of(s), "sort_index", json_integer(s));
    }
    free(pairs);
}

static void add_steps(json_t *events, const zb_trace_export_input *in, int64_t t0) {
    const zb_trace *t = in->trace;
    bool several = t->n_phases > 1;
    for (size_t i = 0; i < in->n_steps; i++) {
        const zb_trace_step *s = &in->steps[i];
        const zb_trace_phase *p = s->phase >= 0 && s->phase < t->n_phases ? &t->phases[s->phase] : NULL;
        char name[96];
        snprintf(name, sizeof name, "step %d%s%s%s", s->index, several && p ? " " : "", several && p ? p->name : "",
                 s->warmup ? " (warm-up)" : "");
        json_t *e = json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f}", "name", name, "cat", "step", "ph", "X", "pid",
                              pid_of(in->step_rank[i]), "tid", ZB_TRACE_STEP_TID, "ts", ts_us(s->start_ns, t0), "dur",
                              (double)(s->end_ns - s->start_ns) / 1e3);
        json_t *args = json_pack("{s:i,s:s}", "step", s->index, "phase", s->warmup ? "warm-up" : "measured");
        json_object_set_new(args, "mode", p ? json_string(p->mode) : json_null());
        json_object_set_new(args, "stage", p ? json_integer(p->stage) : json_null());
        json_object_set_new(e, "args", args);
        json_array_append_new(events, e);
    }
}

/* Each collective instance's last arrival: the k-th collective record of
 * every rank is one instance (zb_trace_collectives); its latest start over
 * the ranks is where waiting ends. Returns NULL when shown, else why not. */
static const char *add_last_arrivals(json_t *events, const zb_trace_export_input *in, const zb_trace_step_index *ix,
                                     int64_t t0) {
    int n = in->n_ranks;
    size_t *idx = (size_t *)malloc((in->n_records ? in->n_records : 1) * sizeof(size_t));
    size_t *first = (size_t *)calloc((size_t)n + 1, sizeof(size_t));
    if (!idx || !first) {
        free(idx);
        free(first);
        return "out of memory";
    }
    /* Rank r's collectives in issue order: idx[first[r] .. first[r+1]). */
    for (int r = 0; r < n; r++) {
        first[r + 1] = first[r] + zb_trace_collectives(in->records, in->n_records, r, INT64_MIN, INT64_MAX,
                                                       idx + first[r]);
    }
    size_t count = first[1] - first[0];
    const char *why = NULL;
    for (int r = 0; r < n && !why; r++) {
        if (first[r + 1] > first[r]) break;
        if (r == n - 1) why = "no collective records (on the sim, one process models every rank)";
    }
    for (int r = 1; r < n && !why; r++) {
        if (first[r + 1] - first[r] != count) why = "the ranks traced different numbers of collectives";
    }
    for (size_t k = 0; k < count && !why; k++) {
        const zb_trace_record *a = &in->records[idx[k]];
        for (int r = 1; r < n && !why; r++) {
            const zb_trace_record *b = &in->records[idx[first[r] + k]];
            if (strcmp(a->coll, b->coll) != 0 || strcmp(a->label, b->label) != 0) {
                why = "the ranks' collectives do not match in issue order";
            }
        }
    }
    for (size_t k = 0; k < count && !why; k++) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        int last_rank = 0;
        for (int r = 0; r < n; r++) {
            int64_t s = in->records[idx[first[r] + k]].start_ns;
            if (s < lo) lo = s;
            if (s > hi) {
                hi = s;
                last_rank = r;
            }
        }
        for (int r = 0; r < n; r++) {
            const zb_trace_record *rec = &in->records[idx[first[r] + k]];
            json_t *e = json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:f}", "name", "last arrival", "cat", "arrival", "ph",
                                  "i", "s", "t", "pid", pid_of(r), "tid", tid_of(rec->stream), "ts", ts_us(hi, t0));
            json_t *args = json_pack("{s:s,s:s,s:i,s:i,s:f}", "coll", rec->coll, "op", rec->label, "unit", rec->unit,
                                     "last_rank", last_rank, "arrival_skew_us", (double)(hi - lo) / 1e3);
            json_object_set_new(args, "step", step_or_null(zb_trace_step_at(in, ix, r, rec->start_ns)));
            json_object_set_new(e, "args", args);
            json_array_append_new(events, e);
        }
    }
    free(idx);
    free(first);
    return why;
}

static void add_memory(json_t *events, const zb_trace_export_input *in, int64_t t0) {
    const zb_trace *t = in->trace;
    bool host_used = false;
    for (size_t i = 0; i < in->n_mem && !host_used; i++) {
        for (int k = 0; k < ZB_TRACE_MEM_TAGS; k++) {
            if ((t->mem_host_mask & (1u << k)) && in->mem[i].live_bytes[k]) host_used = true;
        }
    }
    for (size_t i = 0; i < in->n_mem; i++) {
        const zb_trace_mem_sample *m = &in->mem[i];
        json_t *dev = json_object(), *host = json_object();
        for (int k = 0; k < ZB_TRACE_MEM_TAGS; k++) {
            if (!t->mem_tag_names[k]) continue;
            json_t *into = (t->mem_host_mask & (1u << k)) ? host : dev;
            json_object_set_new(into, t->mem_tag_names[k], json_integer((json_int_t)m->live_bytes[k]));
        }
        int pid = pid_of(in->mem_rank[i]);
        json_t *e = json_pack("{s:s,s:s,s:i,s:i,s:f}", "name", "live memory", "ph", "C", "pid", pid, "tid", pid,
                              "ts", ts_us(m->time_ns, t0));
        json_object_set_new(e, "args", dev);
        json_array_append_new(events, e);
        if (host_used) {
            e = json_pack("{s:s,s:s,s:i,s:i,s:f}", "name", "live host memory", "ph", "C", "pid", pid, "tid", pid,
                          "ts", ts_us(m->time_ns, t0));
            json_object_set_new(e, "args", host);
            json_array_append_new(events, e);
        } else {
            json_decref(host);
        }
    }
}

/* "A-B" for steps first..last, or null when none. */
static json_t *range_text(int first, int last) {
    if (first > last) return json_null();
    char s[48];
    if (first == last) snprintf(s, sizeof s, "%d", first);
    else snprintf(s, sizeof s, "%d-%d", first, last);
    return json_string(s);
}

json_t *zb_trace_steps_meta(const zb_trace_export_input *in) {
    const zb_trace *t = in->trace;
    json_t *runs = json_array();
    for (int i = 0; i < t->n_phases; i++) {
        const zb_trace_phase *p = &t->phases[i];
        int total = p->warmup_steps + p->steps;
        json_t *left = json_array();
        if (p->first_written > p->last_written) {
            if (total > 0) json_array_append_new(left, range_text(1, total));
        } else {
            if (p->first_written > 1) json_array_append_new(left, range_text(1, p->first_written - 1));
            if (p->last_written < total) json_array_append_new(left, range_text(p->last_written + 1, total));
        }
        json_t *run = json_pack("{s:s,s:i,s:i,s:i}", "mode", p->mode, "stage", p->stage, "warmup_steps",
                                p->warmup_steps, "steps", p->steps);
        json_object_set_new(run, "written", range_text(p->first_written, p->last_written));
        json_object_set_new(run, "left_out", left);
        json_array_append_new(runs, run);
    }
    return json_pack("{s:s,s:s,s:o}", "rule",
                     t->steps_rule[0] ? t->steps_rule : "no training steps in this run: every record written",
                     "step_index", "1-based over each run's warm-up steps, then its measured steps", "runs", runs);
}

json_t *zb_trace_events_doc(const zb_trace_export_input *in) {
    zb_trace_step_index ix;
    if (!zb_trace_step_index_build(in, &ix)) {
        zb_trace_step_index_free(&ix);
        return NULL;
    }
    int64_t t0 = zb_trace_origin(in);
    json_t *events = json_array();
    add_names(events, in, &ix);
    add_steps(events, in, t0);
    for (size_t i = 0; i < in->n_records; i++) {
        const zb_trace_record *r = &in->records[i];
        json_array_append_new(events, record_event(r, t0, zb_trace_step_at(in, &ix, r->rank, r->start_ns), in->trace));
    }
    const char *no_arrivals = add_last_arrivals(events, in, &ix, t0);
    add_memory(events, in, t0);
    zb_trace_step_index_free(&ix);
    json_t *other = json_object();
    json_object_set_new(other, "trace_steps", zb_trace_steps_meta(in));
    json_object_set_new(other, "last_arrivals", json_string(no_arrivals ? no_arrivals : "shown"));
    json_object_set_new(other, "records_dropped", json_integer((json_int_t)in->records_dropped));
    json_object_set_new(other, "memory_samples_dropped", json_integer((json_int_t)in->mem_dropped));
    json_t *doc = json_object();
    json_object_set_new(doc, "traceEvents", events);
    json_object_set_new(doc, "displayTimeUnit", json_string("ns"));
    json_object_set_new(doc, "otherData", other);
    return doc;
}
