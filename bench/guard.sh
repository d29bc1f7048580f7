#!/usr/bin/env bash
# guard.sh SECONDS COMMAND...: runs COMMAND; if it is still running after SECONDS, prints every
# thread's host stack (gdb, else cuda-gdb, else each thread's kernel wait channel) to stderr and
# kills it with SIGKILL (a process stuck in a driver call can outlive timeout's SIGTERM).
# Exit status: COMMAND's, or 124 when it was killed.
set -u
limit=${1:?usage: bench/guard.sh SECONDS COMMAND...}
shift
"$@" &
pid=$!
end=$((SECONDS + limit))
while kill -0 "$pid" 2>/dev/null; do
  if [ "$SECONDS" -ge "$end" ]; then
    echo "== guard: '$*' still running after ${limit} s (pid $pid): its stacks" >&2
    dbg=$(command -v gdb || command -v cuda-gdb || ls /usr/local/cuda/bin/cuda-gdb 2>/dev/null)
    if [ -n "$dbg" ]; then
      # the main thread first (whole), then the others (the first frames of each)
      timeout -k 5 60 "$dbg" -batch -p "$pid" -ex "thread apply 1 bt 30" -ex "thread apply all bt 8" 2>&1 |
        grep -E "^Thread|^#" | grep -v "pthread_cond_wait\|libpocl" | head -300 >&2
    fi
    for t in /proc/"$pid"/task/*; do
      echo "   task ${t##*/}: $(cat "$t"/comm 2>/dev/null) wchan=$(cat "$t"/wchan 2>/dev/null) $(grep State "$t"/status 2>/dev/null)" >&2
    done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    exit 124
  fi
  sleep 1
done
wait "$pid"
