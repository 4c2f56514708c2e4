/* The cpu backend's registry entry (device_backend.h), and its optional
 * capabilities: the direct BLAS baseline of gemm --compare-direct and the
 * measured FMA peak. */
#include <cblas.h>

#include "cpu_peak.h"
#include "device_backend.h"
#include "device_cpu.h"

static zb_status cpu_probe(char *why, size_t n) {
    if (why && n) why[0] = '\0';
    return ZB_OK; /* every machine has a CPU */
}

static const char *cpu_default_hw(int local_rank) {
    (void)local_rank;
    return "cpu";
}

static void direct_sgemm(const zb_gemm_desc *g) {
    cblas_sgemm(CblasRowMajor, g->trans_a ? CblasTrans : CblasNoTrans,
                g->trans_b ? CblasTrans : CblasNoTrans, (blasint)g->m, (blasint)g->n,
                (blasint)g->k, g->alpha, (const float *)g->a, (blasint)g->lda,
                (const float *)g->b, (blasint)g->ldb, g->beta, (float *)g->c, (blasint)g->ldc);
}

/* cblas_sgemm called from this thread on the device's (host) buffers. */
static zb_status cpu_gemm_direct_time(zb_device *dev, const zb_gemm_desc *g, int64_t warmup,
                                      int64_t iters, double *seconds) {
    *seconds = 0.0;
    if (!zb_dev_mem_is_host(dev) || g->dtype != ZB_DTYPE_F32 || g->c_f32 || iters < 1) {
        return ZB_FAIL(ZB_ERR_INVALID, "direct BLAS: float GEMMs on host memory, at least one "
                       "iteration (got %s, %lld iterations)", zb_dtype_name(g->dtype),
                       (long long)iters);
    }
    for (int64_t i = 0; i < warmup; i++) direct_sgemm(g);
    int64_t t0 = zb_now_ns();
    for (int64_t i = 0; i < iters; i++) direct_sgemm(g);
    *seconds = (double)(zb_now_ns() - t0) / 1e9 / (double)iters;
    return ZB_OK;
}

const zb_device_backend zb_device_backend_cpu = {
    .name = "cpu",
    .probe = cpu_probe,
    .create = zb_device_cpu_create,
    .kernels = zb_kernels_cpu,
    .default_comm = "mpi",
    .default_param_dtype = ZB_DTYPE_F32, /* fp32: the reference GPU runs are checked against */
    .auto_priority = 1,
    .default_hw = cpu_default_hw,
    .gemm_direct_name = "direct BLAS",
    .gemm_direct_time = cpu_gemm_direct_time,
    .gemm_float_only_why = "its bf16 GEMM widens to float first",
    .compute_shares_cores = true, /* the kernels, BLAS and MPI's threads all run on the host's cores */
    .peak_gflops_per_core = zb_cpu_peak_gflops_per_core,
    .peak_isa = zb_cpu_peak_isa,
};
