# blas3_sim.sh: `tessera blas3` runs every Level-3 routine with the tile runtime (simulated devices, small tiles) and the CPU BLAS, each verified; the JSON is checked.
source "$(dirname "$0")/lib.sh"
need python3

# Every routine and precision, sizes not multiples of the tile, non-trivial complex scalars, and the
# GEMM reference (vs_gemm).
run TESSERA_SIM_DEVICES=2 TESSERA_TILE=64 -- blas3 200x150 --routine all --prec s,d,c,z --engine tiles,cpu \
    --alpha 0.7,0.3 --beta -1.3,0.2 --reps 1 --gemm-ref --json "$TMP/all.json"
expect_rc 0
expect_out "^tiles: 2 sim devices"
# 5 routines x 4 precisions + hemm/herk/her2k x 2 complex precisions, 2 engines each; 4 GEMM references.
count_rows '^(symm|syrk|syr2k|trmm|trsm|hemm|herk|her2k) +[sdcz] +200x150 .* (tiles|cpu) .* PASS$' 52
count_rows '^gemm +[sdcz] +200x200x200 +NN +tiles .* PASS$' 4
expect_no_out 'FAIL|ERROR'
python3 - "$TMP/all.json" <<'PY' || fail "JSON of the all-routines run"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["tool"] == "tessera blas3", doc["tool"]
res = doc["results"]
rout = [r for r in res if r["bench"] == "blas3"]
gemm = [r for r in res if r["bench"] == "gemm"]
assert len(rout) == 52 and len(gemm) == 4, (len(rout), len(gemm))
m, n = 200, 150
# standard flop counts (complex x4): symm/hemm 2 m^2 n (side L), syrk/herk n^2 k, syr2k/her2k 2 n^2 k,
# trmm/trsm m^2 n; here the size is m x n or n x k = 200 x 150
want = {"symm": 2 * m * m * n, "hemm": 2 * m * m * n, "syrk": m * m * n, "herk": m * m * n,
        "syr2k": 2 * m * m * n, "her2k": 2 * m * m * n, "trmm": m * m * n, "trsm": m * m * n}
seen = set()
for r in rout:
    s, x = r["shape"], r["extra"]
    name = s["routine"]
    f = want[name] * (4 if r["precision"] in "cz" else 1)
    assert abs(x["flops"] - f) < 1e-6 * f, (name, x["flops"], f)
    assert r["where"] == "host" and r["verified"] is True and x["passed"] is True, r
    assert 0 <= r["error"] <= r["bound"] == 1.0, r
    assert r["tflops"]["median"] > 0 and r["seconds"]["median"] > 0, r
    sec = r["seconds"]["median"]
    assert abs(f / sec * 1e-12 - r["tflops"]["median"]) < 1e-6 * r["tflops"]["median"], r
    assert "ratio" in x and x["ratio"] > 0, r
    assert x["vs_gemm"] > 0, r
    if name in ("syrk", "herk", "syr2k", "her2k"):
        assert s["n"] == 200 and s["k"] == 150 and s["uplo"] == "L" and s["trans"] == "N", s
    else:
        assert s["m"] == 200 and s["n"] == 150 and s["side"] == "L" and s["uplo"] == "L", s
    if name in ("trmm", "trsm"):
        assert s["diag"] == "N" and s["trans"] == "N", s
    if r["engine"] == "tiles":
        assert x["tile"] == 64 and x["tiles"] > 0 and len(x["tiles_per_device"]) == 2, x
    seen.add((name, r["precision"], r["engine"]))
assert len(seen) == 52, len(seen)
for g in gemm:
    assert g["engine"] == "tiles" and g["extra"]["gemm_ref"] is True and g["extra"]["passed"] is True, g
    assert g["shape"] == {"m": 200, "n": 200, "k": 200, "transa": "N", "transb": "N"}, g["shape"]
    # vs_gemm of each routine is its rate over the reference of its precision
    for r in rout:
        if r["precision"] == g["precision"]:
            v = r["tflops"]["median"] / g["tflops"]["median"]
            assert abs(r["extra"]["vs_gemm"] - v) < 1e-9 * v, (r["extra"]["vs_gemm"], v)
PY

# Every side/uplo/trans/diag combination (3 sim devices of 1 MiB each: the tile caches are small).
for side in L R; do
  for uplo in L U; do
    for tr in N T C; do
      for dg in N U; do
        run TESSERA_SIM_DEVICES=3 TESSERA_SIM_MEM=1M TESSERA_TILE=32 -- blas3 97x130 --prec d,z --engine tiles,cpu \
            --side $side --uplo $uplo --trans $tr --diag $dg --alpha -0.6,0.9 --beta 0.4,-1.1 --reps 1 -q
        expect_rc 0
        expect_no_out 'FAIL|ERROR'
      done
    done
  done
done

# Operands larger than the devices' memory together (2 x 4 MiB; A, B, C 5.5 MiB each), no CPU worker.
run TESSERA_SIM_DEVICES=2 TESSERA_SIM_MEM=4M TESSERA_TILE=128 TESSERA_TILES_CPU=0 -- blas3 850 --routine symm,trsm --engine tiles --reps 1
expect_rc 0
count_rows '^(symm|trsm) +d +850x850 .* tiles .* PASS$' 2

# --trace: one timeline per routine, size and precision of the tile runtime, one event per stage of
# every C tile (copy in, GEMM, copy out): 10 tiles of SYRK's lower triangle and 16 of TRSM at 4 x 4,
# each event naming its tile (SYRK's all on the lower triangle, every one once).
run TESSERA_SIM_DEVICES=1 TESSERA_TILE=64 TESSERA_TILES_CPU=0 -- blas3 256 --routine syrk,trsm --engine tiles --reps 1 --trace "$TMP/tr"
expect_rc 0
python3 - "$TMP" <<'PY' || fail "blas3 --trace files are not as expected"
import json, sys
for name, tiles in (("syrk", 10), ("trsm", 16)):
    d = json.load(open(f"{sys.argv[1]}/tr-{name}-d-256x256.json"))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    x = [e for e in ev if e.get("ph") == "X"]
    assert len(x) == 3 * tiles, (name, len(x))
    ij = {(e["args"]["i"], e["args"]["j"]) for e in x}
    want = {(i, j) for j in range(4) for i in range(4) if name == "trsm" or i >= j}
    assert ij == want, (name, sorted(ij))
print("trace ok")
PY

# CPU only (no devices): the default engine is the CPU BLAS.
run -- blas3 120 --routine syrk,trsm --trans T --uplo U --reps 2
expect_rc 0
count_rows '^(syrk|trsm) +d +120x120 +[-LR]U[T-][N-] +cpu .* PASS$' 2
finish
