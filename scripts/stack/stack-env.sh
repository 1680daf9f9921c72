# The local stack's settings and helpers: its scripts and the tests source it.
# shellcheck shell=bash
# Variables are used by the scripts that source this file:
# shellcheck disable=SC2034
#
# The scripts of scripts/ and test/ that use the stack source it
# (". scripts/stack/stack-env.sh"): it is their one library of settings and
# helpers (processes, waits, probes of the running daemons, a private
# webhook). Sourcing only defines variables and functions (and exports
# KUBECONFIG, pointing kubectl at the stack). From the environment:
#
#   STACK_DIR   state root (default /var/lib/slurm-bridge-stack)
#   NODES       number of nodes (1..1000), Slurm and Kubernetes share names n1..nN;
#               defaults to the size of the existing stack ($STACK_DIR/nodes,
#               written by cluster-up), else 4
#   KUBE_APISERVER KUBE_CONTROLLER_MANAGER ETCD KWOK   binary overrides
#   KUBE_VERSION  the Kubernetes release (1.37, 1.35 or 1.34; default: the
#               running stack's, else 1.37); see kube_release_versions
#   KWOK_VERSION ETCD_VERSION JOBSET_VERSION LWS_VERSION  overrides of the
#               versions that release brings
#   KUEUE_VERSION KUBERAY_VERSION  Kueue's and KubeRay's controllers (one
#               version for every release; Kueue v0.17 and KubeRay v1.5 are
#               built against client-go 0.35 and 0.34, which 1.34 to 1.37 serve)
#   K8S_CACHE   where build-k8s.sh caches the stack's Go binaries
#
# KUBECONFIG is always $STACK_DIR/kubeconfig (admin). Everything listens on
# 127.0.0.1, on the fixed *_PORT values below.

STACK_SCRIPTS=${STACK_SCRIPTS:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
STACK_DIR=${STACK_DIR:-/var/lib/slurm-bridge-stack}
if [ -z "${NODES:-}" ] && [ -s "$STACK_DIR/nodes" ]; then NODES=$(cat "$STACK_DIR/nodes"); fi
NODES=${NODES:-4}

STACK_MARKER=$STACK_DIR/.slurm-bridge-stack   # guards cluster-down --purge
RUN_DIR=$STACK_DIR/run        # PID files, MariaDB socket
LOG_DIR=$STACK_DIR/log        # one <daemon>.log per daemon
PKI_DIR=$STACK_DIR/pki        # CA, serving and client certificates
GPU_DEV_DIR=$STACK_DIR/dev    # fake /dev/nvidia<i> character devices
export KUBECONFIG=$STACK_DIR/kubeconfig
BRIDGE_KUBECONFIG=$STACK_DIR/bridge.kubeconfig
ADMISSION_KUBECONFIG=$STACK_DIR/admission.kubeconfig
# The config file both daemons read on the local stack (bridge-up writes it).
BRIDGE_CONFIG=$STACK_DIR/config.yaml
ADMISSION_CERT=$PKI_DIR/admission.crt
ADMISSION_KEY=$PKI_DIR/admission.key
CA_CERT=$PKI_DIR/ca.crt

# PID files of the two daemons that `make bridge-up` starts; cluster-down
# stops them too.
BRIDGE_PIDFILE=$RUN_DIR/slurm-bridge.pid
ADMISSION_PIDFILE=$RUN_DIR/slurm-bridge-admission.pid

# --- Ports (all on 127.0.0.1) ----------------------------------------------
LOCAL_IP=127.0.0.1
SLURMCTLD_PORT=6817
SLURMDBD_PORT=6819
SLURMD_PORT_BASE=17000        # node nK listens on SLURMD_PORT_BASE + K
MYSQL_PORT=3307
ETCD_PORT=2379
ETCD_PEER_PORT=2380
APISERVER_PORT=6443
KCM_PORT=10257                # kube-controller-manager healthz (https)
KWOK_PORT=10247               # kwok healthz/metrics (http)
KUBELET_PORT=10250            # make node-up: the real node's kubelet
KUBELET_HEALTHZ_PORT=10248
KUBE_SCHEDULER_PORT=10259     # make node-up: kube-scheduler healthz (https)

# --- The real node (make node-up) -------------------------------------------
# One kubelet with containerd and runc, for the system pods (the in-cluster
# daemons); its pods are on a bridge of their own, POD_CIDR.
SYSTEM_NODE=${SYSTEM_NODE:-system-1}
NODE_IP=10.89.0.1             # on a link of its own: a node's IP may not be loopback
NODE_LINK=sbnode0
POD_CIDR=10.88.0.0/16
POD_GATEWAY=10.88.0.1
CONTAINERD_SOCK=$RUN_DIR/containerd/containerd.sock
BRIDGE_PORT=8080              # slurm-bridge --listen: metrics, health, extender
APISERVER_URL=https://$LOCAL_IP:$APISERVER_PORT

# --- Slurm ---------------------------------------------------------------
SLURM_CLUSTER=bridge
SLURM_PARTITION=slurm-bridge
SLURM_BLOCK_PARTITION=slurm-bridge-block   # only where stack_has_blocks
SLURM_CONF_DIR=/etc/slurm     # default path, so clients need no SLURM_CONF
SLURM_STATE_DIR=$STACK_DIR/slurm
MYSQL_DIR=$STACK_DIR/mysql
MYSQL_SOCKET=$RUN_DIR/mysqld.sock
MUNGE_SOCKET=/run/munge/munge.socket.2   # munge's default: clients need no env

# --- Slurm release -------------------------------------------------------------
# SLURM picks the Slurm release of the stack.  22.05 is Debian 12's own,
# installed on the host; the others run in a root of the Debian suite that
# ships them (scripts/stack/slurm/root.sh), and the daemons are built
# against it.  Unset, it is the release the stack was brought up with
# (cluster-up keeps it in $STACK_DIR/slurm-release), else 22.05.
if [ -z "${SLURM:-}" ] && [ -s "$STACK_DIR/slurm-release" ]; then SLURM=$(cat "$STACK_DIR/slurm-release"); fi
SLURM=${SLURM:-22.05}
SLURM_RELEASES="22.05=host 24.11=trixie 26.05=sid"
# slurm_release_suite RELEASE: the suite of RELEASE ("host" for 22.05).
slurm_release_suite() {
	local e
	for e in $SLURM_RELEASES; do
		if [ "${e%%=*}" = "$1" ]; then echo "${e#*=}"; return 0; fi
	done
	return 1
}
# On a release of its own root, the host reaches that root's Slurm through
# $SLURM_BIN_DIR: "in-root CMD..." runs CMD there, and sinfo, squeue,
# sacct, scontrol, ... are wrappers of it, first on PATH (cluster-up writes
# them).  STACK_EXEC is the prefix that runs one of our daemons in the
# right place, and BRIDGE_BIN and ADMISSION_BIN are the binaries built for
# the release (make SLURM=... all).
SLURM_BIN_DIR=$STACK_DIR/slurm-bin
SLURM_CLIENTS="sinfo squeue sacct sacctmgr scontrol scancel salloc sbatch srun sprio sshare sdiag sstat sreport"
_top=$(cd "$STACK_SCRIPTS/../.." && pwd)
if [ "$SLURM" = 22.05 ]; then
	STACK_EXEC=()
	BRIDGE_BIN=${BRIDGE_BIN:-$_top/slurm-bridge}
	ADMISSION_BIN=${ADMISSION_BIN:-$_top/slurm-bridge-admission}
else
	STACK_EXEC=()
	[ -n "${SLURM_IN_ROOT:-}" ] || STACK_EXEC=("$SLURM_BIN_DIR/in-root")
	BRIDGE_BIN=${BRIDGE_BIN:-$_top/build-slurm-$SLURM/slurm-bridge}
	ADMISSION_BIN=${ADMISSION_BIN:-$_top/build-slurm-$SLURM/slurm-bridge-admission}
	if [ -z "${SLURM_IN_ROOT:-}" ]; then
		case ":$PATH:" in *":$SLURM_BIN_DIR:"*) ;; *) export PATH=$SLURM_BIN_DIR:$PATH ;; esac
	fi
fi
unset _top

# --- Versions and binaries -------------------------------------------------
# KUBE_VERSION: the Kubernetes release of the stack, as 1.37, v1.37 or a
# full v1.37.2.  Unset, it is the running stack's (cluster-up records it in
# $STACK_DIR/kube-version), else the newest we support.  Each release has the
# controllers, kwok and etcd built for it: JobSet and LWS built against its
# client-go, and etcd 3.6 where the apiserver wants it (Debian's 3.4 serves
# 1.34 only, with two feature gates off; see k8s/up.sh).
KUBE_RELEASES="1.37 1.35 1.34"   # newest first; CI runs the first and last-but-one
if [ -z "${KUBE_VERSION:-}" ] && [ -s "$STACK_DIR/kube-version" ]; then KUBE_VERSION=$(cat "$STACK_DIR/kube-version"); fi
KUBE_VERSION=${KUBE_VERSION:-${K8S_VERSION:-1.37}}
# kube_release_versions MINOR: "K8S JOBSET LWS KWOK ETCD CONTROLLER_RUNTIME"
# for a release line, or fails.  ETCD "debian" is /usr/bin/etcd (3.4).
# kwok stays at v0.7.0: it only plays nodes and pods over the API, which
# 1.37 serves alike, and v0.8.0 no longer falls back to its built-in node
# stages when a stage file (ours keeps finalizers) is given.
kube_release_versions() {
	case $1 in
	1.37) echo "v1.37.2 v0.12.0 v0.9.0 v0.7.0 v3.6.13 v0.25.2" ;;
	1.35) echo "v1.35.4 v0.11.1 v0.8.0 v0.7.0 v3.6.13 -" ;;
	1.34) echo "v1.34.4 v0.10.1 v0.7.0 v0.7.0 debian -" ;;
	*) return 1 ;;
	esac
}
# kube_go_min MINOR: the Go a release's go.mod declares, the oldest that
# builds it (GOTOOLCHAIN=local); scripts/dev/go-check.sh checks it first.
# The DRA driver (k8s/dra-build.sh) needs 1.26 whatever the release.
kube_go_min() {
	case $1 in
	1.34) echo "1.24.0" ;;
	1.35) echo "1.25.0" ;;
	*) echo "1.26.0" ;;
	esac
}
_kv=${KUBE_VERSION#v}
_kminor=$(echo "$_kv" | cut -d. -f1,2)
if _kvers=$(kube_release_versions "$_kminor"); then
	read -r _k8s _js _lws _kwok _etcd _cr <<<"$_kvers"
	case $_kv in *.*.*) _k8s=v$_kv ;; esac
else
	_k8s=v$_kv _js=v0.12.0 _lws=v0.9.0 _kwok=v0.7.0 _etcd=v3.6.13 _cr=-
fi
KUBE_MINOR=$_kminor
K8S_VERSION=$_k8s
KWOK_VERSION=${KWOK_VERSION:-$_kwok}
ETCD_VERSION=${ETCD_VERSION:-$_etcd}
JOBSET_VERSION=${JOBSET_VERSION:-$_js}
LWS_VERSION=${LWS_VERSION:-$_lws}
CONTROLLER_RUNTIME_VERSION=${CONTROLLER_RUNTIME_VERSION:-$_cr}
KUEUE_VERSION=${KUEUE_VERSION:-v0.17.0}
KUBERAY_VERSION=${KUBERAY_VERSION:-v1.5.0}
unset _kv _kminor _kvers _k8s _js _lws _kwok _etcd _cr
K8S_CACHE=${K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/slurm-bridge}
# The binaries that build-k8s.sh builds from one Go module, keyed by the
# versions of everything in that module.
STACK_GO_DIR=$K8S_CACHE/stack-k8s-$K8S_VERSION-lws-$LWS_VERSION-jobset-$JOBSET_VERSION

# stack_cache_path NAME: where scripts/stack/build-k8s.sh caches binary NAME.
stack_cache_path() {
	case $1 in
	kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kubelet|lws|jobset)
		echo "$STACK_GO_DIR/$1" ;;
	kwok) echo "$K8S_CACHE/kwok-$KWOK_VERSION/kwok" ;;
	etcd) echo "$K8S_CACHE/etcd-$ETCD_VERSION/etcd" ;;
	kueue) echo "$K8S_CACHE/kueue-$KUEUE_VERSION/kueue" ;;
	kuberay) echo "$K8S_CACHE/kuberay-$KUBERAY_VERSION/kuberay" ;;
	*) return 1 ;;
	esac
}

# Without a kubectl of its own, the machine uses the one cluster-up builds
# (of the stack's Kubernetes version).
if ! command -v kubectl >/dev/null 2>&1; then
	export PATH=$PATH:$STACK_GO_DIR
fi

# stack_resolve_bin VAR NAME [build]: sets $VAR to the binary NAME, looking at
# (1) the environment variable VAR, (2) PATH, (3) the build-k8s.sh cache.
# With "build" as third argument a missing cached binary is built (slow).
# etcd is looked up on PATH (Debian's /usr/bin/etcd, 3.4) only when the
# release wants that one (ETCD_VERSION=debian); else the cache's is used.
stack_resolve_bin() {
	local var=$1 name=$2 build=${3:-} path
	path=${!var:-}
	if [ -z "$path" ] && { [ "$name" != etcd ] || [ "$ETCD_VERSION" = debian ]; }; then
		path=$(command -v "$name" 2>/dev/null || true)
	fi
	if [ -z "$path" ]; then
		path=$(stack_cache_path "$name")
		if [ ! -x "$path" ] && [ "$build" = build ]; then
			"$STACK_SCRIPTS/build-k8s.sh" "$name" >&2
		fi
	fi
	if [ ! -x "$path" ]; then
		echo "stack-env: no $name binary (set $var, put it on PATH, or run scripts/stack/build-k8s.sh $name)" >&2
		return 1
	fi
	printf -v "$var" '%s' "$path"
}

# stack_helm: sets HELM to the Helm CLI ($HELM, else the one built from Go
# modules at HELM_VERSION into the cache, building it the first time: the
# chart's lint, the plain manifests and make in-cluster-test use it).
HELM_VERSION=${HELM_VERSION:-v3.22.0}
stack_helm() {
	[ -n "${HELM:-}" ] && [ -x "$HELM" ] && return 0
	HELM=$K8S_CACHE/helm-$HELM_VERSION/helm
	[ -x "$HELM" ] && return 0
	echo "stack-env: building helm $HELM_VERSION from Go modules (once)" >&2
	(cd / && GOBIN=$(dirname "$HELM") GOFLAGS=-mod=mod go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION") >&2 || return 1
}

# stack_resolve_bins VAR=NAME...: stack_resolve_bin for several binaries,
# building every missing one in a single build-k8s.sh run (one Go build
# compiles what they share once, with both cores busy).
stack_resolve_bins() {
	local e missing=()
	for e in "$@"; do
		stack_resolve_bin "${e%%=*}" "${e#*=}" 2>/dev/null || missing+=("${e#*=}")
	done
	if [ ${#missing[@]} -gt 0 ]; then "$STACK_SCRIPTS/build-k8s.sh" "${missing[@]}" >&2; fi
	for e in "$@"; do stack_resolve_bin "${e%%=*}" "${e#*=}" || return 1; done
}

# stack_since T0 [DECIMALS]: the seconds since T0 (an $EPOCHREALTIME) with
# DECIMALS (default 1) decimals and an "s", e.g. "2.5s".
stack_since() { awk -v a="$1" -v b="$EPOCHREALTIME" -v d="${2:-1}" 'BEGIN { printf "%." d "fs", b - a }'; }

# Wall-clock laps of a script's parts: stack_lap NAME closes the part
# that began at the previous lap (or at STACK_T_MARK); stack_laps prints
# them as "a 1s, b 2s".
STACK_T_MARK=${STACK_T_MARK:-$EPOCHREALTIME}
STACK_LAPS=()
stack_lap() {
	local now=$EPOCHREALTIME
	STACK_LAPS+=("$(awk -v a="$STACK_T_MARK" -v b="$now" -v w="$1" 'BEGIN { printf "%s %.0fs", w, b - a }')")
	STACK_T_MARK=$now
}
stack_laps() { (IFS=,; echo "${STACK_LAPS[*]}") | sed 's/,/, /g'; }

# --- Nodes and topology -----------------------------------------------------
# Leaf switches hold at most 16 nodes, and there are always at least two (so
# topology-aware placement has something to choose), unless NODES=1.
stack_leaf_count() {
	local n=$(( (NODES + 15) / 16 ))
	[ "$n" -lt 2 ] && n=2
	[ "$n" -gt "$NODES" ] && n=$NODES
	echo "$n"
}
# Nodes per leaf: spread evenly, e.g. 4 -> 2+2, 8 -> 4+4, 64 -> 16*4.
stack_nodes_per_leaf() {
	local leaves; leaves=$(stack_leaf_count)
	echo $(( (NODES + leaves - 1) / leaves ))
}
stack_node_names() { local k; for ((k = 1; k <= NODES; k++)); do echo "n$k"; done; }
# stack_node_leaf K: leaf switch name of node nK.
stack_node_leaf() { echo "leaf$(( ($1 - 1) / $(stack_nodes_per_leaf) + 1 ))"; }
stack_node_port() { echo $(( SLURMD_PORT_BASE + $1 )); }
# Slurm 25.05 on reads topology.yaml: several topologies, one per
# partition.  There the stack adds topology/block blocks, taken across the
# leaf switches (n1 n3 | n2 n4 for 4 nodes), for the partition
# SLURM_BLOCK_PARTITION; label slurm-bridge.io/block.  Blocks of two
# nodes, of sixteen from 32 nodes on (the bench's 64: four, as an NVL72
# rack guarantees 16 of its 18 nodes).
stack_has_blocks() { [ "$SLURM" != 22.05 ] && [ "$SLURM" != 24.11 ] && [ "$NODES" -ge 4 ]; }
stack_block_size() { if [ "$NODES" -ge 32 ]; then echo 16; else echo 2; fi; }
stack_block_count() { echo $(( NODES / $(stack_block_size) )); }
# stack_node_block K: block name of node nK.
stack_node_block() { echo "b$(( ($1 - 1) % $(stack_block_count) + 1 ))"; }

# Up to STACK_MAX_NODES: node nK's slurmd listens on SLURMD_PORT_BASE + K
# (17001..18000), clear of every other port here.  Past STACK_SMALL_NODES
# the stack is a large one: its per-node timers are slower, so that a
# thousand slurmds and kwok nodes do not keep two cores busy when idle
# (see slurm/up.sh and k8s/up.sh); up to it, nothing changes.
STACK_MAX_NODES=1000
STACK_SMALL_NODES=64
stack_validate_nodes() {
	if ! [[ $NODES =~ ^[1-9][0-9]*$ ]] || [ "$NODES" -gt "$STACK_MAX_NODES" ]; then
		echo "stack-env: NODES must be 1..$STACK_MAX_NODES (got '$NODES')" >&2
		return 1
	fi
}
# stack_large: true when NODES is past STACK_SMALL_NODES.
stack_large() { [ "$NODES" -gt "$STACK_SMALL_NODES" ]; }

# --- Process helpers ----------------------------------------------------------
# Every daemon is tracked by a PID file in $RUN_DIR; nothing is found by name.

# stack_pid PIDFILE: prints the PID recorded in PIDFILE (empty if none).
stack_pid() { if [ -s "$1" ]; then tr -dc '0-9' <"$1"; fi; }

# stack_alive PIDFILE [COMM]: true if the recorded process exists and, when
# COMM is given, its /proc/PID/comm (max 15 chars) matches, so that a recycled
# PID is not mistaken for our daemon.
stack_alive() {
	local pid comm
	pid=$(stack_pid "$1")
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
	[ -z "${2:-}" ] && return 0
	comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
	# Debian's slurmctld and slurmd are alternatives of slurmctld-wlm and
	# slurmd-wlm: a daemon that re-executes itself (scontrol reconfigure
	# on 23.11 and later) comes back under that name.
	[ "$comm" = "${2:0:15}" ] || [ "$comm" = "$(printf %.15s "$2-wlm")" ]
}

# stack_stop NAME PIDFILE [COMM] [TIMEOUT_S]: SIGTERM, wait, then SIGKILL.
stack_stop() { stack_stop_many "${4:-10}" "$1|$2|${3:-}"; }

# stack_stop_pid NAME PID [TIMEOUT_S]: the same for a child started without
# a PID file (a private instance of a daemon, say).
stack_stop_pid() {
	local pf
	pf=$(mktemp)
	echo "$2" >"$pf"
	stack_stop "$1" "$pf" "" "${3:-10}" >/dev/null
	rm -f "$pf"
}

# stack_stop_many TIMEOUT_S "NAME|PIDFILE|COMM"...: stops several daemons at
# once: SIGTERM to all, wait up to TIMEOUT_S for all, SIGKILL the rest. Only
# processes recorded in our PID files are signalled. Parallel because e.g. a
# slurmd takes ~1-2 s to exit and there may be 64 of them.
stack_stop_many() {
	local timeout=$1 e name pidfile comm pid i left; shift
	local -a names=() pids=()
	for e in "$@"; do
		IFS='|' read -r name pidfile comm <<<"$e"
		if stack_alive "$pidfile" "$comm"; then
			pid=$(stack_pid "$pidfile")
			kill -TERM "$pid" 2>/dev/null || true
			names+=("$name"); pids+=("$pid")
		fi
		rm -f "$pidfile"
	done
	[ ${#pids[@]} -eq 0 ] && return 0
	for ((i = 0; i < timeout * 10; i++)); do
		left=0
		for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && left=1 && break; done
		[ "$left" = 0 ] && break
		sleep 0.1
	done
	for i in "${!pids[@]}"; do
		if kill -0 "${pids[$i]}" 2>/dev/null; then
			echo "stack: ${names[$i]} (pid ${pids[$i]}) ignored SIGTERM for ${timeout}s, sending SIGKILL" >&2
			kill -KILL "${pids[$i]}" 2>/dev/null || true
		fi
	done
	for pid in "${pids[@]}"; do
		for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	done
	if [ ${#names[@]} -le 8 ]; then
		echo "stack: stopped ${names[*]}"
	else
		echo "stack: stopped ${#names[@]} daemons (${names[*]:0:4} ...)"
	fi
}

# stack_spawn NAME CMD...: runs a foreground daemon in its own session, with
# stdin from /dev/null and output appended to $LOG_DIR/NAME.log (so it holds
# no pipe of the caller, e.g. make), and records its PID in $RUN_DIR/NAME.pid.
# setsid does not fork here (a background job is not a group leader), so $! is
# the daemon itself.
stack_spawn() {
	local name=$1; shift
	mkdir -p "$RUN_DIR" "$LOG_DIR"
	echo "=== $(date '+%F %T') starting: $*" >>"$LOG_DIR/$name.log"
	setsid "$@" </dev/null >>"$LOG_DIR/$name.log" 2>&1 &
	echo $! >"$RUN_DIR/$name.pid"
}

# stack_ensure NAME COMM PROBE_FN TIMEOUT CMD...: start CMD as daemon NAME unless its
# PID file points at a live COMM process started with the same command line
# (kept in $RUN_DIR/NAME.cmd; a changed command line, e.g. new flags after a
# git pull, restarts it); then wait for PROBE_FN.
stack_ensure() {
	local name=$1 comm=$2 probe=$3 timeout=$4; shift 4
	local cmdfile=$RUN_DIR/$name.cmd
	if stack_alive "$RUN_DIR/$name.pid" "$comm"; then
		if [ "$(cat "$cmdfile" 2>/dev/null)" = "$*" ]; then
			echo "stack: $name already running (pid $(stack_pid "$RUN_DIR/$name.pid"))"
		else
			echo "stack: $name command line changed: restarting it"
			stack_stop "$name" "$RUN_DIR/$name.pid" "$comm" 30
		fi
	fi
	if ! stack_alive "$RUN_DIR/$name.pid" "$comm"; then
		if declare -F "prestart_$name" >/dev/null; then "prestart_$name"; fi
		echo "stack: starting $name"
		printf '%s' "$*" >"$cmdfile"
		date -u +%Y-%m-%dT%H:%M:%S >"$RUN_DIR/$name.started"
		stack_spawn "$name" "$@"
	fi
	if ! stack_wait "$name" "$timeout" "$probe"; then
		stack_log_tail "$name" 25
		echo "stack: ERROR: $name did not become ready (log: $LOG_DIR/$name.log)" >&2
		exit 1
	fi
}

# stack_wait DESCRIPTION TIMEOUT_S CMD...: polls CMD every 0.2 s until it
# succeeds; fails after TIMEOUT_S seconds.
stack_wait() {
	local what=$1 timeout=$2 i; shift 2
	for ((i = 0; i < timeout * 5; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "stack: timed out after ${timeout}s waiting for $what" >&2
	return 1
}

# stack_log_tail NAME: last lines of a daemon log, for error messages.
stack_log_tail() {
	if [ -f "$LOG_DIR/$1.log" ]; then tail -n "${2:-15}" "$LOG_DIR/$1.log" | sed "s/^/  $1.log: /" >&2; fi
}

# stack_kubectl ARGS...: kubectl against the stack as admin.
stack_kubectl() { kubectl --kubeconfig="$KUBECONFIG" "$@"; }

# --- Probes of the running daemons -----------------------------------------
# For the tests and benchmarks (test/, bench/).

# stack_metric NAME [PORT]: the value of the sample NAME (labels included,
# e.g. 'slurm_bridge_watch_relists_total{watch="pods"}') on the /metrics of
# the bridge listening on PORT (default BRIDGE_PORT); 0 when there is none.
stack_metric() {
	curl -s "http://$LOCAL_IP:${2:-$BRIDGE_PORT}/metrics" |
		awk -v n="$1" '$1 == n { print $2; f = 1 } END { if (!f) print 0 }'
}

# stack_epilog_api on|off: the stack's node epilog asks the API server
# for the kwok nodes' pods (on), which shows their stop, or reads this
# machine's cgroups as on a site's nodes (off, the default: kwok pods have
# none, so it returns at once).  For the handoff scenarios on kwok.
stack_epilog_api() {
	if [ "$1" = on ]; then : >"$STACK_DIR/bin/epilog-api"; else rm -f "$STACK_DIR/bin/epilog-api"; fi
}

# stack_rss_kib PID: the resident set of a process, KiB; fails once it is gone.
stack_rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

# stack_cpu_ticks PID [children]: the user + system time of a process, in
# clock ticks (getconf CLK_TCK a second), with "children" that of the
# children it has waited for too; fails once it is gone.
stack_cpu_ticks() {
	awk -v c="${2:-}" '{ sub(/^.*\) /, ""); print $12 + $13 + (c == "children" ? $14 + $15 : 0) }' \
		"/proc/$1/stat" 2>/dev/null
}

# stack_no_bridge_jobs [NS...]: true when Slurm holds no live job of the
# bridge; with namespaces, none for a pod or gang of any of them (the job's
# comment names it: "slurm-bridge: pod NS/NAME ...", "... gang NS/GROUP"),
# so that a test waits for its own jobs alone, not the demo's beside it.
# (awk reads all of squeue's output: grep -q would leave it a broken pipe.)
stack_no_bridge_jobs() {
	squeue -h -t PD,R,CG -o '%k' | awk -v nss="$*" '
		BEGIN { n = split(nss, ns, " ") }
		/^slurm-bridge:/ {
			if (n == 0) f = 1
			for (i = 1; i <= n; i++) if (index($0, " " ns[i] "/") > 0) f = 1
		}
		END { exit f }'
}

# stack_issue_cert PREFIX SUBJECT EKU [SANS]: writes PREFIX.key and PREFIX.crt,
# a certificate for SUBJECT (e.g. /CN=slurm-bridge-extender-client) that the
# stack CA signs, valid 2 days, with extendedKeyUsage EKU (clientAuth or
# serverAuth) and the subjectAltName SANS (e.g. "DNS:localhost,IP:127.0.0.1").
stack_issue_cert() {
	local prefix=$1 subj=$2 eku=$3 sans=${4:-} ext
	ext="basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=$eku"
	[ -n "$sans" ] && ext+=$'\n'"subjectAltName=$sans"
	(umask 077; openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
	    -out "$prefix.key" 2>/dev/null) || return 1
	openssl req -new -key "$prefix.key" -subj "$subj" 2>/dev/null |
		openssl x509 -req -CA "$CA_CERT" -CAkey "$PKI_DIR/ca.key" \
			-set_serial "0x$(openssl rand -hex 16)" -sha256 -days 2 \
			-extfile <(echo "$ext") -out "$prefix.crt" 2>/dev/null
}

# stack_admission_start VAR LOG PORT [ARG...]: starts a private webhook on
# 127.0.0.1:PORT beside the stack's (which keeps 9443), as make bridge-up
# runs that one: the stack's serving certificate, the webhook's read-only
# kubeconfig and the config file, then ARGs. Its output goes to LOG. Sets
# VAR to its PID (a child of the caller, to wait for) and ADMISSION_ARGS to
# its arguments, and waits up to 60 s for its /readyz to answer 200 (or 404
# with /healthz 200: a build without /readyz). Fails with a message, and
# LOG's tail, on stderr; the caller stops the process (stack_stop_pid).
ADMISSION_ARGS=()
stack_admission_start() {
	local var=$1 log=$2 port=$3 pid i code url; shift 3
	local -a cacert=(--cacert "$CA_CERT")
	if [ ! -s "$ADMISSION_CERT" ] || [ ! -s "$ADMISSION_KEY" ] || [ ! -s "$CA_CERT" ]; then
		echo "stack: no serving certificate in $PKI_DIR (make cluster-up)" >&2; return 1
	fi
	if [ ! -s "$ADMISSION_KUBECONFIG" ]; then
		echo "stack: no $ADMISSION_KUBECONFIG (make bridge-up)" >&2; return 1
	fi
	if [ ! -x "$ADMISSION_BIN" ]; then
		echo "stack: $ADMISSION_BIN is not built (make)" >&2; return 1
	fi
	if [ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ]; then
		echo "stack: port $port is in use" >&2; return 1
	fi
	ADMISSION_ARGS=(--listen "$LOCAL_IP:$port" --tls-cert "$ADMISSION_CERT"
	    --tls-key "$ADMISSION_KEY" --kubeconfig "$ADMISSION_KUBECONFIG")
	[ -f "$BRIDGE_CONFIG" ] && ADMISSION_ARGS+=(--config "$BRIDGE_CONFIG")
	ADMISSION_ARGS+=("$@")
	"${STACK_EXEC[@]}" "$ADMISSION_BIN" "${ADMISSION_ARGS[@]}" </dev/null >"$log" 2>&1 &
	pid=$!
	printf -v "$var" '%s' "$pid"
	url=https://$LOCAL_IP:$port
	for ((i = 0; i < 300; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 2 "${cacert[@]}" \
		    "$url/readyz" 2>/dev/null)
		[ "$code" = 200 ] && return 0
		if [ "$code" = 404 ] && [ "$(curl -sS -o /dev/null -w '%{http_code}' \
		    --max-time 2 "${cacert[@]}" "$url/healthz" 2>/dev/null)" = 200 ]; then
			return 0
		fi
		sleep 0.2
	done
	sed 's/^/  admission.log: /' "$log" >&2
	echo "stack: $ADMISSION_BIN did not become ready on $LOCAL_IP:$port within 60 s" >&2
	return 1
}

# Convenience lists for the current NODES, e.g. "n1 n2 n3 n4" and "n[1-4]".
NODE_NAMES=$(stack_node_names | paste -sd' ')
if [ "$NODES" -eq 1 ] 2>/dev/null; then SLURM_NODELIST=n1; else SLURM_NODELIST="n[1-$NODES]"; fi
