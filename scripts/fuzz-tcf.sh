#!/usr/bin/env bash
# Fuzzes the IAB signal decoders (TC strings; US Privacy and GPP strings; CMP keys) with libFuzzer and AddressSanitizer for SECONDS seconds.
#
#   scripts/fuzz-tcf.sh SECONDS [libFuzzer options...]
#
# Builds the tcf-fuzzer target with -DFUZZING (its main hands control to LLVMFuzzerRunDriver) into its own
# scratch path, so the normal .build stays free of sanitizer flags. The working corpus starts from the committed
# seeds in Tests/Fuzz/TCFFuzzer/Corpus and grows in .build-fuzz-tcf/corpus (not committed). A crash, leak, broken
# invariant or slow input is saved under .build-fuzz-tcf/artifacts/ and fails the script; reproduce it in a plain
# build with `swift run tcf-fuzzer FILE`.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-}
if [[ ! "$seconds" =~ ^[0-9]+$ ]]; then
    echo "usage: scripts/fuzz-tcf.sh SECONDS [libFuzzer options...]" >&2
    exit 2
fi
shift

if ! command -v ld.lld > /dev/null; then
    echo "fuzz-config.sh: ld.lld is not on PATH (install lld, e.g. apt-get install lld)" >&2
    exit 2
fi

scratch=.build-fuzz-tcf
fuzzer_dir=Tests/Fuzz/TCFFuzzer
swift build -c release --product tcf-fuzzer --scratch-path "$scratch" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -use-ld=lld

corpus="$scratch/corpus"
artifacts="$scratch/artifacts"
mkdir -p "$corpus" "$artifacts"
cp "$fuzzer_dir"/Corpus/* "$corpus"/

# Swift's own crash handler would hide crashes from libFuzzer; leaks are checked by AddressSanitizer.
export SWIFT_BACKTRACE=enable=no
"$scratch/release/tcf-fuzzer" "$corpus" \
    -dict="$fuzzer_dir/tcf.dict" \
    -max_total_time="$seconds" \
    -max_len=4096 \
    -timeout=10 \
    -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/" \
    -print_final_stats=1 \
    "$@"
