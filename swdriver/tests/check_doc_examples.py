#!/usr/bin/env python3
"""Runs the examples of a Markdown file against the software driver.

* Every ```c block whose first line is `/* example: NAME.c */` is compiled (C11, warnings as
  errors) into NAME in the work directory.
* Every ```console block is a session: lines starting with "$ " are run with bash in the work
  directory, and the stdout of each must be exactly the lines that follow it.

The work directory gets build/swdriver/lib/libcuda.so.1, a link to the driver under test, so the
commands can name the driver the way the document does.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

BLOCK_RE = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--doc", required=True)
    parser.add_argument("--cc", required=True)
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("--cflag", action="append", default=[], help="extra compiler flag")
    parser.add_argument("--driver", required=True)
    parser.add_argument("--work-dir", required=True)
    args = parser.parse_args()

    work = Path(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    (work / "build/swdriver/lib").mkdir(parents=True)
    os.symlink(os.path.abspath(args.driver), work / "build/swdriver/lib/libcuda.so.1")

    failures = 0
    sessions = 0
    for kind, body in BLOCK_RE.findall(Path(args.doc).read_text()):
        if kind == "c":
            match = re.match(r"/\* example: (\w+)\.c \*/", body)
            if not match:
                continue
            source = work / f"{match.group(1)}.c"
            source.write_text(body)
            command = [args.cc, "-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror"]
            command += [f"-I{d}" for d in args.include] + args.cflag
            command += [str(source), "-ldl", "-o", str(work / match.group(1))]
            if subprocess.run(command).returncode != 0:
                print(f"FAILED to compile {source.name}")
                failures += 1
        elif kind == "console":
            sessions += 1
            lines = body.splitlines()
            for i, line in enumerate(lines):
                if not line.startswith("$ "):
                    continue
                expected = []
                for following in lines[i + 1:]:
                    if following.startswith("$ "):
                        break
                    expected.append(following)
                env = {k: v for k, v in os.environ.items() if not k.startswith("SWCUDA_")}
                run = subprocess.run(["bash", "-c", line[2:]], cwd=work, env=env,
                                     capture_output=True, text=True)
                if run.stdout.splitlines() != expected:
                    failures += 1
                    print(f"FAILED: {line}\n--- expected\n" + "\n".join(expected) +
                          f"\n--- got (exit {run.returncode})\n{run.stdout}{run.stderr}")
                else:
                    print(f"ok: {line}")
    if sessions == 0:
        print("no console session found")
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
