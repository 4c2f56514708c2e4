/* Fuzz target for the profile parsers: any bytes go to both
 * zb_hw_profile_parse and zb_model_profile_parse, which must never crash or
 * leak, and must only accept profiles that satisfy their rules (checked
 * here; a violation aborts). Replayed over tests/fuzz/corpus/fuzz_profile/
 * by CTest; with -DZB_FUZZ=ON (clang) it builds as a libFuzzer binary. */
#include <stdint.h>
#include <stdlib.h>

#include "profile.h"
#include "status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void zb_fuzz_check_hw(zb_status s, const zb_hw_profile *hw) {
    if (s != ZB_OK) {
        if (s != ZB_ERR_INVALID || zb_error_message()[0] == '\0') abort();
        return;
    }
    bool any_measure = hw->bf16_flops_measure || hw->fp32_flops_measure || hw->mem_bytes_measure;
    if (any_measure && !hw->is_cpu) abort();
    if (hw->gpus_per_node < 1 || hw->name[0] == '\0') abort();
    if (!(hw->bf16_flops > 0.0) && !hw->bf16_flops_measure) abort();
    if (!(hw->nvlink_bytes_per_s >= 0.0) || !(hw->nic_bytes_per_s >= 0.0)) abort();
}

static void zb_fuzz_check_model(zb_status s, const zb_model_profile *m) {
    if (s != ZB_OK) {
        if (s != ZB_ERR_INVALID || zb_error_message()[0] == '\0') abort();
        return;
    }
    if (m->layers < 1 || m->dim < 1 || m->head_dim < 1 || m->ffn_dim < 1 || m->vocab < 1 ||
        m->seq < 1 || m->batch < 1)
        abort();
    if (m->kv_heads < 1 || m->heads < m->kv_heads || m->heads % m->kv_heads != 0) abort();
    if (!(m->norm_eps > 0.0) || !(m->rope_theta > 0.0)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    zb_hw_profile hw;
    zb_model_profile model;
    zb_error_clear();
    zb_fuzz_check_hw(zb_hw_profile_parse((const char *)data, size, "fuzz.json", &hw), &hw);
    zb_error_clear();
    zb_fuzz_check_model(zb_model_profile_parse((const char *)data, size, "fuzz.json", &model),
                        &model);
    return 0;
}
