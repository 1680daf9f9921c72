#!/usr/bin/env bash
# The placement rule (common/fit.c) against kube-scheduler as the oracle.
#
# Random pods (nodeSelector, required node affinity with every operator
# and matchFields, tolerations, host ports, extended resources, sidecar
# and plain init containers) over a random but fixed cluster: DIFF_NODES
# kwok nodes diff-1..diff-K with random labels, taints, cordons and
# allocatable, and pods already bound to them.  A stock kube-scheduler of
# our own (schedulerName diff-scheduler) places each pod with a filter
# extender (diff.py extender) that records the nodes all of its filters
# passed and fits none of them, so no pod binds and the cluster never
# changes; a pod no node passes never reaches the extender, and its
# FailedScheduling event says so.  build/fitcheck answers for the same
# pods on the same objects, and diff.py compare prints every
# disagreement and "contract-diff: N pods, D disagreements"; exit 1 when
# D > 0 (or a pod got no verdict), 2 when the run itself fails.  Every
# pod carries nodeSelector diff=yes, so no other node of the cluster is a
# candidate.
#
# From the environment:
#   SEED        the generator's seed (default 1): the same seed, the same
#               nodes and pods
#   COUNT       pods (default 2000), BATCH a batch (default 250): each batch
#               is created, waits for its verdicts and is deleted
#   DIFF_NODES  nodes (default 12)
#   DIFF_API    stack (default): the running local stack, its kwok and
#               kube-controller-manager; the pods go to kube-system, which
#               the guard webhook exempts (a pod tolerating every taint,
#               which this test makes, is refused elsewhere).  private: an
#               etcd, kube-apiserver and kwok of this run's own (the stack's
#               binaries and certificates, nothing else of it), for when
#               other tests share the stack: test/e2e/t_36_placement.sh
#               wants the stack's nodes unchanged while it runs
#   FITCHECK    the fitcheck binary (default build/fitcheck)
#   DIFF_KEEP   1: keep the work directory (it is kept on failure anyway)
#
# Everything it makes (nodes, pods, processes, the private control plane)
# goes on exit, on failure and interrupt too.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=test/e2e/lib.sh
. "$top/test/e2e/lib.sh"

SEED=${SEED:-1}
COUNT=${COUNT:-2000}
BATCH=${BATCH:-250}
DIFF_NODES=${DIFF_NODES:-12}
DIFF_API=${DIFF_API:-stack}
FITCHECK=${FITCHECK:-$top/build/fitcheck}
DIFF_KEEP=${DIFF_KEEP:-}
PY=("python3" "$here/diff.py")
RUN=seed$SEED-$$
T0=$EPOCHREALTIME
WORK=$(mktemp -d "${TMPDIR:-/tmp}/contract-diff.XXXXXX")
NS=kube-system
sched_pid='' ext_pid='' etcd_pid='' api_pid='' kwok_pid='' made_nodes=''

say() { echo "contract-diff: $*"; }
die() { say "$*" >&2; exit 2; }

diff_cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[ -n "$sched_pid" ] && stack_stop_pid kube-scheduler "$sched_pid" 10 >/dev/null
	[ -n "$ext_pid" ] && stack_stop_pid extender "$ext_pid" 5 >/dev/null
	if [ "$DIFF_API" = stack ] && [ -n "$made_nodes" ]; then
		k delete --raw "/api/v1/namespaces/$NS/pods?labelSelector=contract-diff%3D$RUN&gracePeriodSeconds=0" \
			>/dev/null 2>&1
		k delete node -l "contract-diff=$RUN" --wait=false >/dev/null 2>&1
	fi
	[ -n "$kwok_pid" ] && stack_stop_pid kwok "$kwok_pid" 10 >/dev/null
	[ -n "$api_pid" ] && stack_stop_pid kube-apiserver "$api_pid" 20 >/dev/null
	[ -n "$etcd_pid" ] && stack_stop_pid etcd "$etcd_pid" 10 >/dev/null
	if [ "$rc" -eq 0 ] && [ -z "$DIFF_KEEP" ]; then
		rm -rf "$WORK"
	else
		say "the run's files: $WORK" >&3
	fi
	exit "$rc"
}
# The trap may run inside a redirected command (k create ... >FILE): it
# writes to the script's own stdout, kept as fd 3.
exec 3>&1
trap diff_cleanup EXIT
trap 'exit 130' INT TERM

freeport() { "${PY[@]}" freeport; }

# within SECS CMD...: CMD every half second until it succeeds, for SECS
# seconds of the wall clock (lib.sh's wait_for counts tries, and a try of
# kubectl and Python takes longer than its 0.2 s).
within() {
	local end=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.5
	done
}

# private_up: etcd, kube-apiserver (the stack's flags that matter here,
# RBAC with the stack's admin certificate) and kwok, on free ports; points
# KUBECONFIG at them.  There is no kube-controller-manager: no
# ServiceAccount admission (nothing makes the accounts) and no
# TaintNodesByCondition (nothing would take its not-ready taint off).
private_up() {
	local ep pp ap kp gates=()
	stack_resolve_bins KUBE_APISERVER=kube-apiserver ETCD=etcd KWOK=kwok || return 1
	ep=$(freeport) pp=$(freeport) ap=$(freeport) kp=$(freeport)
	"$ETCD" --name=diff --data-dir="$WORK/etcd" \
		--listen-client-urls="http://$LOCAL_IP:$ep" --advertise-client-urls="http://$LOCAL_IP:$ep" \
		--listen-peer-urls="http://$LOCAL_IP:$pp" --initial-advertise-peer-urls="http://$LOCAL_IP:$pp" \
		--initial-cluster="diff=http://$LOCAL_IP:$pp" >"$WORK/etcd.log" 2>&1 &
	etcd_pid=$!
	# As scripts/stack/k8s/up.sh: Debian's etcd 3.4 wants these off.
	[ "$ETCD_VERSION" = debian ] && gates=("--feature-gates=WatchList=false,SizeBasedListCostEstimate=false")
	"$KUBE_APISERVER" --etcd-servers="http://$LOCAL_IP:$ep" \
		--bind-address="$LOCAL_IP" --advertise-address="$LOCAL_IP" --secure-port="$ap" \
		--tls-cert-file="$PKI_DIR/apiserver.crt" --tls-private-key-file="$PKI_DIR/apiserver.key" \
		--client-ca-file="$PKI_DIR/ca.crt" --authorization-mode=RBAC \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$PKI_DIR/sa.pub" \
		--service-account-signing-key-file="$PKI_DIR/sa.key" \
		--service-cluster-ip-range=10.0.0.0/24 \
		--disable-admission-plugins=ServiceAccount,TaintNodesByCondition \
		--endpoint-reconciler-type=none --shutdown-watch-termination-grace-period=1s \
		"${gates[@]}" --profiling=false >"$WORK/kube-apiserver.log" 2>&1 &
	api_pid=$!
	sed "s|server: https://$LOCAL_IP:$APISERVER_PORT|server: https://$LOCAL_IP:$ap|" \
		"$STACK_DIR/kubeconfig" >"$WORK/kubeconfig"
	export KUBECONFIG=$WORK/kubeconfig
	if ! within 90 k get --raw /readyz; then
		tail -5 "$WORK/kube-apiserver.log" >&2
		return 1
	fi
	"$KWOK" --kubeconfig="$KUBECONFIG" --config="$top/scripts/stack/k8s/kwok.yaml" \
		--manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
		--server-address="$LOCAL_IP:$kp" --node-lease-duration-seconds=40 \
		--cidr=10.244.0.1/16 --node-ip="$LOCAL_IP" >"$WORK/kwok.log" 2>&1 &
	kwok_pid=$!
	NS=contract-diff
	k create namespace "$NS" >/dev/null
}

# stack_pre: the stack answers, and diff-1..K are free.  Nodes and pods an
# interrupted run left (labelled contract-diff) go first.
stack_pre() {
	local i
	k get --raw /readyz >/dev/null 2>&1 || die "the local stack does not answer (make cluster-up)"
	k delete node -l contract-diff >/dev/null 2>&1
	k delete --raw "/api/v1/namespaces/$NS/pods?labelSelector=contract-diff&gracePeriodSeconds=0" >/dev/null
	for ((i = 1; i <= DIFF_NODES; i++)); do
		if k get node "diff-$i" >/dev/null 2>&1; then die "node diff-$i exists and is not this test's"; fi
	done
}

# settled: the nodes are Ready as generated (diff.py settled), with the
# taint the stack's kube-controller-manager puts on a cordoned node.
settled() {
	local cordon=()
	[ "$DIFF_API" = stack ] && cordon=(--cordon-taint)
	k get nodes -l "contract-diff=$RUN" -o json |
		"${PY[@]}" settled --expect "$WORK/nodes.json" "${cordon[@]}"
}

# running_up: every bound pod is Running (kwok).
running_up() {
	[ "$(k get pods -n "$NS" -l "contract-diff=$RUN,contract-diff-role=running" \
		-o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -cx Running)" -eq "$1" ]
}

# state FILE: what the rule and kube-scheduler read of the nodes and the
# bound pods, to hold the cluster unchanged from start to end.
state() {
	{ k get nodes -l "contract-diff=$RUN" -o json; k get pods -n "$NS" -l "contract-diff=$RUN,contract-diff-role=running" -o json; } |
		jq -S -s '{nodes: [.[0].items[] | {name: .metadata.name, labels: .metadata.labels,
			taints: (.spec.taints // []), unschedulable: (.spec.unschedulable // false),
			allocatable: .status.allocatable,
			ready: ([.status.conditions[]? | select(.type == "Ready") | .status])}],
		pods: [.[1].items[] | {name: .metadata.name, node: .spec.nodeName, phase: .status.phase,
			deleting: (.metadata.deletionTimestamp != null)}]}' >"$1"
}

# batch_decided B N: every pod of batch B has kube-scheduler's verdict
# (PodScheduled False); prints how many do.
batch_decided() {
	local n
	n=$(k get pods -n "$NS" -l "contract-diff=$RUN,contract-diff-batch=$1" -o json |
		jq '[.items[] | select(any(.status.conditions[]?; .type == "PodScheduled" and .status == "False"))] | length')
	echo "$n"
	[ "$n" -eq "$2" ]
}

sched_up() {
	local port eport
	stack_resolve_bin KUBE_SCHEDULER kube-scheduler build || return 1
	eport=$(freeport)
	"${PY[@]}" extender --port "$eport" --log "$WORK/calls.jsonl" 2>"$WORK/extender.log" &
	ext_pid=$!
	touch "$WORK/calls.jsonl"
	within 10 curl -s -o /dev/null "http://$LOCAL_IP:$eport/" || { say "the extender did not start"; return 1; }
	cat >"$WORK/sched.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: $KUBECONFIG, qps: 100, burst: 200}
leaderElection: {leaderElect: false}
percentageOfNodesToScore: 100
profiles:
- schedulerName: diff-scheduler
extenders:
- urlPrefix: http://$LOCAL_IP:$eport
  filterVerb: filter
  nodeCacheCapable: true
  enableHTTPS: false
  httpTimeout: 30s
YAML
	port=$(freeport)
	# OpportunisticBatching off: a pod like one placed just before may be
	# tried on that pod's node alone.  No pod is ever placed here (the
	# extender fits none), so it would not happen; off, it cannot.
	"$KUBE_SCHEDULER" --config "$WORK/sched.yaml" --secure-port "$port" --bind-address "$LOCAL_IP" \
		--feature-gates=OpportunisticBatching=false >"$WORK/kube-scheduler.log" 2>&1 &
	sched_pid=$!
	if ! within 60 curl -skf -o /dev/null "https://$LOCAL_IP:$port/readyz"; then
		tail -5 "$WORK/kube-scheduler.log" >&2
		say "kube-scheduler did not become ready"
		return 1
	fi
}

[ -x "$FITCHECK" ] || die "no $FITCHECK (make build/fitcheck)"
case $DIFF_API in
stack) stack_pre ;;
private) private_up || die "the private control plane did not start" ;;
*) die "DIFF_API is stack or private, not $DIFF_API" ;;
esac
say "seed $SEED, $COUNT pods in batches of $BATCH, $DIFF_NODES nodes, on the $DIFF_API API server (namespace $NS); files in $WORK"

"${PY[@]}" gen --seed "$SEED" --count "$COUNT" --nodes "$DIFF_NODES" --batch "$BATCH" \
	--run "$RUN" --ns "$NS" --out "$WORK" || die "the generator failed"
made_nodes=1
k create -f "$WORK/nodes.json" >/dev/null || die "creating the nodes failed"
if ! within 90 settled; then
	settled
	die "the nodes did not settle as generated"
fi
nrun=$(jq '.items | length' "$WORK/running.json")
k create -f "$WORK/running.json" >/dev/null || die "creating the bound pods failed"
within 90 running_up "$nrun" || die "the bound pods are not all Running"
state "$WORK/state-before.json"
k get nodes -l "contract-diff=$RUN" -o json >"$WORK/nodes-live.json"
k get pods -n "$NS" -l "contract-diff=$RUN,contract-diff-role=running" -o json >"$WORK/running-live.json"
say "$DIFF_NODES nodes Ready, $nrun pods bound to them ($(stack_since "$T0"))"

sched_up || die "kube-scheduler and its extender did not start"
say "kube-scheduler ready ($(stack_since "$T0"))"

batches=("$WORK"/pods-*.json)
for f in "${batches[@]}"; do
	b=$(basename "$f" .json); b=$((10#${b#pods-}))
	n=$(jq '.items | length' "$f")
	t=$EPOCHREALTIME
	k create -f "$f" -o json >"$WORK/created-$b.json" 2>"$WORK/create.err" ||
		die "batch $b: the API server refused pods: $(head -3 "$WORK/create.err")"
	done_n=0
	for ((i = 0; i < 600; i++)); do
		done_n=$(batch_decided "$b" "$n") && break
		sleep 1
	done
	[ "$done_n" -eq "$n" ] || die "batch $b: kube-scheduler decided $done_n of $n pods in 600 s"
	k delete --raw "/api/v1/namespaces/$NS/pods?labelSelector=contract-diff%3D$RUN,contract-diff-batch%3D$b&gracePeriodSeconds=0" >/dev/null ||
		die "batch $b: deleting its pods failed"
	say "batch $((b + 1))/${#batches[@]}: $n pods decided in $(stack_since "$t")"
done

# The verdicts: extender calls, else the FailedScheduling event, which
# kube-scheduler may write a moment after the status.
jq -s '{apiVersion: "v1", kind: "List", items: [.[] | if .kind == "List" then .items[] else . end]}' \
	"$WORK"/created-*.json >"$WORK/pods-created.json"
for ((i = 0; i < 30; i++)); do
	k get events -n "$NS" --field-selector reason=FailedScheduling -o json >"$WORK/events.json"
	"${PY[@]}" verdicts --calls "$WORK/calls.jsonl" --pods "$WORK/pods-created.json" \
		--events "$WORK/events.json" >"$WORK/verdicts.json" || die "reading the verdicts failed"
	[ "$(jq '[.[] | select(.fit == null)] | length' "$WORK/verdicts.json")" -eq 0 ] && break
	sleep 1
done
state "$WORK/state-after.json"
if ! cmp -s "$WORK/state-before.json" "$WORK/state-after.json"; then
	diff "$WORK/state-before.json" "$WORK/state-after.json" | head -20
	die "the nodes or the bound pods changed during the run: the answers are not comparable"
fi

jq -n --slurpfile nodes "$WORK/nodes-live.json" --slurpfile on "$WORK/running-live.json" \
	--slurpfile pods "$WORK/pods-created.json" \
	'{nodes: $nodes[0].items,
	  pods_on: ($on[0].items | group_by(.spec.nodeName) | map({key: .[0].spec.nodeName, value: .}) | from_entries),
	  pods: $pods[0].items}' >"$WORK/fitcheck-in.json"
"$FITCHECK" "$WORK/fitcheck-in.json" >"$WORK/ours.jsonl" || die "fitcheck failed"
say "$(jq -s 'length' "$WORK/calls.jsonl") extender calls, $(jq '[.[] | select(.calls == 0)] | length' "$WORK/verdicts.json") pods no node passed; compared in $(stack_since "$T0")"
echo
"${PY[@]}" compare --ours "$WORK/ours.jsonl" --verdicts "$WORK/verdicts.json" \
	--pods "$WORK/pods-created.json" --cluster "$WORK/fitcheck-in.json" \
	--report "$WORK/disagreements.json"
rc=$?
say "runtime $(stack_since "$T0")"
exit "$rc"
