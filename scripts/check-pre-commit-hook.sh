#!/usr/bin/env bash
# Proves .pre-commit-hooks.yaml the way a user meets it: pre-commit, installed from PyPI into a venv, runs the
# featuregate-check hook of this repository (`pre-commit try-repo`, which clones the repository's HEAD and builds it
# with `swift build -c release` in its own clone) in a temporary git repository:
# - an invalid airshipconfig.properties fails the hook, and the log names its line;
# - a valid AirshipConfig.plist passes, next to an invalid other.json that the hook's `files` pattern leaves out.
# Each try-repo builds the package in release from scratch (pre-commit keeps its store in a temporary directory
# that try-repo deletes), so the two runs cost two release builds; each prints how long it took. Run it on a clean
# checkout: try-repo copies uncommitted changes to tracked files, not new files.
#
# --one-build proves the same with one release build: `pre-commit run` with a .pre-commit-config.yaml naming this
# repository at its HEAD, and one pre-commit store for both runs, so the second run reuses the first one's build.
# Usage: scripts/check-pre-commit-hook.sh [--one-build] [VENV]   (VENV defaults to a temporary one)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
one_build=false
if [[ ${1:-} == --one-build ]]; then one_build=true; shift; fi
venv=${1:-$work/venv}
[[ -x "$venv/bin/pre-commit" ]] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q pre-commit; }
"$venv/bin/pre-commit" --version

project=$work/project
mkdir -p "$project/ios" "$project/android"
cp "$repo/Examples/Configs/AirshipConfig.plist" "$project/ios/AirshipConfig.plist"
cp "$repo/Examples/Configs/invalid-android-unknown-name.properties" "$project/android/airshipconfig.properties"
cp "$repo/Examples/Configs/invalid-typo.json" "$project/other.json"
git -C "$project" init -q
git -C "$project" add .

cat > "$work/pre-commit-config.yaml" <<CONFIG
repos:
  - repo: $repo
    rev: $(git -C "$repo" rev-parse HEAD)
    hooks:
      - id: featuregate-check
CONFIG

try_repo() {  # FILE...: runs the hook on the FILEs; prints pre-commit's output and how long it took
    local start=$SECONDS status=0
    if $one_build; then
        (cd "$project" && PRE_COMMIT_HOME="$work/store" "$venv/bin/pre-commit" run \
            -c "$work/pre-commit-config.yaml" featuregate-check --verbose --files "$@") || status=$?
    else
        (cd "$project" && "$venv/bin/pre-commit" try-repo "$repo" featuregate-check --verbose --files "$@") \
            || status=$?
    fi
    echo "pre-commit took $((SECONDS - start)) s"
    return $status
}

status=0
log=$(try_repo android/airshipconfig.properties 2>&1) || status=$?
echo "$log" | sed 's/^/  | /'
if [[ $status -ne 1 ]] || ! grep -q 'Failed' <<< "$log" \
    || ! grep -q 'android/airshipconfig.properties: error: enabledFeatures\[1\]: line 7' <<< "$log"; then
    echo "pre-commit: the hook should fail on the invalid airshipconfig.properties (exit $status)"; exit 1
fi

status=0
log=$(try_repo ios/AirshipConfig.plist other.json 2>&1) || status=$?
echo "$log" | sed 's/^/  | /'
if [[ $status -ne 0 ]] || ! grep -q 'Passed' <<< "$log" || ! grep -q 'ios/AirshipConfig.plist: OK' <<< "$log" \
    || grep -q 'other.json' <<< "$log"; then
    echo "pre-commit: the hook should pass on the valid AirshipConfig.plist (exit $status)"; exit 1
fi
echo "ok: fails on an invalid file, passes on a valid one"
