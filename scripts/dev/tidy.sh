#!/usr/bin/env bash
# tidy.sh FILE: clang-tidy on one file of compile_commands.json, remembered.
# A file that passed is not read again while nothing clang-tidy sees has
# changed: the key is the hash of clang-tidy's version, .clang-tidy, the
# file's compile command and its preprocessed text (every header it
# includes, ours and the system's).  The passes are kept outside the tree,
# in $TIDY_CACHE (default ~/.cache/slurm-bridge/tidy), so a clean clone on
# a machine that linted the same code before takes seconds.  Failures are
# never kept.  Prints clang-tidy's findings and exits 1 on any.
set -euo pipefail
file=$1
cache=${TIDY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/slurm-bridge/tidy}
# The file's compile command, as clang-tidy reads it, run with -E.
cmd=$(python3 -c '
import json, sys
for e in json.load(open("compile_commands.json")):
    if e["file"] == sys.argv[1]:
        print(e["command"]); break
' "$file")
[ -n "$cmd" ] || { echo "tidy: $file is not in compile_commands.json" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# shellcheck disable=SC2086
if ${cmd/ -c / -E -P } -o "$out" 2>/dev/null; then
	key=$({ clang-tidy --version; cat .clang-tidy; echo "$cmd"; cat "$out"; } |
		sha256sum | cut -c1-64)
	[ -e "$cache/$key" ] && exit 0
else
	key=    # not preprocessed: clang-tidy says why, nothing is kept
fi
clang-tidy -p . --quiet "$file" 2>/dev/null >"$out" || { cat "$out"; exit 1; }
[ -z "$key" ] || { mkdir -p "$cache" && : >"$cache/$key"; }
