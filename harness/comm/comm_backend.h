/* What a comm backend is, as one registry entry (harness/backends/
 * registry.c lists them; docs/design.md, "Adding a backend").
 *
 * Each backend folder (harness/comm/<name>/) defines one
 * `const zb_comm_backend zb_comm_backend_<name>` in its backend_<name>.c,
 * and, when it is not part of this build, ZB_COMM_BACKEND_OFF with the
 * reason (the same mechanism as device_backend.h). */
#ifndef ZB_COMM_BACKEND_H
#define ZB_COMM_BACKEND_H

#include <stddef.h>

#include <jansson.h>

#include "comm.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_comm_backend {
    const char *name;      /* the --comm value */
    const char *not_built; /* not in this build: why, one line; else NULL */
    /* The only device backend it runs on (NULL: any device that can run it;
     * create says when one cannot). */
    const char *device_only;
    /* Collective over MPI_COMM_WORLD: one comm over `streams` of `dev`. */
    zb_status (*create)(zb_device *dev, zb_stream *const *streams, int n_streams,
                        const zb_comm_config *cfg, zb_comm **out);
    /* Optional: adds the library's versions to the run's meta. */
    zb_status (*meta)(json_t *meta);
} zb_comm_backend;

#define ZB_COMM_BACKEND_OFF(name_, why_) {.name = (name_), .not_built = (why_)}

#ifdef __cplusplus
}
#endif
#endif
