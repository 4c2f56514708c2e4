/* Shared by the conformance suites (tests/conformance/test_*.c): each runs
 * one interface's contract over every backend the registry lists, so that a
 * new backend is checked by adding its registry entry, with no edit here.
 *
 * Backends are found through the registry only (registry.h), never by
 * name. An entry that is not in this build, or that its probe says cannot
 * run on this machine, is skipped with one line saying so; the suite then
 * checks the others. A suite run with a backend name as its argument (the
 * gpu-labelled copies in tests/CMakeLists.txt) checks that one only and
 * exits 77 (CTest: skipped) when it cannot run here.
 *
 * Host <-> device data goes through the device's own memcpy_async, so a
 * suite never reads device memory directly (cuda memory is not host
 * memory). */
#ifndef ZB_CONFORMANCE_H
#define ZB_CONFORMANCE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "registry.h"
#include "zb_test.h"

#define ZC_SKIP 77

/* The backend name given on the command line, or NULL (all of them). */
static inline const char *zc_only(int argc, char **argv) { return argc > 1 ? argv[1] : NULL; }

/* Whether entry b is to be checked here: in the build, usable on this
 * machine (its probe), and the one asked for when `only` is set. When
 * `say`, prints "<suite>: <name>: skipped: <why>" or "... checking". */
static inline bool zc_device_usable_say(const char *suite, const zb_device_backend *b,
                                        const char *only, bool say) {
    if (only && strcmp(only, b->name) != 0) return false;
    if (b->not_built) {
        if (say) printf("%s: %s: skipped: not built (%s)\n", suite, b->name, b->not_built);
        return false;
    }
    char why[256] = "";
    if (b->probe(why, sizeof why) != ZB_OK) {
        if (say) printf("%s: %s: skipped: not usable here (%s)\n", suite, b->name, why);
        zb_error_clear();
        return false;
    }
    if (say) printf("%s: %s: checking\n", suite, b->name);
    return true;
}
static inline bool zc_device_usable(const char *suite, const zb_device_backend *b,
                                    const char *only) {
    return zc_device_usable_say(suite, b, only, true);
}

/* Whether checks of data apply to entry b: a simulated device (its entry's
 * `simulated`: the sim) holds none, so what a copy, a GEMM, a kernel or a
 * collective computed cannot be compared; its suites still check what does
 * not need data (events, memory accounting, refusals, byte counts) and say,
 * once per check, "<suite>: <name>: <what> not applicable: ...". */
static inline bool zc_holds_data(const char *suite, const zb_device_backend *b, const char *what) {
    if (!b->simulated) return true;
    printf("%s: %s: %s not applicable: the device holds no data (%s)\n", suite, b->name, what, b->simulated);
    return false;
}

/* A device of entry b with a generous timeout (a bound on a hang). */
static inline zb_device *zc_device_create(const zb_device_backend *b, int rank, double timeout_s) {
    zb_device_config cfg = {rank, rank, 1, timeout_s, NULL};
    zb_device *dev = NULL;
    ZB_CHECK_OK(b->create(&cfg, &dev));
    return dev;
}

/* Host -> device and device -> host on stream s, waited for. */
static inline void zc_upload(zb_stream *s, void *dst, const void *src, size_t bytes) {
    ZB_CHECK_OK(s->dev->ops->memcpy_async(s, dst, src, bytes, NULL));
    ZB_CHECK_OK(s->dev->ops->stream_sync(s));
}
static inline void zc_download(zb_stream *s, void *dst, const void *src, size_t bytes) {
    ZB_CHECK_OK(s->dev->ops->memcpy_async(s, dst, src, bytes, NULL));
    ZB_CHECK_OK(s->dev->ops->stream_sync(s));
}

/* A device buffer holding `bytes` bytes copied from host memory. */
static inline void *zc_dev_copy_of(zb_stream *s, const void *host, size_t bytes, zb_mem_tag tag) {
    void *p = NULL;
    ZB_CHECK_OK(zb_dev_alloc(s->dev, bytes ? bytes : 1, tag, &p));
    if (p && bytes) zc_upload(s, p, host, bytes);
    return p;
}

/* A device buffer of `bytes` 0xff bytes (NaN in fp32 and in bf16): an
 * element an op leaves unwritten fails the comparison. */
static inline void *zc_dev_poisoned(zb_stream *s, size_t bytes, zb_mem_tag tag) {
    void *h = malloc(bytes ? bytes : 1);
    memset(h, 0xff, bytes ? bytes : 1);
    void *p = zc_dev_copy_of(s, h, bytes, tag);
    free(h);
    return p;
}

/* Ends a suite: with `only` set and nothing checked, skipped (77). */
static inline int zc_finish(const char *suite, const char *only, int n_checked) {
    if (n_checked == 0 && only) {
        printf("%s: skipped: %s cannot be checked here\n", suite, only);
        return ZC_SKIP;
    }
    ZB_CHECK_MSG(n_checked > 0, "%s: no backend could be checked on this machine", suite);
    return zb_test_finish(suite);
}

#endif
