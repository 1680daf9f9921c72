# make bench's churn scenario: steady create and delete, then idle.
#
# bench/run.sh sources it.  BENCH_CHURN_S seconds (default 30) of steady create and
# delete at BENCH_CHURN_RATE pods/s (default 20): the bridge's CPU
# seconds, RSS over time, and Slurm RPCs per pod.  Then idle: the
# bridge's CPU over 20 s with nothing to do, in percent of a core.
# shellcheck shell=bash disable=SC2034,SC2154 # the driver's variables
CHURN_S=${BENCH_CHURN_S:-30}
CHURN_RATE=${BENCH_CHURN_RATE:-20}

# rpcs RPC...: the bridge's calls of those RPCs so far, in all.
rpcs() {
	local r n=0
	for r in "$@"; do n=$((n + $(stack_metric "slurm_bridge_slurm_rpc_duration_seconds_count{rpc=\"$r\"}"))); done
	echo "$n"
}

scenario_churn() {
say "churn: ${CHURN_S}s at $CHURN_RATE pods/s created, each deleted 3 s later"
new_ns bench-churn enabled
pid=$(bridge_pid)
cpu0=$(proc_cpu "$pid")
# Per-pod RPCs (submit, kill) apart from the periodic polls.
rpc0=$(rpcs allocate_resources kill_job); poll0=$(rpcs load_jobs load_node update_node)
: >"$WORK/churn-rss.txt"
for ((s = 0; s < CHURN_S; s++)); do
	tick=$(now_ms)
	pods bench-churn "c$s" "$CHURN_RATE" slurm-bridge | sed "s/^    namespace: bench-churn/    namespace: bench-churn\n    labels: {tick: \"$s\"}/" | create_pods &
	[ "$s" -ge 3 ] && k -n bench-churn delete pods -l "tick=$((s - 3))" --wait=false >/dev/null &
	stack_rss_kib "$pid" >>"$WORK/churn-rss.txt"
	wait
	left=$((1000 - ($(now_ms) - tick)))
	[ "$left" -gt 0 ] && sleep "$(printf '0.%03d' "$left")"
done
k -n bench-churn delete pods --all --wait=true --timeout=120s >/dev/null
wait_no_jobs
cpu1=$(proc_cpu "$pid")
rpc1=$(rpcs allocate_resources kill_job); poll1=$(rpcs load_jobs load_node update_node)
npods=$((CHURN_S * CHURN_RATE))
rec churn --pods "$npods" --seconds "$CHURN_S" --cpu0 "$cpu0" --cpu1 "$cpu1" \
	--rpcs $((rpc1 - rpc0)) --polls $((poll1 - poll0)) --rss "$WORK/churn-rss.txt"
drop_ns bench-churn
sleep 10
idle0=$(proc_cpu "$pid"); sleep 20; idle1=$(proc_cpu "$pid")
rec idle --cpu0 "$idle0" --cpu1 "$idle1" --seconds 20
}
