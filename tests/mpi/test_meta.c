/* MPI test of the run metadata (harness/control/meta.c). Every rank calls the
 * collective zb_meta_collect and checks the result (hosts, ranks, command
 * line, config copy, NCCL_* and MALLOC_* environment, versions); the pure
 * helpers (shell quoting, cpuinfo parsing, unique hosts, environment order)
 * are checked too. Run with 2 and 4 ranks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "meta.h"
#include "zb_test.h"

static const char *str_of(const json_t *meta, const char *key) {
    const char *s = json_string_value(json_object_get(meta, key));
    return s ? s : "";
}

static void test_shell_join(void) {
    char *const words[] = {"zerobench", "--json", "out file.json", "it's", "", "a=b,c:d/e.f@g%h+i-j_k", "$X"};
    char *s = zb_meta_shell_join(7, words);
    const char *want = "zerobench --json 'out file.json' 'it'\\''s' '' a=b,c:d/e.f@g%h+i-j_k '$X'";
    ZB_CHECK_MSG(s && strcmp(s, want) == 0, "shell join: %s", s ? s : "(null)");
    free(s);
    s = zb_meta_shell_join(0, NULL);
    ZB_CHECK(s && s[0] == '\0');
    free(s);
}

static void test_cpu_model(void) {
    char path[] = "/tmp/zb_test_cpuinfo.XXXXXX", out[128];
    int fd = mkstemp(path);
    ZB_CHECK(fd >= 0);
    if (fd < 0) return;
    const char *text = "processor\t: 0\nvendor_id\t: Acme\nmodel name\t:  Acme CPU @ 3.00GHz  \nflags\t: x\n";
    ZB_CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    zb_meta_cpu_model(path, out, sizeof out);
    ZB_CHECK_MSG(strcmp(out, "Acme CPU @ 3.00GHz") == 0, "cpu model: '%s'", out);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("processor\t: 0\nCPU part\t: 0xd0c\n", f);
        fclose(f);
    }
    zb_meta_cpu_model(path, out, sizeof out);
    ZB_CHECK(strcmp(out, "unknown") == 0);
    unlink(path);
    zb_meta_cpu_model(path, out, sizeof out); /* no file */
    ZB_CHECK(strcmp(out, "unknown") == 0);
}

static void test_helpers(void) {
    char line[] = "  Open MPI v4.1.4, package: x \nsecond line\n";
    zb_meta_first_line(line);
    ZB_CHECK(strcmp(line, "Open MPI v4.1.4, package: x") == 0);

    char names[4][8] = {"a", "b", "a", "c"};
    json_t *hosts = json_array();
    ZB_CHECK_OK(zb_meta_unique_hosts(hosts, &names[0][0], 4, sizeof names[0]));
    ZB_CHECK(json_array_size(hosts) == 3);
    ZB_CHECK(strcmp(json_string_value(json_array_get(hosts, 2)), "c") == 0);
    json_decref(hosts);

    setenv("ZBTESTENV_B", "2", 1);
    setenv("ZBTESTENV_A1", "1", 1);
    setenv("ZBTESTENV_A", "0", 1);
    json_t *env = json_object();
    ZB_CHECK_OK(zb_meta_env_prefix(env, "ZBTESTENV_"));
    const char *want[3] = {"ZBTESTENV_A", "ZBTESTENV_A1", "ZBTESTENV_B"};
    const char *key;
    json_t *val;
    int i = 0, ok = 1;
    json_object_foreach(env, key, val) ok &= i < 3 && strcmp(key, want[i++]) == 0;
    ZB_CHECK_MSG(ok && i == 3, "environment not in name order");
    ZB_CHECK(strcmp(json_string_value(json_object_get(env, "ZBTESTENV_A1")), "1") == 0);
    json_decref(env);
}

/* The collective itself; every rank checks its own copy. */
static void test_collect(int rank, int size) {
    setenv("NCCL_TEST_VAR", "hello world", 1);
    setenv("MALLOC_TRIM_THRESHOLD_", "123", 1);
    char *const words[] = {"zerobench", "--json", "out file.json", "it's"};
    json_t *config = json_pack("{s:s, s:i}", "mode", "prefetch", "nodes", 1);
    json_t *meta = json_object();
    ZB_CHECK_OK(zb_meta_collect(meta, 4, words, config, 60.0));
    json_object_set_new(config, "mode", json_string("sync")); /* the copy must not change */

    json_t *hosts = json_object_get(meta, "hosts");
    char mine[ZB_META_HOST_BYTES] = {0};
    gethostname(mine, sizeof mine - 1);
    int found = 0;
    for (size_t i = 0; i < json_array_size(hosts); i++) {
        const char *h = json_string_value(json_array_get(hosts, i));
        ZB_CHECK(h && h[0]);
        found |= h && strcmp(h, mine) == 0;
        for (size_t j = 0; j < i; j++) ZB_CHECK(!json_equal(json_array_get(hosts, i), json_array_get(hosts, j)));
    }
    ZB_CHECK(json_array_size(hosts) >= 1 && json_array_size(hosts) <= (size_t)size);
    ZB_CHECK_MSG(found, "rank %d: own host %s missing from hosts", rank, mine);
    ZB_CHECK(json_integer_value(json_object_get(meta, "ranks")) == size);
    ZB_CHECK_MSG(strcmp(str_of(meta, "command_line"), "zerobench --json 'out file.json' 'it'\\''s'") == 0,
                 "command_line: %s", str_of(meta, "command_line"));
    json_t *argv = json_object_get(meta, "argv");
    ZB_CHECK(json_array_size(argv) == 4);
    for (size_t i = 0; i < 4 && i < json_array_size(argv); i++)
        ZB_CHECK(strcmp(json_string_value(json_array_get(argv, i)), words[i]) == 0);
    ZB_CHECK(strcmp(str_of(json_object_get(meta, "config"), "mode"), "prefetch") == 0);
    ZB_CHECK(json_integer_value(json_object_get(json_object_get(meta, "config"), "nodes")) == 1);
    ZB_CHECK(strcmp(str_of(json_object_get(meta, "nccl_env"), "NCCL_TEST_VAR"), "hello world") == 0);
    ZB_CHECK(strcmp(str_of(json_object_get(meta, "malloc_env"), "MALLOC_TRIM_THRESHOLD_"), "123") == 0);

    int major = 0, minor = 0;
    char ver[16];
    MPI_Get_version(&major, &minor);
    snprintf(ver, sizeof ver, "%d.%d", major, minor);
    ZB_CHECK(strcmp(str_of(meta, "mpi_version"), ver) == 0);
    ZB_CHECK(strcmp(str_of(meta, "zerobench_version"), ZB_VERSION) == 0);
    ZB_CHECK(strcmp(str_of(meta, "git_describe"), ZB_GIT_DESCRIBE) == 0);
    const char *nonempty[] = {"cpu_model", "mpi_library", "blas", "kernel"};
    for (int i = 0; i < 4; i++) ZB_CHECK_MSG(str_of(meta, nonempty[i])[0], "%s is empty", nonempty[i]);
    ZB_CHECK(strchr(str_of(meta, "mpi_library"), '\n') == NULL);
    const char *date = str_of(meta, "date_utc");
    ZB_CHECK_MSG(strlen(date) == 20 && date[4] == '-' && date[10] == 'T' && date[19] == 'Z', "date_utc %s", date);
    ZB_CHECK(json_integer_value(json_object_get(meta, "cpu_cores_online")) >= 1);
    if (rank == 0) {
        char *text = json_dumps(meta, JSON_INDENT(2));
        printf("meta on rank 0:\n%s\n", text ? text : "(null)");
        free(text);
    }
    json_decref(meta);
    json_decref(config);

    /* Bad arguments fail on every rank without hanging the others. */
    ZB_CHECK(zb_meta_collect(NULL, 0, NULL, NULL, 60.0) == ZB_ERR_INVALID);
    meta = json_object();
    ZB_CHECK(zb_meta_collect(meta, -1, NULL, NULL, 60.0) == ZB_ERR_INVALID);
    ZB_CHECK_OK(zb_meta_collect(meta, 0, NULL, NULL, 60.0));
    ZB_CHECK(json_is_object(json_object_get(meta, "config")));
    json_decref(meta);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_shell_join();
    test_cpu_model();
    test_helpers();
    test_collect(rank, size);
    int failed = zb_test_failures, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank != 0) return failed ? 1 : 0;
    if (any && !failed) fprintf(stderr, "test_meta: another rank failed\n");
    int rc = zb_test_finish("test_meta");
    return any ? 1 : rc;
}
