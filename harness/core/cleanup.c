/* Removal of registered temporaries on SIGINT/SIGTERM/SIGHUP (cleanup.h). */
#include "cleanup.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

enum { SLOT_FREE = 0, SLOT_CLAIMED, SLOT_FILE, SLOT_DIR };

static struct {
    _Atomic int state;
    char path[ZB_CLEANUP_PATH_MAX];
} slots[ZB_CLEANUP_SLOTS];

static const int caught[] = {SIGINT, SIGTERM, SIGHUP};
#define N_CAUGHT ((int)(sizeof caught / sizeof caught[0]))
static struct sigaction previous[N_CAUGHT];
static pthread_once_t installed = PTHREAD_ONCE_INIT;
static sigset_t held_old;

static void remove_all(int kind) {
    for (int i = 0; i < ZB_CLEANUP_SLOTS; i++) {
        if (atomic_load(&slots[i].state) != kind) continue;
        if (kind == SLOT_DIR) (void)rmdir(slots[i].path);
        else (void)unlink(slots[i].path);
    }
}

static void on_signal(int sig, siginfo_t *info, void *uctx) {
    int saved = errno;
    remove_all(SLOT_FILE); /* files first: a staging folder empties before its rmdir */
    remove_all(SLOT_DIR);
    errno = saved;
    for (int i = 0; i < N_CAUGHT; i++) {
        if (caught[i] != sig) continue;
        const struct sigaction *old = &previous[i];
        if (old->sa_flags & SA_SIGINFO) {
            if (old->sa_sigaction) old->sa_sigaction(sig, info, uctx);
            return;
        }
        if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
            old->sa_handler(sig);
            return;
        }
    }
    /* The default action: terminate by this signal, so the exit status says so. */
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install(void) {
    for (int i = 0; i < N_CAUGHT; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        if (sigaction(caught[i], NULL, &previous[i]) != 0) continue;
        if (!(previous[i].sa_flags & SA_SIGINFO) && previous[i].sa_handler == SIG_IGN) continue; /* stays ignored */
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        for (int k = 0; k < N_CAUGHT; k++) sigaddset(&sa.sa_mask, caught[k]);
        (void)sigaction(caught[i], &sa, NULL);
    }
}

zb_status zb_cleanup_add(const char *path, bool is_dir, int *slot) {
    *slot = -1;
    size_t n = strlen(path);
    if (n == 0 || n >= ZB_CLEANUP_PATH_MAX) {
        return ZB_FAIL(ZB_ERR_INVALID, "cleanup: path of %zu characters (at most %d)", n, ZB_CLEANUP_PATH_MAX - 1);
    }
    pthread_once(&installed, install);
    for (int i = 0; i < ZB_CLEANUP_SLOTS; i++) {
        int expect = SLOT_FREE;
        if (!atomic_compare_exchange_strong(&slots[i].state, &expect, SLOT_CLAIMED)) continue;
        memcpy(slots[i].path, path, n + 1);
        atomic_store(&slots[i].state, is_dir ? SLOT_DIR : SLOT_FILE); /* the handler sees a whole path */
        *slot = i;
        return ZB_OK;
    }
    return ZB_FAIL(ZB_ERR_INTERNAL, "cleanup: all %d slots for temporary files are taken", ZB_CLEANUP_SLOTS);
}

void zb_cleanup_drop(int slot) {
    if (slot < 0 || slot >= ZB_CLEANUP_SLOTS) return;
    atomic_store(&slots[slot].state, SLOT_FREE);
}

void zb_cleanup_hold(void) {
    sigset_t set;
    sigemptyset(&set);
    for (int k = 0; k < N_CAUGHT; k++) sigaddset(&set, caught[k]);
    pthread_sigmask(SIG_BLOCK, &set, &held_old);
}

void zb_cleanup_release(void) { pthread_sigmask(SIG_SETMASK, &held_old, NULL); }
