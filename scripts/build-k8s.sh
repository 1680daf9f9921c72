#!/usr/bin/env bash
# Builds the Kubernetes side of the local stack from Go modules and caches the
# binaries outside the tree, keyed by version:
#   $K8S_CACHE/k8s-$K8S_VERSION/{kube-apiserver,kube-controller-manager,kube-scheduler}
#   $K8S_CACHE/kwok-$KWOK_VERSION/kwok
# Usage: build-k8s.sh [kube-apiserver|kube-controller-manager|kube-scheduler|kwok|etcd|jobset|lws ...]
# With no argument it builds everything the stack needs. Binaries already in
# the cache are reused; the first build takes several minutes on two cores.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.34.4}
KWOK_VERSION=${KWOK_VERSION:-v0.7.0}
ETCD_VERSION=${ETCD_VERSION:-v3.5.21}
JOBSET_VERSION=${JOBSET_VERSION:-v0.10.1}
LWS_VERSION=${LWS_VERSION:-v0.7.0}
K8S_CACHE=${K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/slurm-bridge}
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0

staging_version() { echo "v0.${K8S_VERSION#v1.}"; }

# A helper module that requires k8s.io/kubernetes and points every staging
# module (which upstream replaces with ./staging/...) at its published v0.x.
k8s_module() {
	local dir=$K8S_CACHE/k8s-$K8S_VERSION/src
	if [ -f "$dir/.ready" ]; then echo "$dir"; return; fi
	mkdir -p "$dir"
	local gomod
	gomod=$(cd "$dir" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
		sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
	{
		echo "module slurm-bridge.local/k8sbuild"
		echo
		echo "go 1.24"
		echo
		echo "require k8s.io/kubernetes $K8S_VERSION"
		echo
		sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*#\1#p' "$gomod" |
			while read -r m; do echo "replace $m => $m $(staging_version)"; done
	} >"$dir/go.mod"
	cat >"$dir/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
GO
	(cd "$dir" && go mod tidy -e >/dev/null 2>&1 || true)
	(cd "$dir" && go get "k8s.io/kubernetes@$K8S_VERSION" >/dev/null)
	touch "$dir/.ready"
	echo "$dir"
}

build_k8s() {
	local name=$1 out=$K8S_CACHE/k8s-$K8S_VERSION/$1
	[ -x "$out" ] && { echo "build-k8s: cached $out"; return; }
	local dir; dir=$(k8s_module)
	echo "build-k8s: building $name $K8S_VERSION (slow the first time)"
	local pkg=k8s.io/component-base/version
	(cd "$dir" && go build -trimpath -o "$out.tmp" \
		-ldflags "-s -w -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2)" \
		"k8s.io/kubernetes/cmd/$name")
	mv "$out.tmp" "$out"
	echo "build-k8s: built $out"
}

build_kwok() {
	local dir=$K8S_CACHE/kwok-$KWOK_VERSION
	[ -x "$dir/kwok" ] && { echo "build-k8s: cached $dir/kwok"; return; }
	mkdir -p "$dir"
	echo "build-k8s: building kwok $KWOK_VERSION"
	GOBIN=$dir go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
	echo "build-k8s: built $dir/kwok"
}

build_etcd() {
	local dir=$K8S_CACHE/etcd-$ETCD_VERSION
	[ -x "$dir/etcd" ] && { echo "build-k8s: cached $dir/etcd"; return; }
	mkdir -p "$dir/src"
	echo "build-k8s: building etcd $ETCD_VERSION"
	# `go install go.etcd.io/etcd/server/v3@VERSION` is refused: that go.mod
	# has replace directives (../api, ...). A helper module that requires it
	# ignores them and takes the published api/client/pkg modules instead.
	printf 'module slurm-bridge.local/etcdbuild\n\ngo 1.23\n' >"$dir/src/go.mod"
	(cd "$dir/src" && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null &&
		go build -trimpath -ldflags "-s -w" -o "$dir/etcd.tmp" go.etcd.io/etcd/server/v3)
	mv "$dir/etcd.tmp" "$dir/etcd"
	echo "build-k8s: built $dir/etcd"
}

# A controller from its module at an exact version, built through a helper
# module: `go install pkg@version` asks the proxy for the version list,
# which it refuses for some modules.
# build_controller NAME MODULE VERSION PACKAGE
build_controller() {
	local name=$1 mod=$2 ver=$3 pkg=$4 dir=$K8S_CACHE/$1-$3 src
	if [ ! -x "$dir/$name" ]; then
		mkdir -p "$dir/src"
		echo "build-k8s: building $name $ver"
		cat >"$dir/src/go.mod" <<MOD
module slurm-bridge.local/${name}build

go 1.24

require $mod $ver
MOD
		cat >"$dir/src/tools.go" <<GO
//go:build tools

package tools

import _ "$pkg"
GO
		(cd "$dir/src" && go mod download "$mod@$ver" &&
			go mod tidy >/dev/null 2>&1 || true)
		(cd "$dir/src" && go build -trimpath -ldflags "-s -w" \
			-o "$dir/$name.tmp" "$pkg")
		mv "$dir/$name.tmp" "$dir/$name"
		echo "build-k8s: built $dir/$name"
	else
		echo "build-k8s: cached $dir/$name"
	fi
	# Keep the CRDs of the same version next to the binary.
	if [ ! -d "$dir/crds" ]; then
		src=$(go mod download -json "$mod@$ver" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
		mkdir -p "$dir/crds.tmp"
		find "$src/config" -path '*crd/bases/*.yaml' -exec cp {} "$dir/crds.tmp/" \;
		mv "$dir/crds.tmp" "$dir/crds"
	fi
}

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(kube-apiserver kube-controller-manager kwok)
for t in "${targets[@]}"; do
	case $t in
	kube-apiserver|kube-controller-manager|kube-scheduler) build_k8s "$t" ;;
	kwok) build_kwok ;;
	etcd) build_etcd ;;
	jobset) build_controller jobset sigs.k8s.io/jobset "$JOBSET_VERSION" sigs.k8s.io/jobset ;;
	lws) build_controller lws sigs.k8s.io/lws "$LWS_VERSION" sigs.k8s.io/lws/cmd ;;
	*) echo "build-k8s: unknown target $t" >&2; exit 2 ;;
	esac
done
