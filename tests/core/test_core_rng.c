// test_core_rng.c: HPL generator against an independent port of HPL's arithmetic, known values,
// blocking independence of ts_hpl_fill, and statistics of the counter-based generators.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/ts_rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// ---- Oracle: HPL 2.3's own arithmetic (testing/matgen), 31-bit numbers as two ints: [0] the low
// 16 bits, [1] the high 15 bits. HPL relies on int products wrapping mod 2^32; wrap32 makes that
// explicit (the int64 product converted to int32 the two's-complement way) to avoid C's UB.
static int wrap32(int64_t v) { return (int)(int32_t)(uint32_t)(uint64_t)v; }

// HPL_lmul: I = K * J mod 2^31.
static void hpl_lmul(const int *K, const int *J, int *I) {
    const int ipow30 = 1 << 30;
    int kt = wrap32((int64_t)K[0] * J[0]);
    if (kt < 0) kt = (kt + ipow30) + ipow30;
    I[0] = kt - ((kt >> 16) << 16);
    int lt = wrap32((int64_t)K[0] * J[1] + (int64_t)K[1] * J[0]);
    if (lt < 0) lt = (lt + ipow30) + ipow30;
    kt = wrap32((int64_t)(kt >> 16) + lt);
    if (kt < 0) kt = (kt + ipow30) + ipow30;
    I[1] = kt - ((kt >> 15) << 15);
}

// HPL_ladd: I = J + K mod 2^31.
static void hpl_ladd(const int *J, const int *K, int *I) {
    int itmp0 = K[0] + J[0];
    int itmp1 = itmp0 >> 16;
    I[0] = itmp0 - (itmp1 << 16);
    int itmp2 = K[1] + J[1] + itmp1;
    itmp1 = itmp2 >> 15;
    I[1] = itmp2 - (itmp1 << 15);
}

static const int HPL_MULT[2] = {20077, 16838}; // 1103515245 = 16838*2^16 + 20077
static const int HPL_IADD[2] = {12345, 0};

// HPL_xjumpm: IRANM = a^JUMPM IRANN + c_JUMPM, with IAM/ICM the jump's coefficients, by JUMPM-1
// repeated multiplications (HPL's own loop, O(JUMPM)).
static void hpl_xjumpm(int jumpm, const int *mult, const int *iadd, const int *irann, int *iranm, int *iam,
                       int *icm) {
    int j[2];
    if (jumpm > 0) {
        for (int k = 0; k < 2; k++) {
            iam[k] = mult[k];
            icm[k] = iadd[k];
        }
        for (int k = 1; k <= jumpm - 1; k++) {
            hpl_lmul(iam, mult, j);
            iam[0] = j[0];
            iam[1] = j[1];
            hpl_lmul(icm, mult, j);
            hpl_ladd(iadd, j, icm);
        }
        hpl_lmul(irann, iam, j);
        hpl_ladd(j, icm, iranm);
    } else {
        iranm[0] = irann[0];
        iranm[1] = irann[1];
        iam[0] = 1;
        iam[1] = 0;
        icm[0] = 0;
        icm[1] = 0;
    }
}

static uint32_t oracle_state(uint32_t seed, int n) {
    int iran[2] = {(int)(seed & 0xffff), (int)((seed >> 16) & 0x7fff)};
    int out[2], ia[2], ic[2];
    hpl_xjumpm(n, HPL_MULT, HPL_IADD, iran, out, ia, ic);
    return (uint32_t)out[0] + ((uint32_t)out[1] << 16);
}

// HPL_rand's value: HPL_HALF - (j[0] + j[1] * 2^16) / 2^31.
static double oracle_value(const int *x) { return 0.5 - ((double)x[0] + (double)x[1] * 65536.0) / 2147483648.0; }

static const uint32_t SEEDS[] = {0u, 1u, 100u, 12345u, 65535u, 65536u, 1u << 30, 0x7fffffffu, 987654321u};
#define NSEEDS (sizeof SEEDS / sizeof SEEDS[0])

static void test_state_matches_hpl_xjumpm(void **state) {
    (void)state;
    static const int ns[] = {0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 100, 999, 1000, 1001, 4096, 12345};
    for (size_t s = 0; s < NSEEDS; s++) {
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
            uint32_t want = oracle_state(SEEDS[s], ns[k]);
            uint32_t got = ts_hpl_state_at(SEEDS[s], (uint64_t)ns[k]);
            if (want != got) fail_msg("seed %u n %d: oracle %u, ts %u", SEEDS[s], ns[k], want, got);
            // Jump maps agree with the oracle's coefficients too.
            int iran[2] = {0, 0}, out[2], ia[2], ic[2];
            hpl_xjumpm(ns[k], HPL_MULT, HPL_IADD, iran, out, ia, ic);
            ts_lcg_jump j = ts_lcg_jump_n((uint64_t)ns[k]);
            assert_int_equal(j.a, (uint32_t)ia[0] + ((uint32_t)ia[1] << 16));
            assert_int_equal(j.c, (uint32_t)ic[0] + ((uint32_t)ic[1] << 16));
        }
    }
}

static void test_sequential_matches_hpl_rand(void **state) {
    (void)state;
    // HPL_rand: returns the value of the current state, then steps it with lmul/ladd.
    for (size_t s = 0; s < NSEEDS; s++) {
        int x[2] = {(int)(SEEDS[s] & 0xffff), (int)((SEEDS[s] >> 16) & 0x7fff)};
        ts_hpl_rng r;
        ts_hpl_rng_init(&r, SEEDS[s], 0);
        for (int n = 0; n < 20000; n++) {
            double want = oracle_value(x);
            double got = ts_hpl_rng_next(&r);
            if (want != got) fail_msg("seed %u step %d: oracle %.17g, ts %.17g", SEEDS[s], n, want, got);
            int t[2];
            hpl_lmul(x, HPL_MULT, t);
            hpl_ladd(t, HPL_IADD, x);
        }
        // Positioned start equals stepping.
        ts_hpl_rng_init(&r, SEEDS[s], 20000);
        assert_int_equal(r.x, (uint32_t)x[0] + ((uint32_t)x[1] << 16));
    }
}

static void test_known_values_seed100(void **state) {
    (void)state;
    // Computed independently (python3, exact integers) from X(n+1) = (1103515245 X(n) + 12345) mod 2^31.
    static const uint32_t first[5] = {829870797u, 1533044610u, 1478614675u, 1357823696u, 413847241u};
    for (int n = 1; n <= 5; n++) assert_int_equal(ts_hpl_state_at(100, (uint64_t)n), first[n - 1]);
    assert_int_equal(ts_hpl_state_at(100, 0), 100u);
    assert_int_equal(ts_hpl_state_at(100, 1000000u), 1562703652u);
    // The period is 2^31, so X(2^40) = X(0).
    assert_int_equal(ts_hpl_state_at(100, 1ull << 40), 100u);
    assert_int_equal(ts_hpl_state_at(100, (1ull << 40) + 7), 1602343151u);
    assert_int_equal(ts_hpl_state_at(100, (1ull << 31) - 1), 1024956919u);
    assert_int_equal(ts_hpl_state_at(100, UINT64_MAX), 1024956919u);
    assert_int_equal(ts_hpl_state_at(100, 123456789012ull), 1680452096u);
    assert_int_equal(ts_hpl_state_at(1, 1000000000ull), 1102554625u);
    assert_int_equal(ts_hpl_state_at(0x7fffffffu, 12345u), 1782993140u);

    // HPL matrix elements, M = 1000, element (i, j) = value of X(1 + i + j*M).
    assert_true(ts_hpl_element(100, 1000, 0, 0) == 0.11356129636988044);
    assert_true(ts_hpl_element(100, 1000, 999, 0) == 0.18444733507931232);
    assert_true(ts_hpl_element(100, 1000, 0, 1000) == 0.07902877917513251);
    assert_true(ts_hpl_element(100, 1000, 123, 456) == 0.2134878672659397);
    assert_true(ts_hpl_value(829870797u) == 0.11356129636988044);
}

static void test_value_range(void **state) {
    (void)state;
    assert_true(ts_hpl_value(0) == 0.5);
    assert_true(ts_hpl_value(0x40000000u) == 0.0);
    assert_true(ts_hpl_value(0x7fffffffu) == 0.5 - 2147483647.0 / 2147483648.0);
    assert_true(ts_hpl_value(0x7fffffffu) > -0.5);
}

static void test_jump_composition(void **state) {
    (void)state;
    static const uint64_t ns[] = {0, 1, 2, 31, 1000, 65536, 1ull << 31, 3000000000ull, 1ull << 50, UINT64_MAX / 3};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++) {
        for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++) {
            uint32_t x = ts_hpl_state_at(100, ns[a]);
            uint32_t y = ts_lcg_apply(ts_lcg_jump_n(ns[b]), x);
            assert_int_equal(y, ts_hpl_state_at(100, ns[a] + ns[b]));
        }
    }
    // Against the oracle at larger distances via the composition of oracle jumps of 5000.
    uint32_t x = 100;
    for (int k = 1; k <= 20; k++) {
        x = oracle_state(x, 5000);
        assert_int_equal(x, ts_hpl_state_at(100, (uint64_t)k * 5000));
    }
}

static void test_element_matches_oracle(void **state) {
    (void)state;
    // A small matrix, as HPL_pdmatgen would lay it out: element (i, j) <- X(1 + i + j*M).
    const int M = 37, N = 38;
    for (int j = 0; j < N; j++) {
        for (int i = 0; i < M; i++) {
            int x[2];
            uint32_t s = oracle_state(42, 1 + i + j * M);
            x[0] = (int)(s & 0xffff);
            x[1] = (int)(s >> 16);
            assert_true(ts_hpl_element(42, M, i, j) == oracle_value(x));
        }
    }
}

static void check_fill(uint32_t seed, int64_t M, int64_t row0, int64_t col0, int64_t rows, int64_t cols, int64_t pad) {
    int64_t lda = rows + pad;
    size_t count = (size_t)(lda * cols);
    double *A = malloc(count * sizeof *A);
    assert_non_null(A);
    for (size_t k = 0; k < count; k++) A[k] = 99.0; // sentinel for the padding rows
    ts_hpl_fill(seed, M, row0, col0, rows, cols, A, lda);
    for (int64_t j = 0; j < cols; j++) {
        for (int64_t i = 0; i < lda; i++) {
            double got = A[i + j * lda];
            if (i >= rows) {
                assert_true(got == 99.0);
                continue;
            }
            double want = ts_hpl_element(seed, M, row0 + i, col0 + j);
            if (got != want)
                fail_msg("fill M=%lld block (%lld,%lld) %lldx%lld: (%lld,%lld) %.17g != %.17g", (long long)M,
                         (long long)row0, (long long)col0, (long long)rows, (long long)cols, (long long)i,
                         (long long)j, got, want);
        }
    }
    free(A);
}

static void test_fill_equals_elements(void **state) {
    (void)state;
    check_fill(100, 1000, 0, 0, 1000, 3, 0);
    check_fill(100, 1000, 13, 7, 5, 9, 3);
    check_fill(100, 1000, 999, 1000, 1, 1, 0);
    check_fill(100, 1000, 0, 0, 17, 1, 0);
    check_fill(100, 1000, 5, 3, 8, 2, 1);
    check_fill(100, 1000, 100, 200, 64, 33, 7);
    check_fill(7, 1000, 3, 0, 7, 4, 2);
    check_fill(100, 100000, 99990, 50000, 10, 5, 0);
    check_fill(100, 3000000000ll, 2999999990ll, 12345, 10, 3, 0); // jumps above the period
    // Blocking independence: one 40x30 fill equals its tiles filled separately.
    const int64_t M = 40, R = 40, C = 30;
    double *whole = malloc(sizeof(double) * R * C), *tiled = malloc(sizeof(double) * R * C);
    assert_non_null(whole);
    assert_non_null(tiled);
    ts_hpl_fill(100, M, 0, 0, R, C, whole, R);
    static const int64_t rb[] = {0, 9, 16, 40}, cb[] = {0, 1, 13, 30};
    for (int bi = 0; bi < 3; bi++)
        for (int bj = 0; bj < 3; bj++)
            ts_hpl_fill(100, M, rb[bi], cb[bj], rb[bi + 1] - rb[bi], cb[bj + 1] - cb[bj], tiled + rb[bi] + cb[bj] * R, R);
    assert_memory_equal(whole, tiled, sizeof(double) * R * C);
    free(whole);
    free(tiled);
}

// ---- counter-based generators ----

static void test_uniform_statistics(void **state) {
    (void)state;
    const int64_t n = 1000000;
    double *x = malloc(sizeof(double) * n);
    assert_non_null(x);
    ts_fill_uniform_d(7, x, n);
    double sum = 0, sum2 = 0;
    for (int64_t i = 0; i < n; i++) {
        assert_true(x[i] >= -0.5 && x[i] < 0.5);
        sum += x[i];
    }
    double mean = sum / n;
    for (int64_t i = 0; i < n; i++) sum2 += (x[i] - mean) * (x[i] - mean);
    double var = sum2 / (n - 1);
    // Uniform on [-1/2, 1/2): mean 0, variance 1/12, fourth central moment 1/80. 5 sigma bounds:
    // mean: 5 * sqrt(1/12 / n); sample variance: 5 * sqrt((1/80 - 1/144) / n).
    assert_true(fabs(mean) < 5 * sqrt(1.0 / 12 / n));
    assert_true(fabs(var - 1.0 / 12) < 5 * sqrt((1.0 / 80 - 1.0 / 144) / n));
    assert_true(x[12345] == ts_uniform_at(7, 12345));
    assert_true(ts_uniform_at(7, 1) != ts_uniform_at(8, 1));
    free(x);

    float *f = malloc(sizeof(float) * n);
    assert_non_null(f);
    ts_fill_uniform_s(7, f, n);
    double fs = 0;
    for (int64_t i = 0; i < n; i++) {
        assert_true(f[i] >= -0.5f && f[i] < 0.5f);
        fs += f[i];
    }
    assert_true(fabs(fs / n) < 5 * sqrt(1.0 / 12 / n));
    free(f);
}

static void test_gaussian_statistics(void **state) {
    (void)state;
    const int64_t n = 1000000;
    const double mu = 3.0, sd = 2.0;
    double *x = malloc(sizeof(double) * n);
    assert_non_null(x);
    ts_fill_gaussian_d(11, x, n, mu, sd);
    double sum = 0, sum2 = 0;
    int64_t within = 0;
    for (int64_t i = 0; i < n; i++) {
        assert_true(isfinite(x[i]));
        sum += x[i];
        if (fabs(x[i] - mu) < sd) within++;
    }
    double mean = sum / n;
    for (int64_t i = 0; i < n; i++) sum2 += (x[i] - mean) * (x[i] - mean);
    double var = sum2 / (n - 1);
    // Normal: mean's sd = sd/sqrt(n); sample variance's sd = sqrt(2) sd^2 / sqrt(n); the fraction
    // within one sd is 0.682689 with binomial sd sqrt(p(1-p)/n). All held to 5 sigma.
    assert_true(fabs(mean - mu) < 5 * sd / sqrt((double)n));
    assert_true(fabs(var - sd * sd) < 5 * sqrt(2.0) * sd * sd / sqrt((double)n));
    double p = 0.6826894921370859, frac = (double)within / n;
    assert_true(fabs(frac - p) < 5 * sqrt(p * (1 - p) / n));
    assert_true(x[999] == ts_gaussian_at(11, 999, mu, sd));
    free(x);
}

static void test_mix64(void **state) {
    (void)state;
    // splitmix64 reference: the first outputs of a generator seeded with 0 are mix64(0),
    // mix64(golden), ...; known first value 0xe220a8397b1dcdaf.
    assert_true(ts_mix64(0) == 0xe220a8397b1dcdafull);
    assert_true(ts_mix64(1) != ts_mix64(2));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_matches_hpl_xjumpm), cmocka_unit_test(test_sequential_matches_hpl_rand),
        cmocka_unit_test(test_known_values_seed100),     cmocka_unit_test(test_value_range),
        cmocka_unit_test(test_jump_composition),         cmocka_unit_test(test_element_matches_oracle),
        cmocka_unit_test(test_fill_equals_elements),     cmocka_unit_test(test_uniform_statistics),
        cmocka_unit_test(test_gaussian_statistics),      cmocka_unit_test(test_mix64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
