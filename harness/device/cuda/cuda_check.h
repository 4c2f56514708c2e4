/* Checking CUDA runtime calls: every call's error names the rank, the call
 * site (file:line), the call as written and cudaGetErrorString.
 *
 *   ZB_CUDA_TRY(rank, cudaStreamCreate(&s));            returns on failure
 *   zb_status st = ZB_CUDA_CHECK(rank, cudaFree(p));    status to handle
 *
 * cudaErrorMemoryAllocation maps to ZB_ERR_NOMEM, "no device / driver too
 * old" to ZB_ERR_UNSUPPORTED, everything else to ZB_ERR_INTERNAL. Header-only
 * (static inline) so it links into any CUDA file without name clashes. */
#ifndef ZB_CUDA_CHECK_H
#define ZB_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#include "status.h"

static inline zb_status zb_cuda_status_of(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return ZB_OK;
    case cudaErrorMemoryAllocation: return ZB_ERR_NOMEM;
    case cudaErrorNotReady: return ZB_ERR_NOT_READY;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorNotSupported:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice: return ZB_ERR_UNSUPPORTED;
    default: return ZB_ERR_INTERNAL;
    }
}

/* Records "rank R: CALL failed: STRING (NAME) (file:line)" and returns the
 * mapped status; ZB_OK (recording nothing) on cudaSuccess. Clears the
 * runtime's last-error slot so later launch checks see only their own. */
static inline zb_status zb_cuda_fail_at(cudaError_t e, int rank, const char *file, int line,
                                        const char *call) {
    if (e == cudaSuccess) return ZB_OK;
    (void)cudaGetLastError();
    return zb_error_set(zb_cuda_status_of(e), file, line, "rank %d: %s failed: %s (%s)", rank,
                        call, cudaGetErrorString(e), cudaGetErrorName(e));
}

#define ZB_CUDA_CHECK(rank, call) zb_cuda_fail_at((call), (rank), __FILE__, __LINE__, #call)

#define ZB_CUDA_TRY(rank, call)                                                \
    do {                                                                       \
        zb_status zb_cuda_s_ = ZB_CUDA_CHECK(rank, call);                      \
        if (zb_cuda_s_ != ZB_OK) return zb_cuda_s_;                            \
    } while (0)

#endif
