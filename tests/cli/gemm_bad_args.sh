# gemm_bad_args.sh: bad input exits 2 with a message naming the value, and never crashes.
source "$(dirname "$0")/lib.sh"

check_bad() { # check_bad REGEX args...
    local re=$1
    shift
    run TESSERA_SIM_DEVICES=1 -- gemm "$@"
    expect_rc 2
    expect_out "$re"
}
check_bad "'-5' must be positive" -5
check_bad "'0' must be positive" 64x0x8
check_bad "size '64x3'" 64x3
check_bad "'abc' is not a positive integer" abc
check_bad "unknown engine 'foo'" --engine foo
check_bad "unknown engine 'foo'" --engine cpu,foo
check_bad "unknown precision 'q'" --prec q
check_bad "unknown op 'XN'" --ops XN
check_bad "--transa: unknown op 'Q'" --transa Q
check_bad "--reps: '0'" --reps 0
check_bad "--reps: 'x'" --reps x
check_bad "--warmup: '-1'" --warmup -1
check_bad "--alpha: '1,y'" --alpha 1,y
check_bad "--layout: unknown layout 'diag'" --layout diag
check_bad "--where: unknown placement 'gpu'" --where gpu
check_bad "--lda 10 is smaller than the rows of A \(64\)" 64 --lda 10 --engine cpu
check_bad "--device 5: only 1 sim device" 64 --engine ref --device 5
check_bad "unknown option '--bogus'" --bogus
check_bad "option --json needs a value" 64 --json
check_bad "--sweep: '8:x'" --sweep 8:x
# Engines that the simulated device does not run, with the reason.
check_bad "--engine cublas: not available on device 0 \(sim" 64 --engine cublas
# Far too large for the simulated device (256 MiB arena): refused before allocating.
check_bad "needs [0-9.]+ GiB on device 0, [0-9.]+ GiB available" 65536 --engine ref
# Without devices, device engines are explained.
run -- gemm 64 --engine cublas
expect_rc 2
expect_out "--engine cublas: not available"
run -- gemm 64 --engine tiles
expect_rc 2
expect_out "--engine tiles: not available: no devices are open"
run TESSERA_SIM_DEVICES=1 TESSERA_TILES_CPU=2 -- gemm 64 --engine tiles
expect_rc 2
expect_out "TESSERA_TILES_CPU='2'"
finish
