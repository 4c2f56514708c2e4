/* A collective as one record (zb_coll_def), the way nccl-tests gives each
 * collective one small table of functions: its name, the shape of its
 * buffers, its bus-bandwidth factor and sent-bytes formula, its exact
 * expected output, how to issue it on a comm, and its plain-MPI baseline.
 * bench/allgather.c, reducescatter.c and allreduce.c each hold one record
 * and the benchmark entry that runs it (coll_bench.h); zb_coll_find looks a
 * record up by the comm layer's kind.
 *
 * Also the one generator of exact collective values (coll_data.c), used by
 * the benchmarks' checks and by the comm tests: element j of rank r's input
 * is a small integer in [-2, 2] drawn from a hash of (seed, r, j). Sums of up
 * to 128 such values stay within bf16's exact integers (|x| <= 256), so
 * float and bf16 results compare exactly whatever order the library adds
 * in; past 128 ranks bf16 sums are compared with a relative tolerance of
 * 2^-7 instead (zb_coll_count_wrong). */
#ifndef ZB_COLL_H
#define ZB_COLL_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One collective call's buffers, in the comm.h conventions. */
typedef struct zb_coll_args {
    void *send;
    void *recv;
    size_t count; /* per rank (all-gather, reduce-scatter) or total (all-reduce) */
    zb_dtype dtype;
    int rank, n_ranks;
    bool in_place;
    uint64_t seed;
} zb_coll_args;

typedef struct zb_coll_def {
    const char *name;  /* the benchmark's name, and its JSON "bench" */
    zb_coll kind;      /* the comm layer's id of it */
    const char *redop; /* the table's redop column: "none" or "sum" */
    /* Buffer shape: a buffer that holds one block of `count` per rank (else
     * one block). In place, the smaller buffer is this rank's block of the
     * larger one (the same buffer when both are one block). */
    bool send_per_rank, recv_per_rank;
    /* Bus bandwidth over algorithm bandwidth for n ranks (nccl-tests). */
    double (*busbw_factor)(int n_ranks);
    /* Bytes one rank sends for one call: the comm layer's formula. */
    uint64_t (*sent_bytes)(zb_coll kind, size_t count, size_t elem_bytes, int n_ranks);
    /* The exact value of recv element j once every rank's input is
     * zb_coll_fill_input's. */
    float (*expected)(const zb_coll_args *a, size_t j);
    /* Issues it on stream s of comm c. */
    zb_status (*issue)(zb_comm *c, zb_stream *s, const zb_coll_args *a, const char *label);
    /* The same call through plain blocking MPI on float buffers (returns an
     * MPI error code): the --compare-direct baseline (coll_direct.c). */
    int (*direct)(const zb_coll_args *a, MPI_Comm comm);
    /* Its plain non-blocking form, started (MPI_I...): the baseline's other
     * half, waited on with MPI_Wait. */
    int (*direct_start)(const zb_coll_args *a, MPI_Comm comm, MPI_Request *req);
} zb_coll_def;

/* The record of a collective kind (every benchmark's, bench registry), or
 * NULL for one without a benchmark (barrier). */
const zb_coll_def *zb_coll_find(zb_coll kind);

/* Elements of a rank's send and recv buffers. */
size_t zb_coll_send_elems(const zb_coll_def *def, size_t count, int n_ranks);
size_t zb_coll_recv_elems(const zb_coll_def *def, size_t count, int n_ranks);
/* The benchmarks' size in bytes of a call: its larger buffer (nccl-tests). */
uint64_t zb_coll_size_bytes(const zb_coll_def *def, size_t count, size_t elem_bytes, int n_ranks);
/* `count` for a sweep size in bytes (the inverse of zb_coll_size_bytes). */
size_t zb_coll_count_for(const zb_coll_def *def, uint64_t size_bytes, size_t elem_bytes, int n_ranks);
/* Points a->send/a->recv into two buffers of the larger size, out of place
 * (send in buf_a, recv in buf_b) or in place (inside the one holding the
 * larger buffer), from a->count, a->rank, a->dtype and a->in_place. */
void zb_coll_place(const zb_coll_def *def, zb_coll_args *a, void *buf_a, void *buf_b);

/* --rotate-bytes: call i of a size runs on part i mod n of the send and
 * receive buffers, the parts `stride` bytes apart (the call's larger
 * buffer, rounded up to a 4 KiB page); n = buffer_bytes / stride, at
 * least 1 (one part: the buffers' start, as without the flag). */
typedef struct zb_coll_slots {
    int64_t n;
    size_t stride;
} zb_coll_slots;
zb_coll_slots zb_coll_slots_for(const zb_coll_def *def, const zb_coll_args *a, size_t buffer_bytes);
/* a (placed at the buffers' start) for call i: on part i mod sl->n. */
zb_coll_args zb_coll_slot_args(const zb_coll_args *a, const zb_coll_slots *sl, int64_t i);

/* ---- the exact values (coll_data.c) ---- */

/* Element j of rank `rank`'s input for `seed`. */
float zb_coll_value(uint64_t seed, int rank, size_t j);
/* The sum of element j over ranks 0..n_ranks-1. */
float zb_coll_sum_value(uint64_t seed, int n_ranks, size_t j);
/* Writes this rank's input into a->send (zb_coll_send_elems elements). */
void zb_coll_fill_input(const zb_coll_def *def, const zb_coll_args *a);
/* Elements of a->recv that differ from def->expected. */
int64_t zb_coll_count_wrong(const zb_coll_def *def, const zb_coll_args *a);

#ifdef __cplusplus
}
#endif
#endif
