# make bench's epilog scenario: the node epilog's CPU per job end.
#
# bench/run.sh sources it.  bench/tools/epilogcpu.py starts the epilog
# built here as slurmd does, EPILOG_RUNS times (default 500) per case: a
# native job, and a bridge job of four pods whose cgroups are gone (and,
# where a kubelet runs on this machine, over its own cgroup tree); and
# /bin/true beside them, the cost of starting any program.  slurmd's own
# share per ended pod (the epilogs included) is in the singles and fixed
# scenarios' CPU figures.
# shellcheck shell=bash disable=SC2034,SC2154 # the driver's variables

EPILOG_RUNS=${EPILOG_RUNS:-500}

scenario_epilog() {
say "epilog: $EPILOG_RUNS runs a case (bench/tools/epilogcpu.py)"
"$here/tools/epilogcpu.py" "$(dirname "$BRIDGE_BIN")/slurm-bridge-epilog" "$EPILOG_RUNS" >"$WORK/epilog.json"
rec run --scenario epilog --system epilog -j result="$WORK/epilog.json"
}
