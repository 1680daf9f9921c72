# shellcheck shell=bash
# The guard (admission/guard.c, the webhook guard.pods.slurm-bridge.io):
# outside the exempt namespaces, a pod that tolerates the managed-node
# taint is refused unless slurm-bridge schedules it, and so is a pod
# created with spec.nodeName on a node the bridge manages (n1..nN, tainted
# by the bridge).  The stack's exempt namespaces are the chart's defaults
# (kube-system, slurm, slurm-bridge) and the bench's.

GD_TAINT=slinky.slurm.net/managed-node
GD_TOL="[{key: $GD_TAINT, operator: Exists, effect: NoExecute}]"
# The namespace of the Slurm node daemons, exempt by default; made here if
# the stack has none, and then removed.
GD_EXEMPT=slurm

# gd_pod NS NAME SCHEDULER [SPEC]: a small pod; SPEC adds flow entries to
# its spec ("tolerations: [...]", "nodeName: n1").
gd_pod() {
	cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1}
spec: {schedulerName: $3, terminationGracePeriodSeconds: 0${4:+, $4},
  containers: [{name: main, image: busybox, command: [sleep, "3600"],
    resources: {requests: {cpu: 100m, memory: 64Mi}}}]}
YAML
}
# gd_apply NS NAME SCHEDULER [SPEC]: creates it; prints kubectl's output.
gd_apply() { gd_pod "$@" | k create -f - 2>&1; }
gd_exists() { k -n "$1" get pod "$2" >/dev/null 2>&1; }
# gd_refused DESCRIPTION OUTPUT REGEX NS NAME: refused by the guard with a
# message matching REGEX, and no pod made; shows the message.
gd_refused() {
	check_match "$1" "$2" "denied the request: $3"
	check "  and no pod was made" pod_gone "$4" "$5"
	echo "       message: ${2#*denied the request: }"
}
gd_admitted() {
	if gd_exists "$3" "$4"; then pass "$1"; else fail "$1: $2"; fi
}
# The stack also allows slurm-bridge-b (the second install of t_56).
gd_sched_msg='which only pods scheduled by slurm-bridge may \(schedulerName: slurm-bridge[^;]*; this pod has'

scenario "guard: a pod of another scheduler tolerating the managed-node taint is refused"
ns=$(new_ns)
out=$(gd_apply "$ns" other default-scheduler "tolerations: $GD_TOL")
gd_refused "refused, naming the toleration and the schedulerName allowed" "$out" \
	"spec\.tolerations\[0\]: tolerates slinky\.slurm\.net/managed-node, $gd_sched_msg default-scheduler\); remove the toleration or let slurm-bridge schedule the pod" \
	"$ns" other
out=$(gd_apply "$ns" second my-scheduler \
	"tolerations: [{key: example.com/gpu, operator: Exists}, {key: $GD_TAINT, operator: Equal, value: slurm-bridge}]")
gd_refused "with any operator and index (Equal, the second toleration)" "$out" \
	"spec\.tolerations\[1\]: tolerates slinky\.slurm\.net/managed-node, $gd_sched_msg my-scheduler\)" \
	"$ns" second
en=$(new_ns enabled)
# (The webhook replaces default-scheduler there, and keeps another name;
# the bridge manages the namespace, so the extender's scheduler may.)
out=$(gd_apply "$en" named volcano "tolerations: $GD_TOL")
gd_refused "in an enabled namespace too, when the pod names another scheduler" "$out" \
	"spec\.tolerations\[0\]: tolerates slinky\.slurm\.net/managed-node, which only pods scheduled by slurm-bridge may \(schedulerName: slurm-bridge[^;]* or default-scheduler; this pod has volcano\)" \
	"$en" named

scenario "guard: a pod that tolerates every taint is refused"
out=$(gd_apply "$ns" everything default-scheduler "tolerations: [{operator: Exists}]")
gd_refused "refused, saying the taint is among those it tolerates" "$out" \
	"spec\.tolerations\[0\]: tolerates every taint, slinky\.slurm\.net/managed-node among them, $gd_sched_msg default-scheduler\); tolerate only the taints the pod needs, by key, or let slurm-bridge schedule the pod" \
	"$ns" everything
# The managed-node taint is NoSchedule (managedTaintEffect's default):
# tolerating every NoSchedule taint tolerates it, every NoExecute one not.
out=$(gd_apply "$ns" nosched default-scheduler "tolerations: [{operator: Exists, effect: NoSchedule}]")
gd_refused "and so does every NoSchedule taint" "$out" \
	"spec\.tolerations\[0\]: tolerates every NoSchedule taint" "$ns" nosched
out=$(gd_apply "$ns" noexec default-scheduler "tolerations: [{operator: Exists, effect: NoExecute}]")
gd_admitted "every NoExecute taint is not the managed-node taint's effect: admitted" "$out" "$ns" noexec

scenario "guard: a pod created with nodeName of a Slurm node is refused, whatever its scheduler"
node=$(k get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.spec.taints[*].key}{"\n"}{end}' |
	awk -v t="$GD_TAINT" '$0 ~ t { print $1; exit }')
check "the stack has a node the bridge tainted" test -n "$node"
out=$(gd_apply "$ns" pinned default-scheduler "nodeName: $node")
gd_refused "refused, naming the node and the accepted form" "$out" \
	"spec\.nodeName: node $node is managed by Slurm \(it has the taint slinky\.slurm\.net/managed-node\), and a pod created with spec\.nodeName is placed by no scheduler, so Slurm would not know it runs there; leave spec\.nodeName unset and set schedulerName: slurm-bridge to run on Slurm's nodes through Slurm" \
	"$ns" pinned
out=$(gd_apply "$ns" pinned-bridge slurm-bridge "nodeName: $node, tolerations: $GD_TOL")
gd_refused "schedulerName slurm-bridge does not make it acceptable" "$out" \
	"spec\.nodeName: node $node is managed by Slurm" "$ns" pinned-bridge
out=$(gd_apply "$ns" elsewhere default-scheduler "nodeName: no-such-node")
gd_admitted "a nodeName that is not Slurm's is admitted" "$out" "$ns" elsewhere

scenario "guard: an update that adds the toleration is refused"
out=$(gd_apply "$ns" later default-scheduler)
gd_admitted "a pod without the toleration is admitted" "$out" "$ns" later
# Added, the only change Kubernetes allows to tolerations.
tol="{\"key\": \"$GD_TAINT\", \"operator\": \"Exists\", \"effect\": \"NoExecute\"}"
if [ -n "$(pod_field "$ns" later '{.spec.tolerations}')" ]; then
	patch="[{\"op\": \"add\", \"path\": \"/spec/tolerations/-\", \"value\": $tol}]"
else
	patch="[{\"op\": \"add\", \"path\": \"/spec/tolerations\", \"value\": [$tol]}]"
fi
out=$(k -n "$ns" patch pod later --type=json -p "$patch" 2>&1)
check_match "adding the toleration is refused" "$out" \
	"denied the request: spec\.tolerations\[[0-9]+\]: tolerates slinky\.slurm\.net/managed-node"
echo "       message: ${out#*denied the request: }"
check_eq "  and the pod does not have it" \
	"$(pod_field "$ns" later "{.spec.tolerations[?(@.key==\"$GD_TAINT\")].key}")" ""

scenario "guard: the same pods in an exempt namespace are admitted"
made_exempt=0
if ! k get namespace "$GD_EXEMPT" >/dev/null 2>&1; then
	k create namespace "$GD_EXEMPT" >/dev/null && made_exempt=1
	wait_for 30 k -n "$GD_EXEMPT" get serviceaccount default
fi
sfx=$RANDOM
out=$(gd_apply "$GD_EXEMPT" "e2e-other-$sfx" default-scheduler "tolerations: $GD_TOL")
gd_admitted "a pod of another scheduler tolerating the taint" "$out" "$GD_EXEMPT" "e2e-other-$sfx"
out=$(gd_apply "$GD_EXEMPT" "e2e-everything-$sfx" default-scheduler "tolerations: [{operator: Exists}]")
gd_admitted "a pod tolerating every taint" "$out" "$GD_EXEMPT" "e2e-everything-$sfx"
out=$(gd_apply "$GD_EXEMPT" "e2e-pinned-$sfx" default-scheduler "nodeName: $node, tolerations: $GD_TOL")
gd_admitted "a pod created with nodeName $node" "$out" "$GD_EXEMPT" "e2e-pinned-$sfx"
# Gone before the next file, which may use the namespace too.
if [ "$made_exempt" = 1 ]; then
	k delete namespace "$GD_EXEMPT" --wait=true --timeout=120s >/dev/null
else
	k -n "$GD_EXEMPT" delete pod "e2e-other-$sfx" "e2e-everything-$sfx" "e2e-pinned-$sfx" \
		--wait=false --ignore-not-found >/dev/null
fi

scenario "guard: ordinary and bridge-scheduled pods are unaffected"
out=$(gd_apply "$ns" plain default-scheduler)
gd_admitted "a pod without the toleration or a nodeName" "$out" "$ns" plain
out=$(gd_apply "$ns" usual default-scheduler \
	"tolerations: [{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}]")
gd_admitted "a pod tolerating other NoExecute taints by key" "$out" "$ns" usual
out=$(gd_apply "$ns" bridged slurm-bridge "tolerations: $GD_TOL")
gd_admitted "a pod of slurm-bridge tolerating the taint, outside enabled namespaces" "$out" "$ns" bridged
pod_yaml "$en" placed 1 256Mi | k apply -f - >/dev/null
check "a bridge pod of an enabled namespace is placed through Slurm" \
	wait_for 30 pod_has "$en" placed "$JP_JOBID"
out=$(gd_pod "$en" mutated default-scheduler "tolerations: $GD_TOL" |
	sed 's/schedulerName: default-scheduler, //' | k create -f - 2>&1)
gd_admitted "a pod the webhook gives schedulerName slurm-bridge" "$out" "$en" mutated
check_eq "  it has schedulerName slurm-bridge" "$(pod_field "$en" mutated '{.spec.schedulerName}')" slurm-bridge

scenario "guard: an extender's pods may tolerate the taint where the bridge manages the namespace"
# bridge-up.sh: managedNamespaceSelector slurm-bridge.io/managed=true, and
# --extender-scheduler default-scheduler (t_97's stock kube-scheduler).
ext=$(new_ns)
k label namespace "$ext" slurm-bridge.io/managed=true >/dev/null
sleep 1
out=$(gd_apply "$ext" extpod default-scheduler "tolerations: $GD_TOL")
gd_admitted "a default-scheduler pod in a namespace managedNamespaceSelector picks" "$out" "$ext" extpod
out=$(gd_apply "$ext" notext my-scheduler "tolerations: $GD_TOL")
gd_refused "but not another scheduler's" "$out" \
	"spec\.tolerations\[0\]: tolerates slinky\.slurm\.net/managed-node, which only pods scheduled by slurm-bridge may \(schedulerName: slurm-bridge[^;]* or default-scheduler; this pod has my-scheduler\)" \
	"$ext" notext

# Bound to no node that exists: no kubelet confirms its deletion.
k -n "$ns" delete pod elsewhere --grace-period=0 --force >/dev/null 2>&1
k delete namespace "$ns" "$en" "$ext" --wait=false >/dev/null
