# shellcheck shell=bash
# Settings from the namespace and the workload root; refusals that name the
# field.
A=slurmjob.slinky.slurm.net

scenario "namespace defaults and the account allow-list"
ns=$(new_ns enabled)
k annotate namespace "$ns" "$A/account=research" \
	"scheduler.slinky.slurm.net/allowed-accounts=research" >/dev/null
pod_yaml "$ns" dflt | k apply -f - >/dev/null
check "a pod without an account is bound" wait_for 30 pod_has "$ns" dflt "$JP_NODE"
check_eq "under the namespace's default account" \
	"$(job_field "$(pod_field "$ns" dflt "$JP_JOBID")" Account)" research
pod_yaml "$ns" thief 1 256Mi "  annotations: {$A/account: bridge}" | k apply -f - >/dev/null
check "an account outside the allow-list is refused, naming it" \
	wait_for 30 cond_has "$ns" thief 'account: "bridge" is not allowed in namespace'
sleep 1
check_eq "and never submitted" "$(pod_field "$ns" thief "$JP_JOBID")" ""

scenario "workload root and time limits"
k apply -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: deadline
  namespace: $ns
  annotations: {$A/qos: normal}
spec:
  activeDeadlineSeconds: 150
  template:
    spec:
      schedulerName: slurm-bridge
      restartPolicy: Never
      tolerations:
      - {key: slinky.slurm.net/managed-node, operator: Exists, effect: NoExecute}
      containers:
      - {name: main, image: busybox, resources: {requests: {cpu: "1", memory: 64Mi}}}
YAML
dpod() { k -n "$ns" get pods -l batch.kubernetes.io/job-name=deadline -o jsonpath='{.items[0].metadata.name}'; }
dlabelled() { local p; p=$(dpod); [ -n "$p" ] && pod_has "$ns" "$p" "$JP_JOBID"; }
check "the Job's pod is submitted" wait_for 30 dlabelled
djob=$(pod_field "$ns" "$(dpod)" "$JP_JOBID")
check_eq "activeDeadlineSeconds 150 becomes a 3-minute time limit" "$(job_field "$djob" TimeLimit)" 00:03:00

scenario "pods without the managed-node toleration"
pod_yaml "$ns" intolerant | sed '/tolerations:/,/effect: NoExecute/d' | k apply -f - >/dev/null
check "are refused with the toleration to add" \
	wait_for 30 cond_has "$ns" intolerant 'does not tolerate the taint slinky.slurm.net/managed-node=slurm-bridge:NoExecute'
k delete namespace "$ns" --wait=false >/dev/null
