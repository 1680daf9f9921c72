#!/usr/bin/env bash
# Runs every end-to-end scenario (test/e2e/t_*.sh) against the running stack
# and prints one summary line: "e2e: N passed, N failed".
# Usage: test/e2e/run.sh [scenario-name-substring]
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

# The scenarios fill whole nodes: start from an empty cluster (leftovers of
# earlier runs or of the demo are removed, and their jobs end with them).
leftover=$(k get namespaces -o name | sed -n 's#^namespace/\(e2e-.*\|demo\)$#\1#p')
if [ -n "$leftover" ]; then
	echo "e2e: removing leftover namespaces: $leftover"
	# shellcheck disable=SC2086
	k delete namespace $leftover --wait=true --timeout=120s >/dev/null
fi
wait_for 60 stack_no_bridge_jobs || echo "e2e: warning: bridge jobs still in Slurm"

for t in "$E2E_DIR"/t_*.sh; do
	[ -n "${1:-}" ] && [[ $t != *"$1"* ]] && continue
	# shellcheck disable=SC1090
	. "$t"
done
e2e_summary
