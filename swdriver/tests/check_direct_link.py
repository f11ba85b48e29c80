#!/usr/bin/env python3
"""Builds direct_link.c against the toolkit's stub libcuda.so (in a temporary directory outside
the build tree, since no build-tree binary may need libcuda) and runs it with the software driver
first on LD_LIBRARY_PATH and LD_BIND_NOW=1, so a missing export fails at load time."""

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cc", required=True)
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("--cflag", action="append", default=[], help="extra compiler flag")
    parser.add_argument("--stub-dir", required=True)
    parser.add_argument("--driver", required=True)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="swcuda-link-") as tmp:
        program = Path(tmp) / "direct_link"
        command = [args.cc, "-std=c11", "-Wall", "-Wextra", "-Werror"]
        command += [f"-I{d}" for d in args.include] + args.cflag
        command += [str(Path(__file__).with_name("direct_link.c")), f"-L{args.stub_dir}", "-lcuda",
                    "-o", str(program)]
        if subprocess.run(command).returncode != 0:
            return 1
        env = {k: v for k, v in os.environ.items() if not k.startswith("SWCUDA_")}
        env["LD_LIBRARY_PATH"] = str(Path(args.driver).resolve().parent)
        env["LD_BIND_NOW"] = "1"
        run = subprocess.run([str(program)], env=env, capture_output=True, text=True)
        sys.stdout.write(run.stdout + run.stderr)
        return run.returncode


if __name__ == "__main__":
    sys.exit(main())
