#!/usr/bin/env bash
# make in-cluster-test: both daemons installed with the Helm chart
# (manifests/chart) and running as pods on the stack's real node (make
# node-up: kubelet, containerd, runc), talking to the stack's slurmctld from
# the pod network with munge, as a site would run them:
#
#   1. install: the chart with --wait; both Deployments Ready (2/2 each),
#      one leader, the webhook's caBundle filled in, the certificates made
#      by the chart's Job;
#   2. smoke: a single pod, a gang (an Indexed Job), a bad annotation
#      refused by the in-cluster webhook, a deleted pod's job cancelled;
#   3. failover: the leader's process is killed (SIGKILL), the other
#      replica takes over, a pod made in between is bound, nothing is
#      submitted twice or lost;
#   4. upgrade: a changed value rolls both Deployments; bound pods keep
#      their jobs, certificates are kept, new pods are placed;
#   5. uninstall: workloads deleted first (as docs/admins/upgrades.md
#      says), then helm uninstall; nothing of the release is left: no
#      objects in the namespace but the admin's own, no cluster-scoped
#      objects, no Slurm jobs, and the namespace deletes at once.
#
# The host-process daemons of bridge-up are stopped first (two schedulers
# of one name would race); `make bridge-up` brings them back.
# shellcheck source=test/e2e/lib.sh
. "$(cd "$(dirname "$0")/../e2e" && pwd)/lib.sh"
TOP=$(cd "$E2E_DIR/../.." && pwd)
IC_NS=slurm-bridge
IC_REL=slurm-bridge
IC_CHART=$TOP/manifests/chart
IC_DIR=$(mktemp -d)
trap 'rm -rf "$IC_DIR"' EXIT
A=slurmjob.slinky.slurm.net
stack_helm || { echo "in-cluster: no helm" >&2; exit 1; }
helm() { "$HELM" --kubeconfig "$KUBECONFIG" "$@"; }
kn() { k -n "$IC_NS" "$@"; }
STACK_T_MARK=$EPOCHREALTIME

# --- Preparation -------------------------------------------------------------

# The host-process daemons and what bridge-up applied for them.
ic_stop_host() {
	stack_stop_many 10 "slurm-bridge|$BRIDGE_PIDFILE|" "slurm-bridge-admission|$ADMISSION_PIDFILE|" >/dev/null
	k delete mutatingwebhookconfiguration,validatingwebhookconfiguration slurm-bridge \
		--ignore-not-found >/dev/null
	k delete clusterrolebinding slurm-bridge-admission slurm-bridge-admission-local \
		--ignore-not-found >/dev/null
	k delete clusterrole slurm-bridge-admission --ignore-not-found >/dev/null
}

# What an earlier run left: its test namespaces go first, while its
# scheduler (the release's, or bridge-up's) still runs to end their jobs;
# then the release and its namespace.
ic_clean_leftovers() {
	local left
	left=$(k get namespaces -o name | sed -n 's#^namespace/\(e2e-.*\)$#\1#p')
	# shellcheck disable=SC2086
	[ -z "$left" ] || k delete namespace $left --wait=true --timeout=120s >/dev/null
	# Their jobs alone: the demo's, or another install's, are not ours.
	# shellcheck disable=SC2086
	[ -z "$left" ] || wait_for 60 stack_no_bridge_jobs $left ||
		echo "in-cluster: warning: jobs of $left still in Slurm"
	if helm status "$IC_REL" -n "$IC_NS" >/dev/null 2>&1; then
		echo "in-cluster: removing the release of an earlier run"
		helm uninstall "$IC_REL" -n "$IC_NS" --wait --timeout 120s >/dev/null || true
	fi
	k delete namespace "$IC_NS" --ignore-not-found --wait=true --timeout=120s >/dev/null
}

# The bridge's identity in Slurm, as docs/admins/slurm.md ("The bridge's
# identity in Slurm") asks of a site: UID 65532 has a name on the
# slurmctld host (this one), an association with the stack's accounts, and
# AdminLevel=Admin.  (For a Slurm release of its own Debian root, slurmctld
# runs there: the user is added there, STACK_EXEC.)
ic_slurm_identity() {
	"${STACK_EXEC[@]}" getent passwd 65532 >/dev/null ||
		"${STACK_EXEC[@]}" useradd --system --uid 65532 --no-create-home \
			--shell /usr/sbin/nologin slurm-bridge 2>/dev/null
	local user
	user=$("${STACK_EXEC[@]}" getent passwd 65532 | cut -d: -f1)
	if ! sacctmgr -n -P show assoc where user="$user" format=account | grep -qx bridge; then
		sacctmgr -i add user "$user" Account=bridge,research DefaultAccount=bridge \
			AdminLevel=Admin Cluster="$SLURM_CLUSTER" >/dev/null
	fi
	sacctmgr -i modify user "$user" set AdminLevel=Admin >/dev/null 2>&1 || true
	IC_SLURM_USER=$user
}

# The namespace (Pod Security "restricted", as the chart's own namespace
# would be) and the munge key Secret, made by the admin before the install.
ic_namespace() {
	k create namespace "$IC_NS" >/dev/null
	k label namespace "$IC_NS" pod-security.kubernetes.io/enforce=restricted \
		pod-security.kubernetes.io/warn=restricted >/dev/null
	wait_for 30 kn get serviceaccount default
	# The key of the munged that slurmctld uses (a release's own root
	# has its own).
	"${STACK_EXEC[@]}" cat /etc/munge/munge.key >"$IC_DIR/munge.key"
	kn create secret generic slurm-bridge-munge --from-file=munge.key="$IC_DIR/munge.key" >/dev/null
	rm -f "$IC_DIR/munge.key"
}

# The values of this install: the stack's images (imported, never pulled),
# the system node, and a four-line slurm.conf that reaches slurmctld from
# the pod network (node-up's NAT leads $POD_GATEWAY:6817 to it).
ic_values() {
	cat >"$IC_DIR/values.yaml" <<YAML
image:
  tag: dev
  pullPolicy: Never
nodeSelector: {slurm-bridge.io/system-node: "true"}
tolerations:
- {key: node-role.kubernetes.io/system, operator: Exists, effect: NoSchedule}
slurm:
  config: |
    ClusterName=$SLURM_CLUSTER
    SlurmctldHost=slurmctld($POD_GATEWAY)
    SlurmctldPort=$SLURMCTLD_PORT
    AuthType=auth/munge
munge:
  existingSecret: slurm-bridge-munge
YAML
}

deploy_ready() { # deploy_ready NAME N: N replicas, all updated and ready
	local got
	got=$(kn get deployment "$1" -o jsonpath='{.status.updatedReplicas}/{.status.readyReplicas}/{.status.replicas}' 2>/dev/null)
	[ "$got" = "$2/$2/$2" ]
}
leader_pod() { kn get pods -l slurm-bridge.io/leader=true -o jsonpath='{.items[*].metadata.name}' 2>/dev/null; }
one_leader() { [ "$(leader_pod | wc -w)" -eq 1 ]; }
lease_holder() { kn get lease slurm-bridge -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
ca_bundle() { k get "$1" slurm-bridge -o jsonpath='{.webhooks[*].clientConfig.caBundle}' 2>/dev/null; }
bundles_filled() {
	local kind b
	for kind in mutatingwebhookconfiguration validatingwebhookconfiguration; do
		for b in $(ca_bundle "$kind"); do [ -n "$b" ] || return 1; done
		[ -n "$(ca_bundle "$kind")" ] || return 1
	done
}
has_secret() { kn get secret "$1" >/dev/null 2>&1; }
secret_sum() { kn get secret "$1" -o jsonpath='{.data.tls\.crt}' 2>/dev/null | sha256sum | cut -c1-16; }
ns_jobs() { squeue -h -o %j 2>/dev/null | grep -c "^$1/" || true; }
job_state() { sacct -X -n -P -j "$1" -o State 2>/dev/null | head -n1; }
job_ended_as() { [[ "$(job_state "$1")" == "$2"* ]]; }
pod_restarts() { kn get pod "$1" -o jsonpath='{.status.containerStatuses[?(@.name=="slurm-bridge")].restartCount}' 2>/dev/null; }

# --- 1. Install --------------------------------------------------------------
scenario "in-cluster: helm install on the real node"
ic_clean_leftovers
ic_stop_host
ic_slurm_identity
ic_namespace
ic_values
stack_lap prepare
t_inst=$EPOCHREALTIME
if helm install "$IC_REL" "$IC_CHART" -n "$IC_NS" -f "$IC_DIR/values.yaml" \
	--wait --timeout 300s >"$IC_DIR/install.log" 2>&1; then
	pass "helm install --wait succeeds ($(stack_since "$t_inst"))"
else
	fail "helm install --wait failed:"
	sed 's/^/         /' "$IC_DIR/install.log" | tail -n 20
	kn get pods -o wide 2>&1 | sed 's/^/         /'
fi
stack_lap install
check "the webhook Deployment is Ready, 2 of 2" wait_for 120 deploy_ready slurm-bridge-admission 2
check "the scheduler Deployment is Ready, 2 of 2 (a follower is ready to take over)" \
	wait_for 120 deploy_ready slurm-bridge 2
check "the pods run on the system node" test "$(kn get pods -l app.kubernetes.io/part-of=slurm-bridge \
	-o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u)" = "$SYSTEM_NODE"
check "exactly one scheduler pod is labelled leader" wait_for 30 one_leader
leader=$(leader_pod)
check_match "and it holds the Lease" "$(lease_holder)" "^${leader}_"
check "the Service slurm-bridge reaches the leader alone" test -n "$leader" -a \
	"$(kn get endpointslices -l kubernetes.io/service-name=slurm-bridge \
		-o jsonpath='{.items[*].endpoints[*].targetRef.name}')" = "$leader"
check "both webhook configurations trust the webhook's CA (caBundle set by the webhook)" \
	wait_for 60 bundles_filled
for s in slurm-bridge-ca slurm-bridge-admission-tls slurm-bridge-tls slurm-bridge-extender-client; do
	check "the certificate Job made Secret $s" has_secret "$s"
done
cert_names() {
	kn get secret slurm-bridge-admission-tls -o jsonpath='{.data.tls\.crt}' | base64 -d |
		openssl x509 -noout -ext subjectAltName
}
check_match "the webhook's certificate names its Service" "$(cert_names)" "slurm-bridge-admission\.$IC_NS\.svc"
# Not a pipe: under pipefail, kubectl's SIGPIPE after grep -q's match
# would fail the check once the log runs on past it.
recovered() { grep -q 'recovered:' <(kn logs "$leader" -c slurm-bridge); }
check "the leader reached Slurm and recovered (munge and slurm.conf work in the pod)" wait_for 60 recovered

# --- 2. Smoke ----------------------------------------------------------------
scenario "in-cluster: the smoke scenarios through the in-cluster daemons"
ns=$(new_ns enabled)
# Mutated by the in-cluster webhook (schedulerName), placed by the
# in-cluster scheduler.
pod_yaml "$ns" single | sed 's/^  schedulerName: slurm-bridge$//' | k apply -f - >/dev/null
check "a single pod is bound" wait_for 60 pod_has "$ns" single "$JP_NODE"
single_job=$(pod_field "$ns" single "$JP_JOBID")
check "it has a Slurm job" test -n "$single_job"
check_eq "the job belongs to the bridge's own UID ($IC_SLURM_USER)" \
	"$(squeue -h -j "$single_job" -o %u 2>/dev/null)" "$IC_SLURM_USER"
check_eq "the webhook set schedulerName" "$(pod_field "$ns" single '{.spec.schedulerName}')" slurm-bridge
job_yaml "$ns" gang "containers: [{name: main, image: busybox, command: [sleep, '3600'],
  resources: {requests: {cpu: '1', memory: 256Mi}}}],
  tolerations: [{key: slinky.slurm.net/managed-node, operator: Exists}]" \
	"completionMode: Indexed, completions: 3, parallelism: 3" | k apply -f - >/dev/null
check_one_job "$ns" batch.kubernetes.io/job-name=gang 3 "Indexed Job" gang
out=$(pod_yaml "$ns" bad 1 256Mi "  annotations: {$A/timelimit: \"abc\"}" | k apply -f - 2>&1)
check_match "a bad annotation is refused by the in-cluster webhook, naming the key" \
	"$out" "denied the request: .*$A/timelimit"
check "and no pod was made" pod_gone "$ns" bad
k -n "$ns" delete pod single --wait=false >/dev/null
check "the deleted pod's Slurm job is cancelled" wait_for 30 job_ended_as "$single_job" CANCELLED
check "and the pod is gone (finalizer removed)" wait_for 30 pod_gone "$ns" single
stack_lap smoke

# --- 3. Failover -------------------------------------------------------------
# Twice: the leader's process killed (SIGKILL: no Lease release; a replica
# leads again once the Lease expires), then the leader's pod deleted (the
# other replica takes over). Pods made while nobody leads are bound, and
# nothing is submitted twice or lost.
leads_anew() { # leads_anew OLD_IDENTITY: a new identity leads and is labelled
	local h; h=$(lease_holder)
	[ -n "$h" ] && [ "$h" != "$1" ] && one_leader && [ "$(leader_pod)" = "${h%_*}" ]
}
scenario "in-cluster: the leader's process is killed (SIGKILL)"
pod_yaml "$ns" before | k apply -f - >/dev/null
check "a pod is bound before" wait_for 60 pod_has "$ns" before "$JP_NODE"
before_job=$(pod_field "$ns" before "$JP_JOBID")
jobs0=$(ns_jobs "$ns")
old=$(leader_pod) old_id=$(lease_holder)
cid=$(kn get pod "$old" -o jsonpath='{.status.containerStatuses[?(@.name=="slurm-bridge")].containerID}')
restarts0=$(pod_restarts "$old")
ctr --address "$CONTAINERD_SOCK" -n k8s.io tasks kill -s SIGKILL "${cid#containerd://}" >/dev/null
killed=$(date +%s)
pod_yaml "$ns" between | k apply -f - >/dev/null
check "a replica leads again, under a new identity, and is labelled" wait_for 60 leads_anew "$old_id"
took=$(( $(date +%s) - killed ))
check "within the Lease duration, a retry, a container restart and the label (15 + 2 + 5 + 2 s; took ${took}s)" \
	test "$took" -le 24
check "the pod created in between is bound" wait_for 60 pod_has "$ns" between "$JP_NODE"
check_eq "the first pod keeps its job" "$(pod_field "$ns" before "$JP_JOBID")" "$before_job"
check_eq "nothing was submitted twice (one more job: the new pod's)" "$(ns_jobs "$ns")" "$((jobs0 + 1))"
restarted() { [ "$(pod_restarts "$old")" -gt "$restarts0" ]; }
check "the killed container was restarted by the kubelet" restarted
check "both replicas are Ready again" wait_for 90 deploy_ready slurm-bridge 2

scenario "in-cluster: the leader's pod is deleted; the other replica takes over"
old=$(leader_pod) old_id=$(lease_holder)
jobs0=$(ns_jobs "$ns")
k -n "$IC_NS" delete pod "$old" --wait=false >/dev/null
killed=$(date +%s)
pod_yaml "$ns" between2 | k apply -f - >/dev/null
other_holds() { local h; h=$(lease_holder); [ -n "$h" ] && [ "$h" != "$old_id" ] && [ "${h%_*}" != "$old" ]; }
check "the other replica holds the Lease" wait_for 60 other_holds
took=$(( $(date +%s) - killed ))
check "at once: the old leader released it on SIGTERM (took ${took}s)" test "$took" -le 5
other_leads() { leads_anew "$old_id" && [ "$(leader_pod)" != "$old" ]; }
check "and labels its pod once it has recovered" wait_for 30 other_leads
check "the pod created in between is bound" wait_for 60 pod_has "$ns" between2 "$JP_NODE"
check_eq "nothing was submitted twice" "$(ns_jobs "$ns")" "$((jobs0 + 1))"
check_eq "the first pod still has its job" "$(pod_field "$ns" before "$JP_JOBID")" "$before_job"
check "the Deployment's new pod joins as a follower: 2 of 2 Ready" wait_for 90 deploy_ready slurm-bridge 2
check "still one leader" one_leader
stack_lap failover

# --- 4. Upgrade --------------------------------------------------------------
scenario "in-cluster: helm upgrade"
sum0=$(secret_sum slurm-bridge-admission-tls)
pods0=$(kn get pods -l app.kubernetes.io/part-of=slurm-bridge -o jsonpath='{.items[*].metadata.name}')
if helm upgrade "$IC_REL" "$IC_CHART" -n "$IC_NS" -f "$IC_DIR/values.yaml" \
	--set config.slurmPollInterval=500ms --wait --timeout 300s >"$IC_DIR/upgrade.log" 2>&1; then
	pass "helm upgrade --wait succeeds (a config change)"
else
	fail "helm upgrade failed:"
	sed 's/^/         /' "$IC_DIR/upgrade.log" | tail -n 20
fi
check_eq "revision 2" "$(helm status "$IC_REL" -n "$IC_NS" -o json | jq -r .version)" 2
replaced() {
	local p
	for p in $(kn get pods -l app.kubernetes.io/part-of=slurm-bridge -o jsonpath='{.items[*].metadata.name}'); do
		[[ " $pods0 " == *" $p "* ]] && return 1
	done
	return 0
}
check "every daemon pod was replaced (the config's checksum rolls them)" wait_for 120 replaced
both_ready() { deploy_ready slurm-bridge 2 && deploy_ready slurm-bridge-admission 2; }
check "both Deployments are Ready again" wait_for 120 both_ready
check "one leader" wait_for 60 one_leader
check_eq "the certificates are kept (the Job found them valid)" "$(secret_sum slurm-bridge-admission-tls)" "$sum0"
check_eq "bound pods keep their jobs" "$(pod_field "$ns" before "$JP_JOBID")" "$before_job"
check_eq "and those jobs still run" "$(job_field "$before_job" JobState)" RUNNING
pod_yaml "$ns" after | k apply -f - >/dev/null
check "a pod made after the upgrade is bound" wait_for 60 pod_has "$ns" after "$JP_NODE"
stack_lap upgrade

# --- 5. Uninstall ------------------------------------------------------------
scenario "in-cluster: uninstall leaves nothing behind"
ns_gone() { ! k get namespace "$1" >/dev/null 2>&1; }
k delete namespace "$ns" --wait=false >/dev/null
check "the workloads are deleted while the scheduler runs (namespace gone)" wait_for 120 ns_gone "$ns"
check "and their Slurm jobs ended" wait_for 60 stack_no_bridge_jobs "$ns"
# The nodes the install tainted (annotated with its name): uninstall takes
# the managed-node taint and the annotation off them, and only them.
node_marks() {
	k get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.annotations.slinky\.slurm\.net/managed-node-install} {range .spec.taints[*]}{.key},{end}{"\n"}{end}'
}
tainted_before=$(node_marks | awk 'NF >= 3 && $3 ~ /slinky.slurm.net\/managed-node/ && $2 != "" {print $1}')
check "the install named the nodes it tainted" test -n "$tainted_before"
if helm uninstall "$IC_REL" -n "$IC_NS" --wait --timeout 180s >"$IC_DIR/uninstall.log" 2>&1; then
	pass "helm uninstall --wait succeeds"
else
	fail "helm uninstall failed:"
	sed 's/^/         /' "$IC_DIR/uninstall.log" | tail -n 20
fi
# What is left in the namespace, but for what Kubernetes or the admin made
# (the default ServiceAccount, kube-root-ca.crt, the munge key Secret).
ns_left() {
	kn get all,configmaps,secrets,serviceaccounts,roles,rolebindings,leases,poddisruptionbudgets,jobs \
		-o name 2>/dev/null | grep -v -e '^serviceaccount/default$' -e '^configmap/kube-root-ca.crt$' \
		-e '^secret/slurm-bridge-munge$'
}
untainted() {
	local n
	for n in $tainted_before; do
		node_marks | awk -v n="$n" '$1 == n' | grep -q 'managed-node' && return 1
	done
	return 0
}
check "uninstall took the managed-node taint off the nodes it had tainted" wait_for 60 untainted
nothing_in_ns() { [ -z "$(ns_left)" ]; }
check "nothing of the release is left in the namespace" wait_for 60 nothing_in_ns
left=$(ns_left)
[ -z "$left" ] || echo "         left: $(echo $left)"
cluster_left=$(k get clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingwebhookconfigurations \
	-o name 2>/dev/null | grep slurm-bridge || true)
check_eq "no cluster-scoped object is left" "${cluster_left:-none}" none
check "no pod is left with the bridge's finalizer" test -z \
	"$(k get pods -A -o jsonpath='{range .items[*]}{.metadata.finalizers}{"\n"}{end}' | grep scheduler.slinky.slurm.net || true)"
k delete namespace "$IC_NS" --wait=false >/dev/null 2>&1
check "the namespace deletes at once (no finalizer waits on a gone controller)" wait_for 60 ns_gone "$IC_NS"
stack_lap uninstall

echo "in-cluster: $(stack_laps)"
e2e_summary
