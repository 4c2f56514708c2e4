/* The CUPTI tracer's libcupti candidates (cupti_paths.h): ZB_CUPTI_LIBRARY
 * first, then the soname and the unversioned name through the loader, then
 * in every toolkit folder the versioned file before the unversioned one,
 * so a toolkit that ships only libcupti.so.13 (no development symlink) is
 * found in lib64 and in extras/CUPTI/lib64. Needs no CUDA. */
#include <string.h>

#include "cupti_paths.h"
#include "zb_test.h"

static int find(char c[][ZB_CUPTI_PATH_MAX], int n, const char *path) {
    for (int i = 0; i < n; i++) {
        if (strcmp(c[i], path) == 0) return i;
    }
    return -1;
}

int main(void) {
    char c[ZB_CUPTI_MAX_CANDIDATES][ZB_CUPTI_PATH_MAX];
    int n = zb_cupti_candidates("/opt/x/libcupti.so.13.0.1", NULL, 13, c);
    ZB_CHECK(n == ZB_CUPTI_MAX_CANDIDATES);
    ZB_CHECK(strcmp(c[0], "/opt/x/libcupti.so.13.0.1") == 0);
    ZB_CHECK(strcmp(c[1], "libcupti.so.13") == 0);
    ZB_CHECK(strcmp(c[2], "libcupti.so") == 0);
    const char *dirs[] = {"/usr/local/cuda/lib64", "/usr/local/cuda/extras/CUPTI/lib64"};
    int last = 2;
    for (int d = 0; d < 2; d++) {
        char versioned[ZB_CUPTI_PATH_MAX], plain[ZB_CUPTI_PATH_MAX];
        snprintf(versioned, sizeof versioned, "%s/libcupti.so.13", dirs[d]);
        snprintf(plain, sizeof plain, "%s/libcupti.so", dirs[d]);
        int iv = find(c, n, versioned), ip = find(c, n, plain);
        ZB_CHECK_MSG(iv > last && ip > iv, "%s: versioned at %d, plain at %d", dirs[d], iv, ip);
        last = ip;
    }

    /* No ZB_CUPTI_LIBRARY: the soname comes first; CUDA_HOME moves the folders. */
    n = zb_cupti_candidates("", "/opt/cuda-13.0", 13, c);
    ZB_CHECK(n == ZB_CUPTI_MAX_CANDIDATES - 1);
    ZB_CHECK(strcmp(c[0], "libcupti.so.13") == 0);
    ZB_CHECK(find(c, n, "/opt/cuda-13.0/extras/CUPTI/lib64/libcupti.so.13") > 0);
    ZB_CHECK(find(c, n, "/usr/local/cuda/lib64/libcupti.so") < 0);
    n = zb_cupti_candidates(NULL, NULL, 12, c);
    ZB_CHECK(find(c, n, "/usr/local/cuda/lib64/libcupti.so.12") > 0);
    return zb_test_finish("test_cupti_paths");
}
