#!/usr/bin/env bash
# The node epilog as slurmd runs it (build/.../slurm-bridge-epilog), over a
# cgroup version 2 tree made in a temporary directory, with a stand-in
# scontrol that records the drain: what it reads from its environment, how
# it waits, kills and drains.  No stack needed (make check runs it).
# Usage: test/epilog/run.sh PATH-TO-slurm-bridge-epilog
set -u
bin=${1:?usage: $0 slurm-bridge-epilog}
tmp=$(mktemp -d /tmp/epilog-test-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "  ok   $1"; }
no() { fail=$((fail + 1)); echo "  FAIL $1${2:+: $2}"; }

uid=6c1d8e8a-7f35-4c56-9f0e-2b8c5d1a4e77
other=0d3c2b1a-0000-4000-8000-000000000001
pod=$tmp/cg/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid//-/_}.slice
mkdir -p "$pod/ctr"
echo "cpu memory pids" >"$tmp/cg/cgroup.controllers"
: >"$pod/cgroup.kill"
populated() { printf 'populated %s\nfrozen 0\n' "$1" >"$pod/cgroup.events"; }
# The stand-in scontrol: "show node" answers as Slurm does for a node the
# epilog drained (reason in $tmp/reason); an update is recorded in
# $tmp/drained (a drain) or $tmp/resumed.
cat >"$tmp/scontrol" <<EOF
#!/bin/sh
case "\$*" in
"-o show node "*) echo "NodeName=\$4 Arch=x86_64 CPUTot=32 State=IDLE+DRAIN Reason=\$(cat $tmp/reason 2>/dev/null) [root@2026-12-06T08:00:00]" ;;
*State=RESUME*) printf '%s\n' "\$@" >"$tmp/resumed" ;;
*) printf '%s\n' "\$@" >"$tmp/drained" ;;
esac
EOF
chmod +x "$tmp/scontrol"

# slurmd's environment for job 42 on node n1, and nothing else.
run() {
	env -i SLURM_JOB_ID=42 SLURMD_NODENAME=n1 SLURM_JOB_UID=1000 "$@"
}
# env VAR=... epi ARGS: the epilog with the test's tree and scontrol.
epi=("$bin" --cgroup-root "$tmp/cg" --scontrol "$tmp/scontrol" --state-dir "$tmp/state")

echo "== epilog: a job without the scheduler's pod list is not waited for"
populated 1
out=$(run "$bin" --cgroup-root "$tmp/cg" 2>&1); rc=$?
[ $rc = 0 ] && [ -z "$out" ] && ok "a native job returns 0 at once, silent" ||
	no "a native job" "rc $rc: $out"
out=$(run SLURM_JOB_COMMENT="slurm-bridge: stopped: pod a/b" "$bin" --cgroup-root "$tmp/cg" 2>&1); rc=$?
[ $rc = 0 ] && [ -z "$out" ] && ok "the comment is not read (a native job with the old mark)" ||
	no "the comment" "rc $rc: $out"

echo "== epilog: the job's pods, from SPANK_SLURM_BRIDGE_PODS, by their cgroups"
populated 0
out=$(run SPANK_SLURM_BRIDGE_PODS="$other,$uid" SLURM_JOB_COMMENT="slurm-bridge: stopped: x" "${epi[@]}" 2>&1); rc=$?
[ $rc = 0 ] && [ ! -e "$tmp/drained" ] && ok "a pod whose cgroup is empty: returns 0" ||
	no "an empty cgroup" "rc $rc: $out"
populated 1
(sleep 0.6; populated 0) &
start=$(date +%s%N)
out=$(run SPANK_SLURM_BRIDGE_PODS="$uid" SLURM_JOB_COMMENT="slurm-bridge: stopped: x" "${epi[@]}" --max-wait 30 2>&1); rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
wait
[ $rc = 0 ] && [ $ms -ge 500 ] && [ $ms -lt 10000 ] && ok "a running pod is waited for until its cgroup empties (${ms} ms), whatever the comment says" ||
	no "waits for the cgroup" "rc $rc, $ms ms: $out"
case $out in *"waiting for the containers of its pods on n1 to stop: $uid"*"are gone after"*) ok "the log names the pod and the wait" ;;
*) no "the log" "$out" ;; esac

echo "== epilog: past --max-wait it kills, then drains naming the pod"
populated 1
: >"$pod/cgroup.kill"
out=$(run SPANK_SLURM_BRIDGE_PODS="$uid" "${epi[@]}" --max-wait 1 --kill-wait 1 2>&1); rc=$?
[ $rc = 0 ] && ok "returns 0 (the drain keeps the node)" || no "rc" "$rc: $out"
[ "$(cat "$pod/cgroup.kill")" = 1 ] && ok "the pod's cgroup was killed (cgroup.kill)" || no "cgroup.kill" "$(cat "$pod/cgroup.kill")"
if grep -q '^NodeName=n1$' "$tmp/drained" 2>/dev/null && grep -q '^State=DRAIN$' "$tmp/drained" &&
	grep -q "^Reason=slurm-bridge-epilog: job 42: pods $uid still run after a kill$" "$tmp/drained"; then
	ok "node n1 drained with a reason that names the job and the pod"
else
	no "the drain" "$(cat "$tmp/drained" 2>&1)"
fi

echo "== epilog: --resume (slurmd's HealthCheckProgram) resumes the node once the pods are gone"
[ "$(cat "$tmp/state/n1" 2>/dev/null)" = "$uid" ] && ok "the drain noted the pod in the state directory" ||
	no "the note" "$(cat "$tmp/state/n1" 2>&1)"
echo "slurm-bridge-epilog: job 42: pods $uid still run after a kill" >"$tmp/reason"
out=$(env -i SLURMD_NODENAME=n1 "${epi[@]}" --resume 2>&1); rc=$?
[ $rc = 0 ] && [ ! -e "$tmp/resumed" ] && case $out in *"node n1 stays drained: pod $uid still runs there"*) true ;; *) false ;; esac &&
	ok "while the pod's cgroup holds a process, the node stays drained" || no "stays drained" "rc $rc: $out"
populated 0
echo "maintenance by an admin" >"$tmp/reason"
out=$(env -i SLURMD_NODENAME=n1 "${epi[@]}" --resume 2>&1); rc=$?
[ $rc = 0 ] && [ ! -e "$tmp/resumed" ] && [ ! -e "$tmp/state/n1" ] &&
	ok "a drain an admin has since re-reasoned is left alone (and the note goes)" || no "admin's reason" "rc $rc: $out"
echo "$uid" >"$tmp/state/n1"
echo "slurm-bridge-epilog: job 42: pods $uid still run after a kill" >"$tmp/reason"
out=$(env -i SLURMD_NODENAME=n1 "${epi[@]}" --resume 2>&1); rc=$?
[ $rc = 0 ] && grep -q '^State=RESUME$' "$tmp/resumed" 2>/dev/null && grep -q '^NodeName=n1$' "$tmp/resumed" && [ ! -e "$tmp/state/n1" ] &&
	case $out in *"node n1: resumed"*) true ;; *) false ;; esac &&
	ok "once the cgroup is empty, node n1 is resumed and the note goes" || no "resume" "rc $rc: $out"
rm -f "$tmp/resumed"
out=$(env -i SLURMD_NODENAME=n1 "${epi[@]}" --resume 2>&1); rc=$?
[ $rc = 0 ] && [ -z "$out" ] && [ ! -e "$tmp/resumed" ] && ok "a node the epilog never drained: nothing done, silent" || no "no note" "rc $rc: $out"
rm -f "$tmp/drained"

echo "== epilog: a kill that empties the cgroups frees the node only if they stay empty"
populated 1
: >"$pod/cgroup.kill"
# The kill empties it; a kubelet restarts the container 1 s later.
(while [ ! -s "$pod/cgroup.kill" ]; do sleep 0.1; done; populated 0; sleep 1; populated 1) &
out=$(run SPANK_SLURM_BRIDGE_PODS="$uid" "${epi[@]}" --max-wait 1 --kill-wait 3 2>&1); rc=$?
wait
[ $rc = 0 ] && grep -q "^Reason=slurm-bridge-epilog: job 42: pods $uid came back after a kill (their kubelet restarts them)$" "$tmp/drained" 2>/dev/null &&
	ok "a container back after the kill drains the node, saying so" || no "came back" "rc $rc: $out $(cat "$tmp/drained" 2>&1)"
rm -f "$tmp/drained"
populated 1
: >"$pod/cgroup.kill"
(while [ ! -s "$pod/cgroup.kill" ]; do sleep 0.1; done; populated 0) &
start=$(date +%s%N)
out=$(run SPANK_SLURM_BRIDGE_PODS="$uid" "${epi[@]}" --max-wait 1 --kill-wait 2 2>&1); rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
wait
[ $rc = 0 ] && [ ! -e "$tmp/drained" ] && [ $ms -ge 2900 ] && case $out in *"are gone after"*"(killed)"*) true ;; *) false ;; esac &&
	ok "a kill that stays empty for --kill-wait frees the node, undrained (${ms} ms)" || no "killed and empty" "rc $rc, $ms ms: $out"

echo "== epilog: --owners and bad options"
out=$(run SPANK_SLURM_BRIDGE_PODS="$uid" "${epi[@]}" --owners 0,500 --max-wait 1 --kill-wait 0 2>&1); rc=$?
[ $rc = 0 ] && [ ! -e "$tmp/drained" ] && case $out in *"owned by uid 1000, not one of --owners 0,500"*) true ;; *) false ;; esac &&
	ok "a job of another uid than --owners is not waited for, and says so" || no "--owners" "rc $rc: $out"
out=$(run SPANK_SLURM_BRIDGE_PODS="$uid" "$bin" --scontrol scontrol 2>&1); rc=$?
[ $rc = 2 ] && case $out in *"--scontrol: \"scontrol\" is not an absolute path"*) true ;; *) false ;; esac &&
	ok "a relative --scontrol is refused" || no "--scontrol" "rc $rc: $out"
out=$(run "$bin" --max-wait 0 2>&1); rc=$?
[ $rc = 2 ] && case $out in *"--max-wait: \"0\" is not a whole number from 1 to 86400"*) true ;; *) false ;; esac &&
	ok "--max-wait 0 is refused, naming the accepted form" || no "--max-wait" "rc $rc: $out"
rm -rf "$tmp/cg/kubepods.slice"
out=$(run SPANK_SLURM_BRIDGE_PODS="$uid" "${epi[@]}" 2>&1); rc=$?
[ $rc = 0 ] && case $out in *"no kubelet cgroups under"*) true ;; *) false ;; esac &&
	ok "a node without kubelet cgroups runs no container: returns 0 and says so" || no "no kubelet" "rc $rc: $out"

echo "epilog: $pass passed, $fail failed"
[ $fail = 0 ]
