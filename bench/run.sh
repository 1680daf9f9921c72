#!/usr/bin/env bash
# make bench: the scheduler side by side with Slurm alone and with a stock
# kube-scheduler, on the local stack (BENCH_NODES Slurm nodes and matching
# kwok nodes, default 64).  It reports; it asserts nothing about speed.
#
# Scenarios (each with its baseline in the same run):
#   singles   BENCH_SINGLES one-CPU pods (default 2000), room for all.
#             bridge:     the pods exist, then slurm-bridge starts and
#                         places them all; t0 is the moment its /readyz
#                         first answers 200 (polled every 10 ms), so its
#                         start-up, reported apart, is not scheduling time;
#             baseline A: the same placeholders through libslurm alone
#                         (build/bench/slurm-baseline; t0: its first submit);
#             baseline B: a stock kube-scheduler starts and places the
#                         same pods (default-scheduler) on the same nodes;
#                         t0 the same way (its /readyz on a secure port).
#   gangs     BENCH_GANGS gangs of 8 one-GPU pods (default: as many as the
#             GPUs hold at once, at most 100), the same way, against
#             baseline A's 8-task allocations; bindwatch checks that no
#             gang is left partly bound, that each member carries its
#             Slurm node when first seen bound, and how far apart in time
#             a gang's members are bound.
#   fixed     pods arrive at BENCH_FIXED_RATE pods/s (default 100) for
#             BENCH_FIXED_S seconds (default 60), one-CPU pods as singles,
#             each deleted BENCH_FIXED_LIFE_S seconds (default 10) after it
#             arrived so the run fits in the cluster (build/bench/podgen),
#             against the running bridge and against a kube-scheduler
#             started (and ready) beforehand: creation to bind per pod.
#   churn     BENCH_CHURN_S seconds (default 30) of steady create and delete
#             at BENCH_CHURN_RATE pods/s (default 20): the bridge's CPU
#             seconds, RSS over time, and Slurm RPCs per pod.
#   backlog   pods pending as Slurm jobs behind a native job (salloc) that
#             holds every node, in bands: BENCH_BACKLOG_BANDS (default
#             "2000 10000 50000"; BENCH_BACKLOG=N alone makes N the top band
#             over the default ones below it), created by podgen at
#             BENCH_BACKLOG_RATE pods/s (default 250), against a bridge
#             started afresh for it once slurmctld holds no job (waiting
#             at most BENCH_BACKLOG_DRAIN_S seconds, default 360, for it to
#             forget finished ones).  At 0 pending (the bridge ready and
#             idle) and once each band is reached (every pod submitted,
#             within BENCH_BACKLOG_TIMEOUT_S seconds, default 600; a band
#             not reached is reported so, and ends the climb), a steady
#             window of BENCH_BACKLOG_WINDOW_S seconds (default 20) with no
#             new pods: the bridge's VmRSS at its end, its /debug/memory
#             object when that answers 200, and the mean time per Slurm
#             poll (load_jobs) over it, from sum and count deltas.  A
#             backlog that only waits makes no decisions, so then
#             BENCH_BACKLOG_PROBE more pods (default 50) come at 10/s: the
#             mean time per decision (slurm_bridge_decision_seconds) over
#             them, at that backlog (they stay, and count in the next
#             band).  The RSS growth in bytes per pending pod between the
#             two top bands, and from 0 to the second top band.  Then, at
#             the top band, the kube-apiserver restarts so every watch
#             relists: the bridge's RSS every 200 ms, steady before, peak
#             until every watch relisted (slurm_bridge_watch_relists_total)
#             and BENCH_RELIST_SETTLE_S seconds (default 10) more
#             (BENCH_BACKLOG_RELIST=0 skips it).  The table sets the
#             figures against the issue's targets.
#   webhook   bench/webhook/run.sh (BENCH_WEBHOOK=0 skips it).
#   owners    both daemons' memory against owner objects they do not
#             schedule: a pair of its own (the webhook as bench/webhook/run.sh
#             starts one; the scheduler under the scheduler name
#             bench-owners, its slurm.conf naming a slurmctld port nobody
#             listens on, so that it lists, watches and caches as the
#             stack's does but never reaches Slurm nor acts on a pod), on
#             ports BENCH_OWNERS_BRIDGE_PORT (18080) and
#             BENCH_OWNERS_ADMISSION_PORT (19443).  VmRSS idle, then with
#             BENCH_OWNERS (default 500) suspended Jobs of
#             BENCH_OWNERS_KIB (default 150) KiB of pod template each,
#             made in namespace bench-owners (not enabled for the bridge)
#             while both watch, then with both started again while the
#             Jobs are there (a list page holds 500); each figure
#             BENCH_OWNERS_SETTLE_S seconds (default 5) after both have
#             every Job, with VmHWM (the peak) beside it and the ratio to
#             idle (the goal: 2x at most).  The namespace goes afterwards.
#             "bench/run.sh owners" runs this scenario alone, against
#             the stack as it is (it neither brings the stack up nor
#             restarts its daemons); BRIDGE_BIN and ADMISSION_BIN pick the
#             binaries measured.
# BENCH_SCENARIOS picks some ("singles gangs"); the default is all seven.
# Output: one table on stdout, the figures as JSON in
# bench/results/bench-<UTC date>.json, and next to it PNG plots of binds
# over time (-singles.png, -fixed.png; gnuplot, installed by deps.sh --bench
# when missing, else no plots).  Pod latencies are in ms, to the bind seen
# on bindwatch's watch: in singles and gangs from t0 (a pod bound before it
# counts 0), in fixed from the pod's ADDED event on that same watch.
# For singles, gangs and fixed the bench also reads, over each system's
# window, the API server's mutating requests (apiserver_request_total) per
# bound pod, the bridge's Slurm RPCs per pod (its /metrics), and the
# scheduler's CPU seconds per bound pod.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
export NODES=${BENCH_NODES:-64}
# Baseline A (build/bench/slurm-baseline) links the host's libslurm: the
# bench runs on the host's Slurm, whatever release the stack last ran.
export SLURM=22.05
# shellcheck source=scripts/stack/stack-env.sh
. "$top/scripts/stack/stack-env.sh"

# Both schedulers get the same client-side API rate (kube-scheduler's
# default is 50/100, the bridge's 200/400).
export BRIDGE_API_QPS=${BENCH_API_QPS:-1000} BRIDGE_API_BURST=${BENCH_API_BURST:-2000}
SINGLES=${BENCH_SINGLES:-2000}
GANG_SIZE=8
GANGS=${BENCH_GANGS:-$(( NODES * 8 / GANG_SIZE < 100 ? NODES * 8 / GANG_SIZE : 100 ))}
FIXED_RATE=${BENCH_FIXED_RATE:-100}
FIXED_S=${BENCH_FIXED_S:-60}
FIXED_LIFE_S=${BENCH_FIXED_LIFE_S:-10}
# After a system's last bind, its asynchronous writes (Events, conditions,
# kwok's status) land before the window's API counts are read.
SETTLE_S=${BENCH_SETTLE_S:-3}
# kube-scheduler's profile; only a test on a shared stack needs another
# name, so that it places no one else's pods.
KUBE_SCHED_NAME=${BENCH_KUBE_SCHEDULER_NAME:-default-scheduler}
KUBE_SCHED_PORT=10259
CHURN_S=${BENCH_CHURN_S:-30}
CHURN_RATE=${BENCH_CHURN_RATE:-20}
# The backlog's bands, ascending; BENCH_BACKLOG alone (the older knob)
# makes itself the top band, over the default bands below it.
BACKLOG_BANDS=${BENCH_BACKLOG_BANDS:-}
if [ -z "$BACKLOG_BANDS" ]; then
	for b in 2000 10000 50000; do
		[ -z "${BENCH_BACKLOG:-}" ] || [ "$b" -lt "$BENCH_BACKLOG" ] && BACKLOG_BANDS+="$b "
	done
	BACKLOG_BANDS+=${BENCH_BACKLOG:-}
fi
read -r -a backlog_bands <<<"$BACKLOG_BANDS"
BACKLOG_BANDS=${backlog_bands[*]}
prev=0
for b in "${backlog_bands[@]}"; do
	if ! [[ $b =~ ^[0-9]+$ ]] || [ "$b" -le "$prev" ]; then
		echo "bench: BENCH_BACKLOG_BANDS: \"$BACKLOG_BANDS\" is not ascending pod counts" >&2
		exit 2
	fi
	prev=$b
done
BACKLOG=$prev
BACKLOG_RATE=${BENCH_BACKLOG_RATE:-250}
BACKLOG_WINDOW_S=${BENCH_BACKLOG_WINDOW_S:-20}
BACKLOG_TIMEOUT_S=${BENCH_BACKLOG_TIMEOUT_S:-600}
RELIST_SETTLE_S=${BENCH_RELIST_SETTLE_S:-10}
BACKLOG_PROBE=${BENCH_BACKLOG_PROBE:-50}
BACKLOG_DRAIN_S=${BENCH_BACKLOG_DRAIN_S:-360}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${BENCH_OUT:-$top/bench/results/bench-$STAMP.json}
[ "${1:-}" = owners ] && OUT=${BENCH_OUT:-$top/bench/results/owners-$STAMP.json}
BASELINE=$top/build/bench/slurm-baseline
BINDWATCH=$top/build/bench/bindwatch
PODGEN=$top/build/bench/podgen
READYWAIT=$top/build/bench/readywait
WORK=$(mktemp -d)
RESULTS=$WORK/results.jsonl
BENCH_T0=$(date +%s)
k() { kubectl --kubeconfig="$KUBECONFIG" "$@"; }
say() { printf 'bench: %s\n' "$*" >&2; }
now_ms() { date +%s%3N; }
record() { printf '%s\n' "$1" >>"$RESULTS"; }   # one JSON object per line
SCENARIOS=" ${BENCH_SCENARIOS:-singles gangs fixed churn backlog webhook owners} "
# "bench/run.sh owners": that scenario alone, on the stack as it is.
ALONE=
if [ "${1:-}" = owners ]; then ALONE=owners SCENARIOS=" owners "; fi
want() { [[ $SCENARIOS == *" $1 "* ]]; }

cleanup() {
	[ -n "${owners_bpid:-}" ] && kill "$owners_bpid" 2>/dev/null
	[ -n "${owners_apid:-}" ] && kill "$owners_apid" 2>/dev/null
	[ -n "${owners_ns:-}" ] && k delete namespace "$owners_ns" --wait=false >/dev/null 2>&1
	[ -n "${sched_pid:-}" ] && kill "$sched_pid" 2>/dev/null
	[ -n "${bw_pid:-}" ] && kill "$bw_pid" 2>/dev/null
	[ -n "${native_job:-}" ] && scancel "$native_job" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

# --- helpers ----------------------------------------------------------------
bridge_pid() { stack_pid "$BRIDGE_PIDFILE"; }
bridge_stop() { stack_stop slurm-bridge "$BRIDGE_PIDFILE" slurm-bridge 20 >/dev/null; }
# proc_cpu PID: user + system CPU seconds of a process.
proc_cpu() {
	local t
	t=$(stack_cpu_ticks "$1") || return 1
	awk -v t="$t" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f\n", t / hz }'
}
# proc_start_ms PID: when the process started, in epoch ms (to the clock
# tick: its start in ticks since boot, against /proc/uptime now).
proc_start_ms() {
	local now up
	now=$(now_ms); up=$(cut -d' ' -f1 /proc/uptime)
	# After "pid (comm) ", starttime is the 20th field.
	awk -v hz="$(getconf CLK_TCK)" -v now="$now" -v up="$up" \
		'{ sub(/^.*\) /, ""); printf "%.0f\n", now - (up - $20 / hz) * 1000 }' "/proc/$1/stat"
}

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
	# One collection delete stops at the API server's request timeout
	# (60 s: some 7000 pods here) and says so: it goes again until it has
	# marked every pod.
	local i n
	for ((i = 0; i < 30; i++)); do
		k delete --raw "/api/v1/namespaces/$1/pods" >/dev/null 2>&1 && break
	done
	for ((i = 0; i < 900; i++)); do
		n=$(k get --raw "/api/v1/namespaces/$1/pods?limit=1" 2>/dev/null |
			jq '(.metadata.remainingItemCount // 0) + (.items | length)' 2>/dev/null)
		[ -n "$n" ] && [ "$n" -eq 0 ] && break
		sleep 1
	done
	k delete namespace "$1" --wait=true --timeout=600s >/dev/null 2>&1 || true
}
wait_no_jobs() { local i; for ((i = 0; i < 600; i++)); do stack_no_bridge_jobs && return 0; sleep 0.5; done; say "warning: bridge jobs left in Slurm"; }
# bindwatch_start NS N [ARGS]: starts the watcher and waits until its
# first list is delivered (its watch runs from then on).  ARGS say where
# latency runs from: --t0-file $WORK/t0-NS (t0_publish writes it once the
# scheduler is ready) or --from-added.  Its JSON lands in $WORK/bw-NS.json,
# one line per bound pod in $WORK/binds-NS.txt.
bindwatch_start() {
	local ns=$1 n=$2; shift 2
	rm -f "$WORK/synced-$ns" "$WORK/t0-$ns"
	"$BINDWATCH" --kubeconfig "$KUBECONFIG" --namespace "$ns" --count "$n" \
		--timeout "${BENCH_TIMEOUT:-600}" --binds "$WORK/binds-$ns.txt" \
		--synced-file "$WORK/synced-$ns" "$@" >"$WORK/bw-$ns.json" 2>"$WORK/bw-$ns.err" &
	bw_pid=$!
	until [ -e "$WORK/synced-$ns" ]; do
		kill -0 "$bw_pid" 2>/dev/null || break
		sleep 0.01
	done
}
# bindwatch_wait NS: waits for the watcher (not in a subshell: it is our
# child), then sets $res to its JSON (null if it printed none).
bindwatch_wait() {
	wait "$bw_pid" || true
	bw_pid=
	touch "$WORK/binds-$1.txt"
	res=$(cat "$WORK/bw-$1.json")
	[ -n "$res" ] || { res=null; say "bindwatch $1: $(tail -1 "$WORK/bw-$1.err")"; }
}
# t0_publish NS: hands bindwatch its t0, $ready_ms (now, when the scheduler
# never said ready), in one rename.
t0_publish() {
	echo "${ready_ms:-$(now_ms)}" >"$WORK/t0-$1.new"
	mv "$WORK/t0-$1.new" "$WORK/t0-$1"
}

# bridge_start_ready NS: starts the bridge through bridge-up.sh, in the
# background (its kubectl calls come first, and it waits for readiness on
# the log); sets started_ms (the process's start), ready_ms (its /readyz
# first answered 200, polled every 10 ms) and cpu0 (its CPU seconds
# then), and publishes t0 for NS's bindwatch.
bridge_start_ready() {
	local i pid='' up
	"$top/scripts/stack/bridge-up.sh" >"$WORK/bridge-up.log" 2>&1 &
	up=$!
	for ((i = 0; i < 12000; i++)); do
		pid=$(bridge_pid)
		[ -n "$pid" ] && break
		kill -0 "$up" 2>/dev/null || break
		sleep 0.005
	done
	started_ms='' ready_ms='' cpu0=''
	if [ -n "$pid" ]; then
		started_ms=$(proc_start_ms "$pid")
		ready_ms=$("$READYWAIT" --pid "$pid" "http://$LOCAL_IP:$BRIDGE_PORT/readyz") || ready_ms=
		cpu0=$(proc_cpu "$pid" 2>/dev/null) || cpu0=
	fi
	[ -n "$ready_ms" ] || say "bridge: never ready: $(tail -1 "$WORK/bridge-up.log")"
	t0_publish "$1"
	wait "$up" || say "bridge-up: $(tail -1 "$WORK/bridge-up.log")"
}

# kube_sched_start: a stock kube-scheduler at the bridge's API rate, with
# its /readyz on a local secure port (kube-scheduler's default
# --authorization-always-allow-paths lets it answer without credentials);
# sets sched_pid, started_ms, ready_ms and cpu0 as bridge_start_ready.
kube_sched_start() {
	cat >"$WORK/sched.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: $KUBECONFIG, qps: $BRIDGE_API_QPS, burst: $BRIDGE_API_BURST}
leaderElection: {leaderElect: false}
profiles:
- schedulerName: $KUBE_SCHED_NAME
YAML
	# Another process answering there would be taken for this one.
	if curl -sk -o /dev/null "https://127.0.0.1:$KUBE_SCHED_PORT/readyz"; then
		say "warning: port $KUBE_SCHED_PORT answers already: kube-scheduler's t0 is wrong"
	fi
	"$KUBE_SCHEDULER" --config "$WORK/sched.yaml" --secure-port "$KUBE_SCHED_PORT" \
		--bind-address 127.0.0.1 >"$WORK/kube-scheduler.log" 2>&1 &
	sched_pid=$!
	started_ms=$(proc_start_ms "$sched_pid")
	ready_ms=$("$READYWAIT" --insecure --pid "$sched_pid" \
		"https://127.0.0.1:$KUBE_SCHED_PORT/readyz") || ready_ms=
	cpu0=$(proc_cpu "$sched_pid" 2>/dev/null) || cpu0=
	[ -n "$ready_ms" ] || say "kube-scheduler: never ready: $(tail -1 "$WORK/kube-scheduler.log")"
}
kube_sched_stop() {
	kill "$sched_pid" 2>/dev/null; wait "$sched_pid" 2>/dev/null || true; sched_pid=
}

# --- what each system costs: API writes, Slurm RPCs, CPU ----------------
# api_writes_snap FILE: the API server's mutating requests so far, one
# "verb group resource subresource count" line each (all codes summed;
# group "core" and subresource "-" for none).  A failed scrape leaves the
# window's counts wrong, not the bench stopped.
api_writes_snap() {
	{ k get --raw /metrics || say "warning: the API server's /metrics did not answer"; } | awk '
		/^apiserver_request_total\{/ {
			l = $0; sub(/^[^{]*\{/, "", l); sub(/\}[^}]*$/, "", l)
			verb = grp = res = sr = ""
			n = split(l, kv, ",")
			for (i = 1; i <= n; i++) {
				eq = index(kv[i], "=")
				key = substr(kv[i], 1, eq - 1)
				val = substr(kv[i], eq + 2); sub(/"$/, "", val)
				if (key == "verb") verb = val
				else if (key == "group") grp = val
				else if (key == "resource") res = val
				else if (key == "subresource") sr = val
			}
			if (verb ~ /^(POST|PUT|PATCH|DELETE|APPLY)$/)
				c[verb " " (grp == "" ? "core" : grp) " " res " " (sr == "" ? "-" : sr)] += $NF
		}
		END { for (k in c) printf "%s %.0f\n", k, c[k] }' >"$1"
}
# bridge_rpcs_snap FILE: the bridge's libslurm calls so far, "rpc count"
# per call (nothing when it is not running).
bridge_rpcs_snap() {
	{ curl -s "http://$LOCAL_IP:$BRIDGE_PORT/metrics" || true; } | awk '
		/^slurm_bridge_slurm_rpc_duration_seconds_count\{/ {
			if (match($0, /rpc="[^"]*"/)) printf "%s %.0f\n", substr($0, RSTART + 5, RLENGTH - 6), $NF
		}' >"$1"
}
# window_open / window_close: the counts before and after one system's run
# (after SETTLE_S seconds for its asynchronous writes); cpu1 is the CPU
# seconds of PID then.
# stack_cpu_snap FILE: CPU seconds so far of the stack's busy processes,
# "name seconds" each: where a window's CPU went besides the scheduler.
stack_cpu_snap() {
	local n pid
	for n in kube-apiserver etcd kwok kube-controller slurmctld slurmd slurmdbd mariadbd munged; do
		# Every process of that name (several slurmd).
		echo "$n $(for pid in $(pgrep -x "$n"); do proc_cpu "$pid" 2>/dev/null; done |
			awk '{ t += $1 } END { printf "%.2f", t }')"
	done >"$1"
}
# stack_cpu_json: the window's CPU seconds by process, as an object.
stack_cpu_json() {
	awk 'FILENAME == ARGV[1] { b[$1] = $2; next } { printf "%s %.2f\n", $1, $2 - b[$1] }' \
		"$WORK/cpu0" "$WORK/cpu1" | jq -csR '[split("\n")[] | select(length > 0) | split(" ")
		| {key: .[0], value: (.[1] | tonumber)}] | from_entries'
}
window_open() { api_writes_snap "$WORK/api0"; bridge_rpcs_snap "$WORK/rpc0"; stack_cpu_snap "$WORK/cpu0"; }
window_close() {
	sleep "$SETTLE_S"
	api_writes_snap "$WORK/api1"; bridge_rpcs_snap "$WORK/rpc1"; stack_cpu_snap "$WORK/cpu1"
	cpu1=$(proc_cpu "$1" 2>/dev/null) || cpu1=
}
# api_writes_json BOUND: the window's writes, by category and per bound
# pod.  The scheduler's are its Bindings (pods/binding, or the older
# namespaced bindings resource), its pod metadata writes (PATCH,
# APPLY or PUT on pods itself) and its Events (core and events.k8s.io;
# their deletes are the namespace controller's).
# pods/status is apart: kwok writes it too (compare with kube-scheduler's
# run, whose only status writes are kwok's and the scheduler's conditions
# on pods it cannot place).  The bench's own creates and deletes, and
# everyone else's writes (leases, nodes, ...) are under pod_create,
# pod_delete and other; raw has every kind.
api_writes_json() {
	awk 'FILENAME == ARGV[1] { b[$1 " " $2 " " $3 " " $4] = $5; next }
		{ d = $5 - b[$1 " " $2 " " $3 " " $4]
		  if (d > 0) printf "{\"verb\":\"%s\",\"group\":\"%s\",\"resource\":\"%s\",\"subresource\":\"%s\",\"n\":%d}\n", $1, $2, $3, $4, d }' \
		"$WORK/api0" "$WORK/api1" | jq -cs --argjson bound "$1" '
		def cat: if .resource == "pods" and .subresource == "binding" or .resource == "bindings" then "binding"
			elif .resource == "pods" and .subresource == "status" then "pod_status"
			elif .resource == "pods" and .subresource == "-" and .verb == "POST" then "pod_create"
			elif .resource == "pods" and .subresource == "-" and .verb == "DELETE" then "pod_delete"
			elif .resource == "pods" and .subresource == "-" then "pod_patch"
			elif .resource == "events" and .verb != "DELETE" then "events"
			else "other" end;
		def per(x): if $bound > 0 then (x / $bound * 1000 | round / 1000) else null end;
		(reduce .[] as $w ({binding: 0, pod_patch: 0, events: 0, pod_status: 0,
			pod_create: 0, pod_delete: 0, other: 0}; .[$w | cat] += $w.n)) as $c
		| {bound: $bound, counts: $c, per_pod: ($c | map_values(per(.))),
		   scheduler_per_pod: per($c.binding + $c.pod_patch + $c.events),
		   raw: (map({key: "\(.verb) \(if .group == "core" then "" else .group + "/" end)\(.resource)\(if .subresource == "-" then "" else "/" + .subresource end)",
			value: .n}) | from_entries)}'
}
# rpcs_json BOUND: the bridge's libslurm calls over the window, in all and
# by call, per bound pod (every call: the periodic polls too).
rpcs_json() {
	awk 'FILENAME == ARGV[1] { b[$1] = $2; next } { printf "%s %d\n", $1, $2 - b[$1] }' \
		"$WORK/rpc0" "$WORK/rpc1" | jq -csR --argjson bound "$1" '
		def per(x): if $bound > 0 then (x / $bound * 1000 | round / 1000) else null end;
		[split("\n")[] | select(length > 0) | split(" ") | {key: .[0], value: (.[1] | tonumber)}]
		| from_entries as $r | ([$r[]] | add // 0) as $t
		| {total: $t, per_pod: per($t), by_rpc: $r, by_rpc_per_pod: ($r | map_values(per(.)))}'
}
# sched_record SCENARIO SYSTEM [EXTRA]: the record of one scheduler's run,
# from $res (bindwatch), $started_ms, $ready_ms, $cpu0, $cpu1 and the
# window's counts; EXTRA (a JSON object) is merged in.
sched_record() {
	local bound rpcs=null
	bound=$(jq -r 'if . == null then 0 else .bound end' <<<"$res")
	[ "$2" = bridge ] && rpcs=$(rpcs_json "$bound")
	record "$(jq -cn --arg s "$1" --arg sys "$2" --argjson res "$res" \
		--argjson started "${started_ms:-null}" --argjson ready "${ready_ms:-null}" \
		--argjson cpu0 "${cpu0:-null}" --argjson cpu1 "${cpu1:-null}" \
		--argjson writes "$(api_writes_json "$bound")" --argjson rpcs "$rpcs" \
		--argjson stack "$(stack_cpu_json)" \
		--argjson extra "${3:-"{}"}" '
		def cpu: if $cpu0 != null and $cpu1 != null then ($cpu1 - $cpu0) * 100 | round / 100 else null end;
		{scenario: $s, system: $sys, t0_ms: $res.t0_ms?, started_ms: $started, ready_ms: $ready,
		 startup_ms: (if $started != null and $ready != null then $ready - $started else null end),
		 result: $res, cpu_s: cpu,
		 cpu_per_pod_ms: (if cpu != null and ($res.bound? // 0) > 0 then cpu * 1000 / $res.bound * 1000 | round / 1000 else null end),
		 api_writes: $writes, slurm_rpcs: $rpcs, stack_cpu_s: $stack} + $extra')"
}
# plot_binds BINDS T0 OUT: cumulative binds against seconds since T0 (a
# bind before it at 0), for the plot.
plot_binds() {
	awk -v t0="$2" '{ x = $1 - t0; if (x < 0) x = 0; printf "%.3f %d\n", x / 1000, NR }' "$1" >"$3"
}

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

# --- 1. singles -----------------------------------------------------------------
if want singles; then
say "singles: baseline A (libslurm alone), $SINGLES placeholders"
record "{\"scenario\":\"singles\",\"system\":\"slurm\",\"result\":$("$BASELINE" --dump "$WORK/slurm-singles.txt" singles "$SINGLES")}"
awk '{ printf "%.3f %d\n", $1 / 1000, NR }' "$WORK/slurm-singles.txt" >"$WORK/plot-singles-slurm.dat"

# Each scheduler: the pods exist, bindwatch lists them, the scheduler
# starts, and t0 is when it says ready.  Its window (API writes, Slurm
# RPCs) runs from before its start to SETTLE_S after its last bind; its CPU
# from t0 (cpu0) on, the start-up's CPU apart.
say "singles: slurm-bridge, $SINGLES pods present when it starts"
bridge_stop
new_ns bench-singles enabled
pods bench-singles p "$SINGLES" slurm-bridge | create_pods
bindwatch_start bench-singles "$SINGLES" --t0-file "$WORK/t0-bench-singles"
window_open
bridge_start_ready bench-singles
bindwatch_wait bench-singles
window_close "$(bridge_pid)"
sched_record singles bridge "{\"startup_cpu_s\":${cpu0:-null},\"rpc_allocate\":$(stack_metric 'slurm_bridge_slurm_rpc_duration_seconds_count{rpc="allocate_resources"}')}"
plot_binds "$WORK/binds-bench-singles.txt" "$(jq -r '.t0_ms // 0' <<<"$res")" "$WORK/plot-singles-bridge.dat"
drop_ns bench-singles
wait_no_jobs

say "singles: baseline B (stock kube-scheduler), $SINGLES pods present when it starts"
new_ns bench-kube
pods bench-kube p "$SINGLES" "$KUBE_SCHED_NAME" | create_pods
bindwatch_start bench-kube "$SINGLES" --t0-file "$WORK/t0-bench-kube"
window_open
kube_sched_start
t0_publish bench-kube
bindwatch_wait bench-kube
window_close "$sched_pid"
kube_sched_stop
sched_record singles kube-scheduler "{\"startup_cpu_s\":${cpu0:-null}}"
plot_binds "$WORK/binds-bench-kube.txt" "$(jq -r '.t0_ms // 0' <<<"$res")" "$WORK/plot-singles-kube-scheduler.dat"
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
bindwatch_start bench-gangs $((GANGS * GANG_SIZE)) --gang-label scheduling.x-k8s.io/pod-group \
	--t0-file "$WORK/t0-bench-gangs"
window_open
bridge_start_ready bench-gangs
bindwatch_wait bench-gangs
window_close "$(bridge_pid)"
sched_record gangs bridge "{\"startup_cpu_s\":${cpu0:-null},\"gang_size\":$GANG_SIZE}"
drop_ns bench-gangs
wait_no_jobs
fi

# --- 3. fixed ---------------------------------------------------------------------
if want fixed; then
FIXED_N=$(awk -v r="$FIXED_RATE" -v s="$FIXED_S" 'BEGIN { printf "%d", r * s + 0.5 }')
# At most rate x lifetime one-CPU pods live at once: they must fit.
cpus=$(sinfo -h -p "$SLURM_PARTITION" -o %C | cut -d/ -f4)
if [ "$(awk -v r="$FIXED_RATE" -v l="$FIXED_LIFE_S" -v c="${cpus:-0}" 'BEGIN { print (r * l > c) }')" = 1 ]; then
	say "fixed: warning: $FIXED_RATE pods/s living $FIXED_LIFE_S s need more than the $cpus CPUs"
fi
# post_latency NS: percentiles of the pod's POST returning (podgen's
# clock) to its bind on bindwatch's watch: beside the latency from ADDED,
# it shows what the watch itself adds.  A pod created and never bound is
# later than any (null where a percentile falls on one).
post_latency() {
	local total
	total=$(awk '$4 >= 0' "$WORK/pg-$1.txt" | wc -l)
	awk 'FILENAME == ARGV[1] { if ($4 >= 0) t[$1] = $4; next }
		($3 in t) { l = $1 - t[$3]; print (l < 0 ? 0 : l) }' \
		"$WORK/pg-$1.txt" "$WORK/binds-$1.txt" | sort -n |
		awk -v total="$total" '{ v[NR] = $1 } END {
			n = NR; if (total < n) total = n
			split("50 90 99 100", ps, " "); split("p50 p90 p99 max", ks, " ")
			printf "{"
			for (i = 1; i <= 4; i++) {
				r = int((ps[i] * total + 99) / 100); if (r < 1) r = 1
				printf "%s\"%s\":%s", (i > 1 ? "," : ""), ks[i], (r <= n ? v[r] : "null")
			}
			print "}"
		}'
}
# fixed_run SYSTEM NS SCHEDULER PID: one system's run, its scheduler (PID)
# up.  Latency is from each pod's ADDED event on bindwatch's watch, not
# from podgen's POST returning: both events then come down the same stream
# to the same clock, so the watch's own delay cancels out (the POST-based
# figure, kept as latency_post_ms, adds the delay of the bind's event).
# The window spans every pod's whole life (created, bound, deleted), so the
# bridge's writes and RPCs on delete count too.
fixed_run() {
	local sys=$1 ns=$2 sched=$3 pid=$4 pg post
	bindwatch_start "$ns" "$FIXED_N" --from-added
	window_open
	cpu0=$(proc_cpu "$pid" 2>/dev/null) || cpu0=
	: >"$WORK/pg-$ns.txt"
	"$PODGEN" --kubeconfig "$KUBECONFIG" --namespace "$ns" --rate "$FIXED_RATE" \
		--seconds "$FIXED_S" --lifetime "$FIXED_LIFE_S" --scheduler "$sched" \
		--out "$WORK/pg-$ns.txt" >"$WORK/pg-$ns.json" 2>"$WORK/pg-$ns.err" ||
		say "podgen $ns: $(jq -r '.first_error // empty' "$WORK/pg-$ns.json" 2>/dev/null) $(tail -1 "$WORK/pg-$ns.err")"
	# A pod podgen could not create is never bound: once the last pod's
	# lifetime is over (and 30 s more), the watcher stops and reports.
	( sleep $((FIXED_LIFE_S + 30)); kill -TERM "$bw_pid" 2>/dev/null ) &
	local dog=$!
	bindwatch_wait "$ns"
	kill "$dog" 2>/dev/null; wait "$dog" 2>/dev/null || true
	window_close "$pid"
	pg=$(cat "$WORK/pg-$ns.json"); [ -n "$pg" ] || pg=null
	post=$(post_latency "$ns")
	sched_record fixed "$sys" "{\"rate\":$FIXED_RATE,\"seconds\":$FIXED_S,\"lifetime_s\":$FIXED_LIFE_S,\"podgen\":$pg,\"latency_post_ms\":$post}"
	# Latency against arrival, from podgen's t0.
	awk -v t0="$(jq -r '.t0_ms // 0' <<<"$pg")" '$2 > 0 { l = $1 - $2; if (l < 1) l = 1
		printf "%.3f %d\n", ($2 - t0) / 1000, l }' "$WORK/binds-$ns.txt" >"$WORK/plot-fixed-$sys.dat"
	drop_ns "$ns"
}
say "fixed: slurm-bridge, $FIXED_RATE pods/s for $FIXED_S s, each deleted $FIXED_LIFE_S s after"
new_ns bench-fixed enabled
started_ms='' ready_ms=''
fixed_run bridge bench-fixed slurm-bridge "$(bridge_pid)"
wait_no_jobs
say "fixed: baseline B (kube-scheduler, started first), $FIXED_RATE pods/s for $FIXED_S s"
new_ns bench-fixed-kube
kube_sched_start
fixed_run kube-scheduler bench-fixed-kube "$KUBE_SCHED_NAME" "$sched_pid"
kube_sched_stop
fi

# --- 4. churn ---------------------------------------------------------------------
if want churn; then
say "churn: ${CHURN_S}s at $CHURN_RATE pods/s created, each deleted 3 s later"
new_ns bench-churn enabled
pid=$(bridge_pid)
cpu0=$(proc_cpu "$pid")
# Per-pod RPCs (submit, kill) apart from the periodic polls.
rpcs() {
	local r n=0
	for r in "$@"; do n=$((n + $(stack_metric "slurm_bridge_slurm_rpc_duration_seconds_count{rpc=\"$r\"}"))); done
	echo "$n"
}
rpc0=$(rpcs allocate_resources kill_job); poll0=$(rpcs load_jobs load_node update_node)
rss_series=""
for ((s = 0; s < CHURN_S; s++)); do
	tick=$(now_ms)
	pods bench-churn "c$s" "$CHURN_RATE" slurm-bridge | sed "s/^    namespace: bench-churn/    namespace: bench-churn\n    labels: {tick: \"$s\"}/" | create_pods &
	[ "$s" -ge 3 ] && k -n bench-churn delete pods -l "tick=$((s - 3))" --wait=false >/dev/null &
	rss_series+="${rss_series:+,}$(stack_rss_kib "$pid")"
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

# --- 5. backlog -------------------------------------------------------------------
# A fresh bridge (its figures do not depend on the scenarios before), a
# native job holding every node, then pods created by podgen band after
# band; each pod becomes a pending Slurm job.  At 0 and at each band, once
# it is reached, a steady window of BACKLOG_WINDOW_S seconds: the bridge's
# VmRSS at its end, and over it the time per decision and per Slurm poll
# (load_jobs) from the bridge's histograms (sum and count deltas).  At the
# top band the kube-apiserver restarts, so that every watch relists.
if want backlog; then
# bmetrics FILE: the bridge's /metrics now (empty when it does not answer).
bmetrics() { curl -s "http://$LOCAL_IP:$BRIDGE_PORT/metrics" >"$1" || : >"$1"; }
# backlog_window M0 M1: what a window between two /metrics snapshots
# cost, as a JSON object: decisions, polls (load_jobs) and sweeps, with
# their mean in ms (null without one); decision_cpu_ms is the reconcile
# thread's CPU time per decision (the wall time includes waiting for a
# CPU on a loaded machine).
backlog_window() {
	awk -v d=slurm_bridge_decision_seconds -v c=slurm_bridge_decision_cpu_seconds \
		-v s=slurm_bridge_sweep_seconds \
		-v p=slurm_bridge_slurm_rpc_duration_seconds -v rpc='{rpc="load_jobs"}' '
		function n(c) { return sprintf("%d", b[c] - a[c]) }
		function ms(t, c) { return b[c] - a[c] > 0 ? sprintf("%.3f", (b[t] - a[t]) * 1000 / (b[c] - a[c])) : "null" }
		FILENAME == ARGV[1] { a[$1] = $2; next }
		{ b[$1] = $2 }
		END {
			printf "{\"decisions\":%s,\"decision_ms\":%s,\"decision_cpu_ms\":%s,\"polls\":%s,\"poll_ms\":%s,\"sweeps\":%s,\"sweep_ms\":%s}\n",
				n(d "_count"), ms(d "_sum", d "_count"), ms(c "_sum", c "_count"),
				n(p "_count" rpc), ms(p "_sum" rpc, p "_count" rpc),
				n(s "_count"), ms(s "_sum", s "_count")
		}' "$1" "$2"
}
# bridge_memory: the bridge's /debug/memory object when it answers 200
# with one, else nothing.
bridge_memory() {
	local code
	code=$(curl -s -o "$WORK/memory.json" -w '%{http_code}' "http://$LOCAL_IP:$BRIDGE_PORT/debug/memory") || code=
	if [ "$code" = 200 ]; then jq -ce 'select(type == "object")' "$WORK/memory.json" 2>/dev/null || true; fi
}
# slurm_jobs: "pending all": the bridge's jobs pending in Slurm (its admin
# comment), and every job slurmctld holds (finished ones too, for
# MinJobAge: each poll loads them all).
slurm_jobs() {
	squeue -h -t all -o '%T %k' | awk '$1 == "PENDING" && $2 == "slurm-bridge:" { p++ } END { print p + 0, NR }'
}
slurm_pending() { slurm_jobs | cut -d' ' -f1; }
# submitted: the pods the bridge submitted since the backlog began.
submitted() { echo $(( $(stack_metric slurm_bridge_jobs_submitted_total) - sub0 )); }
# backlog_band BAND PENDING REACHED EXTRA: one band, recorded in $bands;
# EXTRA (JSON members, may be empty) is added.  First a steady window (no
# new pods): RSS at its end, /debug/memory, polls and sweeps over it; a
# backlog that only waits makes no decisions, so then BACKLOG_PROBE more
# pods at 10/s, each a decision at this backlog: the time per decision
# over them (they stay, and count towards the next band).
backlog_band() {
	local m0=$WORK/bm0 m1=$WORK/bm1 m2=$WORK/bm2 mem win probe pend all rss s0 i
	bmetrics "$m0"
	sleep "$BACKLOG_WINDOW_S"
	bmetrics "$m1"
	rss=$(stack_rss_kib "$pid")
	read -r pend all < <(slurm_jobs)
	win=$(backlog_window "$m0" "$m1")
	mem=$(bridge_memory)
	probe=null
	if [ "$BACKLOG_PROBE" -gt 0 ]; then
		s0=$(submitted)
		"$PODGEN" --kubeconfig "$KUBECONFIG" --namespace bench-backlog --rate 10 \
			--seconds "$(awk -v n="$BACKLOG_PROBE" 'BEGIN { printf "%.1f", n / 10 }')" \
			--prefix "p$1" --scheduler slurm-bridge >/dev/null 2>"$WORK/pg-probe.err" ||
			say "backlog: probe podgen: $(tail -1 "$WORK/pg-probe.err")"
		for ((i = 0; i < 60; i++)); do
			[ $(($(submitted) - s0)) -ge "$BACKLOG_PROBE" ] && break
			sleep 1
		done
		bmetrics "$m2"
		probe=$(backlog_window "$m1" "$m2" | jq -c --argjson n "$BACKLOG_PROBE" \
			--argjson sub "$(($(submitted) - s0))" '{pods: $n, submitted: $sub} + .')
	fi
	bands+="${bands:+,}$(jq -cn --argjson band "$1" --argjson sub "$2" --argjson pend "${pend:-null}" \
		--argjson reached "$3" --argjson rss "$rss" --argjson win "$win" --argjson probe "$probe" \
		--argjson extra "{$4}" --argjson mem "${mem:-null}" --argjson all "${all:-null}" \
		--argjson same "$([ "$(bridge_pid)" = "$pid" ] && echo true || echo false)" '
		{band: $band, pending: ($pend // $sub), submitted: $sub, reached: $reached, slurm_jobs: $all,
		 same_bridge: $same,
		 rss_kib: $rss, window_s: '"$BACKLOG_WINDOW_S"',
		 decision_ms: $probe.decision_ms?, decision_cpu_ms: $probe.decision_cpu_ms?,
		 decisions: $probe.decisions?,
		 poll_ms: $win.poll_ms, polls: $win.polls,
		 sweep_ms: $win.sweep_ms, sweeps: $win.sweeps, steady: $win, probe: $probe} + $extra
		+ (if $mem != null then {memory: $mem} else {} end)')"
	say "backlog: band $1: ${pend:-?} pending in Slurm (${all:-?} jobs in all), RSS $rss KiB"
	[ "$(bridge_pid)" = "$pid" ] || say "backlog: warning: the bridge is no longer pid $pid (restarted by someone else?)"
}
# rss_sampler PID: "epoch_us kib" every 200 ms while PID lives.
rss_sampler() {
	local k v
	while [ -r "/proc/$1/status" ]; do
		while read -r k v _; do
			[ "$k" = VmRSS: ] && printf '%s %s\n' "${EPOCHREALTIME/./}" "$v"
		done <"/proc/$1/status"
		sleep 0.2
	done
}
# relists_moved: every watch of the bridge has listed again since
# $WORK/rl0 (both /metrics snapshots, $WORK/rl1 the newer).
relists_moved() {
	awk 'FILENAME == ARGV[1] { if ($1 ~ /^slurm_bridge_watch_relists_total\{/) a[$1] = $2; next }
		($1 in a) { seen++; if ($2 > a[$1]) moved++ }
		END { exit !(seen > 0 && moved == seen) }' "$WORK/rl0" "$WORK/rl1"
}
# backlog_relist: the kube-apiserver stops and scripts/stack/k8s/up.sh starts
# it again (its own ensure), so every watch of the bridge ends and each
# informer lists again once the server is back.  The bridge's RSS every
# 200 ms: steady (mean of the 5 s before the stop), peak (from the stop
# until every watch's slurm_bridge_watch_relists_total moved, and
# RELIST_SETTLE_S more), after (mean of the last 3 s).
backlog_relist() {
	local t_stop t_up t_done i sampler all=false
	bmetrics "$WORK/rl0"
	rss_sampler "$pid" >"$WORK/relist-rss.txt" &
	sampler=$!
	sleep 5
	t_stop=$(now_ms)
	say "backlog: relist: kube-apiserver restarts with $1 pending"
	stack_stop kube-apiserver "$RUN_DIR/kube-apiserver.pid" kube-apiserver 30 >/dev/null
	"$top/scripts/stack/k8s/up.sh" >"$WORK/k8s-up.log" 2>&1 || say "backlog: k8s/up.sh: $(tail -1 "$WORK/k8s-up.log")"
	t_up=$(now_ms)
	for ((i = 0; i < 600; i++)); do
		bmetrics "$WORK/rl1"
		if relists_moved; then all=true; break; fi
		sleep 0.5
	done
	t_done=$(now_ms)
	sleep "$RELIST_SETTLE_S"
	kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
	bmetrics "$WORK/rl1"
	relist=$(awk -v ts="$t_stop" -v te="$(now_ms)" '
		{ t = int($1 / 1000); if (t < ts) { pre += $2; npre++ } else { if ($2 > peak) peak = $2; n++; s[n] = t; v[n] = $2 } }
		END {
			for (i = 1; i <= n; i++) if (s[i] >= te - 3000) { aft += v[i]; naft++ }
			printf "{\"steady_kib\":%s,\"peak_kib\":%s,\"after_kib\":%s,\"samples\":%d,\"series\":[",
				npre ? sprintf("%.0f", pre / npre) : "null", n ? peak : "null",
				naft ? sprintf("%.0f", aft / naft) : "null", npre + n
			for (i = 1; i <= n; i++) printf "%s[%d,%d]", (i > 1 ? "," : ""), s[i] - ts, v[i]
			print "]}"
		}' "$WORK/relist-rss.txt" |
		jq -c --argjson pend "$1" --argjson down "$((t_up - t_stop))" \
			--argjson relisted "$((t_done - t_stop))" --argjson all "$all" \
			--argjson same "$([ "$(bridge_pid)" = "$pid" ] && echo true || echo false)" \
			--argjson relists "$(awk 'FILENAME == ARGV[1] { a[$1] = $2; next }
				$1 ~ /^slurm_bridge_watch_relists_total\{/ && ($1 in a) {
					w = $1; sub(/.*watch="/, "", w); sub(/".*/, "", w); printf "%s %d\n", w, $2 - a[$1] }' \
				"$WORK/rl0" "$WORK/rl1" | jq -csR '[split("\n")[] | select(length > 0) | split(" ")
				| {key: .[0], value: (.[1] | tonumber)}] | from_entries')" '
			{pending: $pend, restart_ms: $down, relisted_ms: $relisted, all_relisted: $all,
			 relists: $relists, same_bridge: $same} + .
			+ {ratio: (if .steady_kib > 0 and .peak_kib != null then (.peak_kib / .steady_kib * 100 | round / 100) else null end)}')
	say "backlog: relist: steady $(jq -r .steady_kib <<<"$relist") KiB, peak $(jq -r .peak_kib <<<"$relist") KiB"
}

say "backlog: bands ${BACKLOG_BANDS// /, } pending behind a native job that fills the cluster"
# slurmctld keeps a finished job MinJobAge (300 s) and each of the
# bridge's polls loads them all: the baseline waits for an empty job table
# (at most BACKLOG_DRAIN_S seconds; the count is recorded either way).
t=$(date +%s)
while [ "$(squeue -h -t all | wc -l)" -gt 0 ] && [ $(($(date +%s) - t)) -lt "$BACKLOG_DRAIN_S" ]; do sleep 5; done
drain_s=$(($(date +%s) - t))
[ "$drain_s" -gt 0 ] && say "backlog: waited ${drain_s}s for slurmctld to forget finished jobs"
bridge_stop
"$top/scripts/stack/bridge-up.sh" >"$WORK/bridge-up.log" 2>&1 || say "bridge-up: $(tail -1 "$WORK/bridge-up.log")"
pid=$(bridge_pid)
native_job=$(salloc --no-shell --immediate=60 -J bench-filler -N "$NODES" --exclusive -t 60 2>&1 |
	sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p')
[ -n "$native_job" ] || say "backlog: warning: no filler job: the pods will not stay pending"
new_ns bench-backlog enabled
bands="" relist=null sub0=$(stack_metric slurm_bridge_jobs_submitted_total)
# Idle: 0 pending, the bridge ready and its first polls done.
sleep "$SETTLE_S"
backlog_band 0 0 true ""
for b in "${backlog_bands[@]}"; do
	# The band counts every pod submitted so far (the probes too).
	n=$((b - $(submitted)))
	say "backlog: $n pods to $b pending, podgen at $BACKLOG_RATE pods/s"
	t=$(now_ms)
	bmetrics "$WORK/fill0"
	pg='' pgj=null
	if [ "$n" -gt 0 ]; then
		# podgen makes rate x seconds pods: seconds to 6 decimals is exact.
		"$PODGEN" --kubeconfig "$KUBECONFIG" --namespace bench-backlog --rate "$BACKLOG_RATE" \
			--seconds "$(awk -v n="$n" -v r="$BACKLOG_RATE" 'BEGIN { printf "%.6f", n / r }')" \
			--prefix "b$b" --scheduler slurm-bridge >"$WORK/pg-backlog-$b.json" 2>"$WORK/pg-backlog-$b.err" &
		pg=$!
	fi
	# Every pod submitted (a pending job each), within BACKLOG_TIMEOUT_S.
	reached=false
	while [ $(($(now_ms) - t)) -lt $((BACKLOG_TIMEOUT_S * 1000)) ]; do
		sub=$(submitted)
		if [ "$sub" -ge "$b" ]; then reached=true; break; fi
		sleep 1
	done
	fill_ms=$(($(now_ms) - t))
	if [ -n "$pg" ]; then
		if kill -0 "$pg" 2>/dev/null; then
			say "backlog: podgen still sending after ${BACKLOG_TIMEOUT_S}s: stopped"
			kill -TERM "$pg" 2>/dev/null
		fi
		wait "$pg" || say "backlog: podgen $b: $(jq -r '.first_error // empty' "$WORK/pg-backlog-$b.json" 2>/dev/null) $(tail -1 "$WORK/pg-backlog-$b.err")"
		pgj=$(jq -c '{created, errors, sent_per_s, post_ms}' "$WORK/pg-backlog-$b.json" 2>/dev/null) || pgj=null
	fi
	bmetrics "$WORK/fill1"
	sub=$(submitted)
	[ "$reached" = true ] || say "backlog: band $b not reached in ${BACKLOG_TIMEOUT_S}s: $sub submitted"
	backlog_band "$b" "$sub" "$reached" "\"fill_s\":$(awk -v m="$fill_ms" 'BEGIN { printf "%.1f", m / 1000 }'),\"fill\":$(backlog_window "$WORK/fill0" "$WORK/fill1"),\"podgen\":${pgj:-null}"
	[ "$reached" = true ] || break
done
# The relist at the highest backlog reached.
if [ "${BENCH_BACKLOG_RELIST:-1}" != 0 ]; then backlog_relist "$(slurm_pending)"; fi
record "$(jq -cn --argjson bands "[$bands]" --argjson relist "${relist:-null}" --argjson nodes "$NODES" \
	--argjson rate "$BACKLOG_RATE" --argjson timeout "$BACKLOG_TIMEOUT_S" --argjson drain "$drain_s" '
	# slope A B: RSS growth in bytes per pending pod between two bands.
	def slope(a; b): if a != null and b != null and b.pending > a.pending
		then ((b.rss_kib - a.rss_kib) * 1024 / (b.pending - a.pending) | round) else null end;
	# Between the two top bands measured (the top one, when not reached,
	# at the pods it had), and from 0 to the second top band; from and to
	# are pods pending in Slurm.
	def growth(a; b): {from_band: a.band, to_band: b.band, from: a.pending, to: b.pending,
		to_reached: b.reached, bytes_per_pod: slope(a; b)};
	{scenario: "backlog", system: "bridge", nodes: $nodes, rate: $rate, band_timeout_s: $timeout,
	   drain_s: $drain,
	   bands: $bands, relist: $relist,
	   slope_top: (if ($bands | length) >= 3 then growth($bands[-2]; $bands[-1]) else null end),
	   slope_low: (if ($bands | length) >= 3 then growth($bands[0]; $bands[-2]) else null end),
	   targets: {baseline_mib: 24, rss_mib: 64, rss_at: 10000, growth_bytes_per_pod: 1024,
		time_ratio: 1.5, relist_ratio: 2}}')"
scancel "$native_job"; native_job=
fi

# --- 6. webhook -------------------------------------------------------------------
if want webhook && [ "${BENCH_WEBHOOK:-1}" != 0 ]; then
	say "webhook: bench/webhook/run.sh"
	BENCH_OUT=$WORK/webhook.json DURATION=${BENCH_WEBHOOK_S:-15} WARMUP=3 SAT_DURATION=5 \
		HANDSHAKE_DURATION=0 "$here/webhook/run.sh" >"$WORK/webhook.out" 2>&1 || true
	[ -s "$WORK/webhook.json" ] && record "{\"scenario\":\"webhook\",\"system\":\"admission\",\"result\":$(cat "$WORK/webhook.json")}"
fi

# --- 7. owners ---------------------------------------------------------------------
# A pair of daemons of its own, idle, then with BENCH_OWNERS large
# suspended Jobs arriving on their watches, then started again with the
# Jobs there (their first list).  See the top of this file.
if want owners; then
OWNERS=${BENCH_OWNERS:-500}
OWNERS_KIB=${BENCH_OWNERS_KIB:-150}
OWNERS_SETTLE_S=${BENCH_OWNERS_SETTLE_S:-5}
OWNERS_BPORT=${BENCH_OWNERS_BRIDGE_PORT:-18080}
OWNERS_APORT=${BENCH_OWNERS_ADMISSION_PORT:-19443}
# proc_kib PID FIELD: a /proc/PID/status figure (VmRSS, VmHWM) in KiB.
proc_kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null; }
# owners_jobs_seen: "bridge webhook": the Jobs each daemon holds.
owners_jobs_seen() {
	local b a
	b=$(curl -s "http://$LOCAL_IP:$OWNERS_BPORT/debug/memory" | jq -r '.stores.jobs.count // 0' 2>/dev/null) || b=0
	a=$(curl -s --cacert "$CA_CERT" "https://$LOCAL_IP:$OWNERS_APORT/metrics" |
		awk '$1 == "slurm_bridge_admission_cache_objects{kind=\"jobs\"}" { print $2 }')
	echo "${b:-0} ${a:-0}"
}
# owners_up: starts the pair; returns once every watch of the scheduler
# has listed and the webhook is ready (its namespace and Job caches too).
owners_up() {
	local i n listed
	if [ -n "$(ss -Hltn "sport = :$OWNERS_BPORT" 2>/dev/null)" ]; then
		say "owners: port $OWNERS_BPORT is in use (BENCH_OWNERS_BRIDGE_PORT)"; return 1
	fi
	grep -v '^SlurmctldPort=' /etc/slurm/slurm.conf >"$WORK/owners-slurm.conf"
	echo SlurmctldPort=1 >>"$WORK/owners-slurm.conf"
	SLURM_CONF=$WORK/owners-slurm.conf "${STACK_EXEC[@]}" "$BRIDGE_BIN" \
		--kubeconfig "$BRIDGE_KUBECONFIG" --config "$BRIDGE_CONFIG" \
		--listen "$LOCAL_IP:$OWNERS_BPORT" --scheduler-name bench-owners \
		</dev/null >>"$WORK/owners-bridge.log" 2>&1 &
	owners_bpid=$!
	stack_admission_start owners_apid "$WORK/owners-admission.log" "$OWNERS_APORT" || return 1
	for ((i = 0; i < 600; i++)); do
		kill -0 "$owners_bpid" 2>/dev/null || { say "owners: the scheduler exited: $(tail -1 "$WORK/owners-bridge.log")"; return 1; }
		read -r n listed < <(curl -s "http://$LOCAL_IP:$OWNERS_BPORT/metrics" |
			awk '/^slurm_bridge_watch_relists_total\{/ { n++; if ($2 > 0) l++ } END { print n + 0, l + 0 }')
		[ "$n" -gt 0 ] && [ "$listed" -eq "$n" ] && return 0
		sleep 0.2
	done
	say "owners: the scheduler's watches did not all list in 120 s"
	return 1
}
owners_down() {
	[ -n "${owners_bpid:-}" ] && stack_stop_pid owners-bridge "$owners_bpid" 30
	[ -n "${owners_apid:-}" ] && stack_stop_pid owners-admission "$owners_apid" 30
	owners_bpid='' owners_apid=''
}
# owners_total: the Jobs in the cluster now, as the API server counts them.
owners_total() {
	k get --raw "/apis/batch/v1/jobs?limit=1" | jq '(.metadata.remainingItemCount // 0) + (.items | length)'
}
# owners_wait: until both daemons hold every Job of the cluster (others'
# tests may make and delete some meanwhile), at most 300 s.
owners_wait() {
	local i b a n=0
	for ((i = 0; i < 600; i++)); do
		n=$(owners_total) || n=0
		read -r b a < <(owners_jobs_seen)
		[ "$b" -ge "$n" ] && [ "$a" -ge "$n" ] && return 0
		sleep 0.5
	done
	say "owners: after 300 s the scheduler holds $b Jobs, the webhook $a, of $n"
	return 1
}
# owners_figures PHASE: both daemons' RSS and peak now, as JSON members.
owners_figures() {
	local mem brss bhwm arss ahwm
	mem=$(curl -s "http://$LOCAL_IP:$OWNERS_BPORT/debug/memory" | jq -c 'select(type == "object")' 2>/dev/null) || mem=
	brss=$(proc_kib "$owners_bpid" VmRSS) bhwm=$(proc_kib "$owners_bpid" VmHWM)
	arss=$(proc_kib "$owners_apid" VmRSS) ahwm=$(proc_kib "$owners_apid" VmHWM)
	say "owners: $1: scheduler RSS ${brss:-?} KiB (peak ${bhwm:-?}), webhook RSS ${arss:-?} KiB (peak ${ahwm:-?})"
	jq -cn --arg p "$1" --argjson brss "${brss:-null}" --argjson bhwm "${bhwm:-null}" \
		--argjson arss "${arss:-null}" --argjson ahwm "${ahwm:-null}" --argjson mem "${mem:-null}" '
		{($p): {bridge: {rss_kib: $brss, hwm_kib: $bhwm, memory: $mem},
			admission: {rss_kib: $arss, hwm_kib: $ahwm}}}'
}
# owners_jobs FROM TO: a List of the Jobs big-FROM .. big-(TO-1), each with
# an environment variable of OWNERS_KIB KiB in its pod template.
owners_jobs() {
	awk -v ns="$owners_ns" -v from="$1" -v to="$2" -v n="$((OWNERS_KIB * 1024))" 'BEGIN {
		pad = "x"; while (length(pad) < n) pad = pad pad; pad = substr(pad, 1, n)
		print "apiVersion: v1\nkind: List\nitems:"
		for (i = from; i < to; i++) {
			printf "- apiVersion: batch/v1\n  kind: Job\n  metadata: {name: big-%d, namespace: %s}\n", i, ns
			print "  spec:\n    suspend: true\n    template:\n      spec:\n        restartPolicy: Never"
			print "        containers:\n        - name: main\n          image: busybox"
			printf "          env: [{name: PAD, value: \"%s\"}]\n", pad
		}
	}'
}

say "owners: idle, then $OWNERS suspended Jobs of $OWNERS_KIB KiB of pod template each, then started again with them"
owners_ns=bench-owners
k delete namespace "$owners_ns" --ignore-not-found --wait=true --timeout=300s >/dev/null
k create namespace "$owners_ns" >/dev/null
owners_ok=true figures='{}'
if owners_up; then
	sleep "$OWNERS_SETTLE_S"
	figures=$(jq -cn --argjson a "$figures" --argjson b "$(owners_figures idle)" '$a + $b')
	t=$(now_ms)
	pids=()
	for ((i = 0; i < OWNERS; i += 50)); do
		owners_jobs "$i" $((i + 50 < OWNERS ? i + 50 : OWNERS)) >"$WORK/owners-jobs-$i.yaml"
		k create -f "$WORK/owners-jobs-$i.yaml" >/dev/null 2>>"$WORK/owners-create.err" &
		pids+=($!)
		if [ ${#pids[@]} -ge 4 ]; then wait "${pids[@]}" || owners_ok=false; pids=(); fi
	done
	[ ${#pids[@]} -eq 0 ] || wait "${pids[@]}" || owners_ok=false
	rm -f "$WORK"/owners-jobs-*.yaml
	create_ms=$(($(now_ms) - t))
	[ "$owners_ok" = true ] || say "owners: kubectl create: $(tail -1 "$WORK/owners-create.err")"
	owners_wait || owners_ok=false
	sleep "$OWNERS_SETTLE_S"
	figures=$(jq -cn --argjson a "$figures" --argjson b "$(owners_figures watched)" '$a + $b')
	# Both again, the Jobs there: their first list holds every one.
	owners_down
	if owners_up && owners_wait; then
		sleep "$OWNERS_SETTLE_S"
		figures=$(jq -cn --argjson a "$figures" --argjson b "$(owners_figures listed)" '$a + $b')
	else
		owners_ok=false
	fi
else
	owners_ok=false
fi
owners_down
record "$(jq -cn --argjson f "$figures" --argjson n "$OWNERS" --argjson kib "$OWNERS_KIB" \
	--argjson ok "$owners_ok" --argjson create "${create_ms:-null}" \
	--arg bin "$BRIDGE_BIN" --arg abin "$ADMISSION_BIN" '
	def ratio(x; y): if x == null or y == null or y == 0 then null else (x / y * 100 | round / 100) end;
	{scenario: "owners", system: "both", jobs: $n, job_kib: $kib, complete: $ok, create_ms: $create,
	 binaries: {bridge: $bin, admission: $abin}, goal_ratio: 2} + $f
	+ {ratios: ([("bridge", "admission") as $d | ("watched", "listed") as $p |
		{key: "\($d)_\($p)", value: {rss: ratio($f[$p][$d].rss_kib; $f.idle[$d].rss_kib),
			peak: ratio($f[$p][$d].hwm_kib; $f.idle[$d].rss_kib)}}] | from_entries)}')"
say "owners: deleting namespace $owners_ns"
k delete namespace "$owners_ns" --wait=true --timeout=600s >/dev/null 2>&1 || say "owners: namespace $owners_ns is still going"
owners_ns=
fi

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
	plot fixed "fixed: $FIXED_RATE pods/s for $FIXED_S s on $NODES nodes" \
		"seconds since the first pod was due (its arrival)" \
		"creation to bind (ms, from ADDED)" "with points pt 7 ps 0.4" "set logscale y"
fi

# --- the table --------------------------------------------------------------------
jq -s --arg nodes "$NODES" --arg secs "$(( $(date +%s) - BENCH_T0 ))" \
	--arg plots "${plots[*]}" \
	'{nodes: ($nodes | tonumber), seconds: ($secs | tonumber), host: {cpus: 2},
	  plots: ($plots | split(" ") | map(select(length > 0))), runs: .}' \
	"$RESULTS" >"$OUT"
"$here/table.sh" "$OUT"
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
