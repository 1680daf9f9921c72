# shellcheck shell=bash
# sacct tells how each pod ended: Succeeded is COMPLETED 0:0, Failed with
# exit code 3 is FAILED 3:0, deleted is CANCELLED.
scenario "sacct State and ExitCode follow the pod"
ns=$(new_ns enabled)
for p in ok bad gone; do
	pod_yaml "$ns" "$p" 1 64Mi | k apply -f - >/dev/null
done
for p in ok bad gone; do
	check "$p is Running" wait_for 30 pod_is "$ns" "$p" "$JP_PHASE" Running
done

# The pod's containers end, as a kubelet reports it (kwok has none).
pod_ends() { # pod_ends POD PHASE EXIT_CODE
	local reason=Completed
	[ "$3" -ne 0 ] && reason=Error
	k -n "$ns" patch pod "$1" --subresource status --type json -p "[
		{\"op\": \"replace\", \"path\": \"/status/phase\", \"value\": \"$2\"},
		{\"op\": \"replace\", \"path\": \"/status/containerStatuses/0/state\",
		 \"value\": {\"terminated\": {\"exitCode\": $3, \"reason\": \"$reason\",
		 \"startedAt\": \"2026-01-01T00:00:00Z\",
		 \"finishedAt\": \"2026-01-01T00:00:01Z\"}}},
		{\"op\": \"replace\", \"path\": \"/status/containerStatuses/0/ready\",
		 \"value\": false}]" >/dev/null
}
# sacct reads slurmdbd, which lags slurmctld by a moment.
sacct_row() { sacct -n -X -P -j "$1" -o State,ExitCode 2>/dev/null | head -n1; }
sacct_is() { [[ $(sacct_row "$1") == $2 ]]; }

declare -A jobs
for p in ok bad gone; do
	jobs[$p]=$(pod_jobid "$ns" "$p")
done
check "ok ends Succeeded" pod_ends ok Succeeded 0
check "bad ends Failed with exit code 3" pod_ends bad Failed 3
k -n "$ns" delete pod gone --wait=false >/dev/null

check "a Succeeded pod's job is COMPLETED 0:0" wait_for 30 sacct_is "${jobs[ok]}" "COMPLETED|0:0"
check "a Failed pod's job is FAILED 3:0" wait_for 30 sacct_is "${jobs[bad]}" "FAILED|3:0"
check "a deleted pod's job is CANCELLED" wait_for 30 sacct_is "${jobs[gone]}" "CANCELLED*"
for p in ok bad gone; do
	echo "  sacct $p (job ${jobs[$p]}): $(sacct_row "${jobs[$p]}")"
done
check "the ended pods stay (nothing deletes them)" pod_is "$ns" ok "$JP_PHASE" Succeeded

# The end is the one write: the comment stays as submitted (whether the
# pods stopped is the node epilog's to see, not a mark anyone can write).
sacct_comment() { sacct -n -X -P -j "$1" -o Comment 2>/dev/null | head -n1; }
inst=$(stack_install_name)
for p in ok bad gone; do
	check_eq "$p's job keeps its comment as submitted (sacct)" \
		"$(sacct_comment "${jobs[$p]}")" "slurm-bridge: pod $ns/$p (install $inst)"
done
k delete namespace "$ns" --wait=false >/dev/null
