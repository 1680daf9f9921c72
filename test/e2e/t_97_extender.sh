# shellcheck shell=bash
# The scheduler-extender API: a stock kube-scheduler (built from Go modules,
# like kube-apiserver) configured with slurm-bridge as its extender places
# a pod with schedulerName default-scheduler on the node Slurm allocated.
# The namespace is managed through the config's managedNamespaceSelector, not
# the webhook's label, so the pod keeps default-scheduler.

ext_dir=$(mktemp -d)
ext_sched=
ext_stop() { [ -n "$ext_sched" ] && kill "$ext_sched" 2>/dev/null && wait "$ext_sched" 2>/dev/null; ext_sched=; }
ext_post() {  # ext_post VERB JSON: the bridge's answer
	curl -s -H 'Content-Type: application/json' --data-binary "$2" \
		"http://127.0.0.1:$BRIDGE_PORT/$1"
}
ext_pod() {  # ext_pod NS NAME: a default-scheduler pod that tolerates the taint
	cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1}
spec:
  schedulerName: default-scheduler
  terminationGracePeriodSeconds: 0
  tolerations: [{key: slinky.slurm.net/managed-node, operator: Exists, effect: NoExecute}]
  containers:
  - {name: main, image: busybox, command: [sleep, "3600"], resources: {requests: {cpu: "1", memory: 64Mi}}}
YAML
}

scenario "scheduler extender: a stock kube-scheduler defers to Slurm"
ns=$(new_ns)
k label namespace "$ns" slurm-bridge.io/managed=true >/dev/null
# A pod the bridge does not manage that tolerates the taint: the guard
# admits one only in an exempt namespace (t_87_guard.sh), such as the
# Slurm node daemons' (made here if the stack has none).
other=slurm other_made=0 plain=e2e-plain-$RANDOM
if ! k get namespace "$other" >/dev/null 2>&1; then
	k create namespace "$other" >/dev/null && other_made=1
	wait_for 30 k -n "$other" get serviceaccount default
fi
ext_pod "$ns" placed | k apply -f - >/dev/null
ext_pod "$other" "$plain" | k apply -f - >/dev/null
sleep 2
check_eq "without kube-scheduler the pod waits (no scheduler of its name)" \
	"$(pod_field "$ns" placed "$JP_NODE")" ""
check_eq "and nothing was submitted for it" "$(squeue -h -n "$ns/placed" -o %i | wc -l)" 0

# The extender's answers, straight from its API.
out=$(ext_post filter '{"Pod": {"metadata": {"name": "x", "namespace": "'"$other"'"}}, "NodeNames": ["n1", "n2"]}')
check_match "/filter passes every node for a pod it does not manage" "$out" '"NodeNames":\["n1","n2"\]'
out=$(ext_post filter '{"NodeNames": ["n1"]}')
check_match "/filter names what is missing in a bad call" "$out" 'ExtenderArgs.Pod is missing'
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
	--data-binary '{not json' "http://127.0.0.1:$BRIDGE_PORT/bind")
check_eq "a body that is not JSON gets a 400" "$code" 400

ext_scheduler_config "http://127.0.0.1:$BRIDGE_PORT" >"$ext_dir/config.yaml"
stack_resolve_bin KUBE_SCHEDULER kube-scheduler build
"$KUBE_SCHEDULER" --config "$ext_dir/config.yaml" --secure-port 0 \
	>"$ext_dir/kube-scheduler.log" 2>&1 &
ext_sched=$!
check "kube-scheduler binds the pod" wait_for 60 pod_has "$ns" placed "$JP_NODE"
node=$(pod_field "$ns" placed "$JP_NODE")
jobid=$(pod_field "$ns" placed "$JP_JOBID")
check "the pod carries its Slurm job id" test -n "$jobid"
check_eq "Slurm runs the job" "$(job_field "$jobid" JobState)" RUNNING
check_eq "on the node the pod was bound to" "$(job_field "$jobid" NodeList)" "$node"
check_eq "the job is named after the pod" "$(job_field "$jobid" JobName)" "$ns/placed"
check_eq "the pod kept schedulerName default-scheduler" \
	"$(pod_field "$ns" placed '{.spec.schedulerName}')" default-scheduler
check "a pod of an unmanaged namespace is bound by kube-scheduler as usual" \
	wait_for 30 pod_has "$other" "$plain" "$JP_NODE"
check_eq "without a Slurm job" "$(pod_field "$other" "$plain" "$JP_JOBID")" ""
k -n "$ns" delete pod placed --wait=true >/dev/null
gone() { [ "$(job_field "$jobid" JobState)" != RUNNING ]; }
check "deleting the pod ends its job (the bridge watches extender pods)" wait_for 20 gone
ext_stop
k delete namespace "$ns" --wait=false >/dev/null
if [ "$other_made" = 1 ]; then
	k delete namespace "$other" --wait=true --timeout=120s >/dev/null
else
	k -n "$other" delete pod "$plain" --wait=false >/dev/null
fi
rm -rf "$ext_dir"
