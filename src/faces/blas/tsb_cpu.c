// tsb_cpu.c: the CPU BLAS behind the library: loaded with dlopen on first use, symbols looked up lazily.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tsb_internal.h"

// The handles are part of the library's one lazily created global context (docs/blas.md). The
// ILP64 build has two: the 64-bit CPU BLAS behind the exported names, and the 32-bit one the
// runtime's own CPU work (tessera_core, built against LP64 OpenBLAS) calls.
static void *cpu_handle;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
#ifdef TSB_ILP64
#define CORE_VAR "TESSERA_CPU_BLAS_LP64"
static void *core_handle;
static pthread_once_t core_once = PTHREAD_ONCE_INIT;
#else
#define CORE_VAR "TESSERA_CPU_BLAS"
#endif

static void *open_blas(const char *lib, const char *var) {
    // RTLD_LOCAL: the CPU BLAS's names must not join the global scope, where they would compete
    // with ours for the program's references.
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "tessera_blas: cannot load the CPU BLAS '%s' (%s): %s\n", lib, var, dlerror());
        abort();
    }
    return h;
}

// The library behind tessera_core's own calls: TESSERA_CPU_BLAS_LP64 in the ILP64 build, else the
// one CPU BLAS.
static const char *core_lib(void) {
#ifdef TSB_ILP64
    return tsb_config_get()->cpu_blas_core;
#else
    return tsb_config_get()->cpu_blas;
#endif
}

static void cpu_open(void) { cpu_handle = open_blas(tsb_config_get()->cpu_blas, "TESSERA_CPU_BLAS"); }
#ifdef TSB_ILP64
static void core_open(void) { core_handle = open_blas(core_lib(), CORE_VAR); }
#endif

static void *core_handle_get(void) {
#ifdef TSB_ILP64
    pthread_once(&core_once, core_open);
    return core_handle;
#else
    pthread_once(&cpu_once, cpu_open);
    return cpu_handle;
#endif
}

static void *sym_in(void *h, const char *lib, const char *var, const char *name) {
    dlerror();
    void *f = dlsym(h, name);
    if (!f) {
        fprintf(stderr, "tessera_blas: the CPU BLAS '%s' (%s) has no symbol '%s'\n", lib, var, name);
        abort();
    }
    // A CPU BLAS that is this library (TESSERA_CPU_BLAS=libblas.so.3 found through our directory)
    // would forward every call to itself forever.
    Dl_info mine, theirs;
    if (dladdr((void *)tsb_cpu_sym, &mine) && dladdr(f, &theirs) && mine.dli_fbase == theirs.dli_fbase) {
        fprintf(stderr, "tessera_blas: %s '%s' is this library itself (%s); name a CPU BLAS such as libopenblas.so.0\n",
                var, lib, mine.dli_fname);
        abort();
    }
    return f;
}

void *tsb_cpu_sym(const char *name) {
    pthread_once(&cpu_once, cpu_open);
    return sym_in(cpu_handle, tsb_config_get()->cpu_blas, "TESSERA_CPU_BLAS", name);
}

void *tsb_core_sym(const char *name) { return sym_in(core_handle_get(), core_lib(), CORE_VAR, name); }

// Calls the tessera_core makes to OpenBLAS's own extensions are linked to these (--wrap); another
// CPU BLAS may lack them, so they fall back to neutral answers.
static void *cpu_sym_opt(const char *name) { return dlsym(core_handle_get(), name); }

char *__wrap_openblas_get_config(void);
char *__wrap_openblas_get_corename(void);
int __wrap_openblas_get_num_threads(void);
void __wrap_openblas_set_num_threads(int n);

char *__wrap_openblas_get_config(void) {
    char *(*f)(void) = (char *(*)(void))cpu_sym_opt("openblas_get_config");
    return f ? f() : (char *)core_lib();
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
