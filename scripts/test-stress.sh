#!/usr/bin/env bash
# Runs a make target (default: test) beside N CPU burners, the way a loaded
# CI machine runs it: a wait that holds only on a quiet machine fails here.
# N defaults to 3 per core (with the suite itself, a load of about 4 per
# core). The burners are this script's children and end with it.
set -euo pipefail
burners="${STRESS_BURNERS:-$(( 3 * $(nproc) ))}"
target="${1:-test}"
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stop EXIT
for _ in $(seq "$burners"); do
	( while :; do :; done ) &
	pids+=("$!")
done
echo "test-stress: $burners CPU burners beside 'make $target' ($(nproc) cores); load: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
status=0
make "$target" || status=$?
echo "test-stress: 'make $target' exit $status after $(( $(date +%s) - start ))s; load: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
