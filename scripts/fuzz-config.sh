#!/usr/bin/env bash
# Fuzzes the FeatureGateConfig reader with libFuzzer and AddressSanitizer for SECONDS seconds.
#
#   scripts/fuzz-config.sh [--structured] SECONDS [libFuzzer options...]
#
# Without --structured, libFuzzer mutates config files directly (config-fuzzer, seeded from the committed corpus
# in Tests/Fuzz/ConfigFuzzer/Corpus, with config.dict). With --structured, it mutates recipes that
# config-structure-fuzzer turns into well-formed or deliberately broken binary plists, XML plists, old-style
# (OpenStep) plists and JSON files full of NaN, infinite, denormal and huge numbers, 128-bit integers, escapes and
# comments, deep nesting, shared and cyclic references and bad offset tables: random bytes almost never make a
# binary plist the reader gets far into. Both targets also check that a conversion to every format keeps the
# configuration and every key, or refuses a value the format cannot hold.
#
# Each target is built with -DFUZZING (its main hands control to LLVMFuzzerRunDriver) into its own scratch path,
# so the normal .build stays free of sanitizer flags. Working corpora grow in .build-fuzz/ (not committed). A crash,
# leak, broken invariant or slow input is saved under .build-fuzz/artifacts/ and fails the script. Reproduce it in a
# plain build: `swift run config-fuzzer FILE`, or for a recipe `swift run config-structure-fuzzer RECIPE`; then
# `swift run config-structure-fuzzer --write-document RECIPE Tests/Fuzz/ConfigFuzzer/Corpus/crash-NAME` keeps the
# config file it stands for in the corpus that `swift test` replays.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    echo "usage: scripts/fuzz-config.sh [--structured] SECONDS [libFuzzer options...]" >&2
    exit 2
}

structured=false
if [[ "${1:-}" == "--structured" ]]; then
    structured=true
    shift
fi
seconds=${1:-}
[[ "$seconds" =~ ^[0-9]+$ ]] || usage
shift

if ! command -v ld.lld > /dev/null; then
    echo "fuzz-config.sh: ld.lld is not on PATH (install lld, e.g. apt-get install lld)" >&2
    exit 2
fi

scratch=.build-fuzz
fuzzer_dir=Tests/Fuzz/ConfigFuzzer
if $structured; then
    product=config-structure-fuzzer
    corpus="$scratch/structured-corpus"
    options=(-max_len=4096)
else
    product=config-fuzzer
    corpus="$scratch/corpus"
    options=(-dict="$fuzzer_dir/config.dict" -max_len=16384)
fi
swift build -c release --product "$product" --scratch-path "$scratch" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -use-ld=lld

artifacts="$scratch/artifacts"
mkdir -p "$corpus" "$artifacts"
$structured || cp "$fuzzer_dir"/Corpus/* "$corpus"/

# Swift's own crash handler would hide crashes from libFuzzer; leaks are checked by AddressSanitizer.
export SWIFT_BACKTRACE=enable=no
"$scratch/release/$product" "$corpus" \
    "${options[@]}" \
    -max_total_time="$seconds" \
    -timeout=10 \
    -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/$product-" \
    -print_final_stats=1 \
    "$@"
