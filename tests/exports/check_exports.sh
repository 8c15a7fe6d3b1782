#!/bin/sh
# Each library given exports only what its exports.map (the first argument) lets it: its C ABI and the
# C++ names its public headers declare. Prints what else `nm -D --defined-only` lists, demangled, and
# fails if anything. The map's global patterns are read from the map itself, so the two cannot drift apart.
map="$1"
shift
# The "_ZN5pypto...*;" globs between "global:" and "local:" -> one anchored regular expression.
allowed=$(awk '/global:/ { on = 1; next } /local:/ { on = 0 } on && /;/ {
  count = split($0, globs, ";")
  for (i = 1; i <= count; i++) {
    glob = globs[i]; gsub(/ /, "", glob); if (glob == "") continue
    gsub(/\*/, ".*", glob); printf "%s^%s$", (n++ ? "|" : ""), glob
  } }' "$map")
if [ -z "$allowed" ]; then
  echo "$map lists no global symbols"
  exit 1
fi
status=0
for lib in "$@"; do
  extra=$(nm -D --defined-only "$lib" | awk '{ print $NF }' | grep -Ev "$allowed")
  count=$(nm -D --defined-only "$lib" | wc -l)
  echo "$(basename "$lib"): $count exported symbols"
  if [ -n "$extra" ]; then
    echo "$(basename "$lib") exports symbols outside its C ABI and public headers:"
    echo "$extra" | c++filt | head -20
    status=1
  fi
done
exit $status
