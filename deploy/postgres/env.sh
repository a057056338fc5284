# Sourced by postgres-up.sh and postgres-down.sh: where the server's data
# goes and as whom it runs, the same for both.
#   run  data and log directory: $POSTGRES_RUN_DIR, else .cache/postgres-run
#   as   the command prefix that runs a server binary (PostgreSQL refuses
#        root: as root, the postgres user)
#   bin  the newest /usr/lib/postgresql/*/bin, empty when none
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
run=${POSTGRES_RUN_DIR:-$repo/.cache/postgres-run}
as=()
if ((EUID == 0)); then
	as=(runuser -u postgres --)
	# The postgres user must reach the data directory: a checkout under a
	# directory only root may enter (/root) gets one under /tmp, named
	# after the checkout so that up and down agree.
	if [[ -z ${POSTGRES_RUN_DIR:-} ]] && id postgres >/dev/null 2>&1 &&
		! runuser -u postgres -- test -x "$repo" 2>/dev/null; then
		run=/tmp/sluice-postgres-$(printf '%s' "$repo" | cksum | cut -d' ' -f1)
	fi
fi
bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
bin=$(bindir)
