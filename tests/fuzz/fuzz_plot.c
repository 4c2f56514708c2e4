/* Fuzz target for plot's reading of its inputs (tools/results.c,
 * tools/plot.c's input check, the figure builders of tools/plot_*.c): the
 * input is parsed as plot reads a file, taken as a trace or a results file,
 * and every figure kind's data is built from it; gnuplot is never run.
 * Never a crash or a leak. A refusal must be ZB_ERR_INVALID (or NOMEM)
 * with a message; a builder either makes data (data_len long, no NUL
 * inside) or says why not (checked here; a violation aborts). Replayed
 * over tests/fuzz/corpus/fuzz_plot/ by CTest; with -DZB_FUZZ=ON (clang) it
 * builds as a libFuzzer binary. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_kind(const zb_plot_kind *k, const zb_plot_inputs *in) {
    zb_plot_out o;
    memset(&o, 0, sizeof o);
    if (k->build(in, &o)) {
        if (!o.data || strlen(o.data) != o.data_len) abort();
        if (o.ref && strlen(o.ref) != o.ref_len) abort();
    } else if (!o.why[0] || o.data || o.ref) {
        abort();
    }
    free(o.data);
    free(o.ref);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    json_t *d = NULL;
    zb_plot_input file;
    zb_status s = zb_results_parse("in.json", (const char *)data, size, &d);
    if (s == ZB_OK) s = zb_plot_input_take("in.json", d, &file);
    if (s != ZB_OK) {
        if ((s != ZB_ERR_INVALID && s != ZB_ERR_NOMEM) || zb_error_message()[0] == '\0') abort();
        return 0;
    }
    zb_plot_inputs in = {&file, 1, 0};
    for (int i = 0; zb_plot_kind_at(i); i++) check_kind(zb_plot_kind_at(i), &in);
    json_decref(file.doc);
    return 0;
}
