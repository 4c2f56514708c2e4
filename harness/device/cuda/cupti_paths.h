/* Where the CUPTI tracer looks for libcupti, in order (plain C, built
 * everywhere, so the order is unit-tested without CUDA): the file
 * ZB_CUPTI_LIBRARY names; the soname libcupti.so.<major> and the
 * unversioned libcupti.so through the loader's path; then, in each toolkit
 * folder (<cuda home>/lib64, <cuda home>/extras/CUPTI/lib64), the versioned
 * file before the unversioned one, since a runtime-only toolkit install
 * ships libcupti.so.<major> without the development symlink. */
#ifndef ZB_CUPTI_PATHS_H
#define ZB_CUPTI_PATHS_H

#define ZB_CUPTI_MAX_CANDIDATES 7
#define ZB_CUPTI_PATH_MAX 512

/* Fills out[0..n) with the candidates and returns n. env_path: the
 * ZB_CUPTI_LIBRARY value (NULL or empty: none); cuda_home: the toolkit's
 * root (NULL or empty: /usr/local/cuda); major: CUDA's major version. */
int zb_cupti_candidates(const char *env_path, const char *cuda_home, int major,
                        char out[ZB_CUPTI_MAX_CANDIDATES][ZB_CUPTI_PATH_MAX]);

#endif
