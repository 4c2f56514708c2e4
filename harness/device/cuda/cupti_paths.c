/* The libcupti candidates of the CUPTI tracer (cupti_paths.h). */
#include <stdio.h>

#include "cupti_paths.h"

int zb_cupti_candidates(const char *env_path, const char *cuda_home, int major,
                        char out[ZB_CUPTI_MAX_CANDIDATES][ZB_CUPTI_PATH_MAX]) {
    int n = 0;
    if (env_path && env_path[0]) snprintf(out[n++], ZB_CUPTI_PATH_MAX, "%s", env_path);
    snprintf(out[n++], ZB_CUPTI_PATH_MAX, "libcupti.so.%d", major);
    snprintf(out[n++], ZB_CUPTI_PATH_MAX, "libcupti.so");
    const char *home = cuda_home && cuda_home[0] ? cuda_home : "/usr/local/cuda";
    const char *dirs[] = {"lib64", "extras/CUPTI/lib64"};
    for (int d = 0; d < 2; d++) {
        snprintf(out[n++], ZB_CUPTI_PATH_MAX, "%s/%s/libcupti.so.%d", home, dirs[d], major);
        snprintf(out[n++], ZB_CUPTI_PATH_MAX, "%s/%s/libcupti.so", home, dirs[d]);
    }
    return n;
}
