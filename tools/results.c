/* Loading and checking results files (results.h). */
#include <stdlib.h>
#include <string.h>

#include "input_file.h"
#include "out_path.h"
#include "report.h"
#include "results.h"

const char *zb_results_shown_path(const char *path, char out[72]) { return zb_shown_path(path, out); }

zb_status zb_results_parse(const char *path, const char *text, size_t len, json_t **doc) {
    char shown[72];
    json_error_t err;
    *doc = json_loadb(text, len, 0, &err);
    if (*doc) return ZB_OK;
    return ZB_FAIL(ZB_ERR_INVALID, "'%s': not JSON (line %d: %s)", zb_results_shown_path(path, shown), err.line,
                   err.text);
}

zb_status zb_results_read(const char *path, json_t **doc) {
    char *text = NULL;
    size_t len = 0;
    *doc = NULL;
    ZB_TRY(zb_input_read(path, ZB_RESULTS_MAX_BYTES, &text, &len, NULL));
    zb_status s = zb_results_parse(path, text, len, doc);
    free(text);
    return s;
}

zb_status zb_results_check(const char *path, const json_t *d) {
    char shown[72];
    zb_results_shown_path(path, shown);
    const char *schema = json_string_value(json_object_get(d, "schema"));
    const json_t *runs = json_object_get(d, "runs");
    zb_status s = ZB_OK;
    if (!json_is_object(d)) s = ZB_FAIL(ZB_ERR_INVALID, "'%s': not a results object", shown);
    else if (!schema) s = ZB_FAIL(ZB_ERR_INVALID, "'%s': no \"schema\" (accepted: %s)", shown, ZB_REPORT_SCHEMA);
    else if (strcmp(schema, ZB_REPORT_SCHEMA)) {
        s = ZB_FAIL(ZB_ERR_INVALID, "'%s': schema '%.32s' (accepted: %s)", shown, schema, ZB_REPORT_SCHEMA);
    } else if (!json_is_array(runs)) s = ZB_FAIL(ZB_ERR_INVALID, "'%s': \"runs\" is not an array", shown);
    for (size_t i = 0; s == ZB_OK && i < json_array_size(runs); i++) {
        if (!json_is_object(json_array_get(runs, i))) {
            s = ZB_FAIL(ZB_ERR_INVALID, "'%s': runs[%zu] is not an object", shown, i);
        }
    }
    return s;
}

zb_status zb_results_load(const char *path, json_t **doc) {
    json_t *d = NULL;
    *doc = NULL;
    ZB_TRY(zb_results_read(path, &d));
    zb_status s = zb_results_check(path, d);
    if (s != ZB_OK) {
        json_decref(d);
        return s;
    }
    *doc = d;
    return ZB_OK;
}
