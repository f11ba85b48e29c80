#!/usr/bin/env python3
"""Generates the software driver's symbol, error and attribute tables from the CUDA toolkit.

Inputs (all from the toolkit, nothing is kept by hand):
  * cudaTypedefs.h and cudaProfilerTypedefs.h: every `PFN_<base>_v<version>[_ptds|_ptsz]`
    typedef, including those inside `#if defined(__CUDA_API_VERSION_INTERNAL)` blocks;
  * cuda.h: the `cudaError_enum` (name and number of every CUresult) and the
    `CUdevice_attribute_enum` (every CU_DEVICE_ATTRIBUTE_* name and number);
  * the toolkit stub libcuda.so: its dynamic exports (`nm -D --defined-only`);
  * driver_types.h and libcudart.so: the short message of every CUresult. NVIDIA's driver and
    runtime share their error texts ("invalid argument", "out of memory"), and the runtime's
    `cudaError` numbers are the driver's for every code both have, so the message of a CUresult
    is `cudaGetErrorString` of the `cudaError` with the same number, asked of the toolkit's
    libcudart through ctypes (it needs no GPU). The few codes the runtime does not have get the
    words of their name ("context already current").

The rule that maps (base name, introduced version, per-thread kind) to an exported name:
  * the legacy-stream variants of one base name, in ascending version order, are exported as
    `<base>`, `<base>_v2`, `<base>_v3`, ...;
  * a `_ptds`/`_ptsz` variant introduced in version V is the per-thread twin of the legacy
    variant with the highest version <= V, and is exported as that name plus the suffix.
The script checks that the exported names it derives are exactly the stub's exports and fails
(exit status 1, a message per mismatch) otherwise.

Outputs (in --out): symbols.inc, exports.inc, errors.inc, device_attributes.inc.
With --check DIR it writes into a temporary directory and diffs against DIR instead (exit 1 and
a unified diff when they differ), which is what the `generated_files_are_current` test runs.
"""

from __future__ import annotations

import argparse
import difflib
import filecmp
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

PT_NONE, PT_PTDS, PT_PTSZ = "NONE", "PTDS", "PTSZ"


@dataclass(frozen=True)
class Variant:
    base: str
    version: int
    per_thread: str  # PT_NONE, PT_PTDS or PT_PTSZ
    exported: str = ""


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


PFN_RE = re.compile(r"\(\s*CUDAAPI\s*\*\s*PFN_(\w+?)_v(\d+)(_ptds|_ptsz)?\s*\)")


def read_variants(headers: list[Path]) -> list[Variant]:
    found: set[Variant] = set()
    for header in headers:
        for match in PFN_RE.finditer(strip_comments(header.read_text())):
            suffix = match.group(3)
            per_thread = {None: PT_NONE, "_ptds": PT_PTDS, "_ptsz": PT_PTSZ}[suffix]
            found.add(Variant(match.group(1), int(match.group(2)), per_thread))
    return sorted(found, key=lambda v: (v.base, v.version, v.per_thread))


def assign_exported_names(variants: list[Variant]) -> list[Variant]:
    by_base: dict[str, list[Variant]] = {}
    for variant in variants:
        by_base.setdefault(variant.base, []).append(variant)
    named: list[Variant] = []
    for base, group in by_base.items():
        legacy = sorted((v for v in group if v.per_thread == PT_NONE), key=lambda v: v.version)
        legacy_names = [(v.version, base if i == 0 else f"{base}_v{i + 1}")
                        for i, v in enumerate(legacy)]
        for v in group:
            if v.per_thread == PT_NONE:
                name = dict(legacy_names)[v.version]
            else:
                twins = [n for version, n in legacy_names if version <= v.version]
                twin = twins[-1] if twins else base
                name = twin + ("_ptds" if v.per_thread == PT_PTDS else "_ptsz")
            named.append(Variant(v.base, v.version, v.per_thread, name))
    return sorted(named, key=lambda v: (v.base, v.version, v.per_thread))


def read_stub_exports(stub: Path, nm: str) -> set[str]:
    out = subprocess.run([nm, "-D", "--defined-only", str(stub)], check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in "TtWi":
            names.add(fields[2])
    return names


def enum_body(cuda_h: str, enum_name: str) -> str:
    match = re.search(r"typedef\s+enum\s+" + enum_name + r"\s*\{(.*?)\}\s*\w+\s*;", cuda_h, re.S)
    if not match:
        sys.exit(f"gen_symbols: enum {enum_name} not found in cuda.h")
    return match.group(1)


ERROR_RE = re.compile(r"(?:/\*\*(?P<doc>.*?)\*/\s*)?(?P<name>CUDA_\w+)\s*=\s*(?P<value>\d+)", re.S)


RUNTIME_ERROR_RE = re.compile(r"\b(cuda(?:Success|Error\w*))\s*=\s*(\d+)")


def read_runtime_errors(driver_types_h: str) -> dict[int, str]:
    """The `cudaError` enumerators of driver_types.h by number."""
    match = re.search(r"enum\s+(?:__device_builtin__\s+)?cudaError\s*\{(.*?)\}", driver_types_h,
                      re.S)
    if not match:
        sys.exit("gen_symbols: enum cudaError not found in driver_types.h")
    return {int(m.group(2)): m.group(1)
            for m in RUNTIME_ERROR_RE.finditer(strip_comments(match.group(1)))}


def runtime_messages(cudart: Path, numbers: list[int]) -> dict[int, str]:
    """cudaGetErrorString of each number, from the toolkit's libcudart (no GPU needed)."""
    import ctypes
    try:
        lib = ctypes.CDLL(str(cudart))
    except OSError as e:
        sys.exit(f"gen_symbols: cannot load {cudart}: {e}")
    lib.cudaGetErrorString.restype = ctypes.c_char_p
    lib.cudaGetErrorString.argtypes = [ctypes.c_int]
    return {n: lib.cudaGetErrorString(n).decode() for n in numbers}


def read_errors(cuda_h: str, driver_types_h: str, cudart: Path) -> list[tuple[int, str, str]]:
    runtime = read_runtime_errors(driver_types_h)
    codes = [(int(m.group("value")), m.group("name"))
             for m in ERROR_RE.finditer(enum_body(cuda_h, "cudaError_enum"))]
    messages = runtime_messages(cudart, [value for value, _ in codes if value in runtime])
    errors = []
    for value, name in codes:
        if value in messages:
            text = messages[value]
        else:
            # Not a runtime code: the words of the name, as the driver's own messages read.
            text = name.removeprefix("CUDA_ERROR_").removeprefix("CUDA_").lower().replace("_", " ")
        errors.append((value, name, text))
    return errors


ATTRIBUTE_RE = re.compile(r"(CU_DEVICE_ATTRIBUTE_\w+)\s*=\s*(\d+)")


def read_device_attributes(cuda_h: str) -> list[tuple[int, str]]:
    body = strip_comments(enum_body(cuda_h, "CUdevice_attribute_enum"))
    return [(int(m.group(2)), m.group(1)) for m in ATTRIBUTE_RE.finditer(body)]


def c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def header(cuda_version: int, what: str) -> str:
    return (f"// Generated by swdriver/tools/gen_symbols.py from the CUDA {cuda_version} toolkit.\n"
            f"// Do not edit; rerun the script (target swdriver_regenerate) instead.\n"
            f"// {what}\n")


def render(variants: list[Variant], errors, attributes, cuda_version: int) -> dict[str, str]:
    files = {}
    rows = "".join(f"SWCU_VARIANT({v.base}, {v.version}, {v.per_thread}, {v.exported})\n"
                   for v in variants)
    files["symbols.inc"] = header(
        cuda_version, "SWCU_VARIANT(base name, introduced version, per-thread kind, exported "
        "name),\n// sorted by base name, then version.\n") + rows

    exports = sorted({(v.exported, v.base) for v in variants})
    rows = "".join(f"SWCU_EXPORT({name}, {base})\n" for name, base in exports)
    files["exports.inc"] = header(
        cuda_version, "SWCU_EXPORT(exported name, base name), one row per export of the "
        "toolkit stub,\n// sorted by exported name.\n") + rows

    rows = "".join(f"SWCU_ERROR({value}, {name}, {c_string(doc)})\n" for value, name, doc in errors)
    files["errors.inc"] = header(
        cuda_version, "SWCU_ERROR(value, name, message) for every CUresult in cuda.h; the message is\n"
        "// cudaGetErrorString of the runtime code with the same number (libcudart).\n") + rows

    rows = "".join(f"SWCU_DEVICE_ATTRIBUTE({value}, {name})\n" for value, name in attributes)
    files["device_attributes.inc"] = header(
        cuda_version, "SWCU_DEVICE_ATTRIBUTE(value, name) for every CU_DEVICE_ATTRIBUTE_* in "
        "cuda.h,\n// aliases included.\n") + rows
    return files


def generate(args) -> dict[str, str]:
    include = Path(args.cuda_include)
    cuda_h = (include / "cuda.h").read_text()
    version_match = re.search(r"#define\s+CUDA_VERSION\s+(\d+)", cuda_h)
    if not version_match:
        sys.exit("gen_symbols: CUDA_VERSION not found in cuda.h")
    variants = assign_exported_names(
        read_variants([include / "cudaTypedefs.h", include / "cudaProfilerTypedefs.h"]))

    stub = read_stub_exports(Path(args.stub), args.nm)
    derived = {v.exported for v in variants}
    problems = [f"derived but not exported by the stub: {n}" for n in sorted(derived - stub)]
    problems += [f"exported by the stub but not derived: {n}" for n in sorted(stub - derived)]
    if problems:
        sys.exit("gen_symbols: the naming rule does not match the stub:\n  " +
                 "\n  ".join(problems))
    driver_types_h = (include / "driver_types.h").read_text()
    cudart = Path(args.cudart) if args.cudart else Path(args.stub).parent.parent / "libcudart.so"
    return render(variants, read_errors(cuda_h, driver_types_h, cudart),
                  read_device_attributes(cuda_h),
                  int(version_match.group(1)))


def write(files: dict[str, str], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out / name).write_text(text)


def check(files: dict[str, str], committed: Path) -> int:
    status = 0
    with tempfile.TemporaryDirectory(prefix="swcuda-gen-") as tmp:
        write(files, Path(tmp))
        for name in sorted(files):
            fresh, old = Path(tmp) / name, committed / name
            if old.exists() and filecmp.cmp(fresh, old, shallow=False):
                continue
            status = 1
            old_lines = old.read_text().splitlines(keepends=True) if old.exists() else []
            sys.stdout.writelines(difflib.unified_diff(
                old_lines, fresh.read_text().splitlines(keepends=True), str(old),
                f"regenerated/{name}"))
    if status:
        print("gen_symbols: generated files are out of date; build target swdriver_regenerate")
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cuda-include", required=True, help="toolkit include directory")
    parser.add_argument("--stub", required=True, help="the toolkit's stubs/libcuda.so")
    parser.add_argument("--cudart", help="the toolkit's libcudart.so (default: next to stubs/)")
    parser.add_argument("--nm", default=os.environ.get("NM", "nm"), help="nm program")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--out", help="directory to write the generated files into")
    target.add_argument("--check", help="directory of committed files to compare against")
    args = parser.parse_args()

    files = generate(args)
    if args.check:
        return check(files, Path(args.check))
    write(files, Path(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
