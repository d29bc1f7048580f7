# burn_bad_args.sh: bad input (options, output paths, TESSERA_* values, an engine the devices do not run) is exit 2 with a message naming it, before anything runs; no device is exit 3.
source "$(dirname "$0")/../cli/lib.sh"

# Nothing ran: no header line, no summary.
not_started() { expect_no_out '^burn: [0-9]+ .*device|^GPU '; }

run TESSERA_SIM_DEVICES=1 -- burn --time 0
expect_rc 2
expect_out 'burn: --time'
run TESSERA_SIM_DEVICES=1 -- burn --size 2
expect_rc 2
expect_out '\-\-size'
run TESSERA_SIM_DEVICES=2 -- burn --device 5 --time 1
expect_rc 2
expect_out 'there are 2 devices'
run TESSERA_SIM_DEVICES=1 -- burn --frobnicate
expect_rc 2

# An engine the simulated devices do not run: refused before the run starts.
run TESSERA_SIM_DEVICES=1 -- burn --engine cublas --time 1 --size 32
expect_rc 2
expect_out '^tessera burn: --engine cublas: not available on simulated devices'
not_started
run TESSERA_SIM_DEVICES=1 -- burn --engine tessera --time 1 --size 32
expect_rc 2
not_started

# Output paths are checked before the run (a long burn must not end in "cannot write").
run TESSERA_SIM_DEVICES=1 -- burn --time 30 --json "$TMP/no/such/dir/b.json"
expect_rc 2
expect_out "^tessera burn: --json: cannot write '$TMP/no/such/dir/b.json': No such file or directory"
not_started
run TESSERA_SIM_DEVICES=1 -- burn --time 30 --plot "$TMP"
expect_rc 2
expect_out "^tessera burn: --plot: cannot write '$TMP': it is a directory"
not_started
run TESSERA_SIM_DEVICES=1 -- burn --time 30 --json "$TMP/same" --plot "$TMP/same"
expect_rc 2
expect_out 'name the same file'
# ... without truncating a file that exists, and without leaving one that did not.
echo 'earlier results' >"$TMP/old.json"
run TESSERA_SIM_DEVICES=1 -- burn --time 30 --json "$TMP/old.json" --plot "$TMP/no/plot.svg"
expect_rc 2
[ "$(cat "$TMP/old.json")" = 'earlier results' ] || fail "the check truncated an existing file"
run TESSERA_SIM_DEVICES=1 -- burn --time 30 --json "$TMP/new.json" --plot "$TMP/no/plot.svg"
expect_rc 2
[ ! -e "$TMP/new.json" ] || fail "the check left $TMP/new.json behind"
# Without a device the paths are still checked first.
run -- burn --time 1 --plot /nonexistent-dir/b.svg
expect_rc 2
expect_out "'/nonexistent-dir/b.svg'"

# Malformed TESSERA_* values: exit 2, naming the variable.
for bad in TESSERA_SIM_DEVICES=abc TESSERA_SIM_MEM=lots TESSERA_SIM_FAULTS=zap=1 TESSERA_BURN_STREAMS=abc \
           TESSERA_BURN_STREAMS=99 TESSERA_SIM_GEMM_REF_FLOPS=x; do
    run TESSERA_SIM_DEVICES=1 "$bad" -- burn --time 1 --size 32
    expect_rc 2
    expect_out "${bad%%=*}"
    not_started
done

run -- burn --time 1
expect_rc 3
expect_out 'no device to burn'
run -- burn --help
expect_rc 0
expect_out 'recompute-every'
expect_out 'exit: 0 every device OK, 1 a device FAULTY'
finish
