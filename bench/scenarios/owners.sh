# make bench's owners scenario: the daemons' memory against large owners.
#
# bench/run.sh sources it.  Both daemons' memory against owner objects they do not
# schedule: a pair of its own (the webhook as bench/webhook/run.sh starts
# one; the scheduler under the scheduler name bench-owners, its
# slurm.conf naming a slurmctld port nobody listens on, so that it lists,
# watches and caches as the stack's does but never reaches Slurm nor acts
# on a pod), on ports BENCH_OWNERS_BRIDGE_PORT (18080) and
# BENCH_OWNERS_ADMISSION_PORT (19443).  VmRSS idle, then with BENCH_OWNERS
# (default 500) suspended Jobs of BENCH_OWNERS_KIB (default 150) KiB of
# pod template each, made in namespace bench-owners (not enabled for the
# bridge) while both watch, then with both started again while the Jobs
# are there (a list page holds 500); each figure BENCH_OWNERS_SETTLE_S
# seconds (default 5) after both have every Job, with VmHWM (the peak)
# beside it and the ratio to idle (the goal: 2x at most).  The namespace
# goes afterwards.  "bench/run.sh owners" runs this scenario alone,
# against the stack as it is (it neither brings the stack up nor restarts
# its daemons); BRIDGE_BIN and ADMISSION_BIN pick the binaries measured.
# shellcheck shell=bash disable=SC2034,SC2154 # the driver's variables
OWNERS=${BENCH_OWNERS:-500}
OWNERS_KIB=${BENCH_OWNERS_KIB:-150}
OWNERS_SETTLE_S=${BENCH_OWNERS_SETTLE_S:-5}
OWNERS_BPORT=${BENCH_OWNERS_BRIDGE_PORT:-18080}
OWNERS_APORT=${BENCH_OWNERS_ADMISSION_PORT:-19443}
# proc_kib PID FIELD: a /proc/PID/status figure (VmRSS, VmHWM) in KiB.
proc_kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null; }
# owners_jobs_seen: "bridge webhook": the Jobs each daemon holds.
owners_jobs_seen() {
	local b a
	b=$(curl -s "http://$LOCAL_IP:$OWNERS_BPORT/debug/memory" | jq -r '.stores.jobs.count // 0' 2>/dev/null) || b=0
	a=$(curl -s --cacert "$CA_CERT" "https://$LOCAL_IP:$OWNERS_APORT/metrics" |
		awk '$1 == "slurm_bridge_admission_cache_objects{kind=\"jobs\"}" { print $2 }')
	echo "${b:-0} ${a:-0}"
}
# owners_up: starts the pair; returns once every watch of the scheduler
# has listed and the webhook is ready (its namespace and Job caches too).
owners_up() {
	local i n listed skip
	if [ -n "$(ss -Hltn "sport = :$OWNERS_BPORT" 2>/dev/null)" ]; then
		say "owners: port $OWNERS_BPORT is in use (BENCH_OWNERS_BRIDGE_PORT)"; return 1
	fi
	grep -v '^SlurmctldPort=' /etc/slurm/slurm.conf >"$WORK/owners-slurm.conf"
	echo SlurmctldPort=1 >>"$WORK/owners-slurm.conf"
	SLURM_CONF=$WORK/owners-slurm.conf "${STACK_EXEC[@]}" "$BRIDGE_BIN" \
		--kubeconfig "$BRIDGE_KUBECONFIG" --config "$BRIDGE_CONFIG" \
		--listen "$LOCAL_IP:$OWNERS_BPORT" --scheduler-name bench-owners \
		</dev/null >>"$WORK/owners-bridge.log" 2>&1 &
	owners_bpid=$!
	stack_admission_start owners_apid "$WORK/owners-admission.log" "$OWNERS_APORT" || return 1
	skip=$(unserved_watches | paste -sd' ')
	[ -z "$skip" ] || say "owners: not served here, so never listed: $skip"
	for ((i = 0; i < 600; i++)); do
		kill -0 "$owners_bpid" 2>/dev/null || { say "owners: the scheduler exited: $(tail -1 "$WORK/owners-bridge.log")"; return 1; }
		read -r n listed < <(curl -s "http://$LOCAL_IP:$OWNERS_BPORT/metrics" |
			awk -v skip=" $skip " '/^slurm_bridge_watch_relists_total\{/ {
				w = $1; sub(/.*watch="/, "", w); sub(/".*/, "", w)
				if (index(skip, " " w " ")) next
				n++; if ($2 > 0) l++ } END { print n + 0, l + 0 }')
		[ "$n" -gt 0 ] && [ "$listed" -eq "$n" ] && return 0
		sleep 0.2
	done
	say "owners: the scheduler's watches did not all list in 120 s"
	return 1
}
owners_down() {
	[ -n "${owners_bpid:-}" ] && stack_stop_pid owners-bridge "$owners_bpid" 30
	[ -n "${owners_apid:-}" ] && stack_stop_pid owners-admission "$owners_apid" 30
	owners_bpid='' owners_apid=''
}
# owners_total: the Jobs in the cluster now, as the API server counts them.
owners_total() {
	k get --raw "/apis/batch/v1/jobs?limit=1" | jq '(.metadata.remainingItemCount // 0) + (.items | length)'
}
# owners_wait: until both daemons hold every Job of the cluster (others'
# tests may make and delete some meanwhile), at most 300 s.
owners_wait() {
	local i b a n=0
	for ((i = 0; i < 600; i++)); do
		n=$(owners_total) || n=0
		read -r b a < <(owners_jobs_seen)
		[ "$b" -ge "$n" ] && [ "$a" -ge "$n" ] && return 0
		sleep 0.5
	done
	say "owners: after 300 s the scheduler holds $b Jobs, the webhook $a, of $n"
	return 1
}
# owners_figures PHASE: both daemons' RSS and peak now, and the
# scheduler's /debug/memory, a line of $WORK/owners-phases.jsonl.
owners_figures() {
	local brss bhwm arss ahwm
	curl -s "http://$LOCAL_IP:$OWNERS_BPORT/debug/memory" >"$WORK/owners-memory.json" 2>/dev/null ||
		: >"$WORK/owners-memory.json"
	brss=$(proc_kib "$owners_bpid" VmRSS) bhwm=$(proc_kib "$owners_bpid" VmHWM)
	arss=$(proc_kib "$owners_apid" VmRSS) ahwm=$(proc_kib "$owners_apid" VmHWM)
	say "owners: $1: scheduler RSS ${brss:-?} KiB (peak ${bhwm:-?}), webhook RSS ${arss:-?} KiB (peak ${ahwm:-?})"
	rec_to "$WORK/owners-phases.jsonl" owners-phase --phase "$1" \
		--bridge-rss "${brss:-}" --bridge-hwm "${bhwm:-}" \
		--admission-rss "${arss:-}" --admission-hwm "${ahwm:-}" \
		--memory "$WORK/owners-memory.json"
}
# owners_jobs FROM TO: a List of the Jobs big-FROM .. big-(TO-1), each with
# an environment variable of OWNERS_KIB KiB in its pod template.
owners_jobs() {
	awk -v ns="$owners_ns" -v from="$1" -v to="$2" -v n="$((OWNERS_KIB * 1024))" 'BEGIN {
		pad = "x"; while (length(pad) < n) pad = pad pad; pad = substr(pad, 1, n)
		print "apiVersion: v1\nkind: List\nitems:"
		for (i = from; i < to; i++) {
			printf "- apiVersion: batch/v1\n  kind: Job\n  metadata: {name: big-%d, namespace: %s}\n", i, ns
			print "  spec:\n    suspend: true\n    template:\n      spec:\n        restartPolicy: Never"
			print "        containers:\n        - name: main\n          image: busybox"
			printf "          env: [{name: PAD, value: \"%s\"}]\n", pad
		}
	}'
}


scenario_owners() {
say "owners: idle, then $OWNERS suspended Jobs of $OWNERS_KIB KiB of pod template each, then started again with them"
owners_ns=bench-owners
k delete namespace "$owners_ns" --ignore-not-found --wait=true --timeout=300s >/dev/null
k create namespace "$owners_ns" >/dev/null
owners_ok=true
: >"$WORK/owners-phases.jsonl"
if owners_up; then
	sleep "$OWNERS_SETTLE_S"
	owners_figures idle
	t=$(now_ms)
	pids=()
	for ((i = 0; i < OWNERS; i += 50)); do
		owners_jobs "$i" $((i + 50 < OWNERS ? i + 50 : OWNERS)) >"$WORK/owners-jobs-$i.yaml"
		k create -f "$WORK/owners-jobs-$i.yaml" >/dev/null 2>>"$WORK/owners-create.err" &
		pids+=($!)
		if [ ${#pids[@]} -ge 4 ]; then wait "${pids[@]}" || owners_ok=false; pids=(); fi
	done
	[ ${#pids[@]} -eq 0 ] || wait "${pids[@]}" || owners_ok=false
	rm -f "$WORK"/owners-jobs-*.yaml
	create_ms=$(($(now_ms) - t))
	[ "$owners_ok" = true ] || say "owners: kubectl create: $(tail -1 "$WORK/owners-create.err")"
	owners_wait || owners_ok=false
	sleep "$OWNERS_SETTLE_S"
	owners_figures watched
	# Both again, the Jobs there: their first list holds every one.
	owners_down
	if owners_up && owners_wait; then
		sleep "$OWNERS_SETTLE_S"
		owners_figures listed
	else
		owners_ok=false
	fi
else
	owners_ok=false
fi
owners_down
# Each figure with its ratio to idle (the goal: 2x at most).
rec owners --phases "$WORK/owners-phases.jsonl" --jobs "$OWNERS" --job-kib "$OWNERS_KIB" \
	--complete "$owners_ok" --create-ms "${create_ms:-}" \
	--bridge-bin "$BRIDGE_BIN" --admission-bin "$ADMISSION_BIN"
say "owners: deleting namespace $owners_ns"
k delete namespace "$owners_ns" --wait=true --timeout=600s >/dev/null 2>&1 || say "owners: namespace $owners_ns is still going"
owners_ns=
}
