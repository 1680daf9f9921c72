# shellcheck shell=bash
# A JobSet with dependsOn (SchedMD's shape: an initializer, then 4 workers
# once it completes): the JobSet controller creates it stage by stage, so
# each stage is a gang. One gang of all 5 could never form: the workers
# do not exist until the initializer has run.

scenario "a JobSet with dependsOn: each stage is a gang (real JobSet controller)"
ns=$(new_ns enabled)
jobset_yaml "$ns" dependson "$E2E_POD_BRIDGE" init:1:1 \
	workers:1:4:init:Complete | k apply -f - >/dev/null
rsel() { echo "jobset.sigs.k8s.io/jobset-name=dependson,jobset.sigs.k8s.io/replicatedjob-name=$1"; }
init=""
init_pod() { init=$(first_pod "$ns" "$(rsel init)"); [ -n "$init" ]; }
check "the initializer's pod is made" wait_for 60 init_pod
# kwok completes a Job's pods as soon as they run; the workers follow.
check "the initializer gets a Slurm job of its own" \
	wait_for 60 pod_has "$ns" "$init" "$JP_JOBID"
ijob=$(pod_field "$ns" "$init" "$JP_JOBID")
check_eq "of 1 task" "$(job_field "$ijob" NumTasks)" 1
check_eq "named after its stage" "$(job_field "$ijob" JobName)" "$ns/dependson-init"
check_one_job "$ns" "$(rsel workers)" 4 "workers stage" dependson-workers
wjob=$(pod_field "$ns" "$(first_pod "$ns" "$(rsel workers)")" "$JP_JOBID")
check "the workers' job is not the initializer's" test "$wjob" != "$ijob"
k delete namespace "$ns" --wait=false >/dev/null
