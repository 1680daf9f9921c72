#!/usr/bin/env bash
# Builds the local stack's Go programs from Go modules, cached by version.
#
# Builds the Go parts of the local stack from Go modules and caches them
# outside the tree, keyed by version (paths: stack_cache_path in stack-env.sh):
#
#   $K8S_CACHE/stack-<versions>/   kube-apiserver kube-controller-manager
#                                  kube-scheduler kubectl lws jobset crds/
#   $K8S_CACHE/kwok-$KWOK_VERSION/kwok
#   $K8S_CACHE/etcd-$ETCD_VERSION/etcd   (only when Debian's is not wanted)
#   $K8S_CACHE/kueue-$KUEUE_VERSION/kueue crds/
#   $K8S_CACHE/kuberay-$KUBERAY_VERSION/kuberay crds/   (ray-operator)
#
# Usage: build-k8s.sh [kube-apiserver|kube-controller-manager|kube-scheduler|
#                      kubectl|kubelet|lws|jobset|kwok|etcd|kueue|kuberay ...]
# With no argument it builds what the stack always runs (kube-apiserver,
# kube-controller-manager, kwok).  Binaries already cached are not rebuilt.
#
# The Kubernetes binaries and the JobSet and LWS controllers come from ONE
# helper module, so they share one dependency graph: client-go, apimachinery
# and controller-runtime are compiled once for all of them, and one `go build`
# compiles and links every missing binary with both cores busy.  (Built one
# module each, the controllers alone took 407 s of a first demo.)  kwok
# keeps a module of its own (v0.7.0 does not compile against apimachinery
# 0.34), and so do Kueue and KubeRay (each pins its own client-go).  The
# versions of each come with the Kubernetes release
# (kube_release_versions in stack-env.sh).  Concurrent runs wait for each other (flock).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$here/stack-env.sh"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0

if ! command -v go >/dev/null 2>&1; then
	echo "build-k8s: no Go toolchain on PATH (needed once, to build the stack's Kubernetes binaries)" >&2
	exit 1
fi
mkdir -p "$K8S_CACHE"
if [ -z "${BUILD_K8S_LOCKED:-}" ]; then
	BUILD_K8S_LOCKED=1 exec flock "$K8S_CACHE/.build.lock" "$0" "$@"
fi

t0=$EPOCHREALTIME
staging_version() { echo "v0.${K8S_VERSION#v1.}"; }

# The helper module: requires k8s.io/kubernetes and the two controllers, and
# points every staging module (which upstream replaces with ./staging/...)
# at its published v0.x.
stack_module() {
	local dir=$STACK_GO_DIR/src gomod
	if [ -f "$dir/.ready" ]; then echo "$dir"; return; fi
	mkdir -p "$dir"
	gomod=$(cd "$dir" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
		sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
	[ -n "$gomod" ] || { echo "build-k8s: cannot download k8s.io/kubernetes@$K8S_VERSION" >&2; return 1; }
	{
		echo "module slurm-bridge.local/stackbuild"
		echo
		echo "go 1.24"
		echo
		echo "require ("
		echo "	k8s.io/kubernetes $K8S_VERSION"
		echo "	sigs.k8s.io/jobset $JOBSET_VERSION"
		echo "	sigs.k8s.io/lws $LWS_VERSION"
		# The controllers' own controller-runtime may not build against
		# a newer client-go: the release names one that does.
		if [ "$CONTROLLER_RUNTIME_VERSION" != - ]; then
			echo "	sigs.k8s.io/controller-runtime $CONTROLLER_RUNTIME_VERSION"
		fi
		echo ")"
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
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "sigs.k8s.io/jobset"
	_ "sigs.k8s.io/lws/cmd"
)
GO
	# -e: test-only dependencies of the modules may be missing; the build
	# below says so if anything it needs is.
	(cd "$dir" && go mod tidy -e >/dev/null 2>&1) || true
	touch "$dir/.ready"
	echo "$dir"
}

# go_package NAME: the package of NAME in the helper module.
go_package() {
	case $1 in
	kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kubelet)
		echo "k8s.io/kubernetes/cmd/$1" ;;
	jobset) echo sigs.k8s.io/jobset ;;
	lws) echo sigs.k8s.io/lws/cmd ;;
	esac
}

# build_stack NAME...: each missing binary of the helper module, one `go
# build` at a time, with a line when it starts and one with its time when
# it is built (the demo shows them).  Go's build cache holds what they
# share, so the first pays for the common packages and the others mostly
# link; each lands as $STACK_GO_DIR/NAME.
build_stack() {
	local name dir out t names=() vpkg=k8s.io/component-base/version
	for name in "$@"; do
		if [ -x "$(stack_cache_path "$name")" ]; then
			echo "build-k8s: cached $(stack_cache_path "$name")"
		else
			names+=("$name")
		fi
	done
	if [ ${#names[@]} -gt 0 ]; then
		t=$EPOCHREALTIME
		echo "build-k8s: fetching the Go modules (Kubernetes $K8S_VERSION, LWS $LWS_VERSION, JobSet $JOBSET_VERSION)"
		dir=$(stack_module)
		echo "build-k8s: modules ready in $(stack_since "$t" 0)"
		out=$STACK_GO_DIR/.out
		for name in "${names[@]}"; do
			t=$EPOCHREALTIME
			echo "build-k8s: building $name"
			rm -rf "$out"; mkdir -p "$out"
			(cd "$dir" && go build -trimpath -o "$out/" \
				-ldflags "-s -w -X $vpkg.gitVersion=$K8S_VERSION -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2)" \
				"$(go_package "$name")")
			# go build names a binary after the last element of its package path.
			mv "$out/$(basename "$(go_package "$name")")" "$STACK_GO_DIR/$name"
			echo "build-k8s: built $name in $(stack_since "$t" 0) ($STACK_GO_DIR/$name)"
		done
		rm -rf "$out"
	fi
	stack_crds
}

# The JobSet and LWS CRDs of the same versions as the controllers.
stack_crds() {
	local dir=$STACK_GO_DIR/crds mod src
	[ -d "$dir" ] && return 0
	rm -rf "$dir.tmp"; mkdir -p "$dir.tmp"
	for mod in "sigs.k8s.io/jobset@$JOBSET_VERSION" "sigs.k8s.io/lws@$LWS_VERSION"; do
		src=$(cd "$(stack_module)" && go mod download -json "$mod" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
		find "$src/config" -path '*crd/bases/*.yaml' -exec cp {} "$dir.tmp/" \;
	done
	mv "$dir.tmp" "$dir"
}

build_kwok() {
	local out; out=$(stack_cache_path kwok)
	if [ -x "$out" ]; then echo "build-k8s: cached $out"; return 0; fi
	mkdir -p "$(dirname "$out")"
	local t=$EPOCHREALTIME
	echo "build-k8s: building kwok $KWOK_VERSION"
	GOBIN=$(dirname "$out") go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
	echo "build-k8s: built kwok in $(stack_since "$t" 0) ($out)"
}

build_etcd() {
	local out dir; out=$(stack_cache_path etcd); dir=$(dirname "$out")
	if [ -x "$out" ]; then echo "build-k8s: cached $out"; return 0; fi
	mkdir -p "$dir/src"
	echo "build-k8s: building etcd $ETCD_VERSION"
	# `go install go.etcd.io/etcd/server/v3@VERSION` is refused: that go.mod
	# has replace directives (../api, ...). A helper module that requires it
	# ignores them and takes the published api/client/pkg modules instead.
	printf 'module slurm-bridge.local/etcdbuild\n\ngo 1.23\n' >"$dir/src/go.mod"
	(cd "$dir/src" && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null &&
		go build -trimpath -ldflags "-s -w" -o "$out.tmp" go.etcd.io/etcd/server/v3)
	mv "$out.tmp" "$out"
	echo "build-k8s: built $out"
}

# build_module NAME PACKAGE@VERSION MODULE@VERSION CRDGLOB: a controller with a module of
# its own, installed with `go install` (neither Kueue's nor KubeRay's
# go.mod has replace directives), and its CRDs of the same version (the
# files under the module's config/ that match CRDGLOB) beside it.
build_module() {
	local name=$1 pkg=$2 mod=$3 glob=$4 out dir src t
	out=$(stack_cache_path "$name"); dir=$(dirname "$out")
	if [ -x "$out" ] && [ -d "$dir/crds" ]; then echo "build-k8s: cached $out"; return 0; fi
	t=$EPOCHREALTIME
	mkdir -p "$dir"
	if [ ! -x "$out" ]; then
		echo "build-k8s: building $name ($pkg)"
		rm -rf "$dir/.bin"
		GOBIN=$dir/.bin go install -trimpath -ldflags "-s -w" "$pkg" || return 1
		mv "$dir/.bin/"* "$out"
		rm -rf "$dir/.bin"
	fi
	src=$(cd / && go mod download -json "$mod" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
	[ -n "$src" ] || { echo "build-k8s: cannot read the $name module" >&2; return 1; }
	rm -rf "$dir/crds.tmp"; mkdir -p "$dir/crds.tmp"
	find "$src/config" -path "$glob" -name '*.yaml' -exec cp {} "$dir/crds.tmp/" \;
	mv "$dir/crds.tmp" "$dir/crds"
	echo "build-k8s: built $name in $(stack_since "$t" 0) ($out)"
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(kube-apiserver kube-controller-manager kwok)
stack=() kwok=0 etcd=0 mods=()
for t in "${targets[@]}"; do
	case $t in
	kueue|kuberay) mods+=("$t") ;;
	kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kubelet|jobset|lws) stack+=("$t") ;;
	kwok) kwok=1 ;;
	etcd) etcd=1 ;;
	*) echo "build-k8s: unknown target $t" >&2; exit 2 ;;
	esac
done
if [ ${#stack[@]} -gt 0 ]; then build_stack "${stack[@]}"; fi
if [ "$kwok" = 1 ]; then build_kwok; fi
if [ "$etcd" = 1 ]; then build_etcd; fi
for t in "${mods[@]}"; do
	case $t in
	kueue) build_module kueue "sigs.k8s.io/kueue/cmd/kueue@$KUEUE_VERSION" \
		"sigs.k8s.io/kueue@$KUEUE_VERSION" '*/crd/bases/*' ;;
	kuberay) build_module kuberay "github.com/ray-project/kuberay/ray-operator@$KUBERAY_VERSION" \
		"github.com/ray-project/kuberay/ray-operator@$KUBERAY_VERSION" '*/crd/bases/*' ;;
	esac
done
echo "build-k8s: done in $(stack_since "$t0" 0)"
