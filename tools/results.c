/* Loading and checking results files (results.h). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "report.h"
#include "results.h"

const char *zb_results_shown_path(const char *path, char out[72]) {
    size_t n = strlen(path), keep = n > 64 ? 64 : n;
    for (size_t i = 0; i < keep; i++) out[i] = (path[i] < 0x20 || path[i] == 0x7f) ? '?' : path[i];
    strcpy(out + keep, n > 64 ? "..." : "");
    return out;
}

zb_status zb_results_load(const char *path, json_t **doc) {
    char shown[72];
    struct stat st;
    *doc = NULL;
    zb_results_shown_path(path, shown);
    if (stat(path, &st) != 0) return ZB_FAIL(ZB_ERR_INVALID, "'%s': %s", shown, strerror(errno));
    if (!S_ISREG(st.st_mode)) return ZB_FAIL(ZB_ERR_INVALID, "'%s': not a regular file", shown);
    json_error_t err;
    json_t *d = json_load_file(path, 0, &err);
    if (!d) return ZB_FAIL(ZB_ERR_INVALID, "'%s': not JSON (line %d: %s)", shown, err.line, err.text);
    const char *schema = json_string_value(json_object_get(d, "schema"));
    json_t *runs = json_object_get(d, "runs");
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
    if (s != ZB_OK) {
        json_decref(d);
        return s;
    }
    *doc = d;
    return ZB_OK;
}
