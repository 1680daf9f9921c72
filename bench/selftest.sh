#!/usr/bin/env bash
# make bench-selftest: the bench driver's scenario runner, without a stack.
#
# Runs fake scenarios through bench/lib.sh's run_scenario, as bench/run.sh
# does, and checks what a run must do when one fails: the others' records
# kept, a "failed" entry naming the scenario and the command that failed,
# what the failed one started stopped and its at_exit functions run once,
# the results file written (build/bench/record) and the table naming the
# failure.  One fake scenario kills background subshells the moment they
# start, as the fixed scenario's watchdog was killed once bindwatch was
# done: bash runs the EXIT trap such a child inherited (which removed the
# bench's working directory under it, issue 50), and the traps must not act
# there.  Then the constrained scenario's pieces against a fake kubectl:
# its pods, its node layout at 64 and 1000 nodes, the labels and taints
# put on and taken off (also when it fails), its violation count.  Needs
# build/bench/record (make bench-tools), jq and python3 with yaml; touches
# no cluster.  Exits 0 when every check holds, 1 otherwise.
# shellcheck disable=SC2317 # the fake scenarios and kubectl are called indirectly
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
RECORD=${RECORD:-$top/build/bench/record}
[ -x "$RECORD" ] || { echo "selftest: no $RECORD (make bench-tools)" >&2; exit 1; }
WORK=$(mktemp -d)
RESULTS=$WORK/results.jsonl
OUT=$WORK/out.json
AT_EXIT=() scenario=''
trap '[ "$BASHPID" != '"$BASHPID"' ] || rm -rf "$WORK"' EXIT
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
# No cluster: the runner's calls of it do nothing.
k() { return 0; }
scancel() { return 0; }
after_failure() { echo "$1" >>"$WORK/after-failure"; }

# gone PID: no such process, or a zombie its new parent has not reaped.
gone() { ! kill -0 "$1" 2>/dev/null || [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
fails=0
check() {  # check WHAT COMMAND...: one line per check
	if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}

# Finishes, with one record.
scenario_good() { rec run --scenario good --system fake -n round=1; }

# Starts a "watcher" and registers an at_exit function, then fails in a
# nested function on a command set -e ends it on; what comes after never
# runs.  The failures in a command substitution and in an || list before
# it are not its failure.
bad_undo() { echo undone >>"$WORK/bad-undo"; }
bad_step() {
	local x
	x=$(false; echo y) || true
	false || true
	ls "$WORK/no-such-file" >/dev/null 2>&1 # the failure
	echo "$x" >/dev/null
	echo "bad went on" >"$WORK/bad-went-on"
}
scenario_bad() {
	sleep 300 &
	bw_pid=$!
	echo "$bw_pid" >"$WORK/bad-bw"
	at_exit bad_undo
	rec run --scenario bad --system fake -n round=1
	bad_step
}

# Ends with exit 3.
scenario_quits() { exit 3; }

# Fails with its watcher already gone: the kill that fails must not stop
# the rest of the EXIT trap (its at_exit function).
gone_undo() { echo undone >>"$WORK/gone-undo"; }
scenario_gone() {
	sleep 0 &
	bw_pid=$!
	wait "$bw_pid"
	at_exit gone_undo
	false
}

# The fixed scenario's old watchdog, many times over: a background
# subshell killed just after it was forked.  None of them may run the
# scenario's EXIT trap: its watcher stays up and its at_exit function runs
# once, when the scenario ends.
race_undo() { echo undone >>"$WORK/race-undo"; }
scenario_race() {
	local i dog
	sleep 300 &
	bw_pid=$!
	echo "$bw_pid" >"$WORK/race-bw"
	at_exit race_undo
	# (Such a child says "wait_for: No record of process" as it dies: kept
	# apart, and counted below.)
	for ((i = 0; i < 200; i++)); do
		( sleep 30; kill -TERM "$bw_pid" 2>/dev/null ) &
		dog=$!
		kill "$dog" 2>/dev/null; wait "$dog" 2>/dev/null || true
	done 2>>"$WORK/race.err"
	kill -0 "$bw_pid" 2>/dev/null || { echo "race: the watcher was killed by a child" >&2; return 1; }
	[ ! -e "$WORK/race-undo" ] || { echo "race: at_exit ran in a child" >&2; return 1; }
	[ -d "$WORK" ]
	rec run --scenario race --system fake -n round=1
}

# The cause itself, as bash 5 does it: a trap on EXIT that is not guarded
# runs in some of these children (informational: a bash that resets the
# traps before it can be signalled runs it in none).
control() {
	local i d
	: >"$WORK/control"
	(
		trap 'echo "$BASHPID" >>"$WORK/control"' EXIT
		for ((i = 0; i < 100; i++)); do
			( sleep 30 ) &
			d=$!
			kill "$d" 2>/dev/null; wait "$d" 2>/dev/null || true
		done 2>/dev/null
		trap - EXIT
	)
	wc -l <"$WORK/control"
}

for s in good bad quits gone race; do run_scenario "$s"; done
bw=$(cat "$WORK/bad-bw")
race_bw=$(cat "$WORK/race-bw")
sleep 0.2

check "the finished scenarios' records kept" \
	test "$(jq -r .scenario "$RESULTS" | paste -sd' ')" = "good bad race"
check "three failed entries, in order" \
	test "$(jq -r .scenario "$WORK/failed.jsonl" | paste -sd' ')" = "bad quits gone"
# shellcheck disable=SC2016 # the backquotes and $WORK are text
check "the failed command named, with its function and line" \
	grep -qF '"error":"`ls \"$WORK/no-such-file\" > /dev/null 2>&1` exited 2 in bad_step (bench/selftest.sh:'"$(grep -n '# the failure$' "$0" | cut -d: -f1)"')"' "$WORK/failed.jsonl"
check "a failed scenario stopped at its failure" test ! -e "$WORK/bad-went-on"
check "what the failed scenario started is stopped" gone "$bw"
check "its at_exit function ran once" test "$(wc -l <"$WORK/bad-undo")" -eq 1
check "an exit is a failure, with its status" \
	test "$(jq -r 'select(.scenario == "quits") | .exit_status' "$WORK/failed.jsonl")" = 3
check "after_failure for each failed one" test "$(paste -sd' ' "$WORK/after-failure")" = "bad quits gone"
check "a watcher already gone does not stop the EXIT trap" test "$(wc -l <"$WORK/gone-undo")" -eq 1
check "killed children ran no trap: the scenario finished" \
	test "$(jq -r 'select(.scenario == "race") | .scenario' "$RESULTS")" = race
check "its at_exit function ran once, at its end" test "$(wc -l <"$WORK/race-undo")" -eq 1
check "its watcher stopped at its end" gone "$race_bw"
check "the driver's shell still has its working directory" test -s "$RESULTS"

"$RECORD" file --nodes 4 --cpus "$(nproc)" --seconds 1 --plots "" --runs "$RESULTS" \
	--failed "$WORK/failed.jsonl" >"$OUT"
check "the results file: runs and failed" \
	test "$(jq -r '"\(.runs | length) \(.failed | length) \(.failed[0].exit_status)"' "$OUT")" = "3 3 2"
check "the table names each failure" \
	test "$("$here/table.sh" "$OUT" | grep -c '^FAILED: ')" -eq 3

# bindwatch_deadline: stops a watcher still running at the deadline, and
# returns at once when it is done.
sleep 300 &
bw_pid=$!
t=$SECONDS
bindwatch_deadline 1
wait "$bw_pid" 2>/dev/null || true
check "bindwatch_deadline stops a watcher at the deadline" test $((SECONDS - t)) -le 3
sleep 0.1 &
bw_pid=$!
wait "$bw_pid"
t=$SECONDS
bindwatch_deadline 30
check "bindwatch_deadline returns once the watcher is done" test $((SECONDS - t)) -le 1

# --- the constrained scenario's pieces, against a fake kubectl -------------
# Nodes n1..nN as "name labels taints" lines ($WORK/nodes, "-" for none,
# comma-separated), changed under a lock (constrained_kubectl runs 4
# calls at once); pods as "name node" lines ($WORK/pods).
fake_nodes() { awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++) print "n" i, "-", "slinky.slurm.net/managed-node" }' >"$WORK/nodes"; }
# fake_sel SELECTOR: the nodes a selector picks: "kubernetes.io/hostname
# in (a,b)", "KEY" or "KEY=VALUE".
fake_sel() {
	awk -v s="$1" '
		BEGIN { if (s ~ /^kubernetes.io\/hostname in \(/) { h = s; sub(/^[^(]*\(/, "", h); sub(/\)$/, "", h)
				n = split(h, hs, ","); for (i = 1; i <= n; i++) want[hs[i]] = 1; mode = "h" }
			else if (index(s, "=")) mode = "kv"; else mode = "k" }
		{ if (mode == "h") { if ($1 in want) print $1; next }
		  n = split($2, ls, ","); for (i = 1; i <= n; i++) {
			split(ls[i], kv, "="); if ((mode == "k" && kv[1] == s) || (mode == "kv" && ls[i] == s)) { print $1; break } } }' "$WORK/nodes"
}
k() {
	local sel='' verb names arg
	if [ "$1" = -n ]; then cat "$WORK/pods"; return 0; fi  # k -n NS get pods: "name node"
	verb=$1; shift 2  # VERB nodes
	[ "${1:-}" = -l ] && { sel=$2; shift 2; }
	case $verb in
	get)
		if [ "$1" = -o ] && [ "$2" = name ]; then fake_sel "$sel" | sed 's#^#node/#'; return 0; fi
		awk '{ t = $3 == "-" ? "" : $3; gsub(/,/, " ", t); split(t, ts, " "); o = ""
			for (i in ts) { split(ts[i], kv, "[=:]"); o = o " " kv[1] } print $1 o }' "$WORK/nodes"
		return 0 ;;
	label | taint)
		arg=$1
		names=$(fake_sel "$sel" | paste -sd' ')
		(
			flock 9
			awk -v verb="$verb" -v arg="$arg" -v names=" $names " '
				function drop(list, key,   n, xs, i, o) { n = split(list == "-" ? "" : list, xs, ",")
					for (i = 1; i <= n; i++) { split(xs[i], kv, "[=:]"); if (kv[1] != key) o = o (o == "" ? "" : ",") xs[i] }
					return o == "" ? "-" : o }
				index(names, " " $1 " ") {
					f = verb == "label" ? 2 : 3; key = arg; sub(/-$/, "", key); sub(/[=:].*$/, "", key)
					$f = drop($f, key)
					if (arg !~ /-$/) $f = ($f == "-" ? "" : $f ",") arg }
				{ print }' "$WORK/nodes" >"$WORK/nodes.new" && mv "$WORK/nodes.new" "$WORK/nodes"
		) 9>"$WORK/nodes.lock"
		return 0 ;;
	esac
}
sinfo() { echo 32; }
SLURM_PARTITION=fake
# shellcheck source=bench/scenarios/constrained.sh
. "$here/scenarios/constrained.sh"
labelled() { awk -v k="$1" '$2 ~ k' "$WORK/nodes" | wc -l; }
tainted() { awk -v k="$1" '$3 ~ k' "$WORK/nodes" | wc -l; }

NODES=64
constrained_pods ns 2000 slurm-bridge >"$WORK/pods.yaml"
check "constrained pods: 2000, a third constrained, valid YAML" test "$(python3 -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
sel = [p for p in d["items"] if p["spec"].get("nodeSelector", {}).get("bench.slurm-bridge.io/zone") == "a"]
pool = [p for p in d["items"] if p["spec"].get("nodeSelector", {}).get("bench.slurm-bridge.io/pool") == "a"
	and {"key": "bench.slurm-bridge.io/pool", "operator": "Equal", "value": "a", "effect": "NoSchedule"} in p["spec"]["tolerations"]]
names = {p["metadata"]["name"][:4] for p in sel} | {p["metadata"]["name"][:4] for p in pool}
print(len(d["items"]), len(sel), len(pool), sorted(n[:4] for n in names if n.startswith("c-")))
' "$WORK/pods.yaml" 2>&1)" = "2000 334 333 ['c-s-', 'c-t-']"
# A node left labelled by an "earlier run": removed first.
fake_nodes 64
k label nodes -l "kubernetes.io/hostname in (n3)" "$CONSTRAINED_ZONE_KEY=a"
scenario_layout() {
	constrained_setup
	labelled "$CONSTRAINED_ZONE_KEY=a" >"$WORK/zone-n"; labelled "$CONSTRAINED_POOL_KEY=a" >"$WORK/pool-n"
	tainted "$CONSTRAINED_POOL_KEY=a:NoSchedule" >"$WORK/taint-n"
	printf 'c-s-0 n2\nc-t-3 n7\np-1 n3\np-2 n1\nc-s-6 n3\n' >"$WORK/pods"
	constrained_violations ns >"$WORK/violations"
	echo "${CONSTRAINED_MEMBERS[*]}" >"$WORK/members"
	false  # the scenario fails after its setup: its at_exit undoes it
}
run_scenario layout 2>/dev/null
check "64 nodes: 32 in the zone, 11 in the pool, tainted" \
	test "$(cat "$WORK/zone-n") $(cat "$WORK/pool-n") $(cat "$WORK/taint-n")" = "32 11 11"
check "the leftover label on n3 (not a zone node) was removed first" \
	test "$(awk '$1 == "n3" { print $2 }' "$WORK/nodes")" = "-"
check "violations: a plain pod on the pool, a selector pod off the zone" test "$(cat "$WORK/violations")" = 2
check "the record's layout members" grep -q "zone_nodes=32 -n pool_nodes=11 -n other_nodes=21 -n selector_pods=334 -n pool_pods=333 -n plain_pods=1333" "$WORK/members"
check "nodes as found after the scenario failed" \
	test "$(awk '$2 != "-" || $3 != "slinky.slurm.net/managed-node"' "$WORK/nodes" | wc -l)" -eq 0
NODES=1000
fake_nodes 1000
scenario_big() { constrained_setup; labelled "$CONSTRAINED_ZONE_KEY=a" >"$WORK/zone-n"; tainted "$CONSTRAINED_POOL_KEY=a:NoSchedule" >"$WORK/taint-n"; }
run_scenario big
check "1000 nodes: 500 in the zone, 167 in the pool; as found at the end" \
	test "$(cat "$WORK/zone-n") $(cat "$WORK/taint-n") $(awk '$2 != "-" || $3 != "slinky.slurm.net/managed-node"' "$WORK/nodes" | wc -l)" = "500 167 0"

echo "control: this bash ran an unguarded EXIT trap in $(control) of 100 children killed at once;"
echo "  the race scenario's children said \"wait_for: No record of process\" $(grep -c 'No record of process' "$WORK/race.err" || true) times of 200"
if [ "$fails" -gt 0 ]; then echo "selftest: $fails checks failed" >&2; exit 1; fi
echo "selftest: all checks hold"
