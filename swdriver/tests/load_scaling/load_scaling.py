#!/usr/bin/env python3
"""Checks that loading PTX is linear in its kernels (issue 15: 80 000 kernels took 5 s when each
new kernel was compared with every earlier one). Runs load_scaling (load_scaling.cpp) under
callgrind, counting the instructions of measure_load() for modules of N and 4N kernels; fails
if 4N costs more than --max-ratio (default 5) times N. Linear work gives about 4, quadratic 16.
Instruction counts are deterministic, so this is a fit test, not a timing.

  load_scaling.py PROGRAM DRIVER [--kernels N] [--valgrind PATH] [--max-ratio R]
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile


def totals(directory):
    """Instructions of each dump, in dump order."""
    counts = []
    for path in sorted(glob.glob(os.path.join(directory, "callgrind.out.*")),
                       key=lambda p: int(p.rsplit(".", 1)[1])):
        with open(path) as f:
            for line in f:
                if line.startswith(("totals:", "summary:")):
                    counts.append(int(line.split()[1]))
                    break
    return counts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("program")
    parser.add_argument("driver")
    parser.add_argument("--kernels", type=int, default=1500)
    parser.add_argument("--valgrind", default="valgrind")
    parser.add_argument("--max-ratio", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [args.valgrind, "--tool=callgrind",
               f"--callgrind-out-file={tmp}/callgrind.out",
               "--collect-atstart=no", "--toggle-collect=measure_load",
               "--zero-before=measure_load", "--dump-after=measure_load",
               args.program, args.driver, str(args.kernels)]
        env = dict(os.environ, SWCUDA_EXEC="immediate")
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
        counts = [c for c in totals(tmp) if c > 0]
    if len(counts) != 3:
        sys.exit(f"load_scaling: expected 3 measured loads, callgrind gave {counts}")
    small, large = counts[1], counts[2]
    ratio = large / small
    print(f"{args.kernels} kernels: {small} instructions; {4 * args.kernels} kernels: {large} "
          f"instructions; ratio {ratio:.2f} (linear 4, quadratic 16; limit {args.max_ratio})")
    return 0 if ratio <= args.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
