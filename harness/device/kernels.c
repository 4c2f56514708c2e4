/* The kernel table of a device (kernels.h): its backend supplies it. */
#include "kernels.h"

const zb_kernels *zb_kernels_for(zb_device *dev) {
    if (!dev || !dev->ops || !dev->ops->name) {
        ZB_FAIL(ZB_ERR_INVALID, "kernels: no device given");
        return NULL;
    }
    if (!dev->ops->kernels) {
        ZB_FAIL(ZB_ERR_UNSUPPORTED, "kernels: the '%s' device has no kernel table", dev->ops->name);
        return NULL;
    }
    return dev->ops->kernels();
}
