#!/usr/bin/env bash
# Fails when a `@TaskLocal` of the package (sources, tests, examples, benchmarks) holds a value of function type.
# Swift 6.3.1 miscompiles `withValue` for such a value with -O: the push reads a null type metadata and crashes
# (SIGSEGV in swift_task_localValuePush) where the debug build runs. Wrap the closure in a nominal type instead;
# `WriteAdmission` in Sources/FeatureGate/Store/Files/LockWait.swift has the reduced case.
set -euo pipefail
cd "$(dirname "$0")/.."
# Declarations only: comment lines (the reduced case is quoted in one) are passed over.
found=$(grep -rnE --include='*.swift' '@TaskLocal[^:]*:[^=]*->' Sources Tests Examples Benchmarks \
    | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//' || true)
if [[ -n "$found" ]]; then
    echo "a task-local of function type crashes optimized builds; wrap the closure in a struct or final class:"
    echo "$found"
    exit 1
fi
echo "no task-local of function type"
