/* Replays a fuzz target's saved inputs without libFuzzer: every regular
 * file named on the command line, or found directly inside a directory
 * named there, is read and passed to LLVMFuzzerTestOneInput once. Built
 * with each tests/fuzz/fuzz_*.c and run by CTest over
 * tests/fuzz/corpus/<target>/. A crash or sanitizer report fails the test;
 * so does finding no input at all (exit 1). */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Largest input replayed; corpus files are small. */
#define ZB_REPLAY_MAX_BYTES (64L * 1024 * 1024)

/* Reads `path` into an exactly-sized buffer (so a sanitizer sees reads past
 * the end) and runs the target on it. Returns 0 on success, -1 if the file
 * could not be read. */
static int zb_replay_file(const char *path, long size) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    uint8_t *data = (uint8_t *)malloc(size > 0 ? (size_t)size : 1);
    if (data == NULL) {
        fclose(f);
        fprintf(stderr, "replay: out of memory for %s (%ld bytes)\n", path, size);
        return -1;
    }
    size_t got = fread(data, 1, (size_t)size, f);
    int failed = ferror(f);
    fclose(f);
    if (failed || got != (size_t)size) {
        free(data);
        fprintf(stderr, "replay: read of %s failed\n", path);
        return -1;
    }
    fprintf(stderr, "replay: %s (%ld bytes)\n", path, size);
    LLVMFuzzerTestOneInput(data, got);
    free(data);
    return 0;
}

/* Runs one regular file; other kinds of entries are skipped (count 0). */
static int zb_replay_path(const char *path, long *count) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) return 0;
    if (st.st_size > ZB_REPLAY_MAX_BYTES) {
        fprintf(stderr, "replay: %s is larger than %ld bytes\n", path, ZB_REPLAY_MAX_BYTES);
        return -1;
    }
    if (zb_replay_file(path, (long)st.st_size) != 0) return -1;
    (*count)++;
    return 0;
}

static int zb_replay_dir(const char *dir, long *count) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "replay: cannot read %s: %s\n", dir, strerror(errno));
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        char path[4096];
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) {
            fprintf(stderr, "replay: path too long in %s\n", dir);
            rc = -1;
            break;
        }
        rc = zb_replay_path(path, count);
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv) {
    long count = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR_OR_FILE...\n", argv[0]);
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        int is_dir = stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode);
        int rc = is_dir ? zb_replay_dir(argv[i], &count) : zb_replay_path(argv[i], &count);
        if (rc != 0) return 1;
    }
    if (count == 0) {
        fprintf(stderr, "replay: no inputs found\n");
        return 1;
    }
    printf("replayed %ld inputs\n", count);
    return 0;
}
