/* cuDNN's fused scaled-dot-product attention behind cudnn_sdpa.h's C
 * interface: one C++17 translation unit over cuDNN's header-only C++ front
 * end (the PyPI package nvidia-cudnn-frontend; harness/device/cuda/
 * CMakeLists.txt finds it). Built only where CMake finds cudnn.h (cuDNN 9)
 * and the front end; cudnn_sdpa_off.c stands in otherwise.
 *
 * Loading. libcudnn is never linked: the front end is compiled with
 * NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING, so every cuDNN call goes through
 * dlsym on the handle this file opens (cudnn_frontend::cudnn_dlhandle). A
 * zerobench binary therefore starts on a machine without libcudnn.so.9,
 * and zb_cudnn_sdpa_usable says why the tiled kernel runs instead. The
 * library tried: $ZB_CUDNN_LIBRARY (an exact file; only it, when set),
 * else the libcudnn.so.9 CMake found at build time (ZB_CUDNN_LIBRARY_PATH),
 * else "libcudnn.so.9" on the loader's search path. Refused: a cuDNN whose
 * major version is not 9, or one built for another CUDA major version than
 * the runtime this process runs (cudnnGetCudartVersion against
 * cudaRuntimeGetVersion). The front end also dlopens the CUDA runtime for
 * its own few CUDA calls (workspace memsets, the device's SM version); it is
 * pointed at the libcudart this process already has (dladdr of a runtime
 * function, through CUDNN_FRONTEND_CUDART_LIB_NAME unless that is set), so
 * the two never differ.
 *
 * Graphs. Forward: sdpa(Q, K, V) with a causal mask (top-left diagonal,
 * right bound 0: key j <= query i), scale 1/sqrt(D), the softmax stats
 * generated; backward: sdpa_backward(Q, K, V, O, dO, Stats). bf16 storage,
 * fp32 intermediates and compute. The layouts are zerobench's, given by
 * strides: q/out/dout/dq [B,T,H,D] are dims {B,H,T,D} with strides
 * {T*H*D, D, H*D, 1}; k/v/dk/dv [B,T,KVH,D] the same with KVH (cuDNN maps
 * query head h to kv head h / (H/KVH), and sums dk, dv over the group);
 * lse [B,H,T] fp32 is Stats {B,H,T,1}, strides {H*T, T, 1, 1}: the natural
 * log-sum-exp of each row's scaled scores, max + ln(sum exp(s - max)), the
 * statistic kernels.h's attention entries save.
 *
 * Plans. One cache for the process, a global mutex around everything (cuDNN
 * execution plans are not guaranteed thread-safe, and each call is a few
 * microseconds of host work); per CUDA device a cudnnHandle_t, created at
 * the first call on that device, and the plans, keyed by (direction, B, T,
 * H, KVH, D). A plan is built once (validate, build_operation_graph,
 * heuristics mode A, check_support, build_plans) and reused; a shape cuDNN
 * refuses is remembered as refused (ZB_ERR_UNSUPPORTED every time, no
 * rebuild), so the kernel table can run its tiled kernel for it. Each call
 * sets the handle's stream (cudnnSetStream) before executing.
 *
 * Workspace. Each plan owns a device buffer of the size the plan asks for,
 * cudaMalloc'ed once when the plan is built (the first call of that shape,
 * which the step's warm-up makes) and freed by zb_cudnn_sdpa_release. It is
 * NOT in zerobench's memory ledger nor in the device's per-tag accounting
 * (harness/device/mem_account.h): the ledger predicts the per-tag peaks
 * exactly, and this buffer is library memory, like cuBLASLt's handle or the
 * CUDA context. It shows in the cuda device's meminfo as memory outside the
 * pool (other_bytes, used_high_bytes); zb_cudnn_sdpa_workspace_bytes says
 * how much. Calls on two streams would share a plan's workspace: a call on
 * another stream than the plan's last one first waits (cudaStreamWaitEvent)
 * for that stream's last execution of the plan.
 *
 * Errors. Every failure is a zb_status with one line naming the op
 * (attention_fwd / attention_bwd), the shape and cuDNN's message (the front
 * end's, with cuDNN's last error string); nothing throws across the C
 * boundary (every entry point catches). Nothing here synchronizes, except
 * zb_cudnn_sdpa_release (cudaFree). State is allocated and never destroyed
 * by static destructors: at process exit, cuDNN and the CUDA context may
 * already be gone. */
#define NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING 1

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <cudnn_frontend.h>

#include "cudnn_sdpa.h"

#ifndef ZB_CUDNN_LIBRARY_PATH
#define ZB_CUDNN_LIBRARY_PATH ""
#endif

namespace cudnn_frontend {
/* The handle the front end's dynamic loading resolves every cuDNN symbol
 * from (cudnn_frontend_shim.h declares it; the application defines it). */
void *cudnn_dlhandle = nullptr;
} // namespace cudnn_frontend

namespace fe = cudnn_frontend;

namespace {

constexpr int kMaxDevices = 64;
constexpr int kMaxHeadDim = 128; /* every SM >= 80 and cuDNN 9.x; 256 needs Hopper */
constexpr size_t kAlign = 16;    /* bf16 rows for the tensor-core loads */

enum Uid : int64_t { UID_Q = 1, UID_K, UID_V, UID_O, UID_LSE, UID_DO, UID_DQ, UID_DK, UID_DV };

struct Plan {
    bool backward = false;
    int B = 0, T = 0, H = 0, KVH = 0, D = 0;
    std::shared_ptr<fe::graph::Graph> graph;
    void *ws = nullptr;
    int64_t ws_bytes = 0;
    cudaEvent_t done = nullptr; /* recorded after each execution */
    cudaStream_t last = nullptr;
    bool executed = false;
    bool refused = false;
    std::string refusal; /* the one-line message, when refused */
};

struct Dev {
    bool checked = false; /* the checks below ran (reset by release) */
    bool ok = false;
    char why[256] = "";
    cudnnHandle_t handle = nullptr;
    std::vector<Plan *> plans;
};

struct Lib {
    bool tried = false;
    bool ok = false;
    char why[384] = "";
    char path[256] = "";
    size_t version = 0;        /* cudnnGetVersion */
    size_t cudart_version = 0; /* cudnnGetCudartVersion */
};

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
Lib *g_lib = nullptr;           /* never freed */
Dev *g_devs[kMaxDevices] = {};  /* never freed (their contents are, by release) */
size_t g_ws_bytes = 0;

struct Locked {
    Locked() { pthread_mutex_lock(&g_lock); }
    ~Locked() { pthread_mutex_unlock(&g_lock); }
    Locked(const Locked &) = delete;
    Locked &operator=(const Locked &) = delete;
};

/* s on one line (newlines and tabs become spaces, runs of spaces one), at
 * most n characters. */
std::string one_line(const std::string &s, size_t n = 300) {
    std::string out;
    out.reserve(s.size() < n ? s.size() : n);
    bool space = false;
    for (char ch : s) {
        if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
        if (ch == ' ' && (space || out.empty())) continue;
        space = ch == ' ';
        out.push_back(ch);
        if (out.size() >= n) {
            out += "...";
            break;
        }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

/* cuDNN's own last error string (cudnnGetLastErrorString), "" if none. */
std::string cudnn_last_error() {
    try {
        return one_line(fe::detail::get_last_error_string_(), 200);
    } catch (...) {
        return "";
    }
}

/* The front end's message, with cuDNN's last error string when it adds one. */
std::string fe_message(fe::error_t &e) {
    std::string m = one_line(e.get_message());
    std::string last = cudnn_last_error();
    if (!last.empty() && m.find(last) == std::string::npos) m += " [cuDNN: " + last + "]";
    return m;
}

std::string shape_of(bool backward, int B, int T, int H, int KVH, int D) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s B=%d T=%d H=%d KVH=%d D=%d bf16",
             backward ? "attention_bwd" : "attention_fwd", B, T, H, KVH, D);
    return buf;
}

std::string cuda_message(cudaError_t e) {
    return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

/* Points the front end's own CUDA runtime loading at the libcudart this
 * process already uses (see the top comment). */
void pin_frontend_cudart() {
    if (getenv("CUDNN_FRONTEND_CUDART_LIB_NAME")) return;
    Dl_info info;
    memset(&info, 0, sizeof info);
    if (!dladdr(reinterpret_cast<void *>(&cudaRuntimeGetVersion), &info) || !info.dli_fname) return;
    /* a static runtime (no libcudart.so in the process) leaves the front
     * end's default: it then loads libcudart.so.13 on its own */
    if (!strstr(info.dli_fname, "libcudart.so")) return;
    setenv("CUDNN_FRONTEND_CUDART_LIB_NAME", info.dli_fname, 0);
}

/* Loads libcudnn once (under g_lock). */
bool load_library(const char **why) {
    if (!g_lib) g_lib = new Lib;
    Lib &L = *g_lib;
    if (!L.tried) {
        L.tried = true;
        const char *env = getenv("ZB_CUDNN_LIBRARY");
        std::vector<std::string> candidates;
        if (env && *env) {
            candidates.push_back(env);
        } else {
            if (ZB_CUDNN_LIBRARY_PATH[0]) candidates.push_back(ZB_CUDNN_LIBRARY_PATH);
            candidates.push_back("libcudnn.so.9");
        }
        void *h = nullptr;
        std::string errors;
        for (const std::string &c : candidates) {
            dlerror();
            h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (h) {
                snprintf(L.path, sizeof L.path, "%s", c.c_str());
                break;
            }
            const char *e = dlerror();
            if (!errors.empty()) errors += "; ";
            errors += e ? e : c + ": not loadable";
        }
        if (!h) {
            snprintf(L.why, sizeof L.why, "libcudnn.so.9 could not be loaded (%s)%s",
                     one_line(errors, 250).c_str(),
                     env && *env ? "" : "; ZB_CUDNN_LIBRARY names the file to load");
            *why = L.why;
            return false;
        }
        using VersionFn = size_t (*)(void);
        auto get_version = reinterpret_cast<VersionFn>(dlsym(h, "cudnnGetVersion"));
        auto get_cudart = reinterpret_cast<VersionFn>(dlsym(h, "cudnnGetCudartVersion"));
        if (!get_version || !get_cudart) {
            snprintf(L.why, sizeof L.why, "%s has no cudnnGetVersion/cudnnGetCudartVersion: not cuDNN 9",
                     L.path);
            dlclose(h);
            *why = L.why;
            return false;
        }
        L.version = get_version();
        L.cudart_version = get_cudart();
        int rt = 0;
        if (cudaRuntimeGetVersion(&rt) != cudaSuccess) rt = 0;
        if (L.version < 90000 || L.version >= 100000) {
            snprintf(L.why, sizeof L.why, "cuDNN %zu.%zu.%zu (%s): zerobench uses cuDNN 9",
                     L.version / 10000, L.version / 100 % 100, L.version % 100, L.path);
            dlclose(h);
            *why = L.why;
            return false;
        }
        if (rt / 1000 != (int)(L.cudart_version / 1000)) {
            snprintf(L.why, sizeof L.why, "cuDNN %zu.%zu.%zu (%s) was built for CUDA %zu, this process "
                     "runs CUDA %d.%d", L.version / 10000, L.version / 100 % 100, L.version % 100, L.path,
                     L.cudart_version / 1000, rt / 1000, rt % 1000 / 10);
            dlclose(h);
            *why = L.why;
            return false;
        }
        pin_frontend_cudart();
        fe::cudnn_dlhandle = h;
        L.ok = true;
    }
    if (!L.ok) *why = L.why;
    return L.ok;
}

/* The state of the current CUDA device, checked and with its handle; NULL
 * (and *why) when cuDNN's SDPA cannot run there. Under g_lock. */
Dev *current_device(const char **why) {
    int ord = -1;
    cudaError_t e = cudaGetDevice(&ord);
    if (e != cudaSuccess || ord < 0 || ord >= kMaxDevices) {
        (void)cudaGetLastError();
        *why = "no usable current CUDA device";
        return nullptr;
    }
    if (!load_library(why)) return nullptr;
    if (!g_devs[ord]) g_devs[ord] = new Dev;
    Dev &d = *g_devs[ord];
    if (!d.checked) {
        d.checked = true;
        d.ok = false;
        int major = 0, minor = 0;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ord) != cudaSuccess ||
            cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ord) != cudaSuccess) {
            (void)cudaGetLastError();
            snprintf(d.why, sizeof d.why, "the compute capability of CUDA device %d is unknown", ord);
        } else if (major < 8) {
            snprintf(d.why, sizeof d.why, "CUDA device %d is sm_%d%d: cuDNN's bf16 SDPA needs sm_80 or newer",
                     ord, major, minor);
        } else {
            cudnnStatus_t s = CUDNN_STATUS_INTERNAL_ERROR;
            std::string msg;
            try {
                s = fe::detail::create_handle(&d.handle);
                if (s != CUDNN_STATUS_SUCCESS) msg = fe::detail::get_error_string(s);
            } catch (std::exception &ex) {
                msg = ex.what();
            } catch (...) {
                msg = "unknown exception";
            }
            if (s == CUDNN_STATUS_SUCCESS) {
                d.ok = true;
            } else {
                d.handle = nullptr;
                std::string last = cudnn_last_error();
                snprintf(d.why, sizeof d.why, "cudnnCreate on CUDA device %d failed: %s%s%s", ord,
                         one_line(msg, 120).c_str(), last.empty() ? "" : ": ", last.c_str());
            }
        }
    }
    if (!d.ok) {
        *why = d.why;
        return nullptr;
    }
    return &d;
}

bool dims_ok(int B, int T, int H, int KVH, int D) {
    return B > 0 && T > 0 && H > 0 && KVH > 0 && H % KVH == 0 && D > 0 && D % 8 == 0 &&
           D <= kMaxHeadDim;
}

/* The forward graph: O, Stats from Q, K, V. */
std::shared_ptr<fe::graph::Graph> forward_graph(int64_t B, int64_t T, int64_t H, int64_t KVH,
                                                int64_t D) {
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(fe::DataType_t::BFLOAT16)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    std::vector<int64_t> qd{B, H, T, D}, qs{T * H * D, D, H * D, 1};
    std::vector<int64_t> kd{B, KVH, T, D}, ks{T * KVH * D, D, KVH * D, 1};
    auto Q = g->tensor(fe::graph::Tensor_attributes().set_name("Q").set_uid(UID_Q).set_dim(qd).set_stride(qs));
    auto K = g->tensor(fe::graph::Tensor_attributes().set_name("K").set_uid(UID_K).set_dim(kd).set_stride(ks));
    auto V = g->tensor(fe::graph::Tensor_attributes().set_name("V").set_uid(UID_V).set_dim(kd).set_stride(ks));
    auto opts = fe::graph::SDPA_attributes()
                    .set_name("zb_sdpa_fwd")
                    .set_generate_stats(true)
                    .set_attn_scale((float)(1.0 / std::sqrt((double)D)))
                    .set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT)
                    .set_diagonal_band_right_bound(0);
    auto outs = g->sdpa(Q, K, V, opts);
    outs[0]->set_output(true).set_uid(UID_O).set_dim(qd).set_stride(qs);
    outs[1]->set_output(true)
        .set_uid(UID_LSE)
        .set_data_type(fe::DataType_t::FLOAT)
        .set_dim({B, H, T, 1})
        .set_stride({H * T, T, 1, 1});
    return g;
}

/* The backward graph: dQ, dK, dV from Q, K, V, O, dO, Stats. */
std::shared_ptr<fe::graph::Graph> backward_graph(int64_t B, int64_t T, int64_t H, int64_t KVH,
                                                 int64_t D) {
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(fe::DataType_t::BFLOAT16)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    std::vector<int64_t> qd{B, H, T, D}, qs{T * H * D, D, H * D, 1};
    std::vector<int64_t> kd{B, KVH, T, D}, ks{T * KVH * D, D, KVH * D, 1};
    auto Q = g->tensor(fe::graph::Tensor_attributes().set_name("Q").set_uid(UID_Q).set_dim(qd).set_stride(qs));
    auto K = g->tensor(fe::graph::Tensor_attributes().set_name("K").set_uid(UID_K).set_dim(kd).set_stride(ks));
    auto V = g->tensor(fe::graph::Tensor_attributes().set_name("V").set_uid(UID_V).set_dim(kd).set_stride(ks));
    auto O = g->tensor(fe::graph::Tensor_attributes().set_name("O").set_uid(UID_O).set_dim(qd).set_stride(qs));
    auto dO = g->tensor(fe::graph::Tensor_attributes().set_name("dO").set_uid(UID_DO).set_dim(qd).set_stride(qs));
    auto S = g->tensor(fe::graph::Tensor_attributes()
                           .set_name("Stats")
                           .set_uid(UID_LSE)
                           .set_data_type(fe::DataType_t::FLOAT)
                           .set_dim({B, H, T, 1})
                           .set_stride({H * T, T, 1, 1}));
    auto opts = fe::graph::SDPA_backward_attributes()
                    .set_name("zb_sdpa_bwd")
                    .set_attn_scale((float)(1.0 / std::sqrt((double)D)))
                    .set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT)
                    .set_diagonal_band_right_bound(0);
    auto grads = g->sdpa_backward(Q, K, V, O, dO, S, opts);
    grads[0]->set_output(true).set_uid(UID_DQ).set_dim(qd).set_stride(qs);
    grads[1]->set_output(true).set_uid(UID_DK).set_dim(kd).set_stride(ks);
    grads[2]->set_output(true).set_uid(UID_DV).set_dim(kd).set_stride(ks);
    return g;
}

/* Builds p's graph and plan; on failure marks it refused with the message. */
void build_plan(Dev &d, Plan &p) {
    const std::string shape = shape_of(p.backward, p.B, p.T, p.H, p.KVH, p.D);
    const char *stage = "graph construction";
    try {
        auto g = p.backward ? backward_graph(p.B, p.T, p.H, p.KVH, p.D)
                            : forward_graph(p.B, p.T, p.H, p.KVH, p.D);
        fe::error_t e;
        stage = "validate";
        e = g->validate();
        if (e.is_good()) {
            stage = "build_operation_graph";
            e = g->build_operation_graph(d.handle);
        }
        if (e.is_good()) {
            stage = "create_execution_plans";
            e = g->create_execution_plans({fe::HeurMode_t::A});
        }
        if (e.is_good()) {
            stage = "check_support";
            e = g->check_support(d.handle);
        }
        if (e.is_good()) {
            stage = "build_plans";
            e = g->build_plans(d.handle, fe::BuildPlanPolicy_t::HEURISTICS_CHOICE);
        }
        int64_t ws = 0;
        if (e.is_good()) {
            stage = "get_workspace_size";
            e = g->get_workspace_size(ws);
        }
        if (e.is_bad()) {
            p.refused = true;
            p.refusal = "cuDNN SDPA " + shape + ": cuDNN refused the graph at " + stage + ": " +
                        fe_message(e);
            return;
        }
        p.graph = std::move(g);
        p.ws_bytes = ws < 0 ? 0 : ws;
    } catch (std::exception &ex) {
        p.refused = true;
        p.refusal = "cuDNN SDPA " + shape + ": " + stage + " threw: " + one_line(ex.what());
    } catch (...) {
        p.refused = true;
        p.refusal = "cuDNN SDPA " + shape + ": " + stage + " threw an unknown exception";
    }
}

/* p's workspace and event, made once; ZB_ERR_NOMEM / ZB_ERR_INTERNAL with
 * the message recorded when CUDA refuses. */
zb_status plan_resources(Plan &p) {
    const std::string shape = shape_of(p.backward, p.B, p.T, p.H, p.KVH, p.D);
    if (p.ws_bytes > 0 && !p.ws) {
        cudaError_t e = cudaMalloc(&p.ws, (size_t)p.ws_bytes);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            p.ws = nullptr;
            return ZB_FAIL(e == cudaErrorMemoryAllocation ? ZB_ERR_NOMEM : ZB_ERR_INTERNAL,
                           "cuDNN SDPA %s: cudaMalloc of its %lld-byte workspace failed (%s)",
                           shape.c_str(), (long long)p.ws_bytes, cuda_message(e).c_str());
        }
        g_ws_bytes += (size_t)p.ws_bytes;
    }
    if (!p.done) {
        cudaError_t e = cudaEventCreateWithFlags(&p.done, cudaEventDisableTiming);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            p.done = nullptr;
            return ZB_FAIL(ZB_ERR_INTERNAL, "cuDNN SDPA %s: cudaEventCreateWithFlags failed (%s)",
                           shape.c_str(), cuda_message(e).c_str());
        }
    }
    return ZB_OK;
}

/* The plan of this shape on the current device, built at its first use.
 * Under g_lock. ZB_ERR_UNSUPPORTED (message recorded) when cuDNN's SDPA is
 * not usable or refuses the shape; *first_refusal true only the first time
 * this shape is refused. */
zb_status get_plan(bool backward, int B, int T, int H, int KVH, int D, Dev **dev, Plan **out,
                   bool *first_refusal) {
    *out = nullptr;
    *dev = nullptr;
    if (first_refusal) *first_refusal = false;
    const std::string shape = shape_of(backward, B, T, H, KVH, D);
    if (!dims_ok(B, T, H, KVH, D)) {
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "cuDNN SDPA %s: not a shape it takes (positive sizes, H a "
                       "multiple of KVH, D a multiple of 8 and at most %d)", shape.c_str(), kMaxHeadDim);
    }
    const char *why = "";
    Dev *d = current_device(&why);
    if (!d) return ZB_FAIL(ZB_ERR_UNSUPPORTED, "cuDNN SDPA %s: not usable: %s", shape.c_str(), why);
    Plan *p = nullptr;
    for (Plan *q : d->plans) {
        if (q->backward == backward && q->B == B && q->T == T && q->H == H && q->KVH == KVH &&
            q->D == D) {
            p = q;
            break;
        }
    }
    if (!p) {
        p = new Plan;
        p->backward = backward;
        p->B = B, p->T = T, p->H = H, p->KVH = KVH, p->D = D;
        d->plans.push_back(p);
        build_plan(*d, *p);
        if (p->refused && first_refusal) *first_refusal = true;
    }
    if (p->refused) return ZB_FAIL(ZB_ERR_UNSUPPORTED, "%s", p->refusal.c_str());
    ZB_TRY(plan_resources(*p));
    *dev = d;
    *out = p;
    return ZB_OK;
}

bool aligned(const void *p) { return ((uintptr_t)p % kAlign) == 0; }

/* Enqueues p (a plan of device d) on `stream` with the given pointers.
 * Under g_lock. */
zb_status execute(Dev &d, Plan &p, cudaStream_t stream, std::unordered_map<int64_t, void *> &pack) {
    const std::string shape = shape_of(p.backward, p.B, p.T, p.H, p.KVH, p.D);
    cudnnStatus_t s = fe::detail::set_stream(d.handle, stream);
    if (s != CUDNN_STATUS_SUCCESS) {
        return ZB_FAIL(ZB_ERR_INTERNAL, "cuDNN SDPA %s: cudnnSetStream failed: %s", shape.c_str(),
                       fe::detail::get_error_string(s));
    }
    if (p.executed && p.last != stream) { /* the workspace is the plan's: one stream at a time */
        cudaError_t e = cudaStreamWaitEvent(stream, p.done, 0);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return ZB_FAIL(ZB_ERR_INTERNAL, "cuDNN SDPA %s: cudaStreamWaitEvent failed (%s)",
                           shape.c_str(), cuda_message(e).c_str());
        }
    }
    fe::error_t e = p.graph->execute(d.handle, pack, p.ws);
    if (e.is_bad()) {
        return ZB_FAIL(ZB_ERR_INTERNAL, "cuDNN SDPA %s: execute failed: %s", shape.c_str(),
                       fe_message(e).c_str());
    }
    cudaError_t ce = cudaEventRecord(p.done, stream);
    if (ce != cudaSuccess) {
        (void)cudaGetLastError();
        return ZB_FAIL(ZB_ERR_INTERNAL, "cuDNN SDPA %s: cudaEventRecord after the execution failed (%s)",
                       shape.c_str(), cuda_message(ce).c_str());
    }
    p.executed = true;
    p.last = stream;
    return ZB_OK;
}

zb_status caught(const char *op, const char *what) {
    return ZB_FAIL(ZB_ERR_INTERNAL, "cuDNN SDPA %s: exception: %s", op, one_line(what).c_str());
}

} // namespace

extern "C" bool zb_cudnn_sdpa_usable(zb_dtype dtype, int D, const char **why) {
    const char *dummy = nullptr;
    if (!why) why = &dummy;
    if (dtype != ZB_DTYPE_BF16) {
        *why = "cuDNN's SDPA runs bf16 storage only (fp32 storage runs zerobench's tiled kernel)";
        return false;
    }
    if (D > 0 && (D % 8 != 0 || D > kMaxHeadDim)) {
        *why = "cuDNN's SDPA takes head dims that are multiples of 8, at most 128";
        return false;
    }
    try {
        Locked lock;
        return current_device(why) != nullptr;
    } catch (...) {
        *why = "cuDNN's SDPA could not be checked (an exception in its set-up)";
        return false;
    }
}

extern "C" zb_status zb_cudnn_sdpa_prepare(bool backward, int B, int T, int H, int KVH, int D,
                                           bool *first_refusal) {
    if (first_refusal) *first_refusal = false;
    try {
        Locked lock;
        Dev *d = nullptr;
        Plan *p = nullptr;
        return get_plan(backward, B, T, H, KVH, D, &d, &p, first_refusal);
    } catch (std::exception &ex) {
        return caught(backward ? "attention_bwd" : "attention_fwd", ex.what());
    } catch (...) {
        return caught(backward ? "attention_bwd" : "attention_fwd", "unknown");
    }
}

extern "C" zb_status zb_cudnn_sdpa_fwd(void *stream, void *out, float *lse, const void *q,
                                       const void *k, const void *v, int B, int T, int H, int KVH,
                                       int D) {
    if (B == 0 || T == 0) return ZB_OK; /* nothing to compute */
    const void *ptrs[] = {out, lse, q, k, v};
    for (const void *ptr : ptrs) {
        if (!aligned(ptr)) {
            return ZB_FAIL(ZB_ERR_UNSUPPORTED, "cuDNN SDPA %s: a buffer is not %zu-byte aligned",
                           shape_of(false, B, T, H, KVH, D).c_str(), kAlign);
        }
    }
    try {
        Locked lock;
        Dev *d = nullptr;
        Plan *p = nullptr;
        ZB_TRY(get_plan(false, B, T, H, KVH, D, &d, &p, nullptr));
        std::unordered_map<int64_t, void *> pack = {
            {UID_Q, const_cast<void *>(q)}, {UID_K, const_cast<void *>(k)},
            {UID_V, const_cast<void *>(v)}, {UID_O, out}, {UID_LSE, lse}};
        return execute(*d, *p, (cudaStream_t)stream, pack);
    } catch (std::exception &ex) {
        return caught("attention_fwd", ex.what());
    } catch (...) {
        return caught("attention_fwd", "unknown");
    }
}

extern "C" zb_status zb_cudnn_sdpa_bwd(void *stream, void *dq, void *dk, void *dv,
                                       const void *dout, const void *q, const void *k,
                                       const void *v, const void *out, const float *lse, int B,
                                       int T, int H, int KVH, int D) {
    if (B == 0 || T == 0) return ZB_OK;
    const void *ptrs[] = {dq, dk, dv, dout, q, k, v, out, lse};
    for (const void *ptr : ptrs) {
        if (!aligned(ptr)) {
            return ZB_FAIL(ZB_ERR_UNSUPPORTED, "cuDNN SDPA %s: a buffer is not %zu-byte aligned",
                           shape_of(true, B, T, H, KVH, D).c_str(), kAlign);
        }
    }
    try {
        Locked lock;
        Dev *d = nullptr;
        Plan *p = nullptr;
        ZB_TRY(get_plan(true, B, T, H, KVH, D, &d, &p, nullptr));
        std::unordered_map<int64_t, void *> pack = {
            {UID_Q, const_cast<void *>(q)},       {UID_K, const_cast<void *>(k)},
            {UID_V, const_cast<void *>(v)},       {UID_O, const_cast<void *>(out)},
            {UID_DO, const_cast<void *>(dout)},   {UID_LSE, const_cast<float *>(lse)},
            {UID_DQ, dq}, {UID_DK, dk}, {UID_DV, dv}};
        return execute(*d, *p, (cudaStream_t)stream, pack);
    } catch (std::exception &ex) {
        return caught("attention_bwd", ex.what());
    } catch (...) {
        return caught("attention_bwd", "unknown");
    }
}

extern "C" size_t zb_cudnn_sdpa_workspace_bytes(void) {
    Locked lock;
    return g_ws_bytes;
}

extern "C" void zb_cudnn_sdpa_describe(char *buf, size_t n) {
    if (!buf || n == 0) return;
    Locked lock;
    if (!g_lib || !g_lib->tried) {
        snprintf(buf, n, "cuDNN not loaded yet (front end %d.%d.%d, headers %d.%d.%d)",
                 CUDNN_FRONTEND_MAJOR_VERSION, CUDNN_FRONTEND_MINOR_VERSION,
                 CUDNN_FRONTEND_PATCH_VERSION, CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
    } else if (!g_lib->ok) {
        snprintf(buf, n, "cuDNN not usable: %s", g_lib->why);
    } else {
        snprintf(buf, n, "cuDNN %zu.%zu.%zu (for CUDA %zu.%zu) from %s, front end %d.%d.%d",
                 g_lib->version / 10000, g_lib->version / 100 % 100, g_lib->version % 100,
                 g_lib->cudart_version / 1000, g_lib->cudart_version % 1000 / 10, g_lib->path,
                 CUDNN_FRONTEND_MAJOR_VERSION, CUDNN_FRONTEND_MINOR_VERSION,
                 CUDNN_FRONTEND_PATCH_VERSION);
    }
}

extern "C" void zb_cudnn_sdpa_release(void) {
    try {
        Locked lock;
        bool any = false;
        for (int ord = 0; ord < kMaxDevices; ord++) any = any || (g_devs[ord] && g_devs[ord]->checked);
        if (!any) return; /* nothing built: no CUDA call at all */
        int cur = -1;
        bool have_cur = cudaGetDevice(&cur) == cudaSuccess;
        for (int ord = 0; ord < kMaxDevices; ord++) {
            Dev *d = g_devs[ord];
            if (!d || !d->checked) continue;
            if (!d->plans.empty() || d->handle) (void)cudaSetDevice(ord);
            for (Plan *p : d->plans) {
                /* cudaFree waits for the device's work, this plan's included */
                if (p->ws) cudaFree(p->ws);
                if (p->done) cudaEventDestroy(p->done);
                delete p; /* the graph's descriptors go with it: cuDNN is still loaded */
            }
            d->plans.clear();
            if (d->handle) (void)fe::detail::destroy_handle(d->handle);
            d->handle = nullptr;
            d->checked = false;
            d->ok = false;
        }
        g_ws_bytes = 0;
        if (have_cur) (void)cudaSetDevice(cur);
        (void)cudaGetLastError();
    } catch (...) {
        /* teardown: nothing to report to */
    }
}
