#!/usr/bin/env bash
# Runs every end-to-end scenario (test/e2e/t_*.sh) against the running stack
# and prints one summary line: "e2e: N passed, N failed".
# Usage: test/e2e/run.sh [scenario-name-substring]
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

for t in "$E2E_DIR"/t_*.sh; do
	[ -n "${1:-}" ] && [[ $t != *"$1"* ]] && continue
	# shellcheck disable=SC1090
	. "$t"
done
e2e_summary
