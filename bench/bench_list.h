/* The benchmark registry: one line per benchmark, X(ID, name), where the
 * plug-in zb_bench_<name> is defined in its own file (bench.h) and
 * ZB_CMD_<ID> becomes its index (bench_config.h). The first line is the
 * default command; the order is the order the CLI lists commands in. */
#ifndef ZB_BENCH_LIST_H
#define ZB_BENCH_LIST_H

#define ZB_BENCH_LIST(X)            \
    X(STEP, step)                   \
    X(SCALE, scale)                 \
    X(ALLGATHER, allgather)         \
    X(REDUCESCATTER, reducescatter) \
    X(ALLREDUCE, allreduce)         \
    X(GEMM, gemm)                   \
    X(ATTENTION, attention)         \
    X(MEMORY, memory)               \
    X(KERNELS, kernels)

#endif
