// tsb_forward.c: one forwarder per BLAS/CBLAS symbol the library does not implement (generated list).
//
// A forwarder is a tail jump to the CPU BLAS's function of the same name, so the caller's
// arguments, hidden CHARACTER lengths and return value (INTEGER, REAL or COMPLEX in registers)
// pass through untouched and no prototype is needed. The target is looked up on the first call
// (tsb_fwd_resolve) and kept in the forwarder's own slot; until then the forwarder saves the
// argument registers around the lookup. Written in x86-64 assembly: GCC's __builtin_apply would
// also need no prototypes but leaves an x87 register pushed and FE_INVALID raised on every call.
#include <stdatomic.h>

#include "tsb_internal.h"

#if !defined(__x86_64__)
#error "libtessera_blas forwarders exist for x86-64 only (docs/blas.md, limits)"
#endif

void *tsb_fwd_resolve(const char *name, void *_Atomic *slot);
void *tsb_fwd_resolve_core(const char *name, void *_Atomic *slot);

// Called by a forwarder's first call, with the argument registers saved. Two threads may both
// resolve: they store the same address.
void *tsb_fwd_resolve(const char *name, void *_Atomic *slot) {
    void *f = tsb_cpu_sym(name);
    atomic_store_explicit(slot, f, memory_order_release);
    return f;
}
// The same for tessera_core's own (32-bit) calls: the LP64 CPU BLAS in the ILP64 build.
void *tsb_fwd_resolve_core(const char *name, void *_Atomic *slot) {
    void *f = tsb_core_sym(name);
    atomic_store_explicit(slot, f, memory_order_release);
    return f;
}

// rsp is 8 mod 16 at entry; 7 pushes make it 0 mod 16, the 128 bytes for xmm0-7 keep it there.
#define TSB_FWD_ASM(fn, sym, vis, resolve)                                                                   \
    __asm__(".text\n"                                                                                 \
            ".globl " #fn "\n" vis ".type " #fn ",@function\n"                                         \
            ".p2align 4\n" #fn ":\n"                                                                  \
            "  movq tsb_slot_" #fn "(%rip), %r11\n"                                                  \
            "  testq %r11, %r11\n"                                                                    \
            "  jz 1f\n"                                                                               \
            "  jmp *%r11\n"                                                                           \
            "1:\n"                                                                                    \
            "  pushq %rax\n  pushq %rdi\n  pushq %rsi\n  pushq %rdx\n  pushq %rcx\n  pushq %r8\n  pushq %r9\n" \
            "  subq $128, %rsp\n"                                                                     \
            "  movdqu %xmm0, 0(%rsp)\n  movdqu %xmm1, 16(%rsp)\n  movdqu %xmm2, 32(%rsp)\n"           \
            "  movdqu %xmm3, 48(%rsp)\n  movdqu %xmm4, 64(%rsp)\n  movdqu %xmm5, 80(%rsp)\n"          \
            "  movdqu %xmm6, 96(%rsp)\n  movdqu %xmm7, 112(%rsp)\n"                                   \
            "  leaq tsb_name_" #fn "(%rip), %rdi\n"                                                  \
            "  leaq tsb_slot_" #fn "(%rip), %rsi\n"                                                  \
            "  call " resolve "@PLT\n"                                                               \
            "  movq %rax, %r11\n"                                                                     \
            "  movdqu 0(%rsp), %xmm0\n  movdqu 16(%rsp), %xmm1\n  movdqu 32(%rsp), %xmm2\n"           \
            "  movdqu 48(%rsp), %xmm3\n  movdqu 64(%rsp), %xmm4\n  movdqu 80(%rsp), %xmm5\n"          \
            "  movdqu 96(%rsp), %xmm6\n  movdqu 112(%rsp), %xmm7\n"                                   \
            "  addq $128, %rsp\n"                                                                     \
            "  popq %r9\n  popq %r8\n  popq %rcx\n  popq %rdx\n  popq %rsi\n  popq %rdi\n  popq %rax\n" \
            "  jmp *%r11\n"                                                                           \
            ".size " #fn ", .-" #fn "\n"                                                              \
            ".pushsection .bss\n.p2align 3\ntsb_slot_" #fn ":\n  .zero 8\n.popsection\n"              \
            ".pushsection .rodata\ntsb_name_" #fn ":\n  .asciz \"" sym "\"\n.popsection\n");

// Exported names (the version script decides what is exported).
#define TSB_FWD_EXPORT(fn, sym) TSB_FWD_ASM(fn, sym, "", "tsb_fwd_resolve")
// The tessera_core's own calls into the CPU BLAS (linked to __wrap_<name> with --wrap, so that the
// runtime's CPU worker never calls back into this library's GEMM).
#define TSB_FWD_CORE(fn, sym) TSB_FWD_ASM(fn, sym, ".hidden " #fn "\n", "tsb_fwd_resolve_core")

#include "tsb_forward.inc"
