/* The comm front end (harness/comm/comm.c) over a fake backend on the cpu
 * device: every bad argument is refused with one line naming the collective
 * and the bad value before the backend is called; good calls reach the
 * backend unchanged (a NULL label as the collective's name); bytes sent are
 * counted once, by the front end, and not for a collective the backend
 * refused; the last collective is kept per stream; the default wait names
 * that collective (or the wait and the stream when there was none) when the
 * stream does not drain within the comm's timeout, passes a stream's sticky
 * error through, and a backend's own wait is called instead where it has one.
 * A stuck stream is a host op blocked until the test releases it, so the
 * timeouts do not depend on how fast anything runs. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "comm.h"
#include "device_cpu.h"
#include "zb_test.h"

/* ---- a stream that stays busy until released ------------------------------ */

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static bool gate_open;

static zb_status wait_at_gate(void *arg) {
    (void)arg;
    pthread_mutex_lock(&gate_lock);
    while (!gate_open) pthread_cond_wait(&gate_cv, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    return ZB_OK;
}

static void set_gate(bool open) {
    pthread_mutex_lock(&gate_lock);
    gate_open = open;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_lock);
}

static zb_status fail_op(void *arg) {
    (void)arg;
    return ZB_FAIL(ZB_ERR_WRONG, "the test's failing op");
}

/* ---- the fake backend --------------------------------------------------- */

typedef struct fake_comm {
    zb_comm base;
    int calls[ZB_COLL_COUNT];
    int waits;
    zb_stream *s;
    const void *send;
    void *recv;
    size_t count;
    zb_dtype dtype;
    char label[ZB_LABEL_MAX];
    int unit;
    zb_status answer;  /* what the backend's collectives return */
    bool block_stream; /* each collective queues a host op that waits at the gate */
} fake_comm;

static zb_status fake_coll(zb_comm *zc, zb_coll kind, zb_stream *s, const void *send, void *recv,
                           size_t count, zb_dtype dtype, const char *label, int unit) {
    fake_comm *f = (fake_comm *)zc;
    f->calls[kind]++;
    f->s = s;
    f->send = send;
    f->recv = recv;
    f->count = count;
    f->dtype = dtype;
    snprintf(f->label, sizeof f->label, "%s", label ? label : "(null)");
    f->unit = unit;
    if (f->answer != ZB_OK) return ZB_FAIL(f->answer, "fake backend refused %s", label);
    if (f->block_stream) {
        zb_op_info info = {ZB_OP_COMM, label, unit, 0, 0.0};
        return zc->dev->ops->launch_host(s, wait_at_gate, NULL, NULL, &info);
    }
    return ZB_OK;
}

static zb_status f_ag(zb_comm *c, zb_stream *s, const void *send, void *recv, size_t count,
                      zb_dtype dtype, const char *label, int unit) {
    return fake_coll(c, ZB_COLL_ALLGATHER, s, send, recv, count, dtype, label, unit);
}
static zb_status f_rs(zb_comm *c, zb_stream *s, const void *send, void *recv, size_t count,
                      zb_dtype dtype, const char *label, int unit) {
    return fake_coll(c, ZB_COLL_REDUCESCATTER, s, send, recv, count, dtype, label, unit);
}
static zb_status f_ar(zb_comm *c, zb_stream *s, const void *send, void *recv, size_t count,
                      zb_dtype dtype, const char *label, int unit) {
    return fake_coll(c, ZB_COLL_ALLREDUCE, s, send, recv, count, dtype, label, unit);
}
static zb_status f_barrier(zb_comm *c, zb_stream *s) {
    return fake_coll(c, ZB_COLL_BARRIER, s, NULL, NULL, 0, ZB_DTYPE_F32, "barrier", -1);
}
static zb_status f_wait(zb_comm *c, zb_stream *s, const char *op, int unit) {
    fake_comm *f = (fake_comm *)c;
    f->waits++;
    f->s = s;
    snprintf(f->label, sizeof f->label, "%s", op);
    f->unit = unit;
    return ZB_OK;
}
static void f_destroy(zb_comm *c) { (void)c; }

static const zb_comm_ops fake_ops = {"fake", f_destroy, f_ag, f_rs, f_ar, f_barrier, NULL};
static const zb_comm_ops fake_ops_wait = {"fake", f_destroy, f_ag, f_rs, f_ar, f_barrier, f_wait};

static void fake_init(fake_comm *f, zb_device *dev, const zb_comm_ops *ops, int n_ranks) {
    memset(f, 0, sizeof *f);
    f->base.ops = ops;
    f->base.dev = dev;
    f->base.rank = 1;
    f->base.n_ranks = n_ranks;
    f->base.cfg.timeout_s = 0.05;
}

static int total_calls(const fake_comm *f) {
    int n = 0;
    for (int k = 0; k < ZB_COLL_COUNT; k++) n += f->calls[k];
    return n;
}

static uint64_t total_sent(const fake_comm *f) {
    uint64_t n = 0;
    for (int k = 0; k < ZB_COLL_COUNT; k++) n += f->base.sent_bytes[k];
    return n;
}

static bool one_line(const char *msg) { return msg[0] && !strchr(msg, '\n'); }

/* Expects `st` to be `code` with a one-line message holding `want`. */
#define CHECK_REFUSED(st, code, want)                                                          \
    do {                                                                                       \
        zb_status st_ = (st);                                                                  \
        ZB_CHECK_MSG(st_ == (code), "status %s, want %s (%s)", zb_status_name(st_),             \
                     zb_status_name(code), zb_error_message());                                \
        ZB_CHECK_MSG(strstr(zb_error_message(), (want)) != NULL && one_line(zb_error_message()), \
                     "message '%s' lacks '%s'", zb_error_message(), (want));                    \
    } while (0)

static float bufa[64], bufb[256];

static void test_refusals(zb_device *dev, zb_stream *s) {
    fake_comm f;
    fake_init(&f, dev, &fake_ops, 4);
    zb_comm *c = &f.base;
    CHECK_REFUSED(zb_comm_allgather(NULL, s, bufa, bufb, 4, ZB_DTYPE_F32, "ag", 1), ZB_ERR_INVALID,
                  "allgather 'ag' (unit 1): no comm given");
    CHECK_REFUSED(zb_comm_reducescatter(c, NULL, bufb, bufa, 4, ZB_DTYPE_F32, "rs", 2),
                  ZB_ERR_INVALID, "rank 1: reducescatter 'rs' (unit 2): no stream given");
    CHECK_REFUSED(zb_comm_allreduce(c, s, bufa, bufa, 4, ZB_DTYPE_COUNT, "ar", 3),
                  ZB_ERR_UNSUPPORTED, "allreduce 'ar': the comm takes float or bf16, not dtype 2");
    CHECK_REFUSED(zb_comm_allreduce(c, s, bufa, bufa, 4, (zb_dtype)-1, "ar", 3),
                  ZB_ERR_UNSUPPORTED, "not dtype -1");
    CHECK_REFUSED(zb_comm_allgather(c, s, NULL, bufb, 4, ZB_DTYPE_BF16, "ag", 4), ZB_ERR_INVALID,
                  "allgather 'ag' (unit 4): the send buffer is NULL for 4 elements");
    CHECK_REFUSED(zb_comm_reducescatter(c, s, bufb, NULL, 7, ZB_DTYPE_F32, NULL, 5),
                  ZB_ERR_INVALID, "reducescatter 'reducescatter' (unit 5): the recv buffer is NULL "
                  "for 7 elements");
    /* count * ranks * element size must fit a byte count. */
    CHECK_REFUSED(zb_comm_allgather(c, s, bufa, bufb, SIZE_MAX / 4 + 1, ZB_DTYPE_F32, "big", 6),
                  ZB_ERR_INVALID, "elements per rank on 4 ranks overflow a byte count");
    CHECK_REFUSED(zb_comm_reducescatter(c, s, bufb, bufa, SIZE_MAX / 8, ZB_DTYPE_F32, "big", 6),
                  ZB_ERR_INVALID, "overflow a byte count");
    CHECK_REFUSED(zb_comm_allreduce(c, s, bufa, bufa, SIZE_MAX / 2 + 1, ZB_DTYPE_BF16, "big", 7),
                  ZB_ERR_INVALID, "allreduce 'big' (unit 7):");
    CHECK_REFUSED(zb_comm_barrier(c, NULL), ZB_ERR_INVALID, "barrier 'barrier' (unit -1): no stream");
    CHECK_REFUSED(zb_comm_wait(NULL, s, "w", 8), ZB_ERR_INVALID, "w (unit 8): no comm given");
    CHECK_REFUSED(zb_comm_wait(c, NULL, "w", 8), ZB_ERR_INVALID, "rank 1: w (unit 8): no stream");
    /* None of it reached the backend, counted bytes or was remembered. */
    ZB_CHECK(total_calls(&f) == 0);
    ZB_CHECK(total_sent(&f) == 0);
    ZB_CHECK(zb_comm_last_issued(c, s) == NULL);
}

static void test_forwarding(zb_device *dev, zb_stream *s, zb_stream *t) {
    fake_comm f;
    fake_init(&f, dev, &fake_ops, 4);
    zb_comm *c = &f.base;
    ZB_CHECK_OK(zb_comm_allgather(c, s, bufa, bufb, 16, ZB_DTYPE_BF16, "layer3.ag", 3));
    ZB_CHECK(f.calls[ZB_COLL_ALLGATHER] == 1 && f.s == s && f.send == bufa && f.recv == bufb);
    ZB_CHECK(f.count == 16 && f.dtype == ZB_DTYPE_BF16 && f.unit == 3);
    ZB_CHECK(strcmp(f.label, "layer3.ag") == 0);
    ZB_CHECK(c->sent_bytes[ZB_COLL_ALLGATHER] == zb_coll_sent_bytes(ZB_COLL_ALLGATHER, 16, 2, 4));

    ZB_CHECK_OK(zb_comm_reducescatter(c, t, bufb, bufa, 8, ZB_DTYPE_F32, NULL, 4));
    ZB_CHECK(f.calls[ZB_COLL_REDUCESCATTER] == 1 && f.s == t && strcmp(f.label, "reducescatter") == 0);
    ZB_CHECK(c->sent_bytes[ZB_COLL_REDUCESCATTER] == 8 * 4 * 3);

    ZB_CHECK_OK(zb_comm_allreduce(c, s, bufa, bufa, 10, ZB_DTYPE_F32, "layer5.ar", 5));
    ZB_CHECK_OK(zb_comm_allreduce(c, s, bufa, bufa, 10, ZB_DTYPE_F32, "layer5.ar", 5));
    ZB_CHECK(f.calls[ZB_COLL_ALLREDUCE] == 2);
    ZB_CHECK(c->sent_bytes[ZB_COLL_ALLREDUCE] == 2 * zb_coll_sent_bytes(ZB_COLL_ALLREDUCE, 10, 4, 4));
    ZB_CHECK_OK(zb_comm_barrier(c, t));
    ZB_CHECK(f.calls[ZB_COLL_BARRIER] == 1 && c->sent_bytes[ZB_COLL_BARRIER] == 0);
    /* An empty collective is fine, with or without buffers. */
    ZB_CHECK_OK(zb_comm_allgather(c, s, NULL, NULL, 0, ZB_DTYPE_F32, "empty", -1));
    ZB_CHECK(f.calls[ZB_COLL_ALLGATHER] == 2);

    /* The last collective, per stream. */
    const zb_comm_last *ls = zb_comm_last_issued(c, s), *lt = zb_comm_last_issued(c, t);
    ZB_CHECK(ls && ls->kind == ZB_COLL_ALLGATHER && ls->unit == -1 && !strcmp(ls->label, "empty"));
    ZB_CHECK(lt && lt->kind == ZB_COLL_BARRIER && !strcmp(lt->label, "barrier"));

    /* A collective the backend refuses is neither counted nor remembered. */
    uint64_t sent = total_sent(&f);
    f.answer = ZB_ERR_MPI;
    CHECK_REFUSED(zb_comm_allreduce(c, s, bufa, bufa, 10, ZB_DTYPE_F32, "refused", 9), ZB_ERR_MPI,
                  "fake backend refused refused");
    ZB_CHECK(f.calls[ZB_COLL_ALLREDUCE] == 3);
    ZB_CHECK(total_sent(&f) == sent);
    ZB_CHECK(!strcmp(zb_comm_last_issued(c, s)->label, "empty"));

    /* A long label is kept truncated, never overrun. */
    f.answer = ZB_OK;
    char long_label[3 * ZB_LABEL_MAX];
    memset(long_label, 'x', sizeof long_label - 1);
    long_label[sizeof long_label - 1] = '\0';
    ZB_CHECK_OK(zb_comm_allreduce(c, s, bufa, bufa, 1, ZB_DTYPE_F32, long_label, 1));
    ZB_CHECK(strlen(zb_comm_last_issued(c, s)->label) == ZB_LABEL_MAX - 1);

    /* A backend with its own wait gets it, with the arguments. */
    fake_init(&f, dev, &fake_ops_wait, 2);
    ZB_CHECK_OK(zb_comm_wait(c, t, "step", 7));
    ZB_CHECK(f.waits == 1 && f.s == t && !strcmp(f.label, "step") && f.unit == 7);
    ZB_CHECK_OK(zb_comm_wait(c, t, NULL, 7));
    ZB_CHECK(f.waits == 2 && !strcmp(f.label, "wait"));
}

static void test_default_wait(zb_device *dev, zb_stream *s, zb_stream *t) {
    fake_comm f;
    fake_init(&f, dev, &fake_ops, 2);
    zb_comm *c = &f.base;
    /* Nothing queued: done at once. */
    ZB_CHECK_OK(zb_comm_wait(c, s, "idle", -1));

    /* A collective that never finishes: the wait gives up after the comm's
     * timeout (0.05 s; the device's own is 30 s) naming it. */
    f.block_stream = true;
    set_gate(false);
    ZB_CHECK_OK(zb_comm_allreduce(c, s, bufa, bufa, 4, ZB_DTYPE_F32, "layer2.allreduce", 2));
    CHECK_REFUSED(zb_comm_wait(c, s, "step", -1), ZB_ERR_TIMEOUT,
                  "rank 1: allreduce 'layer2.allreduce' (unit 2) did not complete within 0.05 s "
                  "(--timeout)");
    set_gate(true);
    ZB_CHECK_OK(zb_comm_wait(c, s, "step", -1));

    /* Stuck work that is no collective: the wait and the stream are named. */
    set_gate(false);
    zb_op_info info = {ZB_OP_COMPUTE, "stuck", 0, 0, 0.0};
    ZB_CHECK_OK(dev->ops->launch_host(t, wait_at_gate, NULL, NULL, &info));
    CHECK_REFUSED(zb_comm_wait(c, t, "step", 4), ZB_ERR_TIMEOUT,
                  "rank 1: step 'second' (unit 4) did not complete within 0.05 s (--timeout)");
    set_gate(true);
    ZB_CHECK_OK(zb_comm_wait(c, t, "step", 4));

    /* A stream's sticky error comes back as the device reported it. */
    ZB_CHECK_OK(dev->ops->launch_host(t, fail_op, NULL, NULL, &info));
    CHECK_REFUSED(zb_comm_wait(c, t, "step", 4), ZB_ERR_WRONG, "the test's failing op");
}

int main(void) {
    zb_device_config dc = {1, 0, 1, 30.0, NULL};
    zb_device *dev = NULL;
    zb_stream *s = NULL, *t = NULL;
    ZB_CHECK_OK(zb_device_cpu_create(&dc, &dev));
    if (!dev) return zb_test_finish("test_comm_front");
    ZB_CHECK_OK(dev->ops->stream_create(dev, "first", &s));
    ZB_CHECK_OK(dev->ops->stream_create(dev, "second", &t));
    test_refusals(dev, s);
    test_forwarding(dev, s, t);
    test_default_wait(dev, s, t);
    dev->ops->stream_destroy(s);
    dev->ops->stream_destroy(t);
    zb_dev_destroy(dev);
    return zb_test_finish("test_comm_front");
}
