#!/usr/bin/env bash
# Function-length lint: no C++ function (free, member, TEST body) in src/, tests/, bench/ or
# tools/ is longer than MAX lines, counted from its signature line to its closing brace. A
# function that does one job reads and reviews in one screen; a longer one is split into
# named steps. Function extents come from universal-ctags (the line: and end: fields).
# Prints each violation as file:line and exits 1 if any.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

MAX=120
DIRS=(src tests bench tools)

if ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
  echo "check-function-length: universal-ctags is not installed (Debian package universal-ctags;" \
       "scripts/install-deps.sh installs it)" >&2
  exit 1
fi

# One line per function: LENGTH<TAB>FILE<TAB>LINE<TAB>NAME. ctags -o - prints the tags in the
# order it reads them; --sort=no skips its sort step, which needs a file.
if ! tags=$(ctags -R --languages=C++ --langmap=C++:+.cc.cpp.h --kinds-c++=f --fields=+ne --sort=no -o - "${DIRS[@]}" |
       awk -F'\t' '{
         line = ""; end = ""
         for (i = 4; i <= NF; i++) {
           if ($i ~ /^line:/) line = substr($i, 6)
           else if ($i ~ /^end:/) end = substr($i, 5)
         }
         if (line != "" && end != "") printf "%d\t%s\t%d\t%s\n", end - line + 1, $2, line, $1
       }' | sort -t$'\t' -k2,2 -k3,3n); then
  echo "check-function-length: ctags failed on ${DIRS[*]}" >&2
  exit 1
fi

if [[ -z $tags ]]; then
  echo "check-function-length: ctags found no functions in ${DIRS[*]}" >&2
  exit 1
fi

violations=0
checked=0
longest=0
longest_at=
while IFS=$'\t' read -r len file line name; do
  checked=$((checked + 1))
  if [[ $len -gt $longest ]]; then longest=$len longest_at="$name ($file:$line)"; fi
  if [[ $len -gt $MAX ]]; then
    echo "$file:$line: function $name has $len lines (at most $MAX)"
    violations=$((violations + 1))
  fi
done <<<"$tags"

if [[ $violations -gt 0 ]]; then
  echo "check-function-length: $violations function(s) longer than $MAX lines; split them into functions that each do one job"
  exit 1
fi
echo "check-function-length: $checked functions checked, all at most $MAX lines; longest: $longest_at, $longest lines"
