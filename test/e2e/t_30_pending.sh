# shellcheck shell=bash
# A pod that does not fit waits in Slurm with its reason, and is bound when
# capacity frees; a pod Slurm can never run is refused with Slurm's message.
scenario "pending until capacity frees"
ns=$(new_ns enabled)
for i in $(seq 1 "$NODES"); do
	pod_yaml "$ns" "full-$i" 32 1Gi | k apply -f - >/dev/null
done
full_bound() {
	local i
	for i in $(seq 1 "$NODES"); do pod_has "$ns" "full-$i" "$JP_NODE" || return 1; done
}
check "$NODES whole-node pods fill the cluster" wait_for 60 full_bound
pod_yaml "$ns" waiter 32 1Gi | k apply -f - >/dev/null
waiting_msg() {
	pod_field "$ns" waiter '{.status.conditions[?(@.type=="PodScheduled")].message}' |
		grep -q 'waiting for Slurm job [0-9]* (Reason=\(Resources\|Priority\))'
}
check "the extra pod waits with Slurm's pending reason" wait_for 30 waiting_msg
jobid=$(pod_field "$ns" waiter "$JP_JOBID")
check_match "the waiting pod already carries its job id" "$jobid" '^[0-9]+$'
check_eq "the waiting pod is not bound" "$(pod_field "$ns" waiter "$JP_NODE")" ""
check_eq "its job is PENDING" "$(job_field "$jobid" JobState)" PENDING
freed=$(pod_field "$ns" full-1 "$JP_NODE")
k -n "$ns" delete pod full-1 --wait=false >/dev/null
check "the waiting pod is bound once a node frees" wait_for 60 pod_has "$ns" waiter "$JP_NODE"
check_eq "it lands on the freed node" "$(pod_field "$ns" waiter "$JP_NODE")" "$freed"
check_eq "its job is RUNNING" "$(job_field "$jobid" JobState)" RUNNING

scenario "Slurm refuses an impossible pod"
pod_yaml "$ns" huge 64 1Gi | k apply -f - >/dev/null
refused() {
	pod_field "$ns" huge '{.status.conditions[?(@.type=="PodScheduled")].message}' |
		grep -q 'Slurm refused the job'
}
check "the condition carries Slurm's refusal" wait_for 30 refused
check_eq "no job id label" "$(pod_field "$ns" huge "$JP_JOBID")" ""
k delete namespace "$ns" --wait=false >/dev/null
gone_jobs() { [ "$(squeue -h -n "$ns/full-2,$ns/waiter" -o %i | wc -l)" -eq 0 ]; }
check "deleting the namespace cancels every job" wait_for 60 gone_jobs
