#!/usr/bin/env python3
"""Markdown table of a cuwrap_bench JSON file (--benchmark_out): ns per operation, raw against
cuwrap, paired by name (raw/<op>, cuwrap/<op>). With repetitions the median is used. Wall time by
default; --cpu reports the process's CPU time instead (for the software driver, which does all
its work on the calling thread, and is steadier than wall time on a busy machine).

  report.py [--cpu] RESULTS.json > RESULTS.md
"""
import json
import sys

TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def main():
    args = sys.argv[1:]
    cpu = "--cpu" in args
    args = [a for a in args if a != "--cpu"]
    if len(args) != 1:
        sys.exit(__doc__.strip())
    key = "cpu_time" if cpu else "real_time"
    with open(args[0]) as f:
        data = json.load(f)
    times, errors, ops = {}, {}, []
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        side, _, op = b["run_name"].partition("/")
        if op.endswith("/real_time"):
            op = op[: -len("/real_time")]
        if op not in ops:
            ops.append(op)
        if b.get("error_occurred"):
            errors[op] = b.get("error_message", "error")
        elif b.get("run_type") == "aggregate" or (side, op) not in times:
            times[(side, op)] = b[key] * TO_NS[b.get("time_unit", "ns")]

    ctx = data.get("context", {})
    print(f"Device: {ctx.get('cuda_device', '?')}; driver: {ctx.get('cuda_driver', '?')}; "
          f"host: {ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} CPUs; "
          f"{ctx.get('date', '?')}; {'CPU' if cpu else 'wall'} time, median.\n")
    print("| operation | raw ns/op | cuwrap ns/op | cuwrap / raw |")
    print("|---|---:|---:|---:|")
    for op in ops:
        raw, wrapped = times.get(("raw", op)), times.get(("cuwrap", op))
        if raw is None or wrapped is None:
            reason = errors.get(op, "missing").splitlines()[0].replace("|", "/")
            print(f"| {op} | - | - | not run: {reason} |")
        else:
            print(f"| {op} | {raw:.1f} | {wrapped:.1f} | {wrapped / raw:.2f} |")


if __name__ == "__main__":
    main()
