#!/usr/bin/env python3
"""Checks that the software driver's includes keep its layers (docs/software-driver-internals.md,
"Source layout"): a file in swdriver/src/<folder>/ includes only headers of its own folder and of
the folders below it. The order, lowest first:

    core -> sched -> context -> memory -> module -> exec -> graph -> control

ptx/ stands apart: it includes nothing outside ptx/, and module/ and exec/ may include it. The
one file allowed to reach every layer is context/reclaim.cpp (a context's destruction reclaims
what each subsystem holds for it). Prints each include that runs up a layer and exits 1 if
there is one.

    check_layers.py SWDRIVER_SRC_DIR
"""
import pathlib
import re
import sys

ORDER = ["core", "sched", "context", "memory", "module", "exec", "graph", "control"]
PTX_USERS = {"module", "exec", "ptx"}
REACHES_EVERYTHING = {"context/reclaim.cpp"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.MULTILINE)


def allowed(folder: str, target: str) -> bool:
    """Whether a file in `folder` may include a header of `target`."""
    if target == "swcuda":  # the public C header
        return True
    if folder == "ptx" or target == "ptx":
        return target == "ptx" and folder in PTX_USERS
    if folder not in ORDER or target not in ORDER:
        return False
    return ORDER.index(target) <= ORDER.index(folder)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1])
    problems = []
    files = sorted(p for p in root.rglob("*") if p.suffix in {".cpp", ".hpp", ".inc"})
    for path in files:
        relative = path.relative_to(root).as_posix()
        folder = relative.split("/")[0]
        if relative in REACHES_EVERYTHING or "/" not in relative:
            continue
        for match in INCLUDE.finditer(path.read_text(encoding="utf-8")):
            target = match.group(1)
            if not allowed(folder, target):
                line = path.read_text(encoding="utf-8").count("\n", 0, match.start()) + 1
                problems.append(f"{relative}:{line}: includes {target}/, above {folder}/")
    for problem in problems:
        print(problem)
    if not files:
        print(f"check_layers: no sources under {root}", file=sys.stderr)
        return 1
    print(f"check_layers: {len(files)} files, {len(problems)} includes that run up a layer")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
