/* The bytes each element-wise kernel of kernels.h moves: what it reads
 * plus what it writes, from its arguments as kernels.h defines them (void *
 * buffers in the storage dtype `st`, float * buffers fp32). One count for
 * everyone who needs it: the sim device costs these kernels by it
 * (sim_kernels.c), and `zerobench kernels` reports the bandwidth each one
 * reached over it, which calibrate turns into the sim's per-kernel
 * efficiency (docs/design.md §6). */
#ifndef ZB_KERNEL_BYTES_H
#define ZB_KERNEL_BYTES_H

#include <stddef.h>

#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

double zb_kbytes_embedding_fwd(zb_dtype st, int N, int C);
double zb_kbytes_embedding_bwd(zb_dtype st, int N, int C); /* dtable rows read and written, fp32 */
double zb_kbytes_rmsnorm_fwd(zb_dtype st, int N, int C);
double zb_kbytes_rmsnorm_bwd(zb_dtype st, int N, int C);
double zb_kbytes_rope(zb_dtype st, int B, int T, int NH, int D); /* forward and backward alike */
double zb_kbytes_swiglu_fwd(zb_dtype st, size_t n);
double zb_kbytes_swiglu_bwd(zb_dtype st, size_t n);
double zb_kbytes_residual_fwd(zb_dtype st, size_t n);
double zb_kbytes_accumulate(zb_dtype st, size_t n);
double zb_kbytes_cross_entropy_fwd(zb_dtype st, int N, int V);
double zb_kbytes_cross_entropy_bwd(zb_dtype st, int N, int V);
double zb_kbytes_adamw(size_t n); /* params, m, v read and written, grads read: fp32 */
double zb_kbytes_fill(size_t n);
double zb_kbytes_cast(zb_dtype dst, zb_dtype src, size_t n);

/* The same blocks as PyTorch eager runs them (kernel_bytes_eager.c): the
 * bytes all their kernels move and how many kernels they are, for the
 * sim's sim.elementwise "eager". The embedding, residual add, gradient
 * accumulation, fill and cast are one torch op each, as in the engine. */
typedef struct zb_kcost {
    double bytes;
    int ops;
} zb_kcost;
zb_kcost zb_keager_rmsnorm_fwd(zb_dtype st, int N, int C);
zb_kcost zb_keager_rmsnorm_bwd(zb_dtype st, int N, int C);
zb_kcost zb_keager_rope(zb_dtype st, int B, int T, int NH, int D); /* forward and backward alike */
zb_kcost zb_keager_swiglu_fwd(zb_dtype st, size_t n);
zb_kcost zb_keager_swiglu_bwd(zb_dtype st, size_t n);
zb_kcost zb_keager_cross_entropy_fwd(zb_dtype st, int N, int V);
zb_kcost zb_keager_cross_entropy_bwd(zb_dtype st, int N, int V);
zb_kcost zb_keager_adamw(size_t n);

#ifdef __cplusplus
}
#endif
#endif
