#!/usr/bin/env bash
# The fault suite: each scenario runs singles and gangs on the real stack,
# injects a fault, and checks the invariants of test/fault/invariants.py.
# Prints "ok"/"FAIL" lines and "fault: N passed, N failed (F faults
# injected, I invariants checked)".
# Usage: test/fault/run.sh [scenario-name-substring]
FAULT_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=test/e2e/lib.sh
. "$FAULT_DIR/../e2e/lib.sh"
top=$(cd "$FAULT_DIR/../.." && pwd)
FAULTS=0
INVARIANTS=0
ONLY=${1:-}
BLOG=$LOG_DIR/slurm-bridge.log

want() { [ -z "$ONLY" ] || [[ $1 == *"$ONLY"* ]]; }

# Every job id the bridge logged as submitted from here on lands in
# $SUBMITTED (the log survives restarts; replicas log elsewhere).
SUBMITTED=$(mktemp)
log_mark() { wc -c <"$1"; }
# log_has LOG FROM_BYTE ERE: LOG holds a line matching ERE past FROM_BYTE.
# grep reads a process substitution, not a pipe: under pipefail, tail's
# SIGPIPE after grep -q's match would fail the check once the log runs on
# past it by more than a pipe holds.
log_has() { grep -Eq "$3" <(tail -c +"$(($2 + 1))" "$1"); }
collect_submitted() {  # collect_submitted LOG FROM_BYTE
	tail -c +"$(($2 + 1))" "$1" | sed -n 's/.*submitted slurm job \([0-9]*\).*/\1/p' >>"$SUBMITTED"
}

# invariants NS...: waits up to 90 s for them to hold, then reports.
# INSTALLS (NS=NAME ...) says which install each namespace's pods are.
INSTALLS=
invariants() {
	local out i n args=()
	for n in "$@"; do args+=(--ns "$n"); done
	for n in $INSTALLS; do args+=(--install "$n"); done
	for ((i = 0; i < 45; i++)); do
		out=$("$FAULT_DIR/invariants.py" --submitted "$SUBMITTED" "${args[@]}" 2>&1) && break
		sleep 2
	done
	INVARIANTS=$((INVARIANTS + $(sed -n 's/^checked //p' <<<"$out" | tail -1)))
	if grep -q . <<<"$(grep -v '^checked ' <<<"$out")"; then
		fail "invariants: $(grep -v '^checked ' <<<"$out" | head -5 | tr '\n' ';')"
	else
		pass "invariants hold ($(tail -1 <<<"$out"))"
	fi
}

# manifest NAME VAR=VALUE...: test/fault/manifests/NAME.yaml with each
# ${VAR} in it replaced by VALUE.
manifest() {
	local name=$1 e out
	out=$(<"$FAULT_DIR/manifests/$name.yaml") || return 1
	shift
	for e in "$@"; do out=${out//"\${${e%%=*}}"/${e#*=}}; done
	if [[ $out == *"\${"* ]]; then
		echo "fault: a placeholder is left in manifests/$name.yaml" >&2
		return 1
	fi
	printf '%s\n' "$out"
}
# single NS TAG NAME [CPU] [MEM]: a pod labelled tag=TAG (1 CPU, 128Mi).
single() { manifest single NS="$1" TAG="$2" NAME="$3" CPU="${4:-1}" MEM="${5:-128Mi}"; }
# gang NS TAG NAME: a gang of 3 one-CPU pods NAME-0..2 labelled tag=TAG.
gang() { manifest gang NS="$1" TAG="$2" NAME="$3"; }
# workload NS TAG: 3 singles and a gang of 3.
workload() {
	{ for i in 1 2 3; do single "$1" "$2" "$2-s$i"; done
	  gang "$1" "$2" "$2-g"; } | k apply -f - >/dev/null
}
bridge_up() { "$top/scripts/stack/bridge-up.sh" >/dev/null; }

# The scheduler contract's faults (13-16; "run.sh constraint" runs those
# alone) put a taint, a label, a Slurm reservation and a pod in kube-system
# on the stack, and may leave the scheduler or slurmctld stopped;
# fc_cleanup undoes them, on failure too (the EXIT trap).  The taint and
# label keys are this file's own.
FC_TAINT=fault.slurm-bridge.io/held
FC_LABEL=fault.slurm-bridge.io/allowed
FC_RESV=fault-hold-$$
FC_PORT=9417
FC_USED="" FC_STOPPED="" FC_CTL_STOPPED="" FC_HP=""
fc_cleanup() {
	local n
	stack_epilog_api off
	[ -n "$FC_USED" ] || return 0
	[ -z "$FC_CTL_STOPPED" ] || kill -CONT "$FC_CTL_STOPPED" 2>/dev/null
	[ -z "$FC_STOPPED" ] || kill -CONT "$FC_STOPPED" 2>/dev/null
	FC_STOPPED="" FC_CTL_STOPPED=""
	for n in $(k get nodes -o json | jq -r --arg t "$FC_TAINT" \
		'.items[] | select(any(.spec.taints[]?; .key == $t)) | .metadata.name'); do
		k taint node "$n" "$FC_TAINT-" >/dev/null 2>&1
	done
	k label nodes -l "$FC_LABEL" "$FC_LABEL-" >/dev/null 2>&1
	scontrol delete reservation="$FC_RESV" >/dev/null 2>&1
	[ -z "$FC_HP" ] || k -n kube-system delete pod "$FC_HP" --wait=false >/dev/null 2>&1
	FC_HP=""
}
# fc_hold: Slurm's nodes reserved for another user, so that the bridge's
# jobs wait PENDING (as t_36 does); fc_release lets them start.
fc_hold() {
	FC_USED=1
	scontrol create reservation reservationname="$FC_RESV" users=alice nodes=ALL \
		starttime=now duration=10 flags=ignore_jobs >/dev/null
}
fc_release() { scontrol delete reservation="$FC_RESV" >/dev/null; }
fc_taint() { FC_USED=1; k taint node "$1" "$FC_TAINT=yes:NoSchedule" >/dev/null; }
fc_untaint() { k taint node "$1" "$FC_TAINT-" >/dev/null; }
# fc_stop / fc_cont: the scheduler frozen whole (SIGSTOP) and thawed.
fc_stop() { FC_USED=1; FC_STOPPED=$(stack_pid "$BRIDGE_PIDFILE"); kill -STOP "$FC_STOPPED"; }
fc_cont() { [ -z "$FC_STOPPED" ] || kill -CONT "$FC_STOPPED"; FC_STOPPED=""; }
# fc_ctl_stop / fc_ctl_cont: slurmctld frozen and thawed (its clients wait,
# within MessageTimeout).
fc_ctl_stop() { FC_USED=1; FC_CTL_STOPPED=$(stack_pid "$RUN_DIR/slurmctld.pid"); kill -STOP "$FC_CTL_STOPPED"; }
fc_ctl_cont() { [ -z "$FC_CTL_STOPPED" ] || kill -CONT "$FC_CTL_STOPPED"; FC_CTL_STOPPED=""; }
# fc_pending NS POD: the pod's job waits in Slurm; its id in $fc_job.
fc_job=""
fc_pending() { fc_job=$(pod_jobid "$1" "$2"); [ -n "$fc_job" ] && job_is "$fc_job" PENDING; }
# exc_has JOB NODE: the job's ExcNodeList names NODE.
exc_has() {
	local l; l=$(job_field "$1" ExcNodeList)
	[ -n "$l" ] && [ "$l" != "(null)" ] && scontrol show hostnames "$l" | grep -qx "$2"
}
refits() { stack_metric slurm_bridge_refits_total; }
# hostport_holders NODE PORT: the live pods of any namespace on NODE that
# hold host port PORT, one a line.
hostport_holders() {
	k get pods -A --field-selector "spec.nodeName=$1" -o json | jq -r --argjson p "$2" \
		'.items[] | select(.metadata.deletionTimestamp == null and
			.status.phase != "Succeeded" and .status.phase != "Failed") |
		select([(.spec.containers + (.spec.initContainers // []))[].ports[]?.hostPort] | index($p)) |
		"\(.metadata.namespace)/\(.metadata.name)"'
}
# hostport_single NS TAG NAME PORT: single's pod holding host port PORT.
hostport_single() {
	single "$1" "$2" "$3" | sed "s|^    command: \[sleep, \"3600\"\]\$|&\n    ports: [{containerPort: $4, hostPort: $4}]|"
}

# The sixth invariant is sampled all along a scenario: no two jobs ever
# hold the same CPUs or GPUs of a node at once (invariants.py --overlap).
OVERLAP=$(mktemp)
sampler_pid=""
# The sampler never outlives the suite, and holds none of its output open
# (a reader of the suite's output would wait for it).
trap 'fc_cleanup; [ -z "$sampler_pid" ] || kill "$sampler_pid" 2>/dev/null; rm -f "$SUBMITTED" "$OVERLAP"' EXIT
sampler_start() {  # sampler_start "NS..."
	local n args=()
	# One at a time: a scenario that did not stop its own loses it here.
	[ -z "$sampler_pid" ] || { kill "$sampler_pid" 2>/dev/null; wait "$sampler_pid" 2>/dev/null; }
	for n in $1; do args+=(--ns "$n"); done
	: >"$OVERLAP"
	( while :; do
		"$FAULT_DIR/invariants.py" --overlap "${args[@]}" 2>/dev/null |
			grep -v '^checked ' >>"$OVERLAP"
		sleep 0.5
	  done ) </dev/null >/dev/null 2>&1 &
	sampler_pid=$!
}
sampler_stop() {
	[ -n "$sampler_pid" ] || return 0
	kill "$sampler_pid" 2>/dev/null; wait "$sampler_pid" 2>/dev/null
	sampler_pid=""
	INVARIANTS=$((INVARIANTS + 1))
	if [ -s "$OVERLAP" ]; then
		fail "no two jobs held the same CPUs or GPUs: $(sort -u "$OVERLAP" | head -3 | tr '\n' ';')"
	else
		pass "no two jobs ever held the same CPUs or GPUs of a node (sampled every 0.5 s)"
	fi
}

# fault_begin TITLE: a scenario in a fresh enabled namespace ($ns), the
# bridge's log read from $mark on; fault_end checks the invariants there.
fault_begin() {
	scenario "$1"
	bridge_up
	ns=$(new_ns enabled)
	mark=$(log_mark "$BLOG")
	sampler_start "$ns"
}
fault_end() {
	collect_submitted "$BLOG" "$mark"
	invariants "$ns"
	sampler_stop
	k delete namespace "$ns" --wait=false >/dev/null
}

# Two replicas with --leader-elect instead of the stack's one bridge:
# ha_begin stops that one and clears the Lease; ha_start NAME PORT starts a
# replica (its log in $ha_dir/NAME.log) and prints its pid; leader_on PORT
# is true while that replica leads.
ha_begin() {
	local pid
	ha_dir=$(mktemp -d)
	pid=$(stack_pid "$BRIDGE_PIDFILE")
	[ -n "$pid" ] && kill "$pid" && wait_for 15 bash -c "! kill -0 $pid 2>/dev/null"
	k -n kube-system delete lease slurm-bridge --ignore-not-found >/dev/null
}
ha_start() {
	POD_NAMESPACE=kube-system "${STACK_EXEC[@]}" "$BRIDGE_BIN" --kubeconfig "$BRIDGE_KUBECONFIG" \
		--config "$BRIDGE_CONFIG" --listen "127.0.0.1:$2" --leader-elect \
		>"$ha_dir/$1.log" 2>&1 &
	echo $!
}
leader_on() { [ "$(stack_metric slurm_bridge_leader "$1")" = 1 ]; }

# --- 1. kill -9 of the scheduler at chosen points, 20 times ---------------------
if want kill; then
	fault_begin "kill -9 of the scheduler mid-submit, mid-bind and mid-cancel, 20 times"
	points=("submitted slurm job" "allocated" "cancelled slurm job")
	hits=0 landed=""
	for ((i = 0; i < 20; i++)); do
		point=${points[$((i % 3))]}
		bridge_up
		from=$(log_mark "$BLOG")
		pid=$(stack_pid "$BRIDGE_PIDFILE")
		# Watch the log for the point and kill at once.
		hit=$(mktemp -u)
		( timeout 20 tail -c +"$((from + 1))" -F "$BLOG" 2>/dev/null |
		  { grep -m1 -q "$point" && kill -9 "$pid" 2>/dev/null && touch "$hit"; } ) &
		watcher=$!
		# A cancel to land on: the pods of two rounds back (the first
		# at round 2, so no round waits out its 20 s for nothing).
		if [ "$point" = "cancelled slurm job" ]; then
			k -n "$ns" delete pods -l "tag=r$((i - 2))" --wait=false >/dev/null 2>&1
		fi
		{ for j in 1 2; do single "$ns" "r$i" "r$i-s$j"; done
		  gang "$ns" "r$i" "r$i-g"; } | k apply -f - >/dev/null
		wait_for 20 bash -c "! kill -0 $pid 2>/dev/null"
		[ -e "$hit" ] && { hits=$((hits + 1)); landed+="${point%% *} "; }
		rm -f "$hit"
		kill -9 "$pid" 2>/dev/null   # a point not reached: killed anyway
		pkill -f "tail -c +$((from + 1)) -F $BLOG" 2>/dev/null
		# Its own watcher only: the overlap sampler runs on meanwhile.
		wait "$watcher"
		FAULTS=$((FAULTS + 1))
	done
	collect_submitted "$BLOG" "$mark"
	check "the kills landed on their point (${hits}/20: ${landed% })" test "$hits" -ge 10
	mark=$(log_mark "$BLOG")
	bridge_up
	check "the scheduler restarts" wait_for 30 curl -sf "http://127.0.0.1:$BRIDGE_PORT/readyz"
	# Everything still there must converge: bound or pending with a job.
	sleep 5
	collect_submitted "$BLOG" "$mark"
	invariants "$ns"
	sampler_stop
	k delete namespace "$ns" --wait=true --timeout=120s >/dev/null
	check "no bridge job is left once the namespace is gone" wait_for 60 bash -c \
		"! squeue -h -o '%k' | grep -q '^slurm-bridge: .* $ns/'"
fi

# --- 2. slurmctld restart with jobs pending and running -----------------------------
if want slurmctld; then
	fault_begin "slurmctld restarts while jobs are pending and running"
	workload "$ns" a
	# Whole-node pods: two run, the rest wait for room.
	for i in 1 2 3 4 5 6; do single "$ns" big "big$i" 24 1Gi; done | k apply -f - >/dev/null
	check "singles and the gang are bound" wait_for 30 all_bound "$ns" a-s1 a-s2 a-s3 a-g-0 a-g-1 a-g-2
	sleep 3
	stack_stop slurmctld "$RUN_DIR/slurmctld.pid" slurmctld 20 >/dev/null
	FAULTS=$((FAULTS + 1))
	# While it is down: a new pod, and a running pod deleted.
	single "$ns" during during | k apply -f - >/dev/null
	k -n "$ns" delete pod a-s1 --wait=false >/dev/null
	sleep 8
	# libslurm retries a refused connection for MessageTimeout (10 s)
	# before it reports the failure; the poll thread says so then, even
	# while the reconcile thread waits on a cancel of its own.
	check "the scheduler saw the failed Slurm polls" wait_for 30 \
		log_has "$BLOG" "$mark" "warn (poll|reconcile): slurm: slurm_load_jobs"
	check "the scheduler survives" kill -0 "$(stack_pid "$BRIDGE_PIDFILE")"
	"$top/scripts/stack/cluster-up.sh" >/dev/null
	check "the pod created during the outage is bound" wait_for 60 pod_has "$ns" during "$JP_NODE"
	check "the pod deleted during the outage is gone" wait_for 60 pod_gone "$ns" a-s1
	k -n "$ns" delete pod big1 big2 --wait=false >/dev/null 2>&1
	check "pending pods start when room frees" wait_for 60 bash -c \
		"[ \$(kubectl --kubeconfig=$KUBECONFIG -n $ns get pods -o jsonpath='{.items[*].spec.nodeName}' | wc -w) -ge 7 ]"
	fault_end
fi

# --- 3. a dead slurmd: NODE_FAIL, and a controller's gang comes back -----------------
if want slurmd; then
	fault_begin "kill -9 of one slurmd: NODE_FAIL removes its pods, the StatefulSet's gang is resubmitted"
	# Slurm runs the epilog on the job's live nodes at NODE_FAIL too: on
	# kwok only the API-asking one holds them until the pods are gone, as
	# a site's holds them until their containers are.
	stack_epilog_api on
	manifest statefulset-gang NS="$ns" | k apply -f - >/dev/null
	check "the gang is bound" wait_for 60 n_with "$ns" app=gang "$JP_NODE" 2
	first=$(pod_field "$ns" gang-0 "$JP_JOBID")
	dead=$(pod_field "$ns" gang-0 "$JP_NODE")
	kill -9 "$(stack_pid "$RUN_DIR/slurmd-$dead.pid")"
	FAULTS=$((FAULTS + 1))
	check "Slurm ends the job NODE_FAIL" wait_for 90 job_is "$first" NODE_FAIL
	check "an Event names NODE_FAIL" wait_for 30 bash -c \
		"kubectl --kubeconfig=$KUBECONFIG -n $ns get events -o jsonpath='{.items[*].message}' | grep -q NODE_FAIL"
	newjob() {
		local p j
		for p in $(pods_by "$ns" app=gang); do
			j=$(pod_field "$ns" "$p" "$JP_JOBID")
			[ -n "$j" ] && [ "$j" != "$first" ] || return 1
			[ "$(pod_field "$ns" "$p" "$JP_NODE")" != "$dead" ] || return 1
		done
		n_with "$ns" app=gang "$JP_NODE" 2
	}
	check "the recreated gang runs as a new job on live nodes" wait_for 90 newjob
	stack_epilog_api off
	fault_end
	"$top/scripts/stack/cluster-up.sh" >/dev/null
	scontrol update nodename="$dead" state=resume 2>/dev/null || true
fi

# --- 4. API server restart, with etcd compacted: every watch gets 410 ----------------
if want apiserver; then
	fault_begin "kube-apiserver restarts and etcd is compacted: the watches relist"
	workload "$ns" a
	check "the workload is bound" wait_for 30 all_bound "$ns" a-s1 a-s2 a-s3 a-g-0 a-g-1 a-g-2
	gone_job=$(pod_field "$ns" a-s2 "$JP_JOBID")
	relists0=$(stack_metric 'slurm_bridge_watch_relists_total{watch="pods"}')
	stack_stop kube-apiserver "$RUN_DIR/kube-apiserver.pid" kube-apiserver >/dev/null
	FAULTS=$((FAULTS + 1))
	# While it is down a pod vanishes (only a relist can tell) and the
	# history is compacted away.
	ETCDCTL_API=3 etcdctl --endpoints="http://$LOCAL_IP:$ETCD_PORT" del "/registry/pods/$ns/a-s2" >/dev/null
	rev=$(ETCDCTL_API=3 etcdctl --endpoints="http://$LOCAL_IP:$ETCD_PORT" endpoint status -w json |
		python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Status"]["header"]["revision"])')
	ETCDCTL_API=3 etcdctl --endpoints="http://$LOCAL_IP:$ETCD_PORT" compact "$rev" >/dev/null
	FAULTS=$((FAULTS + 1))
	sleep 3
	"$top/scripts/stack/cluster-up.sh" >/dev/null
	relisted() { [ "$(stack_metric 'slurm_bridge_watch_relists_total{watch="pods"}')" -gt "$relists0" ]; }
	check "the pod watch relisted" wait_for 60 relisted
	check "the vanished pod's job is cancelled" wait_for 60 bash -c \
		"scontrol show job $gone_job 2>/dev/null | grep -q 'JobState=CANCELLED\|JobState=COMPLETED' || ! scontrol show job $gone_job >/dev/null 2>&1"
	workload "$ns" b
	check "new pods are bound after the restart" wait_for 60 all_bound "$ns" b-s1 b-s2 b-s3 b-g-0 b-g-1 b-g-2
	check "the scheduler survives" kill -0 "$(stack_pid "$BRIDGE_PIDFILE")"
	fault_end
fi

# --- 5. the webhook down ----------------------------------------------------------------
if want webhook; then
	fault_begin "the webhook is down: creates in enabled namespaces fail closed"
	stack_stop slurm-bridge-admission "$ADMISSION_PIDFILE" slurm-bridge-admission >/dev/null
	FAULTS=$((FAULTS + 1))
	out=$(single "$ns" while-down while-down | k apply -f - 2>&1)
	check_match "a pod create is refused, naming the webhook" "$out" "failed calling webhook"
	check "and no such pod exists" pod_gone "$ns" while-down
	manifest indexed-job NS="$ns" NAME=later N=2 CPU=1 | k apply -f - >/dev/null
	sleep 5
	check_eq "the Job controller cannot create pods either" "$(pods_by "$ns" job-name=later | wc -w)" 0
	check "the scheduler keeps running" kill -0 "$(stack_pid "$BRIDGE_PIDFILE")"
	bridge_up
	check "once it is back the Job's pods appear" wait_for 60 bash -c \
		"[ \$(kubectl --kubeconfig=$KUBECONFIG -n $ns get pods -l job-name=later -o name | wc -l) -eq 2 ]"
	check "mutated (gang label from the Job)" wait_for 10 n_with "$ns" job-name=later \
		'{.metadata.labels.scheduling\.x-k8s\.io/pod-group}' 2
	check "and bound as one gang" wait_for 60 n_with "$ns" job-name=later "$JP_NODE" 2
	fault_end
fi

# --- 6. leader failover with two replicas, under load --------------------------------------
if want leader; then
	scenario "leader failover: two replicas, the leader is killed mid-workload"
	ha_begin
	a=$(ha_start a 8097)
	check "replica a leads" wait_for 15 leader_on 8097
	b=$(ha_start b 8098)
	ns=$(new_ns enabled)
	workload "$ns" a
	# Killed while it works through the second workload.
	workload "$ns" b
	sleep 0.3
	kill -9 "$a"
	FAULTS=$((FAULTS + 1))
	workload "$ns" c
	check "replica b takes over" wait_for 30 leader_on 8098
	check "every workload is bound" wait_for 60 all_bound "$ns" a-s1 a-s2 a-s3 a-g-0 a-g-1 a-g-2 \
		b-s1 b-s2 b-s3 b-g-0 b-g-1 b-g-2 c-s1 c-s2 c-s3 c-g-0 c-g-1 c-g-2
	collect_submitted "$ha_dir/a.log" 0
	collect_submitted "$ha_dir/b.log" 0
	invariants "$ns"
	k delete namespace "$ns" --wait=true --timeout=60s >/dev/null
	kill "$b"; wait_for 15 bash -c "! kill -0 $b 2>/dev/null"
	rm -rf "$ha_dir"
	bridge_up
fi

# --- 7. Slurm takes allocations back: preemption mid-bind, suspend, requeue --
if want takeback; then
	fault_begin "Slurm takes allocations back: preemption mid-bind, suspend, requeue"
	# Slurm cancels a victim at once (PreemptMode=CANCEL, no GraceTime)
	# and gives its CPUs to the urgent job once the node's epilog is done.
	# On a site the epilog holds the node until the pod's cgroups are
	# empty; kwok runs no containers, so here it asks the API server
	# (--api), as the handoff scenario does.  Without it the sampler sees
	# the victim's pod alive for as long as the bridge takes to delete it.
	stack_epilog_api on
	nodes=$(sinfo -h -p slurm-bridge -o %D | head -n1)
	# Whole-node pods of QOS normal, then at once urgent ones: Slurm
	# preempts while the bridge is still binding.
	for ((i = 1; i <= nodes; i++)); do single "$ns" low "low$i" 32 256Mi; done | k apply -f - >/dev/null
	wait_for 20 bash -c "squeue -h -o %T -q normal | grep -q RUNNING"
	for i in 1 2; do single "$ns" urgent "urgent$i" 32 256Mi |
		sed 's/^  labels: \(.*\)$/  labels: \1\n  annotations: {slurmjob.slinky.slurm.net\/qos: urgent}/'; done |
		k apply -f - >/dev/null
	FAULTS=$((FAULTS + 1))
	check "the urgent pods are bound" wait_for 60 all_bound "$ns" urgent1 urgent2
	check "their victims yielded (DisruptionTarget)" log_has "$BLOG" "$mark" "Slurm preempted job"
	# scontrol suspend of a running bridge job; scontrol requeue of another.
	left=$(squeue -h -t R -q normal -o %i | head -n2)
	sus=$(head -n1 <<<"$left"); req=$(tail -n1 <<<"$left")
	[ -n "$sus" ] && scontrol suspend "$sus" 2>/dev/null
	[ -n "$req" ] && [ "$req" != "$sus" ] && scontrol requeue "$req" 2>/dev/null
	FAULTS=$((FAULTS + 2))
	gone() { ! squeue -h -j "$1" -o %T 2>/dev/null | grep -q SUSPENDED; }
	[ -z "$sus" ] || check "the suspended job's pod yielded and the job ended" wait_for 30 gone "$sus"
	[ -z "$req" ] || check "the requeued job is never PENDING again (placeholders refuse it)" \
		test "$(job_field "$req" JobState)" != PENDING
	stack_epilog_api off
	fault_end
fi

# --- 8. NotReady for 10 s, and for 400 s -----------------------------------------
if want notready; then
	fault_begin "a node NotReady for 10 s changes nothing; for 400 s it fails its pods"
	workload "$ns" a
	check "the workload is bound" wait_for 30 all_bound "$ns" a-s1 a-s2 a-s3 a-g-0 a-g-1 a-g-2
	sick=$(pod_field "$ns" a-s1 "$JP_NODE")
	stack_stop kwok "$RUN_DIR/kwok.pid" kwok >/dev/null
	node_ready "$sick" False
	FAULTS=$((FAULTS + 1))
	sleep 10
	check_eq "10 s NotReady: a-s1 still runs" "$(pod_field "$ns" a-s1 "$JP_PHASE")" Running
	node_ready "$sick" True
	node_ready "$sick" False 400
	FAULTS=$((FAULTS + 1))
	check "400 s NotReady: a-s1 is failed" wait_for 20 pod_is "$ns" a-s1 "$JP_PHASE" Failed
	"$top/scripts/stack/cluster-up.sh" >/dev/null
	fault_end
fi

# --- 9. A leader whose API calls hang ---------------------------------------------
if want hang; then
	# The leader frozen whole (its lease calls and its reconcile thread):
	# it wakes with a Lease that has passed to b.
	scenario "a leader whose calls hang: its Lease passes, and it writes nothing to Slurm after"
	ha_begin
	a=$(ha_start a 8097)
	check "replica a leads" wait_for 15 leader_on 8097
	ns=$(new_ns enabled)
	sampler_start "$ns"
	workload "$ns" a
	check "the workload is bound" wait_for 30 all_bound "$ns" a-s1 a-s2 a-s3 a-g-0 a-g-1 a-g-2
	# a's connections to the API server hang: stopped, not refused.
	kill -STOP "$a"
	b=$(ha_start b 8098)
	k -n "$ns" delete pod a-s1 --wait=false >/dev/null
	check "replica b takes the Lease once a's has expired" wait_for 40 leader_on 8098
	FAULTS=$((FAULTS + 1))
	# a wakes up with a stale Lease: it must stop before any Slurm write.
	kill -CONT "$a"
	check "replica a stops" wait_for 30 bash -c "! kill -0 $a 2>/dev/null"
	check "a made no Slurm write after it woke (fenced or exited)" bash -c "! grep -qE 'cancelled slurm job .*a-s1' '$ha_dir/a.log'"
	grep -hE "fence:|lost the lease" "$ha_dir/a.log" | head -n 3 | sed 's/^/    /'
	check "b cancels a-s1's job" wait_for 30 bash -c \
		"grep -qE 'pod:$ns/a-s1: cancelled|no pod wants it \\($ns/a-s1\\)' '$ha_dir/b.log'"
	collect_submitted "$ha_dir/a.log" 0
	collect_submitted "$ha_dir/b.log" 0
	invariants "$ns"
	sampler_stop
	k delete namespace "$ns" --wait=true --timeout=60s >/dev/null
	kill "$b" 2>/dev/null; wait_for 15 bash -c "! kill -0 $b 2>/dev/null"
	rm -rf "$ha_dir"
	bridge_up
fi

# --- 10. Two installs on one Slurm, through kills, restarts and a forged label --
if want installs; then
	fault_begin "two installs on one Slurm: kills, restarts and a forged label cross nothing"
	b_dir=$(mktemp -d)
	nsb=$(new_ns)
	printf 'schedulerName: slurm-bridge-b\npartition: slurm-bridge\ninstallName: fault-b\nmanagedNamespaces: [%s]\n' \
		"$nsb" >"$b_dir/config.yaml"
	b_start() {
		"${STACK_EXEC[@]}" "$BRIDGE_BIN" --kubeconfig "$BRIDGE_KUBECONFIG" \
			--config "$b_dir/config.yaml" --listen 127.0.0.1:8099 >>"$b_dir/b.log" 2>&1 &
		b=$!
		wait_for 30 curl -sf http://127.0.0.1:8099/readyz
	}
	b_kill() { kill "-${1:-TERM}" "$b" 2>/dev/null; wait_for 15 bash -c "! kill -0 $b 2>/dev/null"; }
	a_kill() {
		local pid; pid=$(stack_pid "$BRIDGE_PIDFILE")
		kill "-${1:-TERM}" "$pid" 2>/dev/null
		wait_for 15 bash -c "! kill -0 $pid 2>/dev/null"
	}
	b_start
	INSTALLS="$ns=$(stack_install_name) $nsb=fault-b"
	sampler_stop
	sampler_start "$ns $nsb"
	workload "$ns" a
	{ for i in 1 2 3; do single "$nsb" b "b-s$i"; done; gang "$nsb" b b-g; } |
		sed 's/schedulerName: slurm-bridge$/schedulerName: slurm-bridge-b/' | k apply -f - >/dev/null
	both_bound() {
		all_bound "$ns" a-s1 a-s2 a-s3 a-g-0 a-g-1 a-g-2 &&
			all_bound "$nsb" b-s1 b-s2 b-s3 b-g-0 b-g-1 b-g-2
	}
	check "both workloads are bound" wait_for 30 both_bound
	jobs_of() { k -n "$1" get pods -o jsonpath='{range .items[*]}{.metadata.annotations.scheduler\.slinky\.slurm\.net/slurm-jobid}{"\n"}{end}' | sort -u | grep .; }
	before_a=$(jobs_of "$ns"); before_b=$(jobs_of "$nsb")
	# A pod of A's scheduler in B's namespace whose label names B's gang
	# job; then each install killed or restarted, twice.
	single "$nsb" forged forged | sed "s/^  labels: {tag: forged}/  labels: {tag: forged, scheduler.slinky.slurm.net\/slurm-jobid: \"$(pod_field "$nsb" b-g-0 "$JP_JOBID")\"}/" |
		k apply -f - >/dev/null
	for round in 1 2; do
		a_kill 9; bridge_up; FAULTS=$((FAULTS + 1))
		b_kill 9; b_start; FAULTS=$((FAULTS + 1))
		a_kill; bridge_up; FAULTS=$((FAULTS + 1))
		b_kill; b_start; FAULTS=$((FAULTS + 1))
	done
	FAULTS=$((FAULTS + 1)) # the forged label
	sleep 3
	check_eq "A's pods keep their jobs" "$(jobs_of "$ns" | tr '\n' ' ')" "$(tr '\n' ' ' <<<"$before_a")"
	check_eq "B's pods keep theirs" "$(jobs_of "$nsb" | tr '\n' ' ')" "$(tr '\n' ' ' <<<"$before_b")"
	alive() { local j; for j in $before_a $before_b; do [ "$(job_field "$j" JobState)" = RUNNING ] || return 1; done; }
	check "every job of both runs on" alive
	crossed() {
		tail -c +"$((mark + 1))" "$BLOG" | grep -E "$nsb/|job ($(tr '\n' '|' <<<"$before_b" | sed 's/|$//'))\b" |
			grep -v "$nsb/forged"
		grep -E "$ns/|job ($(tr '\n' '|' <<<"$before_a" | sed 's/|$//'))\b" "$b_dir/b.log"
	}
	check_eq "neither install logged a job or pod of the other" "$(crossed | head -3)" ""
	collect_submitted "$BLOG" "$mark"
	collect_submitted "$b_dir/b.log" 0
	invariants "$ns" "$nsb"
	sampler_stop
	k delete namespace "$ns" "$nsb" --wait=true --timeout=120s >/dev/null
	b_kill
	INSTALLS=
	if grep -q "two installs" <<<"${E2E_FAILURES[*]}"; then
		echo "  install B's log kept: $b_dir/b.log"
	else
		rm -rf "$b_dir"
	fi
fi

# --- 11. One tenant's backlog, another tenant's pod -------------------------------
if want tenants; then
	# slurmctld frozen (well within MessageTimeout, 30 s on the stack):
	# the submit threads wait on their first requests while 40 pods of one
	# namespace, then one of another, queue behind them.  Slurm numbers
	# jobs in the order they are made, so the tenant's job id says how many
	# of the backlog went first: a namespace at a time in turn puts it
	# within the first few; arrival order made it the 41st.
	fault_begin "one tenant's backlog does not hold back another tenant's pod"
	nst=$(new_ns enabled)
	sampler_stop
	sampler_start "$ns $nst"
	ctl=$(stack_pid "$RUN_DIR/slurmctld.pid")
	kill -STOP "$ctl"
	FAULTS=$((FAULTS + 1))
	backlog=()
	for i in $(seq 1 40); do backlog+=("b$i"); done
	for p in "${backlog[@]}"; do single "$ns" backlog "$p"; done | k apply -f - >/dev/null
	single "$nst" tenant t1 | k apply -f - >/dev/null
	sleep 2
	kill -CONT "$ctl"
	tenants_bound() { all_bound "$ns" "${backlog[@]}" && all_bound "$nst" t1; }
	check "the backlog and the tenant's pod are bound" wait_for 90 tenants_bound
	tenant_job=$(pod_jobid "$nst" t1)
	before=0
	for p in "${backlog[@]}"; do
		j=$(pod_jobid "$ns" "$p")
		[ -n "$j" ] && [ -n "$tenant_job" ] && [ "$j" -lt "$tenant_job" ] && before=$((before + 1))
	done
	echo "    backlog jobs made before the tenant's: $before of ${#backlog[@]}"
	check "the tenant's job came within the first 10 of 41" test -n "$tenant_job" -a "$before" -lt 10
	collect_submitted "$BLOG" "$mark"
	invariants "$ns" "$nst"
	sampler_stop
	k delete namespace "$ns" "$nst" --wait=false >/dev/null
fi

# --- 12. A job Slurm forgets before the scheduler sees it end ------------------
if want purged; then
	# The scheduler frozen (SIGSTOP) while an admin takes a node down:
	# Slurm ends the job there NODE_FAIL, keeps it MinJobAge (30 s on the
	# stack) and forgets it at its next purge (once a minute).  Thawed,
	# the scheduler loads jobs without it: the pod goes, saying so (poll_gone;
	# a restart finds such jobs too, poll_vanished).
	fault_begin "a job Slurm forgot while the scheduler could not look: its pod goes"
	single "$ns" p gone | k apply -f - >/dev/null
	check "the pod is bound" wait_for 30 all_bound "$ns" gone
	job=$(pod_jobid "$ns" gone)
	node=$(job_field "$job" NodeList)
	bpid=$(stack_pid "$BRIDGE_PIDFILE")
	kill -STOP "$bpid"
	FAULTS=$((FAULTS + 1))
	scontrol update nodename="$node" state=down reason="fault: purged" >/dev/null
	forgotten() { ! scontrol show job "$job" >/dev/null 2>&1; }
	check "Slurm ends job $job and forgets it" wait_for 150 forgotten
	kill -CONT "$bpid"
	check "the pod of the forgotten job is deleted" wait_for 30 pod_gone "$ns" gone
	evs=$(k -n "$ns" get events -o jsonpath='{.items[*].message}')
	check_match "an Event says Slurm no longer knows the job" "$evs" "no longer known to Slurm"
	check "the scheduler logged it" log_has "$BLOG" "$mark" "slurm job $job is gone from Slurm"
	scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true
	fault_end
fi

# --- 13. A taint while a job waits in Slurm ----------------------------------
if want constraint-pending; then
	fault_begin "a taint added while a job waits in Slurm: its ExcNodeList gains the node; released, the pod is bound elsewhere"
	fc_hold
	single "$ns" p waits | k apply -f - >/dev/null
	check "the pod's job waits in Slurm (nodes reserved)" wait_for 30 fc_pending "$ns" waits
	job=$fc_job target=""
	for n in $(stack_node_names); do exc_has "$job" "$n" || { target=$n; break; }; done
	check "a node the job may use ($target)" test -n "$target"
	fc_taint "$target"
	FAULTS=$((FAULTS + 1))
	check "the pending job's ExcNodeList gains $target" wait_for 30 exc_has "$job" "$target"
	echo "    ExcNodeList=$(job_field "$job" ExcNodeList)"
	check_eq "the same job, still pending" "$(job_field "$job" JobState)" PENDING
	fc_release
	check "released, the pod is bound" wait_for 60 pod_has "$ns" waits "$JP_NODE"
	on=$(pod_field "$ns" waits "$JP_NODE")
	check "not to the tainted node ($on)" test -n "$on" -a "$on" != "$target"
	check_eq "by that job" "$(pod_field "$ns" waits "$JP_JOBID")" "$job"
	fc_untaint "$target"
	fault_end
fi

# --- 14. A taint between Slurm's allocation and the Binding -------------------
if want constraint-taint; then
	# The window made wide: the scheduler frozen (SIGSTOP) while the job
	# still waits, so that it cannot bind; Slurm starts the job and its
	# node is tainted.  Thawed, the scheduler must learn of the taint
	# before it learns of the allocation (as it would, outside the fault):
	# slurmctld is frozen meanwhile, so that its poll waits while the node
	# watch delivers.
	fault_begin "a taint on the allocated node before the Binding: the allocation is given back, the pod bound elsewhere"
	fc_hold
	single "$ns" w win | k apply -f - >/dev/null
	check "the pod's job waits in Slurm (nodes reserved)" wait_for 30 fc_pending "$ns" win
	job=$fc_job
	refits0=$(refits)
	fc_stop
	fc_release
	check "with the scheduler stopped, Slurm starts job $job" wait_for 60 job_is "$job" RUNNING
	node=$(job_field "$job" NodeList)
	fc_taint "$node"
	FAULTS=$((FAULTS + 1))
	fc_ctl_stop
	fc_cont
	sleep 2
	fc_ctl_cont
	check "the pod is bound" wait_for 60 pod_has "$ns" win "$JP_NODE"
	on=$(pod_field "$ns" win "$JP_NODE")
	check "not to the tainted node $node ($on)" test -n "$on" -a "$on" != "$node"
	check "the allocation was given back (slurm_bridge_refits_total $refits0 -> $(refits))" \
		test "$(refits)" -gt "${refits0:-0}"
	check "the scheduler said so" log_has "$BLOG" "$mark" "pod $ns/win: Slurm job $job: node $node no longer fits"
	grep -h "pod $ns/win: Slurm job $job: node" <(tail -c +"$((mark + 1))" "$BLOG") | head -n1 | sed 's/^/    /'
	check "job $job ends" wait_for 30 bash -c "! squeue -h -j $job -t R,CG -o %i 2>/dev/null | grep -q ."
	check "the scheduler survived the stop" curl -sf "http://$LOCAL_IP:$BRIDGE_PORT/readyz" -o /dev/null
	fc_untaint "$node"
	fault_end
fi

# --- 15. Another scheduler's pod takes the host port before the Binding -------
if want constraint-hostport; then
	# The same window; the pod that takes the port is made in kube-system
	# (the guard exempts it) with spec.nodeName, as a DaemonSet's would be.
	# invariants.py reads the bridge's namespaces only: the port is checked
	# across every namespace here.
	fault_begin "a host port taken on the allocated node before the Binding: the pod is not bound there"
	check_eq "no pod holds host port $FC_PORT" "$(for n in $(stack_node_names); do hostport_holders "$n" "$FC_PORT"; done | tr '\n' ' ')" ""
	fc_hold
	hostport_single "$ns" h port "$FC_PORT" | k apply -f - >/dev/null
	check "the pod's job waits in Slurm (nodes reserved)" wait_for 30 fc_pending "$ns" port
	job=$fc_job
	refits0=$(refits)
	fc_stop
	fc_release
	check "with the scheduler stopped, Slurm starts job $job" wait_for 60 job_is "$job" RUNNING
	node=$(job_field "$job" NodeList)
	FC_HP=fault-hostport-$$
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $FC_HP, namespace: kube-system}
spec:
  nodeName: $node
  terminationGracePeriodSeconds: 0
  tolerations: [{key: slinky.slurm.net/managed-node, operator: Exists}]
  containers:
  - {name: main, image: busybox, command: [sleep, "3600"],
     ports: [{containerPort: $FC_PORT, hostPort: $FC_PORT}]}
YAML
	FAULTS=$((FAULTS + 1))
	check "kube-system/$FC_HP holds port $FC_PORT on $node" pod_is kube-system "$FC_HP" "$JP_NODE" "$node"
	fc_cont
	check "the pod is bound" wait_for 60 pod_has "$ns" port "$JP_NODE"
	on=$(pod_field "$ns" port "$JP_NODE")
	check "not to $node, where the port is taken ($on)" test -n "$on" -a "$on" != "$node"
	check "the allocation was given back (slurm_bridge_refits_total $refits0 -> $(refits))" \
		test "$(refits)" -gt "${refits0:-0}"
	grep -h "pod $ns/port: Slurm job" <(tail -c +"$((mark + 1))" "$BLOG") | head -n3 | sed 's/^/    /'
	check_eq "one holder of port $FC_PORT on $node" "$(hostport_holders "$node" "$FC_PORT" | tr '\n' ' ')" "kube-system/$FC_HP "
	check "the kube-system pod still runs there" pod_is kube-system "$FC_HP" "$JP_NODE" "$node"
	k -n kube-system delete pod "$FC_HP" --wait=false >/dev/null && FC_HP=""
	fault_end
fi

# --- 16. The scheduler restarted while constrained jobs wait ----------------
if want constraint-restart && [ "$NODES" -ge 4 ]; then
	# kill -9 with three constrained jobs pending; while it is down n1
	# (Slurm's first choice) is tainted, and once it is back n4 too.  The
	# restarted scheduler adopts the jobs: their ExcNodeLists take both
	# taints, and none is bound where its constraints do not allow (the
	# check before the Binding would catch what an ExcNodeList missed).
	# Needs n1..n4.
	fault_begin "the scheduler killed -9 and restarted while constrained jobs wait: the adopted jobs keep the constraints"
	fc_hold
	k label node n1 n3 "$FC_LABEL=yes" >/dev/null
	single "$ns" r sel | sed "s|^spec:\$|&\n  nodeSelector: {$FC_LABEL: \"yes\"}|" | k apply -f - >/dev/null
	single "$ns" r aff | sed 's|^spec:$|&\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: NotIn, values: [n2]}]}]}}}|' |
		k apply -f - >/dev/null
	single "$ns" r plain | k apply -f - >/dev/null
	declare -A rjob=()
	for p in sel aff plain; do
		check "$p's job waits in Slurm" wait_for 30 fc_pending "$ns" "$p"
		rjob[$p]=$fc_job
	done
	# all_exc NODE [POD...]: the jobs' ExcNodeLists (all three) name NODE.
	all_exc() {
		local p n=$1; shift
		[ $# -gt 0 ] || set -- sel aff plain
		for p in "$@"; do exc_has "${rjob[$p]}" "$n" || return 1; done
	}
	check "sel's and aff's jobs exclude n2" all_exc n2 sel aff
	exc_lists() { local p; for p in sel aff plain; do printf '%s=%s ' "$p" "$(job_field "${rjob[$p]}" ExcNodeList)"; done; }
	bpid=$(stack_pid "$BRIDGE_PIDFILE")
	check "kill -9 of the scheduler (pid $bpid)" kill -9 "$bpid"
	wait_for 15 bash -c "! kill -0 $bpid 2>/dev/null"
	FAULTS=$((FAULTS + 1))
	fc_taint n1
	bridge_up
	check "the scheduler restarts" wait_for 30 curl -sf "http://$LOCAL_IP:$BRIDGE_PORT/readyz"
	refits0=$(refits)
	adopted() { local p; for p in sel aff plain; do fc_pending "$ns" "$p" && [ "$fc_job" = "${rjob[$p]}" ] || return 1; done; }
	check "the three jobs are adopted, still pending" adopted
	check "the taint made while it was down reaches their ExcNodeLists" wait_for 20 all_exc n1
	echo "    ExcNodeList: $(exc_lists)"
	fc_taint n4
	check "a taint made once it is back (n4) reaches them" wait_for 20 all_exc n4
	echo "    ExcNodeList: $(exc_lists)"
	fc_release
	check "released, the three are bound" wait_for 60 all_bound "$ns" sel aff plain
	check_eq "sel to n3 (labelled, untainted)" "$(pod_field "$ns" sel "$JP_NODE")" n3
	for p in aff plain; do
		on=$(pod_field "$ns" "$p" "$JP_NODE")
		check "$p: not to a tainted node$([ $p = aff ] && echo ' nor n2') ($on)" \
			test -n "$on" -a "$on" != n1 -a "$on" != n4 -a "$p:$on" != aff:n2
	done
	bound_by=$(for p in sel aff plain; do printf '%s:%s ' "$p" "$(pod_field "$ns" "$p" "$JP_JOBID")"; done)
	echo "    bound by $bound_by(adopted: sel:${rjob[sel]} aff:${rjob[aff]} plain:${rjob[plain]}); allocations given back: $(($(refits) - ${refits0:-0}))"
	fault_end
	# After the invariants: a label gone is IgnoredDuringExecution.
	fc_untaint n1; fc_untaint n4
	k label node n1 n3 "$FC_LABEL-" >/dev/null
fi

# --- 17. The handoff's faults ----------------------------------------------------
# A force delete, the job's owner rewriting its comment before scancel, and
# the node's kubelet (kwok) gone at the job's end: the job ends, nothing is
# marked, and the node goes to the next job only once the pod stopped (here
# through the API fallback of the epilog: kwok runs no containers; the
# cgroup evidence is make handoff-node-test's).
if want handoff; then
	fault_begin "the handoff: a force delete, a rewritten comment, the kubelet gone at the job's end"
	stack_epilog_api on
	hf_ended() { [[ $(job_field "$1" JobState) =~ CANCELLED|COMPLETED|COMPLETING ]] || ! scontrol show job "$1" >/dev/null 2>&1; }
	hf_completing() { [[ $(sinfo -h -n "$1" -o %T 2>/dev/null | head -n1) == *completing* ]]; }
	hf_running() { [[ $(job_field "$1" JobState) =~ RUNNING|COMPLETING|COMPLETED ]]; }
	hf_comment() { sacct -n -X -P -j "$1" -o Comment 2>/dev/null | head -n1; }
	# A whole node's CPUs; its pod takes $2 to stop once deleted.
	hf_pod() {
		pod_yaml "$ns" "$1" 32 256Mi "  annotations: {pod-terminate.stage.kwok.x-k8s.io/delay: $2}" |
			sed "s/terminationGracePeriodSeconds: 0/terminationGracePeriodSeconds: ${3:-30}/" | k apply -f - >/dev/null
		check "$1 is bound" wait_for 60 pod_has "$ns" "$1" "$JP_NODE"
		hf_node=$(pod_field "$ns" "$1" "$JP_NODE") hf_job=$(pod_field "$ns" "$1" "$JP_JOBID")
	}

	hf_pod forced 1s
	c0=$(squeue -h -j "$hf_job" -o %k)
	k -n "$ns" delete pod forced --force --grace-period=0 >/dev/null 2>&1
	FAULTS=$((FAULTS + 1))
	check "a force-deleted pod's job ends" wait_for 30 hf_ended "$hf_job"
	check_eq "its comment is left as submitted (no stopped mark)" "$(hf_comment "$hf_job")" "$c0"

	hf_pod slow 15s
	native=$(sbatch --parsable -p slurm-bridge -w "$hf_node" -n 32 -o /dev/null -J fault-native --wrap 'sleep 1')
	check "a native job waits for $hf_node" wait_for 20 job_is "$native" PENDING
	scontrol update jobid="$hf_job" comment="slurm-bridge: stopped: pod $ns/slow" >/dev/null
	FAULTS=$((FAULTS + 1))
	t0=$(date +%s)
	scancel "$hf_job"
	check "comment rewritten, then scancel: the node stays COMPLETING while the pod stops" wait_for 20 hf_completing "$hf_node"
	check "the pod stops after its 15 s" wait_for 60 pod_gone "$ns" slow
	check "then the native job starts" wait_for 30 hf_running "$native"
	echo "    the native job started $(($(date -d "$(job_field "$native" StartTime)" +%s) - t0)) s after the scancel (the pod's stop: 15 s)"
	check "not before the pod stopped" test "$(($(date -d "$(job_field "$native" StartTime)" +%s) - t0))" -ge 14

	hf_pod orphan 1s 4
	stack_stop kwok "$RUN_DIR/kwok.pid" kwok >/dev/null
	FAULTS=$((FAULTS + 1))
	scancel "$hf_job"
	check "the kubelet gone at the job's end: its node stays COMPLETING" wait_for 20 hf_completing "$hf_node"
	sleep 6
	check "and still is past the pod's grace period (no kubelet confirmed the stop)" hf_completing "$hf_node"
	"$top/scripts/stack/cluster-up.sh" >/dev/null
	check "once the kubelet is back the pod goes" wait_for 60 pod_gone "$ns" orphan
	not_completing() { ! hf_completing "$hf_node"; }
	check "and the node is free" wait_for 30 not_completing
	check "no node is left drained by the epilog" bash -c "! sinfo -h -R | grep -q slurm-bridge-epilog:"
	stack_epilog_api off
	fault_end
fi

echo
echo "fault: the longest scenarios ($SECONDS s in all):"
e2e_times 10
for f in "${E2E_FAILURES[@]}"; do echo "failed: $f"; done
echo "fault: $E2E_PASSED passed, $E2E_FAILED failed ($FAULTS faults injected, $INVARIANTS invariants checked)"
[ "$E2E_FAILED" -eq 0 ]
