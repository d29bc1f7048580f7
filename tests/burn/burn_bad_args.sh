# burn_bad_args.sh: bad input is exit 2 with a message naming the option; no device is exit 3.
source "$(dirname "$0")/../cli/lib.sh"

run TESSERA_SIM_DEVICES=1 -- burn --time 0
expect_rc 2
expect_out 'burn: --time'
run TESSERA_SIM_DEVICES=1 -- burn --size 2
expect_rc 2
expect_out '\-\-size'
run TESSERA_SIM_DEVICES=2 -- burn --device 5 --time 1
expect_rc 2
expect_out 'there are 2 devices'
run TESSERA_SIM_DEVICES=1 -- burn --engine cublas --time 1 --size 32
expect_rc 3
expect_out 'does not run on simulated devices'
run TESSERA_SIM_DEVICES=1 -- burn --frobnicate
expect_rc 2
run -- burn --time 1
expect_rc 3
expect_out 'no device to burn'
run -- burn --help
expect_rc 0
expect_out 'recompute-every'
finish
