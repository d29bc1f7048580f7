# lib.sh: helpers for the CLI test scripts (sourced; $1 of the script is the tessera binary).
set -u
TESSERA=${1:?usage: $0 path/to/tessera}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
FAILS=0
# The tests decide which devices exist.
unset TESSERA_SIM_DEVICES TESSERA_SIM_FAULTS TESSERA_TEST_CORRUPT_GEMM TESSERA_ARENA_BYTES

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

# run [VAR=value...] -- args...: runs tessera, output in $OUT, exit code in $RC.
run() {
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    OUT=$(env "${envs[@]}" "$TESSERA" "$@" 2>&1)
    RC=$?
    echo "\$ ${envs[*]} tessera $*  -> exit $RC"
}

expect_rc() { [ "$RC" -eq "$1" ] || { fail "expected exit $1, got $RC"; echo "$OUT"; }; }
expect_out() { grep -qE -- "$1" <<<"$OUT" || { fail "output lacks /$1/"; echo "$OUT"; }; }
expect_no_out() { ! grep -qE -- "$1" <<<"$OUT" || { fail "output has /$1/"; echo "$OUT"; }; }
# count_rows REGEX N: exactly N output lines match.
count_rows() {
    local n
    n=$(grep -cE -- "$1" <<<"$OUT")
    [ "$n" -eq "$2" ] || { fail "expected $2 lines matching /$1/, got $n"; echo "$OUT"; }
}
need() { command -v "$1" >/dev/null || { echo "SKIP: $1 not found"; exit 77; }; }
finish() {
    [ "$FAILS" -eq 0 ] && { echo "all checks passed"; exit 0; }
    echo "$FAILS check(s) failed"
    exit 1
}
