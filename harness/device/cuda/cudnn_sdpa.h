/* cuDNN's fused scaled-dot-product attention (cuDNN 9 graph API), the
 * attention production training runs on NVIDIA GPUs, behind a C interface
 * (cudnn_sdpa.cpp, one C++ translation unit over cuDNN's front end; built
 * only when CMake finds cuDNN 9's headers and the front-end headers, else
 * cudnn_sdpa_off.c answers "built without cuDNN"). libcudnn is loaded at
 * run time, never linked: a binary built with it runs where it is missing,
 * and zb_cudnn_sdpa_usable says why (ZB_CUDNN_LIBRARY names the file to
 * load; cudnn_sdpa.cpp's top comment has the search order).
 *
 * Semantics are kernels.h's attention entries exactly: causal, grouped-query
 * heads (query head h reads kv head h / (H / KVH)), scale 1/sqrt(D), the
 * [B, T, H, D] layouts by strides, bf16 storage, lse [B, H, T] fp32 the
 * natural log-sum-exp of each row's scaled scores (cuDNN's softmax
 * "stats"). The backward recomputes the probabilities from q, k and lse.
 * Execution plans are built once per (direction, shape) on each device and
 * cached with the device's cuDNN handle; each plan's workspace is device
 * memory owned by this module (cudaMalloc at the plan's build, outside
 * zerobench's memory ledger: zb_cudnn_sdpa_workspace_bytes). Calls enqueue
 * on `stream` (a cudaStream_t of the current CUDA device) and do not
 * synchronize. Thread-safe (one lock around the module). Every failure
 * records one line naming the op, the shape and cuDNN's message. */
#ifndef ZB_CUDNN_SDPA_H
#define ZB_CUDNN_SDPA_H

#include <stdbool.h>
#include <stddef.h>

#include "device.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* True when this build has cuDNN's SDPA and it can run bf16 attention of
 * head dim D on the current CUDA device (libcudnn loads, it is cuDNN 9 for
 * this process's CUDA major version, the GPU is sm_80 or newer, a cuDNN
 * handle was created, and D is a multiple of 8 and at most 128; D <= 0
 * leaves the head dim out of the question). On false, *why (may be NULL)
 * names the reason in a string that stays valid. The first call loads
 * cuDNN and creates the device's handle (tens to hundreds of ms). */
bool zb_cudnn_sdpa_usable(zb_dtype dtype, int D, const char **why);

/* Builds (or finds) the execution plan of this direction and shape on the
 * current device, with its workspace, without enqueuing anything: ZB_OK;
 * ZB_ERR_UNSUPPORTED (message recorded) when not usable or cuDNN refuses
 * the shape (remembered: later calls refuse at once, and *first_refusal,
 * may be NULL, is true only for the call that found out); ZB_ERR_NOMEM
 * when the workspace cannot be allocated. fwd and bwd call it themselves;
 * a caller that falls back on a refusal calls it first. */
zb_status zb_cudnn_sdpa_prepare(bool backward, int B, int T, int H, int KVH, int D,
                                bool *first_refusal);

/* Forward: out [B,T,H,D] bf16, lse [B,H,T] fp32 from q [B,T,H,D],
 * k, v [B,T,KVH,D] (bf16). ZB_ERR_UNSUPPORTED (message recorded) when not
 * usable, cuDNN refuses the shape or a pointer is not 16-byte aligned;
 * ZB_ERR_INTERNAL (message recorded) on a cuDNN or CUDA failure. B or T
 * of 0: nothing to do, ZB_OK. */
zb_status zb_cudnn_sdpa_fwd(void *stream, void *out, float *lse, const void *q, const void *k,
                            const void *v, int B, int T, int H, int KVH, int D);
/* Backward: dq [B,T,H,D], dk, dv [B,T,KVH,D] (bf16) written from dout, q,
 * k, v, out and lse as the forward saved them. Statuses as the forward's. */
zb_status zb_cudnn_sdpa_bwd(void *stream, void *dq, void *dk, void *dv, const void *dout,
                            const void *q, const void *k, const void *v, const void *out,
                            const float *lse, int B, int T, int H, int KVH, int D);

/* Device memory the cached plans' workspaces hold now (not in the ledger). */
size_t zb_cudnn_sdpa_workspace_bytes(void);
/* One line for logs: the cuDNN loaded (version, file) and the front end's
 * version, or why none is. */
void zb_cudnn_sdpa_describe(char *buf, size_t n);

/* Frees the cached plans, workspaces and handles (device teardown; waits
 * for the device's work through cudaFree). Safe to call more than once;
 * a later call builds everything again. cuDNN itself stays loaded. */
void zb_cudnn_sdpa_release(void);

#ifdef __cplusplus
}
#endif
#endif
