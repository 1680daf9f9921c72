#!/usr/bin/env bash
# Builds the DRA node's containerd 2 and DRA example driver, cached.
#
# scripts/stack/k8s/dra-build.sh: what the DRA node (make dra-node-test) runs
# beside the kubelet, built from Go modules and cached outside the tree,
# keyed by version:
#
#   $K8S_CACHE/containerd-$CONTAINERD_VERSION/   containerd and its runc
#       shim: containerd 2.x injects a device driver's CDI edits into a
#       container (Debian 12's containerd 1.6 has no CDI)
#   $K8S_CACHE/dra-example-driver-$DRA_DRIVER_VERSION/
#       dra-example-kubeletplugin, the kubelet plugin of the DRA example
#       driver (gpu.example.com: eight GPUs, attribute index)
#
# Each from a helper module that requires it (the module proxy serves the
# driver's version but not its version list, which go install @version
# reads).  Prints the two directories.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$here/../stack-env.sh"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0

CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.4.2}
DRA_DRIVER_VERSION=${DRA_DRIVER_VERSION:-v0.4.0}
ctr_dir=$K8S_CACHE/containerd-$CONTAINERD_VERSION
drv_dir=$K8S_CACHE/dra-example-driver-$DRA_DRIVER_VERSION

# build DIR MODULE VERSION TAGS PKG...: each PKG's binary into DIR.
build() {
	local dir=$1 mod=$2 ver=$3 tags=$4 work pkg; shift 4
	work=$(mktemp -d)
	printf 'module local/drabuild\n\ngo 1.26\n\nrequire %s %s\n' "$mod" "$ver" >"$work/go.mod"
	{
		echo '//go:build tools'
		echo
		echo 'package tools'
		echo
		for pkg in "$@"; do echo "import _ \"$pkg\""; done
	} >"$work/tools.go"
	mkdir -p "$dir"
	(
		cd "$work"
		go mod tidy >/dev/null 2>&1 || go mod tidy
		for pkg in "$@"; do
			go build -tags "$tags" -o "$dir/$(basename "$pkg")" "$pkg"
		done
	)
	rm -rf "$work"
}

command -v go >/dev/null 2>&1 || { echo "dra-build: no Go toolchain on PATH" >&2; exit 1; }
if [ ! -x "$ctr_dir/containerd" ] || [ ! -x "$ctr_dir/containerd-shim-runc-v2" ]; then
	echo "dra-build: building containerd $CONTAINERD_VERSION" >&2
	build "$ctr_dir" github.com/containerd/containerd/v2 "$CONTAINERD_VERSION" \
		"no_btrfs no_devmapper no_zfs no_aufs" \
		github.com/containerd/containerd/v2/cmd/containerd \
		github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2
fi
if [ ! -x "$drv_dir/dra-example-kubeletplugin" ]; then
	echo "dra-build: building dra-example-kubeletplugin $DRA_DRIVER_VERSION" >&2
	build "$drv_dir" sigs.k8s.io/dra-example-driver "$DRA_DRIVER_VERSION" "" \
		sigs.k8s.io/dra-example-driver/cmd/dra-example-kubeletplugin
fi
echo "$ctr_dir"
echo "$drv_dir"
