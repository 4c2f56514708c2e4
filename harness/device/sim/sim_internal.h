/* The sim device's state, shared by device_sim.c (memory, streams, events,
 * copies, GEMM), sim_time.c (virtual time) and sim_kernels.c (the kernel
 * table). Not a public header: use device_sim.h. */
#ifndef ZB_SIM_INTERNAL_H
#define ZB_SIM_INTERNAL_H

#include <stdint.h>

#include "device_sim.h"
#include "mem_account.h"

typedef struct sim_interval {
    int64_t start_ns, end_ns;
} sim_interval;

struct sim_stream;
struct sim_event;

/* An op or an event record not yet behind the host clock, in issue order:
 * what a collective's later stretch (comm_interference, sim_time.c) must
 * move. An event's item holds its stamp in start_ns and end_ns. */
typedef struct sim_open {
    struct sim_stream *s;
    struct sim_event *ev; /* an event record; NULL: an op */
    zb_op_kind kind;
    uint64_t seq;         /* the op's trace record */
    int64_t start_ns, end_ns;
} sim_open;

typedef struct sim_device {
    zb_device base;
    zb_hw_profile hw;
    zb_mem_account acct;
    char *region;           /* reserved, never accessible */
    size_t region_bytes;
    size_t next;            /* bump offset into the region */
    int n_streams;
    uint64_t n_issued;      /* trace records' seq */
    int64_t host_ns;        /* the host's virtual clock */
    sim_open *open;         /* ops and event records not yet behind the host clock */
    size_t n_open, cap_open;
    sim_interval *compute;  /* compute ops not yet behind the host clock */
    size_t n_compute, cap_compute;
} sim_device;

typedef struct sim_stream {
    zb_stream base;
    int64_t clock_ns; /* when the work issued so far ends */
} sim_stream;

typedef struct sim_event {
    zb_event base;
    bool recorded;
    int64_t stamp_ns;
} sim_event;

/* When the next op on s may start: max(stream clock, host clock). */
int64_t zb_sim_ready_ns(const sim_stream *s);

/* The open list (sim_time.c): an event's record (its earlier one
 * forgotten), and forgetting an event or a stream that goes away. */
zb_status zb_sim_open_event(sim_device *d, sim_stream *s, sim_event *e);
void zb_sim_forget(sim_device *d, const sim_stream *s, const sim_event *e);

#endif
