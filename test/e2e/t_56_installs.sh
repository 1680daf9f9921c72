# shellcheck shell=bash
# Two installs on one Slurm (issue 30): the stack's bridge (install A,
# scheduler slurm-bridge, its name derived from the cluster) and a second
# bridge process started here (install B: scheduler slurm-bridge-b, config
# installName e2e-b, a namespace of its own), as a second cluster's bridge
# would run.  Through a restart of each, a kill -9 of B, a forged job-id
# label and a native Slurm job that looks like a bridge job, nothing of one
# install is adopted, cancelled or deleted by the other.

B_DIR=$(mktemp -d)
B_PORT=${E2E_B_PORT:-18093}
b_pid=
b_log=
b_start() {  # starts install B; waits until it recovered
	b_log=$B_DIR/bridge-$(date +%s%N).log
	"${STACK_EXEC[@]}" "$BRIDGE_BIN" --kubeconfig "$BRIDGE_KUBECONFIG" \
		--config "$B_DIR/config.yaml" --listen "127.0.0.1:$B_PORT" >"$b_log" 2>&1 &
	b_pid=$!
	wait_for 60 grep -q 'recovered:' "$b_log"
}
b_kill() { [ -n "$b_pid" ] && kill -9 "$b_pid" 2>/dev/null && wait "$b_pid" 2>/dev/null; b_pid=; }
b_stop() { [ -n "$b_pid" ] && kill "$b_pid" 2>/dev/null && wait "$b_pid" 2>/dev/null; b_pid=; }
a_restart() {  # a_restart [KILL]: stops install A (TERM, or -9) and starts it
	local pid; pid=$(stack_pid "$BRIDGE_PIDFILE")
	[ -n "$pid" ] && kill "-${1:-TERM}" "$pid" 2>/dev/null
	wait_for 30 eval "! kill -0 $pid 2>/dev/null"
	"$E2E_DIR/../../scripts/stack/bridge-up.sh" >/dev/null
}
a_log() { sed -n '/=== .*starting/h; /=== .*starting/!H; ${x;p}' "$LOG_DIR/slurm-bridge.log"; }
# Not a pipe: under pipefail (lib.sh), sed's SIGPIPE after grep -q's match
# would fail the check once the log runs on past it by more than a write.
a_logged() { grep -Eq "$1" <(a_log); }
# A pod for install B: its scheduler, the toleration (no webhook adds it).
b_pod() {  # b_pod NS NAME [CPU]
	pod_yaml "$1" "$2" "${3:-1}" 64Mi | sed 's/schedulerName: slurm-bridge$/schedulerName: slurm-bridge-b/'
}
squeue_comment() { squeue -h -j "$1" -o %k 2>/dev/null; }
job_alive() { [ -n "$(squeue -h -j "$1" -o %T 2>/dev/null)" ]; }

scenario "two installs: each names itself in its jobs"
nsa=$(new_ns enabled)
nsb=$(new_ns)
cat >"$B_DIR/config.yaml" <<YAML
schedulerName: slurm-bridge-b
partition: slurm-bridge
installName: e2e-b
managedNamespaces: [$nsb]
YAML
check "install B starts and recovers" b_start
pod_yaml "$nsa" a1 1 64Mi | k apply -f - >/dev/null
b_pod "$nsb" b1 | k apply -f - >/dev/null
# Pending for good: more CPUs than a node has (Slurm accepts it, and keeps
# it pending). B ends it with its namespace, at the end.
b_pod "$nsb" bwait 200 | k apply -f - >/dev/null
check "A binds its pod" wait_for 30 pod_has "$nsa" a1 "$JP_NODE"
check "B binds its pod" wait_for 30 pod_has "$nsb" b1 "$JP_NODE"
ja=$(pod_field "$nsa" a1 "$JP_JOBID")
jb=$(pod_field "$nsb" b1 "$JP_JOBID")
bwait_job() { squeue -h -n "$nsb/bwait" -o %i; }
bwait_has() { [ -n "$(bwait_job)" ]; }
check "B's unplaceable pod has a pending job" wait_for 30 bwait_has
jw=$(bwait_job)
inst=$(stack_install_name)
check_eq "A's job comment names install A (scheduler name and cluster id)" \
	"$(squeue_comment "$ja")" "slurm-bridge: pod $nsa/a1 (install $inst)"
check_eq "B's job comment names install B" \
	"$(squeue_comment "$jb")" "slurm-bridge: pod $nsb/b1 (install e2e-b)"
check_match "A's admin_comment names the install and the pod's UID" \
	"$(job_field "$ja" AdminComment)" \
	"\"uids\":\\[\"$(pod_field "$nsa" a1 '{.metadata.uid}')\"\\],\"install\":\"$inst\""
echo "  squeue:"
squeue -h -o '    %.8i %.8T %.40j %k' -j "$ja,$jb,$jw"

scenario "two installs: a restart of A leaves B's jobs alone"
a_restart
sleep 3
check "A adopted its own job again" wait_for 30 a_logged "adopted slurm job $ja\b"
check "B's running job is untouched" job_alive "$jb"
check "B's pending job is untouched (not an orphan to A)" job_alive "$jw"
check_eq "B's pod is still bound to its job" "$(pod_field "$nsb" b1 "$JP_JOBID")" "$jb"
check "A never mentions B's jobs" eval "! a_logged 'job ($jb|$jw)\b'"

scenario "two installs: a kill -9 of B, then a forged label for A"
b_kill
# A pod of A's, created while B is down, whose label names B's job: a hint
# A must check against the job's admin_comment before it believes it. (The
# webhook refuses the label in an enabled namespace: this one is enabled
# only after A's restart.)
nsf=$(new_ns)
pod_yaml "$nsf" forged 1 64Mi "  labels: {scheduler.slinky.slurm.net/slurm-jobid: \"$jb\"}" |
	k apply -f - >/dev/null
# And a pod of another scheduler, in any namespace, with the same label.
other=$(new_ns)
k apply -f - >/dev/null 2>&1 <<YAML || true
apiVersion: v1
kind: Pod
metadata: {name: forger, namespace: $other, labels: {scheduler.slinky.slurm.net/slurm-jobid: "$jw"}}
spec:
  schedulerName: no-such-scheduler
  containers: [{name: main, image: busybox, command: [sleep, "3600"]}]
YAML
a_restart 9
check "A logged the label as not its job's" \
	wait_for 30 a_logged "slurm job $jb, named by a member.s job-id label or annotation, was not made for it"
k label namespace "$nsf" slurm-bridge=enabled >/dev/null
check "A binds its forged-label pod to a job of its own" wait_for 30 pod_has "$nsf" forged "$JP_NODE"
jf=$(pod_field "$nsf" forged "$JP_JOBID")
check "not to B's job" test -n "$jf" -a "$jf" != "$jb"
sleep 3
check "B's running job survived B's kill and A's restart" job_alive "$jb"
check "B's pending job too" job_alive "$jw"
check_eq "the other scheduler's pod is left alone" \
	"$(pod_field "$other" forger '{.spec.nodeName}')$(k -n "$other" get pod forger -o name 2>/dev/null)" "pod/forger"

scenario "two installs: B restarts and takes back its jobs, and only them"
check "install B starts again" b_start
check "B adopted its running job" grep -q "adopted slurm job $jb" "$b_log"
check "and its pending one" grep -q "adopted slurm job $jw" "$b_log"
check "B never mentions A's jobs" eval "! grep -Eq 'job ($ja|$jf)\b' '$b_log'"
check "A's jobs run" job_alive "$ja"
check_eq "A's pods are still bound" "$(pod_field "$nsa" a1 "$JP_JOBID") $(pod_field "$nsf" forged "$JP_JOBID")" "$ja $jf"

scenario "two installs: a native Slurm job that looks like a bridge job"
nat=$(sbatch --parsable -o /dev/null -p slurm-bridge --comment "slurm-bridge: pod $nsa/ghost" --wrap 'sleep 600' 2>/dev/null)
check "sbatch takes it" test -n "$nat"
a_restart
b_stop
check "install B starts again" b_start
sleep 3
check "neither install cancels it" job_alive "$nat"
scancel "$nat" 2>/dev/null

scenario "two installs: each ends only its own"
k delete namespace "$nsb" --wait=false >/dev/null
check "B ends its jobs with its pods" wait_for 60 bash -c "! squeue -h -j $jb,$jw -o %i 2>/dev/null | grep -q ."
check "A's job runs on" job_alive "$ja"
b_stop
k delete namespace "$nsa" "$nsf" "$other" --wait=false >/dev/null
if grep -q "^fail.*two installs" "${E2E_RESULTS:-/dev/null}" 2>/dev/null; then
	echo "  install B's logs kept in $B_DIR"
else
	rm -rf "$B_DIR"
fi
