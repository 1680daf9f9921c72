# shellcheck shell=bash
# Gangs from the real JobSet and LeaderWorkerSet controllers.

scenario "a JobSet is one gang (real JobSet controller)"
ns=$(new_ns enabled)
jobset_yaml "$ns" train "$E2E_POD_BRIDGE" workers:2:2 | k apply -f - >/dev/null
check_one_job "$ns" jobset.sigs.k8s.io/jobset-name=train 4 JobSet train
k delete namespace "$ns" --wait=false >/dev/null

scenario "a LeaderWorkerSet group is one gang (real LWS controller)"
ns=$(new_ns enabled)
lws_yaml "$ns" serve 2 3 "$E2E_POD_BRIDGE" | k apply -f - >/dev/null
lsel() { echo "leaderworkerset.sigs.k8s.io/name=serve,leaderworkerset.sigs.k8s.io/group-index=$1"; }
lws_pods() { pods_by "$ns" "$(lsel "$1")"; }
check "group 0 (leader + 2 workers) is bound" wait_for 60 n_with "$ns" "$(lsel 0)" "$JP_NODE" 3
check "group 1 is bound" wait_for 60 n_with "$ns" "$(lsel 1)" "$JP_NODE" 3
# shellcheck disable=SC2046
check "group 0 shares one Slurm job" same_jobid "$ns" $(lws_pods 0)
# shellcheck disable=SC2046
check "group 1 shares one Slurm job" same_jobid "$ns" $(lws_pods 1)
j0=$(pod_field "$ns" "$(first_pod "$ns" "$(lsel 0)")" "$JP_JOBID")
j1=$(pod_field "$ns" "$(first_pod "$ns" "$(lsel 1)")" "$JP_JOBID")
check "each group has its own job" test "$j0" != "$j1"
check_eq "of 3 tasks" "$(job_field "$j0" NumTasks)" 3
k delete namespace "$ns" --wait=false >/dev/null
