# cli_exit_codes.sh: one exit-code rule for every command (README "Commands"): a malformed TESSERA_*
# value and an output file that cannot be written are bad input, exit 2, with a message naming the
# variable or the path, before any run; a failure while running is 3.
source "$(dirname "$0")/lib.sh"

cmds=("gemm 64 --reps 1 --engine cpu" "blas3 64 --reps 1 --engine cpu" "info" "hpl -N 300 -NB 32" "hpl-mxp -N 300 -NB 32"
      "hpcg --nx 16 --ny 16 --nz 16 --rt 0 --engine cpu" "burn --time 1")
cd "$TMP" || exit 1 # hpcg writes its report into the current directory
for c in "${cmds[@]}"; do
  # shellcheck disable=SC2086
  run TESSERA_SIM_DEVICES=abc -- $c
  expect_rc 2
  expect_out "TESSERA_SIM_DEVICES: expected an integer, got 'abc'"
  # shellcheck disable=SC2086
  run TESSERA_SIM_DEVICES=1 TESSERA_SIM_MEM=lots -- $c
  expect_rc 2
  expect_out "TESSERA_SIM_MEM"
  # shellcheck disable=SC2086
  run TESSERA_SIM_DEVICES=1 -- $c --json "$TMP/no/such/dir/r.json"
  expect_rc 2
  expect_out "cannot write '$TMP/no/such/dir/r.json'"
  expect_no_out "PASS|VALID"
done
# gemm's timeline: a path that cannot be written is refused before the run too
run TESSERA_SIM_DEVICES=1 -- gemm 64 --reps 1 --engine tiles --trace "$TMP/no/such/dir/t.json"
expect_rc 2
expect_out "--trace: cannot write"
# a failure while running: a kernel of the run fails (the first is the engine's availability probe)
run TESSERA_SIM_DEVICES=1 TESSERA_SIM_FAULTS=dev=0,kernel=3 -- gemm 64 --reps 1 --engine ref
expect_rc 3
finish
