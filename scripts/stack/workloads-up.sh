#!/usr/bin/env bash
# make workload-controllers: JobSet and LeaderWorkerSet on the local stack.
#
# make workload-controllers: runs the JobSet and LeaderWorkerSet controllers
# against the local stack, built from their Go modules (sigs.k8s.io/jobset,
# sigs.k8s.io/lws) and cached like kube-apiserver, with their CRDs applied
# from the same module versions.  Their admission webhooks are served on
# 127.0.0.1 with a certificate from the stack CA and registered by URL.
# Idempotent; cluster-down stops them.
#
# Usage: workloads-up.sh [jobset] [lws]   (default: both; the demo needs
# only lws)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$here/stack-env.sh"
t0=$EPOCHREALTIME

want=("$@")
[ ${#want[@]} -gt 0 ] || want=(jobset lws)
bins=() crds=()
for w in "${want[@]}"; do
	case $w in
	jobset) bins+=(JOBSET=jobset); crds+=(jobsets.jobset.x-k8s.io) ;;
	lws) bins+=(LWS=lws); crds+=(leaderworkersets.leaderworkerset.x-k8s.io) ;;
	*) echo "usage: workloads-up.sh [jobset] [lws]" >&2; exit 2 ;;
	esac
done
stack_resolve_bins "${bins[@]}"
# LWS v0.9 also runs a DisaggregatedSet controller, and exits when its
# CRD is missing (its cache never syncs): install it where it ships.
if [[ " ${want[*]} " == *" lws "* ]] &&
	[ -f "$STACK_GO_DIR/crds/disaggregatedset.x-k8s.io_disaggregatedsets.yaml" ]; then
	crds+=(disaggregatedsets.disaggregatedset.x-k8s.io)
fi
# build-k8s.sh keeps the controllers' CRDs, of the same versions, next to
# their binaries.
for c in "${crds[@]}"; do
	f=$STACK_GO_DIR/crds/${c#*.}_${c%%.*}.yaml
	[ -f "$f" ] || { echo "workloads-up: CRD $f is missing" >&2; exit 1; }
	kubectl --kubeconfig="$KUBECONFIG" apply --server-side -f "$f" >/dev/null
done
# (Not `kubectl wait`: it fails at once while a new CRD has no status yet.)
established() {
	local c
	for c in "${crds[@]}"; do
		[ "$(kubectl --kubeconfig="$KUBECONFIG" get crd "$c" \
			-o jsonpath='{.status.conditions[?(@.type=="Established")].status}')" = True ] || return 1
	done
}
stack_wait "the CRDs ${crds[*]} to be established" 30 established

# Webhook serving certificates (controller-runtime reads tls.crt/tls.key).
certs=$STACK_DIR/workload-certs
mkdir -p "$certs"
cp "$ADMISSION_CERT" "$certs/tls.crt"
cp "$ADMISSION_KEY" "$certs/tls.key"

# config NAME GROUP WEBHOOK_PORT HEALTH_PORT METRICS_PORT
config() {
	cat >"$STACK_DIR/$1-config.yaml" <<YAML
apiVersion: $2/v1alpha1
kind: Configuration
internalCertManagement:
  enable: false
leaderElection:
  leaderElect: false
webhook:
  host: $LOCAL_IP
  port: $3
  certDir: $certs
health:
  healthProbeBindAddress: $LOCAL_IP:$4
metrics:
  bindAddress: $LOCAL_IP:$5
YAML
	echo "$STACK_DIR/$1-config.yaml"
}

# controller NAME BINARY CONFIG HEALTH_PORT
controller() {
	local name=$1 binary=$2 conf=$3 port=$4
	if stack_alive "$RUN_DIR/$name.pid" "$name"; then
		echo "workloads-up: $name already running (pid $(stack_pid "$RUN_DIR/$name.pid"))"
		return
	fi
	stack_spawn "$name" "$binary" --config="$conf" \
		--kubeconfig="$KUBECONFIG"
	if ! stack_wait "$name" 60 curl -fsS "http://$LOCAL_IP:$port/readyz"; then
		stack_log_tail "$name" 25
		exit 1
	fi
	echo "workloads-up: $name started (pid $(stack_pid "$RUN_DIR/$name.pid"))"
}

# webhook NAME PORT PATH GROUP VERSION RESOURCE OPS [LABEL]: one webhook
# entry calling a controller on 127.0.0.1 with the stack CA.  Pod webhooks
# are limited to the controller's own pods by LABEL (as their kustomize
# overlays do), so other pods never depend on these controllers.
webhook() {
	local name=$1 port=$2 path=$3 group=$4 version=$5 res=$6 ops=$7 label=${8:-}
	cat <<YAML
- name: $name
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 10
  clientConfig:
    url: https://$LOCAL_IP:$port$path
    caBundle: $ca
  rules:
  - apiGroups: ["$group"]
    apiVersions: [$version]
    operations: [$ops]
    resources: [$res]
YAML
	if [ -n "$label" ]; then
		printf '  objectSelector:\n    matchExpressions:\n    - {key: %s, operator: Exists}\n' "$label"
	fi
}

# The controllers default and validate their objects in these webhooks;
# without them they dereference unset fields and panic.  Paths and rules
# are those of their modules' config/.../webhook/manifests.yaml.  One pair
# of configurations per controller, so that one not started has none.
# webhooks_jobset / webhooks_lws KIND: the entries of that kind.
webhooks_jobset() {
	if [ "$1" = Mutating ]; then
		webhook mjobset.kb.io 9444 /mutate-jobset-x-k8s-io-v1alpha2-jobset \
			jobset.x-k8s.io v1alpha2 jobsets CREATE
		webhook mpod.jobset.kb.io 9444 /mutate--v1-pod "" v1 pods CREATE \
			jobset.sigs.k8s.io/jobset-name
	else
		webhook vjobset.kb.io 9444 /validate-jobset-x-k8s-io-v1alpha2-jobset \
			jobset.x-k8s.io v1alpha2 jobsets "CREATE, UPDATE"
	fi
}
webhooks_lws() {
	if [ "$1" = Mutating ]; then
		webhook mleaderworkerset.kb.io 9445 /mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset \
			leaderworkerset.x-k8s.io v1 leaderworkersets "CREATE, UPDATE"
		webhook mpod.lws.kb.io 9445 /mutate--v1-pod "" v1 pods CREATE \
			leaderworkerset.sigs.k8s.io/name
	else
		webhook vleaderworkerset.kb.io 9445 /validate-leaderworkerset-x-k8s-io-v1-leaderworkerset \
			leaderworkerset.x-k8s.io v1 leaderworkersets "CREATE, UPDATE"
	fi
}
# register_webhooks NAME
register_webhooks() {
	local kind
	ca=$(base64 -w0 <"$CA_CERT")
	for kind in Mutating Validating; do
		echo "---"
		echo "apiVersion: admissionregistration.k8s.io/v1"
		echo "kind: ${kind}WebhookConfiguration"
		echo "metadata: {name: stack-$1}"
		echo "webhooks:"
		"webhooks_$1" "$kind"
	done | kubectl --kubeconfig="$KUBECONFIG" apply -f - >/dev/null
}

for w in "${want[@]}"; do
	case $w in
	jobset) controller jobset "$JOBSET" "$(config jobset config.jobset.x-k8s.io 9444 8091 8441)" 8091 ;;
	lws) controller lws "$LWS" "$(config lws config.lws.x-k8s.io 9445 8092 8442)" 8092 ;;
	esac
	register_webhooks "$w"
done
awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "workloads-up: ready in %.1fs\n", b - a }'
