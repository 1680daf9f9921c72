# shellcheck shell=bash
# Gangs from the real JobSet and LeaderWorkerSet controllers.
TOL='[{key: slinky.slurm.net/managed-node, operator: Exists, effect: NoExecute}]'

scenario "a JobSet is one gang (real JobSet controller)"
ns=$(new_ns enabled)
k apply -f - >/dev/null <<YAML
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train, namespace: $ns}
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 2
        completions: 2
        backoffLimit: 0
        template:
          spec:
            schedulerName: slurm-bridge
            restartPolicy: Never
            tolerations: $TOL
            containers:
            - {name: main, image: busybox, command: [sleep, "30"], resources: {requests: {cpu: "1", memory: 64Mi}}}
YAML
sel=jobset.sigs.k8s.io/jobset-name=train
js_pods() { pods_by "$ns" "$sel"; }
check "the JobSet's 4 pods get a job id" wait_for 60 n_with "$ns" "$sel" "$JP_JOBID" 4
# shellcheck disable=SC2046
check "all 4 share one Slurm job" same_jobid "$ns" $(js_pods)
jsjob=$(pod_field "$ns" "$(js_pods | cut -d' ' -f1)" "$JP_JOBID")
check_eq "one Slurm job with 4 tasks" "$(job_field "$jsjob" NumTasks)" 4
check_eq "named after the JobSet" "$(job_field "$jsjob" JobName)" "$ns/train"
k delete namespace "$ns" --wait=false >/dev/null

scenario "a LeaderWorkerSet group is one gang (real LWS controller)"
ns=$(new_ns enabled)
k apply -f - >/dev/null <<YAML
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: serve, namespace: $ns}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 3
    workerTemplate:
      spec:
        schedulerName: slurm-bridge
        tolerations: $TOL
        containers:
        - {name: main, image: busybox, command: [sleep, "3600"], resources: {requests: {cpu: "1", memory: 64Mi}}}
YAML
lsel() { echo "leaderworkerset.sigs.k8s.io/name=serve,leaderworkerset.sigs.k8s.io/group-index=$1"; }
lws_pods() { pods_by "$ns" "$(lsel "$1")"; }
check "group 0 (leader + 2 workers) is bound" wait_for 60 n_with "$ns" "$(lsel 0)" "$JP_NODE" 3
check "group 1 is bound" wait_for 60 n_with "$ns" "$(lsel 1)" "$JP_NODE" 3
# shellcheck disable=SC2046
check "group 0 shares one Slurm job" same_jobid "$ns" $(lws_pods 0)
# shellcheck disable=SC2046
check "group 1 shares one Slurm job" same_jobid "$ns" $(lws_pods 1)
j0=$(pod_field "$ns" "$(lws_pods 0 | cut -d' ' -f1)" "$JP_JOBID")
j1=$(pod_field "$ns" "$(lws_pods 1 | cut -d' ' -f1)" "$JP_JOBID")
check "each group has its own job" test "$j0" != "$j1"
check_eq "of 3 tasks" "$(job_field "$j0" NumTasks)" 3
k delete namespace "$ns" --wait=false >/dev/null
