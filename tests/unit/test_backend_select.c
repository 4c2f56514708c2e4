/* Backend selection over the registry, without MPI: the device tracer
 * (CUPTI on cuda) starts only when the run's trace is enabled and
 * --gpu-trace is on, never for a backend without one; explicit and auto
 * resolution name the flag and the reason; every registry entry is
 * complete (built) or names why it is not (not built). */
#include <string.h>

#include "backend_select.h"
#include "registry.h"
#include "zb_test.h"

static int starts;
static zb_status fake_start(zb_trace *t) {
    (void)t;
    starts++;
    return ZB_OK;
}

static void test_tracer_decision(void) {
    zb_device_backend with = {.name = "fake", .tracer_start = fake_start};
    zb_device_backend without = {.name = "plain"};
    zb_trace on, off;
    ZB_CHECK_OK(zb_trace_init(&on, 0, true));
    ZB_CHECK_OK(zb_trace_init(&off, 0, false));
    ZB_CHECK(zb_backends_tracer_wanted(&with, &on, true));
    ZB_CHECK(!zb_backends_tracer_wanted(&with, &off, true)); /* gemm, collectives without --trace */
    ZB_CHECK(!zb_backends_tracer_wanted(&with, NULL, true));
    ZB_CHECK(!zb_backends_tracer_wanted(&with, &on, false)); /* --gpu-trace off */
    ZB_CHECK(!zb_backends_tracer_wanted(&without, &on, true));
    ZB_CHECK(starts == 0); /* deciding starts nothing */
    zb_trace_destroy(&on);
    zb_trace_destroy(&off);
}

static void test_entries_complete(void) {
    size_t n = 0;
    const zb_device_backend *const *d = zb_device_backends(&n);
    ZB_CHECK(n >= 2);
    for (size_t i = 0; i < n; i++) {
        const zb_device_backend *e = d[i];
        ZB_CHECK(e->name && e->name[0]);
        if (e->not_built) {
            ZB_CHECK_MSG(!e->create && !e->probe && strchr(e->not_built, '\n') == NULL, "%s", e->name);
            continue;
        }
        ZB_CHECK_MSG(e->probe && e->create && e->kernels && e->kernels() && e->default_comm, "%s", e->name);
        ZB_CHECK_MSG(zb_comm_backend_find(e->default_comm) != NULL, "%s: default comm %s", e->name,
                     e->default_comm);
        ZB_CHECK_MSG(!e->tracer_start == !e->tracer_flush && !e->tracer_start == !e->tracer_finish,
                     "%s: a tracer needs start, flush and finish", e->name);
        ZB_CHECK_MSG(!e->gemm_direct_time == !e->gemm_direct_name, "%s: direct GEMM name", e->name);
        ZB_CHECK(zb_device_backend_find(e->name) == e);
    }
    const zb_comm_backend *const *c = zb_comm_backends(&n);
    for (size_t i = 0; i < n; i++) {
        ZB_CHECK(c[i]->name && (c[i]->not_built || c[i]->create));
        ZB_CHECK(!c[i]->device_only || zb_device_backend_find(c[i]->device_only));
    }
    ZB_CHECK(zb_device_backend_find("tpu") == NULL && zb_comm_backend_find(NULL) == NULL);
    /* The names in registry order, joined; cpu and cuda (built or not) and
     * mpi and nccl are always among them. Built from the registry, so a new
     * backend needs no edit here. */
    char names[256], want[256] = "";
    zb_device_backend_names(names, sizeof names, false);
    d = zb_device_backends(&n);
    for (size_t i = 0; i < n; i++) {
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? ", " : "", d[i]->name);
    }
    ZB_CHECK_MSG(!strcmp(names, want) && !strncmp(names, "cpu, cuda", 9), "'%s' want '%s'", names, want);
    zb_comm_backend_names(names, sizeof names, false);
    ZB_CHECK_MSG(!strncmp(names, "mpi, nccl", 9), "'%s'", names);
}

static void test_resolve(void) {
    zb_backends b;
    ZB_CHECK_OK(zb_backends_resolve("cpu", "auto", &b));
    ZB_CHECK(!strcmp(b.device->name, "cpu") && !strcmp(b.comm->name, "mpi") && !b.auto_chosen);
    ZB_CHECK(b.note[0] == '\0' && zb_backends_traced(&b));
    ZB_CHECK(b.device->default_param_dtype == ZB_DTYPE_F32);
    ZB_CHECK(!strcmp(zb_backends_default_hw(&b, 0), "cpu"));
    ZB_CHECK(zb_backends_resolve("tpu", "auto", &b) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "--backend 'tpu': accepted: auto, cpu, cuda"), "'%s'",
                 zb_error_message());
    ZB_CHECK(zb_backends_resolve("cpu", "gloo", &b) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "--comm 'gloo': accepted: auto, mpi, nccl"), "'%s'",
                 zb_error_message());
    /* Falling back is for auto only, and only to a lower priority. */
    ZB_CHECK_OK(zb_backends_resolve("cpu", "auto", &b));
    ZB_CHECK_OK(zb_backends_fall_back(&b, 0, "auto"));
    ZB_CHECK(!strcmp(b.device->name, "cpu"));
}

int main(void) {
    test_tracer_decision();
    test_entries_complete();
    test_resolve();
    return zb_test_finish("test_backend_select");
}
