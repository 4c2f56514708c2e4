/* Unit tests for input_file.c: a regular file is read whole; a FIFO (with
 * no writer: the open must not block), a folder, /dev/zero and a file over
 * the bound are refused with one line naming what it is; a missing file
 * reports its errno; a link to a regular file is read (inputs may be links;
 * only outputs refuse them). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input_file.h"
#include "zb_test.h"

static int refused_with(const char *path, size_t max, const char *needle) {
    char *text = NULL, msg[ZB_ERROR_MAX];
    size_t len = 99;
    zb_status s = zb_input_read(path, max, &text, &len, NULL);
    zb_error_text(msg, sizeof msg);
    int ok = s == ZB_ERR_INVALID && text == NULL && len == 0 && strstr(msg, needle) != NULL;
    if (!ok) fprintf(stderr, "%s: status %d, message '%s', wanted '%s'\n", path, (int)s, msg, needle);
    free(text);
    return ok;
}

int main(void) {
    char dir[256];
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/zb_test_input_file.XXXXXX", base && base[0] ? base : "/tmp");
    if (!mkdtemp(dir) || chdir(dir) != 0) {
        perror("mkdtemp");
        return 1;
    }
    FILE *f = fopen("a.json", "w");
    ZB_CHECK(f != NULL);
    if (f) {
        fputs("{\"x\": 1}\n", f);
        fclose(f);
    }
    ZB_CHECK(symlink("a.json", "link.json") == 0);
    ZB_CHECK(mkfifo("fifo", 0600) == 0);
    ZB_CHECK(mkdir("sub", 0755) == 0);

    char *text = NULL;
    size_t len = 0;
    ZB_CHECK_OK(zb_input_read("a.json", 1024, &text, &len, NULL));
    ZB_CHECK(text && len == 9 && strcmp(text, "{\"x\": 1}\n") == 0);
    free(text);
    ZB_CHECK_OK(zb_input_read("link.json", 1024, &text, &len, NULL));
    ZB_CHECK(text && len == 9);
    free(text);
    ZB_CHECK_OK(zb_input_read("a.json", 9, &text, &len, NULL)); /* exactly the bound */
    free(text);

    ZB_CHECK(refused_with("fifo", 1024, "not a regular file (a FIFO)"));
    ZB_CHECK(refused_with("sub", 1024, "not a regular file (a folder)"));
    ZB_CHECK(refused_with("/dev/zero", 1024, "not a regular file (a character device)"));
    ZB_CHECK(refused_with("a.json", 8, "9 bytes, more than the 8 accepted"));
    ZB_CHECK(refused_with("bad\nname", 8, "'bad\\nname': No such file"));

    int err = 0;
    ZB_CHECK(zb_input_read("missing.json", 8, &text, &len, &err) == ZB_ERR_INVALID);
    ZB_CHECK(err == ENOENT && text == NULL);

    unlink("a.json");
    unlink("link.json");
    unlink("fifo");
    rmdir("sub");
    if (chdir("/") == 0) rmdir(dir);
    return zb_test_finish("test_input_file");
}
