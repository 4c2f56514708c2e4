/* The registry of backends: every device backend and every comm backend
 * zerobench knows, built here or not (device_backend.h, comm_backend.h).
 * Adding a backend is one folder and one line in registry.c. */
#ifndef ZB_REGISTRY_H
#define ZB_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "comm_backend.h"
#include "device_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every device backend, in the order messages list them; *n their number. */
const zb_device_backend *const *zb_device_backends(size_t *n);
/* Every comm backend, likewise. */
const zb_comm_backend *const *zb_comm_backends(size_t *n);

/* The entry named `name` (built or not), or NULL. */
const zb_device_backend *zb_device_backend_find(const char *name);
const zb_comm_backend *zb_comm_backend_find(const char *name);

/* The names joined by ", " (all entries, or only those built here). */
void zb_device_backend_names(char *out, size_t n, bool built_only);
void zb_comm_backend_names(char *out, size_t n, bool built_only);

#ifdef __cplusplus
}
#endif
#endif
