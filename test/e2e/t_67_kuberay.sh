# shellcheck shell=bash
# KubeRay's clusters through slurm-bridge: with KubeRay's gang integration
# (--batch-scheduler=scheduler-plugins: a PodGroup and the pod-group label)
# a RayCluster is one Slurm job, and a worker it grows is a Slurm job of its
# own; a RayJob's cluster, labelled by hand, is one gang that ends with the
# cluster; without a gang each pod is a Slurm job.  kwok runs no Ray: the
# pods are images never pulled, so a RayJob's submitter finds no dashboard.

if ! stack_alive "$RUN_DIR/kuberay.pid" kuberay; then
	echo "  skip KubeRay is not running on this stack (scripts/stack/workloads-up.sh kuberay builds it from github.com/ray-project/kuberay/ray-operator $KUBERAY_VERSION; see its log $LOG_DIR/build-kuberay.log)"
	return 0
fi

# kuberay_mode [BATCH_SCHEDULER]: (re)starts KubeRay's operator with that
# batch scheduler, or none; workloads-up.sh restarts it only when its flags
# change.  Its output goes to the log only when it fails.
kuberay_mode() {
	local out
	out=$(KUBERAY_BATCH_SCHEDULER=${1:-} "$STACK_SCRIPTS/workloads-up.sh" kuberay 2>&1) && return 0
	printf '%s\n' "$out" | sed 's/^/    workloads-up: /'
	return 1
}
# Leave KubeRay as the stack runs it (no batch scheduler), whatever happens.
trap 'kuberay_mode >/dev/null' EXIT

RAY_IMAGE=rayproject/ray:2.46.0
# ray_pod NAME CPU MEM [META]: a Ray pod template (flow map); kwok pulls
# nothing, and a deleted pod goes at once.
ray_pod() {
	echo "{${4:+metadata: $4, }spec: {terminationGracePeriodSeconds: 0, containers: [{name: $1, image: $RAY_IMAGE, resources: {requests: {cpu: \"$2\", memory: $3}}}]}}"
}
# raycluster_spec INDENT WORKERS [META]: a RayCluster's spec, every line
# indented INDENT: a head of 2 CPUs and 1Gi, WORKERS workers (0 to 4) of 1
# CPU and 512Mi; META is the metadata of both templates.
raycluster_spec() {
	sed "s/^/$1/" <<YAML
rayVersion: "2.46.0"
headGroupSpec:
  rayStartParams: {}
  template: $(ray_pod ray-head 2 1Gi "${3:-}")
workerGroupSpecs:
- groupName: w
  replicas: $2
  minReplicas: 0
  maxReplicas: 4
  rayStartParams: {}
  template: $(ray_pod ray-worker 1 512Mi "${3:-}")
YAML
}
# raycluster_yaml NS NAME WORKERS [LABELS]: a RayCluster, LABELS its labels.
raycluster_yaml() {
	local labels=
	[ -z "${4:-}" ] || labels=", labels: {$4}"
	cat <<YAML
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: $2, namespace: $1$labels}
spec:
$(raycluster_spec "  " "$3")
YAML
}
csel() { echo "ray.io/cluster=$1"; }
# n_pods NS SELECTOR N: exactly N pods are selected (terminating ones too).
n_pods() { [ "$(pods_by "$1" "$2" | wc -w)" -eq "$3" ]; }
rc_state() { k -n "$1" get rayclusters.ray.io "$2" -o jsonpath='{.status.state}' 2>/dev/null; }
rc_gone() { ! k -n "$1" get rayclusters.ray.io "$2" >/dev/null 2>&1; }
# base_id JOB: a heterogeneous job's component (14+1) as its job (14).
base_id() { echo "${1%%+*}"; }
# ns_jobs NS [STATES]: the ids of Slurm's jobs of NS (PENDING and RUNNING
# by default), heterogeneous components as their job.
ns_jobs() {
	squeue -h -t "${2:-PD,R}" -o '%i %j' 2>/dev/null |
		awk -v p="$1/" 'index($2, p) == 1 { sub(/\+.*/, "", $1); print $1 }' | sort -un
}
no_ns_jobs() { [ -z "$(ns_jobs "$1")" ]; }
# pod_jobs NS SELECTOR: the job ids of the selected pods.
pod_jobs() {
	local p
	for p in $(pods_by "$1" "$2"); do pod_field "$1" "$p" "$JP_JOBID"; echo; done | sed '/^$/d' | sort -un
}
sacct_state() { sacct -n -X -P -j "$1" -o State 2>/dev/null | head -n1; }
job_ended() { ! [[ $(sacct_state "$1") =~ ^(RUNNING|PENDING)$ ]] && ! [[ $(job_field "$1" JobState) =~ ^(RUNNING|PENDING)$ ]]; }

# What users see: the RayCluster, its pods and Slurm's queue.
show() { "$@" 2>&1 | sed 's/^/    /'; }
ray_show() {
	show k -n "$1" get rayclusters.ray.io
	show k -n "$1" get pods -o wide
	squeue -o '%.8i %40j %.8T %.5D %.4C %N' 2>/dev/null |
		awk -v p="$1/" 'NR == 1 || index($2, p) == 1' | sed 's/^/    /'
}

scenario "a RayCluster is one gang through KubeRay's PodGroup"
check "KubeRay runs with its gang integration (--batch-scheduler=scheduler-plugins)" \
	kuberay_mode scheduler-plugins
ns=$(new_ns enabled)
raycluster_yaml "$ns" rc 2 'ray.io/gang-scheduling-enabled: "true"' | k apply -f - >/dev/null
pg_min() { k -n "$ns" get podgroups.scheduling.x-k8s.io rc -o jsonpath='{.spec.minMember}' 2>/dev/null; }
pg_made() { [ -n "$(pg_min)" ]; }
check "KubeRay makes PodGroup rc" wait_for 30 pg_made
check_eq "for the head and 2 workers: minMember" "$(pg_min)" 3
check "the 3 pods are made" wait_for 30 n_pods "$ns" "$(csel rc)" 3
sched=$(for p in $(pods_by "$ns" "$(csel rc)"); do pod_field "$ns" "$p" '{.spec.schedulerName}'; echo; done | sort | uniq -c | awk '{ printf "%s%sx %s", (NR > 1 ? ", " : ""), $1, $2 }')
check_eq "the webhook adopts them from scheduler-plugins-scheduler: schedulerName" "$sched" "3x slurm-bridge"
# A heterogeneous job (the head and the workers differ) starts at the
# backfill cycle.
check "all 3 are bound" wait_for 90 n_with "$ns" "$(csel rc)" "$JP_NODE" 3
# shellcheck disable=SC2046
check "and share one Slurm job" same_jobid "$ns" $(pods_by "$ns" "$(csel rc)")
gang=$(pod_field "$ns" "$(first_pod "$ns" "$(csel rc)")" "$JP_JOBID")
check_eq "a heterogeneous one (head + workers)" "$(job_field "$gang" HetJobId)" "$gang"
check_eq "named after the cluster" "$(job_field "$gang" JobName)" "$ns/rc"
check "that runs" wait_for 30 job_is "$gang" RUNNING
rc_ready() { [ "$(rc_state "$ns" rc)" = ready ]; }
check "the RayCluster is ready" wait_for 60 rc_ready
ray_show "$ns"

scenario "a RayCluster grows: a new worker is a Slurm job of its own"
before=$(pods_by "$ns" "$(csel rc)")
k -n "$ns" patch rayclusters.ray.io rc --type=json \
	-p '[{"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": 3}]' >/dev/null
new=""
new_pod() {
	local p
	for p in $(pods_by "$ns" "$(csel rc)"); do
		[[ " $before " == *" $p "* ]] || { new=$p; return 0; }
	done
	return 1
}
check "KubeRay makes a fourth pod" wait_for 30 new_pod
check "the new worker $new is bound" wait_for 60 pod_has "$ns" "$new" "$JP_NODE"
check_eq "beyond the gang: annotation beyond-gang" \
	"$(pod_field "$ns" "$new" '{.metadata.annotations.scheduler\.slinky\.slurm\.net/beyond-gang}')" rc
extra=$(pod_field "$ns" "$new" "$JP_JOBID")
check "a Slurm job ($extra) other than the gang's ($gang)" test -n "$extra" -a "$extra" != "$gang"
check_eq "of 1 task" "$(job_field "$extra" NumTasks)" 1
check "that runs" wait_for 30 job_is "$extra" RUNNING
check "the gang's job runs on" job_is "$gang" RUNNING
ray_show "$ns"
k -n "$ns" patch rayclusters.ray.io rc --type=json \
	-p '[{"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": 2}]' >/dev/null
check "scaled to 2 workers: 3 pods again" wait_for 60 n_pods "$ns" "$(csel rc)" 3
# KubeRay deletes any worker: the new one (its job ends) or a gang member
# (the gang's job runs on with the others).  Either way every pod's job
# runs, and no job runs without a pod.
pods_jobs_run() {
	local j
	for j in $(pod_jobs "$ns" "$(csel rc)"); do job_is "$j" RUNNING || return 1; done
}
no_orphan_job() { [ "$(ns_jobs "$ns" R)" = "$(pod_jobs "$ns" "$(csel rc)")" ]; }
check "every remaining pod's Slurm job is RUNNING" pods_jobs_run
check "no RUNNING Slurm job of $ns lacks a live pod" wait_for 30 no_orphan_job
echo "    pods' jobs: $(pod_jobs "$ns" "$(csel rc)" | paste -sd' '); running in Slurm: $(ns_jobs "$ns" R | paste -sd' ')"
ray_show "$ns"
k -n "$ns" delete rayclusters.ray.io rc >/dev/null
check "deleting the RayCluster ends all its Slurm jobs" wait_for 60 no_ns_jobs "$ns"
ended() { local j; for j in "$gang" "$extra"; do job_ended "$j" || return 1; done; }
check "sacct: the gang's and the new worker's jobs ended" wait_for 30 ended
# sacct_ns NS: "JOBID STATE" of every job of NS accounting has.
sacct_ns() {
	sacct -n -X -P -S now-1hours -o JobID,JobName,State 2>/dev/null |
		awk -F'|' -v p="$1/" 'index($2, p) == 1 { print $1, $3 }'
}
sacct_all_ended() { [ -n "$(sacct_ns "$ns")" ] && ! sacct_ns "$ns" | grep -qE ' (RUNNING|PENDING)$'; }
check "sacct shows every job of $ns, none RUNNING or PENDING" wait_for 30 sacct_all_ended
sacct -n -X -j "$gang,$extra" -o JobID,JobName%30,State,Elapsed 2>/dev/null | sed 's/^/    /'
k delete namespace "$ns" --wait=false >/dev/null

scenario "a RayJob makes its cluster, one gang, and its Slurm job ends with the cluster"
# KubeRay 1.5's gang integration refuses every RayJob ("currently only
# RayCluster is supported"): the RayJob's templates carry our gang keys.
check "KubeRay runs without a batch scheduler" kuberay_mode
ns=$(new_ns enabled)
k apply -f - >/dev/null <<YAML
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: rj, namespace: $ns}
spec:
  entrypoint: python -c "print(42)"
  shutdownAfterJobFinishes: true
  ttlSecondsAfterFinished: 0
  rayClusterSpec:
$(raycluster_spec "    " 2 '{labels: {scheduling.x-k8s.io/pod-group: rj}, annotations: {scheduler.slinky.slurm.net/min-member: "3"}}')
YAML
rc=""
rj_cluster() { rc=$(k -n "$ns" get rayjobs.ray.io rj -o jsonpath='{.status.rayClusterName}' 2>/dev/null); [ -n "$rc" ]; }
check "KubeRay makes the RayJob's RayCluster" wait_for 30 rj_cluster
check "its 3 pods are bound" wait_for 90 n_with "$ns" "$(csel "$rc")" "$JP_NODE" 3
# shellcheck disable=SC2046
check "and share one Slurm job" same_jobid "$ns" $(pods_by "$ns" "$(csel "$rc")")
gang=$(pod_field "$ns" "$(first_pod "$ns" "$(csel "$rc")")" "$JP_JOBID")
check_eq "named after the gang" "$(job_field "$gang" JobName)" "$ns/rj"
ray_show "$ns"
# Once the cluster is ready, KubeRay submits the job with a batch Job.
jsel=batch.kubernetes.io/job-name=rj
check "the submitter Job's pod gets a Slurm job" wait_for 90 n_with "$ns" "$jsel" "$JP_JOBID" 1
sub=$(pod_field "$ns" "$(first_pod "$ns" "$jsel")" "$JP_JOBID")
check "of its own ($sub, the gang's is $gang)" test -n "$sub" -a "$sub" != "$gang"
check_eq "named after its pod" "$(job_field "$sub" JobName)" "$ns/$(first_pod "$ns" "$jsel")"
# No Ray runs on a kwok node: the submitter "completes" (kwok) but the
# cluster's dashboard never reports the job, so KubeRay gives the RayJob
# up after its grace period and deletes the cluster.
rj_status() { k -n "$ns" get rayjobs.ray.io rj -o "jsonpath={.status.$1}" 2>/dev/null; }
rj_failed() { [ "$(rj_status jobDeploymentStatus)" = Failed ]; }
check "KubeRay fails the RayJob (no Ray runtime on kwok)" wait_for 120 rj_failed
check_eq "after the grace period" "$(rj_status reason)" JobDeploymentStatusTransitionGracePeriodExceeded
echo "    RayJob rj: $(rj_status jobDeploymentStatus) $(rj_status reason): $(rj_status message)"
echo "    (expected here: the kwok nodes run no Ray, so the submitter's status never reaches the cluster's dashboard)"
check "and deletes its RayCluster" wait_for 60 rc_gone "$ns" "$rc"
check "whose pods go" wait_for 60 n_pods "$ns" "$(csel "$rc")" 0
check "and whose Slurm job ends" wait_for 30 job_ended "$gang"
sacct -n -X -j "$gang,$sub" -o JobID,JobName%30,State,Elapsed 2>/dev/null | sed 's/^/    /'
k delete namespace "$ns" --wait=false >/dev/null

scenario "a RayCluster without a gang: each pod is a Slurm job, and a new worker is one more"
ns=$(new_ns enabled)
raycluster_yaml "$ns" solo 1 | k apply -f - >/dev/null
n_jobs() { [ "$(pod_jobs "$ns" "$(csel solo)" | wc -l)" -eq "$1" ]; }
check "head and worker are bound" wait_for 60 n_with "$ns" "$(csel solo)" "$JP_NODE" 2
check "as 2 Slurm jobs" n_jobs 2
k -n "$ns" patch rayclusters.ray.io solo --type=json \
	-p '[{"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": 2}]' >/dev/null
check "the new worker is bound" wait_for 60 n_with "$ns" "$(csel solo)" "$JP_NODE" 3
check "as a third Slurm job" n_jobs 3
ray_show "$ns"
k delete namespace "$ns" --wait=false >/dev/null
