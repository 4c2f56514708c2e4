/* The step's model label (bench/step.c, zb_step_model_label): the profile
 * alone, the profile plus the shape flags given in flag-name order, and
 * "custom" when every shape flag is given. */
#include <string.h>

#include "bench_config.h"
#include "step.h"
#include "zb_test.h"

static void label_is(const zb_config *cfg, const char *profile, const char *want) {
    char got[192];
    zb_step_model_label(profile, cfg, got, sizeof got);
    ZB_CHECK_MSG(!strcmp(got, want), "label '%s', want '%s'", got, want);
}

int main(void) {
    zb_config cfg;
    zb_config_defaults(&cfg);
    label_is(&cfg, "tiny", "tiny");
    cfg.layers = 4, cfg.dim = 512;
    label_is(&cfg, "tiny", "tiny+dim=512,layers=4");
    cfg.kv_heads = 4, cfg.batch = 2;
    label_is(&cfg, "llama3_8b", "llama3_8b+batch=2,dim=512,kv-heads=4,layers=4");
    cfg.heads = 8, cfg.head_dim = 64, cfg.ffn_dim = 1408, cfg.vocab = 8192;
    label_is(&cfg, "tiny", "tiny+batch=2,dim=512,ffn-dim=1408,head-dim=64,heads=8,kv-heads=4,layers=4,vocab=8192");
    cfg.seq = 256;
    label_is(&cfg, "tiny", "custom");
    return zb_test_finish("test_step_label");
}
