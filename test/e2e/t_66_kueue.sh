# shellcheck shell=bash
# Kueue admits, slurm-bridge places: what Kueue admits (an Indexed Job, a
# JobSet, a plain pod group) is one Slurm job; what it holds back has no
# pods and no Slurm job; a gang it preempts ends in Slurm, and the one that
# takes its quota is the only one Slurm counts.  The real Kueue controller
# (scripts/stack/workloads-up.sh kueue), API kueue.x-k8s.io/v1beta2.

if ! stack_alive "$RUN_DIR/kueue.pid" kueue; then
	echo "  skip Kueue is not running on this stack (scripts/stack/workloads-up.sh kueue builds it from sigs.k8s.io/kueue $KUEUE_VERSION; see its log $LOG_DIR/build-kueue.log)"
	return 0
fi

KQ=kueue.x-k8s.io
# Kubernetes 1.37 has a workloads resource of its own (scheduling.k8s.io).
WL=workloads.$KQ
# Kueue's cluster-scoped objects are labelled e2e-kueue=NS: each scenario
# deletes its own, and a file that dies leaves none behind.
kq_cleanup() {
	k delete "clusterqueues.$KQ,resourceflavors.$KQ,workloadpriorityclasses.$KQ" \
		-l "e2e-kueue${1:+=$1}" --wait=false >/dev/null 2>&1
}
trap kq_cleanup EXIT

# kq_queue NS CPU [CQ_SPEC]: ResourceFlavor rf-NS and ClusterQueue cq-NS
# (CPU CPUs and 4Gi, open to every namespace), and LocalQueue q in NS for
# it; CQ_SPEC adds lines (indented two spaces) to the ClusterQueue's spec.
kq_queue() {
	k apply -f - >/dev/null <<YAML
apiVersion: $KQ/v1beta2
kind: ResourceFlavor
metadata: {name: rf-$1, labels: {e2e-kueue: $1}}
---
apiVersion: $KQ/v1beta2
kind: ClusterQueue
metadata: {name: cq-$1, labels: {e2e-kueue: $1}}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: rf-$1
      resources:
      - {name: cpu, nominalQuota: $2}
      - {name: memory, nominalQuota: 4Gi}
${3:-}
---
apiVersion: $KQ/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: $1}
spec: {clusterQueue: cq-$1}
YAML
}

# kq_job NS NAME N [LABELS]: an Indexed Job of N pods of 1 CPU for
# LocalQueue q, LABELS more labels of the Job; its pods keep running.
kq_job() {
	job_yaml "$1" "$2" "$E2E_POD_BRIDGE" "completionMode: Indexed, completions: $3, parallelism: $3" \
		'{labels: {e2e_keep_running: "y"}}' "labels: {$KQ/queue-name: q${4:+, $4}}"
}
jsel() { echo "batch.kubernetes.io/job-name=$1"; }

# kq_wl NS RESOURCE NAME: sets wl to the Workload Kueue made for that
# object (its job-uid label); fails while there is none.
wl=""
kq_wl() {
	local uid
	uid=$(k -n "$1" get "$2" "$3" -o jsonpath='{.metadata.uid}' 2>/dev/null)
	[ -n "$uid" ] || return 1
	wl=$(k -n "$1" get "$WL" -l "$KQ/job-uid=$uid" -o jsonpath='{.items[0].metadata.name}' 2>/dev/null)
	[ -n "$wl" ]
}
# wl_cond NS WORKLOAD TYPE [FIELD]: a field (status) of a Workload condition.
wl_cond() {
	k -n "$1" get "$WL" "$2" -o "jsonpath={.status.conditions[?(@.type==\"$3\")].${4:-status}}" 2>/dev/null
}
wl_is() { [ "$(wl_cond "$1" "$2" "$3")" = "${4:-True}" ]; }
# kq_admitted NS RESOURCE NAME: its Workload is Admitted (sets wl).
kq_admitted() { kq_wl "$1" "$2" "$3" && wl_is "$1" "$wl" Admitted; }
# kq_held NS RESOURCE NAME: Kueue has said why it reserves no quota for
# it (QuotaReserved=False and a message; sets wl).
kq_held() {
	kq_wl "$1" "$2" "$3" && wl_is "$1" "$wl" QuotaReserved False &&
		[ -n "$(wl_cond "$1" "$wl" QuotaReserved message)" ]
}
not_reserved() { ! wl_is "$1" "$2" QuotaReserved; }
# slurm_named NAME: the ids of the jobs named NAME Slurm knows, in any state.
slurm_named() { squeue -h -t all -n "$1" -o %i 2>/dev/null | paste -sd' '; }
# sacct_state JOB: the state Slurm's accounting has for JOB.
sacct_state() { sacct -n -X -P -j "$1" -o State 2>/dev/null | head -n1; }
job_ended() { ! [[ $(sacct_state "$1") =~ ^(RUNNING|PENDING)$ ]] && ! [[ $(job_field "$1" JobState) =~ ^(RUNNING|PENDING)$ ]]; }
cq_cpu() {
	k get "clusterqueues.$KQ" "cq-$1" -o "jsonpath={.status.$2[0].resources[?(@.name==\"cpu\")].total}" 2>/dev/null
}
cq_cpu_is() { [ "$(cq_cpu "$1" flavorsReservation)" = "$2" ] && [ "$(cq_cpu "$1" flavorsUsage)" = "$2" ]; }
# ns_cpus NS: the CPUs Slurm has allocated to the running jobs of NS.
ns_cpus() {
	squeue -h -t R -o '%j %C' 2>/dev/null | awk -v p="$1/" 'index($1, p) == 1 { s += $2 } END { print s + 0 }'
}

# What users see: Kueue's Workloads, the pods, and Slurm's queue.
show() { "$@" 2>&1 | sed 's/^/    /'; }
kq_show() {
	show k -n "$1" get "$WL"
	show k -n "$1" get pods -o wide
	squeue -o '%.8i %40j %.8T %.5D %.4C %N' 2>/dev/null |
		awk -v p="$1/" 'NR == 1 || index($2, p) == 1' | sed 's/^/    /'
}

scenario "a Kueue-admitted Indexed Job is one Slurm job"
ns=$(new_ns enabled)
kq_queue "$ns" 4
kq_job "$ns" a 2 | k apply -f - >/dev/null
check "Kueue admits its Workload" wait_for 30 kq_admitted "$ns" jobs a
check_one_job "$ns" "$(jsel a)" 2 Job a
ja=$(pod_field "$ns" "$(first_pod "$ns" "$(jsel a)")" "$JP_JOBID")
# 3 CPUs do not fit in the 2 the quota has left.
kq_job "$ns" b 3 | k apply -f - >/dev/null
check "Kueue holds the second Job back, saying why" wait_for 30 kq_held "$ns" jobs b
check_match "for want of quota" "$(wl_cond "$ns" "$wl" QuotaReserved message)" "couldn't assign flavors.*insufficient unused quota for cpu"
echo "    $wl: $(wl_cond "$ns" "$wl" QuotaReserved message)"
check_eq "it has no pods" "$(pods_by "$ns" "$(jsel b)")" ""
check_eq "and Slurm knows no job $ns/b" "$(slurm_named "$ns/b")" ""
# Once the Job controller has written Suspended, it has seen the Job as it
# is and would have made pods for it by now: look again.
job_suspended() { [ "$(k -n "$ns" get job b -o jsonpath='{.status.conditions[?(@.type=="Suspended")].status}')" = True ]; }
check "the Job controller keeps it suspended" wait_for 30 job_suspended
check_eq "spec.suspend" "$(k -n "$ns" get job b -o jsonpath='{.spec.suspend}')" true
check "its Workload still reserves no quota" not_reserved "$ns" "$wl"
check_eq "still no pods" "$(pods_by "$ns" "$(jsel b)")" ""
check_eq "and no Slurm job $ns/b" "$(slurm_named "$ns/b")" ""
kq_show "$ns"
k -n "$ns" delete job a >/dev/null
check "once Job a is deleted Kueue admits b" wait_for 60 kq_admitted "$ns" jobs b
check_one_job "$ns" "$(jsel b)" 3 Job b
check "Job a's Slurm job ended" wait_for 30 job_ended "$ja"
kq_show "$ns"
k delete namespace "$ns" --wait=false >/dev/null
kq_cleanup "$ns"

scenario "a Kueue-admitted JobSet is one gang"
ns=$(new_ns enabled)
kq_queue "$ns" 4
k apply -f - >/dev/null <<YAML
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train, namespace: $ns, labels: {$KQ/queue-name: q}}
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 2
        completions: 2
        backoffLimit: 0
        template:
          metadata: {labels: {e2e_keep_running: "y"}}
          spec: {restartPolicy: Never, $E2E_POD_BRIDGE}
YAML
check "Kueue admits the JobSet's Workload" wait_for 30 kq_admitted "$ns" jobsets.jobset.x-k8s.io train
check_eq "for its 4 CPUs" "$(k -n "$ns" get "$WL" "$wl" -o jsonpath='{.status.admission.podSetAssignments[*].resourceUsage.cpu}')" 4
check_one_job "$ns" jobset.sigs.k8s.io/jobset-name=train 4 JobSet train
jt=$(pod_field "$ns" "$(first_pod "$ns" jobset.sigs.k8s.io/jobset-name=train)" "$JP_JOBID")
check "that runs" wait_for 30 job_is "$jt" RUNNING
kq_show "$ns"
k delete namespace "$ns" --wait=false >/dev/null
kq_cleanup "$ns"

scenario "a Kueue plain pod group is one Slurm job"
ns=$(new_ns enabled)
# A ClusterQueue that admits nothing until told.
kq_queue "$ns" 4 "  stopPolicy: Hold"
for i in 0 1 2; do
	pod_yaml "$ns" "grp-$i" 1 64Mi "  labels: {$KQ/queue-name: q, $KQ/pod-group-name: grp}
  annotations: {$KQ/pod-group-total-count: \"3\"}" | k apply -f - >/dev/null
done
gates() { pod_field "$ns" "$1" '{.spec.schedulingGates[*].name}'; }
# (Kueue adds its topology gate too.)
gated() { local p; for p in grp-0 grp-1 grp-2; do [[ " $(gates "$p") " == *" $KQ/admission "* ]] || return 1; done; }
check "Kueue gates the pods: $KQ/admission" gated
echo "    grp-0 schedulingGates: $(gates grp-0)"
grp_held() { wl_is "$ns" grp QuotaReserved False && [ -n "$(wl_cond "$ns" grp QuotaReserved message)" ]; }
check "Kueue makes the group's one Workload and holds it" wait_for 30 grp_held
echo "    grp: $(wl_cond "$ns" grp QuotaReserved message)"
check_eq "Slurm knows no job $ns/grp" "$(slurm_named "$ns/grp")" ""
check_eq "no pod is bound" "$(bound_count "$ns" grp-0 grp-1 grp-2)" 0
kq_show "$ns"
k patch "clusterqueues.$KQ" "cq-$ns" --type=merge -p '{"spec":{"stopPolicy":"None"}}' >/dev/null
check "once the ClusterQueue runs, Kueue admits the group" wait_for 30 wl_is "$ns" grp Admitted
ungated() { [ -z "$(gates grp-0)$(gates grp-1)$(gates grp-2)" ]; }
check "and takes its gates off" wait_for 30 ungated
check_one_job "$ns" "$KQ/pod-group-name=grp" 3 "pod group" grp
kq_show "$ns"
# Kueue keeps a group's deleted pods (its finalizer), waiting for
# replacements, until the group's Workload is deleted.
k delete namespace "$ns" --wait=false >/dev/null
k -n "$ns" delete "$WL" grp --wait=false >/dev/null
kq_cleanup "$ns"

scenario "Kueue preempts a running gang for a higher-priority one"
ns=$(new_ns enabled)
kq_queue "$ns" 4 "  preemption: {withinClusterQueue: LowerPriority}"
k apply -f - >/dev/null <<YAML
apiVersion: $KQ/v1beta2
kind: WorkloadPriorityClass
metadata: {name: low-$ns, labels: {e2e-kueue: $ns}}
value: 10
---
apiVersion: $KQ/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high-$ns, labels: {e2e-kueue: $ns}}
value: 1000
YAML
kq_job "$ns" low 4 "$KQ/priority-class: low-$ns" | k apply -f - >/dev/null
check "the low-priority Job is admitted" wait_for 30 kq_admitted "$ns" jobs low
wlow=$wl
check_eq "at priority 10" "$(k -n "$ns" get "$WL" "$wlow" -o jsonpath='{.spec.priority}')" 10
check_one_job "$ns" "$(jsel low)" 4 Job low
j1=$(pod_field "$ns" "$(first_pod "$ns" "$(jsel low)")" "$JP_JOBID")
check "its Slurm job J1 ($j1) runs" wait_for 30 job_is "$j1" RUNNING
kq_job "$ns" high 4 "$KQ/priority-class: high-$ns" | k apply -f - >/dev/null
evicted() { [ "$(wl_cond "$ns" "$wlow" Evicted)/$(wl_cond "$ns" "$wlow" Evicted reason)" = True/Preempted ]; }
check "Kueue evicts the low one: Evicted, reason Preempted" wait_for 30 evicted
check "and Preempted=True" wl_is "$ns" "$wlow" Preempted
echo "    $wlow: $(wl_cond "$ns" "$wlow" Preempted message)"
no_low_pods() { [ -z "$(pods_by "$ns" "$(jsel low)")" ]; }
check "the low Job's pods are gone" wait_for 60 no_low_pods
check "J1 ends in Slurm" wait_for 30 job_ended "$j1"
check_match "sacct: J1 not RUNNING" "$(sacct_state "$j1")" '^(CANCELLED|COMPLETED)'
check_match "scontrol: J1 CANCELLED or COMPLETED" "$(job_field "$j1" JobState)" '^(CANCELLED|COMPLETED)$'
check "the high-priority Job is admitted" wait_for 60 kq_admitted "$ns" jobs high
check_one_job "$ns" "$(jsel high)" 4 Job high
j2=$(pod_field "$ns" "$(first_pod "$ns" "$(jsel high)")" "$JP_JOBID")
check "its Slurm job J2 ($j2) runs" wait_for 30 job_is "$j2" RUNNING
# Nothing counted twice: while J2 runs, J1 does not, and Slurm and Kueue
# both count the 4 CPUs of one gang.
check "J1 is not running" job_ended "$j1"
check_eq "low has no pods (Kueue keeps it suspended)" "$(pods_by "$ns" "$(jsel low)")" ""
check_eq "the CPUs Slurm allocates to $ns's running jobs" "$(ns_cpus "$ns")" 4
check "Kueue's ClusterQueue reserves and uses 4 CPUs" wait_for 30 cq_cpu_is "$ns" 4
echo "    J1 $j1: sacct $(sacct_state "$j1"); J2 $j2: $(job_field "$j2" JobState); cq-$ns cpu reserved $(cq_cpu "$ns" flavorsReservation), used $(cq_cpu "$ns" flavorsUsage)"
kq_show "$ns"
k delete namespace "$ns" --wait=false >/dev/null
kq_cleanup "$ns"
