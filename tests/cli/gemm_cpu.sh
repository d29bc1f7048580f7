# gemm_cpu.sh: `tessera gemm 64 --engine cpu` runs, verifies and prints its table.
source "$(dirname "$0")/lib.sh"

run -- gemm 64 --engine cpu
expect_rc 0
expect_out '^engine +prec +m +n +k +ops +where +median_ms +min_ms +max_ms +TFLOP/s +ratio +error +bound +check'
count_rows '^cpu +d +64 +64 +64 +NN +host .* PASS$' 1

# The default on a machine without devices is the CPU engine; several shapes and precisions.
run -- gemm 33x17x9 40 --prec s,z --reps 2 --warmup 0
expect_rc 0
count_rows '^cpu .* PASS$' 4
count_rows '^cpu +s +33 +17 +9 ' 1

# Explicit dimensions, transposes and scalars.
run -- gemm -m 50 -n 30 -k 20 --transa T --transb C --alpha 2 --beta 0 --engine cpu,ref
expect_rc 0
count_rows '^cpu +d +50 +30 +20 +TC .* 1.00x .* PASS$' 1
count_rows '^ref +d +50 +30 +20 +TC .* PASS$' 1

# --no-verify says so.
run -- gemm 64 --engine cpu --no-verify
expect_rc 0
count_rows 'SKIPPED$' 1
finish
