#!/usr/bin/env bash
# The browser suite, N runs in a row, with a CPU-bound process busy beside it (issue 7: "tests
# that hold under load"). Prints one table row per run; exits 1 if any run failed.
#   bash benchmarks/browser_under_load.sh [runs=5] [extra pytest args...]
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
shift || true
logs=test-output/under-load
rm -rf test-output/failures  # the failure screenshots of these runs only
mkdir -p "$logs"
.venv/bin/python -c 'while True: pass' &  # the CPU hog: one core of two, for the whole time
hog=$!
trap 'kill $hog 2>/dev/null' EXIT
failed=0
echo "| run | result | seconds |"
echo "|---|---|---|"
for run in $(seq 1 "$runs"); do
  start=$(date +%s)
  .venv/bin/pytest -q -m browser "$@" >"$logs/run-$run.log" 2>&1
  status=$?
  summary=$(grep -E "^[0-9]+ (passed|failed)|[0-9]+ failed|[0-9]+ passed" "$logs/run-$run.log" | tail -1)
  echo "| $run | ${summary:-exit $status} | $(( $(date +%s) - start )) |"
  [ "$status" -eq 0 ] || failed=1
done
exit $failed
