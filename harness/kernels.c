/* Picks the kernel table (kernels.h) that matches a device backend. */
#include <string.h>

#include "kernels.h"

const zb_kernels *zb_kernels_for(zb_device *dev) {
    if (!dev || !dev->ops || !dev->ops->name) {
        ZB_FAIL(ZB_ERR_INVALID, "kernels: no device given");
        return NULL;
    }
    if (!strcmp(dev->ops->name, "cpu")) return zb_kernels_cpu();
#if defined(ZB_HAVE_CUDA)
    if (!strcmp(dev->ops->name, "cuda")) return zb_kernels_cuda();
    ZB_FAIL(ZB_ERR_UNSUPPORTED, "kernels: the '%s' device has no kernel table (accepted: cpu, cuda)",
            dev->ops->name);
#else
    ZB_FAIL(ZB_ERR_UNSUPPORTED, "kernels: the '%s' device has no kernel table (accepted: cpu)",
            dev->ops->name);
#endif
    return NULL;
}
