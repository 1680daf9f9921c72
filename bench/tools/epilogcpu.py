#!/usr/bin/env python3
# make bench's epilog scenario: the CPU the node epilog costs per job end,
# started as slurmd starts it (fork and exec, the job's environment, no
# arguments but the cgroup root), RUNS times per case, measured as the
# children's user + system time (getrusage), which counts the program's
# own start (exec, the loader) and nothing of this script.  Prints one
# JSON object: ms per run for each case.
#
# Usage: epilogcpu.py EPILOG RUNS
import json
import os
import resource
import subprocess
import sys
import tempfile
import uuid


def cpu_ms(argv, env, runs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(runs):
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return round(used * 1000 / runs, 3)


def main():
    epilog, runs = sys.argv[1], int(sys.argv[2])
    base = {"SLURM_JOB_ID": "42", "SLURMD_NODENAME": "n1", "SLURM_JOB_UID": "0",
            "SLURM_JOB_COMMENT": "slurm-bridge: pod team/a (install x)"}
    pods = ",".join(str(uuid.uuid4()) for _ in range(4))
    with tempfile.TemporaryDirectory() as tree:
        # A version 2 tree with the kubelet's kubepods, none of the pods in
        # it: the pods' containers are gone (the common end of a job).
        os.makedirs(os.path.join(tree, "kubepods.slice"))
        with open(os.path.join(tree, "cgroup.controllers"), "w") as f:
            f.write("cpu memory pids\n")
        bridge = dict(base, SPANK_SLURM_BRIDGE_PODS=pods)
        out = {
            "runs": runs,
            "true_ms": cpu_ms(["/bin/true"], base, runs),
            "native_ms": cpu_ms([epilog, "--cgroup-root", tree], base, runs),
            "bridge_ms": cpu_ms([epilog, "--cgroup-root", tree], bridge, runs),
            "bridge_pods": 4,
        }
        # The machine's own tree, when a kubelet runs here.
        if os.path.isdir("/sys/fs/cgroup/pids/kubepods") or \
                os.path.isdir("/sys/fs/cgroup/kubepods.slice") or \
                os.path.isdir("/sys/fs/cgroup/kubepods"):
            out["bridge_host_ms"] = cpu_ms([epilog], bridge, runs)
    print(json.dumps(out))


main()
