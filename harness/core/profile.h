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
 *   GPU), nic_bytes_per_s (per GPU), gpus_per_node (integer), sources (an
 *   object with a non-empty string for each of the seven numeric fields).
 *   bf16_flops, fp32_flops and mem_bytes may be the string "measure" when
 *   kind is "cpu": the value is then 0 and the matching *_measure flag set.
 *   The link bandwidths may be 0 (not applicable / not modelled).
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

typedef struct zb_hw_profile {
    char name[64];
    bool is_cpu;
    double bf16_flops;         /* dense, FLOP/s; 0 when bf16_flops_measure */
    double fp32_flops;         /* dense, FLOP/s; 0 when fp32_flops_measure */
    double mem_bytes;          /* device memory; 0 when mem_bytes_measure */
    double hbm_bytes_per_s;    /* 0: not applicable */
    double nvlink_bytes_per_s; /* one way, per GPU; 0: none */
    double nic_bytes_per_s;    /* per GPU; 0: none */
    int gpus_per_node;
    bool bf16_flops_measure; /* "measure": the harness measures it */
    bool fp32_flops_measure;
    bool mem_bytes_measure;
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

/* Parses and validates JSON text (pure: no file access). `filename` names
 * the text in messages (NULL: "<profile>") and is copied into out->path.
 * On error *out is left zeroed. */
zb_status zb_hw_profile_parse(const char *json_text, size_t len, const char *filename,
                              zb_hw_profile *out);
zb_status zb_model_profile_parse(const char *json_text, size_t len, const char *filename,
                                 zb_model_profile *out);

/* The profile names (file stems) in <dir>/<kind>, sorted, joined with ", ".
 * kind is "hw", "models" or "accept". Fails with ZB_ERR_INVALID if `out` is too
 * small. */
zb_status zb_profile_list(const char *kind, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
