/* The direct cuBLASLt baseline of `gemm --compare-direct` on the CUDA device
 * (zb_cuda_gemm_direct_time, cuda_backend.h): the same GEMM, called the way
 * a program using cuBLASLt directly would call it, with none of the
 * harness's machinery in the way:
 *   - its own cublasLt handle, its own non-blocking cudaStream_t and its own
 *     32 MiB workspace (cudaMalloc, freed after), all on the device's GPU;
 *   - the matmul descriptor and layouts built here from the same row-major
 *     -> column-major mapping as the harness (cublaslt_map.h), the same
 *     types (fp32 or bf16 inputs; output in the inputs' dtype, or fp32 with
 *     c_f32; CUBLAS_COMPUTE_32F, fp32 scale), and the first algorithm
 *     cuBLASLt's heuristic returns for the workspace and the pointers'
 *     alignments; no algorithm cache;
 *   - no harness stream, no op hooks, no CUPTI correlation (the tracer, when
 *     it runs, still sees the kernels: uncorrelated compute on a foreign
 *     stream).
 * Timing: `warmup` GEMMs, a polled wait for them, then `iters` back-to-back
 * cublasLtMatmul calls between two cudaEvents; the result is the events'
 * elapsed time / iters. Every wait polls an event until the device's
 * cfg.timeout_s (zb_cuda_wait_event), never blocking in the runtime.
 *
 * C is g->c (D = C, in place, as the harness runs it), so it holds the last
 * GEMM's result afterwards; with beta != 0 each call compounds.
 *
 * Cleanup waits (polled) for anything still queued before freeing. When a
 * wait timed out the GPU may still be using the workspace, and freeing it
 * (or destroying the handle) would block in the runtime: both are then left
 * allocated, and the message says so. */
#include <stdio.h>
#include <string.h>

#include <cublasLt.h>

#include "cublaslt_map.h"
#include "cuda_check.h"
#include "device_cuda_internal.h"

#define DIRECT_WS_BYTES ZB_CUBLASLT_WORKSPACE_BYTES

typedef struct direct_run {
    int rank;
    const char *shape;
    int prev_device; /* the calling thread's current device, restored; -1: none */
    cublasLtHandle_t handle;
    cudaStream_t stream;
    void *ws;
    cudaEvent_t warm_ev, start_ev, stop_ev;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulPreference_t pref;
    bool issued; /* work was queued on `stream` */
} direct_run;

static zb_status direct_lt_status(cublasStatus_t st) {
    switch (st) {
    case CUBLAS_STATUS_SUCCESS: return ZB_OK;
    case CUBLAS_STATUS_ALLOC_FAILED: return ZB_ERR_NOMEM;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH: return ZB_ERR_UNSUPPORTED;
    default: return ZB_ERR_INTERNAL;
    }
}

/* "rank R: direct cuBLASLt, SHAPE: CALL failed: STRING (NAME)" */
static zb_status direct_lt_fail(const direct_run *r, cublasStatus_t st, const char *file, int line,
                                const char *call) {
    if (st == CUBLAS_STATUS_SUCCESS) return ZB_OK;
    return zb_error_set(direct_lt_status(st), file, line, "rank %d: direct cuBLASLt, %s: %s failed: "
                        "%s (%s)", r->rank, r->shape, call, cublasLtGetStatusString(st),
                        cublasLtGetStatusName(st));
}

static zb_status direct_cuda_fail(const direct_run *r, cudaError_t e, const char *file, int line,
                                  const char *call) {
    if (e == cudaSuccess) return ZB_OK;
    (void)cudaGetLastError();
    return zb_error_set(zb_cuda_status_of(e), file, line, "rank %d: direct cuBLASLt, %s: %s failed: "
                        "%s (%s)", r->rank, r->shape, call, cudaGetErrorString(e),
                        cudaGetErrorName(e));
}

#define DIRECT_LT(r, call)                                                                 \
    do {                                                                                   \
        zb_status d_s_ = direct_lt_fail((r), (call), __FILE__, __LINE__, #call);            \
        if (d_s_ != ZB_OK) return d_s_;                                                    \
    } while (0)
#define DIRECT_CUDA(r, call)                                                               \
    do {                                                                                   \
        zb_status d_s_ = direct_cuda_fail((r), (call), __FILE__, __LINE__, #call);          \
        if (d_s_ != ZB_OK) return d_s_;                                                    \
    } while (0)

/* Polls `ev` with the device's timeout; the message names the shape. */
static zb_status direct_wait(zb_device *dev, const direct_run *r, cudaEvent_t ev, const char *what) {
    char desc[320];
    snprintf(desc, sizeof desc, "the direct cuBLASLt %s (%s)", what, r->shape);
    return zb_cuda_wait_event(cuda_dev(dev), ev, desc);
}

/* Handle, stream, events and workspace on the device's GPU. */
static zb_status direct_setup(zb_device *dev, direct_run *r) {
    (void)cudaGetLastError(); /* the launch checks below see only this call's launches */
    int prev = -1;
    DIRECT_CUDA(r, cudaGetDevice(&prev));
    r->prev_device = prev;
    DIRECT_CUDA(r, cudaSetDevice(zb_device_cuda_ordinal(dev)));
    DIRECT_LT(r, cublasLtCreate(&r->handle));
    DIRECT_CUDA(r, cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking));
    DIRECT_CUDA(r, cudaEventCreate(&r->warm_ev));
    DIRECT_CUDA(r, cudaEventCreate(&r->start_ev));
    DIRECT_CUDA(r, cudaEventCreate(&r->stop_ev));
    DIRECT_CUDA(r, cudaMalloc(&r->ws, DIRECT_WS_BYTES));
    return ZB_OK;
}

/* Descriptor, layouts and the heuristic's first algorithm. */
static zb_status direct_plan(direct_run *r, const zb_lt_gemm *m, cublasLtMatmulAlgo_t *algo) {
    cudaDataType_t t = zb_lt_cuda_type(m->dtype), tc = zb_lt_cuda_type(m->c_dtype);
    DIRECT_LT(r, cublasLtMatmulDescCreate(&r->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = m->a.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = m->b.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    DIRECT_LT(r, cublasLtMatmulDescSetAttribute(r->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    DIRECT_LT(r, cublasLtMatmulDescSetAttribute(r->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    DIRECT_LT(r, cublasLtMatrixLayoutCreate(&r->a, t, m->a.rows, m->a.cols, m->a.ld));
    DIRECT_LT(r, cublasLtMatrixLayoutCreate(&r->b, t, m->b.rows, m->b.cols, m->b.ld));
    DIRECT_LT(r, cublasLtMatrixLayoutCreate(&r->c, tc, m->c.rows, m->c.cols, m->c.ld));
    DIRECT_LT(r, cublasLtMatmulPreferenceCreate(&r->pref));
    uint64_t ws = DIRECT_WS_BYTES;
    uint32_t al_a = zb_ptr_alignment(m->a.ptr), al_b = zb_ptr_alignment(m->b.ptr);
    uint32_t al_c = zb_ptr_alignment(m->c.ptr);
    DIRECT_LT(r, cublasLtMatmulPreferenceSetAttribute(r->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &ws, sizeof ws));
    DIRECT_LT(r, cublasLtMatmulPreferenceSetAttribute(r->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                      &al_a, sizeof al_a));
    DIRECT_LT(r, cublasLtMatmulPreferenceSetAttribute(r->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                                      &al_b, sizeof al_b));
    DIRECT_LT(r, cublasLtMatmulPreferenceSetAttribute(r->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                                      &al_c, sizeof al_c));
    DIRECT_LT(r, cublasLtMatmulPreferenceSetAttribute(r->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                                      &al_c, sizeof al_c));
    cublasLtMatmulHeuristicResult_t res;
    memset(&res, 0, sizeof res);
    int n_res = 0;
    DIRECT_LT(r, cublasLtMatmulAlgoGetHeuristic(r->handle, r->op, r->a, r->b, r->c, r->c, r->pref, 1,
                                                &res, &n_res));
    if (n_res < 1 || res.state != CUBLAS_STATUS_SUCCESS || res.workspaceSize > DIRECT_WS_BYTES) {
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "rank %d: direct cuBLASLt, %s: cuBLASLt's heuristic "
                       "returned no usable algorithm (%d result(s), state %s, workspace %zu of %zu "
                       "bytes; alignments a=%u b=%u c=%u bytes)", r->rank, r->shape, n_res,
                       n_res > 0 ? cublasLtGetStatusName(res.state) : "-",
                       n_res > 0 ? res.workspaceSize : (size_t)0, (size_t)DIRECT_WS_BYTES, al_a,
                       al_b, al_c);
    }
    *algo = res.algo;
    return ZB_OK;
}

/* D = C = g->c, in place (m->c.ptr is the same pointer, read as C). */
static zb_status direct_matmul(direct_run *r, const zb_gemm_desc *g, const zb_lt_gemm *m,
                               const cublasLtMatmulAlgo_t *algo, const float *alpha,
                               const float *beta) {
    r->issued = true;
    DIRECT_LT(r, cublasLtMatmul(r->handle, r->op, alpha, m->a.ptr, r->a, m->b.ptr, r->b, beta,
                                m->c.ptr, r->c, g->c, r->c, algo, r->ws, DIRECT_WS_BYTES,
                                r->stream));
    return ZB_OK;
}

/* Warm-up, a polled wait for it, then the timed loop between two events. */
static zb_status direct_time(zb_device *dev, direct_run *r, const zb_gemm_desc *g, const zb_lt_gemm *m,
                             int64_t warmup, int64_t iters, double *seconds) {
    cublasLtMatmulAlgo_t algo;
    ZB_TRY(direct_plan(r, m, &algo));
    float alpha = g->alpha, beta = g->beta;
    for (int64_t i = 0; i < warmup; i++) ZB_TRY(direct_matmul(r, g, m, &algo, &alpha, &beta));
    DIRECT_CUDA(r, cudaGetLastError()); /* the warm-up's launches */
    DIRECT_CUDA(r, cudaEventRecord(r->warm_ev, r->stream));
    ZB_TRY(direct_wait(dev, r, r->warm_ev, "warm-up"));
    /* The GPU is idle now: the start event is stamped as soon as it is
     * queued, and the elapsed time covers issuing and running the loop. */
    DIRECT_CUDA(r, cudaEventRecord(r->start_ev, r->stream));
    for (int64_t i = 0; i < iters; i++) ZB_TRY(direct_matmul(r, g, m, &algo, &alpha, &beta));
    DIRECT_CUDA(r, cudaEventRecord(r->stop_ev, r->stream));
    DIRECT_CUDA(r, cudaGetLastError()); /* the timed loop's launches */
    ZB_TRY(direct_wait(dev, r, r->stop_ev, "timed loop"));
    float ms = 0.0f;
    DIRECT_CUDA(r, cudaEventElapsedTime(&ms, r->start_ev, r->stop_ev));
    return zb_gemm_direct_seconds((double)ms, iters, r->shape, seconds);
}

/* Frees everything; when the stream may still run (a wait timed out), the
 * workspace and the handle are left allocated and *leaked says so. */
static void direct_teardown(zb_device *dev, direct_run *r, zb_status st, bool *leaked) {
    *leaked = false;
    if (st != ZB_OK && r->issued && r->stream) {
        /* On an error path work may still be queued: it finishes (polled)
         * before the frees. After a timeout it is not waited for again. */
        zb_status w = st == ZB_ERR_TIMEOUT ? ZB_ERR_TIMEOUT : ZB_OK;
        if (w == ZB_OK && cudaEventRecord(r->warm_ev, r->stream) == cudaSuccess) {
            w = zb_cuda_wait_event(cuda_dev(dev), r->warm_ev, "the direct cuBLASLt GEMMs to drain");
        }
        (void)cudaGetLastError();
        *leaked = w == ZB_ERR_TIMEOUT;
    }
    if (r->pref) cublasLtMatmulPreferenceDestroy(r->pref);
    if (r->c) cublasLtMatrixLayoutDestroy(r->c);
    if (r->b) cublasLtMatrixLayoutDestroy(r->b);
    if (r->a) cublasLtMatrixLayoutDestroy(r->a);
    if (r->op) cublasLtMatmulDescDestroy(r->op);
    if (r->stop_ev) cudaEventDestroy(r->stop_ev);
    if (r->start_ev) cudaEventDestroy(r->start_ev);
    if (r->warm_ev) cudaEventDestroy(r->warm_ev);
    if (!*leaked) {
        if (r->ws) cudaFree(r->ws);
        if (r->handle) cublasLtDestroy(r->handle);
    }
    if (r->stream) cudaStreamDestroy(r->stream); /* returns at once; released when idle */
    if (r->prev_device >= 0) cudaSetDevice(r->prev_device);
    (void)cudaGetLastError();
}

zb_status zb_cuda_gemm_direct_time(zb_device *dev, const zb_gemm_desc *g, int64_t warmup,
                                   int64_t iters, double *seconds) {
    *seconds = 0.0;
    zb_lt_gemm m;
    ZB_TRY(zb_gemm_direct_prepare(g, warmup, iters, &m));
    if (!zb_device_is_cuda(dev)) {
        return ZB_FAIL(ZB_ERR_INVALID, "direct cuBLASLt: the %s device is not a CUDA device",
                       dev && dev->ops ? dev->ops->name : "(null)");
    }
    char shape[192];
    zb_gemm_shape_text(g, shape, sizeof shape);
    direct_run r;
    memset(&r, 0, sizeof r);
    r.rank = dev->cfg.rank;
    r.shape = shape;
    r.prev_device = -1;
    zb_status st = direct_setup(dev, &r);
    if (st == ZB_OK) st = direct_time(dev, &r, g, &m, warmup, iters, seconds);
    char msg[ZB_ERROR_MAX];
    snprintf(msg, sizeof msg, "%s", st == ZB_OK ? "" : zb_error_message());
    bool leaked = false;
    direct_teardown(dev, &r, st, &leaked);
    if (st != ZB_OK) {
        *seconds = 0.0;
        if (leaked) {
            size_t len = strlen(msg);
            snprintf(msg + len, sizeof msg - len, " (its %zu-byte workspace and cuBLASLt handle are "
                     "left allocated: the GPU may still be using them)", (size_t)DIRECT_WS_BYTES);
        }
        zb_error_adopt(st, msg); /* the first failure, not a teardown wait's */
    }
    return st;
}
