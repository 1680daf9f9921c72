#!/usr/bin/env bash
# Brings up the Kubernetes half of the local stack (idempotent):
#   PKI -> etcd -> kube-apiserver -> kube-controller-manager -> kwok
#   -> fake Nodes n1..nN (one per Slurm node) -> wait until all are Ready.
# There is no kubelet and no kube-scheduler: kwok plays the kubelet for Nodes
# annotated kwok.x-k8s.io/node=fake, and binding pods is slurm-bridge's job.
set -euo pipefail
# shellcheck source=scripts/stack/stack-env.sh
. "$(dirname "$0")/../stack-env.sh"
stack_validate_nodes

K8S_DIR=$STACK_SCRIPTS/k8s
log() { echo "k8s: $*"; }
die() { echo "k8s: ERROR: $*" >&2; exit 1; }

# Env var, then PATH, then the build-k8s.sh cache (building if missing).
# etcd: Debian's /usr/bin/etcd (3.4) is on PATH and works with 1.34.
resolve_binaries() {
	# The scripts, tests and demo need a kubectl: built with the rest when
	# the machine has none.  (kube-scheduler is not run by the stack: the
	# extender e2e and the bench build it when they need it.)
	local kubectl=()
	command -v kubectl >/dev/null 2>&1 || kubectl=(KUBECTL=kubectl)
	stack_resolve_bins ETCD=etcd KUBE_APISERVER=kube-apiserver \
		KUBE_CONTROLLER_MANAGER=kube-controller-manager KWOK=kwok "${kubectl[@]}"
}

# api_curl PATH [CURL_ARGS...]: curl as admin (client cert) against the apiserver.
api_curl() {
	local path=$1; shift
	curl -fsS --max-time 10 --cacert "$PKI_DIR/ca.crt" \
		--cert "$PKI_DIR/admin.crt" --key "$PKI_DIR/admin.key" "$@" "$APISERVER_URL$path"
}

etcd_ok() { curl -fsS --max-time 2 "http://$LOCAL_IP:$ETCD_PORT/health" | grep -q '"health":"true"'; }
# --election-timeout=500 (default 1000): a lone member still waits one
# randomised election timeout (1-2 s) before it serves; halve that.
start_etcd() {
	mkdir -p "$STACK_DIR/etcd"; chmod 0700 "$STACK_DIR/etcd"
	stack_ensure etcd etcd etcd_ok 30 "$ETCD" \
		--name=stack --data-dir="$STACK_DIR/etcd" \
		--listen-client-urls="http://$LOCAL_IP:$ETCD_PORT" \
		--advertise-client-urls="http://$LOCAL_IP:$ETCD_PORT" \
		--listen-peer-urls="http://$LOCAL_IP:$ETCD_PEER_PORT" \
		--initial-advertise-peer-urls="http://$LOCAL_IP:$ETCD_PEER_PORT" \
		--initial-cluster="stack=http://$LOCAL_IP:$ETCD_PEER_PORT" \
		--quota-backend-bytes=$((4 * 1024 * 1024 * 1024)) \
		--election-timeout=500 \
		--logger=zap --log-outputs=stderr
}

# release_flags: the flags of this Kubernetes release, in
# APISERVER_RELEASE_FLAGS and KCM_RELEASE_FLAGS.
#  - 1.34 with Debian's etcd 3.4: two gates off (see start_apiserver).
#  - 1.36 and later: the built-in gang API, scheduling.k8s.io Workload and
#    PodGroup (GenericWorkload), served as v1beta1 from 1.37 (off unless
#    asked for), and a Job asking for a gang itself (WorkloadWithJob), so
#    the Job controller makes its Workload and PodGroup; from 1.37 a
#    PodGroup's topology constraint (TopologyAwareWorkloadScheduling),
#    CompositePodGroup (alpha, scheduling.k8s.io/v1alpha3: PodGroups
#    grouped into one scheduling unit) and a PodGroup's own claims
#    (DRAWorkloadResourceClaims, beta).  KUBE_GATES adds
#    gates (comma-separated) to both daemons.
release_flags() {
	local gates=() extra=() minor=${KUBE_MINOR#1.}
	APISERVER_RELEASE_FLAGS=() KCM_RELEASE_FLAGS=()
	if [ "$ETCD_VERSION" = debian ]; then
		gates+=(WatchList=false SizeBasedListCostEstimate=false)
	fi
	if [ "$minor" -ge 36 ] 2>/dev/null; then
		gates+=(GenericWorkload=true WorkloadWithJob=true)
		if [ "$minor" -ge 37 ]; then
			# A PodGroup's spec.schedulingConstraints.topology.
			gates+=(TopologyAwareWorkloadScheduling=true CompositePodGroup=true)
			# A PodGroup's spec.resourceClaims (beta, off by default).
			gates+=(DRAWorkloadResourceClaims=true)
			APISERVER_RELEASE_FLAGS+=(--runtime-config=scheduling.k8s.io/v1beta1=true,scheduling.k8s.io/v1alpha3=true)
		else
			APISERVER_RELEASE_FLAGS+=(--runtime-config=scheduling.k8s.io/v1alpha2=true)
		fi
	fi
	if [ -n "${KUBE_GATES:-}" ]; then
		IFS=, read -ra extra <<<"$KUBE_GATES"
		gates+=("${extra[@]}")
	fi
	if [ ${#gates[@]} -gt 0 ]; then
		APISERVER_RELEASE_FLAGS+=("--feature-gates=$(IFS=,; echo "${gates[*]}")")
		KCM_RELEASE_FLAGS+=("--feature-gates=$(IFS=,; echo "${gates[*]}")")
	fi
}

apiserver_ok() { [ "$(api_curl /readyz 2>/dev/null)" = ok ]; }
start_apiserver() {
	# --endpoint-reconciler-type=none: the "kubernetes" Service cannot have a
	# loopback endpoint (validation rejects 127.0.0.0/8) and nothing runs
	# in-cluster anyway. The webhook plugins are in 1.34's defaults; listed
	# to make the dependency explicit.
	# The release's flags (release_flags): on 1.34 with Debian's etcd 3.4,
	# --feature-gates=WatchList=false: etcd 3.4 lacks RequestWatchProgress,
	# so the watch cache answers streaming-list watches (sendInitialEvents,
	# which kwok's informers send) with an error *event*; client-go then
	# retries forever instead of falling back, kwok's caches go stale and its
	# lease renewals fail with conflicts. With the gate off the request is
	# rejected up front (422) and clients fall back to plain LIST+WATCH.
	# SizeBasedListCostEstimate=false: its per-resource key stats ask the
	# watch cache for the current etcd revision, which without progress
	# notifications times out every few seconds ("Error getting keys").
	# --shutdown-watch-termination-grace-period: without it one open watch
	# (kubectl -w, the bridge) keeps a SIGTERMed apiserver alive for ~65 s.
	# --enable-aggregator-routing: the apiserver calls a webhook Service at
	# its endpoints' pod IPs (the stack has no kube-proxy), as it does on
	# clusters whose control plane is off the pod network.
	# --watch-cache-sizes=configmaps#0: configmaps (which the bridge does not
	# use) are watched straight from etcd, so the libk8s integration test
	# can make a real etcd compaction answer a re-watch with 410 Gone.
	release_flags
	stack_ensure kube-apiserver kube-apiserver apiserver_ok 90 "$KUBE_APISERVER" \
		--etcd-servers="http://$LOCAL_IP:$ETCD_PORT" \
		--bind-address="$LOCAL_IP" --advertise-address="$LOCAL_IP" --secure-port="$APISERVER_PORT" \
		--tls-cert-file="$PKI_DIR/apiserver.crt" --tls-private-key-file="$PKI_DIR/apiserver.key" \
		--client-ca-file="$PKI_DIR/ca.crt" \
		--kubelet-client-certificate="$PKI_DIR/apiserver-kubelet-client.crt" \
		--kubelet-client-key="$PKI_DIR/apiserver-kubelet-client.key" \
		--kubelet-preferred-address-types=InternalIP \
		--authorization-mode=Node,RBAC \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$PKI_DIR/sa.pub" \
		--service-account-signing-key-file="$PKI_DIR/sa.key" \
		--service-cluster-ip-range=10.0.0.0/24 \
		--enable-admission-plugins=MutatingAdmissionWebhook,ValidatingAdmissionWebhook \
		--allow-privileged=true \
		--endpoint-reconciler-type=none \
		--enable-aggregator-routing=true \
		"${APISERVER_RELEASE_FLAGS[@]}" \
		--shutdown-watch-termination-grace-period=1s \
		--watch-cache-sizes=configmaps#0 \
		--profiling=false
}

kcm_ok() { curl -fsSk --max-time 2 "https://$LOCAL_IP:$KCM_PORT/healthz" | grep -qx ok; }
start_kcm() {
	release_flags
	# Higher client QPS than the default 20/30 so the Job/GC controllers keep
	# up with thousands of pods in benchmarks. No --authentication-kubeconfig:
	# delegated authn wants the front-proxy CA (requestheader), which this
	# stack does not have, and logs errors forever; /healthz needs no authn.
	stack_ensure kube-controller-manager kube-controller-manager kcm_ok 60 "$KUBE_CONTROLLER_MANAGER" \
		--kubeconfig="$STACK_DIR/kube-controller-manager.kubeconfig" \
		--bind-address="$LOCAL_IP" --secure-port="$KCM_PORT" \
		--service-account-private-key-file="$PKI_DIR/sa.key" \
		--root-ca-file="$PKI_DIR/ca.crt" \
		--cluster-signing-cert-file="$PKI_DIR/ca.crt" --cluster-signing-key-file="$PKI_DIR/ca.key" \
		--use-service-account-credentials=true \
		--leader-elect=false \
		--controllers='*' \
		--kube-api-qps=200 --kube-api-burst=400 \
		"${KCM_RELEASE_FLAGS[@]}" \
		--profiling=false
}

kwok_ok() { curl -fsS --max-time 2 "http://$LOCAL_IP:$KWOK_PORT/healthz" >/dev/null; }

# A node is only managed by the kwok process that holds its Lease in
# kube-node-lease. Every kwok process has a new random holder identity, so a
# restarted kwok would leave the nodes alone (pods stay Pending, deletions
# hang) until the previous holder's leases expire, 40 s later, while the nodes
# still look Ready. The stale leases are ours (only kwok nodes exist here):
# drop them so the new kwok takes over at once.
prestart_kwok() {
	api_curl /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases -X DELETE >/dev/null 2>&1 || true
}

# lease_seconds: the duration of kwok's node leases, which it renews every
# quarter of it.  40 s (a renewal every 10 s) up to 64 nodes; on a large
# stack 120 s, so that a thousand nodes are 33 renewals a second, not 100,
# each a write through the apiserver to etcd.  The renewal (30 s) stays
# within kube-controller-manager's grace (--node-monitor-grace-period,
# 50 s) before it calls a node NotReady.
lease_seconds() { if stack_large; then echo 120; else echo 40; fi; }

start_kwok() {
	# kwok.yaml holds options only. Pod stages come from KWOK_STAGES, by
	# default kwok-stages-keep-finalizers.yaml: kwok's "fast" set, except
	# that a deleted pod keeps its finalizers the way it does with a real
	# kubelet (the bridge's finalizer must be honoured). KWOK_STAGES=builtin
	# uses kwok's own set, which strips every finalizer.
	local stages=() file=${KWOK_STAGES:-$K8S_DIR/kwok-stages-keep-finalizers.yaml} copy
	if [ "$file" != builtin ]; then
		# Named by its content: a changed set changes the command line,
		# and so restarts kwok.
		copy=$STACK_DIR/kwok-stages-$(sha256sum "$file" | cut -c1-12).yaml
		[ -f "$copy" ] || cp "$file" "$copy"
		stages=(--config="$copy")
	fi
	stack_ensure kwok kwok kwok_ok 30 "$KWOK" \
		--kubeconfig="$STACK_DIR/kwok.kubeconfig" \
		--config="$K8S_DIR/kwok.yaml" "${stages[@]}" \
		--manage-all-nodes=false \
		--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
		--server-address="$LOCAL_IP:$KWOK_PORT" \
		--node-lease-duration-seconds="$(lease_seconds)" \
		--cidr=10.244.0.1/16 --node-ip="$LOCAL_IP"
}

# node_yaml K: Node nK, twin of the Slurm node nK.
node_yaml() {
	local k=$1
	cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: n$k
  annotations:
    kwok.x-k8s.io/node: fake
  labels:
    kubernetes.io/hostname: n$k
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
    slurm-bridge.io/leaf-switch: $(stack_node_leaf "$k")$(stack_has_blocks &&
		printf '\n    slurm-bridge.io/block: %s' "$(stack_node_block "$k")")
spec:
  taints:
  - key: slinky.slurm.net/managed-node
    value: slurm-bridge
    effect: NoSchedule
status:
  capacity: &res
    cpu: "32"
    memory: 128Gi
    nvidia.com/gpu: "8"
    pods: "256"
  allocatable: *res
EOF
}

# Applies n1..nN and deletes kwok nodes beyond N (left from a bigger stack).
sync_nodes() {
	local k
	for ((k = 1; k <= NODES; k++)); do node_yaml "$k"; done >"$STACK_DIR/nodes.yaml"
	# kubectl apply compares every object on the client: a thousand
	# unchanged nodes are minutes of CPU.  A large stack skips it when the
	# file is the one it applied last and every node is there.
	if stack_large && cmp -s "$STACK_DIR/nodes.yaml" "$STACK_DIR/nodes.applied.yaml" &&
		[ "$(stack_kubectl get nodes -l type=kwok --no-headers 2>/dev/null |
			awk -v n="$NODES" '$1 ~ /^n[0-9]+$/ && substr($1, 2) + 0 <= n' | wc -l)" -eq "$NODES" ]; then
		log "$NODES nodes as last applied: not applied again"
	else
		rm -f "$STACK_DIR/nodes.applied.yaml"
		if stack_kubectl apply -f "$STACK_DIR/nodes.yaml" >"$STACK_DIR/nodes.apply.out"; then
			if stack_large; then cp "$STACK_DIR/nodes.yaml" "$STACK_DIR/nodes.applied.yaml"; fi
		fi
		grep -v ' unchanged$' "$STACK_DIR/nodes.apply.out" || true
	fi
	# One DELETE on the collection: kubectl deletes one object per request,
	# rate-limited to 5/s on the client side (12 s for 60 nodes).
	local keep selector extra
	keep=$(stack_node_names | paste -sd,)
	selector="type=kwok,kubernetes.io/hostname notin ($keep)"
	extra=$(stack_kubectl get nodes -l "$selector" -o name | wc -l)
	if [ "$extra" -gt 0 ]; then
		# Up to a minute (curl takes the last --max-time): 996 nodes
		# took longer than api_curl's 10 s going from 1000 to 4.
		api_curl /api/v1/nodes -G --data-urlencode "labelSelector=$selector" -X DELETE \
			--max-time 60 >/dev/null
		log "deleted $extra nodes beyond n$NODES"
	fi
}

# All of n1..nN are Ready (nodes beyond N may still be going away), and the
# running kwok has renewed each node's lease since it started, i.e. it really
# manages them (a Ready condition can be left over from an earlier kwok).
nodes_ready() {
	local since
	since=$(cat "$RUN_DIR/kwok.started" 2>/dev/null || true)
	[ "$(stack_kubectl get nodes -l type=kwok --no-headers 2>/dev/null |
		awk -v n="$NODES" '$1 ~ /^n[0-9]+$/ && substr($1, 2) + 0 <= n && $2 == "Ready"' | wc -l)" -eq "$NODES" ] || return 1
	[ "$(stack_kubectl get leases -n kube-node-lease --no-headers \
		-o custom-columns=NAME:.metadata.name,RENEW:.spec.renewTime 2>/dev/null |
		awk -v n="$NODES" -v since="$since" \
			'$1 ~ /^n[0-9]+$/ && substr($1, 2) + 0 <= n && substr($2, 1, 19) >= since' | wc -l)" -eq "$NODES" ]
}

main() {
	mkdir -p "$RUN_DIR" "$LOG_DIR"
	resolve_binaries
	"$K8S_DIR/pki.sh"
	start_etcd
	start_apiserver
	start_kcm
	start_kwok
	sync_nodes
	# 60 s, and a second more for every 10 nodes past 64.
	local extra=0
	stack_large && extra=$(( (NODES - STACK_SMALL_NODES) / 10 ))
	stack_wait "$NODES Ready nodes" $((60 + extra)) nodes_ready || {
		stack_kubectl get nodes >&2 || true
		stack_log_tail kwok
		die "nodes did not become Ready"
	}
	log "ready: $NODES nodes, KUBECONFIG=$KUBECONFIG"
}

main "$@"
