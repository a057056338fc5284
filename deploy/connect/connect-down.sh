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

# shellcheck source=../lib/stop.sh
source "$here/../lib/stop.sh"

# ours PID: true when PID is a worker running this run directory's config.
ours() {
	local cmd
	cmd=$({ tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null) || return 1
	[[ $cmd == *ConnectDistributed* && $cmd == *"$run_dir/worker.properties"* ]]
}

stop_ours connect-down worker "$pid_file" "$stop_timeout" "$run_dir"
