#!/usr/bin/env bash
# make demo-check: runs `make demo` (scripts/demo/demo.sh) on the running
# stack and reads what it printed as a user would: every bound pod's
# SLURM_JOB and SLURM_NODE are real values that Slurm agrees with, no
# squeue table is empty, and the sentences agree with the tables beside
# them.  Then it removes the demo's namespace (the tiers after it want the
# nodes).
# Prints "ok"/"FAIL" lines and "demo: N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$top/scripts/stack/stack-env.sh"
export KUBECONFIG=$STACK_DIR/kubeconfig
passed=0 failed=0
pass() { passed=$((passed + 1)); echo "  ok   $1"; }
fail() { failed=$((failed + 1)); echo "  FAIL $1"; }
check() { local d=$1; shift; if "$@"; then pass "$d"; else fail "$d"; fi; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! NO_COLOR=1 "$top/scripts/demo/demo.sh" >"$out" 2>&1; then
	tail -n 30 "$out" | sed 's/^/    /'
	fail "make demo exits 0"
else
	pass "make demo exits 0"
fi

# section N: the demo's output of step N (from "[N/7]" to the next step).
section() { awk -v n="[$1/7]" 'index($0, n) { on = 1; next } /^\[[0-9]\/7\]/ { on = 0 } on' "$out"; }
# pod_rows SECTION: the rows of a pods.columns table (POD STATUS NODE
# SLURM_JOB SLURM_NODE GANG GPUS), header excluded.
# (The command's output is indented four spaces; the notes after it, two.)
pod_rows() { awk '/^ +POD +STATUS +NODE +SLURM_JOB/ { on = 1; next } on && !/^    [^ ]/ { on = 0 } on && NF >= 7' <<<"$1"; }

s4=$(section 4)
rows=$(pod_rows "$s4")
check "step 4 lists the demo's pods" test "$(wc -l <<<"$rows")" -ge 4
bad=$(awk '$3 != "<none>" && ($4 == "<none>" || $5 == "<none>") { print $1 }' <<<"$rows")
check "every bound pod shows its Slurm job and node, not <none> (${bad:-none missing})" test -z "$bad"
# Each bound pod's SLURM_JOB is the job Slurm ran it in: its admin_comment
# lists the pod.
wrong=""
while read -r pod _ node job snode _; do
	[ "$node" = "<none>" ] && continue
	ac=$(scontrol show job "$job" 2>/dev/null | sed -n 's/.*AdminComment=//p')
	[ -z "$ac" ] && ac=$(sacct -n -X -P -j "$job" -o AdminComment 2>/dev/null | head -n1)
	case $ac in *"\"demo/$pod\""*) ;; *) wrong+="$pod:$job " ;; esac
	[ "$node" = "$snode" ] || wrong+="$pod:$node!=$snode "
done <<<"$rows"
check "each SLURM_JOB is the job Slurm lists the pod in, on the node shown (${wrong:-all agree})" test -z "$wrong"

s5=$(section 5)
sq_rows=$(awk '/^ +JOBID +NAME/ { on = 1; next } on && NF == 0 { on = 0 } on && /demo\//' <<<"$s5")
check "step 5's squeue lists the demo's jobs" test -n "$sq_rows"
sim=$(awk '$2 == "demo/sim" { print $3 }' <<<"$s5" | tail -n1)
if grep -q "its job is COMPLETED" <<<"$s5"; then
	check "step 5 says sim's job is COMPLETED, and sacct shows it so ($sim)" test "$sim" = COMPLETED
else
	fail "step 5 says what sim's job ended as"
fi

s6=$(section 6)
check "step 6: the gang waits, its pods naming their Slurm job" \
	grep -qE 'waiting for Slurm job [0-9]+ \(Reason=' <<<"$s6"
check "step 6's squeue shows the gang's job PENDING" grep -qE 'demo/big-train +[^ ]+ +PENDING' <<<"$s6"

s7=$(section 7)
gj=$(sed -n 's/.*\$ squeue -O [^ ]* -j \([0-9]*\)$/\1/p' <<<"$s7" | head -n1)
check "step 7 asks squeue for the gang's job by its id ($gj)" test -n "$gj"
check "and squeue shows it RUNNING" grep -qE "^ +$gj +demo/big-train +[^ ]+ +RUNNING" <<<"$s7"
rows7=$(pod_rows "$s7")
bad7=$(awk -v j="$gj" '$4 != j { print $1 }' <<<"$rows7")
check "every gang member shows that job id (${bad7:-all do})" test -n "$rows7" -a -z "$bad7"
if grep -q "one Binding each, which carries the job id" <<<"$s7"; then
	ann=$(kubectl -n demo get pod big-train-0 -o jsonpath='{.metadata.annotations.scheduler\.slinky\.slurm\.net/slurm-jobid}' 2>/dev/null)
	lab=$(kubectl -n demo get pod big-train-0 -o jsonpath='{.metadata.labels.scheduler\.slinky\.slurm\.net/slurm-jobid}' 2>/dev/null)
	check "step 7's sentence holds: the id is an annotation ($ann), no label (${lab:-none})" \
		test "$ann" = "$gj" -a -z "$lab"
fi
# No table cell anywhere the demo shows may read <none> for a job id.
check "no <none> job id in any table" bash -c "! grep -E '^ +[a-z0-9-]+ +(Running|Succeeded) +n[0-9]+ +<none>' '$out'"

kubectl delete namespace demo --wait=true --timeout=120s >/dev/null 2>&1 || true
echo "demo: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
