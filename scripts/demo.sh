#!/usr/bin/env bash
# The demo: a few sample pods placed through Slurm, shown from both sides.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/stack-env.sh"
k() { kubectl --kubeconfig="$KUBECONFIG" "$@"; }

ns=demo
k create namespace $ns --dry-run=client -o yaml | k apply -f - >/dev/null
k label namespace $ns slurm-bridge=enabled --overwrite >/dev/null
k -n $ns delete pods --all --wait=true >/dev/null 2>&1 || true

echo "== creating sample pods in namespace $ns"
k apply -f "$here/../manifests/samples/demo-pods.yaml"
echo "== waiting for them to be placed by Slurm"
for p in $(k -n $ns get pods -o name); do
	k -n $ns wait --for=condition=Ready "$p" --timeout=60s >/dev/null || true
done

echo
echo "== kubectl get pods -o wide"
k -n $ns get pods -o wide \
	-L scheduler.slinky.slurm.net/slurm-jobid
echo
echo "== squeue"
squeue -o '%.8i %.30j %.10P %.9T %.6C %.8m %.12b %R'
echo
echo "== sacct"
sacct -X -o JobID,JobName%30,Partition,State,AllocCPUS,NodeList,AdminComment%40 \
	-S now-1hour | tail -n 15
echo
echo "The pods keep running; delete them with: kubectl --kubeconfig=$KUBECONFIG -n $ns delete pods --all"
