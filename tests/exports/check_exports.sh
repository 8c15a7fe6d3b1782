#!/bin/sh
# Each library given exports only its C ABI (pypto_*) and names of namespace pypto (libs/exports.map):
# prints what else `nm -D --defined-only` lists, demangled, and fails if anything.
status=0
for lib in "$@"; do
  extra=$(nm -D --defined-only "$lib" | awk '{ print $NF }' |
    grep -Ev '^(pypto_|_ZN5pypto|_ZNK5pypto|_ZT[ISVT]N5pypto|_ZTh[nv][0-9_]*N5pypto|_ZTv.*_N5pypto|_ZZN5pypto|_ZZNK5pypto|_ZGVZ?N5pypto)')
  count=$(nm -D --defined-only "$lib" | wc -l)
  echo "$(basename "$lib"): $count exported symbols"
  if [ -n "$extra" ]; then
    echo "$(basename "$lib") exports symbols outside its C ABI and namespace pypto:"
    echo "$extra" | c++filt | head -20
    status=1
  fi
done
exit $status
