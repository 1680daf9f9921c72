#!/usr/bin/env bash
# Makes (once) and prints the Debian root of a Slurm release.
#
# scripts/stack/slurm/root.sh RELEASE: prints the directory of a Debian
# root that holds Slurm RELEASE (its daemons, clients and libslurm-dev,
# munge, MariaDB, and the build tools), making it the first time.
#
# A libslurm client talks only to controllers within about two releases of
# its own, and another suite's Slurm packages need that suite's libc: so the
# stack runs Slurm RELEASE, and builds the daemons against it, inside this
# root (chroot; it shares the host's network, so its daemons listen on
# 127.0.0.1 beside the kube-apiserver).
#
#   RELEASE   suite      (Debian 12 itself ships 22.05: no root needed)
#   24.11     trixie
#   26.05     sid
#
# The version is resolved at run time from the suite's package index, and
# the root is cached outside the tree keyed by suite and that version:
# $K8S_CACHE/slurm-roots/<suite>-slurm-<version>/.  When the suite moves on
# to a new version, a new root is made; when it moves past RELEASE, this
# says so.  The first time takes about two minutes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$here/../stack-env.sh"

MIRROR=${SLURM_ROOT_MIRROR:-http://deb.debian.org/debian}
die() { echo "slurm-root: $*" >&2; exit 1; }

release=${1:-}
suite=$(slurm_release_suite "$release") ||
	die "no Debian suite is known for Slurm '$release' (known: $SLURM_RELEASES)"
[ "$suite" != host ] || die "Slurm $release is the host's own: no root is needed"
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot)"
command -v debootstrap >/dev/null || die "debootstrap is missing: run 'make deps'"

# The suite's slurmctld version, from its package index (sid's index is
# past its Valid-Until date on some mirrors: nothing here checks it).  awk
# reads to the end, so that the pipe is never cut short.
# Resolved once a day: the answer is kept in $K8S_CACHE/slurm-roots/SUITE.version.
arch=$(dpkg --print-architecture)
vfile=$K8S_CACHE/slurm-roots/$suite.version
mkdir -p "$K8S_CACHE/slurm-roots"
if [ -s "$vfile" ] && [ -n "$(find "$vfile" -mmin -1440)" ]; then
	version=$(cat "$vfile")
else
	version=$(curl -fsS --max-time 120 "$MIRROR/dists/$suite/main/binary-$arch/Packages.xz" | xz -dc |
		awk '/^Package: slurmctld$/ { p = 1; next } p && /^Version: / && v == "" { v = $2 } /^$/ { p = 0 }
			END { print v }') ||
		die "cannot read the $suite package index from $MIRROR"
	if [ -n "$version" ]; then echo "$version" >"$vfile"; fi
fi
[ -n "$version" ] || die "$suite has no slurmctld package"
case $version in
"$release".*|*:"$release".*) ;;
*) die "$suite now ships Slurm $version, not $release: update SLURM_RELEASES in scripts/stack/stack-env.sh" ;;
esac

dir=$K8S_CACHE/slurm-roots/$suite-slurm-${version#*:}
if [ -f "$dir/.ready" ]; then echo "$dir"; exit 0; fi

mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
if [ -f "$dir/.ready" ]; then echo "$dir"; exit 0; fi
log=$dir.log
echo "slurm-root: making a Debian $suite root with Slurm $version in $dir (log: $log)" >&2
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp"
debootstrap --variant=minbase "$suite" "$dir.tmp" "$MIRROR" >"$log" 2>&1 ||
	{ tail -n 20 "$log" >&2; die "debootstrap $suite failed"; }
# As on the host: services are never started by package scripts.
printf '#!/bin/sh\nexit 101\n' >"$dir.tmp/usr/sbin/policy-rc.d"
chmod 0755 "$dir.tmp/usr/sbin/policy-rc.d"
# The host's names: the root shares its network and hostname (MariaDB's
# install looks the hostname up).
cp /etc/resolv.conf /etc/hosts "$dir.tmp/etc/"
mkdir -p "$dir.tmp/deps"
cp "$here/../../dev/deps.sh" "$dir.tmp/deps/deps.sh"
mount -t proc proc "$dir.tmp/proc"
trap 'umount -l "$dir.tmp/proc" 2>/dev/null || true' EXIT
chroot "$dir.tmp" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
	/bin/sh -c 'apt-get update -q -o Acquire::Check-Valid-Until=false && /deps/deps.sh --slurm-root' \
	>>"$log" 2>&1 || { tail -n 20 "$log" >&2; die "installing Slurm in the $suite root failed"; }
umount -l "$dir.tmp/proc"
trap - EXIT
rm -rf "$dir.tmp/deps" "$dir.tmp/var/cache/apt/archives/"*.deb
got=$(chroot "$dir.tmp" dpkg-query -W -f='${Version}' slurmctld)
[ "$got" = "$version" ] || die "the $suite root got slurmctld $got, not $version"
touch "$dir.tmp/.ready"
mv "$dir.tmp" "$dir"
echo "slurm-root: ready: $dir" >&2
echo "$dir"
