# shellcheck shell=bash
# The webhook's TLS: a rotated certificate is served without a restart, a
# key that does not match is not, and /metrics parses as Prometheus text.
# Runs a second webhook on its own port with its own certificate files.

TLS_PORT=9544
TLS_DIR=$(mktemp -d)

# tls_pair NAME: a key and a certificate for 127.0.0.1 signed by the stack CA.
tls_pair() {
	openssl req -new -newkey rsa:2048 -nodes -keyout "$TLS_DIR/$1.key" \
		-subj "/CN=slurm-bridge-admission-$1" 2>/dev/null |
		openssl x509 -req -CA "$CA_CERT" -CAkey "$PKI_DIR/ca.key" \
			-set_serial "0x$(openssl rand -hex 8)" -days 2 -sha256 \
			-extfile <(printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n') \
			-out "$TLS_DIR/$1.crt" 2>/dev/null
}
# tls_install NAME: puts the pair in place the way a Secret update does,
# each file replaced by a rename.
tls_install() {
	cp "$TLS_DIR/$1.key" "$TLS_DIR/tls.key.new" && mv "$TLS_DIR/tls.key.new" "$TLS_DIR/tls.key"
	cp "$TLS_DIR/$1.crt" "$TLS_DIR/tls.crt.new" && mv "$TLS_DIR/tls.crt.new" "$TLS_DIR/tls.crt"
}
# The serial of the certificate the webhook serves, verified against the CA.
served_serial() {
	openssl s_client -connect "127.0.0.1:$TLS_PORT" -CAfile "$CA_CERT" \
		-verify_return_error </dev/null 2>/dev/null | openssl x509 -noout -serial 2>/dev/null
}
serial_of() { openssl x509 -noout -serial -in "$TLS_DIR/$1.crt"; }
tls_metric() {
	curl -s --cacert "$CA_CERT" "https://127.0.0.1:$TLS_PORT/metrics" |
		sed -n "s/^slurm_bridge_admission_tls_reloads_total{result=\"$1\"} //p"
}

scenario "webhook TLS: certificate rotation without a restart"
tls_pair one; tls_pair two; tls_pair three
tls_install one
"${STACK_EXEC[@]}" "$ADMISSION_BIN" --listen "127.0.0.1:$TLS_PORT" \
	--tls-cert "$TLS_DIR/tls.crt" --tls-key "$TLS_DIR/tls.key" \
	--config "$BRIDGE_CONFIG" --kubeconfig "$ADMISSION_KUBECONFIG" \
	>"$TLS_DIR/admission.log" 2>&1 &
tls_pid=$!
healthy() { curl -sf --cacert "$CA_CERT" "https://127.0.0.1:$TLS_PORT/healthz" >/dev/null; }
check "a second webhook starts" wait_for 10 healthy
check_eq "it serves the first certificate" "$(served_serial)" "$(serial_of one)"
tls_install two
is_two() { [ "$(served_serial)" = "$(serial_of two)" ]; }
check "after the files change it serves the second, same process" wait_for 5 is_two
check "the process is the same" kill -0 "$tls_pid"
# A key from another pair: the webhook keeps the last good pair.
cp "$TLS_DIR/three.key" "$TLS_DIR/tls.key.new" && mv "$TLS_DIR/tls.key.new" "$TLS_DIR/tls.key"
reload_failed() { [ "$(tls_metric error)" -ge 1 ] 2>/dev/null; }
check "a key that does not match the certificate is refused" wait_for 5 reload_failed
check_eq "and the second certificate stays in service" "$(served_serial)" "$(serial_of two)"
check_match "the log says why" "$(cat "$TLS_DIR/admission.log")" 'keeping the previous certificate: .*does not belong to'
tls_install three
is_three() { [ "$(served_serial)" = "$(serial_of three)" ]; }
check "a matching pair is picked up again" wait_for 5 is_three
check_eq "two reloads succeeded" "$(tls_metric ok)" 2
out=$(curl -s --cacert "$CA_CERT" "https://127.0.0.1:$TLS_PORT/metrics" |
	"$E2E_DIR/../tools/check-metrics.py" slurm_bridge_admission_requests \
	slurm_bridge_admission_request_duration_seconds slurm_bridge_admission_cache_objects)
check_match "/metrics is valid Prometheus text" "$out" '^metrics: [0-9]+ families'
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$CA_CERT" -X POST \
	-H 'Content-Type: application/json' --data-binary '{"kind":' "https://127.0.0.1:$TLS_PORT/validate")
check_eq "a malformed review gets a 400" "$code" 400
check "and the webhook stays up" healthy
kill "$tls_pid" 2>/dev/null; wait "$tls_pid" 2>/dev/null
rm -rf "$TLS_DIR"
