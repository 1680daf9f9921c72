# make bench's constrained scenario: singles with a third of the pods constrained.
#
# bench/run.sh sources it.  As singles (BENCH_CONSTRAINED one-CPU pods,
# default BENCH_SINGLES: present when the scheduler starts, t0 its first
# /readyz 200; the bridge and a stock kube-scheduler in BENCH_ROUNDS
# interleaved rounds, each run's pods then deleted in a window of their
# own), but pod i is
#   c-s-i  when i % 6 == 0: a nodeSelector on the zone label
#          (bench.slurm-bridge.io/zone=a), which half the nodes carry;
#   c-t-i  when i % 6 == 3: the taint pool: a toleration for the pool's
#          taint (bench.slurm-bridge.io/pool=a:NoSchedule, on one node in
#          six) and a nodeSelector on the pool's label of the same name;
#   p-i    otherwise: plain, as singles' (the pool's taint keeps them off
#          it).
# Node nK is in the pool when (K - 1) % 6 == 0, in the zone when it is
# odd, else neither: the pool holds a sixth of the CPUs for a sixth of the
# pods, the rest fit beside.  No required pod anti-affinity: the bridge
# does not place it yet (such pods wait).  The scenario labels and taints
# the kwok nodes at its start (removing first what an interrupted run may
# have left of these bench-owned keys) and removes both when it ends,
# finished or not (at_exit).  bindwatch reports the constrained pods
# (c-), each kind (c-s-, c-t-) and the plain ones (p-) apart: binds/s
# over the same span, p50 and p99 from t0; CPU per pod is the whole run's
# (one process places both kinds), beside singles' of the same run.  Each
# run also counts the pods bound against their constraint (violations:
# a c-s- pod off the zone, a c-t- pod off the pool, a p- pod on it).
# shellcheck shell=bash disable=SC2034,SC2154 # the driver's variables
CONSTRAINED=${BENCH_CONSTRAINED:-${BENCH_SINGLES:-2000}}
CONSTRAINED_ZONE_KEY=bench.slurm-bridge.io/zone
CONSTRAINED_POOL_KEY=bench.slurm-bridge.io/pool
# bindwatch's groups: by name prefix.
CONSTRAINED_GROUPS=(--group constrained=c- --group selector=c-s- --group pool=c-t- --group plain=p-)
case $CONSTRAINED in "" | *[!0-9]* | 0) echo "bench: BENCH_CONSTRAINED: a number of pods, 1 or more" >&2; exit 2 ;; esac

# constrained_pods NS N SCHEDULER: a List of N one-CPU pods as singles'
# (pods, in bench/lib.sh), a third of them constrained (the header).
constrained_pods() {
	awk -v ns="$1" -v n="$2" -v s="$3" -v zk="$CONSTRAINED_ZONE_KEY" -v pk="$CONSTRAINED_POOL_KEY" 'BEGIN {
		print "apiVersion: v1\nkind: List\nitems:"
		for (i = 0; i < n; i++) {
			c = i % 6 == 0 ? "selector" : i % 6 == 3 ? "pool" : "plain"
			name = (c == "selector" ? "c-s-" : c == "pool" ? "c-t-" : "p-") i
			print "- apiVersion: v1\n  kind: Pod\n  metadata:"
			printf "    name: %s\n    namespace: %s\n    labels: {bench-class: %s}\n", name, ns, c
			printf "  spec:\n    schedulerName: %s\n    terminationGracePeriodSeconds: 0\n", s
			if (c == "selector") printf "    nodeSelector: {%s: a}\n", zk
			if (c == "pool") printf "    nodeSelector: {%s: a}\n", pk
			printf "    tolerations: [{key: slinky.slurm.net/managed-node, operator: Exists}"
			if (c == "pool") printf ", {key: %s, operator: Equal, value: a, effect: NoSchedule}", pk
			print "]"
			print "    containers:\n    - name: main\n      image: busybox"
			print "      resources: {requests: {cpu: \"1\", memory: 64Mi}}"
		}
	}'
}

# constrained_layout: "node class" per line (pool, zone or other) for
# n1..nNODES, into $WORK/constrained-nodes.txt.
constrained_layout() {
	awk -v n="$NODES" 'BEGIN { for (k = 1; k <= n; k++) { c = (k - 1) % 6
		print "n" k, (c == 0 ? "pool" : c % 2 ? "zone" : "other") } }' >"$WORK/constrained-nodes.txt"
}
constrained_count() { awk -v c="$1" '$2 == c' "$WORK/constrained-nodes.txt" | wc -l; }

# constrained_kubectl VERB ARG... <NAMES: kubectl VERB (label or taint)
# ARG... on the nodes named on stdin, by a hostname selector, 100 nodes a
# call and 4 calls at a time (a thousand nodes are one PATCH each).
constrained_kubectl() {
	xargs -r -n 100 | {
		local line pid rc=0 pids=()
		while read -r line; do
			k "$1" nodes -l "kubernetes.io/hostname in (${line// /,})" "${@:2}" >/dev/null &
			pids+=("$!")
			if [ "${#pids[@]}" -ge 4 ]; then
				for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
				pids=()
			fi
		done
		for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
		exit "$rc"
	}
}

# constrained_tainted: the nodes that carry the pool's taint, one a line.
constrained_tainted() {
	k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.taints[*].key}{"\n"}{end}' |
		awk -v t="$CONSTRAINED_POOL_KEY" '{ for (i = 2; i <= NF; i++) if ($i == t) { print $1; break } }'
}

# constrained_undo: the nodes as found: the pool's taint off, then both
# labels (only where they are: kubectl fails on a taint that is not there).
constrained_undo() {
	local key left
	constrained_tainted | constrained_kubectl taint "$CONSTRAINED_POOL_KEY:NoSchedule-"
	for key in "$CONSTRAINED_ZONE_KEY" "$CONSTRAINED_POOL_KEY"; do
		k get nodes -l "$key" -o name | sed 's#^node/##' | constrained_kubectl label "$key-"
	done
	left=$(( $(constrained_tainted | wc -l) + $(k get nodes -l "$CONSTRAINED_ZONE_KEY" -o name | wc -l) +
		$(k get nodes -l "$CONSTRAINED_POOL_KEY" -o name | wc -l) ))
	[ "$left" -eq 0 ] || { say "constrained: warning: $left node labels or taints of the scenario are left"; return 1; }
}

# constrained_setup: the zone's label and the pool's label and taint on
# the kwok nodes, undone when the scenario ends.
constrained_setup() {
	local zone pool other cpus tainted sel pl plain
	constrained_layout
	zone=$(constrained_count zone) pool=$(constrained_count pool) other=$(constrained_count other)
	if [ -n "$(constrained_tainted)" ] || [ -n "$(k get nodes -l "$CONSTRAINED_ZONE_KEY" -o name)" ] ||
		[ -n "$(k get nodes -l "$CONSTRAINED_POOL_KEY" -o name)" ]; then
		say "constrained: removing the labels and taints an earlier run left"
		constrained_undo
	fi
	at_exit constrained_undo
	say "constrained: labelling $zone nodes $CONSTRAINED_ZONE_KEY=a, $pool nodes $CONSTRAINED_POOL_KEY=a (tainted NoSchedule)"
	awk '$2 == "zone" { print $1 }' "$WORK/constrained-nodes.txt" |
		constrained_kubectl label "$CONSTRAINED_ZONE_KEY=a" --overwrite
	awk '$2 == "pool" { print $1 }' "$WORK/constrained-nodes.txt" |
		constrained_kubectl label "$CONSTRAINED_POOL_KEY=a" --overwrite
	awk '$2 == "pool" { print $1 }' "$WORK/constrained-nodes.txt" |
		constrained_kubectl taint "$CONSTRAINED_POOL_KEY=a:NoSchedule" --overwrite
	tainted=$(constrained_tainted | wc -l)
	if [ "$tainted" -ne "$pool" ] ||
		[ "$(k get nodes -l "$CONSTRAINED_ZONE_KEY=a" -o name | wc -l)" -ne "$zone" ]; then
		say "constrained: $tainted of $pool pool nodes tainted, or the zone's $zone nodes not all labelled"
		return 1
	fi
	# The kinds must fit where they may go (as singles' pods fit the nodes).
	cpus=$(sinfo -h -p "$SLURM_PARTITION" -o %c | sort -n | head -1) || cpus=
	CONSTRAINED_KINDS=$(awk -v n="$CONSTRAINED" 'BEGIN { for (i = 0; i < n; i++) k[i % 6 == 0 ? "s" : i % 6 == 3 ? "t" : "p"]++
		printf "%d %d %d\n", k["s"], k["t"], k["p"] }')
	read -r sel pl plain <<<"$CONSTRAINED_KINDS"
	if [ -n "$cpus" ] && { [ "$pl" -gt $((pool * cpus)) ] || [ "$sel" -gt $((zone * cpus)) ] ||
		[ $((sel + plain)) -gt $(((zone + other) * cpus)) ]; }; then
		say "constrained: warning: $sel selector, $pl pool and $plain plain pods do not all fit $zone zone, $pool pool and $other other nodes of $cpus CPUs"
	fi
	CONSTRAINED_MEMBERS=(-n zone_nodes="$zone" -n pool_nodes="$pool" -n other_nodes="$other"
		-n selector_pods="$sel" -n pool_pods="$pl" -n plain_pods="$plain")
}

# constrained_violations NS: how many pods of NS are bound against their
# constraint (a c-s- pod off the zone, a c-t- pod off the pool, a p- pod
# on the pool).
constrained_violations() {
	k -n "$1" get pods -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.nodeName}{"\n"}{end}' |
		awk 'FNR == NR { cls[$1] = $2; next }
			NF == 2 { c = cls[$2]
				if (($1 ~ /^c-s-/ && c != "zone") || ($1 ~ /^c-t-/ && c != "pool") ||
					($1 ~ /^p-/ && c == "pool")) v++ }
			END { print v + 0 }' "$WORK/constrained-nodes.txt" -
}

scenario_constrained() {
constrained_setup
local r
for ((r = 1; r <= ROUNDS; r++)); do
	ROUND=$r
	constrained_bridge
	constrained_kube
done
}

# Each scheduler as in singles: the pods exist, bindwatch lists them, the
# scheduler starts, t0 is when it says ready; its window from before its
# start to SETTLE_S after its last bind.
constrained_bridge() {
say "constrained: slurm-bridge, round $ROUND of $ROUNDS, $CONSTRAINED pods (a third constrained) present when it starts"
bridge_stop
new_ns bench-constrained enabled
constrained_pods bench-constrained "$CONSTRAINED" slurm-bridge | create_pods
bindwatch_start bench-constrained "$CONSTRAINED" --t0-file "$WORK/t0-bench-constrained" "${CONSTRAINED_GROUPS[@]}"
window_open
bridge_start_ready bench-constrained
bindwatch_wait bench-constrained
window_close "$(bridge_pid)"
sched_record constrained bridge bench-constrained -n round="$ROUND" -n startup_cpu_s="${cpu0:-}" \
	-n violations="$(constrained_violations bench-constrained)" "${CONSTRAINED_MEMBERS[@]}"
plot_binds "$WORK/binds-bench-constrained.txt" "$(jq -r '.t0_ms // 0' <<<"$res")" "$WORK/plot-constrained-bridge.dat"
end_window constrained bridge bench-constrained "$CONSTRAINED" "$(bridge_pid)"
}

constrained_kube() {
say "constrained: baseline B (stock kube-scheduler), round $ROUND of $ROUNDS, $CONSTRAINED pods (a third constrained) present when it starts"
new_ns bench-constrained-kube
constrained_pods bench-constrained-kube "$CONSTRAINED" "$KUBE_SCHED_NAME" | create_pods
bindwatch_start bench-constrained-kube "$CONSTRAINED" --t0-file "$WORK/t0-bench-constrained-kube" "${CONSTRAINED_GROUPS[@]}"
window_open
kube_sched_start
t0_publish bench-constrained-kube
bindwatch_wait bench-constrained-kube
window_close "$sched_pid"
sched_record constrained kube-scheduler bench-constrained-kube -n round="$ROUND" -n startup_cpu_s="${cpu0:-}" \
	-n violations="$(constrained_violations bench-constrained-kube)" "${CONSTRAINED_MEMBERS[@]}"
plot_binds "$WORK/binds-bench-constrained-kube.txt" "$(jq -r '.t0_ms // 0' <<<"$res")" "$WORK/plot-constrained-kube-scheduler.dat"
end_window constrained kube-scheduler bench-constrained-kube "$CONSTRAINED" "$sched_pid"
kube_sched_stop
}
