#!/usr/bin/env bash
# make manifests: the plain manifests, rendered from the Helm chart.
#
# Renders the Helm chart manifests/chart, the one source of the in-cluster
# deployment, into the plain manifests for kubectl users, so the two cannot
# drift (release slurm-bridge, namespace slurm-bridge, namespace.create=true,
# helmHooks=false):
#   manifests/slurm-bridge.yaml        everything but the two below
#   manifests/certs.yaml               the certificate Job and its RBAC,
#                                      without Helm hook annotations
#   manifests/admission/webhooks.yaml  both webhook configurations, with
#                                      caBundle "" (filled in by the webhook,
#                                      or by scripts/deploy/webhook-cert.sh and
#                                      scripts/stack/bridge-up.sh with sed)
# The CRDs (manifests/crds/) and samples (manifests/samples/) stay written
# by hand.  It also lints the chart (helm lint --strict) with its defaults,
# with certManager.enabled, with slurm.configless.server and with
# munge.socketHostPath.
#
# Usage: scripts/deploy/manifests.sh [--check]
#   --check renders into a temporary directory instead and fails (exit 1)
#   when a file differs from what the chart renders (make manifests-check,
#   part of make lint).
# Helm: $HELM, else the CLI scripts/stack/stack-env.sh builds once (stack_helm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$here/../stack/stack-env.sh"

check=0
case ${1:-} in
'') ;;
--check) check=1 ;;
*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

stack_helm
chart=$top/manifests/chart
# The Kubernetes version the plain manifests are rendered for (the stack's
# newest release); the chart itself needs 1.29 or later.
kube_version=1.37.0

# The chart must lint cleanly in each way it can be set up.
lint_ok=1
for set in '' certManager.enabled=true slurm.configless.server=slurmctld.example:6817 \
	munge.socketHostPath=/run/munge; do
	if ! out=$("$HELM" lint --strict --quiet --kube-version "$kube_version" \
		${set:+--set "$set"} "$chart" 2>&1); then
		echo "manifests: helm lint --strict ${set:+--set $set }manifests/chart failed:" >&2
		printf '%s\n' "$out" >&2
		lint_ok=0
	fi
done
[ "$lint_ok" = 1 ] || exit 1

out_dir=$top/manifests
if [ "$check" = 1 ]; then
	out_dir=$(mktemp -d)
	mkdir -p "$out_dir/admission"
fi

rendered=$(mktemp)
trap 'rm -f "$rendered"; [ "$check" = 0 ] || rm -rf "$out_dir"' EXIT
"$HELM" template slurm-bridge "$chart" --namespace slurm-bridge \
	--kube-version "$kube_version" \
	--set namespace.create=true --set helmHooks=false >"$rendered"

# split FILE TEMPLATE-PATTERN INVERT DESCRIPTION...: writes FILE with the
# generated-file header and every rendered document whose "# Source:"
# template matches TEMPLATE-PATTERN (INVERT=1: does not match).
split() {
	local file=$1 pattern=$2 invert=$3; shift 3
	{
		echo "# Generated from manifests/chart by scripts/deploy/manifests.sh; do not edit."
		echo "# (helm template slurm-bridge manifests/chart --namespace slurm-bridge"
		echo "# --set namespace.create=true --set helmHooks=false)"
		local line
		for line in "$@"; do echo "#${line:+ $line}"; done
		awk -v pat="$pattern" -v inv="$invert" '
			function flush() {
				if (doc != "" && ((src ~ pat) != inv))
					printf "---\n%s", doc
				doc = ""; src = ""
			}
			/^---$/ { flush(); next }
			/^# Source: / { src = $3 }
			{ doc = doc $0 "\n" }
			END { flush() }' "$rendered"
	} >"$file"
}
tpl='^slurm-bridge/templates/'
split "$out_dir/slurm-bridge.yaml" "${tpl}(certs|webhooks)[.]yaml$" 1 \
	"" \
	"The in-cluster deployment of slurm-bridge without Helm" \
	"(docs/admins/install.md): namespace, service accounts, RBAC," \
	"configuration, both Deployments, their Services, PodDisruptionBudgets and" \
	"NetworkPolicies.  Apply it first, then admission/webhooks.yaml and" \
	"certs.yaml."
split "$out_dir/certs.yaml" "${tpl}certs[.]yaml$" 0 \
	"" \
	"The Job that makes the TLS Secrets, and its RBAC: apply once after" \
	"slurm-bridge.yaml.  To rotate, delete the Job and apply again."
split "$out_dir/admission/webhooks.yaml" "${tpl}webhooks[.]yaml$" 0 \
	"" \
	"Both webhook configurations.  caBundle stays \"\" here: the webhook fills it" \
	"in (--webhook-configuration); scripts/deploy/webhook-cert.sh and" \
	"scripts/stack/bridge-up.sh replace the line with sed."

for f in slurm-bridge.yaml certs.yaml admission/webhooks.yaml; do
	if [ "$(grep -c '^kind: ' "$out_dir/$f")" = 0 ]; then
		echo "manifests: manifests/$f would hold no object: has the chart changed its template names?" >&2
		exit 1
	fi
done

if [ "$check" = 0 ]; then
	echo "manifests: wrote manifests/slurm-bridge.yaml, manifests/certs.yaml and" \
		"manifests/admission/webhooks.yaml from manifests/chart (lint clean)"
	exit 0
fi
drift=0
for f in slurm-bridge.yaml certs.yaml admission/webhooks.yaml; do
	if [ ! -f "$top/manifests/$f" ]; then
		echo "manifests: manifests/$f is missing: run scripts/deploy/manifests.sh" >&2
		drift=1
	elif ! diff -u --label "manifests/$f" --label "rendered from manifests/chart" \
		"$top/manifests/$f" "$out_dir/$f" >"$out_dir/diff"; then
		head -n 40 "$out_dir/diff" >&2
		echo "manifests: manifests/$f differs from manifests/chart: run scripts/deploy/manifests.sh" >&2
		drift=1
	fi
done
[ "$drift" = 0 ] || exit 1
echo "manifests: the plain manifests match manifests/chart (lint clean)"
