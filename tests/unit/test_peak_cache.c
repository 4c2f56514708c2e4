/* The per-host peak cache (harness/cli/peak_cache.h): where it lives, a
 * record written and read back, and every record that must not be reused
 * (another host, CPU or ISA; behind a symbolic link; malformed) ignored
 * with a note, never a crash. Nothing here times anything. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "peak_cache.h"
#include "zb_test.h"

static char dir[256];

static void path_in(const char *name, char *out, size_t n) { snprintf(out, n, "%s/%s", dir, name); }

static void put(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ZB_CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static zb_peak_record sample(const zb_peak_host *here) {
    zb_peak_record r;
    memset(&r, 0, sizeof r);
    r.host = *here;
    r.runs = 7;
    r.best_gflops = r.max_gflops = 110.5;
    r.min_gflops = 60.25;
    r.median_gflops = 90.0;
    snprintf(r.date, sizeof r.date, "2026-01-02T03:04:05Z");
    return r;
}

static bool reads(const char *path, const zb_peak_host *here, zb_peak_record *got, char *note, size_t n) {
    memset(got, 0, sizeof *got);
    return zb_peak_cache_read(path, here, got, note, n);
}

static void test_paths(void) {
    char p[512];
    setenv(ZB_PEAK_CACHE_ENV, "off", 1);
    ZB_CHECK(!zb_peak_cache_path("vm", p, sizeof p));
    setenv(ZB_PEAK_CACHE_ENV, "/some/where/peak.json", 1);
    ZB_CHECK(zb_peak_cache_path("vm", p, sizeof p) && !strcmp(p, "/some/where/peak.json"));
    unsetenv(ZB_PEAK_CACHE_ENV);
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    ZB_CHECK(zb_peak_cache_path("vm", p, sizeof p) && !strcmp(p, "/xdg/zerobench/peak-vm.json"));
    /* A host name cannot leave the folder nor split the name. */
    ZB_CHECK(zb_peak_cache_path("../a/b\nc", p, sizeof p) && !strcmp(p, "/xdg/zerobench/peak-_._a_b_c.json"));
    setenv("XDG_CACHE_HOME", "relative", 1); /* invalid by the XDG spec: HOME's */
    setenv("HOME", "/home/u", 1);
    ZB_CHECK(zb_peak_cache_path("vm", p, sizeof p) && !strcmp(p, "/home/u/.cache/zerobench/peak-vm.json"));
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    ZB_CHECK(!zb_peak_cache_path("vm", p, sizeof p)); /* nowhere to keep it: no cache */
    char tiny[8];
    setenv(ZB_PEAK_CACHE_ENV, "/a/long/path.json", 1);
    ZB_CHECK(!zb_peak_cache_path("vm", tiny, sizeof tiny));
    setenv(ZB_PEAK_CACHE_ENV, "off", 1);
}

static void test_round_trip(const zb_peak_host *here) {
    char path[512], note[512];
    path_in("a/b/peak.json", path, sizeof path); /* folders created */
    zb_peak_record r = sample(here), got;
    ZB_CHECK(!reads(path, here, &got, note, sizeof note) && note[0] == '\0'); /* none yet: no note */
    ZB_CHECK_OK(zb_peak_cache_write(path, &r));
    ZB_CHECK_MSG(reads(path, here, &got, note, sizeof note), "read back: %s", note);
    ZB_CHECK(note[0] == '\0');
    ZB_CHECK(got.best_gflops == r.best_gflops && got.min_gflops == r.min_gflops &&
             got.median_gflops == r.median_gflops && got.max_gflops == r.max_gflops && got.runs == 7);
    ZB_CHECK(!strcmp(got.date, r.date) && !strcmp(got.host.host, here->host) &&
             !strcmp(got.host.cpu_model, here->cpu_model) && !strcmp(got.host.isa, here->isa) &&
             got.host.cores == here->cores);
    /* Replaced whole by a later write. */
    r.best_gflops = r.max_gflops = 120.0;
    ZB_CHECK_OK(zb_peak_cache_write(path, &r));
    ZB_CHECK(reads(path, here, &got, note, sizeof note) && got.best_gflops == 120.0);
    /* The cores are recorded, not compared (the figure is per core). */
    zb_peak_host more = *here;
    more.cores = here->cores + 8;
    ZB_CHECK(reads(path, &more, &got, note, sizeof note));
}

static void test_other_machine(const zb_peak_host *here) {
    char path[512], note[512];
    path_in("other.json", path, sizeof path);
    zb_peak_record got;
    struct { const char *what, *field, *want; } cases[] = {
        {"host", "host", "measured on host 'elsewhere', this is"},
        {"cpu", "cpu_model", "measured on CPU 'elsewhere', this is"},
        {"isa", "isa", "measured with elsewhere, this CPU's widest FMA is"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        zb_peak_record r = sample(here);
        if (!strcmp(cases[i].field, "host")) snprintf(r.host.host, sizeof r.host.host, "elsewhere");
        if (!strcmp(cases[i].field, "cpu_model")) snprintf(r.host.cpu_model, sizeof r.host.cpu_model, "elsewhere");
        if (!strcmp(cases[i].field, "isa")) snprintf(r.host.isa, sizeof r.host.isa, "elsewhere");
        ZB_CHECK_OK(zb_peak_cache_write(path, &r));
        ZB_CHECK_MSG(!reads(path, here, &got, note, sizeof note), "%s: another machine's record reused", cases[i].what);
        ZB_CHECK_MSG(strstr(note, cases[i].want) && strstr(note, "ignored the peak cache") &&
                         strstr(note, "measuring again"),
                     "%s: note '%s'", cases[i].what, note);
    }
}

static void test_symlink(const zb_peak_host *here) {
    char real[512], link[512], note[512];
    path_in("real.json", real, sizeof real);
    path_in("link.json", link, sizeof link);
    zb_peak_record r = sample(here), got;
    ZB_CHECK_OK(zb_peak_cache_write(real, &r));
    ZB_CHECK(symlink(real, link) == 0);
    ZB_CHECK(!reads(link, here, &got, note, sizeof note));
    ZB_CHECK_MSG(strstr(note, "symbolic link"), "note '%s'", note);
    /* Not written through either: the link's target keeps its record. */
    r.best_gflops = r.max_gflops = 999.0;
    ZB_CHECK(zb_peak_cache_write(link, &r) != ZB_OK);
    struct stat st;
    ZB_CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    ZB_CHECK(reads(real, here, &got, note, sizeof note) && got.best_gflops == 110.5);
}

static void test_malformed(const zb_peak_host *here) {
    char path[512], note[512], good[1024];
    path_in("bad.json", path, sizeof path);
    zb_peak_record got;
    /* A valid record, as text, for the single-field breakages below. */
    snprintf(good, sizeof good,
             "{\"schema\": \"zerobench-peak/1\", \"host\": \"%s\", \"cpu_model\": \"%s\", \"cores\": 2, "
             "\"isa\": \"%s\", \"runs\": 7, \"best_gflops_per_core\": 100, \"min_gflops_per_core\": 50, "
             "\"median_gflops_per_core\": 80, \"max_gflops_per_core\": 100, \"date\": \"2026-01-02T03:04:05Z\"}",
             here->host, here->cpu_model, here->isa);
    put(path, good);
    ZB_CHECK_MSG(reads(path, here, &got, note, sizeof note) && got.best_gflops == 100, "the good text: %s", note);
    struct { const char *from, *to, *want; } edits[] = {
        {"zerobench-peak/1", "zerobench-peak/9", "schema"},
        {"\"runs\": 7", "\"runs\": 0", "runs"},
        {"\"runs\": 7", "\"runs\": \"7\"", "runs"},
        {"\"best_gflops_per_core\": 100", "\"best_gflops_per_core\": -1", "GFLOP/s"},
        {"\"max_gflops_per_core\": 100", "\"max_gflops_per_core\": 90", "min <= median <= max = best"},
        {"\"min_gflops_per_core\": 50", "\"min_gflops_per_core\": 85", "min <= median <= max = best"},
        {"2026-01-02T03:04:05Z", "yesterday\\n\\u001b[2J", "date"},
        {"\"cores\": 2", "\"cores\": -2", "cores"},
        {"\"isa\": ", "\"isa_\": ", "isa"},
        {"\"runs\": 7,", "\"runs\": 7, \"runs\": 8,", "malformed"}, /* duplicate key */
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char text[1100];
        const char *at = strstr(good, edits[i].from);
        ZB_CHECK(at != NULL);
        if (!at) continue;
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - good), good, edits[i].to, at + strlen(edits[i].from));
        put(path, text);
        ZB_CHECK_MSG(!reads(path, here, &got, note, sizeof note), "edit %zu reused", i);
        ZB_CHECK_MSG(strstr(note, edits[i].want) && strstr(note, "ignored the peak cache"), "edit %zu: note '%s'", i,
                     note);
        ZB_CHECK_MSG(!strchr(note, '\n') && !strchr(note, '\033'), "edit %zu: the note is one clean line", i);
    }
    const char *texts[] = {"", "{", "[]", "null", "{\"schema\": 1}", "\xff\xfe", "{} trailing"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        put(path, texts[i]);
        ZB_CHECK_MSG(!reads(path, here, &got, note, sizeof note) && strstr(note, "ignored the peak cache"),
                     "text %zu: note '%s'", i, note);
    }
    /* Too large: refused before it is parsed. */
    char *big = (char *)malloc(ZB_PEAK_CACHE_MAX_BYTES + 2);
    ZB_CHECK(big != NULL);
    if (big) {
        memset(big, ' ', ZB_PEAK_CACHE_MAX_BYTES + 1);
        big[ZB_PEAK_CACHE_MAX_BYTES + 1] = '\0';
        put(path, big);
        free(big);
        ZB_CHECK(!reads(path, here, &got, note, sizeof note) && strstr(note, "more than the"));
    }
    /* Not a regular file: a folder, a FIFO (opened without blocking). */
    char sub[512], fifo[512];
    path_in("folder.json", sub, sizeof sub);
    path_in("fifo.json", fifo, sizeof fifo);
    ZB_CHECK(mkdir(sub, 0755) == 0 && mkfifo(fifo, 0644) == 0);
    ZB_CHECK(!reads(sub, here, &got, note, sizeof note) && strstr(note, "ignored the peak cache"));
    ZB_CHECK(!reads(fifo, here, &got, note, sizeof note) && strstr(note, "not a regular file"));
    /* A short note buffer stays terminated. */
    char small[16];
    put(path, "{");
    ZB_CHECK(!reads(path, here, &got, small, sizeof small) && strlen(small) < sizeof small);
}

int main(void) {
    snprintf(dir, sizeof dir, "%s/zb_peak_cache_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    zb_peak_host here;
    zb_peak_host_here("avx2+fma", &here);
    ZB_CHECK(here.host[0] && here.cpu_model[0] && here.cores > 0 && !strcmp(here.isa, "avx2+fma"));
    char date[24];
    zb_peak_date(0, date, sizeof date);
    ZB_CHECK(!strcmp(date, "1970-01-01T00:00:00Z"));
    test_paths();
    test_round_trip(&here);
    test_other_machine(&here);
    test_symlink(&here);
    test_malformed(&here);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return zb_test_finish("test_peak_cache");
}
