#!/usr/bin/env bash
# make demo and make test, first of all: is the Go on PATH new enough to
# build the stack's Kubernetes release?  The stack builds its Kubernetes
# binaries, the controllers and the DRA driver from Go modules with
# GOTOOLCHAIN=local, so the Go on PATH must be at least what the release's
# go.mod declares (kube_go_min in stack-env.sh).  Debian 12's own Go (1.19)
# is too old.  Prints one line and exits 1 when it is not; silent otherwise.
#
# Usage: go-check.sh WHO   (WHO names the command in the message)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$here/../stack/stack-env.sh"
who=${1:-make}
need=$(kube_go_min "$KUBE_MINOR")
if ! command -v go >/dev/null 2>&1; then
	found="no go on PATH"
else
	have=$(go env GOVERSION 2>/dev/null || true)
	have=${have#go}
	have=${have%%[!0-9.]*}
	if [ -n "$have" ] &&
		[ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n1)" = "$need" ]; then
		exit 0
	fi
	found="found go${have:-?} at $(command -v go)"
fi
echo "$who: needs Go >= $need on PATH to build Kubernetes $K8S_VERSION ($found); install Go $need or newer from the Go project's release tarball (e.g. in /usr/local/go, with /usr/local/go/bin first on PATH): see README.md" >&2
exit 1
