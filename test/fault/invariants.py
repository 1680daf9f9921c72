#!/usr/bin/python3
"""The fault suite's invariants, checked against the live stack.

Usage: invariants.py --ns NS [--ns NS ...] [--submitted FILE] [--grace S]
       invariants.py --overlap --ns NS ...

  1. every pod is bound exactly once (one Scheduled Event at most, its node
     the one Slurm gave its job) or pending with a PodScheduled=False reason;
  2. every live Slurm job of the bridge belongs to a live pod;
  3. no pod is in two live jobs, and a bound pod's job-id label names the
     live job that holds it;
  4. no pod is stuck Terminating (deleted more than --grace s ago);
  5. sacct has every job id listed in --submitted (one per line);
  8. no bound pod breaks the scheduler contract on its node: the node has
     every nodeSelector label, matches a required node affinity term, and
     no two live pods on one node hold the same host port (protocol, port
     and an overlapping hostIP).  Written here apart from common/fit.c, so
     that one checks the other;
  7. with --install NS=NAME (two installs on one Slurm): every live job
     that lists a pod of NS names install NAME in its admin_comment, and
     every bound pod of NS is held by a job of NAME.

--overlap checks one sample of the sixth, which a sampler runs all along
a fault (a moment's breach is a breach):

  6. no two jobs ever hold the same CPUs or GPUs of a node at once: a pod
     still running on a node (deleted or not) whose job no longer holds
     that node must fit beside what Slurm has allocated there (CPUAlloc,
     GresUsed) within the node's CPUTot and Gres.

Prints one line per broken invariant and a last line "checked N"; exits 1
if anything is broken.  Reads: kubectl (admin kubeconfig), scontrol, sacct.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

JOBID = "scheduler.slinky.slurm.net/slurm-jobid"
NODE_ANN = "slinky.slurm.net/slurm-node"
LIVE = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED",
        "RESIZING", "REQUEUED"}


def kubectl(*args):
    out = subprocess.run(["kubectl", "--kubeconfig",
                          os.environ["KUBECONFIG"], *args],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def slurm_jobs(strict=False):
    """Every job slurmctld knows: {id: {field: value}} (scontrol -o); with
    strict, None when scontrol could not answer."""
    run = subprocess.run(["scontrol", "show", "job", "-o"],
                         capture_output=True, text=True)
    if strict and run.returncode != 0:
        return None
    out = run.stdout
    jobs = {}
    for line in out.splitlines():
        if not line.startswith("JobId="):
            continue
        f = {}
        # Values never hold " Key=" except AdminComment/Comment, which come
        # last-ish; split on known keys instead of spaces for those.
        for part in line.split(" "):
            if "=" in part:
                k, v = part.split("=", 1)
                f[k] = v
            elif f:
                # a value with spaces (Comment): glue it back
                last = list(f)[-1]
                f[last] += " " + part
        jobs[int(f["JobId"])] = f
    return jobs


def slurm_nodes():
    """{node: {field: value}} (scontrol show node -o)."""
    out = subprocess.run(["scontrol", "show", "node", "-o"],
                         capture_output=True, text=True).stdout
    nodes = {}
    for line in out.splitlines():
        f = dict(p.split("=", 1) for p in line.split(" ") if "=" in p)
        if "NodeName" in f:
            nodes[f["NodeName"]] = f
    return nodes


def gpus(gres):
    """The GPU count in a Gres or GresUsed value (gpu:8, gpu:2(IDX:0-1))."""
    n = 0
    for part in (gres or "").split(","):
        if part.startswith("gpu"):
            count = part.split("(")[0].split(":")[-1]
            n += int(count) if count.isdigit() else 0
    return n


def pod_cpus(pod):
    n = 0
    for c in pod["spec"].get("containers", []):
        v = str(c.get("resources", {}).get("requests", {}).get("cpu", "0"))
        n += int(v[:-1]) / 1000 if v.endswith("m") else float(v)
    return n


def pod_gpus(pod):
    n = 0
    for c in pod["spec"].get("containers", []):
        r = c.get("resources", {})
        v = r.get("limits", {}).get("nvidia.com/gpu") or \
            r.get("requests", {}).get("nvidia.com/gpu") or 0
        n += int(v)
    return n


def overlap(namespaces):
    """Invariant 6, one sample: breaches as strings."""
    pods = []
    for ns in namespaces:
        pods += kubectl("-n", ns, "get", "pods", "-o", "json")["items"]
    jobs, nodes, broken = slurm_jobs(strict=True), slurm_nodes(), []
    # slurmctld not answering (restarting, say): no sample.
    if jobs is None or not nodes:
        return []
    for p in pods:
        md, st = p["metadata"], p.get("status", {})
        node = p["spec"].get("nodeName")
        job = md.get("annotations", {}).get(JOBID) or \
            md.get("labels", {}).get(JOBID)
        if not node or not job or not job.isdigit() or \
                st.get("phase") in ("Succeeded", "Failed"):
            continue
        j = jobs.get(int(job))
        # A job slurmctld no longer lists (purged, or not recovered yet
        # after a restart) says nothing either way.
        if j is None:
            continue
        holds = j.get("JobState") in ("RUNNING", "COMPLETING",
                                      "SUSPENDED") and node in \
            expand(j.get("NodeList", ""))
        n = nodes.get(node)
        if holds or n is None:
            continue
        cpus = float(n.get("CPUAlloc", 0)) + pod_cpus(p)
        gp = gpus(n.get("GresUsed")) + pod_gpus(p)
        if cpus > float(n.get("CPUTot", 0)) or gp > gpus(n.get("Gres")):
            broken.append("%s/%s still runs on %s (its job %s is %s) "
                          "while Slurm has allocated CPUs %s of %s, GPUs "
                          "%d of %d there to others" %
                          (md["namespace"], md["name"], node, job,
                           j.get("JobState"), n.get("CPUAlloc"),
                           n.get("CPUTot"), gpus(n.get("GresUsed")),
                           gpus(n.get("Gres"))))
    return broken


def expand(hostlist):
    """n[1-3],n5 -> [n1, n2, n3, n5] (the stack's node names)."""
    out = subprocess.run(["scontrol", "show", "hostnames", hostlist],
                         capture_output=True, text=True).stdout.split() \
        if hostlist and hostlist != "(null)" else []
    return out


def admin_install(job):
    try:
        return json.loads(job.get("AdminComment", "")).get("install")
    except (ValueError, AttributeError):
        return None


def admin_pods(job):
    try:
        return json.loads(job.get("AdminComment", "")).get("pods", [])
    except (ValueError, AttributeError):
        return []


def requirement(r, have):
    """One NodeSelectorRequirement against a label or field value."""
    op, vals = r.get("operator"), r.get("values") or []
    if op == "In":
        return have is not None and have in vals
    if op == "NotIn":
        return have is None or have not in vals
    if op == "Exists":
        return have is not None
    if op == "DoesNotExist":
        return have is None
    if op in ("Gt", "Lt"):
        try:
            a, b = int(have), int(vals[0])
        except (TypeError, ValueError, IndexError):
            return False
        return a > b if op == "Gt" else a < b
    return False


def node_fits(pod, node):
    """nodeSelector and required node affinity (None, or why not)."""
    labels = node["metadata"].get("labels", {})
    for k, v in (pod["spec"].get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return "nodeSelector %s=%s" % (k, v)
    req = (((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {})
           .get("requiredDuringSchedulingIgnoredDuringExecution"))
    if not req:
        return None
    for t in req.get("nodeSelectorTerms") or []:
        ex, fi = t.get("matchExpressions") or [], t.get("matchFields") or []
        if not ex and not fi:
            continue
        if all(requirement(r, labels.get(r.get("key"))) for r in ex) and \
                all(r.get("key") == "metadata.name" and
                    requirement(r, node["metadata"]["name"]) for r in fi):
            return None
    return "required node affinity"


def host_ports(pod):
    """(protocol, port, hostIP) of the containers and sidecars."""
    out = []
    spec = pod["spec"]
    cs = list(spec.get("containers") or []) + \
        [c for c in spec.get("initContainers") or []
         if c.get("restartPolicy") == "Always"]
    for c in cs:
        for p in c.get("ports") or []:
            if p.get("hostPort"):
                out.append((p.get("protocol") or "TCP", p["hostPort"],
                            p.get("hostIP") or "0.0.0.0"))
    return out


def contract(pods):
    """8: every bound live pod fits its node; no host port twice."""
    broken, checked = [], 0
    nodes = {n["metadata"]["name"]: n
             for n in kubectl("get", "nodes", "-o", "json")["items"]}
    taken = {}
    for key, p in sorted(pods.items()):
        node = p["spec"].get("nodeName")
        if not node or p["metadata"].get("deletionTimestamp") or \
                p.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            continue
        checked += 1
        if node in nodes:
            why = node_fits(p, nodes[node])
            if why:
                broken.append("%s: bound to %s against its %s" %
                              (key, node, why))
        for proto, port, ip in host_ports(p):
            for other, oip in taken.get((node, proto, port), []):
                if ip == oip or "0.0.0.0" in (ip, oip):
                    broken.append("%s and %s: both hold %s port %d on %s" %
                                  (key, other, proto, port, node))
            taken.setdefault((node, proto, port), []).append((key, ip))
    return broken, checked


def ts(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ns", action="append", default=[])
    ap.add_argument("--submitted")
    ap.add_argument("--grace", type=int, default=45)
    ap.add_argument("--overlap", action="store_true")
    ap.add_argument("--install", action="append", default=[],
                    help="NS=NAME: NS's pods are install NAME's")
    a = ap.parse_args()
    if a.overlap:
        broken = overlap(a.ns)
        for b in broken:
            print(b)
        print("checked 1")
        return 1 if broken else 0
    broken, checked = [], 0
    now = datetime.datetime.now(datetime.timezone.utc)

    pods = {}
    for ns in a.ns:
        for p in kubectl("-n", ns, "get", "pods", "-o", "json")["items"]:
            pods[ns + "/" + p["metadata"]["name"]] = p
    events = {}
    for ns in a.ns:
        for e in kubectl("-n", ns, "get", "events.events.k8s.io",
                         "-o", "json")["items"]:
            if e.get("reason") != "Scheduled":
                continue
            uid = e.get("regarding", {}).get("uid")
            n = (e.get("series") or {}).get("count", 1)
            events[uid] = events.get(uid, 0) + n
    jobs = slurm_jobs()
    live = {i: j for i, j in jobs.items()
            if j.get("JobState") in LIVE and
            j.get("Comment", "").startswith("slurm-bridge")}
    holders = {}
    for i, j in live.items():
        for p in admin_pods(j):
            holders.setdefault(p, []).append(i)

    for key, p in sorted(pods.items()):
        md, spec, st = p["metadata"], p["spec"], p.get("status", {})
        node = spec.get("nodeName")
        # The job id: the annotation the Binding set, or the label.
        label = md.get("annotations", {}).get(JOBID) or \
            md.get("labels", {}).get(JOBID)
        deleted = md.get("deletionTimestamp")
        phase = st.get("phase")
        # 4. stuck Terminating
        checked += 1
        if deleted and (now - ts(deleted)).total_seconds() > a.grace:
            broken.append("%s: Terminating since %s" % (key, deleted))
            continue
        if deleted or phase in ("Succeeded", "Failed"):
            continue
        # 1. bound once, or pending with a reason
        checked += 1
        if node:
            n = events.get(md["uid"], 0)
            if n > 1:
                broken.append("%s: %d Scheduled Events" % (key, n))
            ann = md.get("annotations", {}).get(NODE_ANN)
            if label is None or ann is None:
                broken.append("%s: bound to %s without job id or node "
                              "annotation" % (key, node))
        else:
            conds = [c for c in st.get("conditions", [])
                     if c.get("type") == "PodScheduled"]
            if spec.get("schedulerName") == "slurm-bridge" and \
                    not (conds and conds[0].get("message")) and \
                    not (label and int(label) in live):
                broken.append("%s: pending with no reason and no job" % key)
        # 3. one live job, and the label names it
        checked += 1
        h = holders.get(key, [])
        if len(h) > 1:
            broken.append("%s: in %d live jobs %s" % (key, len(h), h))
        if node and label is not None and int(label) not in h:
            broken.append("%s: bound, but its job %s is not live or does "
                          "not list it (live: %s)" % (key, label, h))

    # 8. the scheduler contract on each bound pod's node
    b8, c8 = contract(pods)
    broken += b8
    checked += c8

    # 2. no job without a live pod
    for i, j in sorted(live.items()):
        checked += 1
        owners = [p for p in admin_pods(j) if p in pods and
                  not pods[p]["metadata"].get("deletionTimestamp") and
                  pods[p].get("status", {}).get("phase") not in
                  ("Succeeded", "Failed")]
        mine = [p for p in admin_pods(j) if p.split("/")[0] in a.ns]
        if mine and not owners:
            broken.append("slurm job %d (%s) has no live pod: %s" %
                          (i, j.get("JobState"), mine))

    # 7. no job crosses installs
    installs = dict(x.split("=", 1) for x in a.install)
    for i, j in sorted(live.items()):
        for p in admin_pods(j):
            want = installs.get(p.split("/")[0])
            if want is None:
                continue
            checked += 1
            if admin_install(j) != want:
                broken.append("slurm job %d lists %s of install %s but "
                              "names install %s" %
                              (i, p, want, admin_install(j)))
    for key, p in sorted(pods.items()):
        want = installs.get(key.split("/")[0])
        md = p["metadata"]
        label = md.get("annotations", {}).get(JOBID) or \
            md.get("labels", {}).get(JOBID)
        if want is None or not p["spec"].get("nodeName") or \
                label is None or not label.isdigit() or \
                int(label) not in live:
            continue
        checked += 1
        if admin_install(live[int(label)]) != want:
            broken.append("%s (install %s) is held by slurm job %s of "
                          "install %s" % (key, want, label,
                                          admin_install(live[int(label)])))

    # 5. sacct knows every submitted job
    if a.submitted:
        ids = sorted({int(x) for x in open(a.submitted).read().split()
                      if x.isdigit()})
        if ids:
            out = subprocess.run(
                ["sacct", "-X", "-n", "-P", "-o", "JobID", "-S",
                 "now-1days", "-j", ",".join(map(str, ids))],
                capture_output=True, text=True).stdout.split()
            known = {int(x) for x in out if x.isdigit()}
            for i in ids:
                checked += 1
                if i not in known:
                    broken.append("slurm job %d: not in sacct" % i)

    for b in broken:
        print(b)
    print("checked %d" % checked)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
