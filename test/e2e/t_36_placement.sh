# shellcheck shell=bash
# The scheduler contract: before a pod's Slurm job is made, the bridge runs
# kube-scheduler's filters (common/fit.c, bridge/exclude.c) over every
# node; the nodes that fail are the job's ExcNodeList, and a pod no node
# fits stays Pending in kube-scheduler's words, with a FailedScheduling
# Event.  Node changes bring pending and unfit pods back.  One scenario per
# constraint, each in a namespace of its own; the last checks, for every
# pod bound here, that its node satisfies its nodeSelector and required
# node affinity.  The nodes are left as they were found: what a scenario
# puts on them (labels, a taint, a cordon, an extended resource) comes off,
# on failure too (the EXIT trap).

last=n$NODES                     # the node scenarios 3 and 9 single out
L=e2e-placement.slurm-bridge.io  # this file's node label keys
PL_NAMESPACES=()
PL_TAINTED=() PL_CORDONED="" PL_FOO="" PL_RESV=""

# The nodes as this file must leave them.
nodes_state() {
	k get nodes -o json | jq -S '[.items[] | {name: .metadata.name,
		labels: .metadata.labels, taints: (.spec.taints // []),
		unschedulable: (.spec.unschedulable // false),
		allocatable: .status.allocatable, capacity: .status.capacity}]'
}
PL_NODES_BEFORE=$(nodes_state)
slurm_state() { sinfo -h -n "$1" -o '%T' | head -n1; }
slurm_usable() { [[ $(slurm_state "$1") =~ ^(idle|mixed|allocated)$ ]]; }
slurm_drained() { [[ $(slurm_state "$1") == drain* ]]; }
PL_SLURM_USABLE=()
for i in $(seq 1 "$NODES"); do slurm_usable "n$i" && PL_SLURM_USABLE+=("n$i"); done

# foo_off NODE: its status without example.com/foo.
foo_off() {
	k patch node "$1" --subresource=status --type=merge -p \
		'{"status":{"allocatable":{"example.com/foo":null},"capacity":{"example.com/foo":null}}}' >/dev/null
}

placement_cleanup() {
	local n
	for n in "${PL_TAINTED[@]}"; do k taint node "$n" dedicated=team-a:NoSchedule- >/dev/null 2>&1; done
	PL_TAINTED=()
	[ -z "$PL_CORDONED" ] || k uncordon "$PL_CORDONED" >/dev/null 2>&1
	PL_CORDONED=""
	[ -z "$PL_FOO" ] || foo_off "$PL_FOO" 2>/dev/null
	PL_FOO=""
	[ -z "$PL_RESV" ] || scontrol delete reservation="$PL_RESV" >/dev/null 2>&1
	PL_RESV=""
	k label nodes --all "$L/only-" "$L/pending-" >/dev/null 2>&1
	[ "${#PL_NAMESPACES[@]}" -eq 0 ] || k delete namespace "${PL_NAMESPACES[@]}" --wait=false >/dev/null 2>&1
	PL_NAMESPACES=()
}
trap placement_cleanup EXIT

# pl_ns: a fresh enabled namespace, deleted at the end (in PL_NS).
pl_ns() { PL_NS=$(new_ns enabled); PL_NAMESPACES+=("$PL_NS"); }

# ppod NS NAME SPEC [CPU]: pod_yaml's pod with SPEC (YAML lines at the
# indentation of spec's fields) added to its spec.
ppod() {
	local y
	y=$(pod_yaml "$1" "$2" "${4:-1}" 64Mi)
	printf '%s\n' "${y/$'\nspec:\n'/$'\nspec:\n'$3$'\n'}"
}
# A required node affinity of one term (its one requirement in flow form).
affinity() {
	printf '  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - %s: [%s]\n' "$1" "$2"
}

# Slurm's compressed form of a node list, sorted (a pending job's
# ExcNodeList keeps the order it was updated with, e.g. n4,n2).
hostlist() { [ -z "$1" ] || scontrol show hostlistsorted "$1"; }
# All nodes but those given, compressed.
all_but() {
	local i out=()
	for i in $(seq 1 "$NODES"); do
		[[ " $* " == *" n$i "* ]] || out+=("n$i")
	done
	hostlist "$(IFS=,; echo "${out[*]}")"
}
exc_nodes() { hostlist "$(job_field "$1" ExcNodeList)"; }
exc_is() { [ "$(exc_nodes "$1")" = "$2" ]; }

cond_reason() { pod_field "$1" "$2" '{.status.conditions[?(@.type=="PodScheduled")].status}/{.status.conditions[?(@.type=="PodScheduled")].reason}'; }
# The messages of a pod's FailedScheduling Events, one a line.
fs_events() {
	k -n "$1" get events --field-selector "involvedObject.name=$2,reason=FailedScheduling" \
		-o jsonpath='{range .items[*]}{.message}{"\n"}{end}'
}
fs_event_is() { fs_events "$1" "$2" | grep -qxF "$3"; }
cond_is() { [ "$(cond_msg "$1" "$2")" = "$3" ]; }
# no_job NS POD: Slurm holds no job of the pod.
no_job() { [ -z "$(squeue -h -n "$1/$2" -o %i)" ]; }

# unfit NS POD MESSAGE: the pod is Pending with kube-scheduler's
# FailedScheduling MESSAGE (condition and Event), and no Slurm job.
unfit() {
	local ns=$1 pod=$2 want=$3
	check "$pod waits: PodScheduled says why" wait_for 30 cond_is "$ns" "$pod" "$want"
	check_eq "  in kube-scheduler's words" "$(cond_msg "$ns" "$pod")" "$want"
	check_eq "  PodScheduled False, reason Unschedulable" "$(cond_reason "$ns" "$pod")" False/Unschedulable
	check "  a FailedScheduling Event with the same message" wait_for 10 fs_event_is "$ns" "$pod" "$want"
	check_eq "  not bound" "$(pod_field "$ns" "$pod" "$JP_NODE")" ""
	check "  and no Slurm job" no_job "$ns" "$pod"
}

scenario "nodeSelector: a label only n3 has"
pl_ns; ns=$PL_NS
k label node n3 "$L/only=n3" >/dev/null
ppod "$ns" sel "  nodeSelector: {$L/only: n3}" | k apply -f - >/dev/null
check "the pod is bound" wait_for 30 pod_has "$ns" sel "$JP_NODE"
check_eq "to n3" "$(pod_field "$ns" sel "$JP_NODE")" n3
job=$(pod_field "$ns" sel "$JP_JOBID")
check_eq "its job's ExcNodeList names the others" "$(exc_nodes "$job")" "$(all_but n3)"
check_eq "and it runs on n3" "$(job_field "$job" NodeList)" n3

scenario "required nodeAffinity: hostname In [n2], and matchFields metadata.name In [n2]"
pl_ns; ns=$PL_NS
ppod "$ns" aff "$(affinity matchExpressions '{key: kubernetes.io/hostname, operator: In, values: [n2]}')" |
	k apply -f - >/dev/null
ppod "$ns" field "$(affinity matchFields '{key: metadata.name, operator: In, values: [n2]}')" |
	k apply -f - >/dev/null
check "both pods are bound" wait_for 30 all_bound "$ns" aff field
check_eq "matchExpressions: to n2" "$(pod_field "$ns" aff "$JP_NODE")" n2
check_eq "matchFields: to n2" "$(pod_field "$ns" field "$JP_NODE")" n2
check_eq "the job excludes the others" "$(exc_nodes "$(pod_field "$ns" field "$JP_JOBID")")" "$(all_but n2)"

scenario "taints: untolerated NoSchedule excludes nodes; no node left keeps the pod Pending; the taint off, it is bound"
pl_ns; ns=$PL_NS
if k get nodes -o jsonpath='{.items[*].spec.taints[*].key}' | grep -qw dedicated; then
	fail "a node already has a dedicated taint: not ours to touch"
fi
for i in $(seq 1 $((NODES - 1))); do
	k taint node "n$i" dedicated=team-a:NoSchedule >/dev/null && PL_TAINTED+=("n$i")
done
ppod "$ns" notol "" | k apply -f - >/dev/null
check "a pod without the toleration is bound" wait_for 30 pod_has "$ns" notol "$JP_NODE"
check_eq "to the one untainted node" "$(pod_field "$ns" notol "$JP_NODE")" "$last"
ppod "$ns" on-n1 "  nodeSelector: {kubernetes.io/hostname: n1}" | k apply -f - >/dev/null
unfit "$ns" on-n1 "0/$NODES nodes are available: 1 node(s) had untolerated taint(s), $((NODES - 1)) node(s) didn't match Pod's node affinity/selector."
for n in "${PL_TAINTED[@]}"; do k taint node "$n" dedicated=team-a:NoSchedule- >/dev/null; done
PL_TAINTED=()
check "the taint removed, the waiting pod is bound" wait_for 30 pod_has "$ns" on-n1 "$JP_NODE"
check_eq "to n1" "$(pod_field "$ns" on-n1 "$JP_NODE")" n1

scenario "hostPort 9000: a Deployment of $((NODES + 1)) replicas, one per node, the last Pending"
pl_ns; ns=$PL_NS
# The premise: no pod of another test (or a leftover) holds the port.
held=$(k get pods -A -o json | jq -r '.items[] | select(.spec.nodeName != null and
	.status.phase != "Succeeded" and .status.phase != "Failed") |
	select([.spec.containers[].ports[]?.hostPort] | index(9000)) |
	"\(.metadata.namespace)/\(.metadata.name)"' | tr '\n' ' ')
check_eq "no other pod holds hostPort 9000" "$held" ""
refits() { curl -s "http://$LOCAL_IP:$BRIDGE_PORT/metrics" | sed -n 's/^slurm_bridge_refits_total //p'; }
refits0=$(refits)
k apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: hp, namespace: $ns}
spec:
  replicas: $((NODES + 1))
  selector: {matchLabels: {app: hp}}
  template:
    metadata: {labels: {app: hp}}
    spec:
      schedulerName: slurm-bridge
      terminationGracePeriodSeconds: 0
      tolerations: [{key: slinky.slurm.net/managed-node, operator: Exists}]
      containers:
      - {name: main, image: busybox, command: [sleep, "3600"],
         ports: [{containerPort: 9000, hostPort: 9000}],
         resources: {requests: {cpu: "1", memory: 64Mi}}}
YAML
hp_pods() { k -n "$ns" get pods -l app=hp -o json; }
# Settled: NODES Running, and one whose PodScheduled names the port.
hp_msg="0/$NODES nodes are available: $NODES node(s) didn't have free ports for the requested pod ports."
# shellcheck disable=SC2016 # jq's $m
hp_settled() {
	local j
	j=$(hp_pods) || return 1
	[ "$(jq '[.items[] | select(.status.phase == "Running")] | length' <<<"$j")" -eq "$NODES" ] &&
		[ "$(jq --arg m "$hp_msg" '[.items[] | select(.status.conditions[]? | .type == "PodScheduled" and .status == "False" and .message == $m)] | length' <<<"$j")" -eq 1 ]
}
check "$NODES Running, one Pending for the port" wait_for 60 hp_settled
j=$(hp_pods)
check_eq "on $NODES distinct nodes" \
	"$(jq -r '.items[] | select(.status.phase == "Running") | .spec.nodeName' <<<"$j" | sort -u | wc -l)" "$NODES"
check_eq "$((NODES + 1)) pods in all (none replaced)" "$(jq '.items | length' <<<"$j")" $((NODES + 1))
check_eq "none Failed" "$(jq '[.items[] | select(.status.phase == "Failed")] | length' <<<"$j")" 0
pending=$(jq -r '.items[] | select(.status.phase != "Running") | .metadata.name' <<<"$j")
check_eq "the last one's message" "$(cond_msg "$ns" "$pending")" "$hp_msg"
check "  and its FailedScheduling Event" fs_event_is "$ns" "$pending" "$hp_msg"
check_eq "  not bound" "$(pod_field "$ns" "$pending" "$JP_NODE")" ""
check "  and no Slurm job" no_job "$ns" "$pending"
# Two pods Slurm gave one node before either was bound: the second's
# allocation is given back (not asserted: it depends on timing).
echo "    allocations given back meanwhile (slurm_bridge_refits_total): $(($(refits) - ${refits0:-0}))"

scenario "sidecar: a 3-CPU restartable init container beside a 2-CPU container is a 5-CPU job"
pl_ns; ns=$PL_NS
ppod "$ns" sidecar '  initContainers:
  - name: side
    image: busybox
    command: ["sleep", "3600"]
    restartPolicy: Always
    resources:
      requests: {cpu: "3", memory: 64Mi}' 2 | k apply -f - >/dev/null
check "the pod gets its job" wait_for 30 pod_has "$ns" sidecar "$JP_JOBID"
check_eq "NumCPUs" "$(job_field "$(pod_field "$ns" sidecar "$JP_JOBID")" NumCPUs)" 5
check "and it is bound" wait_for 30 pod_has "$ns" sidecar "$JP_NODE"

scenario "extended resource example.com/foo: none advertised, Pending; n2 advertises 2, bound there"
pl_ns; ns=$PL_NS
ppod "$ns" ext "" | sed 's|^      requests: {cpu: "1", memory: "64Mi"}$|      requests: {cpu: "1", memory: "64Mi", example.com/foo: "1"}\n      limits: {example.com/foo: "1"}|' |
	k apply -f - >/dev/null
check_eq "the pod asks for example.com/foo" \
	"$(pod_field "$ns" ext '{.spec.containers[0].resources.requests.example\.com/foo}')" 1
unfit "$ns" ext "0/$NODES nodes are available: $NODES Insufficient example.com/foo."
PL_FOO=n2
k patch node n2 --subresource=status --type=merge -p \
	'{"status":{"allocatable":{"example.com/foo":"2"},"capacity":{"example.com/foo":"2"}}}' >/dev/null
foo() { k get node n2 -o jsonpath='{.status.allocatable.example\.com/foo}'; }
check_eq "n2's status takes example.com/foo: 2" "$(foo)" 2
check "the pod is bound" wait_for 30 pod_has "$ns" ext "$JP_NODE"
check_eq "to n2" "$(pod_field "$ns" ext "$JP_NODE")" n2
check_eq "n2 still advertises it (kwok did not write it over)" "$(foo)" 2
foo_off n2 && PL_FOO=""
check_eq "n2's status restored" "$(foo)" ""

scenario "a label added while the job is pending: its ExcNodeList follows"
pl_ns; ns=$PL_NS
# Slurm's nodes reserved for another user: the pod's job waits.
PL_RESV=e2e-place-$$
scontrol create reservation reservationname="$PL_RESV" users=alice nodes=ALL \
	starttime=now duration=10 flags=ignore_jobs >/dev/null
k label node n1 "$L/pending=yes" >/dev/null
ppod "$ns" waits "  nodeSelector: {$L/pending: \"yes\"}" | k apply -f - >/dev/null
job=""
job_pending() { job=$(pod_jobid "$ns" waits); [ -n "$job" ] && job_is "$job" PENDING; }
check "the pod's job waits in Slurm (nodes reserved)" wait_for 30 job_pending
check_eq "its ExcNodeList: all but n1" "$(exc_nodes "$job")" "$(all_but n1)"
k label node n3 "$L/pending=yes" >/dev/null
check "n3 labelled too: the pending job's ExcNodeList follows" wait_for 30 exc_is "$job" "$(all_but n1 n3)"
echo "    ExcNodeList=$(job_field "$job" ExcNodeList)"
check_eq "the same job, still pending" "$(job_field "$job" JobState)" PENDING
scontrol delete reservation="$PL_RESV" >/dev/null && PL_RESV=""
check "the reservation gone, the pod is bound" wait_for 60 pod_has "$ns" waits "$JP_NODE"
check_match "to a labelled node" "$(pod_field "$ns" waits "$JP_NODE")" '^n[13]$'
check_eq "by that job" "$(pod_field "$ns" waits "$JP_JOBID")" "$job"

scenario "what the rule cannot decide node by node waits, naming the field"
pl_ns; ns=$PL_NS
ppod "$ns" anti '  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: anti}}
        topologyKey: kubernetes.io/hostname' | k apply -f - >/dev/null
ppod "$ns" spread '  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: spread}}' | k apply -f - >/dev/null
ppod "$ns" claim '  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data}' | k apply -f - >/dev/null
for p in anti spread claim; do
	check "$p waits with a message" wait_for 30 pod_has "$ns" "$p" '{.status.conditions[?(@.type=="PodScheduled")].message}'
done
check_match "required podAntiAffinity: named" "$(cond_msg "$ns" anti)" \
	'^spec\.affinity\.podAntiAffinity\.requiredDuringSchedulingIgnoredDuringExecution: slurm-bridge cannot yet '
check_match "topologySpreadConstraints DoNotSchedule: named" "$(cond_msg "$ns" spread)" \
	'^spec\.topologySpreadConstraints\[0\]: whenUnsatisfiable DoNotSchedule cannot yet '
check_match "a PVC volume: named" "$(cond_msg "$ns" claim)" '^spec\.volumes\[0\] \(data\): '
for p in anti spread claim; do
	check_eq "$p: PodScheduled False, reason Unschedulable" "$(cond_reason "$ns" "$p")" False/Unschedulable
	check_eq "$p: not bound" "$(pod_field "$ns" "$p" "$JP_NODE")" ""
	check "$p: no Slurm job" no_job "$ns" "$p"
done

scenario "a cordoned node: unschedulable, and the bridge drains it in Slurm; uncordoned, the pod is bound there"
pl_ns; ns=$PL_NS
k cordon "$last" >/dev/null && PL_CORDONED=$last
check "cordon drains $last in Slurm" wait_for 20 slurm_drained "$last"
ppod "$ns" on-last "  nodeSelector: {kubernetes.io/hostname: $last}" | k apply -f - >/dev/null
unfit "$ns" on-last "0/$NODES nodes are available: 1 node(s) were unschedulable, $((NODES - 1)) node(s) didn't match Pod's node affinity/selector."
k uncordon "$last" >/dev/null && PL_CORDONED=""
check "uncordoned: Slurm resumes $last" wait_for 30 slurm_usable "$last"
check "and the waiting pod is bound" wait_for 30 pod_has "$ns" on-last "$JP_NODE"
check_eq "to $last" "$(pod_field "$ns" on-last "$JP_NODE")" "$last"

scenario "invariant: every pod bound here is on a node its nodeSelector and required node affinity allow"
# Checked before the labels come off (a label removed later would be
# IgnoredDuringExecution).
inv=$({ k get nodes -o json; for n in "${PL_NAMESPACES[@]}"; do k -n "$n" get pods -o json; done; } |
	python3 -c '
import json, sys
dec, text, docs, i = json.JSONDecoder(), sys.stdin.read(), [], 0
while i < len(text):
    if text[i].isspace():
        i += 1; continue
    o, i = dec.raw_decode(text, i); docs.append(o)
nodes = {n["metadata"]["name"]: n for n in docs[0]["items"]}
def req(x, have):
    op, vals = x.get("operator"), x.get("values") or []
    if op == "In": return have is not None and have in vals
    if op == "NotIn": return have is None or have not in vals
    if op == "Exists": return have is not None
    if op == "DoesNotExist": return have is None
    if op in ("Gt", "Lt"):
        try: a, b = int(have), int(vals[0])
        except Exception: return False
        return a > b if op == "Gt" else a < b
    return False
def term(t, node):
    labels = node["metadata"].get("labels") or {}
    ex, fl = t.get("matchExpressions") or [], t.get("matchFields") or []
    if not ex and not fl: return False
    return all(req(x, labels.get(x["key"])) for x in ex) and \
        all(x["key"] == "metadata.name" and req(x, node["metadata"]["name"]) for x in fl)
n = bad = 0
for d in docs[1:]:
    for p in d["items"]:
        on = p["spec"].get("nodeName")
        if not on: continue
        n += 1
        node, spec = nodes.get(on), p["spec"]
        ok = node is not None
        labels = (node or {}).get("metadata", {}).get("labels") or {}
        ok = ok and all(labels.get(k) == v for k, v in (spec.get("nodeSelector") or {}).items())
        r = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
             .get("requiredDuringSchedulingIgnoredDuringExecution"))
        if ok and r is not None:
            ok = any(term(t, node) for t in r.get("nodeSelectorTerms") or [])
        if not ok:
            bad += 1
            print("violation: %s/%s on %s" % (p["metadata"]["namespace"], p["metadata"]["name"], on), file=sys.stderr)
print(n, bad)
')
read -r inv_n inv_bad <<<"$inv"
check "pods bound in this file's namespaces (${inv_n:-?})" test "${inv_n:-0}" -ge 10
check_eq "bound where their node selector and required node affinity allow: violations" "${inv_bad:-?}" 0

scenario "the nodes are left as they were found"
placement_cleanup
nodes_back() { [ "$(nodes_state)" = "$PL_NODES_BEFORE" ]; }
check "labels, taints, cordons and extended resources as before" wait_for 10 nodes_back
nodes_back || diff <(echo "$PL_NODES_BEFORE") <(nodes_state) | head -20
for n in "${PL_SLURM_USABLE[@]}"; do
	slurm_usable "$n" || fail "Slurm node $n, usable before, is $(slurm_state "$n")"
done
