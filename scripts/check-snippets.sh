#!/usr/bin/env bash
# Type-checks every ```swift block of README.md and the DocC articles (Sources/*/*.docc/*.md) against the package's
# built modules, in Swift 6 mode, so a snippet that stops compiling fails CI. Reuses the debug build in .build: it
# runs `swift build` (a no-op when `swift test` has just built; `--skip-build` skips it) and calls `swiftc -typecheck` once per snippet.
#
# How a block is compiled (markers are HTML comments on the line right before the opening fence):
# - Each block is its own program. A block that imports anything must import all it uses (the README's blocks
#   do); one that shows no `import` (a DocC fragment) gets Foundation and every library module.
# - `<!-- snippet: continues -->`: the block continues the previous block of the same file (same program).
# - `<!-- snippet: apple-only: REASON -->`: uses an Apple framework; skipped on Linux with REASON.
# - `<!-- snippet: skip: REASON -->`: not Swift source of a program (a Package.swift fragment); never compiled.
# - Names an article assumes the reader has (`privacy`, `consent`, `httpClient`...) are declared, with their types,
#   in scripts/snippets/SnippetContext.swift, which every block imports.
set -euo pipefail
cd "$(dirname "$0")/.."

[[ "${1:-}" == "--skip-build" ]] || swift build > /dev/null
bin=$(swift build --show-bin-path)
modules="$bin/Modules"
[[ -d "$modules" ]] || modules="$bin"
# The C module the libraries import (CFeatureGateAtomics: the gate's C11 atomics), as SwiftPM's module map names it.
c_modules=()
for map in "$bin"/*.build/module.modulemap; do [[ -f "$map" ]] && c_modules+=(-Xcc "-fmodule-map-file=$map"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

swiftc -swift-version 6 -parse-as-library -I "$modules" "${c_modules[@]}" -module-name SnippetContext \
    -emit-module -emit-module-path "$work/SnippetContext.swiftmodule" scripts/snippets/SnippetContext.swift

python3 - "$work" "$(uname -s)" <<'PY'
import glob, os, re, sys

work, system = sys.argv[1], sys.argv[2]
LIBRARIES = ["FeatureGate", "FeatureGateConfig", "FeatureGateIAB", "FeatureGateTracking", "NoopRuntime"]
files = ["README.md"] + sorted(glob.glob("Sources/*/*.docc/*.md"))
marker = re.compile(r"^<!--\s*snippet:\s*(continues|apple-only|skip)\s*(?::\s*(.*?))?\s*-->\s*$")
programs, skipped = [], []
for path in files:
    lines = open(path).read().split("\n")
    previous_marker, index = None, 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("```swift"):
            start = index + 1
            end = start
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            body = "\n".join(lines[start:end])
            kind, reason = previous_marker or (None, None)
            where = f"{path}:{start}"
            if kind == "skip" or (kind == "apple-only" and system != "Darwin"):
                skipped.append(f"{where}: skipped ({'Apple platforms only: ' if kind == 'apple-only' else ''}{reason})")
            elif kind == "continues":
                if not programs or programs[-1]["path"] != path:
                    sys.exit(f"{where}: marked `continues` but no earlier block of this file is compiled")
                programs[-1]["blocks"].append((start, body))
            else:
                programs.append({"path": path, "blocks": [(start, body)]})
            index = end + 1
            previous_marker = None
            continue
        match = marker.match(line.strip())
        previous_marker = (match.group(1), match.group(2)) if match else None
        index += 1

for number, program in enumerate(programs):
    source = "\n".join(body for _, body in program["blocks"])
    imports = [l for l in source.split("\n") if re.match(r"\s*import\s+\w+", l)]
    rest = [l for l in source.split("\n") if l not in imports]
    header = ["import SnippetContext"]
    if imports:
        header += [l.strip() for l in dict.fromkeys(imports)]
    else:
        header += ["import Foundation"] + [f"import {m}" for m in LIBRARIES]
    # Imports first (a continuation may import what it adds); `#sourceLocation` keeps errors on the Markdown lines.
    out = header[:]
    for start, body in program["blocks"]:
        out.append(f'#sourceLocation(file: "{program["path"]}", line: {start + 1})')
        out += [l for l in body.split("\n") if l not in imports]
    out.append("#sourceLocation()")
    name = os.path.join(work, f"snippet{number}.swift")
    open(name, "w").write("\n".join(out) + "\n")
    program["file"] = name

open(os.path.join(work, "list"), "w").write(
    "".join(f"{p['file']}\t{p['path']}:{p['blocks'][0][0]}\n" for p in programs))
for line in skipped:
    print(line)
PY

status=0
count=0
while IFS=$'\t' read -r file where; do
    count=$((count + 1))
    if ! swiftc -typecheck -suppress-warnings -swift-version 6 -I "$modules" "${c_modules[@]}" -I "$work" "$file" 2>&1; then
        echo "error: the snippet at $where does not compile"
        status=1
    fi
done < "$work/list"
[[ $status == 0 ]] && echo "$count snippets compile"
exit $status
