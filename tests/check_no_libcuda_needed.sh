#!/usr/bin/env bash
# Fails if any cuwrap library, test or sample binary under $1 lists libcuda in DT_NEEDED.
# The software driver itself (swdriver/lib/libcuda.so.1) is the one file allowed to be it.
set -euo pipefail
binary_dir=$1
checked=0
bad=()
while IFS= read -r -d '' file; do
  head -c 4 "$file" | grep -q $'\x7fELF' || continue
  checked=$((checked + 1))
  if readelf -d "$file" 2>/dev/null | grep -q 'NEEDED.*libcuda\.so'; then
    bad+=("$file")
  fi
done < <(find "$binary_dir" -type f \( -perm -u+x -o -name '*.so*' -o -name '*.a' \) \
           -not -path '*/CMakeFiles/*' -not -path '*/swdriver/lib/*' -not -path '*/install-test/*' -print0)
echo "checked $checked ELF files"
if [ ${#bad[@]} -ne 0 ]; then
  printf 'libcuda in DT_NEEDED: %s\n' "${bad[@]}"
  exit 1
fi
[ "$checked" -ge 3 ] || { echo "expected at least 3 binaries to check"; exit 1; }
