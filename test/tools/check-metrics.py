#!/usr/bin/python3
"""Checks Prometheus text from stdin with the reference client's parser.

Every family must have a # HELP and # TYPE line and the slurm_bridge_
prefix; histograms must have buckets ending in +Inf that never decrease.
Prints "metrics: N families, M samples" or the first problem (exit 1).
Usage: curl .../metrics | test/tools/check-metrics.py [REQUIRED_FAMILY...]
"""
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    text = sys.stdin.read()
    helps = {l.split()[2] for l in text.splitlines() if l.startswith("# HELP ")}
    types = {l.split()[2] for l in text.splitlines() if l.startswith("# TYPE ")}
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser raises ValueError and friends
        print(f"metrics: not Prometheus text: {e}")
        return 1
    nsamples = 0
    for f in families:
        if not f.name.startswith("slurm_bridge_"):
            print(f"metrics: {f.name}: no slurm_bridge_ prefix")
            return 1
        # The parser strips _total from counter family names.
        raw = f.name + "_total" if f.type == "counter" else f.name
        if raw not in helps and f.name not in helps:
            print(f"metrics: {f.name}: no # HELP line")
            return 1
        if raw not in types and f.name not in types:
            print(f"metrics: {f.name}: no # TYPE line")
            return 1
        if f.type == "histogram":
            series = {}
            for s in f.samples:
                if s.name.endswith("_bucket"):
                    key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
                    series.setdefault(key, []).append((s.labels["le"], s.value))
            for key, buckets in series.items():
                if buckets[-1][0] != "+Inf":
                    print(f"metrics: {f.name}{dict(key)}: last bucket is not +Inf")
                    return 1
                values = [v for _, v in buckets]
                if values != sorted(values):
                    print(f"metrics: {f.name}{dict(key)}: buckets decrease")
                    return 1
        nsamples += len(f.samples)
    names = {f.name for f in families}
    for want in sys.argv[1:]:
        if want not in names:
            print(f"metrics: family {want} is missing")
            return 1
    print(f"metrics: {len(families)} families, {nsamples} samples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
