#!/usr/bin/env bash
# make cluster-down: stops the local stack, by its PID files.
#
# Stops everything that cluster-up and bridge-up started,
# by their PID files only (SIGTERM, wait, then SIGKILL); nothing is killed by
# name. State in $STACK_DIR is kept so the next cluster-up is fast, unless
# --purge (or PURGE=1) is given, which then removes $STACK_DIR.
set -euo pipefail
t0=$EPOCHREALTIME
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$here/stack-env.sh"

purge=${PURGE:-0}
for a in "$@"; do
	case $a in
	--purge) purge=1 ;;
	*) echo "usage: cluster-down.sh [--purge]" >&2; exit 2 ;;
	esac
done

# Serialised with cluster-up (see there).
if [ -z "${STACK_LOCKED:-}" ] && [ -d "$STACK_DIR" ]; then
	STACK_LOCKED=1 STACK_T0=$t0 exec flock -o "$STACK_DIR/.lock" "$0" "$@"
fi
t0=${STACK_T0:-$t0}

# Clients first (they would only log errors while their servers go away),
# then servers; independent daemons are stopped together.
stop_bridge() {
	# Built from the tree under various names: no COMM check.
	stack_stop_many 10 "slurm-bridge|$BRIDGE_PIDFILE|" "slurm-bridge-admission|$ADMISSION_PIDFILE|"
}

stop_k8s() {
	# The real node of make node-up, if any: its pods first.
	if [ -e "$RUN_DIR/kubelet.pid" ] || [ -e "$RUN_DIR/containerd.pid" ]; then
		"$here/k8s/node-up.sh" --down || true
	fi
	stack_stop_many 10 "kwok|$RUN_DIR/kwok.pid|kwok" \
		"jobset|$RUN_DIR/jobset.pid|jobset" "lws|$RUN_DIR/lws.pid|lws" \
		"kueue|$RUN_DIR/kueue.pid|kueue" "kuberay|$RUN_DIR/kuberay.pid|kuberay" \
		"kube-controller-manager|$RUN_DIR/kube-controller-manager.pid|kube-controller-manager"
	# The apiserver drains for a few seconds; etcd goes last.
	stack_stop kube-apiserver "$RUN_DIR/kube-apiserver.pid" kube-apiserver 30
	stack_stop etcd "$RUN_DIR/etcd.pid" etcd 20
}

stop_slurm() {
	local p entries=("slurmctld|$RUN_DIR/slurmctld.pid|slurmctld" "slurmdbd|$RUN_DIR/slurmdbd.pid|slurmdbd")
	# All Slurm daemons at once: each takes 1-2 s to exit. (Stopping the
	# slurmds *before* slurmctld would make it wait ~5 s on RPCs to them.)
	for p in "$RUN_DIR"/slurmd-*.pid; do
		[ -e "$p" ] && entries+=("$(basename "$p" .pid)|$p|slurmd")
	done
	stack_stop_many 30 "${entries[@]}"
	# slurmdbd has flushed to MariaDB; nothing needs munge any more.
	stack_stop_many 30 "mariadbd|$RUN_DIR/mariadbd.pid|mariadbd" "munged|$RUN_DIR/munge/munged.pid|munged"
}

purge_state() {
	[ -d "$STACK_DIR" ] || return 0
	# Only ever remove a directory that cluster-up created.
	if [ ! -e "$STACK_MARKER" ] || [ "$(cd "$STACK_DIR" && pwd -P)" = / ]; then
		echo "cluster-down: $STACK_DIR does not look like a stack directory (no $(basename "$STACK_MARKER")); not removing it" >&2
		return 1
	fi
	rm -rf "$STACK_DIR"
	echo "cluster-down: removed $STACK_DIR"
}

if [ -d "$RUN_DIR" ]; then
	stop_bridge
	stop_k8s &
	k8s_pid=$!
	stop_slurm
	wait "$k8s_pid"
fi
# The mounts of a Slurm root (scripts/stack/slurm/in-root.sh), now unused.
"$here/slurm/in-root.sh" --umount
if [ "$purge" = 1 ]; then purge_state; fi
echo "cluster-down: done in $(stack_since "$t0")$([ "$purge" = 1 ] || echo " (state kept in $STACK_DIR; --purge removes it)")"
