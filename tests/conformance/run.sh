#!/usr/bin/env bash
# `make conformance`: run the REST scenario list against a real Kafka Connect
# 4.4 worker and against `sluice dev`, both on one Kafka 4.4 broker, print a
# verdict line per scenario, write docs/conformance.md, and exit non-zero on
# any MISMATCH (or when something could not be started).
#
#  1. Broker: reuse one already answering on KAFKA (default 127.0.0.1:9092);
#     else start one with deploy/kafka/kafka-up.sh and stop it at the end.
#     A broker this script did not start is never stopped.
#  2. deploy/connect/connect-up.sh: one ConnectDistributed worker on
#     CONNECT_LISTEN (default 127.0.0.1:18083), fresh group.id; stopped at the end.
#  3. sluice dev --kafka KAFKA --listen SLUICE_LISTEN (default 127.0.0.1:18084),
#     with its own group id and internal topics; stopped at the end.
#  4. go run ./tests/conformance/cmd/conformance.
#  5. go test ./tests/migration: `sluice migrate` from that worker into that
#     sluice dev (MIGRATION_* variables; the tests skip without them).
#
# Logs: .cache/connect-run/worker.log, .cache/conformance-run/sluice.log;
# every recorded answer: .cache/conformance-run/records.json.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
kafka=${KAFKA:-127.0.0.1:9092}
connect_listen=${CONNECT_LISTEN:-127.0.0.1:18083}
sluice_listen=${SLUICE_LISTEN:-127.0.0.1:18084}
run_dir=$repo/.cache/conformance-run
go=${GO:-go}

log() { echo "conformance: $*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }
port_open() { (exec 3<>"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null; }

started_kafka=0 started_connect=0 sluice_pid=
cleanup() {
	local rc=$?
	if [[ -n $sluice_pid ]] && kill -0 "$sluice_pid" 2>/dev/null; then
		kill -TERM "$sluice_pid" 2>/dev/null || true
		for _ in $(seq 1 100); do kill -0 "$sluice_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$sluice_pid" 2>/dev/null || true
		log "stopped sluice dev (pid $sluice_pid)"
	fi
	if ((started_connect)); then "$repo/deploy/connect/connect-down.sh" || true; fi
	if ((started_kafka)); then "$repo/deploy/kafka/kafka-down.sh" || true; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rm -rf "$run_dir"
mkdir -p "$run_dir"
t_all=$(now)

# --- 1. Broker --------------------------------------------------------------
if port_open "$kafka"; then
	log "broker: reusing the broker on $kafka"
else
	[[ $kafka == 127.0.0.1:9092 ]] || { echo "conformance: no broker on $kafka" >&2; exit 2; }
	started_kafka=1
	"$repo/deploy/kafka/kafka-up.sh"
fi

# --- 2. Kafka Connect and 3. Sluice (built while the worker starts) ---------------
t0=$(now)
(cd "$repo" && $go build -o "$run_dir/sluice" ./cmd/sluice && cd tests && $go build -o "$run_dir/conformance" ./conformance/cmd/conformance) &
build_pid=$!
started_connect=1
CONNECT_BOOTSTRAP=$kafka CONNECT_LISTEN=$connect_listen "$repo/deploy/connect/connect-up.sh"
wait "$build_pid" || { echo "conformance: go build failed" >&2; exit 2; }
log "connect worker and builds ready in $(since "$t0")"

port_open "$sluice_listen" && { echo "conformance: $sluice_listen is already in use" >&2; exit 2; }
t0=$(now)
id=conformance-sluice-$(date +%s)
setsid "$run_dir/sluice" dev --kafka "$kafka" --listen "$sluice_listen" --data-dir "$run_dir/sluice-data" \
	--group-id "$id" --config-topic "$id-configs" --offsets-topic "$id-offsets" --status-topic "$id-status" \
	--offsets-history-topic "$id-offsets-history" --audit-topic "$id-audit" --fleet-topic "$id-fleet" \
	--log-level warn >"$run_dir/sluice.log" 2>&1 </dev/null &
sluice_pid=$!
# Ready once its agents have registered: the REST API answers before them,
# and the plugins a Kafka Connect worker lists at once are the agents' here.
until [[ $(curl -s --max-time 5 "http://$sluice_listen/connector-plugins" || true) == '[{'* ]]; do
	kill -0 "$sluice_pid" 2>/dev/null || { tail -n 40 "$run_dir/sluice.log" >&2; echo "conformance: sluice dev exited" >&2; exit 2; }
	((SECONDS < 600)) || exit 2
	sleep 0.3
done
log "sluice dev ready on http://$sluice_listen (group id $id) in $(since "$t0")"

# --- 4. The suite ----------------------------------------------------------------
set +e
"$run_dir/conformance" -upstream "http://$connect_listen" -sluice "http://$sluice_listen" -kafka "$kafka" \
	-out "$repo/docs/conformance.md" -records "$run_dir/records.json" "$@"
rc=$?

# --- 5. Migrating from Kafka Connect -------------------------------------------
t0=$(now)
(cd "$repo/tests" && MIGRATION_CONNECT_URL="http://$connect_listen" MIGRATION_SLUICE_URL="http://$sluice_listen" \
	MIGRATION_KAFKA="$kafka" MIGRATION_SLUICE_BIN="$run_dir/sluice" $go test -count=1 -p 1 -v ./migration/)
mig_rc=$?
log "migration tests: exit $mig_rc in $(since "$t0")"
((rc == 0)) && rc=$mig_rc
set -e
log "total $(since "$t_all") (exit $rc)"
exit "$rc"
