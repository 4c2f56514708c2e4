/* Element types: names, sizes and the spellings flags accept. */
#ifndef ZB_DTYPE_H
#define ZB_DTYPE_H

#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum zb_dtype {
    ZB_DTYPE_F32 = 0,
    ZB_DTYPE_BF16,
    ZB_DTYPE_COUNT
} zb_dtype;

size_t zb_dtype_size(zb_dtype t);
const char *zb_dtype_name(zb_dtype t);
/* Parses "float"/"fp32"/"f32" or "bf16"/"bfloat16"; ZB_ERR_INVALID otherwise. */
zb_status zb_dtype_parse(const char *text, zb_dtype *out);

#ifdef __cplusplus
}
#endif
#endif
