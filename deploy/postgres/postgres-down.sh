#!/usr/bin/env bash
# Stops the PostgreSQL postgres-up.sh started (its data stays for the next run).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/env.sh"
[[ -n $bin && -f $run/data/PG_VERSION ]] || { echo "postgres-down: nothing to stop"; exit 0; }
if "${as[@]}" "$bin/pg_ctl" -D "$run/data" status >/dev/null 2>&1; then
	"${as[@]}" "$bin/pg_ctl" -D "$run/data" -m fast -w stop >/dev/null
	echo "postgres-down: stopped"
else
	echo "postgres-down: not running"
fi
