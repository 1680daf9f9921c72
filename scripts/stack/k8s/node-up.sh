#!/usr/bin/env bash
# make node-up: a real kubelet node beside the kwok nodes; --down removes it.
#
# make node-up: one real Kubernetes node next to the kwok nodes, for the
# system pods (the in-cluster daemons of make in-cluster-test):
#
#   containerd (Debian's) + runc -> kubelet (built at the API server's
#   version) -> Node $SYSTEM_NODE, Ready, labelled and tainted as a system
#   node; kube-scheduler for the pods of the default scheduler.
#
# The node's pods are on a bridge of their own (CNI bridge + host-local,
# $POD_CIDR). The stack has no kube-proxy and every daemon of the stack
# listens on 127.0.0.1, so two NAT rules stand in for what a cluster's
# network gives a pod: the kubernetes Service (10.0.0.1:443) and Slurm's
# controller ($POD_GATEWAY:$SLURMCTLD_PORT) lead to 127.0.0.1 (the kernel's
# route_localnet, as kube-proxy uses it for node ports on localhost). The
# API server reaches a webhook Service at its pods' IPs
# (--enable-aggregator-routing, see up.sh).
#
# The images of make images (build/images/*.tar) are imported into
# containerd's k8s.io namespace as docker.io/library/NAME:dev, which is what
# the image names slurm-bridge:dev etc. mean to the kubelet; nothing is ever
# pulled. The sandbox ("pause") image is slurm-bridge-pause:dev.
#
# NODE_DRA=1 makes it a node with devices, for make dra-node-test:
# containerd 2.x (built by dra-build.sh; it applies a driver's CDI edits to
# containers) and the DRA example driver's kubelet plugin, which publishes
# eight GPUs (gpu.example.com) in a ResourceSlice of the node and prepares
# the claims the kubelet hands it.
#
# Idempotent. `node-up.sh --down` stops the kubelet, its pods, the driver,
# containerd and kube-scheduler and deletes the Node (cluster-down does it
# too).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$here/../stack-env.sh"
top=$(dirname "$(dirname "$(dirname "$here")")")

log() { echo "node: $*"; }
die() { echo "node: ERROR: $*" >&2; exit 1; }

CTRD_DIR=$STACK_DIR/containerd
CTRD_STATE=$RUN_DIR/containerd
KUBELET_DIR=$STACK_DIR/kubelet
CNI_DIR=$STACK_DIR/cni
IMAGES_DIR=$top/build/images
SYSTEM_TAINT=node-role.kubernetes.io/system
CNI_BRIDGE=sbr0
CDI_DIR=$STACK_DIR/cdi
CTRD_BIN=containerd

ctr_k8s() { ctr --address "$CONTAINERD_SOCK" --namespace k8s.io "$@"; }

write_containerd_config() {
	local cdi=false cdi_dirs=""
	if [ -n "${NODE_DRA:-}" ]; then
		cdi=true cdi_dirs=$'\n'"  cdi_spec_dirs = [\"$CDI_DIR\"]"
	fi
	mkdir -p "$CTRD_DIR" "$CTRD_STATE" "$CNI_DIR"
	cat >"$CTRD_DIR/config.toml" <<EOF
version = 2
root = "$CTRD_DIR/root"
state = "$CTRD_STATE"
[grpc]
  address = "$CONTAINERD_SOCK"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/library/slurm-bridge-pause:dev"
  enable_cdi = $cdi$cdi_dirs
  # This machine denies lowering oom_score_adj (no CAP_SYS_RESOURCE), which
  # the kubelet asks for the sandbox (-998): keep it at containerd's own.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$CNI_DIR"
EOF
	cat >"$CNI_DIR/10-stack.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "stack",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$CNI_BRIDGE",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$POD_CIDR", "gateway": "$POD_GATEWAY" }]],
        "routes": [{ "dst": "0.0.0.0/0" }],
        "dataDir": "$CNI_DIR/ipam"
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
EOF
}

containerd_ok() { ctr --address "$CONTAINERD_SOCK" version >/dev/null 2>&1; }

start_containerd() {
	write_containerd_config
	mkdir -p "$CDI_DIR"
	# Its runc shim is found on PATH: the one of the same build.
	PATH=$(dirname "$CTRD_BIN"):$PATH stack_ensure containerd containerd \
		containerd_ok 30 "$CTRD_BIN" --config "$CTRD_DIR/config.toml"
}

# The DRA example driver's kubelet plugin, outside the cluster: ready once
# its ResourceSlice for the node is published.
driver_ok() {
	[ -n "$(stack_kubectl get resourceslices -o jsonpath="{.items[?(@.spec.nodeName==\"$SYSTEM_NODE\")].metadata.name}" 2>/dev/null)" ]
}
start_driver() {
	stack_ensure dra-driver dra-example-kub driver_ok 60 \
		"$DRA_DRIVER_DIR/dra-example-kubeletplugin" \
		--kubeconfig="$STACK_DIR/kubeconfig" --node-name="$SYSTEM_NODE" \
		--cdi-root="$CDI_DIR" \
		--kubelet-plugins-directory-path="$KUBELET_DIR/root/plugins" \
		--kubelet-registrar-directory-path="$KUBELET_DIR/root/plugins_registry"
}

# import_images: every OCI archive of make images that containerd does not
# have in this build (compared by the archive's digest).
import_images() {
	local tar name have want digest ref
	ls "$IMAGES_DIR"/*.tar >/dev/null 2>&1 || die "no images in $IMAGES_DIR (make images)"
	for tar in "$IMAGES_DIR"/*.tar; do
		name=$(basename "$tar" .tar)
		want=$(sha256sum "$tar" | cut -c1-16)
		have=$(cat "$CTRD_DIR/imported-$name" 2>/dev/null || true)
		if [ "$have" = "$want" ] && ctr_k8s images ls -q | grep -qx "docker.io/library/$name:dev"; then
			continue
		fi
		ctr_k8s images import --base-name "docker.io/library/$name" --digests "$tar" >/dev/null
		# The archive names the image NAME:dev; the kubelet asks for it as
		# docker.io/library/NAME:dev: that tag goes to this archive's
		# manifest, and the earlier imports' references go.
		digest=$(tar -xOf "$tar" index.json | jq -r '.manifests[0].digest')
		ctr_k8s images rm "docker.io/library/$name:dev" >/dev/null 2>&1 || true
		ctr_k8s images tag "docker.io/library/$name@$digest" "docker.io/library/$name:dev" >/dev/null
		for ref in $(ctr_k8s images ls -q | grep -E "^(docker.io/library/$name@)?sha256:" | grep -v -F "$digest"); do
			ctr_k8s images rm "$ref" >/dev/null 2>&1 || true
		done
		echo "$want" >"$CTRD_DIR/imported-$name"
		log "imported $name:dev"
	done
}

# nat_rules [-D]: the kubernetes Service and slurmctld, for pods (see the
# top); -D removes them again.
NAT_RULES=("-d 10.0.0.1 -p tcp --dport 443 -j DNAT --to-destination $LOCAL_IP:$APISERVER_PORT"
	"-d $POD_GATEWAY -p tcp --dport $SLURMCTLD_PORT -j DNAT --to-destination $LOCAL_IP:$SLURMCTLD_PORT")
nat_rules() {
	local rule
	if [ "${1:-}" = -D ]; then
		for rule in "${NAT_RULES[@]}"; do
			# shellcheck disable=SC2086
			while iptables -t nat -D PREROUTING -s "$POD_CIDR" $rule 2>/dev/null; do :; done
		done
		return 0
	fi
	sysctl -qw net.ipv4.conf.all.route_localnet=1 net.ipv4.ip_forward=1
	for rule in "${NAT_RULES[@]}"; do
		# shellcheck disable=SC2086
		iptables -t nat -C PREROUTING -s "$POD_CIDR" $rule 2>/dev/null ||
			iptables -t nat -A PREROUTING -s "$POD_CIDR" $rule
	done
}

# node_link: the node's own address, NODE_IP, on a link of its own (an
# empty bridge: this kernel has no dummy links).
node_link() {
	ip link show "$NODE_LINK" >/dev/null 2>&1 || ip link add "$NODE_LINK" type bridge
	ip -4 addr show dev "$NODE_LINK" | grep -q "inet $NODE_IP/" || ip addr add "$NODE_IP/32" dev "$NODE_LINK"
	ip link set "$NODE_LINK" up
}

write_kubelet_config() {
	mkdir -p "$KUBELET_DIR"
	cat >"$KUBELET_DIR/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
healthzBindAddress: $LOCAL_IP
healthzPort: $KUBELET_HEALTHZ_PORT
readOnlyPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI_DIR/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
cgroupDriver: cgroupfs
# This machine has cgroup v1, which the kubelet refuses from 1.35 on unless
# told otherwise.
failCgroupV1: false
failSwapOn: false
# The node is shared with the rest of the stack: no evictions for disk or
# memory pressure that the stack itself causes.
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
registerWithTaints:
- {key: $SYSTEM_TAINT, effect: NoSchedule}
podCIDR: $POD_CIDR
resolvConf: /etc/resolv.conf
serializeImagePulls: false
EOF
}

kubelet_ok() {
	curl -fsS --max-time 2 "http://$LOCAL_IP:$KUBELET_HEALTHZ_PORT/healthz" >/dev/null &&
		[ "$(stack_kubectl get node "$SYSTEM_NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

start_kubelet() {
	write_kubelet_config
	stack_ensure kubelet kubelet kubelet_ok 120 "$KUBELET" \
		--config="$KUBELET_DIR/config.yaml" \
		--kubeconfig="$STACK_DIR/kubelet.kubeconfig" \
		--root-dir="$KUBELET_DIR/root" --cert-dir="$KUBELET_DIR/pki" \
		--hostname-override="$SYSTEM_NODE" --node-ip="$NODE_IP" \
		--node-labels=slurm-bridge.io/system-node=true
	# A kubelet may not give its own node a role: the admin's part.
	stack_kubectl label node "$SYSTEM_NODE" --overwrite node-role.kubernetes.io/system= >/dev/null
}

scheduler_ok() { curl -fsSk --max-time 2 "https://$LOCAL_IP:$KUBE_SCHEDULER_PORT/healthz" | grep -qx ok; }
start_scheduler() {
	stack_ensure kube-scheduler kube-scheduler scheduler_ok 60 "$KUBE_SCHEDULER" \
		--kubeconfig="$STACK_DIR/kube-scheduler.kubeconfig" \
		--authentication-kubeconfig="$STACK_DIR/kube-scheduler.kubeconfig" \
		--authorization-kubeconfig="$STACK_DIR/kube-scheduler.kubeconfig" \
		--authentication-tolerate-lookup-failure=true \
		--bind-address="$LOCAL_IP" --secure-port="$KUBE_SCHEDULER_PORT" \
		--leader-elect=false --profiling=false
}

# down: the kubelet and kube-scheduler, then the node's containers (they
# outlive the kubelet), their network namespaces and addresses, and
# containerd; the Node object goes too.
down() {
	stack_stop_many 30 "kubelet|$RUN_DIR/kubelet.pid|kubelet" "kube-scheduler|$RUN_DIR/kube-scheduler.pid|kube-scheduler" \
		"dra-driver|$RUN_DIR/dra-driver.pid|dra-example-kub"
	if containerd_ok; then
		local t
		for t in $(ctr_k8s tasks ls -q 2>/dev/null); do
			ctr_k8s tasks kill -s KILL "$t" >/dev/null 2>&1 || true
		done
		sleep 1
		for t in $(ctr_k8s containers ls -q 2>/dev/null); do
			ctr_k8s tasks rm -f "$t" >/dev/null 2>&1 || true
			ctr_k8s containers rm "$t" >/dev/null 2>&1 || true
		done
	fi
	stack_stop containerd "$RUN_DIR/containerd.pid" containerd 30
	local ns
	for ns in $(ip netns list 2>/dev/null | awk '/^cni-/ {print $1}'); do ip netns del "$ns" 2>/dev/null || true; done
	rm -rf "$CNI_DIR/ipam"
	ip link del "$CNI_BRIDGE" 2>/dev/null || true
	ip link del "$NODE_LINK" 2>/dev/null || true
	nat_rules -D
	stack_kubectl delete node "$SYSTEM_NODE" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

main() {
	[ "$(id -u)" = 0 ] || die "the kubelet and containerd need root"
	mkdir -p "$RUN_DIR" "$LOG_DIR"
	if [ "${1:-}" = --down ]; then down; return; fi
	command -v containerd >/dev/null 2>&1 || die "containerd is missing (scripts/dev/deps.sh --node installs it)"
	if [ -n "${NODE_DRA:-}" ]; then
		{ read -r ctr_dir; read -r DRA_DRIVER_DIR; } < <("$here/dra-build.sh")
		CTRD_BIN=$ctr_dir/containerd
	fi
	stack_kubectl get --raw /readyz >/dev/null 2>&1 || die "the API server is not up (make cluster-up)"
	stack_resolve_bins KUBELET=kubelet KUBE_SCHEDULER=kube-scheduler
	"$here/pki.sh" >/dev/null
	start_containerd
	import_images
	nat_rules
	node_link
	start_kubelet
	[ -z "${NODE_DRA:-}" ] || start_driver
	start_scheduler
	log "ready: node $SYSTEM_NODE ($(stack_kubectl get node "$SYSTEM_NODE" -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}'), tainted $SYSTEM_TAINT:NoSchedule)"
}

main "$@"
