# make bench's webhook scenario: the webhook bench, shortened.
#
# bench/run.sh sources it.  The webhook benchmark, bench/webhook/run.sh (make
# bench-webhook alone), shortened, its JSON kept as the record's result.
# BENCH_WEBHOOK=0 skips it; BENCH_WEBHOOK_S is its fixed-rate runs'
# length (default 15).
# shellcheck shell=bash disable=SC2034,SC2154 # the driver's variables

scenario_webhook() {
[ "${BENCH_WEBHOOK:-1}" != 0 ] || return 0
say "webhook: bench/webhook/run.sh"
BENCH_OUT=$WORK/webhook.json DURATION=${BENCH_WEBHOOK_S:-15} WARMUP=3 SAT_DURATION=5 \
	HANDSHAKE_DURATION=0 "$here/webhook/run.sh" >"$WORK/webhook.out" 2>&1 || true
if [ -s "$WORK/webhook.json" ]; then
	rec run --scenario webhook --system admission -j result="$WORK/webhook.json"
fi
}
