#!/bin/sh
# The compiler launcher of the precompiled header's owner (tests/CMakeLists.txt). It runs the
# compile ("$@": ccache, the compiler, its arguments); when that made a precompiled header, it
# writes <header>.sum beside it: a checksum of the contents of every file the header read, from
# the compiler's dependency file. scripts/test tells ccache to hash that file instead of the
# precompiled header (pch_external_checksum): clang writes the clone's absolute paths into its
# precompiled headers, so otherwise no source that uses one hits the cache in another clone (CI
# clones afresh). Where the dependency file cannot be read, no .sum: ccache hashes the header.
set -eu
"$@"
out='' deps='' previous=''
for argument in "$@"; do
  case $previous in
    -o) out=$argument ;;
    -MF) deps=$argument ;;
  esac
  previous=$argument
done
case $out in
  *.pch | *.gch) ;;
  *) exit 0 ;;
esac
rm -f "$out.sum"
[ -n "$deps" ] && [ -f "$deps" ] || exit 0
# The dependency file: "target: file file \" lines (no file of nax's has a space in its path).
files=$(sed -e 's/^[^:]*://' -e 's/\\$//' "$deps")
for file in $files; do
  [ -f "$file" ] || exit 0
done
# shellcheck disable=SC2086 # one argument per file, split on purpose
cat $files | sha256sum >"$out.sum.tmp"
mv "$out.sum.tmp" "$out.sum"
