#!/usr/bin/env python3
"""Fails when the package's Swift code uses an Apple API introduced after the package's floor without a guard.

    python3 scripts/check-availability.py

Linux never checks `@available`, and the Apple-branch compile (scripts/check-apple-branches.sh) builds against shims
that carry no availability, so this check reads the code instead. scripts/apple-api-availability.tsv lists the
Apple APIs the package uses (or must not use unguarded) and the OS versions that introduced each, from Apple's
documentation. The floors are read from Package.swift's `platforms:`.

A use counts as guarded when it lies inside an `@available(...)` declaration (from the attribute to the end of the
body that follows it), an `if #available(...) { ... }` block, or after a `guard #available(...) else { ... }` in the
same block, naming at least the introducing version for every platform whose floor is below it. Comments and string
literals are ignored. Limits: a guard is matched by braces, so an `@available` on a declaration without a body (a
stored property) counts for the next body too; an API missing from the table is not checked: add it there.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLATFORMS = ["iOS", "macOS", "tvOS", "watchOS", "visionOS"]
SCANNED = ["Sources", "Tests", "Examples"]


def version(text):
    return tuple(int(part) for part in text.split("."))


def floors():
    manifest = open(os.path.join(ROOT, "Package.swift")).read()
    found = {}
    for name, major, minor in re.findall(r"\.(iOS|macOS|tvOS|watchOS|visionOS)\(\.v(\d+)(?:_(\d+))?\)", manifest):
        found[name] = (int(major), int(minor or 0))
    missing = [p for p in PLATFORMS if p not in found]
    if missing:
        sys.exit(f"Package.swift declares no floor for {', '.join(missing)}")
    return found


def table():
    rows = []
    for number, line in enumerate(open(os.path.join(ROOT, "scripts", "apple-api-availability.tsv")), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.rstrip("\n").split("\t")
        if len(fields) != 8:
            sys.exit(f"apple-api-availability.tsv:{number}: expected 8 tab-separated fields, found {len(fields)}")
        pattern, api, *versions, page = fields
        introduced = {p: (None if v == "-" else version(v)) for p, v in zip(PLATFORMS, versions)}
        rows.append((re.compile(pattern), api, introduced, page))
    return rows


def blank_comments_and_strings(source):
    """The source with comments and string literals replaced by spaces (newlines kept), so offsets still match."""
    out = list(source)
    i, n = 0, len(source)

    def blank(start, end):
        for k in range(start, end):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        if source.startswith("//", i):
            end = source.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif source.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if source.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif source.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif source.startswith('"""', i):
            end = source.find('"""', i + 3)
            end = n if end < 0 else end + 3
            blank(i, end)
            i = end
        elif source[i] == '"':
            j = i + 1
            while j < n and source[j] not in '"\n':
                j += 2 if source[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
        else:
            i += 1
    return "".join(out)


def matching_brace(code, opening):
    depth = 0
    for k in range(opening, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(code)


def enclosing_block_end(code, position):
    depth = 0
    for k in range(position, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            if depth == 0:
                return k
            depth -= 1
    return len(code)


def guards(code):
    """(start, end, {platform: version}) for every availability guard in `code`."""
    found = []
    for match in re.finditer(r"([@#])available\s*\(([^)]*)\)", code):
        versions = {}
        for name, text in re.findall(r"\b(iOS|macOS|tvOS|watchOS|visionOS)\s+(\d+(?:\.\d+)*)", match.group(2)):
            versions[name] = version(text)
        if not versions:
            continue
        if match.group(1) == "@":
            opening = code.find("{", match.end())
            if opening < 0:
                continue
            found.append((match.start(), matching_brace(code, opening), versions))
        else:
            before = code[max(0, match.start() - 40):match.start()]
            opening = code.find("{", match.end())
            if opening < 0:
                continue
            if re.search(r"\bguard\s+$", before):
                else_end = matching_brace(code, opening)
                found.append((else_end, enclosing_block_end(code, else_end + 1), versions))
            else:
                found.append((match.start(), matching_brace(code, opening), versions))
    return found


def main():
    floor = floors()
    rows = table()
    failures = []
    for top in SCANNED:
        for directory, _, files in os.walk(os.path.join(ROOT, top)):
            for name in sorted(files):
                if not name.endswith(".swift"):
                    continue
                path = os.path.join(directory, name)
                code = blank_comments_and_strings(open(path).read())
                scopes = guards(code)
                for pattern, api, introduced, page in rows:
                    for match in pattern.finditer(code):
                        needed = {p: v for p, v in introduced.items() if v is not None and v > floor[p]}
                        if not needed:
                            continue
                        covered = {}
                        for start, end, versions in scopes:
                            if start <= match.start() <= end:
                                for p, v in versions.items():
                                    covered[p] = max(covered.get(p, v), v)
                        short = [p for p, v in needed.items() if covered.get(p, (0,)) < v]
                        if short:
                            line = code.count("\n", 0, match.start()) + 1
                            wants = ", ".join(f"{p} {'.'.join(map(str, needed[p]))}" for p in short)
                            failures.append(
                                f"{os.path.relpath(path, ROOT)}:{line}: {api} needs {wants} (above the floor) "
                                f"without @available/#available: {page}")
    if failures:
        print("\n".join(failures))
        print(f"error: {len(failures)} use(s) of APIs newer than the floor without a guard")
        return 1
    print(f"ok: {len(rows)} APIs checked in {', '.join(SCANNED)} against the floors "
          + ", ".join(f"{p} {'.'.join(map(str, floor[p])).removesuffix('.0')}" for p in PLATFORMS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
