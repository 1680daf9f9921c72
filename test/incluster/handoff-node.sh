#!/usr/bin/env bash
# make handoff-node-test: the handoff on a real kubelet, with real
# containers.  The node goes to the next Slurm job only once the node
# itself shows that the pod's containers are gone, whatever the API server
# or the job's comment say.
#
# The stack's real node (make node-up) stands behind Slurm node n$NODES
# (label slinky.slurm.net/slurm-nodename); Slurm's other nodes are drained
# for the test.  $STACK_DIR/bin/cgroup-node names n$NODES, so the stack's
# epilog runs slurm-bridge-epilog there in its cgroup mode (the pods'
# kubelet cgroups on this machine), with a short --max-wait.  Each case:
# a pod whose container ignores SIGTERM (terminationGracePeriodSeconds:
# 30), bound through Slurm on n$NODES; a native job waiting for the whole
# node (--exclusive); then one way of ending the bridge job: a force
# delete, scancel, its time limit, its owner's comment rewrite, a
# preemption, the kubelet down, the API server down.  The native
# job must start only after the pod's cgroup holds no process, and no
# node is left drained.  The timeline (cgroup, squeue) is printed.
# Usage: test/incluster/handoff-node.sh [case-name-substring]
# shellcheck source=test/e2e/lib.sh
. "$(cd "$(dirname "$0")/../e2e" && pwd)/lib.sh"
TOP=$(cd "$E2E_DIR/../.." && pwd)

slurm_node=n$NODES
MAX_WAIT=45
ONLY=${1:-}
others=$(sinfo -h -p slurm-bridge -N -o %N | sort -u | grep -vx "$slurm_node" | paste -sd,)
cleanup() {
	[ -z "${ns:-}" ] || k delete namespace "$ns" --wait=true --timeout=60s >/dev/null 2>&1 || true
	[ -z "$others" ] || scontrol update nodename="$others" state=resume >/dev/null 2>&1 || true
	scontrol update nodename="$slurm_node" state=resume >/dev/null 2>&1 || true
	k label node "$SYSTEM_NODE" slinky.slurm.net/slurm-nodename- >/dev/null 2>&1 || true
	rm -f "$STACK_DIR/bin/cgroup-node"
}
trap 'cleanup; sacctmgr -i modify qos normal set GraceTime=0 >/dev/null 2>&1' EXIT

"$TOP/scripts/stack/bridge-up.sh" >/dev/null
k label node "$SYSTEM_NODE" --overwrite "slinky.slurm.net/slurm-nodename=$slurm_node" >/dev/null
[ -z "$others" ] || scontrol update nodename="$others" state=drain reason="handoff-node-test" >/dev/null
echo "$slurm_node $MAX_WAIT" >"$STACK_DIR/bin/cgroup-node"

# stubborn NS NAME [ANNOTATIONS]: on the real node, a container that
# ignores SIGTERM (envprobe as PID 1 without a handler), 30 s to stop once
# deleted.
stubborn() {
	cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1, annotations: {${3:-}}}
spec:
  schedulerName: slurm-bridge
  terminationGracePeriodSeconds: 30
  tolerations:
  - {key: node-role.kubernetes.io/system, operator: Exists, effect: NoSchedule}
  - {key: slinky.slurm.net/managed-node, operator: Exists}
  containers:
  - name: main
    image: docker.io/library/slurm-bridge-envprobe:dev
    imagePullPolicy: Never
    args: [NONE]
    env: [{name: ENVPROBE_IGNORE_TERM, value: "1"}]
    resources:
      requests: {cpu: 100m, memory: 32Mi}
YAML
}

# The pod's cgroup on this machine (cgroup v1 or v2, either driver), and
# whether a process is left in it.
pod_cgroup() {
	local u=$1 d
	for d in /sys/fs/cgroup/pids /sys/fs/cgroup/unified /sys/fs/cgroup; do
		find "$d" -maxdepth 4 -type d \( -name "pod$u" -o -name "*pod${u//-/_}.slice" \) 2>/dev/null | head -n1
	done | head -n1
}
cg_populated() {
	local cg=$1
	[ -n "$cg" ] && [ -d "$cg" ] || return 1
	[ -n "$(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null)" ]
}
now_ms() { date +%s%3N; }

# one_case NAME HOW: places a stubborn pod, queues a native job for the
# whole node, ends the bridge job by HOW (a function given the pod and its
# job), then follows the cgroup and the native job.
one_case() {
	local name=$1 how=$2 uid job native cg t_end t_empty=""
	[[ $name == *"$ONLY"* ]] || return 0
	scenario "handoff on a real kubelet: $name"
	ns=$(new_ns enabled)
	stubborn "$ns" p "${ANNOTATIONS:-}" | k apply -f - >/dev/null
	check "the pod runs on the real node" wait_for 90 pod_is "$ns" p "$JP_PHASE" Running
	uid=$(pod_field "$ns" p '{.metadata.uid}')
	job=$(pod_field "$ns" p "$JP_JOBID")
	cg=$(pod_cgroup "$uid")
	check "its cgroup on this machine holds its container ($cg)" cg_populated "$cg"
	native=$(sbatch --parsable -p slurm-bridge -w "$slurm_node" --exclusive -o /dev/null -J handoff-native --wrap 'sleep 1')
	check "a native job waits for the whole of $slurm_node" wait_for 20 job_is "$native" PENDING
	t_end=$(now_ms)
	"$how" "$ns" p "$job"
	# Follow the cgroup and the native job together, every 0.1 s: the
	# native job must never be seen running while the pod's cgroup still
	# holds a process.
	started() { [[ $(squeue -h -j "$native" -o %T 2>/dev/null) =~ RUNNING|COMPLETING ]] ||
		[[ $(job_field "$native" JobState) =~ COMPLETED ]]; }
	local overlap=0 t_run=""
	while [ $(($(now_ms) - t_end)) -lt $(((MAX_WAIT + 150) * 1000)) ]; do
		local pop=0
		cg_populated "$cg" && pop=1
		[ -z "$t_empty" ] && [ $pop = 0 ] && t_empty=$(now_ms)
		if started; then
			[ $pop = 1 ] && overlap=$((overlap + 1))
			t_run=$(now_ms)
			[ $pop = 0 ] && break
		fi
		sleep 0.1
	done
	check "the container's last process exits (cgroup empty)" test -n "$t_empty"
	check "then the native job starts" test -n "$t_run"
	echo "    timeline: bridge job $job ended at +0 ms; cgroup of pod $uid seen empty at +$((t_empty - t_end)) ms;" \
		"native job $native seen running at +$((t_run - t_end)) ms"
	check_eq "the native job was never seen running while the cgroup held a process" "$overlap" 0
	check "and it was seen empty first" test "${t_empty:-0}" -le "${t_run:-0}"
	grep "job $job:" "$LOG_DIR/epilog.log" | sed 's/^/    epilog: /'
	grep "node $slurm_node" "$LOG_DIR/epilog.log" | tail -n 2 | sed 's/^/    epilog: /'
	not_drained() { ! sinfo -h -n "$slurm_node" -o '%T' | grep -q drain; }
	check "$slurm_node is not left drained ($(sinfo -h -n "$slurm_node" -o '%T %E'))" not_drained
	k delete namespace "$ns" --wait=true --timeout=60s >/dev/null
	scancel "$native" 2>/dev/null
	wait_for 30 job_gone_or_done "$native" >/dev/null || true
}
job_gone_or_done() { [[ ! $(job_field "$1" JobState) =~ PENDING|RUNNING|CONFIGURING ]]; }

# The ways a bridge job ends while its container still runs.
end_force_delete() { k -n "$1" delete pod "$2" --force --grace-period=0 >/dev/null 2>&1; }
end_scancel() { scancel "$3"; }
# Its time limit of one minute ends it (Slurm's TIMEOUT).
end_timelimit() {
	local j=$3
	timed_out() { [[ $(job_field "$j" JobState) =~ TIMEOUT|COMPLETING|CANCELLED ]] || ! scontrol show job "$j" >/dev/null 2>&1; }
	wait_for 120 timed_out
	t_end=$(now_ms) # one_case's: the timeline starts at the job's end
	echo "    job $j: $(sacct -n -X -P -j "$j" -o State,Elapsed | head -n1)"
}
# A native job of QOS urgent preempts it (GraceTime 30 on QOS normal, as
# t_54): the pod yields, the job ends PREEMPTED after its GraceTime, and
# the urgent job, which one_case then follows instead of its own, starts
# only once the container is gone.
end_preempt() {
	local urgent
	sacctmgr -i modify qos normal set GraceTime=30 >/dev/null
	scancel "$native" 2>/dev/null
	urgent=$(sbatch --parsable -p slurm-bridge -q urgent -w "$slurm_node" --exclusive -o /dev/null -J handoff-urgent --wrap 'sleep 1')
	native=$urgent # one_case's: the job that waits for the node
	echo "    urgent job $urgent preempts bridge job $3"
}
end_comment_rewrite() {
	# What the job's owner may do: Slurm guards only admin_comment.
	scontrol update jobid="$3" comment="slurm-bridge: stopped: pod $1/$2" >/dev/null
	echo "    the comment now: $(squeue -h -j "$3" -o %k)"
	scancel "$3"
}
end_kubelet_down() {
	# No kubelet to stop the container: the epilog's kill does, past
	# --max-wait; then the kubelet comes back.
	stack_stop kubelet "$RUN_DIR/kubelet.pid" kubelet >/dev/null
	k -n "$1" delete pod "$2" --wait=false >/dev/null
	scancel "$3"
	( sleep $((MAX_WAIT + 20)); "$TOP/scripts/stack/k8s/node-up.sh" >/dev/null 2>&1 ) &
}

end_apiserver_down() {
	# Nobody can tell the kubelet: it runs the pod on.  Past --max-wait
	# the epilog kills it, the kubelet starts it again, the node is
	# drained naming it; the API server back, the bridge deletes the pod,
	# and once its cgroup is empty the health check resumes the node.
	stack_stop kube-apiserver "$RUN_DIR/kube-apiserver.pid" kube-apiserver >/dev/null
	scancel "$3"
	# (k8s/up.sh, not cluster-up.sh: that resumes drained Slurm nodes.)
	( sleep $((MAX_WAIT + 25)); "$TOP/scripts/stack/k8s/up.sh" >/dev/null 2>&1 ) &
}

one_case "kubectl delete --force --grace-period=0" end_force_delete
one_case "scancel (the pod's 30 s grace, SIGTERM ignored)" end_scancel
ANNOTATIONS="slurmjob.slinky.slurm.net/timelimit: \"1\"" \
	one_case "its time limit (one minute)" end_timelimit
one_case "the job owner rewrites the comment, then scancel" end_comment_rewrite
one_case "preemption by a job of QOS urgent (GraceTime 30)" end_preempt
sacctmgr -i modify qos normal set GraceTime=0 >/dev/null
one_case "the kubelet down at the job's end (the epilog kills)" end_kubelet_down
one_case "the API server down at the job's end (drained, then resumed)" end_apiserver_down
wait
e2e_summary
