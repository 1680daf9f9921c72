/*
 * The reconcile thread's libslurm calls, and the bridge's libslurm files'
 * map: the allocation's layout a job was given (sctl_job_layout), a job's
 * admin_comment, the nodes the bridge drains and resumes and their names,
 * and Slurm's topology; sctl_init and sctl_fini run on main's thread.
 * The submit threads' calls are slurmsubmit.c's, the loads of the poll
 * thread slurmload.c's, the ends of jobs slurmend.c's; the release
 * differences they all build on are slurmrel.h's.  Together they are the
 * only libslurm user.  The function prefix is sctl_ because libslurm owns
 * the slurm_ namespace.
 *
 * The daemon must be built against the libslurm of the site's slurmctld: a
 * client speaks only to controllers within about two releases of its own.
 *
 * Threads: reconcile, submit (sctl_admin_fields_set, sctl_alloc_layout,
 * sctl_layout).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"
#include "runas.h"
#include "slurmrel.h"
#include "yamldoc.h"

int
sctl_init(void)
{
	slurm_init(NULL);
	return (0);
}

void
sctl_fini(void)
{
	slurm_fini();
}

/*
 * The allocation as [{node, cpus, gres}], one entry per node in hostlist
 * order, from Slurm's answer to an allocation or to a lookup of one: its
 * node list and its CPUs per node (run-length groups).  gres[i] is the
 * i-th node's GRES detail ("gpu:2(IDX:0-1)") when known.
 */
static json_t *
sctl_layout(const resource_allocation_response_msg_t *a, char *const *gres,
    uint32_t ngres)
{
	sctl_hostlist_t hl;
	json_t	       *arr, *ent;
	char	       *h;
	uint32_t	i = 0, grp = 0, rep = 0;
	int		cpus;

	if (a->node_list == NULL || *a->node_list == '\0' ||
	    (hl = slurm_hostlist_create(a->node_list)) == NULL)
		return (NULL);
	arr = json_array();
	while ((h = slurm_hostlist_shift(hl)) != NULL) {
		cpus = 0;
		if (grp < a->num_cpu_groups) {
			cpus = a->cpus_per_node[grp];
			if (++rep >= a->cpu_count_reps[grp]) {
				grp++;
				rep = 0;
			}
		}
		ent = json_pack("{s:s, s:i}", "node", h, "cpus", cpus);
		if (i < ngres && gres[i] != NULL)
			json_object_set_new(ent, "gres", json_string(gres[i]));
		json_array_append_new(arr, ent);
		free(h);
		i++;
	}
	slurm_hostlist_destroy(hl);
	return (arr);
}

/*
 * The layout of a job allocated at once, from the allocation response.
 * Only a job with GRES costs a second RPC: its per-node GRES detail (which
 * devices) is in the job record alone.
 */
json_t *
sctl_alloc_layout(const resource_allocation_response_msg_t *a, int has_gres)
{
	job_info_msg_t *msg = NULL;
	json_t	       *layout;
	double		t0;
	uint32_t	i;
	int		rc;

	if (a->node_list == NULL || *a->node_list == '\0')
		return (NULL); /* pending */
	if (!has_gres)
		return (sctl_layout(a, NULL, 0));
	t0 = metrics_now();
	rc = slurm_load_job(&msg, sctl_job_ref(SCTL_ALLOC_JOBID(a)),
	    SHOW_DETAIL);
	stats_rpc(RPC_LOAD_JOBS, t0, rc == SLURM_SUCCESS);
	/* Without the detail, the next poll brings the layout. */
	if (rc != SLURM_SUCCESS || msg->record_count == 0) {
		sctl_free_jobs(msg);
		return (NULL);
	}
	/* A heterogeneous job's load brings every component: this one's. */
	for (i = 0; i + 1 < msg->record_count; i++)
		if (msg->job_array[i].job_id == SCTL_ALLOC_JOBID(a))
			break;
	layout = sctl_layout(a, msg->job_array[i].gres_detail_str,
	    msg->job_array[i].gres_detail_cnt);
	sctl_free_jobs(msg);
	return (layout);
}

/*
 * Sets what only an administrator may set: admin_comment (NULL: left as
 * it is) and the priority (NO_VAL: left as it is).
 */
int
sctl_admin_fields_set(uint32_t jobid, char *admin_comment, uint32_t priority,
    char *err, size_t errlen)
{
	job_desc_msg_t u;
	char	       id[16];
	double	       t0;
	int	       rc, e;

	slurm_init_job_desc_msg(&u);
	snprintf(id, sizeof(id), "%u", jobid);
	u.job_id_str = id;
	u.admin_comment = admin_comment;
	u.priority = priority;
	t0 = metrics_now();
	rc = slurm_update_job(&u);
	e = errno;
	stats_rpc(RPC_UPDATE_JOB, t0, rc == SLURM_SUCCESS);
	if (rc == SLURM_SUCCESS)
		return (0);
	snprintf(err, errlen, "set admin_comment and priority of job %u: %s",
	    jobid, slurm_strerror(e));
	return (-1);
}

int
sctl_set_admin_comment(uint32_t jobid, const char *admin_comment, char *err,
    size_t errlen)
{
	char *ac = xstrdup(admin_comment);
	int   rc;

	rc = sctl_admin_fields_set(jobid, ac, NO_VAL, err, errlen);
	free(ac);
	return (rc);
}

/*
 * A heterogeneous job's allocation: every component's layout, each entry
 * with its component ("comp": the component's offset from the leader).
 */
static json_t *
sctl_het_layout(uint32_t jobid)
{
	resource_allocation_response_msg_t *a;
	SCTL_LIST			    list = NULL;
	json_t				   *layout, *part, *ent;
	double				    t0;
	size_t				    i;
	int				    rc, ok = 1;

	t0 = metrics_now();
	rc = slurm_het_job_lookup(sctl_job_ref(jobid), &list);
	stats_rpc(RPC_ALLOC_LOOKUP, t0, rc == SLURM_SUCCESS);
	if (rc != SLURM_SUCCESS || list == NULL)
		return (NULL);
	layout = json_array();
	while ((a = slurm_list_pop(list)) != NULL) {
		/* Components' job ids follow the leader's. */
		if (ok && (part = sctl_alloc_layout(a, 1)) != NULL) {
			json_array_foreach (part, i, ent)
				json_object_set_new(ent, "comp",
				    json_integer(SCTL_ALLOC_JOBID(a) - jobid));
			json_array_extend(layout, part);
			json_decref(part);
		} else
			ok = 0;
		slurm_free_resource_allocation_response_msg(a);
	}
	slurm_list_destroy(list);
	if (!ok) {
		json_decref(layout);
		return (NULL);
	}
	return (layout);
}

json_t *
sctl_job_layout(const struct sjob *sj)
{
	const slurm_job_info_t		   *j = sj->record;
	resource_allocation_response_msg_t *a = NULL;
	json_t				   *layout = NULL;
	double				    t0;
	int				    rc;

	if (sj->phase != SJOB_RUNNING || j == NULL)
		return (NULL);
	if (j->het_job_id == j->job_id)
		return (sctl_het_layout(j->job_id));
	t0 = metrics_now();
	rc = slurm_allocation_lookup(sctl_job_ref(sj->id), &a);
	stats_rpc(RPC_ALLOC_LOOKUP, t0, rc == SLURM_SUCCESS);
	/* Polls load no detail: a GRES job's devices cost a job load. */
	if (rc == SLURM_SUCCESS && a != NULL)
		layout = sctl_alloc_layout(a,
		    j->tres_per_task != NULL || j->tres_per_node != NULL);
	slurm_free_resource_allocation_response_msg(a);
	return (layout);
}

/* One node's record, timed: 0, or the error. */
static int
sctl_load_node_one(const char *node, node_info_msg_t **msg)
{
	double t0 = metrics_now();
	int    rc, e;

	rc = slurm_load_node_single(msg, (char *)(uintptr_t)node, SHOW_ALL);
	e = rc == SLURM_SUCCESS ? 0 : errno;
	stats_rpc(RPC_LOAD_NODES, t0, rc == SLURM_SUCCESS);
	return (e);
}

/* 0, or the error. */
static int
sctl_update_node(update_node_msg_t *u)
{
	double t0 = metrics_now();
	int    rc, e;

	rc = slurm_update_node(u);
	e = rc == SLURM_SUCCESS ? 0 : errno;
	stats_rpc(RPC_UPDATE_NODE, t0, rc == SLURM_SUCCESS);
	return (e);
}

int
sctl_node_drain(const char *node, const char *reason, char *err, size_t errlen)
{
	node_info_msg_t	 *msg = NULL;
	update_node_msg_t u;
	int		  drained, e;

	if ((e = sctl_load_node_one(node, &msg)) != 0) {
		snprintf(err, errlen, "load node %s: %s", node,
		    slurm_strerror(e));
		return (-1);
	}
	drained = msg->record_count > 0 &&
	    (msg->node_array[0].node_state & NODE_STATE_DRAIN);
	slurm_free_node_info_msg(msg);
	/* Already drained by someone: keep their reason (and their drain). */
	if (drained)
		return (0);
	slurm_init_update_node_msg(&u);
	u.node_names = (char *)(uintptr_t)node;
	u.node_state = NODE_STATE_DRAIN;
	u.reason = (char *)(uintptr_t)reason;
	if ((e = sctl_update_node(&u)) == 0)
		return (0);
	snprintf(err, errlen, "drain %s: %s", node, slurm_strerror(e));
	return (-1);
}

int
sctl_node_resume_ours(const char *node, const char *prefix, int *resumed,
    char *err, size_t errlen)
{
	node_info_msg_t	 *msg = NULL;
	update_node_msg_t u;
	const char	 *reason;
	int		  ours, e;

	*resumed = 0;
	if ((e = sctl_load_node_one(node, &msg)) != 0) {
		snprintf(err, errlen, "load node %s: %s", node,
		    slurm_strerror(e));
		return (-1);
	}
	reason = msg->record_count > 0 ? msg->node_array[0].reason : NULL;
	ours = msg->record_count > 0 &&
	    (msg->node_array[0].node_state & NODE_STATE_DRAIN) &&
	    reason != NULL && strncmp(reason, prefix, strlen(prefix)) == 0;
	slurm_free_node_info_msg(msg);
	/* A drain someone else made is theirs to undo. */
	if (!ours)
		return (0);
	slurm_init_update_node_msg(&u);
	u.node_names = (char *)(uintptr_t)node;
	u.node_state = NODE_RESUME;
	if ((e = sctl_update_node(&u)) != 0) {
		snprintf(err, errlen, "resume %s: %s", node, slurm_strerror(e));
		return (-1);
	}
	*resumed = 1;
	return (0);
}

json_t *
sctl_node_names(char *err, size_t errlen)
{
	node_info_msg_t *msg = NULL;
	node_info_t	*n;
	json_t		*names;
	uint32_t	 i;
	double		 t0;
	int		 rc, e;

	t0 = metrics_now();
	rc = slurm_load_node(0, &msg, SHOW_ALL);
	e = errno;
	stats_rpc(RPC_LOAD_NODES, t0, rc == SLURM_SUCCESS);
	if (rc != SLURM_SUCCESS) {
		snprintf(err, errlen, "slurm_load_node: %s", slurm_strerror(e));
		return (NULL);
	}
	names = json_object();
	for (i = 0; i < msg->record_count; i++) {
		n = &msg->node_array[i];
		if (n->name == NULL)
			continue;
		json_object_set_new(names, n->name,
		    (n->node_state & NODE_STATE_DRAIN) ?
			json_string(n->reason != NULL ? n->reason : "") :
			json_true());
	}
	slurm_free_node_info_msg(msg);
	return (names);
}

/* Adds each node of hostlist nodes to map as {node: dom}. */
static void
sctl_topo_add(json_t *map, const char *nodes, const char *dom)
{
	sctl_hostlist_t hl;
	char	       *h;

	if (nodes == NULL || dom == NULL || *nodes == '\0' ||
	    (hl = slurm_hostlist_create(nodes)) == NULL)
		return;
	while ((h = slurm_hostlist_shift(hl)) != NULL) {
		json_object_set_new(map, h, json_string(dom));
		free(h);
	}
	slurm_hostlist_destroy(hl);
}

#ifdef SCTL_TOPO_YAML
/*
 * topology.yaml's text (slurm_load_topo_config): the topology called name,
 * else the cluster default, else the first; its blocks, or its switches
 * that hold nodes (the leaves).
 */
static json_t *
sctl_topology_load(int blocks, const char *name, char *err, size_t errlen)
{
	topo_config_response_msg_t *resp = NULL;
	struct yamldoc_error	    ye;
	struct yamldoc_node	   *y = NULL;
	json_t			   *doc = NULL, *t, *pick = NULL, *map = NULL;
	json_t			   *e;
	const char		   *tn, *def;
	FILE			   *f;
	size_t			    i;

	if (slurm_load_topo_config(&resp) != SLURM_SUCCESS || resp == NULL ||
	    resp->config == NULL) {
		snprintf(err, errlen, "slurm_load_topo_config: %s",
		    slurm_strerror(errno));
		goto out;
	}
	if ((f = fmemopen(resp->config, strlen(resp->config), "r")) == NULL) {
		snprintf(err, errlen, "fmemopen: %s", strerror(errno));
		goto out;
	}
	y = yamldoc_read(f, 16, 0, &ye);
	fclose(f);
	if (y == NULL || (doc = yamldoc_json(y)) == NULL ||
	    !json_is_array(doc)) {
		snprintf(err, errlen,
		    "slurmctld's topology configuration is no YAML list "
		    "(line %zu)",
		    y == NULL ? ye.line : 0);
		goto out;
	}
	json_array_foreach (doc, i, t) {
		tn = json_string_value(json_object_get(t, "topology"));
		def = json_string_value(json_object_get(t, "cluster_default"));
		if (name != NULL ? (tn != NULL && strcmp(tn, name) == 0) :
				   (def != NULL && strcmp(def, "true") == 0)) {
			pick = t;
			break;
		}
	}
	if (pick == NULL && name == NULL)
		pick = json_array_get(doc, 0);
	if (pick == NULL) {
		snprintf(err, errlen, "Slurm has no topology named %s", name);
		goto out;
	}
	map = json_object();
	json_array_foreach (k8s_obj_get(pick,
				blocks ? "block.blocks" : "tree.switches"),
	    i, e)
		sctl_topo_add(map,
		    json_string_value(json_object_get(e, "nodes")),
		    json_string_value(
			json_object_get(e, blocks ? "block" : "switch")));
out:
	json_decref(doc);
	yamldoc_free(y);
	slurm_free_topo_config_msg(resp);
	return (map);
}
#else
/* The value of key in a "Key=value Key=value" line: a new string or NULL. */
static char *
sctl_topo_field(const char *line, const char *key)
{
	size_t	    kl = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=')
			return (xstrndup(p + kl + 1, strcspn(p + kl + 1, " ")));
		p += kl;
	}
	return (NULL);
}

/* slurm_load_topo's records as printed: leaf switches are Level=0. */
static json_t *
sctl_topology_load(int blocks, const char *name, char *err, size_t errlen)
{
	topo_info_response_msg_t *msg = NULL;
	json_t			 *map = NULL;
	char			 *text = NULL, *line, *save = NULL;
	char			 *dom, *nodes, *lvl;
	size_t			  len = 0;
	FILE			 *f;

	(void)name;
	if (slurm_load_topo(&msg) != SLURM_SUCCESS) {
		snprintf(err, errlen, "slurm_load_topo: %s",
		    slurm_strerror(errno));
		return (NULL);
	}
	if ((f = open_memstream(&text, &len)) == NULL) {
		snprintf(err, errlen, "open_memstream: %s", strerror(errno));
		goto out;
	}
	sctl_print_topo(f, msg);
	fclose(f);
	map = json_object();
	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		dom = sctl_topo_field(line,
		    blocks ? "BlockName" : "SwitchName");
		nodes = sctl_topo_field(line, "Nodes");
		lvl = blocks ? NULL : sctl_topo_field(line, "Level");
		if (blocks || (lvl != NULL && strcmp(lvl, "0") == 0))
			sctl_topo_add(map, nodes, dom);
		free(dom);
		free(nodes);
		free(lvl);
	}
out:
	free(text);
	slurm_free_topo_info_msg(msg);
	return (map);
}
#endif

json_t *
sctl_topology(int blocks, const char *name, char *err, size_t errlen)
{
	json_t *map;
	double	t0 = metrics_now();

	map = sctl_topology_load(blocks, name, err, errlen);
	stats_rpc(RPC_LOAD_TOPOLOGY, t0, map != NULL);
	return (map);
}
