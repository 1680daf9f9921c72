# shellcheck shell=bash
# Kueue's topology-aware scheduling: Kueue chooses the nodes (a leaf
# switch, then each pod's node, written as a nodeSelector when it ungates
# the pod), and slurm-bridge asks Slurm for exactly those: the gang is one
# heterogeneous job of a component per node set (bridge/exclude.c
# exclude_split).  The real Kueue controller, API kueue.x-k8s.io/v1beta2.

if ! stack_alive "$RUN_DIR/kueue.pid" kueue; then
	echo "  skip Kueue is not running on this stack (scripts/stack/workloads-up.sh kueue builds it from sigs.k8s.io/kueue $KUEUE_VERSION; see its log $LOG_DIR/build-kueue.log)"
	return 0
fi

KQ=kueue.x-k8s.io
LEAF=slurm-bridge.io/leaf-switch
tas_cleanup() {
	k delete "clusterqueues.$KQ,resourceflavors.$KQ,topologies.$KQ" \
		-l "e2e-kueue-tas${1:+=$1}" --wait=false >/dev/null 2>&1
}
trap tas_cleanup EXIT

scenario "Kueue's topology-aware scheduling: each pod where Kueue put it, one Slurm job"
ns=$(new_ns enabled)
# Levels from the leaf switch to the node; the flavor's nodes are the
# kwok nodes, whose managed-node taint the pods tolerate in their
# template: Kueue checks taints against the template, not the pods the
# webhook completes (its node controller fails a pod whose template does
# not tolerate its node's taints).
k apply -f - >/dev/null <<YAML
apiVersion: $KQ/v1beta2
kind: Topology
metadata: {name: topo-$ns, labels: {e2e-kueue-tas: $ns}}
spec:
  levels:
  - nodeLabel: $LEAF
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: $KQ/v1beta2
kind: ResourceFlavor
metadata: {name: rf-$ns, labels: {e2e-kueue-tas: $ns}}
spec: {nodeLabels: {type: kwok}, topologyName: topo-$ns}
---
apiVersion: $KQ/v1beta2
kind: ClusterQueue
metadata: {name: cq-$ns, labels: {e2e-kueue-tas: $ns}}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: rf-$ns
      resources:
      - {name: cpu, nominalQuota: 128}
      - {name: memory, nominalQuota: 64Gi}
---
apiVersion: $KQ/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: $ns}
spec: {clusterQueue: cq-$ns}
YAML
# Three pods of 12 CPUs in one leaf switch of two 32-CPU nodes: Kueue
# puts two on one node and one on the other.
pod="tolerations: [{key: slinky.slurm.net/managed-node, operator: Exists}], terminationGracePeriodSeconds: 0, containers: [{name: main, image: busybox, command: [sleep, '3600'], resources: {requests: {cpu: '12', memory: 64Mi}}}]"
job_yaml "$ns" tas "$pod" "completionMode: Indexed, completions: 3, parallelism: 3" \
	"{labels: {e2e_keep_running: 'y'}, annotations: {$KQ/podset-required-topology: $LEAF}}" \
	"labels: {$KQ/queue-name: q}" | k apply -f - >/dev/null
sel=batch.kubernetes.io/job-name=tas
admitted() {
	[ "$(k -n "$ns" get "workloads.$KQ" -o jsonpath='{.items[0].status.conditions[?(@.type=="Admitted")].status}')" = True ]
}
check "Kueue admits it with a topology assignment" wait_for 60 admitted
echo "    $(k -n "$ns" get "workloads.$KQ" -o jsonpath='{.items[0].status.admission.podSetAssignments[0].topologyAssignment}')"
check "its 3 pods are bound" wait_for 90 n_with "$ns" "$sel" "$JP_NODE" 3
where=() nodes=()
for p in $(pods_by "$ns" "$sel"); do
	want=$(pod_field "$ns" "$p" '{.spec.nodeSelector.kubernetes\.io/hostname}')
	got=$(pod_field "$ns" "$p" "$JP_NODE")
	where+=("$p: Kueue $want, bound $got")
	nodes+=("$got")
	check_eq "$p is bound where Kueue assigned it" "$got" "$want"
done
printf '    %s\n' "${where[@]}"
# shellcheck disable=SC2046
check "all 3 share one Slurm job" same_jobid "$ns" $(pods_by "$ns" "$sel")
job=$(pod_field "$ns" "$(first_pod "$ns" "$sel")" "$JP_JOBID")
distinct=$(printf '%s\n' "${nodes[@]}" | sort -u | wc -l)
# One component per node: squeue lists JOB+0, JOB+1, each on its node.
comps=$(squeue -h -j "$job" -o '%i %N' 2>/dev/null | sort)
while read -r line; do echo "    squeue: $line"; done <<<"$comps"
check_eq "a component per node Kueue chose" "$(echo "$comps" | grep -c .)" "$distinct"
slurm_nodes=$(echo "$comps" | awk '{print $2}' | sort -u | tr '\n' ' ')
check_eq "on exactly those nodes" "$slurm_nodes" "$(printf '%s\n' "${nodes[@]}" | sort -u | tr '\n' ' ')"
leaves=$(for n in "${nodes[@]}"; do k get node "$n" -o jsonpath="{.metadata.labels.${LEAF//./\\.}}"; echo; done | sort -u | grep -c .)
check_eq "in one leaf switch" "$leaves" 1
k -n "$ns" delete job tas --wait=false >/dev/null
gone() { ! squeue -h -j "$job" -t PD,R 2>/dev/null | grep -q .; }
check "deleted, its Slurm job ends" wait_for 60 gone
k delete namespace "$ns" --wait=false >/dev/null
tas_cleanup "$ns"
