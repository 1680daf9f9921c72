#!/usr/bin/env bash
# make fresh-check: the install path, proved from nothing.
#
# Makes a clean Debian 12 root with debootstrap (minbase, plus make: what a
# newcomer's `git clone && make ...` starts from), with /usr/sbin/policy-rc.d
# present as on the project's machines, copies this tree into it (with any
# uncommitted change), and there runs
#
#   make deps     every package the build, the tests and the stack need
#   make all      both daemons and libk8s
#   make check    the unit tests
#
# then checks that every program the local stack and the test tiers call is
# installed.  A step that only works where something is already installed
# fails here.  The debootstrap tarball (the .debs of the base system) is
# cached outside the tree, keyed by suite and architecture, in
# $K8S_CACHE/fresh-check/; the root itself is new each run and removed
# afterwards (FRESH_KEEP=1 keeps it, for a look inside).
#
# Environment: FRESH_SUITE (bookworm), FRESH_MIRROR (deb.debian.org),
# FRESH_KEEP.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$here/../stack/stack-env.sh"

SUITE=${FRESH_SUITE:-bookworm}
MIRROR=${FRESH_MIRROR:-http://deb.debian.org/debian}
ARCH=$(dpkg --print-architecture)
CACHE=$K8S_CACHE/fresh-check
TARBALL=$CACHE/debootstrap-$SUITE-minbase-make-$ARCH.tar
# Programs the stack scripts, the test tiers and the demo run: each must be
# there after `make deps` (Go and kubectl are not Debian packages here: the
# machine brings Go, and cluster-up builds kubectl when there is none).
STACK_PROGRAMS=(cc make pkg-config munged mungekey slurmctld slurmd slurmdbd
	sinfo squeue sacct sacctmgr scontrol salloc scancel mariadbd
	mariadb-install-db mariadb etcd openssl curl jq python3 valgrind clang
	wrk pkill ip modprobe flock setsid)

die() { echo "fresh-check: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot)"
command -v debootstrap >/dev/null || die "debootstrap is missing: run 'make deps'"

t0=$EPOCHREALTIME
STACK_T_MARK=$t0
lap() { stack_lap "$@"; }

root=$(mktemp -d /var/tmp/slurm-bridge-fresh.XXXXXX)
chmod 0755 "$root"    # mktemp's 0700 would lock the system users out
mounts=()
cleanup() {
	local i
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done
	if [ "${FRESH_KEEP:-0}" = 1 ]; then
		echo "fresh-check: the root is kept in $root"
	else
		rm -rf "$root"
	fi
	return 0
}
trap cleanup EXIT

# 1. The base system, from the cached tarball of its packages.
mkdir -p "$CACHE"
if [ ! -s "$TARBALL" ]; then
	echo "fresh-check: downloading Debian $SUITE (minbase) into $TARBALL"
	rm -rf "$root.dl"
	debootstrap --variant=minbase --include=make --make-tarball="$TARBALL.tmp" \
		"$SUITE" "$root.dl" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$CACHE/debootstrap.log" >&2; die "debootstrap --make-tarball failed"; }
	rm -rf "$root.dl"
	mv "$TARBALL.tmp" "$TARBALL"
fi
echo "fresh-check: a clean Debian $SUITE root in $root"
debootstrap --variant=minbase --include=make --unpack-tarball="$TARBALL" \
	"$SUITE" "$root" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 ||
	{ tail -n 20 "$CACHE/debootstrap.log" >&2; die "debootstrap failed"; }
lap debootstrap

# 2. As on the project's machines: policy-rc.d exists, and DNS resolves.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"
# The host's names: the root shares its network and hostname (MariaDB's
# install looks the hostname up).
cp /etc/resolv.conf /etc/hosts "$root/etc/"
mount -t proc proc "$root/proc" && mounts+=("$root/proc")
mount --rbind /dev "$root/dev" && mounts+=("$root/dev")

# 3. This tree, as a clone would have it, plus uncommitted changes.
mkdir -p "$root/src"
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$root/src"

# in_root WHAT CMD: runs CMD in /src of the root, with a clean environment.
in_root() {
	local what=$1; shift
	echo "fresh-check: $what"
	if ! chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 /bin/sh -c "cd /src && $*" >"$CACHE/step.log" 2>&1; then
		tail -n 30 "$CACHE/step.log" | sed 's/^/  | /' >&2
		die "'$*' failed in a fresh Debian $SUITE root (whole log: $CACHE/step.log)"
	fi
	lap "$what"
}
in_root "make deps" make deps
in_root "make all" make -j2 all
in_root "make check" make check

# 4. Every program the stack and the tests call is installed.
missing=()
for p in "${STACK_PROGRAMS[@]}"; do
	chroot "$root" /usr/bin/env PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/sh -c "command -v $p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] || die "after make deps, these programs are missing: ${missing[*]}"
lap programs

total=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
echo "fresh-check: passed in ${total}s ($(stack_laps))"
