/* Tests for the profile loader (harness/core/profile.c): every shipped profile
 * loads with the right numbers, and every kind of bad input (missing field,
 * wrong type, out-of-range value, kv_heads not dividing heads, bad JSON,
 * unknown name) fails with ZB_ERR_INVALID and a message that names the file
 * and the field. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile.h"
#include "status.h"
#include "zb_test.h"

#define FAKE_FILE "profiles/models/fake_x.json"
#define FAKE_HW "profiles/hw/fake_hw.json"

/* ---- building test documents -------------------------------------------------- */

typedef struct kv {
    const char *key;
    const char *value; /* JSON text */
} kv;

static const kv model_fields[] = {
    {"name", "\"t\""}, {"layers", "2"},       {"dim", "64"},        {"heads", "4"},
    {"kv_heads", "2"}, {"head_dim", "16"},    {"ffn_dim", "176"},   {"vocab", "256"},
    {"seq", "32"},     {"batch", "2"},        {"norm_eps", "1e-5"}, {"rope_theta", "10000.0"},
    {"tied_embeddings", "false"},
};

static const kv hw_fields[] = {
    {"name", "\"g\""},
    {"kind", "\"gpu\""},
    {"bf16_flops", "9.89e14"},
    {"fp32_flops", "6.7e13"},
    {"mem_bytes", "1.41e11"},
    {"hbm_bytes_per_s", "4.8e12"},
    {"nvlink_bytes_per_s", "4.5e11"},
    {"nic_bytes_per_s", "5e10"},
    {"gpus_per_node", "8"},
    {"sources", "{\"bf16_flops\": \"a\", \"fp32_flops\": \"a\", \"mem_bytes\": \"a\", "
                "\"hbm_bytes_per_s\": \"a\", \"nvlink_bytes_per_s\": \"a\", "
                "\"nic_bytes_per_s\": \"a\", \"gpus_per_node\": \"a\"}"},
};

/* Writes a JSON object of `fields`, with `key` given `value` instead (NULL
 * value: `key` left out; a key not in fields: added). */
static void build_json(const kv *fields, size_t n_fields, const char *key, const char *value,
                       char *out, size_t n) {
    size_t used = (size_t)snprintf(out, n, "{");
    int replaced = 0;
    for (size_t i = 0; i < n_fields; i++) {
        const char *v = fields[i].value;
        if (key != NULL && strcmp(key, fields[i].key) == 0) {
            replaced = 1;
            if (value == NULL) continue;
            v = value;
        }
        used += (size_t)snprintf(out + used, n - used, "%s\"%s\": %s", used > 1 ? ", " : "",
                                 fields[i].key, v);
    }
    if (key != NULL && !replaced && value != NULL)
        used += (size_t)snprintf(out + used, n - used, ", \"%s\": %s", key, value);
    snprintf(out + used, n - used, "}");
}

static zb_status parse_model_with(const char *key, const char *value, zb_model_profile *m) {
    char json[2048];
    build_json(model_fields, sizeof model_fields / sizeof model_fields[0], key, value, json,
               sizeof json);
    return zb_model_profile_parse(json, strlen(json), FAKE_FILE, m);
}

static zb_status parse_hw_with(const char *key, const char *value, zb_hw_profile *hw) {
    char json[2048];
    build_json(hw_fields, sizeof hw_fields / sizeof hw_fields[0], key, value, json, sizeof json);
    return zb_hw_profile_parse(json, strlen(json), FAKE_HW, hw);
}

static int message_has(const char *a, const char *b) {
    const char *msg = zb_error_message();
    return strstr(msg, a) != NULL && (b == NULL || strstr(msg, b) != NULL);
}

/* A model field set to `value` fails, naming the file and `field`. */
static void expect_model_error(const char *key, const char *value, const char *field) {
    zb_model_profile m;
    zb_status s = parse_model_with(key, value, &m);
    char quoted[96];
    snprintf(quoted, sizeof quoted, "\"%s\"", field);
    ZB_CHECK_MSG(s == ZB_ERR_INVALID, "%s=%s: expected ZB_ERR_INVALID, got %s", key,
                 value ? value : "(missing)", zb_status_name(s));
    ZB_CHECK_MSG(message_has(FAKE_FILE, quoted), "%s=%s: message lacks file or %s: %s", key,
                 value ? value : "(missing)", quoted, zb_error_message());
    ZB_CHECK(m.layers == 0); /* left zeroed on error */
}

static void expect_hw_error(const char *key, const char *value, const char *field) {
    zb_hw_profile hw;
    zb_status s = parse_hw_with(key, value, &hw);
    char quoted[96];
    snprintf(quoted, sizeof quoted, "\"%s\"", field);
    ZB_CHECK_MSG(s == ZB_ERR_INVALID, "%s=%s: expected ZB_ERR_INVALID, got %s", key,
                 value ? value : "(missing)", zb_status_name(s));
    ZB_CHECK_MSG(message_has(FAKE_HW, quoted), "%s=%s: message lacks file or %s: %s", key,
                 value ? value : "(missing)", quoted, zb_error_message());
}

/* ---- shipped profiles ----------------------------------------------------------- */

static void test_shipped_hw(void) {
    const char *names[] = {"cpu", "a100_sxm", "h100_sxm", "h200_sxm", "b200"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        zb_hw_profile hw;
        ZB_CHECK_OK(zb_hw_profile_load(names[i], &hw));
        ZB_CHECK_MSG(strstr(hw.path, names[i]) != NULL, "path %.200s", hw.path);
        ZB_CHECK(hw.gpus_per_node >= 1);
        if (!hw.is_cpu) {
            ZB_CHECK(hw.bf16_flops > hw.fp32_flops && hw.fp32_flops > 0.0);
            ZB_CHECK(hw.mem_bytes > 0.0 && hw.hbm_bytes_per_s > 0.0);
            ZB_CHECK(hw.nvlink_bytes_per_s > hw.nic_bytes_per_s && hw.nic_bytes_per_s > 0.0);
            ZB_CHECK(hw.gpus_per_node == 8 && hw.nics_per_node == 8); /* DGX: one NIC per GPU */
        } else {
            ZB_CHECK(hw.nics_per_node == 1);
        }
    }
    zb_hw_profile h200;
    ZB_CHECK_OK(zb_hw_profile_load("h200_sxm", &h200));
    ZB_CHECK(!h200.is_cpu);
    ZB_CHECK(h200.bf16_flops == 9.89e14);
    ZB_CHECK(h200.fp32_flops == 6.7e13);
    ZB_CHECK(h200.mem_bytes == 1.41e11);
    ZB_CHECK(h200.hbm_bytes_per_s == 4.8e12);
    ZB_CHECK(h200.nvlink_bytes_per_s == 4.5e11);
    ZB_CHECK(!h200.bf16_flops_measure && !h200.fp32_flops_measure && !h200.mem_bytes_measure);

    zb_hw_profile h100, a100, b200;
    ZB_CHECK_OK(zb_hw_profile_load("h100_sxm", &h100));
    ZB_CHECK(h100.bf16_flops == 9.89e14 && h100.mem_bytes == 8.0e10);
    ZB_CHECK_OK(zb_hw_profile_load("a100_sxm", &a100));
    ZB_CHECK(a100.bf16_flops == 3.12e14 && a100.nvlink_bytes_per_s == 3.0e11);
    ZB_CHECK_OK(zb_hw_profile_load("b200", &b200));
    ZB_CHECK(b200.bf16_flops == 2.25e15 && b200.nvlink_bytes_per_s == 9.0e11);
    /* every GPU profile carries the sim's parameters (docs/sim-validation.md runs them) */
    const zb_hw_profile *gpus[] = {&h100, &a100, &b200, &h200};
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
        unsigned need = ZB_SIM_GEMM_EFFICIENCY | ZB_SIM_MEM_EFFICIENCY | ZB_SIM_ATTENTION_EFFICIENCY |
                        ZB_SIM_INTERFERENCE | ZB_SIM_OP_OVERHEAD | ZB_SIM_LATENCY_INTRA | ZB_SIM_LATENCY_INTER;
        ZB_CHECK_MSG((gpus[i]->sim.have & need) == need, "%s: sim parameters %#x of %#x", gpus[i]->name,
                     gpus[i]->sim.have & need, need);
    }
    ZB_CHECK(a100.sim.gemm_eff[a100.sim.n_gemm_eff - 1] == 0.869 && a100.sim.mem_efficiency == 0.88);
    ZB_CHECK(b200.sim.attention_fwd_efficiency == 0.63 && b200.sim.latency_inter_s == 1.4e-5);

    zb_hw_profile cpu;
    ZB_CHECK_OK(zb_hw_profile_load("cpu", &cpu));
    ZB_CHECK(cpu.is_cpu && cpu.gpus_per_node == 1);
    ZB_CHECK(cpu.bf16_flops_measure && cpu.fp32_flops_measure && cpu.mem_bytes_measure);
    ZB_CHECK(cpu.bf16_flops == 0.0 && cpu.fp32_flops == 0.0 && cpu.mem_bytes == 0.0);
}

static void test_shipped_models(void) {
    const char *names[] = {"tiny", "llama3_8b", "llama3_70b", "llama3_405b", "qwen3_8b",
                           "qwen3_4b"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        zb_model_profile m;
        ZB_CHECK_OK(zb_model_profile_load(names[i], &m));
        ZB_CHECK(m.heads % m.kv_heads == 0);
    }
    zb_model_profile t;
    ZB_CHECK_OK(zb_model_profile_load("tiny", &t));
    ZB_CHECK(t.layers == 2 && t.dim == 64 && t.heads == 4 && t.kv_heads == 2);
    ZB_CHECK(t.head_dim == 16 && t.ffn_dim == 176 && t.vocab == 256);
    ZB_CHECK(t.seq == 32 && t.batch == 2);

    zb_model_profile l8;
    ZB_CHECK_OK(zb_model_profile_load("llama3_8b", &l8));
    ZB_CHECK(l8.layers == 32 && l8.dim == 4096 && l8.heads == 32 && l8.kv_heads == 8);
    ZB_CHECK(l8.head_dim == 128 && l8.ffn_dim == 14336 && l8.vocab == 128256);
    ZB_CHECK(l8.norm_eps == 1e-5 && l8.rope_theta == 500000.0 && !l8.tied_embeddings);
    ZB_CHECK(l8.batch == 1);

    zb_model_profile l70, l405;
    ZB_CHECK_OK(zb_model_profile_load("llama3_70b", &l70));
    ZB_CHECK(l70.layers == 80 && l70.dim == 8192 && l70.heads == 64 && l70.ffn_dim == 28672);
    ZB_CHECK_OK(zb_model_profile_load("llama3_405b", &l405));
    ZB_CHECK(l405.layers == 126 && l405.dim == 16384 && l405.heads == 128);
    ZB_CHECK(l405.ffn_dim == 53248);

    zb_model_profile q4, q8;
    ZB_CHECK_OK(zb_model_profile_load("qwen3_4b", &q4));
    ZB_CHECK(q4.dim == 2560 && q4.heads == 32 && q4.head_dim == 128);
    ZB_CHECK(q4.heads * q4.head_dim != q4.dim);
    ZB_CHECK(q4.ffn_dim == 9728 && q4.vocab == 151936 && q4.tied_embeddings);
    ZB_CHECK_OK(zb_model_profile_load("qwen3_8b", &q8));
    ZB_CHECK(q8.layers == 36 && q8.dim == 4096 && q8.ffn_dim == 12288 && !q8.tied_embeddings);
    ZB_CHECK(q8.norm_eps == 1e-6 && q8.rope_theta == 1e6);
}

static void test_list(void) {
    char names[512];
    ZB_CHECK_OK(zb_profile_list("hw", names, sizeof names));
    ZB_CHECK_MSG(strcmp(names, "a100_sxm, b200, cpu, h100_sxm, h200_sxm") == 0, "hw: %.200s", names);
    ZB_CHECK_OK(zb_profile_list("models", names, sizeof names));
    ZB_CHECK_MSG(strstr(names, "llama3_8b") != NULL && strstr(names, "tiny") != NULL, "models: %.200s",
                 names);
    ZB_CHECK(zb_profile_list("accept2", names, sizeof names) == ZB_ERR_INVALID);
    ZB_CHECK(zb_profile_list("hw", names, 8) == ZB_ERR_INVALID);
}

/* ---- bad input --------------------------------------------------------------------- */

static void test_model_errors(void) {
    zb_model_profile m;
    ZB_CHECK_OK(parse_model_with(NULL, NULL, &m));
    ZB_CHECK(strcmp(m.path, FAKE_FILE) == 0 && m.kv_heads == 2);
    ZB_CHECK_OK(parse_model_with("some_future_field", "[1, {\"x\": 2}]", &m)); /* unknown: ok */
    ZB_CHECK_OK(parse_model_with("tied_embeddings", NULL, &m));                /* optional */
    ZB_CHECK(!m.tied_embeddings);

    expect_model_error("vocab", NULL, "vocab");
    expect_model_error("heads", "\"abc\"", "heads");
    ZB_CHECK(message_has("positive integer", "\"abc\""));
    expect_model_error("layers", "-3", "layers");
    expect_model_error("dim", "0", "dim");
    expect_model_error("dim", "64.5", "dim");
    expect_model_error("seq", "99999999999", "seq");
    expect_model_error("batch", "null", "batch");
    expect_model_error("kv_heads", "3", "kv_heads");
    ZB_CHECK(message_has("divisor of heads", NULL));
    expect_model_error("kv_heads", "8", "kv_heads");
    expect_model_error("norm_eps", "0", "norm_eps");
    expect_model_error("norm_eps", "-1e-5", "norm_eps");
    expect_model_error("rope_theta", "\"1e4\"", "rope_theta");
    expect_model_error("tied_embeddings", "\"no\"", "tied_embeddings");
    expect_model_error("name", "\"\"", "name");
    expect_model_error("name", "\"0123456789012345678901234567890123456789012345678901234567890123\"",
                       "name");
    expect_model_error("source", "7", "source");
}

static void test_hw_errors(void) {
    zb_hw_profile hw;
    ZB_CHECK_OK(parse_hw_with(NULL, NULL, &hw));
    ZB_CHECK(hw.bf16_flops == 9.89e14 && hw.gpus_per_node == 8 && !hw.is_cpu);
    ZB_CHECK_OK(parse_hw_with("nvlink_bytes_per_s", "0", &hw)); /* a GPU without NVLink */
    ZB_CHECK(hw.nics_per_node == 1); /* not given: one NIC per node */
    {
        /* nics_per_node, when given, is a positive integer with a source */
        char json[2048];
#define HW_WITH "{\"name\": \"g\", \"kind\": \"gpu\", \"bf16_flops\": 1, \"fp32_flops\": 1, " \
                           "\"mem_bytes\": 1, \"hbm_bytes_per_s\": 1, \"nvlink_bytes_per_s\": 1, " \
                           "\"nic_bytes_per_s\": 1, \"gpus_per_node\": 8, \"nics_per_node\": %s, \"sources\": " \
                           "{\"bf16_flops\": \"a\", \"fp32_flops\": \"a\", \"mem_bytes\": \"a\", " \
                           "\"hbm_bytes_per_s\": \"a\", \"nvlink_bytes_per_s\": \"a\", \"nic_bytes_per_s\": \"a\", " \
                           "\"gpus_per_node\": \"a\"%s}}"

        snprintf(json, sizeof json, HW_WITH, "4", ", \"nics_per_node\": \"a\"");
        ZB_CHECK_OK(zb_hw_profile_parse(json, strlen(json), FAKE_HW, &hw));
        ZB_CHECK(hw.nics_per_node == 4);
        const char *bad[] = {"0", "2.5", "\"8\"", "-1"};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            snprintf(json, sizeof json, HW_WITH, bad[i], ", \"nics_per_node\": \"a\"");
            ZB_CHECK_MSG(zb_hw_profile_parse(json, strlen(json), FAKE_HW, &hw) == ZB_ERR_INVALID &&
                             message_has(FAKE_HW, "\"nics_per_node\""), "nics_per_node=%s: %s", bad[i],
                         zb_error_message());
        }
        snprintf(json, sizeof json, HW_WITH, "4", ""); /* no source */
        ZB_CHECK(zb_hw_profile_parse(json, strlen(json), FAKE_HW, &hw) == ZB_ERR_INVALID &&
                 message_has(FAKE_HW, "\"sources.nics_per_node\""));
        zb_error_clear();
#undef HW_WITH
    }

    expect_hw_error("kind", "\"tpu\"", "kind");
    expect_hw_error("bf16_flops", NULL, "bf16_flops");
    expect_hw_error("fp32_flops", "-1", "fp32_flops");
    expect_hw_error("hbm_bytes_per_s", "0", "hbm_bytes_per_s");
    expect_hw_error("mem_bytes", "[80]", "mem_bytes");
    expect_hw_error("gpus_per_node", "8.5", "gpus_per_node");
    /* "measure" is only for a CPU, and only for the three measured fields. */
    expect_hw_error("bf16_flops", "\"measure\"", "bf16_flops");
    ZB_CHECK(message_has("\"cpu\"", NULL));
    expect_hw_error("sources", "{\"bf16_flops\": \"a\"}", "sources.fp32_flops");
    expect_hw_error("sources", "\"datasheet\"", "sources");
    expect_hw_error("sources", NULL, "sources");

    char json[2048];
    build_json(hw_fields, sizeof hw_fields / sizeof hw_fields[0], "kind", "\"cpu\"", json,
               sizeof json);
    char *measure = strstr(json, "9.89e14");
    ZB_CHECK(measure != NULL);
    if (measure == NULL) return;
    /* A CPU: "measure" accepted for bf16_flops, rejected for hbm. */
    char cpu_json[2048];
    snprintf(cpu_json, sizeof cpu_json, "%.*s\"measure\"%s", (int)(measure - json), json,
             measure + strlen("9.89e14"));
    ZB_CHECK_OK(zb_hw_profile_parse(cpu_json, strlen(cpu_json), FAKE_HW, &hw));
    ZB_CHECK(hw.is_cpu && hw.bf16_flops_measure && hw.bf16_flops == 0.0 && !hw.mem_bytes_measure);
    char *hbm = strstr(cpu_json, "4.8e12");
    ZB_CHECK(hbm != NULL);
    if (hbm == NULL) return;
    char bad[2048];
    snprintf(bad, sizeof bad, "%.*s\"measure\"%s", (int)(hbm - cpu_json), cpu_json,
             hbm + strlen("4.8e12"));
    ZB_CHECK(zb_hw_profile_parse(bad, strlen(bad), FAKE_HW, &hw) == ZB_ERR_INVALID);
    ZB_CHECK(message_has(FAKE_HW, "\"hbm_bytes_per_s\""));
}

static void test_bad_json(void) {
    zb_model_profile m;
    const char *text = "{\n  \"name\": \"x\",\n  \"layers\": ,\n}";
    ZB_CHECK(zb_model_profile_parse(text, strlen(text), FAKE_FILE, &m) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(message_has(FAKE_FILE ":3:", "invalid JSON"), "%s", zb_error_message());

    const char *dup = "{\"name\": \"x\", \"name\": \"y\"}";
    ZB_CHECK(zb_model_profile_parse(dup, strlen(dup), FAKE_FILE, &m) == ZB_ERR_INVALID);
    ZB_CHECK(message_has(FAKE_FILE, "name"));

    ZB_CHECK(zb_model_profile_parse("[1, 2]", 6, FAKE_FILE, &m) == ZB_ERR_INVALID);
    ZB_CHECK(message_has(FAKE_FILE, "object"));
    ZB_CHECK(zb_model_profile_parse("", 0, FAKE_FILE, &m) == ZB_ERR_INVALID);
    ZB_CHECK(message_has(FAKE_FILE ":", NULL));
    ZB_CHECK(zb_model_profile_parse(NULL, 0, NULL, &m) == ZB_ERR_INVALID);
    ZB_CHECK(message_has("<profile>", NULL));
    /* Not NUL-terminated: only `len` bytes are read. */
    const char *prefix = "{\"name\": 1}garbage";
    ZB_CHECK(zb_model_profile_parse(prefix, 11, FAKE_FILE, &m) == ZB_ERR_INVALID);
    ZB_CHECK(message_has("\"name\"", NULL));
}

/* ---- files and names ---------------------------------------------------------------- */

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ZB_CHECK(f != NULL);
    if (f == NULL) return;
    fputs(text, f);
    fclose(f);
}

static void test_files(void) {
    zb_model_profile m;
    ZB_CHECK(zb_model_profile_load("no_such_model", &m) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(message_has("no_such_model", "llama3_405b, llama3_70b, llama3_8b"), "%s",
                 zb_error_message());
    ZB_CHECK(message_has("available", "tiny"));
    zb_hw_profile hw;
    ZB_CHECK(zb_hw_profile_load("h300_sxm", &hw) == ZB_ERR_INVALID);
    ZB_CHECK(message_has("h300_sxm", "h200_sxm"));
    ZB_CHECK(zb_hw_profile_load("/nonexistent/dir/x.json", &hw) == ZB_ERR_INVALID);
    ZB_CHECK(message_has("/nonexistent/dir/x.json", "available"));
    ZB_CHECK(zb_hw_profile_load("", &hw) == ZB_ERR_INVALID);

    char path[] = "/tmp/zb_test_profile_XXXXXX";
    int fd = mkstemp(path);
    ZB_CHECK(fd >= 0);
    if (fd < 0) return;
    close(fd);
    char json[2048];
    build_json(model_fields, sizeof model_fields / sizeof model_fields[0], "ffn_dim", "\"big\"",
               json, sizeof json);
    write_file(path, json);
    ZB_CHECK(zb_model_profile_load(path, &m) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(message_has(path, "\"ffn_dim\""), "%s", zb_error_message());
    build_json(model_fields, sizeof model_fields / sizeof model_fields[0], NULL, NULL, json,
               sizeof json);
    write_file(path, json);
    ZB_CHECK_OK(zb_model_profile_load(path, &m));
    ZB_CHECK(strcmp(m.path, path) == 0 && m.ffn_dim == 176);
    ZB_CHECK(zb_model_profile_load("/tmp", &m) == ZB_ERR_INVALID); /* a directory */
    unlink(path);
}

/* ZB_PROFILES points the loader at another directory; listing skips
 * hidden files and non-JSON files and sorts. */
static void test_profiles_env(void) {
    char saved[1024] = "";
    const char *old = getenv("ZB_PROFILES");
    if (old != NULL) snprintf(saved, sizeof saved, "%s", old);
    char dir[] = "/tmp/zb_test_profiles_XXXXXX";
    ZB_CHECK(mkdtemp(dir) != NULL);
    char sub[256], file[300];
    snprintf(sub, sizeof sub, "%s/models", dir);
    ZB_CHECK(mkdir(sub, 0700) == 0);
    const char *files[] = {"zz.json", "aa.json", ".hidden.json", "notes.txt"};
    char json[2048];
    build_json(model_fields, sizeof model_fields / sizeof model_fields[0], NULL, NULL, json,
               sizeof json);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(file, sizeof file, "%s/%s", sub, files[i]);
        write_file(file, json);
    }
    setenv("ZB_PROFILES", dir, 1);
    char got[256];
    ZB_CHECK_OK(zb_profile_dir(got, sizeof got));
    ZB_CHECK(strcmp(got, dir) == 0);
    ZB_CHECK_OK(zb_profile_list("models", got, sizeof got));
    ZB_CHECK_MSG(strcmp(got, "aa, zz") == 0, "list: %.200s", got);
    zb_model_profile m;
    ZB_CHECK_OK(zb_model_profile_load("zz", &m));
    ZB_CHECK(zb_model_profile_load("tiny", &m) == ZB_ERR_INVALID);
    ZB_CHECK(message_has("aa, zz", NULL));
    ZB_CHECK(zb_profile_list("hw", got, sizeof got) == ZB_ERR_IO); /* no hw/ folder */
    ZB_CHECK(zb_model_profile_parse(json, strlen(json), "x.json", NULL) == ZB_ERR_INVALID);

    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(file, sizeof file, "%s/%s", sub, files[i]);
        unlink(file);
    }
    rmdir(sub);
    rmdir(dir);
    if (old != NULL)
        setenv("ZB_PROFILES", saved, 1);
    else
        unsetenv("ZB_PROFILES");
}

int main(void) {
    test_shipped_hw();
    test_shipped_models();
    test_list();
    test_model_errors();
    test_hw_errors();
    test_bad_json();
    test_files();
    test_profiles_env();
    return zb_test_finish("test_profile");
}
