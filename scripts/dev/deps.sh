#!/usr/bin/env bash
# make deps: the Debian packages that the build, the tests and the stack need.
#
# Installs the Debian packages that the build, the tests and the local stack
# need. Idempotent: packages already present are not touched, and nothing is
# started by the maintainer scripts (policy-rc.d answers 101 while we install).
#
# Usage: deps.sh [--slurm-root | --bench | --lint | --images | --node]
#   --slurm-root: only what a root of another Debian suite needs to build the
#   daemons against its libslurm and run its Slurm half of the stack
#   (scripts/stack/slurm/root.sh installs it there).
#   --bench: only what make bench adds (gnuplot for its plots); bench/run.sh
#   runs it and goes on without the plots when it fails.
#   --lint: only what make lint and make fmt need (clang-tidy, cppcheck,
#   clang-format, and mandoc for the man pages); the default set has them
#   too.
#   --images: only what make images adds (buildah).
#   --node: only what make node-up adds (containerd, runc, the CNI
#   plugins, iptables, and buildah for the images).
set -euo pipefail

BUILD_PKGS=(build-essential pkg-config libcurl4-openssl-dev libssl-dev libjansson-dev
	libmicrohttpd-dev libgnutls28-dev libyaml-dev check libslurm-dev)
LINT_PKGS=(clang-tidy cppcheck clang-format mandoc)
SLURM_PKGS=(munge slurmctld slurmd slurmdbd slurm-client mariadb-server
	openssl curl procps psmisc iproute2 util-linux valgrind)
if [ "${1:-}" = --slurm-root ]; then
	PKGS=("${BUILD_PKGS[@]}" "${SLURM_PKGS[@]}")
elif [ "${1:-}" = --bench ]; then
	PKGS=(gnuplot-nox)
elif [ "${1:-}" = --images ]; then
	# make images: buildah builds them from scratch (no daemon, no registry).
	PKGS=(buildah)
elif [ "${1:-}" = --node ]; then
	# make node-up: a real kubelet's runtime and pod network.
	PKGS=(containerd runc containernetworking-plugins iptables buildah)
elif [ "${1:-}" = --lint ]; then
	PKGS=("${LINT_PKGS[@]}")
else
	PKGS=("${BUILD_PKGS[@]}" "${SLURM_PKGS[@]}"
		# the Kubernetes half of the stack
		etcd-server etcd-client kmod
		# test tooling
		clang libclang-rt-14-dev wrk jq python3-prometheus-client
		debootstrap
		# make lint, make fmt
		"${LINT_PKGS[@]}")
fi

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#PKGS[@]} packages present"
	exit 0
fi

echo "deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: must run as root to install packages" >&2
	exit 1
fi
created_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 0755 /usr/sbin/policy-rc.d
	created_policy=1
fi
# The trap must not change the script's status: an `[ ] && cmd` whose test is
# false would make it 1 (it did, where policy-rc.d already existed).
cleanup() {
	if [ "$created_policy" = 1 ]; then rm -f /usr/sbin/policy-rc.d; fi
	return 0
}
trap cleanup EXIT
export DEBIAN_FRONTEND=noninteractive
# An old or empty package list finds nothing: refresh it when older than a day.
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -n1)" ]; then
	apt-get update -q
fi
apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "deps: done"
