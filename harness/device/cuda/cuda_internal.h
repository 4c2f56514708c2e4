/* Internals the CUDA backend's files share. The accessor to the CUDA stream
 * behind a zb_stream is declared once, in harness/device/cuda/cuda_backend.h, and
 * implemented by harness/device/cuda/device_cuda.c:
 *   void *zb_cuda_stream_handle(const zb_stream *s);  (a cudaStream_t)
 * In C the result converts to cudaStream_t without a cast. This header only
 * gathers what CUDA-only files need for it. Valid as C11 and as C++. */
#ifndef ZB_CUDA_INTERNAL_H
#define ZB_CUDA_INTERNAL_H

#include <cuda_runtime_api.h>

#include "cuda_backend.h"
#include "device.h"

#endif
