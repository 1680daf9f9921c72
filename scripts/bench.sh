#!/usr/bin/env bash
# make bench: the scheduler side by side with Slurm alone and with a stock
# kube-scheduler, on the local stack (BENCH_NODES Slurm nodes and matching
# kwok nodes, default 64).  It reports; it asserts nothing about speed.
#
# Scenarios (each with its baseline in the same run):
#   singles   BENCH_SINGLES one-CPU pods (default 2000), room for all.
#             bridge:     the pods exist, then slurm-bridge starts (t0) and
#                         places them all;
#             baseline A: the same placeholders through libslurm alone
#                         (build/bench/slurm-baseline);
#             baseline B: a stock kube-scheduler starts (t0) and places the
#                         same pods (default-scheduler) on the same nodes.
#   gangs     BENCH_GANGS gangs of 8 one-GPU pods (default: as many as the
#             GPUs hold at once, at most 100), the same way, against
#             baseline A's 8-task allocations; bindwatch checks on the watch
#             stream that no gang is ever partially bound.
#   churn     BENCH_CHURN_S seconds (default 30) of steady create and delete
#             at BENCH_CHURN_RATE pods/s (default 20): the bridge's CPU
#             seconds, RSS over time, and Slurm RPCs per pod.
#   backlog   BENCH_BACKLOG pods (default 10000) pending against a cluster a
#             native Slurm job fills: the bridge's RSS, and the time per
#             decision and per Slurm poll as the backlog grows.
#   webhook   scripts/bench-webhook.sh (BENCH_WEBHOOK=0 skips it).
# BENCH_SCENARIOS picks some ("singles gangs"); the default is all five.
# Output: one table on stdout, and the figures as JSON in
# bench/results/bench-<UTC date>.json.  Pods latencies are from t0 (the
# release: the scheduler's start, or the first submit) to the bind seen on
# the watch, in ms.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
export NODES=${BENCH_NODES:-64}
# Baseline A (build/bench/slurm-baseline) links the host's libslurm: the
# bench runs on the host's Slurm, whatever release the stack last ran.
export SLURM=22.05
. "$here/stack-env.sh"

# Both schedulers get the same client-side API rate (kube-scheduler's
# default is 50/100, the bridge's 200/400).
export BRIDGE_API_QPS=${BENCH_API_QPS:-1000} BRIDGE_API_BURST=${BENCH_API_BURST:-2000}
SINGLES=${BENCH_SINGLES:-2000}
GANG_SIZE=8
GANGS=${BENCH_GANGS:-$(( NODES * 8 / GANG_SIZE < 100 ? NODES * 8 / GANG_SIZE : 100 ))}
CHURN_S=${BENCH_CHURN_S:-30}
CHURN_RATE=${BENCH_CHURN_RATE:-20}
BACKLOG=${BENCH_BACKLOG:-10000}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${BENCH_OUT:-$top/bench/results/bench-$STAMP.json}
BASELINE=$top/build/bench/slurm-baseline
BINDWATCH=$top/build/bench/bindwatch
WORK=$(mktemp -d)
RESULTS=$WORK/results.jsonl
BENCH_T0=$(date +%s)
k() { kubectl --kubeconfig="$KUBECONFIG" "$@"; }
say() { printf 'bench: %s\n' "$*" >&2; }
now_ms() { date +%s%3N; }
record() { printf '%s\n' "$1" >>"$RESULTS"; }   # one JSON object per line
SCENARIOS=" ${BENCH_SCENARIOS:-singles gangs churn backlog webhook} "
want() { [[ $SCENARIOS == *" $1 "* ]]; }

cleanup() {
	[ -n "${sched_pid:-}" ] && kill "$sched_pid" 2>/dev/null
	[ -n "${native_job:-}" ] && scancel "$native_job" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

# --- helpers ----------------------------------------------------------------
bridge_pid() { stack_pid "$BRIDGE_PIDFILE"; }
bridge_stop() { stack_stop slurm-bridge "$BRIDGE_PIDFILE" slurm-bridge 20 >/dev/null; }
bridge_start() { "$here/bridge-up.sh" >/dev/null; }
# metric NAME: a value from the bridge's /metrics.
metric() {
	curl -s "http://$LOCAL_IP:$BRIDGE_PORT/metrics" |
		awk -v n="$1" '$1 == n { print $2; f = 1 } END { if (!f) print 0 }'
}
# proc_cpu PID: user + system CPU seconds of a process.
proc_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f\n", ($14 + $15) / hz }' "/proc/$1/stat"; }
proc_rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }

# pods NS PREFIX N SCHEDULER [GPU] [GANG]: a List of N pods.
pods() {
	local ns=$1 prefix=$2 n=$3 sched=$4 gpu=${5:-0} gang=${6:-0}
	awk -v ns="$ns" -v p="$prefix" -v n="$n" -v s="$sched" -v gpu="$gpu" -v gang="$gang" 'BEGIN {
		print "apiVersion: v1\nkind: List\nitems:"
		for (i = 0; i < n; i++) {
			print "- apiVersion: v1\n  kind: Pod\n  metadata:"
			printf "    name: %s-%d\n    namespace: %s\n", p, i, ns
			if (gang > 0) {
				printf "    labels: {scheduling.x-k8s.io/pod-group: g%d}\n", int(i / gang)
				printf "    annotations: {scheduler.slinky.slurm.net/min-member: \"%d\"}\n", gang
			}
			printf "  spec:\n    schedulerName: %s\n    terminationGracePeriodSeconds: 0\n", s
			print "    tolerations: [{key: slinky.slurm.net/managed-node, operator: Exists, effect: NoExecute}]"
			print "    containers:\n    - name: main\n      image: busybox"
			printf "      resources: {requests: {cpu: \"1\", memory: 64Mi}"
			if (gpu > 0) printf ", limits: {nvidia.com/gpu: \"%d\"}", gpu
			print "}"
		}
	}'
}
# create NS YAML-on-stdin: kubectl create in chunks of 500 objects.
create_pods() { k create -f - >/dev/null; }
new_ns() {  # new_ns NAME [enabled]
	k delete namespace "$1" --ignore-not-found --wait=true --timeout=300s >/dev/null
	k create namespace "$1" >/dev/null
	[ "${2:-}" = enabled ] && k label namespace "$1" slurm-bridge=enabled >/dev/null
	until k -n "$1" get serviceaccount default >/dev/null 2>&1; do sleep 0.2; done
}
# drop_ns NAME: its pods first in one collection delete (the namespace
# controller alone deletes them one by one at its own client rate), then it.
drop_ns() {
	# The pods first, in one server-side collection delete (kubectl
	# delete --all sends one DELETE per pod, and the namespace controller
	# too: minutes for thousands); then count them down cheaply (a list of
	# one item tells how many remain) before deleting the namespace, which
	# its controller otherwise retries with a growing backoff.
	local i n
	k delete --raw "/api/v1/namespaces/$1/pods" >/dev/null 2>&1 || true
	for ((i = 0; i < 900; i++)); do
		n=$(k get --raw "/api/v1/namespaces/$1/pods?limit=1" 2>/dev/null |
			jq '(.metadata.remainingItemCount // 0) + (.items | length)' 2>/dev/null)
		[ -n "$n" ] && [ "$n" -eq 0 ] && break
		sleep 1
	done
	k delete namespace "$1" --wait=true --timeout=600s >/dev/null 2>&1 || true
}
no_bridge_jobs() { ! squeue -h -t PD,R,CG -o '%k' | grep -q '^slurm-bridge:'; }
wait_no_jobs() { local i; for ((i = 0; i < 600; i++)); do no_bridge_jobs && return 0; sleep 0.5; done; say "warning: bridge jobs left in Slurm"; }
# bindwatch_start NS N [ARGS]: starts the watcher, which measures from t0,
# the release, 2 s ahead (its list is done by then); waits until t0.  Its
# JSON lands in $WORK/bw-NS.json.
bindwatch_start() {
	local ns=$1 n=$2; shift 2
	t0=$(( $(now_ms) + 2000 ))
	"$BINDWATCH" --kubeconfig "$KUBECONFIG" --namespace "$ns" --count "$n" --t0 "$t0" \
		--timeout "${BENCH_TIMEOUT:-600}" "$@" >"$WORK/bw-$ns.json" 2>"$WORK/bw-$ns.err" &
	bw_pid=$!
	while [ "$(now_ms)" -lt "$t0" ]; do sleep 0.05; done
}
# bindwatch_wait NS: waits for the watcher (not in a subshell: it is our
# child), then sets $res to its JSON (null if it printed none).
bindwatch_wait() {
	wait "$bw_pid" || true
	res=$(cat "$WORK/bw-$1.json")
	[ -n "$res" ] || { res=null; say "bindwatch $1: $(tail -1 "$WORK/bw-$1.err")"; }
}

# --- the stack ----------------------------------------------------------------
say "stack: $NODES nodes"
"$here/cluster-up.sh" >"$WORK/cluster-up.log" 2>&1 || { cat "$WORK/cluster-up.log"; exit 1; }
"$here/bridge-up.sh" >/dev/null
stack_resolve_bin KUBE_SCHEDULER kube-scheduler build
for d in $(k get namespaces -o name | sed -n 's#^namespace/\(bench-.*\)$#\1#p'); do drop_ns "$d"; done
wait_no_jobs

# --- 1. singles -----------------------------------------------------------------
if want singles; then
say "singles: baseline A (libslurm alone), $SINGLES placeholders"
record "{\"scenario\":\"singles\",\"system\":\"slurm\",\"result\":$("$BASELINE" singles "$SINGLES")}"

say "singles: slurm-bridge, $SINGLES pods present when it starts"
bridge_stop
new_ns bench-singles enabled
pods bench-singles p "$SINGLES" slurm-bridge | create_pods
bindwatch_start bench-singles "$SINGLES"
bridge_start
bindwatch_wait bench-singles
record "{\"scenario\":\"singles\",\"system\":\"bridge\",\"t0_ms\":$t0,\"result\":$res,\"rpc_allocate\":$(metric 'slurm_bridge_slurm_rpc_duration_seconds_count{rpc="allocate_resources"}')}"
drop_ns bench-singles
wait_no_jobs

say "singles: baseline B (stock kube-scheduler), $SINGLES pods present when it starts"
new_ns bench-kube
pods bench-kube p "$SINGLES" default-scheduler | create_pods
cat >"$WORK/sched.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: $KUBECONFIG, qps: $BRIDGE_API_QPS, burst: $BRIDGE_API_BURST}
leaderElection: {leaderElect: false}
YAML
bindwatch_start bench-kube "$SINGLES"
"$KUBE_SCHEDULER" --config "$WORK/sched.yaml" --secure-port 0 >"$WORK/kube-scheduler.log" 2>&1 &
sched_pid=$!
bindwatch_wait bench-kube
kill "$sched_pid" 2>/dev/null; wait "$sched_pid" 2>/dev/null || true; sched_pid=
record "{\"scenario\":\"singles\",\"system\":\"kube-scheduler\",\"t0_ms\":$t0,\"result\":$res}"
drop_ns bench-kube
fi

# --- 2. gangs ---------------------------------------------------------------------
if want gangs; then
say "gangs: baseline A, $GANGS allocations of $GANG_SIZE one-GPU tasks"
record "{\"scenario\":\"gangs\",\"system\":\"slurm\",\"result\":$("$BASELINE" gangs "$GANGS" "$GANG_SIZE" 1)}"
say "gangs: slurm-bridge, $GANGS gangs of $GANG_SIZE one-GPU pods present when it starts"
bridge_stop
new_ns bench-gangs enabled
pods bench-gangs g $((GANGS * GANG_SIZE)) slurm-bridge 1 "$GANG_SIZE" | create_pods
bindwatch_start bench-gangs $((GANGS * GANG_SIZE)) --gang-label scheduling.x-k8s.io/pod-group
bridge_start
bindwatch_wait bench-gangs
record "{\"scenario\":\"gangs\",\"system\":\"bridge\",\"t0_ms\":$t0,\"result\":$res}"
drop_ns bench-gangs
wait_no_jobs
fi

# --- 3. churn ---------------------------------------------------------------------
if want churn; then
say "churn: ${CHURN_S}s at $CHURN_RATE pods/s created, each deleted 3 s later"
new_ns bench-churn enabled
pid=$(bridge_pid)
cpu0=$(proc_cpu "$pid")
# Per-pod RPCs (submit, kill) apart from the periodic polls.
rpcs() {
	local r n=0
	for r in "$@"; do n=$((n + $(metric "slurm_bridge_slurm_rpc_duration_seconds_count{rpc=\"$r\"}"))); done
	echo "$n"
}
rpc0=$(rpcs allocate_resources kill_job); poll0=$(rpcs load_jobs load_node update_node)
rss_series=""
for ((s = 0; s < CHURN_S; s++)); do
	tick=$(now_ms)
	pods bench-churn "c$s" "$CHURN_RATE" slurm-bridge | sed "s/^    namespace: bench-churn/    namespace: bench-churn\n    labels: {tick: \"$s\"}/" | create_pods &
	[ "$s" -ge 3 ] && k -n bench-churn delete pods -l "tick=$((s - 3))" --wait=false >/dev/null &
	rss_series+="${rss_series:+,}$(proc_rss_kib "$pid")"
	wait
	left=$((1000 - ($(now_ms) - tick)))
	[ "$left" -gt 0 ] && sleep "$(printf '0.%03d' "$left")"
done
k -n bench-churn delete pods --all --wait=true --timeout=120s >/dev/null
wait_no_jobs
cpu1=$(proc_cpu "$pid")
rpc1=$(rpcs allocate_resources kill_job); poll1=$(rpcs load_jobs load_node update_node)
npods=$((CHURN_S * CHURN_RATE))
record "{\"scenario\":\"churn\",\"system\":\"bridge\",\"pods\":$npods,\"seconds\":$CHURN_S,\"cpu_s\":$(echo "$cpu1 - $cpu0" | bc),\"rpcs\":$((rpc1 - rpc0)),\"rpcs_per_pod\":$(echo "scale=2; ($rpc1 - $rpc0) / $npods" | bc),\"polls\":$((poll1 - poll0)),\"rss_kib\":[$rss_series]}"
drop_ns bench-churn
sleep 10
idle0=$(proc_cpu "$pid"); sleep 20; idle1=$(proc_cpu "$pid")
record "{\"scenario\":\"idle\",\"system\":\"bridge\",\"cpu_percent\":$(echo "scale=2; ($idle1 - $idle0) * 100 / 20" | bc)}"
fi

# --- 4. backlog -------------------------------------------------------------------
if want backlog; then
say "backlog: a native job fills the cluster; $BACKLOG pods pile up behind it"
native_job=$(salloc --no-shell --immediate=60 -J bench-filler -N "$NODES" --exclusive -t 60 2>&1 |
	sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p')
new_ns bench-backlog enabled
pid=$(bridge_pid)
bands=""
step=$(( BACKLOG / 5 ))
sub0=$(metric slurm_bridge_jobs_submitted_total)
for ((b = step; b <= BACKLOG; b += step)); do
	d0=$(metric slurm_bridge_decision_seconds_sum); c0=$(metric slurm_bridge_decision_seconds_count)
	p0=$(metric 'slurm_bridge_slurm_rpc_duration_seconds_sum{rpc="load_jobs"}'); q0=$(metric 'slurm_bridge_slurm_rpc_duration_seconds_count{rpc="load_jobs"}')
	pods bench-backlog "b$b" "$step" slurm-bridge | create_pods
	# Every pod submitted (a pending job each), then 10 s of steady state.
	for ((i = 0; i < 600; i++)); do
		[ $(( $(metric slurm_bridge_jobs_submitted_total) - sub0 )) -ge "$b" ] && break
		sleep 1
	done
	sleep 10
	d1=$(metric slurm_bridge_decision_seconds_sum); c1=$(metric slurm_bridge_decision_seconds_count)
	p1=$(metric 'slurm_bridge_slurm_rpc_duration_seconds_sum{rpc="load_jobs"}'); q1=$(metric 'slurm_bridge_slurm_rpc_duration_seconds_count{rpc="load_jobs"}')
	bands+="${bands:+,}{\"pending\":$b,\"rss_kib\":$(proc_rss_kib "$pid"),\"decision_ms\":$(echo "scale=3; ($d1 - $d0) * 1000 / ($c1 - $c0 + 0.0001)" | bc),\"poll_ms\":$(echo "scale=3; ($p1 - $p0) * 1000 / ($q1 - $q0 + 0.0001)" | bc),\"polls\":$((q1 - q0))}"
	say "backlog: $b pending"
done
record "{\"scenario\":\"backlog\",\"system\":\"bridge\",\"bands\":[$bands]}"
scancel "$native_job"; native_job=
fi

# --- 5. webhook -------------------------------------------------------------------
if want webhook && [ "${BENCH_WEBHOOK:-1}" != 0 ]; then
	say "webhook: scripts/bench-webhook.sh"
	BENCH_OUT=$WORK/webhook.json DURATION=${BENCH_WEBHOOK_S:-15} WARMUP=3 SAT_DURATION=5 \
		HANDSHAKE_DURATION=0 "$here/bench-webhook.sh" >"$WORK/webhook.out" 2>&1 || true
	[ -s "$WORK/webhook.json" ] && record "{\"scenario\":\"webhook\",\"system\":\"admission\",\"result\":$(cat "$WORK/webhook.json")}"
fi

# --- the table --------------------------------------------------------------------
mkdir -p "$(dirname "$OUT")"
jq -s --arg nodes "$NODES" --arg secs "$(( $(date +%s) - BENCH_T0 ))" \
	'{nodes: ($nodes | tonumber), seconds: ($secs | tonumber), host: {cpus: 2}, runs: .}' \
	"$RESULTS" >"$OUT"
"$here/bench-table.sh" "$OUT"
say "results: ${OUT#"$top"/} ($(( $(date +%s) - BENCH_T0 )) s)"
# The backlog's pods go last, after the table: tearing 10000 down is bound
# by the API server (a finalizer release and a delete per pod), not part
# of any scenario, and is timed on its own.
if want backlog; then
	t=$(date +%s)
	drop_ns bench-backlog
	wait_no_jobs
	say "backlog teardown: $BACKLOG pods in $(( $(date +%s) - t )) s"
fi
