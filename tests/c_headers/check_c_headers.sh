#!/bin/sh
# Compiles each public C header alone, as strict C11: a C program (or another language's FFI
# generator) includes one header, without the C++ behind it or any header it forgot to include.
# Usage: check_c_headers.sh 'CC COMMAND' [-Idir...] -- HEADER...
cc="$1"; shift
includes=""
while [ "$1" != "--" ]; do includes="$includes $1"; shift; done
shift
failed=0
for header in "$@"; do
  # shellcheck disable=SC2086 # the compiler command (ccache cc) and the include flags are several words
  if printf '#include "%s"\n' "$header" | $cc -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only $includes -x c -; then
    echo "ok: $header"
  else
    echo "FAILED: $header does not compile alone as C" >&2
    failed=1
  fi
done
exit $failed
