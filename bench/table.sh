#!/usr/bin/env bash
# Prints the table of a make bench results file (bench/results/*.json).
#
# Prints the side-by-side table of a bench/results/bench-*.json file: one
# row per system and scenario, then the ratios the targets are
# stated in (bridge against kube-scheduler and against Slurm alone), the
# API writes and Slurm RPCs per bound pod, CPU, and the other scenarios.
# A figure a run did not produce prints as "-", and a scenario that failed
# is named last with its error.  Older files (without the fixed scenario
# or the per-pod costs) print what they have.
# Usage: bench/table.sh FILE
set -euo pipefail
f=${1:?usage: bench/table.sh FILE}
jq -r '
def r(x): if x == null then "-" else (x * 10 | round / 10 | tostring) end;
def r2(x): if x == null then "-" else (x * 100 | round / 100 | tostring) end;
def ratio(a; b): if a == null or b == null or b == 0 then "-" else "\(a / b * 100 | round / 100)x" end;
def run(s; sys): first(.runs[] | select(.scenario == s and .system == sys)) // null;
def rate(x): x.result.jobs_per_s // x.result.binds_per_s;
# Slurm alone makes its RPCs itself (submits and polls).
def rpcs(x): if x.system == "slurm" then x.result.rpcs_per_job else x.slurm_rpcs.per_pod? end;
def row: [.scenario, .system, (.round // 1 | tostring), r(rate(.)), r(.result.latency_ms.p50), r(.result.latency_ms.p90),
	r(.result.latency_ms.p99), r(.result.latency_ms.max), r(.startup_ms), r2(.cpu_per_pod_ms),
	r2(.api_writes.scheduler_per_pod?), r2(rpcs(.)), (.result.partial_gangs // "-" | tostring)] | @tsv;
def writes: [.scenario, .system] + ([.api_writes.per_pod | .binding, .pod_patch, .events, .pod_status,
	.pod_create, .pod_delete, .other] | map(r2(.))) + [r2(.api_writes.scheduler_per_pod)] | @tsv;
# Over interleaved rounds: the median (the lower one of an even count)
# of the per-round ratios of system A to system B, with their spread.
def med(xs): (xs | map(select(. != null)) | sort) as $s |
	if ($s | length) == 0 then null else $s[(($s | length) - 1) / 2 | floor] end;
def rounds(s; a; b; f): [.runs[] | select(.scenario == s and .system == a)] as $A |
	[.runs[] | select(.scenario == s and .system == b)] as $B |
	[$A[] as $x | ($B[] | select(.round == $x.round)) as $y |
		($x | f) as $fx | ($y | f) as $fy |
		if $fx == null or $fy == null or $fy == 0 then null else $fx / $fy end];
def spread(xs): (xs | map(select(. != null))) as $v |
	if ($v | length) == 0 then "-" else
	"\(med($v) * 100 | round / 100)x (\($v | min * 100 | round / 100)x to \($v | max * 100 | round / 100)x, \($v | length) rounds)" end;
# Slurm'"'"'s CPU seconds in a window: by part, and the sum.
def parts: {slurmctld: .slurmctld, slurmd: .slurmd, munged: .munged,
	accounting: ((.slurmdbd // 0) + (.mariadbd // 0))};
def slurm_s(x): if x == null then null else ([x | parts[] | . // 0] | add) end;
def per(x; n): if x == null or n == null or n == 0 then null else x / n end;
def ms(x; n): per(x; n) | if . == null then null else . * 1000 end;
# A record of the pods of a run ending (record end), not of their scheduling.
def ended: .stack_cpu_per_pod_ms != null;
def byrpc: .slurm_rpcs.by_rpc_per_pod | to_entries | map(select(.value > 0) | "\(.key) \(r2(.value))") | join(", ");

# The scheduling header only when something was scheduled (not for
# "bench/run.sh owners" alone).
(select(any(.runs[]; .scenario != "owners")) |
"nodes: \(.nodes), bench took \(.seconds) s on \(.host.cpus) CPUs" +
	(if (.plots // []) | length > 0 then "; plots: \(.plots | join(" "))" else "" end),
"per_s: binds/s (Slurm alone: jobs/s, gangs/s in gangs); latency in ms: singles, constrained and gangs from t0",
"(the scheduler ready, or the first submit), fixed from each pod'"'"'s ADDED; startup: process start to /readyz 200;",
"writes: the scheduler'"'"'s API writes per bound pod; rpcs: Slurm RPCs per pod",
"",
(["scenario", "system", "round", "per_s", "p50_ms", "p90_ms", "p99_ms", "max_ms", "startup_ms", "cpu_ms/pod",
	"writes", "rpcs", "partial"] | @tsv)),
(.runs[] | select((.scenario == "singles" or .scenario == "constrained" or .scenario == "gangs" or
	.scenario == "gangs-topology" or .scenario == "gangs-block" or .scenario == "fixed") and
	(ended | not)) | row),
"",
(run("singles"; "bridge") as $b | run("singles"; "kube-scheduler") as $k | run("singles"; "slurm") as $s |
	select($b != null) |
	"singles\(if $b.round != null then ", round 1" else "" end): bridge \(r(rate($b))) binds/s = \(ratio(rate($b); rate($k))) kube-scheduler, \(ratio(rate($b); rate($s))) Slurm alone; start-up bridge \(r($b.startup_ms)) ms, kube-scheduler \(r($k.startup_ms)) ms"),
(run("fixed"; "bridge") as $b | run("fixed"; "kube-scheduler") as $k | select($b != null or $k != null) |
	($b // $k) as $x |
	"fixed\(if $x.round != null then ", round 1" else "" end): \($x.rate) pods/s for \($x.seconds) s (each deleted \($x.lifetime_s) s after): p50 bridge/kube-scheduler \(ratio($b.result.latency_ms.p50; $k.result.latency_ms.p50)), p99 \(ratio($b.result.latency_ms.p99; $k.result.latency_ms.p99)); never bound \($b.result.deleted_unbound // "-")/\($k.result.deleted_unbound // "-"); p99 from the POST returning \(r($b.latency_post_ms.p99))/\(r($k.latency_post_ms.p99)) ms; podgen sent \(r($b.podgen.sent_per_s))/\(r($k.podgen.sent_per_s)) pods/s, p99 late \(r($b.podgen.send_late_ms.p99))/\(r($k.podgen.send_late_ms.p99)) ms"),
(run("gangs"; "bridge") as $g | run("singles"; "bridge") as $b | select($g != null) |
	"gangs\(if $g.round != null then ", round 1" else "" end): \($g.result.gangs // "-") gangs of \($g.gang_size // "-"): bridge \(r(rate($g))) pods/s = \(ratio(rate($g); rate($b))) its singles rate; \($g.result.partial_gangs // "-") partial; spread first to last bind p50 \(r($g.result.gang_spread_ms.p50)) ms, p99 \(r($g.result.gang_spread_ms.p99)) ms, max \(r($g.result.gang_spread_ms.max)) ms; \($g.result.unannotated_binds // "-") members bound without their slurm-node"),
(run("gangs-topology"; "bridge") as $t | run("gangs"; "bridge") as $g | select($t != null) |
	"gangs-topology\(if $t.round != null then ", round 1" else "" end): the same gangs, each required in one \($t.topology // "-"): bridge \(r(rate($t))) pods/s = \(ratio(rate($t); rate($g))) the plain gangs; p99 \(r($t.result.latency_ms.p99)) ms (plain \(r($g.result.latency_ms.p99)) ms); \($t.result.partial_gangs // "-") partial; spread p99 \(r($t.result.gang_spread_ms.p99)) ms"),
(run("gangs-block"; "bridge") as $t | run("gangs"; "bridge") as $g | select($t != null) |
	"gangs-block\(if $t.round != null then ", round 1" else "" end): the same gangs, each required in one \($t.topology // "-"): bridge \(r(rate($t))) pods/s = \(ratio(rate($t); rate($g))) the plain gangs; p99 \(r($t.result.latency_ms.p99)) ms (plain \(r($g.result.latency_ms.p99)) ms); \($t.result.partial_gangs // "-") partial; spread p99 \(r($t.result.gang_spread_ms.p99)) ms"),
# The bridge'"'"'s own figures, labelled with the node count: rate, p99, CPU
# and memory (VmRSS at the end of its window, VmHWM its peak) in singles
# and gangs, and the backlog'"'"'s release to bind at its top band.
(. as $f | select(any(.runs[]; .system == "bridge" and
		(.scenario == "singles" or .scenario == "gangs" or .scenario == "backlog"))) |
	def mib(x): if x == null then "-" else "\(x / 1024 * 10 | round / 10) MiB" end;
	"",
	"the bridge on \($f.nodes) nodes:",
	(.runs[] | select(.system == "bridge" and (.scenario == "singles" or .scenario == "gangs") and (ended | not)) |
		"  \(.scenario)\(if .round != null then " round \(.round)" else "" end): \(.result.bound // "-") pods, \(r(rate(.))) binds/s, p50 \(r(.result.latency_ms.p50)) ms, p99 \(r(.result.latency_ms.p99)) ms; CPU \(.cpu_s // "-") s (\(r2(.cpu_per_pod_ms)) ms per pod); RSS \(mib(.rss_kib)) at the end, peak \(mib(.hwm_kib))"),
	(.runs[] | select(.scenario == "backlog") | (.bands | last) as $top | .release as $rel |
		"  backlog: RSS \(mib($top.rss_kib)) at \($top.pending) pending, \(r2($top.poll_ms)) ms per Slurm poll, \(if $top.decision_cpu_ms == null then "-" else $top.decision_cpu_ms end) ms CPU per decision",
		($rel // empty | "  release to bind at \(.pending) pending on \(.nodes // $f.nodes) nodes: p50 \(.latency_ms.p50 // "-") ms, p90 \(.latency_ms.p90 // "-") ms, p99 \(.latency_ms.p99 // "-") ms, max \(.latency_ms.max // "-") ms (\(.bound) pods bound, \(.releases_ms | length) nodes freed)" + (if .split then "; Slurm start to bind p50 \(.bridge_ms.p50 // "-") ms, p99 \(.bridge_ms.p99 // "-") ms" else "" end)))),
(select(any(.runs[]; .round != null)) |
	"",
	"interleaved rounds: the median ratio over the rounds (lowest to highest):",
	"  singles binds/s, bridge / kube-scheduler: \(spread(rounds("singles"; "bridge"; "kube-scheduler"; rate(.))))",
	"  singles p99, bridge / kube-scheduler: \(spread(rounds("singles"; "bridge"; "kube-scheduler"; .result.latency_ms.p99)))",
	"  singles p50, bridge / kube-scheduler: \(spread(rounds("singles"; "bridge"; "kube-scheduler"; .result.latency_ms.p50)))",
	"  fixed p99, bridge / kube-scheduler: \(spread(rounds("fixed"; "bridge"; "kube-scheduler"; .result.latency_ms.p99)))",
	"  fixed p50, bridge / kube-scheduler: \(spread(rounds("fixed"; "bridge"; "kube-scheduler"; .result.latency_ms.p50)))",
	"  gangs per second, bridge / Slurm alone: \(spread(rounds("gangs"; "bridge"; "slurm";
		if .system == "slurm" then rate(.) elif rate(.) == null then null else rate(.) / (.gang_size // 8) end)))",
	"  CPU per bound pod, singles bridge / kube-scheduler: \(spread(rounds("singles"; "bridge"; "kube-scheduler"; .cpu_per_pod_ms)))"),
# The constrained scenario: each kind of pod apart (bindwatch'"'"'s groups),
# then the medians over the rounds.
(. as $f | select(any(.runs[]; .scenario == "constrained" and (ended | not))) |
	def cls(x; c): if c == "all" then x.result else x.result.groups[c] end;
	# Over the rounds: scenario A'"'"'s figure over scenario B'"'"'s, one system.
	def xrounds(sa; sb; sys; f): [.runs[] | select(.scenario == sa and .system == sys and (ended | not))] as $A |
		[.runs[] | select(.scenario == sb and .system == sys and (ended | not))] as $B |
		[$A[] as $x | ($B[] | select(.round == $x.round)) as $y | ($x | f) as $fx | ($y | f) as $fy |
			if $fx == null or $fy == null or $fy == 0 then null else $fx / $fy end];
	(first(.runs[] | select(.scenario == "constrained" and .pool_nodes != null)) // {}) as $l |
	"",
	"constrained: \($l.selector_pods // "-") pods with a node selector (\($l.zone_nodes // "-") zone nodes), \($l.pool_pods // "-") in a taint pool (\($l.pool_nodes // "-") tainted nodes",
	"they tolerate and select), \($l.plain_pods // "-") plain; per_s: binds/s over the run'"'"'s span; latency from t0; cpu_ms/pod:",
	"the whole run'"'"'s (one process places both kinds); violations: pods bound against their constraint",
	(["system", "round", "pods", "kind", "per_s", "p50_ms", "p90_ms", "p99_ms", "max_ms", "bound", "cpu_ms/pod", "violations"] | @tsv),
	(.runs[] | select(.scenario == "constrained" and (ended | not)) | . as $x |
		(["all", "constrained", "selector", "pool", "plain"][] as $c | cls($x; $c) as $g | select($g != null) |
		[$x.system, ($x.round // 1 | tostring), ($g.pods // "-" | tostring), $c, r($g.binds_per_s), r($g.latency_ms.p50),
		 r($g.latency_ms.p90), r($g.latency_ms.p99), r($g.latency_ms.max), ($g.bound // "-" | tostring),
		 (if $c == "all" then r2($x.cpu_per_pod_ms) else "" end),
		 (if $c == "all" then ($x.violations // "-" | tostring) else "" end)] | @tsv)),
	"  median over the rounds, bridge / kube-scheduler:",
	(["constrained", "plain"][] as $c |
		"    \($c) pods: binds/s \(spread(rounds("constrained"; "bridge"; "kube-scheduler"; .result.groups[$c].binds_per_s)))",
		"    \($c) pods: p99 \(spread(rounds("constrained"; "bridge"; "kube-scheduler"; .result.groups[$c].latency_ms.p99)))",
		"    \($c) pods: p50 \(spread(rounds("constrained"; "bridge"; "kube-scheduler"; .result.groups[$c].latency_ms.p50)))"),
	"    CPU per bound pod: \(spread(rounds("constrained"; "bridge"; "kube-scheduler"; .cpu_per_pod_ms)))",
	(select(any($f.runs[]; .scenario == "singles")) |
		"  constrained / singles of the same round, binds/s: bridge \(spread(xrounds("constrained"; "singles"; "bridge"; rate(.)))); kube-scheduler \(spread(xrounds("constrained"; "singles"; "kube-scheduler"; rate(.))))",
		"  constrained / singles of the same round, CPU per bound pod: bridge \(spread(xrounds("constrained"; "singles"; "bridge"; .cpu_per_pod_ms))); kube-scheduler \(spread(xrounds("constrained"; "singles"; "kube-scheduler"; .cpu_per_pod_ms)))")),
(first(.runs[] | select(.scenario == "fixed-calibration")) // empty |
	"  fixed ran at \(.rate) pods/s: \(.share_percent) % of the \(.created_per_s // "-") pods/s this stack created (of 100 asked) while the bridge placed them"),
(select(any(.runs[]; .stack_cpu_s != null and .scenario != "churn" and .scenario != "backlog")) |
	"",
	"CPU per pod, ms (median over the rounds): the scheduler, and Slurm'"'"'s parts (accounting: slurmdbd + mariadbd);",
	"bound: from start to the last bind; ended: from the pods'"'"' deletion until Slurm holds no job; fixed: whole lives",
	(["run", "system", "scheduler", "slurmctld", "slurmd", "munged", "accounting", "Slurm", "scheduler+Slurm"] | @tsv),
	(["singles bound", "singles ended", "constrained bound", "constrained ended", "gangs bound", "gangs ended",
	  "fixed life"][] as $w |
	 ($w | split(" ")) as [$sc, $kind] |
	 ["bridge", "kube-scheduler"][] as $sys |
	 [.runs[] | select(.scenario == $sc and .system == $sys and
		(if $kind == "ended" then ended else .stack_cpu_s != null and (ended | not) end))] as $rs |
	 select($rs | length > 0) |
	 def n(x): if $kind == "ended" then x.pods else x.result.bound end;
	 [$w, $sys,
	  r2(med([$rs[] | ms(.cpu_s; n(.))])),
	  (["slurmctld", "slurmd", "munged", "accounting"][] as $p | r2(med([$rs[] | ms(.stack_cpu_s | parts[$p]; n(.))]))),
	  r2(med([$rs[] | ms(slurm_s(.stack_cpu_s); n(.))])),
	  r2(med([$rs[] | if .cpu_s == null then null else ms(.cpu_s + slurm_s(.stack_cpu_s); n(.)) end]))] | @tsv)),
(. as $f | select(any(.runs[]; .bind_cpu_s != null)) |
	def b(x; p): x.bind_cpu_s[p] // 0;
	def slurmb(x): b(x; "slurmctld") + b(x; "slurmd") + b(x; "munged") + b(x; "slurmdbd") + b(x; "mariadbd");
	def named(x): b(x; "slurm-bridge") + b(x; "kube-scheduler") + slurmb(x) + b(x; "kube-apiserver") +
		b(x; "etcd") + b(x; "kwok") + b(x; "kube-controller");
	def phase_s(x): if x.result.last_bind_ms == null or x.t0_ms == null then null
		else (x.result.last_bind_ms - x.t0_ms) / 1000 end;
	"",
	"busy CPU per bound pod from t0 to the last bind, ms (median over the rounds): the machine'"'"'s (all but idle),",
	"and whose; busy: the share of its \($f.host.cpus) CPUs in use then (at 100 %, pods/s = CPUs / the machine'"'"'s figure)",
	(["run", "system", "machine", "scheduler", "Slurm", "apiserver", "etcd", "kwok", "controller", "other", "busy"] | @tsv),
	(["singles", "constrained", "gangs"][] as $sc | ["bridge", "kube-scheduler"][] as $sys |
	 [.runs[] | select(.scenario == $sc and .system == $sys and .bind_cpu_s != null)] as $rs |
	 select($rs | length > 0) |
	 def n(x): x.result.bound;
	 [$sc, $sys,
	  r2(med([$rs[] | ms(b(.; "machine"); n(.))])),
	  r2(med([$rs[] | ms(b(.; "slurm-bridge") + b(.; "kube-scheduler"); n(.))])),
	  r2(med([$rs[] | ms(slurmb(.); n(.))])),
	  (["kube-apiserver", "etcd", "kwok", "kube-controller"][] as $p | r2(med([$rs[] | ms(b(.; $p); n(.))]))),
	  r2(med([$rs[] | ms(b(.; "machine") - named(.); n(.))])),
	  (med([$rs[] | phase_s(.) as $t | if $t == null or $t <= 0 then null
		else b(.; "machine") / ($f.host.cpus * $t) * 100 end]) | if . == null then "-" else "\(round) %" end)] | @tsv)),
(select(any(.runs[]; .api_writes != null)) |
	"",
	"API writes per bound pod (scheduler = binding + pod_patch + events; pods/status is kwok'"'"'s too, compare the",
	"two systems for its share; pod_create and pod_delete are the bench'"'"'s and kwok'"'"'s; fixed spans whole lives):",
	(["scenario", "system", "binding", "pod_patch", "events", "pod_status", "pod_create", "pod_delete", "other",
		"scheduler"] | @tsv),
	(.runs[] | select(.api_writes != null) | writes)),
(select(any(.runs[]; .etcd.writes != null and (ended | not))) |
	"",
	"etcd over each window: its writes and its log'"'"'s fsyncs per bound pod, and writes per fsync (etcd commits the",
	"writes that wait together with one fsync, so the more a scheduler keeps in flight, the fewer fsyncs):",
	(["scenario", "system", "round", "writes", "fsyncs", "writes/fsync", "etcd_cpu_ms"] | @tsv),
	(.runs[] | select(.etcd.writes != null and (ended | not)) | .result.bound as $n |
		[.scenario, .system, (.round // 1 | tostring), r2(per(.etcd.writes; $n)), r2(per(.etcd.fsyncs; $n)),
		 r2(per(.etcd.writes; .etcd.fsyncs)), r2(ms(.stack_cpu_s.etcd; $n))] | @tsv)),
(. as $f | select(any(.runs[]; .scenario == "fixed" and .busy_cores != null)) |
	"",
	"fixed, the machine through each round (cpuseries, every 100 ms): its mean busy CPUs of \($f.host.cpus), the seconds",
	"it was 95 % busy or more, and the pods at or above the round'"'"'s p99: how many arrived or were bound in such a second",
	(["system", "round", "busy_cpus", "saturated_s", "span_s", "p99_ms", "tail_pods", "in_saturated_s"] | @tsv),
	(.runs[] | select(.scenario == "fixed" and .busy_cores != null) |
		[.system, (.round // 1 | tostring), .busy_cores, .saturated_s, .span_s, .result.latency_ms.p99,
		 .tail_pods, .tail_saturated] | @tsv)),
"",
(.runs[] | select(.scenario != "churn" and .slurm_rpcs != null) |
	"Slurm RPCs per pod, \(.scenario) bridge\(if .round != null then " round \(.round)" else "" end): \(r2(.slurm_rpcs.per_pod)) (\(byrpc))" +
	(if (.slurm_rpcs.mean_ms // {}) | length > 0 then
		"; mean time: " + ([.slurm_rpcs.mean_ms | to_entries[] | "\(.key) \(r2(.value)) ms"] | join(", "))
	else "" end)),
(.runs[] | select(.system == "slurm" and .result.rpcs_per_job != null) |
	"Slurm RPCs per job, \(.scenario) Slurm alone: \(r2(.result.rpcs_per_job)) (its submits and polls)"),
(.runs[] | select(.cpu_s != null and .scenario != "churn" and (ended | not)) |
	"CPU, \(.scenario) \(.system): \(.cpu_s) s, \(r2(.cpu_per_pod_ms)) ms per bound pod" +
	(if .startup_cpu_s != null then " (start-up \(.startup_cpu_s) s apart)" else "" end) +
	(if .rss_kib != null then "; RSS \(.rss_kib) KiB at the end, peak \(.hwm_kib // "-") KiB" else "" end)),
(.runs[] | select(.stack_cpu_s != null and (.stack_cpu_s | length) > 0) |
	"  the stack meanwhile, \(.scenario) \(.system)\(if ended then " (its pods ending)" else "" end)\(if .round != null then " round \(.round)" else "" end): " +
	([.stack_cpu_s | to_entries[] | "\(.key) \(.value) s"] | join(", "))),
(.runs[] | select(.scenario == "churn") |
	"churn: \(.pods) pods in \(.seconds) s: bridge CPU \(.cpu_s) s, \(.rpcs_per_pod) Slurm RPCs per pod, RSS \(.rss_kib | min) -> \(.rss_kib | max) KiB"),
(.runs[] | select(.scenario == "idle") | "idle: bridge CPU \(.cpu_percent) % of a core"),
(.runs[] | select(.scenario == "backlog") |
	if .targets == null then (.bands[] |
	"backlog \(.pending) pending: RSS \(.rss_kib / 1024 | round) MiB, \(.decision_ms) ms per decision, \(.poll_ms) ms per Slurm poll (\(.polls) polls)")
	else
	def r3(x): if x == null then "-" else (x * 1000 | round / 1000 | tostring) end;
	def mib(x): if x == null then "-" else "\(x / 1024 * 10 | round / 10) MiB" end;
	def verdict(v; ok): if v == null then "not measured" elif ok then "met" else "missed" end;
	def tr(a; b): if a == null or b == null or b == 0 then null else (a / b * 100 | round / 100) end;
	# The top band measured, reached or not (then at the pods it had).
	def at(b): if b.reached then "\(b.pending)" else "\(b.pending) (band \(b.band) not reached)" end;
	.targets as $t | [.bands[] | select(.reached)] as $ok
	| (first($ok[] | select(.band > 0)) // null) as $lo | (.bands | last) as $hi
	| (if $hi != null and $lo != null and $hi.band > $lo.band then $hi else null end) as $hi
	| (first($ok[] | select(.band == $t.rss_at)) // null) as $at
	| ($ok[0] // null) as $zero
	| .relist as $rl | .release as $rel | .deletion as $del |
	"",
	"backlog: pods pending in Slurm behind a native job holding all \(.nodes) nodes, created at \(.rate) pods/s;",
	"RSS at the end of a \(.bands[0].window_s) s steady window once a band is reached, polls (load_jobs) and sweeps over it, decisions",
"over \(.bands[0].probe.pods? // "-") probe pods created after it; jobs: every job slurmctld holds; fill_s: first create to every pod submitted",
	(["band", "pending", "jobs", "reached", "fill_s", "RSS", "decision_ms", "cpu_ms", "decisions", "poll_ms", "polls", "sweep_ms",
		"/debug/memory"] | @tsv),
	(.bands[] | [.band, .pending, (.slurm_jobs // "-"), .reached, (.fill_s // "-"), mib(.rss_kib), r3(.decision_ms),
		(if .decision_cpu_ms == null then "-" else r3(.decision_cpu_ms) end), .decisions,
		r2(.poll_ms), .polls, r2(.sweep_ms), (if .memory != null then "yes" else "-" end)] | map(tostring) | @tsv),
	(.bands[] | select(.same_bridge == false) |
		"warning: band \(.band): the bridge was not the one the scenario started (restarted by someone else)"),
	(select(any(.bands[]; .reached | not)) | .bands[] | select(.reached | not) |
		"band \(.band) NOT reached within \(.fill_s) s: \(.submitted) pods submitted (\(.pending) pending in Slurm)"),
	(.slope_top // empty | "RSS growth \(.from) -> \(.to) pending\(if .to_reached == false then " (band \(.to_band) not reached)" else "" end): \(.bytes_per_pod) bytes per pod"),
	(.slope_low // empty | "RSS growth \(.from) -> \(.to) pending: \(.bytes_per_pod) bytes per pod"),
	($rel // empty | "release at \(.pending) pending: \(.releases_ms | length) nodes freed \(.gap_s) s apart (their native jobs ended); \(.bound) pods bound, from their node'"'"'s release to the bind: p50 \(.latency_ms.p50 // "-") ms, p90 \(.latency_ms.p90 // "-") ms, p99 \(.latency_ms.p99 // "-") ms, max \(.latency_ms.max // "-") ms" + (if .split then "; of which Slurm, release to start (slurmctld log, \(.split) pods): p50 \(.slurm_ms.p50 // "-") ms, p99 \(.slurm_ms.p99 // "-") ms; the bridge, start to bind: p50 \(.bridge_ms.p50 // "-") ms, p99 \(.bridge_ms.p99 // "-") ms" else "" end)),
	($del // empty | "deletion of the backlog namespace with \(.pending) jobs: \(.pending - .left) gone in \(.gone_ms / 1000) s\(if .left > 0 then " (\(.left) LEFT after the \(.timeout_s) s timeout)" else "" end); meanwhile another tenant'"'"'s pods, create to Slurm job (\(.decided) of \(.probes)): p50 \(.decided_ms.p50 // "-") ms, p99 \(.decided_ms.p99 // "-") ms, max \(.decided_ms.max // "-") ms"),
	($rl // empty | "relist at \(.pending) pending (kube-apiserver restarted, back in \(.restart_ms / 1000) s; every watch relisted: \(.all_relisted), \(.relisted_ms / 1000) s after the stop): RSS steady \(mib(.steady_kib)), peak \(mib(.peak_kib)) = \(.ratio // "-")x, \(mib(.after_kib)) after"),
	"",
	(["target (issue 18)", "measured", "goal", ""] | @tsv),
	(["RSS at 0 pending", mib($zero.rss_kib), "<= \($t.baseline_mib) MiB",
		verdict($zero.rss_kib; $zero.rss_kib <= $t.baseline_mib * 1024)] | @tsv),
	(["RSS at \($t.rss_at) pending", mib($at.rss_kib), "<= \($t.rss_mib) MiB",
		verdict($at.rss_kib; $at.rss_kib <= $t.rss_mib * 1024)] | @tsv),
	(.slope_top as $s | ["RSS growth \($s.from // "-") -> \($s.to // "-")",
		(if $s.bytes_per_pod == null then "-" else "\($s.bytes_per_pod) B/pod" end),
		"<= \($t.growth_bytes_per_pod) B/pod",
		verdict($s.bytes_per_pod; $s.bytes_per_pod <= $t.growth_bytes_per_pod)] | @tsv),
	(tr($hi.decision_ms; $lo.decision_ms) as $x | ["decision time \(if $hi != null then at($hi) else "-" end) / \($lo.pending // "-")",
		(if $x == null then "-" else "\($x)x (\(r3($hi.decision_ms)) / \(r3($lo.decision_ms)) ms)" end),
		"<= \($t.time_ratio)x", verdict($x; $x <= $t.time_ratio)] | @tsv),
	(tr($hi.decision_cpu_ms; $lo.decision_cpu_ms) as $x | select($x != null) |
		["decision CPU time \(at($hi)) / \($lo.pending // "-")",
		"\($x)x (\(r3($hi.decision_cpu_ms)) / \(r3($lo.decision_cpu_ms)) ms)",
		"<= \($t.time_ratio)x", verdict($x; $x <= $t.time_ratio)] | @tsv),
	(tr($hi.poll_ms; $lo.poll_ms) as $x | ["poll time \(if $hi != null then at($hi) else "-" end) / \($lo.pending // "-")",
		(if $x == null then "-" else "\($x)x (\(r2($hi.poll_ms)) / \(r2($lo.poll_ms)) ms)" end),
		"<= \($t.time_ratio)x", verdict($x; $x <= $t.time_ratio)] | @tsv),
	(["relist peak / steady", (if $rl.ratio == null then "-" else "\($rl.ratio)x" end),
		"<= \($t.relist_ratio)x", verdict($rl.ratio; $rl.ratio <= $t.relist_ratio)] | @tsv),
	# The issue'"'"'s figure: from Slurm starting the job to the bind (older
	# runs, without the split, have release to bind only).
	(select($t.release_p99_ms != null) |
		(if $rel.bridge_ms != null then ["Slurm start to bind", $rel.bridge_ms.p99] else ["release to bind", $rel.latency_ms.p99] end) as [$what, $x] |
		["\($what) p99 at \($rel.pending // "-") pending", (if $x == null then "-" else "\($x) ms" end),
		"<= \($t.release_p99_ms) ms", verdict($x; $x <= $t.release_p99_ms)] | @tsv)
	end),
(.runs[] | select(.scenario == "epilog") | .result |
	"epilog CPU per job end (\(.runs) runs, as slurmd starts it): native job \(.native_ms) ms; bridge job, \(.bridge_pods) pods gone \(.bridge_ms) ms" +
	(if .bridge_host_ms != null then " (\(.bridge_host_ms) ms over this machine'"'"'s kubelet cgroups)" else "" end) +
	"; /bin/true \(.true_ms) ms"),
(.runs[] | select(.scenario == "webhook") | .result.runs[]? |
	"webhook \(.name // .run): \(.requests_per_s // .rps) req/s, p50 \(.latency_ms.p50) ms, p99 \(.latency_ms.p99) ms"),
(.runs[] | select(.scenario == "owners") |
	def mib(x): if x == null then "-" else "\(x / 1024 * 10 | round / 10) MiB" end;
	def x(v): if v == null then "-" else "\(v)x" end;
	. as $o |
	"",
	"owners: both daemons (a private pair) idle, with \(.jobs) suspended Jobs of \(.job_kib) KiB of pod template each",
	"arriving on their watches, and started again with them there (their first list); RSS, then the peak (VmHWM)",
	"and their ratio to idle (goal: at most \(.goal_ratio)x)\(if .complete then "" else "; INCOMPLETE: see the bench'"'"'s messages" end)",
	(["daemon", "idle", "watched", "peak", "ratio", "peak ratio", "listed", "peak", "ratio", "peak ratio"] | @tsv),
	(["bridge", "admission"][] as $d |
		[(if $d == "bridge" then "scheduler" else "webhook" end), mib($o.idle[$d].rss_kib),
		 mib($o.watched[$d].rss_kib), mib($o.watched[$d].hwm_kib),
		 x($o.ratios["\($d)_watched"].rss), x($o.ratios["\($d)_watched"].peak),
		 mib($o.listed[$d].rss_kib), mib($o.listed[$d].hwm_kib),
		 x($o.ratios["\($d)_listed"].rss), x($o.ratios["\($d)_listed"].peak)] | @tsv)),
# The scenarios that failed (the others'"'"' figures are above).
(select((.failed // []) | length > 0) | "",
	(.failed[] | "FAILED: \(.scenario), exit status \(.exit_status // "-"): \(.error // "-")"))
' "$f" |
	# Aligns each block of tab-separated lines on its own; other lines
	# pass as they are (column -t would widen the first column to them).
	awk -F '\t' '
	function flush(   i, j, line) {
		for (i = 1; i <= n; i++) {
			line = ""
			for (j = 1; j <= nf[i]; j++)
				line = line (j < nf[i] ? sprintf("%-" w[j] "s  ", cell[i, j]) : cell[i, j])
			print line
		}
		n = 0; delete w
	}
	# No blank lines before the first figure (sections that did not run).
	!started && $0 == "" { next }
	{ started = 1 }
	/\t/ { n++; nf[n] = NF; for (j = 1; j <= NF; j++) { cell[n, j] = $j; if (length($j) > w[j]) w[j] = length($j) }; next }
	{ flush(); print }
	END { flush() }'
