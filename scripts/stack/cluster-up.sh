#!/usr/bin/env bash
# make cluster-up: starts the local stack that tests, demo and bench share.
#
#   Slurm:      munged, MariaDB, slurmdbd, slurmctld, slurmd n1..nN
#   Kubernetes: etcd, kube-apiserver, kube-controller-manager, kwok, Nodes n1..nN
#
# Idempotent: daemons whose PID file points at a live process are kept; only
# what is down is (re)started. Changing NODES reconfigures the running stack
# (Slurm configs rewritten, slurmctld/slurmds restarted, kwok Nodes created or
# deleted). Without NODES the size of the existing stack is kept (default 4).
#
# Environment: STACK_DIR (default /var/lib/slurm-bridge-stack), NODES (1..1000;
# past 64 the per-node timers are slower, see stack_large),
# KUBE_APISERVER, KUBE_CONTROLLER_MANAGER, ETCD, KWOK (binary overrides).
# Logs: $STACK_DIR/log/<daemon>.log, PID files: $STACK_DIR/run/.
set -euo pipefail
t0=$EPOCHREALTIME
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$here/stack-env.sh"
stack_validate_nodes

if [ "$(id -u)" -ne 0 ]; then
	echo "cluster-up: must run as root (daemons run as root, config goes to /etc/slurm)" >&2
	exit 1
fi

# One cluster-up/down at a time (e.g. make integration and make e2e run in
# parallel): re-run this script under flock. -o: the daemons we start must not
# inherit the lock's file descriptor.
if [ -z "${STACK_LOCKED:-}" ]; then
	mkdir -p "$STACK_DIR"
	STACK_LOCKED=1 STACK_T0=$t0 exec flock -o "$STACK_DIR/.lock" "$0" "$@"
fi
t0=${STACK_T0:-$t0}

"$here/../dev/deps.sh"

mkdir -p "$STACK_DIR" "$RUN_DIR" "$LOG_DIR"
touch "$STACK_MARKER"
if [ -s "$STACK_DIR/nodes" ] && [ "$(cat "$STACK_DIR/nodes")" != "$NODES" ]; then
	echo "cluster-up: resizing the stack from $(cat "$STACK_DIR/nodes") to $NODES nodes"
fi
echo "$NODES" >"$STACK_DIR/nodes"
export NODES STACK_DIR

# Another Slurm release than the one running: its state (StateSaveLocation,
# the accounting database) is not for this one, and the daemons built for
# the old one must go too.  Stop the stack, start Slurm from nothing.
slurm_prev=$(cat "$STACK_DIR/slurm-release" 2>/dev/null || true)
if [ -z "$slurm_prev" ] && [ -d "$SLURM_STATE_DIR" ]; then slurm_prev=22.05; fi
slurm_release_suite "$SLURM" >/dev/null ||
	{ echo "cluster-up: SLURM=$SLURM is not a release the stack knows ($SLURM_RELEASES)" >&2; exit 1; }
if [ -n "$slurm_prev" ] && [ "$slurm_prev" != "$SLURM" ]; then
	echo "cluster-up: switching Slurm from $slurm_prev to $SLURM: the stack stops, and Slurm's state is removed"
	SLURM=$slurm_prev "$here/cluster-down.sh"
	rm -rf "$SLURM_STATE_DIR" "$MYSQL_DIR" "$SLURM_BIN_DIR"
fi
echo "$SLURM" >"$STACK_DIR/slurm-release"
export SLURM

# Another Kubernetes release: its etcd holds the old one's objects (and
# etcd 3.4's data is not 3.6's): the Kubernetes half starts from nothing.
kube_prev=$(cat "$STACK_DIR/kube-version" 2>/dev/null || true)
if [ -z "$kube_prev" ] && [ -d "$STACK_DIR/etcd" ]; then kube_prev=v1.34.4; fi
if [ -n "$kube_prev" ] && [ "$kube_prev" != "$K8S_VERSION" ]; then
	echo "cluster-up: switching Kubernetes from $kube_prev to $K8S_VERSION: the stack stops, and etcd's data is removed"
	KUBE_VERSION=$kube_prev "$here/cluster-down.sh"
	rm -rf "$STACK_DIR/etcd"
fi
echo "$K8S_VERSION" >"$STACK_DIR/kube-version"
export KUBE_VERSION=$K8S_VERSION

# The two halves do not depend on each other: bring them up concurrently
# (MariaDB initialisation and apiserver start-up overlap).
"$here/slurm/up.sh" &
slurm_pid=$!
"$here/k8s/up.sh" &
k8s_pid=$!
rc=0
wait "$slurm_pid" || { echo "cluster-up: the Slurm half failed" >&2; rc=1; }
wait "$k8s_pid" || { echo "cluster-up: the Kubernetes half failed" >&2; rc=1; }
if [ "$rc" -ne 0 ]; then
	echo "cluster-up: FAILED after $(stack_since "$t0"); logs in $LOG_DIR" >&2
	exit 1
fi

cat <<EOF
cluster-up: $NODES nodes; Slurm: sinfo/squeue/sacct work as is;
cluster-up: Kubernetes: export KUBECONFIG=$KUBECONFIG (bridge: $BRIDGE_KUBECONFIG)
cluster-up: ready in $(stack_since "$t0")
EOF
