# shellcheck shell=bash
# A pod in a namespace that is not enabled is never bound; it says why.
scenario "namespace not enabled"
ns=$(new_ns)
pod_yaml "$ns" lone | k apply -f - >/dev/null
msg_has_hint() {
	pod_field "$ns" lone '{.status.conditions[?(@.type=="PodScheduled")].message}' |
		grep -q "kubectl label namespace $ns slurm-bridge=enabled"
}
check "condition tells how to enable the namespace" wait_for 30 msg_has_hint
check_eq "PodScheduled reason" \
	"$(pod_field "$ns" lone '{.status.conditions[?(@.type=="PodScheduled")].reason}')" Unschedulable
check_eq "pod is not bound" "$(pod_field "$ns" lone '{.spec.nodeName}')" ""
check_eq "no job id label" \
	"$(pod_field "$ns" lone "$JP_JOBID")" ""
# Enabling the namespace lets the waiting pod through.
k label namespace "$ns" slurm-bridge=enabled >/dev/null
check "after enabling the namespace the pod is bound" \
	wait_for 30 pod_has "$ns" lone "$JP_NODE"
jobid=$(pod_field "$ns" lone "$JP_JOBID")
k delete namespace "$ns" --wait=false >/dev/null
if [ -n "$jobid" ]; then
	check "namespace deletion cancels the job" \
		wait_for 60 job_is "$jobid" CANCELLED
fi
