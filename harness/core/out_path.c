/* Output paths checked before any work (out_path.h). */
#include "out_path.h"

#include "escape.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *zb_shown_path(const char *path, char out[72]) { return zb_escape(path, 64, out, 72); }

bool zb_path_folder(const char *path, char *dir, size_t n) {
    if (strlen(path) >= n) return false;
    strcpy(dir, path);
    char *slash = strrchr(dir, '/');
    if (!slash) strcpy(dir, ".");
    else if (slash == dir) slash[1] = '\0';
    else *slash = '\0';
    return true;
}

zb_status zb_out_path_check(const char *flag, const char *path) {
    if (!path || !path[0]) return ZB_OK;
    char shown[72], dir[PATH_MAX];
    zb_shown_path(path, shown);
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': is a folder; expected a file path", flag, shown);
        if (S_ISLNK(st.st_mode)) {
            return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': is a symbolic link; zerobench writes only regular files "
                           "(remove the link or name another path)", flag, shown);
        }
        if (!S_ISREG(st.st_mode)) {
            return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': exists and is not a regular file (a FIFO or device)", flag,
                           shown);
        }
    }
    if (!zb_path_folder(path, dir, sizeof dir)) return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': path too long", flag, shown);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': its folder does not exist or is not writable", flag, shown);
    }
    return ZB_OK;
}

/* `dir` without its trailing slashes, into out. False when it does not fit. */
static bool strip_slashes(const char *dir, char *out, size_t n) {
    if (strlen(dir) >= n) return false;
    strcpy(out, dir);
    size_t len = strlen(out);
    while (len > 1 && out[len - 1] == '/') out[--len] = '\0';
    return true;
}

zb_status zb_out_dir_check(const char *flag, const char *dir) {
    if (!dir || !dir[0]) return ZB_OK;
    char shown[72], path[PATH_MAX], parent[PATH_MAX];
    zb_shown_path(dir, shown);
    if (!strip_slashes(dir, path, sizeof path)) return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': path too long", flag, shown);
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': is a symbolic link; zerobench writes only into real folders "
                           "(remove the link or name another path)", flag, shown);
        }
        if (!S_ISDIR(st.st_mode)) return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': exists and is not a folder", flag, shown);
        if (access(path, W_OK | X_OK) != 0) return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': folder not writable", flag, shown);
        return ZB_OK;
    }
    if (!zb_path_folder(path, parent, sizeof parent) || stat(parent, &st) != 0 || !S_ISDIR(st.st_mode) ||
        access(parent, W_OK | X_OK) != 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': does not exist and its parent is not a writable folder", flag, shown);
    }
    return ZB_OK;
}

zb_status zb_out_dir_make(const char *flag, const char *dir) {
    char shown[72], path[PATH_MAX];
    zb_shown_path(dir, shown);
    if (!strip_slashes(dir, path, sizeof path)) return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': path too long", flag, shown);
    if (mkdir(path, 0777) == 0) return ZB_OK;
    int err = errno;
    struct stat st;
    if (err == EEXIST && lstat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return ZB_OK;
        return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': exists and is not a folder (a link or a file)", flag, shown);
    }
    return ZB_FAIL(ZB_ERR_IO, "%s '%s': cannot create the folder: %s", flag, shown, strerror(err));
}

/* realpath of the folder, then "/" and the last name: a path that need not
 * exist yet, made comparable. False when the folder does not resolve. */
static bool canonical(const char *path, char *out, size_t n) {
    char dir[PATH_MAX], real[PATH_MAX];
    if (!zb_path_folder(path, dir, sizeof dir) || !realpath(dir, real)) return false;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    return (size_t)snprintf(out, n, "%s/%s", real, base) < n;
}

bool zb_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ea != eb) return false;
    char ca[PATH_MAX + 256], cb[PATH_MAX + 256];
    if (!canonical(a, ca, sizeof ca) || !canonical(b, cb, sizeof cb)) return strcmp(a, b) == 0;
    return strcmp(ca, cb) == 0;
}

/* An output, or an input that exists (a profile name such as "h100_sxm"
 * that is not a file cannot be overwritten). */
static bool counts(const zb_path_use *u) {
    struct stat st;
    return u->path && u->path[0] && (u->output || stat(u->path, &st) == 0);
}

zb_status zb_paths_distinct(const zb_path_use *uses, int n) {
    for (int i = 0; i < n; i++) {
        if (!counts(&uses[i])) continue;
        for (int j = i + 1; j < n; j++) {
            if (!counts(&uses[j]) || !(uses[i].output || uses[j].output)) continue;
            if (!zb_same_file(uses[i].path, uses[j].path)) continue;
            const zb_path_use *out = uses[i].output ? &uses[i] : &uses[j];
            const zb_path_use *other = out == &uses[i] ? &uses[j] : &uses[i];
            char s1[72], s2[72];
            zb_shown_path(out->path, s1);
            zb_shown_path(other->path, s2);
            if (other->output) { /* both outputs: in the order they were given */
                return ZB_FAIL(ZB_ERR_INVALID, "%s '%s' and %s '%s' are the same file: give each output its own path",
                               out->flag, s1, other->flag, s2);
            }
            return ZB_FAIL(ZB_ERR_INVALID, "%s '%s' is the input %s '%s': an output may not overwrite an input",
                           out->flag, s1, other->flag, s2);
        }
    }
    return ZB_OK;
}
