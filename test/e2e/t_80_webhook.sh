# shellcheck shell=bash
# The mutating webhook, through the real kube-apiserver.

plain_pod() {
	cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1}
spec:
  nodeName: ${3:-}
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: "1", memory: 128Mi}
      limits: {nvidia.com/gpu: "1"}
YAML
}

scenario "a bare GPU pod in an enabled namespace is mutated and placed"
ns=$(new_ns enabled)
plain_pod "$ns" bare | sed '/nodeName: $/d' | k apply -f - >/dev/null
check_eq "schedulerName is set" "$(pod_field "$ns" bare '{.spec.schedulerName}')" slurm-bridge
check_match "the managed-node toleration is added" \
	"$(pod_field "$ns" bare '{.spec.tolerations[*].key}')" 'slinky\.slurm\.net/managed-node'
check_eq "GPU limits become the gres annotation" \
	"$(pod_field "$ns" bare '{.metadata.annotations.slurmjob\.slinky\.slurm\.net/gres}')" gpu:1
check "and the pod is placed through Slurm" wait_for 30 pod_has "$ns" bare "$JP_JOBID"

scenario "a preset nodeName is cleared on create"
plain_pod "$ns" preset n1 | k apply -f - >/dev/null
check "the pod gets a Slurm job instead" wait_for 30 pod_has "$ns" preset "$JP_JOBID"
k delete namespace "$ns" --wait=false >/dev/null

scenario "a pod in a namespace that is not enabled is untouched"
ns=$(new_ns)
plain_pod "$ns" left | sed '/nodeName: $/d' | k apply -f - >/dev/null
check_eq "schedulerName stays default-scheduler" "$(pod_field "$ns" left '{.spec.schedulerName}')" default-scheduler
check_eq "no gres annotation" \
	"$(pod_field "$ns" left '{.metadata.annotations.slurmjob\.slinky\.slurm\.net/gres}')" ""
k delete namespace "$ns" --wait=false >/dev/null
