# shellcheck shell=bash
# Kubernetes' own gang API (scheduling.k8s.io Workload and PodGroup, the
# GenericWorkload gate; v1beta1 in 1.37): a PodGroup with a gang policy is
# one Slurm job, whether made by hand or by the Job controller for a Job
# that asks for a gang; the bridge writes PodGroupInitiallyScheduled as
# kube-scheduler does; bad PodGroups are refused naming the field.

pg_api=$(k api-resources --api-group=scheduling.k8s.io --no-headers 2>/dev/null |
	awk '$1 == "podgroups" { print $(NF-2) }')
if [ -z "$pg_api" ]; then
	echo "  skip this cluster does not serve scheduling.k8s.io PodGroups (Kubernetes $(k version -o json 2>/dev/null | sed -n 's/.*"gitVersion": "\(v1\.[0-9]*\)[^"]*".*/\1/p' | tail -n1))"
	return 0
fi

# sched_pg_yaml NS NAME POLICY [SPEC]: a PodGroup; POLICY is a flow map
# ("gang: {minCount: 3}" or "basic: {}"), SPEC more spec entries.
sched_pg_yaml() {
	cat <<YAML
apiVersion: $pg_api
kind: PodGroup
metadata: {name: $2, namespace: $1}
spec: {schedulingPolicy: {$3}${4:+, $4}}
YAML
}
# in_pg NS POD PODGROUP [CPU]: a pod of the PodGroup.
in_pg() {
	pod_yaml "$1" "$2" "${4:-1}" 256Mi | sed "s/^spec:/spec:\n  schedulingGroup: {podGroupName: $3}/"
}
pg_cond() {
	k -n "$1" get podgroup."${pg_api%%/*}" "$2" -o \
		"jsonpath={.status.conditions[?(@.type==\"PodGroupInitiallyScheduled\")].$3}" 2>/dev/null
}
pg_cond_is() { [ "$(pg_cond "$1" "$2" status)/$(pg_cond "$1" "$2" reason)" = "$3" ]; }

scenario "a PodGroup (scheduling.k8s.io) with a gang policy is one Slurm job"
ns=$(new_ns enabled)
sched_pg_yaml "$ns" ring "gang: {minCount: 3}" | k apply -f - >/dev/null
for i in 0 1; do in_pg "$ns" "ring-$i" ring | k apply -f - >/dev/null; done
check "2 of 3: the pods wait for the gang" \
	wait_for 30 cond_has "$ns" ring-0 "waiting for gang ring: 2 of 3 pods present"
check "the PodGroup says Unschedulable, as kube-scheduler would" \
	wait_for 30 pg_cond_is "$ns" ring False/Unschedulable
check_match "with the gang's message" "$(pg_cond "$ns" ring message)" "2 of 3 pods present"
in_pg "$ns" ring-2 ring | k apply -f - >/dev/null
check "all 3 are bound" wait_for 60 all_bound "$ns" ring-0 ring-1 ring-2
check "they share one Slurm job" same_jobid "$ns" ring-0 ring-1 ring-2
job=$(pod_field "$ns" ring-0 "$JP_JOBID")
check_eq "of 3 tasks" "$(job_field "$job" NumTasks)" 3
check_eq "named after the PodGroup" "$(job_field "$job" JobName)" "$ns/ring"
check "PodGroupInitiallyScheduled is True (reason Scheduled)" \
	wait_for 30 pg_cond_is "$ns" ring True/Scheduled
check_match "its message names the Slurm job" "$(pg_cond "$ns" ring message)" "Slurm job $job "
k -n "$ns" get podgroup."${pg_api%%/*}" ring -o yaml | sed -n '/^status:/,$p' | sed 's/^/    /'
k delete namespace "$ns" --wait=false >/dev/null

scenario "pods that come before their PodGroup wait for it; a basic policy is no gang"
ns=$(new_ns enabled)
for i in 0 1; do in_pg "$ns" "late-$i" late | k apply -f - >/dev/null; done
check "they wait for the PodGroup, naming the field" \
	wait_for 30 cond_has "$ns" late-0 "waiting for PodGroup $ns/late (spec.schedulingGroup.podGroupName) to exist"
sched_pg_yaml "$ns" late "gang: {minCount: 2}" | k apply -f - >/dev/null
check "once it exists, both are bound" wait_for 60 all_bound "$ns" late-0 late-1
check "in one Slurm job" same_jobid "$ns" late-0 late-1
sched_pg_yaml "$ns" each "basic: {}" | k apply -f - >/dev/null
for i in 0 1; do in_pg "$ns" "each-$i" each | k apply -f - >/dev/null; done
check "basic: both are bound" wait_for 60 all_bound "$ns" each-0 each-1
check "each in a Slurm job of its own" \
	test "$(pod_field "$ns" each-0 "$JP_JOBID")" != "$(pod_field "$ns" each-1 "$JP_JOBID")"
k delete namespace "$ns" --wait=false >/dev/null

scenario "a Job that asks for a gang: the Job controller's Workload and PodGroup are one Slurm job"
ns=$(new_ns enabled)
job_yaml "$ns" trainer "$E2E_POD_BRIDGE" \
	"parallelism: 3, completions: 3, scheduling: {schedulingPolicy: {gang: {minCount: 3}}}" |
	k apply -f - >/dev/null
jsel=batch.kubernetes.io/job-name=trainer
check "the Job controller made a Workload" wait_for 30 \
	sh -c "kubectl --kubeconfig='$KUBECONFIG' -n '$ns' get workloads.${pg_api%%/*} -o name | grep -q ."
tpg=""
job_pg() { tpg=$(k -n "$ns" get pods -l "$jsel" -o jsonpath='{.items[0].spec.schedulingGroup.podGroupName}' 2>/dev/null); [ -n "$tpg" ]; }
check "its pods name the PodGroup it made (spec.schedulingGroup)" wait_for 30 job_pg
check_one_job "$ns" "$jsel" 3 "Job's PodGroup" "$tpg"
check "the PodGroup says Scheduled" wait_for 30 pg_cond_is "$ns" "$tpg" True/Scheduled
k delete namespace "$ns" --wait=false >/dev/null

scenario "disruptionMode all: one member deleted ends the gang; single: the others run on"
ns=$(new_ns enabled)
sched_pg_yaml "$ns" dall "gang: {minCount: 2}" "disruptionMode: {all: {}}" | k apply -f - >/dev/null
sched_pg_yaml "$ns" dsin "gang: {minCount: 2}" | k apply -f - >/dev/null
for i in 0 1; do
	in_pg "$ns" "dall-$i" dall | k apply -f - >/dev/null
	in_pg "$ns" "dsin-$i" dsin | k apply -f - >/dev/null
done
check "both gangs are bound" wait_for 60 all_bound "$ns" dall-0 dall-1 dsin-0 dsin-1
jall=$(pod_field "$ns" dall-0 "$JP_JOBID")
jsin=$(pod_field "$ns" dsin-0 "$JP_JOBID")
k -n "$ns" delete pod dall-0 dsin-0 --wait=false >/dev/null
deleting() { [ -n "$(pod_field "$1" "$2" '{.metadata.deletionTimestamp}')" ] || pod_gone "$1" "$2"; }
check "all: deleting dall-0 deletes dall-1 too" wait_for 30 deleting "$ns" dall-1
job_over() { [[ $(job_field "$1" JobState) =~ CANCELLED|COMPLETING|^$ ]]; }
check "and its Slurm job ends" wait_for 30 job_over "$jall"
ev=$(k -n "$ns" get events --field-selector involvedObject.name=dall-1 -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | grep -m1 disruptionMode)
echo "    dall-1: $ev"
check_match "saying why" "$ev" "PodGroup dall has disruptionMode all and its member dall-0 was deleted"
check "single: dsin-0 goes" wait_for 30 pod_gone "$ns" dsin-0
check_eq "and dsin-1 runs on" "$(pod_field "$ns" dsin-1 '{.metadata.deletionTimestamp}')/$(pod_field "$ns" dsin-1 "$JP_NODE")" "/$(pod_field "$ns" dsin-1 "$JP_NODE")"
check_eq "in its job, still running" "$(job_field "$jsin" JobState)" RUNNING
k delete namespace "$ns" --wait=false >/dev/null

scenario "minCount raised while the gang is pending: the job is given up, and the gang placed anew"
ns=$(new_ns enabled)
for n in 1 2 3 4; do
	pod_yaml "$ns" "fill$n" 32 256Mi | sed "s/^spec:/spec:\n  nodeSelector: {kubernetes.io\/hostname: n$n}/" |
		k apply -f - >/dev/null
done
check "four whole-node pods fill the cluster" wait_for 60 all_bound "$ns" fill1 fill2 fill3 fill4
sched_pg_yaml "$ns" grow "gang: {minCount: 2}" | k apply -f - >/dev/null
for i in 0 1; do in_pg "$ns" "grow-$i" grow 32 | k apply -f - >/dev/null; done
check_cond "a gang of two waits in Slurm" 30 "$ns" grow-0 "waiting for Slurm job"
j2=$(pod_field "$ns" grow-0 "$JP_JOBID")
k -n "$ns" patch "podgroup.${pg_api%%/*}" grow --type=merge -p '{"spec":{"schedulingPolicy":{"gang":{"minCount":3}}}}' >/dev/null
j2_over() { [[ $(job_field "$j2" JobState) =~ CANCELLED|^$ ]]; }
check "minCount 3: its job of two is cancelled" wait_for 30 j2_over
check_cond "and the pods wait for the third" 30 "$ns" grow-0 "waiting for gang grow: 2 of 3 pods present"
in_pg "$ns" grow-2 grow 32 | k apply -f - >/dev/null
j3_pending() { local j; j=$(pod_field "$ns" grow-2 "$JP_JOBID"); [ -n "$j" ] && [ "$j" != "$j2" ] && job_is "$j" PENDING; }
check "the third comes: a new job waits" wait_for 30 j3_pending
j3=$(pod_field "$ns" grow-2 "$JP_JOBID")
check_eq "of three tasks" "$(job_field "$j3" NumTasks)" 3
k -n "$ns" delete pod fill1 fill2 fill3 --wait=false >/dev/null
check "room for three: all three are bound, in that job" wait_for 60 all_bound "$ns" grow-0 grow-1 grow-2
echo "    jobs: $j2 (minCount 2) $(job_field "$j2" JobState), $j3 (minCount 3) $(job_field "$j3" JobState)"
k delete namespace "$ns" --wait=false >/dev/null

scenario "bad PodGroups are refused, naming the field"
ns=$(new_ns enabled)
out=$(sched_pg_yaml "$ns" orphan "gang: {minCount: 2}" "workloadRef: {workloadName: nosuch, templateName: workers}" |
	k apply -f - 2>&1)
check_match "a missing Workload: refused by the webhook" "$out" \
	"spec.workloadRef.workloadName: Workload $ns/nosuch does not exist"
out=$(sched_pg_yaml "$ns" huge "gang: {minCount: 5000}" | k apply -f - 2>&1)
check_match "a minCount above 4096: refused" "$out" "spec.schedulingPolicy.gang.minCount: 5000 pods"
# 5 pods of 32 CPUs: more than the partition's 4 nodes of 32 CPUs hold.
sched_pg_yaml "$ns" big "gang: {minCount: 5}" | k apply -f - >/dev/null
for i in 0 1 2 3 4; do in_pg "$ns" "big-$i" big 32 | k apply -f - >/dev/null; done
check "a gang the partition can never hold: its pods say so, naming minCount" \
	wait_for 60 cond_has "$ns" big-0 "spec.schedulingPolicy.gang.minCount"
check "and the PodGroup says Unschedulable" wait_for 30 pg_cond_is "$ns" big False/Unschedulable
echo "    $(cond_msg "$ns" big-0)"
k delete namespace "$ns" --wait=false >/dev/null
no_big_job() { [ -z "$(squeue -h -n "$ns/big" -o %i)" ]; }
check "its pods deleted, no Slurm job is left for it" wait_for 60 no_big_job
