# shellcheck shell=bash
# Operating the scheduler: its /metrics count what it does, and with
# --leader-elect two replicas share one cluster: only the leader acts, and
# when it dies the follower takes over, binds what arrived in between and
# submits nothing twice.

scenario "scheduler /metrics count binds, submits and RPCs"
ns=$(new_ns enabled)
bound0=$(stack_metric slurm_bridge_pods_bound_total)
sub0=$(stack_metric slurm_bridge_jobs_submitted_total)
lat0=$(stack_metric slurm_bridge_scheduling_latency_seconds_count)
alloc0=$(stack_metric 'slurm_bridge_slurm_rpc_duration_seconds_count{rpc="allocate_resources"}')
for p in m1 m2; do pod_yaml "$ns" $p | k apply -f - >/dev/null; done
check "two pods are bound" wait_for 30 pod_has "$ns" m2 "$JP_NODE"
check "(both)" pod_has "$ns" m1 "$JP_NODE"
check_eq "pods_bound_total grew by 2" "$(($(stack_metric slurm_bridge_pods_bound_total) - bound0))" 2
check_eq "jobs_submitted_total grew by 2" "$(($(stack_metric slurm_bridge_jobs_submitted_total) - sub0))" 2
check_eq "two latencies observed" "$(($(stack_metric slurm_bridge_scheduling_latency_seconds_count) - lat0))" 2
check_eq "two allocate_resources calls timed" \
	"$(($(stack_metric 'slurm_bridge_slurm_rpc_duration_seconds_count{rpc="allocate_resources"}') - alloc0))" 2
out=$(curl -s http://127.0.0.1:8080/metrics | "$E2E_DIR/../tools/check-metrics.py" \
	slurm_bridge_pods_bound slurm_bridge_scheduling_latency_seconds \
	slurm_bridge_slurm_rpc_duration_seconds slurm_bridge_slurm_rpc_errors \
	slurm_bridge_jobs_submitted slurm_bridge_jobs_cancelled slurm_bridge_jobs_ended \
	slurm_bridge_pending_pods slurm_bridge_pending_gangs slurm_bridge_watch_restarts \
	slurm_bridge_watch_relists slurm_bridge_leader slurm_bridge_memory_bytes \
	slurm_bridge_memory_objects slurm_bridge_slurm_polls_hastened)
check_match "/metrics is valid Prometheus text with every family" "$out" '^metrics: [0-9]+ families'
check_eq "/readyz says ready" "$(curl -s http://127.0.0.1:8080/readyz)" ok
# The memory map: the two pods are compact records of a few hundred bytes.
mem=$(curl -s http://127.0.0.1:8080/debug/memory)
check_match "/debug/memory gives the RSS" "$(jq -r '.rss_bytes' <<<"$mem")" '^[1-9][0-9]+$'
check "/debug/memory counts both pods' records" \
	test "$(jq -r '.stores.pod_records.count' <<<"$mem")" -ge 2
check "a pod record is under 1 KB" test "$(jq -r '.stores.pod_records.bytes_each' <<<"$mem")" -lt 1024
check_match "and names every store" "$(jq -r '.stores | keys | join(" ")' <<<"$mem")" \
	'groups .*interned .*job_index .*pod_entries .*pod_records .*pods'
canc0=$(stack_metric slurm_bridge_jobs_cancelled_total)
k -n "$ns" delete pod m1 --wait=true >/dev/null
cancelled() { [ "$(($(stack_metric slurm_bridge_jobs_cancelled_total) - canc0))" -ge 1 ]; }
check "deleting a pod counts a cancelled job" wait_for 20 cancelled
k delete namespace "$ns" --wait=false >/dev/null

scenario "the scheduler keeps no supplementary group of the root that started it"
pid=$(stack_pid "$BRIDGE_PIDFILE")
check "the scheduler runs" test -n "$pid"
check_eq "its Groups (/proc/$pid/status) are empty" \
	"$(awk '$1 == "Groups:" { $1 = ""; print }' "/proc/$pid/status" | tr -d ' \t')" ""

scenario "leader election: two replicas, the leader is killed, the follower takes over"
# The stack's single bridge steps aside for two replicas with --leader-elect.
ha_dir=$(mktemp -d)
stack_bridge=$(stack_pid "$BRIDGE_PIDFILE")
[ -n "$stack_bridge" ] && kill "$stack_bridge" && wait_for 15 bash -c "! kill -0 $stack_bridge 2>/dev/null"
k -n kube-system delete lease slurm-bridge --ignore-not-found >/dev/null
ha_start() {  # ha_start NAME PORT: a replica in the background
	POD_NAMESPACE=kube-system "${STACK_EXEC[@]}" "$BRIDGE_BIN" --kubeconfig "$BRIDGE_KUBECONFIG" \
		--config "$BRIDGE_CONFIG" --listen "127.0.0.1:$2" --leader-elect \
		>"$ha_dir/$1.log" 2>&1 &
	echo $!
}
leader_on() { [ "$(stack_metric slurm_bridge_leader "$1")" = 1 ]; }
holder() { k -n kube-system get lease slurm-bridge -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
# The identity a replica was elected as (hostname_NONCE, unique per process).
elected_as() { sed -n 's/.*: elected as \([^ ]*\)$/\1/p' "$ha_dir/$1.log" | tail -n1; }
a=$(ha_start a 8097)
check "replica a is elected" wait_for 15 leader_on 8097
b=$(ha_start b 8098)
sleep 3
ida=$(elected_as a)
check_match "replica a's identity is hostname_NONCE" "$ida" "^$(hostname)_[0-9a-f]{8}\$"
check_eq "the lease names replica a" "$(holder)" "$ida"
check_eq "replica b follows (leader 0)" "$(stack_metric slurm_bridge_leader 8098)" 0
check_eq "and is ready as a standby" "$(curl -s http://127.0.0.1:8098/readyz)" ok
check_match "b says who holds the lease" "$(cat "$ha_dir/b.log")" "held by $ida; waiting"
ns=$(new_ns enabled)
pod_yaml "$ns" before | k apply -f - >/dev/null
check "a binds a pod" wait_for 30 pod_has "$ns" before "$JP_NODE"
kill -9 "$a"
killed_at=$(date +%s)
# Created while nobody leads.
pod_yaml "$ns" between | k apply -f - >/dev/null
check "b takes over" wait_for 30 leader_on 8098
took=$(( $(date +%s) - killed_at ))
check "within the lease duration and a retry (15 s + 2 s; took ${took}s)" test "$took" -le 17
check_eq "the lease names replica b" "$(holder)" "$(elected_as b)"
check "the pod created in between is bound" wait_for 30 pod_has "$ns" between "$JP_NODE"
check_eq "the first pod keeps its job" "$(squeue -h -n "$ns/before" -o %i | wc -l)" 1
check_eq "nothing was submitted twice" "$(squeue -h -o %j | grep -c "^$ns/")" 2
check_eq "b adopted a's job (no second submit)" "$(stack_metric slurm_bridge_jobs_submitted_total 8098)" 1
kill "$b"
wait_for 15 bash -c "! kill -0 $b 2>/dev/null"
check_eq "b released the lease on SIGTERM" "$(holder)" ""
k delete namespace "$ns" --wait=false >/dev/null
rm -rf "$ha_dir"
"$E2E_DIR/../../scripts/stack/bridge-up.sh" >/dev/null
