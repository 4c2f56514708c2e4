/* Fuzz target for compare's reading of results files (tools/results.c,
 * tools/compare_docs.c, tools/compare_judge.c, tools/run_identity.c,
 * tools/compare_format.c): the input is BASE, then "\n====\n", then NEW
 * (without the separator, the input is both). Each is parsed and checked
 * as compare loads a file, then paired, judged and rendered in every
 * format; never a crash or a leak. A refusal
 * must be ZB_ERR_INVALID (or NOMEM) with a message; a comparison must pair
 * at least one run and render text and markdown of printable lines (a
 * value's control characters escaped) and github-benchmark as a JSON array
 * (checked here; a violation aborts). The same two documents then go
 * through the several-bases path (BASE and NEW as bases, NEW as new:
 * tools/compare_bases.c), under the same rules. Replayed over
 * tests/fuzz/corpus/fuzz_compare/ by CTest; with -DZB_FUZZ=ON (clang) it
 * builds as a libFuzzer binary. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void refused(zb_status s) {
    if ((s != ZB_ERR_INVALID && s != ZB_ERR_NOMEM) || zb_error_message()[0] == '\0') abort();
}

/* Parses and checks one document as compare's loader does; NULL: refused. */
static json_t *load(const char *path, const char *text, size_t len) {
    json_t *d = NULL;
    zb_status s = zb_results_parse(path, text, len, &d);
    if (s == ZB_OK) s = zb_results_check(path, d);
    if (s == ZB_OK) return d;
    refused(s);
    json_decref(d);
    return NULL;
}

/* Text and markdown: printable bytes and newlines only (UTF-8 passes). */
static void check_lines(const char *text) {
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if ((*c < 0x20 && *c != '\n') || *c == 0x7f) abort();
    }
}

static void render_all(const zb_cmp_result *r) {
    for (int f = ZB_CMP_TEXT; f <= ZB_CMP_GITHUB; f++) {
        char *text = NULL;
        zb_status s = zb_compare_render(r, (zb_cmp_format)f, f == ZB_CMP_GITHUB, &text);
        if (s != ZB_OK) {
            if (s != ZB_ERR_NOMEM) abort();
            continue;
        }
        if (!text) abort();
        if (f != ZB_CMP_GITHUB) {
            check_lines(text);
        } else {
            json_t *j = json_loads(text, 0, NULL);
            if (!json_is_array(j)) abort();
            json_decref(j);
        }
        free(text);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char sep[] = "\n====\n";
    const char *text = (const char *)data, *cut = NULL;
    for (size_t i = 0; i + sizeof sep - 1 <= size && !cut; i++) {
        if (!memcmp(text + i, sep, sizeof sep - 1)) cut = text + i;
    }
    size_t base_len = cut ? (size_t)(cut - text) : size;
    const char *new_text = cut ? cut + sizeof sep - 1 : text;
    size_t new_len = cut ? size - base_len - (sizeof sep - 1) : size;
    json_t *base = load("base.json", text, base_len), *nw = base ? load("new.json", new_text, new_len) : NULL;
    if (base && nw) {
        zb_cmp_result r;
        memset(&r, 0, sizeof r);
        r.base_path = "base.json";
        r.new_path = "new.json";
        zb_status s = zb_compare_docs(base, nw, NULL, 0, &r);
        if (s != ZB_OK) refused(s);
        else if (r.n_pairs < 1 || r.n_regressions + r.n_noise + r.n_better > r.n_rows) abort();
        else render_all(&r);
        zb_compare_result_free(&r);
        const json_t *bases[2] = {base, nw};
        const char *names[2] = {"base.json", "new.json"};
        memset(&r, 0, sizeof r);
        r.new_path = "new.json";
        s = zb_compare_bases(bases, names, 2, nw, NULL, 0, &r);
        if (s != ZB_OK) refused(s);
        else if (r.n_pairs < 1 || r.n_regressions + r.n_noise + r.n_better > r.n_rows) abort();
        else render_all(&r);
        zb_compare_result_free(&r);
    }
    json_decref(base);
    json_decref(nw);
    return 0;
}
