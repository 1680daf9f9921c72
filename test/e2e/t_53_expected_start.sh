# shellcheck shell=bash
# A pending pod says until when: Slurm's backfill plans a start for its
# job, and the PodScheduled message carries it, from the polls the bridge
# makes anyway.
scenario "a pending pod shows Slurm's expected start"
ns=$(new_ns enabled)
nodes=$(sinfo -h -p slurm-bridge -o %D | head -n1)
# A native job holds every node of the partition for ten minutes.
salloc --no-shell -Q -J "$ns/filler" -p slurm-bridge -N "$nodes" --exclusive \
	-t 10 >/dev/null 2>&1
filler=$(squeue -h -n "$ns/filler" -o %i | head -n1)
check_match "a native job fills the partition" "$filler" '^[0-9]+$'
pod_yaml "$ns" waits 1 64Mi | k apply -f - >/dev/null

# The backfill pass runs every 30 s (bf_interval).
has_start() { cond_has "$ns" waits "expected start"; }
check "the pod's message gives the expected start" wait_for 90 has_start
msg=$(cond_msg "$ns" waits)
echo "  PodScheduled: $msg"
check_match "with Slurm's reason" "$msg" 'Reason=Resources'
# The plan is the filler's end: its time limit from now, to the minute.
planned=$(sed -n 's/.*expected start \([0-9T:-]*\)Z.*/\1/p' <<<"$msg")
end=$(squeue -h -j "$filler" -o %e)
gap=$(($(date -u -d "$planned" +%s) - $(date -d "$end" +%s)))
check "and it is the native job's end (within two minutes; $gap s)" \
	test "${gap#-}" -le 120
check_eq "nothing bound meanwhile" "$(pod_field "$ns" waits "$JP_NODE")" ""
scancel "$filler"
check "once the native job ends, the pod is bound" \
	wait_for 60 pod_has "$ns" waits "$JP_NODE"
k delete namespace "$ns" --wait=false >/dev/null
