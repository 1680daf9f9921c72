#!/usr/bin/env bash
# make bench-webhook: the admission webhook's latency, throughput, memory.
#
# Benchmark of the admission webhook (slurm-bridge-admission): latency,
# throughput and memory of POST /mutate and /validate, over TLS on loopback,
# as the API server calls them.
#
# What it does:
#   - starts its own ./slurm-bridge-admission on 127.0.0.1:$BENCH_PORT
#     (default 9543, else the first free one of 9550-9599; the stack's
#     instance on 9443 is left alone) with the stack's serving certificate
#     ($STACK_DIR/pki, from `make cluster-up`; waits for it to appear), and
#     stops it on exit;
#   - gives it the stack's admission.kubeconfig (it watches namespaces and
#     workload owners) and config.yaml, and creates what the pod refers to: a namespace
#     bench-webhook-<pid> and, in it, the pod's owner Job, suspended (so no
#     pod is made). The request is rewritten to that namespace and the Job's
#     uid, so every request finds its owner in the server's cache, as a
#     real one does. Both are deleted on exit;
#   - checks one request with curl against the stack CA: HTTP 200, an allowed
#     AdmissionReview with a JSON patch;
#   - with wrk (Debian package; bench/webhook/wrk-admission.lua) POSTs the
#     AdmissionReview of a GPU pod CREATE made by a Job (about 3 KB of
#     compact JSON, test/data/bench/admission-review-pod.json) on kept-alive
#     connections:
#       1. mutate-rate   a fixed RATE req/s (default 1000) for DURATION s
#                        (default 30): RATE_CONNS connections on RATE_THREADS
#                        wrk threads, paced by wrk's delay() hook;
#       2. validate-rate the same against /validate, with the pod as /mutate
#                        patched it (what the API server sends), only if the
#                        server serves /validate (200, not 404);
#       3. saturation    /mutate as fast as SAT_CONNS connections on
#                        SAT_THREADS threads go, for SAT_DURATION s;
#       4. handshake     for comparison: "Connection: close", a full TLS
#                        handshake per request (HANDSHAKE_DURATION s, 0 skips);
#     each run reports p50/p90/p99/p99.9/max latency (wrk times a request
#     from its write to its response: handshakes and pacing waits are not in
#     it), requests/s, status codes, non-2xx responses, socket errors, the
#     TLS connections wrk opened (one per connection unless the server
#     answered "Connection: close" or a socket failed: then the run measured
#     handshakes too, and says so), the server's CPU use and, when it serves
#     /metrics, how its counters moved (e.g. owner-cache lookups that waited);
#   - samples the server's VmRSS every second (/proc/PID/status) and reports
#     it at idle, and start, max and end over the fixed-rate runs (after a
#     WARMUP s warm-up, default 10; a steady set of connections), where
#     memory is "flat" when end - start < FLAT_KIB (default 1024 KiB), with
#     each run's growth over its second half beside it (a leak shows there;
#     a new set of connections and the allocator settling, in the first
#     seconds, do not); and over the whole session, whose saturation run
#     holds more connections at once. The server's owner cache follows the
#     stack's churn (other tests' namespaces and Jobs), and its memory too.
#
# Output: a table on stdout and a JSON file, $BENCH_OUT (default
# bench/results/webhook-<UTC date>.json; relative to the repository root).
# Nothing asserts speed: the target (p99 <= 2 ms at 1000 req/s) is reported
# as met or not. Errors are another matter: a run with non-2xx responses,
# socket errors, timeouts or answers that are not an allowed AdmissionReview
# is reported loudly, its wrk output and the server log are kept, and the
# script exits 1. wrk, the server and the stack share this machine's CPUs:
# each run reports how busy the machine was (busy%), since the tail
# latencies follow it.
#
# Environment: DURATION RATE RATE_THREADS RATE_CONNS SAT_DURATION SAT_THREADS
# SAT_CONNS HANDSHAKE_DURATION WARMUP BENCH_PORT BENCH_REVIEW (the request
# file) BENCH_OUT FLAT_KIB ADMISSION_BIN CERT_WAIT (s to wait for the
# certificate) STACK_DIR.
# Needs wrk, curl, jq, kubectl (scripts/dev/deps.sh, cluster-up) and the binary.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
RECORD=build/bench/record
# shellcheck source=scripts/stack/stack-env.sh
. scripts/stack/stack-env.sh

DURATION=${DURATION:-30}
RATE=${RATE:-1000}
RATE_THREADS=${RATE_THREADS:-1}
RATE_CONNS=${RATE_CONNS:-10}
SAT_DURATION=${SAT_DURATION:-10}
SAT_THREADS=${SAT_THREADS:-2}
SAT_CONNS=${SAT_CONNS:-32}
HANDSHAKE_DURATION=${HANDSHAKE_DURATION:-5}
WARMUP=${WARMUP:-10}
BENCH_PORT=${BENCH_PORT:-}
BENCH_REVIEW=${BENCH_REVIEW:-test/data/bench/admission-review-pod.json}
BENCH_OUT=${BENCH_OUT:-bench/results/webhook-$(date -u +%Y%m%dT%H%M%SZ).json}
FLAT_KIB=${FLAT_KIB:-1024}
CERT_WAIT=${CERT_WAIT:-600}
TARGET_P99_MS=2
LUA=bench/webhook/wrk-admission.lua

die() { echo "bench-webhook: $*" >&2; exit 1; }
say() { echo "bench-webhook: $*" >&2; }

for v in DURATION RATE RATE_THREADS RATE_CONNS SAT_DURATION SAT_THREADS \
    SAT_CONNS HANDSHAKE_DURATION WARMUP FLAT_KIB CERT_WAIT; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number (got '${!v}')"
done
if [ "$DURATION" -eq 0 ] || [ "$RATE" -eq 0 ] || [ "$RATE_THREADS" -eq 0 ] ||
    [ "$SAT_THREADS" -eq 0 ]; then
	die "DURATION, RATE, RATE_THREADS and SAT_THREADS must be > 0"
fi
if [ "$RATE_CONNS" -lt "$RATE_THREADS" ] || [ "$SAT_CONNS" -lt "$SAT_THREADS" ]; then
	die "wrk needs at least one connection per thread"
fi
if [ $((RATE % RATE_THREADS)) -ne 0 ]; then
	die "RATE ($RATE) must divide evenly among RATE_THREADS ($RATE_THREADS)"
fi
for t in wrk curl jq; do
	command -v "$t" >/dev/null || die "$t not found (scripts/dev/deps.sh installs it)"
done
[ -x "$ADMISSION_BIN" ] || die "$ADMISSION_BIN not built (run make)"
[ -s "$BENCH_REVIEW" ] || die "no request file $BENCH_REVIEW"
[ -f "$LUA" ] || die "no $LUA"

# jq definitions: jp_apply(PATCH) applies a JSON Patch (RFC 6902: add,
# remove, replace) to its input; for the pod that /mutate makes.
# shellcheck disable=SC2016
JQ_PATCH='
def jp_path($doc): ltrimstr("/") | split("/") | map(gsub("~1"; "/") | gsub("~0"; "~"))
    | reduce .[] as $t ([]; . as $p | ($doc | getpath($p)) as $c
	| $p + [if ($c | type) == "array"
	    then (if $t == "-" then ($c | length) else ($t | tonumber) end)
	    else $t end]);
def jp_apply($patch): reduce $patch[] as $op (.;
    . as $d | ($op.path | jp_path($d)) as $p
    | if $op.op == "remove" then delpaths([$p])
      elif $op.op == "replace" then setpath($p; $op.value)
      elif $op.op == "add" and ($p | length) > 0
	  and ($d | getpath($p[:-1]) | type) == "array" then
	setpath($p[:-1]; getpath($p[:-1]) | .[:$p[-1]] + [$op.value] + .[$p[-1]:])
      elif $op.op == "add" then setpath($p; $op.value)
      else error("unsupported JSON Patch op \($op.op)") end);'

# --- Cleanup ------------------------------------------------------------------

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-webhook.XXXXXX")
SERVER_PID=
SAMPLER_PID=
WRK_PID=
BENCH_NS=
KEEP_WORK=0

cleanup() {
	if [ -n "$WRK_PID" ]; then kill "$WRK_PID" 2>/dev/null || true; fi
	if [ -n "$SAMPLER_PID" ]; then kill "$SAMPLER_PID" 2>/dev/null || true; fi
	# It takes a few seconds: the watches end first.
	if [ -n "$SERVER_PID" ]; then stack_stop_pid slurm-bridge-admission "$SERVER_PID" 10; fi
	wait 2>/dev/null || true
	if [ -n "$BENCH_NS" ]; then
		stack_kubectl delete namespace "$BENCH_NS" --wait=false \
		    >/dev/null 2>&1 || say "could not delete namespace $BENCH_NS"
	fi
	if [ "$KEEP_WORK" = 1 ]; then
		say "wrk output and server log kept in $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- Helpers --------------------------------------------------------------------

# rss_kib, cpu_ticks: the server's resident set (KiB) and CPU time (ticks).
rss_kib() { stack_rss_kib "$SERVER_PID"; }
cpu_ticks() { stack_cpu_ticks "$SERVER_PID"; }
now() { date +%s.%N; }
# cpu_busy: busy and total jiffies of all CPUs (/proc/stat), "BUSY TOTAL".
cpu_busy() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t }' /proc/stat; }

# wrk_bg OUT ARGS...: runs wrk in the background and waits for it, so that a
# signal to this script is acted on at once (bash runs a trap only after a
# foreground command ends, and ignores SIGINT whose child did not die of it).
wrk_bg() {
	local out=$1 rc=0; shift
	wrk "$@" >"$out" 2>&1 &
	WRK_PID=$!
	wait "$WRK_PID" || rc=$?
	WRK_PID=
	return "$rc"
}

# http_code METHOD PATH [BODYFILE]: the status of one request (000: none).
http_code() {
	local args=(-sS -o /dev/null -w '%{http_code}' --max-time 5
	    --cacert "$CA_CERT" -X "$1")
	if [ $# -ge 3 ]; then
		args+=(-H 'Content-Type: application/json' --data-binary "@$3")
	fi
	curl "${args[@]}" "$BASE_URL$2" 2>/dev/null || true
}

# post_review PATH BODYFILE OUTFILE: POSTs an AdmissionReview; fails unless
# the answer is HTTP 200 with an allowed AdmissionReview for the same uid.
post_review() {
	local code uid
	uid=$(jq -r .request.uid "$2")
	code=$(curl -sS -o "$3" -w '%{http_code}' --max-time 5 \
	    --cacert "$CA_CERT" -H 'Content-Type: application/json' \
	    --data-binary "@$2" "$BASE_URL$1") || die "POST $1 failed"
	[ "$code" = 200 ] || die "POST $1 answered HTTP $code: $(head -c 300 "$3")"
	jq -e --arg uid "$uid" '.kind == "AdmissionReview" and
	    .response.uid == $uid and .response.allowed == true' "$3" >/dev/null ||
		die "POST $1: not an allowed AdmissionReview: $(head -c 400 "$3")"
}

# metrics_text: the server's /metrics samples, "name{labels}<tab>value" a
# line (histogram buckets left out; nothing when it serves none), which
# record webhook-run reads.
metrics_text() {
	curl -sS --max-time 5 --cacert "$CA_CERT" "$BASE_URL/metrics" 2>/dev/null |
	    awk '!/^#/ && !/_bucket/ && NF >= 2 { v = $NF; $NF = ""; sub(/ $/, ""); print $0 "\t" v }' || true
}

# --- Certificate, port, cluster objects, server --------------------------------

if [ ! -s "$ADMISSION_CERT" ] || [ ! -s "$ADMISSION_KEY" ] || [ ! -s "$CA_CERT" ]; then
	say "waiting up to ${CERT_WAIT}s for $ADMISSION_CERT (make cluster-up)"
	stack_wait "the admission certificate" "$CERT_WAIT" \
	    test -s "$ADMISSION_CERT" -a -s "$ADMISSION_KEY" -a -s "$CA_CERT" ||
		die "no serving certificate in $PKI_DIR"
	sleep 1		# the key and CA are written next to it
fi

# A port of our own: BENCH_PORT, else 9543, else the first free one of
# 9550-9599 (9544 is test/e2e/t_86_webhook_tls.sh's).
port_busy() { [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }
if [ -n "$BENCH_PORT" ]; then
	[[ $BENCH_PORT =~ ^[0-9]+$ ]] || die "BENCH_PORT must be a port number"
	! port_busy "$BENCH_PORT" || die "port $BENCH_PORT is in use"
else
	for BENCH_PORT in 9543 {9550..9599} none; do
		[ "$BENCH_PORT" = none ] && die "no free port (set BENCH_PORT)"
		port_busy "$BENCH_PORT" || break
	done
fi
LISTEN=127.0.0.1:$BENCH_PORT
BASE_URL=https://$LISTEN

# The API server sends compact JSON; so do we.
BODY=$WORK/mutate.json
jq -c . "$BENCH_REVIEW" >"$BODY" || die "$BENCH_REVIEW is not JSON"

# The server runs with the webhook's own read-only identity and the stack's
# config (GRES type and topology tables), as make bridge-up runs it.
if [ -n "$ADMISSION_KUBECONFIG" ]; then
	# The server looks owners and namespaces up in its watch cache and
	# waits a while for one it lacks: make them exist, as they would.
	command -v kubectl >/dev/null || die "kubectl not found (make cluster-up)"
	stack_wait "the API server (make cluster-up)" 120 \
	    stack_kubectl get --raw /readyz || die "the stack's API server is not up"
	BENCH_NS=bench-webhook-$$
	stack_kubectl create namespace "$BENCH_NS" >/dev/null
	jq --arg ns "$BENCH_NS" '.request.object as $pod
	    | ($pod.metadata.ownerReferences[0]) as $ref
	    | if $ref.kind != "Job" then error("the pod'"'"'s owner must be a Job") else . end
	    | {apiVersion: "batch/v1", kind: "Job",
	       metadata: {name: $ref.name, namespace: $ns,
			  labels: ($pod.metadata.labels | with_entries(select(.key
			      | startswith("app.kubernetes.io/"))))},
	       spec: {suspend: true, completionMode: "Indexed", completions: 4,
		      parallelism: 4,
		      template: {spec: {restartPolicy: "Never",
			  containers: [$pod.spec.containers[0]
			      | {name, image, command, args, resources}]}}}}' \
	    "$BODY" | stack_kubectl apply -f - >/dev/null
	job=$(jq -r '.request.object.metadata.ownerReferences[0].name' "$BODY")
	job_uid=$(stack_kubectl -n "$BENCH_NS" get job "$job" -o jsonpath='{.metadata.uid}')
	[ -n "$job_uid" ] || die "could not create Job $BENCH_NS/$job"
	jq -c --arg ns "$BENCH_NS" --arg uid "$job_uid" '
	    .request.namespace = $ns
	    | .request.object.metadata.namespace = $ns
	    | .request.object.metadata.ownerReferences[0].uid = $uid
	    | .request.object.metadata.labels |= with_entries(
		if .key | test("controller-uid$") then .value = $uid else . end)' \
	    "$BODY" >"$WORK/body.tmp" && mv "$WORK/body.tmp" "$BODY"
	say "created namespace $BENCH_NS and suspended Job $job (uid $job_uid)"
fi
BODY_BYTES=$(wc -c <"$BODY")

# Ready once /readyz says the caches are synced.
stack_admission_start SERVER_PID "$WORK/admission.log" "$BENCH_PORT" ||
	die "the server did not start on $LISTEN"
SERVER_ARGS=("${ADMISSION_ARGS[@]}")
say "started $ADMISSION_BIN ${SERVER_ARGS[*]} (pid $SERVER_PID)"
IDLE_RSS=$(rss_kib)

# One request checked in full (the CA verifies the certificate); its patch
# applied gives the pod that /validate sees.
post_review /mutate "$BODY" "$WORK/check.json"
jq -e '.response.patchType == "JSONPatch"' "$WORK/check.json" >/dev/null ||
	die "POST /mutate: no JSON patch for a pod to bridge: $(head -c 400 "$WORK/check.json")"
VBODY=$WORK/validate.json
jq -r .response.patch "$WORK/check.json" | base64 -d >"$WORK/patch.json"
jq -c --slurpfile patch "$WORK/patch.json" \
    "$JQ_PATCH"' .request.object |= jp_apply($patch[0])' "$BODY" >"$VBODY" 2>"$WORK/jq.err" || die "cannot apply the /mutate patch: $(cat "$WORK/jq.err")"
VALIDATE_CODE=$(http_code POST /validate "$VBODY")
if [ "$VALIDATE_CODE" = 200 ]; then
	post_review /validate "$VBODY" "$WORK/check-validate.json"
fi
HAS_METRICS=0
[ "$(http_code GET /metrics)" = 200 ] && HAS_METRICS=1

# --- Memory sampler ---------------------------------------------------------------

echo idle >"$WORK/phase"
(
	while kill -0 "$SERVER_PID" 2>/dev/null; do
		r=$(awk '/^VmRSS:/ { print $2 }' "/proc/$SERVER_PID/status" 2>/dev/null) || break
		[ -n "$r" ] && printf '%s %s %s\n' "$(date +%s.%N)" "$(cat "$WORK/phase")" "$r"
		sleep 1
	done >"$WORK/rss.log"
) &
SAMPLER_PID=$!

# --- Runs ---------------------------------------------------------------------------

RUNS=()		# names, in order; $WORK/run-NAME.json holds each
SKIPPED=()
ERRORS=0
TICKS=$(getconf CLK_TCK)

# run_wrk NAME PATH BODYFILE MODE THREADS CONNS DURATION RATE_PER_THREAD CLOSE
run_wrk() {
	local name=$1 path=$2 body=$3 mode=$4 threads=$5 conns=$6 dur=$7
	local rate=$8 close=$9
	local out line t0 t1 c0 c1 r0 r1 rmax rhalf bad env b0 b1 m0=$WORK/m0.txt m1=$WORK/m1.txt
	local -a cmd
	cmd=(-t"$threads" -c"$conns" -d"${dur}s" --timeout 2s --latency
	    -s "$LUA" "$BASE_URL$path")
	env="BENCH_BODY=$body BENCH_RATE=$rate"
	[ "$close" = 1 ] && env+=" BENCH_CLOSE=1"
	: >"$m0"; : >"$m1"
	[ "$HAS_METRICS" = 1 ] && metrics_text >"$m0"
	echo "$name" >"$WORK/phase"
	r0=$(rss_kib); c0=$(cpu_ticks); b0=$(cpu_busy); t0=$(now)
	out=$WORK/wrk-$name.txt
	BENCH_BODY=$body BENCH_RATE=$rate BENCH_CLOSE=$close wrk_bg "$out" "${cmd[@]}" ||
		{ KEEP_WORK=1; cat "$out" >&2; die "wrk failed in run $name"; }
	t1=$(now); r1=$(rss_kib); c1=$(cpu_ticks); b1=$(cpu_busy)
	echo between >"$WORK/phase"
	[ "$HAS_METRICS" = 1 ] && metrics_text >"$m1"
	line=$(sed -n 's/^BENCH_RESULT //p' "$out")
	[ -n "$line" ] || { KEEP_WORK=1; cat "$out" >&2; die "no result line from wrk in run $name"; }
	rmax=$(awk -v p="$name" -v a="$r0" -v b="$r1" '
	    BEGIN { m = a > b ? a : b } $2 == p && $3 > m { m = $3 } END { print m }' \
	    "$WORK/rss.log")
	# Growth over the run's second half, once connections and allocator
	# have settled: a leak shows here (10 bytes a request at 1000 req/s
	# is 600 KiB a minute).
	rhalf=$(awk -v p="$name" -v b="$r1" '$2 == p { v[n++] = $3 }
	    END { print n < 2 ? 0 : b - v[int(n / 2)] }' "$WORK/rss.log")
	echo "$line" >"$WORK/result-$name.json"
	"$RECORD" webhook-run --name "$name" --path "$path" --mode "$mode" \
	    --threads "$threads" --connections "$conns" --rate "$((rate * threads))" \
	    --close "$close" --command "$env wrk ${cmd[*]}" \
	    --machine "$(awk -v a="$b0" -v b="$b1" 'BEGIN { split(a, x, " ");
		split(b, y, " "); printf "%.1f", 100 * (y[1] - x[1]) / (y[2] - x[2]) }')" \
	    --load "$(cut -d' ' -f1-3 /proc/loadavg)" \
	    --cpu "$(awk -v a="$c0" -v b="$c1" -v t0="$t0" -v t1="$t1" -v hz="$TICKS" \
		'BEGIN { printf "%.1f", 100 * (b - a) / hz / (t1 - t0) }')" \
	    --m0 "$m0" --m1 "$m1" --r0 "$r0" --r1 "$r1" --rmax "$rmax" \
	    --rhalf "$rhalf" --result "$WORK/result-$name.json" >"$WORK/run-$name.json" ||
		die "record webhook-run failed in run $name"
	# Errors: anything but an allowed 200 AdmissionReview, and lost requests.
	# (wrk's errors.status, codes > 399, are among the non-2xx.)
	bad=$(jq '.non_2xx + .not_allowed + .errors.connect + .errors.read +
	    .errors.write + .errors.timeout' "$WORK/run-$name.json")
	if [ "$bad" -gt 0 ]; then
		ERRORS=$((ERRORS + bad))
		KEEP_WORK=1
		{
			echo
			echo "!!! ERRORS in run $name: $bad bad responses or socket errors"
			jq -c '{statuses, non_2xx, not_allowed, errors}' "$WORK/run-$name.json"
			echo "!!! wrk output: $out"
			echo
		} >&2
	fi
	if [ "$close" = 0 ] && [ "$(jq .conn_close "$WORK/run-$name.json")" -gt 0 ]; then
		say "WARNING: run $name: the server closed kept-alive connections; part of it measured TLS handshakes"
	fi
	if [ "$(jq .owner_waits "$WORK/run-$name.json")" -gt 0 ]; then
		say "WARNING: run $name: requests waited for the owner cache (the slow path)"
	fi
	RUNS+=("$name")
}

rate_per_thread=$((RATE / RATE_THREADS))
if [ "$WARMUP" -gt 0 ]; then
	say "warm-up: ${WARMUP}s at $RATE req/s"
	echo warmup >"$WORK/phase"
	BENCH_BODY=$BODY BENCH_RATE=$rate_per_thread wrk_bg "$WORK/wrk-warmup.txt" \
	    -t"$RATE_THREADS" -c"$RATE_CONNS" -d"${WARMUP}s" -s "$LUA" "$BASE_URL/mutate" ||
		die "wrk failed in the warm-up"
fi
START_RSS=$(rss_kib)

say "mutate-rate: $RATE req/s for ${DURATION}s"
run_wrk mutate-rate /mutate "$BODY" fixed-rate "$RATE_THREADS" "$RATE_CONNS" \
    "$DURATION" "$rate_per_thread" 0
if [ "$VALIDATE_CODE" = 200 ]; then
	say "validate-rate: $RATE req/s for ${DURATION}s"
	run_wrk validate-rate /validate "$VBODY" fixed-rate "$RATE_THREADS" \
	    "$RATE_CONNS" "$DURATION" "$rate_per_thread" 0
else
	SKIPPED+=("validate-rate: POST /validate answered HTTP $VALIDATE_CODE")
fi
if [ "$SAT_DURATION" -gt 0 ]; then
	say "saturation: $SAT_THREADS threads, $SAT_CONNS connections for ${SAT_DURATION}s"
	run_wrk saturation /mutate "$BODY" saturation "$SAT_THREADS" "$SAT_CONNS" \
	    "$SAT_DURATION" 0 0
fi
if [ "$HANDSHAKE_DURATION" -gt 0 ]; then
	say "handshake: a new TLS connection per request for ${HANDSHAKE_DURATION}s"
	run_wrk handshake /mutate "$BODY" new-connection-per-request 1 4 \
	    "$HANDSHAKE_DURATION" 0 1
fi
END_RSS=$(rss_kib)
kill "$SAMPLER_PID" 2>/dev/null || true
wait "$SAMPLER_PID" 2>/dev/null || true
SAMPLER_PID=

# --- Report -------------------------------------------------------------------------

runs_json=$(for n in "${RUNS[@]}"; do cat "$WORK/run-$n.json"; done | jq -s .)
# Memory: "flat" is judged over the sustained fixed-rate runs, where the
# number of connections is steady; the whole session (with the saturation's
# extra connections and the handshake churn) is reported beside it.
MAX_RSS=$(awk -v m="$END_RSS" '$2 != "idle" && $2 != "warmup" && $3 > m { m = $3 } END { print m }' "$WORK/rss.log")
read -r SUS_START SUS_MAX SUS_END < <(jq -r 'map(select(.mode == "fixed-rate"))
    | "\(.[0].rss_kib.start) \(map(.rss_kib.max) | max) \(.[-1].rss_kib.end)"' <<<"$runs_json")
SUS_GROWTH=$((SUS_END - SUS_START))
FLAT=false
[ "$SUS_GROWTH" -lt "$FLAT_KIB" ] && FLAT=true
git_commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
git_dirty=false
[ -n "$(git status --porcelain 2>/dev/null)" ] && git_dirty=true

mkdir -p "$(dirname "$BENCH_OUT")"
for n in "${RUNS[@]}"; do cat "$WORK/run-$n.json"; done >"$WORK/runs.jsonl"
printf '%s\n' "${SKIPPED[@]+"${SKIPPED[@]}"}" >"$WORK/skipped.txt"
"$RECORD" webhook-file --date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --host "$(hostname)" \
    --cpus "$(nproc)" --kernel "$(uname -r)" --commit "$git_commit" --dirty "$git_dirty" \
    --wrk "$(wrk --version 2>&1 | head -n1 || true)" --binary "$ADMISSION_BIN" \
    --args "${SERVER_ARGS[*]}" --kubeconfig "$ADMISSION_KUBECONFIG" --ns "$BENCH_NS" \
    --review "$BENCH_REVIEW" --body-bytes "$BODY_BYTES" --vbody-bytes "$(wc -c <"$VBODY")" \
    --rate "$RATE" --p99 "$TARGET_P99_MS" --runs "$WORK/runs.jsonl" \
    --skipped "$WORK/skipped.txt" --idle "$IDLE_RSS" --start "$START_RSS" --max "$MAX_RSS" \
    --end "$END_RSS" --s-start "$SUS_START" --s-max "$SUS_MAX" --s-end "$SUS_END" \
    --flat "$FLAT" --flat-kib "$FLAT_KIB" --samples "$WORK/rss.log" --errors "$ERRORS" \
    >"$BENCH_OUT" || die "record webhook-file failed"

echo
echo "Webhook benchmark: $ADMISSION_BIN on $LISTEN over TLS, kept-alive connections,"
echo "$(nproc) CPUs shared with wrk; request $BODY_BYTES bytes ($BENCH_REVIEW); latency in ms"
echo
jq -r '.runs[] | [.name, (.target_rps // "max" | tostring),
    (.rps | tostring), .latency_ms.p50, .latency_ms.p90, .latency_ms.p99,
    .latency_ms["p99.9"], .latency_ms.max, (.requests | tostring),
    (.non_2xx | tostring),
    ((.errors.connect + .errors.read + .errors.write + .errors.timeout + .not_allowed) | tostring),
    (.tls_connections | tostring), (.server_cpu_pct | tostring),
    (.machine_cpu_busy_pct | tostring)] | @tsv' \
    "$BENCH_OUT" |
	awk -F'\t' 'BEGIN { f = "%-14s %6s %8s %7s %7s %7s %7s %7s %8s %6s %6s %6s %5s %5s\n"
	    printf f, "run", "target", "req/s", "p50", "p90", "p99", "p99.9", "max",
	    "requests", "non2xx", "errors", "conns", "cpu%", "busy%" }
	    { printf f, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14 }'
for s in "${SKIPPED[@]+"${SKIPPED[@]}"}"; do echo "skipped $s"; done
echo "(conns: TLS connections wrk opened; cpu%: the server's, 100 = one CPU;"
echo " busy%: the whole machine's, 100 = all CPUs, wrk and the stack included)"
echo
jq -r --argjson p99 "$TARGET_P99_MS" '.runs[] | select(.mode == "fixed-rate") |
    "\(.name): p99 \(.latency_ms.p99) ms at \(.rps) req/s (target: p99 <= \($p99) ms at \(.target_rps) req/s): " +
    (if (.latency_ms.p99 | tonumber) <= $p99 and .rps >= 0.98 * .target_rps
     then "met" else "NOT met" end)' "$BENCH_OUT"
printf 'memory (VmRSS, KiB): idle %d; at %d req/s: start %d, max %d, end %d (%+d): %s\n' \
    "$IDLE_RSS" "$RATE" "$SUS_START" "$SUS_MAX" "$SUS_END" "$SUS_GROWTH" \
    "$([ "$FLAT" = true ] && echo flat || echo "NOT flat (>= $FLAT_KIB KiB growth)")"
jq -r '.runs[] | select(.mode == "fixed-rate")
    | "  \(.name): \(.rss_kib.start) -> \(.rss_kib.end), \(.rss_kib.second_half_growth) in its second half"' \
    "$BENCH_OUT"
printf '  whole session after warm-up: start %d, max %d, end %d (%+d)\n' \
    "$START_RSS" "$MAX_RSS" "$END_RSS" "$((END_RSS - START_RSS))"
jq -r '.runs | select(.[0].cache_objects.start != null)
    | "  owner/namespace cache: \(.[0].cache_objects.start) objects at the start, \(.[-1].cache_objects.end) at the end"' \
    "$BENCH_OUT"
echo "results: $BENCH_OUT"
if [ "$ERRORS" -gt 0 ]; then
	echo
	echo "!!! $ERRORS ERRORS: requests failed or were not allowed AdmissionReviews (see above)"
	exit 1
fi
