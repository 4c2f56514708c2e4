/* The bytes each element-wise kernel moves (kernel_bytes.h). */
#include "kernel_bytes.h"

/* n elements of the storage dtype, and of fp32 */
static double st_b(zb_dtype st, double n) { return n * (double)zb_dtype_size(st); }
static double f4(double n) { return 4.0 * n; }

double zb_kbytes_embedding_fwd(zb_dtype st, int N, int C) { return 2.0 * st_b(st, (double)N * C) + f4(N); }
double zb_kbytes_embedding_bwd(zb_dtype st, int N, int C) {
    double nc = (double)N * C;
    return st_b(st, nc) + f4(N) + 2.0 * f4(nc);
}
double zb_kbytes_rmsnorm_fwd(zb_dtype st, int N, int C) {
    return 2.0 * st_b(st, (double)N * C) + st_b(st, C) + f4(N);
}
double zb_kbytes_rmsnorm_bwd(zb_dtype st, int N, int C) {
    return 3.0 * st_b(st, (double)N * C) + st_b(st, C) + f4(N) + 2.0 * f4(C);
}
double zb_kbytes_rope(zb_dtype st, int B, int T, int NH, int D) { return 2.0 * st_b(st, (double)B * T * NH * D); }
double zb_kbytes_swiglu_fwd(zb_dtype st, size_t n) { return st_b(st, 3.0 * (double)n); }
double zb_kbytes_swiglu_bwd(zb_dtype st, size_t n) { return st_b(st, 5.0 * (double)n); }
double zb_kbytes_residual_fwd(zb_dtype st, size_t n) { return st_b(st, 3.0 * (double)n); }
double zb_kbytes_accumulate(zb_dtype st, size_t n) { return st_b(st, 3.0 * (double)n); }
double zb_kbytes_cross_entropy_fwd(zb_dtype st, int N, int V) {
    return st_b(st, (double)N * V) + f4(2.0 * N) + f4(1);
}
double zb_kbytes_cross_entropy_bwd(zb_dtype st, int N, int V) {
    return 2.0 * st_b(st, (double)N * V) + f4(2.0 * N);
}
double zb_kbytes_adamw(size_t n) { return f4(7.0 * (double)n); }
double zb_kbytes_fill(size_t n) { return f4((double)n); }
double zb_kbytes_cast(zb_dtype dst, zb_dtype src, size_t n) {
    return (double)n * (double)(zb_dtype_size(dst) + zb_dtype_size(src));
}
