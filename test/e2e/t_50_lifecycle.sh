# shellcheck shell=bash
# Lifecycle in both directions, and restart recovery.

bridge_kill9() {
	local pid; pid=$(stack_pid "$BRIDGE_PIDFILE")
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	wait_for 10 bash -c "! kill -0 $pid 2>/dev/null"
}
bridge_restart() { "$E2E_DIR/../../scripts/stack/bridge-up.sh" >/dev/null; }
pod_events_has() {
	k -n "$1" get events --field-selector "involvedObject.name=$2" \
		-o jsonpath='{range .items[*]}{.reason}{"\n"}{end}' | grep -qx "$3"
}
# Jobs Slurm ever had under a name (sacct lags: also count squeue).
jobs_named() {
	{ squeue -h -n "$1" -o %i; sacct -n -X -P -S now-1hour --name "$1" -o JobID; } | sort -u | grep -c .
}

scenario "scancel deletes the pod with the Slurm reason"
ns=$(new_ns enabled)
pod_yaml "$ns" victim | k apply -f - >/dev/null
check "the pod is bound" wait_for 30 pod_has "$ns" victim "$JP_NODE"
jobid=$(pod_field "$ns" victim "$JP_JOBID")
scancel "$jobid"
check "scancel deletes the pod" wait_for 30 pod_gone "$ns" victim
check "an Event SlurmJobEnded explains it" wait_for 10 pod_events_has "$ns" victim SlurmJobEnded

scenario "no kubelet: the grace period is honoured; the pod stays Terminating until its node answers, as Kubernetes keeps it"
pod_yaml "$ns" graceful | sed 's/terminationGracePeriodSeconds: 0/terminationGracePeriodSeconds: 4/' |
	k apply -f - >/dev/null
check "the pod is bound" wait_for 30 pod_has "$ns" graceful "$JP_NODE"
gjob=$(pod_field "$ns" graceful "$JP_JOBID")
stack_stop kwok "$RUN_DIR/kwok.pid" kwok >/dev/null
k -n "$ns" delete pod graceful --wait=false >/dev/null
sleep 1
check_eq "within the grace period the job still runs" "$(job_field "$gjob" JobState)" RUNNING
# Cancelled: Slurm holds its node COMPLETING while the epilog waits for
# the pod, which no kubelet stops.
ended() { [[ $(job_field "$gjob" JobState) =~ CANCELLED|COMPLETING ]]; }
check "after the grace period the job is cancelled (its node held: the pod has not stopped)" wait_for 20 ended
check_eq "its comment as submitted: the node epilog looks itself" \
	"$(squeue -h -t all -j "$gjob" -o %k)" "slurm-bridge: pod $ns/graceful (install $(stack_install_name))"
sleep 6
# Never force-deleted while its node is there: a StatefulSet relies on it.
check "its node still there, the pod is not force-deleted (still Terminating)" \
	pod_has "$ns" graceful '{.metadata.deletionTimestamp}'
"$E2E_DIR/../../scripts/stack/cluster-up.sh" >/dev/null
check "once its node answers, the pod goes" wait_for 30 pod_gone "$ns" graceful

scenario "restart: a bound workload is adopted, nothing is resubmitted"
for i in 1 2; do pod_yaml "$ns" "keep-$i" | k apply -f - >/dev/null; done
check "two pods bound" wait_for 30 all_bound "$ns" keep-1 keep-2
j1=$(pod_field "$ns" keep-1 "$JP_JOBID"); j2=$(pod_field "$ns" keep-2 "$JP_JOBID")
bridge_kill9
bridge_restart
sleep 3
check_eq "keep-1 keeps its job" "$(pod_field "$ns" keep-1 "$JP_JOBID")" "$j1"
check_eq "its job still runs" "$(job_field "$j1" JobState)" RUNNING
check_eq "keep-2 keeps its job" "$(job_field "$j2" JobState)" RUNNING
check_eq "no second job for keep-1" "$(jobs_named "$ns/keep-1")" 1

scenario "restart after a submit whose bind never came, by a bridge from before installs were named"
bridge_kill9
pod_yaml "$ns" orphan-risk | k apply -f - >/dev/null
# What such a bridge, killed between submit and bind, leaves behind: a job
# for the pod, found only through its comment marker and admin_comment
# (which name no install, and no UID).  The upgraded bridge takes it over.
salloc --no-shell -Q -J "$ns/orphan-risk" -p slurm-bridge -n1 \
	--comment "slurm-bridge: pod $ns/orphan-risk" >/dev/null 2>&1
ajob=$(squeue -h -n "$ns/orphan-risk" -o %i | head -n1)
scontrol update jobid="$ajob" AdminComment="{\"pods\":[\"$ns/orphan-risk\"]}"
bridge_restart
check "the pod is bound" wait_for 30 pod_has "$ns" orphan-risk "$JP_NODE"
check_eq "to the job it already had" "$(pod_field "$ns" orphan-risk "$JP_JOBID")" "$ajob"
check_eq "exactly one job for the pod" "$(jobs_named "$ns/orphan-risk")" 1
check_match "whose admin_comment now names this install and the pod's UID" \
	"$(job_field "$ajob" AdminComment)" \
	"\"uids\":\\[\"$(pod_field "$ns" orphan-risk '{.metadata.uid}')\"\\],\"install\":\"$(stack_install_name)\""

scenario "restart: an orphaned job is cancelled, if it is this install's"
bridge_kill9
inst=$(stack_install_name)
salloc --no-shell -Q -J "$ns/ghost" -p slurm-bridge -n1 \
	--comment "slurm-bridge: pod $ns/ghost (install $inst)" >/dev/null 2>&1
gh=$(squeue -h -n "$ns/ghost" -o %i | head -n1)
scontrol update jobid="$gh" AdminComment="{\"pods\":[\"$ns/ghost\"],\"uids\":[\"gone\"],\"install\":\"$inst\"}"
# One made before installs were named, whose pod is gone too: it may be
# another install's, so no install cancels it.
salloc --no-shell -Q -J "$ns/old" -p slurm-bridge -n1 \
	--comment "slurm-bridge: pod $ns/old" >/dev/null 2>&1
old=$(squeue -h -n "$ns/old" -o %i | head -n1)
scontrol update jobid="$old" AdminComment="{\"pods\":[\"$ns/old\"]}"
bridge_restart
check "a bridge job with no pod is cancelled" wait_for 20 job_is "$gh" CANCELLED
sleep 2
check_eq "one made before installs were named is left alone" "$(job_field "$old" JobState)" RUNNING
scancel "$old"
k delete namespace "$ns" --wait=false >/dev/null

scenario "restart in the middle of binding a gang"
ns=$(new_ns enabled)
bridge_kill9
for i in 0 1 2; do
	pod_yaml "$ns" "mid-$i" 1 256Mi "  labels: {scheduling.x-k8s.io/pod-group: mid}
  annotations: {scheduler.slinky.slurm.net/min-member: \"3\"}" | k apply -f - >/dev/null
done
# What a bridge killed mid-gang-bind leaves: one allocated job for the gang,
# whose admin_comment lists the members, and only the first member bound
# (its Binding carried the job id and node).
salloc --no-shell -Q -J "$ns/mid" -p slurm-bridge -n3 \
	--comment "slurm-bridge: gang $ns/mid (3 pods) (install $(stack_install_name))" >/dev/null 2>&1
mjob=$(squeue -h -n "$ns/mid" -o %i | head -n1)
uids=$(for i in 0 1 2; do printf '"%s",' "$(pod_field "$ns" "mid-$i" '{.metadata.uid}')"; done)
scontrol update jobid="$mjob" \
	AdminComment="{\"pods\":[\"$ns/mid-0\",\"$ns/mid-1\",\"$ns/mid-2\"],\"uids\":[${uids%,}],\"install\":\"$(stack_install_name)\"}"
mnode=$(job_field "$mjob" NodeList)
k create -f - >/dev/null <<YAML
apiVersion: v1
kind: Binding
metadata:
  name: mid-0
  namespace: $ns
  annotations: {scheduler.slinky.slurm.net/slurm-jobid: "$mjob", slinky.slurm.net/slurm-node: $mnode}
target: {apiVersion: v1, kind: Node, name: $mnode}
YAML
bridge_restart
check "the rest of the gang is bound" wait_for 30 all_bound "$ns" mid-0 mid-1 mid-2
check_eq "mid-1 on the job's node" "$(pod_field "$ns" mid-1 "$JP_NODE")" "$mnode"
check_eq "still exactly one job for the gang" "$(jobs_named "$ns/mid")" 1
check_eq "and it is the same job" "$(pod_field "$ns" mid-2 "$JP_JOBID")" "$mjob"
k delete namespace "$ns" --wait=false >/dev/null

scenario "the time limit ends the job and deletes the pod"
ns=$(new_ns enabled)
pod_yaml "$ns" short 1 256Mi "  annotations: {slurmjob.slinky.slurm.net/timelimit: \"1\"}" | k apply -f - >/dev/null
check "the pod is bound" wait_for 30 pod_has "$ns" short "$JP_NODE"
tjob=$(pod_field "$ns" short "$JP_JOBID")
check_eq "its job has a one-minute limit" "$(job_field "$tjob" TimeLimit)" 00:01:00
# Its end brought forward, as an admin may, rather than waited out: the
# limit is Slurm's (TimeLimit stays one minute), and Slurm ends the job
# TIMEOUT at its next check of the limits (every 30 s).
scontrol update jobid="$tjob" EndTime=now >/dev/null
check "Slurm ends the job TIMEOUT" wait_for 90 job_is "$tjob" TIMEOUT
check "the pod is deleted" wait_for 30 pod_gone "$ns" short
k delete namespace "$ns" --wait=false >/dev/null

scenario "preemption deletes the preempted pods with the reason"
ns=$(new_ns enabled)
for i in $(seq 1 "$NODES"); do pod_yaml "$ns" "low-$i" 32 1Gi | k apply -f - >/dev/null; done
low_bound() { local i; for i in $(seq 1 "$NODES"); do pod_has "$ns" "low-$i" "$JP_NODE" || return 1; done; }
check "normal pods fill the cluster" wait_for 60 low_bound
pod_yaml "$ns" vip 32 1Gi "  annotations: {slurmjob.slinky.slurm.net/qos: urgent}" | k apply -f - >/dev/null
check "the urgent pod is bound" wait_for 60 pod_has "$ns" vip "$JP_NODE"
victims() {
	local i n=0
	for i in $(seq 1 "$NODES"); do pod_gone "$ns" "low-$i" && n=$((n + 1)); done
	[ "$n" -ge 1 ]
}
check "a preempted pod is deleted" wait_for 30 victims
preempted_event() {
	k -n "$ns" get events -o jsonpath='{range .items[*]}{.reason}{" "}{.message}{"\n"}{end}' |
		grep -q '^Preempted slurm-bridge: Slurm preempted job'
}
check "with a Preempted Event naming Slurm's preemption (as kube-scheduler's)" wait_for 10 preempted_event
k delete namespace "$ns" --wait=false >/dev/null
