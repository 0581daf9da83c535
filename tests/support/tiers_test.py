#!/usr/bin/env python3
"""Every ctest test of a build carries exactly one tier label (unit,
integration or system: cmake/ZstoreTestTiers.cmake). Reads the suite from
`ctest --show-only=json-v1` and names each test with no tier or two.
  usage: tiers_test.py CTEST BUILD_DIR"""
import json
import subprocess
import sys

TIERS = ("unit", "integration", "system")


def labels_of(test):
    for prop in test.get("properties", []):
        if prop["name"] == "LABELS":
            return prop["value"]
    return []


def mistiered(tests):
    """(name, tiers) of each test whose labels hold no tier or more than one."""
    bad = []
    for test in tests:
        tiers = [label for label in labels_of(test) if label in TIERS]
        if len(tiers) != 1:
            bad.append((test["name"], tiers))
    return bad


def check_the_checker():
    """The check names a test without a tier and one with two, not a good one."""
    fake = [
        {"name": "good", "properties": [{"name": "LABELS", "value": ["protocol", "unit"]}]},
        {"name": "none", "properties": [{"name": "LABELS", "value": ["ops"]}]},
        {"name": "bare"},
        {"name": "two", "properties": [{"name": "LABELS", "value": ["unit", "ops", "system"]}]},
    ]
    got = mistiered(fake)
    want = [("none", []), ("bare", []), ("two", ["unit", "system"])]
    if got != want:
        print(f"FAILED: the check itself: {got} != {want}")
        sys.exit(1)


def main(ctest, build_dir):
    check_the_checker()
    out = subprocess.run([ctest, "--show-only=json-v1"], cwd=build_dir, check=True,
                         capture_output=True, text=True).stdout
    tests = json.loads(out)["tests"]
    bad = mistiered(tests)
    for name, tiers in bad:
        print(f"FAILED: {name}: tiers {tiers or 'none'}, want exactly one of {', '.join(TIERS)}")
    counts = {tier: sum(tier in labels_of(t) for t in tests) for tier in TIERS}
    print(f"{len(tests)} tests: " + ", ".join(f"{n} {tier}" for tier, n in counts.items()))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
