# shellcheck shell=bash
# Variables are used by the scenarios that source this file:
# shellcheck disable=SC2034
# Helpers for the end-to-end scenarios: assertions that count, waits with
# timeouts, and cleanup.  Each scenario runs against the real stack.  Also
# sourced by test/bad/run.sh and test/fault/run.sh.
set -uo pipefail
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$E2E_DIR/../../scripts/stack/stack-env.sh"

E2E_PASSED=0
E2E_FAILED=0
E2E_FAILURES=()
E2E_SCENARIO=
# test/e2e/run.sh runs each t_*.sh in a bash of its own and gives it a file,
# E2E_RESULTS, to which every scenario title, pass and failure is appended
# as a line ("scenario<TAB>TITLE", "pass", "fail<TAB>TITLE: DESCRIPTION").
E2E_RESULTS=${E2E_RESULTS:-}
e2e_record() { [ -z "$E2E_RESULTS" ] || printf '%s\n' "$*" >>"$E2E_RESULTS"; }

k() { kubectl --kubeconfig="$KUBECONFIG" "$@"; }

pass() { E2E_PASSED=$((E2E_PASSED + 1)); e2e_record pass; echo "  ok   $*"; }
fail() {
	E2E_FAILED=$((E2E_FAILED + 1)); E2E_FAILURES+=("$E2E_SCENARIO: $*")
	e2e_record "fail	$E2E_SCENARIO: $*"
	echo "  FAIL $*"
}

# check DESCRIPTION CMD...: passes when CMD succeeds.
check() { local d=$1; shift; if "$@"; then pass "$d"; else fail "$d"; fi; }

# check_eq DESCRIPTION GOT WANT
check_eq() {
	if [ "$2" = "$3" ]; then pass "$1 ($2)"; else fail "$1: got '$2', want '$3'"; fi
}

# check_match DESCRIPTION GOT REGEX
check_match() {
	if [[ $2 =~ $3 ]]; then pass "$1"; else fail "$1: '$2' does not match /$3/"; fi
}

# wait_for TIMEOUT_S CMD...: polls every 0.2 s; prints nothing.
wait_for() {
	local t=$1 i; shift
	for ((i = 0; i < t * 5; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

scenario() {
	e2e_time_close
	E2E_SCENARIO=$1 E2E_SCENARIO_T0=$SECONDS
	e2e_record "scenario	$1"; echo "== $1"
}

# Each scenario's time, from its title to the next one's, in E2E_TIMES
# ("SECONDS TITLE"); e2e_times N prints the N longest, so a suite that
# grows says where.
E2E_TIMES=()
e2e_time_close() {
	[ -n "$E2E_SCENARIO" ] || return 0
	E2E_TIMES+=("$((SECONDS - E2E_SCENARIO_T0)) $E2E_SCENARIO")
	E2E_SCENARIO=
}
e2e_times() {
	e2e_time_close
	[ ${#E2E_TIMES[@]} -gt 0 ] || return 0
	printf '%s\n' "${E2E_TIMES[@]}" | sort -rn | head -n "$1" |
		sed 's/^\([0-9]*\) /time: \1 s  /'
}

# new_ns [enabled]: creates a fresh namespace and prints its name.
new_ns() {
	local ns
	ns=e2e-$(date +%s%N | tail -c 7)-$RANDOM
	k create namespace "$ns" >/dev/null
	[ "${1:-}" = enabled ] && k label namespace "$ns" slurm-bridge=enabled >/dev/null
	# Pods are refused until the controller-manager made the default
	# service account.
	wait_for 30 k -n "$ns" get serviceaccount default
	echo "$ns"
}

pod_field() {
	[ "$3" = "$JP_JOBID" ] && { pod_jobid "$1" "$2"; return; }
	k -n "$1" get pod "$2" -o "jsonpath=$3" 2>/dev/null
}
pod_gone() { ! k -n "$1" get pod "$2" >/dev/null 2>&1; }

# job_field JOBID FIELD: a field of `scontrol show job` (e.g. JobState).
job_field() {
	scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1
}

# A pod for the bridge: tolerates the managed-node taint.
pod_yaml() {
	local ns=$1 name=$2 cpu=${3:-1} mem=${4:-256Mi} extra=${5:-}
	cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $name
  namespace: $ns
$extra
spec:
  schedulerName: slurm-bridge
  terminationGracePeriodSeconds: 0
  tolerations:
  - key: slinky.slurm.net/managed-node
    operator: Exists
    effect: NoExecute
  containers:
  - name: main
    image: busybox
    command: ["sleep", "3600"]
    resources:
      requests: {cpu: "$cpu", memory: "$mem"}
YAML
}

e2e_summary() {
	echo
	local f
	for f in "${E2E_FAILURES[@]}"; do echo "failed: $f"; done
	echo "e2e: $E2E_PASSED passed, $E2E_FAILED failed"
	[ "$E2E_FAILED" -eq 0 ]
}

# node_ready NODE STATUS [AGO_S]: sets the node's Ready condition (True,
# False or Unknown), turned AGO_S seconds ago, as a kubelet would (kwok
# stopped first, or it writes Ready back).
node_ready() {
	local ts
	ts=$(date -u -d "@$(($(date +%s) - ${3:-0}))" +%Y-%m-%dT%H:%M:%SZ)
	k patch node "$1" --subresource=status --type=strategic -p \
		"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"$2\",\"reason\":\"KubeletDown\",\"message\":\"test\",\"lastTransitionTime\":\"$ts\"}]}}" >/dev/null
}

# The stack's install name (bridge/main.c main_install): the scheduler name
# and the first 13 characters of the kube-system namespace's UID.
stack_install_name() {
	echo "slurm-bridge@$(k get namespace kube-system -o jsonpath='{.metadata.uid}' | cut -c1-13)"
}

# Predicates for wait_for (evaluated on every poll).
pod_has() { [ -n "$(pod_field "$1" "$2" "$3")" ]; }
pod_is() { [ "$(pod_field "$1" "$2" "$3")" = "$4" ]; }
job_is() { [ "$(job_field "$1" JobState)" = "$2" ]; }
# node_completing NODE: Slurm holds NODE for an ending job.  scontrol's
# State is whole (IDLE+COMPLETING, ALLOCATED+COMPLETING); sinfo's %T is
# cut to ten characters ("allocated+") on 26.05.
node_state() { scontrol show node -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n 's/^State=//p' | head -n1; }
node_completing() { [[ $(node_state "$1") == *COMPLETING* ]]; }

# A pod's Slurm job id, for pod_field: not a JSONPath but pod_jobid's.
JP_JOBID=slurm-job-id
JP_JOBID_ANN='{.metadata.annotations.scheduler\.slinky\.slurm\.net/slurm-jobid}'
JP_JOBID_LABEL='{.metadata.labels.scheduler\.slinky\.slurm\.net/slurm-jobid}'
# pod_jobid NS POD: the job id its Binding put on it (annotation), else the
# label (--jobid-label, extender pods), else the live Slurm job whose
# admin_comment lists it (a pod whose job is pending carries no id).
pod_jobid() {
	local j
	j=$(pod_field "$1" "$2" "$JP_JOBID_ANN")
	[ -n "$j" ] || j=$(pod_field "$1" "$2" "$JP_JOBID_LABEL")
	[ -n "$j" ] || j=$(scontrol -o show job 2>/dev/null | grep -F "\"$1/$2\"" |
		grep -E 'JobState=(PENDING|RUNNING|SUSPENDED|CONFIGURING) ' |
		sed -n 's/^JobId=\([0-9]*\) .*/\1/p' | head -n1)
	echo "$j"
}
JP_NODE='{.spec.nodeName}'
JP_PHASE='{.status.phase}'

# Group helpers: conditions, binding counts, shared job ids.
cond_msg() { pod_field "$1" "$2" '{.status.conditions[?(@.type=="PodScheduled")].message}'; }
cond_has() { cond_msg "$1" "$2" | grep -q "$3"; }
# check_cond DESCRIPTION TIMEOUT_S NS POD REGEX: passes once the pod's
# PodScheduled message matches REGEX; a failure says what it was instead.
check_cond() {
	if wait_for "$2" cond_has "$3" "$4" "$5"; then
		pass "$1"
	else
		fail "$1: PodScheduled says '$(cond_msg "$3" "$4")'"
	fi
}
bound_count() {
	local ns=$1 n=0 p; shift
	for p in "$@"; do [ -n "$(pod_field "$ns" "$p" "$JP_NODE")" ] && n=$((n + 1)); done
	echo $n
}
all_bound() { local ns=$1; shift; [ "$(bound_count "$ns" "$@")" -eq $# ]; }
same_jobid() {
	local ns=$1 first p j; shift
	first=$(pod_field "$ns" "$1" "$JP_JOBID")
	[ -n "$first" ] || return 1
	for p in "$@"; do j=$(pod_field "$ns" "$p" "$JP_JOBID"); [ "$j" = "$first" ] || return 1; done
}


# --- Workloads of the real controllers ------------------------------------
# POD is the flow map of their pods' spec, without its braces: E2E_POD_BRIDGE
# is for the scheduler as it is, E2E_POD for the webhook to complete.
E2E_CONTAINER='{name: main, image: busybox, command: [sleep, "3600"], resources: {requests: {cpu: "1", memory: 64Mi}}}'
E2E_POD="terminationGracePeriodSeconds: 0, containers: [$E2E_CONTAINER]"
E2E_POD_BRIDGE="schedulerName: slurm-bridge, tolerations: [{key: slinky.slurm.net/managed-node, operator: Exists}], $E2E_POD"

# job_yaml NS NAME POD [SPEC] [TEMPLATE_META] [META]: a batch Job; SPEC adds
# flow entries to its spec ("completionMode: Indexed, completions: 3"),
# TEMPLATE_META is its pod template's metadata and META its own more entries
# of metadata (flow maps).
job_yaml() {
	local tmeta=${5:-}
	cat <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $2, namespace: $1${6:+, $6}}
spec: {backoffLimit: 0${4:+, $4},
  template: {${tmeta:+metadata: $tmeta, }spec: {restartPolicy: Never, $3}}}
YAML
}

# jobset_yaml NS NAME POD RJOB...: a JobSet of replicated Jobs RJOB, each
# NAME:REPLICAS:PARALLELISM[:DEPENDS_ON:STATUS] (e.g. workers:2:2, or
# workers:1:4:init:Complete).
jobset_yaml() {
	local r name reps par dep status
	printf 'apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n'
	printf 'metadata: {name: %s, namespace: %s}\nspec:\n  replicatedJobs:\n' "$2" "$1"
	for r in "${@:4}"; do
		IFS=: read -r name reps par dep status <<<"$r"
		cat <<YAML
  - name: $name
    replicas: $reps
YAML
		[ -z "$dep" ] || printf '    dependsOn: [{name: %s, status: %s}]\n' \
			"$dep" "$status"
		cat <<YAML
    template:
      spec:
        parallelism: $par
        completions: $par
        backoffLimit: 0
        template:
          spec: {restartPolicy: Never, $3}
YAML
	done
}

# lws_yaml NS NAME REPLICAS SIZE POD: a LeaderWorkerSet of REPLICAS groups
# of SIZE pods.
lws_yaml() {
	cat <<YAML
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: $2, namespace: $1}
spec:
  replicas: $3
  leaderWorkerTemplate:
    size: $4
    workerTemplate:
      spec: {$5}
YAML
}

# podgroup_yaml NS NAME MIN_MEMBER: a scheduler-plugins PodGroup.
podgroup_yaml() {
	cat <<YAML
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: $2, namespace: $1}
spec: {minMember: $3}
YAML
}

# check_one_job NS SELECTOR N WHAT [NAME]: the N pods SELECTOR selects get a
# job id and share one Slurm job of N tasks, named NS/NAME when given.
check_one_job() {
	local ns=$1 sel=$2 n=$3 what=$4 job
	check "the $what's $n pods get a job id" wait_for 60 n_with "$ns" "$sel" "$JP_JOBID" "$n"
	# shellcheck disable=SC2046
	check "all $n share one Slurm job" same_jobid "$ns" $(pods_by "$ns" "$sel")
	job=$(pod_field "$ns" "$(first_pod "$ns" "$sel")" "$JP_JOBID")
	check_eq "one Slurm job with $n tasks" "$(job_field "$job" NumTasks)" "$n"
	[ -z "${5:-}" ] || check_eq "named after the $what" "$(job_field "$job" JobName)" "$ns/$5"
}

# Controller-made pods: names by label selector, and how many carry a field.
pods_by() { k -n "$1" get pods -l "$2" -o jsonpath='{.items[*].metadata.name}'; }
first_pod() { pods_by "$1" "$2" | cut -d' ' -f1; }
# n_with NS SELECTOR JSONPATH N: exactly N of the selected pods have JSONPATH.
n_with() {
	local p n=0
	for p in $(pods_by "$1" "$2"); do [ -n "$(pod_field "$1" "$p" "$3")" ] && n=$((n + 1)); done
	[ "$n" -eq "$4" ]
}

# ext_scheduler_config URL [LINES]: a KubeSchedulerConfiguration for a stock
# kube-scheduler whose one extender is the bridge at URL; LINES (indented
# two spaces) add to that extender, e.g. its TLS settings.
ext_scheduler_config() {
	cat <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: $KUBECONFIG}
leaderElection: {leaderElect: false}
extenders:
- urlPrefix: $1
  filterVerb: filter
  prioritizeVerb: prioritize
  bindVerb: bind
  weight: 1
  nodeCacheCapable: true
  httpTimeout: 10s
${2:-}
YAML
}

# --- Dynamic Resource Allocation (t_64, test/incluster/dra-node.sh) -------

# dra_example_class: the DRA example driver's DeviceClass, gpu.example.com.
dra_example_class() {
	k apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.example.com'"}
YAML
}
# dra_claim NS NAME: makes a ResourceClaim of one gpu.example.com device.
dra_claim() {
	k apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: $2, namespace: $1}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
YAML
}
# dra_template NS NAME COUNT [EXTRA exactly fields]: a ResourceClaimTemplate
# of COUNT gpu.example.com devices, request "gpus".
dra_template() {
	cat <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: $2, namespace: $1}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {deviceClassName: gpu.example.com, count: $3${4:+, $4}}
YAML
}
# dra_gres_indices NS POD: the GRES indices its slurm-gres annotation
# names (gpu:2(IDX:0-1) -> 0 and 1), one a line.
dra_gres_indices() {
	local g ids r a b i
	g=$(pod_field "$1" "$2" '{.metadata.annotations.scheduler\.slinky\.slurm\.net/slurm-gres}')
	ids=$(sed -n 's/.*(IDX:\(.*\))/\1/p' <<<"$g")
	for r in ${ids//,/ }; do
		a=${r%-*} b=${r#*-}
		for ((i = a; i <= b; i++)); do echo "$i"; done
	done
}
