#!/usr/bin/env bash
# The e2e scenarios with both daemons instrumented, on the local stack.
#   scripts/dev/sanitize.sh asan [FILTER...]
#       builds both daemons with ASan + UBSan (build-asan/), runs the e2e
#       scenarios (all, or those matching each FILTER) and fails on any
#       sanitizer report, including leaks found when a daemon exits.
#   scripts/dev/sanitize.sh valgrind [FILTER...]
#       runs the normal build under valgrind memcheck (default filters:
#       t_10 t_40 t_80 t_97: valgrind is 20-50x slower, and the timed
#       scenarios would fail for that alone) and fails on any error or
#       definitely lost block.
# Either way the normal daemons are back in place afterwards.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/stack/stack-env.sh
. "$here/../stack/stack-env.sh"
mode=${1:?usage: sanitize.sh asan|valgrind [FILTER...]}; shift
out=$LOG_DIR/$mode
rm -rf "$out"; mkdir -p "$out"
say() { printf 'sanitize: %s\n' "$*"; }

stop_daemons() {  # stop_daemons COMM_BRIDGE COMM_ADMISSION
	stack_stop slurm-bridge "$BRIDGE_PIDFILE" "$1" 60 >/dev/null
	stack_stop slurm-bridge-admission "$ADMISSION_PIDFILE" "$2" 60 >/dev/null
}
restore() {
	say "back to the normal build"
	stop_daemons "${DAEMON_COMM:-slurm-bridge}" "${DAEMON_COMM:-slurm-bridge-admission}"
	unset DAEMON_WRAPPER DAEMON_COMM ASAN_OPTIONS UBSAN_OPTIONS
	rm -f "$top/slurm-bridge" "$top/slurm-bridge-admission"
	make -C "$top" -s all >/dev/null
	"$here/../stack/bridge-up.sh" >/dev/null
}

"$here/../stack/cluster-up.sh" >/dev/null || exit 1
"$here/../stack/workloads-up.sh" >/dev/null || exit 1
stop_daemons slurm-bridge slurm-bridge-admission
case $mode in
asan)
	say "building both daemons with ASan + UBSan"
	rm -f "$top/slurm-bridge" "$top/slurm-bridge-admission"
	make -C "$top" -s BUILD=build-asan LIBK8S_A=build-asan/libk8s.a \
		OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
		LDFLAGS="-fsanitize=address,undefined" all >/dev/null || exit 1
	# Reports go to files, one per process; every daemon the tests start
	# (bridge-up, replicas, the TLS extender) inherits these.
	export ASAN_OPTIONS="log_path=$out/asan:detect_leaks=1:abort_on_error=0"
	export UBSAN_OPTIONS="log_path=$out/ubsan:print_stacktrace=1:halt_on_error=0"
	filters=("$@")
	;;
valgrind)
	make -C "$top" -s all >/dev/null || exit 1
	export DAEMON_WRAPPER="valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --track-origins=yes --log-file=$out/vg.%p"
	export DAEMON_COMM=memcheck-amd64-
	filters=("$@")
	[ $# -eq 0 ] && filters=(t_10 t_40 t_80 t_97)
	;;
*)
	echo "usage: sanitize.sh asan|valgrind [FILTER...]" >&2; exit 2 ;;
esac
trap restore EXIT
"$here/../stack/bridge-up.sh" >/dev/null || { say "the instrumented daemons did not start"; exit 1; }
# Make sure what runs is instrumented (a report-free run proves nothing
# otherwise).
for pf in "$BRIDGE_PIDFILE" "$ADMISSION_PIDFILE"; do
	pid=$(stack_pid "$pf")
	case $mode in
	asan) grep -q libasan "/proc/$pid/maps" ;;
	valgrind) grep -q vgpreload_memcheck "/proc/$pid/maps" ;;
	esac || { say "pid $pid ($pf) is not instrumented"; exit 1; }
done
say "both daemons run instrumented ($mode)"
rc=0
if [ ${#filters[@]} -eq 0 ]; then
	"$top/test/e2e/run.sh" || rc=1
else
	for f in "${filters[@]}"; do "$top/test/e2e/run.sh" "$f" || rc=1; done
fi
# A clean exit runs the leak checks.
stop_daemons "${DAEMON_COMM:-slurm-bridge}" "${DAEMON_COMM:-slurm-bridge-admission}"
sleep 1
findings=0
case $mode in
asan)
	for f in "$out"/*; do
		[ -s "$f" ] || continue
		findings=$((findings + 1))
		say "report: $f"; head -30 "$f"
	done
	say "$(ls "$out" | wc -l) report files; $findings with findings"
	;;
valgrind)
	n=0
	for f in "$out"/vg.*; do
		[ -e "$f" ] || continue
		n=$((n + 1))
		errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$f" | tail -1)
		lost=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$f" | tail -1 | tr -d ,)
		prog=$(sed -n 's/.*Command: \([^ ]*\).*/\1/p' "$f" | head -1)
		say "$(basename "$prog"): ${errs:-?} errors, ${lost:-0} bytes definitely lost ($f)"
		if [ "${errs:-1}" != 0 ] || [ "${lost:-0}" != 0 ]; then
			findings=$((findings + 1)); grep -A20 "^==[0-9]*== [A-Z]" "$f" | head -40
		fi
	done
	say "$n processes under valgrind; $findings with findings"
	[ "$n" -gt 0 ] || findings=1
	;;
esac
[ "$rc" = 0 ] || say "some e2e checks failed under $mode"
[ "$findings" = 0 ] && [ "$rc" = 0 ]
