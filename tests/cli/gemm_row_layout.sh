# gemm_row_layout.sh: row-major problems (computed as the transposed column-major problem) pass.
source "$(dirname "$0")/lib.sh"
need python3

run -- gemm 70x50x30 --layout row --engine cpu,ref --prec d,z --ops NN,NT,TN,CT --alpha 0.5,-1 --beta 2
expect_rc 0
count_rows '^(cpu|ref) +[dz] +70 +50 +30 .* PASS$' 16

# Leading dimensions larger than needed, row-major: A is 70x30 (lda >= 30), B 30x50 (ldb >= 50).
run -- gemm 70x50x30 --layout row --engine cpu --lda 40 --ldb 64 --ldc 55 --json "$TMP/ld.json"
expect_rc 0
count_rows 'PASS$' 1
# the JSON records the leading dimensions given (and none when tight)
python3 - "$TMP/ld.json" <<'PY' || fail "leading dimensions in the JSON"
import json, sys
e = json.load(open(sys.argv[1]))["results"][0]["extra"]
assert (e.get("lda"), e.get("ldb"), e.get("ldc")) == (40, 64, 55), e
PY
run -- gemm 70x50x30 --engine cpu --json "$TMP/tight.json"
expect_rc 0
python3 - "$TMP/tight.json" <<'PY' || fail "no leading dimensions in the JSON of a tight run"
import json, sys
e = json.load(open(sys.argv[1]))["results"][0]["extra"]
assert not any(k in e for k in ("lda", "ldb", "ldc")), e
PY

run TESSERA_SIM_DEVICES=1 -- gemm 64x48x40 --layout row --engine ref --prec s,c --ops NN,TT
expect_rc 0
count_rows '^ref .* device .* PASS$' 4
finish
