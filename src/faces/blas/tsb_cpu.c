// tsb_cpu.c: the CPU BLAS behind the library: loaded with dlopen on first use, symbols looked up lazily.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tsb_internal.h"

// The handle is part of the library's one lazily created global context (docs/blas.md).
static void *cpu_handle;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

static void cpu_open(void) {
    const char *lib = tsb_config_get()->cpu_blas;
    // RTLD_LOCAL: the CPU BLAS's names must not join the global scope, where they would compete
    // with ours for the program's references.
    cpu_handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!cpu_handle) {
        fprintf(stderr, "tessera_blas: cannot load the CPU BLAS '%s' (TESSERA_CPU_BLAS): %s\n", lib, dlerror());
        abort();
    }
}

void *tsb_cpu_sym(const char *name) {
    pthread_once(&cpu_once, cpu_open);
    dlerror();
    void *f = dlsym(cpu_handle, name);
    if (!f) {
        fprintf(stderr, "tessera_blas: the CPU BLAS '%s' (TESSERA_CPU_BLAS) has no symbol '%s'\n",
                tsb_config_get()->cpu_blas, name);
        abort();
    }
    // A CPU BLAS that is this library (TESSERA_CPU_BLAS=libblas.so.3 found through our directory)
    // would forward every call to itself forever.
    Dl_info mine, theirs;
    if (dladdr((void *)tsb_cpu_sym, &mine) && dladdr(f, &theirs) && mine.dli_fbase == theirs.dli_fbase) {
        fprintf(stderr, "tessera_blas: TESSERA_CPU_BLAS '%s' is this library itself (%s); name a CPU BLAS such as libopenblas.so.0\n",
                tsb_config_get()->cpu_blas, mine.dli_fname);
        abort();
    }
    return f;
}

// Calls the tessera_core makes to OpenBLAS's own extensions are linked to these (--wrap); another
// CPU BLAS may lack them, so they fall back to neutral answers.
static void *cpu_sym_opt(const char *name) {
    pthread_once(&cpu_once, cpu_open);
    return dlsym(cpu_handle, name);
}

char *__wrap_openblas_get_config(void);
char *__wrap_openblas_get_corename(void);
int __wrap_openblas_get_num_threads(void);
void __wrap_openblas_set_num_threads(int n);

char *__wrap_openblas_get_config(void) {
    char *(*f)(void) = (char *(*)(void))cpu_sym_opt("openblas_get_config");
    return f ? f() : (char *)tsb_config_get()->cpu_blas;
}
char *__wrap_openblas_get_corename(void) {
    char *(*f)(void) = (char *(*)(void))cpu_sym_opt("openblas_get_corename");
    return f ? f() : (char *)"unknown";
}
int __wrap_openblas_get_num_threads(void) {
    int (*f)(void) = (int (*)(void))cpu_sym_opt("openblas_get_num_threads");
    return f ? f() : 1;
}
void __wrap_openblas_set_num_threads(int n) {
    void (*f)(int) = (void (*)(int))cpu_sym_opt("openblas_set_num_threads");
    if (f) f(n);
}
