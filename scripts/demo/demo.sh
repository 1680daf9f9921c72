#!/usr/bin/env bash
# make demo: Kubernetes pods scheduled by Slurm, shown from both sides.
#
#   0. installs the packages and builds what the demo runs: both daemons, and
#      (the first time, cached outside the tree) the stack's Kubernetes
#      binaries and the LeaderWorkerSet controller
#   1. brings the local stack up (Slurm + Kubernetes on NODES kwok nodes)
#   2. starts the scheduler, the webhook and the LeaderWorkerSet controller
#   3. opts namespace "demo" in
#   4. applies plain workloads (scripts/demo/workloads.yaml) and lists the
#      pods with their Slurm job id and node
#   5. shows the same work in squeue and sacct
#   6. fills the cluster with a native Slurm job, so a gang must wait in
#      Slurm's queue (scripts/demo/gang.yaml)
#   7. cancels that job: the gang starts as a whole
#
# Idempotent: each run first deletes the previous run's namespace and waits
# for its Slurm jobs to end.  The workloads stay running afterwards.  The
# stack's own output goes to $STACK_DIR/log/demo.log.  At the end it prints
# how long each part took.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$here/../stack/stack-env.sh"
cd "$top"

NS=demo
LOG=$LOG_DIR/demo.log
FILLER=weather-model          # the native Slurm job of step 6
FILLER_CPUS=20                # per node: what is left can't hold a 16-CPU pod
SQUEUE_FMT=JobID:9,Name:16,Account:10,State:9,NumTasks:6,NumCPUs:5,tres-per-task:14,ReasonList:17,Comment:80
filler_id=
# Wall-clock times of the parts, printed at the end.  DEMO_T0 is when
# `make demo` started.
T0=${DEMO_T0:-$EPOCHREALTIME}
STACK_T_MARK=$T0
lap() { stack_lap "$@"; }

if [ -t 1 ]; then B=$'\e[1m' D=$'\e[2m' R=$'\e[0m'; else B='' D='' R=''; fi
n_step=0
step() { n_step=$((n_step + 1)); printf '\n%s[%d/7] %s%s\n' "$B" "$n_step" "$1" "$R"; }
say() { printf '  %s\n' "$@"; }
note() { printf '  %s%s%s\n' "$D" "$*" "$R"; }
indent() { sed -e 's/ *$//' -e 's/^/    /'; }
# show DISPLAYED-COMMAND CMD...: prints the command as a user would type it,
# then its output, indented.
cmdline() { printf '\n  %s$ %s%s\n' "$D" "$*" "$R"; }
show() { cmdline "$1"; shift; "$@" 2>&1 | indent; }
die() {
	printf '\ndemo: %s\n' "$*" >&2
	printf 'demo: daemon logs are in %s/\n' "$LOG_DIR" >&2
	exit 1
}
# wait_until TIMEOUT_S CMD...: polls CMD every 0.2 s.
wait_until() {
	local t=$1 i; shift
	for ((i = 0; i < t * 5; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
	return 1
}
# quietly WHAT CMD...: runs a stack script with its output in $LOG.
quietly() {
	local what=$1; shift
	echo "=== $(date '+%F %T') $*" >>"$LOG"
	if ! "$@" >>"$LOG" 2>&1; then
		printf '\ndemo: %s failed; the end of %s:\n' "$what" "$LOG" >&2
		tail -n 25 "$LOG" | sed 's/^/  /' >&2
		exit 1
	fi
}
cleanup() { if [ -n "$filler_id" ]; then scancel "$filler_id" 2>/dev/null || true; fi; }
trap cleanup EXIT

pods() { kubectl -n $NS get pods "$@" -o custom-columns-file=scripts/demo/pods.columns; }
sq() { squeue -O "$SQUEUE_FMT"; }
no_demo_jobs() { ! grep -q "^$NS/" <(squeue -h -o '%j'); }

mkdir -p "$LOG_DIR"
: >"$LOG"

printf '%sslurm-bridge demo: Kubernetes pods placed by Slurm%s\n' "$B" "$R"

# --------------------------------------------------------------------------
printf '\n%s[0/7] Install and build%s\n' "$B" "$R"
quietly "installing packages (scripts/dev/deps.sh)" "$here/../dev/deps.sh"
lap install
# The Go binaries of the stack, the LWS controller with them (one build:
# they share most of their code), and kubectl if the machine has none.
go_bins=()
for b in kube-apiserver kube-controller-manager kwok lws; do
	[ -x "$(stack_cache_path "$b")" ] || go_bins+=("$b")
done
command -v kubectl >/dev/null 2>&1 || go_bins+=(kubectl)
if [ ${#go_bins[@]} -gt 0 ]; then
	note "First run: building ${go_bins[*]} from their Go modules (about 9 minutes"
	note "on 2 cores; cached in $K8S_CACHE for the next runs).  Full output: $LOG"
fi
quietly "make all" make -C "$top" --no-print-directory -s all
lap build
if [ ${#go_bins[@]} -gt 0 ]; then
	# A line per component as it starts and ends, with its time.
	echo "=== $(date '+%F %T') build-k8s.sh ${go_bins[*]}" >>"$LOG"
	if ! "$here/../stack/build-k8s.sh" "${go_bins[@]}" 2>&1 | tee -a "$LOG" |
		sed -un 's/^build-k8s: \(fetching\|modules ready\|building\|built\)/  \1/p'; then
		printf '\ndemo: building the stack failed; the end of %s:\n' "$LOG" >&2
		tail -n 25 "$LOG" | sed 's/^/  /' >&2
		exit 1
	fi
	lap "stack build"
fi
say "Built slurm-bridge and slurm-bridge-admission$([ ${#go_bins[@]} -eq 0 ] || echo ", and ${go_bins[*]}")."

# --------------------------------------------------------------------------
step "Bring up the local stack: Slurm and Kubernetes on the same $NODES nodes"
quietly "make cluster-up" "$here/../stack/cluster-up.sh"
lap "stack up"
say "Slurm (slurmctld, slurmdbd, one slurmd per node) and Kubernetes (etcd,"
say "kube-apiserver, kube-controller-manager, kwok as the kubelet of every node)."
show "sinfo -N -o '%N %c %m %G'" sinfo -N -o '%N %c %m %G'
show "kubectl get nodes" kubectl get nodes -o \
	custom-columns='NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].status,CPU:.status.capacity.cpu,MEMORY:.status.capacity.memory,GPU:.status.capacity.nvidia\.com/gpu,TAINT:.spec.taints[*].key'

# --------------------------------------------------------------------------
step "Start the scheduler and the admission webhook"
lws=1
quietly "make bridge-up" "$here/../stack/bridge-up.sh"
# The demo uses no JobSet: only the LWS controller is started.
if ! "$here/../stack/workloads-up.sh" lws >>"$LOG" 2>&1; then
	lws=0
	note "The LeaderWorkerSet controller did not start (see $LOG): the demo goes on without it."
fi
lap "daemons up"
printf '  %-24s %-40s pid %s\n' \
	slurm-bridge "scheduler: turns pods into Slurm jobs" "$(stack_pid "$BRIDGE_PIDFILE")" \
	slurm-bridge-admission "webhook: mutates and validates pods" "$(stack_pid "$ADMISSION_PIDFILE")"
[ $lws = 1 ] && printf '  %-24s %-40s pid %s\n' \
	lws "LeaderWorkerSet controller" "$(stack_pid "$RUN_DIR/lws.pid")"
note "Logs: $LOG_DIR/slurm-bridge.log, slurm-bridge-admission.log"

# --------------------------------------------------------------------------
step "Opt namespace \"$NS\" in with the label slurm-bridge=enabled"
scancel -n "$FILLER" 2>/dev/null || true
if kubectl get namespace $NS >/dev/null 2>&1; then
	note "Removing the previous run's namespace $NS and waiting for its Slurm jobs to end..."
	kubectl delete namespace $NS --wait=true --timeout=120s >/dev/null ||
		die "namespace $NS was not deleted within 120s"
fi
wait_until 60 no_demo_jobs || die "Slurm jobs of the previous run are still there: $(squeue -h -o '%i=%j' | grep "=$NS/" | paste -sd' ')"
sleep 1
since=$(date +%FT%T)
kubectl apply -f scripts/demo/namespace.yaml >/dev/null || die "could not create namespace $NS"
# Pods are refused until the controller-manager has made the default service account.
wait_until 30 kubectl -n $NS get serviceaccount default || die "namespace $NS has no default service account"
say "The webhook now gives every pod in $NS schedulerName: slurm-bridge and the"
say "toleration for the Slurm-managed nodes.  The namespace annotation"
say "slurmjob.slinky.slurm.net/account=research is the Slurm account of its pods."

# --------------------------------------------------------------------------
step "Apply plain Kubernetes workloads: Slurm places every pod and gang"
cmdline "kubectl apply -f scripts/demo/workloads.yaml"
# Without its controller the LeaderWorkerSet kind is unknown: leave it out.
awk -v lws=$lws 'BEGIN { RS = "---\n"; ORS = "---\n" } lws || !/kind: LeaderWorkerSet/' \
	scripts/demo/workloads.yaml | kubectl apply -f - >/dev/null
say "  pod/hello         a bare pod (1 CPU)              -> one Slurm job"
say "  pod/notebook      2 CPUs and 2 GPUs               -> one job with GRES gpu:2"
say "  job/sim           Indexed Job, parallelism 3      -> one job, 3 tasks (a gang)"
[ $lws = 1 ] &&
	say "  lws/serve         LeaderWorkerSet, leader + 2     -> one job, 3 tasks (a gang)"
kubectl -n $NS wait --for=jsonpath='{.status.phase}'=Running pod/hello pod/notebook \
	--timeout=60s >/dev/null || die "pods hello and notebook did not start within 60s"
kubectl -n $NS wait --for=condition=Complete job/sim --timeout=60s >/dev/null ||
	die "job sim did not complete within 60s"
if [ $lws = 1 ]; then
	serve_running() {
		[ "$(kubectl -n $NS get pods -l leaderworkerset.sigs.k8s.io/name=serve \
			--field-selector=status.phase=Running -o name | wc -l)" -eq 3 ]
	}
	wait_until 60 serve_running ||
		die "the LeaderWorkerSet's 3 pods did not start within 60s"
fi
show "kubectl -n $NS get pods -o custom-columns-file=scripts/demo/pods.columns" pods
note "SLURM_JOB and SLURM_NODE are written by the bridge when Slurm allocates the job;"
note "GPUS_FROM_SLURM is the GRES Slurm gave each pod.  kwok plays the kubelet and ends"
note "a Job's pods as soon as they start: sim is done, and its Slurm job with it."

# --------------------------------------------------------------------------
step "The same work seen from Slurm: squeue and sacct"
show "squeue -O $SQUEUE_FMT" sq
# slurmdbd records jobs a moment after slurmctld: wait until it has them all,
# and the end (with admin_comment) of sim's job.
acct_ready() {
	local rows
	rows=$(sacct -X -n -P -A research -S "$since" -o JobName,AdminComment)
	[ "$(grep -c "^$NS/" <<<"$rows")" -ge "$1" ] && grep -q "^$NS/sim|{" <<<"$rows"
}
wait_until 30 acct_ready $((3 + lws)) || note "(slurmdbd is slow: sacct may lag behind)"
show "sacct -X -A research -S $since -o JobID%-6,JobName%-15,State%-14,NodeList%-8,AdminComment%-70" \
	sacct -X -A research -S "$since" -o JobID%-6,JobName%-15,State%-14,NodeList%-8,AdminComment%-70
note "Job names are <namespace>/<pod or gang>; admin_comment lists the pods.  Slurm 22.05"
note "writes admin_comment to accounting when a job ends (sim's job here); while a job"
note "runs, scontrol show job ID shows it.  A job ends as its pods did: sim's pods"
note "succeeded, so its job is COMPLETED (a failed pod's would be FAILED, a deleted"
note "pod's CANCELLED)."

# --------------------------------------------------------------------------
step "A gang that does not fit waits in Slurm's queue"
if [ "$NODES" -lt 2 ]; then
	say "(skipped: needs at least 2 nodes, the stack has $NODES)"
else
	say "A Slurm user takes $FILLER_CPUS CPUs on every node with a native job (no Kubernetes"
	say "involved), leaving at most $((32 - FILLER_CPUS)) CPUs free per node:"
	cmd="salloc --no-shell --immediate=30 -J $FILLER -A research -N $NODES --ntasks-per-node=1 -c $FILLER_CPUS -t 30"
	cmdline "$cmd"
	# shellcheck disable=SC2086
	out=$($cmd 2>&1) || { echo "$out" | indent; die "the cluster is busier than expected: salloc got no allocation"; }
	echo "$out" | indent
	filler_id=$(echo "$out" | sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p')
	[ -n "$filler_id" ] || die "no job id in salloc's output"
	echo
	say "Then a gang of 3 pods x 16 CPUs (a PodGroup with minMember 3) arrives:"
	cmdline "kubectl apply -f scripts/demo/gang.yaml"
	kubectl apply -f scripts/demo/gang.yaml >/dev/null || die "could not create the gang"
	gang=(-l scheduling.x-k8s.io/pod-group=big-train)
	all_waiting() {
		[ "$(kubectl -n $NS get pods "${gang[@]}" -o \
			jsonpath='{range .items[*]}{.status.conditions[?(@.type=="PodScheduled")].message}{"\n"}{end}' |
			grep -c 'waiting for Slurm job [0-9]* (Reason=')" -eq 3 ]
	}
	wait_until 30 all_waiting || die "the gang's pods do not show Slurm's pending reason"
	show "kubectl -n $NS get pods -l scheduling.x-k8s.io/pod-group=big-train -o custom-columns-file=scripts/demo/pending.columns" \
		kubectl -n $NS get pods "${gang[@]}" -o custom-columns-file=scripts/demo/pending.columns
	show "squeue -O $SQUEUE_FMT" sq
	note "One Slurm job for the whole gang, PENDING for Resources: no pod is bound, so"
	note "none sits on a node holding CPUs while the others wait."

	# ----------------------------------------------------------------------
	step "Capacity frees: the gang starts as a whole"
	show "scancel $filler_id" scancel "$filler_id"
	filler_id=
	kubectl -n $NS wait --for=jsonpath='{.status.phase}'=Running pod "${gang[@]}" \
		--timeout=60s >/dev/null || die "the gang did not start within 60s of the scancel"
	show "kubectl -n $NS get pods -l scheduling.x-k8s.io/pod-group=big-train -o custom-columns-file=scripts/demo/pods.columns" \
		pods "${gang[@]}"
	show "kubectl -n $NS events --for pod/big-train-0" kubectl -n $NS events --for pod/big-train-0
	# The Binding writes the job id as an annotation (not a label).
	gang_job=$(kubectl -n $NS get pod big-train-0 -o jsonpath='{.metadata.annotations.scheduler\.slinky\.slurm\.net/slurm-jobid}')
	[ -n "$gang_job" ] || die "big-train-0 carries no Slurm job id"
	show "squeue -O $SQUEUE_FMT -j $gang_job" squeue -O "$SQUEUE_FMT" -j "$gang_job"
	note "Slurm started the whole job at once; the bridge bound every member to its"
	note "node with one Binding each, which carries the job id and the Slurm node."
fi

# --------------------------------------------------------------------------
lap workloads
total=$(awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
printf '\n%sDone in %dm%02ds%s (%s).\n' "$B" $((total / 60)) $((total % 60)) "$R" "$(stack_laps)"
printf 'The demo workloads keep running.  Try it yourself:\n'
cat <<EOF
  export KUBECONFIG=$KUBECONFIG
  kubectl -n $NS get pods -o custom-columns-file=scripts/demo/pods.columns
  kubectl -n $NS delete pod hello                # its Slurm job is cancelled
  scancel -n $NS/notebook                        # the bridge deletes the job's pod
  kubectl -n $NS scale lws serve --replicas=2    # a second gang, a second Slurm job
  kubectl apply -f manifests/samples/             # more samples (JobSet, topology...)
  squeue; sacct -X -o JobID,JobName%20,State,AdminComment%70
  kubectl delete namespace $NS                   # removes it all; the jobs end with it
EOF
