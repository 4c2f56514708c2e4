/* The backend registry (registry.h): one line per backend. */
#include "registry.h"

#include <stdio.h>
#include <string.h>

/* One line per backend, in the order messages list them: each names the
 * entry zb_device_backend_<name> or zb_comm_backend_<name> that its folder's
 * backend_<name>.c defines (device_backend.h, comm_backend.h). */
#define ZB_DEVICE_BACKEND_LIST(X) \
    X(cpu)                        \
    X(cuda)                       \
    X(sim)

#define ZB_COMM_BACKEND_LIST(X) \
    X(mpi)                      \
    X(nccl)                     \
    X(sim)

#define ZB_DEVICE_DECLARE(name) extern const zb_device_backend zb_device_backend_##name;
#define ZB_COMM_DECLARE(name) extern const zb_comm_backend zb_comm_backend_##name;
#define ZB_DEVICE_ENTRY(name) &zb_device_backend_##name,
#define ZB_COMM_ENTRY(name) &zb_comm_backend_##name,
ZB_DEVICE_BACKEND_LIST(ZB_DEVICE_DECLARE)
ZB_COMM_BACKEND_LIST(ZB_COMM_DECLARE)

static const zb_device_backend *const device_backends[] = {ZB_DEVICE_BACKEND_LIST(ZB_DEVICE_ENTRY)};
static const zb_comm_backend *const comm_backends[] = {ZB_COMM_BACKEND_LIST(ZB_COMM_ENTRY)};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const zb_device_backend *const *zb_device_backends(size_t *n) {
    *n = COUNT(device_backends);
    return device_backends;
}

const zb_comm_backend *const *zb_comm_backends(size_t *n) {
    *n = COUNT(comm_backends);
    return comm_backends;
}

const zb_device_backend *zb_device_backend_find(const char *name) {
    for (size_t i = 0; name && i < COUNT(device_backends); i++) {
        if (!strcmp(device_backends[i]->name, name)) return device_backends[i];
    }
    return NULL;
}

const zb_comm_backend *zb_comm_backend_find(const char *name) {
    for (size_t i = 0; name && i < COUNT(comm_backends); i++) {
        if (!strcmp(comm_backends[i]->name, name)) return comm_backends[i];
    }
    return NULL;
}

static void join(char *out, size_t n, const char *name, size_t *used) {
    int w = snprintf(out + *used, n - *used, "%s%s", *used ? ", " : "", name);
    if (w > 0) *used = *used + (size_t)w < n ? *used + (size_t)w : n - 1;
}

void zb_device_backend_names(char *out, size_t n, bool built_only) {
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < COUNT(device_backends); i++) {
        if (!built_only || !device_backends[i]->not_built) join(out, n, device_backends[i]->name, &used);
    }
}

void zb_comm_backend_names(char *out, size_t n, bool built_only) {
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < COUNT(comm_backends); i++) {
        if (!built_only || !comm_backends[i]->not_built) join(out, n, comm_backends[i]->name, &used);
    }
}
