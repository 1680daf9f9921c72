# shellcheck shell=bash
# A Kubernetes Workload's annotations reach the Slurm job of its PodGroup's
# pods (common/workload.c workload_layers: the pod, its PodGroup, the
# Workload, its controlling Job, most specific winning), for a Workload
# made by hand and for the one the Job controller makes; a change while the
# job is pending reaches the pending job; bad ones are refused by the
# webhook with a pod's message.

pg_api=$(k api-resources --api-group=scheduling.k8s.io --no-headers 2>/dev/null |
	awk '$1 == "podgroups" { print $(NF-2) }')
if [ -z "$pg_api" ]; then
	echo "  skip this cluster does not serve scheduling.k8s.io Workloads"
	return 0
fi
grp=${pg_api%%/*}

# sacct_line JOB: what sacct tells of the four the Workload set.
sacct_line() { sacct -n -X -P -j "$1" -o JobName,Timelimit,Account,QOS 2>/dev/null | head -n1; }
sacct_is() { [ "$(sacct_line "$1")" = "$2" ]; }

scenario "a Workload's timelimit, job-name, account and qos reach the Slurm job (sacct)"
ns=$(new_ns enabled)
k apply -f - >/dev/null <<YAML
apiVersion: $pg_api
kind: Workload
metadata:
  name: training-workload
  namespace: $ns
  annotations:
    slurmjob.slinky.slurm.net/job-name: training-job
    slurmjob.slinky.slurm.net/timelimit: "5"
    slurmjob.slinky.slurm.net/account: research
    slurmjob.slinky.slurm.net/qos: urgent
spec:
  controllerRef: {apiGroup: batch, kind: Job, name: training-job}
  podGroupTemplates:
  - name: workers
    schedulingPolicy: {gang: {minCount: 2}}
---
apiVersion: $pg_api
kind: PodGroup
metadata: {name: training-job-workers, namespace: $ns}
spec:
  workloadRef: {workloadName: training-workload, templateName: workers}
  schedulingPolicy: {gang: {minCount: 2}}
YAML
job_yaml "$ns" training-job "$E2E_POD_BRIDGE, schedulingGroup: {podGroupName: training-job-workers}" \
	"parallelism: 2, completions: 2" | k apply -f - >/dev/null
sel=batch.kubernetes.io/job-name=training-job
check_one_job "$ns" "$sel" 2 "Workload's gang"
job=$(pod_field "$ns" "$(first_pod "$ns" "$sel")" "$JP_JOBID")
check_eq "scontrol: the name from the Workload" "$(job_field "$job" JobName)" training-job
check_eq "scontrol: its time limit" "$(job_field "$job" TimeLimit)" 00:05:00
check "sacct: JobName, Timelimit, Account and QOS from the Workload" \
	wait_for 30 sacct_is "$job" "training-job|00:05:00|research|urgent"
echo "    sacct -X -j $job -o JobID,JobName,Timelimit,Account,QOS,State"
sacct -X -j "$job" -o JobID,JobName,Timelimit,Account,QOS,State 2>/dev/null | sed 's/^/      /'

k -n "$ns" annotate --overwrite workload."$grp" training-workload slurmjob.slinky.slurm.net/timelimit=abc >/dev/null 2>/tmp/e2e-wl-$$ || true
out=$(cat /tmp/e2e-wl-$$); rm -f /tmp/e2e-wl-$$
check_match "a bad annotation on a Workload: refused, naming the key and the form" "$out" \
	"Workload $ns/training-workload: its pods inherit its annotations: annotation slurmjob.slinky.slurm.net/timelimit: \"abc\" is not a whole number of minutes"
echo "    $out"
check_eq "the Workload keeps its time limit" \
	"$(k -n "$ns" get workload."$grp" training-workload -o 'jsonpath={.metadata.annotations.slurmjob\.slinky\.slurm\.net/timelimit}')" 5
out=$(k -n "$ns" annotate podgroup."$grp" training-job-workers slurmjob.slinky.slurm.net/timelimit=0 2>&1 || true)
check_match "and on a PodGroup: refused too" "$out" "PodGroup $ns/training-job-workers: its pods inherit its annotations: annotation slurmjob.slinky.slurm.net/timelimit"
k delete namespace "$ns" --wait=false >/dev/null

scenario "the Job controller's Workload: its annotations, changed while the job is pending, reach the pending job"
ns=$(new_ns enabled)
# Slurm's nodes reserved for another user: the gang's job stays pending.
resv=e2e-hold-$$
scontrol create reservation reservationname="$resv" users=alice nodes=ALL \
	starttime=now duration=30 flags=ignore_jobs >/dev/null
job_yaml "$ns" trainer "$E2E_POD_BRIDGE" \
	"parallelism: 2, completions: 2, scheduling: {schedulingPolicy: {gang: {minCount: 2}}}" "" \
	"annotations: {slurmjob.slinky.slurm.net/account: research}" | k apply -f - >/dev/null
sel=batch.kubernetes.io/job-name=trainer
wl=""
job_wl() { wl=$(k -n "$ns" get workloads."$grp" -o jsonpath='{.items[0].metadata.name}' 2>/dev/null); [ -n "$wl" ]; }
check "the Job controller made a Workload" wait_for 30 job_wl
pending_job=""
job_pending() {
	local p
	p=$(first_pod "$ns" "$sel")
	[ -n "$p" ] || return 1
	pending_job=$(pod_jobid "$ns" "$p")
	[ -n "$pending_job" ] && job_is "$pending_job" PENDING
}
check "its gang's job waits in Slurm (nodes reserved)" wait_for 60 job_pending
check_eq "pending, with the Job's account" "$(job_field "$pending_job" Account)" research
check_eq "and no time limit of its own yet" "$(job_field "$pending_job" TimeLimit)" UNLIMITED
k -n "$ns" annotate workload."$grp" "$wl" slurmjob.slinky.slurm.net/timelimit=7 \
	slurmjob.slinky.slurm.net/job-name=trainer-from-workload slurmjob.slinky.slurm.net/qos=urgent >/dev/null
tl_is() { [ "$(job_field "$pending_job" TimeLimit)" = 00:07:00 ]; }
check "the Workload's change reaches the pending job: TimeLimit 7 minutes" wait_for 30 tl_is
check_eq "its name" "$(job_field "$pending_job" JobName)" trainer-from-workload
check_eq "its QOS" "$(job_field "$pending_job" QOS)" urgent
check_eq "still the same job, still pending" "$(job_field "$pending_job" JobState)" PENDING
scontrol delete reservation="$resv" >/dev/null
check "once the nodes are free, the gang is bound" wait_for 90 n_with "$ns" "$sel" "$JP_NODE" 2
check "sacct: JobName, Timelimit, Account and QOS" \
	wait_for 30 sacct_is "$pending_job" "trainer-from-workload|00:07:00|research|urgent"
echo "    $(sacct_line "$pending_job")"
k delete namespace "$ns" --wait=false >/dev/null
scontrol delete reservation="$resv" >/dev/null 2>&1 || true
