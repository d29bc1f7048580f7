# cli_messages.sh: what a new user trips over (issue: user-facing defects, item 10): `tessera version`
# with arguments, a grid from -P/-Q larger than the process count (no HPL.dat to blame), a deeper
# look-ahead than the engine has, --device with host engines only, gemm's help, rates below
# 1 TFLOP/s in GFLOP/s, a misspelt TESSERA_* variable.
source "$(dirname "$0")/lib.sh"

run -- version
expect_rc 0
expect_out "^tessera [0-9]+\.[0-9]+\.[0-9]+ \(commit "
run -- version --bogus
expect_rc 2
expect_out "tessera version: unexpected argument '--bogus'"

run -- hpl -N 1000 -P 2 -Q 2
expect_rc 2
expect_out "tessera hpl: -P 2 -Q 2 needs at least 4 processes; 1 is running \(start it with mpiexec -n 4\)"
expect_no_out "HPL.dat"
run -- hpl -N 1000 --depth 5
expect_rc 2
expect_out "--depth 5: look-ahead depth 0..4"

run -- gemm 64 --engine cpu --device 1
expect_rc 2
expect_out "--device 1: the engines asked for run on the host"

run -- gemm --help
expect_rc 0
# the engine default is told under --engine, not under the option after it
grep -A3 -- "--engine E" <<<"$OUT" | grep -q "default: cublas on a GPU machine, cpu otherwise" ||
  fail "the engine default is not under --engine"
grep -A1 -- "--trace FILE" <<<"$OUT" | grep -q "default: cublas" && fail "the engine default is under --trace"

# hpl's -v gives debug lines; --N and -N= are the documented spellings of -N
run -- hpl -N 300 -NB 32 -v
expect_rc 0
expect_out "debug"
run -- hpl --help
expect_out "as --N n or -N=n"
run -- hpl -N=300 --NB 32
expect_rc 0
expect_out "^WR11C2R4 +300 +32 "

# A CPU Linpack runs at GFLOP/s: its progress says so (no "0.0xx TFLOP/s").
run TESSERA_PROGRESS=1 -- hpl -N 1500 -NB 128
expect_rc 0
expect_out "column [0-9]+/1500, [0-9.]+ GFLOP/s"
expect_no_out "0\.[0-9]+ TFLOP/s"
# A misspelt setting draws one warning naming the closest known one, however many settings the
# command reads (the tile runtime on two simulated devices reads dozens); the run goes on.
run TESSERA_SIM_DEVICES=2 TESSERA_TILEZ=64 TESSERA_SIM_DEVICE=3 -- gemm 128 --engine tiles
expect_rc 0
count_rows "^tessera: warning: TESSERA_TILEZ is not a Tessera setting \(did you mean TESSERA_TILE\?" 1
count_rows "^tessera: warning: TESSERA_SIM_DEVICE is not a Tessera setting \(did you mean TESSERA_SIM_DEVICES\?" 1
count_rows "is not a Tessera setting" 2
run TESSERA_SIM_DEVICES=2 TESSERA_TILE=64 -- gemm 128 --engine tiles
expect_rc 0
expect_no_out "warning"
finish
