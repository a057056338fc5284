#!/usr/bin/env bash
# Stop the test broker that kafka-up.sh started: SIGTERM (controlled
# shutdown), then SIGKILL after KAFKA_STOP_TIMEOUT seconds. Idempotent: with
# no broker running it only removes a stale pid file. The run directory (data,
# broker.log) is left for inspection; the next kafka-up.sh wipes it.
#
# Environment: KAFKA_RUN_DIR (default <repo>/.cache/kafka-run),
#              KAFKA_STOP_TIMEOUT (default 30 seconds).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
run_dir=${KAFKA_RUN_DIR:-$repo/.cache/kafka-run}
stop_timeout=${KAFKA_STOP_TIMEOUT:-30}
pid_file=$run_dir/kafka.pid

# ours PID: true when PID is a broker running this run directory's config.
ours() {
	local cmd
	cmd=$({ tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null) || return 1
	[[ $cmd == *kafka.Kafka* && $cmd == *"$run_dir/server.properties"* ]]
}

pids=()
if [[ -f $pid_file ]]; then
	pid=$(<"$pid_file")
	if [[ $pid =~ ^[0-9]+$ ]] && ours "$pid"; then
		pids+=("$pid")
	fi
fi
# A broker of this run directory whose pid file was lost.
if [[ ${#pids[@]} -eq 0 ]]; then
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		[[ $p == "$$" ]] && continue
		if ours "$p"; then pids+=("$p"); fi
	done
fi

if [[ ${#pids[@]} -eq 0 ]]; then
	rm -f "$pid_file"
	echo "kafka-down: no broker running (run dir $run_dir)"
	exit 0
fi

start=$(date +%s.%N)
for pid in "${pids[@]}"; do
	kill -TERM "$pid" 2>/dev/null || true
done
deadline=$((SECONDS + stop_timeout))
alive() {
	local p
	for p in "${pids[@]}"; do
		if kill -0 "$p" 2>/dev/null && ours "$p"; then return 0; fi
	done
	return 1
}
while alive && ((SECONDS < deadline)); do
	sleep 0.2
done
how=SIGTERM
if alive; then
	how="SIGKILL after ${stop_timeout}s"
	for pid in "${pids[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	while alive; do sleep 0.1; done
fi
rm -f "$pid_file"
echo "kafka-down: stopped broker pid ${pids[*]} ($how) in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1fs", b - a }')"
