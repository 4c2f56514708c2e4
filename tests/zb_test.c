/* See zb_test.h. */
#include "zb_test.h"

#include "device_cpu.h"
#include "reference.h"
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

int zb_test_reference_train(const zb_model_cfg *cfg, int global_batch, int steps,
                            const zb_adamw_cfg *opt, float *losses, float **final_params) {
    zb_device_config dc = {0, 0, 0, 600.0, NULL};
    zb_device *dev = NULL;
    zb_status st = zb_device_cpu_create(&dc, &dev);
    if (st == ZB_OK) st = zb_reference_train(dev, cfg, global_batch, steps, opt, losses, final_params);
    zb_dev_destroy(dev);
    return (int)st;
}
