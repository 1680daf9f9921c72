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
# there.  Needs build/bench/record (make bench-tools) and jq; touches no
# cluster.  Exits 0 when every check holds, 1 otherwise.
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

for s in good bad quits race; do run_scenario "$s"; done
bw=$(cat "$WORK/bad-bw")
race_bw=$(cat "$WORK/race-bw")
sleep 0.2

check "the finished scenarios' records kept" \
	test "$(jq -r .scenario "$RESULTS" | paste -sd' ')" = "good bad race"
check "two failed entries, in order" \
	test "$(jq -r .scenario "$WORK/failed.jsonl" | paste -sd' ')" = "bad quits"
# shellcheck disable=SC2016 # the backquotes and $WORK are text
check "the failed command named, with its function and line" \
	grep -qF '"error":"`ls \"$WORK/no-such-file\" > /dev/null 2>&1` exited 2 in bad_step (bench/selftest.sh:'"$(grep -n '# the failure$' "$0" | cut -d: -f1)"')"' "$WORK/failed.jsonl"
check "a failed scenario stopped at its failure" test ! -e "$WORK/bad-went-on"
check "what the failed scenario started is stopped" gone "$bw"
check "its at_exit function ran once" test "$(wc -l <"$WORK/bad-undo")" -eq 1
check "an exit is a failure, with its status" \
	test "$(jq -r 'select(.scenario == "quits") | .exit_status' "$WORK/failed.jsonl")" = 3
check "after_failure for each failed one" test "$(paste -sd' ' "$WORK/after-failure")" = "bad quits"
check "killed children ran no trap: the scenario finished" \
	test "$(jq -r 'select(.scenario == "race") | .scenario' "$RESULTS")" = race
check "its at_exit function ran once, at its end" test "$(wc -l <"$WORK/race-undo")" -eq 1
check "its watcher stopped at its end" gone "$race_bw"
check "the driver's shell still has its working directory" test -s "$RESULTS"

"$RECORD" file --nodes 4 --cpus "$(nproc)" --seconds 1 --plots "" --runs "$RESULTS" \
	--failed "$WORK/failed.jsonl" >"$OUT"
check "the results file: runs and failed" \
	test "$(jq -r '"\(.runs | length) \(.failed | length) \(.failed[0].exit_status)"' "$OUT")" = "3 2 2"
check "the table names each failure" \
	test "$("$here/table.sh" "$OUT" | grep -c '^FAILED: ')" -eq 2

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

echo "control: this bash ran an unguarded EXIT trap in $(control) of 100 children killed at once;"
echo "  the race scenario's children said \"wait_for: No record of process\" $(grep -c 'No record of process' "$WORK/race.err" || true) times of 200"
if [ "$fails" -gt 0 ]; then echo "selftest: $fails checks failed" >&2; exit 1; fi
echo "selftest: all checks hold"
