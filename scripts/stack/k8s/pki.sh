#!/usr/bin/env bash
# The local stack's PKI and kubeconfigs, made once under $STACK_DIR/pki.
#
# Creates (once) the PKI and kubeconfigs of the local Kubernetes stack under
# $STACK_DIR/pki, with openssl. Existing files are reused, so certificates stay
# stable across cluster-down/up; delete $STACK_DIR/pki (or --purge) to renew.
#
#   ca.crt/key                  cluster CA (also the webhook caBundle)
#   apiserver.crt/key           kube-apiserver serving cert
#   admin.crt/key               CN=admin, O=system:masters      -> $STACK_DIR/kubeconfig
#   kube-controller-manager.*   CN=system:kube-controller-manager
#   kwok.*                      CN=system:kwok, O=system:masters
#   slurm-bridge.*              CN=system:slurm-bridge, O=system:masters -> bridge.kubeconfig
#   admission-client.*          CN=system:slurm-bridge-admission -> admission.kubeconfig
#   admission.crt/key           serving cert of our admission webhook (127.0.0.1, localhost)
#   sa.key/sa.pub               service-account token signing key pair
#   kube-scheduler.*            CN=system:kube-scheduler         (make node-up)
#   kubelet.*                   CN=system:node:$SYSTEM_NODE, O=system:nodes (make node-up)
#   apiserver-kubelet-client.*  the API server's client cert to the kubelet
set -euo pipefail
# shellcheck source=scripts/stack/stack-env.sh
. "$(dirname "$0")/../stack-env.sh"

DAYS=3650
log() { echo "pki: $*"; }

# new_key FILE: RSA 2048 (what every client, including libcurl, accepts).
new_key() { (umask 077; openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1" 2>/dev/null); }

make_ca() {
	if [ -s "$PKI_DIR/ca.key" ] && [ -s "$PKI_DIR/ca.crt" ]; then return 0; fi
	# A new CA invalidates every certificate signed by the old one.
	rm -f "$PKI_DIR"/*.crt "$PKI_DIR"/*.key "$PKI_DIR"/*.pub
	new_key "$PKI_DIR/ca.key"
	openssl req -x509 -new -key "$PKI_DIR/ca.key" -sha256 -days "$DAYS" \
		-subj "/CN=slurm-bridge-stack-ca" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
		-out "$PKI_DIR/ca.crt"
	log "created CA"
}

# make_cert NAME SUBJECT EKU [SANS]: NAME.crt/NAME.key signed by the CA.
# EKU is serverAuth or clientAuth; SANS like "DNS:localhost,IP:127.0.0.1".
make_cert() {
	local name=$1 subj=$2 eku=$3 sans=${4:-}
	[ -s "$PKI_DIR/$name.crt" ] && [ -s "$PKI_DIR/$name.key" ] && return 0
	new_key "$PKI_DIR/$name.key"
	local ext
	ext="basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=$eku"
	[ -n "$sans" ] && ext+=$'\n'"subjectAltName=$sans"
	openssl req -new -key "$PKI_DIR/$name.key" -subj "$subj" |
		openssl x509 -req -CA "$PKI_DIR/ca.crt" -CAkey "$PKI_DIR/ca.key" -set_serial "0x$(openssl rand -hex 16)" \
			-sha256 -days "$DAYS" -extfile <(echo "$ext") -out "$PKI_DIR/$name.crt" 2>/dev/null
	log "created $name.crt ($subj)"
}

make_sa_keys() {
	[ -s "$PKI_DIR/sa.key" ] && [ -s "$PKI_DIR/sa.pub" ] && return 0
	new_key "$PKI_DIR/sa.key"
	openssl pkey -in "$PKI_DIR/sa.key" -pubout -out "$PKI_DIR/sa.pub"
	log "created service-account key pair"
}

# write_kubeconfig FILE USER: references the cert files by path.
write_kubeconfig() {
	local file=$1 user=$2
	cat >"$file.new" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: slurm-bridge-stack
  cluster:
    server: $APISERVER_URL
    certificate-authority: $PKI_DIR/ca.crt
users:
- name: $user
  user:
    client-certificate: $PKI_DIR/$user.crt
    client-key: $PKI_DIR/$user.key
contexts:
- name: $user@slurm-bridge-stack
  context:
    cluster: slurm-bridge-stack
    user: $user
current-context: $user@slurm-bridge-stack
EOF
	chmod 0600 "$file.new"
	mv "$file.new" "$file"
}

main() {
	mkdir -p "$PKI_DIR"
	chmod 0755 "$PKI_DIR"   # keys are 0600 themselves
	make_ca
	make_cert apiserver "/CN=kube-apiserver" serverAuth \
		"IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
	make_cert admin "/O=system:masters/CN=admin" clientAuth
	make_cert kube-controller-manager "/CN=system:kube-controller-manager" clientAuth
	make_cert kwok "/O=system:masters/CN=system:kwok" clientAuth
	make_cert slurm-bridge "/O=system:masters/CN=system:slurm-bridge" clientAuth
	make_cert admission "/CN=slurm-bridge-admission" serverAuth "IP:127.0.0.1,DNS:localhost"
	# The webhook's own client identity: no group, so only the RBAC in
	# the chart (manifests/chart/templates/rbac-admission.yaml: read-only
	# watches) applies to it.
	make_cert admission-client "/CN=system:slurm-bridge-admission" clientAuth
	make_sa_keys
	# make node-up: the real node's kubelet (the Node authorizer knows it
	# by its name) and the kube-scheduler that places the system pods.
	make_cert kube-scheduler "/CN=system:kube-scheduler" clientAuth
	make_cert kubelet "/O=system:nodes/CN=system:node:$SYSTEM_NODE" clientAuth
	# The API server's identity to a kubelet (logs, exec, port-forward).
	make_cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
	# Certificates are public; keys stay 0600.
	chmod 0644 "$PKI_DIR"/*.crt "$PKI_DIR/sa.pub"

	write_kubeconfig "$KUBECONFIG" admin
	write_kubeconfig "$BRIDGE_KUBECONFIG" slurm-bridge
	write_kubeconfig "$ADMISSION_KUBECONFIG" admission-client
	write_kubeconfig "$STACK_DIR/kube-controller-manager.kubeconfig" kube-controller-manager
	write_kubeconfig "$STACK_DIR/kwok.kubeconfig" kwok
	write_kubeconfig "$STACK_DIR/kube-scheduler.kubeconfig" kube-scheduler
	write_kubeconfig "$STACK_DIR/kubelet.kubeconfig" kubelet
}

main "$@"
