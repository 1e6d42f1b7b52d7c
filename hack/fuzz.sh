#!/usr/bin/env bash
# Runs every fuzz target of the module for the given -fuzztime (a duration such as 2s or 1m):
# the targets are those `go test -list '^Fuzz'` lists in the packages whose tests declare one;
# `go test -fuzz` takes one package and one target at a time. A crasher fails the run; it is
# written to the package's testdata/fuzz/<target>.
#
# Go 1.26's fuzzing coordinator can fail a target with "context deadline exceeded" when the
# -fuzztime deadline races a busy worker (go.dev/issue/75804, fixed in Go 1.27): no input
# failed, and no reproducer is written. Such a run is retried once, and reported, not failed,
# when it happens again without a reproducer.
set -euo pipefail
fuzztime=${1:?usage: hack/fuzz.sh <fuzztime>}

pkgs=$(grep -rlE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' . | xargs -n1 dirname | sort -u)
targets=$(go test -list '^Fuzz' $pkgs | awk '/^Fuzz/ {n[++c] = $1; next} /^ok/ {for (i = 1; i <= c; i++) print $2 "," n[i]; c = 0}')
module=$(go list -m)

# reproducers counts the files of a target's corpus of failing inputs.
reproducers() {
	local dir=".${1#"$module"}/testdata/fuzz/$2"
	if [ -d "$dir" ]; then find "$dir" -type f | wc -l; else echo 0; fi
}

flaked=0
for t in $targets; do
	pkg=${t%%,*} target=${t#*,}
	for attempt in 1 2; do
		before=$(reproducers "$pkg" "$target")
		echo "go test -run '^\$' -fuzz '^$target\$' -fuzztime $fuzztime $pkg"
		if out=$(go test -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" "$pkg" 2>&1); then
			echo "$out" | tail -n 3
			break
		fi
		echo "$out"
		if [ "$(reproducers "$pkg" "$target")" != "$before" ] || ! grep -q 'context deadline exceeded' <<<"$out"; then
			exit 1 # a real failure: a crasher was written, or the error is another one
		fi
		if [ "$attempt" = 2 ]; then
			echo "warning: $target stopped with the fuzzing coordinator's deadline race twice (go.dev/issue/75804), no input failed"
			flaked=$((flaked + 1))
		else
			echo "retrying $target: the fuzzing coordinator's deadline race (go.dev/issue/75804), no input failed"
		fi
	done
done
echo "fuzz targets done ($flaked stopped by the coordinator's deadline race)"
