/*
 * Placement (placement.c): members of a granted allocation onto its nodes.
 * Pure; the caller owns out[] and each out[i].gres it fills.
 */
#ifndef PLACEMENT_H
#define PLACEMENT_H

#include <stddef.h>

#include <jansson.h>

struct assignment {
	char  node[256]; /* Slurm node */
	char *gres;	 /* this task's share, e.g. gpu:1(IDX:3) */
	/*
	 * The share of the gang's PodGroup claims on that node
	 * (placement_gres_rest), or NULL; borrowed, the same for all tasks.
	 */
	const char *group_gres;
};

/* The k-th task's share of a node's GRES detail; new string or NULL. */
char *placement_gres_share(const char *detail, int per_task, int k);
/*
 * What is left of a node's GRES detail past ntasks tasks' shares: the
 * devices of a gang's PodGroup claims (the job asked them per node, after
 * each task's); new string, or NULL when none is.
 */
char *placement_gres_rest(const char *detail, int per_task, int ntasks);
/*
 * Places nmembers tasks on an allocation layout ([{node, cpus, gres}]):
 * per_node tasks per node (exclusive), or cpus / cpus_per_task (shared).
 * Fills out[0..nmembers); -1 with err, and no share left in out, if the
 * layout holds fewer tasks or an entry has no node.
 */
int placement_assign(const json_t *layout, size_t nmembers, int cpus_per_task,
    int per_node, int gpus_per_task, struct assignment *out, char *err,
    size_t errlen);

/*
 * The same for a heterogeneous job: het is translate_admin_het's
 * {"comps", "shapes"}, the layout's entries carry their "comp".  Member i
 * goes to a node of its component, by that component's CPUs and GPUs per
 * task.  out[] must be zeroed; -1 with err, and no share left in out.
 */
int placement_assign_het(const json_t *layout, const json_t *het,
    size_t nmembers, struct assignment *out, char *err, size_t errlen);

#endif /* PLACEMENT_H */
