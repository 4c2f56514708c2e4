/* Results files (the zerobench/1 JSON that --json writes), as the tools read
 * them: loaded whole, the schema checked, every error one line naming the
 * file and what is wrong with it. */
#ifndef ZB_RESULTS_H
#define ZB_RESULTS_H

#include <jansson.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Loads `path` into *doc (the caller json_decref's it): a readable regular
 * file (of at most ZB_RESULTS_MAX_BYTES, input_file.h) holding a JSON object whose "schema" is zerobench/1 and whose "runs"
 * is an array of objects. Otherwise ZB_ERR_INVALID with a message such as
 * "'a.json': schema 'x/2' (accepted: zerobench/1)"; *doc is then NULL. */
zb_status zb_results_load(const char *path, json_t **doc);

/* The two halves of zb_results_load, for a reader that also takes other
 * documents (plot's traces): the file read (input_file.h: a regular file of
 * at most ZB_RESULTS_MAX_BYTES) and parsed as JSON, then the schema checked. */
zb_status zb_results_read(const char *path, json_t **doc);
zb_status zb_results_check(const char *path, const json_t *doc);

/* The parse of zb_results_read, on a file's text (len bytes) read by the
 * caller; `path` names it in the message. */
zb_status zb_results_parse(const char *path, const char *text, size_t len, json_t **doc);

/* A path as messages show it (at most 64 characters, control characters
 * replaced), so an error stays on one line. */
const char *zb_results_shown_path(const char *path, char out[72]);

#ifdef __cplusplus
}
#endif
#endif
