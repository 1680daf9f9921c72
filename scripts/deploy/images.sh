#!/usr/bin/env bash
# make images: the daemons' container images, built with buildah.
#
# The two daemons' container images, built from scratch with
# buildah (no registry is needed or reached):
#
#   slurm-bridge:dev            /usr/bin/slurm-bridge, libslurm and the
#                               Slurm plugins it loads at run time, munged
#                               and munge (the Deployment's munged sidecar
#                               runs from the same image)
#   slurm-bridge-admission:dev  /usr/bin/slurm-bridge-admission
#   slurm-bridge-pause:dev      the pod sandbox's pause program of the
#                               local stack's kubelet node (scripts/stack/k8s/
#                               pause.c, static): not part of a release
#
# Each holds its programs, the shared libraries they (and the plugins)
# need, CA certificates, an /etc/passwd naming the non-root users the
# manifests run them as (65532, and 65533 for munged), and nothing else: no
# shell, no package manager.  Both run with a read-only root filesystem.
# The images are built from this tree's binaries for Slurm $SLURM (the
# default release: 22.05, this machine's); each is also written as an OCI
# archive in build/images/ for `ctr images import`.  For another release
# (SLURM=24.11, 26.05) the roots are assembled inside the Debian root of
# that release (scripts/stack/slurm/in-root.sh, which sees this tree at the same
# path): its libslurm, plugins and munge, and its loader resolving them;
# buildah then commits them here.  `images.sh --assemble` is that step.
#
# Before an image is committed, its root is checked on its own: every
# program and plugin resolves all its libraries inside it (the loader of
# the root, run in a chroot), and each daemon answers --help there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$here/../stack/stack-env.sh"

out=$top/build/images
work=$out/roots
tag=${IMAGE_TAG:-dev}
plugins=/usr/lib/x86_64-linux-gnu/slurm-wlm
t0=$EPOCHREALTIME

assemble_only=0
[ "${1:-}" = --assemble ] && assemble_only=1
if [ "$assemble_only" = 0 ] && ! command -v buildah >/dev/null 2>&1; then
	echo "images: buildah is missing (make deps installs it)" >&2
	exit 1
fi
bridge_bin=$BRIDGE_BIN admission_bin=$ADMISSION_BIN
[ "$SLURM" = 22.05 ] && bridge_bin=$top/slurm-bridge admission_bin=$top/slurm-bridge-admission
for b in "$bridge_bin" "$admission_bin"; do
	[ -x "$b" ] || { echo "images: $b is not built (make all)" >&2; exit 1; }
done

# add ROOT FILE [DEST]: FILE into ROOT at DEST (default: its own path),
# with the symbolic links that lead to it.
add() {
	local root=$1 f=$2 dest=${3:-$2}
	mkdir -p "$root$(dirname "$dest")"
	while [ -L "$f" ]; do
		cp -P "$f" "$root$(dirname "$dest")/"
		f=$(readlink -f "$f")
		dest=$f
		mkdir -p "$root$(dirname "$dest")"
	done
	cp "$f" "$root$dest"
}

# add_with_libs ROOT FILE [DEST]: FILE and every shared library it loads.
add_with_libs() {
	local root=$1 f=$2 lib
	add "$root" "$f" "${3:-$2}"
	for lib in $(ldd "$f" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }'); do
		[ -e "$root$lib" ] || add "$root" "$lib"
	done
}

# base ROOT: the directories, users and certificates every image has.
base() {
	local root=$1
	rm -rf "$root"
	mkdir -p "$root"/{etc/ssl/certs,tmp,run,usr/bin,usr/sbin,usr/lib,usr/lib64}
	# Debian 12's merged /usr, which the libraries' own links assume.
	ln -s usr/bin "$root/bin"
	ln -s usr/sbin "$root/sbin"
	ln -s usr/lib "$root/lib"
	ln -s usr/lib64 "$root/lib64"
	chmod 1777 "$root/tmp"
	printf 'root:x:0:0:root:/:/nonexistent\nnonroot:x:65532:65532:slurm-bridge:/:/nonexistent\nmunge:x:65533:65533:munged:/:/nonexistent\n' >"$root/etc/passwd"
	printf 'root:x:0:\nnonroot:x:65532:\nmunge:x:65533:\n' >"$root/etc/group"
}

# check ROOT PROGRAM...: each resolves its libraries inside ROOT alone.
check() {
	local root=$1 p missing; shift
	for p in "$@"; do
		missing=$(chroot "$root" /lib64/ld-linux-x86-64.so.2 --list "$p" 2>&1 | grep -E 'not found|No such' || true)
		if [ -n "$missing" ]; then
			echo "images: $p in $(basename "$root") lacks: $missing" >&2
			return 1
		fi
	done
}

# commit ROOT NAME ENTRYPOINT: the image NAME:tag from ROOT, non-root.
commit() {
	local root=$1 name=$2 entry=$3 ctr
	# The machine's CA bundle (a release's root need not have one).
	cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
	ctr=$(buildah from scratch)
	buildah copy --quiet "$ctr" "$root" / >/dev/null
	buildah config --user 65532:65532 --entrypoint "[\"$entry\"]" --cmd '[]' \
		--workingdir / --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
		--label org.opencontainers.image.title="$name" \
		--label org.opencontainers.image.source=slurm-bridge \
		--label slurm-bridge.slurm-release="$SLURM" "$ctr"
	buildah commit --quiet --rm "$ctr" "localhost/$name:$tag" >/dev/null
	rm -f "$out/$name.tar"
	buildah push --quiet "localhost/$name:$tag" "oci-archive:$out/$name.tar:$name:$tag" >/dev/null
}

# assemble: both daemons' roots in $work, each checked on its own.
assemble() {
	mkdir -p "$out" "$work"

	# The webhook: one program.
	r=$work/admission
	base "$r"
	add_with_libs "$r" "$admission_bin" /usr/bin/slurm-bridge-admission
	check "$r" /usr/bin/slurm-bridge-admission
	chroot "$r" /usr/bin/slurm-bridge-admission --help >/dev/null

	# The scheduler: libslurm dlopens its plugins (auth/munge, hash, cred,
	# ...) by name at run time, which ldd cannot see: every plugin of the
	# release goes in, with its own libraries.
	r=$work/bridge
	base "$r"
	mkdir -p "$r"/{etc/slurm,etc/munge,run/munge,var/lib/munge,etc/slurm-bridge}
	add_with_libs "$r" "$bridge_bin" /usr/bin/slurm-bridge
	add_with_libs "$r" /usr/sbin/munged
	add_with_libs "$r" /usr/bin/munge
	for p in "$plugins"/*.so; do add_with_libs "$r" "$p"; done
	check "$r" /usr/bin/slurm-bridge /usr/sbin/munged /usr/bin/munge
	for p in "$plugins"/*.so; do check "$r" "$p"; done
	chroot "$r" /usr/bin/slurm-bridge --help >/dev/null
}

if [ "$assemble_only" = 1 ]; then
	assemble
	exit 0
fi
if [ "$SLURM" = 22.05 ] || [ -n "${SLURM_IN_ROOT:-}" ]; then
	assemble
else
	"$here/../stack/slurm/in-root.sh" "$SLURM" "$here/images.sh" --assemble
fi
commit "$work/admission" slurm-bridge-admission /usr/bin/slurm-bridge-admission
commit "$work/bridge" slurm-bridge /usr/bin/slurm-bridge

# static_image NAME USER: the image slurm-bridge-NAME of one static
# program, scripts/stack/k8s/NAME.c, run as USER.
static_image() {
	local name=$1 user=$2 r=$work/$1 ctr
	rm -rf "$r"
	mkdir -p "$r"
	cc -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -O2 -static -s \
		-o "$r/$name" "$here/../stack/k8s/$name.c"
	ctr=$(buildah from scratch)
	buildah copy --quiet "$ctr" "$r/$name" "/$name" >/dev/null
	buildah config --user "$user:$user" --entrypoint "[\"/$name\"]" --cmd '[]' "$ctr"
	buildah commit --quiet --rm "$ctr" "localhost/slurm-bridge-$name:$tag" >/dev/null
	rm -f "$out/slurm-bridge-$name.tar"
	buildah push --quiet "localhost/slurm-bridge-$name:$tag" \
		"oci-archive:$out/slurm-bridge-$name.tar:slurm-bridge-$name:$tag" >/dev/null
}
# The local stack's pause image, and the DRA node test's container (make
# dra-node-test), which prints what a device driver put into its
# environment.
static_image pause 65535
static_image envprobe 65534

echo "images: built in $(stack_since "$t0") (Slurm $SLURM):"
buildah images --format '{{.Name}}:{{.Tag}} {{.Size}}' |
	grep -E "localhost/slurm-bridge(-admission|-pause)?:$tag " | sed 's/^/  /'
for n in slurm-bridge slurm-bridge-admission slurm-bridge-pause; do
	printf '  %s: %s as an OCI archive\n' "$out/$n.tar" "$(du -h "$out/$n.tar" | cut -f1)"
done
