# gemm_sim_precs_ops.sh: every precision and op on a simulated device with the reference engine.
source "$(dirname "$0")/lib.sh"

run TESSERA_SIM_DEVICES=4 -- gemm 96x80x72 --engine ref --prec s,d,c,z --ops NN,NT,TN,TT,CN
expect_rc 0
expect_out '^device 0: .*\(sim\)'
count_rows '^ref +[sdcz] +96 +80 +72 +(NN|NT|TN|TT|CN) +device .* PASS$' 20
expect_no_out 'FAIL'

# Another device of the set, and auto (which names the engine it chose).
run TESSERA_SIM_DEVICES=4 -- gemm 40 --engine auto,ref --device 3 --beta 0
expect_rc 0
expect_out '^device 3: '
count_rows '^auto:[a-z]+ +d +40 .* PASS$' 1
finish
