# blas3_bad_args.sh: bad `tessera blas3` arguments are rejected with a message and exit 2.
source "$(dirname "$0")/lib.sh"

bad() { # bad REGEX args...: exit 2 and the message
    local re=$1; shift
    run -- blas3 "$@"
    expect_rc 2
    expect_out "$re"
}
bad "unknown routine 'gemm'" --routine gemm
bad "--routine: '' is malformed" --routine ''
bad "size: '0' must be positive" 0
bad "size '64x32x16': expected N or AxB" 64x32x16
bad "is not a positive integer" 64xq
bad "--side: 'X' is not one of LR" --side X
bad "--uplo: 'N' is not one of LU" --uplo N
bad "--trans: 'Q' is not one of NTC" --trans Q
bad "--diag: 'LL' is not one of NU" --diag LL
bad "unknown precision 'q'" --prec q
bad "--routine herk needs --prec c or z" --routine herk
bad "--trans T: herk takes N or C" --routine herk --prec z --trans T
bad "--trans C: complex syrk takes N or T" --routine syrk --prec c --trans C
bad "unknown engine 'cublas'" --engine cublas
bad "--xt-block: 10 out of range" --xt-block 10
bad "--reps: '0' is out of range" --reps 0
bad "--alpha: 'x' is not a number" --alpha x
bad "unknown option '--bogus'" --bogus
bad "--engine tiles: not available: no devices are open" 64 --engine tiles
bad "--gemm-ref .*not available" 64 --engine cpu --gemm-ref
bad "--engine cublasxt: not available" 64 --engine cublasxt
run TESSERA_SIM_DEVICES=1 -- blas3 64 --engine cublasxt
expect_rc 2
expect_out "cublasxt: not available"
bad "needs .* GiB of host memory" 2000000000 --routine symm --engine cpu

run -- blas3 --help
expect_rc 0
expect_out "usage: tessera blas3"
finish
