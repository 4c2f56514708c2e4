/* The sim device (docs/design.md §3, §6): the device interface on a device
 * that holds no data and keeps virtual time.
 *
 * Memory: alloc hands out address ranges from a reserved, inaccessible
 * region (never mapped, so a stray host access faults instead of reading
 * garbage) and counts them per tag (mem_account.h), so peak memory is the
 * engine's own accounting at any size. Copies into host memory leave 0xff
 * bytes (NaN); copies between host buffers are real.
 *
 * Time: each stream has a clock (ns of virtual time); the host has one too,
 * the latest time any synchronization waited for. An op issued on a stream
 * starts at max(stream clock, host clock) and ends its cost later
 * (sim_cost.h, plus the profile's op_overhead_s); event_record stamps the
 * stream's clock, stream_wait_event raises the waiting stream's clock to the
 * event's stamp, syncs raise the host clock, elapsed is the difference of
 * two stamps. A compute op that overlaps, in virtual time, a collective
 * already issued runs (1 + interference) times slower while they overlap;
 * a collective overlapped by compute, issued before or after it, runs (1 +
 * comm_interference) times slower there, and what follows it on its stream
 * (ops, event stamps, trace records) moves later with its end.
 * Every op leaves one trace record in virtual time; the device's now_ns is
 * the host clock, so the engine's step times are virtual too.
 *
 * Single-threaded: the host issues, nothing runs behind it. The sim comm
 * (harness/comm/sim) issues its collectives through zb_sim_issue. */
#ifndef ZB_DEVICE_SIM_H
#define ZB_DEVICE_SIM_H

#include "device.h"
#include "kernels.h"
#include "profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The profile a sim device costs with when cfg->hw is NULL. */
#define ZB_SIM_DEFAULT_HW "h100_sxm"

/* ZB_ERR_INVALID naming the missing parameter and the file when the
 * profile (cfg->hw, or ZB_SIM_DEFAULT_HW when NULL) lacks what the sim
 * device needs (ZB_SIM_DEVICE_NEEDS). */
zb_status zb_device_sim_create(const zb_device_config *cfg, zb_device **out);
const zb_kernels *zb_kernels_sim(void);

/* True when dev is a sim device. */
bool zb_sim_is_device(const zb_device *dev);
/* The profile the device costs ops with (its own copy). */
const zb_hw_profile *zb_sim_hw(const zb_device *dev);

/* Issues one op of `seconds` (before the op overhead) on sim stream s:
 * kind, label, unit, bytes and flops from info. Compute ops slow down under
 * overlapping collectives; comm ops are remembered as such. */
zb_status zb_sim_issue(zb_stream *s, const zb_op_info *info, double seconds);

#ifdef __cplusplus
}
#endif
#endif
