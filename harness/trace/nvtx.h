/* NVTX ranges (header-only NVTX3) so a Nsight Systems timeline reads like
 * zerobench's own trace. The engine calls them; with
 * ZB_HAVE_NVTX (CUDA builds) they wrap nvtxRangePushEx/nvtxRangePop from
 * <nvtx3/nvToolsExt.h> (CUDA's include/nvtx3; nothing to link: NVTX3 loads a
 * tool's injection library only when one is attached), otherwise they are
 * empty static inlines.
 *
 * Range names (the same words as the trace's op labels):
 *   "unit <u> forward"         a unit's forward compute
 *   "unit <u> backward"        a unit's backward compute (with recompute)
 *   "unit <u> all-gather"      gathering a unit's parameters
 *   "unit <u> reduce-scatter"  reducing a unit's gradients
 *   "optimizer step"           the sharded AdamW step
 * Colors: compute green, communication blue, optimizer orange.
 *
 * Ranges are per host thread and nest (push/pop); they mark when the host
 * issued the work. Nsight Systems projects them onto the GPU rows of the
 * streams the work ran on. Keep each push and its pop on one thread. */
#ifndef ZB_NVTX_H
#define ZB_NVTX_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef ZB_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum zb_nvtx_range {
    ZB_NVTX_FORWARD = 0,
    ZB_NVTX_BACKWARD,
    ZB_NVTX_ALL_GATHER,
    ZB_NVTX_REDUCE_SCATTER,
    ZB_NVTX_OPTIMIZER,
    ZB_NVTX_RANGE_COUNT
} zb_nvtx_range;

#define ZB_NVTX_COLOR_COMPUTE 0xFF2CA02Cu   /* ARGB green */
#define ZB_NVTX_COLOR_COMM 0xFF1F77B4u      /* ARGB blue */
#define ZB_NVTX_COLOR_OPTIMIZER 0xFFFF7F0Eu /* ARGB orange */

static inline uint32_t zb_nvtx_range_color(zb_nvtx_range r) {
    switch (r) {
    case ZB_NVTX_ALL_GATHER:
    case ZB_NVTX_REDUCE_SCATTER: return ZB_NVTX_COLOR_COMM;
    case ZB_NVTX_OPTIMIZER: return ZB_NVTX_COLOR_OPTIMIZER;
    default: return ZB_NVTX_COLOR_COMPUTE;
    }
}

/* Writes the range's name (see above) into buf; returns buf. */
static inline const char *zb_nvtx_range_name(zb_nvtx_range r, int unit, char *buf, size_t size) {
    static const char *const what[ZB_NVTX_RANGE_COUNT] = {"forward", "backward", "all-gather",
                                                          "reduce-scatter", "optimizer step"};
    if (!buf || size == 0) return buf;
    if ((unsigned)r >= ZB_NVTX_RANGE_COUNT) {
        snprintf(buf, size, "range %d", (int)r);
    } else if (r == ZB_NVTX_OPTIMIZER) {
        snprintf(buf, size, "%s", what[r]);
    } else {
        snprintf(buf, size, "unit %d %s", unit, what[r]);
    }
    return buf;
}

/* Opens a range named `name` with an ARGB color (0: the tool's default). */
static inline void zb_nvtx_push_color(const char *name, uint32_t argb) {
#ifdef ZB_HAVE_NVTX
    nvtxEventAttributes_t attr;
    memset(&attr, 0, sizeof attr);
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.colorType = argb ? NVTX_COLOR_ARGB : NVTX_COLOR_UNKNOWN;
    attr.color = argb;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = name ? name : "";
    nvtxRangePushEx(&attr);
#else
    (void)name;
    (void)argb;
#endif
}

static inline void zb_nvtx_push(const char *name) {
#ifdef ZB_HAVE_NVTX
    nvtxRangePushA(name ? name : "");
#else
    (void)name;
#endif
}

static inline void zb_nvtx_pop(void) {
#ifdef ZB_HAVE_NVTX
    nvtxRangePop();
#endif
}

/* Opens one of the named ranges above for `unit` (ignored for the optimizer). */
static inline void zb_nvtx_push_range(zb_nvtx_range r, int unit) {
#ifdef ZB_HAVE_NVTX
    char name[64];
    zb_nvtx_push_color(zb_nvtx_range_name(r, unit, name, sizeof name), zb_nvtx_range_color(r));
#else
    (void)r;
    (void)unit;
#endif
}

#ifdef __cplusplus
}
#endif
#endif
