# make bench's fixed scenario: pods arriving at a fixed rate.
#
# bench/run.sh sources it.  Pods arrive at BENCH_FIXED_RATE pods/s for
# BENCH_FIXED_S seconds (default 60), one-CPU pods as singles, each
# deleted BENCH_FIXED_LIFE_S seconds (default 10) after it arrived so the
# run fits in the cluster (build/bench/podgen), against the running
# bridge and against a kube-scheduler started (and ready) beforehand:
# creation to bind per pod, from the pod's ADDED event on bindwatch's
# watch; latency_post_ms is the same from the pod's POST returning
# (podgen's clock): beside the latency from ADDED, it shows what the
# watch itself adds.  A pod created and never bound is later than any
# (null where a percentile falls on one).  The rate is one this stack can
# create on time, so the latencies measure the schedulers and not pod
# creation: with BENCH_FIXED_RATE=auto (the default), podgen first
# creates pods at 100 pods/s for 15 s, each deleted 5 s later, with the
# bridge placing them (the dearer system per pod's life: Slurm's
# allocation, its end and the node epilog run on the same cores), and the
# scenario runs at FIXED_SHARE percent (60) of the rate it reached.  The
# bridge and kube-scheduler then run in BENCH_ROUNDS interleaved rounds.
# Through each, cpuseries reads the machine's CPU and each part's every
# 100 ms; the record says how busy the machine was, and whether the
# round's slowest pods came while it was saturated (fixed_saturation).
# shellcheck shell=bash disable=SC2034,SC2154 # the driver's variables
FIXED_RATE=${BENCH_FIXED_RATE:-auto}
FIXED_SHARE=60
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
	rm -f "$WORK/cpu-$ns.txt"
	# shellcheck disable=SC2086 # one name a word
	"$CPUSERIES" --out "$WORK/cpu-$ns.txt" $CPU_PARTS &
	cs_pid=$!
	"$PODGEN" --kubeconfig "$KUBECONFIG" --namespace "$ns" --rate "$FIXED_RATE" \
		--seconds "$FIXED_S" --lifetime "$FIXED_LIFE_S" --scheduler "$sched" \
		--out "$WORK/pg-$ns.txt" >"$WORK/pg-$ns.json" 2>"$WORK/pg-$ns.err" ||
		say "podgen $ns: $(jq -r '.first_error // empty' "$WORK/pg-$ns.json" 2>/dev/null) $(tail -1 "$WORK/pg-$ns.err")"
	# A pod podgen could not create is never bound: once the last pod's
	# lifetime is over (and 30 s more), the watcher stops and reports.
	bindwatch_deadline $((FIXED_LIFE_S + 30))
	bindwatch_wait "$ns"
	kill "$cs_pid" 2>/dev/null; wait "$cs_pid" 2>/dev/null || true; cs_pid=
	window_close "$pid"
	pg=$(cat "$WORK/pg-$ns.json"); [ -n "$pg" ] || pg=null
	# shellcheck disable=SC2046 # fixed_saturation's flags, one a word
	sched_record fixed "$sys" "$ns" -n round="$ROUND" -n rate="$FIXED_RATE" -n seconds="$FIXED_S" \
		-n lifetime_s="$FIXED_LIFE_S" -j podgen="$WORK/pg-$ns.json" \
		--post-pods "$WORK/pg-$ns.txt" --post-binds "$WORK/binds-$ns.txt" \
		$(fixed_saturation "$WORK/cpu-$ns.txt" "$WORK/binds-$ns.txt" \
			"$(jq -r '.latency_ms.p99 // empty' <<<"$res")")
	# Latency against arrival, from podgen's t0.
	awk -v t0="$(jq -r '.t0_ms // 0' <<<"$pg")" '$2 > 0 { l = $1 - $2; if (l < 1) l = 1
		printf "%.3f %d\n", ($2 - t0) / 1000, l }' "$WORK/binds-$ns.txt" >"$WORK/plot-fixed-$sys.dat"
	drop_ns "$ns"
}

# fixed_saturation SERIES BINDS P99: record's flags for when the machine
# was saturated (cpuseries' SERIES, bindwatch's BINDS, "bind_ms added_ms
# pod" a line, and the round's p99 latency from bindwatch): its mean busy
# cores from the first ADDED to the last bind, the whole seconds of that
# span, those in which it was at least 95 % busy, the pods at or above
# P99, and how many of them arrived or were bound in such a second.
# Nothing when a file is empty or P99 is not known (a never-bound pod).
fixed_saturation() {
	[ -s "$1" ] && [ -s "$2" ] && [ -n "$3" ] || return 0
	awk -v hz="$(getconf CLK_TCK)" -v cpus="$(nproc)" -v p99="$3" '
		BEGIN { n = m = 0 }
		FNR == NR { t[n] = $1; b[n++] = $2; next }
		$2 > 0 { add[m] = $2; bnd[m] = $1; m++
			if (lo == "" || $2 < lo) lo = $2; if ($1 > hi) hi = $1 }
		function busy(s,   i, j) {	# mean cores over second s of the span
			for (i = 0; i < n - 1 && t[i + 1] <= lo + s * 1000; i++);
			for (j = i; j < n - 1 && t[j] < lo + (s + 1) * 1000; j++);
			return j > i ? (b[j] - b[i]) / hz / ((t[j] - t[i]) / 1000) : 0 }
		END {
			if (m == 0 || n < 2) exit
			secs = int((hi - lo) / 1000) + 1
			for (s = 0; s < secs; s++) {
				c = busy(s); sum += c
				if (c >= 0.95 * cpus) { sat[s] = 1; nsat++ } }
			for (i = 0; i < m; i++) if (bnd[i] - add[i] >= p99) {
				tail++
				if (sat[int((add[i] - lo) / 1000)] || sat[int((bnd[i] - lo) / 1000)]) hit++ }
			printf "-n busy_cores=%.2f -n span_s=%d -n saturated_s=%d -n tail_pods=%d -n tail_saturated=%d\n",
				sum / secs, secs, nsat, tail, hit
		}' "$1" "$2"
}

# fixed_calibrate: the pods/s this stack creates while the bridge places
# and ends them (podgen at 100 pods/s for 15 s, each deleted 5 s later),
# and FIXED_RATE from it.
fixed_calibrate() {
	local got
	new_ns bench-fixed-cal enabled
	"$PODGEN" --kubeconfig "$KUBECONFIG" --namespace bench-fixed-cal --rate 100 \
		--seconds 15 --lifetime 5 --scheduler slurm-bridge \
		--out "$WORK/pg-cal.txt" >"$WORK/pg-cal.json" 2>"$WORK/pg-cal.err" || true
	got=$(jq -r '.sent_per_s // empty' "$WORK/pg-cal.json" 2>/dev/null)
	drop_ns bench-fixed-cal
	wait_no_jobs
	if [ -z "$got" ]; then
		FIXED_RATE=30
		say "fixed: calibration failed ($(tail -1 "$WORK/pg-cal.err")): $FIXED_RATE pods/s"
	else
		FIXED_RATE=$(awk -v g="$got" -v p="$FIXED_SHARE" 'BEGIN { r = int(g * p / 100); print (r < 1 ? 1 : r) }')
		say "fixed: this stack creates $got pods/s (of 100 asked) while the bridge places them; the scenario runs at $FIXED_RATE pods/s ($FIXED_SHARE %)"
	fi
	rec run --scenario fixed-calibration --system podgen -n created_per_s="${got:-}" \
		-n rate="$FIXED_RATE" -n share_percent="$FIXED_SHARE"
}

scenario_fixed() {
[ "$FIXED_RATE" = auto ] && fixed_calibrate
# The driver's plot title: this runs in a subshell of its own.
echo "$FIXED_RATE" >"$WORK/fixed-rate"
FIXED_N=$(awk -v r="$FIXED_RATE" -v s="$FIXED_S" 'BEGIN { printf "%d", r * s + 0.5 }')
# At most rate x lifetime one-CPU pods live at once: they must fit.
cpus=$(sinfo -h -p "$SLURM_PARTITION" -o %C | cut -d/ -f4)
if [ "$(awk -v r="$FIXED_RATE" -v l="$FIXED_LIFE_S" -v c="${cpus:-0}" 'BEGIN { print (r * l > c) }')" = 1 ]; then
	say "fixed: warning: $FIXED_RATE pods/s living $FIXED_LIFE_S s need more than the $cpus CPUs"
fi
local r
for ((r = 1; r <= ROUNDS; r++)); do
	ROUND=$r
	say "fixed: slurm-bridge, round $ROUND of $ROUNDS, $FIXED_RATE pods/s for $FIXED_S s, each deleted $FIXED_LIFE_S s after"
	new_ns bench-fixed enabled
	started_ms='' ready_ms=''
	fixed_run bridge bench-fixed slurm-bridge "$(bridge_pid)"
	wait_no_jobs
	say "fixed: baseline B (kube-scheduler, started first), round $ROUND of $ROUNDS, $FIXED_RATE pods/s for $FIXED_S s"
	new_ns bench-fixed-kube
	kube_sched_start
	fixed_run kube-scheduler bench-fixed-kube "$KUBE_SCHED_NAME" "$sched_pid"
	kube_sched_stop
done
}
