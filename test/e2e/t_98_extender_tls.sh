# shellcheck shell=bash
# The extender over TLS with client certificates (--client-ca): a stock
# kube-scheduler that presents a client certificate the CA signed for the
# default --client-name (slurm-bridge-extender-client) places a pod through
# it; a client without one, with one from another CA, with the CA's
# serving certificate (not for clientAuth) or with another name the CA
# signed (the stack's admin) cannot bind; health and metrics stay open to
# probes.
# The stack's bridge steps aside for one on 8099 serving the stack's
# 127.0.0.1 certificate (pki/admission.crt) and trusting the cluster CA.

scenario "extender over TLS: only clients the --client-ca signed may call it"
tls_dir=$(mktemp -d)
pki=$STACK_DIR/pki
stack_bridge=$(stack_pid "$BRIDGE_PIDFILE")
[ -n "$stack_bridge" ] && kill "$stack_bridge" && wait_for 15 bash -c "! kill -0 $stack_bridge 2>/dev/null"
"${STACK_EXEC[@]}" "$BRIDGE_BIN" --kubeconfig "$BRIDGE_KUBECONFIG" --config "$BRIDGE_CONFIG" \
	--listen 127.0.0.1:8099 --tls-cert "$pki/admission.crt" --tls-key "$pki/admission.key" \
	--client-ca "$pki/ca.crt" >"$tls_dir/bridge.log" 2>&1 &
tls_bridge=$!
url=https://127.0.0.1:8099
check "it serves /healthz over TLS without a client certificate" \
	wait_for 20 curl -sf --cacert "$pki/ca.crt" "$url/healthz"
check "and /readyz once synced" wait_for 30 curl -sf --cacert "$pki/ca.crt" "$url/readyz"
body='{"PodName": "x", "PodNamespace": "y", "PodUID": "u", "Node": "n1"}'
code=$(curl -s -o "$tls_dir/out" -w '%{http_code}' --cacert "$pki/ca.crt" \
	-H 'Content-Type: application/json' --data-binary "$body" "$url/bind")
check_eq "/bind without a client certificate is refused" "$code" 403
check_match "saying what is needed" "$(cat "$tls_dir/out")" "client certificate signed by the --client-ca"
stack_issue_cert "$tls_dir/client" /CN=slurm-bridge-extender-client clientAuth
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
	-subj /CN=intruder -keyout "$tls_dir/other.key" -out "$tls_dir/other.crt" >/dev/null 2>&1
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$pki/ca.crt" \
	--cert "$tls_dir/other.crt" --key "$tls_dir/other.key" \
	-H 'Content-Type: application/json' --data-binary "$body" "$url/filter")
check "a certificate from another CA gets no answer from /filter" test "$code" = 403 -o "$code" = 000
code=$(curl -s -o "$tls_dir/out" -w '%{http_code}' --cacert "$pki/ca.crt" \
	--cert "$pki/admission.crt" --key "$pki/admission.key" \
	-H 'Content-Type: application/json' --data-binary "$body" "$url/bind")
check_eq "the CA's serving certificate (serverAuth only) is refused" "$code" 403
check_match "for its purpose" "$(cat "$tls_dir/out")" "extendedKeyUsage lacks clientAuth"
code=$(curl -s -o "$tls_dir/out" -w '%{http_code}' --cacert "$pki/ca.crt" \
	--cert "$pki/admin.crt" --key "$pki/admin.key" \
	-H 'Content-Type: application/json' --data-binary "$body" "$url/bind")
check_eq "a client certificate of the CA for another name (CN=admin) is refused" "$code" 403
check_match "for its name" "$(cat "$tls_dir/out")" "CN \(admin\) nor a DNS name"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$pki/ca.crt" \
	--cert "$tls_dir/client.crt" --key "$tls_dir/client.key" \
	-H 'Content-Type: application/json' --data-binary '{"NodeNames": ["n1"]}' "$url/filter")
check_eq "the CA's client certificate for slurm-bridge-extender-client gets an answer" "$code" 200
check "plain HTTP is not served" bash -c "! curl -sf http://127.0.0.1:8099/healthz"

ns=$(new_ns)
k label namespace "$ns" slurm-bridge.io/managed=true >/dev/null
ext_scheduler_config "$url" "  enableHTTPS: true
  tlsConfig: {certFile: $tls_dir/client.crt, keyFile: $tls_dir/client.key, caFile: $pki/ca.crt}" \
	>"$tls_dir/config.yaml"
cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: placed, namespace: $ns}
spec:
  schedulerName: default-scheduler
  terminationGracePeriodSeconds: 0
  tolerations: [{key: slinky.slurm.net/managed-node, operator: Exists}]
  containers:
  - {name: main, image: busybox, resources: {requests: {cpu: "1", memory: 64Mi}}}
YAML
stack_resolve_bin KUBE_SCHEDULER kube-scheduler build
"$KUBE_SCHEDULER" --config "$tls_dir/config.yaml" --secure-port 0 \
	>"$tls_dir/kube-scheduler.log" 2>&1 &
tls_sched=$!
check "kube-scheduler with a client certificate binds the pod through the extender" \
	wait_for 60 pod_has "$ns" placed "$JP_NODE"
jobid=$(pod_field "$ns" placed "$JP_JOBID")
check_eq "on the node Slurm allocated" "$(job_field "$jobid" NodeList)" "$(pod_field "$ns" placed "$JP_NODE")"
kill "$tls_sched" 2>/dev/null; wait "$tls_sched" 2>/dev/null
k delete namespace "$ns" --wait=true --timeout=60s >/dev/null
kill "$tls_bridge" 2>/dev/null; wait "$tls_bridge" 2>/dev/null
out=$("${STACK_EXEC[@]}" "$BRIDGE_BIN" --kubeconfig "$BRIDGE_KUBECONFIG" --config "$BRIDGE_CONFIG" \
	--listen 127.0.0.1:8099 --client-ca "$pki/ca.crt" 2>&1)
check_match "--client-ca without a certificate is a startup error" "$out" "needs --tls-cert"
rm -rf "$tls_dir"
"$E2E_DIR/../../scripts/stack/bridge-up.sh" >/dev/null
