# blas3_corrupt.sh: a corrupted `tessera blas3` result (test hook) is detected: FAIL and exit 1.
source "$(dirname "$0")/lib.sh"

# One element of every routine's checked result off by 1e6, every engine and precision.
run TESSERA_TEST_CORRUPT_BLAS3=1 TESSERA_SIM_DEVICES=1 TESSERA_TILE=64 -- blas3 150x90 --prec s,z --engine tiles,cpu --reps 1
expect_rc 1
count_rows '^(symm|syrk|syr2k|trmm|trsm|hemm|herk|her2k) .* FAIL$' 26
expect_no_out 'PASS'

# Larger (single precision, where the bound is loosest): still caught.
run TESSERA_TEST_CORRUPT_BLAS3=1 -- blas3 700x500 --prec s --engine cpu --reps 1 --routine symm,trsm
expect_rc 1
count_rows '^(symm|trsm) .* FAIL$' 2

# syrk/syr2k must leave the other triangle of C alone.
run TESSERA_TEST_CORRUPT_BLAS3=outside TESSERA_SIM_DEVICES=1 TESSERA_TILE=64 -- blas3 130 --uplo U --engine tiles,cpu --reps 1
expect_rc 1
count_rows '^(syrk|syr2k) .* FAIL \(wrote outside its triangle\)$' 4
count_rows '^(symm|trmm|trsm) .* PASS$' 6

# A bit flipped in a tile copied back during the checked run (sim fault) is caught too. (Without
# the saved copies of C tiles: the flip must hit a copy the result depends on.)
run TESSERA_SIM_DEVICES=1 "TESSERA_SIM_FAULTS=dev=0,flip=8,bit=62" TESSERA_TILE=64 TESSERA_TILES_CPU=0 TESSERA_TILES_SAVE_C=0 -- blas3 256 --routine trmm --engine tiles --reps 1
expect_rc 1
count_rows '^trmm .* FAIL$' 1

# Without the hooks the same runs pass.
run TESSERA_SIM_DEVICES=1 TESSERA_TILE=64 -- blas3 150x90 --prec s,z --engine tiles,cpu --reps 1
expect_rc 0
count_rows '^(symm|syrk|syr2k|trmm|trsm|hemm|herk|her2k) .* PASS$' 26
finish
