# burn_faults.sh: injected faults on simulated devices: a flipped bit is reported with device, location and magnitude (exit 1); a lost device is reported as lost by its own error (exit 3), never waited on.
source "$(dirname "$0")/../cli/lib.sh"

# Copy 1 of a device is the upload of A (N=96: leading dimension 96). Bit 56 of element (5, 7)
# (index 5 + 7*96 = 677) scales it by 2^16: row 5 of C is wrong in every column.
run TESSERA_SIM_DEVICES=2 "TESSERA_SIM_FAULTS=dev=1,flip=1,bit=$((677 * 64 + 56))" -- burn --time 1 --size 96
expect_rc 1
expect_out '^burn: FAIL'
expect_out '^  ERROR device 1 iteration 1 .*: row 5 \(94 columns wrong: a corrupted row of A; worst element \(5, [0-9]+\)\), magnitude -?[0-9.]+e\+0[3-9]'
expect_no_out 'ERROR device 0'
count_rows '^  errors 0,' 1

# Copy 2 is B (k = 96 rows): bit 52 of element (3, 11) (index 3 + 11*96 = 1059): column 11 wrong in all rows.
run TESSERA_SIM_DEVICES=1 "TESSERA_SIM_FAULTS=flip=2,bit=$((1059 * 64 + 52))" -- burn --time 1 --size 96
expect_rc 1
expect_out '^  ERROR device 0 iteration 1 .*: column 11 \(94 rows wrong: a corrupted column of B; worst element \([0-9]+, 11\)\)'

# A device lost after 300 operations: reported with its id, the other device finishes, exit 3. It
# is not waited on: the loss is the device's own error, not the watchdog's verdict on a device that
# stopped answering (which takes 5 s of silence at least; a hang beyond that would run into the
# test's TIMEOUT). No wall-clock bound on the run: a loaded machine may take any time for 2 s + setup.
run TESSERA_SIM_DEVICES=2 TESSERA_SIM_FAULTS=dev=1,lose=300 -- burn --time 2 --size 64
expect_rc 3
expect_out '^  LOST device 1: sim device 1 is lost'
expect_no_out 'stopped answering'
expect_out '^GPU 0: OK$'
expect_out '^burn: ERROR'
count_rows '^  errors 0,' 2

# A failing kernel is a runtime failure of that device (exit 3), not a data error.
run TESSERA_SIM_DEVICES=1 TESSERA_SIM_FAULTS=kernel=20 -- burn --time 1 --size 64
expect_rc 3
expect_out '^  FAILED device 0: .*injected failure of kernel 20'
expect_out '^GPU 0: FAILED$'
finish
