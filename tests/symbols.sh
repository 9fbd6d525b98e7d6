#!/bin/sh
# symbols.sh - libhpc.so exports only hpc_* symbols: everything else is
# hidden (-fvisibility=hidden, HPC_EXPORT on the public declarations), so
# internal names can change without breaking programs linked to it.
lib=${top_builddir:-.}/libhpc/.libs/libhpc.so
[ -f "$lib" ] || { echo "SKIP: no $lib (static build?)"; exit 77; }
command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm"; exit 77; }
all=$(nm -D --defined-only "$lib" | awk '{print $3}')
bad=$(echo "$all" | grep -v '^hpc_' | grep -v '^$')
n=$(echo "$all" | grep -c '^hpc_')
if [ -n "$bad" ]; then
    echo "FAIL: libhpc.so exports non-hpc_ symbols:"
    echo "$bad"
    exit 1
fi
[ "$n" -gt 100 ] || { echo "FAIL: only $n hpc_ symbols exported"; exit 1; }
echo "symbols: $n exported symbols, all hpc_*"
