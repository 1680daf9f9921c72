# make bench's singles scenario: one-CPU pods placed as the scheduler starts.
#
# bench/run.sh sources it.  BENCH_SINGLES one-CPU pods (default 2000), room for all.
#   bridge:     the pods exist, then slurm-bridge starts and places them
#               all; t0 is the moment its /readyz first answers 200
#               (polled every 10 ms), so its start-up, reported apart, is
#               not scheduling time;
#   baseline A: the same placeholders through libslurm alone
#               (build/bench/slurm-baseline; t0: its first submit);
#   baseline B: a stock kube-scheduler starts and places the same pods
#               (default-scheduler) on the same nodes; t0 the same way
#               (its /readyz on a secure port).
# Pod latencies run from t0 (a pod bound before it counts 0).  The bridge
# and kube-scheduler run in BENCH_ROUNDS interleaved rounds (bridge,
# kube-scheduler, bridge, ...), each run's pods then deleted with what
# their ending costs recorded (end_window).
# shellcheck shell=bash disable=SC2034,SC2154 # the driver's variables
SINGLES=${BENCH_SINGLES:-2000}

scenario_singles() {
if [ "$SLURM" = 22.05 ]; then
	say "singles: baseline A (libslurm alone), $SINGLES placeholders"
	"$BASELINE" --dump "$WORK/slurm-singles.txt" singles "$SINGLES" >"$WORK/slurm-singles.json" ||
		say "singles: baseline A failed"
	rec run --scenario singles --system slurm -n round=1 -j result="$WORK/slurm-singles.json"
	awk '{ printf "%.3f %d\n", $1 / 1000, NR }' "$WORK/slurm-singles.txt" >"$WORK/plot-singles-slurm.dat"
else
	say "singles: no baseline A on Slurm $SLURM (it links the host's libslurm 22.05)"
fi

local r
for ((r = 1; r <= ROUNDS; r++)); do
	ROUND=$r
	singles_bridge
	singles_kube
done
}

# Each scheduler: the pods exist, bindwatch lists them, the scheduler
# starts, and t0 is when it says ready.  Its window (API writes, Slurm
# RPCs) runs from before its start to SETTLE_S after its last bind; its CPU
# from t0 (cpu0) on, the start-up's CPU apart.
singles_bridge() {
say "singles: slurm-bridge, round $ROUND of $ROUNDS, $SINGLES pods present when it starts"
bridge_stop
new_ns bench-singles enabled
pods bench-singles p "$SINGLES" slurm-bridge | create_pods
bindwatch_start bench-singles "$SINGLES" --t0-file "$WORK/t0-bench-singles"
window_open
bridge_start_ready bench-singles
bindwatch_wait bench-singles
window_close "$(bridge_pid)"
sched_record singles bridge bench-singles -n round="$ROUND" -n startup_cpu_s="${cpu0:-}" \
	-n rpc_allocate="$(stack_metric 'slurm_bridge_slurm_rpc_duration_seconds_count{rpc="allocate_resources"}')"
plot_binds "$WORK/binds-bench-singles.txt" "$(jq -r '.t0_ms // 0' <<<"$res")" "$WORK/plot-singles-bridge.dat"
end_window singles bridge bench-singles "$SINGLES" "$(bridge_pid)"
}

singles_kube() {
say "singles: baseline B (stock kube-scheduler), round $ROUND of $ROUNDS, $SINGLES pods present when it starts"
new_ns bench-kube
pods bench-kube p "$SINGLES" "$KUBE_SCHED_NAME" | create_pods
bindwatch_start bench-kube "$SINGLES" --t0-file "$WORK/t0-bench-kube"
window_open
kube_sched_start
t0_publish bench-kube
bindwatch_wait bench-kube
window_close "$sched_pid"
sched_record singles kube-scheduler bench-kube -n round="$ROUND" -n startup_cpu_s="${cpu0:-}"
plot_binds "$WORK/binds-bench-kube.txt" "$(jq -r '.t0_ms // 0' <<<"$res")" "$WORK/plot-singles-kube-scheduler.dat"
end_window singles kube-scheduler bench-kube "$SINGLES" "$sched_pid"
kube_sched_stop
}
