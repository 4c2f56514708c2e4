/* The per-host peak cache (see peak_cache.h). */
#include "peak_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "atomic_file.h"
#include "escape.h"
#include "out_path.h"

/* The first "model name" of /proc/cpuinfo, "unknown" without one (another
 * architecture): a cache taken on another CPU must not be reused. */
static void cpu_model(char *out, size_t n) {
    snprintf(out, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10)) continue;
        const char *v = strchr(line, ':');
        if (!v) continue;
        for (v++; *v == ' ' || *v == '\t'; v++) {}
        size_t len = strcspn(v, "\n");
        while (len && (v[len - 1] == ' ' || v[len - 1] == '\t')) len--;
        if (len) snprintf(out, n, "%.*s", (int)len, v);
        break;
    }
    fclose(f);
}

void zb_peak_host_here(const char *isa, zb_peak_host *h) {
    memset(h, 0, sizeof *h);
    if (gethostname(h->host, sizeof h->host - 1) != 0 || !h->host[0]) snprintf(h->host, sizeof h->host, "unknown");
    cpu_model(h->cpu_model, sizeof h->cpu_model);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    h->cores = cores > 0 ? (int)cores : 0;
    snprintf(h->isa, sizeof h->isa, "%s", isa ? isa : "");
}

void zb_peak_date(long long t, char *out, size_t n) {
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) || !strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm)) snprintf(out, n, "unknown");
}

bool zb_peak_cache_path(const char *host, char *out, size_t n) {
    const char *env = getenv(ZB_PEAK_CACHE_ENV);
    if (env && !strcmp(env, "off")) return false;
    if (env && env[0]) return (size_t)snprintf(out, n, "%s", env) < n;
    /* The host in a file name: only [A-Za-z0-9._-], so it stays one name. */
    char safe[64];
    size_t i = 0;
    for (; host[i] && i < sizeof safe - 1; i++) {
        char c = host[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                  (c == '.' && i > 0);
        safe[i] = ok ? c : '_';
    }
    safe[i] = '\0';
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int w;
    /* XDG: a relative XDG_CACHE_HOME is invalid and ignored. */
    if (xdg && xdg[0] == '/') w = snprintf(out, n, "%s/zerobench/peak-%s.json", xdg, safe);
    else if (home && home[0] == '/') w = snprintf(out, n, "%s/.cache/zerobench/peak-%s.json", home, safe);
    else return false;
    return w > 0 && (size_t)w < n;
}

static void note_of(char *note, size_t n, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void note_of(char *note, size_t n, const char *path, const char *fmt, ...) {
    char shown[72], why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(note, n, "ignored the peak cache '%s': %s; measuring again", zb_shown_path(path, shown), why);
}

/* The file's bytes, read without following a link (O_NOFOLLOW) nor
 * blocking on a FIFO; NULL with a note. */
static char *read_nofollow(const char *path, size_t *len, char *note, size_t n) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT) note[0] = '\0'; /* none yet: nothing to say */
        else if (err == ELOOP) note_of(note, n, path, "a symbolic link (zerobench does not read through one)");
        else note_of(note, n, path, "%s", strerror(err));
        return NULL;
    }
    struct stat st;
    char *text = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        note_of(note, n, path, "not a regular file");
    } else if (st.st_size > ZB_PEAK_CACHE_MAX_BYTES) {
        note_of(note, n, path, "%lld bytes, more than the %d accepted", (long long)st.st_size, ZB_PEAK_CACHE_MAX_BYTES);
    } else if (!(text = (char *)malloc((size_t)st.st_size + 1))) {
        note_of(note, n, path, "out of memory");
    } else {
        ssize_t got = read(fd, text, (size_t)st.st_size);
        if (got != (ssize_t)st.st_size) {
            note_of(note, n, path, "could not read it whole");
            free(text);
            text = NULL;
        } else {
            text[got] = '\0';
            *len = (size_t)got;
        }
    }
    close(fd);
    return text;
}

/* A string member into out: false when absent, not a string, empty or too long. */
static bool get_text(const json_t *o, const char *key, char *out, size_t n) {
    const char *s = json_string_value(json_object_get(o, key));
    if (!s || !s[0] || strlen(s) >= n) return false;
    snprintf(out, n, "%s", s);
    return true;
}

static bool get_real(const json_t *o, const char *key, double *out) {
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) return false;
    *out = json_number_value(v);
    return isfinite(*out) && *out > 0;
}

/* "YYYY-MM-DDTHH:MM:SSZ": the date is shown in headers and compared as is. */
static bool date_ok(const char *d) {
    static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
    if (strlen(d) != sizeof shape - 1) return false;
    for (size_t i = 0; shape[i]; i++) {
        if (shape[i] == 'd' ? (d[i] < '0' || d[i] > '9') : d[i] != shape[i]) return false;
    }
    return true;
}

/* The record in `o`, checked field by field; false with what is wrong. */
static bool parse_record(const json_t *o, zb_peak_record *rec, const char **bad) {
    memset(rec, 0, sizeof *rec);
    const char *schema = json_string_value(json_object_get(o, "schema"));
    const json_t *runs = json_object_get(o, "runs"), *cores = json_object_get(o, "cores");
    *bad = !json_is_object(o) ? "not a JSON object"
           : !schema || strcmp(schema, ZB_PEAK_CACHE_SCHEMA) ? "schema is not " ZB_PEAK_CACHE_SCHEMA
           : !get_text(o, "host", rec->host.host, sizeof rec->host.host) ? "no valid \"host\""
           : !get_text(o, "cpu_model", rec->host.cpu_model, sizeof rec->host.cpu_model) ? "no valid \"cpu_model\""
           : !get_text(o, "isa", rec->host.isa, sizeof rec->host.isa) ? "no valid \"isa\""
           : !get_text(o, "date", rec->date, sizeof rec->date) || !date_ok(rec->date) ? "no valid \"date\""
           : !json_is_integer(cores) || json_integer_value(cores) < 0 || json_integer_value(cores) > 1 << 20
               ? "no valid \"cores\""
           : !json_is_integer(runs) || json_integer_value(runs) < 1 || json_integer_value(runs) > 1000
               ? "no valid \"runs\""
           : !get_real(o, "best_gflops_per_core", &rec->best_gflops) ||
                   !get_real(o, "min_gflops_per_core", &rec->min_gflops) ||
                   !get_real(o, "median_gflops_per_core", &rec->median_gflops) ||
                   !get_real(o, "max_gflops_per_core", &rec->max_gflops)
               ? "a GFLOP/s figure missing, not positive or not finite"
               : NULL;
    if (*bad) return false;
    rec->host.cores = (int)json_integer_value(cores);
    rec->runs = (int)json_integer_value(runs);
    if (!(rec->min_gflops <= rec->median_gflops && rec->median_gflops <= rec->max_gflops &&
          rec->best_gflops == rec->max_gflops)) {
        *bad = "its figures are not min <= median <= max = best";
        return false;
    }
    return true;
}

bool zb_peak_cache_read(const char *path, const zb_peak_host *here, zb_peak_record *rec, char *note, size_t n) {
    if (n) note[0] = '\0';
    size_t len = 0;
    char *text = read_nofollow(path, &len, note, n);
    if (!text) return false;
    json_error_t err;
    json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    free(text);
    const char *bad = NULL;
    char shown[2][160];
    bool ok = false;
    if (!o) {
        note_of(note, n, path, "malformed (line %d: %s)", err.line, zb_escape(err.text, 80, shown[0], sizeof shown[0]));
    } else if (!parse_record(o, rec, &bad)) {
        note_of(note, n, path, "%s", bad);
    } else if (strcmp(rec->host.host, here->host)) {
        note_of(note, n, path, "measured on host '%s', this is '%s'", zb_escape(rec->host.host, 60, shown[0], 160),
                zb_escape(here->host, 60, shown[1], 160));
    } else if (strcmp(rec->host.cpu_model, here->cpu_model)) {
        note_of(note, n, path, "measured on CPU '%s', this is '%s'", zb_escape(rec->host.cpu_model, 60, shown[0], 160),
                zb_escape(here->cpu_model, 60, shown[1], 160));
    } else if (strcmp(rec->host.isa, here->isa)) {
        note_of(note, n, path, "measured with %s, this CPU's widest FMA is %s",
                zb_escape(rec->host.isa, 15, shown[0], 160), zb_escape(here->isa, 15, shown[1], 160));
    } else {
        ok = true;
    }
    json_decref(o);
    return ok;
}

/* Creates the folders above `path` (mode 0755 less the umask); an existing
 * one is fine. Failures surface when the file is written. */
static void make_parents(const char *path) {
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) return;
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        (void)mkdir(dir, 0755);
        *p = '/';
    }
    (void)mkdir(dir, 0755);
}

zb_status zb_peak_cache_write(const char *path, const zb_peak_record *rec) {
    json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:s, s:i, s:f, s:f, s:f, s:f, s:s}", "schema", ZB_PEAK_CACHE_SCHEMA,
                          "host", rec->host.host, "cpu_model", rec->host.cpu_model, "cores", rec->host.cores, "isa",
                          rec->host.isa, "runs", rec->runs, "best_gflops_per_core", rec->best_gflops,
                          "min_gflops_per_core", rec->min_gflops, "median_gflops_per_core", rec->median_gflops,
                          "max_gflops_per_core", rec->max_gflops, "date", rec->date);
    char *text = o ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    if (!text) return ZB_FAIL(ZB_ERR_NOMEM, "peak cache: out of memory");
    make_parents(path);
    size_t len = strlen(text);
    char *line = (char *)realloc(text, len + 2); /* ends with a newline, as every file zerobench writes */
    if (!line) {
        free(text);
        return ZB_FAIL(ZB_ERR_NOMEM, "peak cache: out of memory");
    }
    line[len] = '\n';
    line[len + 1] = '\0';
    zb_status st = zb_atomic_write(path, line, len + 1);
    free(line);
    return st;
}
