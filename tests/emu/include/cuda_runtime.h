/* cuda_runtime.h for the CPU emulator (tests/emu/): what a kernel source
 * of kernels/cuda/ sees in place of the toolkit's cuda_runtime.h when it is
 * compiled by the host C++ compiler for the test_*_emu tests. The .cu
 * files are first rewritten by tests/emu/cu2cpp.py (kernel<<<...>>>(args)
 * becomes zb_emu_launch(...), extern __shared__ arrays point at the
 * block's dynamic shared memory, __shared__ arrays get poisoned per block);
 * this header supplies the rest: the CUDA keywords as host C++, threadIdx
 * and friends, the device intrinsics the kernels use, and the launch
 * template. The runtime behind it is tests/emu/zb_emu.cpp (see its top
 * comment for what is and is not emulated).
 *
 * Types, enums and dim3 come from the toolkit's own cuda_runtime_api.h, so
 * the kernels and the C test code agree with a real build on every
 * declaration; only the definitions of the runtime functions are ours. */
#ifndef ZB_EMU_CUDA_RUNTIME_H
#define ZB_EMU_CUDA_RUNTIME_H

#include <cuda_runtime_api.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <tuple>
#include <utility>

/* ---- CUDA keywords as host C++ --------------------------------------------------- */
/* Without __CUDACC__ the toolkit defines these as nothing; __shared__ must
 * be one object per block: a static (blocks run one after another, and the
 * rewrite poisons it at each block start). */
#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __constant__
#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __constant__
#ifndef __launch_bounds__
#define __launch_bounds__(...)
#endif

/* ---- built-in variables ---------------------------------------------------------- */
/* Set by the emulator: the running fiber's thread index (restored at every
 * switch) and the block's index and shapes. Read-only to kernel code. */
extern uint3 zb_emu_thread_idx, zb_emu_block_idx;
extern dim3 zb_emu_block_dim, zb_emu_grid_dim;
#define threadIdx (static_cast<const uint3 &>(zb_emu_thread_idx))
#define blockIdx (static_cast<const uint3 &>(zb_emu_block_idx))
#define blockDim (static_cast<const dim3 &>(zb_emu_block_dim))
#define gridDim (static_cast<const dim3 &>(zb_emu_grid_dim))
static const int warpSize = 32;

/* ---- synchronization ------------------------------------------------------------- */
/* Every thread of the block must reach the same __syncthreads (a thread that
 * exits while others wait is reported as barrier divergence). */
void __syncthreads(void);
/* Warp-level operations need the full mask and blockDim a multiple of 32. */
void __syncwarp(unsigned mask = 0xffffffffu);
static inline void __threadfence(void) {}
static inline void __threadfence_block(void) {}

/* ---- warp shuffles --------------------------------------------------------------- */
enum zb_emu_shfl_mode { ZB_EMU_SHFL_IDX, ZB_EMU_SHFL_UP, ZB_EMU_SHFL_DOWN, ZB_EMU_SHFL_XOR };
/* Exchanges 8 bytes between the lanes of the calling warp (all 32 lanes
 * must call it, as with a full mask on a GPU). */
uint64_t zb_emu_shfl(unsigned mask, uint64_t bits, zb_emu_shfl_mode mode, int arg, int width);

template <typename T>
static inline T zb_emu_shfl_t(unsigned mask, T v, zb_emu_shfl_mode mode, int arg, int width) {
    static_assert(sizeof(T) <= sizeof(uint64_t), "shuffles move at most 8 bytes");
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof v);
    bits = zb_emu_shfl(mask, bits, mode, arg, width);
    memcpy(&v, &bits, sizeof v);
    return v;
}
template <typename T>
static inline T __shfl_sync(unsigned mask, T v, int src_lane, int width = 32) {
    return zb_emu_shfl_t(mask, v, ZB_EMU_SHFL_IDX, src_lane, width);
}
template <typename T>
static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
    return zb_emu_shfl_t(mask, v, ZB_EMU_SHFL_UP, (int)delta, width);
}
template <typename T>
static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
    return zb_emu_shfl_t(mask, v, ZB_EMU_SHFL_DOWN, (int)delta, width);
}
template <typename T>
static inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
    return zb_emu_shfl_t(mask, v, ZB_EMU_SHFL_XOR, lane_mask, width);
}

/* ---- atomics: trivially atomic (one fiber runs at a time) ------------------------ */
#define ZB_EMU_ATOMIC(T)                                                        \
    static inline T atomicAdd(T *p, T v) { T o = *p; *p = o + v; return o; }   \
    static inline T atomicExch(T *p, T v) { T o = *p; *p = v; return o; }
ZB_EMU_ATOMIC(int)
ZB_EMU_ATOMIC(unsigned)
ZB_EMU_ATOMIC(unsigned long long)
ZB_EMU_ATOMIC(float)
ZB_EMU_ATOMIC(double)
#undef ZB_EMU_ATOMIC
#define ZB_EMU_ATOMIC_INT(T)                                                                   \
    static inline T atomicMax(T *p, T v) { T o = *p; if (v > o) *p = v; return o; }           \
    static inline T atomicMin(T *p, T v) { T o = *p; if (v < o) *p = v; return o; }           \
    static inline T atomicCAS(T *p, T cmp, T v) { T o = *p; if (o == cmp) *p = v; return o; }
ZB_EMU_ATOMIC_INT(int)
ZB_EMU_ATOMIC_INT(unsigned)
ZB_EMU_ATOMIC_INT(unsigned long long)
#undef ZB_EMU_ATOMIC_INT

/* ---- intrinsics ------------------------------------------------------------------ */
static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, sizeof u); return u; }
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, sizeof f); return f; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, sizeof i); return i; }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, sizeof f); return f; }
template <typename T>
static inline T __ldg(const T *p) { return *p; }
/* Fast-math intrinsics are exact here (glibc's math.h already declares
 * __expf, __logf, ... as the accurate functions). */
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline float __fdividef(float a, float b) { return a / b; }

/* The real cuda_runtime.h's typed overload (the _api header has the
 * const void * one). */
template <typename T>
static inline cudaError_t cudaFuncSetAttribute(T *entry, enum cudaFuncAttribute attr, int value) {
    return cudaFuncSetAttribute((const void *)entry, attr, value);
}

/* ---- shared memory (used by the rewritten sources) ------------------------------- */
/* The current block's dynamic shared memory (the launch's size, poisoned). */
void *zb_emu_dynamic_smem(void);
/* Fills a __shared__ object with 0xff bytes (NaN) the first time a thread
 * of the block reaches its declaration. */
void zb_emu_shared_poison(void *p, size_t bytes);

/* ---- launches (used by the rewritten sources) ------------------------------------ */
struct zb_emu_site { /* where a launch is written, for messages */
    const char *kernel, *file;
    int line;
    const char *caller;
};
#define ZB_EMU_SITE(kernel) (zb_emu_site{kernel, __FILE__, __LINE__, __PRETTY_FUNCTION__})

struct zb_emu_config {
    dim3 grid, block;
    size_t smem;
    cudaStream_t stream;
};
static inline zb_emu_config zb_emu_cfg(dim3 grid, dim3 block, size_t smem = 0,
                                       cudaStream_t stream = 0) {
    return zb_emu_config{grid, block, smem, stream};
}

/* Runs body(arg) as every thread of every block of the grid, or refuses
 * the launch (cudaGetLastError reports it). ptrs[n_ptrs] are the pointer
 * arguments, checked to be device memory. */
void zb_emu_run(const void *kernel, const zb_emu_site &site, const zb_emu_config &cfg,
                void (*body)(void *), void *arg, const void *const *ptrs, size_t n_ptrs);

template <typename T>
static inline const void *zb_emu_ptr_arg(T *p) { return (const void *)p; }
template <typename T>
static inline const void *zb_emu_ptr_arg(const T &) { return nullptr; }

/* kernel<<<cfg>>>(args...): the arguments are converted to the kernel's
 * parameter types once, at the launch (as CUDA does), then every thread
 * calls the kernel with them. */
template <typename... P, typename... A>
static void zb_emu_launch(void (*kernel)(P...), const zb_emu_site &site, const zb_emu_config &cfg,
                          A &&...args) {
    static_assert(sizeof...(P) == sizeof...(A), "wrong number of kernel arguments");
    struct closure {
        void (*kernel)(P...);
        std::tuple<P...> params;
    } c{kernel, std::tuple<P...>(std::forward<A>(args)...)};
    const void *ptrs[sizeof...(P) + 1] = {nullptr};
    size_t n = 0;
    std::apply([&](const P &...p) { ((ptrs[n++] = zb_emu_ptr_arg(p)), ...); }, c.params);
    zb_emu_run((const void *)kernel, site, cfg,
               [](void *a) {
                   closure *cl = (closure *)a;
                   std::apply(cl->kernel, cl->params);
               },
               &c, ptrs, n);
}

#endif
