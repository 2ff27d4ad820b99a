#!/usr/bin/env bash
# Builds every library product with warnings as errors, as a dependent's build sees them: a warning from the
# package's sources prints in every app that depends on it. Its own scratch path, so the flag does not invalidate
# the debug build that `swift test` reuses. Usage: scripts/build-libraries-strict.sh [--scratch-path PATH]
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-strict
[[ "${1:-}" == "--scratch-path" ]] && scratch="$2"

# By target: `--product FeatureGate` (the package's own name) builds every target, test fixtures included.
targets=$(swift package dump-package | python3 -c '
import json, sys
for product in json.load(sys.stdin)["products"]:
    if "library" in product["type"]:
        print(" ".join(product["targets"]))')
for target in $targets; do
    echo "swift build --target $target -Xswiftc -warnings-as-errors"
    swift build --scratch-path "$scratch" --target "$target" -Xswiftc -warnings-as-errors
done
