# shellcheck shell=bash
# Gangs: all-or-nothing, one Slurm job per group, from each group source.

# gang_pod NS NAME GROUP MIN CPU [GPU]: a member with the group label and,
# when MIN is not "-", the min-member annotation.
gang_pod() {
	local ns=$1 name=$2 group=$3 min=$4 cpu=$5 gpu=${6:-0} meta
	meta="  labels: {scheduling.x-k8s.io/pod-group: $group}"
	[ "$min" != - ] && meta="$meta
  annotations: {scheduler.slinky.slurm.net/min-member: \"$min\"}"
	pod_yaml "$ns" "$name" "$cpu" 256Mi "$meta" | if [ "$gpu" -gt 0 ]; then
		sed "s/      requests: {cpu: \"$cpu\", memory: \"256Mi\"}/&\n      limits: {nvidia.com\/gpu: \"$gpu\"}/"
	else cat; fi | k apply -f - >/dev/null
}
scenario "gang from the pod-group label: nothing before the last member"
ns=$(new_ns enabled)
for i in 1 2 3; do gang_pod "$ns" "w$i" train 4 1 1; done
check_cond "3 of 4 members wait with a count" 20 "$ns" w1 'waiting for gang train: 3 of 4 pods present'
check_eq "no member is bound" "$(bound_count "$ns" w1 w2 w3)" 0
check_eq "no job id yet" "$(pod_field "$ns" w1 "$JP_JOBID")" ""
gang_pod "$ns" w4 train 4 1 1
check "the 4th member releases the whole gang" wait_for 30 all_bound "$ns" w1 w2 w3 w4
check "all members carry one job id" same_jobid "$ns" w1 w2 w3 w4
jobid=$(pod_field "$ns" w1 "$JP_JOBID")
check_eq "one Slurm job with 4 tasks" "$(job_field "$jobid" NumTasks)" 4
check_eq "job named after the group" "$(job_field "$jobid" JobName)" "$ns/train"
nodes=$(for p in w1 w2 w3 w4; do pod_field "$ns" $p "$JP_NODE"; echo; done | sort -u | wc -l)
check_eq "shared placement packs 4 one-CPU pods on one node" "$nodes" 1
gres=$(for p in w1 w2 w3 w4; do pod_field "$ns" $p '{.metadata.annotations.scheduler\.slinky\.slurm\.net/slurm-gres}'; echo; done | sort -u)
check_eq "each member has its own GPU" "$(echo "$gres" | grep -c 'gpu:1(IDX:[0-9])')" 4
# A member replaced by its controller takes the old member's slot.
k -n "$ns" delete pod w2 --wait=true --timeout=30s >/dev/null
check_eq "one member gone, the gang's job keeps running" "$(job_field "$jobid" JobState)" RUNNING
gang_pod "$ns" w2 train 4 1 1
check "the replacement is bound" wait_for 30 pod_has "$ns" w2 "$JP_NODE"
check_eq "into the same Slurm job" "$(pod_field "$ns" w2 "$JP_JOBID")" "$jobid"
# A pod-group gang grows, as Coscheduling lets it: a fifth member, with
# the gang's job full, is placed alone and marked so.
gang_pod "$ns" w5 train 4 1 1
check "a fifth member is bound alone" wait_for 30 pod_has "$ns" w5 "$JP_NODE"
j5=$(pod_field "$ns" w5 "$JP_JOBID")
check "as a Slurm job of its own" test -n "$j5" -a "$j5" != "$jobid"
check_eq "of one task" "$(job_field "$j5" NumTasks)" 1
check_eq "marked beyond the gang" "$(pod_field "$ns" w5 '{.metadata.annotations.scheduler\.slinky\.slurm\.net/beyond-gang}')" train
k delete namespace "$ns" --wait=false >/dev/null
check "deleting the gang cancels its job" wait_for 60 job_is "$jobid" CANCELLED

scenario "gang larger than the free capacity"
ns=$(new_ns enabled)
pod_yaml "$ns" big-1 32 1Gi | k apply -f - >/dev/null
pod_yaml "$ns" big-2 32 1Gi | k apply -f - >/dev/null
check "two whole-node singles run" wait_for 30 all_bound "$ns" big-1 big-2
want=$((NODES - 1))
members=()
for i in $(seq 1 "$want"); do gang_pod "$ns" "g$i" wide "$want" 32; members+=("g$i"); done
# Resources, or Priority while a job of an earlier scenario still waits
# ahead of it in the partition: either way, for capacity.  Then ")" or,
# once the backfill planned its start, "; expected start ...".
check_cond "the gang waits in Slurm for capacity" 30 "$ns" g1 \
	'waiting for Slurm job [0-9]* (Reason=\(Resources\|Priority\)[;)]'
gjob=$(pod_field "$ns" g1 "$JP_JOBID")
check_eq "its job is PENDING" "$(job_field "$gjob" JobState)" PENDING
sleep 2
check_eq "no member of the pending gang is bound" "$(bound_count "$ns" "${members[@]}")" 0
k -n "$ns" delete pod big-1 --wait=false >/dev/null
check "all members bind once a node frees" wait_for 60 all_bound "$ns" "${members[@]}"
check_eq "the gang's job runs" "$(job_field "$gjob" JobState)" RUNNING
nodes=$(for p in "${members[@]}"; do pod_field "$ns" "$p" "$JP_NODE"; echo; done | sort -u | wc -l)
check_eq "whole-node members land on distinct nodes" "$nodes" "$want"
k delete namespace "$ns" --wait=false >/dev/null
wait_for 60 job_is "$gjob" CANCELLED

scenario "a pending gang that loses a member gives its job up"
ns=$(new_ns enabled)
for i in $(seq 1 "$NODES"); do pod_yaml "$ns" "fill-$i" 32 1Gi | k apply -f - >/dev/null; done
for i in 1 2; do gang_pod "$ns" "s$i" shrink 2 32; done
check_cond "the gang is pending" 30 "$ns" s1 'waiting for Slurm job'
sjob=$(pod_field "$ns" s1 "$JP_JOBID")
k -n "$ns" delete pod s2 --wait=false >/dev/null
check "its job is cancelled" wait_for 30 job_is "$sjob" CANCELLED
check_cond "the survivor waits for the gang again" 30 "$ns" s1 'waiting for gang shrink: 1 of 2 pods present'
check_eq "the survivor's stale job id is removed" "$(pod_field "$ns" s1 "$JP_JOBID")" ""
k delete namespace "$ns" --wait=false >/dev/null

scenario "gang from a PodGroup"
ns=$(new_ns enabled)
for i in 1 2 3; do gang_pod "$ns" "p$i" pg1 - 1; done
check_cond "members wait for the PodGroup" 20 "$ns" p1 'waiting for PodGroup'
podgroup_yaml "$ns" pg1 3 | k apply -f - >/dev/null
check "the PodGroup releases the gang" wait_for 30 all_bound "$ns" p1 p2 p3
check "one job for the PodGroup" same_jobid "$ns" p1 p2 p3
check_eq "with 3 tasks" "$(job_field "$(pod_field "$ns" p1 "$JP_JOBID")" NumTasks)" 3
k delete namespace "$ns" --wait=false >/dev/null

scenario "gang from an Indexed Job (real Job controller)"
ns=$(new_ns enabled)
job_yaml "$ns" sim "$E2E_POD_BRIDGE" "completionMode: Indexed, completions: 3, parallelism: 3" |
	k apply -f - >/dev/null
check_one_job "$ns" batch.kubernetes.io/job-name=sim 3 Job sim
k delete namespace "$ns" --wait=false >/dev/null
