/* Unit tests for trace_kineto.c (the trace in Kineto's layout for HTA):
 * distributedInfo is the file's first key and its rank the first line HTA's
 * rank pattern ("rank":\s+N) matches; one ProfilerStep#I per step mark of
 * the rank; records of the rank's steps only, clipped to the step's window,
 * with an integer stream >= 1 and their step's correlation; a record in no
 * step left out and counted; no step or kernel is event 0; names that HTA
 * 0.5's rules (restated here from hta/utils/utils.py) classify as the
 * record's kind, adversarial labels included; a trace without steps writes
 * every record; the folder checks (foreign .json refused, a link refused,
 * --json inside the folder seen). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "out_path.h"
#include "trace_kineto.h"
#include "zb_test.h"

/* HTA 0.5: get_kernel_type (communication, memory, computation, other). */
static const char *hta_type(const char *name) {
    if (!strncmp(name, "nccl", 4) && strstr(name + 4, "Kernel")) return "COMMUNICATION";
    if (!strncmp(name, "Memcpy", 6) || !strncmp(name, "Memset", 6) || !strncmp(name, "dma", 3)) return "MEMORY";
    bool not_compute = (!strncmp(name, "nccl", 4) && strstr(name + 4, "Kernel")) || strstr(name, "Memcpy") ||
                       !strncmp(name, "Memset", 6) || strstr(name, "Sync");
    return not_compute ? "OTHER" : "COMPUTATION";
}

static const char *want_type(const char *kind) {
    if (!strcmp(kind, "comm")) return "COMMUNICATION";
    if (!strcmp(kind, "copy")) return "MEMORY";
    return "COMPUTATION";
}

static zb_trace_record rec(int rank, int stream, zb_op_kind kind, const char *label, const char *coll, int64_t s,
                           int64_t e) {
    zb_trace_record r;
    memset(&r, 0, sizeof r);
    r.rank = rank;
    r.stream = stream;
    r.kind = kind;
    r.unit = 3;
    r.bytes = 64;
    r.start_ns = s;
    r.end_ns = e;
    snprintf(r.label, sizeof r.label, "%s", label);
    snprintf(r.coll, sizeof r.coll, "%s", coll);
    return r;
}

/* The first line of `text` that HTA's rank pattern matches: its rank, or -1. */
static int hta_rank(const char *text) {
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        for (const char *p = line; p + 7 <= line + n; p++) {
            if (strncmp(p, "\"rank\":", 7) != 0) continue;
            const char *q = p + 7;
            if (*q != ' ' && *q != '\t') continue;
            while (*q == ' ' || *q == '\t') q++;
            if (*q >= '0' && *q <= '9') return atoi(q);
        }
        if (!nl) break;
        line = nl + 1;
    }
    return -1;
}

static json_t *events_named(json_t *events, const char *prefix, size_t *count) {
    json_t *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(events, i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));
        if (name && !strncmp(name, prefix, strlen(prefix))) json_array_append(out, e);
    }
    *count = json_array_size(out);
    return out;
}

static void check_stepped(void) {
    zb_trace t;
    memset(&t, 0, sizeof t);
    snprintf(t.stream_names[0], sizeof t.stream_names[0], "compute");
    snprintf(t.stream_names[1], sizeof t.stream_names[1], "comm");
    t.n_phases = 1;
    snprintf(t.phases[0].name, sizeof t.phases[0].name, "stage 3 prefetch");
    snprintf(t.phases[0].mode, sizeof t.phases[0].mode, "prefetch");
    t.phases[0].stage = 3;
    zb_trace_record recs[] = {
        rec(0, 0, ZB_OP_COMPUTE, "init", "", 100, 900),              /* before every step: left out */
        rec(0, 0, ZB_OP_COMPUTE, "layer0.fwd", "", 1000, 3000),
        rec(0, 1, ZB_OP_COMM, "layer1.allgather", "allgather", 1500, 2500),
        rec(0, 1, ZB_OP_COMM, "staging", "", 2600, 2700),            /* comm without a collective */
        rec(0, 0, ZB_OP_COPY, "memcpy", "", 3100, 3200),
        rec(0, 0, ZB_OP_COMPUTE, "cudaStreamSynchronize", "", 3300, 3400),
        rec(0, 0, ZB_OP_COMPUTE, "ncclLikeKernel", "", 3400, 3500),
        rec(0, 0, ZB_OP_COMPUTE, "Memset0", "", 3500, 3600),
        rec(0, 0, ZB_OP_COMPUTE, "dmaCopyMemcpyLike", "", 3600, 3700),
        rec(0, 0, ZB_OP_COMPUTE, "layer0.bwd", "", 5000, 6500),     /* step 2, runs past its end: clipped */
        rec(0, 101, ZB_OP_COMPUTE, "foreign", "", 5100, 5200),      /* a CUPTI foreign stream */
        rec(1, 0, ZB_OP_COMPUTE, "layer0.fwd", "", 1000, 2000),
        rec(1, 1, ZB_OP_COMM, "layer1.allgather", "allgather", 1200, 2200),
    };
    zb_trace_step steps[] = {{2, false, 0, 1000, 4000}, {3, false, 0, 5000, 6000}, {2, false, 0, 1000, 4000}};
    int step_rank[] = {0, 0, 1};
    char hosts[2 * ZB_TRACE_HOST_MAX] = {0};
    snprintf(hosts, ZB_TRACE_HOST_MAX, "h0");
    snprintf(hosts + ZB_TRACE_HOST_MAX, ZB_TRACE_HOST_MAX, "h1");
    zb_trace_export_input in;
    memset(&in, 0, sizeof in);
    in.trace = &t;
    in.n_ranks = 2;
    in.records = recs;
    in.n_records = sizeof recs / sizeof recs[0];
    in.steps = steps;
    in.step_rank = step_rank;
    in.n_steps = 3;
    in.hosts = hosts;

    json_t *desc = json_pack("{s:s}", "command", "step");
    for (int rank = 0; rank < 2; rank++) {
        size_t len = 0;
        char *text = zb_kineto_rank_text(&in, rank, -1, "mpi", desc, &len);
        ZB_CHECK(text && strlen(text) == len);
        if (!text) continue;
        ZB_CHECK(!strncmp(text, "{\"distributedInfo\": {", 21));
        ZB_CHECK_MSG(hta_rank(text) == rank, "rank %d: HTA's pattern reads rank %d", rank, hta_rank(text));
        json_error_t err;
        json_t *doc = json_loads(text, 0, &err);
        ZB_CHECK_MSG(doc != NULL, "rank %d: not JSON: %s", rank, err.text);
        if (!doc) {
            free(text);
            continue;
        }
        json_t *dist = json_object_get(doc, "distributedInfo");
        ZB_CHECK(json_integer_value(json_object_get(dist, "rank")) == rank);
        ZB_CHECK(json_integer_value(json_object_get(dist, "world_size")) == 2);
        ZB_CHECK(!strcmp(json_string_value(json_object_get(dist, "backend")), "mpi"));
        json_t *zb = json_object_get(doc, "zerobench");
        ZB_CHECK(!strcmp(json_string_value(json_object_get(zb, "command")), "step"));
        ZB_CHECK(json_integer_value(json_object_get(zb, "records_outside_steps")) == (rank == 0 ? 1 : 0));
        json_t *events = json_object_get(doc, "traceEvents");
        ZB_CHECK(!strcmp(json_string_value(json_object_get(json_array_get(events, 0), "ph")), "M"));
        size_t n_steps = 0;
        json_t *ps = events_named(events, "ProfilerStep#", &n_steps);
        ZB_CHECK(n_steps == (rank == 0 ? 2u : 1u));
        json_int_t corr_of[8] = {0};
        size_t i;
        json_t *e;
        json_array_foreach(ps, i, e) {
            json_t *args = json_object_get(e, "args");
            ZB_CHECK(!strcmp(json_string_value(json_object_get(e, "cat")), "user_annotation"));
            ZB_CHECK(json_object_get(args, "stream") == NULL); /* a host event: HTA's stream -1 */
            int idx = (int)json_integer_value(json_object_get(args, "step"));
            char want[32];
            snprintf(want, sizeof want, "ProfilerStep#%d", idx);
            ZB_CHECK(!strcmp(json_string_value(json_object_get(e, "name")), want));
            if (idx >= 0 && idx < 8) corr_of[idx] = json_integer_value(json_object_get(args, "correlation"));
            ZB_CHECK(corr_of[idx] > 0xffff && /* an int32 column in HTA (trace_kineto.c) */
                     json_integer_value(json_object_get(args, "External id")) == corr_of[idx]);
        }
        json_decref(ps);
        size_t n_kernels = 0;
        json_array_foreach(events, i, e) {
            const char *cat = json_string_value(json_object_get(e, "cat"));
            if (!cat || (strcmp(cat, "kernel") && strcmp(cat, "gpu_memcpy"))) continue;
            n_kernels++;
            json_t *args = json_object_get(e, "args");
            const char *name = json_string_value(json_object_get(e, "name"));
            const char *kind = json_string_value(json_object_get(args, "kind"));
            ZB_CHECK_MSG(!strcmp(hta_type(name), want_type(kind)), "'%s' (%s) reads as %s in HTA", name, kind,
                         hta_type(name));
            ZB_CHECK(!strcmp(cat, !strcmp(kind, "copy") ? "gpu_memcpy" : "kernel"));
            ZB_CHECK(json_integer_value(json_object_get(args, "stream")) ==
                     json_integer_value(json_object_get(e, "tid")));
            ZB_CHECK(json_integer_value(json_object_get(args, "stream")) >= 1);
            int idx = (int)json_integer_value(json_object_get(args, "step"));
            ZB_CHECK(idx >= 0 && idx < 8 && corr_of[idx] != 0 &&
                     json_integer_value(json_object_get(args, "correlation")) == corr_of[idx]);
            double ts = json_number_value(json_object_get(e, "ts")), dur = json_number_value(json_object_get(e, "dur"));
            if (!strcmp(json_string_value(json_object_get(args, "op")), "layer0.bwd")) {
                ZB_CHECK_MSG(ts == 4.9 && dur > 1.0 - 1e-9 && dur < 1.001 + 1e-9, "layer0.bwd clipped: %g + %g", ts,
                             dur); /* [5000, 6001) from t0 = 100 */
            }
            if (!strcmp(json_string_value(json_object_get(args, "op")), "staging")) {
                ZB_CHECK(!strncmp(name, "ncclDevKernel_Comm", 18));
            }
            if (!strcmp(json_string_value(json_object_get(args, "op")), "layer1.allgather")) {
                ZB_CHECK(!strcmp(name, "ncclDevKernel_AllGather (layer1.allgather)"));
                ZB_CHECK(!strcmp(json_string_value(json_object_get(args, "coll")), "allgather"));
            }
        }
        ZB_CHECK_MSG(n_kernels == (rank == 0 ? 10u : 2u), "rank %d: %zu kernels", rank, n_kernels);
        json_decref(doc);
        free(text);
    }
    /* Without steps (a collective benchmark): every record, each its own correlation. */
    in.n_steps = 0;
    t.n_phases = 0;
    char *text = zb_kineto_rank_text(&in, 0, -1, NULL, NULL, NULL);
    json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
    ZB_CHECK(doc != NULL);
    size_t i, n_kernels = 0;
    json_t *e;
    json_int_t last = -1;
    json_array_foreach(json_object_get(doc, "traceEvents"), i, e) {
        json_t *args = json_object_get(e, "args");
        if (!json_object_get(args, "correlation")) continue;
        json_int_t c = json_integer_value(json_object_get(args, "correlation"));
        ZB_CHECK(c > last);
        last = c;
        n_kernels++;
    }
    ZB_CHECK(n_kernels == 11);
    ZB_CHECK(!strcmp(json_string_value(json_object_get(json_object_get(doc, "distributedInfo"), "backend")),
                     "unknown"));
    json_decref(doc);
    free(text);
    json_decref(desc);
}

static void touch(const char *path) {
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
}

static void check_folders(void) {
    const char *base = getenv("TMPDIR");
    char dir[256];
    snprintf(dir, sizeof dir, "%s/zb_test_kineto.XXXXXX", base && base[0] ? base : "/tmp");
    if (!mkdtemp(dir) || chdir(dir) != 0) {
        ZB_CHECK(!"mkdtemp");
        return;
    }
    ZB_CHECK_OK(zb_kineto_dir_check("--trace", "new"));       /* absent, parent writable */
    ZB_CHECK(zb_kineto_dir_check("--trace", "no/such/dir") == ZB_ERR_INVALID);
    ZB_CHECK_OK(zb_out_dir_make("--trace", "tr"));
    ZB_CHECK_OK(zb_out_dir_make("--trace", "tr/"));          /* there already */
    touch("tr/rank-0.pt.trace.json");
    touch("tr/rank-12.pt.trace.json");
    touch("tr/notes.txt");
    ZB_CHECK_OK(zb_kineto_dir_check("--trace", "tr"));
    touch("tr/rank-01.pt.trace.json"); /* not a name zerobench writes */
    ZB_CHECK(zb_kineto_dir_check("--trace", "tr") == ZB_ERR_INVALID);
    unlink("tr/rank-01.pt.trace.json");
    touch("tr/results.json");
    ZB_CHECK(zb_kineto_dir_check("--trace", "tr") == ZB_ERR_INVALID);
    unlink("tr/results.json");
    ZB_CHECK(symlink("tr", "link") == 0);
    ZB_CHECK(zb_kineto_dir_check("--trace", "link") == ZB_ERR_INVALID);
    ZB_CHECK(zb_out_dir_make("--trace", "link") == ZB_ERR_INVALID);
    touch("file");
    ZB_CHECK(zb_kineto_dir_check("--trace", "file") == ZB_ERR_INVALID);
    ZB_CHECK(zb_kineto_would_read("tr", "tr/results.json"));
    ZB_CHECK(zb_kineto_would_read("tr", "./tr/x.gz"));
    ZB_CHECK(!zb_kineto_would_read("tr", "tr/results.csv"));
    ZB_CHECK(!zb_kineto_would_read("tr", "results.json"));
    ZB_CHECK(!zb_kineto_would_read("tr", ""));
    unlink("tr/rank-0.pt.trace.json");
    unlink("tr/rank-12.pt.trace.json");
    unlink("tr/notes.txt");
    unlink("link");
    unlink("file");
    rmdir("tr");
    ZB_CHECK(chdir("/") == 0);
    ZB_CHECK(rmdir(dir) == 0);
}

int main(void) {
    check_stepped();
    check_folders();
    return zb_test_finish("test_trace_kineto");
}
