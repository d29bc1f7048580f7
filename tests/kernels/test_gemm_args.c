// test_gemm_args.c: precisions, engine names, and the BLAS-order argument checks of GEMM and DTRSM.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "core/ts_error.h"
#include "kernels/ts_kernels.h"

static void test_prec(void **state) {
    (void)state;
    assert_int_equal(ts_prec_size('s'), 4);
    assert_int_equal(ts_prec_size('d'), 8);
    assert_int_equal(ts_prec_size('c'), 8);
    assert_int_equal(ts_prec_size('z'), 16);
    assert_int_equal(ts_prec_size('x'), 0);
    assert_int_equal(ts_prec_size('D'), 0);
    assert_false(ts_prec_is_complex('s'));
    assert_false(ts_prec_is_complex('d'));
    assert_true(ts_prec_is_complex('c'));
    assert_true(ts_prec_is_complex('z'));
}

static void test_engine_names(void **state) {
    (void)state;
    const char *names[] = {"auto", "cublas", "tessera", "ref", "cpu"};
    for (int i = 0; i < 5; i++) {
        ts_engine e = TS_ENGINE_REF;
        assert_string_equal(ts_engine_name((ts_engine)i), names[i]);
        assert_int_equal(ts_engine_parse(names[i], &e), 0);
        assert_int_equal(e, i);
    }
    ts_engine e = TS_ENGINE_CPU;
    assert_int_equal(ts_engine_parse("cuBLAS", &e), 0);
    assert_int_equal(e, TS_ENGINE_CUBLAS);
    e = TS_ENGINE_CPU;
    assert_int_equal(ts_engine_parse("magma", &e), TS_ERR_ARG);
    assert_int_equal(e, TS_ENGINE_CPU);
    const char *msg = ts_error_last()->message;
    assert_non_null(strstr(msg, "magma"));
    assert_non_null(strstr(msg, "auto, cublas, tessera, ref, cpu)"));
    // the engines over a device set are the runtime's (runtime/ts_engines.h), not the kernels'
    assert_int_equal(ts_engine_parse("tiles", &e), TS_ERR_ARG);
    assert_string_equal(ts_engine_name((ts_engine)5), "unknown");
    assert_int_equal(ts_engine_parse(NULL, &e), TS_ERR_ARG);
}

static void test_gemm_check_positions(void **state) {
    (void)state;
    assert_int_equal(ts_gemm_check_args('N', 'N', 3, 4, 5, 3, 5, 3), 0);
    assert_int_equal(ts_gemm_check_args('n', 't', 3, 4, 5, 3, 4, 3), 0);
    assert_int_equal(ts_gemm_check_args('C', 'C', 3, 4, 5, 5, 4, 3), 0);
    assert_int_equal(ts_gemm_check_args('X', 'N', 3, 4, 5, 3, 5, 3), 1);
    assert_int_equal(ts_gemm_check_args('N', 'Q', 3, 4, 5, 3, 5, 3), 2);
    assert_int_equal(ts_gemm_check_args('N', 'N', -1, 4, 5, 3, 5, 3), 3);
    assert_int_equal(ts_gemm_check_args('N', 'N', 3, -1, 5, 3, 5, 3), 4);
    assert_int_equal(ts_gemm_check_args('N', 'N', 3, 4, -1, 3, 5, 3), 5);
    // lda: rows of A as stored (m for 'N', k for 'T'/'C'), at least 1.
    assert_int_equal(ts_gemm_check_args('N', 'N', 3, 4, 5, 2, 5, 3), 8);
    assert_int_equal(ts_gemm_check_args('T', 'N', 3, 4, 5, 3, 5, 3), 8);
    assert_int_equal(ts_gemm_check_args('T', 'N', 3, 4, 5, 5, 5, 3), 0);
    assert_int_equal(ts_gemm_check_args('N', 'N', 0, 4, 5, 0, 5, 1), 8);
    assert_int_equal(ts_gemm_check_args('N', 'N', 0, 4, 5, 1, 5, 1), 0);
    // ldb: k for 'N', n for 'T'/'C'.
    assert_int_equal(ts_gemm_check_args('N', 'N', 3, 4, 5, 3, 4, 3), 10);
    assert_int_equal(ts_gemm_check_args('N', 'T', 3, 4, 5, 3, 3, 3), 10);
    assert_int_equal(ts_gemm_check_args('N', 'N', 3, 4, 0, 3, 0, 3), 10);
    // ldc: m.
    assert_int_equal(ts_gemm_check_args('N', 'N', 3, 4, 5, 3, 5, 2), 13);
    assert_int_equal(ts_gemm_check_args('N', 'N', 0, 0, 0, 1, 1, 0), 13);
    // The first bad argument wins.
    assert_int_equal(ts_gemm_check_args('X', 'Y', -1, -1, -1, 0, 0, 0), 1);
    assert_int_equal(ts_gemm_check_args('N', 'N', 3, -1, 5, 0, 0, 0), 4);
}

static void test_gemm_check_raise(void **state) {
    (void)state;
    assert_int_equal(ts_gemm_check_raise("f", 'd', 'N', 'N', 3, 4, 5, 3, 5, 3), 0);
    assert_int_equal(ts_gemm_check_raise("f", 'd', 'N', 'N', 3, 4, 5, 3, 5, 2), TS_ERR_ARG);
    assert_non_null(strstr(ts_error_last()->message, "argument 13 (ldc = 2)"));
    assert_int_equal(ts_gemm_check_raise("f", 'q', 'N', 'N', 3, 4, 5, 3, 5, 3), TS_ERR_ARG);
    assert_non_null(strstr(ts_error_last()->message, "precision 'q'"));
}

static void test_dtrsm_check_positions(void **state) {
    (void)state;
    assert_int_equal(ts_dtrsm_check_args('L', 'U', 'N', 'N', 3, 4, 3, 3), 0);
    assert_int_equal(ts_dtrsm_check_args('R', 'l', 't', 'u', 3, 4, 4, 3), 0);
    assert_int_equal(ts_dtrsm_check_args('X', 'U', 'N', 'N', 3, 4, 3, 3), 1);
    assert_int_equal(ts_dtrsm_check_args('L', 'X', 'N', 'N', 3, 4, 3, 3), 2);
    assert_int_equal(ts_dtrsm_check_args('L', 'U', 'X', 'N', 3, 4, 3, 3), 3);
    assert_int_equal(ts_dtrsm_check_args('L', 'U', 'N', 'X', 3, 4, 3, 3), 4);
    assert_int_equal(ts_dtrsm_check_args('L', 'U', 'N', 'N', -1, 4, 3, 3), 5);
    assert_int_equal(ts_dtrsm_check_args('L', 'U', 'N', 'N', 3, -1, 3, 3), 6);
    assert_int_equal(ts_dtrsm_check_args('L', 'U', 'N', 'N', 3, 4, 2, 3), 9);
    assert_int_equal(ts_dtrsm_check_args('R', 'U', 'N', 'N', 3, 4, 3, 3), 9);
    assert_int_equal(ts_dtrsm_check_args('L', 'U', 'N', 'N', 3, 4, 3, 2), 11);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prec),
        cmocka_unit_test(test_engine_names),
        cmocka_unit_test(test_gemm_check_positions),
        cmocka_unit_test(test_gemm_check_raise),
        cmocka_unit_test(test_dtrsm_check_positions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
