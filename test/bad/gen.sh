#!/usr/bin/env bash
# Writes the big cases of the bad-input corpus (test/data/bad/cases.tsv, the
# rows whose file is gen/NAME.json) into OUTDIR, so that megabytes are made
# at test time rather than committed. Deterministic; about 25 MiB in all.
#
#   test/bad/gen.sh OUTDIR
#
# Needs python3.
set -uo pipefail

if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
mkdir -p "$1" || exit 1
command -v python3 >/dev/null || { echo "gen.sh: python3 not found" >&2; exit 1; }

exec python3 - "$1" <<'PY'
import json, os, sys

out = sys.argv[1]
MAX_BODY = 3 * 1024 * 1024   # REVIEW_MAX_BODY, admission/admission.h
P = "slurmjob.slinky.slurm.net/"

def review(uid, ann=None, spec_extra=None, ns="default"):
    """The AdmissionReview of a pod CREATE, as in test/data/review/."""
    spec = {"schedulerName": "slurm-bridge",
            "tolerations": [{"key": "slinky.slurm.net/managed-node",
                             "operator": "Exists", "effect": "NoExecute"}],
            "containers": [{"name": "main", "image": "busybox",
                            "resources": {"requests": {"cpu": "1",
                                                       "memory": "64Mi"}}}]}
    if spec_extra:
        spec.update(spec_extra)
    md = {"namespace": ns, "name": "bad"}
    if ann is not None:
        md["annotations"] = ann
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "bad-" + uid,
                        "kind": {"group": "", "version": "v1", "kind": "Pod"},
                        "resource": {"group": "", "version": "v1",
                                     "resource": "pods"},
                        "namespace": ns, "operation": "CREATE",
                        "userInfo": {"username": "alice"},
                        "object": {"apiVersion": "v1", "kind": "Pod",
                                   "metadata": md, "spec": spec}}}

def compact(obj):
    return json.dumps(obj, separators=(",", ":")).encode()

def write(name, data):
    tmp = os.path.join(out, name + ".json.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, os.path.join(out, name + ".json"))

def many_keys(total, extra=None):
    """Annotations example.com/pad-NNNNNN of 100 characters each, ~total bytes."""
    ann = dict(extra or {})
    i = 0
    while i * 128 < total:
        ann["example.com/pad-%06d" % i] = ("%06d" % i) * 16 + "abcd"
        i += 1
    return ann

def padded(uid, size, extra=None):
    """A review of exactly size bytes: one annotation's value takes the rest."""
    ann = dict(extra or {})
    ann["example.com/pad"] = ""
    base = len(compact(review(uid, ann)))
    if base > size:
        sys.exit("gen.sh: %s: %d bytes without padding" % (uid, base))
    ann["example.com/pad"] = "x" * (size - base)
    data = compact(review(uid, ann))
    assert len(data) == size, (uid, len(data), size)
    return data

MIB = 1024 * 1024
# Under the limit: 2.5 MiB of annotations, many keys or one value.
write("huge-annotations-2.5mib", compact(review("huge-annotations-2.5mib",
    many_keys(int(2.5 * MIB)))))
write("huge-annotation-value-2.5mib", padded("huge-annotation-value-2.5mib",
    int(2.5 * MIB)))
write("huge-2.5mib-bad-timelimit", compact(review("huge-2.5mib-bad-timelimit",
    many_keys(int(2.5 * MIB), {P + "timelimit": "abc"}))))
# At the limit, one byte over it, and well over it.
write("body-exactly-3mib", padded("body-exactly-3mib", MAX_BODY))
write("body-3mib-plus-1", padded("body-3mib-plus-1", MAX_BODY + 1))
write("huge-4mib", padded("huge-4mib", 4 * MIB))
# A 1 MiB job-name, and a 1 MiB annotation key.
write("job-name-1mib", compact(review("job-name-1mib",
    {P + "job-name": "j" * MIB})))
write("annotation-key-1mib", compact(review("annotation-key-1mib",
    {"example.com/" + "k" * MIB: "v"})))
# A 1 MiB uid, which the answer echoes.
r = review("x", {})
r["request"]["uid"] = "bad-uid-1mib-" + "u" * MIB
write("uid-1mib", compact(r))
# Deep nesting: 100000 levels, bare and inside a review.
N = 100000
write("deep-array-100000", b"[" * N)
write("deep-array-closed-100000", b"[" * N + b"]" * N)
write("deep-object-100000", b'{"a":' * N + b"1" + b"}" * N)
head = compact(review("deep-in-pod-100000", {}))
cut = head.index(b'"schedulerName"')
write("deep-in-pod-100000",
      head[:cut] + b'"x":' + b"[" * N + b"]" * N + b"," + head[cut:])
# Just under the parser's depth limit (jansson: 2048), inside the pod.
write("deep-in-pod-2000",
      head[:cut].replace(b"100000", b"2000") + b'"x":' + b"[" * 2000 +
      b"]" * 2000 + b"," + head[cut:])
# Many entries where the policy loops: containers, tolerations, owners.
write("many-containers-10000", compact(review("many-containers-10000", {},
    {"containers": [{"name": "c%d" % i, "image": "busybox",
                     "resources": {"requests": {"cpu": "1m",
                                                "memory": "1Mi"}}}
                    for i in range(10000)]})))
tol = [{"key": "example.com/t%d" % i, "operator": "Exists"}
       for i in range(20000)]
tol.append({"key": "slinky.slurm.net/managed-node", "operator": "Exists",
            "effect": "NoExecute"})
write("many-tolerations-20000", compact(review("many-tolerations-20000", {},
    {"tolerations": tol})))
r = review("many-owner-refs-20000", {})
r["request"]["object"]["metadata"]["ownerReferences"] = [
    {"apiVersion": "batch/v1", "kind": "Job", "name": "j%d" % i,
     "uid": "u%d" % i, "controller": False} for i in range(20000)]
write("many-owner-refs-20000", compact(r))
PY
