#!/usr/bin/env bash
# Makes the in-cluster TLS from one CA:
#   - the webhook's serving certificate for slurm-bridge-admission.slurm-
#     bridge.svc, in the Secret slurm-bridge-admission-tls (tls.crt, tls.key
#     and the CA as ca.crt, which the Deployment mounts); and applies
#     manifests/admission/webhooks.yaml with caBundle filled in;
#   - the scheduler's serving certificate for slurm-bridge.slurm-bridge.svc
#     (metrics, health, extender), in the Secret slurm-bridge-tls with the CA
#     as ca.crt, which the scheduler trusts for extender clients
#     (--client-ca);
#   - a client certificate for a kube-scheduler that uses the extender
#     (CN=slurm-bridge-extender-client), in the Secret
#     slurm-bridge-extender-client (tls.crt, tls.key, ca.crt): the files of
#     its extenders[].tlsConfig.  Run again to rotate: the webhook reloads the
# mounted files without a restart (the kubelet updates Secret volumes within
# about a minute).
#
# Usage: scripts/deploy/webhook-cert.sh [--days N] [--dir DIR] [--dry-run]
#   KUBECONFIG selects the cluster.  --dir keeps the CA there (default: a
#   temporary directory, removed afterwards; the CA key is then gone, and the
#   next run makes a new CA, which is fine because caBundle is rewritten).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
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
# issue NAME CN EKU [SANS]: $dir/NAME.crt and .key, signed by the CA.
issue() {
	local ext="extendedKeyUsage=$3"
	[ -n "${4:-}" ] && ext="subjectAltName=$4"$'\n'"$ext"
	openssl req -new -newkey rsa:2048 -nodes -keyout "$dir/$1.key" \
		-subj "/CN=$2" 2>/dev/null |
		openssl x509 -req -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
			-set_serial "0x$(openssl rand -hex 16)" -days "$days" -sha256 \
			-extfile <(printf '%s\n' "$ext") -out "$dir/$1.crt" 2>/dev/null
}
svc_sans() { echo "DNS:$1,DNS:$1.$NS,DNS:$1.$NS.svc,DNS:$1.$NS.svc.cluster.local"; }
issue tls "$SVC.$NS.svc" serverAuth "$(svc_sans "$SVC")"
issue scheduler "slurm-bridge.$NS.svc" serverAuth "$(svc_sans slurm-bridge)"
issue extender-client slurm-bridge-extender-client clientAuth
# (A server-side dry run cannot place the Secret in a namespace it did not
# create, so those two are checked client-side only.)
kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply "${nsdry[@]}" -f - >/dev/null
kubectl -n "$NS" create secret generic "$SECRET" --type=kubernetes.io/tls \
	--from-file=tls.crt="$dir/tls.crt" --from-file=tls.key="$dir/tls.key" \
	--from-file=ca.crt="$dir/ca.crt" \
	--dry-run=client -o yaml | kubectl apply "${nsdry[@]}" -f - >/dev/null
for pair in "slurm-bridge-tls scheduler" "slurm-bridge-extender-client extender-client"; do
	set -- $pair
	kubectl -n "$NS" create secret generic "$1" --type=kubernetes.io/tls --from-file=tls.crt="$dir/$2.crt" \
		--from-file=tls.key="$dir/$2.key" --from-file=ca.crt="$dir/ca.crt" \
		--dry-run=client -o yaml | kubectl apply "${nsdry[@]}" -f - >/dev/null
done
ca=$(base64 -w0 <"$dir/ca.crt")
sed "s|caBundle: \"\"|caBundle: $ca|" "$top/manifests/admission/webhooks.yaml" |
	kubectl apply "${dry[@]}" -f - >/dev/null
echo "webhook-cert: Secrets $NS/$SECRET, $NS/slurm-bridge-tls," \
	"$NS/slurm-bridge-extender-client and both webhook configurations updated" \
	"(certificate valid $days days)${dry:+ (dry run)}"
