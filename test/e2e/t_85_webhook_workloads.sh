# shellcheck shell=bash
# The webhook through the real kube-apiserver, with the real Job, JobSet and
# LeaderWorkerSet controllers: gang labels derived from the workload, typed
# GRES, topology hints, and the validating webhook's refusals.  Pods here set
# neither schedulerName nor the managed-node toleration: the webhook adds them.

WW_GROUP='{.metadata.labels.scheduling\.x-k8s\.io/pod-group}'
WW_MIN='{.metadata.annotations.scheduler\.slinky\.slurm\.net/min-member}'
WW_SCHED='{.spec.schedulerName}'
A=slurmjob.slinky.slurm.net

# ww_ann KEY: the JSONPath of annotation KEY.
ww_ann() { printf '{.metadata.annotations.%s}' "${1//./\\.}"; }

# ww_pod NS NAME [META] [SPEC] [LIMITS]: a bare pod; META and SPEC are lines
# added under metadata and spec, LIMITS entries added to its limits.
ww_pod() {
	cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $2
  namespace: $1
${3:-}
spec:
  terminationGracePeriodSeconds: 0
${4:-}
  containers:
  - name: main
    image: busybox
    command: [sleep, "3600"]
    resources:
      requests: {cpu: "1", memory: 64Mi}
      limits: {cpu: "1", memory: 64Mi${5:+, $5}}
YAML
}

# ww_job NS NAME Indexed|NonIndexed PARALLELISM [TEMPLATE_META]: a Job with
# completions = parallelism; TEMPLATE_META is its pod template's metadata.
ww_job() {
	job_yaml "$1" "$2" "$E2E_POD" "completionMode: $3, completions: $4, parallelism: $4" "${5:-}"
}

# ww_npods NS SELECTOR N: exactly N pods match.
ww_npods() { n_with "$1" "$2" '{.metadata.name}' "$3"; }
# ww_values NS SELECTOR JSONPATH: the values over the matching pods with their
# counts, e.g. "3x sim" or "2x (none)".
ww_values() {
	local p
	for p in $(pods_by "$1" "$2"); do pod_field "$1" "$p" "$3"; echo; done |
		sort | uniq -c | awk '{printf "%s%dx %s", (NR > 1 ? ", " : ""), $1, ($2 == "" ? "(none)" : $2)}'
}
# ww_distinct NS SELECTOR JSONPATH: how many different non-empty values.
ww_distinct() {
	local p
	for p in $(pods_by "$1" "$2"); do pod_field "$1" "$p" "$3"; echo; done | sed '/^$/d' | sort -u | wc -l
}

# ww_refused DESC OUTPUT RC KEY VALUE [REGEX]: the request failed because a
# webhook denied it, and the message after "denied the request" names KEY
# (literally), VALUE (as a whole word) and matches REGEX; empty ones are not
# checked.
ww_refused() {
	local d=$1 out=$2 rc=$3 key=$4 val=$5 re=${6:-} msg v
	msg=${out#*denied the request}
	if [ "$rc" -eq 0 ]; then fail "$d: admitted: $out"; return; fi
	if [ "$msg" = "$out" ]; then fail "$d: not refused by a webhook: $out"; return; fi
	if [ -n "$key" ] && [[ $msg != *"$key"* ]]; then fail "$d: message does not name $key: $msg"; return; fi
	v=$(printf '%s' "$val" | sed 's/[][\\.*^$+?(){}|]/\\&/g')
	if [ -n "$val" ] && ! [[ $msg =~ (^|[^[:alnum:]_/.-])$v([^[:alnum:]_/-]|$) ]]; then
		fail "$d: message does not name the value '$val': $msg"; return
	fi
	if [ -n "$re" ] && ! [[ $msg =~ $re ]]; then fail "$d: message does not match /$re/: $msg"; return; fi
	pass "$d"
}
# ww_create_refused DESC NS NAME KEY VALUE META [REGEX]: creating the pod
# ww_pod NS NAME META is refused (see ww_refused).
ww_create_refused() {
	local out rc
	out=$(ww_pod "$2" "$3" "$6" | k apply -f - 2>&1); rc=$?
	ww_refused "$1" "$out" "$rc" "$4" "$5" "${7:-}"
}
# ww_admitted DESC NS NAME [META] [SPEC] [LIMITS]: creating the pod succeeds.
ww_admitted() {
	local d=$1 out; shift
	if out=$(ww_pod "$@" | k apply -f - 2>&1); then pass "$d"; else fail "$d: $out"; fi
}

# ww_gang NS SEL N GROUP WHAT SIZE_FROM: the N pods selected by SEL are
# created, labelled as gang GROUP with min-member N (SIZE_FROM says where N
# comes from), and share one Slurm job of N tasks.
ww_gang() {
	local ns=$1 sel=$2 n=$3 group=$4 what=$5 from=$6
	check "the $what's $n pods are created" wait_for 60 ww_npods "$ns" "$sel" "$n"
	check_eq "all get the pod-group label of the $what" "$(ww_values "$ns" "$sel" "$WW_GROUP")" "${n}x $group"
	check_eq "all get min-member = $from" "$(ww_values "$ns" "$sel" "$WW_MIN")" "${n}x $n"
	check_one_job "$ns" "$sel" "$n" "$what"
}

# ww_no_gang NS SEL N SCHEDULER: the N pods of the Job SEL selects are
# created with schedulerName SCHEDULER, and no pod-group label or min-member.
ww_no_gang() {
	local ns=$1 sel=$2 n=$3
	check "the Job's $n pods are created" wait_for 20 ww_npods "$ns" "$sel" "$n"
	check_eq "all have schedulerName $4" "$(ww_values "$ns" "$sel" "$WW_SCHED")" "${n}x $4"
	check_eq "no pod-group label" "$(ww_values "$ns" "$sel" "$WW_GROUP")" "${n}x (none)"
	check_eq "no min-member annotation" "$(ww_values "$ns" "$sel" "$WW_MIN")" "${n}x (none)"
}

# --- Mutations: gangs derived from the workload --------------------------

scenario "webhook: an Indexed Job is labelled as one gang"
ns=$(new_ns enabled)
ww_job "$ns" sim Indexed 3 | k apply -f - >/dev/null
sel=batch.kubernetes.io/job-name=sim
ww_gang "$ns" "$sel" 3 sim Job parallelism
check_eq "all get schedulerName slurm-bridge" "$(ww_values "$ns" "$sel" "$WW_SCHED")" "3x slurm-bridge"
k delete namespace "$ns" --wait=false >/dev/null

scenario "webhook: a non-indexed Job is not a gang"
ns=$(new_ns enabled)
ww_job "$ns" bag NonIndexed 2 | k apply -f - >/dev/null
sel=batch.kubernetes.io/job-name=bag
ww_no_gang "$ns" "$sel" 2 slurm-bridge
check "both get a job id" wait_for 30 n_with "$ns" "$sel" "$JP_JOBID" 2
check_eq "each its own Slurm job" "$(ww_distinct "$ns" "$sel" "$JP_JOBID")" 2
k delete namespace "$ns" --wait=false >/dev/null

scenario "webhook: a JobSet is labelled as one gang (real JobSet controller)"
ns=$(new_ns enabled)
jobset_yaml "$ns" train "$E2E_POD" workers:2:2 driver:1:1 | k apply -f - >/dev/null
sel=jobset.sigs.k8s.io/jobset-name=train
ww_gang "$ns" "$sel" 5 train JobSet "sum of replicas x parallelism"
k delete namespace "$ns" --wait=false >/dev/null

scenario "webhook: a LeaderWorkerSet group is labelled as one gang (real LWS controller)"
ns=$(new_ns enabled)
lws_yaml "$ns" serve 1 3 "$E2E_POD" | k apply -f - >/dev/null
sel=leaderworkerset.sigs.k8s.io/name=serve
ww_gang "$ns" "$sel" 3 serve-0 group size
k delete namespace "$ns" --wait=false >/dev/null

scenario "webhook: PodGroup members get min-member from the PodGroup"
ns=$(new_ns enabled)
podgroup_yaml "$ns" pg 2 | k apply -f - >/dev/null
sleep 1 # the webhook may learn of PodGroups through a watch
for i in 1 2; do ww_pod "$ns" "m$i" "  labels: {scheduling.x-k8s.io/pod-group: pg}" | k apply -f - >/dev/null; done
sel=scheduling.x-k8s.io/pod-group=pg
check_eq "both get min-member = minMember" "$(ww_values "$ns" "$sel" "$WW_MIN")" "2x 2"
check "both are bound" wait_for 30 all_bound "$ns" m1 m2
check "they share one Slurm job" same_jobid "$ns" m1 m2
check_eq "of 2 tasks" "$(job_field "$(pod_field "$ns" m1 "$JP_JOBID")" NumTasks)" 2
k delete namespace "$ns" --wait=false >/dev/null

# --- Mutations: GRES and topology ------------------------------------------

scenario "webhook: typed GPUs from the product node selector"
ns=$(new_ns enabled)
# The stack's Slurm nodes have untyped GPUs: this pod is not expected to run.
ww_pod "$ns" a100 "" "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}" \
	'nvidia.com/gpu: "2"' | k apply -f - >/dev/null
check_eq "nvidia.com/gpu.product A100 makes gres gpu:a100:2" "$(pod_field "$ns" a100 "$(ww_ann "$A/gres")")" gpu:a100:2
k -n "$ns" delete pod a100 --wait=false >/dev/null
ww_pod "$ns" own "  annotations: {$A/gres: \"gpu:1\"}" "" 'nvidia.com/gpu: "2"' | k apply -f - >/dev/null
check_eq "a gres the user wrote is kept" "$(pod_field "$ns" own "$(ww_ann "$A/gres")")" gpu:1
k delete namespace "$ns" --wait=false >/dev/null

# What Slurm is asked for a topology request is the scheduler's
# (t_58_topology.sh); the webhook writes nothing for it.
scenario "webhook: Kueue topology annotations are left to the scheduler"
ns=$(new_ns enabled)
ww_job "$ns" topo NonIndexed 1 \
	"{annotations: {kueue.x-k8s.io/podset-required-topology: slurm-bridge.io/leaf-switch}}" |
	k apply -f - >/dev/null
sel=batch.kubernetes.io/job-name=topo
check "the Job's pod is created" wait_for 20 ww_npods "$ns" "$sel" 1
check_eq "no switches annotation is written" \
	"$(pod_field "$ns" "$(first_pod "$ns" "$sel")" "$(ww_ann "$A/switches")")" ""
out=$(ww_pod "$ns" pref "  annotations: {kueue.x-k8s.io/podset-preferred-topology: cloud.example.com/zone}" |
	k apply -f - 2>&1)
check_match "a preferred level the table lacks: a warning" "$out" \
	'Warning: annotation kueue.x-k8s.io/podset-preferred-topology: "cloud.example.com/zone" is not a level'
k delete namespace "$ns" --wait=false >/dev/null

scenario "webhook: an Indexed Job in a namespace that is not enabled is untouched"
ns=$(new_ns)
ww_job "$ns" sim Indexed 3 | k apply -f - >/dev/null
sel=batch.kubernetes.io/job-name=sim
ww_no_gang "$ns" "$sel" 3 default-scheduler
k delete namespace "$ns" --wait=false >/dev/null

# --- Validation ----------------------------------------------------------------

scenario "webhook: malformed slurmjob annotations are refused, naming key and value"
ns=$(new_ns enabled)
while read -r key val; do
	ww_create_refused "$key \"$val\" is refused" "$ns" "bad-$key" "$A/$key" "$val" \
		"  annotations: {$A/$key: \"$val\"}"
done <<'EOF'
timelimit abc
priority -3
min-nodes x
max-nodes 1.5
mem-per-node lots
cpu-per-task many
gres gpu::
switches two
EOF
ww_admitted "a pod with valid annotations is admitted" "$ns" good \
	"  annotations: {$A/timelimit: \"10\", $A/gres: \"gpu:1\", $A/switches: \"1@2\"}"
check "and is submitted to Slurm" wait_for 30 pod_has "$ns" good "$JP_JOBID"
check_eq "with its time limit" "$(job_field "$(pod_field "$ns" good "$JP_JOBID")" TimeLimit)" 00:10:00

scenario "webhook: bridge-owned keys cannot be set on create"
ww_create_refused "label scheduler.slinky.slurm.net/slurm-jobid is refused" "$ns" own-jobid \
	scheduler.slinky.slurm.net/slurm-jobid 42 "  labels: {scheduler.slinky.slurm.net/slurm-jobid: \"42\"}"
ww_create_refused "annotation slinky.slurm.net/slurm-node is refused" "$ns" own-node \
	slinky.slurm.net/slurm-node n1 "  annotations: {slinky.slurm.net/slurm-node: n1}"
ww_create_refused "annotation scheduler.slinky.slurm.net/slurm-gres is refused" "$ns" own-gres \
	scheduler.slinky.slurm.net/slurm-gres 'gpu:1(IDX:0)' \
	"  annotations: {scheduler.slinky.slurm.net/slurm-gres: \"gpu:1(IDX:0)\"}"
k delete namespace "$ns" --wait=false >/dev/null

scenario "webhook: an account outside allowed-accounts is refused"
ns=$(new_ns enabled)
k annotate namespace "$ns" scheduler.slinky.slurm.net/allowed-accounts=research >/dev/null
sleep 1 # the webhook may learn of namespace annotations through a watch
ww_create_refused "account bridge is refused" "$ns" acct-bridge "$A/account" bridge \
	"  annotations: {$A/account: bridge}" allowed
ww_admitted "account research is admitted" "$ns" acct-research "  annotations: {$A/account: research}"
k delete namespace "$ns" --wait=false >/dev/null

scenario "webhook: bridge-owned keys are immutable on a bound pod, resize is refused"
ns=$(new_ns enabled)
ww_pod "$ns" run | k apply -f - >/dev/null
check "the pod is bound" wait_for 30 pod_has "$ns" run "$JP_NODE"
jobid=$(pod_field "$ns" run "$JP_JOBID")
node_ann=$(ww_ann slinky.slurm.net/slurm-node)
snode=$(pod_field "$ns" run "$node_ann")
check "it carries a job id" test -n "$jobid"
out=$(k -n "$ns" label pod run scheduler.slinky.slurm.net/slurm-jobid=999 --overwrite 2>&1); rc=$?
ww_refused "setting a slurm-jobid label is refused" "$out" $rc scheduler.slinky.slurm.net/slurm-jobid 999
out=$(k -n "$ns" annotate pod run scheduler.slinky.slurm.net/slurm-jobid=999 --overwrite 2>&1); rc=$?
ww_refused "changing its slurm-jobid annotation is refused" "$out" $rc scheduler.slinky.slurm.net/slurm-jobid 999
out=$(k -n "$ns" annotate pod run scheduler.slinky.slurm.net/slurm-jobid- 2>&1); rc=$?
ww_refused "removing its slurm-jobid annotation is refused" "$out" $rc scheduler.slinky.slurm.net/slurm-jobid ""
check_eq "the job id keeps its value" "$(pod_field "$ns" run "$JP_JOBID")" "$jobid"
out=$(k -n "$ns" annotate pod run slinky.slurm.net/slurm-node=n9 --overwrite 2>&1); rc=$?
ww_refused "changing its slurm-node annotation is refused" "$out" $rc slinky.slurm.net/slurm-node n9
check_eq "the annotation keeps its value" "$(pod_field "$ns" run "$node_ann")" "$snode"
# The apiserver validates a resize before any validating webhook sees it, so
# it must pass that validation: (1) kwok does not report container resources
# in the status, which to the apiserver means a kubelet without in-place
# resize ("Pod running on node without support for resize"); report them as
# a kubelet that supports it does; (2) a strategic merge keeps the memory
# request and limit, where a JSON merge patch would replace the container
# list and change the QoS class (also refused by the apiserver itself).
check "the pod's container is running" wait_for 20 pod_has "$ns" run '{.status.containerStatuses[0].state.running}'
k -n "$ns" patch pod run --subresource status --type json -p '[{"op": "add",
	"path": "/status/containerStatuses/0/resources", "value": {"requests": {"cpu": "1", "memory": "64Mi"},
	"limits": {"cpu": "1", "memory": "64Mi"}}}]' >/dev/null
out=$(k -n "$ns" patch pod run --subresource resize --type strategic \
	-p '{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"2"},"limits":{"cpu":"2"}}}]}}' 2>&1); rc=$?
ww_refused "resizing it is refused" "$out" $rc "" "" 'pods/resize: pod .* is placed by Slurm'
check_eq "its CPU request is unchanged" "$(pod_field "$ns" run '{.spec.containers[0].resources.requests.cpu}')" 1
if out=$(k -n "$ns" label pod run foo=bar 2>&1); then pass "a user label change is allowed"
else fail "a user label change is allowed: $out"; fi
check_eq "and applied" "$(pod_field "$ns" run '{.metadata.labels.foo}')" bar
k delete namespace "$ns" --wait=false >/dev/null
