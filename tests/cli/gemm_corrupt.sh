# gemm_corrupt.sh: a corrupted result (test hook) is detected: FAIL and exit 1.
source "$(dirname "$0")/lib.sh"

run TESSERA_TEST_CORRUPT_GEMM=1 -- gemm 64 --engine cpu
expect_rc 1
count_rows '^cpu .* FAIL$' 1

# Above the full-recomputation limit only Freivalds checks, and still catches it.
run TESSERA_TEST_CORRUPT_GEMM=1 -- gemm 600x600x400 --engine cpu --prec s --reps 1 --warmup 0
expect_rc 1
count_rows '^cpu .* FAIL$' 1

run TESSERA_TEST_CORRUPT_GEMM=1 TESSERA_SIM_DEVICES=1 -- gemm 48 --engine ref --prec z --where host
expect_rc 1
count_rows '^ref .* FAIL$' 1

# A bit flipped in the copy of C back to the host (simulated fault: copy 5 is the checked run's D2H,
# bit 131134 an exponent bit of element 2048) is caught.
run TESSERA_SIM_DEVICES=1 "TESSERA_SIM_FAULTS=flip=5,bit=131134" -- gemm 64 --engine ref --reps 1 --warmup 0
expect_rc 1
count_rows '^ref .* FAIL$' 1

# A failing device kernel is a runtime error (exit 3, row ERROR), and the other engines still run.
run TESSERA_SIM_DEVICES=1 TESSERA_SIM_FAULTS=kernel=3 -- gemm 64 --engine ref,cpu
expect_rc 3
count_rows '^ref .* ERROR$' 1
count_rows '^cpu .* PASS$' 1
expect_out 'injected failure'

# Without the hook the same runs pass.
run TESSERA_SIM_DEVICES=1 -- gemm 48 --engine ref --prec z --where host
expect_rc 0
finish
