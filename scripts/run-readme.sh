#!/usr/bin/env bash
# Runs the README's first program (the five steps of "Use it", with the blocks that continue it) as a program built
# optimized, against a loopback server, and checks what it did: the push registration written and purged, events
# uploaded, consent granted and denied, revoke-all's receipt with its erasure request sent. `check-snippets.sh` only
# type-checks the snippets; this runs them, as an app ships them (release).
#
# The program is the README's text with three substitutions: the server's address becomes the loopback server's,
# and it runs in a temporary directory (HOME, the working directory with its AirshipConfig.plist). It is compiled
# against the release build's modules and objects (`swift build -c release` first; `--skip-build` skips it).
set -euo pipefail
cd "$(dirname "$0")/.."

[[ "${1:-}" == "--skip-build" ]] || swift build -c release > /dev/null
bin=$(swift build -c release --show-bin-path)
modules="$bin/Modules"
[[ -d "$modules" ]] || modules="$bin"
work=$(mktemp -d)
if [[ -n "${RUN_README_KEEP:-}" ]]; then echo "run-readme: keeping $work"; else trap 'rm -rf "$work"' EXIT; fi

# The loopback server, stopped by itself after 120 s at the latest.
python3 scripts/loopback-server.py "$work/requests.jsonl" "$work/port" 120 &
server=$!
trap 'kill $server 2> /dev/null || true; [[ -n "${RUN_README_KEEP:-}" ]] || rm -rf "$work"' EXIT
for _ in $(seq 100); do [[ -s "$work/port" ]] && break; sleep 0.1; done
port=$(cat "$work/port")

python3 - "$work/main.swift" "http://127.0.0.1:$port" <<'PY'
import re, sys

out, server = sys.argv[1], sys.argv[2]
lines = open("README.md").read().split("\n")
blocks, index, previous = [], 0, None
while index < len(lines):
    line = lines[index]
    if line.startswith("```swift"):
        end = index + 1
        while not lines[end].startswith("```"):
            end += 1
        if not blocks or previous == "continues":
            blocks.append("\n".join(lines[index + 1:end]))
        else:
            break
        index, previous = end + 1, None
        continue
    marker = re.match(r"^<!--\s*snippet:\s*(\w+)", line)
    if marker:
        previous = marker.group(1)
    elif line.strip():
        previous = None if not line.startswith("<!--") else previous
    index += 1
program = "\n".join(blocks)
if "https://api.example.com" not in program:
    sys.exit("run-readme: the README's program names no https://api.example.com server to replace")
program = program.replace("https://api.example.com", server)
open(out, "w").write(program + '\nprint("run-readme: the program ran to its end")\n')
print(f"run-readme: {len(blocks)} block(s), {program.count(chr(10)) + 1} lines")
PY

# The library modules' objects, as the release build left them (the C atomics target too).
objects=()
for module in CFeatureGateAtomics FeatureGate FeatureGateConfig NoopRuntime FeatureGateStack; do
    objects+=("$bin/$module.build"/*.o)
done
c_modules=()
for map in "$bin"/*.build/module.modulemap; do [[ -f "$map" ]] && c_modules+=(-Xcc "-fmodule-map-file=$map"); done
swiftc -O -swift-version 6 -I "$modules" "${c_modules[@]}" "$work/main.swift" "${objects[@]}" -o "$work/readme"

cat > "$work/AirshipConfig.plist" <<'PLIST'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
    <key>enabledFeatures</key>
    <array><string>push</string></array>
</dict>
</plist>
PLIST
mkdir -p "$work/home"
status=0
(cd "$work" && HOME="$work/home" XDG_DATA_HOME="$work/home/.local/share" timeout 60 ./readme) > "$work/out" 2>&1 \
    || status=$?
cat "$work/out"
kill $server 2> /dev/null || true
wait $server 2> /dev/null || true

python3 - "$work/out" "$work/requests.jsonl" "$status" <<'PY'
import json, os, sys

out, log, status = open(sys.argv[1]).read(), sys.argv[2], int(sys.argv[3])
requests = [json.loads(line) for line in open(log)] if os.path.exists(log) else []
failures = []
def expect(condition, what):
    print(("ok    " if condition else "FAIL  ") + what)
    if not condition:
        failures.append(what)

expect(status == 0, f"the program exits 0 (exited {status})")
expect("run-readme: the program ran to its end" in out, "the program ran to its end")
expect("analytics: " in out and "granted" in out, "the consent observer saw analytics granted")
expect("advertising: " in out and "denied" in out, "the consent observer saw advertising denied")
expect("push: 1 files removed" in out, "push's registration was written, then purged by revoke-all")
uploads = [r for r in requests if r["method"] == "POST" and r["path"].startswith("/ev")]
expect(any('"buy"' in r["body"] for r in uploads), f"an event reached the server ({len(uploads)} upload(s))")
erasures = [r for r in requests if r["method"] == "DELETE"]
expect(len(erasures) == 1, f"one erasure request reached the server ({len(erasures)})")
named = erasures[0]["path"].rsplit("/", 1)[-1] if erasures else ""
expect(len(named) == 36, f"the erasure names an identifier ({erasures[0]['path'] if erasures else 'none'})")
if named and any('"anonymousId"' in r["body"] for r in uploads):
    expect(all(named in r["body"] for r in uploads), "every upload names the identifier the erasure names")
expect("true true" in out, "the receipt: identifier reset, revocation complete")
if failures:
    sys.exit(f"run-readme: {len(failures)} check(s) failed")
print("run-readme: passed")
PY
