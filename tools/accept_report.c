/* accept's reports (accept.h): the lines printed per check, the same lines
 * in JUnit XML (one testcase per check, its printed lines as system-out, a
 * failure or skipped element with the reason) and the JSON document
 * ("schema": "zerobench-accept/1"). Both files are written atomically.
 * Each threshold is shown with what it is a fraction of and the margin, so
 * a pass says how close it came, not only that it passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "accept.h"
#include "atomic_file.h"
#include "report.h"

static const char *verdict_word(zb_check_verdict v) {
    return v == ZB_CHECK_PASS ? "PASS" : v == ZB_CHECK_FAIL ? "FAIL" : "SKIP";
}

static const char *kind_word(zb_check_kind k) {
    return k == ZB_CHECK_DEVICES ? "devices" : k == ZB_CHECK_METRIC ? "metric" : "straggler";
}

/* "best of 3: 0.031, 0.029, 0.030" */
static void repeats(const zb_accept_check *c, const zb_check_outcome *o, char *out, size_t n) {
    size_t used = (size_t)snprintf(out, n, "%s of %d", c->judge == ZB_JUDGE_MEDIAN ? "median" : "best", o->n_values);
    for (int i = 0; i < o->n_values && used < n; i++) {
        used += (size_t)snprintf(out + used, n - used, "%s%.4g", i ? ", " : ": ", o->values[i]);
    }
}

/* "threshold >= 3.76 GB/s (0.4 x 9.41 GB/s)": the judged bound and what it is a fraction of. */
static void bound(const zb_accept_check *c, char *out, size_t n) {
    bool is_min = c->kind == ZB_CHECK_METRIC && c->is_min;
    const char *unit = c->unit ? c->unit : "";
    snprintf(out, n, "threshold %s %.4g %s (%.4g x %.4g %s)", is_min ? ">=" : "<=", c->threshold, unit, c->fraction,
             c->reference, unit);
}

/* The first line's text after the verdict and the name. */
static void summary(const zb_accept_check *c, const zb_check_outcome *o, char *out, size_t n) {
    char rep[200], thr[160];
    repeats(c, o, rep, sizeof rep);
    if (c->kind == ZB_CHECK_DEVICES) {
        if (o->have_value) {
            snprintf(out, n, "%.0f %s device(s) visible on %s, expected %d", o->value, c->backend, o->where,
                     c->per_node);
        } else {
            snprintf(out, n, "expected %d %s device(s) per node", c->per_node, c->backend);
        }
        return;
    }
    bound(c, thr, sizeof thr);
    double margin = o->have_value ? zb_accept_margin_pct(c, o->value) : 0;
    if (c->kind == ZB_CHECK_METRIC && o->have_value) {
        snprintf(out, n, "%s %.4g %s, %s, margin %+.0f %% (%s) at %s", c->metric, o->value, c->def->unit, thr, margin,
                 rep, o->where);
    } else if (c->kind == ZB_CHECK_METRIC) {
        snprintf(out, n, "%s: no value, %s", c->metric, thr);
    } else if (o->have_value) {
        snprintf(out, n, "slowest %s %.1f %% above the median %s, %s, margin %+.0f %% (%s) at %s",
                 c->by_node ? "node" : "rank", o->value, c->metric, thr, margin, rep, o->where);
    } else {
        snprintf(out, n, "slowest %s against the median %s: no value, %s", c->by_node ? "node" : "rank", c->metric, thr);
    }
}

void zb_accept_describe(const zb_accept_check *c, const zb_check_outcome *o, char *out, size_t n) {
    char sum[900];
    summary(c, o, sum, sizeof sum);
    size_t used = (size_t)snprintf(out, n, "%s  %s: %s\n      source: %s\n", verdict_word(o->verdict), c->name, sum,
                                   c->source);
    if (o->reason[0] && used < n) used += (size_t)snprintf(out + used, n - used, "      reason: %s\n", o->reason);
    if (o->culprits[0] && used < n) snprintf(out + used, n - used, "      failed: %s\n", o->culprits);
}

/* ---- JUnit XML ---------------------------------------------------------- */

static void xml_text(FILE *f, const char *s) {
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '&') fputs("&amp;", f);
        else if (ch == '<') fputs("&lt;", f);
        else if (ch == '>') fputs("&gt;", f);
        else if (ch == '"') fputs("&quot;", f);
        else if (ch == '\'') fputs("&apos;", f);
        else if (ch < 0x20 && ch != '\n' && ch != '\t') fputc('?', f); /* not allowed in XML 1.0 */
        else fputc(ch, f);
    }
}

static zb_status write_memstream(const char *path, char *mem, size_t len) {
    zb_status s = zb_atomic_write(path, mem, len);
    free(mem);
    return s;
}

zb_status zb_accept_write_junit(const zb_accept_profile *p, const zb_accept_check *const *order,
                                const zb_check_outcome *o, size_t n, const char *path) {
    size_t fails = 0, skips = 0;
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        fails += o[i].verdict == ZB_CHECK_FAIL;
        skips += o[i].verdict == ZB_CHECK_SKIP;
        total += o[i].seconds;
    }
    char *mem = NULL, host[64] = "?";
    size_t len = 0;
    gethostname(host, sizeof host - 1);
    FILE *f = open_memstream(&mem, &len);
    if (!f) return ZB_FAIL(ZB_ERR_NOMEM, "accept: out of memory");
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"zerobench accept\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" "
               "time=\"%.3f\">\n",
            n, fails, skips, total);
    fprintf(f, "  <testsuite name=\"");
    xml_text(f, p->name);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\" hostname=\"", n, fails,
            skips, total);
    xml_text(f, host);
    fprintf(f, "\">\n");
    for (size_t i = 0; i < n; i++) {
        char lines[2400], sum[900];
        zb_accept_describe(order[i], &o[i], lines, sizeof lines);
        summary(order[i], &o[i], sum, sizeof sum);
        fprintf(f, "    <testcase classname=\"accept.");
        xml_text(f, p->name);
        fprintf(f, "\" name=\"");
        xml_text(f, order[i]->name);
        fprintf(f, "\" time=\"%.3f\">\n", o[i].seconds);
        if (o[i].verdict != ZB_CHECK_PASS) {
            bool fail = o[i].verdict == ZB_CHECK_FAIL;
            fprintf(f, "      <%s message=\"", fail ? "failure" : "skipped");
            xml_text(f, o[i].reason[0] ? o[i].reason : sum);
            if (fail) {
                fprintf(f, "\" type=\"%s\">", kind_word(order[i]->kind));
                xml_text(f, sum);
                fprintf(f, "</failure>\n");
            } else {
                fprintf(f, "\"/>\n");
            }
        }
        fprintf(f, "      <system-out>");
        xml_text(f, lines);
        fprintf(f, "</system-out>\n    </testcase>\n");
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    if (fclose(f) != 0) {
        free(mem);
        return ZB_FAIL(ZB_ERR_NOMEM, "accept: out of memory");
    }
    return write_memstream(path, mem, len);
}

/* ---- JSON --------------------------------------------------------------- */

static json_t *check_json(const zb_accept_check *c, const zb_check_outcome *o) {
    json_t *j = json_object();
    const char *verdict = o->verdict == ZB_CHECK_PASS ? "pass" : o->verdict == ZB_CHECK_FAIL ? "fail" : "skip";
    json_object_set_new(j, "name", json_string(c->name));
    json_object_set_new(j, "kind", json_string(kind_word(c->kind)));
    json_object_set_new(j, "verdict", json_string(verdict));
    if (c->kind == ZB_CHECK_DEVICES) {
        json_object_set_new(j, "backend", json_string(c->backend));
        json_object_set_new(j, "op", json_string("=="));
        json_object_set_new(j, "threshold", json_integer(c->per_node));
        json_object_set_new(j, "unit", json_string("devices per node"));
    } else {
        json_object_set_new(j, "bench", json_string(c->bench));
        json_object_set_new(j, "metric", json_string(c->metric));
        bool metric = c->kind == ZB_CHECK_METRIC;
        json_object_set_new(j, "op", json_string(metric && c->is_min ? ">=" : "<="));
        json_object_set_new(j, "threshold", zb_json_real_or_null(c->threshold));
        json_object_set_new(j, "reference", zb_json_real_or_null(c->reference));
        json_object_set_new(j, "fraction", zb_json_real_or_null(c->fraction));
        json_object_set_new(j, "unit", json_string(metric ? c->def->unit : "% above the median"));
        if (!metric) json_object_set_new(j, "by", json_string(c->by_node ? "node" : "rank"));
        json_object_set_new(j, "judge", json_string(c->judge == ZB_JUDGE_MEDIAN ? "median" : "best"));
        json_object_set_new(j, "repeat", json_integer(c->repeat));
    }
    json_object_set_new(j, "source", json_string(c->source));
    json_object_set_new(j, "measured", o->have_value ? zb_json_real_or_null(o->value) : json_null());
    if (c->kind != ZB_CHECK_DEVICES) {
        json_object_set_new(j, "margin_pct",
                            o->have_value ? zb_json_real_or_null(zb_accept_margin_pct(c, o->value)) : json_null());
    }
    json_t *vals = json_array();
    for (int i = 0; i < o->n_values; i++) json_array_append_new(vals, zb_json_real_or_null(o->values[i]));
    json_object_set_new(j, "values", vals);
    json_object_set_new(j, "where", o->where[0] ? json_string(o->where) : json_null());
    json_object_set_new(j, "reason", o->reason[0] ? json_string(o->reason) : json_null());
    json_object_set_new(j, "culprits", o->culprit_list ? json_deep_copy(o->culprit_list) : json_array());
    json_object_set_new(j, "seconds", zb_json_real_or_null(o->seconds));
    return j;
}

zb_status zb_accept_write_json(const zb_accept_profile *p, const zb_accept_check *const *order,
                               const zb_check_outcome *o, size_t n, const char *path) {
    json_t *doc = json_object(), *checks = json_array();
    bool passed = true;
    char host[64] = "?", date[32] = "";
    gethostname(host, sizeof host - 1);
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    for (size_t i = 0; i < n; i++) {
        passed = passed && o[i].verdict != ZB_CHECK_FAIL;
        json_array_append_new(checks, check_json(order[i], &o[i]));
    }
    json_object_set_new(doc, "schema", json_string("zerobench-accept/1"));
    json_object_set_new(doc, "profile", json_string(p->name));
    json_object_set_new(doc, "profile_path", json_string(p->path));
    json_object_set_new(doc, "host", json_string(host));
    json_object_set_new(doc, "date_utc", json_string(date));
    json_object_set_new(doc, "passed", json_boolean(passed));
    json_object_set_new(doc, "checks", checks);
    size_t len = 0;
    char *text = zb_json_dump(doc, 2, &len);
    json_decref(doc);
    if (!text) return ZB_FAIL(ZB_ERR_NOMEM, "accept: out of memory");
    return write_memstream(path, text, len);
}
