# info_sim.sh: `tessera info` lists simulated devices, the CPU, BLAS, MPI and build.
source "$(dirname "$0")/lib.sh"

run TESSERA_SIM_DEVICES=2 -- info
expect_rc 0
expect_out '^devices: +2 \(sim\)'
count_rows '^ +[01] +.* sim:[01]$' 2
expect_out '^cpu: '
expect_out '^cpu blas: '
expect_out '^mpi: '
expect_out '^tessera: .*commit .*CUDA (on|off)'
expect_out 'peer links'

run -- info
expect_rc 0
expect_out 'no GPU found; CPU only'

run -- info --bogus
expect_rc 2
expect_out "unknown argument '--bogus'"
finish
