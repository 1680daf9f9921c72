#!/usr/bin/env bash
# Runs every end-to-end scenario file (test/e2e/t_*.sh) against the running
# stack, each in a bash of its own (so no variable, function or trap of one
# reaches the next), and prints one summary line: "e2e: N passed, N failed",
# after the failures.  A file that dies before its end (a set -u error, a
# crash, an exit) counts as one more failure.
# Usage: test/e2e/run.sh [scenario-file-name-substring]
# shellcheck source=test/e2e/lib.sh
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

# The scenarios fill whole nodes: start from an empty cluster (leftovers of
# earlier runs and the demo, this stack's own sample, are removed, and their
# jobs end with them).  Nothing else is: another namespace's pods, another
# install's or a Slurm user's jobs would make a capacity scenario fail, not
# go away.
leftover=$(k get namespaces -o name | sed -n 's#^namespace/\(e2e-.*\|demo\)$#\1#p')
if [ -n "$leftover" ]; then
	echo "e2e: removing leftover namespaces: $leftover"
	# shellcheck disable=SC2086
	k delete namespace $leftover --wait=true --timeout=120s >/dev/null
fi
# shellcheck disable=SC2086
[ -z "$leftover" ] || wait_for 60 stack_no_bridge_jobs $leftover ||
	echo "e2e: warning: jobs of $leftover still in Slurm"
# Say up front what else holds the nodes, so that a capacity scenario's
# failure is not a mystery.
others=$(squeue -h -t R,CG -p "$SLURM_PARTITION" -o '%i %u %j %N' 2>/dev/null)
if [ -n "$others" ]; then
	echo "e2e: warning: other jobs hold nodes; the scenarios that fill them will fail:"
	sed 's/^/  /' <<<"$others"
fi

t_start=$SECONDS
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for t in "$E2E_DIR"/t_*.sh; do
	[ -n "${1:-}" ] && [[ $t != *"$1"* ]] && continue
	name=$(basename "$t")
	if ! bash -n "$t"; then
		E2E_FAILED=$((E2E_FAILED + 1)); E2E_FAILURES+=("$name: does not parse")
		continue
	fi
	: >"$results"
	# shellcheck disable=SC2016
	E2E_RESULTS=$results bash -c '. "$1" && . "$2"; e2e_time_close
		for t in "${E2E_TIMES[@]}"; do e2e_record "time	$t"; done
		echo end >>"$E2E_RESULTS"' \
		"$name" "$E2E_DIR/lib.sh" "$t"
	rc=$?
	last=$name
	while IFS=$'\t' read -r what text; do
		case $what in
		scenario) last=$text ;;
		time) E2E_TIMES+=("$text") ;;
		pass) E2E_PASSED=$((E2E_PASSED + 1)) ;;
		fail) E2E_FAILED=$((E2E_FAILED + 1)); E2E_FAILURES+=("$text") ;;
		esac
	done <"$results"
	if [ "$(tail -n 1 "$results")" != end ]; then
		echo "  FAIL $name died (exit status $rc)"
		E2E_FAILED=$((E2E_FAILED + 1))
		E2E_FAILURES+=("$last: $name died (exit status $rc)")
	fi
done
echo "e2e: the longest scenarios ($((SECONDS - t_start)) s in all):"
e2e_times 15
e2e_summary
