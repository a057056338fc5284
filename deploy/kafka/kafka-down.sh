#!/usr/bin/env bash
# Stop the test broker that kafka-up.sh started: SIGTERM (controlled
# shutdown), then SIGKILL after KAFKA_STOP_TIMEOUT seconds. Idempotent: with
# no broker running it only removes a stale pid file. The run directory (data,
# broker.log) is left for inspection; the next kafka-up.sh wipes it.
#
# Environment: KAFKA_RUN_DIR (default <repo>/.cache/kafka-run),
#              KAFKA_STOP_TIMEOUT (default 30 seconds),
#              KAFKA_KILL=1: SIGKILL at once instead, a crash (the fault
#              suite's; KAFKA_KEEP_DATA=1 kafka-up.sh starts it again).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
run_dir=${KAFKA_RUN_DIR:-$repo/.cache/kafka-run}
stop_timeout=${KAFKA_STOP_TIMEOUT:-30}
pid_file=$run_dir/kafka.pid

# shellcheck source=../lib/stop.sh
source "$here/../lib/stop.sh"

# ours PID: true when PID is a broker running this run directory's config.
ours() {
	local cmd
	cmd=$({ tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null) || return 1
	[[ $cmd == *kafka.Kafka* && $cmd == *"$run_dir/server.properties"* ]]
}

if [[ ${KAFKA_KILL:-0} == 1 ]]; then
	if [[ -f $pid_file ]] && pid=$(<"$pid_file") && [[ $pid =~ ^[0-9]+$ ]] && ours "$pid"; then
		kill -KILL "$pid"
		while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
		rm -f "$pid_file"
		echo "kafka-down: killed broker pid $pid (SIGKILL)"
		exit 0
	fi
	echo "kafka-down: no broker of $run_dir to kill"
	exit 0
fi
stop_ours kafka-down broker "$pid_file" "$stop_timeout" "$run_dir"
