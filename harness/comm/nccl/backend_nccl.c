/* The nccl comm backend's registry entry (comm_backend.h): GPU only. Built
 * without CUDA, the entry says why (ZB_BACKEND_OFF). */
#include "comm_backend.h"

#ifdef ZB_BACKEND_OFF

/* Still GPU only, so "--comm nccl" on cpu reads the same in every build. */
const zb_comm_backend zb_comm_backend_nccl = {
    .name = "nccl", .not_built = ZB_BACKEND_OFF, .device_only = "cuda"};

#else

#include "comm_nccl.h"
#include "nccl_boot.h"

const zb_comm_backend zb_comm_backend_nccl = {
    .name = "nccl",
    .device_only = "cuda", /* NCCL works on CUDA device memory */
    .create = zb_comm_nccl_create,
    .meta = zb_nccl_meta,
};

#endif
