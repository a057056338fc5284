#!/usr/bin/env bash
# Stops the PostgreSQL postgres-up.sh started (its data stays for the next run).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
run=${POSTGRES_RUN_DIR:-$repo/.cache/postgres-run}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[[ -n $bin && -f $run/data/PG_VERSION ]] || { echo "postgres-down: nothing to stop"; exit 0; }
as=()
((EUID == 0)) && as=(runuser -u postgres --)
if "${as[@]}" "$bin/pg_ctl" -D "$run/data" status >/dev/null 2>&1; then
	"${as[@]}" "$bin/pg_ctl" -D "$run/data" -m fast -w stop >/dev/null
	echo "postgres-down: stopped"
else
	echo "postgres-down: not running"
fi
