/* GEMM on the CUDA device through cuBLASLt.
 *
 * Row-major zb_gemm_desc C[M,N] = alpha op(A)[M,K] op(B)[K,N] + beta C is
 * run as cuBLASLt's column-major C^T = op(B)^T op(A)^T (the mapping and its
 * reasoning: harness/device/cuda/cublaslt_map.h). Dtypes: fp32 (CUBLAS_COMPUTE_32F, no
 * TF32); bf16 inputs and output with fp32 accumulate (CUBLAS_COMPUTE_32F,
 * scale type fp32); bf16 inputs with an fp32 C and D (the desc's c_f32:
 * same compute and scale types, C/D layouts CUDA_R_32F), a combination
 * cublasLtMatmul supports. alpha and beta are host floats. In place: D = C.
 *
 * Per key (shape, strides, transposes, dtype, c_f32, pointer alignments) a "plan"
 * is built once: the matmul descriptor, the three layouts and the algorithm
 * cuBLASLt's heuristic picks for a 32 MiB workspace; later GEMMs of the same
 * key only call cublasLtMatmul. The workspace is the calling stream's (the
 * device allocates one per stream, tag ZB_MEM_WORKSPACE), so GEMMs on two
 * streams never share scratch memory. Errors name the rank and the shape. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>

#include "cublaslt_map.h"
#include "cuda_check.h"
#include "device_cuda_internal.h"

typedef struct lt_plan {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
    size_t ws_bytes;
} lt_plan;

struct zb_cublaslt {
    cublasLtHandle_t handle;
    pthread_mutex_t lock; /* guards the cache */
    zb_gemm_cache cache;
};

static zb_status lt_status_of(cublasStatus_t st) {
    switch (st) {
    case CUBLAS_STATUS_SUCCESS: return ZB_OK;
    case CUBLAS_STATUS_ALLOC_FAILED: return ZB_ERR_NOMEM;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH: return ZB_ERR_UNSUPPORTED;
    default: return ZB_ERR_INTERNAL;
    }
}

static zb_status lt_fail(cublasStatus_t st, int rank, const char *file, int line,
                         const char *call, const char *shape) {
    if (st == CUBLAS_STATUS_SUCCESS) return ZB_OK;
    return zb_error_set(lt_status_of(st), file, line, "rank %d: %s: %s failed: %s (%s)", rank,
                        shape, call, cublasLtGetStatusString(st), cublasLtGetStatusName(st));
}

#define LT_TRY(call)                                                                  \
    do {                                                                              \
        zb_status lt_s_ = lt_fail((call), rank, __FILE__, __LINE__, #call, shape);    \
        if (lt_s_ != ZB_OK) return lt_s_;                                             \
    } while (0)

static void plan_free(void *ctx, void *value) {
    (void)ctx;
    lt_plan *p = (lt_plan *)value;
    if (!p) return;
    if (p->c) cublasLtMatrixLayoutDestroy(p->c);
    if (p->b) cublasLtMatrixLayoutDestroy(p->b);
    if (p->a) cublasLtMatrixLayoutDestroy(p->a);
    if (p->op) cublasLtMatmulDescDestroy(p->op);
    free(p);
}

static zb_status pref_set_u32(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
                              uint32_t v, int rank, const char *shape) {
    LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, attr, &v, sizeof v));
    return ZB_OK;
}

/* Asks the heuristic for an algorithm that fits the workspace and the
 * pointers' alignments; fills p->algo. */
static zb_status plan_pick_algo(zb_cublaslt *lt, lt_plan *p, const zb_gemm_key *key, int rank,
                                const char *shape) {
    cublasLtMatmulPreference_t pref = NULL;
    LT_TRY(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws = ZB_CUBLASLT_WORKSPACE_BYTES;
    zb_status st = lt_fail(cublasLtMatmulPreferenceSetAttribute(
                               pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
                           rank, __FILE__, __LINE__, "cublasLtMatmulPreferenceSetAttribute", shape);
    /* Lt's A is the caller's B and Lt's B the caller's A (cublaslt_map.h). */
    if (st == ZB_OK) st = pref_set_u32(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key->align_b, rank, shape);
    if (st == ZB_OK) st = pref_set_u32(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key->align_a, rank, shape);
    if (st == ZB_OK) st = pref_set_u32(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key->align_c, rank, shape);
    if (st == ZB_OK) st = pref_set_u32(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key->align_c, rank, shape);
    cublasLtMatmulHeuristicResult_t res[8];
    memset(res, 0, sizeof res);
    int n_res = 0;
    if (st == ZB_OK) {
        cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt->handle, p->op, p->a, p->b, p->c, p->c,
                                                           pref, 8, res, &n_res);
        if (hs != CUBLAS_STATUS_SUCCESS && hs != CUBLAS_STATUS_NOT_SUPPORTED) {
            st = lt_fail(hs, rank, __FILE__, __LINE__, "cublasLtMatmulAlgoGetHeuristic", shape);
        }
    }
    cublasLtMatmulPreferenceDestroy(pref);
    ZB_TRY(st);
    for (int i = 0; i < n_res; i++) {
        if (res[i].state == CUBLAS_STATUS_SUCCESS && res[i].workspaceSize <= ZB_CUBLASLT_WORKSPACE_BYTES) {
            p->algo = res[i].algo;
            p->ws_bytes = res[i].workspaceSize;
            return ZB_OK;
        }
    }
    return ZB_FAIL(ZB_ERR_UNSUPPORTED, "rank %d: %s: cuBLASLt's heuristic found no algorithm "
                   "(alignments a=%u b=%u c=%u bytes, workspace %zu bytes)", rank, shape,
                   key->align_a, key->align_b, key->align_c, (size_t)ZB_CUBLASLT_WORKSPACE_BYTES);
}

static zb_status plan_build(zb_cublaslt *lt, const zb_lt_gemm *m, const zb_gemm_key *key, int rank,
                            const char *shape, lt_plan *p) {
    cudaDataType_t t = zb_lt_cuda_type(m->dtype), tc = zb_lt_cuda_type(m->c_dtype);
    LT_TRY(cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = m->a.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = m->b.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    LT_TRY(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT_TRY(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    LT_TRY(cublasLtMatrixLayoutCreate(&p->a, t, m->a.rows, m->a.cols, m->a.ld));
    LT_TRY(cublasLtMatrixLayoutCreate(&p->b, t, m->b.rows, m->b.cols, m->b.ld));
    LT_TRY(cublasLtMatrixLayoutCreate(&p->c, tc, m->c.rows, m->c.cols, m->c.ld));
    return plan_pick_algo(lt, p, key, rank, shape);
}

/* The cached plan for g's key, built on a miss. */
static zb_status plan_get(zb_cublaslt *lt, const zb_gemm_desc *g, const zb_lt_gemm *m, int rank,
                          const char *shape, lt_plan **out) {
    zb_gemm_key key;
    zb_gemm_key_of(g, &key);
    pthread_mutex_lock(&lt->lock);
    lt_plan *p = (lt_plan *)zb_gemm_cache_find(&lt->cache, &key);
    zb_status st = ZB_OK;
    if (!p) {
        p = (lt_plan *)calloc(1, sizeof *p);
        st = p ? plan_build(lt, m, &key, rank, shape, p)
               : ZB_FAIL(ZB_ERR_NOMEM, "rank %d: %s: out of memory for a GEMM plan", rank, shape);
        if (st == ZB_OK) st = zb_gemm_cache_insert(&lt->cache, &key, p);
        if (st != ZB_OK) {
            plan_free(NULL, p);
            p = NULL;
        }
    }
    pthread_mutex_unlock(&lt->lock);
    *out = p;
    return st;
}

zb_status zb_cublaslt_gemm(zb_cublaslt *lt, int rank, cudaStream_t stream, void *workspace,
                           size_t workspace_bytes, const zb_gemm_desc *g) {
    char shape[192];
    zb_gemm_shape_text(g, shape, sizeof shape);
    zb_lt_gemm m;
    zb_status st = zb_lt_map_gemm(g, &m);
    if (st != ZB_OK) {
        char msg[ZB_ERROR_MAX];
        snprintf(msg, sizeof msg, "rank %d: %s", rank, zb_error_message());
        zb_error_adopt(st, msg);
        return st;
    }
    lt_plan *p = NULL;
    ZB_TRY(plan_get(lt, g, &m, rank, shape, &p));
    if (p->ws_bytes > workspace_bytes) {
        return ZB_FAIL(ZB_ERR_INTERNAL, "rank %d: %s: the algorithm needs %zu workspace bytes, the "
                       "stream has %zu", rank, shape, p->ws_bytes, workspace_bytes);
    }
    float alpha = g->alpha, beta = g->beta;
    LT_TRY(cublasLtMatmul(lt->handle, p->op, &alpha, m.a.ptr, p->a, m.b.ptr, p->b, &beta, m.c.ptr,
                          p->c, g->c, p->c, &p->algo, workspace, workspace_bytes, stream));
    /* Launch-error check for the kernel(s) cuBLASLt launched. */
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        return ZB_FAIL(zb_cuda_status_of(e), "rank %d: %s: launch failed: %s (%s)", rank, shape,
                       cudaGetErrorString(e), cudaGetErrorName(e));
    }
    return ZB_OK;
}

zb_status zb_cublaslt_create(int rank, zb_cublaslt **out) {
    *out = NULL;
    const char *shape = "cuBLASLt setup";
    zb_cublaslt *lt = (zb_cublaslt *)calloc(1, sizeof *lt);
    if (!lt) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory creating the cuBLASLt state");
    zb_status st = lt_fail(cublasLtCreate(&lt->handle), rank, __FILE__, __LINE__,
                           "cublasLtCreate", shape);
    if (st != ZB_OK) {
        free(lt);
        return st;
    }
    pthread_mutex_init(&lt->lock, NULL);
    zb_gemm_cache_init(&lt->cache, plan_free, NULL);
    *out = lt;
    return ZB_OK;
}

void zb_cublaslt_destroy(zb_cublaslt *lt) {
    if (!lt) return;
    zb_gemm_cache_destroy(&lt->cache);
    cublasLtDestroy(lt->handle);
    pthread_mutex_destroy(&lt->lock);
    free(lt);
}

void zb_cublaslt_cache_stats(zb_cublaslt *lt, size_t *entries, uint64_t *hits, uint64_t *misses) {
    pthread_mutex_lock(&lt->lock);
    if (entries) *entries = lt->cache.count;
    if (hits) *hits = lt->cache.hits;
    if (misses) *misses = lt->cache.misses;
    pthread_mutex_unlock(&lt->lock);
}
