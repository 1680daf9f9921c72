#!/usr/bin/env bash
# make workload-controllers: JobSet, LeaderWorkerSet, Kueue and KubeRay on
# the local stack.
#
# make workload-controllers: runs the JobSet and LeaderWorkerSet
# controllers, Kueue's controller manager and KubeRay's operator against
# the local stack, built from their Go modules (sigs.k8s.io/jobset,
# sigs.k8s.io/lws, sigs.k8s.io/kueue, github.com/ray-project/kuberay/
# ray-operator) and cached like kube-apiserver, with their CRDs applied from
# the same module versions.  Their admission webhooks are served on
# 127.0.0.1 with a certificate from the stack CA and registered by URL.
# Kueue and KubeRay are optional: when their module cannot be had (the
# module proxy refuses it), a line says so and the others start; the
# scenarios that need them skip, saying why.  Idempotent; cluster-down
# stops them.
#
# Usage: workloads-up.sh [jobset] [lws] [kueue] [kuberay]   (default: all;
# the demo needs only lws)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$here/stack-env.sh"
t0=$EPOCHREALTIME

want=("$@")
[ ${#want[@]} -gt 0 ] || want=(jobset lws kueue kuberay)
bins=() crds=() opt=()
for w in "${want[@]}"; do
	case $w in
	jobset) bins+=(JOBSET=jobset); crds+=(jobsets.jobset.x-k8s.io) ;;
	lws) bins+=(LWS=lws); crds+=(leaderworkersets.leaderworkerset.x-k8s.io) ;;
	kueue|kuberay) opt+=("$w") ;;
	*) echo "usage: workloads-up.sh [jobset] [lws] [kueue] [kuberay]" >&2; exit 2 ;;
	esac
done
[ ${#bins[@]} -eq 0 ] || stack_resolve_bins "${bins[@]}"
# The optional ones: each built once, or left out with a line saying why.
want=()
for w in "${bins[@]}"; do want+=("${w#*=}"); done
for w in "${opt[@]}"; do
	var=${w^^}
	if ! stack_resolve_bins "$var=$w" 2>"$STACK_DIR/log/build-$w.log"; then
		echo "workloads-up: $w not started: it could not be built (scripts/stack/build-k8s.sh $w; $(tail -1 "$STACK_DIR/log/build-$w.log"))"
		continue
	fi
	want+=("$w")
	for f in "$(dirname "${!var}")"/crds/*.yaml; do
		c=$(basename "$f" .yaml)
		crds+=("${c#*_}.${c%%_*}")
	done
done
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
	case $c in
	*.kueue.x-k8s.io) f=$(dirname "$KUEUE")/crds/${c#*.}_${c%%.*}.yaml ;;
	*.ray.io) f=$(dirname "$KUBERAY")/crds/${c#*.}_${c%%.*}.yaml ;;
	esac
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

# config NAME APIVERSION WEBHOOK_PORT HEALTH_PORT METRICS_PORT [MORE]: a
# controller-runtime Configuration (MORE: more top-level lines).
config() {
	cat >"$STACK_DIR/$1-config.yaml" <<YAML
apiVersion: $2
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
${6:-}
YAML
	echo "$STACK_DIR/$1-config.yaml"
}

# Kueue's integrations: batch Jobs, JobSets and plain pods (its pod
# integration), each only where it has a queue-name label
# (manageJobsWithoutQueueName is off), so nothing else on the stack is
# Kueue's.  Its visibility API server is left off (main loop below): it
# would need an APIService, which no scenario reads.
KUEUE_MORE="namespace: kueue-system
manageJobsWithoutQueueName: false
integrations:
  frameworks:
  - batch/job
  - jobset.x-k8s.io/jobset
  - pod"

# controller NAME BINARY CONFIG HEALTH_PORT [FLAG...]: CONFIG is passed as
# --config, unless it is -.  Running with other flags, it is restarted.
controller() {
	local name=$1 binary=$2 conf=$3 port=$4
	shift 4
	[ "$conf" = - ] || set -- --config="$conf" "$@"
	if stack_alive "$RUN_DIR/$name.pid" "$name"; then
		if [ "$(cat "$RUN_DIR/$name.args" 2>/dev/null)" = "$*" ]; then
			echo "workloads-up: $name already running (pid $(stack_pid "$RUN_DIR/$name.pid"))"
			return
		fi
		stack_stop "$name" "$RUN_DIR/$name.pid" "$name" 20 >/dev/null
	fi
	stack_spawn "$name" "$binary" "$@" --kubeconfig="$KUBECONFIG"
	echo "$*" >"$RUN_DIR/$name.args"
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
# Kueue's, from the webhook manifests of its module (sigs.k8s.io/kueue):
# its own objects, and the Jobs, JobSets and pods of the integrations
# above, those limited to objects with a queue-name label.
webhooks_kueue() {
	local q=kueue.x-k8s.io/queue-name r ops
	if [ "$1" = Mutating ]; then
		ops=CREATE
		webhook mjob.kb.io 9446 /mutate-batch-v1-job batch v1 jobs "$ops" $q
		webhook mjobset.kb.io 9446 /mutate-jobset-x-k8s-io-v1alpha2-jobset \
			jobset.x-k8s.io v1alpha2 jobsets "$ops" $q
		webhook mpod.kb.io 9446 /mutate--v1-pod "" v1 pods "$ops" $q
		for r in clusterqueue resourceflavor workload; do
			webhook "m$r.kb.io" 9446 "/mutate-kueue-x-k8s-io-v1beta2-$r" \
				kueue.x-k8s.io v1beta2 "${r}s" "$ops"
		done
	else
		ops="CREATE, UPDATE"
		webhook vjob.kb.io 9446 /validate-batch-v1-job batch v1 jobs "$ops" $q
		webhook vjobset.kb.io 9446 /validate-jobset-x-k8s-io-v1alpha2-jobset \
			jobset.x-k8s.io v1alpha2 jobsets "$ops" $q
		webhook vpod.kb.io 9446 /validate--v1-pod "" v1 pods "$ops" $q
		for r in clusterqueue cohort resourceflavor workload; do
			webhook "v$r.kb.io" 9446 "/validate-kueue-x-k8s-io-v1beta2-$r" \
				kueue.x-k8s.io v1beta2 "${r}s" "$ops"
		done
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
	jobset) controller jobset "$JOBSET" "$(config jobset config.jobset.x-k8s.io/v1alpha1 9444 8091 8441)" 8091 ;;
	lws) controller lws "$LWS" "$(config lws config.lws.x-k8s.io/v1alpha1 9445 8092 8442)" 8092 ;;
	kueue)
		# Without internal certificate management Kueue serves its
		# metrics with the certificate at a fixed path.
		mkdir -p /etc/kueue/metrics/certs
		cp "$certs/tls.crt" "$certs/tls.key" /etc/kueue/metrics/certs/
		kubectl --kubeconfig="$KUBECONFIG" create namespace kueue-system \
			--dry-run=client -o yaml | kubectl --kubeconfig="$KUBECONFIG" apply -f - >/dev/null
		controller kueue "$KUEUE" "$(config kueue config.kueue.x-k8s.io/v1beta2 9446 8093 8443 "$KUEUE_MORE")" 8093 \
			--feature-gates=VisibilityOnDemand=false ;;
	kuberay)
		# As KubeRay runs by default: no batch scheduler.  With
		# KUBERAY_BATCH_SCHEDULER=scheduler-plugins (its gang
		# integration), a RayCluster labelled
		# ray.io/gang-scheduling-enabled gets a PodGroup
		# (scheduling.x-k8s.io) and its pods the pod-group label; but
		# KubeRay 1.5 then refuses every RayJob ("currently only
		# RayCluster is supported"), so t_67_kuberay turns it on for
		# its RayCluster scenario alone.  It serves no webhook
		# (ENABLE_WEBHOOKS is unset).
		controller kuberay "$KUBERAY" - 8094 \
			--health-probe-bind-address="$LOCAL_IP:8094" \
			--metrics-addr="$LOCAL_IP:8444" --enable-leader-election=false \
			${KUBERAY_BATCH_SCHEDULER:+--batch-scheduler=$KUBERAY_BATCH_SCHEDULER} \
			--log-stdout-encoder=console
		continue ;;
	esac
	register_webhooks "$w"
done
awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "workloads-up: ready in %.1fs\n", b - a }'
