/* Ring reduce-scatter over MPI point-to-point (mpi_ring_rs.h). */
#include "mpi_ring_rs.h"

#include "bf16.h"
#include "vec_clones.h"

/* The tag of the ring's messages: the stream's communicator runs its
 * collectives one after the other, so messages of one tag match step by
 * step (the all-gather's tag differs). */
#define ZB_MPI_RING_RS_TAG 0x7a68

size_t zb_ring_rs_scratch_bytes(size_t count, zb_dtype dtype) { return 2 * count * zb_dtype_size(dtype); }

static size_t block_bytes(const zb_ring_rs *r) { return r->count * zb_dtype_size(r->dtype); }
static char *scratch_block(const zb_ring_rs *r, int step) { return r->scratch + (size_t)(step % 2) * block_bytes(r); }
static int mod(int a, int n) { return ((a % n) + n) % n; }

/* The adds, written for the vectoriser (this file builds with -O3; see
 * vec_clones.h): acc += x, or out = a + b into a third buffer. Every block
 * is distinct memory except the last step in place, where recv is the own
 * input block: that one is acc += received. */
ZB_VEC_CLONES static void add_f32(float *restrict acc, const float *restrict x, size_t n) {
    for (size_t i = 0; i < n; i++) acc[i] += x[i];
}
ZB_VEC_CLONES static void add3_f32(float *restrict out, const float *restrict a, const float *restrict b, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}

/* bf16: added in fp32, rounded to nearest even (as the bf16 MPI_Op). */
ZB_VEC_CLONES static void add_bf16(zb_bf16 *restrict acc, const zb_bf16 *restrict x, size_t n) {
    for (size_t i = 0; i < n; i++) acc[i] = zb_f32_to_bf16(zb_bf16_to_f32(acc[i]) + zb_bf16_to_f32(x[i]));
}
ZB_VEC_CLONES static void add3_bf16(zb_bf16 *restrict out, const zb_bf16 *restrict a, const zb_bf16 *restrict b,
                                    size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = zb_f32_to_bf16(zb_bf16_to_f32(a[i]) + zb_bf16_to_f32(b[i]));
}

static int post_step(zb_ring_rs *r, const char **call) {
    int s = r->step, right = mod(r->rank + 1, r->n), left = mod(r->rank - 1, r->n);
    const char *from = s == 0 ? r->send + (size_t)mod(r->rank - 1, r->n) * block_bytes(r) : scratch_block(r, s - 1);
    *call = "MPI_Irecv";
    int rc = MPI_Irecv(scratch_block(r, s), (int)r->count, r->type, left, ZB_MPI_RING_RS_TAG, r->comm, &r->req[0]);
    if (rc != MPI_SUCCESS) return rc;
    *call = "MPI_Isend";
    return MPI_Isend(from, (int)r->count, r->type, right, ZB_MPI_RING_RS_TAG, r->comm, &r->req[1]);
}

int zb_ring_rs_start(zb_ring_rs *r, const void *send, void *recv, void *scratch, size_t count, zb_dtype dtype,
                     MPI_Datatype type, MPI_Comm comm, int rank, int n, const char **call) {
    r->send = (const char *)send;
    r->recv = (char *)recv;
    r->scratch = (char *)scratch;
    r->count = count;
    r->dtype = dtype;
    r->type = type;
    r->comm = comm;
    r->rank = rank;
    r->n = n;
    r->step = 0;
    r->req[0] = r->req[1] = MPI_REQUEST_NULL;
    return post_step(r, call);
}

int zb_ring_rs_advance(zb_ring_rs *r, bool *done, const char **call) {
    int s = r->step;
    bool last = s == r->n - 2;
    char *got = scratch_block(r, s);
    const char *own = r->send + (size_t)mod(r->rank - s - 2, r->n) * block_bytes(r);
    char *out = last ? r->recv : got;
    bool bf16 = r->dtype == ZB_DTYPE_BF16;
    if (out == got || out == own) { /* a middle step, or the last in place */
        const char *x = out == got ? own : got;
        if (bf16) add_bf16((zb_bf16 *)out, (const zb_bf16 *)x, r->count);
        else add_f32((float *)out, (const float *)x, r->count);
    } else if (bf16) {
        add3_bf16((zb_bf16 *)out, (const zb_bf16 *)got, (const zb_bf16 *)own, r->count);
    } else {
        add3_f32((float *)out, (const float *)got, (const float *)own, r->count);
    }
    *done = last;
    if (last) return MPI_SUCCESS;
    r->step = s + 1;
    return post_step(r, call);
}
