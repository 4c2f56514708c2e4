/* ZB_HD marks per-element math shared by the CPU and CUDA kernels.
 *
 * Under nvcc it expands to __host__ __device__; in plain C it is empty. Use it
 * as `static inline ZB_HD float f(...)` (nvcc rejects __forceinline__ together
 * with static inline, so we never use it). Headers that include this must be
 * valid C11 and valid C++ for nvcc: no compound literals, no VLAs, explicit
 * casts from void *. */
#ifndef ZB_HD_H
#define ZB_HD_H

#if defined(__CUDACC__)
#define ZB_HD __host__ __device__
#else
#define ZB_HD
#endif

#endif
