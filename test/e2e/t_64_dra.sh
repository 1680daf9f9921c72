# shellcheck shell=bash
# Dynamic Resource Allocation (resource.k8s.io/v1): the bridge does not
# allocate claims yet, so a pod that asks for devices that way is refused by
# the webhook, or left Pending by the scheduler when the webhook never saw
# it, and never bound without its devices (common/translate.c translate_dra).

dra_template() {  # dra_template NS: a ResourceClaimTemplate of two GPUs
	cat <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-gpus, namespace: $1}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {deviceClassName: gpu.example.com, count: 2}
YAML
}
dra_pod() {  # dra_pod NS NAME: a pod whose claim comes from the template
	pod_yaml "$1" "$2" 1 64Mi |
		sed 's/^spec:$/spec:\n  resourceClaims: [{name: gpu, resourceClaimTemplateName: two-gpus}]/'
}
dra_msg='spec.resourceClaims\[0\] \("gpu", from ResourceClaimTemplate two-gpus\): slurm-bridge does not allocate Dynamic Resource Allocation claims yet, and never binds a pod without the devices it asks for'

if ! k api-resources --api-group=resource.k8s.io -o name 2>/dev/null | grep -q '^resourceclaimtemplates'; then
	scenario "DRA: resource.k8s.io is not served here"
	pass "skipped: this cluster serves no ResourceClaimTemplates"
else
	scenario "DRA: a pod with a claim is refused by the webhook, naming the claim"
	ns=$(new_ns enabled)
	dra_template "$ns" | k apply -f - >/dev/null
	out=$(dra_pod "$ns" claimed | k apply -f - 2>&1)
	check_match "the webhook refuses it, and says what to ask instead" "$out" \
		"denied the request: $dra_msg; ask for GPUs as Slurm GRES instead"
	k delete namespace "$ns" --wait=false >/dev/null

	scenario "DRA: with the webhook bypassed, the scheduler leaves it Pending"
	ns=$(new_ns)
	dra_template "$ns" | k apply -f - >/dev/null
	dra_pod "$ns" claimed | k apply -f - >/dev/null
	k label namespace "$ns" slurm-bridge=enabled >/dev/null
	# (cond_has greps a basic regular expression: no escaped parentheses.)
	check "the pod waits, naming the claim" wait_for 30 cond_has "$ns" claimed \
		'spec.resourceClaims.0. ."gpu", from ResourceClaimTemplate two-gpus.: slurm-bridge does not allocate Dynamic Resource Allocation claims yet'
	echo "    $(cond_msg "$ns" claimed | cut -c1-160)..."
	sleep 2
	check_eq "it is not bound" "$(pod_field "$ns" claimed "$JP_NODE")" ""
	check_eq "and no Slurm job was made for it" "$(squeue -h -n "$ns/claimed" -o %i | wc -l)" 0
	k delete namespace "$ns" --wait=false >/dev/null

	scenario "DRA: an extended resource backed by a device class"
	ns=$(new_ns enabled)
	out=$(pod_yaml "$ns" ext 1 64Mi |
		sed 's/requests: {cpu: "1", memory: "64Mi"}/requests: {cpu: "1", memory: "64Mi"}\n      limits: {deviceclass.resource.kubernetes.io\/gpu.example.com: "1"}/' |
		k apply -f - 2>&1)
	if [[ $out == *"must be a standard resource"* || $out == *"Invalid value"* ]]; then
		# Kubernetes 1.35: DRA extended resources are alpha, off by default.
		pass "skipped: this API server refuses the resource name (${KUBE_VERSION:-this release})"
	else
		check_match "is refused, naming the resource" "$out" \
			'denied the request: the pod asks for gpu:1 through an extended resource backed by Dynamic Resource Allocation, which slurm-bridge does not allocate yet'
		# A class no site mapped to a GRES: refused, naming it and the map.
		out=$(pod_yaml "$ns" fpga 1 64Mi |
			sed 's/requests: {cpu: "1", memory: "64Mi"}/requests: {cpu: "1", memory: "64Mi"}\n      limits: {deviceclass.resource.kubernetes.io\/fpga.example.com: "1"}/' |
			k apply -f - 2>&1)
		check_match "a class not mapped to a GRES is refused, naming the class and the mapping" "$out" \
			'denied the request: spec.containers\[0\].resources.limits: deviceclass.resource.kubernetes.io/fpga.example.com: DeviceClass fpga.example.com is not mapped to a Slurm GRES \(mapped: gpu.nvidia.com, gpu.example.com\)'
	fi
	k delete namespace "$ns" --wait=false >/dev/null
fi
