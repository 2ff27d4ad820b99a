#!/usr/bin/env bash
# Proves .pre-commit-hooks.yaml the way a user meets it: pre-commit, installed from PyPI into a venv, runs the hooks of
# this repository in a temporary git repository:
# - featuregate-check (`pre-commit try-repo`, which clones the repository's HEAD and builds it with
#   `swift build -c release` in its own clone): an invalid airshipconfig.properties fails the hook, and the log names
#   its line;
# - featuregate-check again, now as a project's .pre-commit-config.yaml names it (`pre-commit run -c`, the repository
#   at its HEAD commit, with a store of its own): a valid AirshipConfig.plist passes, next to an invalid other.json
#   that the hook's `files` pattern leaves out;
# - featuregate-same-features, declared with `args: [--pair, IOS=ANDROID]` in the same config and store (so it reuses
#   that build): a commit that stages only the iOS file of a pair, enabling a feature the Android file does not, fails
#   and names both files; a commit that stages only the Android file, with the same features, passes and says so.
# try-repo cannot pass `args`, which a pair needs: that is why the pair runs use the config. The four runs cost two
# release builds (try-repo's store is a temporary directory it deletes); each prints how long it took. Run it on a
# clean checkout: try-repo copies uncommitted changes to tracked files, not new files, and the config names HEAD.
#
# --one-build proves the same with one release build: the first run too goes through the config and its store.
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
# A pair of an app's two files, committed with the same features (push, in_app_automation, message_center).
ios_file=app/ios/AirshipConfig.plist
android_file=app/android/airshipconfig.properties
mkdir -p "$project/app/ios" "$project/app/android"
cp "$repo/Examples/Configs/AirshipConfig.plist" "$project/$ios_file"
printf 'productionAppKey = key\nenabledFeatures = push, in_app_automation, message_center\n' > "$project/$android_file"
git -C "$project" init -q
git -C "$project" add app
git -C "$project" -c user.name=ci -c user.email=ci@example.invalid commit -qm "an app's configs"
git -C "$project" add .

cat > "$work/pre-commit-config.yaml" <<CONFIG
repos:
  - repo: $repo
    rev: $(git -C "$repo" rev-parse HEAD)
    hooks:
      - id: featuregate-check
      - id: featuregate-same-features
        args: [--pair, $ios_file=$android_file]
CONFIG

run_config() {  # HOOK [ARGUMENT...]: runs HOOK as the config names it, in the shared store; prints its output and time
    local start=$SECONDS status=0
    (cd "$project" && PRE_COMMIT_HOME="$work/store" "$venv/bin/pre-commit" run \
        -c "$work/pre-commit-config.yaml" --verbose "$@") || status=$?
    echo "pre-commit took $((SECONDS - start)) s"
    return $status
}

try_repo() {  # FILE...: runs featuregate-check on the FILEs; prints pre-commit's output and how long it took
    local start=$SECONDS status=0
    if $one_build; then
        run_config featuregate-check --files "$@" || status=$?
        return $status
    fi
    (cd "$project" && "$venv/bin/pre-commit" try-repo "$repo" featuregate-check --verbose --files "$@") \
        || status=$?
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
log=$(run_config featuregate-check --files ios/AirshipConfig.plist other.json 2>&1) || status=$?
echo "$log" | sed 's/^/  | /'
if [[ $status -ne 0 ]] || ! grep -q 'Passed' <<< "$log" || ! grep -q 'ios/AirshipConfig.plist: OK' <<< "$log" \
    || grep -q 'other.json' <<< "$log"; then
    echo "pre-commit: the hook should pass on the valid AirshipConfig.plist (exit $status)"; exit 1
fi

# Only the iOS file staged, now enabling analytics too: compared with the Android file as committed, it differs.
git -C "$project" reset -q
sed -i 's|<string>push</string>|<string>push</string><string>analytics</string>|' "$project/$ios_file"
git -C "$project" add "$ios_file"
status=0
log=$(run_config featuregate-same-features 2>&1) || status=$?
echo "$log" | sed 's/^/  | /'
difference="--same-features: analytics is enabled by $ios_file; not by $android_file"
if [[ $status -ne 1 ]] || ! grep -q 'Failed' <<< "$log" || ! grep -qF "$ios_file: error: enabledFeatures: line" <<< "$log" \
    || ! grep -qF "$android_file: error: enabledFeatures: line 2: $difference" <<< "$log"; then
    echo "pre-commit: the pair hook should fail on the staged iOS file against the Android file (exit $status)"; exit 1
fi

# Only the Android file staged, with the same features as the iOS file: the pair passes, and the log says so.
git -C "$project" reset -q
git -C "$project" checkout -q -- "$ios_file"
printf '# the same features\n' >> "$project/$android_file"
git -C "$project" add "$android_file"
status=0
log=$(run_config featuregate-same-features 2>&1) || status=$?
echo "$log" | sed 's/^/  | /'
if [[ $status -ne 0 ]] || ! grep -q 'Passed' <<< "$log" \
    || ! grep -qF "same features: in_app_automation, message_center, push ($ios_file, $android_file)" <<< "$log"; then
    echo "pre-commit: the pair hook should pass on the staged Android file with the same features (exit $status)"
    exit 1
fi
echo "ok: fails on an invalid file, passes on a valid one; with one file of a pair staged, fails on a difference, passes on the same features"
