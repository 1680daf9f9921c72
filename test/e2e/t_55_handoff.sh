# shellcheck shell=bash
# The handoff: when Slurm ends a bridge job first (scancel, a time limit,
# preemption), it frees the nodes at once, while the pod still has its
# grace period to stop.  slurm-bridge-epilog (Epilog= in slurm.conf) keeps
# the node COMPLETING until the job's pods there have stopped, so no two
# jobs ever hold the same CPUs or GPUs.  kwok stops a deleted pod after the
# delay its annotation pod-terminate.stage.kwok.x-k8s.io/delay gives.

conf=$(scontrol show config 2>/dev/null)
if ! grep -qE '^Epilog(\[0\])? .*epilog' <<<"$conf"; then
	echo "  skip slurm.conf has no slurm-bridge epilog"
	return 0
fi

# kwok runs no container: the epilog asks the API server for its pods.
stack_epilog_api on
trap 'stack_epilog_api off' EXIT
epoch() { date -u -d "$1" +%s 2>/dev/null; }

scenario "the handoff: a node goes to the next job only once the pod that held it has stopped"
ns=$(new_ns enabled)
# A whole node's CPUs, taking 20 s to stop once deleted.
pod_yaml "$ns" slow 32 256Mi "  annotations: {pod-terminate.stage.kwok.x-k8s.io/delay: 20s}" |
	sed 's/terminationGracePeriodSeconds: 0/terminationGracePeriodSeconds: 30/' | k apply -f - >/dev/null
check "the pod is bound" wait_for 60 pod_has "$ns" slow "$JP_NODE"
node=$(pod_field "$ns" slow "$JP_NODE"); job=$(pod_field "$ns" slow "$JP_JOBID")
# A native Slurm job (no Kubernetes) waits for that very node.
native=$(sbatch --parsable -p slurm-bridge -w "$node" -n 32 -o /dev/null -J e2e-native --wrap 'sleep 2')
check "a native job waits for node $node" wait_for 20 job_is "$native" PENDING
h0=$(stack_metric slurm_bridge_handoffs_total)
# The slurmd log outlives a change of release, whose job ids start again.
slurmd_log=$LOG_DIR/slurmd-$node.log
slurmd_mark=$(wc -c <"$slurmd_log" 2>/dev/null || echo 0)
t_cancel=$(date +%s)
scancel "$job"
check "scancel: the job ends, and its node stays COMPLETING while the pod stops" wait_for 20 node_completing "$node"
echo "    node $node: $(node_state "$node") (the epilog waits for $ns/slow)"
stopped() { [ "$(pod_field "$ns" slow "$JP_PHASE")" = Failed ] || pod_gone "$ns" slow; }
check "the pod stops after its 20 s" wait_for 60 stopped
t_stop=$(date +%s)
started() { [[ $(job_field "$native" JobState) =~ RUNNING|COMPLETING|COMPLETED ]]; }
check "then the native job starts" wait_for 60 started
t_start=$(epoch "$(job_field "$native" StartTime)")
echo "    timeline: scancel +0 s, pod stopped +$((t_stop - t_cancel)) s, native job $native started +$((t_start - t_cancel)) s"
check "the native job started only after the pod had stopped" test "$t_start" -ge "$((t_stop - 1))"
check "and not before the pod's 20 s were over" test "$((t_start - t_cancel))" -ge 18
check_eq "the bridge counts the handoff (slurm_bridge_handoffs_total)" \
	"$(($(stack_metric slurm_bridge_handoffs_total) - h0))" 1
# 22.05: "epilog for job 15 ran for 21 seconds"; 26.05: "epilog for JobId=15 SLUID=... ran for".
tail -c +"$((slurmd_mark + 1))" "$slurmd_log" 2>/dev/null | grep -iE "epilog for (job |JobId=)$job\b" |
	tail -n 2 | sed 's/^/    /'
k delete namespace "$ns" --wait=false >/dev/null

scenario "native jobs do not wait: the epilog returns at once for them"
n2=$(sbatch --parsable -p slurm-bridge -n 1 -o /dev/null -J e2e-native2 --wrap 'true')
check "a native job ends" wait_for 30 job_is "$n2" COMPLETED
check "and its node is not held" wait_for 5 eval '! node_completing "$(job_field "$n2" NodeList)"'
