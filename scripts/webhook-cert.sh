#!/usr/bin/env bash
# Makes the in-cluster webhook's TLS: a CA and a serving certificate for the
# Service slurm-bridge-admission.slurm-bridge.svc, stored in the Secret
# slurm-bridge-admission-tls, and applies manifests/admission/webhooks.yaml
# with caBundle filled in.  Run again to rotate: the webhook reloads the
# mounted files without a restart (the kubelet updates Secret volumes within
# about a minute).
#
# Usage: scripts/webhook-cert.sh [--days N] [--dir DIR] [--dry-run]
#   KUBECONFIG selects the cluster.  --dir keeps the CA there (default: a
#   temporary directory, removed afterwards; the CA key is then gone, and the
#   next run makes a new CA, which is fine because caBundle is rewritten).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
NS=slurm-bridge
SVC=slurm-bridge-admission
SECRET=slurm-bridge-admission-tls
days=365 dir='' dry=() nsdry=()
while [ $# -gt 0 ]; do
	case $1 in
	--days) days=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	--dry-run) dry=(--dry-run=server); nsdry=(--dry-run=client); shift ;;
	*) echo "usage: $0 [--days N] [--dir DIR] [--dry-run]" >&2; exit 2 ;;
	esac
done
if [ -z "$dir" ]; then
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir"
umask 077
if [ ! -s "$dir/ca.key" ]; then
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/ca.key" -out "$dir/ca.crt" \
		-days "$((days * 2))" -subj "/CN=slurm-bridge-admission-ca" 2>/dev/null
fi
sans="DNS:$SVC,DNS:$SVC.$NS,DNS:$SVC.$NS.svc,DNS:$SVC.$NS.svc.cluster.local"
openssl req -new -newkey rsa:2048 -nodes -keyout "$dir/tls.key" \
	-subj "/CN=$SVC.$NS.svc" 2>/dev/null |
	openssl x509 -req -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
		-set_serial "0x$(openssl rand -hex 16)" -days "$days" -sha256 \
		-extfile <(printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$sans") \
		-out "$dir/tls.crt" 2>/dev/null
# (A server-side dry run cannot place the Secret in a namespace it did not
# create, so those two are checked client-side only.)
kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply "${nsdry[@]}" -f - >/dev/null
kubectl -n "$NS" create secret tls "$SECRET" --cert "$dir/tls.crt" --key "$dir/tls.key" \
	--dry-run=client -o yaml | kubectl apply "${nsdry[@]}" -f - >/dev/null
ca=$(base64 -w0 <"$dir/ca.crt")
sed "s|caBundle: \"\"|caBundle: $ca|" "$top/manifests/admission/webhooks.yaml" |
	kubectl apply "${dry[@]}" -f - >/dev/null
echo "webhook-cert: Secret $NS/$SECRET and both webhook configurations updated" \
	"(certificate valid $days days)${dry:+ (dry run)}"
