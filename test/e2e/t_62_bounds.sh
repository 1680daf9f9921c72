# shellcheck shell=bash
# Per-namespace bounds (common/bounds.c): what a namespace allows of
# accounts, partitions, QOS, reservations, owners and priority. Each bound
# is tried twice: through the webhook, which refuses the pod, and with the
# webhook bypassed (the pod is created before its namespace is enabled, so
# the webhook never sees it), where the scheduler leaves it Pending with the
# same message and submits nothing.
A=slurmjob.slinky.slurm.net
S=scheduler.slinky.slurm.net

bounds_ns() {  # bounds_ns NS: the bounds every case below runs against
	k annotate namespace "$1" \
		"$S/allowed-accounts=research" \
		"$S/allowed-partitions=slurm-bridge" \
		"$S/allowed-qos=normal" \
		"$S/allowed-reservations=e2e-none" \
		"$S/allowed-users=alice" \
		"$S/allowed-groups=research" \
		"$S/allowed-priority=10-500" >/dev/null
}

# name|annotations|what the refusal says (a regex)
bounds_cases() {
	cat <<'EOF'
acct|{A/account: bridge}|annotation slurmjob.slinky.slurm.net/account: "bridge" is not allowed in namespace [^;]*; allowed: "research"
part|{A/account: research, A/partition: debug}|annotation slurmjob.slinky.slurm.net/partition: "debug" is not allowed in namespace [^;]*; allowed: "slurm-bridge"
qos|{A/account: research, A/qos: urgent}|annotation slurmjob.slinky.slurm.net/qos: "urgent" is not allowed in namespace [^;]*; allowed: "normal"
resv|{A/account: research, A/reservation: maint}|annotation slurmjob.slinky.slurm.net/reservation: "maint" is not allowed in namespace [^;]*; allowed: "e2e-none"
root|{A/account: research, A/user-id: "0"}|annotation slurmjob.slinky.slurm.net/user-id: "0" is not allowed: jobs never run as root or as the Slurm user
rootname|{A/account: research, A/user-id: root}|annotation slurmjob.slinky.slurm.net/user-id: "root" is not allowed
user|{A/account: research, A/user-id: "4243"}|annotation slurmjob.slinky.slurm.net/user-id: "4243" is not allowed in namespace [^;]*; allowed: "alice"
group|{A/account: research, A/user-id: alice, A/group-id: "0"}|annotation slurmjob.slinky.slurm.net/group-id: "0" is not allowed: jobs never run in the root group
prio|{A/account: research, A/priority: "4000000"}|annotation slurmjob.slinky.slurm.net/priority: "4000000" is not allowed in namespace [^;]*; allowed: 10 to 500
EOF
}

bounds_pod() {  # bounds_pod NS NAME ANNOTATIONS
	pod_yaml "$1" "$2" 1 64Mi "  annotations: ${3//A\//$A/}"
}

scenario "bounds: the webhook refuses what a namespace does not allow"
ns=$(new_ns enabled)
bounds_ns "$ns"
while IFS='|' read -r name ann msg; do
	out=$(bounds_pod "$ns" "$name" "$ann" | k apply -f - 2>&1)
	check_match "$name: refused, naming the key, the value and what is allowed" "$out" \
		"denied the request: $msg"
done < <(bounds_cases)
out=$(bounds_pod "$ns" ok "{A/account: research, A/qos: normal, A/user-id: alice, A/group-id: research, A/priority: \"300\"}" |
	k apply -f - 2>&1)
check_match "a pod within every bound is admitted" "$out" created
check "and bound" wait_for 30 pod_has "$ns" ok "$JP_NODE"
okjob=$(pod_field "$ns" ok "$JP_JOBID")
check_match "as alice, with its priority and QOS" \
	"$(job_field "$okjob" UserId) $(job_field "$okjob" Priority) $(job_field "$okjob" QOS)" \
	'^alice\(4242\) 300 normal$'
k delete namespace "$ns" --wait=false >/dev/null

scenario "bounds: the scheduler refuses them too, with the webhook bypassed"
# The namespace is bounded but not enabled: the webhook sees none of these
# pods. Enabled afterwards, the scheduler takes them up.
ns=$(new_ns)
bounds_ns "$ns"
while IFS='|' read -r name ann msg; do
	bounds_pod "$ns" "$name" "$ann" | k apply -f - >/dev/null
done < <(bounds_cases)
bounds_pod "$ns" ok "{A/account: research, A/user-id: alice, A/priority: \"20\"}" | k apply -f - >/dev/null
k label namespace "$ns" slurm-bridge=enabled >/dev/null
check "a pod within every bound is bound" wait_for 30 pod_has "$ns" ok "$JP_NODE"
while IFS='|' read -r name ann msg; do
	check "$name: stays Pending with the webhook's message" \
		wait_for 30 cond_has "$ns" "$name" "$msg"
done < <(bounds_cases)
n=0
while IFS='|' read -r name _; do
	[ -n "$(pod_field "$ns" "$name" "$JP_NODE")$(pod_field "$ns" "$name" "$JP_JOBID")" ] && n=$((n + 1))
done < <(bounds_cases)
check_eq "none of them was bound or submitted" "$n" 0
check_eq "and Slurm has no job for them" \
	"$(squeue -h -o %j | grep -c "^$ns/" || true)" 1
k delete namespace "$ns" --wait=false >/dev/null

scenario "bounds: a waiting job moved outside them with scontrol update goes, and the pod is submitted again"
# As alice (user-id), the job's owner may scontrol update it while it
# waits; a reservation of every node holds it pending meanwhile.  Alice
# may use account bridge in Slurm too; the namespace allows only research.
sacctmgr -i add user alice account=bridge >/dev/null 2>&1
trap 'sacctmgr -i delete user alice account=bridge >/dev/null 2>&1' EXIT
ns=$(new_ns enabled)
bounds_ns "$ns"
resv=e2e-hold-$$
scontrol create reservation reservationname="$resv" users=alice nodes=ALL \
	starttime=now duration=10 flags=ignore_jobs >/dev/null
bounds_pod "$ns" moved "{A/account: research, A/user-id: alice}" | k apply -f - >/dev/null
pending() { j=$(pod_field "$ns" moved "$JP_JOBID"); [ -n "$j" ] && job_is "$j" PENDING; }
check "its job waits in Slurm" wait_for 30 pending
old=$(pod_field "$ns" moved "$JP_JOBID")
check "scontrol update moves it to account bridge" scontrol update jobid="$old" account=bridge
oob_event() { k -n "$ns" get events --field-selector involvedObject.name=moved,reason=SlurmJobOutOfBounds \
	-o jsonpath='{range .items[*]}{.message}{"\n"}{end}'; }
oob_has() { oob_event | grep -q "$1"; }
check "the next poll cancels it, saying why (an Event SlurmJobOutOfBounds)" wait_for 30 oob_has \
	"was changed outside the namespace's bounds: its account in Slurm is now \"bridge\", which namespace [^ ]* does not allow .allowed: \"research\""
echo "    $(oob_event | head -n1)"
gone() { [[ $(job_field "$old" JobState) =~ CANCELLED ]] || ! scontrol show job "$old" >/dev/null 2>&1; }
check "job $old is cancelled" wait_for 30 gone
scontrol delete reservation="$resv" >/dev/null
check "the pod is bound by a new job, in its bounds" wait_for 60 pod_has "$ns" moved "$JP_NODE"
new=$(pod_field "$ns" moved "$JP_JOBID")
check "a new job ($new, not $old)" test -n "$new" -a "$new" != "$old"
check_eq "with the account the pod asked for" "$(job_field "$new" Account)" research
k delete namespace "$ns" --wait=false >/dev/null

scenario "bounds: out of the box, no root and no priority"
ns=$(new_ns enabled)
out=$(pod_yaml "$ns" r0 1 64Mi "  annotations: {$A/user-id: \"0\"}" | k apply -f - 2>&1)
check_match "user-id: 0 is refused without any namespace annotation" "$out" \
	'user-id: "0" is not allowed: jobs never run as root or as the Slurm user \(slurm\), nor as a user id below 1000'
out=$(pod_yaml "$ns" low 1 64Mi "  annotations: {$A/user-id: \"999\"}" | k apply -f - 2>&1)
check_match "so is a uid below 1000" "$out" 'user-id: "999" is not allowed'
out=$(pod_yaml "$ns" slurm 1 64Mi "  annotations: {$A/user-id: slurm}" | k apply -f - 2>&1)
check_match "and the Slurm user by name" "$out" 'user-id: "slurm" is not allowed'
out=$(pod_yaml "$ns" daemon 1 64Mi "  annotations: {$A/user-id: daemon}" | k apply -f - 2>&1)
check_match "a system user by name passes the webhook (it checks names it can)" "$out" created
check "but the scheduler resolves it and refuses uid 1" \
	wait_for 30 cond_has "$ns" daemon 'user-id: "daemon" is user 1 on the scheduler'"'"'s host, which is not allowed'
out=$(pod_yaml "$ns" prio 1 64Mi "  annotations: {$A/priority: \"4000000\"}" | k apply -f - 2>&1)
check_match "priority is refused unless a range is allowed" "$out" \
	'priority: "4000000" is not allowed in namespace [^,]*, which allows no priority'
k delete namespace "$ns" --wait=false >/dev/null
