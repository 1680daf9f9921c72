# shellcheck shell=bash
# The scheduler-extender API: a stock kube-scheduler (built from Go modules,
# like kube-apiserver) configured with slurm-bridge as its extender places
# a pod with schedulerName default-scheduler on the node Slurm allocated.
# The namespace is managed through the config's managedNamespaceSelector, not
# the webhook's label, so the pod keeps default-scheduler.
# The extender API answers only clients with a certificate from --client-ca,
# and the stack's bridge has none: it refuses every call, and steps aside for
# one on 8096 over TLS (the stack's 127.0.0.1 certificate) with --client-ca
# (the cluster CA) and the default --client-name; the client certificate of
# kube-scheduler and of curl here is one for slurm-bridge-extender-client.

ext_dir=$(mktemp -d)
ext_sched=
ext_stop() { [ -n "$ext_sched" ] && kill "$ext_sched" 2>/dev/null && wait "$ext_sched" 2>/dev/null; ext_sched=; }
ext_url=https://127.0.0.1:8096
ext_tls=(--cacert "$CA_CERT" --cert "$ext_dir/client.crt" --key "$ext_dir/client.key")
ext_post() {  # ext_post VERB JSON: the bridge's answer
	curl -s "${ext_tls[@]}" -H 'Content-Type: application/json' --data-binary "$2" \
		"$ext_url/$1"
}
ext_pod() {  # ext_pod NS NAME: a default-scheduler pod that tolerates the taint
	cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1}
spec:
  schedulerName: default-scheduler
  terminationGracePeriodSeconds: 0
  tolerations: [{key: slinky.slurm.net/managed-node, operator: Exists}]
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

# Without --client-ca, the extender API is refused, naming the flag (waited
# for: the stack's bridge may be restarting).
ext_refused() {
	[[ $(curl -s -w ' %{http_code}' -H 'Content-Type: application/json' --data-binary '{}' \
		"http://127.0.0.1:$BRIDGE_PORT/filter") =~ --client-ca.*\ 403$ ]]
}
check "the stack's bridge (no --client-ca) refuses /filter with 403, naming --client-ca" \
	wait_for 30 ext_refused
stack_bridge=$(stack_pid "$BRIDGE_PIDFILE")
[ -n "$stack_bridge" ] && kill "$stack_bridge" && wait_for 15 bash -c "! kill -0 $stack_bridge 2>/dev/null"
stack_issue_cert "$ext_dir/client" /CN=slurm-bridge-extender-client clientAuth
"${STACK_EXEC[@]}" "$BRIDGE_BIN" --kubeconfig "$BRIDGE_KUBECONFIG" --config "$BRIDGE_CONFIG" \
	--listen 127.0.0.1:8096 --tls-cert "$ADMISSION_CERT" --tls-key "$ADMISSION_KEY" \
	--client-ca "$CA_CERT" >"$ext_dir/bridge.log" 2>&1 &
ext_bridge=$!
check "a bridge with --client-ca takes over, ready" \
	wait_for 60 curl -sf --cacert "$CA_CERT" "$ext_url/readyz"

# The extender's answers, straight from its API.
out=$(ext_post filter '{"Pod": {"metadata": {"name": "x", "namespace": "'"$other"'"}}, "NodeNames": ["n1", "n2"]}')
check_match "/filter passes every node for a pod it does not manage" "$out" '"NodeNames":\["n1","n2"\]'
out=$(ext_post filter '{"NodeNames": ["n1"]}')
check_match "/filter names what is missing in a bad call" "$out" 'ExtenderArgs.Pod is missing'
code=$(curl -s -o /dev/null -w '%{http_code}' "${ext_tls[@]}" -H 'Content-Type: application/json' \
	--data-binary '{not json' "$ext_url/bind")
check_eq "a body that is not JSON gets a 400" "$code" 400

ext_scheduler_config "$ext_url" "  enableHTTPS: true
  tlsConfig: {certFile: $ext_dir/client.crt, keyFile: $ext_dir/client.key, caFile: $CA_CERT}" \
	>"$ext_dir/config.yaml"
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
kill "$ext_bridge" 2>/dev/null; wait "$ext_bridge" 2>/dev/null
rm -rf "$ext_dir"
"$E2E_DIR/../../scripts/stack/bridge-up.sh" >/dev/null
