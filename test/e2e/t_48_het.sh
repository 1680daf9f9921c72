# shellcheck shell=bash
# A gang whose members differ (an LWS leader of 4 CPUs, 3 workers of 1):
# one Slurm heterogeneous job, a component per shape, each sized exactly
# and allocated all or nothing. Only Slurm's backfill scheduler starts
# heterogeneous jobs, within its interval (30 s here).

scenario "a gang of two shapes is one heterogeneous Slurm job (real LWS controller)"
ns=$(new_ns enabled)
tol='tolerations: [{key: slinky.slurm.net/managed-node, operator: Exists}]'
ctr() { echo "containers: [{name: main, image: busybox, command: [sleep, \"3600\"], resources: {requests: {cpu: \"$1\", memory: $2}}}]"; }
cat <<YAML | k apply -f - >/dev/null
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: het, namespace: $ns}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 4
    leaderTemplate:
      spec: {schedulerName: slurm-bridge, terminationGracePeriodSeconds: 0, $tol, $(ctr 4 4Gi)}
    workerTemplate:
      spec: {schedulerName: slurm-bridge, terminationGracePeriodSeconds: 0, $tol, $(ctr 1 1Gi)}
YAML
hsel=leaderworkerset.sigs.k8s.io/name=het
check "all 4 are bound (backfill starts it)" wait_for 120 n_with "$ns" "$hsel" "$JP_NODE" 4
# shellcheck disable=SC2046
check "they share one Slurm job" same_jobid "$ns" $(pods_by "$ns" "$hsel")
job=$(pod_field "$ns" "$(first_pod "$ns" "$hsel")" "$JP_JOBID")
comps=$(squeue -h -j "$job" -o '%i %C %N' | sort)
echo "$comps" | sed 's/^/    squeue: /'
check_eq "squeue shows its two components" "$(echo "$comps" | awk '{print $1}' | paste -sd' ')" "$job+0 $job+1"
check_eq "the leader's component: 4 CPUs" "$(echo "$comps" | awk -v j="$job+0" '$1 == j {print $2}')" 4
check_eq "the workers' component: 3 CPUs, 1 each" "$(echo "$comps" | awk -v j="$job+1" '$1 == j {print $2}')" 3
lnode=$(echo "$comps" | awk -v j="$job+0" '$1 == j {print $3}')
leader=$(pods_by "$ns" "$hsel,leaderworkerset.sigs.k8s.io/worker-index=0")
check_eq "the leader runs on its component's node" "$(pod_field "$ns" "$leader" "$JP_NODE")" "$lnode"
k -n "$ns" delete leaderworkerset het --wait=false >/dev/null
ended() { [ -z "$(squeue -h -j "$job" -o %i 2>/dev/null)" ]; }
check "its pods deleted, the job ends" wait_for 60 ended
sacct -n -X -j "$job" -o JobID,State,AllocCPUS,NodeList 2>/dev/null | sed 's/^/    sacct: /'
check_eq "sacct shows both components, cancelled" \
	"$(sacct -n -X -P -j "$job" -o JobID,State | sed "s/ by [0-9]*//" | paste -sd' ')" "$job+0|CANCELLED $job+1|CANCELLED"
k delete namespace "$ns" --wait=false >/dev/null
