/* Hardware and model profiles: the JSON files under profiles/hw/ and
 * profiles/models/, and their loader.
 *
 * A hardware profile gives a device's peak dense FLOP/s, memory and link
 * bandwidths (every number with a named source); a model profile gives the
 * shapes of a LLaMA-style transformer. Profiles are named by file stem
 * ("h200_sxm", "llama3_8b") or given as a path. Every error is
 * ZB_ERR_INVALID (ZB_ERR_IO when a folder cannot be read) with a one-line
 * message naming the file and the field. Unknown extra fields are allowed.
 *
 * Hardware profile fields (units in the names, GB = 1e9):
 *   name (string), kind ("cpu" | "gpu"), bf16_flops, fp32_flops (dense
 *   FLOP/s), mem_bytes, hbm_bytes_per_s, nvlink_bytes_per_s (one way, per
 *   GPU), nic_bytes_per_s (per NIC), gpus_per_node (integer), optionally
 *   nics_per_node (integer, default 1: the NICs a node's ranks reach the
 *   other nodes through, each at nic_bytes_per_s), sources (an object with a
 *   non-empty string for each of the seven numeric fields, and for
 *   nics_per_node when given).
 *   bf16_flops, fp32_flops and mem_bytes may be the string "measure" when
 *   kind is "cpu": the value is then 0 and the matching *_measure flag set.
 *   The link bandwidths may be 0 (not applicable / not modelled).
 *
 * The sim's cost parameters (the sim device and comm, docs/design.md §6):
 * an optional object "sim" with
 *   gemm_efficiency       [[min_dim, eff], ...]: min_dim integers >= 0,
 *                         strictly increasing, eff in (0, 1]; a GEMM whose
 *                         smallest dimension is d runs at the eff of the
 *                         last entry with min_dim <= d (the first entry's
 *                         below it) times the peak of its dtype
 *   mem_efficiency        (0, 1]: fraction of hbm_bytes_per_s that
 *                         element-wise ops, norms and copies reach
 *   attention_fwd_efficiency, attention_bwd_efficiency
 *                         (0, 1], both or neither: the fraction of the
 *                         peak fused causal attention reaches, forward and
 *                         backward, over the FLOPs it performs (the key
 *                         pairs j <= i; the backward 2.5 times the
 *                         forward's: it recomputes the scores), as public
 *                         fused-attention benchmarks count them
 *   link_latency_s        {"intra_node": s, "inter_node": s}, each >= 0:
 *                         the latency of one step of a collective's
 *                         algorithm inside a node / across nodes
 *   link_efficiency       (optional) {"intra_node": e, "inter_node": e},
 *                         each in (0, 1], 1 when absent: the fraction of
 *                         the link's line rate (nvlink_bytes_per_s; the
 *                         node's NICs) a collective's data moves at, the
 *                         rest the protocol's (NCCL's flags and chunking);
 *                         not applied to a collective's own fit, which is
 *                         measured
 *   interference          >= 0: compute running beside a collective takes
 *                         (1 + interference) times as long
 *   comm_interference     >= 0 (optional, 0 when absent): a collective
 *                         running beside compute takes (1 +
 *                         comm_interference) times as long
 *   comm_hold_s           seconds in [0, 1] (optional, 0 when absent): a
 *                         compute op that would start in a collective's
 *                         first comm_hold_s (at most the collective's own
 *                         time) starts when that ends: the core the
 *                         collective's thread takes from compute where
 *                         the two share a rank's cores (comm_hold.h)
 *   collectives           (optional) {"allgather"|"reducescatter"|"allreduce":
 *                         {"intra_node"|"inter_node": {"latency_s": s >= 0,
 *                         "bandwidth_bytes_per_s": > 0}}}: that
 *                         collective's own alpha-beta fit on that link
 *                         class, in place of link_latency_s and the
 *                         profile's link bandwidth for it
 *   op_overhead_s         >= 0: fixed time every op adds (launch, tail)
 *   kernel_efficiency     (optional) {"<kernel>": eff in (0, 10]}: the
 *                         fraction of hbm_bytes_per_s that element-wise
 *                         kernel reaches over the bytes it moves, in place
 *                         of mem_efficiency for it (a kernel bound by its
 *                         arithmetic, as the cpu backend's are, reaches
 *                         less; one whose data stays in a cache, more);
 *                         the kernels: zb_sim_kernel_names
 *   elementwise           (optional) "fused" (the default: the engine's
 *                         kernels, one per block) or "eager": the norms,
 *                         RoPE, SwiGLU, the cross-entropy and AdamW costed
 *                         as PyTorch eager runs them, one kernel per torch
 *                         op through memory (kernel_bytes_eager.c), for
 *                         predicting a published run made without
 *                         torch.compile
 *   sources               {"<parameter>": "<source>"} for each parameter
 *                         given (link_latency_s, link_efficiency and
 *                         collectives: one entry each).
 * Every parameter is optional when the profile is loaded (a profile for
 * real runs needs none); one the sim needs and the profile lacks is an
 * error when the sim starts (zb_hw_sim_require), naming it and the file.
 *
 * Model profile fields:
 *   name (string), layers, dim, heads, kv_heads, head_dim, ffn_dim, vocab,
 *   seq, batch (positive integers; kv_heads divides heads; head_dim is
 *   explicit, so heads * head_dim need not equal dim), norm_eps, rope_theta
 *   (positive numbers), tied_embeddings (optional bool, informational: the
 *   engine always trains an untied head), source (optional string). */
#ifndef ZB_PROFILE_H
#define ZB_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest integer a model profile field may hold (a sanity bound). */
#define ZB_PROFILE_INT_MAX (1 << 24)
/* Largest profile file the loader reads. */
#define ZB_PROFILE_MAX_BYTES (1 << 20)

/* The sim's cost parameters (see above); `have` says which were given. */
#define ZB_SIM_MAX_GEMM_EFF 16
/* The element-wise kernels the sim prices by their bytes (sim_kernels.c),
 * the keys of sim.kernel_efficiency, in this order. */
#define ZB_SIM_N_KERNELS 15
extern const char *const zb_sim_kernel_names[ZB_SIM_N_KERNELS];
enum {
    ZB_SIM_GEMM_EFFICIENCY = 1u << 0,
    ZB_SIM_MEM_EFFICIENCY = 1u << 1,
    ZB_SIM_ATTENTION_EFFICIENCY = 1u << 2,
    ZB_SIM_LATENCY_INTRA = 1u << 3,
    ZB_SIM_LATENCY_INTER = 1u << 4,
    ZB_SIM_INTERFERENCE = 1u << 5,
    ZB_SIM_OP_OVERHEAD = 1u << 6,
    ZB_SIM_COMM_INTERFERENCE = 1u << 12,
    ZB_SIM_COLLECTIVES = 1u << 13, /* at least one collective's own fit */
    ZB_SIM_KERNEL_EFFICIENCY = 1u << 14, /* at least one kernel's own efficiency */
    ZB_SIM_ELEMENTWISE = 1u << 15,       /* elementwise given */
    ZB_SIM_COMM_HOLD = 1u << 16,
    ZB_SIM_LINK_EFFICIENCY = 1u << 17,
    /* not sim parameters: the profile's own fields the sim reads, as
     * zb_hw_sim_require checks them (a positive number, not "measure") */
    ZB_SIM_NEEDS_PEAKS = 1u << 8,  /* bf16_flops, fp32_flops */
    ZB_SIM_NEEDS_HBM = 1u << 9,    /* hbm_bytes_per_s */
    ZB_SIM_NEEDS_NVLINK = 1u << 10, /* nvlink_bytes_per_s */
    ZB_SIM_NEEDS_NIC = 1u << 11,   /* nic_bytes_per_s */
};
/* What the sim device needs; the sim comm adds the links it crosses. */
#define ZB_SIM_DEVICE_NEEDS                                                             \
    (ZB_SIM_GEMM_EFFICIENCY | ZB_SIM_MEM_EFFICIENCY | ZB_SIM_ATTENTION_EFFICIENCY |      \
     ZB_SIM_INTERFERENCE | ZB_SIM_OP_OVERHEAD | ZB_SIM_NEEDS_PEAKS | ZB_SIM_NEEDS_HBM)

typedef struct zb_hw_sim {
    unsigned have; /* ZB_SIM_* bits of the parameters the profile gives */
    int n_gemm_eff;
    double gemm_min_dim[ZB_SIM_MAX_GEMM_EFF];
    double gemm_eff[ZB_SIM_MAX_GEMM_EFF];
    double mem_efficiency;
    double attention_fwd_efficiency, attention_bwd_efficiency;
    double latency_intra_s, latency_inter_s;
    double link_eff[2]; /* [intra, inter] in (0, 1]; 1 when not given */
    double interference;
    double comm_interference;
    double comm_hold_s;
    double op_overhead_s;
    /* collectives: [allgather, reducescatter, allreduce][intra, inter];
     * coll_bw 0: not given (the link's figures apply) */
    double coll_latency_s[3][2], coll_bw[3][2];
    double kernel_eff[ZB_SIM_N_KERNELS]; /* zb_sim_kernel_names order; 0: not given */
    bool eager_elementwise;              /* elementwise "eager" */
} zb_hw_sim;

typedef struct zb_hw_profile {
    char name[64];
    bool is_cpu;
    double bf16_flops;         /* dense, FLOP/s; 0 when bf16_flops_measure */
    double fp32_flops;         /* dense, FLOP/s; 0 when fp32_flops_measure */
    double mem_bytes;          /* device memory; 0 when mem_bytes_measure */
    double hbm_bytes_per_s;    /* 0: not applicable */
    double nvlink_bytes_per_s; /* one way, per GPU; 0: none */
    double nic_bytes_per_s;    /* per NIC; 0: none */
    int gpus_per_node;
    int nics_per_node; /* NICs per node, each nic_bytes_per_s; 1 when not given */
    bool bf16_flops_measure; /* "measure": the harness measures it */
    bool fp32_flops_measure;
    bool mem_bytes_measure;
    zb_hw_sim sim;  /* the sim's cost parameters (have = 0: none) */
    char path[512]; /* the file it came from ("" or the parse filename) */
} zb_hw_profile;

typedef struct zb_model_profile {
    char name[64];
    int layers, dim, heads, kv_heads, head_dim, ffn_dim, vocab, seq, batch;
    double norm_eps, rope_theta;
    bool tied_embeddings;
    char path[512];
} zb_model_profile;

/* The profiles directory: $ZB_PROFILES if set and non-empty, else the
 * compile-time ZB_PROFILE_DIR. */
zb_status zb_profile_dir(char *out, size_t n);

/* Loads a profile. A name with no '/' that does not end in ".json" means
 * <dir>/hw/NAME.json (or <dir>/models/NAME.json); anything else is a path.
 * A missing file fails with a message listing the available names. */
zb_status zb_hw_profile_load(const char *name_or_path, zb_hw_profile *out);
zb_status zb_model_profile_load(const char *name_or_path, zb_model_profile *out);

/* The bus bandwidth a rank's ring gets across nodes from the profile's
 * NICs: nic_bytes_per_s x min(nics_per_node, gpus_per_node). NCCL runs one
 * ring per channel, each entering and leaving a node through its own NIC
 * (its rails), so a node with k NICs under k ranks carries k rings' shares
 * at once and each rank's bus bandwidth is the k NICs' sum; NVLink inside
 * the node must carry it (the sim takes the smaller). Sources:
 * NVIDIA/nccl#412 (NCCL aggregates a node's NICs over NVLink), #1229
 * (ring reduce-scatter across 4 to 128 H100 nodes: 360 down to 260 GB/s
 * busbw, 5-7x one 400 Gb/s NIC's 50 GB/s). */
double zb_hw_inter_node_bw(const zb_hw_profile *hw, int gpus_per_node);

/* Parses and validates JSON text (pure: no file access). `filename` names
 * the text in messages (NULL: "<profile>") and is copied into out->path.
 * On error *out is left zeroed. */
zb_status zb_hw_profile_parse(const char *json_text, size_t len, const char *filename,
                              zb_hw_profile *out);
zb_status zb_model_profile_parse(const char *json_text, size_t len, const char *filename,
                                 zb_model_profile *out);

/* Parses the optional "sim" object of a hardware profile's root (profile_sim.c);
 * `file` names the profile in messages. */
zb_status zb_hw_sim_parse(const void *json_root, const char *file, zb_hw_sim *out);

/* ZB_OK when hw gives everything in `needs` (ZB_SIM_* bits), else
 * ZB_ERR_INVALID with one line naming the first missing parameter and the
 * profile's file: "hardware profile 'X' (path): the sim needs
 * sim.gemm_efficiency, which it does not give". */
zb_status zb_hw_sim_require(const zb_hw_profile *hw, unsigned needs);

/* The GEMM efficiency for a GEMM whose smallest dimension is min_dim
 * (the table's step function); 0 when the profile has no table. */
double zb_hw_sim_gemm_eff(const zb_hw_sim *s, double min_dim);

/* The efficiency the sim prices element-wise kernel `name` at: its
 * kernel_efficiency when given, else mem_efficiency. */
double zb_hw_sim_kernel_eff(const zb_hw_sim *s, const char *name);

/* The index of `name` in zb_sim_kernel_names, -1 when it is none of them. */
int zb_sim_kernel_index(const char *name);

/* The profile names (file stems) in <dir>/<kind>, sorted, joined with ", ".
 * kind is "hw", "models" or "accept". Fails with ZB_ERR_INVALID if `out` is too
 * small. */
zb_status zb_profile_list(const char *kind, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
