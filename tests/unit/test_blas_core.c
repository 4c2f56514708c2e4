/* The BLAS core decision (harness/control/blas_core.c) on synthetic inputs:
 * core names and their strengths, the best core a set of CPU flags
 * supports, --blas-core parsing, and zb_blas_core_decide for auto, keep,
 * a named core, a user's OPENBLAS_CORETYPE and the re-executed process
 * (the marker); plus the sampled check of the kernels running here. The
 * real re-execution is tested end to end in tests/mpi/test_blas_core_exec.sh. */
#include <string.h>

#include "blas_core.h"
#include "zb_test.h"

#define AVX512 "fpu pni ssse3 sse4_1 sse4_2 avx avx2 fma avx512f avx512cd avx512bw avx512dq avx512vl"
#define AVX2 "fpu pni ssse3 sse4_2 avx avx2 fma"

static zb_blas_core_env env_of(const char *coretype, const char *marker, const char *detected,
                               const char *running, const char *flags) {
    zb_blas_core_env e = {coretype, marker, detected, running, flags};
    return e;
}

static void test_names(void) {
    ZB_CHECK(!strcmp(zb_blas_core_canonical("skylakex"), "SkylakeX"));
    ZB_CHECK(!strcmp(zb_blas_core_canonical("PRESCOTT"), "Prescott"));
    ZB_CHECK(zb_blas_core_canonical("Skylake") == NULL && zb_blas_core_canonical("") == NULL);
    ZB_CHECK(zb_blas_core_rank("Prescott") < zb_blas_core_rank("Core2"));
    ZB_CHECK(zb_blas_core_rank("Core2") < zb_blas_core_rank("Nehalem"));
    ZB_CHECK(zb_blas_core_rank("Nehalem") < zb_blas_core_rank("Sandybridge"));
    ZB_CHECK(zb_blas_core_rank("Sandybridge") < zb_blas_core_rank("Haswell"));
    ZB_CHECK(zb_blas_core_rank("Haswell") < zb_blas_core_rank("SkylakeX"));
    ZB_CHECK(zb_blas_core_rank("Zen") == zb_blas_core_rank("Haswell"));
    ZB_CHECK(zb_blas_core_rank("armv8") == -1);
}

static void best_is(const char *flags, const char *want) {
    char why[96];
    const char *got = zb_blas_core_best(flags, why, sizeof why);
    ZB_CHECK_MSG(want ? got && !strcmp(got, want) : got == NULL, "flags '%s': best %s, want %s", flags,
                 got ? got : "NULL", want ? want : "NULL");
}

static void test_best(void) {
    best_is(AVX512, "SkylakeX");
    best_is(AVX2, "Haswell");
    /* AVX-512 without VL: SkylakeX's kernels need it, so Haswell */
    best_is("pni ssse3 sse4_2 avx avx2 fma avx512f avx512cd avx512bw avx512dq", "Haswell");
    best_is("pni ssse3 sse4_2 avx", "Sandybridge");
    best_is("pni ssse3 sse4_2 avx avx2", "Sandybridge"); /* AVX2 without FMA */
    best_is("pni ssse3", "Core2");
    best_is("pni", "Prescott");
    best_is("fp asimd evtstrm", NULL); /* not x86 */
    best_is("", NULL);
    /* a rung needs the ones below it too */
    best_is("avx2 fma avx512f avx512cd avx512bw avx512dq avx512vl", NULL);
    char why[96];
    zb_blas_core_best(AVX512, why, sizeof why);
    ZB_CHECK_MSG(strstr(why, "avx512vl") != NULL, "why: %s", why);
}

static void test_parse(void) {
    zb_blas_core_mode m;
    const char *name;
    ZB_CHECK(zb_blas_core_parse("auto", &m, &name) == ZB_OK && m == ZB_BLAS_CORE_AUTO && !name);
    ZB_CHECK(zb_blas_core_parse("keep", &m, &name) == ZB_OK && m == ZB_BLAS_CORE_KEEP);
    ZB_CHECK(zb_blas_core_parse("haswell", &m, &name) == ZB_OK && m == ZB_BLAS_CORE_NAMED &&
             !strcmp(name, "Haswell"));
    ZB_CHECK(zb_blas_core_parse("Auto", &m, &name) == ZB_ERR_INVALID);
    ZB_CHECK(zb_blas_core_parse("fast", &m, &name) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "--blas-core 'fast'") && strstr(zb_error_message(), "SkylakeX") &&
                     !strchr(zb_error_message(), '\n'),
                 "message: %s", zb_error_message());
}

static void test_decide(void) {
    zb_blas_core_state st;
    zb_blas_core_env e;
    /* auto, the library chose Prescott on an AVX-512 CPU: re-execute with SkylakeX */
    e = env_of(NULL, NULL, NULL, "Prescott", AVX512);
    ZB_CHECK_OK(zb_blas_core_decide(ZB_BLAS_CORE_AUTO, NULL, &e, &st));
    ZB_CHECK(!strcmp(st.exec_core, "SkylakeX") && !strcmp(st.marker, "auto:Prescott:SkylakeX"));
    /* auto, already the strongest: run as is */
    e = env_of(NULL, NULL, NULL, "SkylakeX", AVX512);
    ZB_CHECK_OK(zb_blas_core_decide(ZB_BLAS_CORE_AUTO, NULL, &e, &st));
    ZB_CHECK(!st.exec_core[0] && !st.changed && !strcmp(st.ran, "SkylakeX"));
    /* auto never goes down, nor touches a core it does not know */
    e = env_of(NULL, NULL, NULL, "SkylakeX", AVX2);
    ZB_CHECK_OK(zb_blas_core_decide(ZB_BLAS_CORE_AUTO, NULL, &e, &st));
    ZB_CHECK(!st.exec_core[0]);
    e = env_of(NULL, NULL, NULL, "armv8", "fp asimd");
    ZB_CHECK_OK(zb_blas_core_decide(ZB_BLAS_CORE_AUTO, NULL, &e, &st));
    ZB_CHECK(!st.exec_core[0] && strstr(st.reason, "not a known"));
    /* keep: the library's choice, weak or not */
    e = env_of(NULL, NULL, NULL, "Prescott", AVX512);
    ZB_CHECK_OK(zb_blas_core_decide(ZB_BLAS_CORE_KEEP, NULL, &e, &st));
    ZB_CHECK(!st.exec_core[0] && !strcmp(st.ran, "Prescott") && strstr(st.reason, "weaker than SkylakeX"));
    /* keep under the test hook: run the detected core for real */
    e = env_of(NULL, NULL, "Prescott", "SkylakeX", AVX512);
    ZB_CHECK_OK(zb_blas_core_decide(ZB_BLAS_CORE_KEEP, NULL, &e, &st));
    ZB_CHECK(!strcmp(st.exec_core, "Prescott") && !strcmp(st.marker, "keep:Prescott:Prescott"));
    /* auto under the hook, the strongest already running: no exec, but said */
    e = env_of(NULL, NULL, "Prescott", "SkylakeX", AVX512);
    ZB_CHECK_OK(zb_blas_core_decide(ZB_BLAS_CORE_AUTO, NULL, &e, &st));
    ZB_CHECK(!st.exec_core[0] && st.changed && !strcmp(st.library, "Prescott") &&
             strstr(st.reason, "OpenBLAS chose Prescott"));
    /* a named core */
    e = env_of(NULL, NULL, NULL, "SkylakeX", AVX512);
    ZB_CHECK_OK(zb_blas_core_decide(ZB_BLAS_CORE_NAMED, "Haswell", &e, &st));
    ZB_CHECK(!strcmp(st.exec_core, "Haswell") && !strcmp(st.marker, "--blas-core:SkylakeX:Haswell"));
    /* the user's OPENBLAS_CORETYPE: never overridden, whatever auto thinks */
    e = env_of("Prescott", NULL, NULL, "Prescott", AVX512);
    ZB_CHECK_OK(zb_blas_core_decide(ZB_BLAS_CORE_AUTO, NULL, &e, &st));
    ZB_CHECK(!st.exec_core[0] && !strcmp(st.how, "OPENBLAS_CORETYPE") && strstr(st.reason, "left alone"));
    ZB_CHECK_OK(zb_blas_core_decide(ZB_BLAS_CORE_NAMED, "prescott", &e, &st));
    ZB_CHECK(!st.exec_core[0]);
    ZB_CHECK(zb_blas_core_decide(ZB_BLAS_CORE_NAMED, "Haswell", &e, &st) == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "OPENBLAS_CORETYPE=Prescott") != NULL);
    /* the re-executed process: never again, and says why */
    e = env_of("SkylakeX", "auto:Prescott:SkylakeX", NULL, "SkylakeX", AVX512);
    ZB_CHECK_OK(zb_blas_core_decide(ZB_BLAS_CORE_AUTO, NULL, &e, &st));
    ZB_CHECK(!st.exec_core[0] && st.changed && !strcmp(st.library, "Prescott") && !strcmp(st.how, "auto"));
    ZB_CHECK_MSG(strstr(st.reason, "OpenBLAS chose Prescott") && strstr(st.reason, "SkylakeX"), "%s", st.reason);
    /* asked for one, the library ran another: said */
    e = env_of("Cooperlake", "--blas-core:SkylakeX:Cooperlake", NULL, "SkylakeX", AVX512);
    ZB_CHECK_OK(zb_blas_core_decide(ZB_BLAS_CORE_NAMED, "Cooperlake", &e, &st));
    ZB_CHECK_MSG(strstr(st.reason, "OpenBLAS runs SkylakeX") && !st.changed, "%s", st.reason);
    e = env_of("SkylakeX", "garbage", NULL, "SkylakeX", AVX512);
    ZB_CHECK(zb_blas_core_decide(ZB_BLAS_CORE_AUTO, NULL, &e, &st) == ZB_ERR_INVALID);
}

int main(void) {
    test_names();
    test_best();
    test_parse();
    test_decide();
    ZB_CHECK_OK(zb_blas_core_check("this machine's"));
    return zb_test_finish("test_blas_core");
}
