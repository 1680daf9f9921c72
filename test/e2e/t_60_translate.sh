# shellcheck shell=bash
# Settings from the namespace and the workload root; refusals that name the
# field.
A=slurmjob.slinky.slurm.net

scenario "namespace defaults and the account allow-list"
ns=$(new_ns enabled)
# Admitted before the namespace restricts accounts, and held by a gate: the
# scheduler's own check is what refuses it once the gate is gone.
pod_yaml "$ns" thief 1 256Mi "  annotations: {$A/account: bridge}" |
	sed 's/^spec:$/spec:\n  schedulingGates: [{name: e2e.slurm-bridge.io\/hold}]/' |
	k apply -f - >/dev/null
k annotate namespace "$ns" "$A/account=research" \
	"scheduler.slinky.slurm.net/allowed-accounts=research" \
	"scheduler.slinky.slurm.net/allowed-priority=1-1000" >/dev/null
pod_yaml "$ns" dflt | k apply -f - >/dev/null
check "a pod without an account is bound" wait_for 30 pod_has "$ns" dflt "$JP_NODE"
check_eq "under the namespace's default account" \
	"$(job_field "$(pod_field "$ns" dflt "$JP_JOBID")" Account)" research
out=$(pod_yaml "$ns" thief2 1 256Mi "  annotations: {$A/account: bridge}" | k apply -f - 2>&1)
check_match "the webhook refuses an account outside the allow-list" "$out" \
	'denied the request: .*account: "bridge" is not allowed in namespace'
k -n "$ns" patch pod thief --type json -p '[{"op": "remove", "path": "/spec/schedulingGates"}]' >/dev/null
check "so does the scheduler, for a pod admitted before the list, naming it" \
	wait_for 30 cond_has "$ns" thief 'account: "bridge" is not allowed in namespace'
sleep 1
check_eq "and never submits it" "$(pod_field "$ns" thief "$JP_JOBID")" ""

scenario "workload root and time limits"
job_yaml "$ns" deadline "$E2E_POD_BRIDGE" "activeDeadlineSeconds: 150" "" \
	"annotations: {$A/qos: normal}" | k apply -f - >/dev/null
dpod() { k -n "$ns" get pods -l batch.kubernetes.io/job-name=deadline -o jsonpath='{.items[0].metadata.name}'; }
dlabelled() { local p; p=$(dpod); [ -n "$p" ] && pod_has "$ns" "$p" "$JP_JOBID"; }
check "the Job's pod is submitted" wait_for 30 dlabelled
djob=$(pod_field "$ns" "$(dpod)" "$JP_JOBID")
check_eq "activeDeadlineSeconds 150 becomes a 3-minute time limit" "$(job_field "$djob" TimeLimit)" 00:03:00

scenario "jobs owned by the user named in user-id"
# The stack's user alice (uid 4242, group research, account research).
# From Slurm 23.11 the job belongs to whoever the credential names, not to
# user_id in the request: this checks the owner Slurm records.
pod_yaml "$ns" as-alice 1 64Mi "  annotations: {$A/user-id: alice, $A/account: research}" |
	k apply -f - >/dev/null
pod_yaml "$ns" as-4242 1 64Mi "  annotations: {$A/user-id: \"4242\", $A/group-id: research, $A/account: research, $A/priority: \"777\"}" |
	k apply -f - >/dev/null
check "a pod with user-id: alice is bound" wait_for 30 pod_has "$ns" as-alice "$JP_NODE"
check "a pod with user-id: \"4242\" is bound" wait_for 30 pod_has "$ns" as-4242 "$JP_NODE"
ajob=$(pod_field "$ns" as-alice "$JP_JOBID")
check_match "its Slurm job belongs to alice, group research" \
	"$(job_field "$ajob" UserId) $(job_field "$ajob" GroupId)" '^alice\(4242\) research\(4242\)$'
check_match "so does the one given by number" \
	"$(job_field "$(pod_field "$ns" as-4242 "$JP_JOBID")" UserId)" '^alice\(4242\)$'
# What only an administrator may set (the user's own request may not).
check_eq "its priority is the annotation's" \
	"$(job_field "$(pod_field "$ns" as-4242 "$JP_JOBID")" Priority)" 777
check_match "and its admin_comment lists the pod" \
	"$(job_field "$ajob" AdminComment)" "\"$ns/as-alice\""
acct_alice() { sacct -X -n -P -u alice -o JobID,JobName | grep -q "^$ajob|$ns/as-alice\$"; }
check "sacct -u alice shows the pod's job" wait_for 30 acct_alice
out=$(pod_yaml "$ns" as-nobody 1 64Mi "  annotations: {$A/user-id: no-such-user}" | k apply -f - 2>&1)
check_match "a name no one has is admitted (the webhook checks the form)" "$out" created
check "and the scheduler says the user does not exist" \
	wait_for 30 cond_has "$ns" as-nobody 'user-id: no user "no-such-user"'
out=$(pod_yaml "$ns" as-bad 1 64Mi "  annotations: {$A/user-id: \"Alice Smith\"}" | k apply -f - 2>&1)
check_match "a malformed name is refused with the accepted form" "$out" \
	'user-id: "Alice Smith" is not a user id .* or a user name'

k delete namespace "$ns" --wait=false >/dev/null

scenario "pods without the managed-node toleration"
# Created before the namespace is enabled, so the webhook cannot add it.
ns=$(new_ns)
pod_yaml "$ns" intolerant | sed '/tolerations:/,/effect: NoExecute/d' | k apply -f - >/dev/null
k label namespace "$ns" slurm-bridge=enabled >/dev/null
check "are refused with the toleration to add" \
	wait_for 30 cond_has "$ns" intolerant 'does not tolerate the taint slinky.slurm.net/managed-node=slurm-bridge:NoSchedule'
k delete namespace "$ns" --wait=false >/dev/null

scenario "annotations reach the Slurm job"
ns=$(new_ns enabled)
k annotate namespace "$ns" scheduler.slinky.slurm.net/allowed-priority=1-5000 >/dev/null
pod_yaml "$ns" full 1 256Mi "  annotations:
    $A/job-name: custom-name
    $A/account: research
    $A/priority: \"4242\"
    $A/timelimit: \"90\"
    $A/cpu-per-task: \"3\"
    $A/mem-per-node: 2Gi
    $A/max-nodes: \"1\"
    $A/switches: 1@5
    $A/gres: gpu:2" | k apply -f - >/dev/null
check "the pod is bound" wait_for 30 pod_has "$ns" full "$JP_NODE"
fj=$(pod_field "$ns" full "$JP_JOBID")
check_eq "job-name" "$(job_field "$fj" JobName)" custom-name
check_eq "account" "$(job_field "$fj" Account)" research
check_eq "priority" "$(job_field "$fj" Priority)" 4242
check_eq "timelimit (minutes)" "$(job_field "$fj" TimeLimit)" 01:30:00
check_eq "cpu-per-task" "$(job_field "$fj" NumCPUs)" 3
check_eq "mem-per-node" "$(job_field "$fj" MinMemoryNode)" 2G
check_eq "switches" "$(job_field "$fj" Switches)" 1@00:05:00
check_match "gres" "$(scontrol show job "$fj" | tr ' ' '\n' | grep -E '^(TresPerTask|TRES)=' | tr '\n' ' ')" 'gres/gpu[=:]2|gres:gpu:2'
check_match "the pod's GRES annotation" \
	"$(pod_field "$ns" full '{.metadata.annotations.scheduler\.slinky\.slurm\.net/slurm-gres}')" '^gpu:2\(IDX:[0-9,-]+\)$'

scenario "an invalid annotation leaves the pod pending with the field named"
# The webhook refuses this at create (t_85); a pod made before its namespace
# was enabled never met the webhook, and the scheduler says why it waits.
k delete namespace "$ns" --wait=false >/dev/null
ns=$(new_ns)
pod_yaml "$ns" bad 1 256Mi "  annotations: {$A/timelimit: soon}" | k apply -f - >/dev/null
k label namespace "$ns" slurm-bridge=enabled >/dev/null
check_cond "the condition names the key and the accepted form" 30 "$ns" bad \
	"annotation $A/timelimit: \"soon\" is not a whole number of minutes"
bad_event() {
	k -n "$ns" get events --field-selector involvedObject.name=bad -o jsonpath='{.items[*].reason}' | grep -qw FailedScheduling
}
check "a FailedScheduling Event says it too" wait_for 10 bad_event
check_eq "nothing is submitted" "$(pod_field "$ns" bad "$JP_JOBID")" ""
k -n "$ns" annotate pod bad "$A/timelimit=10" --overwrite >/dev/null
check "fixing the value lets it through" wait_for 30 pod_has "$ns" bad "$JP_NODE"
k delete namespace "$ns" --wait=false >/dev/null
