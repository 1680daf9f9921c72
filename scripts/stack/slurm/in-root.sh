#!/usr/bin/env bash
# Runs a command in the Debian root of another Slurm release.
#
# scripts/stack/slurm/in-root.sh RELEASE CMD [ARG...]: runs CMD in the root of
# Slurm RELEASE (scripts/stack/slurm/root.sh), from the same working directory,
# with the same environment but for PATH.  The root sees the host's
# network, and at the same paths: this tree, $STACK_DIR and /tmp, so the
# stack's scripts, the daemons built against the root's libslurm and their
# config, certificates and logs work unchanged.
#
# The mounts this call makes are removed when CMD returns, unless --keep is
# given first: daemons started in the root keep them, until cluster-down
# removes them (scripts/stack/slurm/in-root.sh --umount).  While they are there,
# the root holds this tree: remove a root only with
# `rm -rf --one-file-system`, or after --umount.
#
# scripts/stack/slurm/in-root.sh --umount: removes the mounts of every root.
# scripts/stack/slurm/in-root.sh --bin RELEASE DIR: writes DIR/in-root (the same
# as this, without the mounts, which the stack keeps) and, beside it, the
# Slurm client commands as wrappers of it, for the host's PATH.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$here/../stack-env.sh"

roots=$K8S_CACHE/slurm-roots
if [ "${1:-}" = --umount ]; then
	# Deepest first, so that nested mounts go before their parents.
	awk -v r="$roots/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null || true; done
	exit 0
fi
# The one command line that enters a root: same directory when it is
# there, the root's own PATH, and SLURM_IN_ROOT set for our scripts.
# chroot_line ROOT RELEASE: that line, with "$@" left to the caller.
chroot_line() {
	printf 'chroot %q /usr/bin/env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin SLURM=%q SLURM_IN_ROOT=1 /bin/sh -c '\''cd "$1" 2>/dev/null || cd /; shift; exec "$@"'\'' in-root "$PWD"' "$1" "$2"
}

if [ "${1:-}" = --bin ]; then
	release=$2 dir=$3
	root=$("$here/root.sh" "$release")
	mkdir -p "$dir"
	{
		echo '#!/bin/sh'
		echo "# Written by scripts/stack/slurm/in-root.sh --bin: runs a command in the root"
		echo "# of Slurm $release (mounted while the stack runs).  Called by another"
		echo "# name (squeue, sacct, ...), it runs that command."
		echo 'case $(basename "$0") in in-root) ;; *) set -- "$(basename "$0")" "$@" ;; esac'
		echo "exec $(chroot_line "$root" "$release") \"\$@\""
	} >"$dir/in-root.tmp"
	chmod 0755 "$dir/in-root.tmp"
	mv "$dir/in-root.tmp" "$dir/in-root"
	for c in $SLURM_CLIENTS; do ln -sfn in-root "$dir/$c"; done
	exit 0
fi

keep=0
if [ "${1:-}" = --keep ]; then keep=1; shift; fi
[ $# -ge 2 ] || { echo "usage: in-root.sh [--keep] RELEASE CMD [ARG...] | --umount" >&2; exit 2; }
release=$1; shift
root=$("$here/root.sh" "$release")

made=()
# mnt TARGET MOUNT-ARGS...: mounts at TARGET unless something is there.
mnt() {
	local t=$1; shift
	mkdir -p "$t"
	if ! mountpoint -q "$t"; then mount "$@" "$t"; made+=("$t"); fi
}
mnt "$root/proc" -t proc proc
mnt "$root/dev" --rbind /dev
for d in "$top" "$STACK_DIR" /tmp; do
	mkdir -p "$d"
	mnt "$root$d" --bind "$d"
done
# The host's names: the root shares its network and hostname (MariaDB's
# install looks the hostname up).
cp /etc/resolv.conf /etc/hosts "$root/etc/"

run() { eval "$(chroot_line "$root" "$release") \"\$@\""; }
if [ "$keep" = 1 ] || [ ${#made[@]} -eq 0 ]; then
	run "$@"
	exit
fi
rc=0
run "$@" || rc=$?
for ((i = ${#made[@]} - 1; i >= 0; i--)); do umount -l "${made[$i]}" 2>/dev/null || true; done
exit $rc
