# shellcheck shell=bash
# When Slurm takes an allocation back, the pod yields first, as Kubernetes
# expresses it (kube-scheduler's own preemption: DisruptionTarget, then a
# graceful delete): Slurm's preemption with GraceTime (QOS urgent preempts
# normal, PreemptMode CANCEL and REQUEUE), scontrol suspend, and a requeue,
# which placeholders refuse.

TOL='tolerations: [{key: slinky.slurm.net/managed-node, operator: Exists}]'
# big_pod CPU GRACE: a pod spec (flow map body) of CPU CPUs.
big_pod() {
	echo "schedulerName: slurm-bridge, $TOL, terminationGracePeriodSeconds: $2, containers: [{name: main, image: busybox, command: [sleep, \"3600\"], resources: {requests: {cpu: \"$1\", memory: 256Mi}}}]"
}
qos_normal() { sacctmgr -i modify qos normal set "$@" >/dev/null; }
# Leave Slurm's QOS as the stack makes it, whatever happens here.
qos_reset() { qos_normal GraceTime=0 PreemptMode=cluster; }
trap qos_reset EXIT
qos_reset
nodes=$(sinfo -h -p slurm-bridge -o %D | head -n1)

cond() { pod_field "$1" "$2" "{.status.conditions[?(@.type==\"DisruptionTarget\")].$3}"; }
# victim NS SELECTOR: the first selected pod with DisruptionTarget=True;
# vcond: its condition's reason and message, read at once.
victim="" vcond=""
find_victim() {
	local p
	for p in $(pods_by "$1" "$2"); do
		if [ "$(cond "$1" "$p" status)" = True ]; then
			victim=$p
			vcond=$(pod_field "$1" "$p" '{.status.conditions[?(@.type=="DisruptionTarget")].reason}|{.status.conditions[?(@.type=="DisruptionTarget")].message}|{.metadata.annotations.scheduler\.slinky\.slurm\.net/slurm-jobid}')
			return 0
		fi
	done
	return 1
}
sacct_state() { sacct -n -X -P -j "$1" -o State 2>/dev/null | head -n1; }
sacct_is() { [[ $(sacct_state "$1") == $2 ]]; }

scenario "Slurm preempts with GraceTime 30: DisruptionTarget at once, the grace that is left, sacct PREEMPTED"
qos_normal GraceTime=30
ns=$(new_ns enabled)
# One 32-CPU pod per node, QOS normal; the Job ignores disruptions.  Its
# pods take 10 s to stop once deleted (kwok's stage, as a real container).
job_yaml "$ns" low "$(big_pod 32 60)" \
	"parallelism: $nodes, completions: $nodes, podFailurePolicy: {rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]}" \
	"{labels: {e2e_keep_running: \"true\"}, annotations: {pod-terminate.stage.kwok.x-k8s.io/delay: 10s}}" |
	k apply -f - >/dev/null
sel=batch.kubernetes.io/job-name=low
check "the Job's $nodes pods fill every node" wait_for 60 n_with "$ns" "$sel" "$JP_NODE" "$nodes"
pod_yaml "$ns" urgent 32 256Mi "  annotations: {slurmjob.slinky.slurm.net/qos: urgent}" | k apply -f - >/dev/null
t0=$SECONDS
check "one pod of QOS normal gets DisruptionTarget=True" wait_for 20 find_victim "$ns" "$sel"
took=$((SECONDS - t0))
check "long before Slurm's GraceTime ends (${took}s of 30)" test "$took" -lt 20
vjob=${vcond##*|}
check_eq "reason PreemptionByScheduler" "${vcond%%|*}" PreemptionByScheduler
check_match "its message names Slurm and the job" "$vcond" "Slurm preempted job $vjob; its GraceTime ends in [0-9]+s"
echo "    DisruptionTarget: $vcond"
# The message tells the grace the delete asked.
g=$(sed -n 's/.*GraceTime ends in \([0-9]*\)s.*/\1/p' <<<"$vcond")
check "deleted with what is left of Slurm's grace (${g}s: within 30, below the pod's own 60)" \
	test "${g:-99}" -le 30 -a "${g:-0}" -ge 15
preempted_ev() { grep -q . <(k -n "$ns" get events --field-selector "involvedObject.name=$victim,reason=Preempted" -o name); }
check "a Preempted Event on the pod" wait_for 10 preempted_ev
check_eq "Slurm keeps the job for its GraceTime: still RUNNING" "$(job_field "$vjob" JobState)" RUNNING
check "the urgent pod is bound once the grace is over" wait_for 60 pod_has "$ns" urgent "$JP_NODE"
check "slurm_bridge_disruptions_total counts it" \
	test "$(stack_metric 'slurm_bridge_disruptions_total{cause="preempted"}')" -ge 1
check "sacct: the victim's job PREEMPTED (never CANCELLED by the bridge)" wait_for 30 sacct_is "$vjob" PREEMPTED
echo "    $(sacct -n -X -j "$vjob" -o JobID,JobName%30,QOS,State,Elapsed 2>/dev/null | head -n1)"
job_failed() { k -n "$ns" get job low -o jsonpath='{.status.failed}'; }
replaced() { [ "$(pods_by "$ns" "$sel" | wc -w)" -ge "$nodes" ] && ! pods_by "$ns" "$sel" | grep -qw "$victim"; }
check "the Job makes a replacement pod" wait_for 30 replaced
check_eq "podFailurePolicy Ignore: the preemption is not a failure" "$(job_failed)" ""
check "and the Job is not failed" test -z "$(k -n "$ns" get job low -o jsonpath='{.status.conditions[?(@.type=="Failed")].status}')"
k -n "$ns" get events --field-selector "involvedObject.name=$victim" \
	-o custom-columns=REASON:.reason,MESSAGE:.message --no-headers 2>/dev/null | sed 's/^/    /'
k delete namespace "$ns" --wait=false >/dev/null
qos_reset

scenario "PreemptMode REQUEUE: a placeholder cannot be requeued, so Slurm ends it, and the pod yields"
qos_normal PreemptMode=requeue
ns=$(new_ns enabled)
job_yaml "$ns" low "$(big_pod 32 30)" "parallelism: $nodes, completions: $nodes" \
	"{labels: {e2e_keep_running: \"true\"}, annotations: {pod-terminate.stage.kwok.x-k8s.io/delay: 5s}}" |
	k apply -f - >/dev/null
sel=batch.kubernetes.io/job-name=low
check "the $nodes pods fill every node" wait_for 60 n_with "$ns" "$sel" "$JP_NODE" "$nodes"
# The Job's pods' jobs are named NS/low-XXXXX.
jobs_before=$(squeue -h -o '%i %j' 2>/dev/null | awk -v p="$ns/low-" 'index($2, p) == 1 { print $1 }' | sort -n | paste -sd,)
pod_yaml "$ns" urgent 32 256Mi "  annotations: {slurmjob.slinky.slurm.net/qos: urgent}" | k apply -f - >/dev/null
check "a victim gets DisruptionTarget" wait_for 30 find_victim "$ns" "$sel"
vjob=${vcond##*|}
check "the urgent pod is bound" wait_for 60 pod_has "$ns" urgent "$JP_NODE"
check "sacct: PREEMPTED" wait_for 30 sacct_is "$vjob" PREEMPTED
check "never PENDING again: the job did not come back" wait_for 30 job_is "$vjob" PREEMPTED
echo "    jobs before: $jobs_before; victim $vjob: $(sacct_state "$vjob")"
k delete namespace "$ns" --wait=false >/dev/null
qos_reset

scenario "scontrol suspend: a pod cannot be suspended, so it yields and the job ends; squeue and the pod agree"
ns=$(new_ns enabled)
pod_yaml "$ns" sus 4 256Mi | k apply -f - >/dev/null
check "bound" wait_for 60 pod_has "$ns" sus "$JP_NODE"
sjob=$(pod_field "$ns" sus "$JP_JOBID_ANN")
scontrol suspend "$sjob"
t_yield() { [ "$(cond "$ns" sus status)" = True ] || pod_gone "$ns" sus; }
check "the pod gets DisruptionTarget, or is gone already" wait_for 20 t_yield
check "the pod is deleted" wait_for 30 pod_gone "$ns" sus
no_job() { [ -z "$(squeue -h -j "$sjob" -o %T 2>/dev/null | grep -v -e COMPLETING -e CANCELLED)" ]; }
check "its job is gone from squeue (no resources held for a pod that is not there)" wait_for 30 no_job
check "sacct: CANCELLED" wait_for 30 sacct_is "$sjob" "CANCELLED*"
echo "    $(sacct -n -X -j "$sjob" -o JobID,JobName%30,State 2>/dev/null | head -n1)"
k delete namespace "$ns" --wait=false >/dev/null

scenario "scontrol requeue: placeholders are never requeued (a heterogeneous gang's batch job too)"
ns=$(new_ns enabled)
for p in lead:4 w:1; do
	pod_yaml "$ns" "het-${p%%:*}" "${p##*:}" 256Mi \
		"  labels: {scheduling.x-k8s.io/pod-group: het}
  annotations: {scheduler.slinky.slurm.net/min-member: \"2\"}" | k apply -f - >/dev/null
done
check "the gang of two shapes is bound" wait_for 60 all_bound "$ns" het-lead het-w
hjob=$(pod_field "$ns" het-lead "$JP_JOBID_ANN")
check_eq "one heterogeneous job" "$(job_field "$hjob" HetJobId)" "$hjob"
check_eq "that Slurm may not requeue" "$(job_field "$hjob" Requeue)" 0
out=$(scontrol requeue "$hjob" 2>&1 || true)
check_match "scontrol requeue is refused" "$out" "disabled|not permitted|Requeue"
echo "    scontrol requeue $hjob: $out"
sleep 2
check_eq "the job still runs" "$(job_field "$hjob" JobState)" RUNNING
check "its pods are still bound" all_bound "$ns" het-lead het-w
k delete namespace "$ns" --wait=false >/dev/null
