#!/usr/bin/env bash
# Stop the Connect worker that connect-up.sh started: SIGTERM, then SIGKILL
# after CONNECT_STOP_TIMEOUT seconds. Idempotent: with no worker running it
# only removes a stale pid file. It only signals a process whose command line
# is ConnectDistributed with this run directory's worker.properties. The run
# directory (worker.log) is left for inspection; the next connect-up.sh wipes
# it. The worker's internal topics stay on the broker.
#
# Environment: CONNECT_RUN_DIR (default <repo>/.cache/connect-run),
#              CONNECT_STOP_TIMEOUT (default 30 seconds).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
run_dir=${CONNECT_RUN_DIR:-$repo/.cache/connect-run}
stop_timeout=${CONNECT_STOP_TIMEOUT:-30}
pid_file=$run_dir/connect.pid

# ours PID: true when PID is a worker running this run directory's config.
ours() {
	local cmd
	cmd=$({ tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null) || return 1
	[[ $cmd == *ConnectDistributed* && $cmd == *"$run_dir/worker.properties"* ]]
}

pids=()
if [[ -f $pid_file ]]; then
	pid=$(<"$pid_file")
	if [[ $pid =~ ^[0-9]+$ ]] && ours "$pid"; then pids+=("$pid"); fi
fi
if [[ ${#pids[@]} -eq 0 ]]; then
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		[[ $p == "$$" ]] && continue
		if ours "$p"; then pids+=("$p"); fi
	done
fi
if [[ ${#pids[@]} -eq 0 ]]; then
	rm -f "$pid_file"
	echo "connect-down: no worker running (run dir $run_dir)"
	exit 0
fi

start=$(date +%s.%N)
for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
alive() {
	local p
	for p in "${pids[@]}"; do
		if kill -0 "$p" 2>/dev/null && ours "$p"; then return 0; fi
	done
	return 1
}
deadline=$((SECONDS + stop_timeout))
while alive && ((SECONDS < deadline)); do sleep 0.2; done
how=SIGTERM
if alive; then
	how="SIGKILL after ${stop_timeout}s"
	for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
	while alive; do sleep 0.1; done
fi
rm -f "$pid_file"
echo "connect-down: stopped worker pid ${pids[*]} ($how) in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1fs", b - a }')"
