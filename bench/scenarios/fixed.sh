# make bench's fixed scenario: pods arriving at a fixed rate.
#
# bench/run.sh sources it.  Pods arrive at BENCH_FIXED_RATE pods/s (default 100) for
# BENCH_FIXED_S seconds (default 60), one-CPU pods as singles, each
# deleted BENCH_FIXED_LIFE_S seconds (default 10) after it arrived so the
# run fits in the cluster (build/bench/podgen), against the running
# bridge and against a kube-scheduler started (and ready) beforehand:
# creation to bind per pod, from the pod's ADDED event on bindwatch's
# watch; latency_post_ms is the same from the pod's POST returning
# (podgen's clock): beside the latency from ADDED, it shows what the
# watch itself adds.  A pod created and never bound is later than any
# (null where a percentile falls on one).
# shellcheck shell=bash disable=SC2034,SC2154 # the driver's variables
FIXED_RATE=${BENCH_FIXED_RATE:-100}
FIXED_S=${BENCH_FIXED_S:-60}
FIXED_LIFE_S=${BENCH_FIXED_LIFE_S:-10}

# fixed_run SYSTEM NS SCHEDULER PID: one system's run, its scheduler (PID)
# up.  Latency is from each pod's ADDED event on bindwatch's watch, not
# from podgen's POST returning: both events then come down the same stream
# to the same clock, so the watch's own delay cancels out (the POST-based
# figure, kept as latency_post_ms, adds the delay of the bind's event).
# The window spans every pod's whole life (created, bound, deleted), so the
# bridge's writes and RPCs on delete count too.
fixed_run() {
	local sys=$1 ns=$2 sched=$3 pid=$4 pg
	bindwatch_start "$ns" "$FIXED_N" --from-added
	window_open
	cpu0=$(proc_cpu "$pid" 2>/dev/null) || cpu0=
	: >"$WORK/pg-$ns.txt"
	"$PODGEN" --kubeconfig "$KUBECONFIG" --namespace "$ns" --rate "$FIXED_RATE" \
		--seconds "$FIXED_S" --lifetime "$FIXED_LIFE_S" --scheduler "$sched" \
		--out "$WORK/pg-$ns.txt" >"$WORK/pg-$ns.json" 2>"$WORK/pg-$ns.err" ||
		say "podgen $ns: $(jq -r '.first_error // empty' "$WORK/pg-$ns.json" 2>/dev/null) $(tail -1 "$WORK/pg-$ns.err")"
	# A pod podgen could not create is never bound: once the last pod's
	# lifetime is over (and 30 s more), the watcher stops and reports.
	( sleep $((FIXED_LIFE_S + 30)); kill -TERM "$bw_pid" 2>/dev/null ) &
	local dog=$!
	bindwatch_wait "$ns"
	kill "$dog" 2>/dev/null; wait "$dog" 2>/dev/null || true
	window_close "$pid"
	pg=$(cat "$WORK/pg-$ns.json"); [ -n "$pg" ] || pg=null
	sched_record fixed "$sys" "$ns" -n rate="$FIXED_RATE" -n seconds="$FIXED_S" \
		-n lifetime_s="$FIXED_LIFE_S" -j podgen="$WORK/pg-$ns.json" \
		--post-pods "$WORK/pg-$ns.txt" --post-binds "$WORK/binds-$ns.txt"
	# Latency against arrival, from podgen's t0.
	awk -v t0="$(jq -r '.t0_ms // 0' <<<"$pg")" '$2 > 0 { l = $1 - $2; if (l < 1) l = 1
		printf "%.3f %d\n", ($2 - t0) / 1000, l }' "$WORK/binds-$ns.txt" >"$WORK/plot-fixed-$sys.dat"
	drop_ns "$ns"
}

scenario_fixed() {
FIXED_N=$(awk -v r="$FIXED_RATE" -v s="$FIXED_S" 'BEGIN { printf "%d", r * s + 0.5 }')
# At most rate x lifetime one-CPU pods live at once: they must fit.
cpus=$(sinfo -h -p "$SLURM_PARTITION" -o %C | cut -d/ -f4)
if [ "$(awk -v r="$FIXED_RATE" -v l="$FIXED_LIFE_S" -v c="${cpus:-0}" 'BEGIN { print (r * l > c) }')" = 1 ]; then
	say "fixed: warning: $FIXED_RATE pods/s living $FIXED_LIFE_S s need more than the $cpus CPUs"
fi
say "fixed: slurm-bridge, $FIXED_RATE pods/s for $FIXED_S s, each deleted $FIXED_LIFE_S s after"
new_ns bench-fixed enabled
started_ms='' ready_ms=''
fixed_run bridge bench-fixed slurm-bridge "$(bridge_pid)"
wait_no_jobs
say "fixed: baseline B (kube-scheduler, started first), $FIXED_RATE pods/s for $FIXED_S s"
new_ns bench-fixed-kube
kube_sched_start
fixed_run kube-scheduler bench-fixed-kube "$KUBE_SCHED_NAME" "$sched_pid"
kube_sched_stop
}
