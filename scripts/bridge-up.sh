#!/usr/bin/env bash
# Starts slurm-bridge and slurm-bridge-admission, built from this tree,
# against the local stack (make cluster-up).  Idempotent: a daemon that is
# already running the current binary is left alone; one running an older
# build is restarted.  Logs: $STACK_DIR/log/slurm-bridge{,-admission}.log.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/stack-env.sh"

ADMISSION_LISTEN=${ADMISSION_LISTEN:-127.0.0.1:9443}
start=$(date +%s%N)

for f in "$BRIDGE_KUBECONFIG" "$ADMISSION_CERT" "$ADMISSION_KEY"; do
	if [ ! -f "$f" ]; then
		echo "bridge-up: $f is missing: run 'make cluster-up' first" >&2
		exit 1
	fi
done

# up_to_date PIDFILE BINARY: the daemon runs and was started after the
# binary was last built.
up_to_date() {
	local pid exe
	stack_alive "$1" "$(basename "$2")" || return 1
	pid=$(stack_pid "$1")
	exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
	case $exe in *"(deleted)") return 1 ;; esac
	[ "/proc/$pid" -nt "$2" ]
}

# daemon NAME READY_CMD ARGS...: (re)starts NAME unless it is current.
daemon() {
	local name=$1 ready=$2 bin=$top/$1; shift 2
	local pidfile=$RUN_DIR/$name.pid
	if up_to_date "$pidfile" "$bin"; then
		echo "bridge-up: $name already running (pid $(stack_pid "$pidfile"))"
		return 0
	fi
	stack_stop "$name" "$pidfile" "$name" 10 >/dev/null
	stack_spawn "$name" "$bin" "$@"
	if ! stack_wait "$name to be ready" 30 $ready; then
		stack_log_tail "$name" 30
		exit 1
	fi
	echo "bridge-up: $name started (pid $(stack_pid "$pidfile"))"
}

admission_ready() {
	curl -sf --cacert "$CA_CERT" "https://$ADMISSION_LISTEN/healthz" >/dev/null
}

# The bridge is ready once it has synced its caches and adopted Slurm jobs.
bridge_ready() {
	local pid; pid=$(stack_pid "$BRIDGE_PIDFILE")
	[ -n "$pid" ] && kill -0 "$pid" && \
		sed -n '/=== .*starting/h; /=== .*starting/!H; ${x;p}' "$LOG_DIR/slurm-bridge.log" |
		grep -q 'recovered:'
}

mkdir -p "$LOG_DIR"
# The bridge's CRDs (PodGroup) before the bridge that watches them.
kubectl --kubeconfig="$KUBECONFIG" apply -f "$top/manifests/crds/" >/dev/null
kubectl --kubeconfig="$KUBECONFIG" wait --for=condition=Established \
	crd/podgroups.scheduling.x-k8s.io --timeout=30s >/dev/null
daemon slurm-bridge-admission admission_ready \
	--listen "$ADMISSION_LISTEN" --tls-cert "$ADMISSION_CERT" --tls-key "$ADMISSION_KEY"
# The mutating webhook, for namespaces labelled slurm-bridge=enabled.
# failurePolicy Fail: in an opted-in namespace a pod must not reach the
# scheduler unmutated (it would wait forever for default-scheduler, or run
# on a bridged node without Slurm knowing); while the webhook is down, pod
# creation there fails loudly instead.  Other namespaces never call it.
ca=$(base64 -w0 <"$CA_CERT")
kubectl --kubeconfig="$KUBECONFIG" apply -f - >/dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: slurm-bridge}
webhooks:
- name: mutate.pods.slurm-bridge.io
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 5
  reinvocationPolicy: IfNeeded
  namespaceSelector:
    matchLabels: {slurm-bridge: enabled}
  rules:
  - apiGroups: [""]
    apiVersions: [v1]
    operations: [CREATE]
    resources: [pods]
  clientConfig:
    url: https://$ADMISSION_LISTEN/mutate
    caBundle: $ca
YAML
daemon slurm-bridge bridge_ready --kubeconfig "$BRIDGE_KUBECONFIG" ${BRIDGE_ARGS:-}
ms=$(( ($(date +%s%N) - start) / 1000000 ))
printf 'bridge-up: ready in %d.%01ds\n' $((ms / 1000)) $((ms % 1000 / 100))
