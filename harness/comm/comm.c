/* Backend-independent comm helpers: names and the sent-bytes formula. */
#include "comm.h"

const char *zb_coll_name(zb_coll c) {
    switch (c) {
    case ZB_COLL_ALLGATHER: return "allgather";
    case ZB_COLL_REDUCESCATTER: return "reducescatter";
    case ZB_COLL_ALLREDUCE: return "allreduce";
    case ZB_COLL_BARRIER: return "barrier";
    case ZB_COLL_COUNT: break;
    }
    return "unknown";
}

uint64_t zb_coll_sent_bytes(zb_coll c, size_t count, size_t elem_bytes, int n_ranks) {
    uint64_t n = (uint64_t)(n_ranks > 0 ? n_ranks : 1);
    uint64_t bytes = (uint64_t)count * elem_bytes;
    switch (c) {
    case ZB_COLL_ALLGATHER:
    case ZB_COLL_REDUCESCATTER: return bytes * (n - 1);
    case ZB_COLL_ALLREDUCE: return 2 * bytes * (n - 1) / n;
    case ZB_COLL_BARRIER:
    case ZB_COLL_COUNT: break;
    }
    return 0;
}
