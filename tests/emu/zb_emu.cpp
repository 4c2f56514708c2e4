/* zb_emu: runs the real CUDA kernel sources (the .cu files of kernels/cuda/) on the CPU,
 * so that CI machines without a GPU check them against the CPU reference
 * kernels (test_cuda_kernels_emu, test_cuda_attention_emu). A test tool,
 * not a simulator: it checks what the kernels compute and how they use
 * threads, barriers and memory, not how fast they would run.
 *
 * How: tests/emu/cu2cpp.py rewrites each kernel launch into a call of
 * zb_emu_launch (include/cuda_runtime.h), and the host C++ compiler builds
 * the sources. A launch runs the grid's blocks one after another; inside a
 * block every CUDA thread is a fiber (its own stack, switched by hand, in
 * one OS thread).
 *
 * Why fibers: a CUDA thread stops at __syncthreads (or a warp shuffle)
 * with its locals live and goes on once every thread of the block (warp)
 * got there. Running each thread to completion in turn cannot do that, and
 * one OS thread per CUDA thread would be slow and nondeterministic. A fiber
 * keeps its stack while it waits; switching is a few instructions (the
 * x86-64 switch below; other machines fall back to ucontext, which makes a
 * system call per switch and makes the test about 15 times slower).
 *
 * Scheduling (deterministic): between two barriers the threads of a block
 * run one after another, each until it reaches the next barrier or exits;
 * in ascending thread order in even blocks and descending in odd ones, so
 * a missing __syncthreads (a read of shared memory that another thread has
 * or has not yet written) makes the result depend on the order and shows
 * up as a mismatch against the CPU reference.
 *
 * Checked, reported on stderr with the kernel, launch site, block and
 * thread, and returned as the CUDA error the next call would see:
 *   - launch configuration (block <= 1024 threads, grid and block limits,
 *     dynamic shared memory <= 48 KiB unless cudaFuncSetAttribute raised
 *     the kernel's limit, up to 227 KiB): cudaGetLastError, as on a GPU;
 *   - pointer arguments that are not (inside or at the end of) a
 *     cudaMalloc buffer, e.g. a host pointer: cudaErrorIllegalAddress at
 *     the next synchronization;
 *   - out-of-bounds accesses: every cudaMalloc buffer ends exactly at an
 *     inaccessible guard page (its start is aligned to the largest power of
 *     two <= 256 that divides its size, so any element type is aligned), as
 *     does the block's dynamic shared memory; a read or write past the end
 *     faults, and the fault is turned into cudaErrorIllegalAddress at the
 *     next synchronization. Accesses just before the start of a buffer (in
 *     the slack of its first page) are NOT caught;
 *   - integer division by zero (a CUDA GPU would not trap; it is a bug);
 *   - barrier divergence: threads waiting at a __syncthreads or warp
 *     shuffle that some thread of the block (warp) never reaches, e.g.
 *     because it returned early: cudaErrorLaunchFailure at the next sync;
 *   - stack overflow of a fiber (guard page): as a fault.
 * Unwritten memory: dynamic shared memory and __shared__ arrays are filled
 * with 0xff bytes (NaN in fp32 and bf16) at each block start, so reading
 * shared memory nobody wrote gives NaN; the tests poison their outputs the
 * same way.
 *
 * Not emulated: concurrency between blocks (they run in turn, so a kernel
 * that waits for another block deadlocks, and inter-block races cannot
 * show); atomics are trivially atomic; streams and events (every launch and
 * copy completes before the call returns; all streams are one); warp
 * operations other than full-mask shuffles and __syncwarp, and warps with
 * blockDim not a multiple of 32 (reported when a shuffle is used);
 * independent thread scheduling inside a warp (lanes also run in turn);
 * __CUDA_ARCH__ paths (the sources are compiled as host code); fast-math
 * intrinsics (accurate libm); constant, texture, managed and host-mapped
 * memory. Errors are not sticky as on a GPU: an asynchronous error is
 * reported once, by the next synchronizing call, so a test goes on to
 * report its later checks. One host thread launches at a time.
 *
 * Running and debugging: ctest -R emu, or tests/test_cuda_kernels_emu
 * [seed] (tests/test_cuda_attention_emu [seed]) in the build folder. The rewritten sources carry #line directives,
 * so compiler messages and gdb show the .cu files. In a Debug build a
 * breakpoint on a kernel line works, e.g. `break rope.cu:25 if
 * zb_emu_thread_idx.x == 7` (every fiber is the same OS thread to gdb).
 *
 * Fiber stacks: ZB_EMU_STACK_BYTES (256 KiB) each, plus a guard page;
 * mapped once for the largest block seen (1024 threads: 260 MiB of address
 * space) and reused. Pages are only touched as used, a few KiB per thread
 * in practice (kernel frames, libm), so memory use stays small; 256 KiB is
 * ample also for -O0 and UBSan builds. */
#include "cuda_runtime.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <vector>

#if defined(__x86_64__) && !defined(ZB_EMU_UCONTEXT)
#define ZB_EMU_ASM_SWITCH 1
#else
#include <ucontext.h>
#endif

#define ZB_EMU_STACK_BYTES ((size_t)256 * 1024)
#define ZB_EMU_MAX_THREADS 1024u
#define ZB_EMU_WARP 32u
#define ZB_EMU_SMEM_DEFAULT ((size_t)48 * 1024)
#define ZB_EMU_SMEM_OPTIN_MAX ((size_t)232448) /* sm_90: 227 KiB per block */

uint3 zb_emu_thread_idx, zb_emu_block_idx;
dim3 zb_emu_block_dim, zb_emu_grid_dim;

/* ---- execution contexts ---------------------------------------------------------- */
#if ZB_EMU_ASM_SWITCH
/* zb_emu_ctx_switch(&save_sp, load_sp): pushes the callee-saved registers
 * and the SSE/x87 control words on the current stack, saves its stack
 * pointer, loads the other one and pops the same set from it. A new
 * fiber's stack is laid out as if it had been switched out, returning into
 * zb_emu_ctx_start, which calls r13 (the entry function). */
extern "C" void zb_emu_ctx_switch(void **save_sp, void *load_sp);
extern "C" void zb_emu_ctx_start(void);
asm(R"(
        .text
        .globl  zb_emu_ctx_switch
        .hidden zb_emu_ctx_switch
        .type   zb_emu_ctx_switch, @function
zb_emu_ctx_switch:
        pushq   %rbp
        pushq   %rbx
        pushq   %r12
        pushq   %r13
        pushq   %r14
        pushq   %r15
        subq    $8, %rsp
        stmxcsr (%rsp)
        fnstcw  4(%rsp)
        movq    %rsp, (%rdi)
        movq    %rsi, %rsp
        ldmxcsr (%rsp)
        fldcw   4(%rsp)
        addq    $8, %rsp
        popq    %r15
        popq    %r14
        popq    %r13
        popq    %r12
        popq    %rbx
        popq    %rbp
        ret
        .size   zb_emu_ctx_switch, .-zb_emu_ctx_switch

        .globl  zb_emu_ctx_start
        .hidden zb_emu_ctx_start
        .type   zb_emu_ctx_start, @function
zb_emu_ctx_start:
        callq   *%r13
        ud2
        .size   zb_emu_ctx_start, .-zb_emu_ctx_start
)");

struct ctx {
    void *sp;
};
static void ctx_init(ctx *c, char *stack, size_t size, void (*fn)(void)) {
    uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
    uint64_t *s = (uint64_t *)top;
    uint32_t mxcsr;
    uint16_t fpucw;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(fpucw));
    s[-1] = (uint64_t)(uintptr_t)zb_emu_ctx_start; /* ret target; leaves rsp 16-aligned */
    s[-2] = 0;                                     /* rbp */
    s[-3] = 0;                                     /* rbx */
    s[-4] = 0;                                     /* r12 */
    s[-5] = (uint64_t)(uintptr_t)fn;               /* r13 */
    s[-6] = 0;                                     /* r14 */
    s[-7] = 0;                                     /* r15 */
    s[-8] = (uint64_t)mxcsr | (uint64_t)fpucw << 32;
    c->sp = &s[-8];
}
static inline void ctx_switch(ctx *from, ctx *to) { zb_emu_ctx_switch(&from->sp, to->sp); }
#else
struct ctx {
    ucontext_t uc;
};
static void ctx_init(ctx *c, char *stack, size_t size, void (*fn)(void)) {
    getcontext(&c->uc);
    c->uc.uc_stack.ss_sp = stack;
    c->uc.uc_stack.ss_size = size;
    c->uc.uc_link = NULL; /* fibers never return from fn */
    makecontext(&c->uc, fn, 0);
}
static inline void ctx_switch(ctx *from, ctx *to) { swapcontext(&from->uc, &to->uc); }
#endif

/* ---- state ----------------------------------------------------------------------- */
enum { F_READY, F_WAITING, F_DONE };

struct fiber {
    ctx c;
    char *stack; /* usable part, above the guard page */
    uint3 tid;
    unsigned lin, shfl_parity;
    int state;
};

struct barrier {
    unsigned need, arrived;
    unsigned *waiters; /* fiber indices in arrival order */
};

static std::mutex g_lock;
static ctx g_main;                    /* the launching host thread */
static fiber *g_fibers;               /* [g_n] of the block */
static unsigned g_n, g_done;          /* threads per block, exited ones */
static fiber *g_cur;                  /* running fiber, NULL on the host side */
static void (*g_body)(void *);
static void *g_body_arg;
static std::vector<unsigned> g_queue; /* ring of ready fibers */
static unsigned g_q_head, g_q_len;
static barrier g_block_bar;
static std::vector<barrier> g_warp_bar;
static std::vector<unsigned> g_waiter_store;
static std::vector<uint64_t> g_shfl_buf;      /* [warp][parity][lane] */
static std::vector<void *> g_poisoned;        /* __shared__ objects poisoned this block */
static const zb_emu_site *g_site;             /* the running launch */
static char *g_stacks;                        /* fiber stacks, each a guard page + stack */
static size_t g_stack_slots, g_stack_stride;
static char *g_smem_arena, *g_smem;           /* dynamic shared memory */
static size_t g_smem_arena_bytes, g_smem_bytes;
static sigjmp_buf g_fault_jmp;
static cudaError_t g_last_error = cudaSuccess;  /* cudaGetLastError */
static cudaError_t g_async_error = cudaSuccess; /* the next synchronizing call */
static std::map<uintptr_t, size_t> g_funcs_smem; /* kernel -> opted-in dynamic smem */
static size_t g_page;

/* cudaMalloc buffers, by start address: [data, data + size) ends at a
 * guard page; map/map_bytes is the whole mapping (guard pages included). */
struct alloc {
    char *map;
    size_t map_bytes, size;
};
static std::map<uintptr_t, alloc> g_allocs;

static void die(const char *what) {
    fprintf(stderr, "zb_emu: %s: %s\n", what, strerror(errno));
    abort();
}

static size_t page_size(void) {
    if (!g_page) g_page = (size_t)sysconf(_SC_PAGESIZE);
    return g_page;
}

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/* "kernel (file:line, in caller)" for messages */
static void site_text(char *buf, size_t n) {
    if (!g_site) {
        snprintf(buf, n, "(no kernel)");
        return;
    }
    snprintf(buf, n, "%s (launched at %s:%d, in %s)", g_site->kernel, g_site->file,
             g_site->line, g_site->caller);
}

static void report(cudaError_t *slot, cudaError_t e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report(cudaError_t *slot, cudaError_t e, const char *fmt, ...) {
    char where[512], msg[512];
    site_text(where, sizeof where);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "zb_emu: %s: %s\n", where, msg);
    if (*slot == cudaSuccess) *slot = e;
}

/* ---- the ready queue and barriers ------------------------------------------------ */
static void q_push(unsigned i) {
    g_queue[(g_q_head + g_q_len++) % g_n] = i;
    g_fibers[i].state = F_READY;
}

/* Leaves the running fiber (waiting or exited) for the next ready one, or
 * for the host side when none is ready (block finished, or deadlocked). */
static void run_next(fiber *me) {
    ctx *to = &g_main;
    g_cur = NULL;
    if (g_q_len) {
        fiber *f = &g_fibers[g_queue[g_q_head]];
        g_q_head = (g_q_head + 1) % g_n;
        g_q_len--;
        g_cur = f;
        zb_emu_thread_idx = f->tid;
        if (f == me) return; /* the only one ready: go on */
        to = &f->c;
    }
    ctx_switch(&me->c, to); /* returns when another fiber picks this one */
}

/* The running fiber arrives at b; the last arrival releases every waiter
 * (in arrival order, itself last) and they all run again in that order. */
static void arrive(barrier *b) {
    fiber *me = g_cur;
    me->state = F_WAITING;
    b->waiters[b->arrived++] = me->lin;
    if (b->arrived == b->need) {
        for (unsigned i = 0; i < b->need; i++) q_push(b->waiters[i]);
        b->arrived = 0;
    }
    run_next(me);
}

static fiber *device_side(const char *what) {
    if (!g_cur) {
        fprintf(stderr, "zb_emu: %s called outside a kernel\n", what);
        abort();
    }
    return g_cur;
}

void __syncthreads(void) {
    device_side("__syncthreads");
    arrive(&g_block_bar);
}

static barrier *warp_barrier(unsigned mask, const char *what) {
    fiber *me = device_side(what);
    if (mask != 0xffffffffu || g_n % ZB_EMU_WARP != 0) {
        char where[512];
        site_text(where, sizeof where);
        fprintf(stderr,
                "zb_emu: %s: %s with mask 0x%x and %u threads per block: only full-warp masks "
                "and blocks of whole warps are emulated\n",
                where, what, mask, g_n);
        abort();
    }
    return &g_warp_bar[me->lin / ZB_EMU_WARP];
}

void __syncwarp(unsigned mask) { arrive(warp_barrier(mask, "__syncwarp")); }

/* Each lane writes its value into the warp's buffer of the current parity,
 * waits for the other 31, reads its source lane. Two buffers alternate, so
 * one barrier per shuffle is enough: a lane can only write this buffer
 * again after passing the next shuffle's barrier, when every lane has read
 * it. Source lanes outside the lane's width-segment give its own value. */
uint64_t zb_emu_shfl(unsigned mask, uint64_t bits, zb_emu_shfl_mode mode, int arg, int width) {
    barrier *b = warp_barrier(mask, "a warp shuffle");
    fiber *me = g_cur;
    if (width <= 0 || width > (int)ZB_EMU_WARP || (width & (width - 1)) != 0) {
        fprintf(stderr, "zb_emu: shuffle width %d is not a power of two <= 32\n", width);
        abort();
    }
    int lane = (int)(me->lin % ZB_EMU_WARP), seg = lane & ~(width - 1);
    uint64_t *buf = &g_shfl_buf[((me->lin / ZB_EMU_WARP) * 2 + me->shfl_parity) * ZB_EMU_WARP];
    me->shfl_parity ^= 1u;
    buf[lane] = bits;
    arrive(b);
    int src = lane;
    switch (mode) {
    case ZB_EMU_SHFL_IDX: src = seg + (arg & (width - 1)); break;
    case ZB_EMU_SHFL_UP: src = lane - arg >= seg ? lane - arg : lane; break;
    case ZB_EMU_SHFL_DOWN: src = lane + arg < seg + width ? lane + arg : lane; break;
    case ZB_EMU_SHFL_XOR: src = (lane ^ arg) < seg + width ? lane ^ arg : lane; break;
    }
    return buf[src];
}

/* ---- shared memory --------------------------------------------------------------- */
void *zb_emu_dynamic_smem(void) {
    device_side("dynamic shared memory");
    return g_smem;
}

void zb_emu_shared_poison(void *p, size_t bytes) {
    device_side("__shared__");
    for (void *q : g_poisoned) {
        if (q == p) return;
    }
    g_poisoned.push_back(p);
    memset(p, 0xff, bytes);
}

/* Alignment of a buffer of n bytes that ends at a guard page. */
static size_t end_align(size_t n) {
    size_t a = n & (~n + 1); /* lowest set bit */
    return a == 0 || a > 256 ? 256 : a;
}

/* ---- faults ---------------------------------------------------------------------- */
/* What address a is, for the fault message. */
static void describe(uintptr_t a, char *buf, size_t n) {
    if (g_stacks && a >= (uintptr_t)g_stacks &&
        a < (uintptr_t)g_stacks + g_stack_slots * g_stack_stride &&
        (a - (uintptr_t)g_stacks) % g_stack_stride < page_size()) {
        snprintf(buf, n, "a fiber's stack guard page: stack overflow (ZB_EMU_STACK_BYTES %zu)",
                 ZB_EMU_STACK_BYTES);
        return;
    }
    uintptr_t smem_end = (uintptr_t)g_smem_arena + g_smem_arena_bytes;
    if (g_smem_arena && a >= smem_end && a < smem_end + page_size()) {
        snprintf(buf, n, "%zu bytes past the end of the block's %zu bytes of dynamic shared memory",
                 (size_t)(a - smem_end), g_smem_bytes);
        return;
    }
    for (const auto &kv : g_allocs) {
        const alloc &al = kv.second;
        uintptr_t lo = (uintptr_t)al.map, hi = lo + al.map_bytes, start = kv.first;
        if (a < lo || a >= hi) continue;
        if (a >= start + al.size) {
            snprintf(buf, n, "%zu bytes past the end of a %zu-byte device buffer at %p",
                     (size_t)(a - start - al.size), al.size, (void *)start);
        } else {
            snprintf(buf, n, "%zu bytes before the start of a %zu-byte device buffer at %p",
                     (size_t)(start - a), al.size, (void *)start);
        }
        return;
    }
    snprintf(buf, n, "not device memory (host memory, a freed buffer or a wild pointer)");
}

static void on_fault(int sig, siginfo_t *si, void *) {
    if (!g_cur) { /* not in a kernel: the emulator's own bug; crash as usual */
        signal(sig, SIG_DFL);
        return;
    }
    char what[256];
    if (sig == SIGFPE) {
        snprintf(what, sizeof what, "arithmetic exception (integer division by zero?)");
    } else {
        char d[200];
        describe((uintptr_t)si->si_addr, d, sizeof d);
        snprintf(what, sizeof what, "invalid access of address %p: %s", si->si_addr, d);
    }
    report(&g_async_error, sig == SIGFPE ? cudaErrorLaunchFailure : cudaErrorIllegalAddress,
           "block (%u,%u,%u) thread (%u,%u,%u): %s", zb_emu_block_idx.x, zb_emu_block_idx.y,
           zb_emu_block_idx.z, g_cur->tid.x, g_cur->tid.y, g_cur->tid.z, what);
    g_cur = NULL;
    siglongjmp(g_fault_jmp, 1); /* abandons the grid's fibers */
}

static void install_fault_handler(void) {
    static bool done;
    if (done) return;
    done = true;
    static char alt[64 * 1024];
    stack_t ss = {};
    ss.ss_sp = alt;
    ss.ss_size = sizeof alt;
    if (sigaltstack(&ss, NULL) != 0) die("sigaltstack");
    struct sigaction sa = {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL) != 0 || sigaction(SIGBUS, &sa, NULL) != 0 ||
        sigaction(SIGFPE, &sa, NULL) != 0) {
        die("sigaction");
    }
}

/* ---- launches -------------------------------------------------------------------- */
static void fiber_main(void) {
    g_body(g_body_arg);
    fiber *me = g_cur;
    me->state = F_DONE;
    g_done++;
    run_next(me);
    abort(); /* an exited fiber is never resumed */
}

static void ensure_stacks(unsigned n) {
    if (n <= g_stack_slots) return;
    if (g_stacks) munmap(g_stacks, g_stack_slots * g_stack_stride);
    g_stack_stride = page_size() + round_up(ZB_EMU_STACK_BYTES, page_size());
    g_stacks = (char *)mmap(NULL, n * g_stack_stride, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (g_stacks == MAP_FAILED) die("mmap (fiber stacks)");
    for (unsigned i = 0; i < n; i++) {
        if (mprotect(g_stacks + i * g_stack_stride, page_size(), PROT_NONE) != 0) die("mprotect");
    }
    g_stack_slots = n;
}

static void ensure_smem_arena(void) {
    if (g_smem_arena) return;
    g_smem_arena_bytes = round_up(ZB_EMU_SMEM_OPTIN_MAX, page_size());
    char *m = (char *)mmap(NULL, g_smem_arena_bytes + page_size(), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) die("mmap (shared memory)");
    if (mprotect(m + g_smem_arena_bytes, page_size(), PROT_NONE) != 0) die("mprotect");
    g_smem_arena = m;
}

/* Runs one block; false when its threads deadlocked (reported). */
static bool run_block(unsigned linear_block) {
    g_done = 0;
    g_q_head = g_q_len = 0;
    g_block_bar.arrived = 0;
    for (barrier &b : g_warp_bar) b.arrived = 0;
    g_poisoned.clear();
    memset(g_smem, 0xff, g_smem_bytes);
    bool descending = linear_block % 2 == 1;
    for (unsigned k = 0; k < g_n; k++) {
        unsigned i = descending ? g_n - 1 - k : k;
        fiber *f = &g_fibers[i];
        f->shfl_parity = 0;
        ctx_init(&f->c, f->stack, ZB_EMU_STACK_BYTES, fiber_main);
        q_push(i);
    }
    while (g_q_len) { /* normally entered once: fibers hand over among themselves */
        fiber *f = &g_fibers[g_queue[g_q_head]];
        g_q_head = (g_q_head + 1) % g_n;
        g_q_len--;
        g_cur = f;
        zb_emu_thread_idx = f->tid;
        ctx_switch(&g_main, &f->c);
        g_cur = NULL;
    }
    if (g_done == g_n) return true;
    unsigned at_block = g_block_bar.arrived, at_warp = 0;
    for (const barrier &b : g_warp_bar) at_warp += b.arrived;
    report(&g_async_error, cudaErrorLaunchFailure,
           "block (%u,%u,%u): barrier divergence: %u threads wait at __syncthreads, %u at a warp "
           "shuffle/__syncwarp, %u exited; every thread of the block (warp) must reach the same "
           "barriers",
           zb_emu_block_idx.x, zb_emu_block_idx.y, zb_emu_block_idx.z, at_block, at_warp, g_done);
    return false;
}

static void run_grid(const zb_emu_config &cfg) {
    for (unsigned z = 0; z < cfg.grid.z; z++) {
        for (unsigned y = 0; y < cfg.grid.y; y++) {
            for (unsigned x = 0; x < cfg.grid.x; x++) {
                zb_emu_block_idx = uint3{x, y, z};
                unsigned lin = x + cfg.grid.x * (y + cfg.grid.y * z);
                if (!run_block(lin)) return;
            }
        }
    }
}

/* false when a fault ended the grid (reported by the handler) */
static bool run_grid_guarded(const zb_emu_config &cfg) {
    if (sigsetjmp(g_fault_jmp, 1)) return false;
    run_grid(cfg);
    return true;
}

static const alloc *find_alloc(const void *p, size_t bytes);

void zb_emu_run(const void *kernel, const zb_emu_site &site, const zb_emu_config &cfg,
                void (*body)(void *), void *arg, const void *const *ptrs, size_t n_ptrs) {
    std::lock_guard<std::mutex> lock(g_lock);
    g_site = &site;
    const dim3 &g = cfg.grid, &b = cfg.block;
    size_t n = (size_t)b.x * b.y * b.z;
    if (n == 0 || n > ZB_EMU_MAX_THREADS || b.x > 1024 || b.y > 1024 || b.z > 64 || g.x == 0 ||
        g.y == 0 || g.z == 0 || g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535) {
        report(&g_last_error, cudaErrorInvalidConfiguration,
               "invalid launch configuration: grid (%u,%u,%u), block (%u,%u,%u)", g.x, g.y, g.z,
               b.x, b.y, b.z);
        g_site = NULL;
        return;
    }
    auto opt = g_funcs_smem.find((uintptr_t)kernel);
    size_t smem_max = opt == g_funcs_smem.end() ? ZB_EMU_SMEM_DEFAULT : opt->second;
    if (cfg.smem > smem_max) {
        report(&g_last_error, cudaErrorInvalidValue,
               "%zu bytes of dynamic shared memory, over the kernel's limit of %zu (raise it "
               "with cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize))",
               cfg.smem, smem_max);
        g_site = NULL;
        return;
    }
    for (size_t i = 0; i < n_ptrs; i++) {
        if (ptrs[i] && !find_alloc(ptrs[i], 0)) {
            report(&g_async_error, cudaErrorIllegalAddress,
                   "argument %zu (%p) is not device memory (not in a cudaMalloc buffer)", i + 1,
                   ptrs[i]);
            g_site = NULL;
            return;
        }
    }
    install_fault_handler();
    ensure_stacks((unsigned)n);
    ensure_smem_arena();
    g_n = (unsigned)n;
    std::vector<fiber> fibers(n);
    for (unsigned i = 0; i < g_n; i++) {
        fibers[i].lin = i;
        fibers[i].tid = uint3{i % b.x, i / b.x % b.y, i / (b.x * b.y)};
        fibers[i].stack = g_stacks + (size_t)i * g_stack_stride + page_size();
    }
    g_fibers = fibers.data();
    g_queue.assign(n, 0);
    g_waiter_store.assign(n + n, 0);
    g_block_bar = barrier{g_n, 0, g_waiter_store.data()};
    g_warp_bar.assign(g_n % ZB_EMU_WARP ? 0 : g_n / ZB_EMU_WARP, barrier{});
    for (size_t w = 0; w < g_warp_bar.size(); w++) {
        g_warp_bar[w] = barrier{ZB_EMU_WARP, 0, g_waiter_store.data() + n + w * ZB_EMU_WARP};
    }
    g_shfl_buf.assign(n * 2, 0);
    g_smem_bytes = cfg.smem;
    g_smem = g_smem_arena + g_smem_arena_bytes - round_up(cfg.smem, end_align(cfg.smem));
    g_body = body;
    g_body_arg = arg;
    zb_emu_grid_dim = g;
    zb_emu_block_dim = b;
    (void)run_grid_guarded(cfg);
    g_cur = NULL;
    g_fibers = NULL;
    g_site = NULL;
}

/* ---- device memory --------------------------------------------------------------- */
/* The buffer holding [p, p + bytes) (p may be its end when bytes is 0). */
static const alloc *find_alloc(const void *p, size_t bytes) {
    uintptr_t a = (uintptr_t)p;
    auto it = g_allocs.upper_bound(a);
    if (it == g_allocs.begin()) return NULL;
    --it;
    if (a - it->first > it->second.size || bytes > it->second.size - (a - it->first)) return NULL;
    return &it->second;
}

static cudaError_t sync_point(void) {
    cudaError_t e = g_async_error;
    g_async_error = cudaSuccess;
    return e;
}

extern "C" {

cudaError_t cudaMalloc(void **p, size_t size) {
    std::lock_guard<std::mutex> lock(g_lock);
    size_t ps = page_size(), data = round_up(size ? size : 1, ps);
    size_t map_bytes = data + 2 * ps;
    char *m = (char *)mmap(NULL, map_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return g_last_error = cudaErrorMemoryAllocation;
    if (mprotect(m + ps, data, PROT_READ | PROT_WRITE) != 0) die("mprotect");
    /* the data ends where the trailing guard page starts */
    char *start = m + ps + data - round_up(size, end_align(size));
    g_allocs[(uintptr_t)start] = alloc{m, map_bytes, size};
    *p = start;
    return cudaSuccess;
}

cudaError_t cudaFree(void *p) {
    std::lock_guard<std::mutex> lock(g_lock);
    if (!p) return cudaSuccess;
    auto it = g_allocs.find((uintptr_t)p);
    if (it == g_allocs.end()) return g_last_error = cudaErrorInvalidValue;
    munmap(it->second.map, it->second.map_bytes);
    g_allocs.erase(it);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
    std::lock_guard<std::mutex> lock(g_lock);
    cudaError_t e = sync_point();
    if (e != cudaSuccess) return e;
    bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if ((dst_dev && !find_alloc(dst, n)) || (src_dev && !find_alloc(src, n))) {
        return g_last_error = cudaErrorInvalidValue;
    }
    if (n) memmove(dst, src, n);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                            cudaStream_t) {
    return cudaMemcpy(dst, src, n, kind);
}

cudaError_t cudaMemset(void *p, int v, size_t n) {
    std::lock_guard<std::mutex> lock(g_lock);
    if (!find_alloc(p, n)) return g_last_error = cudaErrorInvalidValue;
    if (n) memset(p, v, n);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t) { return cudaMemset(p, v, n); }

/* ---- streams and devices --------------------------------------------------------- */
cudaError_t cudaStreamCreate(cudaStream_t *s) {
    *s = (cudaStream_t)malloc(1); /* a distinct handle; work runs at once anyway */
    return *s ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned) { return cudaStreamCreate(s); }
cudaError_t cudaStreamDestroy(cudaStream_t s) {
    free(s);
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) {
    std::lock_guard<std::mutex> lock(g_lock);
    return sync_point();
}
cudaError_t cudaDeviceSynchronize(void) {
    std::lock_guard<std::mutex> lock(g_lock);
    return sync_point();
}
cudaError_t cudaGetDeviceCount(int *n) {
    *n = 1;
    return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidDevice; }
cudaError_t cudaGetDevice(int *d) {
    *d = 0;
    return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d) {
    if (d != 0) return cudaErrorInvalidDevice;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "zb_emu (CPU emulation of the CUDA kernels)");
    p->warpSize = (int)ZB_EMU_WARP;
    p->maxThreadsPerBlock = (int)ZB_EMU_MAX_THREADS;
    p->sharedMemPerBlock = ZB_EMU_SMEM_DEFAULT;
    p->sharedMemPerBlockOptin = ZB_EMU_SMEM_OPTIN_MAX;
    p->multiProcessorCount = 1;
    return cudaSuccess;
}
cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value) {
    std::lock_guard<std::mutex> lock(g_lock);
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return cudaSuccess; /* hints */
    if (value < 0 || (size_t)value > ZB_EMU_SMEM_OPTIN_MAX) {
        return g_last_error = cudaErrorInvalidValue;
    }
    g_funcs_smem[(uintptr_t)func] = (size_t)value;
    return cudaSuccess;
}

/* ---- errors ---------------------------------------------------------------------- */
cudaError_t cudaGetLastError(void) {
    std::lock_guard<std::mutex> lock(g_lock);
    cudaError_t e = g_last_error;
    g_last_error = cudaSuccess;
    return e;
}
cudaError_t cudaPeekAtLastError(void) {
    std::lock_guard<std::mutex> lock(g_lock);
    return g_last_error;
}

#define ZB_EMU_ERRORS(X)                                                      \
    X(cudaSuccess, "no error")                                                \
    X(cudaErrorInvalidValue, "invalid argument")                              \
    X(cudaErrorMemoryAllocation, "out of memory")                             \
    X(cudaErrorInvalidConfiguration, "invalid configuration argument")        \
    X(cudaErrorInvalidDevice, "invalid device ordinal")                       \
    X(cudaErrorIllegalAddress, "an illegal memory access was encountered")    \
    X(cudaErrorLaunchFailure, "unspecified launch failure")

const char *cudaGetErrorName(cudaError_t e) {
#define X(code, text) if (e == code) return #code;
    ZB_EMU_ERRORS(X)
#undef X
    return "cudaErrorUnknown";
}
const char *cudaGetErrorString(cudaError_t e) {
#define X(code, text) if (e == code) return text " (zb_emu)";
    ZB_EMU_ERRORS(X)
#undef X
    return "unknown error (zb_emu)";
}

} /* extern "C" */
