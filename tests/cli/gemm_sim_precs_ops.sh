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

# --interleave: the device engines take turns rep by rep; every row still checked (a corrupted
# result fails), the JSON marks the rows interleaved.
run TESSERA_SIM_DEVICES=1 -- gemm 64 50x40x30 --engine ref,auto --ops NN,TN --interleave --reps 3 --json "$TMP/i.json"
expect_rc 0
count_rows '^(ref|auto:[a-z]+) +d .* PASS$' 8
[ "$(grep -o '"interleaved": *true' "$TMP/i.json" | wc -l)" -eq 8 ] || fail "JSON: expected 8 interleaved rows"
run TESSERA_TEST_CORRUPT_GEMM=1 TESSERA_SIM_DEVICES=1 -- gemm 48 --engine ref,auto --interleave --reps 2
expect_rc 1
count_rows ' FAIL$' 2
finish
