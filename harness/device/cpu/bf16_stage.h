/* The CPU kernel table's queued op record (dispatch.c), shared with the
 * bf16 stage (bf16_stage.c) that runs an op on bf16 storage. */
#ifndef ZB_CPU_BF16_STAGE_H
#define ZB_CPU_BF16_STAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"

typedef enum cpu_kop {
    KOP_EMBEDDING_FWD,
    KOP_EMBEDDING_BWD,
    KOP_RMSNORM_FWD,
    KOP_RMSNORM_BWD,
    KOP_ROPE_FWD,
    KOP_ROPE_BWD,
    KOP_ATTENTION_FWD,
    KOP_ATTENTION_BWD,
    KOP_SWIGLU_FWD,
    KOP_SWIGLU_BWD,
    KOP_RESIDUAL_FWD,
    KOP_ACCUMULATE,
    KOP_CROSS_ENTROPY_FWD,
    KOP_CROSS_ENTROPY_BWD,
    KOP_ADAMW,
    KOP_FILL,
    KOP_CAST_F32_TO_BF16,
    KOP_CAST_BF16_TO_F32
} cpu_kop;

/* One queued op's arguments: outputs o[], inputs in[], dimensions d[],
 * element count n, float scalars f[], step t, flag. Pointers are kept as the
 * entry got them: the activations and weights (the entry's void * arguments)
 * hold `dtype`, the others fp32 (the fp32 kernels take them as float *). */
typedef struct cpu_kargs {
    cpu_kop op;
    const char *name; /* for messages from the stream's thread */
    zb_dtype dtype;   /* storage of activations and weights; F32 for fill/adamw/cast */
    void *o[3];
    const void *in[6];
    const int32_t *tok;
    int d[6];
    size_t n;
    float f[5];
    int t;
    bool flag;
} cpu_kargs;

/* Runs the fp32 reference kernel on the record's pointers (dispatch.c). */
zb_status zb_cpu_kargs_run_f32(const cpu_kargs *a);

/* The bf16 reference (bf16_stage.c): the record's activations and weights
 * hold bf16; widens them into fp32 scratch, runs zb_cpu_kargs_run_f32 there
 * and rounds each bf16 output once, to nearest even, into place. */
zb_status zb_cpu_kargs_run_bf16(const cpu_kargs *a);

#endif
