#!/usr/bin/env python3
"""Instructions per operation of cuwrap's hot paths against raw driver calls.

Runs the harness (bench/instructions/instructions.cpp) on the software driver in immediate
mode: natively with --calls, for the driver's call counters, then twice under callgrind with
--run, collecting only inside cuwrap_perf_measure (--toggle-collect, --zero-before) and dumping
after each call, so that dump i holds the i-th loop the harness reports. The first run counts
everything; the second also toggles collection off inside every driver function of cuwrap's
table (--symbols), so it counts the instructions outside the driver: the caller's and cuwrap's,
which do not depend on the driver's state. The difference compares those. Prints a table
(--markdown: a Markdown one). With --check it fails when a hot-path operation adds more
instructions than its budget (budgets.txt next to this script, or --budgets FILE) or makes
another number of driver calls than expected.

  count.py HARNESS KERNELS_DIR [--valgrind PATH] [--budgets FILE] [--check] [--markdown]
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

DEFAULT_BUDGET = 25.0


def harness(args, mode, env, prefix=()):
    cmd = [*prefix, args.harness, args.kernels_dir, mode]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return [line.split(" ", 1) for line in done.stdout.splitlines() if line]


def callgrind_total(path):
    with open(path) as f:
        for line in f:
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    sys.exit(f"{path}: no totals line")


def callgrind(args, env, skipped):
    """Instructions per operation {op: {"raw": n, "cuwrap": n}} inside cuwrap_perf_measure, less
    those inside the functions `skipped` (collection toggles off on entering them)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        valgrind = [args.valgrind, "--tool=callgrind", f"--callgrind-out-file={out}",
                    "--collect-atstart=no", "--toggle-collect=cuwrap_perf_measure",
                    "--zero-before=cuwrap_perf_measure", "--dump-after=cuwrap_perf_measure"]
        valgrind += [f"--toggle-collect={name}" for name in skipped]
        measured = [rest.split() for _, rest in harness(args, "--run", env, valgrind)]
        dumps = sorted(glob.glob(out + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]))
        if len(dumps) < len(measured):
            sys.exit(f"expected {len(measured)} callgrind dumps, got {len(dumps)}")
        per_op = {}
        for (op, side, n), dump in zip(measured, dumps):
            per_op.setdefault(op, {})[side] = callgrind_total(dump) / int(n)
        return per_op


def budgets(path):
    table = {}
    with open(path) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if words:
                table[words[0]] = float(words[1])
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("harness")
    parser.add_argument("kernels_dir")
    parser.add_argument("--valgrind", default="valgrind")
    parser.add_argument("--budgets", default=os.path.join(os.path.dirname(__file__), "budgets.txt"))
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()

    env = dict(os.environ, CUWRAP_DRIVER="software", SWCUDA_EXEC="immediate", LD_BIND_NOW="1")
    env.pop("SWCUDA_FAULTS", None)
    status = dict(harness(args, "--list", env))
    calls = {}
    for _, rest in harness(args, "--calls", env):
        op, raw, wrapped, n, expected = rest.split()
        calls[op] = (int(raw) / int(n), int(wrapped) / int(n), int(expected))

    everything = callgrind(args, env, [])
    symbols = [rest for rest, *_ in harness(args, "--symbols", env)]
    outside = callgrind(args, env, symbols)

    limits = budgets(args.budgets)
    failures = []
    rows = []
    for op, state in status.items():
        if op not in outside:
            rows.append((op, "-", "-", "-", "-", "-", "-", state))
            continue
        raw, wrapped = outside[op]["raw"], outside[op]["cuwrap"]
        driver = everything[op]["raw"] - raw
        diff = wrapped - raw
        raw_calls, wrapped_calls, expected = calls[op]
        hot = expected != 0  # the others are reported, not checked
        budget = limits.get(op, DEFAULT_BUDGET)
        problems = []
        if hot and diff > budget:
            problems.append(f"cuwrap adds {diff:.1f} instructions per operation; the budget is "
                            f"{budget:g}")
        if hot and (wrapped_calls != expected or raw_calls != expected):
            problems.append(f"{wrapped_calls:g} driver calls per operation through cuwrap, "
                            f"{raw_calls:g} raw; expected {expected}")
        if raw > 100:  # a raw loop is a call and a check: the driver was not left out
            problems.append(f"{raw:.0f} raw instructions per operation outside the driver; "
                            "is a driver function missing from --symbols?")
        failures += [f"{op}: {p}" for p in problems]
        state = ("fails: see below" if problems else "ok") if hot else "not a hot path: not checked"
        rows.append((op, f"{driver:.0f}", f"{raw:.1f}", f"{wrapped:.1f}", f"{diff:+.1f}",
                     f"{budget:g}" if hot else "-", f"{raw_calls:g} / {wrapped_calls:g}", state))

    head = ("operation", "in the driver", "raw", "cuwrap", "difference", "budget",
            "driver calls raw / cuwrap", "status")
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|---|" + "---:|" * 6 + "---|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head) - 1)]
        for row in [head, *rows]:
            cells = [row[0].ljust(widths[0])]
            cells += [c.rjust(w) for c, w in zip(row[1:-1], widths[1:])]
            print("  ".join(cells + [row[-1]]))
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
