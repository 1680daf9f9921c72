# shellcheck shell=bash
# A pod that does not fit waits in Slurm with its reason, and is bound when
# capacity frees; a pod Slurm can never run is refused with Slurm's message.
# full_bound NS: pods full-1 to full-$NODES of NS are all bound.
full_bound() {
	local i
	for i in $(seq 1 "$NODES"); do pod_has "$1" "full-$i" "$JP_NODE" || return 1; done
}
# fill NS: one whole-node pod per node, full-1 to full-$NODES, each bound.
fill() {
	local i
	for i in $(seq 1 "$NODES"); do
		pod_yaml "$1" "full-$i" 32 1Gi | k apply -f - >/dev/null
	done
	check "$NODES whole-node pods fill the cluster" wait_for 60 full_bound "$1"
}

scenario "pending until capacity frees"
ns=$(new_ns enabled)
fill "$ns"
pod_yaml "$ns" waiter 32 1Gi | k apply -f - >/dev/null
# The reason, then ")" or, once the backfill planned its start, "; expected
# start ..." (t_53 checks that part).
check_cond "the extra pod waits with Slurm's pending reason" 30 "$ns" waiter \
	'waiting for Slurm job [0-9]* (Reason=\(Resources\|Priority\)[;)]'
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

# A tenant deleting many pending pods: their jobs are cancelled in bulk on
# the end thread, every one ends CANCELLED and none is left behind, and
# another tenant's pod is served.  (How long a deep queue's deletion holds
# others up is a figure of make bench's backlog scenario, not asserted.)
scenario "deleting many pending pods cancels each job; another tenant is served"
many=${E2E_MANY_PENDING:-150}
full=$(new_ns enabled)
fill "$full"
deep=$(new_ns enabled)
t0=$(date +%s)
for i in $(seq 1 "$many"); do pod_yaml "$deep" "p-$i" 1 64Mi; echo ---; done | k apply -f - >/dev/null
deep_pending() { [ "$(squeue -h -t PD -o %j | grep -c "^$deep/")" -eq "$many" ]; }
check "$many pods wait as $many pending jobs" wait_for 120 deep_pending
k delete namespace "$deep" --wait=false >/dev/null
other=$(new_ns enabled)
pod_yaml "$other" other 1 64Mi | k apply -f - >/dev/null
check "another tenant's pod gets its job meanwhile" wait_for 30 pod_has "$other" other "$JP_JOBID"
deep_gone() { [ "$(squeue -h -o %j | grep -c "^$deep/")" -eq 0 ]; }
check "no job of the deleted namespace is left in Slurm" wait_for 120 deep_gone
# slurmdbd lags slurmctld by a moment.
deep_cancelled() {
	[ "$(sacct -n -X -P -S "$(date -d "@$t0" +%FT%T)" -o JobName,State 2>/dev/null |
		grep "^$deep/" | grep -c '|CANCELLED')" -eq "$many" ]
}
check "sacct shows each of the $many jobs CANCELLED" wait_for 60 deep_cancelled
k -n "$full" delete pod full-1 --wait=false >/dev/null
check "the other tenant's pod is bound once a node frees" wait_for 60 pod_has "$other" other "$JP_NODE"
k delete namespace "$full" "$other" --wait=false >/dev/null
