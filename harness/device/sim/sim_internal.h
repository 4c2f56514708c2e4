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
    sim_interval *comm;     /* collectives not yet behind the host clock */
    size_t n_comm, cap_comm;
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

#endif
