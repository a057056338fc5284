#!/usr/bin/env bash
# A PostgreSQL for the Debezium tests: wal_level=logical (Debezium reads the
# WAL through pgoutput), listening on 127.0.0.1:$POSTGRES_PORT (default
# 55432), data and log in $POSTGRES_RUN_DIR (default .cache/postgres-run),
# trust authentication for user postgres on loopback only.
# Installs Debian's postgresql with apt-get when no server is found.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
port=${POSTGRES_PORT:-55432}
run=${POSTGRES_RUN_DIR:-$repo/.cache/postgres-run}
log() { echo "postgres-up: $*"; }
die() { echo "postgres-up: $*" >&2; exit 1; }

bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
bin=$(bindir)
if [[ -z $bin ]]; then
	command -v apt-get >/dev/null || die "no PostgreSQL server found and no apt-get to install one"
	log "installing Debian's postgresql"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
	bin=$(bindir)
	[[ -n $bin ]] || die "postgresql installed, but no server binaries under /usr/lib/postgresql"
fi

# PostgreSQL refuses to run as root: run it as the postgres user then.
as=()
if ((EUID == 0)); then
	id postgres >/dev/null 2>&1 || useradd --system --home-dir "$run" postgres
	as=(runuser -u postgres --)
fi
if [[ -f $run/data/postmaster.pid ]] && "${as[@]}" "$bin/pg_ctl" -D "$run/data" status >/dev/null 2>&1; then
	log "already running on 127.0.0.1:$port"
	exit 0
fi
mkdir -p "$run"
((EUID == 0)) && chown postgres "$run"
if [[ ! -f $run/data/PG_VERSION ]]; then
	"${as[@]}" "$bin/initdb" -D "$run/data" -U postgres --auth=trust -E UTF8 >"$run/initdb.log" 2>&1 ||
		{ cat "$run/initdb.log" >&2; die "initdb failed"; }
	cat >>"$run/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$run'
wal_level = logical
max_wal_senders = 8
max_replication_slots = 8
CONF
fi
"${as[@]}" "$bin/pg_ctl" -D "$run/data" -l "$run/postgres.log" -w -t 60 start >/dev/null ||
	{ tail -n 30 "$run/postgres.log" >&2; die "the server did not start"; }
log "ready on 127.0.0.1:$port (user postgres, data in $run/data)"
