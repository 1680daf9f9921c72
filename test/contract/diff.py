#!/usr/bin/python3
"""The contract test's Python half (test/contract/diff.sh drives it):
the random cluster and pods, the recording extender, and the comparison.

Usage: diff.py gen --seed S --count N --nodes K --batch B --run RUN
                   --ns NS --out DIR
       diff.py extender --port P --log FILE
       diff.py settled --expect DIR/nodes.json [--cordon-taint] < NodeList
       diff.py verdicts --calls FILE --pods FILE --events FILE
       diff.py compare --ours FILE --verdicts FILE --pods FILE
                       --cluster FILE [--report FILE]
       diff.py freeport

gen writes, from random.Random(S) alone (the same S, N, K: the same
objects): DIR/nodes.json, the K nodes diff-1..diff-K (label diff=yes,
random labels, taints, cordons and allocatable of example.com/foo,
ephemeral-storage and hugepages-2Mi; CPU, memory and pods far above what
any pod asks, since Slurm counts those and the rule does not);
DIR/running.json, the pods already bound to them (host ports, extended
resources, sidecar and plain init containers, pod-level resources); and
DIR/pods-NNN.json, the N pods to place in batches of B (schedulerName
diff-scheduler, nodeSelector diff=yes and random constraints).  Every
object is valid: the API server takes them all.

extender: kube-scheduler's filter extender on 127.0.0.1:P.  Each call's
pod and NodeNames (the nodes that passed all of kube-scheduler's
filters) is appended to FILE as a JSON line, and the answer fits no node
(FailedAndUnresolvableNodes), so no pod binds and nothing changes.

settled: exits 0 when the NodeList on stdin shows every node of
DIR/nodes.json Ready, with its labels, allocatable and taints, and no
other taint but, with --cordon-taint (a kube-controller-manager runs),
node.kubernetes.io/unschedulable on a cordoned node.

verdicts: per pod, kube-scheduler's answer: the NodeNames of its extender
calls (all alike, or it is marked unstable), or, with no call, the empty
set, which its FailedScheduling event must confirm (its message kept).

compare: per pod, kube-scheduler's set against fitcheck's (FILE of
build/fitcheck lines, over the cluster FILE it read); prints the
disagreements by category (per node, a cause of KNOWN, which says why
the two answer apart, or "unexplained"), a table of them with what the
pod asks and the node has, and "contract-diff: N pods, D disagreements";
exits 1 when D > 0 (a disagreement in ALLOWED is listed and not
counted), or when a pod has no verdict or kube-scheduler's changed.
"""
import argparse
import http.server
import json
import os
import random
import re
import socket
import sys
import threading

# --- What the generator draws from ------------------------------------------

ZONES = ["z1", "z2", "z3"]
DISKS = ["ssd", "hdd", "nvme"]
GPUS = ["a100", "h100", "t4"]
TIERS = ["gold", "silver", ""]  # "" is a label with an empty value
# rank: for Gt and Lt.  Leading zeros, an int64 at the limit, past it
# (which Go's strconv.ParseInt refuses) and values that are no integer.
RANKS_SMALL = [str(i) for i in range(0, 21)]
RANKS_ODD = ["007", "9223372036854775807", "9223372036854775808",
             "99999999999999999999", "r7", "5.0"]
# Taint keys and their values.  Not "dedicated": test/e2e/t_36_placement.sh
# refuses to run when any node has that key.
TAINTS = {
    "team": ["a", "b", ""],
    "spot": ["true"],
    "maint": [""],
    "example.com/special": ["x", "y"],
}
EFFECTS = ["NoSchedule", "NoExecute", "PreferNoSchedule"]
PORTS = [53, 8080, 8081, 9000]
PROTOCOLS = [None, "TCP", "UDP", "SCTP"]
HOST_IPS = [None, "0.0.0.0", "127.0.0.1", "10.0.0.1"]
LABEL_KEYS = ["zone", "disk", "gpu-type", "tier", "rank", "nolabel"]
VALUES = {
    "zone": ZONES + ["z9"],
    "disk": DISKS + ["tape"],
    "gpu-type": GPUS + ["v100"],
    "tier": TIERS,
    "rank": RANKS_SMALL[:6] + ["007", "9223372036854775808"],
    "nolabel": ["x"],
}
FOO = "example.com/foo"
EPH = "ephemeral-storage"
HUGE = "hugepages-2Mi"
IMAGE = "registry.k8s.io/pause:3.10"
SCHEDULER = "diff-scheduler"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
# What the DefaultTolerationSeconds admission adds to every pod.
DEFAULT_TOLERATIONS = ("node.kubernetes.io/not-ready",
                       "node.kubernetes.io/unreachable")


def weighted(r, pairs):
    """One value of [(weight, value)...]."""
    total = sum(w for w, _ in pairs)
    x = r.uniform(0, total)
    for w, v in pairs:
        x -= w
        if x <= 0:
            return v
    return pairs[-1][1]


def gen_node(r, i, run, rank):
    name = "diff-%d" % i
    labels = {"diff": "yes", "contract-diff": run,
              "kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
    if r.random() < 0.85:
        labels["zone"] = r.choice(ZONES)
    if r.random() < 0.6:
        labels["disk"] = r.choice(DISKS)
    if r.random() < 0.4:
        labels["gpu-type"] = r.choice(GPUS)
    if r.random() < 0.5:
        labels["tier"] = r.choice(TIERS)
    if rank is not None:
        labels["rank"] = rank
    taints, seen = [], set()
    for _ in range(weighted(r, [(40, 0), (35, 1), (20, 2), (5, 3)])):
        key = r.choice(sorted(TAINTS))
        effect = r.choice(EFFECTS)
        if (key, effect) in seen:
            continue
        seen.add((key, effect))
        t = {"key": key, "effect": effect}
        value = r.choice(TAINTS[key])
        if value:
            t["value"] = value
        taints.append(t)
    alloc = {"cpu": "64", "memory": "256Gi", "pods": "110"}
    foo = weighted(r, [(20, None), (10, 0), (20, 1), (20, 2), (15, 4),
                       (15, 8)])
    if foo is not None:
        alloc[FOO] = str(foo)
    eph = weighted(r, [(25, None), (25, "10Gi"), (25, "50Gi"),
                       (25, "100Gi")])
    if eph is not None:
        alloc[EPH] = eph
    huge = weighted(r, [(60, None), (20, "64Mi"), (20, "128Mi")])
    if huge is not None:
        alloc[HUGE] = huge
    spec = {}
    if taints:
        spec["taints"] = taints
    if r.random() < 0.1:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels,
                     "annotations": {"kwok.x-k8s.io/node": "fake"}},
        "spec": spec,
        "status": {"capacity": dict(alloc), "allocatable": dict(alloc)},
    }


class Ports:
    """Host ports of one pod: no two alike (the API refuses that)."""

    def __init__(self, r):
        self.r, self.used, self.next = r, set(), 10000

    def draw(self):
        for _ in range(10):
            port = self.r.choice(PORTS)
            proto = self.r.choice(PROTOCOLS)
            if (port, proto or "TCP") in self.used:
                continue
            self.used.add((port, proto or "TCP"))
            self.next += 1
            p = {"containerPort": self.next, "hostPort": port}
            if proto:
                p["protocol"] = proto
            ip = self.r.choice(HOST_IPS)
            if ip:
                p["hostIP"] = ip
            return p
        return None


def resources(foo=None, eph=None, huge=None, cpu=None, mem=None):
    """A container's requests and limits."""
    req = {}
    lim = {}
    if cpu:
        req["cpu"] = cpu
    if mem:
        req["memory"] = mem
    if foo:
        # An extended resource: limit and request alike.
        req[FOO] = lim[FOO] = str(foo)
    if eph:
        req[EPH] = eph
    if huge:
        req[HUGE] = lim[HUGE] = huge
        req.setdefault("memory", "64Mi")
    out = {}
    if req:
        out["requests"] = req
    if lim:
        out["limits"] = lim
    return out


def container(r, name, ports, port_p, foo_p, foo_max, eph_p=0.0,
              huge_p=0.0, app=True):
    c = {"name": name, "image": IMAGE}
    ps = []
    if r.random() < port_p:
        for _ in range(r.choice([1, 1, 2])):
            p = ports.draw()
            if p:
                ps.append(p)
    if ps:
        c["ports"] = ps
    res = resources(
        foo=r.randint(1, foo_max) if r.random() < foo_p else None,
        eph=r.choice(["1Gi", "1Gi", "20Gi", "60Gi", "150Gi"])
        if r.random() < eph_p else None,
        huge=r.choice(["2Mi", "32Mi", "100Mi"])
        if r.random() < huge_p else None,
        cpu=r.choice(["100m", "250m", "1"]) if app else None,
        mem=r.choice(["64Mi", "256Mi", "1Gi"]) if app else None)
    if res:
        c["resources"] = res
    return c


def pod_level(r):
    """Pod-level resources (spec.resources): CPU and memory, and
    hugepages, which the pod-level value stands for (not added to the
    containers')."""
    req = {"cpu": "2", "memory": "4Gi"}
    lim = {}
    if r.random() < 0.7:
        req[HUGE] = lim[HUGE] = r.choice(["32Mi", "64Mi", "100Mi"])
    out = {"requests": req}
    if lim:
        out["limits"] = lim
    return out


def pod_meta(name, ns, run, role, batch=None):
    labels = {"contract-diff": run, "contract-diff-role": role}
    if batch is not None:
        labels["contract-diff-batch"] = str(batch)
    return {"name": name, "namespace": ns, "labels": labels}


def gen_running(r, node, j, ns, run):
    ports = Ports(r)
    level = pod_level(r) if r.random() < 0.12 else None
    spec = {
        "nodeName": node["metadata"]["name"],
        "schedulerName": SCHEDULER,
        "terminationGracePeriodSeconds": 0,
        "automountServiceAccountToken": False,
        "containers": [container(r, "c%d" % k, ports, 0.7, 0.5, 3, 0.3,
                                 0.0 if level else 0.2)
                       for k in range(r.choice([1, 1, 2]))],
    }
    if level:
        spec["resources"] = level
    inits = []
    if r.random() < 0.25:
        s = container(r, "s0", ports, 0.7, 0.3, 2, app=False)
        s["restartPolicy"] = "Always"
        inits.append(s)
    if r.random() < 0.35:
        inits.append(container(r, "i0", ports, 0.8, 0.3, 3, app=False))
    if inits:
        spec["initContainers"] = inits
    # The taint manager would evict it from a NoExecute taint.
    tols = [{"key": t["key"], "operator": "Exists", "effect": "NoExecute"}
            for t in node["spec"].get("taints", [])
            if t["effect"] == "NoExecute"]
    if tols:
        spec["tolerations"] = tols
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": pod_meta("cdiff-run-%s-%d" %
                                 (node["metadata"]["name"], j),
                                 ns, run, "running"),
            "spec": spec}


def gen_expression(r):
    key = r.choice(LABEL_KEYS)
    if key == "rank":
        op = weighted(r, [(30, "Gt"), (30, "Lt"), (10, "In"),
                          (10, "NotIn"), (10, "Exists"),
                          (10, "DoesNotExist")])
    else:
        op = weighted(r, [(35, "In"), (25, "NotIn"), (15, "Exists"),
                          (15, "DoesNotExist"), (5, "Gt"), (5, "Lt")])
    x = {"key": key, "operator": op}
    if op in ("Gt", "Lt"):
        x["values"] = [weighted(r, [(90, str(r.randint(0, 21))),
                                    (10, "9223372036854775806")])]
    elif op in ("In", "NotIn"):
        x["values"] = r.sample(VALUES[key],
                                min(len(VALUES[key]), r.choice([1, 2, 2])))
    return x


def gen_term(r, nodes):
    if r.random() < 0.05:
        return {}  # matches nothing
    term = {}
    n = weighted(r, [(10, 0), (55, 1), (25, 2), (10, 3)])
    if n:
        term["matchExpressions"] = [gen_expression(r) for _ in range(n)]
    if n == 0 or r.random() < 0.2:
        term["matchFields"] = [{
            "key": "metadata.name",
            "operator": r.choice(["In", "NotIn"]),
            "values": [r.choice(nodes)["metadata"]["name"]]}
            for _ in range(r.choice([1, 1, 1, 2]))]
    return term


def gen_toleration(r):
    kind = weighted(r, [(30, "equal"), (10, "noop"), (25, "exists"),
                        (8, "all"), (10, "cordon"), (10, "wrong")])
    key = r.choice(sorted(TAINTS))
    effect = r.choice(EFFECTS + [""])
    t = {}
    if kind == "equal":
        t = {"key": key, "operator": "Equal",
             "value": r.choice(TAINTS[key])}
    elif kind == "noop":  # operator left out: Equal
        t = {"key": key, "value": r.choice(TAINTS[key])}
    elif kind == "exists":
        t = {"key": key, "operator": "Exists"}
    elif kind == "all":  # empty key: every taint (of the effect)
        t = {"operator": "Exists"}
    elif kind == "cordon":
        t = r.choice([{"key": UNSCHEDULABLE_TAINT, "operator": "Exists"},
                      {"key": UNSCHEDULABLE_TAINT, "operator": "Equal",
                       "value": ""}])
        effect = r.choice(["NoSchedule", "", "NoExecute"])
    else:
        t = {"key": key, "operator": "Equal", "value": "other"}
    if effect:
        t["effect"] = effect
    if effect == "NoExecute" and r.random() < 0.3:
        t["tolerationSeconds"] = 300
    return t


def gen_pod(r, i, nodes, ns, run, batch):
    sel = {"diff": "yes"}
    if r.random() < 0.2:
        for key in r.sample(["zone", "disk", "gpu-type", "tier", "rank"],
                            r.choice([1, 1, 1, 2])):
            sel[key] = r.choice(VALUES[key])
    spec = {
        "schedulerName": SCHEDULER,
        "terminationGracePeriodSeconds": 0,
        "automountServiceAccountToken": False,
        "nodeSelector": sel,
    }
    aff = {}
    if r.random() < 0.45:
        aff["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [gen_term(r, nodes) for _ in range(
                weighted(r, [(40, 1), (40, 2), (20, 3)]))]}
    if r.random() < 0.15:
        aff["preferredDuringSchedulingIgnoredDuringExecution"] = [{
            "weight": r.randint(1, 100),
            "preference": {"matchExpressions": [gen_expression(r)]}}]
    if aff:
        spec["affinity"] = {"nodeAffinity": aff}
    tols = [gen_toleration(r) for _ in range(
        weighted(r, [(25, 0), (30, 1), (25, 2), (15, 3), (5, 4)]))]
    if tols:
        spec["tolerations"] = tols
    ports = Ports(r)
    level = pod_level(r) if r.random() < 0.12 else None
    spec["containers"] = [container(r, "c%d" % k, ports, 0.35, 0.3, 3,
                                    0.2, 0.0 if level else 0.1)
                          for k in range(r.choice([1, 1, 2]))]
    if level:
        spec["resources"] = level
    inits = []
    if r.random() < 0.25:
        s = container(r, "s0", ports, 0.4, 0.5, 2, app=False)
        s["restartPolicy"] = "Always"
        inits.append(s)
    if r.random() < 0.3:
        inits.append(container(r, "i0", ports, 0.5, 0.6, 6, 0.2,
                               app=False))
    if inits:
        spec["initContainers"] = inits
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": pod_meta("cdiff-%05d" % i, ns, run, "pending",
                                 batch),
            "spec": spec}


def write_list(path, items):
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f,
                  indent=1, sort_keys=True)


def cmd_gen(a):
    r = random.Random(a.seed)
    # rank: every kind of value once (int64's largest, past it, leading
    # zeros, no integer), two nodes without, the others small.
    ranks = [RANKS_ODD[1], r.choice(RANKS_ODD[2:4]), RANKS_ODD[0],
             r.choice(RANKS_ODD[4:]), None, None]
    ranks = (ranks + [r.choice(RANKS_SMALL) for _ in range(a.nodes)])
    ranks = ranks[:a.nodes]
    r.shuffle(ranks)
    nodes = [gen_node(r, i, a.run, ranks[i - 1])
             for i in range(1, a.nodes + 1)]
    running = []
    for node in nodes:
        for j in range(weighted(r, [(10, 0), (30, 1), (35, 2), (25, 3)])):
            running.append(gen_running(r, node, j, a.ns, a.run))
    write_list(os.path.join(a.out, "nodes.json"), nodes)
    write_list(os.path.join(a.out, "running.json"), running)
    batch = []
    for i in range(a.count):
        batch.append(gen_pod(r, i, nodes, a.ns, a.run, i // a.batch))
        if len(batch) == a.batch or i == a.count - 1:
            write_list(os.path.join(a.out, "pods-%03d.json" % (i // a.batch)),
                       batch)
            batch = []
    return 0


# --- The extender ------------------------------------------------------------

class Extender(http.server.BaseHTTPRequestHandler):
    log = None
    lock = threading.Lock()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            args = json.loads(body)
        except ValueError:
            self.send_error(400)
            return
        pod = args.get("Pod") or args.get("pod") or {}
        names = args.get("NodeNames") or args.get("nodenames")
        if names is None:
            nodes = args.get("Nodes") or args.get("nodes") or {}
            names = [n["metadata"]["name"]
                     for n in nodes.get("items") or []]
        meta = pod.get("metadata", {})
        rec = {"path": self.path, "ns": meta.get("namespace"),
               "pod": meta.get("name"), "uid": meta.get("uid"),
               "nodes": sorted(names)}
        with Extender.lock:
            Extender.log.write(json.dumps(rec) + "\n")
            Extender.log.flush()
        out = json.dumps({
            "Nodes": None, "NodeNames": [], "FailedNodes": {},
            "FailedAndUnresolvableNodes": {
                n: "contract-diff: passed kube-scheduler's filters"
                for n in names},
            "Error": ""}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, fmt, *args):
        pass


def cmd_extender(a):
    Extender.log = open(a.log, "a")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Extender)
    srv.serve_forever()
    return 0


def cmd_freeport(_a):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])
    s.close()
    return 0


# --- Settled nodes -----------------------------------------------------------

def cmd_settled(a):
    want = {n["metadata"]["name"]: n
            for n in json.load(open(a.expect))["items"]}
    have = {n["metadata"]["name"]: n for n in json.load(sys.stdin)["items"]}
    bad = []
    for name, w in sorted(want.items()):
        h = have.get(name)
        if h is None:
            bad.append("%s: missing" % name)
            continue
        ready = [c.get("status") for c in
                 h.get("status", {}).get("conditions") or []
                 if c.get("type") == "Ready"]
        if ready != ["True"]:
            bad.append("%s: Ready %s" % (name, ready))
        labels = h["metadata"].get("labels") or {}
        for k, v in w["metadata"]["labels"].items():
            if labels.get(k) != v:
                bad.append("%s: label %s=%r" % (name, k, labels.get(k)))
        alloc = h.get("status", {}).get("allocatable") or {}
        if alloc != w["status"]["allocatable"]:
            bad.append("%s: allocatable %s" % (name, alloc))
        key = lambda t: (t["key"], t["effect"], t.get("value", ""))
        wt = sorted(key(t) for t in w["spec"].get("taints", []))
        if a.cordon_taint and w["spec"].get("unschedulable"):
            wt = sorted(wt + [(UNSCHEDULABLE_TAINT, "NoSchedule", "")])
        ht = sorted(key(t) for t in h.get("spec", {}).get("taints") or [])
        if wt != ht:
            bad.append("%s: taints %s" % (name, ht))
    for line in bad:
        print(line)
    return 1 if bad else 0


# --- Verdicts and comparison -------------------------------------------------

def load_lines(path):
    out = []
    with open(path) as f:
        for line in f:
            if line.strip():
                out.append(json.loads(line))
    return out


def cmd_verdicts(a):
    pods = json.load(open(a.pods))["items"]
    calls = {}
    for c in load_lines(a.calls):
        calls.setdefault(c["uid"], []).append(c["nodes"])
    events = {}
    for e in json.load(open(a.events))["items"]:
        if e.get("reason") != "FailedScheduling":
            continue
        uid = e.get("involvedObject", {}).get("uid")
        events.setdefault(uid, []).append(e.get("message", ""))
    out = {}
    for p in pods:
        uid, name = p["metadata"]["uid"], p["metadata"]["name"]
        v = {"events": events.get(uid, [])}
        seen = calls.get(uid, [])
        if seen:
            v["fit"] = seen[0]
            v["calls"] = len(seen)
            if any(s != seen[0] for s in seen):
                v["unstable"] = seen
        elif v["events"]:
            v["fit"] = []
            v["calls"] = 0
        else:
            v["fit"] = None  # no verdict
        out[name] = v
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    return 0


# Disagreements that are the rule's on purpose, each with its reason.  The
# generator keeps clear of them (every node Ready, no managed-node taint,
# CPU, memory and pods never short), so none is expected; one found here
# is listed and not counted.  (category -> reason)
ALLOWED = {}


def constraints(pod):
    """The pod's constraints, short."""
    spec = pod["spec"]
    out = {}
    sel = {k: v for k, v in (spec.get("nodeSelector") or {}).items()
           if k != "diff"}
    if sel:
        out["nodeSelector"] = sel
    req = (spec.get("affinity", {}).get("nodeAffinity", {})
           .get("requiredDuringSchedulingIgnoredDuringExecution"))
    if req:
        out["required"] = req["nodeSelectorTerms"]
    tols = [t for t in spec.get("tolerations") or []
            if t.get("key") not in DEFAULT_TOLERATIONS]
    if tols:
        out["tolerations"] = tols
    if spec.get("resources"):
        out["pod-level"] = spec["resources"]
    ports, res = [], {}
    for kind in ("initContainers", "containers"):
        for c in spec.get(kind) or []:
            tag = c["name"] + ("(sidecar)" if c.get("restartPolicy") ==
                               "Always" else "")
            for p in c.get("ports") or []:
                if p.get("hostPort"):
                    ports.append("%s:%s/%s@%s" % (
                        tag, p["hostPort"], p.get("protocol", "TCP"),
                        p.get("hostIP", "")))
            for k, v in ((c.get("resources") or {}).get("requests")
                         or {}).items():
                if k not in ("cpu", "memory"):
                    res["%s.%s" % (tag, k)] = v
    if ports:
        out["hostPorts"] = ports
    if res:
        out["requests"] = res
    return out


INT64_MAX = 2 ** 63 - 1


def past_int64(v):
    return v is not None and v.isdigit() and int(v) > INT64_MAX


def plain_init_ports(pod):
    return any(p.get("hostPort")
               for c in pod["spec"].get("initContainers") or []
               if c.get("restartPolicy") != "Always"
               for p in c.get("ports") or [])


def go_int(v):
    """strconv.ParseInt(v, 10, 64), or None."""
    if v is None or not re.fullmatch(r"[+-]?[0-9]+", v):
        return None
    n = int(v, 10)
    return n if -INT64_MAX - 1 <= n <= INT64_MAX else None


def strtoll_int(v):
    """fit_int's reading: strtoll, clamped to int64, errno not looked at."""
    n = go_int(v)
    if n is None and v and re.fullmatch(r"[0-9]+", v):
        return INT64_MAX
    return n


def affinity(pod, node, parse):
    """nodeSelector and the required node affinity, Gt and Lt reading
    integers with parse."""
    labels = node["metadata"].get("labels") or {}
    for k, v in (pod["spec"].get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    req = (pod["spec"].get("affinity", {}).get("nodeAffinity", {})
           .get("requiredDuringSchedulingIgnoredDuringExecution"))
    if not req:
        return True

    def one(x, have):
        op, vals = x["operator"], x.get("values") or []
        if op == "In":
            return have is not None and have in vals
        if op == "NotIn":
            return have is None or have not in vals
        if op == "Exists":
            return have is not None
        if op == "DoesNotExist":
            return have is None
        a, b = parse(have), go_int(vals[0]) if vals else None
        if a is None or b is None:
            return False
        return a > b if op == "Gt" else a < b

    for t in req.get("nodeSelectorTerms") or []:
        xs, fs = t.get("matchExpressions") or [], t.get("matchFields") or []
        if not xs and not fs:
            continue
        if all(one(x, labels.get(x["key"])) for x in xs) and all(
                one(f, node["metadata"]["name"]) for f in fs):
            return True
    return False


def gt_lt_past_int64(pod, node, _on, ks_fits, _why):
    # The node's affinity answer turns on how a label past int64 reads.
    return (not ks_fits and affinity(pod, node, strtoll_int) and
            not affinity(pod, node, go_int))


def init_ports(pod, _node, on, ks_fits, why):
    return ks_fits and "free ports" in (why or "") and (
        plain_init_ports(pod) or any(plain_init_ports(q) for q in on))


# The causes found so far, each with its test (pod, node, the pods on the
# node, does kube-scheduler fit the node, the rule's reason) and why the
# two answer apart.  A disagreement no test claims is "unexplained".
KNOWN = [
    ("Gt/Lt on a node label past int64", gt_lt_past_int64,
     "kube-scheduler reads the node's label with strconv.ParseInt(v, 10, "
     "64), and a value it cannot parse matches no Gt or Lt "
     "(apimachinery labels.Requirement.Matches); fit_int (common/fit.c) "
     "keeps strtoll's answer without looking at errno, so a value past "
     "int64 reads as INT64_MAX and Gt matches"),
    ("host ports of a plain init container", init_ports,
     "kube-scheduler counts the host ports of the app containers and of "
     "the restartable (sidecar) init containers only, the pod's and those "
     "of the pods on the node (pkg/scheduler/util.GetHostPorts, "
     "NodeInfo.updateUsedPorts); fit_ports_each (common/fit.c) counts "
     "every init container's, though a plain one has exited before the "
     "app containers start"),
]


def explain(pod, nodes, on, ks, ours, why):
    """Per node where the answers differ: the known cause, or
    "unexplained: ..." with the rule's reason."""
    out = {}
    for n in sorted(set(ks) ^ set(ours)):
        ks_fits = n in ks
        for name, test, _ in KNOWN:
            if test(pod, nodes[n], on.get(n, []), ks_fits, why.get(n)):
                out[n] = name
                break
        else:
            if ks_fits:
                out[n] = ("unexplained: kube-scheduler fits, the rule "
                          "refuses: " + (why.get(n) or "?"))
            else:
                out[n] = ("unexplained: the rule fits, kube-scheduler "
                          "refuses")
    return out


def node_summary(node, on):
    """What of a node the rule reads, short."""
    skip = {"diff", "contract-diff", "kubernetes.io/hostname",
            "kubernetes.io/os", "beta.kubernetes.io/os",
            "kubernetes.io/arch", "beta.kubernetes.io/arch"}
    out = {"labels": {k: v for k, v in
                      (node["metadata"].get("labels") or {}).items()
                      if k not in skip}}
    if node["spec"].get("taints"):
        out["taints"] = ["%s=%s:%s" % (t["key"], t.get("value", ""),
                                       t["effect"])
                         for t in node["spec"]["taints"]]
    if node["spec"].get("unschedulable"):
        out["unschedulable"] = True
    out["allocatable"] = {k: v for k, v in
                          node["status"]["allocatable"].items()
                          if k not in ("cpu", "memory", "pods")}
    used = [c for q in on for c in constraints(q).get("hostPorts", [])]
    if used:
        out["hostPorts on it"] = used
    return json.dumps(out, sort_keys=True)


def cmd_compare(a):
    pods = {p["metadata"]["name"]: p
            for p in json.load(open(a.pods))["items"]}
    cluster = json.load(open(a.cluster))
    nodes = {n["metadata"]["name"]: n for n in cluster["nodes"]}
    on = cluster.get("pods_on") or {}
    ours = {o["pod"]: o for o in load_lines(a.ours)}
    verdicts = json.load(open(a.verdicts))
    rows, cats, allowed, missing, unstable = [], {}, 0, [], []
    for name in sorted(pods):
        v = verdicts.get(name, {"fit": None})
        o = ours.get(name)
        if v["fit"] is None or o is None:
            missing.append(name)
            continue
        if "unstable" in v:
            unstable.append(name)
        if v["fit"] == o["fit"]:
            continue
        nodecat = explain(pods[name], nodes, on, v["fit"], o["fit"],
                          o.get("why", {}))
        cat = " + ".join(sorted(set(nodecat.values())))
        row = {"pod": name, "kube-scheduler": v["fit"], "rule": o["fit"],
               "category": cat, "nodes": nodecat,
               "rule_why": {n: o["why"].get(n) for n in
                            sorted(set(v["fit"]) - set(o["fit"]))},
               "events": v.get("events", [])[:1],
               "constraints": constraints(pods[name])}
        rows.append(row)
        cats.setdefault(cat, []).append(name)
        if cat in ALLOWED:
            allowed += 1
    n = len(pods)
    if cats:
        print("Disagreements by category:")
        for cat, names in sorted(cats.items(), key=lambda x: -len(x[1])):
            print("  %5d  %s%s" % (len(names), cat,
                                   "  [allowed: %s]" % ALLOWED[cat]
                                   if cat in ALLOWED else ""))
            print("         e.g. %s" % ", ".join(names[:5]))
        seen = {c for row in rows for c in row["nodes"].values()}
        for name, _, why in KNOWN:
            if name in seen:
                print("  %s: %s." % (name, why))
        print()
        print("%-12s %-34s %-34s %s" % ("pod", "kube-scheduler", "rule",
                                       "constraints"))
        for row in rows:
            print("%-12s %-34s %-34s %s" % (
                row["pod"], ",".join(x.replace("diff-", "")
                                     for x in row["kube-scheduler"]) or "-",
                ",".join(x.replace("diff-", "")
                         for x in row["rule"]) or "-",
                json.dumps(row["constraints"], sort_keys=True)))
            for node, cat in row["nodes"].items():
                print("%-12s   %s: %s; the rule: %s" % (
                    "", node, "kube-scheduler fits it"
                    if node in row["kube-scheduler"] else
                    "kube-scheduler refuses it",
                    row["rule_why"].get(node) or "fits"))
                print("%-12s     %s" % ("", cat))
                print("%-12s     node %s" % ("", node_summary(
                    nodes[node], on.get(node, []))))
            if not row["kube-scheduler"] and row["events"]:
                print("%-12s   kube-scheduler: %s" % ("", row["events"][0]))
        print()
    if missing:
        print("contract-diff: no verdict for %d pods: %s" %
              (len(missing), ", ".join(missing[:10])))
    if unstable:
        print("contract-diff: kube-scheduler's answer changed between "
              "calls for %d pods: %s" % (len(unstable),
                                         ", ".join(unstable[:10])))
    if a.report:
        with open(a.report, "w") as f:
            json.dump(rows, f, indent=1, sort_keys=True)
    d = len(rows) - allowed
    print("contract-diff: %d pods, %d disagreements%s" % (
        n, d, " (%d more allowed)" % allowed if allowed else ""))
    return 1 if d > 0 or missing or unstable else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--count", type=int, required=True)
    g.add_argument("--nodes", type=int, required=True)
    g.add_argument("--batch", type=int, required=True)
    g.add_argument("--run", required=True)
    g.add_argument("--ns", required=True)
    g.add_argument("--out", required=True)
    e = sub.add_parser("extender")
    e.add_argument("--port", type=int, required=True)
    e.add_argument("--log", required=True)
    s = sub.add_parser("settled")
    s.add_argument("--expect", required=True)
    s.add_argument("--cordon-taint", action="store_true")
    v = sub.add_parser("verdicts")
    v.add_argument("--calls", required=True)
    v.add_argument("--pods", required=True)
    v.add_argument("--events", required=True)
    c = sub.add_parser("compare")
    c.add_argument("--ours", required=True)
    c.add_argument("--verdicts", required=True)
    c.add_argument("--pods", required=True)
    c.add_argument("--cluster", required=True)
    c.add_argument("--report")
    sub.add_parser("freeport")
    a = p.parse_args()
    return {"gen": cmd_gen, "extender": cmd_extender,
            "settled": cmd_settled, "verdicts": cmd_verdicts,
            "compare": cmd_compare, "freeport": cmd_freeport}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
