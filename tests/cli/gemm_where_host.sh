# gemm_where_host.sh: device engines with host-resident operands, and side-by-side engines.
source "$(dirname "$0")/lib.sh"

run TESSERA_SIM_DEVICES=2 -- gemm 64 96x64x32 --engine ref,cpu --where host --reps 3
expect_rc 0
count_rows '^ref +d .* host .* 1.00x .* PASS$' 2
count_rows '^cpu +d .* host .*x .* PASS$' 2

run TESSERA_SIM_DEVICES=2 -- gemm --sweep 32:128:x2 --engine ref -k 16 --beta 0 --warmup 1
expect_rc 0
count_rows '^ref +d +(32|64|128) +(32|64|128) +16 .* PASS$' 3
finish
