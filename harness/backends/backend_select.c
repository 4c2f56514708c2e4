/* Backend choice and construction over the registry (backend_select.h). */
#include "backend_select.h"

#include <stdio.h>
#include <string.h>

#include "registry.h"

/* --backend auto: the built, usable entry of highest auto priority. The note
 * says why: the winner's own reason when it was the first tried, else why
 * the one tried before it could not run here. */
static zb_status resolve_auto(zb_backends *out) {
    size_t n;
    const zb_device_backend *const *all = zb_device_backends(&n);
    char why[256] = "", why_not[256] = "";
    bool first = true;
    int best = 1 << 30;
    for (;;) {
        int prio = 0; /* the next lower priority present */
        for (size_t i = 0; i < n; i++) {
            if (all[i]->auto_priority > prio && all[i]->auto_priority < best) prio = all[i]->auto_priority;
        }
        if (prio == 0) break;
        best = prio;
        for (size_t i = 0; i < n; i++) {
            const zb_device_backend *e = all[i];
            if (e->auto_priority != prio) continue;
            if (e->not_built) { /* it would have been tried: say why it was not */
                snprintf(why_not, sizeof why_not, "%s", e->not_built);
            } else if (e->probe(why, sizeof why) == ZB_OK) {
                out->device = e;
                out->auto_chosen = true;
                snprintf(out->note, sizeof out->note, "--backend auto chose %s (%s)", e->name,
                         first ? why : why_not);
                return ZB_OK;
            } else {
                snprintf(why_not, sizeof why_not, "%s", why);
            }
            first = false;
        }
    }
    return ZB_FAIL(ZB_ERR_INVALID, "--backend auto: no device backend is usable here (%s)", why_not);
}

static zb_status resolve_device(const char *flag, zb_backends *out) {
    if (!strcmp(flag, "auto")) return resolve_auto(out);
    const zb_device_backend *e = zb_device_backend_find(flag);
    char why[256] = "";
    if (!e) {
        zb_device_backend_names(why, sizeof why, false);
        return ZB_FAIL(ZB_ERR_INVALID, "--backend '%s': accepted: auto, %s", flag, why);
    }
    if (e->not_built) return ZB_FAIL(ZB_ERR_INVALID, "--backend %s: %s", e->name, e->not_built);
    if (e->probe(why, sizeof why) != ZB_OK) return ZB_FAIL(ZB_ERR_INVALID, "--backend %s: %s", e->name, why);
    out->device = e;
    return ZB_OK;
}

static zb_status resolve_comm(const char *flag, zb_backends *out) {
    const char *name = strcmp(flag, "auto") ? flag : out->device->default_comm;
    const zb_comm_backend *c = zb_comm_backend_find(name);
    if (!c) {
        char names[128];
        zb_comm_backend_names(names, sizeof names, false);
        return ZB_FAIL(ZB_ERR_INVALID, "--comm '%s': accepted: auto, %s", name, names);
    }
    if (c->device_only && strcmp(c->device_only, out->device->name) != 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "--comm %s: needs --backend %s (this run uses --backend %s)",
                       c->name, c->device_only, out->device->name);
    }
    if (out->device->simulated && !c->device_only) {
        /* A device that holds no data runs only the comm made for it. */
        return ZB_FAIL(ZB_ERR_INVALID, "--comm %s with --backend %s: the simulated device holds no data; use "
                       "--comm %s (or auto)", c->name, out->device->name, out->device->default_comm);
    }
    if (c->not_built) return ZB_FAIL(ZB_ERR_INVALID, "--comm %s: %s", c->name, c->not_built);
    out->comm = c;
    return ZB_OK;
}

zb_status zb_backends_resolve(const char *backend_flag, const char *comm_flag, zb_backends *out) {
    memset(out, 0, sizeof *out);
    ZB_TRY(resolve_device(backend_flag, out));
    return resolve_comm(comm_flag, out);
}

zb_status zb_backends_fall_back(zb_backends *b, int lowest, const char *comm_flag) {
    if (!b->auto_chosen || b->device->auto_priority <= lowest) return ZB_OK;
    size_t n;
    const zb_device_backend *const *all = zb_device_backends(&n);
    for (size_t i = 0; i < n; i++) {
        if (all[i]->auto_priority == lowest && !all[i]->not_built) {
            return zb_backends_resolve(all[i]->name, comm_flag, b);
        }
    }
    return ZB_FAIL(ZB_ERR_INTERNAL, "no device backend of auto priority %d", lowest);
}

zb_status zb_device_create(const char *backend, const zb_device_config *cfg, zb_device **out) {
    *out = NULL;
    const zb_device_backend *e = zb_device_backend_find(backend);
    if (!e) {
        char names[128];
        zb_device_backend_names(names, sizeof names, true);
        return ZB_FAIL(ZB_ERR_INVALID, "--backend %s: not available in this build (accepted: %s)", backend,
                       names);
    }
    if (e->not_built) {
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "rank %d: --backend %s: %s", cfg->rank, e->name, e->not_built);
    }
    return e->create(cfg, out);
}

/* A trace that exists but is off (the microbenchmarks without --trace)
 * wants nothing recorded. */
static bool zb_trace_wanted(const zb_trace *t) { return t && t->enabled; }

bool zb_backends_tracer_wanted(const zb_device_backend *d, const zb_trace *t, bool device_trace) {
    return d->tracer_start && zb_trace_wanted(t) && device_trace;
}

zb_status zb_backends_create(zb_backends *b, const zb_device_config *dc, const zb_comm_config *cc,
                             bool device_trace, zb_device **dev, zb_stream **compute,
                             zb_stream **comm_stream, zb_comm **comm) {
    const zb_device_backend *d = b->device;
    if (d->tracer_start && zb_trace_wanted(dc->trace) && !device_trace) {
        snprintf(b->note, sizeof b->note, "trace metrics not measured: --gpu-trace off");
    } else if (zb_backends_tracer_wanted(d, dc->trace, device_trace)) {
        /* Before the device's first call, so no activity is missed. */
        if (d->tracer_start(dc->trace) == ZB_OK) {
            b->tracer_active = true;
        } else {
            snprintf(b->note, sizeof b->note, "trace metrics not measured: %s", zb_error_message());
        }
    }
    ZB_TRY(d->create(dc, dev));
    ZB_TRY((*dev)->ops->stream_create(*dev, "compute", compute));
    ZB_TRY((*dev)->ops->stream_create(*dev, "comm", comm_stream));
    zb_stream *streams[2] = {*comm_stream, *compute};
    return b->comm->create(*dev, streams, 2, cc, comm);
}

bool zb_backends_traced(const zb_backends *b) {
    return !b->device->tracer_start || b->tracer_active;
}

const char *zb_backends_default_hw(const zb_backends *b, int local_rank) {
    return b->device->default_hw ? b->device->default_hw(local_rank) : NULL;
}

void zb_backends_meta(const zb_backends *b, int local_rank, json_t *meta) {
    json_object_set_new(meta, "backend", json_string(b->device->name));
    json_object_set_new(meta, "comm", json_string(b->comm->name));
    if (b->note[0]) json_object_set_new(meta, "backend_note", json_string(b->note));
    if (b->device->meta) b->device->meta(local_rank, meta);
    if (b->device->tracer_meta_key) {
        json_object_set_new(meta, b->device->tracer_meta_key, json_boolean(b->tracer_active));
    }
    /* A tracer whose records were converted from another clock says so. */
    zb_tracer_stats ts;
    if (b->tracer_active && b->device->tracer_stats && b->device->tracer_stats(&ts) == ZB_OK && ts.note[0]) {
        json_object_set_new(meta, "tracer_note", json_string(ts.note));
    }
    if (b->comm->meta) (void)b->comm->meta(meta);
}

void zb_backends_flush_trace(const zb_backends *b) {
    if (b->tracer_active) b->device->tracer_flush();
}

void zb_backends_finish(const zb_backends *b) {
    if (b->tracer_active) b->device->tracer_finish();
}
