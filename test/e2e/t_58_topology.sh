# shellcheck shell=bash
# Topology: a gang that must share one domain (the nodes under one value of
# a node label) gets it, whichever way it says so: our annotation, Kueue's
# on an Indexed Job, a 1.37 PodGroup's schedulingConstraints.  The stack's
# leaf switches (topology/tree, label slurm-bridge.io/leaf-switch: n1 n2
# under leaf1, n3 n4 under leaf2) are Slurm's own; slurm-bridge.io/rack
# (this file labels it across the switches) is a level Slurm knows nothing
# of.  Whole-node pods: with n2 and n4 taken, a gang that asks nothing is
# bound across the switches (the first scenario); with only n2 taken,
# which free nodes Slurm picks is its own choice (22.05 n1 and n3, 26.05
# n3 and n4), so only a request makes it one switch.

TL=slurm-bridge.io/leaf-switch
TR=slurm-bridge.io/rack
TA=slurmjob.slinky.slurm.net
if [ "$(sinfo -h -p slurm-bridge -o %D | head -n1)" -lt 4 ]; then
	echo "  skip the topology scenarios need 4 nodes in two leaf switches"
	return 0
fi

topo_idle() { [ -z "$(squeue -h -p slurm-bridge -o %i)" ]; }
# topo_fill NS NAME NODE: a pod that takes all of NODE's CPUs.
topo_fill() {
	pod_yaml "$1" "$2" 32 256Mi | sed "s/^spec:/spec:\n  nodeSelector: {kubernetes.io\/hostname: $3}/" |
		k apply -f - >/dev/null
	check "$2 takes $3" wait_for 30 pod_is "$1" "$2" "$JP_NODE" "$3"
}
# topo_gang NS GROUP ANNOTATIONS [N]: N (2) whole-node members GROUP-0,
# GROUP-1..., ANNOTATIONS more flow-map entries.
topo_gang() {
	local i n=${4:-2}
	for ((i = 0; i < n; i++)); do
		pod_yaml "$1" "$2-$i" 32 256Mi "  labels: {scheduling.x-k8s.io/pod-group: $2}
  annotations: {scheduler.slinky.slurm.net/min-member: \"$n\"${3:+, $3}}" | k apply -f - >/dev/null
	done
}
# topo_values NS LABEL POD...: the distinct values of LABEL on the pods' nodes.
topo_values() {
	local ns=$1 key=$2 p
	shift 2
	for p in "$@"; do
		k get node "$(pod_field "$ns" "$p" "$JP_NODE")" -o "jsonpath={.metadata.labels.${key//./\\.}}"
		echo
	done | sort -u | paste -sd' '
}
topo_nodes() { local ns=$1 p; shift; for p in "$@"; do pod_field "$ns" "$p" "$JP_NODE"; echo; done | paste -sd' '; }
topo_clear() {
	k -n "$1" delete pods --all --wait=true --timeout=60s >/dev/null 2>&1
	wait_for 60 topo_idle
}

scenario "topology: without a request a gang of two whole nodes may span both leaf switches"
ns=$(new_ns enabled)
wait_for 60 topo_idle
topo_fill "$ns" fill2 n2
topo_fill "$ns" fill4 n4
topo_gang "$ns" plain
check "the gang is bound" wait_for 60 all_bound "$ns" plain-0 plain-1
echo "    plain gang on $(topo_nodes "$ns" plain-0 plain-1): leaf $(topo_values "$ns" "$TL" plain-0 plain-1)"
check_eq "on two leaf switches (nothing asked, n1 and n3 free)" \
	"$(topo_values "$ns" "$TL" plain-0 plain-1 | wc -w)" 2
k -n "$ns" delete pod plain-0 plain-1 fill4 --wait=true >/dev/null

scenario "topology: our required-topology at a switch level is one leaf switch"
topo_gang "$ns" mine "$TA/required-topology: $TL"
check "the gang is bound" wait_for 60 all_bound "$ns" mine-0 mine-1
job=$(pod_field "$ns" mine-0 "$JP_JOBID")
echo "    on $(topo_nodes "$ns" mine-0 mine-1); scontrol show job: NodeList=$(job_field "$job" NodeList) Switches=$(job_field "$job" Switches)"
check_eq "both under one leaf switch" "$(topo_values "$ns" "$TL" mine-0 mine-1 | wc -w)" 1
check_match "Slurm was asked for one switch" "$(scontrol show job "$job")" 'Switches=1@'
k -n "$ns" delete pod mine-0 mine-1 --wait=true >/dev/null

scenario "topology: Kueue's podset-required-topology on an Indexed Job"
job_yaml "$ns" kq "$E2E_POD_BRIDGE" "completionMode: Indexed, completions: 2, parallelism: 2" \
	"{annotations: {kueue.x-k8s.io/podset-required-topology: $TL}}" |
	sed 's/requests: {cpu: "1"/requests: {cpu: "32"/' | k apply -f - >/dev/null
ksel=batch.kubernetes.io/job-name=kq
check "the Job's two pods are bound" wait_for 60 n_with "$ns" "$ksel" "$JP_NODE" 2
# shellcheck disable=SC2046
check_eq "under one leaf switch" "$(topo_values "$ns" "$TL" $(pods_by "$ns" "$ksel") | wc -w)" 1
# shellcheck disable=SC2046
echo "    on $(topo_nodes "$ns" $(pods_by "$ns" "$ksel"))"
k -n "$ns" delete job kq --wait=true >/dev/null
topo_clear "$ns"

scenario "topology: required, and no leaf switch has room: the gang waits, then gets one"
topo_fill "$ns" fill2 n2
topo_fill "$ns" fill4 n4
topo_gang "$ns" wait "$TA/required-topology: $TL"
pending_job() { [ -n "$(pod_field "$ns" wait-0 "$JP_JOBID")" ] && job_is "$(pod_field "$ns" wait-0 "$JP_JOBID")" PENDING; }
check "its job waits in Slurm" wait_for 30 pending_job
sleep 5
check_eq "no member is bound while n1 and n3 are free (leaf1 and leaf2 have one node each)" \
	"$(bound_count "$ns" wait-0 wait-1)" 0
echo "    pending: $(squeue -h -j "$(pod_field "$ns" wait-0 "$JP_JOBID")" -o '%T %r')"
k -n "$ns" delete pod fill4 --wait=true >/dev/null
check "once n4 is free the gang is bound" wait_for 60 all_bound "$ns" wait-0 wait-1
check_eq "on leaf2's n3 and n4" "$(topo_nodes "$ns" wait-0 wait-1 | tr ' ' '\n' | sort | paste -sd' ')" "n3 n4"
topo_clear "$ns"

scenario "topology: a label Slurm knows nothing of (slurm: none) holds the gang in one value"
k label node n1 n3 "$TR=ra" --overwrite >/dev/null
k label node n2 n4 "$TR=rb" --overwrite >/dev/null
topo_fill "$ns" fill2 n2
topo_gang "$ns" rack "$TA/required-topology: $TR"
check "the gang is bound" wait_for 60 all_bound "$ns" rack-0 rack-1
check_eq "in one rack" "$(topo_values "$ns" "$TR" rack-0 rack-1 | wc -w)" 1
job=$(pod_field "$ns" rack-0 "$JP_JOBID")
echo "    on $(topo_nodes "$ns" rack-0 rack-1) (rack $(topo_values "$ns" "$TR" rack-0 rack-1)); ExcNodeList=$(job_field "$job" ExcNodeList)"
topo_clear "$ns"
k label node n1 n2 n3 n4 "$TR-" >/dev/null

scenario "topology: a 1.37 PodGroup's schedulingConstraints.topology"
pg_api=$(k api-resources --api-group=scheduling.k8s.io --no-headers 2>/dev/null |
	awk '$1 == "podgroups" { print $(NF-2) }')
if [ "$pg_api" != scheduling.k8s.io/v1beta1 ]; then
	echo "  skip this cluster serves no scheduling.k8s.io/v1beta1 PodGroup"
else
	printf 'apiVersion: %s\nkind: PodGroup\nmetadata: {name: tpg, namespace: %s}\nspec: {schedulingPolicy: {gang: {minCount: 2}}, schedulingConstraints: {topology: [{key: %s}]}}\n' \
		"$pg_api" "$ns" "$TL" | k apply -f - >/dev/null
	if [ -z "$(k -n "$ns" get podgroup.scheduling.k8s.io tpg -o jsonpath='{.spec.schedulingConstraints.topology[0].key}')" ]; then
		echo "  skip the API server dropped spec.schedulingConstraints (gate TopologyAwareWorkloadScheduling off)"
	else
		topo_fill "$ns" fill2 n2
		for i in 0 1; do
			pod_yaml "$ns" "tpg-$i" 32 256Mi | sed "s/^spec:/spec:\n  schedulingGroup: {podGroupName: tpg}/" |
				k apply -f - >/dev/null
		done
		check "the PodGroup's pods are bound" wait_for 60 all_bound "$ns" tpg-0 tpg-1
		check_eq "under one leaf switch" "$(topo_values "$ns" "$TL" tpg-0 tpg-1 | wc -w)" 1
		echo "    on $(topo_nodes "$ns" tpg-0 tpg-1)"
	fi
fi
topo_clear "$ns"

scenario "topology: a JobSet's exclusive-topology: its child Job placed whole in one leaf switch"
# JobSet creates a child Job's other pods only once the first is bound;
# the webhook states the request as ours and drops JobSet's own.
topo_fill "$ns" fill2 n2
jobset_yaml "$ns" jx "$E2E_POD" w:1:2 | sed 's/requests: {cpu: "1"/requests: {cpu: "32"/' |
	sed "s|^metadata: {name: jx, namespace: $ns}|metadata: {name: jx, namespace: $ns, annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: $TL}}|" |
	k apply -f - >/dev/null
jsel=jobset.sigs.k8s.io/jobset-name=jx
check "the JobSet's two pods are bound" wait_for 60 n_with "$ns" "$jsel" "$JP_NODE" 2
# shellcheck disable=SC2046
check_eq "under one leaf switch" "$(topo_values "$ns" "$TL" $(pods_by "$ns" "$jsel") | wc -w)" 1
p0=$(first_pod "$ns" "$jsel")
# shellcheck disable=SC2046
echo "    on $(topo_nodes "$ns" $(pods_by "$ns" "$jsel"))"
check_eq "the pods carry our exclusive-topology" \
	"$(pod_field "$ns" "$p0" '{.metadata.annotations.slurmjob\.slinky\.slurm\.net/exclusive-topology}')" "$TL"
check_eq "and neither JobSet's annotation nor its affinity terms" \
	"$(pod_field "$ns" "$p0" '{.metadata.annotations.alpha\.jobset\.sigs\.k8s\.io/exclusive-topology}{.spec.affinity.podAffinity}')" ""
check_one_job "$ns" "$jsel" 2 JobSet
k -n "$ns" delete jobset jx --wait=false >/dev/null
topo_clear "$ns"

# Slurm 25.05 on: the stack's partition slurm-bridge-block places by
# topology/block (topology.yaml), blocks of two nodes across the leaf
# switches: b1 = n1 n3, b2 = n2 n4 (label slurm-bridge.io/block).
TB=slurm-bridge.io/block
BP="$TA/partition: slurm-bridge-block, $TA/exclusive: \"true\""
if [ -z "$(sinfo -h -p slurm-bridge-block -o %P 2>/dev/null)" ]; then
	echo "  skip the topology/block scenarios: no partition slurm-bridge-block (Slurm before 25.05)"
else
	scenario "topology/block: a gang that requires a block gets one"
	topo_fill "$ns" fill1 n1
	topo_gang "$ns" blk "$TA/required-topology: $TB, $BP"
	check "the gang is bound" wait_for 60 all_bound "$ns" blk-0 blk-1
	job=$(pod_field "$ns" blk-0 "$JP_JOBID")
	echo "    on $(topo_nodes "$ns" blk-0 blk-1) (block $(topo_values "$ns" "$TB" blk-0 blk-1)); scontrol show job: NodeList=$(job_field "$job" NodeList) Partition=$(job_field "$job" Partition)"
	check_eq "in block b2, the one with both nodes free" "$(topo_nodes "$ns" blk-0 blk-1 | tr ' ' '\n' | sort | paste -sd' ')" "n2 n4"
	topo_clear "$ns"

	scenario "topology/block: a gang of four in slices of two, each slice in one block (--segment)"
	refits0=$(stack_metric slurm_bridge_refits_total)
	topo_gang "$ns" seg "$TA/required-topology: $TB, $TA/topology-slice-size: \"2\", $BP" 4
	check "the gang is bound" wait_for 60 all_bound "$ns" seg-0 seg-1 seg-2 seg-3
	job=$(pod_field "$ns" seg-0 "$JP_JOBID")
	echo "    seg-0..3 on $(topo_nodes "$ns" seg-0 seg-1 seg-2 seg-3); scontrol show job: NodeList=$(job_field "$job" NodeList) SegmentSize=$(job_field "$job" SegmentSize)"
	check_eq "slice 0 (seg-0, seg-1) in one block" "$(topo_values "$ns" "$TB" seg-0 seg-1 | wc -w)" 1
	check_eq "slice 1 (seg-2, seg-3) in one block" "$(topo_values "$ns" "$TB" seg-2 seg-3 | wc -w)" 1
	check_eq "Slurm was asked for segments of two" "$(job_field "$job" SegmentSize)" 2
	check_eq "no allocation was given back (slurm_bridge_refits_total)" \
		"$(($(stack_metric slurm_bridge_refits_total) - refits0))" 0
	topo_clear "$ns"

	scenario "topology/block: a JobSet's exclusive-topology: each child Job in one block"
	jobset_yaml "$ns" jb "$E2E_POD" w:2:2 | sed 's/requests: {cpu: "1"/requests: {cpu: "32"/' |
		sed "s|^metadata: {name: jb, namespace: $ns}|metadata: {name: jb, namespace: $ns, annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: $TB, $BP}}|" |
		k apply -f - >/dev/null
	jsel=jobset.sigs.k8s.io/jobset-name=jb
	check "the JobSet's four pods are bound" wait_for 60 n_with "$ns" "$jsel" "$JP_NODE" 4
	for ji in 0 1; do
		# shellcheck disable=SC2046
		check_eq "child Job $ji in one block" "$(topo_values "$ns" "$TB" $(pods_by "$ns" "$jsel,jobset.sigs.k8s.io/job-index=$ji") | wc -w)" 1
		# shellcheck disable=SC2046
		echo "    child Job $ji on $(topo_nodes "$ns" $(pods_by "$ns" "$jsel,jobset.sigs.k8s.io/job-index=$ji"))"
	done
	check_one_job "$ns" "$jsel" 4 JobSet
	k -n "$ns" delete jobset jb --wait=false >/dev/null
	topo_clear "$ns"

	scenario "topology/block: exclusive-topology: a block is the job's alone (--exclusive=topo)"
	# Two gangs of two one-CPU pods: Slurm alone would pack both on one
	# node; exclusive, the second gang gets the other block.
	topo_gang_small() {
		local i
		for i in 0 1; do
			pod_yaml "$ns" "$1-$i" 1 256Mi "  labels: {scheduling.x-k8s.io/pod-group: $1}
  annotations: {scheduler.slinky.slurm.net/min-member: \"2\", $TA/partition: slurm-bridge-block${2:+, $2}}" |
				k apply -f - >/dev/null
		done
	}
	topo_gang_small sharea
	check "a gang that asks nothing is bound" wait_for 60 all_bound "$ns" sharea-0 sharea-1
	topo_gang_small shareb
	check "and a second one" wait_for 60 all_bound "$ns" shareb-0 shareb-1
	# shellcheck disable=SC2046
	echo "    without exclusive-topology: on $(topo_nodes "$ns" sharea-0 sharea-1 shareb-0 shareb-1) (blocks $(topo_values "$ns" "$TB" sharea-0 sharea-1 shareb-0 shareb-1))"
	topo_clear "$ns"
	topo_gang_small exa "$TA/exclusive-topology: $TB"
	check "an exclusive gang is bound" wait_for 60 all_bound "$ns" exa-0 exa-1
	topo_gang_small exb "$TA/exclusive-topology: $TB"
	check "a second one too" wait_for 60 all_bound "$ns" exb-0 exb-1
	ja=$(pod_field "$ns" exa-0 "$JP_JOBID")
	echo "    with it: exa on $(topo_nodes "$ns" exa-0 exa-1) (block $(topo_values "$ns" "$TB" exa-0 exa-1)), exb on $(topo_nodes "$ns" exb-0 exb-1) (block $(topo_values "$ns" "$TB" exb-0 exb-1)); scontrol show job: $(scontrol show job "$ja" | grep -o 'OverSubscribe=[A-Z]*')"
	check_eq "each in one block" "$(topo_values "$ns" "$TB" exa-0 exa-1 | wc -w)/$(topo_values "$ns" "$TB" exb-0 exb-1 | wc -w)" 1/1
	# shellcheck disable=SC2046
	check_eq "and not the same one" "$(topo_values "$ns" "$TB" exa-0 exa-1 exb-0 exb-1 | wc -w)" 2
	topo_clear "$ns"
fi

scenario "topology: at start the bridge checks the labels against Slurm's topology"
blog=$LOG_DIR/slurm-bridge.log
topo_restart() {
	local pid; pid=$(stack_pid "$BRIDGE_PIDFILE")
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	wait_for 20 bash -c "! kill -0 $pid 2>/dev/null"
	"$E2E_DIR/../../scripts/stack/bridge-up.sh" >/dev/null
}
topo_said() { tail -c +"$((mark + 1))" "$blog" | grep -m1 "$1"; }
topo_has() { topo_said "$1" >/dev/null; }
mark=$(wc -c <"$blog")
k label node n2 "$TL=leaf2" --overwrite >/dev/null
topo_restart
check "n2 labelled leaf2 (Slurm: leaf1): the bridge says where" wait_for 30 topo_has "topology: label $TL disagrees"
echo "    $(topo_said "topology: label $TL disagrees" | sed 's/^.*reconcile: //')"
mark=$(wc -c <"$blog")
k label node n2 "$TL=leaf1" --overwrite >/dev/null
topo_restart
check "labelled back: it agrees" wait_for 30 topo_has "topology: label $TL agrees"
echo "    $(topo_said "topology: label $TL agrees" | sed 's/^.*reconcile: //')"
if [ -n "$(sinfo -h -p slurm-bridge-block -o %P 2>/dev/null)" ]; then
	check "and $TB with Slurm's blocks (topology \"block\" of topology.yaml)" topo_has "topology: label $TB agrees"
fi

scenario "topology: what Slurm cannot hold is said on the pod or refused"
out=$(pod_yaml "$ns" zone 1 256Mi "  annotations: {$TA/required-topology: cloud.example.com/zone}" | k apply -f - 2>&1)
check_match "a required level the table lacks: refused by the webhook" "$out" \
	"annotation $TA/required-topology: \"cloud.example.com/zone\" is not a level in slurm-bridge's topology table"
topo_gang "$ns" slices "kueue.x-k8s.io/podset-slice-required-topology: $TL, kueue.x-k8s.io/podset-slice-size: \"1\""
check_cond "slices at a switch level: the pods say why they wait" 30 "$ns" slices-0 \
	"Slurm can hold each slice in one domain only at a block level"
echo "    $(cond_msg "$ns" slices-0)"
lws_yaml "$ns" lx 1 2 "$E2E_POD" |
	sed "s|^metadata: {name: lx, namespace: $ns}|metadata: {name: lx, namespace: $ns, annotations: {leaderworkerset.sigs.k8s.io/exclusive-topology: $TL}}|" |
	k apply -f - >/dev/null
lws_refused() {
	k -n "$ns" get events --field-selector reason=FailedCreate \
		-o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | grep -m1 "creates a group's workers only once"
}
check "a LeaderWorkerSet's exclusive-topology: its leader is refused, saying what to write" \
	wait_for 30 eval 'lws_refused >/dev/null'
echo "    $(lws_refused | sed 's/^.*denied the request: //' | cut -c1-200)..."
k delete namespace "$ns" --wait=false >/dev/null
