/* What a device backend is, as one registry entry (harness/backends/
 * registry.c lists them; docs/design.md, "Adding a backend").
 *
 * Each backend folder (harness/device/<name>/) defines one
 * `const zb_device_backend zb_device_backend_<name>` in its backend_<name>.c.
 * Nothing outside that folder and the registry names a backend or includes
 * its headers: callers ask the entry for what they need, and an optional
 * member left NULL means the backend does not offer it.
 *
 * A backend that is not part of this build still has its entry: its folder
 * compiles backend_<name>.c alone with ZB_BACKEND_OFF defined to the reason
 * (see the folder's CMakeLists.txt), and the entry is ZB_DEVICE_BACKEND_OFF:
 * its name, `not_built` and auto priority, every other member unset. */
#ifndef ZB_DEVICE_BACKEND_H
#define ZB_DEVICE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "device.h"
#include "dtype.h"
#include "status.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

struct zb_kernels;

/* A device's own view of its memory (GPU pools), next to the harness's
 * per-tag accounting: the pool's reserved high-water mark (this process's
 * pool), the highest device-wide used bytes, and what lies outside the pool
 * (libraries). The last two are device-wide: with several ranks on one
 * device they include the others' contexts and pools, so device_id names
 * the physical device, the same string on every rank that uses it and a
 * different one for any other device of the job's machines (cuda: the
 * GPU's UUID); "" when unknown (then no rank is found to share it). */
#define ZB_DEV_ID_BYTES 64
typedef struct zb_dev_mem_view {
    size_t pool_reserved_high_bytes;
    size_t device_used_high_bytes;
    size_t library_bytes;
    char device_id[ZB_DEV_ID_BYTES];
} zb_dev_mem_view;

#define ZB_TRACER_NOTE_MAX 256

/* A device tracer's own losses (what it could not deliver), counted since
 * it started, whatever the tracer: the step reports what each run added
 * (docs/design.md §7, the tracer_* metrics). */
typedef struct zb_tracer_stats {
    const char *name;         /* the tracer, for messages ("CUPTI") */
    uint64_t records_dropped; /* the tracer had no buffer space for them */
    uint64_t zero_timestamps; /* delivered without a start or end time: left out */
    uint64_t inverted;        /* ending before they started: left out */
    uint64_t buffer_errors;   /* buffers it could not allocate or read: their records lost */
    /* One line when its records reach the harness clock by conversion from
     * another clock (docs/design.md §9), else "". */
    char note[ZB_TRACER_NOTE_MAX];
} zb_tracer_stats;

typedef struct zb_device_backend {
    const char *name;      /* the --backend value */
    const char *not_built; /* not in this build: why, one line; else NULL */

    /* ---- required ---- */
    /* Usable on this machine? ZB_OK with a short reason in `why` ("a usable
     * GPU was found"), or ZB_ERR_UNSUPPORTED with one line saying why not. */
    zb_status (*probe)(char *why, size_t n);
    zb_status (*create)(const zb_device_config *cfg, zb_device **out);
    /* The backend's kernel table (also its devices' zb_device_ops.kernels). */
    const struct zb_kernels *(*kernels)(void);
    const char *default_comm;      /* what --comm auto picks */
    zb_dtype default_param_dtype;  /* the step's --param-dtype when not given */
    int auto_priority;             /* --backend auto tries higher first; 0: never */

    /* ---- optional (NULL / 0: not offered) ---- */
    /* Non-NULL for a simulated device (the sim): one line saying so. Its
     * devices hold no data (zb_device_ops.no_data) and keep virtual time;
     * --nodes/--gpus-per-node describe the cluster it models in this one
     * process (no relaunch), every output is marked simulated, the loss is
     * not reported, and checks of data (conformance) do not apply to it. */
    const char *simulated;
    /* The hardware profile (profiles/hw/NAME.json) describing this
     * machine's device for local_rank, or NULL when unknown (no peaks). */
    const char *(*default_hw)(int local_rank);
    /* Adds the device's facts (GPU model, driver, ...) to the run's meta. */
    void (*meta)(int local_rank, json_t *meta);
    /* A tracer outside the device that fills the trace with its work (CUPTI):
     * started before the device's first call, flushed before a trace window
     * is read, stopped at exit. NULL: the device records its ops itself.
     * tracer_meta_key names the meta boolean saying whether it ran. */
    zb_status (*tracer_start)(zb_trace *t);
    void (*tracer_flush)(void);
    void (*tracer_finish)(void);
    const char *tracer_meta_key;
    /* The tracer's losses so far (zb_tracer_stats), once it started. */
    zb_status (*tracer_stats)(zb_tracer_stats *out);
    /* The device's view of its memory (zb_dev_mem_view). */
    zb_status (*mem_view)(zb_device *dev, zb_dev_mem_view *out);
    /* gemm --compare-direct's baseline: the library called directly on the
     * same buffers; `warmup` untimed then `iters` timed GEMMs, *seconds per
     * GEMM on this rank. gemm_direct_name titles the table's columns. */
    const char *gemm_direct_name;
    zb_status (*gemm_direct_time)(zb_device *dev, const zb_gemm_desc *g, int64_t warmup,
                                  int64_t iters, double *seconds);
    /* Why the gemm benchmark times this device in float only (its other
     * dtypes' GEMMs are references, not what a user would run); NULL: any. */
    const char *gemm_float_only_why;
    /* How many devices this process sees (a node's GPUs), for accept's
     * devices check before anything runs: ZB_OK with *count, or
     * ZB_ERR_UNSUPPORTED with one line in `why`. NULL: one device per rank
     * (cpu), nothing to count. */
    zb_status (*count_devices)(int *count, char *why, size_t n);
    /* Compute runs on the same cores as the comm's threads (MPI progress,
     * stream threads): compute slowed under overlap is then those threads
     * taking its cores, which the step's reading says. */
    bool compute_shares_cores;
    /* Measures one core's peak fp32 GFLOP/s (for hardware profiles that ask
     * for a measured peak): the best of n_runs runs in about `seconds`, each
     * run's rate into runs_gflops (NULL: not kept); *isa names the
     * instructions used. */
    double (*peak_gflops_per_core)(double seconds, int n_runs, double *runs_gflops, const char **isa);
    /* The *isa peak_gflops_per_core would name, untimed (NULL with it). */
    const char *(*peak_isa)(void);
} zb_device_backend;

/* The entry of a backend left out of this build; it keeps its auto
 * priority so that --backend auto can say why it was passed over. */
#define ZB_DEVICE_BACKEND_OFF(name_, why_, auto_priority_) \
    {.name = (name_), .not_built = (why_), .auto_priority = (auto_priority_)}

#ifdef __cplusplus
}
#endif
#endif
