#!/usr/bin/env bash
# A PostgreSQL for the Debezium tests: wal_level=logical (Debezium reads the
# WAL through pgoutput), listening on 127.0.0.1:$POSTGRES_PORT (default
# 15432), data and log in $POSTGRES_RUN_DIR (default .cache/postgres-run),
# trust authentication for user postgres on loopback only.
# Installs Debian's postgresql with apt-get when no server is found.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
port=${POSTGRES_PORT:-15432}
log() { echo "postgres-up: $*"; }
die() { echo "postgres-up: $*" >&2; exit 1; }

. "$here/env.sh"
if [[ -z $bin ]]; then
	command -v apt-get >/dev/null || die "no PostgreSQL server found and no apt-get to install one"
	log "installing Debian's postgresql"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
	[[ -n $(bindir) ]] || die "postgresql installed, but no server binaries under /usr/lib/postgresql"
	# With the postgres user there now, the run directory may differ.
	. "$here/env.sh"
fi
if ((EUID == 0)) && ! id postgres >/dev/null 2>&1; then
	useradd --system --home-dir /nonexistent --shell /usr/sbin/nologin postgres
	. "$here/env.sh"
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
unix_socket_directories = '$run'
wal_level = logical
max_wal_senders = 16
max_replication_slots = 16
CONF
fi
"${as[@]}" "$bin/pg_ctl" -D "$run/data" -l "$run/postgres.log" -o "-p $port" -w -t 60 start >/dev/null ||
	{ tail -n 30 "$run/postgres.log" >&2; die "the server did not start"; }
log "ready on 127.0.0.1:$port (user postgres, data in $run/data)"
