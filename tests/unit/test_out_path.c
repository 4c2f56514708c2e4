/* Unit tests for out_path.c: which paths are the same file (the same
 * existing file by another name or a hard link; two absent paths in the
 * same folder by another spelling), which outputs are refused (a link, a
 * FIFO, a folder, a missing folder), and the messages of zb_paths_distinct
 * naming both flags. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "out_path.h"
#include "zb_test.h"

static char g_dir[256];

static void touch(const char *path) {
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
}

int main(void) {
    const char *base = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/zb_test_out_path.XXXXXX", base && base[0] ? base : "/tmp");
    if (!mkdtemp(g_dir) || chdir(g_dir) != 0) {
        perror("mkdtemp");
        return 1;
    }
    touch("a.json");
    ZB_CHECK(link("a.json", "hard.json") == 0);
    ZB_CHECK(mkdir("sub", 0755) == 0);
    ZB_CHECK(symlink("a.json", "soft.json") == 0);
    ZB_CHECK(mkfifo("fifo", 0600) == 0);

    ZB_CHECK(zb_same_file("a.json", "./a.json"));
    ZB_CHECK(zb_same_file("a.json", "sub/../a.json"));
    ZB_CHECK(zb_same_file("a.json", "hard.json"));
    ZB_CHECK(zb_same_file("new.json", "./new.json"));
    ZB_CHECK(zb_same_file("new.json", "sub/../new.json"));
    ZB_CHECK(!zb_same_file("new.json", "sub/new.json"));
    ZB_CHECK(!zb_same_file("a.json", "new.json"));

    ZB_CHECK_OK(zb_out_path_check("--json", "a.json"));
    ZB_CHECK_OK(zb_out_path_check("--json", "new.json"));
    ZB_CHECK_OK(zb_out_path_check("--json", ""));
    ZB_CHECK(zb_out_path_check("--json", "soft.json") == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "--json 'soft.json': is a symbolic link") != NULL);
    ZB_CHECK(zb_out_path_check("--csv", "fifo") == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "not a regular file") != NULL);
    ZB_CHECK(zb_out_path_check("--trace", "sub") == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "is a folder") != NULL);
    ZB_CHECK(zb_out_path_check("--trace", "nope/x.json") == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "its folder does not exist") != NULL);

    zb_path_use ok[] = {{"--json", "r.json", true}, {"--csv", "r.csv", true}, {"--hw", "a.json", false},
                        {"--model", "a.json", false}, {"--trace", "", true}, {"--hw", "h100_sxm", false}};
    ZB_CHECK_OK(zb_paths_distinct(ok, 6)); /* inputs may share a file; "" is unused; a name is not a file */
    zb_path_use outs[] = {{"--json", "r.json", true}, {"--csv", "./r.json", true}};
    ZB_CHECK(zb_paths_distinct(outs, 2) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "--json 'r.json' and --csv './r.json' are the same file") != NULL, "%s",
                 zb_error_message());
    zb_path_use onto[] = {{"--hw", "a.json", false}, {"--json", "hard.json", true}};
    ZB_CHECK(zb_paths_distinct(onto, 2) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "--json 'hard.json' is the input --hw 'a.json'") != NULL, "%s",
                 zb_error_message());
    char shown[72];
    ZB_CHECK(strcmp(zb_shown_path("a\nb\x1b[31m", shown), "a\\nb\\x1b[31m") == 0);

    unlink("a.json");
    unlink("hard.json");
    unlink("soft.json");
    unlink("fifo");
    rmdir("sub");
    ZB_CHECK(chdir("/") == 0);
    rmdir(g_dir);
    return zb_test_finish("test_out_path");
}
