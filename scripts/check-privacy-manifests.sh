#!/usr/bin/env bash
# Checks each library target's privacy manifest against the code: a target that calls a required-reason API must
# ship a PrivacyInfo.xcprivacy declaring exactly the categories it uses (and Package.swift must copy it as a
# resource); every manifest must lint with plutil, declare no tracking, no tracking domains and no collected data.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v plutil >/dev/null || { echo "plutil not found (it ships with the Swift toolchain)"; exit 1; }

python3 - <<'PY'
import json, os, re, subprocess, sys

# Required-reason API categories and the calls that put a target in them (Apple's list, as far as Swift code on
# Apple platforms reaches it). Comments are stripped before matching.
CATEGORIES = {
    "NSPrivacyAccessedAPICategoryUserDefaults": r"\bUserDefaults\b",
    "NSPrivacyAccessedAPICategoryFileTimestamp":
        r"\b(stat|fstat|lstat|fstatat|getattrlist|getattrlistbulk|fgetattrlist|getattrlistat)\s*\(|"
        r"\b(creationDate|modificationDate|contentModificationDate|fileModificationDate|attributesOfItem)\b",
    "NSPrivacyAccessedAPICategorySystemBootTime": r"\b(systemUptime|mach_absolute_time)\b",
    "NSPrivacyAccessedAPICategoryDiskSpace": r"\b(volumeAvailableCapacity\w*|systemFreeSize|statfs|statvfs)\b",
    "NSPrivacyAccessedAPICategoryActiveKeyboards": r"\bactiveInputModes\b",
}
REASONS = {
    "NSPrivacyAccessedAPICategoryUserDefaults": {"CA92.1"},
    # The size and type of files inside the app's (or its app group's) container: the file layer's fstat/fstatat.
    "NSPrivacyAccessedAPICategoryFileTimestamp": {"C617.1"},
}

manifest_text = open("Package.swift").read()
failures = []
# Every library target: the library products' targets, read from Package.swift, so a new one cannot be missed.
products = re.findall(r'\.library\(\s*name:\s*"[^"]+",\s*targets:\s*\[([^\]]*)\]', manifest_text)
targets = sorted({name for group in products for name in re.findall(r'"([^"]+)"', group)})
if not targets:
    sys.exit("error: no library targets found in Package.swift")
for target in targets:
    root = os.path.join("Sources", target)
    used = set()
    for directory, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".swift"):
                continue
            code = open(os.path.join(directory, name)).read()
            code = re.sub(r"//.*", "", code)
            code = re.sub(r"/\*.*?\*/", "", code, flags=re.S)
            code = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', code)
            for category, pattern in CATEGORIES.items():
                if re.search(pattern, code):
                    used.add(category)
    path = os.path.join(root, "PrivacyInfo.xcprivacy")
    if not os.path.exists(path):
        if used:
            failures.append(f"{target}: uses {sorted(used)} but has no PrivacyInfo.xcprivacy")
        else:
            print(f"{target}: no required-reason API used, no manifest needed")
        continue
    lint = subprocess.run(["plutil", "-lint", path], capture_output=True, text=True)
    if lint.returncode != 0:
        failures.append(f"{path}: plutil -lint failed: {lint.stdout.strip()} {lint.stderr.strip()}")
        continue
    plist = json.loads(subprocess.run(["plutil", "-convert", "json", "-o", "-", path],
                                      capture_output=True, text=True, check=True).stdout)
    if plist.get("NSPrivacyTracking") is not False:
        failures.append(f"{path}: NSPrivacyTracking: expected false, found {plist.get('NSPrivacyTracking')!r}")
    if plist.get("NSPrivacyTrackingDomains") != []:
        failures.append(f"{path}: NSPrivacyTrackingDomains: expected [], found {plist.get('NSPrivacyTrackingDomains')!r}")
    if plist.get("NSPrivacyCollectedDataTypes") != []:
        failures.append(f"{path}: NSPrivacyCollectedDataTypes: expected [], found {plist.get('NSPrivacyCollectedDataTypes')!r}")
    declared = {}
    for entry in plist.get("NSPrivacyAccessedAPITypes", []):
        declared[entry.get("NSPrivacyAccessedAPIType")] = set(entry.get("NSPrivacyAccessedAPITypeReasons", []))
    if set(declared) != used:
        failures.append(f"{path}: declares {sorted(declared)}, but the code uses {sorted(used)}")
    for category, reasons in declared.items():
        if not reasons:
            failures.append(f"{path}: {category} declares no reason")
        expected = REASONS.get(category)
        if expected is not None and reasons != expected:
            failures.append(f"{path}: {category} reasons: expected {sorted(expected)}, found {sorted(reasons)}")
    target_decl = re.search(r'\.target\(\s*name:\s*"%s".*?\)\s*,\s*\n' % target, manifest_text, re.S)
    if not target_decl or "PrivacyInfo.xcprivacy" not in target_decl.group(0):
        failures.append(f"Package.swift: target {target} does not copy PrivacyInfo.xcprivacy as a resource")
    print(f"{target}: {path} OK ({', '.join(sorted(used)) or 'no required-reason API'})")

for failure in failures:
    print("error:", failure)
sys.exit(1 if failures else 0)
PY
