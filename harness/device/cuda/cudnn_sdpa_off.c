/* cudnn_sdpa.h in a CUDA build without cuDNN's SDPA (cudnn.h or the cuDNN
 * front end's headers not found, or -DZB_WITH_CUDNN=OFF): never usable, so
 * the cuda kernel table runs zerobench's own tiled attention kernel.
 * ZB_CUDNN_OFF_WHY (harness/device/cuda/CMakeLists.txt) says why. */
#include "cudnn_sdpa.h"

#include <stdio.h>

#ifndef ZB_CUDNN_OFF_WHY
#define ZB_CUDNN_OFF_WHY "built without cuDNN"
#endif

bool zb_cudnn_sdpa_usable(zb_dtype dtype, int D, const char **why) {
    (void)dtype;
    (void)D;
    if (why) *why = ZB_CUDNN_OFF_WHY;
    return false;
}

zb_status zb_cudnn_sdpa_prepare(bool backward, int B, int T, int H, int KVH, int D,
                                bool *first_refusal) {
    if (first_refusal) *first_refusal = false;
    return ZB_FAIL(ZB_ERR_UNSUPPORTED, "cuDNN SDPA %s B=%d T=%d H=%d KVH=%d D=%d: %s",
                   backward ? "attention_bwd" : "attention_fwd", B, T, H, KVH, D, ZB_CUDNN_OFF_WHY);
}

zb_status zb_cudnn_sdpa_fwd(void *stream, void *out, float *lse, const void *q, const void *k,
                            const void *v, int B, int T, int H, int KVH, int D) {
    (void)stream, (void)out, (void)lse, (void)q, (void)k, (void)v;
    return zb_cudnn_sdpa_prepare(false, B, T, H, KVH, D, NULL);
}

zb_status zb_cudnn_sdpa_bwd(void *stream, void *dq, void *dk, void *dv, const void *dout,
                            const void *q, const void *k, const void *v, const void *out,
                            const float *lse, int B, int T, int H, int KVH, int D) {
    (void)stream, (void)dq, (void)dk, (void)dv, (void)dout, (void)q, (void)k, (void)v, (void)out,
        (void)lse;
    return zb_cudnn_sdpa_prepare(true, B, T, H, KVH, D, NULL);
}

size_t zb_cudnn_sdpa_workspace_bytes(void) { return 0; }

void zb_cudnn_sdpa_describe(char *buf, size_t n) {
    if (buf && n) snprintf(buf, n, "cuDNN SDPA: %s", ZB_CUDNN_OFF_WHY);
}

void zb_cudnn_sdpa_release(void) {}
