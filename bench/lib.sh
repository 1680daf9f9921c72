# What the scenarios of make bench share; bench/run.sh sources it.
#
# Sourced after the settings: processes, pods and namespaces, the
# watcher of binds, starting each scheduler, and each system's window of
# costs (API writes, Slurm RPCs, CPU) with the record of its run.  Only
# defines functions.  Records go through rec: bench/tools/record writes
# each one (their JSON is never put together here).
# shellcheck shell=bash disable=SC2034,SC2154 # the driver's variables

k() { kubectl --kubeconfig="$KUBECONFIG" "$@"; }
say() { printf 'bench: %s\n' "$*" >&2; }
now_ms() { date +%s%3N; }
# rec_to FILE SUBCOMMAND [ARG...]: one record, written by record, added to
# FILE (a JSON line); a record it could not write is said and left out.
rec_to() {
	local out=$1; shift
	"$RECORD" "$@" >>"$out" || say "warning: record $1 failed"
}
# rec SUBCOMMAND [ARG...]: one record of the results.
rec() { rec_to "$RESULTS" "$@"; }

# --- running a scenario --------------------------------------------------------
# Each scenario runs in a subshell of its own with set -e (run_scenario):
# its failure ends it alone, what it started is stopped, the failure is
# recorded ($WORK/failed.jsonl: the scenario, its exit status, and the
# command that failed, where) and the run goes on with the next one.
#
# The subshell's traps, and the driver's (cleanup), act only in the shell
# that set them: bash runs the EXIT trap it inherited in a background
# subshell that a fatal signal reaches before the subshell has reset its
# traps (a "( sleep N; kill ... ) &" killed at once), and that copy of the
# driver's cleanup removed $WORK under the running bench (issue 50).

# at_exit FUNCTION: FUNCTION runs when the scenario ends, finished or not
# (what it changed outside its namespaces, such as node labels, undone).
at_exit() { AT_EXIT+=("$1"); }

# stop_started: stops what a scenario may have left running (its
# schedulers, watchers, samplers, filler jobs) and runs its at_exit
# functions, newest first.
# Each step may fail (a process already gone) without stopping the next:
# this runs in EXIT traps, under set -e.
stop_started() {
	local i p
	for p in "${owners_bpid:-}" "${owners_apid:-}" "${sched_pid:-}" "${bw_pid:-}" "${cs_pid:-}"; do
		if [ -n "$p" ]; then kill "$p" 2>/dev/null || true; fi
	done
	if [ -n "${owners_ns:-}" ]; then k delete namespace "$owners_ns" --wait=false >/dev/null 2>&1 || true; fi
	# shellcheck disable=SC2086 # the filler jobs, one per node
	if [ -n "${native_job:-}" ]; then scancel $native_job 2>/dev/null || true; fi
	owners_bpid='' owners_apid='' owners_ns='' sched_pid='' bw_pid='' cs_pid='' native_job=''
	for ((i = ${#AT_EXIT[@]} - 1; i >= 0; i--)); do
		"${AT_EXIT[i]}" || say "warning: ${AT_EXIT[i]} failed"
	done
	AT_EXIT=()
	return 0
}

# scenario_err STATUS LINE FILE FUNCTION: the ERR trap of a scenario's
# subshell: the first command that failed there (set -e ends the subshell
# on it), said and kept in $WORK/error-NAME.  Commands that fail in its
# command substitutions and background subshells, which inherit the trap
# (set -E), are not its failure.
scenario_err() {
	[ "$BASHPID" = "$scenario_shell" ] && [ ! -e "$WORK/error-$scenario" ] || return 0
	# shellcheck disable=SC2016 # the backquotes are text
	printf '`%s` exited %s in %s (%s:%s)\n' "$BASH_COMMAND" "$1" "${4:-the scenario}" \
		"${3#"$top/"}" "$2" >"$WORK/error-$scenario"
}

# scenario_end STATUS: the EXIT trap of a scenario's subshell: stops what
# it started, and for a scenario that ended otherwise than by a failed
# command (exit, a signal), keeps its exit status as its error.
scenario_end() {
	[ "$BASHPID" = "$scenario_shell" ] || return 0
	stop_started
	if [ "$1" -ne 0 ] && [ ! -e "$WORK/error-$scenario" ]; then
		# shellcheck disable=SC2016 # the backquotes are text
		printf 'exit status %s after `%s`\n' "$1" "$BASH_COMMAND" >"$WORK/error-$scenario"
	fi
	return 0
}

# after_failure NAME: what the driver does after scenario NAME failed (it
# defines its own).
after_failure() { return 0; }

# run_scenario NAME: scenario_NAME in a subshell with set -e.  On failure
# it says so, records it (record failed, in $WORK/failed.jsonl) and calls
# after_failure NAME (the driver puts the stack back for the next one).
# Returns 0 either way: call it as a command of its own, never in an if,
# && or || (bash would then ignore set -e inside the whole scenario).
run_scenario() {
	local rc err
	scenario=$1
	rm -f "$WORK/error-$scenario"
	set +e
	(
		set -eE
		scenario_shell=$BASHPID AT_EXIT=()
		# The guard first, its pid written in: in a child that runs them
		# (above) the traps call nothing.
		# (One line: a newline in the trap would count in its $LINENO.)
		trap 'scenario_rc=$?; [ "$BASHPID" != '"$BASHPID"' ] || scenario_err "$scenario_rc" "$LINENO" "${BASH_SOURCE[0]:-}" "${FUNCNAME[0]:-}"' ERR
		trap 'scenario_rc=$?; [ "$BASHPID" != '"$BASHPID"' ] || scenario_end "$scenario_rc"' EXIT
		"scenario_$scenario"
	)
	rc=$?
	set -e
	if [ "$rc" -ne 0 ]; then
		err=$(cat "$WORK/error-$scenario" 2>/dev/null) || err=
		say "$scenario: FAILED, exit status $rc: ${err:-(no message)}; the others go on"
		rec_to "$WORK/failed.jsonl" failed --scenario "$scenario" --status "$rc" --error "$err"
		after_failure "$scenario" || say "warning: after the failure of $scenario: the stack may not be as the next scenario expects"
	fi
	scenario=
	return 0
}

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

# pods NS PREFIX N SCHEDULER [GPU] [GANG]: a List of N pods; with
# PODS_TOPOLOGY=LABEL, each gang requires one value of that node label,
# in partition PODS_PARTITION if set.
pods() {
	local ns=$1 prefix=$2 n=$3 sched=$4 gpu=${5:-0} gang=${6:-0}
	awk -v ns="$ns" -v p="$prefix" -v n="$n" -v s="$sched" -v gpu="$gpu" -v gang="$gang" \
		-v topo="${PODS_TOPOLOGY:-}" -v part="${PODS_PARTITION:-}" 'BEGIN {
		print "apiVersion: v1\nkind: List\nitems:"
		for (i = 0; i < n; i++) {
			print "- apiVersion: v1\n  kind: Pod\n  metadata:"
			printf "    name: %s-%d\n    namespace: %s\n", p, i, ns
			if (gang > 0) {
				printf "    labels: {scheduling.x-k8s.io/pod-group: g%d}\n", int(i / gang)
				printf "    annotations: {scheduler.slinky.slurm.net/min-member: \"%d\"", gang
				if (topo != "")
					printf ", slurmjob.slinky.slurm.net/required-topology: %s", topo
				if (part != "")
					printf ", slurmjob.slinky.slurm.net/partition: %s", part
				print "}"
			}
			printf "  spec:\n    schedulerName: %s\n    terminationGracePeriodSeconds: 0\n", s
			print "    tolerations: [{key: slinky.slurm.net/managed-node, operator: Exists}]"
			print "    containers:\n    - name: main\n      image: busybox"
			printf "      resources: {requests: {cpu: \"1\", memory: 64Mi}"
			if (gpu > 0) printf ", limits: {nvidia.com/gpu: \"%d\"}", gpu
			print "}"
		}
	}'
}
# create NS YAML-on-stdin: kubectl create in chunks of 500 objects.
create_pods() { k create -f - >/dev/null; }
# unserved_watches: the bridge's watches (their watch="..." label) whose
# resource this API server does not serve, one per line: a CRD that is not
# installed (JobSet, LeaderWorkerSet, the coscheduling PodGroup), or a kind
# this release does not serve (DeviceTaintRules before 1.37), is never
# listed, so "every watch listed" leaves those out.
unserved_watches() {
	k get --raw /apis/jobset.x-k8s.io/v1alpha2 >/dev/null 2>&1 || echo jobsets
	k get --raw /apis/leaderworkerset.x-k8s.io/v1 >/dev/null 2>&1 || echo lws
	k get --raw /apis/scheduling.x-k8s.io/v1alpha1 >/dev/null 2>&1 || echo podgroups
	k get --raw /apis/resource.k8s.io/v1/devicetaintrules >/dev/null 2>&1 || echo devicetaintrules
}
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
	rm -f "$WORK/synced-$ns" "$WORK/t0-$ns" "$WORK/busy0-$ns" "$WORK/busy1-$ns"
	"$BINDWATCH" --kubeconfig "$KUBECONFIG" --namespace "$ns" --count "$n" \
		--timeout "${BENCH_TIMEOUT:-600}" --binds "$WORK/binds-$ns.txt" \
		--synced-file "$WORK/synced-$ns" "$@" >"$WORK/bw-$ns.json" 2>"$WORK/bw-$ns.err" &
	bw_pid=$!
	until [ -e "$WORK/synced-$ns" ]; do
		kill -0 "$bw_pid" 2>/dev/null || break
		sleep 0.01
	done
}
# bindwatch_deadline S: lets the watcher run at most S seconds more, then
# stops it (SIGTERM: it reports what it saw).  Polled from this shell: a
# background "( sleep S; kill ) &" killed once the watcher is done is the
# subshell that ran the driver's EXIT trap (see run_scenario).
bindwatch_deadline() {
	local end=$((SECONDS + $1))
	while [ "$SECONDS" -lt "$end" ] && kill -0 "$bw_pid" 2>/dev/null; do sleep 0.2; done
	if kill -0 "$bw_pid" 2>/dev/null; then kill -TERM "$bw_pid" 2>/dev/null || true; fi
}
# bindwatch_wait NS: waits for the watcher (not in a subshell: it is our
# child), then sets $res to its JSON (null if it printed none).
bindwatch_wait() {
	wait "$bw_pid" || true
	[ -e "$WORK/busy0-$1" ] && busy_snap "$WORK/busy1-$1"
	bw_pid=
	touch "$WORK/binds-$1.txt"
	res=$(cat "$WORK/bw-$1.json")
	[ -n "$res" ] || { res=null; say "bindwatch $1: $(tail -1 "$WORK/bw-$1.err")"; }
}
# t0_publish NS: hands bindwatch its t0, $ready_ms (now, when the scheduler
# never said ready), in one rename.
t0_publish() {
	busy_snap "$WORK/busy0-$1"
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
# per call, and in FILE.sum the seconds they took, "rpc seconds"
# (nothing when it is not running).
bridge_rpcs_snap() {
	# A bridge that does not answer (not started yet) has no sums: an
	# earlier snapshot's must not stand in for them.
	: >"$1.sum"
	{ curl -s "http://$LOCAL_IP:$BRIDGE_PORT/metrics" || true; } | awk -v sum="$1.sum" '
		/^slurm_bridge_slurm_rpc_duration_seconds_(count|sum)\{/ {
			if (!match($0, /rpc="[^"]*"/)) next
			rpc = substr($0, RSTART + 5, RLENGTH - 6)
			if ($0 ~ /_count\{/) printf "%s %.0f\n", rpc, $NF
			else printf "%s %.6f\n", rpc, $NF >sum
		}' >"$1"
}
# etcd_snap FILE: etcd's writes so far (its MVCC puts and deletes) and the
# fsyncs of its log, "name count" each.  etcd commits the writes that wait
# together with one fsync, so writes per fsync show how many a scheduler
# keeps in flight (nothing when etcd does not answer).
etcd_snap() {
	{ curl -s "http://$LOCAL_IP:$ETCD_PORT/metrics" || true; } | awk '
		/^etcd_mvcc_(put|delete)_total / { w += $NF; seen = 1 }
		/^etcd_disk_wal_fsync_duration_seconds_count / { f = $NF }
		END { if (seen) printf "writes %.0f\nfsyncs %.0f\n", w, f }' >"$1"
}
# window_open / window_close: the counts before and after one system's run
# (after SETTLE_S seconds for its asynchronous writes); cpu1 is the CPU
# seconds of PID then.
# stack_cpu_snap FILE: CPU seconds so far of the stack's busy processes,
# "name seconds" each: where a window's CPU went besides the scheduler
# (busy_snap's figures but the machine's and the schedulers').
stack_cpu_snap() {
	busy_snap "$1.all"
	grep -Ev '^(machine|slurm-bridge|kube-scheduler) ' "$1.all" >"$1"
}
# The processes that take part in placing a pod, by name (/proc's comm),
# whose CPU busy_snap and the fixed scenario's cpuseries read.
CPU_PARTS="slurm-bridge kube-scheduler kube-apiserver etcd kwok kube-controller slurmctld slurmd slurmdbd mariadbd munged"
# busy_snap FILE: the machine's busy CPU seconds so far ("machine", from
# /proc/stat: all but idle and iowait) and those of each process that takes
# part in placing a pod, by name, every process of that name summed (up to
# a thousand slurmd): one line of cpuseries --once, cheap enough to run at
# t0, while the scheduler starts.  A process's children it has waited for
# count as its own: slurmd's are the job epilogs (slurm-bridge-epilog),
# which are Slurm's cost of a job.  While the bind phase keeps the machine
# busy, its pods per second are its CPUs over the busy CPU per pod; this
# says whose that CPU is.
busy_snap() {
	# shellcheck disable=SC2086 # one name a word
	"$CPUSERIES" --once $CPU_PARTS | awk -v hz="$(getconf CLK_TCK)" '
		{ printf "machine %.2f\n", $2 / hz
		  for (i = 3; i <= NF; i++) { split($i, kv, "="); printf "%s %.2f\n", kv[1], kv[2] / hz } }' >"$1"
}
# (record sched turns the snapshots into the window's figures.)
window_open() { etcd_snap "$WORK/etcd0"; api_writes_snap "$WORK/api0"; bridge_rpcs_snap "$WORK/rpc0"; stack_cpu_snap "$WORK/cpu0"; }
# rss1 and hwm1 are its VmRSS and VmHWM (the peak since it started) then,
# in KiB.
window_close() {
	sleep "$SETTLE_S"
	etcd_snap "$WORK/etcd1"; api_writes_snap "$WORK/api1"; bridge_rpcs_snap "$WORK/rpc1"; stack_cpu_snap "$WORK/cpu1"
	cpu1=$(proc_cpu "$1" 2>/dev/null) || cpu1=
	rss1=$(stack_rss_kib "$1") || rss1=
	hwm1=$(awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || hwm1=
}
# sched_record SCENARIO SYSTEM NS [ARG...]: the record of one scheduler's
# run, from bindwatch's result for NS, $started_ms, $ready_ms, $cpu0, $cpu1,
# $rss1 and $hwm1 and the window's counts; ARGs (record's members,
# -n KEY=NUMBER ...) are added.  The bridge's Slurm RPCs count for the
# bridge only.
sched_record() {
	local s=$1 sys=$2 ns=$3 mem=(); shift 3
	[ -n "${rss1:-}" ] && mem+=(-n rss_kib="$rss1")
	[ -n "${hwm1:-}" ] && mem+=(-n hwm_kib="$hwm1")
	rec sched --scenario "$s" --system "$sys" --result "$WORK/bw-$ns.json" \
		--started "${started_ms:-}" --ready "${ready_ms:-}" \
		--cpu0 "${cpu0:-}" --cpu1 "${cpu1:-}" \
		--api0 "$WORK/api0" --api1 "$WORK/api1" \
		--etcd0 "$WORK/etcd0" --etcd1 "$WORK/etcd1" \
		--rpc0 "$WORK/rpc0" --rpc1 "$WORK/rpc1" \
		--stack0 "$WORK/cpu0" --stack1 "$WORK/cpu1" "${mem[@]}" \
		--busy0 "$WORK/busy0-$ns" --busy1 "$WORK/busy1-$ns" "$@"
}
# end_window SCENARIO SYSTEM NS PODS [PID]: deletes NS and its PODS pods
# (drop_ns), waits until Slurm holds none of the bridge's jobs, and
# records what the ending cost (record end): the stack's CPU and the
# scheduler's (PID) in all and per ended pod, tagged with $ROUND.
end_window() {
	local s=$1 sys=$2 ns=$3 n=$4 pid=${5:-} t0 c0='' c1=''
	stack_cpu_snap "$WORK/end0"
	[ -n "$pid" ] && c0=$(proc_cpu "$pid" 2>/dev/null)
	t0=$(now_ms)
	drop_ns "$ns"
	wait_no_jobs
	sleep "$SETTLE_S"
	stack_cpu_snap "$WORK/end1"
	[ -n "$pid" ] && c1=$(proc_cpu "$pid" 2>/dev/null)
	rec end --scenario "$s" --system "$sys" --pods "$n" \
		--seconds "$(( ($(now_ms) - t0) / 1000 ))" --cpu0 "$c0" --cpu1 "$c1" \
		--stack0 "$WORK/end0" --stack1 "$WORK/end1" -n round="${ROUND:-1}"
}
# plot_binds BINDS T0 OUT: cumulative binds against seconds since T0 (a
# bind before it at 0), for the plot.
plot_binds() {
	awk -v t0="$2" '{ x = $1 - t0; if (x < 0) x = 0; printf "%.3f %d\n", x / 1000, NR }' "$1" >"$3"
}
