/* What report.c shares with the other writers of harness/report
 * (report_csv.c); nothing outside this folder uses it. */
#ifndef ZB_REPORT_IMPL_H
#define ZB_REPORT_IMPL_H

#include <stddef.h>

#include <jansson.h>

#include "report.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Deeper documents are refused rather than risking the stack. */
#define ZB_JSON_MAX_DEPTH 256

/* A growable output buffer; the first error sticks and later appends are
 * ignored. */
typedef struct zb_sbuf {
    char *p;
    size_t len, cap;
    zb_status err;
} zb_sbuf;

void zb_sbuf_putn(zb_sbuf *b, const char *s, size_t n);
void zb_sbuf_puts(zb_sbuf *b, const char *s);
void zb_sbuf_putc(zb_sbuf *b, char c);
/* Numbers as report.h describes them. */
void zb_put_integer(zb_sbuf *b, json_int_t v);
void zb_put_real(zb_sbuf *b, double v);

/* The report's declared CSV columns (zb_report_csv_declare): an object used
 * as an ordered set of column names (borrowed). */
json_t *zb_report_csv_columns(const zb_report *r);

#ifdef __cplusplus
}
#endif
#endif
