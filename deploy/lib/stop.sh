# Sourced by the *-down.sh scripts: stop the process that a *-up.sh script
# started from a run directory — SIGTERM, then SIGKILL after a timeout.
#
# The caller defines ours PID, true when PID is the process of its run
# directory (its command line names the run directory's config), so a stale
# pid file or a reused pid never gets another process signalled.

# stop_ours TAG WHAT PID_FILE TIMEOUT RUN_DIR: stop the process of the pid
# file, or, the file lost, every process ours accepts; idempotent (with none
# running it only removes a stale pid file). TAG prefixes the one line it
# prints; WHAT names the process ("broker", "worker").
stop_ours() {
	local tag=$1 what=$2 pid_file=$3 stop_timeout=$4 run_dir=$5
	local pids=() pid p d start deadline how
	if [[ -f $pid_file ]]; then
		pid=$(<"$pid_file")
		if [[ $pid =~ ^[0-9]+$ ]] && ours "$pid"; then pids+=("$pid"); fi
	fi
	if [[ ${#pids[@]} -eq 0 ]]; then
		for d in /proc/[0-9]*; do
			p=${d#/proc/}
			[[ $p == "$$" ]] && continue
			if ours "$p"; then pids+=("$p"); fi
		done
	fi
	if [[ ${#pids[@]} -eq 0 ]]; then
		rm -f "$pid_file"
		echo "$tag: no $what running (run dir $run_dir)"
		return 0
	fi

	start=$(date +%s.%N)
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	deadline=$((SECONDS + stop_timeout))
	while _stop_alive "${pids[@]}" && ((SECONDS < deadline)); do sleep 0.2; done
	how=SIGTERM
	if _stop_alive "${pids[@]}"; then
		how="SIGKILL after ${stop_timeout}s"
		for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
		while _stop_alive "${pids[@]}"; do sleep 0.1; done
	fi
	rm -f "$pid_file"
	echo "$tag: stopped $what pid ${pids[*]} ($how) in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1fs", b - a }')"
}

# _stop_alive PID...: true while one of the PIDs is still ours.
_stop_alive() {
	local p
	for p in "$@"; do
		if kill -0 "$p" 2>/dev/null && ours "$p"; then return 0; fi
	done
	return 1
}
