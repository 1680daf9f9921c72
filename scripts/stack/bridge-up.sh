#!/usr/bin/env bash
# make bridge-up: both daemons, built from this tree, on the local stack.
#
# Starts slurm-bridge and slurm-bridge-admission, built from this tree,
# against the local stack (make cluster-up).  Idempotent: a daemon that is
# already running the current binary is left alone; one running an older
# build is restarted.  Logs: $STACK_DIR/log/slurm-bridge{,-admission}.log.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$here/stack-env.sh"

ADMISSION_LISTEN=${ADMISSION_LISTEN:-127.0.0.1:9443}
start=$(date +%s%N)

for f in "$BRIDGE_KUBECONFIG" "$ADMISSION_CERT" "$ADMISSION_KEY" "$BRIDGE_BIN" "$ADMISSION_BIN"; do
	if [ ! -f "$f" ]; then
		echo "bridge-up: $f is missing: run 'make cluster-up' and 'make all' (make bridge-up does both)" >&2
		exit 1
	fi
done

# Slurm's node epilog on the stack ($STACK_DIR/bin/epilog.sh, written by
# scripts/stack/slurm/up.sh) runs the one built for the stack's Slurm
# release, and its API fallback beside it.
for prog in slurm-bridge-epilog slurm-bridge-epilog-api; do
	epilog=$(dirname "$BRIDGE_BIN")/$prog
	if [ -f "$epilog" ] && ! cmp -s "$epilog" "$STACK_DIR/bin/$prog"; then
		mkdir -p "$STACK_DIR/bin"
		cp "$epilog" "$STACK_DIR/bin/$prog.new"
		mv "$STACK_DIR/bin/$prog.new" "$STACK_DIR/bin/$prog"
	fi
done

# up_to_date PIDFILE BINARY: the daemon runs and was started after the
# binary was last built and the config file last changed.
up_to_date() {
	local pid exe
	stack_alive "$1" "${DAEMON_COMM:-$(basename "$2")}" || return 1
	pid=$(stack_pid "$1")
	exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
	case $exe in *"(deleted)") return 1 ;; esac
	[ "/proc/$pid" -nt "$2" ] && { [ ! -f "$BRIDGE_CONFIG" ] || [ "/proc/$pid" -nt "$BRIDGE_CONFIG" ]; }
}

# daemon NAME READY_CMD ARGS...: (re)starts NAME unless it is current.
# DAEMON_WRAPPER runs both under a tool (scripts/dev/sanitize.sh: valgrind);
# DAEMON_COMM is then the process name the PID files stand for.  Both are
# the binaries built for the stack's Slurm release, run where its libslurm
# is (STACK_EXEC: the release's root, or here).
daemon() {
	local name=$1 ready=$2 bin; shift 2
	case $name in
	slurm-bridge) bin=$BRIDGE_BIN ;;
	*) bin=$ADMISSION_BIN ;;
	esac
	local pidfile=$RUN_DIR/$name.pid
	# New flags restart it too.
	if up_to_date "$pidfile" "$bin" &&
		[ "$(cat "$RUN_DIR/$name.args" 2>/dev/null)" = "$*" ]; then
		echo "bridge-up: $name already running (pid $(stack_pid "$pidfile"))"
		return 0
	fi
	stack_stop "$name" "$pidfile" "${DAEMON_COMM:-$name}" 30 >/dev/null
	log_from=$(stat -c %s "$LOG_DIR/$name.log" 2>/dev/null) || log_from=0
	# shellcheck disable=SC2086
	stack_spawn "$name" "${STACK_EXEC[@]}" ${DAEMON_WRAPPER:-} "$bin" "$@"
	echo "$*" >"$RUN_DIR/$name.args"
	if ! stack_wait "$name to be ready" 30 $ready; then
		stack_log_tail "$name" 30
		exit 1
	fi
	echo "bridge-up: $name started (pid $(stack_pid "$pidfile"))"
}

admission_ready() {
	curl -sf --cacert "$CA_CERT" "https://$ADMISSION_LISTEN/healthz" >/dev/null
}

# The bridge is ready once it has synced its caches and adopted Slurm jobs:
# its "recovered:" line, among what it logged since this start (from byte
# log_from on, which daemon sets), so that each poll reads only that.
# grep reads a process substitution, not a pipe: grep -q leaves at the
# first match, and under pipefail the reader's SIGPIPE would fail every
# poll once the bridge has logged more than a pipe holds after that line
# (the bench's binds do).
bridge_ready() {
	local pid; pid=$(stack_pid "$BRIDGE_PIDFILE")
	[ -n "$pid" ] && kill -0 "$pid" &&
		grep -q 'recovered:' <(tail -c "+$((log_from + 1))" "$LOG_DIR/slurm-bridge.log" 2>/dev/null)
}

mkdir -p "$LOG_DIR"
# The bridge's CRDs (PodGroup) before the bridge that watches them.
kubectl --kubeconfig="$KUBECONFIG" apply -f "$top/manifests/crds/" >/dev/null
kubectl --kubeconfig="$KUBECONFIG" wait --for=condition=Established \
	crd/podgroups.scheduling.x-k8s.io --timeout=30s >/dev/null
# The config both daemons read: the GRES type and topology tables match
# the stack's nodes (label slurm-bridge.io/leaf-switch, topology/tree).
cat >"$BRIDGE_CONFIG.new" <<'YAML'
# Written by scripts/stack/bridge-up.sh for the local stack.
schedulerName: slurm-bridge
partition: slurm-bridge
gresTypes:
- nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
  type: a100
- nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
  type: h100
topology:
- {nodeLabel: slurm-bridge.io/leaf-switch, slurm: switch}
- {nodeLabel: kubernetes.io/hostname, slurm: node}
# No Slurm topology behind it: the bridge keeps a gang within one value
# (test/e2e/t_58_topology.sh labels the nodes across the leaf switches).
- {nodeLabel: slurm-bridge.io/rack, slurm: none}
YAML
# Slurm 25.05 on: partition slurm-bridge-block places by topology/block.
if stack_has_blocks; then
	echo "- {nodeLabel: slurm-bridge.io/block, slurm: block, slurmTopology: block}" >>"$BRIDGE_CONFIG.new"
fi
cat >>"$BRIDGE_CONFIG.new" <<'YAML'
gangGpuSwitchThreshold: 16
preferredTopologyWaitMinutes: 5
# A device's binding conditions are waited for 20 s here, so that
# test/e2e/t_64_dra.sh sees the allocation given back (default: 600).
deviceBindingTimeoutSeconds: 20
# Namespaces the scheduler manages without the webhook (no label
# slurm-bridge=enabled): the scheduler-extender e2e places pods there with
# a stock kube-scheduler.
managedNamespaceSelector:
  matchLabels: {slurm-bridge.io/managed: "true"}
YAML
# The bench gives the bridge the API rate it gives kube-scheduler.
if [ -n "${BRIDGE_API_QPS:-}" ]; then
	printf 'kubeAPIQPS: %s\nkubeAPIBurst: %s\n' "$BRIDGE_API_QPS" \
		"${BRIDGE_API_BURST:-$((BRIDGE_API_QPS * 2))}" >>"$BRIDGE_CONFIG.new"
fi
# Rewritten only when it changed: a newer config restarts both daemons.
if cmp -s "$BRIDGE_CONFIG.new" "$BRIDGE_CONFIG"; then rm -f "$BRIDGE_CONFIG.new"
else mv "$BRIDGE_CONFIG.new" "$BRIDGE_CONFIG"; fi
# The webhook's RBAC (its ClusterRole and binding, from the in-cluster
# manifests/slurm-bridge.yaml), bound to its local client identity too.
kubectl --kubeconfig="$KUBECONFIG" create --dry-run=client -o json \
	-f "$top/manifests/slurm-bridge.yaml" |
	jq 'select((.kind == "ClusterRole" or .kind == "ClusterRoleBinding") and
		.metadata.name == "slurm-bridge-admission")' |
	kubectl --kubeconfig="$KUBECONFIG" apply -f - >/dev/null
kubectl --kubeconfig="$KUBECONFIG" apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: slurm-bridge-admission-local}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: slurm-bridge-admission}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:slurm-bridge-admission"}
YAML
# The bridge's identity on the local stack (pki.sh): its writes to
# bridge-owned keys are allowed, and never wait on the webhook.
BRIDGE_USER=system:slurm-bridge
# The extender e2e's stock kube-scheduler (default-scheduler) places pods
# of the namespaces managedNamespaceSelector picks: the guard lets its pods
# tolerate the managed-node taint there.  slurm-bridge-b is the second
# install test/e2e/t_56_installs.sh runs beside this one.  KubeRay's gang
# integration names its pods' scheduler scheduler-plugins-scheduler: in the
# namespaces the webhook manages, slurm-bridge places them (t_67_kuberay).
daemon slurm-bridge-admission admission_ready \
	--listen "$ADMISSION_LISTEN" --tls-cert "$ADMISSION_CERT" --tls-key "$ADMISSION_KEY" \
	--config "$BRIDGE_CONFIG" --kubeconfig "$ADMISSION_KUBECONFIG" \
	--bridge-user "$BRIDGE_USER" --extender-scheduler default-scheduler \
	--allow-scheduler slurm-bridge-b --adopt-scheduler scheduler-plugins-scheduler
# Both webhook configurations, from manifests/admission/webhooks.yaml (see
# there for the failurePolicy), pointed at the local webhook by URL.  The
# guard also exempts the bench's namespaces where a stock kube-scheduler
# places pods on Slurm's nodes on purpose, to compare (bench/run.sh).
ca=$(base64 -w0 <"$CA_CERT")
sed -e "s|service: {name: slurm-bridge-admission, namespace: slurm-bridge, path: \(/[a-z]*\), port: 443}|url: \"https://$ADMISSION_LISTEN\1\"|" \
	-e "s|caBundle: \"\"|caBundle: $ca|" \
	-e "s|system:serviceaccount:slurm-bridge:slurm-bridge|$BRIDGE_USER|" \
	-e 's|^\(      values: \[.*"slurm-bridge"\)\]$|\1,"bench-kube","bench-fixed-kube","bench-constrained-kube"]|' \
	"$top/manifests/admission/webhooks.yaml" |
	kubectl --kubeconfig="$KUBECONFIG" apply -f - >/dev/null
daemon slurm-bridge bridge_ready --kubeconfig "$BRIDGE_KUBECONFIG" --config "$BRIDGE_CONFIG" \
	--listen "$LOCAL_IP:$BRIDGE_PORT" ${BRIDGE_ARGS:-}
ms=$(( ($(date +%s%N) - start) / 1000000 ))
printf 'bridge-up: ready in %d.%01ds\n' $((ms / 1000)) $((ms % 1000 / 100))
