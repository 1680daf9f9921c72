/*
 * The scheduler's metrics: one struct of atomics that the reconcile, submit,
 * poll and end threads (stats_rpc, from the slurm*.c files) update and the
 * HTTP threads read (the gauges are set by reconcile_gauges, reconcile.c).
 * Written as Prometheus text with the slurm_bridge_ prefix.  stats_trim
 * gives free heap pages back to the system and counts the trims and their
 * time.
 *
 * Threads: reconcile, poll (stats_rpc, stats_trim), HTTP (stats_write), end
 * (stats_rpc), submit (stats_rpc).
 */
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "bridge.h"

struct bridge_stats bstats;

static const char *const rpc_names[RPC_KINDS] = {
	[RPC_ALLOCATE] = "allocate_resources",
	[RPC_LOAD_JOBS] = "load_jobs",
	[RPC_KILL_JOB] = "kill_job",
	[RPC_KILL_JOBS] = "kill_jobs",
	[RPC_COMPLETE_JOB] = "complete_job",
	[RPC_ALLOC_LOOKUP] = "allocation_lookup",
	[RPC_UPDATE_JOB] = "update_job",
	[RPC_LOAD_NODES] = "load_node",
	[RPC_UPDATE_NODE] = "update_node",
	[RPC_STATS] = "get_statistics",
	[RPC_LOAD_TOPOLOGY] = "load_topology",
};

static const char *const yield_names[YIELD_KINDS] = {
	[YIELD_PREEMPTED] = "preempted",
	[YIELD_SUSPENDED] = "suspended",
	[YIELD_REQUEUED] = "requeued",
};

static const char *const end_names[END_KINDS] = {
	[END_COMPLETED] = "COMPLETED",
	[END_CANCELLED] = "CANCELLED",
	[END_TIMEOUT] = "TIMEOUT",
	[END_NODE_FAIL] = "NODE_FAIL",
	[END_PREEMPTED] = "PREEMPTED",
	[END_FAILED] = "FAILED",
	[END_OTHER] = "other",
};

void
stats_rpc(enum stats_rpc rpc, double t0, int ok)
{
	metrics_hist_observe(&bstats.rpc[rpc], metrics_now() - t0);
	if (!ok)
		atomic_fetch_add(&bstats.rpc_errors[rpc], 1);
}

void
stats_job_ended(const char *state)
{
	int i;

	for (i = 0; i < END_OTHER; i++)
		if (state != NULL && strcmp(state, end_names[i]) == 0)
			break;
	atomic_fetch_add(&bstats.jobs_ended[i], 1);
}

void
stats_write(struct buf *b)
{
	char l[64];
	int  i;

	metrics_one(b, "slurm_bridge_pods_bound_total", "counter",
	    "Pods bound to the node Slurm allocated.",
	    (double)atomic_load(&bstats.pods_bound));
	metrics_family(b, "slurm_bridge_scheduling_latency_seconds",
	    "histogram",
	    "Pod creation to bind (to the millisecond when the "
	    "bridge saw the pod within two seconds, else from its "
	    "creationTimestamp).");
	metrics_hist_write(b, "slurm_bridge_scheduling_latency_seconds", NULL,
	    &bstats.sched_latency);
	metrics_family(b, "slurm_bridge_decision_seconds", "histogram",
	    "Time to handle one pod event on the reconcile thread: grouping, "
	    "translation, and the submit or bind it leads to.");
	metrics_hist_write(b, "slurm_bridge_decision_seconds", NULL,
	    &bstats.decision);
	metrics_family(b, "slurm_bridge_decision_cpu_seconds", "histogram",
	    "CPU time of the reconcile thread per pod event handled: the "
	    "decision's own work, without waiting for a CPU.");
	metrics_hist_write(b, "slurm_bridge_decision_cpu_seconds", NULL,
	    &bstats.decision_cpu);
	metrics_family(b, "slurm_bridge_sweep_seconds", "histogram",
	    "Time for one pass over every group (periodic, and after owner "
	    "or namespace changes).");
	metrics_hist_write(b, "slurm_bridge_sweep_seconds", NULL,
	    &bstats.sweep);
	metrics_family(b, "slurm_bridge_slurm_rpc_duration_seconds",
	    "histogram", "Duration of libslurm calls, by call.");
	for (i = 0; i < RPC_KINDS; i++) {
		snprintf(l, sizeof(l), "rpc=\"%s\"", rpc_names[i]);
		metrics_hist_write(b, "slurm_bridge_slurm_rpc_duration_seconds",
		    l, &bstats.rpc[i]);
	}
	metrics_counters(b, "slurm_bridge_slurm_rpc_errors_total",
	    "libslurm calls that failed, by call.", "rpc", rpc_names,
	    bstats.rpc_errors, RPC_KINDS);
	metrics_one(b, "slurm_bridge_jobs_submitted_total", "counter",
	    "Placeholder jobs submitted to Slurm.",
	    (double)atomic_load(&bstats.jobs_submitted));
	metrics_one(b, "slurm_bridge_jobs_cancelled_total", "counter",
	    "Placeholder jobs the bridge cancelled.",
	    (double)atomic_load(&bstats.jobs_cancelled));
	metrics_counters(b, "slurm_bridge_jobs_ended_total",
	    "Placeholder jobs that ended in Slurm, by final state.", "state",
	    end_names, bstats.jobs_ended, END_KINDS);
	metrics_one(b, "slurm_bridge_handoffs_total", "counter",
	    "Placeholder jobs Slurm ended while a pod of theirs still ran: "
	    "their nodes wait for the pods in slurm-bridge-epilog.",
	    (double)atomic_load(&bstats.handoffs));
	metrics_one(b, "slurm_bridge_refits_total", "counter",
	    "Allocations given back just before the Binding: an allocated "
	    "node no longer fit a pod (a taint, a label, a host port taken), "
	    "the nodes split a required topology domain, or a device failed "
	    "its binding conditions; the job is submitted again.",
	    (double)atomic_load(&bstats.refits));
	metrics_one(b, "slurm_bridge_slurm_polls_hastened_total", "counter",
	    "Loads of Slurm's jobs asked before their spacing ran out, "
	    "because a probe of slurmctld's statistics saw a job start.",
	    (double)atomic_load(&bstats.polls_hastened));
	metrics_counters(b, "slurm_bridge_disruptions_total",
	    "Running placeholder jobs whose allocation Slurm took back, and "
	    "whose pods yielded (DisruptionTarget), by cause.",
	    "cause", yield_names, bstats.disruptions, YIELD_KINDS);
	metrics_one(b, "slurm_bridge_node_disruption", "gauge",
	    "1 while so many nodes are NotReady at once (at least "
	    "unhealthyNodesThreshold of them, and more than 2, or all) that "
	    "their pods are not failed for it, as Kubernetes' node lifecycle "
	    "controller stops evicting in a disrupted zone.",
	    (double)atomic_load(&bstats.node_disruption));
	metrics_one(b, "slurm_bridge_pending_pods", "gauge",
	    "Pods waiting for an allocation (not bound, not ended).",
	    (double)atomic_load(&bstats.pending_pods));
	metrics_one(b, "slurm_bridge_pending_gangs", "gauge",
	    "Gangs not yet allocated (waiting for members or for Slurm).",
	    (double)atomic_load(&bstats.pending_gangs));
	metrics_one(b, "slurm_bridge_fenced_writes_total", "counter",
	    "Slurm writes on others' work held back because the Lease was "
	    "not renewed recently enough (another replica may lead).",
	    (double)atomic_load(&bstats.fenced));
	metrics_one(b, "slurm_bridge_leader", "gauge",
	    "1 while this replica holds the leader lease (or runs without "
	    "leader election).",
	    (double)atomic_load(&bstats.leader));
}

void
stats_trim(void)
{
	double t0 = metrics_now();

	malloc_trim(0);
	atomic_fetch_add(&bstats.trims, 1);
	atomic_fetch_add(&bstats.trim_us,
	    (long long)((metrics_now() - t0) * 1e6));
}
