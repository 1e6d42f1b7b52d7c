#!/usr/bin/env bash
# Vendors the dashboard page's libraries from the npm registry, as pkg/dashboard/web/vendor's
# package.json and package-lock.json pin them, into pkg/dashboard/web/vendor: the page
# imports them as ES modules and the binary embeds them, so nothing is built and nothing is
# downloaded when the page runs. Run it after changing a version in package.json
# (`make web-vendor`), and commit what it writes.
#
# The one change to the published files: Preact's hooks import "preact", a bare name a
# browser resolves only through an import map, which the page's policy (no inline script)
# leaves out; the copy imports "./preact.mjs" instead.
set -euo pipefail

vendor="$(cd "$(dirname "$0")/../pkg/dashboard/web/vendor" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cp "$vendor/package.json" "$work/"
if [[ -f "$vendor/package-lock.json" ]]; then
	cp "$vendor/package-lock.json" "$work/"
	(cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
else
	(cd "$work" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
	cp "$work/package-lock.json" "$vendor/"
fi

m="$work/node_modules"
cp "$m/preact/dist/preact.mjs" "$vendor/preact.mjs"
sed 's/from"preact"/from".\/preact.mjs"/g' "$m/preact/hooks/dist/hooks.mjs" >"$vendor/hooks.mjs"
if grep -q 'from"preact"' "$vendor/hooks.mjs" || ! grep -q 'from"./preact.mjs"' "$vendor/hooks.mjs"; then
	echo "preact/hooks no longer imports \"preact\" as this script expects: check its import" >&2
	exit 1
fi
cp "$m/htm/dist/htm.mjs" "$vendor/htm.mjs"
cp "$m/uplot/dist/uPlot.esm.js" "$vendor/uPlot.esm.js"
cp "$m/uplot/dist/uPlot.min.css" "$vendor/uPlot.min.css"
for p in preact htm uplot; do
	cp "$m/$p/LICENSE" "$vendor/LICENSE.$p"
done
# The versions vendored, and a digest of each file, which a test compares with the files the
# binary embeds.
(cd "$vendor" && {
	for p in preact htm uplot; do
		printf '# %s %s\n' "$p" "$(node -p "require('$m/$p/package.json').version")"
	done
	sha256sum preact.mjs hooks.mjs htm.mjs uPlot.esm.js uPlot.min.css
} >SHA256SUMS)
echo "vendored into $vendor:" && cat "$vendor/SHA256SUMS"
