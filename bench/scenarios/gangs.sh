# make bench's gangs scenario: gangs of 8 one-GPU pods placed at once,
# then the same gangs each required in one leaf switch (slurm-bridge.io/
# leaf-switch: --switches=1 and the check before the Binding), recorded
# as gangs-topology beside them, and where Slurm has topology/block, each
# in one block of the block partition (slurm-bridge.io/block), recorded
# as gangs-block.
#
# bench/run.sh sources it.  BENCH_GANGS gangs of 8 one-GPU pods (default: as many as
# the GPUs hold at once, at most 100), the same way as singles, against
# baseline A's 8-task allocations; bindwatch checks that no gang is left
# partly bound, that each member carries its Slurm node when first seen
# bound, and how far apart in time a gang's members are bound.
# shellcheck shell=bash disable=SC2034,SC2154 # the driver's variables
GANG_SIZE=8
GANGS=${BENCH_GANGS:-$(( NODES * 8 / GANG_SIZE < 100 ? NODES * 8 / GANG_SIZE : 100 ))}

# Slurm alone and the bridge run in BENCH_ROUNDS interleaved rounds.
scenario_gangs() {
local r
for ((r = 1; r <= ROUNDS; r++)); do
	ROUND=$r
	gangs_round
done
}

gangs_round() {
if [ "$SLURM" = 22.05 ]; then
	say "gangs: baseline A, round $ROUND of $ROUNDS, $GANGS allocations of $GANG_SIZE one-GPU tasks"
	"$BASELINE" gangs "$GANGS" "$GANG_SIZE" 1 >"$WORK/slurm-gangs.json" ||
		say "gangs: baseline A failed"
	rec run --scenario gangs --system slurm -n round="$ROUND" -j result="$WORK/slurm-gangs.json"
else
	say "gangs: no baseline A on Slurm $SLURM (it links the host's libslurm 22.05)"
fi
say "gangs: slurm-bridge, round $ROUND of $ROUNDS, $GANGS gangs of $GANG_SIZE one-GPU pods present when it starts"
bridge_stop
new_ns bench-gangs enabled
pods bench-gangs g $((GANGS * GANG_SIZE)) slurm-bridge 1 "$GANG_SIZE" | create_pods
bindwatch_start bench-gangs $((GANGS * GANG_SIZE)) --gang-label scheduling.x-k8s.io/pod-group \
	--t0-file "$WORK/t0-bench-gangs"
window_open
bridge_start_ready bench-gangs
bindwatch_wait bench-gangs
window_close "$(bridge_pid)"
sched_record gangs bridge bench-gangs -n round="$ROUND" -n startup_cpu_s="${cpu0:-}" -n gang_size="$GANG_SIZE"
end_window gangs bridge bench-gangs $((GANGS * GANG_SIZE)) "$(bridge_pid)"
gangs_topo_run gangs-topology bench-gangs-topo "each in one leaf switch" slurm-bridge.io/leaf-switch
# Where Slurm has topology/block (25.05 on; blocks of 16 at 64 nodes): the
# same gangs in the block partition, each in one block.
if stack_has_blocks; then
	gangs_topo_run gangs-block bench-gangs-block "each in one block of $(stack_block_size) nodes" \
		slurm-bridge.io/block "$SLURM_BLOCK_PARTITION"
fi
}

# gangs_topo_run SCENARIO NS WHAT LABEL [PARTITION]: the same gangs, each
# required in one value of LABEL (in PARTITION), recorded as SCENARIO.
gangs_topo_run() {
	local sc=$1 ns=$2 what=$3 label=$4 part=${5:-}
	say "$sc: slurm-bridge, round $ROUND of $ROUNDS, the same gangs, $what"
	bridge_stop
	new_ns "$ns" enabled
	PODS_TOPOLOGY=$label PODS_PARTITION=$part pods "$ns" g $((GANGS * GANG_SIZE)) slurm-bridge 1 "$GANG_SIZE" |
		create_pods
	bindwatch_start "$ns" $((GANGS * GANG_SIZE)) --gang-label scheduling.x-k8s.io/pod-group \
		--t0-file "$WORK/t0-$ns"
	window_open
	bridge_start_ready "$ns"
	bindwatch_wait "$ns"
	window_close "$(bridge_pid)"
	sched_record "$sc" bridge "$ns" -n round="$ROUND" -n startup_cpu_s="${cpu0:-}" \
		-n gang_size="$GANG_SIZE" -s topology="$label"
	end_window "$sc" bridge "$ns" $((GANGS * GANG_SIZE)) "$(bridge_pid)"
}
