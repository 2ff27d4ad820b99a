#!/usr/bin/env bash
# Compiles every Apple-only line of the package here, on Linux: the branches under `#if canImport(Darwin)`,
# `canImport(AppTrackingTransparency)`, `canImport(AdSupport)`, `canImport(CryptoKit)`, `os(iOS)`, `os(visionOS)`…
# that no Linux build ever selects. A compile error in the project's own code in one of them fails the script.
#
#   scripts/check-apple-branches.sh     # every target as for iOS, then the targets with `os(...)` conditions as
#                                       # visionOS, tvOS, watchOS and macOS
#
# The generated package stays in .build-apple/package (with its build log), for a look and for incremental builds.
#
# How:
# 1. Copies Package.swift, Sources, Tests and Examples into .build-apple/stage (rsync).
# 2. Rewrites the conditions of every `#if` / `#elseif` so that an Apple platform's branches are selected:
#    `canImport(Glibc | Musl | Android | FoundationNetworking | …)` → false, `canImport(M)` → true for every shim
#    module M below that the platform has (its `platforms` file; all Apple platforms without one),
#    `os(<the platform>)` → true and every other `os(...)` → false, `targetEnvironment(simulator)` →
#    false. A `canImport(M)` of a module that is neither known to be Linux-only nor shimmed fails the script: add a
#    shim (below) so that its branch is compiled too. Then copies the staged files whose content differs into
#    .build-apple/package (unchanged files keep their times, so each platform, and the next run, builds
#    incrementally).
# 3. Adds one target per shim module (scripts/apple-shims/<Module>/*.swift) to the copied Package.swift, makes every
#    Swift target depend on all of them, and imports AppleSDKAdditions implicitly into every file (what Apple's
#    Foundation and Dispatch declare that Linux's lack, such as CoreFoundation's CFGetTypeID).
# 4. Turns every test target of the copy into a regular target (same sources, dependencies and settings), so that one
#    `swift build` compiles every module, the tests' included, but not the test runner, which SwiftPM generates
#    differently once a module named Darwin exists. One invocation instead of one per test target: SwiftPM plans the
#    build once and compiles independent modules side by side.
#
# The shims (scripts/apple-shims/): declarations written from Apple's documentation, each marked with the page it
# came from, with the SDK's signatures, Sendable conformances and @MainActor / @Sendable closure annotations. Bodies
# are `fatalError("shim")`: nothing runs, the point is that the project's code type-checks against the SDK's shapes.
# - Darwin: re-exports Glibc and adds what Darwin has that Glibc does not (O_EVTONLY, F_FULLFSYNC…) or types
#   differently (SOCK_STREAM is Int32 on Darwin, an enum case in Glibc).
# - AppleSDKAdditions: Apple-only declarations of modules Linux also has (Foundation, Dispatch); it re-exports
#   Darwin, as Apple's Foundation does, so a file that imports Foundation alone sees Darwin's libc there too.
# - AppTrackingTransparency, AdSupport, CryptoKit: the parts the package uses.
#
# To add a framework (say, an adapter over DeclaredAgeRange under `#if canImport(DeclaredAgeRange)`):
# 1. Create scripts/apple-shims/DeclaredAgeRange/DeclaredAgeRange.swift with the declarations the adapter uses,
#    copied by hand from the framework's documentation pages (one `/// https://developer.apple.com/...` line per
#    declaration), keeping `@available`, `Sendable`, `@MainActor` and `@Sendable` exactly as the SDK declares them.
#    If the framework is missing on some Apple platforms, list those it exists on in a `platforms` file beside it
#    (one line, such as `iOS macOS`): `canImport` is then false on the others, as there. A shim that imports another
#    shim (DeclaredAgeRange's iOS method takes UIKit's UIViewController) names it in a `dependencies` file beside it.
# 2. That is all: every directory of scripts/apple-shims becomes a module, `canImport(DeclaredAgeRange)` becomes
#    true, and every target may import it. If the framework's types are in a module Linux has (Foundation…), put them
#    in AppleSDKAdditions instead. Add the APIs and the OS versions that introduced them to
#    scripts/apple-api-availability.tsv, so the availability check (scripts/check-availability.py) knows them.
#
# What it cannot check: availability (Linux ignores `@available`; scripts/check-availability.py does that from a
# table), and run-time behaviour (.github/workflows/apple.yml builds and tests on macOS and the simulators).
set -euo pipefail
cd "$(dirname "$0")/.."

root=$(pwd)
work="$root/.build-apple"
package="$work/package"
stage="$work/stage"
mkdir -p "$package" "$stage"
command -v python3 > /dev/null || { apt-get update -qq && apt-get install -y -qq python3 > /dev/null; }
command -v rsync > /dev/null || { apt-get update -qq && apt-get install -y -qq rsync > /dev/null; }

# Linux-only modules (false on every Apple platform) and the platforms whose branches are compiled.
export LINUX_ONLY_MODULES="Glibc Musl Android Bionic WASILibc WinSDK ucrt CRT FoundationNetworking FoundationXML"

prepare() { # $1: the Apple platform whose `os(...)` is true
    # Rewritten in a staging copy, then copied into the package only where the content differs (no -t: an unchanged
    # file keeps its time; -l keeps the symbolic links). Rewriting in place would touch every file with a
    # `canImport` condition on every platform, and SwiftPM would rebuild FeatureGate and everything above it four
    # more times; this way a platform rebuilds only the files whose conditions read differently on it (`os(...)`, or
    # `canImport` of a shim that lists its platforms), and what depends on them.
    rsync -a --delete --exclude '.build*' "$root/Package.swift" "$root/Sources" "$root/Tests" "$root/Examples" \
        "$stage/"
    rsync -a --delete --exclude platforms --exclude dependencies "$root/scripts/apple-shims/" "$stage/AppleShims/"
    python3 - "$stage" "$1" "$root/scripts/apple-shims" <<'PY'
import json, os, re, sys

package, platform, shim_sources = sys.argv[1], sys.argv[2], sys.argv[3]
shims = sorted(d for d in os.listdir(shim_sources) if os.path.isdir(os.path.join(shim_sources, d)))

def shim_exists_on(module):
    listed = os.path.join(shim_sources, module, "platforms")
    return not os.path.exists(listed) or platform in open(listed).read().split()
linux_only = set(os.environ["LINUX_ONLY_MODULES"].split())
# Modules that exist on Apple platforms and on Linux alike: canImport is true either way.
everywhere = {"Foundation", "FoundationEssentials", "Dispatch", "Observation", "Synchronization", "Testing", "XCTest",
              "_Concurrency", "RegexBuilder"}
unknown = []

def rewrite_condition(condition, path, number):
    def can_import(match):
        module = match.group(1).split(".")[0]
        if module in linux_only:
            return "false"
        if module in shims:
            return "true" if shim_exists_on(module) else "false"
        if module in everywhere:
            return "true"
        unknown.append(f"{path}:{number}: canImport({module}) has no shim in scripts/apple-shims")
        return match.group(0)
    condition = re.sub(r"canImport\(\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(?:,[^)]*)?\)", can_import, condition)
    condition = re.sub(r"\bos\(\s*(\w+)\s*\)", lambda m: "true" if m.group(1) == platform else "false", condition)
    condition = re.sub(r"targetEnvironment\(\s*\w+\s*\)", "false", condition)
    return condition

for top in ("Sources", "Tests", "Examples"):
    for directory, _, files in os.walk(os.path.join(package, top)):
        for name in files:
            if not name.endswith(".swift"):
                continue
            path = os.path.join(directory, name)
            lines = open(path).read().split("\n")
            changed = False
            for index, line in enumerate(lines):
                match = re.match(r"^(\s*#(?:if|elseif)\s+)(.*)$", line)
                if match:
                    rewritten = match.group(1) + rewrite_condition(match.group(2), path, index + 1)
                    if rewritten != line:
                        lines[index], changed = rewritten, True
            if changed:
                text = "\n".join(lines)
                if open(path).read() != text:
                    open(path, "w").write(text)
if unknown:
    print("\n".join(unknown), file=sys.stderr)
    sys.exit(2)

# The shim targets, appended to the copied manifest. A shim that imports another lists it in a `dependencies` file.
def shim_dependencies(module):
    listed = os.path.join(shim_sources, module, "dependencies")
    return (["Darwin"] if module != "Darwin" else []) + (open(listed).read().split() if os.path.exists(listed) else [])

c_targets = sorted(d for top in ("Sources", "Tests") if os.path.isdir(os.path.join(package, top))
                   for d in os.listdir(os.path.join(package, top))
                   if os.path.isdir(os.path.join(package, top, d, "include")))
manifest = os.path.join(package, "Package.swift")
text = open(manifest).read().split("\n// Apple shims (check-apple-branches.sh)")[0]
text += f"""
// Apple shims (check-apple-branches.sh)
let appleShims = {json.dumps(shims)}
let appleShimDependencies: [String: [String]] = [{", ".join(f"{json.dumps(m)}: {json.dumps(shim_dependencies(m))}" for m in shims)}]
let cTargets: Set<String> = {json.dumps(c_targets) if c_targets else "[]"}
for target in package.targets where !cTargets.contains(target.name) {{
    target.dependencies += appleShims.map {{ .target(name: $0) }}
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .unsafeFlags(["-Xfrontend", "-import-module", "-Xfrontend", "AppleSDKAdditions"])
    ]
}}
// Test targets as regular targets: `swift build` compiles their modules without generating the test runner.
package.targets = package.targets.map {{ target in
    guard target.type == .test else {{ return target }}
    return .target(
        name: target.name, dependencies: target.dependencies, path: target.path ?? "Tests/\\(target.name)",
        exclude: target.exclude, sources: target.sources, resources: target.resources, cSettings: target.cSettings,
        cxxSettings: target.cxxSettings, swiftSettings: target.swiftSettings, linkerSettings: target.linkerSettings,
        plugins: target.plugins)
}}
package.targets += appleShims.map {{ name in
    .target(
        name: name, dependencies: appleShimDependencies[name, default: []].map {{ .target(name: $0) }},
        path: "AppleShims/\\(name)")
}}
"""
open(manifest, "w").write(text)
PY
    rsync -rl --checksum --delete "$stage/Package.swift" "$stage/Sources" "$stage/Tests" "$stage/Examples" \
        "$stage/AppleShims" "$package/"
}

build() { # $1: platform; rest: the targets this platform selects different branches in (none: every target)
    local platform=$1
    shift
    local log="$work/build-$platform.log"
    # Every module, the tests' included (step 4). After the first platform, only the files whose content this
    # platform changes are rebuilt, and what depends on them.
    echo "$platform: ${*:-every target}"
    (cd "$package" && swift build --scratch-path "$work/scratch" 2>&1) > "$log" || fail "$platform" "$log"
}

fail() {
    echo "error: the $1 branches do not compile against the Apple shims:"
    # The project's files, with the original paths.
    grep -E "^(\S+:[0-9]+:[0-9]+: )?error:" "$2" | sed "s|$package/||" | sort -u | head -50
    echo "(full log: $2)"
    exit 1
}

# Targets whose sources have an `os(...)` condition are compiled once per Apple platform; the rest once.
os_targets() {
    python3 - "$root" <<'PY'
import json, os, re, subprocess, sys
root = sys.argv[1]
dump = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=root, capture_output=True, text=True,
                                 check=True).stdout)
names = []
for target in dump["targets"]:
    path = target.get("path") or os.path.join("Tests" if target["type"] == "test" else "Sources", target["name"])
    for directory, _, files in os.walk(os.path.join(root, path)):
        if any(f.endswith(".swift") and re.search(r"^\s*#(?:if|elseif)\b.*\bos\(",
                                                   open(os.path.join(directory, f)).read(), re.M) for f in files):
            names.append(target["name"])
            break
print(" ".join(names))
PY
}

prepare iOS
build iOS
extra=$(os_targets)
if [[ -n "$extra" ]]; then
    # macOS last: its `os(macOS) || os(Linux)` branches differ from every other Apple platform's, which read alike
    # in most files, so this order rebuilds those files once rather than twice.
    for platform in visionOS tvOS watchOS macOS; do
        prepare "$platform"
        # shellcheck disable=SC2086
        build "$platform" $extra
    done
fi
echo "ok: every Apple branch compiles against the shims (iOS; $([[ -n "$extra" ]] && echo "visionOS, tvOS, watchOS, macOS for $extra" || echo "no os() conditions"))"
