#!/usr/bin/env bash
# Bad-input test of the admission webhook (reliability, issue 8): every case
# of test/data/bad/cases.tsv must get a clear answer, the webhook must stay
# up and its memory flat; and of both daemons' HTTP limits (issue 30).
#
#   test/bad/run.sh [--no-kube-writes] [--no-extender] [--api | --api-only] [--passes N]
#
# The webhook part (the default):
#   - starts its own ./slurm-bridge-admission on 127.0.0.1:9643 (BAD_PORT),
#     as bench/webhook/run.sh does: the stack's serving certificate
#     ($STACK_DIR/pki), its admission.kubeconfig (the webhook watches
#     namespaces and workload owners, read-only) and config.yaml; waits for
#     /readyz; stops it on exit. The stack's own webhook (9443) is left alone;
#   - makes a namespace bad-input-<pid> annotated
#     scheduler.slinky.slurm.net/allowed-accounts: research, for the account
#     cases, and deletes it on exit (--no-kube-writes: no namespace, and those
#     cases are skipped);
#   - writes the big cases with test/bad/gen.sh into a work directory;
#   - sends every case of the manifest with curl over TLS (--cacert: the stack
#     CA) to /validate and /mutate as its row says, and checks the HTTP
#     status, the AdmissionReview (uid, allowed, status.code 403) and that the
#     message contains the row's substring; each answer must come within 5 s
#     (the webhooks' timeoutSeconds). The whole corpus is sent PASSES times
#     (default 20); pass 1 prints every check, later passes only what changed;
#   - runs the slow clients (test/bad/slow.py), 5 of each slow case at once
#     (30), checks that the server closes each slow-* one about 10 s after its
#     last byte and each trickle-* one (a byte a second, never stopping: an
#     idle timeout never fires) 10 s after it connected (HTTPD_READ_S), that
#     the webhook's slurm_bridge_admission_http_refused_total{reason=
#     "deadline"} counted them, and that a normal request is answered
#     correctly in under 1 s meanwhile;
#   - the HTTP limits (the webhook runs with --max-connections-per-client
#     BAD_PER_CLIENT, default 40): that many connections from 127.0.0.1 are
#     held and one more is closed at once, while 127.0.0.2 is served; the
#     headers of a POST with a Content-Length over 3 MiB get 413 before any
#     body byte is sent, and one of exactly 3 MiB is waited for;
#   - samples the instance's VmRSS before pass 1 and after every pass, and
#     fails when it grew by more than 2 MiB (BAD_RSS_LIMIT_KIB) between pass 5
#     and the last pass. The instance runs with one glibc malloc arena and
#     fixed mmap/trim thresholds (BAD_MALLOC_TUNABLES; empty: glibc's
#     defaults), so that VmRSS follows what is live rather than which of the
#     4 server threads got which big body: with the defaults it swings by
#     10 MiB or more from pass to pass (about 80-100 MiB), leak or not; with
#     these settings it moves by a few KiB once warm.
#
# The extender part (after the webhook part; --no-extender skips it): the
# scheduler's extender API, on private ./slurm-bridge processes on
# 127.0.0.1:BAD_EXT_PORT (default 9644). They run with --leader-elect and
# the webhook's read-only admission.kubeconfig, which may not touch a Lease:
# they stay followers, so they never watch, schedule or call Slurm, and
# they answer an extender call that passes the checks with "not ready".
#   - without --client-ca (plain HTTP): /filter, /prioritize and /bind get
#     403 naming --client-ca; /healthz is 200;
#   - with --tls-cert, --tls-key (the stack's serving pair) and --client-ca
#     (the stack CA), --client-name left at its default
#     (slurm-bridge-extender-client): no client certificate, the stack's
#     serving certificate (extendedKeyUsage serverAuth only) and the stack's
#     admin client certificate (CN=admin) get 403 saying why; the headers of
#     a /bind with a 100 kB Content-Length and no client certificate get 403
#     before any body byte; a client certificate CN=slurm-bridge-extender-
#     client (clientAuth, made here with the stack CA) gets 200.
#
# The API part (--api: after the webhook part; --api-only: alone). It writes
# to the stack and needs its scheduler up (make bridge-up), so it is not run
# by default: it sends the pods of the rows marked api=yes through the
# Kubernetes API, bypassing the webhook, to the scheduler:
#   - namespaces bad-input-api-<pid> and bad-input-api-<pid>-acct (the latter
#     with allowed-accounts: research), labelled slurm-bridge.io/managed=true
#     (the stack config's managedNamespaceSelector) and not
#     slurm-bridge=enabled, so the webhook does not see them; deleted on exit;
#   - each case's pod (request.object of its file), schedulerName
#     slurm-bridge; pods that set no partition get partition
#     bad-input-no-such-partition, so that one that wrongly passed the checks
#     is refused by Slurm rather than placed;
#   - checks that each pod gets PodScheduled=False, reason Unschedulable, a
#     message naming the key, and stays Pending and unbound, that no Slurm job
#     was submitted for these namespaces (squeue), and that the scheduler is
#     still alive and healthy.
#
# Output: "  ok   ..." / "  FAIL ..." lines as in test/e2e, a report (cases
# tried, passed, failed, VmRSS) and the summary "bad-input: N passed, N
# failed". Exit 1 when a check failed (an unexpected answer, the process
# died, memory grew), 2 on a usage or setup error. The work directory (logs,
# answers) is kept when something failed.
#
# Environment: BAD_PORT (9643) BAD_PASSES (20) BAD_RSS_LIMIT_KIB (2048)
# BAD_SLOW_EACH (5) BAD_MALLOC_TUNABLES BAD_NICE (10: the driver's own
# niceness; the webhook keeps its own) BAD_API_WAIT (90 s) BAD_PER_CLIENT
# (40) BAD_EXT_PORT (9644) ADMISSION_BIN BRIDGE_BIN STACK_DIR.
# Needs curl, jq, python3, openssl, kubectl (for the namespaces) and the
# built binaries.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"
cd "$E2E_DIR/../.." || exit 2

PORT=${BAD_PORT:-9643}
PASSES=${BAD_PASSES:-20}
RSS_FROM=5
RSS_LIMIT_KIB=${BAD_RSS_LIMIT_KIB:-2048}
SLOW_EACH=${BAD_SLOW_EACH:-5}
MALLOC_TUNABLES=${BAD_MALLOC_TUNABLES-glibc.malloc.arena_max=1:glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072}
NICE=${BAD_NICE:-10}
API_WAIT=${BAD_API_WAIT:-90}
PER_CLIENT=${BAD_PER_CLIENT:-40}
EXT_PORT=${BAD_EXT_PORT:-9644}
MAX_BODY=$((3 * 1024 * 1024))	# REVIEW_MAX_BODY, admission/admission.h
BAD_DIR=test/data/bad
MANIFEST=$BAD_DIR/cases.tsv
ANSWER_LIMIT=5		# s: the webhooks' timeoutSeconds
SLOW_ANSWER_LIMIT=1	# s: a normal request while the slow clients hang on
NS_TOKEN=__BAD_INPUT_NS__

RUN_WEBHOOK=1
RUN_EXTENDER=1
RUN_API=0
KUBE_WRITES=1

die() { echo "bad-input: $*" >&2; exit 2; }
say() { echo "bad-input: $*"; }

usage() {
	if [ "${1:-0}" = 0 ]; then
		sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
	else
		sed -n '6p' "${BASH_SOURCE[0]}" | sed 's/^# *//; s/^/usage: /' >&2
	fi
	exit "${1:-0}"
}

while [ $# -gt 0 ]; do
	case $1 in
	--api) RUN_API=1 ;;
	--api-only) RUN_API=1; RUN_WEBHOOK=0; RUN_EXTENDER=0 ;;
	--no-extender) RUN_EXTENDER=0 ;;
	--no-kube-writes) KUBE_WRITES=0 ;;
	--passes) [ $# -ge 2 ] || usage 2; PASSES=$2; shift ;;
	--passes=*) PASSES=${1#--passes=} ;;
	-h|--help) usage 0 ;;
	*) echo "bad-input: unknown argument $1" >&2; usage 2 ;;
	esac
	shift
done
for v in PORT PASSES RSS_LIMIT_KIB SLOW_EACH NICE API_WAIT PER_CLIENT EXT_PORT; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number (got '${!v}')"
done
[ "$PASSES" -ge 1 ] || die "--passes must be 1 or more"
if [ "$RUN_API" = 1 ] && [ "$KUBE_WRITES" = 0 ]; then
	die "--api writes to the stack: it does not go with --no-kube-writes"
fi
for t in curl jq python3; do
	command -v "$t" >/dev/null || die "$t not found (scripts/dev/deps.sh installs it)"
done
if [ "$KUBE_WRITES" = 1 ] || [ "$RUN_API" = 1 ]; then
	command -v kubectl >/dev/null || die "kubectl not found (make cluster-up)"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bad-input.XXXXXX") || die "mktemp failed"
SERVER_PID=
SLOW_PID=
EXT_PID=
NAMESPACES=()
SKIPPED=0

cleanup() {
	local ns
	if [ -n "$SLOW_PID" ]; then kill "$SLOW_PID" 2>/dev/null; fi
	if [ -n "$EXT_PID" ]; then stack_stop_pid slurm-bridge "$EXT_PID" 10; fi
	# The watches end first: a few seconds.
	if [ -n "$SERVER_PID" ]; then stack_stop_pid slurm-bridge-admission "$SERVER_PID" 10; fi
	wait 2>/dev/null
	for ns in "${NAMESPACES[@]+"${NAMESPACES[@]}"}"; do
		k delete namespace "$ns" --wait=false >/dev/null 2>&1 ||
			say "could not delete namespace $ns"
	done
	if [ "$E2E_FAILED" -gt 0 ]; then
		say "kept $WORK (logs and answers)"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# make_ns NAME [ACCOUNTS] [LABEL=VALUE]: creates a namespace, remembered for
# the cleanup; ACCOUNTS ('' for none) becomes its allowed-accounts.
make_ns() {
	local name=$1 accounts=${2:-} label=${3:-} ann=null lab=null
	[ -n "$accounts" ] && ann=$(jq -cn --arg a "$accounts" \
	    '{"scheduler.slinky.slurm.net/allowed-accounts": $a}')
	[ -n "$label" ] && lab=$(jq -cn --arg k "${label%%=*}" --arg v "${label#*=}" '{($k): $v}')
	jq -n --arg n "$name" --argjson a "$ann" --argjson l "$lab" \
	    '{apiVersion: "v1", kind: "Namespace", metadata: ({name: $n}
	      + (if $a then {annotations: $a} else {} end)
	      + (if $l then {labels: $l} else {} end))}' |
	    k create -f - >/dev/null || return 1
	NAMESPACES+=("$name")
}

# --- The manifest ---------------------------------------------------------------

# is_slow SEND: a send mode of test/bad/slow.py (slow-*, trickle-*)?
is_slow() { [[ $1 == slow-* || $1 == trickle-* ]]; }

C_NAME=() C_FILE=() C_CT=() C_SEND=() C_EXP_V=() C_EXP_M=() C_MSG=() C_API=()
C_NS=()		# 1: the file names the driver's namespace ($NS_TOKEN)

load_manifest() {
	local line n=0 name file ct send ev em msg api extra e
	local -A seen=()
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		[[ -z $line || $line == \#* ]] && continue
		IFS=$'\t' read -r name file ct send ev em msg api extra <<<"$line"
		if [ -z "$api" ] || [ -n "$extra" ]; then
			die "$MANIFEST:$n: want 8 tab-separated columns"
		fi
		if ! [[ $name =~ ^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$ ]] || [ ${#name} -gt 63 ]; then
			die "$MANIFEST:$n: name '$name' is not a DNS label"
		fi
		[ -z "${seen[$name]:-}" ] || die "$MANIFEST:$n: case $name twice"
		seen[$name]=1
		case $send in
		normal|chunked|expect|get|slow-tcp|slow-tls|slow-headers|slow-body) ;;
		trickle-headers|trickle-body) ;;
		*) die "$MANIFEST:$n: unknown send mode '$send'" ;;
		esac
		for e in "$ev" "$em"; do
			case $e in
			-) ;;
			400|405|413|415|deny|allow|review) ! is_slow "$send" ||
				die "$MANIFEST:$n: a slow case expects 'closed' or '-'" ;;
			closed) is_slow "$send" ||
				die "$MANIFEST:$n: 'closed' is for slow cases" ;;
			*) die "$MANIFEST:$n: unknown outcome '$e'" ;;
			esac
		done
		if [ "$file" != - ] && [[ $file != gen/* ]] && [ ! -f "$BAD_DIR/$file" ]; then
			die "$MANIFEST:$n: no file $BAD_DIR/$file"
		fi
		C_NAME+=("$name") C_FILE+=("$file") C_CT+=("$ct") C_SEND+=("$send")
		C_EXP_V+=("$ev") C_EXP_M+=("$em") C_MSG+=("$msg") C_API+=("$api")
		if [ "$file" != - ] && [[ $file != gen/* ]] &&
		    LC_ALL=C grep -q "$NS_TOKEN" "$BAD_DIR/$file"; then
			C_NS+=(1)
		else
			C_NS+=(0)
		fi
		if [ "$api" = yes ] && { [ "$file" = - ] || [[ $file == gen/* ]]; }; then
			die "$MANIFEST:$n: an api=yes case needs a committed file"
		fi
	done <"$MANIFEST"
	[ ${#C_NAME[@]} -gt 0 ] || die "$MANIFEST: no cases"
}

# prepare_files NS: resolves every case's file into C_PATH (gen/ from the work
# directory, the namespace token replaced by NS, '' when NS is empty: skip),
# and records each uid for the checks in $WORK/uid/NAME.
C_PATH=()
prepare_files() {
	local ns=$1 i f uid_args=()
	mkdir -p "$WORK/cases" "$WORK/uid"
	for i in "${!C_NAME[@]}"; do
		f=${C_FILE[$i]}
		if [ "$f" = - ]; then
			C_PATH[i]=-
			continue
		elif [[ $f == gen/* ]]; then
			f=$WORK/$f
			[ -f "$f" ] || die "$f: not written by test/bad/gen.sh"
		else
			f=$BAD_DIR/$f
		fi
		if [ "${C_NS[$i]}" = 1 ]; then
			if [ -z "$ns" ]; then
				C_PATH[i]=
				continue
			fi
			LC_ALL=C sed "s/$NS_TOKEN/$ns/g" "$f" >"$WORK/cases/${C_NAME[$i]}.json"
			f=$WORK/cases/${C_NAME[$i]}.json
		fi
		C_PATH[i]=$f
		uid_args+=("$WORK/uid/${C_NAME[$i]}" "$f")
	done
	# The uids, by python3 rather than jq: jq 1.6 stops at 256 levels.
	python3 - "${uid_args[@]}" <<'PY' || die "could not read the uids of the cases"
import json, sys
sys.setrecursionlimit(5000)  # deep-in-pod-2000; deeper ones are not JSON
a = sys.argv[1:]
for out, path in zip(a[::2], a[1::2]):
    uid = ""
    try:
        with open(path, "rb") as f:
            uid = json.loads(f.read())["request"]["uid"]
    except Exception:
        pass
    with open(out, "w") as f:
        f.write(uid if isinstance(uid, str) else "")
PY
}

# --- Requests and checks --------------------------------------------------------

BASE_URL=https://127.0.0.1:$PORT

# to_ms SECONDS: sets MS to curl's %{time_total} (e.g. 0.012345) in whole
# milliseconds, without a subshell.
to_ms() {
	local s=${1:-0} int frac
	int=${s%%.*}
	frac=${s#*.}
	[ "$frac" = "$s" ] && frac=0
	frac=${frac}000
	MS=$((10#${int:-0} * 1000 + 10#${frac:0:3}))
}

# transfer_conf I PATH CLOSE OUT: the curl config (-K) lines of one request of
# case I to PATH, its answer to OUT; CLOSE=1 adds "Connection: close".
transfer_conf() {
	local i=$1 path=$2 close=$3 out=$4 ct=${C_CT[$1]} f=${C_PATH[$1]}
	printf 'url = "%s%s"\noutput = "%s"\ncacert = "%s"\nmax-time = %d\n' \
	    "$BASE_URL" "$path" "$out" "$CA_CERT" $((ANSWER_LIMIT * 2))
	# The API server sends no "Expect: 100-continue"; a lone "Expect:"
	# makes curl send none.  Mode expect does: the body goes only once the
	# server asks for it.
	if [ "${C_SEND[$i]}" = expect ]; then echo 'header = "Expect: 100-continue"'
	else echo 'header = "Expect:"'; fi
	if [ "$ct" = - ]; then echo 'header = "Content-Type:"'
	else printf 'header = "Content-Type: %s"\n' "$ct"; fi
	[ "$close" = 1 ] && echo 'header = "Connection: close"'
	case ${C_SEND[$i]} in
	get) echo 'request = "GET"' ;;
	chunked) echo 'header = "Transfer-Encoding: chunked"'
		printf 'data-binary = "@%s"\n' "$f" ;;
	*) printf 'data-binary = "@%s"\n' "$f" ;;
	esac
	# A literal \n: curl's config parser makes it a newline.
	printf '%s\n' 'write-out = "%{http_code} %{time_total}\n"'
}

# send I PATH OUT: one request of case I to PATH on its own connection;
# prints "CODE SECONDS" (CODE 000: no answer).
send() {
	transfer_conf "$1" "$2" 1 "$3" >"$3.curlrc"
	curl -sS -K "$3.curlrc" 2>"$3.err" || true
}

# shellcheck disable=SC2016
JQ_VERDICT='
def msg: .response.status.message;
def short: tostring | if length > 160 then .[:160] + "..." else . end;
if (.kind != "AdmissionReview" or .apiVersion != "admission.k8s.io/v1") then
	"FAIL HTTP 200 but not an AdmissionReview v1: \(tojson | short)"
elif (.response.uid != $uid) then
	"FAIL response.uid is not the request uid: \(.response.uid | short)"
elif $exp == "allow" then
	if .response.allowed == true then
		"ok allowed" + (if .response.patch then " with a patch" else "" end)
	else "FAIL denied, want allowed: \(msg | short)" end
elif $exp == "deny" then
	if .response.allowed != false then
		"FAIL allowed, want denied" + (if .response.patch then " (patched)" else "" end)
	elif (msg | type) != "string" or msg == "" then "FAIL denied without a message"
	elif .response.status.code != 403 then
		"FAIL denied with status.code \(.response.status.code), want 403: \(msg | short)"
	elif $want == "-" or (msg | contains($want)) then "ok denied: \(msg | short)"
	else "FAIL the message does not contain \"\($want)\": \(msg | short)" end
else
	"ok " + (if .response.allowed == true then "allowed" else "denied: \(msg | short)" end)
end'

# verdict I EXPECT CODE OUT ERRFILE: sets VERDICT to "ok DETAIL" or "FAIL DETAIL".
verdict() {
	local i=$1 exp=$2 code=$3 out=$4 want=${C_MSG[$1]} body='' line
	if [ "$code" = 000 ]; then
		VERDICT="FAIL no answer: $(grep -m1 . "$5" 2>/dev/null | head -c 200)"
		return
	fi
	if [ "$code" != 200 ]; then
		IFS= read -r -d '' body <"$out"
		line=${body%%$'\n'*}
		line=${line:0:160}
	fi
	case $exp in
	4??)
		if [ "$code" != "$exp" ]; then
			if [ "$code" = 200 ]; then
				line=$(jq -r '"allowed=\(.response.allowed) \(.response.status.message // "")"' \
				    "$out" 2>/dev/null | head -c 160)
			fi
			VERDICT="FAIL HTTP $code, want $exp: $line"
		elif [ -z "$body" ]; then
			VERDICT="FAIL HTTP $code without a reason"
		elif [ "$want" != - ] && [[ $body != *"$want"* ]]; then
			VERDICT="FAIL HTTP $code, the body does not contain \"$want\": $line"
		else
			VERDICT="ok HTTP $code: $line"
		fi
		;;
	deny|allow|review)
		if [ "$exp" = review ] && [ "$code" = 400 ] && [ -n "$body" ]; then
			VERDICT="ok HTTP 400: $line"
		elif [ "$code" != 200 ]; then
			VERDICT="FAIL HTTP $code, want 200: $line"
		elif [ ! -s "$out" ]; then
			VERDICT="FAIL HTTP 200 with an empty body"
		else
			VERDICT=$(jq -r --rawfile uid "$WORK/uid/${C_NAME[$i]}" --arg exp "$exp" \
			    --arg want "$want" "$JQ_VERDICT" "$out" 2>/dev/null) ||
				VERDICT="FAIL HTTP 200 but not JSON: $(head -c 160 "$out" | head -n1)"
		fi
		;;
	esac
}

# --- The webhook part ---------------------------------------------------------------

# start_webhook: the private webhook the passes talk to (stack-env.sh).
start_webhook() {
	local rc=0
	if [ -n "$MALLOC_TUNABLES" ]; then
		GLIBC_TUNABLES=$MALLOC_TUNABLES stack_admission_start SERVER_PID \
		    "$WORK/admission.log" "$PORT" \
		    --max-connections-per-client "$PER_CLIENT" || rc=$?
	else
		stack_admission_start SERVER_PID "$WORK/admission.log" "$PORT" \
		    --max-connections-per-client "$PER_CLIENT" || rc=$?
	fi
	[ "$rc" = 0 ] || die "no webhook on 127.0.0.1:$PORT (BAD_PORT picks another port)"
	say "webhook: $ADMISSION_BIN ${ADMISSION_ARGS[*]} (pid $SERVER_PID)${MALLOC_TUNABLES:+, GLIBC_TUNABLES=$MALLOC_TUNABLES}"
}

server_died() {
	local rc
	wait "$SERVER_PID" 2>/dev/null
	rc=$?
	fail "slurm-bridge-admission (pid $SERVER_PID) died $1 (exit status $rc); its log ends:"
	tail -n 10 "$WORK/admission.log" | sed 's/^/       /'
	SERVER_PID=
}

# owners_total: objects in the webhook's owner store (the stack's churn).
owners_total() {
	curl -sS --max-time 5 --cacert "$CA_CERT" "$BASE_URL/metrics" 2>/dev/null |
	    awk '/^slurm_bridge_admission_cache_objects/ { s += $NF } END { print s + 0 }'
}

declare -A CHECK_FAILED=()	# "I:path" -> 1 once it failed in some pass
CHECKS=()			# "I:path" of every check, in order
REF_CODE=()			# pass 1's status of each transfer
REQUESTS=0
SLOWEST_MS=0
SLOWEST_WHAT=
LATER_FAILS=0			# failures in passes 2 and later
PASSES_DONE=0
RSS=()				# RSS[p]: after pass p; RSS[0]: before pass 1

# run_pass P: the whole corpus in one curl: every normal case to each path
# its row names, in manifest order. Odd passes go over one kept-alive TLS
# connection, as the API server's do; even passes send "Connection: close",
# a new connection and handshake per request. Pass 1 checks every answer in
# full and keeps it; later passes check again only answers that differ.
run_pass() {
	local p=$1 i path exp n code secs key label close
	local cfg=$WORK/pass.curlrc ans=$WORK/ans ref=$WORK/ref first_dead='' alive=1
	local -a who=() w=()
	close=$((p % 2 == 0))
	mkdir -p "$ans" "$ref"
	: >"$cfg"
	for i in "${!C_NAME[@]}"; do
		is_slow "${C_SEND[$i]}" && continue
		[ -z "${C_PATH[$i]}" ] && continue	# needs the namespace
		for path in /validate /mutate; do
			if [ "$path" = /validate ]; then exp=${C_EXP_V[$i]}; else exp=${C_EXP_M[$i]}; fi
			[ "$exp" = - ] && continue
			[ ${#who[@]} -gt 0 ] && echo next >>"$cfg"
			transfer_conf "$i" "$path" "$close" "$ans/${#who[@]}" >>"$cfg"
			who+=("$i $path $exp")
		done
	done
	rm -f "$ans"/*
	curl -sS -K "$cfg" >"$WORK/pass.w" 2>"$WORK/pass.err"
	mapfile -t w <"$WORK/pass.w"
	kill -0 "$SERVER_PID" 2>/dev/null || alive=0
	for ((n = 0; n < ${#who[@]}; n++)); do
		read -r i path exp <<<"${who[n]}"
		read -r code secs <<<"${w[n]:-000 0}"
		key=$i:$path
		label="${C_NAME[$i]} $path"
		REQUESTS=$((REQUESTS + 1))
		[ "$p" = 1 ] && CHECKS+=("$key")
		if [ "$code" = 000 ] && [ "$alive" = 0 ]; then
			# The server died: one failure below, not one per request.
			[ -z "$first_dead" ] && first_dead=$label
			CHECK_FAILED[$key]=1
			continue
		fi
		if [ "$p" = 1 ]; then
			REF_CODE[n]=$code
			verdict "$i" "$exp" "$code" "$ans/$n" "$WORK/pass.err"
			[ -f "$ans/$n" ] && cp "$ans/$n" "$ref/$n"
		elif [ "$code" = "${REF_CODE[n]}" ] && { [ "$code" = 000 ] ||
		    cmp -s "$ans/$n" "$ref/$n"; }; then
			VERDICT=same	# as in pass 1, checked then
		else
			verdict "$i" "$exp" "$code" "$ans/$n" "$WORK/pass.err"
		fi
		to_ms "$secs"
		if [ "${VERDICT%% *}" != FAIL ] && [ "$MS" -gt $((ANSWER_LIMIT * 1000)) ]; then
			VERDICT="FAIL answered in $MS ms, over the webhooks' timeoutSeconds ($ANSWER_LIMIT s)"
		fi
		if [ "$MS" -gt "$SLOWEST_MS" ]; then
			SLOWEST_MS=$MS
			SLOWEST_WHAT="$label, pass $p"
		fi
		if [ "${VERDICT%% *}" != FAIL ]; then
			if [ "$p" = 1 ]; then
				if [ "$MS" = 0 ]; then pass "$label: ${VERDICT#ok } (<1 ms)"
				else pass "$label: ${VERDICT#ok } ($MS ms)"; fi
			fi
		elif [ -z "${CHECK_FAILED[$key]:-}" ]; then
			CHECK_FAILED[$key]=1
			[ "$p" -gt 1 ] && LATER_FAILS=$((LATER_FAILS + 1))
			cp "$ans/$n" "$WORK/failed-${C_NAME[$i]}-${path#/}-pass$p.answer" 2>/dev/null
			if [ "$p" = 1 ]; then fail "$label: ${VERDICT#FAIL }"
			else fail "$label (pass $p; pass 1 was ok): ${VERDICT#FAIL }"; fi
		fi
	done
	PASSES_DONE=$p
	if [ "$alive" = 0 ]; then
		server_died "in pass $p${first_dead:+ (the first request without an answer: $first_dead)}"
		return 1
	fi
	return 0
}

# slow_clients: SLOW_EACH of each slow case at once, and normal requests
# timed while they hang on.
slow_clients() {
	local i k path specs=() ready=$WORK/slow.ready n=0 code secs name res detail=''
	local normal=-1 t worst=0 ok=1 cut0 cut1 trickles=0
	for i in "${!C_NAME[@]}"; do
		is_slow "${C_SEND[$i]}" || continue
		[[ ${C_SEND[$i]} == trickle-* ]] && trickles=$((trickles + SLOW_EACH))
		path=/validate
		[ "${C_EXP_V[$i]}" = - ] && path=/mutate
		for ((k = 1; k <= SLOW_EACH; k++)); do
			specs+=("${C_NAME[$i]}#$k:${C_SEND[$i]}:$path:${C_PATH[$i]}")
		done
	done
	# The request timed meanwhile: the first case denied at /validate.
	for i in "${!C_NAME[@]}"; do
		if [ "${C_SEND[$i]}" = normal ] && [ "${C_EXP_V[$i]}" = deny ] &&
		    [ -n "${C_PATH[$i]}" ]; then
			normal=$i
			break
		fi
	done
	if [ ${#specs[@]} -eq 0 ]; then
		echo "  skip no slow cases in the manifest"
		return
	fi
	scenario "slow clients: ${#specs[@]} at once"
	cut0=$(refused_count deadline)
	python3 test/bad/slow.py 127.0.0.1 "$PORT" "$CA_CERT" "$ready" "${specs[@]}" \
	    >"$WORK/slow.out" 2>"$WORK/slow.err" &
	SLOW_PID=$!
	for ((t = 0; t < 200; t++)); do
		[ -f "$ready" ] && break
		kill -0 "$SLOW_PID" 2>/dev/null || break
		sleep 0.1
	done
	if [ ! -f "$ready" ]; then
		fail "the slow clients did not all connect: $(head -c 300 "$WORK/slow.err")"
	elif [ "$normal" -ge 0 ]; then
		# Three times over the stall, about 3 s apart.
		for ((t = 1; t <= 3; t++)); do
			read -r code secs < <(send "$normal" /validate "$WORK/answer-slow")
			verdict "$normal" deny "$code" "$WORK/answer-slow" "$WORK/answer-slow.err"
			n=$((n + 1))
			if [ "${VERDICT%% *}" != ok ]; then
				ok=0
				detail="${VERDICT#FAIL }"
			fi
			to_ms "$secs"
			if [ "$MS" -ge $((SLOW_ANSWER_LIMIT * 1000)) ]; then
				ok=0
				detail="answered in $MS ms (limit $SLOW_ANSWER_LIMIT s)"
			fi
			[ "$MS" -gt "$worst" ] && worst=$MS
			[ "$t" -lt 3 ] && sleep 3
		done
		if [ "$ok" = 1 ]; then
			pass "${C_NAME[$normal]} /validate while ${#specs[@]} slow clients hang on: $n answers, the slowest in $worst ms"
		else
			fail "${C_NAME[$normal]} /validate while ${#specs[@]} slow clients hang on: $detail"
		fi
	fi
	wait "$SLOW_PID" 2>/dev/null
	SLOW_PID=
	# One check per slow case: all its clients.
	for i in "${!C_NAME[@]}"; do
		is_slow "${C_SEND[$i]}" || continue
		name=${C_NAME[$i]}
		CHECKS+=("$i:slow")
		res=$(awk -F'\t' -v n="$name" 'index($1, n "#") == 1' "$WORK/slow.out")
		if [ -z "$res" ]; then
			CHECK_FAILED[$i:slow]=1
			fail "$name: no result from test/bad/slow.py: $(tail -n 3 "$WORK/slow.err" | tr '\n' ' ')"
		elif awk -F'\t' '$2 != "ok" { bad = 1 } END { exit !bad }' <<<"$res"; then
			CHECK_FAILED[$i:slow]=1
			fail "$name ($SLOW_EACH clients): $(awk -F'\t' '$2 != "ok" { print $1 ": " $3; exit }' <<<"$res")"
		else
			pass "$name ($SLOW_EACH clients): $(awk -F'\t' 'NR == 1 { print $3 }' <<<"$res")"
		fi
	done
	if [ "$trickles" -gt 0 ]; then
		cut1=$(refused_count deadline)
		if [ $((cut1 - cut0)) -ge "$trickles" ]; then
			pass "slurm_bridge_admission_http_refused_total{reason=\"deadline\"}: $cut0 -> $cut1 (the $trickles trickling clients)"
		else
			fail "slurm_bridge_admission_http_refused_total{reason=\"deadline\"}: $cut0 -> $cut1, want at least +$trickles (the trickling clients)"
		fi
	fi
}

# refused_count REASON: the webhook's slurm_bridge_admission_http_refused_total
# of that reason ('' when it does not answer).
refused_count() {
	curl -sS --max-time 5 --cacert "$CA_CERT" "$BASE_URL/metrics" 2>/dev/null |
	    awk -v r="slurm_bridge_admission_http_refused_total{reason=\"$1\"}" \
		'$1 == r { print $2 }'
}

# http_limits: the per-client connection limit and the body cap, on the
# private webhook (started with --max-connections-per-client PER_CLIENT).
http_limits() {
	local out code secs line r0 r1
	scenario "HTTP limits: connections per client, the body cap before the body, the budget of large bodies"
	r0=$(refused_count per_client)
	out=$(python3 test/bad/slow.py per-client 127.0.0.1 "$PORT" "$CA_CERT" \
	    "$PER_CLIENT" 2>&1)
	r1=$(refused_count per_client)
	if [[ $out == per-client$'\t'ok$'\t'* ]] && [ "${r1:-0}" -gt "${r0:-0}" ]; then
		pass "per-client limit $PER_CLIENT: ${out#per-client$'\t'ok$'\t'}; refused_total{reason=\"per_client\"} $r0 -> $r1"
	elif [[ $out == per-client$'\t'ok$'\t'* ]]; then
		fail "per-client limit $PER_CLIENT: the refusal was not counted (refused_total{reason=\"per_client\"} $r0 -> $r1)"
	else
		fail "per-client limit $PER_CLIENT: ${out#per-client$'\t'}"
	fi
	# Headers only: an answer now came before any body byte.
	read -r code secs line < <(python3 test/bad/slow.py early 127.0.0.1 "$PORT" \
	    "$CA_CERT" /validate $((MAX_BODY + 1)) 2>&1)
	if [ "$code" = 413 ] && [[ $line == *"larger than $MAX_BODY bytes"* ]]; then
		pass "Content-Length $((MAX_BODY + 1)), no body sent: HTTP 413 in $secs s: $line"
	else
		fail "Content-Length $((MAX_BODY + 1)), no body sent: HTTP $code in $secs s, want 413 at once: $line"
	fi
	read -r code secs line < <(python3 test/bad/slow.py early 127.0.0.1 "$PORT" \
	    "$CA_CERT" /validate "$MAX_BODY" 2>&1)
	if [ "$code" = 000 ]; then
		pass "Content-Length $MAX_BODY (the cap), no body sent: no answer in $secs s (the server waits for the body)"
	else
		fail "Content-Length $MAX_BODY (the cap), no body sent: HTTP $code, want none until the body comes: $line"
	fi
	# Large bodies held at once: the budget is 8 bodies of the cap
	# (common/httpd.c), so 8 requests of the cap hold it all.
	r0=$(refused_count busy)
	out=$(python3 test/bad/slow.py budget 127.0.0.1 "$PORT" "$CA_CERT" \
	    /validate "$MAX_BODY" 8 2>&1)
	r1=$(refused_count busy)
	if [[ $out == budget$'\t'ok$'\t'* ]] && [ "${r1:-0}" -gt "${r0:-0}" ]; then
		pass "large bodies held at once: ${out#budget$'\t'ok$'\t'}; refused_total{reason=\"busy\"} $r0 -> $r1"
	else
		fail "large bodies held at once: ${out#budget$'\t'} (refused_total{reason=\"busy\"} $r0 -> $r1)"
	fi
}

# --- The extender part --------------------------------------------------------------

# ext_start LOG ARG...: a private slurm-bridge on 127.0.0.1:EXT_PORT that can
# never lead (see the header); waits for /healthz. Sets EXT_PID.
ext_start() {
	local log=$1 i scheme=http host=${EXT_HOST:-127.0.0.1}; shift
	local -a curl_tls=()
	if [[ " $* " == *" --tls-cert "* ]]; then scheme=https; curl_tls=(--cacert "$CA_CERT"); fi
	if [ -n "$(ss -Hltn "sport = :$EXT_PORT" 2>/dev/null)" ]; then
		die "port $EXT_PORT is in use (BAD_EXT_PORT picks another)"
	fi
	POD_NAMESPACE=bad-input-$$-no-lease "${STACK_EXEC[@]}" "$BRIDGE_BIN" \
	    --kubeconfig "$ADMISSION_KUBECONFIG" --leader-elect \
	    --listen "$host:$EXT_PORT" "$@" </dev/null >"$log" 2>&1 &
	EXT_PID=$!
	for ((i = 0; i < 300; i++)); do
		kill -0 "$EXT_PID" 2>/dev/null || break
		[ "$(curl -sS -o /dev/null -w '%{http_code}' --max-time 2 "${curl_tls[@]}" \
		    "$scheme://$host:$EXT_PORT/healthz" 2>/dev/null)" = 200 ] && return 0
		sleep 0.2
	done
	sed 's/^/  slurm-bridge: /' "$log" >&2
	die "the private slurm-bridge did not answer on $host:$EXT_PORT"
}

ext_stop() {
	[ -n "$EXT_PID" ] && stack_stop_pid slurm-bridge "$EXT_PID" 10
	EXT_PID=
}

# ext_post URL OUT [CURL ARG...]: POSTs a binding; prints the HTTP status.
ext_post() {
	local url=$1 out=$2; shift 2
	curl -sS -o "$out" -w '%{http_code}' --max-time 10 "$@" \
	    -H 'Content-Type: application/json' \
	    --data-binary '{"PodName": "x", "PodNamespace": "y", "PodUID": "u", "Node": "n1"}' \
	    "$url" 2>>"$out.err"
}

# ext_want WHAT CODE WANT_CODE OUT WANT_TEXT: one check of an answer.
ext_want() {
	local what=$1 code=$2 want=$3 out=$4 text=$5 body
	body=$(head -c 400 "$out" 2>/dev/null | tr '\n' ' ')
	if [ "$code" = "$want" ] && [[ $body == *"$text"* ]]; then
		pass "$what: HTTP $code: $body"
	else
		fail "$what: HTTP $code, want $want with \"$text\": $body"
	fi
}

extender_part() {
	local d=$WORK/ext url verb code secs line ip
	mkdir -p "$d"
	[ -x "$BRIDGE_BIN" ] || die "$BRIDGE_BIN is not built (make)"
	[ -s "$ADMISSION_KUBECONFIG" ] || die "no $ADMISSION_KUBECONFIG (make bridge-up)"
	command -v openssl >/dev/null || die "openssl not found"

	scenario "extender API without --client-ca: refused"
	ext_start "$d/plain.log" --config "$BRIDGE_CONFIG"
	say "slurm-bridge (pid $EXT_PID): --listen 127.0.0.1:$EXT_PORT, no TLS, no --client-ca"
	for verb in filter prioritize bind; do
		code=$(ext_post "http://127.0.0.1:$EXT_PORT/$verb" "$d/plain-$verb")
		ext_want "/$verb without --client-ca" "$code" 403 "$d/plain-$verb" "--client-ca"
	done
	code=$(curl -sS -o "$d/plain-healthz" -w '%{http_code}' --max-time 5 \
	    "http://127.0.0.1:$EXT_PORT/healthz" 2>/dev/null)
	ext_want "/healthz stays open" "$code" 200 "$d/plain-healthz" ok
	code=$(curl -sS -o "$d/plain-debug" -w '%{http_code}' --max-time 5 \
	    "http://127.0.0.1:$EXT_PORT/debug/memory" 2>/dev/null)
	ext_want "/debug/memory from this host (loopback)" "$code" 200 "$d/plain-debug" rss_bytes
	ext_stop
	# From another address: this host's own non-loopback one, where it
	# has one.
	ip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9.]+$' | grep -v '^127\.' | head -n 1)
	if [ -n "$ip" ]; then
		EXT_HOST=$ip ext_start "$d/plain-ip.log" --config "$BRIDGE_CONFIG"
		code=$(curl -sS -o "$d/ip-debug" -w '%{http_code}' --max-time 5 \
		    "http://$ip:$EXT_PORT/debug/memory" 2>/dev/null)
		ext_want "/debug/memory from $ip (not loopback), no --client-ca" "$code" 403 \
		    "$d/ip-debug" "only clients on the scheduler's own host"
		code=$(curl -sS -o "$d/ip-healthz" -w '%{http_code}' --max-time 5 \
		    "http://$ip:$EXT_PORT/healthz" 2>/dev/null)
		ext_want "/healthz from $ip stays open" "$code" 200 "$d/ip-healthz" ok
		ext_stop
	else
		echo "  skip /debug/memory from another address: this host has none but loopback"
		SKIPPED=$((SKIPPED + 1))
	fi

	scenario "extender API with --client-ca: only a client certificate for clientAuth, named as --client-name"
	stack_issue_cert "$d/client" "/CN=slurm-bridge-extender-client" clientAuth ||
		die "cannot make a client certificate with the stack CA"
	ext_start "$d/tls.log" --config "$BRIDGE_CONFIG" --tls-cert "$ADMISSION_CERT" \
	    --tls-key "$ADMISSION_KEY" --client-ca "$CA_CERT"
	say "slurm-bridge (pid $EXT_PID): --listen 127.0.0.1:$EXT_PORT over TLS, --client-ca $CA_CERT, --client-name by default"
	url=https://127.0.0.1:$EXT_PORT/bind
	code=$(ext_post "$url" "$d/none" --cacert "$CA_CERT")
	ext_want "/bind without a client certificate" "$code" 403 "$d/none" "no client certificate"
	code=$(ext_post "$url" "$d/serving" --cacert "$CA_CERT" \
	    --cert "$ADMISSION_CERT" --key "$ADMISSION_KEY")
	ext_want "/bind with the stack's serving certificate (serverAuth only)" "$code" 403 \
	    "$d/serving" "extendedKeyUsage lacks clientAuth"
	code=$(ext_post "$url" "$d/admin" --cacert "$CA_CERT" \
	    --cert "$PKI_DIR/admin.crt" --key "$PKI_DIR/admin.key")
	ext_want "/bind with the stack's admin client certificate (CN=admin)" "$code" 403 \
	    "$d/admin" "CN (admin) nor a DNS name of it is among slurm-bridge-extender-client"
	read -r code secs line < <(python3 test/bad/slow.py early 127.0.0.1 "$EXT_PORT" \
	    "$CA_CERT" /bind 100000 2>&1)
	if [ "$code" = 403 ] && [[ $line == *"no client certificate"* ]]; then
		pass "/bind headers with Content-Length 100000, no certificate, no body sent: HTTP 403 in $secs s"
	else
		fail "/bind headers with Content-Length 100000, no certificate, no body sent: HTTP $code in $secs s, want 403 at once: $line"
	fi
	code=$(ext_post "$url" "$d/good" --cacert "$CA_CERT" \
	    --cert "$d/client.crt" --key "$d/client.key")
	ext_want "/bind with a client certificate CN=slurm-bridge-extender-client (clientAuth)" \
	    "$code" 200 "$d/good" "not the leader"
	code=$(curl -sS -o "$d/debug-none" -w '%{http_code}' --max-time 5 --cacert "$CA_CERT" \
	    "https://127.0.0.1:$EXT_PORT/debug/memory" 2>/dev/null)
	ext_want "/debug/memory with --client-ca and no certificate, even from loopback" \
	    "$code" 403 "$d/debug-none" "no client certificate"
	code=$(curl -sS -o "$d/debug-good" -w '%{http_code}' --max-time 5 --cacert "$CA_CERT" \
	    --cert "$d/client.crt" --key "$d/client.key" \
	    "https://127.0.0.1:$EXT_PORT/debug/memory" 2>/dev/null)
	ext_want "/debug/memory with the client certificate" "$code" 200 "$d/debug-good" rss_bytes
	ext_stop
}

webhook_part() {
	local ns='' p i grow owners5='' ownersN=
	scenario "setup"
	test/bad/gen.sh "$WORK/gen" || die "test/bad/gen.sh failed"
	if [ "$KUBE_WRITES" = 1 ]; then
		ns=bad-input-$$
		make_ns "$ns" research || die "could not create namespace $ns"
		say "namespace $ns (allowed-accounts: research) for the account cases"
	else
		say "--no-kube-writes: the cases naming $NS_TOKEN are skipped"
	fi
	prepare_files "$ns"
	for i in "${!C_NAME[@]}"; do
		if [ -z "${C_PATH[$i]}" ]; then
			echo "  skip ${C_NAME[$i]}: needs the namespace the driver makes (no --no-kube-writes)"
			SKIPPED=$((SKIPPED + 1))
		fi
	done
	start_webhook
	# The driver's own processes yield to the benchmark; the webhook does not.
	renice -n "$NICE" -p $$ >/dev/null 2>&1 || true
	RSS[0]=$(stack_rss_kib "$SERVER_PID")

	for ((p = 1; p <= PASSES; p++)); do
		if [ "$p" = 1 ]; then scenario "pass 1"
		elif [ "$p" = 2 ]; then
			scenario "passes 2-$PASSES"
			echo "  (the same corpus again; odd passes on one kept-alive connection, even ones"
			echo "   with a connection per request; only answers that fail are shown)"
		fi
		run_pass "$p" || break
		RSS[p]=$(stack_rss_kib "$SERVER_PID")
		[ "$p" = "$RSS_FROM" ] && owners5=$(owners_total)
	done
	if [ -n "$SERVER_PID" ] && [ "$PASSES" -ge 2 ] && [ "$p" -gt "$PASSES" ] &&
	    [ "$LATER_FAILS" = 0 ]; then
		pass "passes 2-$PASSES: every answer as in pass 1 ($REQUESTS requests over $PASSES_DONE passes)"
	fi
	ownersN=$(owners_total)

	[ -n "$SERVER_PID" ] && slow_clients
	[ -n "$SERVER_PID" ] && http_limits

	scenario "process and memory"
	if [ -n "$SERVER_PID" ]; then
		if kill -0 "$SERVER_PID" 2>/dev/null &&
		    [ "$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 \
		    --cacert "$CA_CERT" "$BASE_URL/healthz" 2>/dev/null)" = 200 ]; then
			pass "slurm-bridge-admission is alive and /healthz answers (pid $SERVER_PID)"
		elif kill -0 "$SERVER_PID" 2>/dev/null; then
			fail "slurm-bridge-admission is alive but /healthz does not answer 200"
		else
			server_died "after the slow clients"
		fi
	fi
	echo "  slowest answer: $SLOWEST_MS ms ($SLOWEST_WHAT)"
	RSS_REPORT="VmRSS before pass 1 ${RSS[0]:-?} KiB"
	if [ -n "${RSS[$RSS_FROM]:-}" ] && [ -n "${RSS[$PASSES]:-}" ] && [ "$PASSES" -gt "$RSS_FROM" ]; then
		grow=$((RSS[PASSES] - RSS[RSS_FROM]))
		RSS_REPORT+=", after pass 1 ${RSS[1]} KiB, after pass $RSS_FROM ${RSS[$RSS_FROM]} KiB, after pass $PASSES ${RSS[$PASSES]} KiB ($(printf '%+d' "$grow") KiB over passes $((RSS_FROM + 1))-$PASSES)"
		echo "  VmRSS after each pass (KiB): ${RSS[*]:1}"
		echo "  owner store: ${owners5:-?} objects after pass $RSS_FROM, ${ownersN:-?} at the end (the stack's churn)"
		if [ "$grow" -le "$RSS_LIMIT_KIB" ]; then
			pass "memory flat: VmRSS ${RSS[$RSS_FROM]} -> ${RSS[$PASSES]} KiB from pass $RSS_FROM to $PASSES ($(printf '%+d' "$grow") KiB, limit +$RSS_LIMIT_KIB)"
		else
			fail "memory grew: VmRSS ${RSS[$RSS_FROM]} -> ${RSS[$PASSES]} KiB from pass $RSS_FROM to $PASSES ($(printf '%+d' "$grow") KiB, limit +$RSS_LIMIT_KIB)"
		fi
	elif [ -n "$SERVER_PID" ]; then
		echo "  skip memory check: it needs more than $RSS_FROM passes and a live process"
		SKIPPED=$((SKIPPED + 1))
	fi
}

# --- The API part -------------------------------------------------------------------

# api_state NS...: the pods of the namespaces, one line each, tab-separated,
# '-' for what is missing (read splits on runs of tabs): name, PodScheduled
# status, reason, message, node, job id label, phase.
api_state() {
	local ns
	for ns in "$@"; do
		k get pods -n "$ns" -o json 2>/dev/null
	done | jq -r 'def v: if . == null or . == "" then "-" else . end;
	    .items[] | [.metadata.name,
	    ((.status.conditions // []) | map(select(.type == "PodScheduled"))[0]
		| (.status | v), (.reason | v), (.message | v)),
	    (.spec.nodeName | v),
	    (.metadata.labels["scheduler.slinky.slurm.net/slurm-jobid"] | v),
	    (.status.phase | v)] | @tsv'
}

api_part() {
	local ns ns_acct i name target json out bridge_pid rss0 rss1 t pending
	local st reason msg node jobid phase
	local -a names=()
	scenario "API: pods with bad annotations straight to the scheduler"
	k get --raw /readyz >/dev/null 2>&1 || die "the stack's API server is not up (make cluster-up)"
	stack_alive "$BRIDGE_PIDFILE" slurm-bridge || die "the scheduler is not running (make bridge-up)"
	bridge_pid=$(stack_pid "$BRIDGE_PIDFILE")
	rss0=$(stack_rss_kib "$bridge_pid")
	ns=bad-input-api-$$
	ns_acct=bad-input-api-$$-acct
	make_ns "$ns" "" slurm-bridge.io/managed=true || die "could not create namespace $ns"
	make_ns "$ns_acct" research slurm-bridge.io/managed=true ||
		die "could not create namespace $ns_acct"
	wait_for 30 k -n "$ns" get serviceaccount default
	wait_for 30 k -n "$ns_acct" get serviceaccount default
	for i in "${!C_NAME[@]}"; do
		[ "${C_API[$i]}" = yes ] || continue
		name=${C_NAME[$i]}
		target=$ns
		[ "${C_NS[$i]}" = 1 ] && target=$ns_acct
		json=$(jq -c --arg ns "$target" --arg name "$name" '.request.object
		    | del(.metadata.uid, .metadata.resourceVersion, .metadata.generateName)
		    | .metadata.namespace = $ns | .metadata.name = $name
		    | .metadata.annotations = ((.metadata.annotations // {})
			| if has("slurmjob.slinky.slurm.net/partition") then .
			  else .["slurmjob.slinky.slurm.net/partition"] = "bad-input-no-such-partition" end)
		    | .spec.schedulerName = "slurm-bridge"
		    | .spec.terminationGracePeriodSeconds = 0' "$BAD_DIR/${C_FILE[$i]}" 2>&1) || {
			fail "$name: not a pod: $json"
			continue
		}
		if ! out=$(k create -f - <<<"$json" 2>&1); then
			fail "$name: the API server refused the pod: $out"
			continue
		fi
		names+=("$i")
	done
	[ ${#names[@]} -gt 0 ] || return
	say "created ${#names[@]} pods in $ns and $ns_acct; waiting up to ${API_WAIT}s for the scheduler"
	for ((t = 0; t < API_WAIT; t += 2)); do
		api_state "$ns" "$ns_acct" >"$WORK/api.tsv"
		pending=$(awk -F'\t' '$2 == "False" && $4 != "-"' "$WORK/api.tsv" | wc -l)
		[ "$pending" -ge ${#names[@]} ] && break
		sleep 2
	done
	# Still Pending a little later?
	sleep 5
	api_state "$ns" "$ns_acct" >"$WORK/api.tsv"
	for i in "${names[@]}"; do
		name=${C_NAME[$i]}
		CHECKS+=("$i:api")
		st='' reason='' msg='' node='' jobid='' phase=''
		IFS=$'\t' read -r _ st reason msg node jobid phase < <(awk -F'\t' -v n="$name" '$1 == n' "$WORK/api.tsv")
		if [ -z "$st" ]; then
			CHECK_FAILED[$i:api]=1
			fail "$name (API): the pod is gone"
		elif [ "$node" != - ] || [ "$jobid" != - ]; then
			CHECK_FAILED[$i:api]=1
			fail "$name (API): placed: node $node, job $jobid"
		elif [ "${st:-}" != False ] || [ "${reason:-}" != Unschedulable ]; then
			CHECK_FAILED[$i:api]=1
			fail "$name (API): PodScheduled '${st:-none}' reason '${reason:-}' after ${API_WAIT}s, want False/Unschedulable: ${msg:-}"
		elif [ "${phase:-}" != Pending ]; then
			CHECK_FAILED[$i:api]=1
			fail "$name (API): phase '${phase:-}', want Pending"
		elif [ "${C_MSG[$i]}" != - ] && [[ $msg != *"${C_MSG[$i]}"* ]]; then
			CHECK_FAILED[$i:api]=1
			fail "$name (API): the condition does not name ${C_MSG[$i]}: $msg"
		else
			pass "$name (API): Pending, PodScheduled=False: ${msg:0:160}"
		fi
	done
	if squeue -h -o '%i %j' 2>/dev/null | grep -E " ($ns|$ns_acct)/" >"$WORK/api-jobs"; then
		fail "Slurm jobs were submitted for the bad pods: $(head -n 3 "$WORK/api-jobs" | tr '\n' ' ')"
	else
		pass "no Slurm job for the bad pods (squeue)"
	fi
	if stack_alive "$BRIDGE_PIDFILE" slurm-bridge &&
	    [ "$(stack_pid "$BRIDGE_PIDFILE")" = "$bridge_pid" ] &&
	    curl -sf --max-time 5 "http://$LOCAL_IP:$BRIDGE_PORT/healthz" >/dev/null; then
		rss1=$(stack_rss_kib "$bridge_pid")
		pass "the scheduler is alive, same pid $bridge_pid, /healthz ok (VmRSS ${rss0:-?} -> ${rss1:-?} KiB)"
	else
		fail "the scheduler (pid $bridge_pid) died, restarted or is unhealthy; see $LOG_DIR/slurm-bridge.log"
	fi
}

# --- Main ---------------------------------------------------------------------------

load_manifest
echo "bad-input: ${#C_NAME[@]} cases in $MANIFEST; work directory $WORK"
[ "$RUN_WEBHOOK" = 1 ] && webhook_part
[ "$RUN_EXTENDER" = 1 ] && extender_part
[ "$RUN_API" = 1 ] && api_part

tried=${#CHECKS[@]}
bad=0
for key in "${CHECKS[@]+"${CHECKS[@]}"}"; do
	[ -n "${CHECK_FAILED[$key]:-}" ] && bad=$((bad + 1))
done
echo
echo "bad-input: cases tried $tried (case x path), passed $((tried - bad)), failed $bad, skipped $SKIPPED"
[ -n "${RSS_REPORT:-}" ] && echo "bad-input: $RSS_REPORT"
if [ "$E2E_FAILED" -gt 0 ]; then
	echo "bad-input: failures:"
	printf '  %s\n' "${E2E_FAILURES[@]}"
fi
[ "$RUN_WEBHOOK" = 1 ] && echo "bad-input: $REQUESTS requests over $PASSES_DONE passes, slowest answer $SLOWEST_MS ms ($SLOWEST_WHAT)"
echo "bad-input: the longest parts ($SECONDS s in all):"
e2e_times 5
echo "bad-input: $E2E_PASSED passed, $E2E_FAILED failed"
[ "$E2E_FAILED" -eq 0 ]
