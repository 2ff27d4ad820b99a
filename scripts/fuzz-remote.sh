#!/usr/bin/env bash
# Fuzzes the remote-data payload parser (FeatureGateRemote) with libFuzzer and AddressSanitizer for SECONDS seconds.
#
#   scripts/fuzz-remote.sh SECONDS [libFuzzer options...]
#
# Structure-aware: each input is a recipe that Tests/Fuzz/RemoteFuzzing turns into an Airship remote-data payload
# (a response or a bare app config; rules, Ivy constraints, predicates, valid or nearly so); the raw bytes are also
# parsed as a payload. Builds the remote-fuzzer target with -DFUZZING into the scratch path scripts/fuzz-config.sh
# uses (the modules they share are built once), so the normal .build stays free of sanitizer flags. The working
# corpus starts from Tests/Fuzz/RemoteFuzzer/Corpus and grows in .build-fuzz/remote-corpus (not committed). A crash,
# leak, broken invariant or slow input is saved under .build-fuzz/artifacts/remote-fuzzer-* and fails the script;
# reproduce it with `swift run remote-fuzzer FILE`.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-}
if [[ ! "$seconds" =~ ^[0-9]+$ ]]; then
    echo "usage: scripts/fuzz-remote.sh SECONDS [libFuzzer options...]" >&2
    exit 2
fi
shift

if ! command -v ld.lld > /dev/null; then
    echo "fuzz-remote.sh: ld.lld is not on PATH (install lld, e.g. apt-get install lld)" >&2
    exit 2
fi

scratch=.build-fuzz
fuzzer_dir=Tests/Fuzz/RemoteFuzzer
swift build -c release --product remote-fuzzer --scratch-path "$scratch" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -use-ld=lld

corpus="$scratch/remote-corpus"
artifacts="$scratch/artifacts"
mkdir -p "$corpus" "$artifacts"
cp "$fuzzer_dir"/Corpus/* "$corpus"/

# Swift's own crash handler would hide crashes from libFuzzer; leaks are checked by AddressSanitizer.
export SWIFT_BACKTRACE=enable=no
"$scratch/release/remote-fuzzer" "$corpus" \
    -max_total_time="$seconds" \
    -max_len=1024 \
    -timeout=10 \
    -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/remote-fuzzer-" \
    -print_final_stats=1 \
    "$@"
