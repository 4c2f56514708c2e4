/* The no-CUDA fallbacks of cupti_tracer.h and nvtx.h: this file undefines
 * ZB_HAVE_CUDA, ZB_HAVE_CUPTI and ZB_HAVE_NVTX (defined in CUDA builds) before
 * including them, so every build compiles and runs the static inline no-ops a
 * CPU-only build uses: zb_cupti_start returns ZB_ERR_UNSUPPORTED with a
 * one-line reason and the rest does nothing. */
#undef ZB_HAVE_CUDA
#undef ZB_HAVE_CUPTI
#undef ZB_HAVE_NVTX
#include "cupti_tracer.h"
#include "nvtx.h"

#include <string.h>

#include "zb_test.h"

int main(void) {
    zb_trace t;
    ZB_CHECK_OK(zb_trace_init(&t, 0, true));
    zb_error_clear();
    ZB_CHECK(zb_cupti_start(&t, -1) == ZB_ERR_UNSUPPORTED);
    const char *msg = zb_error_message();
    ZB_CHECK_MSG(strstr(msg, "CUPTI") != NULL && strchr(msg, '\n') == NULL,
                 "warning line: \"%s\"", msg);
    ZB_CHECK(!zb_cupti_active());
    ZB_CHECK(zb_cupti_register_stream(NULL, 1, true) == ZB_ERR_UNSUPPORTED);
    zb_op_info info = {ZB_OP_COMM, "unit 0 all-gather", 0, 64, 0.0};
    zb_cupti_op_begin_info(&info, 1);
    zb_cupti_op_begin("unit 0 forward", 0, ZB_OP_COMPUTE, 1e6, 0);
    zb_cupti_op_end();
    zb_cupti_op_end();
    ZB_CHECK(zb_cupti_flush() == ZB_ERR_UNSUPPORTED);
    ZB_CHECK_OK(zb_cupti_stop());
    zb_cupti_stats s;
    ZB_CHECK(zb_cupti_get_stats(&s) == ZB_ERR_UNSUPPORTED);
    ZB_CHECK(strlen(zb_cupti_unavailable_reason()) > 0);
    ZB_CHECK(t.n_records == 0);

    zb_nvtx_push("unit 0 forward");
    zb_nvtx_push_color("unit 0 all-gather", ZB_NVTX_COLOR_COMM);
    zb_nvtx_push_range(ZB_NVTX_OPTIMIZER, -1);
    zb_nvtx_pop();
    zb_nvtx_pop();
    zb_nvtx_pop();
    char buf[32];
    ZB_CHECK(strcmp(zb_nvtx_range_name(ZB_NVTX_ALL_GATHER, 4, buf, sizeof buf), "unit 4 all-gather") ==
             0);
    zb_trace_destroy(&t);
    return zb_test_finish("test_cupti_fallback");
}
