#!/usr/bin/env python3
"""The import graph of the C sources, and make lint's layering check.

Read from the objects: file A imports file B when A's object uses a symbol B's object defines.  Prints each
directory's edges to other directories and every cycle between files, and
exits 1 on a cycle or on a forbidden edge (admission -> bridge, common ->
a daemon, libk8s -> anything of ours).

Usage: scripts/dev/import-graph.py [--dot] BUILD_DIR
"""
import os
import subprocess
import sys

ORDER = ["libk8s", "common", "bridge", "admission"]
# What each layer may use besides itself.
ALLOWED = {
    "libk8s": set(),
    "common": {"libk8s"},
    "bridge": {"libk8s", "common"},
    "admission": {"libk8s", "common"},
}


def symbols(obj):
    out = subprocess.run(["nm", "--defined-only", "-g", obj],
                         capture_output=True, text=True, check=True).stdout
    defined = {l.split()[-1] for l in out.splitlines() if len(l.split()) == 3}
    out = subprocess.run(["nm", "-u", obj], capture_output=True, text=True,
                         check=True).stdout
    used = {l.split()[-1] for l in out.splitlines() if l.strip()}
    return defined, used


def main():
    args = sys.argv[1:]
    dot = "--dot" in args
    args = [a for a in args if a != "--dot"]
    build = args[0] if args else "build"
    objs = {}
    for d in ORDER:
        for root, _, files in os.walk(os.path.join(build, d)):
            for f in files:
                if f.endswith(".o"):
                    src = os.path.relpath(os.path.join(root, f), build)
                    objs[src[:-2] + ".c"] = os.path.join(root, f)
    owner, uses = {}, {}
    for src, obj in objs.items():
        defined, used = symbols(obj)
        for s in defined:
            owner.setdefault(s, src)
        uses[src] = used
    edges = {src: sorted({owner[s] for s in used if s in owner} - {src})
             for src, used in uses.items()}
    bad = 0
    for src, dsts in sorted(edges.items()):
        for dst in dsts:
            a, b = src.split("/")[0], dst.split("/")[0]
            if a != b and b not in ALLOWED[a]:
                print(f"forbidden: {src} -> {dst}")
                bad = 1
    # Cycles: strongly connected components with more than one file.
    index, low, stack, on, sccs = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    for comp in sccs:
        print("cycle: " + " <-> ".join(comp))
        for v in comp:
            print(f"  {v} -> " + ", ".join(w for w in edges[v] if w in comp))
        bad = 1
    if dot:
        print("digraph imports {")
        for src, dsts in sorted(edges.items()):
            for dst in dsts:
                print(f'  "{src}" -> "{dst}";')
        print("}")
    print(f"imports: {len(edges)} files, "
          f"{sum(len(d) for d in edges.values())} edges, "
          f"{len(sccs)} cycles")
    return bad


if __name__ == "__main__":
    sys.exit(main())
