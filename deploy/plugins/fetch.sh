#!/usr/bin/env bash
# Lay out Kafka Connect plugins fetched from Maven Central as a plugin path:
#   deploy/plugins/fetch.sh [NAME...]   (default: every deploy/plugins/*/pom.xml)
# Each NAME gets PLUGINS_DIR/NAME (default .cache/plugins/NAME) with its
# jars, Kafka Connect's plugin.path layout; pass PLUGINS_DIR to an agent's
# --plugin-path. A directory already laid out is kept.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${PLUGINS_DIR:-$repo/.cache/plugins}
log() { echo "plugins: $*"; }
die() { echo "plugins: $*" >&2; exit 1; }
command -v mvn >/dev/null || die "mvn not found (Maven 3.8+ fetches the plugins)"

names=("$@")
if ((${#names[@]} == 0)); then
	for pom in "$here"/*/pom.xml; do names+=("$(basename "$(dirname "$pom")")"); done
fi
mkdir -p "$out"
for name in "${names[@]}"; do
	pom=$here/$name/pom.xml
	[[ -f $pom ]] || die "no plugin $name (no $pom)"
	dir=$out/$name
	if [[ -n $(ls "$dir"/*.jar 2>/dev/null) ]]; then
		log "$name: already in $dir"
		continue
	fi
	tmp=$(mktemp -d "$out/.$name.XXXXXX")
	if ! mvn -q -B -Dstyle.color=never -f "$pom" dependency:copy-dependencies -DoutputDirectory="$tmp" \
		-DexcludeArtifactIds=connect-api,kafka-clients >"$tmp/.mvn.log" 2>&1; then
		cat "$tmp/.mvn.log" >&2
		rm -rf "$tmp"
		die "$name: fetching from Maven Central failed"
	fi
	rm -f "$tmp/.mvn.log"
	rm -rf "$dir"
	mv "$tmp" "$dir"
	log "$name: $(ls "$dir" | wc -l) jars in $dir"
done
