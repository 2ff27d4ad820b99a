#!/usr/bin/env bash
# Fuzzes one of the package's readers with libFuzzer and AddressSanitizer for SECONDS seconds.
#
#   scripts/fuzz.sh TARGET [--structured] SECONDS [libFuzzer options...]
#   scripts/fuzz.sh --build-only TARGET [--structured]      # builds the fuzzer, runs nothing
#   scripts/fuzz.sh --prebuilt TARGET [--structured] SECONDS [...]  # runs the fuzzer --build-only built
#
# .ci/run builds every fuzzer first (one at a time: they share the scratch path), then runs them two at a time with
# --prebuilt, so that each has a core to itself and no SwiftPM build waits for another's lock.
#
# TARGET is one of:
#   config   the FeatureGateConfig reader. Without --structured, libFuzzer mutates config files directly
#            (config-fuzzer, seeded from Tests/Fuzz/ConfigFuzzer/Corpus, with config.dict). With --structured, it
#            mutates recipes that config-structure-fuzzer turns into well-formed or deliberately broken binary plists,
#            XML plists, old-style (OpenStep) plists and JSON files full of NaN, infinite, denormal and huge numbers,
#            128-bit integers, escapes and comments, deep nesting, shared and cyclic references and bad offset tables:
#            random bytes almost never make a binary plist the reader gets far into. Both also check that a
#            conversion to every format keeps the configuration and every key, or refuses a value the format cannot
#            hold.
#   tcf      the IAB signal decoders (TC strings; US Privacy and GPP strings; CMP keys): tcf-fuzzer, seeded from
#            Tests/Fuzz/TCFFuzzer/Corpus, with tcf.dict.
#   remote   the remote-data payload parser (FeatureGateRemote), structure-aware: remote-fuzzer turns each recipe
#            into an Airship remote-data payload (a response or a bare app config; rules, Ivy constraints,
#            predicates, valid or nearly so) and also parses the raw bytes as a payload; seeded from
#            Tests/Fuzz/RemoteFuzzer/Corpus.
#
# The target is built with -DFUZZING (its main hands control to LLVMFuzzerRunDriver) into the scratch path
# .build-fuzz, which every target shares (the modules they have in common are built once), so the normal .build
# stays free of sanitizer flags. The working corpus of each fuzzer grows in .build-fuzz/ (not committed). A crash,
# leak, broken invariant or slow input is saved as .build-fuzz/artifacts/FUZZER-* and fails the script. Reproduce it
# in a plain build with `swift run FUZZER FILE` (config-fuzzer, config-structure-fuzzer, tcf-fuzzer or
# remote-fuzzer). For a recipe of the structure-aware config target,
# `swift run config-structure-fuzzer --write-document RECIPE Tests/Fuzz/ConfigFuzzer/Corpus/crash-NAME` keeps the
# config file it stands for in the corpus that `swift test` replays.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    echo "usage: scripts/fuzz.sh [--prebuilt] config|tcf|remote [--structured] SECONDS [libFuzzer options...]" >&2
    echo "       scripts/fuzz.sh --build-only config|tcf|remote [--structured]" >&2
    echo "       (--structured only with config)" >&2
    exit 2
}

build=true
run=true
case "${1:-}" in
    --build-only) run=false; shift ;;
    --prebuilt) build=false; shift ;;
esac
target=${1:-}
shift || true
structured=false
if [[ "${1:-}" == "--structured" ]]; then
    structured=true
    shift
fi
seconds=${1:-}
if $run; then
    [[ "$seconds" =~ ^[0-9]+$ ]] || usage
    shift
fi

# Per target: the fuzzer, its committed seeds (none for recipes), its libFuzzer options and its working corpus.
scratch=.build-fuzz
case "$target/$structured" in
    config/false)
        product=config-fuzzer
        seeds=Tests/Fuzz/ConfigFuzzer/Corpus
        options=(-dict=Tests/Fuzz/ConfigFuzzer/config.dict -max_len=16384)
        corpus="$scratch/corpus"
        ;;
    config/true)
        product=config-structure-fuzzer
        seeds=
        options=(-max_len=4096)
        corpus="$scratch/structured-corpus"
        ;;
    tcf/false)
        product=tcf-fuzzer
        seeds=Tests/Fuzz/TCFFuzzer/Corpus
        options=(-dict=Tests/Fuzz/TCFFuzzer/tcf.dict -max_len=4096)
        corpus="$scratch/tcf-corpus"
        ;;
    remote/false)
        product=remote-fuzzer
        seeds=Tests/Fuzz/RemoteFuzzer/Corpus
        options=(-max_len=1024)
        corpus="$scratch/remote-corpus"
        ;;
    *) usage ;;
esac

if ! command -v ld.lld > /dev/null; then
    echo "fuzz.sh: ld.lld is not on PATH (install lld, e.g. apt-get install lld)" >&2
    exit 2
fi

if $build; then
    swift build -c release --product "$product" --scratch-path "$scratch" \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -use-ld=lld
fi
$run || exit 0
[[ -x "$scratch/release/$product" ]] || { echo "fuzz.sh: $scratch/release/$product is not built" >&2; exit 2; }

artifacts="$scratch/artifacts"
mkdir -p "$corpus" "$artifacts"
[[ -z "$seeds" ]] || cp "$seeds"/* "$corpus"/

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
