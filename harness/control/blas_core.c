/* The OpenBLAS core decision (see blas_core.h): names and strengths, the
 * CPU's best core from its flags, the decision, and the sampled check. */
#include "blas_core.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cblas.h>

/* OpenBLAS 0.3.x's x86-64 DYNAMIC_ARCH cores (its corename table) and a
 * strength for fp32 GEMM: the vector ISA their SGEMM kernels use (SSE 0-1,
 * SSE3 2, SSSE3 3, SSE4.2 4, AVX 5, AVX2+FMA 6, AVX-512 7, with bf16 8,
 * AMX 9). */
typedef struct core_def {
    const char *name;
    int rank;
} core_def;

static const core_def cores[] = {
    {"Katmai", 0},      {"Coppermine", 0},  {"Northwood", 1},  {"Athlon", 0},       {"Opteron", 1},
    {"Banias", 1},      {"Prescott", 2},    {"Opteron_SSE3", 2}, {"Atom", 2},       {"Core2", 3},
    {"Penryn", 3},      {"Dunnington", 3},  {"Barcelona", 3},  {"Nano", 3},         {"Bobcat", 3},
    {"Nehalem", 4},     {"Sandybridge", 5}, {"Bulldozer", 5},  {"Piledriver", 5},   {"Steamroller", 5},
    {"Excavator", 5},   {"Haswell", 6},     {"Zen", 6},        {"SkylakeX", 7},     {"Cooperlake", 8},
    {"Sapphirerapids", 9},
};
#define N_CORES (sizeof cores / sizeof cores[0])

const char *zb_blas_core_canonical(const char *name) {
    if (!name) return NULL;
    for (size_t i = 0; i < N_CORES; i++) {
        if (!strcasecmp(name, cores[i].name)) return cores[i].name;
    }
    return NULL;
}

const char *zb_blas_core_names(void) {
    static char all[512];
    if (!all[0]) {
        size_t off = 0;
        for (size_t i = 0; i < N_CORES; i++) {
            off += (size_t)snprintf(all + off, sizeof all - off, "%s%s", i ? "|" : "", cores[i].name);
        }
    }
    return all;
}

int zb_blas_core_rank(const char *name) {
    const char *c = zb_blas_core_canonical(name);
    for (size_t i = 0; c && i < N_CORES; i++) {
        if (cores[i].name == c) return cores[i].rank;
    }
    return -1;
}

/* Whether `flag` is one of the space-separated words of `flags`. */
static bool has_flag(const char *flags, const char *flag) {
    size_t n = strlen(flag);
    for (const char *p = flags; p && *p;) {
        while (*p == ' ' || *p == '\t') p++;
        size_t w = strcspn(p, " \t\n");
        if (w == n && !strncmp(p, flag, n)) return true;
        p += w;
    }
    return false;
}

/* The Intel ladder the auto choice climbs: each core needs its flags (and
 * those of the rungs below). "pni" is how Linux names SSE3. */
typedef struct rung {
    const char *core;
    const char *flags[6];
} rung;

static const rung ladder[] = {
    {"SkylakeX", {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl", NULL}},
    {"Haswell", {"avx2", "fma", NULL}},
    {"Sandybridge", {"avx", NULL}},
    {"Nehalem", {"sse4_2", NULL}},
    {"Core2", {"ssse3", NULL}},
    {"Prescott", {"pni", NULL}},
};

const char *zb_blas_core_best(const char *flags, char *why, size_t why_n) {
    if (why && why_n) why[0] = '\0';
    if (!flags) return NULL;
    /* Each rung also needs every rung below it. */
    size_t n = sizeof ladder / sizeof ladder[0], lowest_ok = n;
    for (size_t i = n; i-- > 0;) {
        bool ok = true;
        for (const char *const *f = ladder[i].flags; *f; f++) ok = ok && has_flag(flags, *f);
        if (!ok) break;
        lowest_ok = i;
    }
    if (lowest_ok == n) return NULL;
    if (why && why_n) {
        size_t off = 0;
        for (const char *const *f = ladder[lowest_ok].flags; *f; f++) {
            off += (size_t)snprintf(why + off, off < why_n ? why_n - off : 0, "%s%s", off ? " " : "", *f);
        }
    }
    return ladder[lowest_ok].core;
}

zb_status zb_blas_core_parse(const char *value, zb_blas_core_mode *mode, const char **name) {
    *name = NULL;
    if (value && !strcmp(value, "auto")) {
        *mode = ZB_BLAS_CORE_AUTO;
        return ZB_OK;
    }
    if (value && !strcmp(value, "keep")) {
        *mode = ZB_BLAS_CORE_KEEP;
        return ZB_OK;
    }
    const char *c = zb_blas_core_canonical(value);
    if (!c) {
        return ZB_FAIL(ZB_ERR_INVALID, "--blas-core '%.40s': expected auto, keep or an OpenBLAS core (%s)",
                       value ? value : "", zb_blas_core_names());
    }
    *mode = ZB_BLAS_CORE_NAMED;
    *name = c;
    return ZB_OK;
}

static void copy(char *dst, size_t n, const char *src) { snprintf(dst, n, "%s", src ? src : ""); }

static bool same(const char *a, const char *b) { return a && b && !strcasecmp(a, b); }

/* " (the CPU supports SkylakeX)" when `core` is weaker than the best. */
static const char *weaker_note(const zb_blas_core_state *st, const char *core, char *buf, size_t n) {
    buf[0] = '\0';
    if (st->best[0] && zb_blas_core_rank(core) >= 0 && zb_blas_core_rank(core) < zb_blas_core_rank(st->best)) {
        snprintf(buf, n, "; weaker than %s, which the CPU supports", st->best);
    }
    return buf;
}

/* Re-executes with `core` as OPENBLAS_CORETYPE, remembering how. */
static void plan_exec(zb_blas_core_state *st, const char *core) {
    copy(st->exec_core, sizeof st->exec_core, core);
    snprintf(st->marker, sizeof st->marker, "%s:%s:%s", st->how, st->library, core);
}

/* The process that found the marker: it ran what was asked. */
static zb_status decide_marked(const zb_blas_core_env *env, zb_blas_core_state *st) {
    char m[96];
    copy(m, sizeof m, env->marker);
    char *a = strchr(m, ':'), *b = a ? strchr(a + 1, ':') : NULL;
    if (!a || !b) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s '%.40s': expected how:library_choice:asked (zerobench sets it)",
                       ZB_BLAS_CORE_MARKER_ENV, env->marker);
    }
    *a = *b = '\0';
    copy(st->how, sizeof st->how, m);
    copy(st->library, sizeof st->library, a + 1);
    copy(st->asked, sizeof st->asked, b + 1);
    char note[96];
    const char *ran = st->ran;
    if (!strcmp(st->how, "auto") && !same(st->asked, st->library)) {
        snprintf(st->reason, sizeof st->reason, "auto: OpenBLAS chose %s, the CPU supports %s (%s)", st->library,
                 st->asked, st->why);
    } else if (!strcmp(st->how, "--blas-core")) {
        snprintf(st->reason, sizeof st->reason, "--blas-core %s (OpenBLAS chose %s%s)", st->asked, st->library,
                 weaker_note(st, st->asked, note, sizeof note));
    } else {
        snprintf(st->reason, sizeof st->reason, "%s: OpenBLAS's own choice%s", st->how,
                 weaker_note(st, st->library, note, sizeof note));
    }
    if (!same(ran, st->asked)) {
        size_t off = strlen(st->reason);
        snprintf(st->reason + off, sizeof st->reason - off, "; asked for %s, OpenBLAS runs %s", st->asked, ran);
    }
    st->changed = !same(ran, st->library);
    return ZB_OK;
}

zb_status zb_blas_core_decide(zb_blas_core_mode mode, const char *named, const zb_blas_core_env *env,
                              zb_blas_core_state *st) {
    memset(st, 0, sizeof *st);
    copy(st->ran, sizeof st->ran, env->running);
    copy(st->best, sizeof st->best, zb_blas_core_best(env->flags, st->why, sizeof st->why));
    if (env->marker) return decide_marked(env, st);
    char note[96];
    copy(st->library, sizeof st->library, env->detected ? env->detected : env->running);
    if (env->coretype) { /* the user's: never overridden */
        copy(st->how, sizeof st->how, ZB_BLAS_CORE_ENV);
        copy(st->asked, sizeof st->asked, env->coretype);
        if (mode == ZB_BLAS_CORE_NAMED && !same(named, env->coretype)) {
            return ZB_FAIL(ZB_ERR_INVALID, "--blas-core %s: %s=%.40s is set in the environment; unset one of them",
                           named, ZB_BLAS_CORE_ENV, env->coretype);
        }
        snprintf(st->reason, sizeof st->reason, "%s=%.40s set by the user: left alone%s", ZB_BLAS_CORE_ENV,
                 env->coretype, weaker_note(st, st->ran, note, sizeof note));
        st->changed = false;
        return ZB_OK;
    }
    const char *want = st->library; /* keep unless a reason to change */
    if (mode == ZB_BLAS_CORE_NAMED) {
        copy(st->how, sizeof st->how, "--blas-core");
        want = named;
    } else if (mode == ZB_BLAS_CORE_KEEP) {
        copy(st->how, sizeof st->how, "keep");
    } else {
        copy(st->how, sizeof st->how, "auto");
        int lib = zb_blas_core_rank(st->library);
        if (st->best[0] && lib >= 0 && lib < zb_blas_core_rank(st->best)) want = st->best;
    }
    copy(st->asked, sizeof st->asked, want);
    if (!same(want, env->running)) {
        plan_exec(st, want);
        return ZB_OK;
    }
    /* Runs as is: the core running is what was wanted (under the test hook
     * it need not be the library's choice). */
    st->changed = !same(env->running, st->library);
    if (st->changed) {
        /* The marked process's wording: the same decision, made without exec. */
        snprintf(st->marker, sizeof st->marker, "%s:%s:%s", st->how, st->library, want);
        zb_blas_core_env marked = *env;
        marked.marker = st->marker;
        zb_status s = decide_marked(&marked, st);
        st->marker[0] = '\0';
        return s;
    }
    if (mode == ZB_BLAS_CORE_NAMED) {
        snprintf(st->reason, sizeof st->reason, "--blas-core %s, OpenBLAS's own choice%s", named,
                 weaker_note(st, named, note, sizeof note));
    } else if (mode == ZB_BLAS_CORE_AUTO && zb_blas_core_rank(st->library) < 0) {
        snprintf(st->reason, sizeof st->reason, "auto: OpenBLAS chose %s, not a known x86 core: kept", st->library);
    } else if (mode == ZB_BLAS_CORE_AUTO) {
        snprintf(st->reason, sizeof st->reason, "auto: OpenBLAS's own choice, as strong as the CPU supports (%s)",
                 st->best[0] ? st->best : "CPU flags unknown");
    } else {
        snprintf(st->reason, sizeof st->reason, "keep: OpenBLAS's own choice%s",
                 weaker_note(st, st->library, note, sizeof note));
    }
    return ZB_OK;
}

/* The "flags" line of /proc/cpuinfo (the first processor's), "" when none. */
static void read_cpu_flags(char *buf, size_t n) {
    buf[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        if (!strncmp(line, "flags", 5)) {
            const char *colon = strchr(line, ':');
            copy(buf, n, colon ? colon + 1 : "");
            buf[strcspn(buf, "\n")] = '\0';
            break;
        }
    }
    free(line);
    fclose(f);
}

zb_status zb_blas_core_decide_here(zb_blas_core_mode mode, const char *named, zb_blas_core_state *st) {
    static char flags[8192];
    read_cpu_flags(flags, sizeof flags);
    zb_blas_core_env env;
    env.coretype = getenv(ZB_BLAS_CORE_ENV);
    env.marker = getenv(ZB_BLAS_CORE_MARKER_ENV);
    const char *hook = getenv(ZB_BLAS_CORE_TEST_ENV);
    env.detected = hook && hook[0] ? zb_blas_core_canonical(hook) : NULL;
    if (hook && hook[0] && !env.detected) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s '%.40s': expected an OpenBLAS core (%s)", ZB_BLAS_CORE_TEST_ENV, hook,
                       zb_blas_core_names());
    }
    env.running = openblas_get_corename();
    env.flags = flags;
    zb_status s = zb_blas_core_decide(mode, named, &env, st);
    if (s == ZB_OK && env.marker) {
        /* The variables were this process's; its children decide anew. */
        unsetenv(ZB_BLAS_CORE_ENV);
        unsetenv(ZB_BLAS_CORE_MARKER_ENV);
    }
    return s;
}

/* ---- the sampled check ----------------------------------------------------- */

static float sample_value(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(*s >> 40) / (double)(1ULL << 24) * 2.0 - 1.0);
}

zb_status zb_blas_core_check(const char *core) {
    /* Odd shapes reach the kernels' edge code; 96 x 80 x 272 their blocks. */
    static const int shapes[][3] = {{37, 29, 53}, {96, 80, 272}, {1, 17, 9}};
    uint64_t seed = 12345;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        int M = shapes[si][0], N = shapes[si][1], K = shapes[si][2];
        float *a = (float *)malloc(sizeof(float) * (size_t)M * (size_t)K);
        float *b = (float *)malloc(sizeof(float) * (size_t)K * (size_t)N);
        float *c = (float *)malloc(sizeof(float) * (size_t)M * (size_t)N);
        if (!a || !b || !c) {
            free(a), free(b), free(c);
            return ZB_FAIL(ZB_ERR_NOMEM, "BLAS check: out of memory");
        }
        for (int i = 0; i < M * K; i++) a[i] = sample_value(&seed);
        for (int i = 0; i < K * N; i++) b[i] = sample_value(&seed);
        zb_status st = ZB_OK;
        for (int t = 0; t < 4 && st == ZB_OK; t++) {
            bool ta = t & 1, tb = t & 2;
            /* a holds A (M x K) or A^T (K x M) as the flag says; same for b. */
            cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K,
                        1.0f, a, ta ? M : K, b, tb ? K : N, 0.0f, c, N);
            for (int i = 0; i < M && st == ZB_OK; i++) {
                for (int j = 0; j < N; j++) {
                    double ref = 0.0, mag = 0.0;
                    for (int k = 0; k < K; k++) {
                        double x = ta ? a[(size_t)k * M + i] : a[(size_t)i * K + k];
                        double y = tb ? b[(size_t)j * K + k] : b[(size_t)k * N + j];
                        ref += x * y;
                        mag += fabs(x * y);
                    }
                    /* fp32 products summed in any order: K roundings at most. */
                    double bound = 2.0 * K * FLT_EPSILON * mag + 1e-30;
                    if (!(fabs((double)c[(size_t)i * N + j] - ref) <= bound)) {
                        st = ZB_FAIL(ZB_ERR_WRONG,
                                     "BLAS core %s: sgemm %dx%dx%d (trans %d%d) element (%d, %d) is %g, the "
                                     "double reference %g; run with --blas-core keep",
                                     core, M, N, K, (int)ta, (int)tb, i, j, (double)c[(size_t)i * N + j], ref);
                        break;
                    }
                }
            }
        }
        free(a), free(b), free(c);
        ZB_TRY(st);
    }
    return ZB_OK;
}

json_t *zb_blas_core_json(const zb_blas_core_state *st) {
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "ran", json_string(st->ran));
    json_object_set_new(o, "library_choice", json_string(st->library));
    json_object_set_new(o, "asked", st->asked[0] ? json_string(st->asked) : json_null());
    json_object_set_new(o, "best_supported", st->best[0] ? json_string(st->best) : json_null());
    json_object_set_new(o, "how", json_string(st->how));
    json_object_set_new(o, "changed", json_boolean(st->changed));
    json_object_set_new(o, "reason", json_string(st->reason));
    return o;
}
