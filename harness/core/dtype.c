/* Names and sizes of element types. */
#include <string.h>

#include "dtype.h"

size_t zb_dtype_size(zb_dtype t) {
    switch (t) {
    case ZB_DTYPE_F32: return 4;
    case ZB_DTYPE_BF16: return 2;
    case ZB_DTYPE_COUNT: break;
    }
    return 0;
}

const char *zb_dtype_name(zb_dtype t) {
    switch (t) {
    case ZB_DTYPE_F32: return "float";
    case ZB_DTYPE_BF16: return "bf16";
    case ZB_DTYPE_COUNT: break;
    }
    return "unknown";
}

zb_status zb_dtype_parse(const char *text, zb_dtype *out) {
    if (!strcmp(text, "float") || !strcmp(text, "fp32") || !strcmp(text, "f32")) {
        *out = ZB_DTYPE_F32;
        return ZB_OK;
    }
    if (!strcmp(text, "bf16") || !strcmp(text, "bfloat16")) {
        *out = ZB_DTYPE_BF16;
        return ZB_OK;
    }
    return ZB_FAIL(ZB_ERR_INVALID, "unknown datatype '%s' (accepted: float, bf16)", text);
}
