#!/usr/bin/env bash
# make bench: the benchmark scenarios on the local stack, and their table.
#
# make bench: the scheduler side by side with Slurm alone and with a stock
# kube-scheduler, on the local stack (BENCH_NODES Slurm nodes and matching
# kwok nodes, default 64).  It reports; it asserts nothing about speed.
#
# This is the driver: the settings the scenarios share, the stack, then
# each scenario, one file each in bench/scenarios/ (its header says what
# it measures and which BENCH_* knobs it takes), then the plots, the
# results file and the table (bench/table.sh).  bench/lib.sh holds what
# the scenarios share; bench/tools/ the programs: those that measure
# (bindwatch, podgen, readywait, slurm-baseline) and record, which writes
# every JSON record and the results file from what they measured.
#
# singles, constrained, gangs and fixed run in BENCH_ROUNDS (default 3) interleaved
# rounds of each system, and the table gives each ratio's median over the
# rounds with its spread: one noisy run decides nothing.
# Scenarios (each with its baseline in the same run):
#   singles   BENCH_SINGLES one-CPU pods present when the scheduler starts,
#             against Slurm alone (libslurm) and a stock kube-scheduler
#   constrained  as singles (BENCH_CONSTRAINED pods), a third of them with a
#             node selector or a taint pool (the scenario labels and taints
#             the nodes, and undoes it), against a stock kube-scheduler:
#             constrained and plain pods reported apart
#   gangs     BENCH_GANGS gangs of 8 one-GPU pods, the same way
#   fixed     pods arriving at BENCH_FIXED_RATE pods/s (podgen), against the
#             running bridge and a kube-scheduler: creation to bind per pod
#   churn     steady create and delete: the bridge's CPU, RSS and Slurm RPCs
#             per pod; then idle, its CPU with nothing to do
#   backlog   pods pending behind native jobs, in bands: RSS, poll and
#             decision times at each; then every watch relisting; then
#             nodes freed one by one: each started pod's release-to-bind
#   webhook   bench/webhook/run.sh (BENCH_WEBHOOK=0 skips it)
#   owners    both daemons' memory against owner objects they do not
#             schedule; "bench/run.sh owners" runs it alone, against the
#             stack as it is (it neither brings the stack up nor restarts
#             its daemons)
# BENCH_SCENARIOS picks some ("singles gangs"); the default is all nine.
# Output: one table on stdout, the figures as JSON in
# bench/results/bench-<UTC date>.json (BENCH_OUT names another), and next
# to it PNG plots of binds over time (-singles.png, -constrained.png,
# -fixed.png; gnuplot, installed by deps.sh --bench when missing, else no
# plots).  Pod latencies are in ms, to the bind seen on bindwatch's watch:
# in singles, constrained and gangs from t0 (a pod bound before it counts
# 0), in fixed from the pod's ADDED event on that same watch.
# For singles, constrained, gangs and fixed the bench also reads, over each system's
# window, the API server's mutating requests (apiserver_request_total) per
# bound pod, the bridge's Slurm RPCs per pod (its /metrics), and the
# scheduler's CPU seconds per bound pod.
# BENCH_KEEP=DIR keeps the run's working files there (per-pod bind times,
# bindwatch's output) for a closer look.
# A scenario that fails (bench/lib.sh's run_scenario) ends alone: the run
# goes on with the next, the results file holds the others' records and a
# "failed" entry for it (its exit status and the command that failed), the
# table names it, and the run exits 1.  A run stopped part-way (a signal)
# still writes the results it has.  make bench-selftest checks this
# without a stack.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
export NODES=${BENCH_NODES:-64}
# Baseline A (build/bench/slurm-baseline) links the host's libslurm: the
# bench runs on the host's Slurm, whatever release the stack last ran.
# BENCH_SLURM=26.05 runs it on another release's root instead (topology/
# block, the gangs scenario's gangs-block), without baseline A, which
# cannot talk to a newer slurmctld.
export SLURM=${BENCH_SLURM:-22.05}
# shellcheck source=scripts/stack/stack-env.sh
. "$top/scripts/stack/stack-env.sh"

# Both schedulers get the same client-side API rate (kube-scheduler's
# default is 50/100, the bridge's 200/400).
export BRIDGE_API_QPS=${BENCH_API_QPS:-1000} BRIDGE_API_BURST=${BENCH_API_BURST:-2000}
# After a system's last bind, its asynchronous writes (Events, conditions,
# kwok's status) land before the window's API counts are read.
SETTLE_S=${BENCH_SETTLE_S:-3}
ROUNDS=${BENCH_ROUNDS:-3}
case $ROUNDS in "" | *[!0-9]* | 0) echo "bench: BENCH_ROUNDS: a whole number of rounds, 1 or more" >&2; exit 2 ;; esac
# kube-scheduler's profile; only a test on a shared stack needs another
# name, so that it places no one else's pods.
KUBE_SCHED_NAME=${BENCH_KUBE_SCHEDULER_NAME:-default-scheduler}
KUBE_SCHED_PORT=10259
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${BENCH_OUT:-$top/bench/results/bench-$STAMP.json}
[ "${1:-}" = owners ] && OUT=${BENCH_OUT:-$top/bench/results/owners-$STAMP.json}
BASELINE=$top/build/bench/slurm-baseline
BINDWATCH=$top/build/bench/bindwatch
PODGEN=$top/build/bench/podgen
READYWAIT=$top/build/bench/readywait
RECORD=$top/build/bench/record
CPUSERIES=$top/build/bench/cpuseries
WORK=$(mktemp -d)
RESULTS=$WORK/results.jsonl   # one record (a JSON object) per line
BENCH_T0=$(date +%s)
SCENARIOS=" ${BENCH_SCENARIOS:-singles constrained gangs fixed churn backlog webhook owners epilog} "
# "bench/run.sh owners": that scenario alone, on the stack as it is.
ALONE=
if [ "${1:-}" = owners ]; then ALONE=owners SCENARIOS=" owners "; fi
want() { [[ $SCENARIOS == *" $1 "* ]]; }
# write_results: the results file, $OUT: every record so far, and the
# scenarios that failed ("failed": the scenario, its exit status, the
# error).
write_results() {
	mkdir -p "$(dirname "$OUT")"
	"$RECORD" file --nodes "$NODES" --cpus "$(nproc)" --seconds "$(( $(date +%s) - BENCH_T0 ))" \
		--plots "${plots[*]:-}" --runs "$RESULTS" --failed "$WORK/failed.jsonl" >"$OUT"
	written=1
}

# The run's own shell: its EXIT trap acts there alone (see run_scenario in
# bench/lib.sh: a background subshell may run the trap it inherited).
BENCH_SHELL=$BASHPID
AT_EXIT=() scenario='' written=''
# cleanup STATUS: what a scenario left running is stopped (each scenario
# stops its own: this is for the driver's), and a run that stops before
# its end (interrupted, or the stack failing under it) still writes the
# results of the scenarios that ran, the one it stopped in as failed.
cleanup() {
	[ "$BASHPID" = "$BENCH_SHELL" ] || return 0
	stop_started
	if [ -z "$written" ] && { [ -s "$RESULTS" ] || [ -s "$WORK/failed.jsonl" ]; }; then
		# Status 0 here: a signal (bash runs this trap then too).
		local why="exit status $1" st=$1
		[ "$1" -ne 0 ] || why="a signal" st=
		rec_to "$WORK/failed.jsonl" failed --scenario "${scenario:-driver}" --status "$st" \
			--error "the run stopped here ($why)" || true
		write_results || true
		say "results so far: ${OUT#"$top"/}"
	fi
	[ -n "${BENCH_KEEP:-}" ] && mkdir -p "$BENCH_KEEP" && cp -a "$WORK/." "$BENCH_KEEP/"
	rm -rf "$WORK"
}
# (The guard first, its pid written in: see run_scenario.)
# shellcheck disable=SC2154 # bench_rc: set in the trap
trap 'bench_rc=$?; [ "$BASHPID" != '"$BASHPID"' ] || cleanup "$bench_rc"' EXIT

# shellcheck source=bench/lib.sh
. "$here/lib.sh"
# Every scenario's settings (checked now, not an hour in) and its
# scenario_NAME function.
# shellcheck source=bench/scenarios/singles.sh
. "$here/scenarios/singles.sh"
# shellcheck source=bench/scenarios/constrained.sh
. "$here/scenarios/constrained.sh"
# shellcheck source=bench/scenarios/gangs.sh
. "$here/scenarios/gangs.sh"
# shellcheck source=bench/scenarios/fixed.sh
. "$here/scenarios/fixed.sh"
# shellcheck source=bench/scenarios/churn.sh
. "$here/scenarios/churn.sh"
# shellcheck source=bench/scenarios/backlog.sh
. "$here/scenarios/backlog.sh"
# shellcheck source=bench/scenarios/webhook.sh
. "$here/scenarios/webhook.sh"
# shellcheck source=bench/scenarios/owners.sh
. "$here/scenarios/owners.sh"
# shellcheck source=bench/scenarios/epilog.sh
. "$here/scenarios/epilog.sh"
[ -x "$RECORD" ] || { say "no $RECORD (make bench-tools)"; exit 1; }

# --- the stack ----------------------------------------------------------------
have_gnuplot=0
if [ -n "$ALONE" ]; then
	# On the stack as it is: up, and its daemons left alone.
	k get namespace default >/dev/null || { say "the stack is not up (make cluster-up)"; exit 1; }
else
# gnuplot for the plots, installed now rather than between two runs.
if command -v gnuplot >/dev/null 2>&1 ||
	{ "$top/scripts/dev/deps.sh" --bench >"$WORK/deps.log" 2>&1 && command -v gnuplot >/dev/null 2>&1; }; then
	have_gnuplot=1
else
	say "no gnuplot (deps.sh --bench: $(tail -1 "$WORK/deps.log")): no plots"
fi
say "stack: $NODES nodes"
"$top/scripts/stack/cluster-up.sh" >"$WORK/cluster-up.log" 2>&1 || { cat "$WORK/cluster-up.log"; exit 1; }
"$top/scripts/stack/bridge-up.sh" >/dev/null
stack_resolve_bin KUBE_SCHEDULER kube-scheduler build
for d in $(k get namespaces -o name | sed -n 's#^namespace/\(bench-.*\)$#\1#p'); do drop_ns "$d"; done
wait_no_jobs
fi

# --- the scenarios, in this order -------------------------------------------
# after_failure NAME: the stack as the next scenario expects it: no bench
# namespace, no job of the bridge in Slurm, the bridge up (a scenario may
# fail with it stopped).  Not for "bench/run.sh owners" (its daemons are
# left alone).
after_failure() {
	[ -z "$ALONE" ] || return 0
	local d
	for d in $(k get namespaces -o name | sed -n 's#^namespace/\(bench-.*\)$#\1#p'); do drop_ns "$d"; done
	wait_no_jobs
	"$top/scripts/stack/bridge-up.sh" >"$WORK/bridge-up.log" 2>&1 ||
		{ say "bridge-up: $(tail -1 "$WORK/bridge-up.log")"; return 1; }
}
for s in singles constrained gangs fixed churn backlog webhook owners epilog; do
	if want "$s"; then run_scenario "$s"; fi
done

# --- the plots --------------------------------------------------------------------
mkdir -p "$(dirname "$OUT")"
plots=()
# plot NAME TITLE XLABEL YLABEL STYLE [SETTINGS]: one PNG next to the JSON
# from $WORK/plot-NAME-<system>.dat, one series per system that ran.
plot() {
	local name=$1 title=$2 xl=$3 yl=$4 style=$5 extra=${6:-} sys f t c png series=()
	for sys in slurm bridge kube-scheduler; do
		f=$WORK/plot-$name-$sys.dat
		[ -s "$f" ] || continue
		# One colour per system in every plot.
		case $sys in
		slurm) t="Slurm alone (libslurm)" c="#9400d3" ;;
		bridge) t=slurm-bridge c="#009e73" ;;
		*) t=kube-scheduler c="#0072b2" ;;
		esac
		series+=("'$f' using 1:2 $style lc rgb '$c' title '$t'")
	done
	[ ${#series[@]} -gt 0 ] || return 0
	png=${OUT%.json}-$name.png
	if gnuplot >"$WORK/gnuplot.log" 2>&1 <<GP
set terminal pngcairo size 1100,650
set output '$png'
set title "$title"
set xlabel "$xl"
set ylabel "$yl"
set key left top
set grid
$extra
plot $(IFS=,; echo "${series[*]}")
GP
	then plots+=("$(basename "$png")")
	else say "gnuplot $name: $(tail -1 "$WORK/gnuplot.log")"
	fi
}
if [ "$have_gnuplot" = 1 ]; then
	plot singles "singles: $SINGLES one-CPU pods on $NODES nodes" \
		"seconds since t0 (the scheduler ready; Slurm alone: its first submit)" \
		"pods bound" "with lines lw 2"
	plot constrained "constrained: $CONSTRAINED one-CPU pods, a third constrained, on $NODES nodes" \
		"seconds since t0 (the scheduler ready)" "pods bound" "with lines lw 2"
	plot fixed "fixed: $(cat "$WORK/fixed-rate" 2>/dev/null || echo "$FIXED_RATE") pods/s for $FIXED_S s on $NODES nodes" \
		"seconds since the first pod was due (its arrival)" \
		"creation to bind (ms, from ADDED)" "with points pt 7 ps 0.4" "set logscale y"
fi

# --- the results file and the table ---------------------------------------------
write_results
"$here/table.sh" "$OUT"
say "results: ${OUT#"$top"/} ($(( $(date +%s) - BENCH_T0 )) s)"
# The backlog scenario deletes its pods itself (its deletion phase, timed
# there); what a run cut short left behind goes here, after the table.
if want backlog; then
	t=$(date +%s)
	drop_ns bench-backlog
	wait_no_jobs
	say "backlog teardown (what the scenario left): $(( $(date +%s) - t )) s"
fi
# A run with a failed scenario exits 1 (its results written all the same).
if [ -s "$WORK/failed.jsonl" ]; then
	say "failed: $(jq -r .scenario "$WORK/failed.jsonl" | paste -sd' ')"
	exit 1
fi
