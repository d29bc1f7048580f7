# gemm_row_layout.sh: row-major problems (computed as the transposed column-major problem) pass.
source "$(dirname "$0")/lib.sh"

run -- gemm 70x50x30 --layout row --engine cpu,ref --prec d,z --ops NN,NT,TN,CT --alpha 0.5,-1 --beta 2
expect_rc 0
count_rows '^(cpu|ref) +[dz] +70 +50 +30 .* PASS$' 16

# Leading dimensions larger than needed, row-major: A is 70x30 (lda >= 30), B 30x50 (ldb >= 50).
run -- gemm 70x50x30 --layout row --engine cpu --lda 40 --ldb 64 --ldc 55
expect_rc 0
count_rows 'PASS$' 1

run TESSERA_SIM_DEVICES=1 -- gemm 64x48x40 --layout row --engine ref --prec s,c --ops NN,TT
expect_rc 0
count_rows '^ref .* device .* PASS$' 4
finish
