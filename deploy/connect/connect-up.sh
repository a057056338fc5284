#!/usr/bin/env bash
# Start ONE Apache Kafka Connect 4.4 distributed worker for the conformance
# suite (tests/conformance), against the broker on CONNECT_BOOTSTRAP, and wait
# until its REST API answers.
#
#  1. Fetch connect-runtime, connect-file, connect-json and a log4j2 binding
#     from Maven Central into CONNECT_CACHE (mvn dependency:copy-dependencies
#     on deploy/connect/pom.xml), and compile the AppInfoParser shim that lets
#     connect-file 4.3.1 run on Kafka 4.4 (compat/, README.md), unless the
#     cache is complete for this pom and shim.
#  2. Stop a worker left running by an earlier connect-up.sh and wipe
#     CONNECT_RUN_DIR. The worker gets a fresh group.id (and so fresh internal
#     topics <group.id>-configs/-offsets/-status) unless CONNECT_GROUP_ID is
#     set, so nothing of an earlier run on a shared broker comes back.
#  3. Start ConnectDistributed in the background, then wait until GET / and
#     GET /connectors answer 200 (bounded by CONNECT_START_TIMEOUT). On failure
#     print the worker log's tail, stop the worker and exit non-zero.
#
# Environment:
#   CONNECT_CACHE          jar cache (default <repo>/.cache/connect-4.4.0)
#   CONNECT_RUN_DIR        worker.properties, pid file, worker.log (default <repo>/.cache/connect-run)
#   CONNECT_BOOTSTRAP      Kafka bootstrap servers (default 127.0.0.1:9092)
#   CONNECT_LISTEN         REST host:port (default 127.0.0.1:18083)
#   CONNECT_GROUP_ID       group.id and internal-topic prefix (default conformance-connect-<epoch seconds>)
#   CONNECT_START_TIMEOUT  seconds to wait for the REST API (default 120)
#   CONNECT_HEAP_OPTS      default "-Xmx384m -Xms128m"
#   CONNECT_JVM_OPTS       default "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
#   CONNECT_JARS_ONLY      1: only fill CONNECT_CACHE (step 1) and exit; start no
#                          worker (make bench starts its own workers from the cache)
#   JAVA_HOME              Java 17 or newer (else `java` on PATH)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
version=4.4.0
cache=${CONNECT_CACHE:-$repo/.cache/connect-$version}
run_dir=${CONNECT_RUN_DIR:-$repo/.cache/connect-run}
bootstrap=${CONNECT_BOOTSTRAP:-127.0.0.1:9092}
listen=${CONNECT_LISTEN:-127.0.0.1:18083}
group_id=${CONNECT_GROUP_ID:-conformance-connect-$(date +%s)}
start_timeout=${CONNECT_START_TIMEOUT:-120}
heap_opts=${CONNECT_HEAP_OPTS:--Xmx384m -Xms128m}
# As the test broker (deploy/kafka/README.md): C1 only and the serial GC
# leave the second core to the broker and Sluice.
jvm_opts=${CONNECT_JVM_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1}
java=java
if [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/java ]]; then java=$JAVA_HOME/bin/java; fi

log() { echo "connect-up: $*"; }
die() { echo "connect-up: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }
port_open() { (exec 3<>"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null; }

command -v "$java" >/dev/null || die "java not found (Java 17+ is required)"
command -v curl >/dev/null || die "curl not found"

# --- 1. Jars ------------------------------------------------------------------
compat_src=$here/compat/org/apache/kafka/common/utils/AppInfoParser.java
stamp=$(cat "$here/pom.xml" "$compat_src" | sha256sum | cut -d' ' -f1)
if [[ -f $cache/.complete && $(<"$cache/.complete") == "$stamp" ]]; then
	log "jars: $cache (cached)"
else
	command -v mvn >/dev/null || die "mvn not found (Maven 3.8+ is required to fetch Kafka Connect)"
	t0=$(now)
	log "jars: fetching Kafka Connect $version from Maven Central into $cache"
	mkdir -p "$(dirname "$cache")"
	tmp=$(mktemp -d "$cache.partial.XXXXXX")
	if ! mvn -q -B -Dstyle.color=never -f "$here/pom.xml" dependency:copy-dependencies \
		-DoutputDirectory="$tmp" >"$tmp/.mvn.log" 2>&1; then
		sed 's/\x1b\[[0-9;]*m//g' "$tmp/.mvn.log" >&2
		rm -rf "$tmp"
		die "blocked: Maven could not fetch org.apache.kafka:connect-runtime:$version and its dependencies (see the errors above)"
	fi
	[[ -f $tmp/connect-runtime-$version.jar ]] || { rm -rf "$tmp"; die "fetch incomplete: no connect-runtime-$version.jar"; }
	ls "$tmp"/connect-file-*.jar >/dev/null 2>&1 || { rm -rf "$tmp"; die "fetch incomplete: no connect-file jar"; }
	# connect-file 4.3.1 on Kafka 4.4 needs the AppInfoParser shim (see compat/).
	javac=$(dirname "$(command -v "$java")")/javac
	[[ -x $javac ]] || javac=javac
	mkdir -p "$tmp/.compat"
	if ! "$javac" -nowarn -d "$tmp/.compat" -cp "$tmp/*" "$compat_src" >"$tmp/.javac.log" 2>&1 ||
		! (cd "$tmp/.compat" && jar cf "$tmp/connect-file-compat.jar" .); then
		cat "$tmp/.javac.log" >&2
		rm -rf "$tmp"
		die "compiling $compat_src failed"
	fi
	rm -rf "$tmp/.compat"
	echo "$stamp" >"$tmp/.complete"
	rm -rf "$cache"
	mv "$tmp" "$cache"
	log "jars: $(ls "$cache"/*.jar | wc -l) jars, $(du -sh "$cache" | cut -f1) in $(since "$t0")"
fi

if [[ ${CONNECT_JARS_ONLY:-} == 1 ]]; then exit 0; fi

# --- 2. Fresh run dir -----------------------------------------------------------
CONNECT_RUN_DIR=$run_dir "$here/connect-down.sh" >/dev/null
port_open "$listen" && die "$listen is already in use by another process (not a worker of $run_dir): stop it first"
port_open "${bootstrap%%,*}" || die "no Kafka broker on $bootstrap (run make kafka-up first)"

rm -rf "$run_dir"
mkdir -p "$run_dir"
host=${listen%:*} port=${listen##*:}
sed -e "s|@BOOTSTRAP@|$bootstrap|" -e "s|@GROUP_ID@|$group_id|g" -e "s|@LISTEN@|$listen|" \
	-e "s|@HOST@|$host|" -e "s|@PORT@|$port|" "$here/worker.properties" >"$run_dir/worker.properties"
echo "$group_id" >"$run_dir/group.id"

# --- 3. Start and wait ----------------------------------------------------------
t0=$(now)
# The time zone is pinned to UTC: FileStreamSink writes a Date as Java's
# Date.toString in the JVM's zone, and Sluice's file sink writes UTC.
# shellcheck disable=SC2086 # heap_opts and jvm_opts are word lists
setsid bash -c 'echo $$ >"$0"; exec "$@"' "$run_dir/connect.pid" \
	"$java" $heap_opts $jvm_opts -Djava.awt.headless=true -Duser.timezone=UTC \
	-Dlog4j2.configurationFile="$here/log4j2.properties" \
	-cp "$cache/*" org.apache.kafka.connect.cli.ConnectDistributed "$run_dir/worker.properties" \
	>"$run_dir/worker.log" 2>&1 </dev/null &
for _ in 1 2 3 4 5 6 7 8 9 10; do [[ -s $run_dir/connect.pid ]] && break; sleep 0.1; done
pid=$(<"$run_dir/connect.pid")
log "worker: pid $pid, group.id $group_id, log $run_dir/worker.log"

fail() {
	echo "connect-up: $*" >&2
	echo "--- tail of $run_dir/worker.log ---" >&2
	tail -n 60 "$run_dir/worker.log" >&2 || true
	CONNECT_RUN_DIR=$run_dir "$here/connect-down.sh" >&2 || true
	exit 1
}

code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://$listen$1" || true; }
deadline=$((SECONDS + start_timeout))
for path in / /connectors; do
	until [[ $(code "$path") == 200 ]]; do
		kill -0 "$pid" 2>/dev/null || fail "worker exited during startup"
		((SECONDS < deadline)) || fail "GET http://$listen$path did not answer 200 within ${start_timeout}s"
		sleep 0.5
	done
done
log "worker: $(curl -s --max-time 5 "http://$listen/")"
log "worker: ready on http://$listen in $(since "$t0")"
