# shellcheck shell=bash
# Nodes in both directions: cordon/drain, NotReady, a dead slurmd, and
# exclusive placement.
A=slurmjob.slinky.slurm.net
slurm_node_state() { sinfo -h -n "$1" -o '%T' | head -n1; }
slurm_node_reason() { sinfo -h -n "$1" -o '%E' | head -n1; }
# shellcheck disable=SC2053 # $2 is a pattern, e.g. 'drain*'
state_is() { [[ $(slurm_node_state "$1") == $2 ]]; }
last_node=n$NODES

scenario "cordon drains the Slurm node; uncordon resumes only our drain"
k cordon "$last_node" >/dev/null
check "cordon drains $last_node" wait_for 20 state_is "$last_node" 'drain*'
check_match "with a slurm-bridge reason" "$(slurm_node_reason "$last_node")" '^slurm-bridge: '
k uncordon "$last_node" >/dev/null
check "uncordon resumes it" wait_for 20 state_is "$last_node" idle
scontrol update nodename="$last_node" state=drain reason="maintenance by admin"
k cordon "$last_node" >/dev/null
sleep 1
k uncordon "$last_node" >/dev/null
sleep 2
check_match "an admin's drain survives uncordon" "$(slurm_node_state "$last_node")" '^drain'
check_eq "with the admin's reason" "$(slurm_node_reason "$last_node")" "maintenance by admin"
scontrol update nodename="$last_node" state=resume

scenario "exclusive placement"
ns=$(new_ns enabled)
for i in 1 2; do
	pod_yaml "$ns" "ex-$i" 1 256Mi "  annotations: {$A/exclusive: \"true\"}" | k apply -f - >/dev/null
done
check "exclusive pods are bound" wait_for 30 all_bound "$ns" ex-1 ex-2
check "on different nodes" test "$(pod_field "$ns" ex-1 "$JP_NODE")" != "$(pod_field "$ns" ex-2 "$JP_NODE")"
check_eq "their job does not share its node" \
	"$(job_field "$(pod_field "$ns" ex-1 "$JP_JOBID")" OverSubscribe)" NO
k -n "$ns" delete pod ex-1 ex-2 --wait=false >/dev/null

scenario "NotReady as Kubernetes has it: pods stay while they tolerate it (300 s by default), then fail"
# Pods get tolerations of node.kubernetes.io/not-ready and unreachable
# (NoExecute, 300 s) from the DefaultTolerationSeconds admission plugin;
# short: 5 s of its own.
pod_yaml "$ns" on-sick | k apply -f - >/dev/null
pod_yaml "$ns" short | sed 's/^  tolerations:$/  tolerations:\n  - {key: node.kubernetes.io\/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 5}/' |
	k apply -f - >/dev/null
check "the pods are bound" wait_for 30 all_bound "$ns" on-sick short
check_eq "the API server gave on-sick the default 300 s" \
	"$(pod_field "$ns" on-sick '{.spec.tolerations[?(@.key=="node.kubernetes.io/not-ready")].tolerationSeconds}')" 300
sick=$(pod_field "$ns" on-sick "$JP_NODE"); sjob=$(pod_field "$ns" on-sick "$JP_JOBID")
# short on the same node: the gang table's exclusive pods are gone.
short_node=$(pod_field "$ns" short "$JP_NODE"); shjob=$(pod_field "$ns" short "$JP_JOBID")
# No kubelet to heartbeat while we mark the nodes NotReady by hand.
stack_stop kwok "$RUN_DIR/kwok.pid" kwok >/dev/null
node_ready "$sick" False
[ "$short_node" = "$sick" ] || node_ready "$short_node" False
# Kubernetes' taint manager evicts it after the same 5 s (the node gets
# the not-ready NoExecute taint), and a grace period of 0 removes it at
# once: whichever acts first, it does not run on.
failed_or_evicted() { pod_is "$ns" short "$JP_PHASE" Failed || pod_gone "$ns" short; }
check "a pod that tolerates 5 s is failed (or evicted by the taint manager) after them" wait_for 20 failed_or_evicted
check "its job is cancelled" wait_for 20 job_is "$shjob" CANCELLED
sleep 5
check_eq "10 s of NotReady change nothing for a pod that tolerates 300 s: still Running" \
	"$(pod_field "$ns" on-sick "$JP_PHASE")" Running
check_eq "and its job still runs" "$(job_field "$sjob" JobState)" RUNNING
node_ready "$sick" True
sleep 2
check_eq "Ready again: nothing happened" "$(pod_field "$ns" on-sick "$JP_PHASE")/$(job_field "$sjob" JobState)" Running/RUNNING
# NotReady for 400 s (as its condition says): past the 300 s.
node_ready "$sick" False 400
check "NotReady for 400 s: the pod is failed" wait_for 20 pod_is "$ns" on-sick "$JP_PHASE" Failed
check "its job is cancelled" wait_for 20 job_is "$sjob" CANCELLED
check_match "the pod says why" "$(pod_field "$ns" on-sick '{.status.message}')" "NotReady for longer than the pod tolerates"
"$E2E_DIR/../../scripts/stack/cluster-up.sh" >/dev/null

scenario "a dead slurmd: NODE_FAIL deletes the pods with the reason"
pod_yaml "$ns" on-dead 32 1Gi | k apply -f - >/dev/null
check "the pod is bound" wait_for 30 pod_has "$ns" on-dead "$JP_NODE"
dead=$(pod_field "$ns" on-dead "$JP_NODE"); djob=$(pod_field "$ns" on-dead "$JP_JOBID")
kill -9 "$(stack_pid "$RUN_DIR/slurmd-$dead.pid")"
check "Slurm ends the job NODE_FAIL" wait_for 90 job_is "$djob" NODE_FAIL
check "the pod is deleted" wait_for 30 pod_gone "$ns" on-dead
check "with an Event naming NODE_FAIL" wait_for 10 bash -c \
	"kubectl --kubeconfig=$KUBECONFIG -n $ns get events --field-selector involvedObject.name=on-dead -o jsonpath='{.items[*].message}' | grep -q NODE_FAIL"
"$E2E_DIR/../../scripts/stack/cluster-up.sh" >/dev/null
scontrol update nodename="$dead" state=resume 2>/dev/null || true
wait_for 30 state_is "$dead" idle
k delete namespace "$ns" --wait=false >/dev/null

scenario "a Kubernetes node behind a Slurm node is tainted NoSchedule, its own taints kept"
# The node comes with an admin's taint and Slinky's NoExecute one: the
# bridge replaces only its own (managedTaintEffect: NoSchedule, the
# default) and names its install on the node.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: alias-$last_node
  labels: {slinky.slurm.net/slurm-nodename: $last_node}
spec:
  taints:
  - {key: example.com/dedicated, value: team-a, effect: NoSchedule}
  - {key: slinky.slurm.net/managed-node, value: slurm-bridge, effect: NoExecute}
YAML
alias_taints() {
	k get node "alias-$last_node" -o jsonpath='{range .spec.taints[*]}{.key}={.value}:{.effect}{"\n"}{end}' | sort
}
alias_taint() { [ "$(alias_taints | tr '\n' ' ')" = "example.com/dedicated=team-a:NoSchedule slinky.slurm.net/managed-node=slurm-bridge:NoSchedule " ]; }
check "the bridge taints it managed-node=slurm-bridge:NoSchedule, the admin's taint kept" wait_for 20 alias_taint
check "the node names the install that tainted it" \
	test -n "$(k get node "alias-$last_node" -o jsonpath='{.metadata.annotations.slinky\.slurm\.net/managed-node-install}')"
k delete node "alias-$last_node" >/dev/null

scenario "a Slurm node maps to the Kubernetes node labelled with its name"
# A kwok node that stands for Slurm's last node under another name.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: twin-$last_node
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {slinky.slurm.net/slurm-nodename: $last_node, type: kwok}
spec:
  taints: [{key: slinky.slurm.net/managed-node, value: slurm-bridge, effect: NoExecute}]
status:
  allocatable: {cpu: "32", memory: 128Gi, pods: "256"}
  capacity: {cpu: "32", memory: 128Gi, pods: "256"}
YAML
wait_for 30 bash -c "kubectl --kubeconfig=$KUBECONFIG get node twin-$last_node -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
ns=$(new_ns enabled)
for i in $(seq 1 $((NODES - 1))); do pod_yaml "$ns" "fill-$i" 32 1Gi | k apply -f - >/dev/null; done
fills_bound() { local i; for i in $(seq 1 $((NODES - 1))); do pod_has "$ns" "fill-$i" "$JP_NODE" || return 1; done; }
check "all Slurm nodes but the last are full" wait_for 60 fills_bound
pod_yaml "$ns" twin 32 1Gi | k apply -f - >/dev/null
check "the next pod is bound" wait_for 30 pod_has "$ns" twin "$JP_NODE"
check_eq "to the labelled node, not the one named $last_node" "$(pod_field "$ns" twin "$JP_NODE")" "twin-$last_node"
check_eq "its job runs on Slurm node $last_node" "$(job_field "$(pod_field "$ns" twin "$JP_JOBID")" NodeList)" "$last_node"
k delete namespace "$ns" --wait=false >/dev/null
wait_for 60 bash -c "! kubectl --kubeconfig=$KUBECONFIG get namespace $ns >/dev/null 2>&1"
k delete node "twin-$last_node" >/dev/null
