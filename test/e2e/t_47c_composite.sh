# shellcheck shell=bash
# Kubernetes 1.37's CompositePodGroup (scheduling.k8s.io/v1alpha3, the
# CompositePodGroup gate): PodGroups whose spec.parentCompositePodGroupName
# names a composite with a gang policy are one scheduling unit, placed as
# one Slurm heterogeneous job with a component per PodGroup, all or
# nothing.  The composite and each child get their InitiallyScheduled
# condition as kube-scheduler writes it; its topology holds for the whole
# job (as one job of identical tasks: Slurm holds --switches per
# component); its disruptionMode all ends the whole gang; a basic composite
# leaves each PodGroup its own gang.

cpg_api=$(k api-resources --api-group=scheduling.k8s.io --no-headers 2>/dev/null |
	awk '$1 == "compositepodgroups" { print $(NF-2) }')
pg_api=$(k api-resources --api-group=scheduling.k8s.io --no-headers 2>/dev/null |
	awk '$1 == "podgroups" { print $(NF-2) }')
if [ -z "$cpg_api" ] || [ -z "$pg_api" ]; then
	echo "  skip this cluster does not serve scheduling.k8s.io CompositePodGroups (the CompositePodGroup gate, 1.37)"
	return 0
fi

# cpg_workload NS NAME LEADER_MIN WORKER_MIN: a Workload with one composite
# template "replica" of two PodGroup templates, leader and workers.
cpg_workload() {
	cat <<YAML
apiVersion: $pg_api
kind: Workload
metadata: {name: $2, namespace: $1}
spec:
  compositePodGroupTemplates:
  - name: replica
    schedulingPolicy: {gang: {minGroupCount: 2}}
    podGroupTemplates:
    - {name: leader, schedulingPolicy: {gang: {minCount: $3}}}
    - {name: workers, schedulingPolicy: {gang: {minCount: $4}}}
YAML
}
# cpg_yaml NS NAME WORKLOAD POLICY [SPEC]: a CompositePodGroup of the
# Workload's template "replica"; POLICY a flow map, SPEC more entries.
cpg_yaml() {
	cat <<YAML
apiVersion: $cpg_api
kind: CompositePodGroup
metadata: {name: $2, namespace: $1}
spec: {workloadRef: {workloadName: $3, templateName: replica}, schedulingPolicy: {$4}${5:+, $5}}
YAML
}
# cpg_child NS NAME PARENT WORKLOAD TEMPLATE MIN [SPEC]: a child PodGroup.
cpg_child() {
	cat <<YAML
apiVersion: $pg_api
kind: PodGroup
metadata: {name: $2, namespace: $1}
spec: {parentCompositePodGroupName: $3, workloadRef: {workloadName: $4, templateName: $5}, schedulingPolicy: {gang: {minCount: $6}}${7:+, $7}}
YAML
}
# cpg_pod NS POD PODGROUP CPU: a pod of the PodGroup.
cpg_pod() {
	pod_yaml "$1" "$2" "$4" 256Mi | sed "s/^spec:/spec:\n  schedulingGroup: {podGroupName: $3}/" |
		k apply -f - >/dev/null
}
# cond_of KIND NS NAME TYPE FIELD
cond_of() {
	k -n "$2" get "$1" "$3" -o "jsonpath={.status.conditions[?(@.type==\"$4\")].$5}" 2>/dev/null
}
cpg_scheduled() {
	[ "$(cond_of "compositepodgroup.${cpg_api%%/*}" "$1" "$2" CompositePodGroupInitiallyScheduled status)" = True ]
}
child_scheduled() {
	[ "$(cond_of "podgroup.${pg_api%%/*}" "$1" "$2" PodGroupInitiallyScheduled status)" = True ]
}
# components JOB: "CPUS NODE" of each heterogeneous component, in order.
components() { squeue -h -j "$1" -o '%i %C %N' 2>/dev/null | sort | cut -d' ' -f2- | paste -sd,; }

scenario "a CompositePodGroup with a gang policy is one heterogeneous Slurm job, a component per PodGroup"
ns=$(new_ns enabled)
{
	cpg_workload "$ns" serve 1 2
	echo ---
	cpg_yaml "$ns" r0 serve "gang: {minGroupCount: 2}"
	echo ---
	cpg_child "$ns" r0-leader r0 serve leader 1
	echo ---
	cpg_child "$ns" r0-workers r0 serve workers 2
} | k apply -f - >/dev/null
cpg_pod "$ns" lead-0 r0-leader 2
cpg_pod "$ns" work-0 r0-workers 1
check "2 of 3: the leader and one worker wait for the whole composite" \
	wait_for 30 cond_has "$ns" lead-0 "waiting for gang r0: 2 of 3 pods present"
check_eq "nothing is in Slurm yet" "$(squeue -h -n "$ns/r0" -o %i | wc -l)" 0
cpg_pod "$ns" work-1 r0-workers 1
check "all 3 are bound" wait_for 90 all_bound "$ns" lead-0 work-0 work-1
check "in one Slurm job" same_jobid "$ns" lead-0 work-0 work-1
job=$(pod_field "$ns" lead-0 "$JP_JOBID")
comps=$(components "$job")
echo "    squeue -j $job: $comps"
check_eq "of two components: the leader's 2 CPUs, the workers' 2 x 1" \
	"$(squeue -h -j "$job" -o '%i %C' | sort | awk '{print $2}' | paste -sd' ')" "2 2"
check "the CompositePodGroup says CompositePodGroupInitiallyScheduled True" wait_for 30 cpg_scheduled "$ns" r0
check "and each PodGroup its PodGroupInitiallyScheduled (r0-leader)" wait_for 30 child_scheduled "$ns" r0-leader
check "(r0-workers)" wait_for 30 child_scheduled "$ns" r0-workers
check_match "naming the Slurm job" \
	"$(cond_of "compositepodgroup.${cpg_api%%/*}" "$ns" r0 CompositePodGroupInitiallyScheduled message)" "Slurm job $job "
k delete namespace "$ns" --wait=false >/dev/null

scenario "a composite's pods and PodGroups before it wait for it; a basic composite leaves each PodGroup its own gang"
ns=$(new_ns enabled)
{
	cpg_workload "$ns" serve 1 1
	echo ---
	cpg_child "$ns" late-leader late serve leader 1
	echo ---
	cpg_child "$ns" late-workers late serve workers 1
} | k apply -f - >/dev/null
cpg_pod "$ns" late-l late-leader 1
cpg_pod "$ns" late-w late-workers 1
check "they wait for the CompositePodGroup, naming the field" \
	wait_for 30 cond_has "$ns" late-l "waiting for CompositePodGroup $ns/late (its PodGroups' spec.parentCompositePodGroupName) to exist"
cpg_yaml "$ns" late serve "gang: {minGroupCount: 2}" | k apply -f - >/dev/null
check "once it exists, both are bound" wait_for 90 all_bound "$ns" late-l late-w
check "in one Slurm job" same_jobid "$ns" late-l late-w
{
	cpg_yaml "$ns" each serve "basic: {}"
	echo ---
	cpg_child "$ns" each-leader each serve leader 1
	echo ---
	cpg_child "$ns" each-workers each serve workers 1
} | k apply -f - >/dev/null
cpg_pod "$ns" each-l each-leader 1
cpg_pod "$ns" each-w each-workers 1
check "basic: both are bound" wait_for 60 all_bound "$ns" each-l each-w
check "each PodGroup in a Slurm job of its own" \
	test "$(pod_field "$ns" each-l "$JP_JOBID")" != "$(pod_field "$ns" each-w "$JP_JOBID")"
k delete namespace "$ns" --wait=false >/dev/null

scenario "a composite's Workload template says what sizes it; what cannot size it says why"
ns=$(new_ns enabled)
{
	cpg_workload "$ns" serve 1 1
	echo ---
	cpg_yaml "$ns" big serve "gang: {minGroupCount: 3}"
	echo ---
	cpg_child "$ns" big-leader big serve leader 1
} | k apply -f - >/dev/null
cpg_pod "$ns" big-l big-leader 1
check "minGroupCount above the template's children: the pod says so" \
	wait_for 30 cond_has "$ns" big-l "spec.schedulingPolicy.gang.minGroupCount must be from 1 to the 2 PodGroups of template replica"
k delete namespace "$ns" --wait=false >/dev/null

if [ "$(sinfo -h -p slurm-bridge -o %D | head -n1)" -ge 4 ] &&
	[ -n "$(k get nodes -l slurm-bridge.io/leaf-switch -o name | head -n1)" ]; then
	scenario "a CompositePodGroup's topology holds for the whole gang"
	ns=$(new_ns enabled)
	pod_yaml "$ns" fill2 32 256Mi | sed "s/^spec:/spec:\n  nodeSelector: {kubernetes.io\/hostname: n2}/" |
		k apply -f - >/dev/null
	check "a whole-node pod takes n2" wait_for 60 pod_is "$ns" fill2 "$JP_NODE" n2
	{
		cpg_workload "$ns" serve 1 1
		echo ---
		cpg_yaml "$ns" rack serve "gang: {minGroupCount: 2}" \
			"schedulingConstraints: {topology: [{key: slurm-bridge.io/leaf-switch}]}, disruptionMode: {all: {}}"
		echo ---
		cpg_child "$ns" rack-leader rack serve leader 1
		echo ---
		cpg_child "$ns" rack-workers rack serve workers 1
	} | k apply -f - >/dev/null
	cpg_pod "$ns" rack-l rack-leader 32
	cpg_pod "$ns" rack-w rack-workers 32
	check "both whole-node members are bound" wait_for 90 all_bound "$ns" rack-l rack-w
	nodes="$(pod_field "$ns" rack-l "$JP_NODE") $(pod_field "$ns" rack-w "$JP_NODE")"
	echo "    composite on: $nodes"
	check_eq "under one leaf switch (n3 and n4, the only free pair)" "$(echo "$nodes" | tr ' ' '\n' | sort | paste -sd' ')" "n3 n4"
	job=$(pod_field "$ns" rack-l "$JP_JOBID")
	check_eq "as one job of identical tasks (Slurm holds --switches per component only)" \
		"$(squeue -h -j "$job" -o '%i %D' | paste -sd,)" "$job 2"
	k -n "$ns" delete pod rack-w --wait=false >/dev/null
	deleting() { [ -n "$(pod_field "$1" "$2" '{.metadata.deletionTimestamp}')" ] || pod_gone "$1" "$2"; }
	check "disruptionMode all: deleting one child's pod deletes the other child's" wait_for 30 deleting "$ns" rack-l
	job_over() { [[ $(job_field "$1" JobState) =~ CANCELLED|COMPLETING|^$ ]]; }
	check "and its Slurm job ends" wait_for 30 job_over "$job"
	ev=$(k -n "$ns" get events --field-selector involvedObject.name=rack-l -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | grep -m1 disruptionMode)
	check_match "saying why" "$ev" "CompositePodGroup rack has disruptionMode all and its member rack-w was deleted"
	{
		cpg_yaml "$ns" two serve "gang: {minGroupCount: 2}"
		echo ---
		cpg_child "$ns" two-leader two serve leader 1 "schedulingConstraints: {topology: [{key: slurm-bridge.io/leaf-switch}]}"
		echo ---
		cpg_child "$ns" two-workers two serve workers 1
	} | k apply -f - >/dev/null
	out=$(pod_yaml "$ns" two-l 1 256Mi | sed "s/^spec:/spec:\n  schedulingGroup: {podGroupName: two-leader}/" |
		k apply -f - 2>&1)
	check_match "a child's own topology inside a composite gang: its pod is refused, saying where to set it" "$out" \
		"PodGroup two-leader spec.schedulingConstraints.topology\\[0\\].key: .* inside CompositePodGroup two, which the bridge places as one Slurm job.*set it on the CompositePodGroup"
	k delete namespace "$ns" --wait=false >/dev/null
fi
