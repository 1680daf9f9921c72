#!/usr/bin/env bash
# make dra-node-test: a pod with a ResourceClaim placed by Slurm and started
# by a real kubelet, which sees the device Slurm allocated.
#
# The stack's real node (make node-up with NODE_DRA=1: containerd 2.x with
# CDI, and the DRA example driver's kubelet plugin publishing gpu-0 ..
# gpu-7, attribute index) stands behind Slurm node n$NODES: it carries the
# label slinky.slurm.net/slurm-nodename.  Slurm's other nodes are drained
# for the test, so Slurm places the pods there.  The host-process bridge
# (bridge-up) binds them, after allocating each claim with the devices of
# the GRES indices Slurm gave the pod; the kubelet asks the driver to
# prepare them, and the driver's CDI spec puts GPU_DEVICE_<index> into the
# container, which prints it (scripts/stack/k8s/envprobe.c).
# shellcheck source=test/e2e/lib.sh
. "$(cd "$(dirname "$0")/../e2e" && pwd)/lib.sh"
TOP=$(cd "$E2E_DIR/../.." && pwd)

slurm_node=n$NODES
others=$(sinfo -h -p slurm-bridge -N -o %N | sort -u | grep -vx "$slurm_node" | paste -sd,)
cleanup() {
	[ -z "${ns:-}" ] || k delete namespace "$ns" --wait=true --timeout=60s >/dev/null 2>&1 || true
	[ -z "$others" ] || scontrol update nodename="$others" state=resume >/dev/null 2>&1 || true
	k label node "$SYSTEM_NODE" slinky.slurm.net/slurm-nodename- >/dev/null 2>&1 || true
	k delete deviceclass gpu.example.com --ignore-not-found >/dev/null 2>&1 || true
}
trap cleanup EXIT

"$TOP/scripts/stack/bridge-up.sh" >/dev/null
dra_example_class
k label node "$SYSTEM_NODE" --overwrite "slinky.slurm.net/slurm-nodename=$slurm_node" >/dev/null
[ -z "$others" ] || scontrol update nodename="$others" state=drain reason="dra-node-test" >/dev/null

# probe NS NAME: a pod with a claim of two GPUs from the template, on the
# real node (it tolerates the system node's taint), printing GPU_DEVICE_*.
# A tenth of a CPU: Slurm gives it one of n4's 32, the kubelet counts what
# it asks of this machine's two.
probe() {
	cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1}
spec:
  schedulerName: slurm-bridge
  terminationGracePeriodSeconds: 5
  tolerations:
  - {key: node-role.kubernetes.io/system, operator: Exists, effect: NoSchedule}
  - {key: slinky.slurm.net/managed-node, operator: Exists}
  resourceClaims: [{name: gpu, resourceClaimTemplateName: two-gpus}]
  containers:
  - name: probe
    image: docker.io/library/slurm-bridge-envprobe:dev
    imagePullPolicy: Never
    args: [GPU_DEVICE]
    resources:
      requests: {cpu: 100m, memory: 32Mi}
      claims: [{name: gpu}]
YAML
}
# seen NS POD: the GPU_DEVICE_<n>=gpu-<n> lines the container printed,
# as "gpu-a gpu-b".
seen() { k -n "$1" logs "$2" 2>/dev/null | sed -n 's/^GPU_DEVICE_[0-9]*=\(gpu-[0-9]*\)$/\1/p' | sort | paste -sd' '; }
# wanted NS POD: the devices its slurm-gres annotation names, "gpu-a gpu-b".
wanted() { dra_gres_indices "$1" "$2" | sed 's/^/gpu-/' | sort | paste -sd' '; }
claim_devs() {
	local c
	c=$(pod_field "$1" "$2" '{.status.resourceClaimStatuses[0].resourceClaimName}')
	k -n "$1" get resourceclaim "$c" -o jsonpath='{range .status.allocation.devices.results[*]}{.device}{"\n"}{end}' 2>/dev/null | sort | paste -sd' '
}
printed() { [ -n "$(seen "$1" "$2")" ]; }

scenario "DRA on a real kubelet: the container sees the GPUs Slurm allocated"
check "the driver publishes the node's GPUs" test -n \
	"$(k get resourceslices -o jsonpath="{.items[?(@.spec.nodeName==\"$SYSTEM_NODE\")].metadata.name}")"
ns=$(new_ns enabled)
dra_template "$ns" two-gpus 2 | k apply -f - >/dev/null
for p in first second; do
	probe "$ns" "$p" | k apply -f - >/dev/null
	check "$p: started by the kubelet on $SYSTEM_NODE" wait_for 90 pod_is "$ns" "$p" "$JP_PHASE" Running
	check_eq "$p: bound there through Slurm node $slurm_node" "$(pod_field "$ns" "$p" '{.metadata.annotations.slinky\.slurm\.net/slurm-node}')/$(pod_field "$ns" "$p" "$JP_NODE")" \
		"$slurm_node/$SYSTEM_NODE"
	check "$p: its container printed its devices" wait_for 30 printed "$ns" "$p"
	echo "    $p: slurm-gres $(pod_field "$ns" "$p" '{.metadata.annotations.scheduler\.slinky\.slurm\.net/slurm-gres}'), claim $(claim_devs "$ns" "$p"), container: $(k -n "$ns" logs "$p" | grep -E '^GPU_DEVICE_[0-9]+=' | paste -sd' ')"
	w=$(wanted "$ns" "$p")
	check "$p: the claim holds the GPUs Slurm gave it" test -n "$w" -a "$(claim_devs "$ns" "$p")" = "$w"
	check_eq "$p: and the container sees exactly those" "$(seen "$ns" "$p")" "$w"
done
check "the two pods hold different GPUs" test "$(seen "$ns" first)" != "$(seen "$ns" second)"
j=$(pod_field "$ns" second "$JP_JOBID_ANN")
echo "    $(sacct -n -X -P -j "$j" -o JobID,JobName,NodeList,AllocTRES 2>/dev/null | head -n1)"
k delete namespace "$ns" --wait=true --timeout=60s >/dev/null

scenario "DRA on a real kubelet: a gang of two such pods, and a DRA-backed extended resource"
ns=$(new_ns enabled)
dra_template "$ns" two-gpus 2 | k apply -f - >/dev/null
for p in g0 g1; do
	probe "$ns" "$p" | sed "s/^metadata: {name: $p, namespace: $ns}\$/metadata:\n  name: $p\n  namespace: $ns\n  labels: {scheduling.x-k8s.io\/pod-group: pair}\n  annotations: {scheduler.slinky.slurm.net\/min-member: \"2\"}/" |
		k apply -f - >/dev/null
done
# One GPU as an extended resource backed by the class (KEP-5004).
probe "$ns" ext | sed '/resourceClaims:/d; /claims: \[{name: gpu}\]/d' |
	sed 's/requests: {cpu: 100m, memory: 32Mi}/requests: {cpu: 100m, memory: 32Mi}\n      limits: {deviceclass.resource.kubernetes.io\/gpu.example.com: "1"}/' |
	k apply -f - >/dev/null
for p in g0 g1 ext; do
	check "$p: started by the kubelet" wait_for 90 pod_is "$ns" "$p" "$JP_PHASE" Running
	check "$p: its container printed its devices" wait_for 30 printed "$ns" "$p"
	w=$(wanted "$ns" "$p")
	echo "    $p: slurm-gres $(pod_field "$ns" "$p" '{.metadata.annotations.scheduler\.slinky\.slurm\.net/slurm-gres}'), container: $(seen "$ns" "$p")"
	check_eq "$p: the container sees exactly the GPUs Slurm gave it" "$(seen "$ns" "$p")" "$w"
done
check "g0 and g1 are one Slurm job" same_jobid "$ns" g0 g1
check_eq "ext's claim is the one its status names" \
	"$(pod_field "$ns" ext '{.status.extendedResourceClaimStatus.requestMappings[0].containerName}')" probe
k delete namespace "$ns" --wait=true --timeout=60s >/dev/null

scenario "DRA on a real kubelet: one claim shared by the pods of two Slurm jobs"
ns=$(new_ns enabled)
dra_claim "$ns" shared
for p in s0 s1; do
	probe "$ns" "$p" | sed 's/resourceClaimTemplateName: two-gpus/resourceClaimName: shared/' | k apply -f - >/dev/null
done
for p in s0 s1; do
	check "$p: started by the kubelet" wait_for 90 pod_is "$ns" "$p" "$JP_PHASE" Running
	check "$p: its container printed its devices" wait_for 30 printed "$ns" "$p"
	echo "    $p: Slurm job $(pod_field "$ns" "$p" "$JP_JOBID_ANN"), slurm-gres $(pod_field "$ns" "$p" '{.metadata.annotations.scheduler\.slinky\.slurm\.net/slurm-gres}'), device-jobs $(pod_field "$ns" "$p" '{.metadata.annotations.scheduler\.slinky\.slurm\.net/device-jobs}'), container: $(seen "$ns" "$p")"
done
holder=$(k -n "$ns" get resourceclaim shared -o jsonpath='{.metadata.annotations.scheduler\.slinky\.slurm\.net/slurm-jobid}')
hp=s0; [ "$(pod_field "$ns" s1 "$JP_JOBID_ANN")" = "$holder" ] && hp=s1
check "two Slurm jobs" test "$(pod_field "$ns" s0 "$JP_JOBID_ANN")" != "$(pod_field "$ns" s1 "$JP_JOBID_ANN")"
check_eq "both containers see the one GPU Slurm gave the holder ($hp, job $holder)" \
	"$(seen "$ns" s0) $(seen "$ns" s1)" "$(wanted "$ns" "$hp") $(wanted "$ns" "$hp")"
e2e_summary
