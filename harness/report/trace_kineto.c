/* The trace in Kineto's layout, one file per rank (see trace_kineto.h). */
#include "trace_kineto.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "out_path.h"
#include "report.h"
#include "trace_gather.h"

/* Correlation ids from here up: HTA stores the column in the smallest
 * integer type that holds its values and later writes event indices into a
 * column of that type, which pandas 3 refuses when the type is int8 or int16
 * ("Invalid value ... for dtype 'int8'"); ids past 2^24 make it int32, as a
 * PyTorch trace's are. */
#define CORR_BASE ((json_int_t)1 << 24)

static double ts_us(int64_t ns, int64_t t0) { return (double)(ns - t0) / 1e3; }
static int pid_of(int rank) { return rank + ZB_TRACE_PID_BASE; }
static int tid_of(int stream) { return stream + ZB_TRACE_TID_BASE; }

static const char *coll_camel(const char *coll) {
    static const char *const names[][2] = {
        {"allgather", "AllGather"}, {"reducescatter", "ReduceScatter"}, {"allreduce", "AllReduce"},
        {"barrier", "Barrier"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!strcmp(coll, names[i][0])) return names[i][1];
    }
    return "Comm";
}

/* HTA 0.5's get_kernel_type says COMPUTATION: not communication
 * (^nccl.*Kernel), not memory (^Memcpy|^Memset|^dma), and is_compute_kernel
 * (no match of ^nccl.*Kernel, .*Memcpy, ^Memset, .*Sync). */
static bool hta_computation(const char *name) {
    if (!strncmp(name, "nccl", 4) && strstr(name + 4, "Kernel")) return false;
    if (!strncmp(name, "Memset", 6) || !strncmp(name, "dma", 3)) return false;
    return !strstr(name, "Memcpy") && !strstr(name, "Sync");
}

/* "op " and `s` with every "Sync" and "Memcpy" lowered, into out[n]. */
static void op_name_lowered(const char *s, char *out, size_t n) {
    snprintf(out, n, "op %s", s);
    for (char *p = out; (p = strstr(p, "Sync")) != NULL;) *p = 's';
    for (char *p = out; (p = strstr(p, "Memcpy")) != NULL;) *p = 'm';
}

void zb_kineto_kernel_name(const zb_trace_record *r, char *out, size_t n) {
    if (n == 0) return;
    char label[ZB_LABEL_MAX + 1];
    snprintf(label, sizeof label, "%.*s", ZB_LABEL_MAX, r->label);
    if (r->kind == ZB_OP_COMM) {
        snprintf(out, n, "ncclDevKernel_%s (%s)", coll_camel(r->coll), label);
    } else if (r->kind == ZB_OP_COPY) {
        snprintf(out, n, "Memcpy %s", label[0] ? label : "copy");
    } else if (!label[0]) {
        snprintf(out, n, "compute");
    } else if (hta_computation(label)) {
        snprintf(out, n, "%s", label);
    } else {
        op_name_lowered(label, out, n);
    }
}

static void add_meta(json_t *events, const char *what, int pid, int tid, const char *key, json_t *value) {
    json_t *e = json_pack("{s:s,s:s,s:i,s:i}", "name", what, "ph", "M", "pid", pid, "tid", tid);
    json_object_set_new(e, "args", json_pack("{s:o}", key, value));
    json_array_append_new(events, e);
}

/* The process and its tracks, first: HTA drops these (no duration), and
 * no step or kernel is then event 0, which HTA's correlation reads as "no
 * link". */
static void add_names(json_t *events, const zb_trace_export_input *in, int rank, bool steps) {
    const zb_trace *t = in->trace;
    int pid = pid_of(rank);
    char pname[ZB_TRACE_HOST_MAX + 32];
    snprintf(pname, sizeof pname, "rank %d on %.*s", rank, ZB_TRACE_HOST_MAX - 1,
             in->hosts + (size_t)rank * ZB_TRACE_HOST_MAX);
    add_meta(events, "process_name", pid, pid, "name", json_string(pname));
    add_meta(events, "process_sort_index", pid, pid, "sort_index", json_integer(rank));
    if (steps) {
        add_meta(events, "thread_name", pid, ZB_TRACE_STEP_TID, "name", json_string("steps"));
        add_meta(events, "thread_sort_index", pid, ZB_TRACE_STEP_TID, "sort_index", json_integer(-1));
    }
    /* One name per stream of the rank (a foreign stream, CUPTI's 100 + n, is "stream"). */
    int seen[64], n_seen = 0;
    for (size_t i = 0; i < in->n_records && n_seen < 64; i++) {
        const zb_trace_record *r = &in->records[i];
        bool known = r->rank != rank;
        for (int k = 0; k < n_seen && !known; k++) known = seen[k] == r->stream;
        if (known) continue;
        seen[n_seen++] = r->stream;
        const char *tname = r->stream >= 0 && r->stream < 16 && t->stream_names[r->stream][0]
                                ? t->stream_names[r->stream] : "stream";
        add_meta(events, "thread_name", pid, tid_of(r->stream), "name", json_string(tname));
        add_meta(events, "thread_sort_index", pid, tid_of(r->stream), "sort_index", json_integer(r->stream));
    }
}

/* ProfilerStep#I per step mark of the rank (of `phase`; -1: every one);
 * its correlation is CORR_BASE + its ordinal among the rank's marks. */
static void add_steps(json_t *events, const zb_trace_export_input *in, const zb_trace_step_index *ix, int rank,
                      int phase, int64_t t0) {
    const zb_trace *t = in->trace;
    for (size_t i = ix->begin[rank]; i < ix->end[rank]; i++) {
        const zb_trace_step *s = &in->steps[i];
        if (in->step_rank[i] != rank || (phase >= 0 && s->phase != phase)) continue;
        const zb_trace_phase *p = s->phase >= 0 && s->phase < t->n_phases ? &t->phases[s->phase] : NULL;
        char name[48];
        snprintf(name, sizeof name, "ProfilerStep#%d", s->index);
        json_int_t corr = CORR_BASE + (json_int_t)(i - ix->begin[rank]);
        json_t *e = json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f}", "ph", "X", "cat", "user_annotation", "name", name,
                              "pid", pid_of(rank), "tid", ZB_TRACE_STEP_TID, "ts", ts_us(s->start_ns, t0), "dur",
                              (double)(s->end_ns + 1 - s->start_ns) / 1e3);
        json_t *args = json_pack("{s:I,s:I,s:i,s:s}", "External id", corr, "correlation", corr, "step", s->index,
                                 "phase", s->warmup ? "warm-up" : "measured");
        json_object_set_new(args, "mode", p ? json_string(p->mode) : json_null());
        json_object_set_new(args, "stage", p ? json_integer(p->stage) : json_null());
        json_object_set_new(e, "args", args);
        json_array_append_new(events, e);
    }
}

static json_t *kernel_event(const zb_trace_record *r, int64_t start, int64_t end, int64_t t0, json_int_t corr,
                            const zb_trace_step *step) {
    char name[ZB_LABEL_MAX + 48];
    zb_kineto_kernel_name(r, name, sizeof name);
    json_t *e = json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f}", "ph", "X", "cat",
                          r->kind == ZB_OP_COPY ? "gpu_memcpy" : "kernel", "name", name, "pid", pid_of(r->rank),
                          "tid", tid_of(r->stream), "ts", ts_us(start, t0), "dur", (double)(end - start) / 1e3);
    json_t *args = json_pack("{s:i,s:I,s:I,s:i,s:s,s:s,s:I,s:f}", "stream", tid_of(r->stream), "correlation", corr,
                             "External id", corr, "unit", r->unit, "op", r->label, "kind", zb_op_kind_name(r->kind),
                             "bytes", (json_int_t)r->bytes, "flops", r->flops);
    if (r->coll[0]) json_object_set_new(args, "coll", json_string(r->coll));
    json_object_set_new(args, "step", step ? json_integer(step->index) : json_null());
    json_object_set_new(e, "args", args);
    return e;
}

/* The rank's records: inside a step of `phase` (-1: any; clipped to
 * [start, end + 1), the window overlap is measured in) when the trace has
 * steps, else all. Returns how many lay in no step. */
static size_t add_kernels(json_t *events, const zb_trace_export_input *in, const zb_trace_step_index *ix, int rank,
                          int phase, int64_t t0) {
    size_t left_out = 0;
    json_int_t own = 0;
    for (size_t i = 0; i < in->n_records; i++) {
        const zb_trace_record *r = &in->records[i];
        if (r->rank != rank) continue;
        int64_t start = r->start_ns, end = r->end_ns;
        json_int_t corr;
        const zb_trace_step *s = NULL;
        if (in->n_steps > 0) {
            s = zb_trace_step_at(in, ix, rank, r->start_ns);
            if (!s) left_out++;
            if (!s || (phase >= 0 && s->phase != phase)) continue;
            if (end > s->end_ns + 1) end = s->end_ns + 1;
            corr = CORR_BASE + (json_int_t)(s - &in->steps[ix->begin[rank]]);
        } else {
            corr = CORR_BASE + own++;
        }
        if (end < start) end = start;
        json_array_append_new(events, kernel_event(r, start, end, t0, corr, s));
    }
    return left_out;
}

/* a then b, NULL when either is NULL (both freed). */
static char *concat3(char *a, const char *mid, char *b, size_t *len) {
    char *out = NULL;
    if (a && b) {
        size_t la = strlen(a), lm = strlen(mid), lb = strlen(b);
        out = (char *)malloc(la + lm + lb + 1);
        if (out) {
            memcpy(out, a, la);
            memcpy(out + la, mid, lm);
            memcpy(out + la + lm, b, lb + 1);
            *len = la + lm + lb;
        }
    }
    free(a);
    free(b);
    return out;
}

char *zb_kineto_rank_text(const zb_trace_export_input *in, int rank, int phase, const char *comm,
                          const json_t *desc, size_t *len) {
    zb_trace_step_index ix;
    if (rank < 0 || rank >= in->n_ranks) return NULL;
    if (!zb_trace_step_index_build(in, &ix)) {
        zb_trace_step_index_free(&ix);
        return NULL;
    }
    int64_t t0 = zb_trace_origin(in);
    json_t *events = json_array();
    add_names(events, in, rank, ix.end[rank] > ix.begin[rank]);
    add_steps(events, in, &ix, rank, phase, t0);
    size_t left_out = add_kernels(events, in, &ix, rank, phase, t0);
    zb_trace_step_index_free(&ix);
    json_t *zb = desc ? json_copy((json_t *)desc) : json_object();
    json_object_set_new(zb, "records_outside_steps", json_integer((json_int_t)left_out));
    json_t *dist = json_pack("{s:s,s:i,s:i}", "backend", comm ? comm : "unknown", "rank", rank, "world_size",
                             in->n_ranks);
    /* distributedInfo first and indented: HTA finds the rank by the first
     * line matching "rank":\s+N (trace_kineto.h). */
    char *head = dist ? zb_json_dump(dist, 1, NULL) : NULL;
    char *zbt = zb ? zb_json_dump(zb, 0, NULL) : NULL;
    char *evt = events ? zb_json_dump(events, 0, NULL) : NULL;
    json_decref(dist);
    json_decref(zb);
    json_decref(events);
    size_t n = 0;
    char *a = concat3(strdup("{\"distributedInfo\": "), "", head, &n);
    a = concat3(a, ",\n\"schemaVersion\": 1,\n\"displayTimeUnit\": \"ns\",\n\"zerobench\": ", zbt, &n);
    a = concat3(a, ",\n\"traceEvents\": ", evt, &n);
    a = concat3(a, "\n}\n", strdup(""), &n);
    if (a && len) *len = n;
    return a;
}

/* Rank k's file name when `name` is exactly one (rank-K.pt.trace.json,
 * K written without leading zeros), else -1. */
static long ours(const char *name) {
    long k = -1;
    int used = 0;
    if (sscanf(name, "rank-%ld%n", &k, &used) != 1 || k < 0 || k > INT_MAX) return -1;
    char again[64];
    snprintf(again, sizeof again, ZB_KINETO_FILE_FMT, (int)k);
    return strcmp(again, name) == 0 ? k : -1;
}

static bool ends_with(const char *s, const char *end) {
    size_t n = strlen(s), m = strlen(end);
    return n >= m && !strcmp(s + n - m, end);
}

zb_status zb_kineto_dir_check(const char *flag, const char *dir) {
    ZB_TRY(zb_out_dir_check(flag, dir));
    DIR *d = opendir(dir);
    if (!d) return ZB_OK; /* absent: the export creates it */
    zb_status st = ZB_OK;
    struct dirent *e;
    while (st == ZB_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !(ends_with(e->d_name, ".json") || ends_with(e->d_name, ".gz"))) continue;
        if (ours(e->d_name) >= 0) continue;
        char shown[72], file[72];
        st = ZB_FAIL(ZB_ERR_INVALID, "%s '%s': holds '%s', which HTA would read as a rank's trace; name an empty "
                     "or new folder", flag, zb_shown_path(dir, shown), zb_shown_path(e->d_name, file));
    }
    closedir(d);
    return st;
}

bool zb_kineto_would_read(const char *dir, const char *path) {
    if (!path || !path[0] || !(ends_with(path, ".json") || ends_with(path, ".gz"))) return false;
    char folder[PATH_MAX];
    return zb_path_folder(path, folder, sizeof folder) && zb_same_file(folder, dir);
}

/* Removes the rank-K files of ranks K >= n_ranks (a larger run's). */
static zb_status remove_stale(const char *dir, int n_ranks) {
    char shown[72];
    zb_shown_path(dir, shown);
    DIR *d = opendir(dir);
    if (!d) return ZB_FAIL(ZB_ERR_IO, "--trace '%s': cannot read the folder: %s", shown, strerror(errno));
    zb_status st = ZB_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long k = ours(e->d_name);
        if (k < n_ranks) continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0 && errno != ENOENT && st == ZB_OK) {
            st = ZB_FAIL(ZB_ERR_IO, "--trace '%s': cannot remove %s, a trace of a rank this job does not have: %s",
                         shown, e->d_name, strerror(errno));
        }
    }
    closedir(d);
    return st;
}

/* Every rank's file of `phase` (-1: the whole trace) into `dir`, then the
 * stale ones removed. */
static zb_status write_folder(const zb_trace_export_input *in, int phase, const char *dir, const char *comm,
                              const json_t *desc) {
    ZB_TRY(zb_out_dir_make("--trace", dir));
    char shown[72];
    zb_shown_path(dir, shown);
    zb_status st = ZB_OK;
    for (int r = 0; r < in->n_ranks && st == ZB_OK; r++) {
        size_t len = 0;
        char *text = zb_kineto_rank_text(in, r, phase, comm, desc, &len);
        char path[PATH_MAX], name[64];
        snprintf(name, sizeof name, ZB_KINETO_FILE_FMT, r);
        if (!text) st = ZB_FAIL(ZB_ERR_NOMEM, "out of memory writing rank %d's trace in %s", r, shown);
        else if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
            st = ZB_FAIL(ZB_ERR_INVALID, "--trace '%s': the path of %s in it is too long", shown, name);
        else st = zb_atomic_write(path, text, len);
        free(text);
    }
    return st == ZB_OK ? remove_stale(dir, in->n_ranks) : st;
}

zb_status zb_trace_export_kineto(const zb_trace *t, const zb_clock_sync *sync, const char *dir, double timeout_s,
                                 const char *comm, const json_t *info) {
    zb_trace_export_input in;
    ZB_TRY(zb_trace_gather(t, sync, timeout_s, &in));
    if (!in.trace) return ZB_OK; /* not rank 0 */
    json_t *desc = json_object();
    json_object_set_new(desc, "format", json_string("zerobench's trace in Kineto's layout for Holistic Trace "
                                                    "Analysis (docs/design.md section 7)"));
    zb_trace_describe(desc, t, sync, info);
    json_object_set_new(desc, "trace_steps", zb_trace_steps_meta(&in));
    json_object_set_new(desc, "records_dropped", json_integer((json_int_t)in.records_dropped));
    json_object_set_new(desc, "memory_samples_dropped", json_integer((json_int_t)in.mem_dropped));
    zb_status st = ZB_OK;
    if (t->n_phases <= 1) {
        st = write_folder(&in, -1, dir, comm, desc);
    } else { /* one folder per run: HTA reads a folder as one run */
        st = zb_out_dir_make("--trace", dir);
        for (int p = 0; p < t->n_phases && st == ZB_OK; p++) {
            char sub[PATH_MAX], shown[72];
            if ((size_t)snprintf(sub, sizeof sub, "%s/" ZB_KINETO_RUN_FMT, dir, t->phases[p].stage,
                                 t->phases[p].mode) >= sizeof sub) {
                st = ZB_FAIL(ZB_ERR_INVALID, "--trace '%s': path too long", zb_shown_path(dir, shown));
                break;
            }
            json_object_set_new(desc, "run", json_string(t->phases[p].name));
            st = write_folder(&in, p, sub, comm, desc);
        }
    }
    json_decref(desc);
    zb_trace_export_input_free(&in);
    return st;
}
