/* The NCCL comm's entry points in a build without CUDA: each says so. With
 * CUDA, harness/comm/nccl/comm_nccl.c defines them and this file is empty. */
#include "comm.h"
#include "comm_nccl.h"
#include "nccl_boot.h"

#ifndef ZB_HAVE_CUDA

zb_status zb_comm_nccl_create(zb_device *dev, zb_stream *const *streams, int n_streams,
                              const zb_comm_config *cfg, zb_comm **out) {
    (void)dev, (void)streams, (void)n_streams, (void)cfg;
    *out = NULL;
    return ZB_FAIL(ZB_ERR_UNSUPPORTED, "--comm nccl: zerobench was built without CUDA "
                   "(rebuild with nvcc found, or -DZB_WITH_CUDA=ON)");
}

zb_status zb_comm_nccl_wait(zb_comm *c, zb_stream *s, const char *op, int unit) {
    (void)c, (void)s, (void)op, (void)unit;
    return ZB_FAIL(ZB_ERR_UNSUPPORTED, "the nccl comm: zerobench was built without CUDA");
}

zb_status zb_nccl_meta(json_t *meta) {
    (void)meta;
    return ZB_OK;
}

#else
typedef int zb_comm_nccl_stub_unused; /* keeps the translation unit non-empty */
#endif
