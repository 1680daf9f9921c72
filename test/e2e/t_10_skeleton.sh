# shellcheck shell=bash
# The walking skeleton: one pod through Slurm and back.
scenario "one pod through Slurm and back"
ns=$(new_ns enabled)
pod=skel
pod_yaml "$ns" "$pod" 1 256Mi | k apply -f - >/dev/null

check "pod is bound to a node" wait_for 30 pod_has "$ns" $pod "$JP_NODE"
node=$(pod_field "$ns" $pod "$JP_NODE")
# One write placed it: the Binding carried the job id and node annotations.
jobid=$(pod_field "$ns" $pod "$JP_JOBID_ANN")
check_match "its Binding carried the Slurm job id annotation" "$jobid" '^[0-9]+$'
check_eq "and no other write: no job id label" "$(pod_field "$ns" $pod "$JP_JOBID_LABEL")" ""
check_eq "and no finalizer" "$(pod_field "$ns" $pod '{.metadata.finalizers}')" ""
event_reasons() { k -n "$1" get events --field-selector "involvedObject.name=$2" -o jsonpath='{range .items[*]}{.reason}{"\n"}{end}' | sort | tr '\n' ' '; }
events_are() { [ "$(event_reasons "$1" "$2")" = "$3" ]; }
check "one Event, Scheduled" wait_for 10 events_are "$ns" $pod "Scheduled "
check_eq "and no other (after a second)" "$(sleep 1; event_reasons "$ns" $pod)" "Scheduled "
check_match "node is one of the stack's nodes" "$node" '^n[0-9]+$'
if [ -n "$node" ]; then
	check_eq "slurm-node annotation names the node" \
		"$(pod_field "$ns" $pod '{.metadata.annotations.slinky\.slurm\.net/slurm-node}')" "$node"
fi

if [ -n "$jobid" ]; then
	check_eq "slurm job is RUNNING" "$(job_field "$jobid" JobState)" RUNNING
	check_eq "slurm job runs on the pod's node" "$(job_field "$jobid" NodeList)" "$node"
	check_eq "slurm job name is ns/pod" "$(job_field "$jobid" JobName)" "$ns/$pod"
	install=$(stack_install_name)
	uid=$(pod_field "$ns" $pod '{.metadata.uid}')
	ac="{\"pods\":[\"$ns/$pod\"],\"uids\":[\"$uid\"],\"install\":\"$install\"}"
	check_eq "slurm job admin_comment lists the pod, its UID and the install" \
		"$(job_field "$jobid" AdminComment)" "$ac"
	check_eq "its comment names the pod and the install" \
		"$(squeue -h -j "$jobid" -o %k)" "slurm-bridge: pod $ns/$pod (install $install)"
	check_eq "slurm job is in partition slurm-bridge" "$(job_field "$jobid" Partition)" slurm-bridge
	check_eq "placeholder holds one CPU" "$(job_field "$jobid" NumCPUs)" 1
else
	fail "no job id: skipping the Slurm checks"
fi
pod_events() {
	k -n "$ns" get events --field-selector "involvedObject.name=$pod" \
		-o jsonpath='{range .items[*]}{.reason}{" "}{end}'
}
events_have() { pod_events | grep -qw "$1"; }
check "Event Scheduled recorded" wait_for 10 events_have Scheduled
check "kwok makes the pod Running" wait_for 30 pod_is "$ns" $pod "$JP_PHASE" Running

k -n "$ns" delete pod $pod --wait=false >/dev/null
check "pod deletion completes" wait_for 30 pod_gone "$ns" $pod
if [ -n "$jobid" ]; then
	check "slurm job is cancelled after the pod is deleted" \
		wait_for 30 job_is "$jobid" CANCELLED
	# sacct reads slurmdbd, which lags slurmctld by a moment.
	row=""
	for _ in $(seq 1 50); do
		row=$(sacct -n -X -P -j "$jobid" -o JobID,JobName,Partition,State,NodeList,AdminComment 2>/dev/null | head -n1)
		[[ $row == *"|$ns/$pod|"*CANCELLED* ]] && break
		sleep 0.2
	done
	echo "  sacct: $row"
	check_match "sacct row: id, name, partition, CANCELLED, node, admin_comment" "$row" \
		"^$jobid\\|$ns/$pod\\|slurm-bridge\\|CANCELLED.*\\|$node\\|\\{\"pods\":\\[\"$ns/$pod\"\\],\"uids\":\\[\"$uid\"\\],\"install\":\"$install\"\\}$"
fi
k delete namespace "$ns" --wait=false >/dev/null
