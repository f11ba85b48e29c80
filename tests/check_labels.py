#!/usr/bin/env python3
"""Checks the CTest lanes: every test carries exactly one lane label (unit, sw, swdriver, gpu,
perf), optionally `sample`, and its name starts with "<lane>." so a lane can be picked by label
or by name. Reads `ctest --show-only=json-v1` of the build tree it is given."""
import argparse
import json
import subprocess
import sys

LANES = {"unit", "sw", "swdriver", "gpu", "perf"}
EXTRA = {"sample"}


def labels_of(test):
    for prop in test.get("properties", []):
        if prop["name"] == "LABELS":
            return list(prop["value"])
    return []


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ctest", required=True)
    parser.add_argument("--build-dir", required=True)
    args = parser.parse_args()
    listing = subprocess.run([args.ctest, "--test-dir", args.build_dir, "--show-only=json-v1"],
                             check=True, capture_output=True, text=True).stdout
    tests = json.loads(listing)["tests"]
    problems = []
    for test in tests:
        name, labels = test["name"], labels_of(test)
        lanes = [label for label in labels if label in LANES]
        unknown = [label for label in labels if label not in LANES | EXTRA]
        if len(lanes) != 1:
            problems.append(f"'{name}': lane labels {lanes}, expected exactly one of {sorted(LANES)}")
        elif not name.startswith(lanes[0] + "."):
            problems.append(f"'{name}': label '{lanes[0]}' but the name does not start with "
                            f"'{lanes[0]}.'")
        if unknown:
            problems.append(f"'{name}': unknown labels {unknown}")
    for problem in problems:
        print(problem)
    print(f"check_labels: {len(tests)} tests, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
