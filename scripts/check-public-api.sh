#!/usr/bin/env bash
# The public API of every library module, written down: api/<Module>.txt lists each public symbol with its
# declaration, one per line, sorted. This script regenerates the listing from the symbol graphs of the debug build
# (`swift package dump-symbol-graph`, which builds first: a no-op after `swift test`) and fails when the checked-in
# listing differs, so a change to the public API is a decision made in the open (commit the listing with it and add
# a CHANGELOG line). Usage: scripts/check-public-api.sh [--update]
#   --update   rewrites api/ from the sources instead of checking (what to run after changing the public API).
set -euo pipefail
cd "$(dirname "$0")/.."

swift package dump-symbol-graph --skip-synthesized-members > /dev/null
graphs="$(dirname "$(swift build --show-bin-path)")/symbolgraph"

if [[ "${1:-}" == "--update" ]]; then
    rm -rf api
    python3 scripts/public-api.py "$graphs" api
    python3 scripts/public-api.py "$graphs" --count
    exit 0
fi

generated=$(mktemp -d)
trap 'rm -rf "$generated"' EXIT
python3 scripts/public-api.py "$graphs" "$generated"
python3 scripts/public-api.py "$graphs" --count
if ! diff -ru api "$generated"; then
    echo "The public API differs from api/ (lines with - are in the listing, + in the sources). If the change is"
    echo "intended, run scripts/check-public-api.sh --update, commit api/, and add a CHANGELOG line."
    exit 1
fi
echo "the public API matches api/"
