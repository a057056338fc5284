#!/usr/bin/env bash
# Start a fresh single-node Apache Kafka 4.4.0 (KRaft, combined broker +
# controller) on 127.0.0.1:9092 (controller 127.0.0.1:9093) for Sluice's
# real-Kafka tests, and wait until it serves Kafka requests. Two secured
# listeners are opened beside it: SASL_SSL with SCRAM-SHA-512 on 9094 and
# SSL with required client certificates (mTLS) on 9095; kafka-certs.sh
# generates their CA, certificates and SCRAM user into KAFKA_RUN_DIR/security.
# Every address and the run directory can be changed (below), so a second
# broker can run beside the first.
#
#  1. Fetch Kafka and a log4j2 binding from Maven Central into KAFKA_CACHE
#     (mvn dependency:copy-dependencies on deploy/kafka/pom.xml), unless the
#     cache is already complete for this pom.xml.
#  2. Stop a broker left running by an earlier kafka-up.sh, wipe
#     KAFKA_RUN_DIR, generate the TLS material (kafka-certs.sh) and format a
#     new KRaft log dir there (StorageTool, creating the SCRAM users: the
#     suites' own, a super user, and team-a and team-b, whom ACLs confine).
#  3. Start kafka.Kafka in the background, then run KafkaReady.java until the
#     broker answers metadata requests and has its group and transaction
#     coordinators (bounded by KAFKA_START_TIMEOUT). On failure print the
#     broker log's tail, stop the broker and exit non-zero.
#
# Idempotent: every run ends with one clean, empty broker, or an error —
# unless KAFKA_KEEP_DATA=1: then a run directory that an earlier kafka-up.sh
# formatted is started again as it is (its data, CA and passwords kept; the
# addresses are those it was formatted with), as after a broker crash. Used
# by the fault suite (tests/faults) to restart a broker it killed.
#
# Environment:
#   KAFKA_BOOTSTRAP      plaintext listener (default 127.0.0.1:9092)
#   KAFKA_CONTROLLER     KRaft controller listener (default 127.0.0.1:9093)
#   KAFKA_SASL_SSL       SASL_SSL (SCRAM-SHA-512) listener (default 127.0.0.1:9094)
#   KAFKA_MTLS           SSL listener requiring client certificates (default 127.0.0.1:9095)
#   KAFKA_KEEP_DATA      1: start the broker of an existing run dir again (default 0: fresh)
#   KAFKA_CACHE          jar cache (default <repo>/.cache/kafka-4.4.0)
#   KAFKA_RUN_DIR        log dir, pid file, broker.log (default <repo>/.cache/kafka-run)
#   KAFKA_START_TIMEOUT  seconds to wait for readiness (default 90)
#   KAFKA_HEAP_OPTS      default "-Xmx512m -Xms256m"
#   KAFKA_JVM_OPTS       extra JVM flags for the broker (see below for the default)
#   KAFKA_CLUSTER_ID     KRaft cluster id (default a fixed one)
#   JAVA_HOME            Java 17 or newer (else `java` on PATH)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
kafka_version=4.4.0
cache=${KAFKA_CACHE:-$repo/.cache/kafka-$kafka_version}
run_dir=${KAFKA_RUN_DIR:-$repo/.cache/kafka-run}
start_timeout=${KAFKA_START_TIMEOUT:-90}
heap_opts=${KAFKA_HEAP_OPTS:--Xmx512m -Xms256m}
# Measured on the 2-core machine: see deploy/kafka/README.md.
jvm_opts=${KAFKA_JVM_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1}
cluster_id=${KAFKA_CLUSTER_ID:-c2x1aWNlLWthZmthLTQ0MA}
bootstrap=${KAFKA_BOOTSTRAP:-127.0.0.1:9092}
controller=${KAFKA_CONTROLLER:-127.0.0.1:9093}
sasl_ssl=${KAFKA_SASL_SSL:-127.0.0.1:9094}
mtls=${KAFKA_MTLS:-127.0.0.1:9095}
keep_data=${KAFKA_KEEP_DATA:-0}
java=java
if [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/java ]]; then java=$JAVA_HOME/bin/java; fi

log() { echo "kafka-up: $*"; }
die() { echo "kafka-up: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

command -v "$java" >/dev/null || die "java not found (Java 17+ is required)"
java_major=$("$java" -XshowSettings:properties -version 2>&1 | awk -F' = ' '/java.specification.version/ { print $2 }')
[[ ${java_major%%.*} -ge 17 ]] 2>/dev/null || die "Java 17+ is required, $java is ${java_major:-unknown}"

# --- 1. Jars ------------------------------------------------------------------
stamp=$(sha256sum "$here/pom.xml" | cut -d' ' -f1)
if [[ -f $cache/.complete && $(<"$cache/.complete") == "$stamp" ]]; then
	log "jars: $cache (cached)"
else
	command -v mvn >/dev/null || die "mvn not found (Maven 3.8+ is required to fetch Kafka)"
	t0=$(now)
	log "jars: fetching Apache Kafka $kafka_version from Maven Central into $cache"
	mkdir -p "$(dirname "$cache")"
	tmp=$(mktemp -d "$cache.partial.XXXXXX")
	if ! mvn -q -B -Dstyle.color=never -f "$here/pom.xml" dependency:copy-dependencies \
		-DoutputDirectory="$tmp" >"$tmp/.mvn.log" 2>&1; then
		sed 's/\x1b\[[0-9;]*m//g' "$tmp/.mvn.log" >&2
		rm -rf "$tmp"
		die "blocked: Maven could not fetch org.apache.kafka:kafka_2.13:$kafka_version and its dependencies (see the errors above)"
	fi
	[[ -f $tmp/kafka_2.13-$kafka_version.jar ]] || { rm -rf "$tmp"; die "fetch incomplete: no kafka_2.13-$kafka_version.jar"; }
	echo "$stamp" >"$tmp/.complete"
	rm -rf "$cache"
	mv "$tmp" "$cache"
	log "jars: $(ls "$cache"/*.jar | wc -l) jars, $(du -sh "$cache" | cut -f1) in $(since "$t0")"
fi

# --- 2. Fresh log dir -----------------------------------------------------------
KAFKA_RUN_DIR=$run_dir "$here/kafka-down.sh" >/dev/null
port_open() { (exec 3<>"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null; }
if [[ $keep_data == 1 ]]; then
	# The addresses the run dir was formatted with (its server.properties).
	[[ -f $run_dir/server.properties && -f $run_dir/addresses ]] ||
		die "KAFKA_KEEP_DATA=1: $run_dir holds no broker formatted by kafka-up.sh"
	# shellcheck source=/dev/null
	source "$run_dir/addresses"
fi
for addr in "$bootstrap" "$controller" "$sasl_ssl" "$mtls"; do
	if port_open "$addr"; then
		die "$addr is already in use by another process (not a broker of $run_dir): stop it first"
	fi
done

log4j=(-Dlog4j2.configurationFile="$here/log4j2.properties")
# Short-lived JVMs (format, readiness check): C1 only, serial GC, class data sharing.
quick=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto)
t0=$(now)
if [[ $keep_data == 1 ]]; then
	log "broker: starting again on the data of $run_dir (KAFKA_KEEP_DATA=1)"
else
	rm -rf "$run_dir"
	mkdir -p "$run_dir/data"
	sec_dir=$run_dir/security
	"$here/kafka-certs.sh" "$sec_dir" "$sasl_ssl" "$mtls" || die "generating the TLS material into $sec_dir failed"
	# Two teams' SCRAM users beside the suites' own, for the per-team principal
	# test: their passwords in $sec_dir/<team>.password (ACLs grant them nothing
	# until that test does).
	scram=(--add-scram "SCRAM-SHA-512=[name=$(<"$sec_dir/sasl.username"),password=$(<"$sec_dir/sasl.password")]")
	for team in team-a team-b; do
		openssl rand -hex 16 >"$sec_dir/$team.password"
		scram+=(--add-scram "SCRAM-SHA-512=[name=$team,password=$(<"$sec_dir/$team.password")]")
	done
	sed -e "s|@LOG_DIR@|$run_dir/data|" -e "s|@SECURITY_DIR@|$sec_dir|" -e "s|@STORE_PASSWORD@|$(<"$sec_dir/store.password")|" \
		-e "s|@BOOTSTRAP@|$bootstrap|g" -e "s|@CONTROLLER@|$controller|g" -e "s|@SASL_SSL@|$sasl_ssl|g" -e "s|@MTLS@|$mtls|g" \
		"$here/server.properties" >"$run_dir/server.properties"
	printf 'bootstrap=%q\ncontroller=%q\nsasl_ssl=%q\nmtls=%q\n' "$bootstrap" "$controller" "$sasl_ssl" "$mtls" >"$run_dir/addresses"
	if ! "$java" "${quick[@]}" "${log4j[@]}" -cp "$cache/*" kafka.tools.StorageTool \
		format -t "$cluster_id" -c "$run_dir/server.properties" \
		"${scram[@]}" >"$run_dir/format.log" 2>&1; then
		cat "$run_dir/format.log" >&2
		die "formatting the KRaft log dir failed"
	fi
fi

# --- 3. Start and wait ----------------------------------------------------------
sec_dir=$run_dir/security
# shellcheck disable=SC2086 # heap_opts and jvm_opts are word lists
setsid bash -c 'echo $$ >"$0"; exec "$@"' "$run_dir/kafka.pid" \
	"$java" $heap_opts $jvm_opts -Djava.awt.headless=true "${log4j[@]}" \
	-cp "$cache/*" kafka.Kafka "$run_dir/server.properties" \
	>>"$run_dir/broker.log" 2>&1 </dev/null &
for _ in 1 2 3 4 5 6 7 8 9 10; do [[ -s $run_dir/kafka.pid ]] && break; sleep 0.1; done
pid=$(<"$run_dir/kafka.pid")
log "broker: pid $pid, log $run_dir/broker.log"
# Compile the readiness check while the broker boots.
javac=$(dirname "$(command -v "$java")")/javac
[[ -x $javac ]] || javac=javac
"$javac" -d "$run_dir/ready-classes" -cp "$cache/*" "$here/KafkaReady.java" >"$run_dir/ready.log" 2>&1 &
javac_pid=$!

fail() {
	echo "kafka-up: $*" >&2
	echo "--- tail of $run_dir/broker.log ---" >&2
	tail -n 60 "$run_dir/broker.log" >&2 || true
	if [[ -s $run_dir/ready.log ]]; then
		echo "--- $run_dir/ready.log ---" >&2
		tail -n 20 "$run_dir/ready.log" >&2
	fi
	if [[ -n ${javac_pid:-} ]]; then kill "$javac_pid" 2>/dev/null || true; fi
	KAFKA_RUN_DIR=$run_dir "$here/kafka-down.sh" >&2 || true
	exit 1
}

deadline=$((SECONDS + start_timeout))
until port_open "$bootstrap"; do
	kill -0 "$pid" 2>/dev/null || fail "broker exited during startup"
	((SECONDS < deadline)) || fail "$bootstrap did not accept connections within ${start_timeout}s"
	sleep 0.2
done
log "broker: $bootstrap accepts connections after $(since "$t0")"
wait "$javac_pid" || fail "compiling $here/KafkaReady.java failed"
left=$((deadline - SECONDS))
((left > 5)) || left=5
if ! "$java" "${quick[@]}" "${log4j[@]}" -cp "$run_dir/ready-classes:$cache/*" KafkaReady "$bootstrap" "$left" \
	>"$run_dir/ready.log" 2>&1; then
	kill -0 "$pid" 2>/dev/null || fail "broker exited during startup"
	fail "broker on $bootstrap did not become ready within ${start_timeout}s"
fi
kill -0 "$pid" 2>/dev/null || fail "broker exited during startup"
sed 's/^/kafka-up: /' "$run_dir/ready.log"
log "broker: ready on $bootstrap (controller $controller) in $(since "$t0")"
log "broker: SASL_SSL (SCRAM-SHA-512) on $sasl_ssl, mTLS on $mtls; flags in $sec_dir/sasl_ssl.env and $sec_dir/mtls.env"
