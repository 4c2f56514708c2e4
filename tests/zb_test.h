/* Minimal test helpers: ZB_CHECK records a failure (file:line and the
 * expression) and keeps going; zb_test_finish prints a summary line and
 * returns the process exit code. Every test asserts something that can fail. */
#ifndef ZB_TEST_H
#define ZB_TEST_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

extern int zb_test_failures;
extern int zb_test_checks;

void zb_test_fail(const char *file, int line, const char *what);

#define ZB_CHECK(cond)                                                         \
    do {                                                                       \
        zb_test_checks++;                                                      \
        if (!(cond)) zb_test_fail(__FILE__, __LINE__, #cond);                  \
    } while (0)

#define ZB_CHECK_MSG(cond, ...)                                                \
    do {                                                                       \
        zb_test_checks++;                                                      \
        if (!(cond)) {                                                         \
            char zb_msg_[512];                                                 \
            snprintf(zb_msg_, sizeof zb_msg_, __VA_ARGS__);                    \
            zb_test_fail(__FILE__, __LINE__, zb_msg_);                         \
        }                                                                      \
    } while (0)

/* Checks that a zb_status expression is ZB_OK, printing the error if not. */
#define ZB_CHECK_OK(expr)                                                      \
    do {                                                                       \
        zb_test_checks++;                                                      \
        int zb_s_ = (int)(expr);                                               \
        if (zb_s_ != 0) zb_test_fail_status(__FILE__, __LINE__, #expr, zb_s_); \
    } while (0)

void zb_test_fail_status(const char *file, int line, const char *what, int status);

/* The unsharded reference trainer (bench/zero3/reference.h) on a CPU
 * device of its own, created and destroyed around the run. */
struct zb_model_cfg;
struct zb_adamw_cfg;
int zb_test_reference_train(const struct zb_model_cfg *cfg, int global_batch, int steps,
                            const struct zb_adamw_cfg *opt, float *losses, float **final_params);

/* Prints "<name>: N checks, M failed" and returns 0 when nothing failed. */
int zb_test_finish(const char *name);

#ifdef __cplusplus
}
#endif
#endif
