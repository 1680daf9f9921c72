#!/usr/bin/env bash
# Prints the side-by-side table of a bench/results/bench-*.json file.
# Usage: scripts/bench-table.sh FILE
set -euo pipefail
f=${1:?usage: bench-table.sh FILE}
jq -r '
def r(x): if x == null then "-" else (x * 10 | round / 10 | tostring) end;
def row(s; sys; x): [s, sys, r(x.jobs_per_s // x.binds_per_s), r(x.latency_ms.p50), r(x.latency_ms.p90),
	r(x.latency_ms.p99), r(x.latency_ms.max), (x.partial_gangs // "-" | tostring)] | @tsv;
"nodes: \(.nodes), bench took \(.seconds) s on 2 CPUs",
"",
(["scenario", "system", "per_s", "p50_ms", "p90_ms", "p99_ms", "max_ms", "partial"] | @tsv),
(.runs[] | select(.scenario == "singles" or .scenario == "gangs") | row(.scenario; .system; .result)),
"",
(.runs[] | select(.scenario == "churn") |
	"churn: \(.pods) pods in \(.seconds) s: bridge CPU \(.cpu_s) s, \(.rpcs_per_pod) Slurm RPCs per pod, RSS \(.rss_kib | min) -> \(.rss_kib | max) KiB"),
(.runs[] | select(.scenario == "idle") | "idle: bridge CPU \(.cpu_percent) % of a core"),
(.runs[] | select(.scenario == "backlog") | .bands[] |
	"backlog \(.pending) pending: RSS \(.rss_kib / 1024 | round) MiB, \(.decision_ms) ms per decision, \(.poll_ms) ms per Slurm poll (\(.polls) polls)"),
(.runs[] | select(.scenario == "webhook") | .result.runs[]? |
	"webhook \(.name // .run): \(.requests_per_s // .rps) req/s, p50 \(.latency_ms.p50) ms, p99 \(.latency_ms.p99) ms")
' "$f" | column -t -s "$(printf '\t')"
