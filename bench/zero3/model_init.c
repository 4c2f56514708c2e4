/* The model's seeded initialization (model.h, zb_model_init_unit): element
 * i of unit u is a pure function of (seed, u, i), so any split of a range
 * gives the same values bit for bit. A large range is split across host
 * threads: the ~1B step's 0.9e9 draws per copy (double log, sqrt, cos,
 * ~33 ns each) took ~30 s on one core, device time a GPU run pays for. The
 * formula stays on the host, in double: CUDA's log and cos may differ from
 * libm's in the last ulp, and every backend must start from the same
 * values. */
#include <math.h>
#include <pthread.h>
#include <unistd.h>

#include "model.h"
#include "rng.h"

#define ZB_INIT_DOMAIN 0x5a45524f33696e69ull /* "ZERO3ini" */
#define ZB_INIT_MAX_THREADS 64
#define ZB_INIT_MIN_PER_THREAD ((size_t)1 << 20) /* below this a thread costs more than it saves */

/* A standard normal from element i of the stream keyed by (seed, unit):
 * splitmix64 indexed at i, the 64 bits split into two uniforms in (0, 1),
 * Box-Muller's cosine branch. */
static double normal_at(uint64_t key, size_t i) {
    uint64_t h = zb_mix64(key + ((uint64_t)i + 1u) * ZB_GOLDEN_GAMMA);
    double u1 = ((double)(h >> 32) + 0.5) * (1.0 / 4294967296.0);
    double u2 = ((double)(h & 0xffffffffull) + 0.5) * (1.0 / 4294967296.0);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

typedef struct init_job {
    const zb_model_cfg *cfg;
    int unit;
    float *dst; /* element begin of the range */
    size_t begin, end;
} init_job;

static void init_serial(const init_job *j) {
    zb_unit_layout u;
    zb_model_unit_layout(j->cfg, j->unit, &u);
    uint64_t key = zb_mix64(zb_mix64(j->cfg->seed ^ ZB_INIT_DOMAIN) + (uint64_t)j->unit * ZB_GOLDEN_GAMMA);
    size_t i = j->begin;
    float *dst = j->dst;
    for (int t = 0; t < u.n_tensors && i < j->end; t++) {
        const zb_tensor_layout *tl = &u.tensors[t];
        size_t stop = tl->offset + tl->numel;
        if (stop > j->end) stop = j->end;
        for (; i < stop; i++) {
            dst[i - j->begin] = tl->is_matrix ? (float)(tl->init_std * normal_at(key, i)) : 1.0f;
        }
    }
    for (; i < j->end; i++) dst[i - j->begin] = 0.0f; /* padding past the unit */
}

static void *init_thread(void *arg) {
    init_serial((const init_job *)arg);
    return NULL;
}

/* Threads for n elements: one per online CPU, at most one per
 * ZB_INIT_MIN_PER_THREAD elements. */
static int init_threads(size_t n) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t t = n / ZB_INIT_MIN_PER_THREAD;
    if (cpus > 0 && t > (size_t)cpus) t = (size_t)cpus;
    if (t > ZB_INIT_MAX_THREADS) t = ZB_INIT_MAX_THREADS;
    return t < 1 ? 1 : (int)t;
}

void zb_model_init_unit(const zb_model_cfg *cfg, int unit, float *dst, size_t begin, size_t end) {
    if (end <= begin) return;
    size_t n = end - begin;
    int nt = init_threads(n);
    init_job jobs[ZB_INIT_MAX_THREADS];
    pthread_t tids[ZB_INIT_MAX_THREADS];
    int started[ZB_INIT_MAX_THREADS] = {0};
    for (int t = 0; t < nt; t++) {
        size_t b = begin + n * (size_t)t / (size_t)nt, e = begin + n * (size_t)(t + 1) / (size_t)nt;
        jobs[t] = (init_job){cfg, unit, dst + (b - begin), b, e};
        /* Thread 0's share runs here; a thread that cannot start runs here too. */
        started[t] = t > 0 && pthread_create(&tids[t], NULL, init_thread, &jobs[t]) == 0;
    }
    for (int t = 0; t < nt; t++) {
        if (!started[t]) init_serial(&jobs[t]);
    }
    for (int t = 0; t < nt; t++) {
        if (started[t]) pthread_join(tids[t], NULL);
    }
}
