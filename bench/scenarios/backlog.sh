# make bench's backlog scenario: the bridge with pods pending in Slurm.
#
# bench/run.sh sources it.  Pods pending as Slurm jobs behind a native job (salloc)
# that holds every node, in bands: BENCH_BACKLOG_BANDS (default "2000
# 10000 50000"; BENCH_BACKLOG=N alone makes N the top band over the
# default ones below it), created by podgen at BENCH_BACKLOG_RATE pods/s
# (default 250), against a bridge started afresh for it once slurmctld
# holds no job (waiting at most BENCH_BACKLOG_DRAIN_S seconds, default 360,
# for it to forget finished ones).  At 0 pending (the bridge ready and
# idle) and once each band is reached (every pod submitted, within
# BENCH_BACKLOG_TIMEOUT_S seconds, default 600; a band not reached is
# reported so, and ends the climb), a steady window of
# BENCH_BACKLOG_WINDOW_S seconds (default 20) with no new pods: the
# bridge's VmRSS at its end, its /debug/memory object when that answers
# 200, and the mean time per Slurm poll (load_jobs) over it, from sum and
# count deltas.  A backlog that only waits makes no decisions, so then
# BENCH_BACKLOG_PROBE more pods (default 50) come at 10/s: the mean time
# per decision (slurm_bridge_decision_seconds) over them, at that backlog
# (they stay, and count in the next band).  The RSS growth in bytes per
# pending pod between the two top bands, and from 0 to the second top
# band.  Then, at the top band, the kube-apiserver restarts so every watch
# relists: the bridge's RSS every 200 ms, steady before, peak until every
# watch relisted (slurm_bridge_watch_relists_total) and
# BENCH_RELIST_SETTLE_S seconds (default 10) more (BENCH_BACKLOG_RELIST=0
# skips it).  Last, still at the top band, the release: the native job of
# one node after another ends (BENCH_RELEASE_NODES of them, default 5,
# BENCH_RELEASE_GAP_S seconds apart, default 5; 0 skips it), Slurm starts
# the pending jobs that fit on it, and bindwatch times each pod's bind from
# that node's release; slurmctld's log says when it started each pod's job,
# which splits that into Slurm's part and the bridge's, from the start to
# the bind: the delay a user feels when the queue is deep.  Then the
# deletion: the backlog's namespace goes (drop_ns) while another tenant's
# BENCH_DELETE_PROBES pods (default 20) come at 2/s; how long until Slurm
# holds none of the backlog's jobs (at most BENCH_DELETE_TIMEOUT_S seconds,
# default 900), and each tenant pod's time from its create to its Slurm
# job, from the bridge's log: whether one tenant's deletion holds up the
# others' decisions.  The table sets the figures against the issue's
# targets.
#
# The backlog's bands, ascending; BENCH_BACKLOG alone (the older knob)
# makes itself the top band, over the default bands below it.
# shellcheck shell=bash disable=SC2034,SC2154 # the driver's variables
BACKLOG_BANDS=${BENCH_BACKLOG_BANDS:-}
if [ -z "$BACKLOG_BANDS" ]; then
	for b in 2000 10000 50000; do
		[ -z "${BENCH_BACKLOG:-}" ] || [ "$b" -lt "$BENCH_BACKLOG" ] && BACKLOG_BANDS+="$b "
	done
	BACKLOG_BANDS+=${BENCH_BACKLOG:-}
fi
read -r -a backlog_bands <<<"$BACKLOG_BANDS"
BACKLOG_BANDS=${backlog_bands[*]}
prev=0
for b in "${backlog_bands[@]}"; do
	if ! [[ $b =~ ^[0-9]+$ ]] || [ "$b" -le "$prev" ]; then
		echo "bench: BENCH_BACKLOG_BANDS: \"$BACKLOG_BANDS\" is not ascending pod counts" >&2
		exit 2
	fi
	prev=$b
done
BACKLOG=$prev
BACKLOG_RATE=${BENCH_BACKLOG_RATE:-250}
BACKLOG_WINDOW_S=${BENCH_BACKLOG_WINDOW_S:-20}
BACKLOG_TIMEOUT_S=${BENCH_BACKLOG_TIMEOUT_S:-600}
RELIST_SETTLE_S=${BENCH_RELIST_SETTLE_S:-10}
BACKLOG_PROBE=${BENCH_BACKLOG_PROBE:-50}
BACKLOG_DRAIN_S=${BENCH_BACKLOG_DRAIN_S:-360}
RELEASE_NODES=${BENCH_RELEASE_NODES:-5}
RELEASE_GAP_S=${BENCH_RELEASE_GAP_S:-5}
DELETE_PROBES=${BENCH_DELETE_PROBES:-20}
DELETE_TIMEOUT_S=${BENCH_DELETE_TIMEOUT_S:-900}

# A fresh bridge (its figures do not depend on the scenarios before), a
# native job holding every node, then pods created by podgen band after
# band; each pod becomes a pending Slurm job.  At 0 and at each band, once
# it is reached, a steady window of BACKLOG_WINDOW_S seconds: the bridge's
# VmRSS at its end, and over it the time per decision and per Slurm poll
# (load_jobs) from the bridge's histograms (sum and count deltas; record
# band computes them, and the decision_cpu_ms beside the wall time: the
# reconcile thread's CPU time per decision, since the wall time includes
# waiting for a CPU on a loaded machine).  At the top band the
# kube-apiserver restarts, so that every watch relists.

# bmetrics FILE: the bridge's /metrics now (empty when it does not answer).
bmetrics() { curl -s "http://$LOCAL_IP:$BRIDGE_PORT/metrics" >"$1" || : >"$1"; }
# bridge_memory FILE: the bridge's /debug/memory in FILE when it answers
# 200 (record keeps it when it is an object), else no FILE.
bridge_memory() {
	local code
	code=$(curl -s -o "$1" -w '%{http_code}' "http://$LOCAL_IP:$BRIDGE_PORT/debug/memory") || code=
	[ "$code" = 200 ] || rm -f "$1"
}
# slurm_jobs: "pending all": the bridge's jobs pending in Slurm (its admin
# comment), and every job slurmctld holds (finished ones too, for
# MinJobAge: each poll loads them all).
slurm_jobs() {
	squeue -h -t all -o '%T %k' | awk '$1 == "PENDING" && $2 == "slurm-bridge:" { p++ } END { print p + 0, NR }'
}
slurm_pending() { slurm_jobs | cut -d' ' -f1; }
# submitted: the pods the bridge submitted since the backlog began.
submitted() { echo $(( $(stack_metric slurm_bridge_jobs_submitted_total) - sub0 )); }
# backlog_band BAND PENDING REACHED [FILL_MS [PODGEN]]: one band, a line of
# $WORK/bands.jsonl; past band 0, how it filled: FILL_MS from the first
# create to every pod submitted, the window from $WORK/fill0 to
# $WORK/fill1, and PODGEN's summary (a file; none when podgen did not
# run).  First a steady window (no new pods): RSS at its end,
# /debug/memory, polls and sweeps over it; a backlog that only waits makes
# no decisions, so then BACKLOG_PROBE more pods at 10/s, each a decision
# at this backlog: the time per decision over them (they stay, and count
# towards the next band).
backlog_band() {
	local m0=$WORK/bm0 m1=$WORK/bm1 m2=$WORK/bm2 mem=$WORK/band-memory.json pend all rss s0 i
	local probe=() fill=() same=false
	bmetrics "$m0"
	sleep "$BACKLOG_WINDOW_S"
	bmetrics "$m1"
	rss=$(stack_rss_kib "$pid")
	read -r pend all < <(slurm_jobs)
	bridge_memory "$mem"
	if [ "$BACKLOG_PROBE" -gt 0 ]; then
		s0=$(submitted)
		"$PODGEN" --kubeconfig "$KUBECONFIG" --namespace bench-backlog --rate 10 \
			--seconds "$(awk -v n="$BACKLOG_PROBE" 'BEGIN { printf "%.1f", n / 10 }')" \
			--prefix "p$1" --scheduler slurm-bridge >/dev/null 2>"$WORK/pg-probe.err" ||
			say "backlog: probe podgen: $(tail -1 "$WORK/pg-probe.err")"
		for ((i = 0; i < 60; i++)); do
			[ $(($(submitted) - s0)) -ge "$BACKLOG_PROBE" ] && break
			sleep 1
		done
		bmetrics "$m2"
		probe=(--probe1 "$m1" --probe2 "$m2" --probe-pods "$BACKLOG_PROBE"
			--probe-submitted "$(($(submitted) - s0))")
	fi
	if [ $# -ge 4 ]; then
		fill=(--fill0 "$WORK/fill0" --fill1 "$WORK/fill1" --fill-ms "$4")
		[ -z "${5:-}" ] || fill+=(--podgen "$5")
	fi
	[ "$(bridge_pid)" = "$pid" ] && same=true
	rec_to "$WORK/bands.jsonl" band --band "$1" --submitted "$2" --pending "${pend:-}" \
		--reached "$3" --jobs "${all:-}" --same "$same" --rss "$rss" \
		--window-s "$BACKLOG_WINDOW_S" --steady0 "$m0" --steady1 "$m1" \
		"${probe[@]}" "${fill[@]}" --memory "$mem"
	say "backlog: band $1: ${pend:-?} pending in Slurm (${all:-?} jobs in all), RSS $rss KiB"
	[ "$(bridge_pid)" = "$pid" ] || say "backlog: warning: the bridge is no longer pid $pid (restarted by someone else?)"
}
# rss_sampler PID: "epoch_us kib" every 200 ms while PID lives.
rss_sampler() {
	local k v
	while [ -r "/proc/$1/status" ]; do
		while read -r k v _; do
			[ "$k" = VmRSS: ] && printf '%s %s\n' "${EPOCHREALTIME/./}" "$v"
		done <"/proc/$1/status"
		sleep 0.2
	done
}
# relists_moved: every watch of the bridge has listed again since
# $WORK/rl0 (both /metrics snapshots, $WORK/rl1 the newer), but those of
# resources this API server does not serve ($unserved: never listed).
relists_moved() {
	awk -v skip=" $unserved " 'FILENAME == ARGV[1] { if ($1 ~ /^slurm_bridge_watch_relists_total\{/) a[$1] = $2; next }
		($1 in a) { w = $1; sub(/.*watch="/, "", w); sub(/".*/, "", w)
			if (index(skip, " " w " ")) next
			seen++; if ($2 > a[$1]) moved++ }
		END { exit !(seen > 0 && moved == seen) }' "$WORK/rl0" "$WORK/rl1"
}
# backlog_relist PENDING: the kube-apiserver stops and
# scripts/stack/k8s/up.sh starts it again (its own ensure), so every watch
# of the bridge ends and each informer lists again once the server is
# back.  The bridge's RSS every 200 ms: steady (mean of the 5 s before the
# stop), peak (from the stop until every watch's
# slurm_bridge_watch_relists_total moved, and RELIST_SETTLE_S more), after
# (mean of the last 3 s); record relist writes $WORK/relist.json.
backlog_relist() {
	local t_stop t_up t_done i sampler all=false same=false unserved
	unserved=$(unserved_watches | paste -sd' ')
	bmetrics "$WORK/rl0"
	rss_sampler "$pid" >"$WORK/relist-rss.txt" &
	sampler=$!
	sleep 5
	t_stop=$(now_ms)
	say "backlog: relist: kube-apiserver restarts with $1 pending"
	stack_stop kube-apiserver "$RUN_DIR/kube-apiserver.pid" kube-apiserver 30 >/dev/null
	"$top/scripts/stack/k8s/up.sh" >"$WORK/k8s-up.log" 2>&1 || say "backlog: k8s/up.sh: $(tail -1 "$WORK/k8s-up.log")"
	t_up=$(now_ms)
	for ((i = 0; i < 600; i++)); do
		bmetrics "$WORK/rl1"
		if relists_moved; then all=true; break; fi
		sleep 0.5
	done
	t_done=$(now_ms)
	sleep "$RELIST_SETTLE_S"
	kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
	bmetrics "$WORK/rl1"
	[ "$(bridge_pid)" = "$pid" ] && same=true
	"$RECORD" relist --samples "$WORK/relist-rss.txt" --t-stop "$t_stop" --t-end "$(now_ms)" \
		--pending "$1" --restart-ms "$((t_up - t_stop))" --relisted-ms "$((t_done - t_stop))" \
		--all "$all" --same "$same" --rl0 "$WORK/rl0" --rl1 "$WORK/rl1" >"$WORK/relist.json" ||
		say "backlog: warning: record relist failed"
	say "backlog: relist: steady $(jq -r .steady_kib "$WORK/relist.json") KiB, peak $(jq -r .peak_kib "$WORK/relist.json") KiB"
}

# backlog_release PENDING: the filler jobs of RELEASE_NODES nodes end, one
# every RELEASE_GAP_S seconds, each freeing its node; bindwatch, listed
# before the first, records every bind; record release times each pod
# bound in a gap from its gap's release ($WORK/release.json).
backlog_release() {
	local bw i t0s='' ids started
	read -r -a ids <<<"$native_job"
	[ "${#ids[@]}" -ge "$RELEASE_NODES" ] || { say "backlog: release: ${#ids[@]} filler jobs, $RELEASE_NODES wanted: skipped"; return 0; }
	rm -f "$WORK/release-synced" "$WORK/release-binds.txt"
	"$BINDWATCH" --kubeconfig "$KUBECONFIG" --namespace bench-backlog --count 10000000 \
		--timeout 3600 --binds "$WORK/release-binds.txt" --synced-file "$WORK/release-synced" \
		>"$WORK/bw-release.json" 2>"$WORK/bw-release.err" &
	bw=$!
	for ((i = 0; i < 600; i++)); do [ -e "$WORK/release-synced" ] && break; sleep 0.5; done
	say "backlog: release: $RELEASE_NODES nodes freed, ${RELEASE_GAP_S}s apart, at $1 pending"
	for ((i = 0; i < RELEASE_NODES; i++)); do
		t0s+="${t0s:+,}$(now_ms)"
		scancel "${ids[i]}"
		sleep "$RELEASE_GAP_S"
	done
	kill -TERM "$bw" 2>/dev/null
	wait "$bw" || true
	native_job=${ids[*]:RELEASE_NODES}
	started=$(squeue -h -t R -o %k | grep -c '^slurm-bridge:') || true
	backlog_release_starts "${t0s%%,*}" >"$WORK/release-starts.txt"
	"$RECORD" release --binds "$WORK/release-binds.txt" --t0 "$t0s" --pending "$1" \
		--started "$started" --window-s "$RELEASE_GAP_S" \
		--starts "$WORK/release-starts.txt" >"$WORK/release.json" ||
		say "backlog: warning: record release failed"
	say "backlog: release: $(jq -r '"\(.bound) pods bound, p50 \(.latency_ms.p50) ms, p99 \(.latency_ms.p99) ms from their node'"'"'s release; of that, Slurm to the start p50 \(.slurm_ms.p50) ms, the bridge from the start to the bind p50 \(.bridge_ms.p50) ms (\(.split) pods)"' "$WORK/release.json")"
}

# backlog_release_starts T0_MS: "pod start_ms" for each bridge job slurmctld
# started from T0_MS on, from its log ("sched: Allocate JobId=N" or
# "backfill: Started JobId=N", local time to the millisecond) and the
# job's comment ("slurm-bridge: pod NS/NAME (install ...)").
backlog_release_starts() {
	local names
	names=$(squeue -h -t R -o '%i %k' | awk '$2 == "slurm-bridge:" && $3 == "pod" { sub(/^[^\/]*\//, "", $4); print $1, $4 }')
	awk -v t0="$1" -v names="$names" '
		BEGIN { n = split(names, a, "\n"); for (i = 1; i <= n; i++) { split(a[i], f, " "); pod[f[1]] = f[2] } }
		/sched: Allocate JobId=|backfill: Started JobId=/ {
			if (!match($0, /JobId=[0-9]+/)) next
			id = substr($0, RSTART + 6, RLENGTH - 6)
			if (!(id in pod)) next
			ts = substr($1, 2, 23)   # [YYYY-MM-DDTHH:MM:SS.mmm]
			gsub(/[-T:]/, " ", ts)
			ms = mktime(substr(ts, 1, 19)) * 1000 + substr(ts, 21, 3)
			if (ms >= t0) print pod[id], ms
		}' "$LOG_DIR/slurmctld.log"
}

# backlog_jobs: how many of the backlog's jobs Slurm holds (name NS/POD).
backlog_jobs() { squeue -h -o %j | grep -c '^bench-backlog/'; }

# backlog_delete JOBS: drop_ns bench-backlog in the background (one
# collection delete of its pods, then the namespace) while podgen makes
# DELETE_PROBES pods in bench-tenant at 2/s; $WORK/deletion.json gets the
# time until no backlog job is left (or the timeout, with the count left)
# and each tenant pod's time from podgen's POST to the bridge's "submitted
# slurm job" line for it (both epoch ms; the log is UTC).
backlog_delete() {
	local t0 t c0 dp pg gone_ms left
	rm -f "$WORK/deletion.json" "$WORK/tenant-sent.txt"
	new_ns bench-tenant enabled
	say "backlog: deletion: the namespace of $1 pods (their jobs pending or running) goes; $DELETE_PROBES pods of another tenant come at 2/s"
	c0=$(stack_metric slurm_bridge_jobs_cancelled_total)
	t0=$(now_ms)
	drop_ns bench-backlog >/dev/null 2>&1 &
	dp=$!
	"$PODGEN" --kubeconfig "$KUBECONFIG" --namespace bench-tenant --rate 2 \
		--seconds "$(awk -v n="$DELETE_PROBES" 'BEGIN { printf "%.6f", n / 2 }')" \
		--prefix t --scheduler slurm-bridge --out "$WORK/tenant-sent.txt" \
		>"$WORK/pg-tenant.json" 2>"$WORK/pg-tenant.err" &
	pg=$!
	# The bridge's cancel count says when to look (a squeue of 50,000
	# jobs is itself a load on slurmctld), at least every 30 s; squeue
	# says whether all went.
	while left=$(backlog_jobs) && [ "$left" -gt 0 ] &&
		[ $(($(now_ms) - t0)) -lt $((DELETE_TIMEOUT_S * 1000)) ]; do
		t=$(now_ms)
		while [ $(($(stack_metric slurm_bridge_jobs_cancelled_total) - c0)) -lt "$1" ] &&
			[ $(($(now_ms) - t)) -lt 30000 ]; do
			sleep 0.2
		done
		sleep 1
	done
	gone_ms=$(($(now_ms) - t0))
	wait "$pg" || say "backlog: deletion: podgen: $(tail -1 "$WORK/pg-tenant.err")"
	# Each tenant pod's Slurm job, from the bridge's log (UTC, to the ms).
	TZ=UTC awk -v t0="$t0" '
		FNR == NR { sent[$1] = $3; next }
		/ submitted slurm job / && match($0, /group pod:bench-tenant\/[^:]*:/) {
			name = substr($0, RSTART + 23, RLENGTH - 24)
			if (!(name in sent)) next
			ts = substr($1, 1, 23)
			gsub(/[-T:]/, " ", ts)
			ms = mktime(substr(ts, 1, 19)) * 1000 + substr(ts, 21, 3)
			# The log holds earlier runs too: the first line of this one.
			if (ms >= t0 && !done[name]++) print name, ms - sent[name]
		}' "$WORK/tenant-sent.txt" "$LOG_DIR/slurm-bridge.log" >"$WORK/tenant-decided.txt"
	jq -n --argjson pending "$1" --argjson gone_ms "$gone_ms" --argjson left "$left" \
		--argjson probes "$DELETE_PROBES" --argjson timeout "$DELETE_TIMEOUT_S" \
		--rawfile d "$WORK/tenant-decided.txt" '
		def pct(a; p): if (a | length) == 0 then null else a[((a | length) * p | ceil) - 1 | if . < 0 then 0 else . end] end;
		([$d | splits("\n") | select(length > 0) | split(" ")[1] | tonumber] | sort) as $ms |
		{pending: $pending, gone_ms: $gone_ms, left: $left, timeout_s: $timeout,
		 probes: $probes, decided: ($ms | length),
		 decided_ms: {p50: pct($ms; 0.5), p99: pct($ms; 0.99), max: ($ms | max)}}' \
		>"$WORK/deletion.json" || say "backlog: warning: deletion record failed"
	say "backlog: deletion: $(jq -r '"\(.pending - .left) of \(.pending) jobs gone in \(.gone_ms / 1000) s; \(.decided) of \(.probes) tenant pods decided, create to Slurm job p50 \(.decided_ms.p50) ms, max \(.decided_ms.max) ms"' "$WORK/deletion.json")"
	wait "$dp"
	drop_ns bench-tenant
}

scenario_backlog() {
say "backlog: bands ${BACKLOG_BANDS// /, } pending behind a native job that fills the cluster"
# slurmctld keeps a finished job MinJobAge (30 s on the stack, then up to a
# minute more until its next purge) and each of the bridge's polls loads
# them all: the baseline waits for an empty job table (at most
# BACKLOG_DRAIN_S seconds; the count is recorded either way).
t=$(date +%s)
while [ "$(squeue -h -t all | wc -l)" -gt 0 ] && [ $(($(date +%s) - t)) -lt "$BACKLOG_DRAIN_S" ]; do sleep 5; done
drain_s=$(($(date +%s) - t))
[ "$drain_s" -gt 0 ] && say "backlog: waited ${drain_s}s for slurmctld to forget finished jobs"
bridge_stop
"$top/scripts/stack/bridge-up.sh" >"$WORK/bridge-up.log" 2>&1 || say "bridge-up: $(tail -1 "$WORK/bridge-up.log")"
pid=$(bridge_pid)
# One filler job per node, so the release can free one node at a time;
# four sallocs at a time (a salloc takes some 0.2 s: a thousand nodes are
# minutes one by one).
t=$(date +%s)
# shellcheck disable=SC2016 # sh -c's program
native_job=$(sinfo -h -N -o %N | sort -u | xargs -P 4 -I{} sh -c \
	'salloc --no-shell --immediate=60 -J bench-filler -w "$1" --exclusive -t 60 2>&1' _ {} |
	sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p' | paste -sd' ')
say "backlog: $(wc -w <<<"$native_job") filler jobs in $(($(date +%s) - t)) s"
[ "$(wc -w <<<"$native_job")" -eq "$NODES" ] || say "backlog: warning: $(wc -w <<<"$native_job") filler jobs for $NODES nodes: pods will not all stay pending"
new_ns bench-backlog enabled
rm -f "$WORK/bands.jsonl" "$WORK/relist.json"
sub0=$(stack_metric slurm_bridge_jobs_submitted_total)
# Idle: 0 pending, the bridge ready and its first polls done.
sleep "$SETTLE_S"
backlog_band 0 0 true
for b in "${backlog_bands[@]}"; do
	# The band counts every pod submitted so far (the probes too).
	n=$((b - $(submitted)))
	say "backlog: $n pods to $b pending, podgen at $BACKLOG_RATE pods/s"
	t=$(now_ms)
	bmetrics "$WORK/fill0"
	pg='' pgfile=
	if [ "$n" -gt 0 ]; then
		# podgen makes rate x seconds pods: seconds to 6 decimals is exact.
		"$PODGEN" --kubeconfig "$KUBECONFIG" --namespace bench-backlog --rate "$BACKLOG_RATE" \
			--seconds "$(awk -v n="$n" -v r="$BACKLOG_RATE" 'BEGIN { printf "%.6f", n / r }')" \
			--prefix "b$b" --scheduler slurm-bridge >"$WORK/pg-backlog-$b.json" 2>"$WORK/pg-backlog-$b.err" &
		pg=$!
	fi
	# Every pod submitted (a pending job each), within BACKLOG_TIMEOUT_S.
	reached=false
	while [ $(($(now_ms) - t)) -lt $((BACKLOG_TIMEOUT_S * 1000)) ]; do
		sub=$(submitted)
		if [ "$sub" -ge "$b" ]; then reached=true; break; fi
		sleep 1
	done
	fill_ms=$(($(now_ms) - t))
	if [ -n "$pg" ]; then
		if kill -0 "$pg" 2>/dev/null; then
			say "backlog: podgen still sending after ${BACKLOG_TIMEOUT_S}s: stopped"
			kill -TERM "$pg" 2>/dev/null
		fi
		wait "$pg" || say "backlog: podgen $b: $(jq -r '.first_error // empty' "$WORK/pg-backlog-$b.json" 2>/dev/null) $(tail -1 "$WORK/pg-backlog-$b.err")"
		pgfile=$WORK/pg-backlog-$b.json
	fi
	bmetrics "$WORK/fill1"
	sub=$(submitted)
	[ "$reached" = true ] || say "backlog: band $b not reached in ${BACKLOG_TIMEOUT_S}s: $sub submitted"
	backlog_band "$b" "$sub" "$reached" "$fill_ms" "$pgfile"
	[ "$reached" = true ] || break
done
# The relist at the highest backlog reached.
if [ "${BENCH_BACKLOG_RELIST:-1}" != 0 ]; then backlog_relist "$(slurm_pending)"; fi
rm -f "$WORK/release.json"
if [ "$RELEASE_NODES" -gt 0 ]; then backlog_release "$(slurm_pending)"; fi
backlog_delete "$(backlog_jobs)"
# The scenario's record: every band, the relist, and the RSS growth
# between the two top bands measured (the top one, when not reached, at
# the pods it had) and from 0 to the second top band, against the
# issue's targets.
rec backlog --bands "$WORK/bands.jsonl" --relist "$WORK/relist.json" \
	--release "$WORK/release.json" --deletion "$WORK/deletion.json" --nodes "$NODES" \
	--rate "$BACKLOG_RATE" --timeout "$BACKLOG_TIMEOUT_S" --drain "$drain_s"
}
