/* See zb_test.h. */
#include "zb_test.h"

#include "status.h"

int zb_test_failures = 0;
int zb_test_checks = 0;

void zb_test_fail(const char *file, int line, const char *what) {
    zb_test_failures++;
    fprintf(stderr, "FAIL %s:%d: %s\n", file, line, what);
}

void zb_test_fail_status(const char *file, int line, const char *what, int status) {
    zb_test_failures++;
    fprintf(stderr, "FAIL %s:%d: %s returned %s: %s\n", file, line, what,
            zb_status_name((zb_status)status), zb_error_message());
}

int zb_test_finish(const char *name) {
    printf("%s: %d checks, %d failed\n", name, zb_test_checks, zb_test_failures);
    return zb_test_failures == 0 ? 0 : 1;
}
