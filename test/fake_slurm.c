/*
 * A fake Slurm behind the slurm*.c seam: the sctl_ calls over an in-memory
 * table of jobs (pending, running with a layout, ended with a state and
 * reason) and nodes (CPUs, GPUs), which the tests drive: start a job on
 * nodes, end it, purge it, take slurmctld away.  Polls answer as
 * slurm_load_jobs does: nothing when nothing changed since the last load,
 * else every bridge job.  Runs on the test's one thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xmalloc.h"
#include "bridge.h"
#include "fakes.h"

#define FAKE_JOBS  64
#define FAKE_NODES 8

struct fake_job {
	uint32_t	id;
	enum sjob_phase phase;
	char		state[32];
	char		reason[64];
	char	       *nodes; /* "n1,n2" once allocated */
	char	       *name;
	char	       *comment;
	char	       *admin_comment;
	char	       *partition, *account, *qos;
	uint32_t	ntasks;
	uint32_t	cpus_per_task;
	uint32_t	gpus_per_task;
	json_t	       *layout; /* [{node, cpus, gres[, comp]}], or NULL */
	/* A heterogeneous job: its components' tasks and per-task sizes. */
	size_t	 ncomps;
	uint32_t comp_ntasks[JOBSPEC_MAX_COMPS];
	uint32_t comp_cpt[JOBSPEC_MAX_COMPS];
	uint32_t comp_gpt[JOBSPEC_MAX_COMPS];
	uint64_t changed; /* the load clock at its last change */
	time_t	 submit_time;
	time_t	 start_time;
	time_t	 preempt_time; /* fake_slurm_preempt */
	time_t	 end_time;
	int	 suspended;
};

struct fake_node {
	char  name[64];
	int   cpus;
	int   gpus;
	char *drain; /* drain reason, or NULL */
};

static struct {
	struct fake_job		 jobs[FAKE_JOBS];
	size_t			 njobs;
	struct fake_node	 nodes[FAKE_NODES];
	size_t			 nnodes;
	uint32_t		 next_id;
	uint64_t		 clock;	  /* bumped by every change */
	uint32_t		 started; /* jobs started (sdiag's count) */
	enum fake_submit	 mode;
	int			 down;
	uint32_t		 refuse_cancel; /* this job's cancel fails */
	int			 exit_code;	/* the last sctl_complete's */
	int			 exit_signal;
	struct fake_slurm_counts n;
	/* admin_comments replaced during a load: a load's copies use them */
	char  *stale[FAKE_JOBS];
	size_t nstale;
} fs = { .next_id = 100, .clock = 1 };

static void
fake_stale_free(void)
{
	while (fs.nstale > 0)
		free(fs.stale[--fs.nstale]);
}

static struct fake_job *
fake_job_find(uint32_t id)
{
	size_t i;

	for (i = 0; i < fs.njobs; i++)
		if (fs.jobs[i].id == id)
			return (&fs.jobs[i]);
	return (NULL);
}

static void
fake_job_clear(struct fake_job *j)
{
	free(j->nodes);
	free(j->name);
	free(j->comment);
	free(j->admin_comment);
	free(j->partition);
	free(j->account);
	free(j->qos);
	json_decref(j->layout);
	memset(j, 0, sizeof(*j));
}

static void
fake_job_touch(struct fake_job *j)
{
	j->changed = ++fs.clock;
}

void
fake_slurm_reset(void)
{
	size_t i;

	for (i = 0; i < fs.njobs; i++)
		fake_job_clear(&fs.jobs[i]);
	for (i = 0; i < fs.nnodes; i++)
		free(fs.nodes[i].drain);
	fake_stale_free();
	memset(&fs, 0, sizeof(fs));
	fs.next_id = 100;
	fs.clock = 1;
}

void
fake_slurm_node(const char *name, int cpus, int gpus)
{
	struct fake_node *n;

	if (fs.nnodes == FAKE_NODES)
		abort();
	n = &fs.nodes[fs.nnodes++];
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->cpus = cpus;
	n->gpus = gpus;
}

void
fake_slurm_submit_mode(enum fake_submit m)
{
	fs.mode = m;
}

void
fake_slurm_refuse_cancel(uint32_t jobid)
{
	fs.refuse_cancel = jobid;
}

void
fake_slurm_down(int down)
{
	fs.down = down;
}

static struct fake_job *
fake_job_new(void)
{
	struct fake_job *j;

	if (fs.njobs == FAKE_JOBS)
		abort();
	j = &fs.jobs[fs.njobs++];
	memset(j, 0, sizeof(*j));
	j->id = fs.next_id++;
	j->phase = SJOB_PENDING;
	snprintf(j->state, sizeof(j->state), "PENDING");
	snprintf(j->reason, sizeof(j->reason), "None");
	j->submit_time = time(NULL);
	fake_job_touch(j);
	return (j);
}

uint32_t
fake_slurm_job_add(const char *admin_comment, uint32_t ntasks,
    uint32_t cpus_per_task)
{
	struct fake_job *j = fake_job_new();

	j->name = xstrdup("restored");
	j->comment = xstrdup(BRIDGE_COMMENT_MARKER " gang (restored)");
	j->admin_comment = admin_comment != NULL ? xstrdup(admin_comment) :
						   NULL;
	j->ntasks = ntasks;
	j->cpus_per_task = cpus_per_task;
	return (j->id);
}

static struct fake_node *
fake_node_find(const char *name)
{
	size_t i;

	for (i = 0; i < fs.nnodes; i++)
		if (strcmp(fs.nodes[i].name, name) == 0)
			return (&fs.nodes[i]);
	return (NULL);
}

/* The layout of j's tasks over nodes (NULL: all), or NULL if too few. */
static json_t *
fake_place(const struct fake_job *j, const char *nodes, char **used)
{
	struct fake_node *n;
	json_t		 *layout = json_array(), *ent;
	char		 *list, *tok, *save = NULL, gres[64], *u = NULL;
	uint32_t	  left = j->ntasks, cpt, take;
	size_t		  i;

	cpt = j->cpus_per_task > 0 ? j->cpus_per_task : 1;
	if (nodes == NULL) {
		list = xstrdup("");
		for (i = 0; i < fs.nnodes; i++) {
			char *l;
			xasprintf(&l, "%s%s%s", list, i > 0 ? "," : "",
			    fs.nodes[i].name);
			free(list);
			list = l;
		}
	} else
		list = xstrdup(nodes);
	for (tok = strtok_r(list, ",", &save); tok != NULL && left > 0;
	     tok = strtok_r(NULL, ",", &save)) {
		if ((n = fake_node_find(tok)) == NULL || n->drain != NULL)
			continue;
		take = (uint32_t)n->cpus / cpt;
		if (j->gpus_per_task > 0 &&
		    take > (uint32_t)n->gpus / j->gpus_per_task)
			take = (uint32_t)n->gpus / j->gpus_per_task;
		if (take > left)
			take = left;
		if (take == 0)
			continue;
		ent = json_pack("{s:s, s:i}", "node", n->name, "cpus",
		    (int)(take * cpt));
		if (j->gpus_per_task > 0) {
			snprintf(gres, sizeof(gres), "gpu:%u(IDX:0-%u)",
			    take * j->gpus_per_task,
			    take * j->gpus_per_task - 1);
			json_object_set_new(ent, "gres", json_string(gres));
		}
		json_array_append_new(layout, ent);
		left -= take;
		if (u == NULL)
			u = xstrdup(n->name);
		else {
			char *l;
			xasprintf(&l, "%s,%s", u, n->name);
			free(u);
			u = l;
		}
	}
	free(list);
	if (left > 0) {
		json_decref(layout);
		free(u);
		return (NULL);
	}
	*used = u;
	return (layout);
}

/*
 * A heterogeneous job's layout: each component placed as a job of its
 * own (the fake keeps no CPU account), its entries tagged with it; on
 * comp_nodes[k] when given, else on nodes.
 */
static json_t *
fake_place_het(const struct fake_job *j, const char *nodes,
    const char *const *comp_nodes, char **used)
{
	struct fake_job c;
	json_t	       *layout = json_array(), *part, *ent;
	char	       *u, *all = NULL;
	size_t		k, i;

	for (k = 0; k < j->ncomps; k++) {
		memset(&c, 0, sizeof(c));
		c.ntasks = j->comp_ntasks[k];
		c.cpus_per_task = j->comp_cpt[k];
		c.gpus_per_task = j->comp_gpt[k];
		if ((part = fake_place(&c,
			 comp_nodes != NULL ? comp_nodes[k] : nodes, &u)) ==
		    NULL) {
			json_decref(layout);
			free(all);
			return (NULL);
		}
		json_array_foreach (part, i, ent)
			json_object_set_new(ent, "comp", json_integer((int)k));
		json_array_extend(layout, part);
		json_decref(part);
		if (all == NULL)
			all = u;
		else {
			char *l;
			xasprintf(&l, "%s,%s", all, u);
			free(all);
			free(u);
			all = l;
		}
	}
	*used = all;
	return (layout);
}

/* Starts j on nodes (NULL: any), or its components on comp_nodes. */
static int
fake_start(uint32_t id, const char *nodes, const char *const *comp_nodes)
{
	struct fake_job *j = fake_job_find(id);
	json_t		*layout;
	char		*used = NULL;

	if (j == NULL || j->phase != SJOB_PENDING ||
	    (layout = j->ncomps > 1 ?
		    fake_place_het(j, nodes, comp_nodes, &used) :
		    fake_place(j, nodes, &used)) == NULL)
		return (-1);
	j->layout = layout;
	j->nodes = used;
	j->phase = SJOB_RUNNING;
	snprintf(j->state, sizeof(j->state), "RUNNING");
	snprintf(j->reason, sizeof(j->reason), "None");
	j->start_time = time(NULL);
	fs.started++;
	fake_job_touch(j);
	return (0);
}

int
fake_slurm_start(uint32_t id, const char *nodes)
{
	return (fake_start(id, nodes, NULL));
}

int
fake_slurm_start_comps(uint32_t id, const char *nodes0, const char *nodes1)
{
	const char *const comp_nodes[] = { nodes0, nodes1 };

	return (fake_start(id, NULL, comp_nodes));
}

size_t
fake_slurm_job_comps(uint32_t id)
{
	struct fake_job *j = fake_job_find(id);

	return (j != NULL ? j->ncomps : 0);
}

void
fake_slurm_pend(uint32_t id, const char *reason, int start_in_s)
{
	struct fake_job *j = fake_job_find(id);

	if (j == NULL || j->phase != SJOB_PENDING)
		return;
	snprintf(j->reason, sizeof(j->reason), "%s", reason);
	/* The backfill scheduler's plan: when it expects the job to start. */
	j->start_time = start_in_s > 0 ? time(NULL) + start_in_s : 0;
	fake_job_touch(j);
}

void
fake_slurm_preempt(uint32_t id, int grace_s)
{
	struct fake_job *j = fake_job_find(id);

	if (j == NULL || j->phase != SJOB_RUNNING)
		return;
	j->preempt_time = time(NULL);
	j->end_time = j->preempt_time + grace_s;
	fake_job_touch(j);
}

void
fake_slurm_suspend(uint32_t id)
{
	struct fake_job *j = fake_job_find(id);

	if (j == NULL || j->phase != SJOB_RUNNING)
		return;
	j->suspended = 1;
	snprintf(j->state, sizeof(j->state), "SUSPENDED");
	fake_job_touch(j);
}

void
fake_slurm_requeue(uint32_t id)
{
	struct fake_job *j = fake_job_find(id);

	if (j == NULL || j->phase != SJOB_RUNNING)
		return;
	j->phase = SJOB_PENDING;
	snprintf(j->state, sizeof(j->state), "PENDING");
	snprintf(j->reason, sizeof(j->reason), "BeginTime");
	fake_job_touch(j);
}

void
fake_slurm_end(uint32_t id, const char *state, const char *reason)
{
	struct fake_job *j = fake_job_find(id);

	if (j == NULL || j->phase == SJOB_ENDED)
		return;
	j->phase = SJOB_ENDED;
	snprintf(j->state, sizeof(j->state), "%s", state);
	snprintf(j->reason, sizeof(j->reason), "%s",
	    reason != NULL ? reason : "None");
	fake_job_touch(j);
}

void
fake_slurm_comment(uint32_t id, const char *comment)
{
	struct fake_job *j = fake_job_find(id);

	if (j == NULL)
		return;
	free(j->comment);
	j->comment = xstrdup(comment);
	fake_job_touch(j);
}

void
fake_slurm_update(uint32_t id, const char *partition, const char *account,
    const char *qos)
{
	struct fake_job *j = fake_job_find(id);

	if (j == NULL)
		return;
	if (partition != NULL) {
		free(j->partition);
		j->partition = xstrdup(partition);
	}
	if (account != NULL) {
		free(j->account);
		j->account = xstrdup(account);
	}
	if (qos != NULL) {
		free(j->qos);
		j->qos = xstrdup(qos);
	}
	fake_job_touch(j);
}

void
fake_slurm_purge(uint32_t id)
{
	struct fake_job *j = fake_job_find(id);
	size_t		 i;

	if (j == NULL)
		return;
	i = (size_t)(j - fs.jobs);
	fake_job_clear(j);
	memmove(&fs.jobs[i], &fs.jobs[i + 1],
	    (fs.njobs - i - 1) * sizeof(fs.jobs[0]));
	fs.njobs--;
	memset(&fs.jobs[fs.njobs], 0, sizeof(fs.jobs[0]));
	fs.clock++;
}

uint32_t
fake_slurm_last_job(void)
{
	return (fs.njobs > 0 ? fs.jobs[fs.njobs - 1].id : 0);
}

const char *
fake_slurm_job_state(uint32_t id)
{
	struct fake_job *j = fake_job_find(id);

	return (j != NULL ? j->state : NULL);
}

const char *
fake_slurm_job_comment(uint32_t id)
{
	struct fake_job *j = fake_job_find(id);

	return (j != NULL ? j->comment : NULL);
}

const char *
fake_slurm_job_account(uint32_t id)
{
	struct fake_job *j = fake_job_find(id);

	return (j != NULL ? j->account : NULL);
}

const struct fake_slurm_counts *
fake_slurm_counts(void)
{
	return (&fs.n);
}

/* --- The seam: the slurm*.c files' functions ------------------------------ */

int
sctl_init(void)
{
	return (0);
}

void
sctl_fini(void)
{
}

int
sctl_submit(const struct jobspec *js, uint32_t *jobid, json_t **layout,
    int *permanent, char *err, size_t errlen)
{
	struct fake_job *j;

	*jobid = 0;
	*layout = NULL;
	*permanent = 0;
	fs.n.submits++;
	if (fs.down || fs.mode == FAKE_SUBMIT_FAIL) {
		snprintf(err, errlen,
		    "slurm_allocate_resources: Unable to "
		    "contact slurm controller (connect failure)");
		return (-1);
	}
	if (fs.mode == FAKE_SUBMIT_REFUSE) {
		*permanent = 1;
		snprintf(err, errlen,
		    "slurm_allocate_resources: Invalid "
		    "account or account/partition combination specified");
		return (-1);
	}
	j = fake_job_new();
	j->name = xstrdup(js->name != NULL ? js->name : "");
	j->comment = xstrdup(js->comment != NULL ? js->comment : "");
	j->partition = xstrdup(js->partition != NULL ? js->partition : "");
	j->account = js->account != NULL ? xstrdup(js->account) : NULL;
	j->qos = js->qos != NULL ? xstrdup(js->qos) : NULL;
	j->admin_comment = js->admin_comment != NULL ?
	    xstrdup(js->admin_comment) :
	    NULL;
	j->ntasks = js->ntasks;
	j->cpus_per_task = js->cpus_per_task;
	j->gpus_per_task = js->gpus_per_task;
	j->ncomps = js->ncomps;
	for (size_t k = 0; k < js->ncomps; k++) {
		j->comp_ntasks[k] = js->comps[k].ntasks;
		j->comp_cpt[k] = js->comps[k].cpus_per_task;
		j->comp_gpt[k] = js->comps[k].gpus_per_task;
	}
	*jobid = j->id;
	/* A heterogeneous job is a batch job: it never starts at once. */
	if (fs.mode == FAKE_SUBMIT_ALLOCATE && j->ncomps < 2 &&
	    fake_slurm_start(j->id, NULL) == 0)
		*layout = json_deep_copy(j->layout);
	return (0);
}

/*
 * What slurmsubmit.c's does: a pending job takes the request's name,
 * partition, account and QOS; one that left PENDING, or is gone, refuses.
 */
int
sctl_update_pending(const struct jobspec *js, uint32_t jobid, char *err,
    size_t errlen)
{
	struct fake_job *j = fake_job_find(jobid);

	fs.n.updates++;
	if (fs.down) {
		snprintf(err, errlen,
		    "update pending job %u: Unable to contact slurm "
		    "controller (connect failure)",
		    jobid);
		return (-1);
	}
	if (j == NULL || j->phase != SJOB_PENDING) {
		snprintf(err, errlen,
		    "update pending job %u: Job/step already completing or "
		    "completed",
		    jobid);
		return (-1);
	}
	if (js->name != NULL) {
		free(j->name);
		j->name = xstrdup(js->name);
	}
	fake_slurm_update(jobid, js->partition, js->account, js->qos);
	return (0);
}

/* Ends a job at our request; already gone is what a cancel wants. */
static int
fake_cancel_one(uint32_t jobid, char *err, size_t errlen)
{
	struct fake_job *j = fake_job_find(jobid);

	fs.n.cancels++;
	if (jobid != 0 && jobid == fs.refuse_cancel) {
		snprintf(err, errlen,
		    "slurm_kill_job %u: Access/permission denied", jobid);
		return (-1);
	}
	if (fs.down) {
		snprintf(err, errlen,
		    "slurm_kill_job %u: Unable to contact "
		    "slurm controller (connect failure)",
		    jobid);
		return (-1);
	}
	if (j != NULL && j->phase != SJOB_ENDED) {
		j->phase = SJOB_ENDED;
		snprintf(j->state, sizeof(j->state), "CANCELLED");
		fake_job_touch(j);
	}
	return (0);
}

int
sctl_cancel(uint32_t jobid, char *err, size_t errlen)
{
	return (fake_cancel_one(jobid, err, errlen));
}

/* As slurmctld: a return code other than 0 makes the job FAILED. */
int
sctl_complete(uint32_t jobid, int exit_code, int signal, char *err,
    size_t errlen)
{
	struct fake_job *j = fake_job_find(jobid);

	fs.n.completes++;
	if (fs.down) {
		snprintf(err, errlen,
		    "slurm_complete_job %u: Unable to contact "
		    "slurm controller (connect failure)",
		    jobid);
		return (-1);
	}
	fs.exit_code = exit_code;
	fs.exit_signal = signal;
	if (j != NULL && j->phase != SJOB_ENDED) {
		j->phase = SJOB_ENDED;
		snprintf(j->state, sizeof(j->state), "%s",
		    exit_code != 0 || signal != 0 ? "FAILED" : "COMPLETED");
		fake_job_touch(j);
	}
	return (0);
}

void
fake_slurm_last_exit(int *exit_code, int *signal)
{
	*exit_code = fs.exit_code;
	*signal = fs.exit_signal;
}

size_t
sctl_cancel_batch(void)
{
	return (END_BATCH);
}

int
sctl_cancel_jobs(const uint32_t *ids, size_t n, uint8_t *ended, char *err,
    size_t errlen)
{
	size_t i;
	int    failed = 0;
	char   one[256];

	fs.n.cancel_batches++;
	for (i = 0; i < n; i++) {
		ended[i] = fake_cancel_one(ids[i], one, sizeof(one)) == 0;
		if (!ended[i] && failed++ == 0)
			snprintf(err, errlen, "%s", one);
	}
	return (failed > 0 ? -1 : 0);
}

const char *
fake_slurm_admin_comment(uint32_t jobid)
{
	struct fake_job *j = fake_job_find(jobid);

	return (j != NULL ? j->admin_comment : NULL);
}

/* As an administrator's scontrol update AdminComment=. */
int
sctl_set_admin_comment(uint32_t jobid, const char *admin_comment, char *err,
    size_t errlen)
{
	struct fake_job *j = fake_job_find(jobid);

	if (fs.down || j == NULL) {
		snprintf(err, errlen, "slurm_update_job %u: %s", jobid,
		    fs.down ? "Unable to contact slurm controller" :
			      "Invalid job id specified");
		return (-1);
	}
	if (fs.nstale < FAKE_JOBS)
		fs.stale[fs.nstale++] = j->admin_comment;
	else
		free(j->admin_comment);
	j->admin_comment = xstrdup(admin_comment);
	fs.n.admin_updates++;
	fake_job_touch(j);
	return (0);
}

/* A load: the bridge jobs as they were when it was made. */
struct sload {
	struct fake_job snap[FAKE_JOBS];
	size_t		n;
	uint32_t	ids[FAKE_JOBS]; /* every job's, bridge's or not */
	size_t		nids;
	int		rc; /* 0, 1 no change, -1 down */
	time_t		last_update;
};

struct sload *
sctl_load(time_t since)
{
	struct sload *l = xcalloc(1, sizeof(*l));
	size_t	      i;

	fs.n.polls++;
	fake_stale_free(); /* the last load's copies are gone */
	if (fs.down) {
		l->rc = -1;
		return (l);
	}
	/* Every change moves the clock. */
	if (since != 0 && fs.clock <= (uint64_t)since) {
		l->rc = 1;
		return (l);
	}
	l->last_update = (time_t)fs.clock;
	/* A load is a snapshot: what the callbacks do shows in the next. */
	for (i = 0; i < fs.njobs; i++)
		l->ids[l->nids++] = fs.jobs[i].id;
	for (i = 0; i < fs.njobs; i++)
		if (fs.jobs[i].comment != NULL &&
		    strncmp(fs.jobs[i].comment, BRIDGE_COMMENT_MARKER,
			strlen(BRIDGE_COMMENT_MARKER)) == 0)
			l->snap[l->n++] = fs.jobs[i];
	return (l);
}

int
sctl_load_each(const struct sload *l, time_t *since, sjob_cb cb, void *arg,
    double *rpc_s, char *err, size_t errlen)
{
	struct sjob sj;
	size_t	    i;

	if (rpc_s != NULL)
		*rpc_s = 0;
	if (l->rc == -1) {
		snprintf(err, errlen,
		    "slurm_load_jobs: Unable to contact "
		    "slurm controller (connect failure)");
		return (-1);
	}
	if (l->rc == 1)
		return (1);
	*since = l->last_update;
	for (i = 0; i < l->n; i++) {
		memset(&sj, 0, sizeof(sj));
		sj.id = l->snap[i].id;
		sj.phase = l->snap[i].phase;
		sj.state = l->snap[i].state;
		sj.reason = l->snap[i].reason;
		sj.nodes = l->snap[i].nodes;
		sj.admin_comment = l->snap[i].admin_comment;
		sj.comment = l->snap[i].comment;
		sj.name = l->snap[i].name;
		sj.partition = l->snap[i].partition;
		sj.account = l->snap[i].account;
		sj.qos = l->snap[i].qos;
		sj.submit_time = l->snap[i].submit_time;
		sj.start_time = l->snap[i].start_time;
		sj.preempt_time = l->snap[i].preempt_time;
		sj.end_time = l->snap[i].end_time;
		sj.suspended = l->snap[i].suspended;
		sj.record = &l->snap[i];
		cb(&sj, arg);
	}
	return (0);
}

void
sctl_load_free(struct sload *l)
{
	free(l);
}

int
sctl_load_has(const struct sload *l, uint32_t id)
{
	size_t i;

	for (i = 0; i < l->nids; i++)
		if (l->ids[i] == id)
			return (1);
	return (0);
}

uint32_t
sctl_load_count(const struct sload *l)
{
	return (l->rc == 0 ? (uint32_t)l->n : 0);
}

json_t *
sctl_job_layout(const struct sjob *sj)
{
	struct fake_job *j = fake_job_find(sj->id);

	fs.n.layouts++;
	if (sj->phase != SJOB_RUNNING || j == NULL || j->layout == NULL)
		return (NULL);
	return (json_deep_copy(j->layout));
}

int
sctl_node_drain(const char *node, const char *reason, char *err, size_t errlen)
{
	struct fake_node *n = fake_node_find(node);

	if (n == NULL) {
		snprintf(err, errlen, "load node %s: Invalid node name", node);
		return (-1);
	}
	if (n->drain == NULL)
		n->drain = xstrdup(reason);
	return (0);
}

int
sctl_node_resume_ours(const char *node, const char *prefix, int *resumed,
    char *err, size_t errlen)
{
	struct fake_node *n = fake_node_find(node);

	*resumed = 0;
	if (n == NULL) {
		snprintf(err, errlen, "load node %s: Invalid node name", node);
		return (-1);
	}
	if (n->drain != NULL &&
	    strncmp(n->drain, prefix, strlen(prefix)) == 0) {
		free(n->drain);
		n->drain = NULL;
		*resumed = 1;
	}
	return (0);
}

/* How many jobs started so far (fake_slurm_start counts them). */
int
sctl_jobs_started(uint32_t *started)
{
	if (fs.down)
		return (-1);
	*started = fs.started;
	return (0);
}

json_t *
sctl_node_names(char *err, size_t errlen)
{
	json_t *names;
	size_t	i;

	if (fs.down) {
		snprintf(err, errlen,
		    "slurm_load_node: Unable to contact "
		    "slurm controller (connect failure)");
		return (NULL);
	}
	names = json_object();
	for (i = 0; i < fs.nnodes; i++)
		json_object_set_new(names, fs.nodes[i].name,
		    fs.nodes[i].drain != NULL ? json_string(fs.nodes[i].drain) :
						json_true());
	return (names);
}

/* The fake has no topology: every node in no leaf switch or block. */
json_t *
sctl_topology(int blocks, const char *name, char *err, size_t errlen)
{
	(void)blocks;
	(void)name;
	if (fs.down) {
		snprintf(err, errlen,
		    "slurm_load_topo: Unable to contact "
		    "slurm controller (connect failure)");
		return (NULL);
	}
	return (json_object());
}
