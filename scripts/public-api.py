#!/usr/bin/env python3
"""Renders the public API of the package's library modules from their symbol graphs, one line per symbol, sorted.

Usage: public-api.py SYMBOLGRAPH_DIR OUT_DIR   writes OUT_DIR/<Module>.txt for every library module
       public-api.py SYMBOLGRAPH_DIR --count   prints the counts (top-level types, all types, functions, properties)
A line is `<kind> <path>: <declaration>`, the declaration as the compiler prints it, `[deprecated]` appended when
the symbol is. Output depends only on the symbol graphs, so the same sources give the same bytes.
"""
import json
import os
import subprocess
import sys


def library_modules():
    """The Swift targets of the package's library products, from `swift package dump-package`."""
    package = json.loads(subprocess.run(["swift", "package", "dump-package"], check=True, capture_output=True).stdout)
    products = [product for product in package["products"] if "library" in product["type"]]
    swift = {target["name"] for target in package["targets"] if not target["name"].startswith("C")}
    return sorted({name for product in products for name in product["targets"] if name in swift})


TYPES = {"swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.typealias", "swift.actor"}
FUNCTIONS = {"swift.func", "swift.method", "swift.type.method", "swift.init", "swift.func.op", "swift.subscript",
             "swift.type.subscript"}
PROPERTIES = {"swift.property", "swift.type.property", "swift.var", "swift.enum.case"}


def symbols(directory, module):
    """The public symbols of `module`: its own (a member only when its top-level type is public too: a public
    member of a `package` type is not public API) and its extensions of other modules' types."""
    found = []
    for name in sorted(os.listdir(directory)):
        if name == f"{module}.symbols.json" or name.startswith(f"{module}@"):
            with open(os.path.join(directory, name)) as file:
                graph = json.load(file)
            public = [s for s in graph["symbols"] if s.get("accessLevel") in ("public", "open")]
            if "@" not in name:
                top = {s["pathComponents"][0] for s in public if len(s["pathComponents"]) == 1}
                public = [s for s in public if s["pathComponents"][0] in top]
            found.extend(public)
    return found


def line(symbol):
    kind = symbol["kind"]["identifier"].removeprefix("swift.")
    path = ".".join(symbol["pathComponents"])
    declaration = "".join(f["spelling"] for f in symbol.get("declarationFragments", []))
    deprecated = any(a.get("isUnconditionallyDeprecated") or "deprecated" in a
                     for a in symbol.get("availability", []))
    return f"{kind} {path}: {' '.join(declaration.split())}" + (" [deprecated]" if deprecated else "")


def main():
    directory, target = sys.argv[1], sys.argv[2]
    modules = library_modules()
    if target == "--count":
        top = types = functions = properties = 0
        for module in modules:
            for symbol in symbols(directory, module):
                kind = symbol["kind"]["identifier"]
                if kind in TYPES:
                    types += 1
                    top += len(symbol["pathComponents"]) == 1
                functions += kind in FUNCTIONS
                properties += kind in PROPERTIES
        print(f"top-level types {top}, types {types}, functions and initializers {functions}, properties {properties}")
        return
    os.makedirs(target, exist_ok=True)
    for module in modules:
        lines = sorted(set(line(symbol) for symbol in symbols(directory, module)))
        with open(os.path.join(target, f"{module}.txt"), "w") as file:
            file.write(f"# The public API of {module} as the Linux build sees it (Apple-only code is not listed):\n"
                       "# scripts/check-public-api.sh --update regenerates this file.\n")
            file.writelines(entry + "\n" for entry in lines)


main()
