/*
 * The group state machine (bridge/group.c and the files it runs: form.c,
 * bind.c, end.c; driven by reconcile.c) as one table: each row brings a
 * three-pod gang to a start state through real events, applies one event,
 * and checks the group's state and what the event made the bridge do:
 * allocation requests and Slurm calls (submit, cancel), pod writes (binds,
 * PodScheduled messages, deletes, Failed status) and Events.
 * Single-threaded: the test calls the reconcile thread's own handlers
 * (reconcile_msg, poll_slurm, poll_recover, sweep_groups, sweep_changed,
 * bind_flush_writes) in the order its loop would, over fakes of Slurm,
 * the writepool and the clock, and runs the submit, poll and end threads'
 * own code a step at a time (test/drive.c) on workers of no thread.  A
 * binary of its own: the fakes stand in for the slurm*.c files,
 * writepool.c, eventer.c, now.c and libk8s's requests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "clock.h"
#include "xmalloc.h"
#include "bridge.h"
#include "check_suites.h"
#include "fakes.h"

#define NS	  "team"
#define GANG	  "train"
#define GKEY	  "gang:" NS "/" GANG
#define GANG_SIZE 3
/* A row's expected state when the group is gone (freed). */
#define GONE (-1)

/* The bridge under test and the API server's pods as it knows them. */
struct harness {
	struct bridge_conf conf;
	struct reconcile  *r;
	json_t		  *api;	    /* pod key -> pod */
	json_t		  *nodes;   /* node name -> node */
	json_t		  *dirty;   /* pod keys changed, not seen */
	size_t		   applied; /* write log entries acted on */
};

static struct harness H;

/* --- The API server's side -------------------------------------------- */

static json_t *
h_pod_json(const char *name)
{
	char uid[96], min[16];

	snprintf(uid, sizeof(uid), "uid-%s", name);
	snprintf(min, sizeof(min), "%d", GANG_SIZE);
	return (json_pack(
	    "{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:{s:s}, "
	    "s:{s:s}}, s:{s:s, s:[{s:s, s:s, s:s}], s:[{s:s, s:{s:{s:s}}}]}, "
	    "s:{s:s}}",
	    "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
	    "namespace", NS, "uid", uid, "resourceVersion", "1", "labels",
	    LABEL_POD_GROUP, GANG, "annotations", ANN_MIN_MEMBER, min, "spec",
	    "schedulerName", BRIDGE_SCHEDULER_NAME, "tolerations", "key",
	    MANAGED_TAINT_KEY, "operator", "Exists", "effect",
	    MANAGED_TAINT_EFFECT_DEFAULT, "containers", "name", "main",
	    "resources", "requests", "cpu", "1", "status", "phase", "Pending"));
}

static json_t *
h_node_json(const char *name, int ready)
{
	return (json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:s, s:s, s:s}]}, "
			  "s:{s:[{s:s, s:s}]}}",
	    "apiVersion", "v1", "kind", "Node", "metadata", "name", name,
	    "spec", "taints", "key", MANAGED_TAINT_KEY, "value",
	    MANAGED_TAINT_VALUE, "effect", MANAGED_TAINT_EFFECT_DEFAULT,
	    "status", "conditions", "type", "Ready", "status",
	    ready ? "True" : "False"));
}

static const char *
h_key(int i, char *buf, size_t len)
{
	snprintf(buf, len, NS "/" GANG "-%d", i);
	return (buf);
}

/* One watch event about a pod, then what the loop does after each. */
static void
h_pod_event(const json_t *pod, enum k8s_watch_type type)
{
	struct msg *msg = xcalloc(1, sizeof(*msg));

	msg->kind = MSG_POD;
	msg->type = type;
	msg->pod = podrec_new(pod);
	ck_assert_ptr_nonnull(msg->pod);
	reconcile_msg(H.r, msg);
	drive_end_deliver(H.r);
	bind_flush_writes(H.r);
}

static void
h_obj_msg(enum msg_kind kind, enum k8s_watch_type type, json_t *obj)
{
	struct msg *msg = xcalloc(1, sizeof(*msg));

	msg->kind = kind;
	msg->type = type;
	msg->obj = obj;
	reconcile_msg(H.r, msg);
	drive_end_deliver(H.r);
	bind_flush_writes(H.r);
}

/* Pod GANG-i is created. */
static void
h_add(int i)
{
	char	name[64], key[128];
	json_t *pod;

	snprintf(name, sizeof(name), GANG "-%d", i);
	pod = h_pod_json(name);
	json_object_set_new(H.api, h_key(i, key, sizeof(key)), pod);
	h_pod_event(pod, K8S_WATCH_ADDED);
}

/* Pod GANG-i is gone from the API server. */
static void
h_delete(int i)
{
	char	key[128];
	json_t *pod;

	pod = json_incref(json_object_get(H.api, h_key(i, key, sizeof(key))));
	ck_assert_ptr_nonnull(pod);
	json_object_del(H.api, key);
	json_object_del(H.dirty, key);
	h_pod_event(pod, K8S_WATCH_DELETED);
	json_decref(pod);
}

/*
 * Every member ends by itself with phase: its containers terminated,
 * member 0 with exit code code, the others with 0.
 */
static void
h_pods_end(const char *phase, int code)
{
	const char *k;
	json_t	   *pod, *cs;
	int	    i = 0;

	json_object_foreach (H.api, k, pod) {
		cs = json_pack("[{s:s, s:{s:{s:i, s:s}}}]", "name", "main",
		    "state", "terminated", "exitCode", i++ == 0 ? code : 0,
		    "reason", code != 0 ? "Error" : "Completed");
		json_object_set_new(json_object_get(pod, "status"), "phase",
		    json_string(phase));
		json_object_set_new(json_object_get(pod, "status"),
		    "containerStatuses", cs);
		h_pod_event(pod, K8S_WATCH_MODIFIED);
	}
}

static void
h_delete_all(void)
{
	int  i;
	char key[128];

	for (i = 0; i < 8; i++)
		if (json_object_get(H.api, h_key(i, key, sizeof(key))) != NULL)
			h_delete(i);
}

/* The watch brings the pods our writes changed. */
static void
h_watch(void)
{
	const char *k;
	json_t	   *v, *dirty = H.dirty, *pod;

	H.dirty = json_object();
	json_object_foreach (dirty, k, v)
		if ((pod = json_object_get(H.api, k)) != NULL)
			h_pod_event(pod, K8S_WATCH_MODIFIED);
	json_decref(dirty);
}

/* Merges patch's members into obj; a null takes the member off. */
static void
h_merge(json_t *obj, const json_t *patch)
{
	const char *k;
	json_t	   *v;

	json_object_foreach ((json_t *)(uintptr_t)patch, k, v) {
		if (json_is_null(v))
			json_object_del(obj, k);
		else
			json_object_set(obj, k, v);
	}
}

/* A write the pool made landed: the API server's pod changes. */
static void
h_landed(const struct wreq *w, void *arg)
{
	json_t *pod = json_object_get(H.api, w->pkey), *md, *patch;

	(void)arg;
	if (pod == NULL)
		return;
	md = json_object_get(pod, "metadata");
	patch = json_object_get(w->body, "metadata");
	switch (w->kind) {
	case WREQ_BIND:
		json_object_set_new(json_object_get(pod, "spec"), "nodeName",
		    json_string(w->node));
		h_merge(json_object_get(md, "annotations"), w->body);
		break;
	case WREQ_METADATA:
		if (json_object_get(md, "labels") == NULL)
			json_object_set_new(md, "labels", json_object());
		h_merge(json_object_get(md, "labels"),
		    json_object_get(patch, "labels"));
		h_merge(json_object_get(md, "annotations"),
		    json_object_get(patch, "annotations"));
		if (json_object_get(patch, "finalizers") != NULL)
			json_object_set_new(md, "finalizers",
			    json_pack("[s]", FINALIZER));
		break;
	case WREQ_RELEASE:
		json_object_del(md, "finalizers");
		break;
	default:
		return;
	}
	json_object_set_new(H.dirty, w->pkey, json_true());
}

/* Answers every write, and the writes answers ask for; then the watch. */
static void
h_writes_settle(void)
{
	int i;

	drive_end_deliver(H.r);
	bind_flush_writes(H.r);
	for (i = 0; i < 16 && fake_writes_waiting(H.r->writepool) > 0; i++) {
		fake_writes_answer(H.r->writepool, H.r, 0, h_landed, NULL);
		drive_end_deliver(H.r);
		bind_flush_writes(H.r);
	}
	ck_assert_uint_eq(fake_writes_waiting(H.r->writepool), 0);
	h_watch();
}

static void
h_timestamp(char *buf, size_t len, time_t t)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/*
 * The API server acts on the reconcile thread's own requests since the
 * last call: a deleted pod that never ran goes at once, a bound one
 * starts its 30 s grace period; a Failed status shows.
 */
static void
h_apiserver(void)
{
	json_t	   *log = fake_writes_log(), *v, *pod;
	const char *w, *key;
	char	    ts[64];
	size_t	    end = json_array_size(log);

	/* What these events make the bridge ask waits for the next call. */
	for (; H.applied < end; H.applied++) {
		v = json_array_get(log, H.applied);
		w = json_string_value(json_object_get(v, "w"));
		key = json_string_value(json_object_get(v, "pod"));
		if ((pod = json_object_get(H.api, key)) == NULL)
			continue;
		if (strcmp(w, "delete") == 0 &&
		    k8s_obj_str(pod, "spec.nodeName") == NULL) {
			pod = json_incref(pod);
			json_object_del(H.api, key);
			h_pod_event(pod, K8S_WATCH_DELETED);
			json_decref(pod);
		} else if (strcmp(w, "delete") == 0) {
			h_timestamp(ts, sizeof(ts), time(NULL) + 30);
			json_object_set_new(json_object_get(pod, "metadata"),
			    "deletionTimestamp", json_string(ts));
			json_object_set_new(json_object_get(pod, "metadata"),
			    "deletionGracePeriodSeconds", json_integer(30));
			h_pod_event(pod, K8S_WATCH_MODIFIED);
		} else if (strcmp(w, "fail") == 0) {
			json_object_set_new(json_object_get(pod, "status"),
			    "phase", json_string("Failed"));
			h_pod_event(pod, K8S_WATCH_MODIFIED);
		}
	}
}

/* --- The bridge -------------------------------------------------------- */

/* A bridge starts: informers list, then it recovers (adopts jobs). */
static void
h_bridge_start(void)
{
	const char *k;
	json_t	   *v;
	int	    kind;

	H.r = reconcile_new(&H.conf, NULL, NULL);
	H.r->writepool = writepool_new(NULL, NULL, 0, NULL, NULL, 0);
	drive_start(H.r);
	H.r->eventer = eventer_new(NULL, NULL, BRIDGE_SCHEDULER_NAME, "test");
	h_obj_msg(MSG_NAMESPACE, K8S_WATCH_ADDED,
	    json_pack("{s:s, s:s, "
		      "s:{s:s, s:{s:s}}}",
		"apiVersion", "v1", "kind", "Namespace", "metadata", "name", NS,
		"labels", BRIDGE_NS_LABEL, BRIDGE_NS_LABEL_VALUE));
	/* Nodes as the informer sends them: their records. */
	json_object_foreach (H.nodes, k, v)
		h_obj_msg(MSG_NODE, K8S_WATCH_ADDED, noderec_dup(v));
	json_object_foreach (H.api, k, v)
		h_pod_event(v, K8S_WATCH_ADDED);
	for (kind = MSG_POD; kind <= MSG_LWS; kind++)
		h_obj_msg((enum msg_kind)kind, K8S_WATCH_SYNCED, NULL);
	poll_recover(H.r);
	ck_assert_int_eq(H.r->recovered, 1);
	drive_end_deliver(H.r);
	bind_flush_writes(H.r);
}

/* The bridge stops, in the daemon's own order. */
static void
h_bridge_stop(void)
{
	/* As the daemon stops: the thread's last step, then main's. */
	drive_stop(H.r);
	reconcile_free(H.r);
	H.r = NULL;
}

static void
h_setup(void)
{
	memset(&H, 0, sizeof(H));
	H.conf.scheduler_name = BRIDGE_SCHEDULER_NAME;
	H.conf.partition = BRIDGE_PARTITION;
	H.conf.poll_ms = 1000;
	H.conf.idle_poll_ms = 10000;
	H.conf.api_qps = 100;
	H.conf.api_burst = 100;
	H.conf.unhealthy_nodes_threshold = 0.55;
	snprintf(H.conf.install, sizeof(H.conf.install), "mine");
	H.api = json_object();
	H.dirty = json_object();
	H.nodes = json_object();
	/* Two nodes of two CPUs: a gang of three one-CPU pods spans both. */
	json_object_set_new(H.nodes, "n1", h_node_json("n1", 1));
	json_object_set_new(H.nodes, "n2", h_node_json("n2", 1));
	fake_slurm_reset();
	fake_slurm_node("n1", 2, 0);
	fake_slurm_node("n2", 2, 0);
	fake_writes_reset();
	drive_reset();
	h_bridge_start();
}

static void
h_teardown(void)
{
	if (H.r != NULL)
		h_bridge_stop();
	json_decref(H.api);
	json_decref(H.dirty);
	json_decref(H.nodes);
	fake_slurm_reset();
	fake_writes_reset();
	memset(&H, 0, sizeof(H));
}

static struct group *
h_group(void)
{
	return (map_get(H.r->groups, GKEY));
}

static int
h_state(void)
{
	struct group *g = h_group();

	return (g != NULL ? (int)g->state : GONE);
}

static void
h_poll(void)
{
	poll_slurm(H.r);
	drive_end_deliver(H.r);
	bind_flush_writes(H.r);
}

/* Time passes; the periodic sweep runs. */
static void
h_time(int64_t ms)
{
	fake_clock_advance(ms);
	sweep_groups(H.r, 0);
	drive_end_deliver(H.r);
	bind_flush_writes(H.r);
}

static void
h_submit(enum fake_submit mode)
{
	fake_slurm_submit_mode(mode);
	drive_submit_make(H.r);
	fake_slurm_submit_mode(FAKE_SUBMIT_PEND);
	drive_submit_deliver(H.r);
	bind_flush_writes(H.r);
}

static void
h_node_ready(const char *name, int ready)
{
	json_object_set_new(H.nodes, name, h_node_json(name, ready));
	h_obj_msg(MSG_NODE, K8S_WATCH_MODIFIED,
	    noderec_dup(json_object_get(H.nodes, name)));
}

/* --- Start states ------------------------------------------------------ */

enum start {
	S_NONE,		   /* no pod yet */
	S_FORMING1,	   /* 1 of 3 members */
	S_FORMING2,	   /* 2 of 3 */
	S_SUBMITTING,	   /* 3 of 3: the request waits on the thread */
	S_SUBMITTING_LOST, /* ... and a member is deleted */
	S_MADE,		   /* the job is made, its answer on its way */
	S_MADE_LOST,	   /* ... and a member is deleted */
	S_RETRY,	   /* Slurm unreachable: backing off */
	S_REFUSED,	   /* Slurm refused the job: backing off long */
	S_PENDING,	   /* the job waits in Slurm */
	S_PENDING_LOST,	   /* ... a member was deleted: job given up */
	S_CANCELLING,	   /* ... its cancel not yet made nor answered */
	S_CANCEL_FAILED,   /* ... and it failed (slurmctld away) */
	S_ALLOCATED,	   /* allocated; the binds are on their way */
	S_BIND_FAILED,	   /* ... and failed (500) */
	S_BOUND,	   /* all bound, the watch has shown it */
	S_BOUND_NOWATCH,   /* all bound, the watch has not shown it */
	S_BOUND_LOST1,	   /* bound, then a member was deleted */
	S_ENDED,	   /* Slurm ended the job (NODE_FAIL) */
	S_NOTREADY,	   /* node n1 went NotReady: the gang failed */
	S_PREEMPTED,	   /* bound, then preempted (GraceTime 30 s) */
	S_SUSPENDED	   /* bound, then suspended */
};

static const char *const start_names[] = { "none", "forming 1/3", "forming 2/3",
	"submitting", "submitting, member lost", "made", "made, member lost",
	"retry", "refused", "pending", "pending, member lost", "cancelling",
	"cancel failed", "allocated", "bind failed", "bound",
	"bound, not watched", "bound, member lost", "ended", "node NotReady",
	"preempted", "suspended" };
_Static_assert(sizeof(start_names) / sizeof(start_names[0]) == S_SUSPENDED + 1,
    "a name per start state");

static void
h_expect_state(int want, const char *where)
{
	ck_assert_msg(h_state() == want, "%s: group state %d, want %d", where,
	    h_state(), want);
}

/* Drives the gang to a start state through real events. */
/* The end thread makes its requests and answers (fail: slurmctld away). */
static void
h_ends(int fail)
{
	fake_slurm_down(fail);
	drive_end_lazy(0);
	drive_end_hold(0);
	drive_end_deliver(H.r);
	fake_slurm_down(0);
	bind_flush_writes(H.r);
}

static void
h_reach(enum start s)
{
	int i;

	switch (s) {
	case S_NONE:
		return;
	case S_FORMING1:
		h_add(0);
		h_expect_state(G_WAITING, "forming 1/3");
		return;
	case S_FORMING2:
		h_reach(S_FORMING1);
		h_add(1);
		h_expect_state(G_WAITING, "forming 2/3");
		return;
	case S_SUBMITTING:
		h_reach(S_FORMING2);
		h_writes_settle();
		h_add(2);
		h_expect_state(G_SUBMITTING, "submitting");
		return;
	case S_SUBMITTING_LOST:
		h_reach(S_SUBMITTING);
		h_delete(2);
		return;
	case S_MADE:
		h_reach(S_SUBMITTING);
		drive_submit_make(H.r);
		ck_assert_uint_ne(fake_slurm_last_job(), 0);
		return;
	case S_MADE_LOST:
		h_reach(S_MADE);
		h_delete(2);
		return;
	case S_RETRY:
	case S_REFUSED:
		h_reach(S_SUBMITTING);
		h_submit(s == S_RETRY ? FAKE_SUBMIT_FAIL : FAKE_SUBMIT_REFUSE);
		h_writes_settle();
		h_expect_state(G_WAITING, start_names[s]);
		return;
	case S_PENDING:
		h_reach(S_SUBMITTING);
		h_submit(FAKE_SUBMIT_PEND);
		h_writes_settle();
		h_poll();
		h_writes_settle();
		h_expect_state(G_PENDING, "pending");
		return;
	case S_PENDING_LOST:
		h_reach(S_PENDING);
		h_delete(0);
		h_expect_state(G_WAITING, "pending, member lost");
		return;
	case S_CANCELLING:
		h_reach(S_PENDING);
		drive_end_lazy(1);
		drive_end_hold(1);
		h_delete(0);
		h_expect_state(G_PENDING, "cancelling");
		ck_assert_uint_eq(drive_end_waiting(H.r, NULL), 1);
		return;
	case S_CANCEL_FAILED:
		h_reach(S_CANCELLING);
		h_ends(1);
		h_expect_state(G_PENDING, "cancel failed");
		return;
	case S_ALLOCATED:
		h_reach(S_PENDING);
		ck_assert_int_eq(fake_slurm_start(fake_slurm_last_job(), NULL),
		    0);
		h_poll();
		h_expect_state(G_ALLOCATED, "allocated");
		ck_assert_uint_eq(fake_writes_waiting(H.r->writepool),
		    GANG_SIZE);
		return;
	case S_BIND_FAILED:
		h_reach(S_ALLOCATED);
		fake_writes_answer(H.r->writepool, H.r, 500, NULL, NULL);
		bind_flush_writes(H.r);
		h_expect_state(G_ALLOCATED, "bind failed");
		return;
	case S_BOUND:
	case S_BOUND_NOWATCH:
		h_reach(S_ALLOCATED);
		for (i = 0; i < 4 && fake_writes_waiting(H.r->writepool) > 0;
		     i++) {
			fake_writes_answer(H.r->writepool, H.r, 0, h_landed,
			    NULL);
			bind_flush_writes(H.r);
		}
		if (s == S_BOUND)
			h_watch();
		h_expect_state(G_BOUND, start_names[s]);
		return;
	case S_BOUND_LOST1:
		h_reach(S_BOUND);
		h_delete(0);
		h_expect_state(G_BOUND, "bound, member lost");
		return;
	case S_ENDED:
		h_reach(S_BOUND);
		fake_slurm_end(fake_slurm_last_job(), "NODE_FAIL", NULL);
		h_poll();
		h_expect_state(G_ENDED, "ended");
		return;
	case S_NOTREADY:
		h_reach(S_BOUND);
		h_node_ready("n1", 0);
		return;
	case S_PREEMPTED:
	case S_SUSPENDED:
		h_reach(S_BOUND);
		if (s == S_PREEMPTED)
			fake_slurm_preempt(fake_slurm_last_job(), 30);
		else
			fake_slurm_suspend(fake_slurm_last_job());
		h_poll();
		h_expect_state(G_BOUND, start_names[s]);
		return;
	}
}

/* --- Steps ------------------------------------------------------------- */

enum step {
	E_ADD,		     /* pod GANG-arg is created */
	E_DELETE,	     /* pod GANG-arg is gone */
	E_DELETE_ALL,	     /* every member is gone */
	E_SUBMIT_OK,	     /* the thread makes the job; it waits */
	E_SUBMIT_ALLOC,	     /* ... it is allocated at once */
	E_SUBMIT_FAIL,	     /* ... slurmctld unreachable */
	E_DELIVER,	     /* the answer of a made job arrives */
	E_WRITES,	     /* the pod writes land (and their watch) */
	E_WRITES_FAIL,	     /* ... fail with 500 */
	E_POLL_PEND,	     /* poll: the job waits, reason sarg, start
				in arg s (0: not planned) */
	E_POLL_START,	     /* poll: the job runs */
	E_POLL_END,	     /* poll: the job ended, state sarg */
	E_TIME,		     /* arg ms pass; the sweep runs */
	E_NOTREADY,	     /* node sarg goes NotReady */
	E_APISERVER,	     /* the API server acts on our requests */
	E_RESTART,	     /* the bridge restarts */
	E_RESTART_PURGED,    /* ... and Slurm forgot the job meanwhile */
	E_RESTART_ENDED,     /* ... the job ended (sarg) meanwhile */
	E_RESTART_PODS_GONE, /* ... the pods went meanwhile */
	E_PODS_END,	     /* every member ends with phase sarg; member 0
				with exit code arg */
	E_POLL_PREEMPT,	     /* poll: Slurm preempts the job, GraceTime arg s */
	E_POLL_SUSPEND,	     /* poll: the job is suspended */
	E_POLL_REQUEUE,	     /* poll: the job is PENDING again */
	E_POLL_PURGED,	     /* the job ends and Slurm forgets it before a
				load sees it end (MinJobAge); two loads */
	E_ENDS,		     /* the end thread makes and answers its requests */
	E_ENDS_FAIL	     /* ... while slurmctld is away */
};

static const char *const step_names[] = { "add", "delete", "delete all",
	"submit ok", "submit alloc", "submit fail", "deliver", "writes",
	"writes fail", "poll pend", "poll start", "poll end", "time",
	"notready", "apiserver", "restart", "restart purged", "restart ended",
	"restart pods gone", "pods end", "poll preempt", "poll suspend",
	"poll requeue", "poll purged", "ends", "ends fail" };
_Static_assert(sizeof(step_names) / sizeof(step_names[0]) == E_ENDS_FAIL + 1,
    "a name per step");

static void
h_step(enum step e, int arg, const char *sarg)
{
	uint32_t job = fake_slurm_last_job();

	switch (e) {
	case E_ADD:
		h_add(arg);
		break;
	case E_DELETE:
		h_delete(arg);
		break;
	case E_DELETE_ALL:
		h_delete_all();
		break;
	case E_SUBMIT_OK:
		h_submit(FAKE_SUBMIT_PEND);
		break;
	case E_SUBMIT_ALLOC:
		h_submit(FAKE_SUBMIT_ALLOCATE);
		break;
	case E_SUBMIT_FAIL:
		h_submit(FAKE_SUBMIT_FAIL);
		break;
	case E_DELIVER:
		drive_submit_deliver(H.r);
		bind_flush_writes(H.r);
		break;
	case E_WRITES:
		h_writes_settle();
		break;
	case E_WRITES_FAIL:
		fake_writes_answer(H.r->writepool, H.r, 500, NULL, NULL);
		bind_flush_writes(H.r);
		break;
	case E_POLL_PEND:
		fake_slurm_pend(job, sarg, arg);
		h_poll();
		break;
	case E_POLL_START:
		ck_assert_int_eq(fake_slurm_start(job, NULL), 0);
		h_poll();
		break;
	case E_POLL_END:
		fake_slurm_end(job, sarg, NULL);
		h_poll();
		break;
	case E_TIME:
		h_time(arg);
		break;
	case E_NOTREADY:
		h_node_ready(sarg, 0);
		break;
	case E_APISERVER:
		h_apiserver();
		break;
	case E_RESTART:
	case E_RESTART_PURGED:
	case E_RESTART_ENDED:
	case E_RESTART_PODS_GONE:
		h_bridge_stop();
		if (e == E_RESTART_PURGED) {
			fake_slurm_end(job, "COMPLETED", NULL);
			fake_slurm_purge(job);
		} else if (e == E_RESTART_ENDED)
			fake_slurm_end(job, sarg, NULL);
		else if (e == E_RESTART_PODS_GONE) {
			json_decref(H.api);
			H.api = json_object();
		}
		h_bridge_start();
		break;
	case E_PODS_END:
		h_pods_end(sarg, arg);
		break;
	case E_POLL_PREEMPT:
		fake_slurm_preempt(job, arg);
		h_poll();
		break;
	case E_ENDS:
	case E_ENDS_FAIL:
		h_ends(e == E_ENDS_FAIL);
		break;
	case E_POLL_SUSPEND:
		fake_slurm_suspend(job);
		h_poll();
		break;
	case E_POLL_REQUEUE:
		fake_slurm_requeue(job);
		h_poll();
		break;
	case E_POLL_PURGED:
		fake_slurm_end(job, sarg, NULL);
		fake_slurm_purge(job);
		h_poll();
		h_poll();
		break;
	}
}

/* --- The table --------------------------------------------------------- */

/* What the bridge did, counted from the start. */
struct counts {
	int asks;    /* allocation requests to the submit thread */
	int submits; /* sctl_submit */
	int cancels; /* jobs asked to end */
	int binds;
	int conds; /* PodScheduled messages */
	int deletes;
	int fails;     /* pods set Failed */
	int unlabels;  /* job id labels taken off */
	int completes; /* jobs ended as their pods did (sctl_complete) */
};

static void
h_counts(struct counts *c)
{
	const struct fake_slurm_counts *s = fake_slurm_counts();

	c->asks = drive_submit_asked();
	c->submits = s->submits;
	c->cancels = s->cancels;
	c->binds = fake_writes_count(FW_BIND);
	c->conds = fake_writes_count(FW_COND);
	c->deletes = fake_writes_count(FW_DELETE);
	c->fails = fake_writes_count(FW_FAIL);
	c->unlabels = fake_writes_count(FW_UNLABEL);
	c->completes = s->completes;
}

struct row {
	const char   *name; /* unique: GROUP_ROW=NAME runs this row alone */
	enum start    start;
	enum step     step;
	int	      arg;
	const char   *sarg;
	int	      state;	/* G_*, or GONE */
	struct counts want;	/* what the event alone made */
	const char   *note;	/* in a message or Event it made */
	int	      labelled; /* --jobid-label */
};

/*
 * A row: the gang is driven to .start through real events (h_reach), then
 * .step happens (h_step, with .arg and .sarg); the group is then in .state
 * and .want counts what the step alone made (a count left out is 0), and a
 * message or Event says .note.  The name is the start's and the step's;
 * copy a row and change what differs.
 */
static const struct row rows[] = {
	/* Forming: members arrive; the gang waits for its size. */
	{ .name = "none: add",
	    .start = S_NONE,
	    .step = E_ADD,
	    .state = G_WAITING,
	    .want = { .conds = 1 },
	    .note = "waiting for gang train: 1 of 3" },
	/* train-0's first message is still on its way: the new one waits. */
	{ .name = "forming 1/3: add 1",
	    .start = S_FORMING1,
	    .step = E_ADD,
	    .arg = 1,
	    .state = G_WAITING,
	    .want = { .conds = 1 },
	    .note = "2 of 3 pods present" },
	{ .name = "forming 2/3: add 2",
	    .start = S_FORMING2,
	    .step = E_ADD,
	    .arg = 2,
	    .state = G_SUBMITTING,
	    .want = { .asks = 1 } },
	{ .name = "submitting: submit ok",
	    .start = S_SUBMITTING,
	    .step = E_SUBMIT_OK,
	    .state = G_PENDING,
	    .want = { .submits = 1 },
	    .note = "submitted Slurm job 100 for the gang" },
	{ .name = "submitting: submit alloc",
	    .start = S_SUBMITTING,
	    .step = E_SUBMIT_ALLOC,
	    .state = G_ALLOCATED,
	    .want = { .submits = 1, .binds = 3 } },
	/* Partial: fewer members than min-member. */
	{ .name = "forming 2/3: delete",
	    .start = S_FORMING2,
	    .step = E_DELETE,
	    .state = G_WAITING,
	    .want = { 0 } },
	{ .name = "forming 1/3: delete",
	    .start = S_FORMING1,
	    .step = E_DELETE,
	    .state = GONE,
	    .want = { 0 } },
	{ .name = "submitting: delete 2",
	    .start = S_SUBMITTING,
	    .step = E_DELETE,
	    .arg = 2,
	    .state = G_SUBMITTING,
	    .want = { 0 } },
	{ .name = "submitting, member lost: submit ok",
	    .start = S_SUBMITTING_LOST,
	    .step = E_SUBMIT_OK,
	    .state = G_WAITING,
	    .want = { 0 } },
	{ .name = "made: delete 2",
	    .start = S_MADE,
	    .step = E_DELETE,
	    .arg = 2,
	    .state = G_SUBMITTING,
	    .want = { 0 } },
	{ .name = "made, member lost: deliver",
	    .start = S_MADE_LOST,
	    .step = E_DELIVER,
	    .state = G_WAITING,
	    .want = { .cancels = 1 } },
	/*
	 * A pending gang that lost a member gives its job up on the end
	 * thread; once Slurm confirmed, the members left say what they wait
	 * for.  Until then, no second job is made, and a start of the old one
	 * binds nothing.
	 */
	{ .name = "pending: delete",
	    .start = S_PENDING,
	    .step = E_DELETE,
	    .state = G_WAITING,
	    .want = { .cancels = 1, .conds = 2 },
	    .note = "2 of 3 pods present" },
	{ .name = "pending, member lost: time",
	    .start = S_PENDING_LOST,
	    .step = E_TIME,
	    .state = G_WAITING,
	    .want = { 0 } },
	{ .name = "cancelling: add",
	    .start = S_CANCELLING,
	    .step = E_ADD,
	    .state = G_PENDING,
	    .want = { 0 } },
	{ .name = "cancelling: poll start",
	    .start = S_CANCELLING,
	    .step = E_POLL_START,
	    .state = G_PENDING,
	    .want = { 0 } },
	{ .name = "cancelling: ends",
	    .start = S_CANCELLING,
	    .step = E_ENDS,
	    .state = G_WAITING,
	    .want = { .cancels = 1, .conds = 2 },
	    .note = "2 of 3 pods present" },
	/* ... a restart drops the ask: recovery finds the gang short. */
	{ .name = "cancelling: restart",
	    .start = S_CANCELLING,
	    .step = E_RESTART,
	    .state = G_WAITING,
	    .want = { .cancels = 1, .conds = 2 },
	    .note = "2 of 3 pods present" },
	/* A failed cancel is asked again at the next poll; a start binds none. */
	{ .name = "cancel failed: poll pend Priority",
	    .start = S_CANCEL_FAILED,
	    .step = E_POLL_PEND,
	    .sarg = "Priority",
	    .state = G_WAITING,
	    .want = { .cancels = 1, .conds = 2 },
	    .note = "2 of 3 pods present" },
	{ .name = "cancel failed: poll start",
	    .start = S_CANCEL_FAILED,
	    .step = E_POLL_START,
	    .state = G_WAITING,
	    .want = { .cancels = 1, .conds = 2 },
	    .note = "2 of 3 pods present" },
	/* Submit failures and their backoff. */
	{ .name = "submitting: submit fail",
	    .start = S_SUBMITTING,
	    .step = E_SUBMIT_FAIL,
	    .state = G_WAITING,
	    .want = { .submits = 1, .conds = 3 },
	    .note = "Slurm refused the job" },
	{ .name = "retry: time 1000",
	    .start = S_RETRY,
	    .step = E_TIME,
	    .arg = 1000,
	    .state = G_WAITING,
	    .want = { 0 } },
	{ .name = "retry: time 2500",
	    .start = S_RETRY,
	    .step = E_TIME,
	    .arg = 2500,
	    .state = G_SUBMITTING,
	    .want = { .asks = 1 } },
	{ .name = "refused: time 2500",
	    .start = S_REFUSED,
	    .step = E_TIME,
	    .arg = 2500,
	    .state = G_WAITING,
	    .want = { 0 } },
	{ .name = "refused: time 61000",
	    .start = S_REFUSED,
	    .step = E_TIME,
	    .arg = 61000,
	    .state = G_SUBMITTING,
	    .want = { .asks = 1 } },
	/* Timeout: time alone ends nothing; Slurm's time limit does. */
	{ .name = "forming 2/3: time 3600000",
	    .start = S_FORMING2,
	    .step = E_TIME,
	    .arg = 3600000,
	    .state = G_WAITING,
	    .want = { 0 } },
	{ .name = "pending: time 3600000",
	    .start = S_PENDING,
	    .step = E_TIME,
	    .arg = 3600000,
	    .state = G_PENDING,
	    .want = { 0 } },
	{ .name = "submitting: time 3600000",
	    .start = S_SUBMITTING,
	    .step = E_TIME,
	    .arg = 3600000,
	    .state = G_SUBMITTING,
	    .want = { 0 } },
	{ .name = "bound: poll end TIMEOUT",
	    .start = S_BOUND,
	    .step = E_POLL_END,
	    .sarg = "TIMEOUT",
	    .state = G_ENDED,
	    .want = { .deletes = 3 },
	    .note = "ended: TIMEOUT" },
	/* Pending in Slurm. */
	{ .name = "pending: poll pend Resources",
	    .start = S_PENDING,
	    .step = E_POLL_PEND,
	    .sarg = "Resources",
	    .state = G_PENDING,
	    .want = { .conds = 3 },
	    .note = "(Reason=Resources)" },
	/* The backfill plans a start: the message says when, to the minute. */
	{ .name = "pending: poll pend 3600 Resources",
	    .start = S_PENDING,
	    .step = E_POLL_PEND,
	    .arg = 3600,
	    .sarg = "Resources",
	    .state = G_PENDING,
	    .want = { .conds = 3 },
	    .note = "(Reason=Resources; expected start 20" },
	{ .name = "pending: poll start",
	    .start = S_PENDING,
	    .step = E_POLL_START,
	    .state = G_ALLOCATED,
	    .want = { .binds = 3 } },
	{ .name = "pending: poll end CANCELLED",
	    .start = S_PENDING,
	    .step = E_POLL_END,
	    .sarg = "CANCELLED",
	    .state = G_ENDED,
	    .want = { .deletes = 3 },
	    .note = "ended: CANCELLED" },
	/* Allocated: binds on their way. */
	{ .name = "allocated: writes",
	    .start = S_ALLOCATED,
	    .step = E_WRITES,
	    .state = G_BOUND,
	    .want = { 0 },
	    .note = "Slurm allocated node n2 to job 100" },
	{ .name = "allocated: writes fail",
	    .start = S_ALLOCATED,
	    .step = E_WRITES_FAIL,
	    .state = G_ALLOCATED,
	    .want = { 0 } },
	{ .name = "bind failed: time 1000",
	    .start = S_BIND_FAILED,
	    .step = E_TIME,
	    .arg = 1000,
	    .state = G_ALLOCATED,
	    .want = { 0 } },
	/* Long after the backoff: bound once. */
	{ .name = "bind failed: time 8500",
	    .start = S_BIND_FAILED,
	    .step = E_TIME,
	    .arg = 8500,
	    .state = G_ALLOCATED,
	    .want = { .binds = 3 } },
	/* A member deleted after allocation. */
	{ .name = "allocated: delete",
	    .start = S_ALLOCATED,
	    .step = E_DELETE,
	    .state = G_ALLOCATED,
	    .want = { 0 } },
	{ .name = "bound: delete",
	    .start = S_BOUND,
	    .step = E_DELETE,
	    .state = G_BOUND,
	    .want = { 0 } },
	{ .name = "bound: delete all",
	    .start = S_BOUND,
	    .step = E_DELETE_ALL,
	    .state = GONE,
	    .want = { .cancels = 1 } },
	{ .name = "bound, member lost: add 3",
	    .start = S_BOUND_LOST1,
	    .step = E_ADD,
	    .arg = 3,
	    .state = G_ALLOCATED,
	    .want = { .binds = 1 } },
	/* Node failure: Slurm's NODE_FAIL, or Kubernetes' NotReady. */
	{ .name = "bound: poll end NODE_FAIL",
	    .start = S_BOUND,
	    .step = E_POLL_END,
	    .sarg = "NODE_FAIL",
	    .state = G_ENDED,
	    .want = { .deletes = 3 },
	    .note = "ended: NODE_FAIL" },
	{ .name = "ended: delete all",
	    .start = S_ENDED,
	    .step = E_DELETE_ALL,
	    .state = GONE,
	    .want = { 0 } },
	{ .name = "bound: notready n1",
	    .start = S_BOUND,
	    .step = E_NOTREADY,
	    .sarg = "n1",
	    .state = G_BOUND,
	    .want = { .cancels = 1, .fails = 3 },
	    .note = "node n1 is NotReady" },
	{ .name = "node NotReady: time",
	    .start = S_NOTREADY,
	    .step = E_TIME,
	    .state = G_WAITING,
	    .want = { 0 } },
	/* Restart: recovery adopts what Slurm has. */
	{ .name = "bound: restart",
	    .start = S_BOUND,
	    .step = E_RESTART,
	    .state = G_BOUND,
	    .want = { 0 } },
	{ .name = "pending: restart",
	    .start = S_PENDING,
	    .step = E_RESTART,
	    .state = G_PENDING,
	    .want = { .conds = 3 },
	    .note = "waiting for Slurm job 100" },
	{ .name = "made: restart",
	    .start = S_MADE,
	    .step = E_RESTART,
	    .state = G_PENDING,
	    .want = { .conds = 3 },
	    .note = "waiting for Slurm job 100" },
	{ .name = "submitting: restart",
	    .start = S_SUBMITTING,
	    .step = E_RESTART,
	    .state = G_SUBMITTING,
	    .want = { .asks = 1 } },
	{ .name = "allocated: restart",
	    .start = S_ALLOCATED,
	    .step = E_RESTART,
	    .state = G_ALLOCATED,
	    .want = { .binds = 3 } },
	{ .name = "pending: restart pods gone",
	    .start = S_PENDING,
	    .step = E_RESTART_PODS_GONE,
	    .state = GONE,
	    .want = { .cancels = 1 } },
	/*
	 * --jobid-label: members carry the job id label and our finalizer
	 * from submission on, and a restart finds the job by the label.
	 */
	{ .name = "pending: delete (labelled)",
	    .start = S_PENDING,
	    .step = E_DELETE,
	    .state = G_WAITING,
	    .want = { .cancels = 1, .conds = 2, .unlabels = 2 },
	    .note = "2 of 3 pods present",
	    .labelled = 1 },
	{ .name = "pending: poll start (labelled)",
	    .start = S_PENDING,
	    .step = E_POLL_START,
	    .state = G_ALLOCATED,
	    .want = { 0 },
	    .labelled = 1 },
	{ .name = "allocated: writes (labelled)",
	    .start = S_ALLOCATED,
	    .step = E_WRITES,
	    .state = G_BOUND,
	    .want = { .binds = 3 },
	    .note = "Slurm allocated node n2 to job 100",
	    .labelled = 1 },
	{ .name = "bound: restart (labelled)",
	    .start = S_BOUND,
	    .step = E_RESTART,
	    .state = G_BOUND,
	    .want = { 0 },
	    .labelled = 1 },
	{ .name = "pending: restart (labelled)",
	    .start = S_PENDING,
	    .step = E_RESTART,
	    .state = G_PENDING,
	    .want = { .conds = 3 },
	    .note = "waiting for Slurm job 100",
	    .labelled = 1 },
	/* Fixed: bind backoff: one per round of writes (was one per member). */
	{ .name = "bind failed: time 2500",
	    .start = S_BIND_FAILED,
	    .step = E_TIME,
	    .arg = 2500,
	    .state = G_ALLOCATED,
	    .want = { .binds = 3 } },
	/* Fixed: a member asked to be deleted is not asked again (del_sent). */
	{ .name = "ended: apiserver",
	    .start = S_ENDED,
	    .step = E_APISERVER,
	    .state = G_ENDED,
	    .want = { 0 } },
	/* Fixed: recovery deletes a vanished job's members once. */
	{ .name = "bound: restart purged",
	    .start = S_BOUND,
	    .step = E_RESTART_PURGED,
	    .state = G_ENDED,
	    .want = { .deletes = 3 },
	    .note = "no longer known to Slurm" },
	/* Fixed: recovery deletes the members of a job that ended while down once. */
	{ .name = "bound: restart ended NODE_FAIL",
	    .start = S_BOUND,
	    .step = E_RESTART_ENDED,
	    .sarg = "NODE_FAIL",
	    .state = G_ENDED,
	    .want = { .deletes = 3 },
	    .note = "ended: NODE_FAIL" },
	/*
	 * Slurm takes the allocation back: the members yield (DisruptionTarget,
	 * then a delete).  Preempted: Slurm ends the job after its GraceTime,
	 * never cancelled (sacct: PREEMPTED); suspended or requeued: the job is
	 * cancelled once the pods are gone.
	 */
	{ .name = "bound: poll preempt 30",
	    .start = S_BOUND,
	    .step = E_POLL_PREEMPT,
	    .arg = 30,
	    .state = G_BOUND,
	    .want = { .deletes = 3 },
	    .note = "Slurm preempted job 100" },
	{ .name = "preempted: delete all",
	    .start = S_PREEMPTED,
	    .step = E_DELETE_ALL,
	    .state = GONE,
	    .want = { 0 } },
	/* ... a restart that finds its pods gone leaves it to Slurm too. */
	{ .name = "preempted: restart pods gone",
	    .start = S_PREEMPTED,
	    .step = E_RESTART_PODS_GONE,
	    .state = GONE,
	    .want = { 0 } },
	{ .name = "preempted: poll end PREEMPTED",
	    .start = S_PREEMPTED,
	    .step = E_POLL_END,
	    .sarg = "PREEMPTED",
	    .state = G_ENDED,
	    .want = { 0 } },
	{ .name = "bound: poll end PREEMPTED",
	    .start = S_BOUND,
	    .step = E_POLL_END,
	    .sarg = "PREEMPTED",
	    .state = G_ENDED,
	    .want = { .deletes = 3 },
	    .note = "Slurm preempted job 100" },
	{ .name = "bound: poll suspend",
	    .start = S_BOUND,
	    .step = E_POLL_SUSPEND,
	    .state = G_BOUND,
	    .want = { .deletes = 3 },
	    .note = "Slurm suspended" },
	{ .name = "suspended: delete all",
	    .start = S_SUSPENDED,
	    .step = E_DELETE_ALL,
	    .state = GONE,
	    .want = { .cancels = 1 } },
	{ .name = "bound: poll requeue",
	    .start = S_BOUND,
	    .step = E_POLL_REQUEUE,
	    .state = G_BOUND,
	    .want = { .deletes = 3 },
	    .note = "Slurm requeued job 100" },
	{ .name = "allocated: poll preempt",
	    .start = S_ALLOCATED,
	    .step = E_POLL_PREEMPT,
	    .state = G_ALLOCATED,
	    .want = { .deletes = 3 },
	    .note = "Slurm preempted job 100" },
	/*
	 * Slurm forgets a job before any load saw it end (a MinJobAge
	 * shorter than the loads' gap, or loads failing longer): the bound
	 * members lost their allocation; a pending job's are placed again.
	 */
	{ .name = "bound: poll purged TIMEOUT",
	    .start = S_BOUND,
	    .step = E_POLL_PURGED,
	    .sarg = "TIMEOUT",
	    .state = G_ENDED,
	    .want = { .deletes = 3 },
	    .note = "no longer known to Slurm" },
	{ .name = "pending: poll purged CANCELLED",
	    .start = S_PENDING,
	    .step = E_POLL_PURGED,
	    .sarg = "CANCELLED",
	    .state = G_SUBMITTING,
	    .want = { .asks = 1 } },
	/* Fixed: a NotReady node fails pods whose Binding landed before their watch event. */
	{ .name = "bound, not watched: notready n1",
	    .start = S_BOUND_NOWATCH,
	    .step = E_NOTREADY,
	    .sarg = "n1",
	    .state = G_BOUND,
	    .want = { .cancels = 1, .fails = 3 },
	    .note = "node n1 is NotReady" },
};

/* Does a message or Event logged from index w / e on contain note? */
static int
h_noted(size_t w, size_t e, const char *note)
{
	json_t	   *v;
	const char *s;

	for (; w < json_array_size(fake_writes_log()); w++) {
		v = json_array_get(fake_writes_log(), w);
		s = json_string_value(json_object_get(v, "msg"));
		if (s != NULL && strstr(s, note) != NULL)
			return (1);
	}
	for (; e < json_array_size(fake_events_log()); e++) {
		v = json_array_get(fake_events_log(), e);
		s = json_string_value(json_object_get(v, "note"));
		if (s != NULL && strstr(s, note) != NULL)
			return (1);
	}
	return (0);
}

/* A group state's name, for failures. */
static const char *
h_state_name(int state)
{
	static const char *const names[] = { "waiting", "submitting", "pending",
		"allocated", "bound", "ended" };

	if (state == GONE)
		return ("gone");
	if (state < 0 || (size_t)state >= sizeof(names) / sizeof(names[0]))
		return ("?");
	return (names[state]);
}

static void
h_row(const struct row *t)
{
	struct counts a, b;
	size_t	      w0, e0;
	char	      name[200];

	snprintf(name, sizeof(name), "row \"%s\" (from %s%s, step %s %d %s)",
	    t->name, start_names[t->start], t->labelled ? ", labelled" : "",
	    step_names[t->step], t->arg, t->sarg != NULL ? t->sarg : "");
	if (t->labelled) {
		h_bridge_stop();
		H.conf.jobid_label = 1;
		h_bridge_start();
	}
	h_reach(t->start);
	h_counts(&a);
	w0 = json_array_size(fake_writes_log());
	e0 = json_array_size(fake_events_log());
	h_step(t->step, t->arg, t->sarg);
	h_counts(&b);
	ck_assert_msg(h_state() == t->state, "%s: state %s, want %s", name,
	    h_state_name(h_state()), h_state_name(t->state));
#define H_COUNT(f) \
	ck_assert_msg(b.f - a.f == t->want.f, "%s: " #f " %d, want %d", name, \
	    b.f - a.f, t->want.f)
	H_COUNT(asks);
	H_COUNT(submits);
	H_COUNT(cancels);
	H_COUNT(binds);
	H_COUNT(conds);
	H_COUNT(deletes);
	H_COUNT(fails);
	H_COUNT(unlabels);
	H_COUNT(completes);
#undef H_COUNT
	if (t->note != NULL)
		ck_assert_msg(h_noted(w0, e0, t->note),
		    "%s: nothing says "
		    "\"%s\"",
		    name, t->note);
}

/*
 * Each row, or with GROUP_ROW set only the rows whose name contains it
 * (GROUP_ROW='pending: delete' CK_RUN_CASE=rows build/check_group).
 */
START_TEST(test_gang_row)
{
	const char *only = getenv("GROUP_ROW");
	size_t	    i;

	for (i = 0; i < (size_t)_i; i++)
		ck_assert_msg(strcmp(rows[i].name, rows[_i].name) != 0,
		    "rows %zu and %d are both named \"%s\"", i, _i,
		    rows[_i].name);
	if (only != NULL && *only != '\0' &&
	    strstr(rows[_i].name, only) == NULL)
		return;
	h_row(&rows[_i]);
}
END_TEST

/*
 * A bound gang whose pods end: Slurm records the job as they ended
 * (sacct's State and ExitCode), or it is cancelled when they are deleted,
 * a force delete (gone from the API at once) included.  The end is the
 * one Slurm RPC: the job is never marked stopped (its comment is the
 * job owner's to rewrite), so whether the containers stopped is left to
 * the node epilog, which asks the node.
 */
static const struct {
	const char *phase; /* every member's, or NULL: deleted */
	int	    code;  /* member 0's exit code */
	const char *state; /* the job's, after */
	int	    completes, cancels, exit_code;
} sacct_cases[] = {
	{ "Succeeded", 0, "COMPLETED", 1, 0, 0 },
	{ "Failed", 3, "FAILED", 1, 0, 3 },
	{ NULL, 0, "CANCELLED", 0, 1, 0 },
};

START_TEST(test_gang_sacct)
{
	struct counts a, b;
	uint32_t      job;
	const char   *state;
	char	     *comment;
	int	      code, sig, admin0;

	h_reach(S_BOUND);
	job = fake_slurm_last_job();
	h_counts(&a);
	admin0 = fake_slurm_counts()->admin_updates;
	comment = xstrdup(fake_slurm_job_comment(job));
	if (sacct_cases[_i].phase != NULL)
		h_pods_end(sacct_cases[_i].phase, sacct_cases[_i].code);
	else
		h_delete_all();
	h_counts(&b);
	ck_assert_int_eq(b.completes - a.completes, sacct_cases[_i].completes);
	ck_assert_int_eq(b.cancels - a.cancels, sacct_cases[_i].cancels);
	ck_assert_int_eq(fake_slurm_counts()->admin_updates - admin0, 0);
	ck_assert_str_eq(fake_slurm_job_comment(job), comment);
	ck_assert(strstr(comment, "stopped") == NULL);
	free(comment);
	state = fake_slurm_job_state(job);
	fake_slurm_last_exit(&code, &sig);
	ck_assert_ptr_nonnull(state);
	ck_assert_str_eq(state, sacct_cases[_i].state);
	if (sacct_cases[_i].completes > 0) {
		ck_assert_int_eq(code, sacct_cases[_i].exit_code);
		ck_assert_int_eq(sig, 0);
	}
}
END_TEST

/*
 * A running pod force-deleted (grace 0: gone from the API at once while
 * the kubelet still runs its containers): the job is cancelled, and its
 * comment stays as it was, so nothing tells the node epilog the pod
 * stopped; it looks at the node.
 */
START_TEST(test_gang_force_deleted)
{
	struct counts a, b;
	json_t	     *pod;
	char	      key[128], ts[32], *comment;
	uint32_t      job;
	int	      i;

	h_reach(S_BOUND);
	job = fake_slurm_last_job();
	comment = xstrdup(fake_slurm_job_comment(job));
	h_counts(&a);
	h_timestamp(ts, sizeof(ts), time(NULL));
	for (i = 0; i < 3; i++) {
		pod = json_object_get(H.api, h_key(i, key, sizeof(key)));
		ck_assert_ptr_nonnull(pod);
		json_object_set_new(json_object_get(pod, "metadata"),
		    "deletionTimestamp", json_string(ts));
		json_object_set_new(json_object_get(pod, "metadata"),
		    "deletionGracePeriodSeconds", json_integer(0));
		h_pod_event(pod, K8S_WATCH_MODIFIED);
		h_delete(i);
	}
	h_counts(&b);
	ck_assert_int_eq(b.cancels - a.cancels, 1);
	ck_assert_str_eq(fake_slurm_job_comment(job), comment);
	free(comment);
}
END_TEST

/*
 * Loads of Slurm's jobs spaced out by their cost (a deep queue): between
 * them slurmctld is probed for its count of started jobs, one probe at a
 * time, and a start (the pending job's) brings the next load forward to
 * POLL_DUTY_CHANGED times the last load's cost; the load then sees the
 * job allocated.  No start leaves the spacing as it was, and cheap loads
 * are not probed for at all.
 */
static const struct {
	int cost_ms; /* the last load's */
	int start;   /* the job starts between the two probes */
	int probed;  /* a probe is due */
} probe_cases[] = {
	{ 400, 1, 1 },
	{ 400, 0, 1 },
	{ 10, 1, 0 },
};

/*
 * Bulk cancels made in one batch (end_make over the fake Slurm): each
 * gets its own result, a refused one its error; a fence that is not
 * fresh holds all of them back.
 */
START_TEST(test_end_batch)
{
	struct ereq *es[3];
	size_t	     i;

	for (i = 0; i < 3; i++) {
		es[i] = ereq_new(NULL, 200 + (uint32_t)i);
		es[i]->bulk = 1;
	}
	fake_slurm_refuse_cancel(201);
	end_make(es, 3);
	fake_slurm_refuse_cancel(0);
	ck_assert_int_eq(es[0]->rc, 0);
	ck_assert_int_eq(es[1]->rc, -1);
	ck_assert_ptr_nonnull(strstr(es[1]->err, "job 201 not ended"));
	ck_assert_ptr_nonnull(strstr(es[1]->err, "permission denied"));
	ck_assert_int_eq(es[2]->rc, 0);
	for (i = 0; i < 3; i++)
		ereq_free(es[i]);
}
END_TEST

/*
 * A job made for the members in their order shares their list; a member
 * that leaves the group leaves the job's list as it was (groups.c alone:
 * what the group then does is the table's).
 */
START_TEST(test_job_list)
{
	const struct strv *jl;
	struct group	  *g;
	char		   key[128];
	uint32_t	   n;

	h_reach(S_PENDING);
	g = h_group();
	n = g->members.n;
	ck_assert_uint_ge(n, 2);
	jl = groups_job_list(g);
	ck_assert_ptr_eq(jl, &g->members);
	ck_assert_uint_eq(g->job->job_pods.n, 0);
	h_key(1, key, sizeof(key));
	ck_assert_int_ne(strv_find(jl, key), -1);
	groups_member_remove(g, key);
	ck_assert_uint_eq(g->members.n, n - 1);
	jl = groups_job_list(g);
	ck_assert_ptr_eq(jl, &g->job->job_pods);
	ck_assert_uint_eq(jl->n, n);
	ck_assert_int_ne(strv_find(jl, key), -1);
	ck_assert_int_eq(strv_find(&g->members, key), -1);
}
END_TEST

/* A bulk cancel whose job a poll sees start goes to the front. */
START_TEST(test_cancel_promoted)
{
	size_t bulk;

	h_reach(S_CANCELLING);
	ck_assert_uint_eq(drive_end_waiting(H.r, &bulk), 1);
	ck_assert_uint_eq(bulk, 1);
	h_step(E_POLL_PEND, 0, "Priority");
	ck_assert_uint_eq(drive_end_waiting(H.r, &bulk), 1);
	ck_assert_uint_eq(bulk, 1);
	h_step(E_POLL_START, 0, NULL);
	/* Now among the ends that free nodes, made first. */
	ck_assert_uint_eq(drive_end_waiting(H.r, &bulk), 1);
	ck_assert_uint_eq(bulk, 0);
	ck_assert_int_eq(h_state(), G_PENDING);
}
END_TEST

/*
 * The pods of a pending gang ask for another account: the submit thread
 * changes the job (sctl_update_pending), and makes no new one.
 */
START_TEST(test_pending_update)
{
	struct counts a, b;
	json_t	     *pod;
	uint32_t      job;
	char	      key[128];
	int	      i, updates;

	h_reach(S_PENDING);
	job = fake_slurm_last_job();
	updates = fake_slurm_counts()->updates;
	h_counts(&a);
	for (i = 0; i < GANG_SIZE; i++) {
		pod = json_object_get(H.api, h_key(i, key, sizeof(key)));
		json_object_set_new(k8s_obj_get(pod, "metadata.annotations"),
		    ANN_PREFIX "account", json_string("physics"));
		h_pod_event(pod, K8S_WATCH_MODIFIED);
	}
	ck_assert_uint_eq(drive_submit_waiting(H.r), 1);
	drive_submit_make(H.r);
	ck_assert_uint_eq(drive_submit_deliver(H.r), 1);
	h_counts(&b);
	ck_assert_int_eq(fake_slurm_counts()->updates, updates + 1);
	ck_assert_str_eq(fake_slurm_job_account(job), "physics");
	ck_assert_int_eq(b.submits - a.submits, 0);
	ck_assert_int_eq(b.cancels - a.cancels, 0);
	ck_assert_int_eq(h_state(), G_PENDING);
	ck_assert_uint_eq(h_group()->jobid, job);
}
END_TEST

START_TEST(test_poll_probe)
{
	unsigned long long h0 = atomic_load(&bstats.polls_hastened);
	int64_t		   now, spaced;

	h_reach(S_PENDING);
	now = now_ms();
	H.r->poll_cost_ms = probe_cases[_i].cost_ms;
	H.r->last_poll = now;
	H.r->next_probe = now;
	H.r->next_poll = now + H.conf.poll_ms;
	if (H.r->next_poll < poll_floor(H.r))
		H.r->next_poll = poll_floor(H.r);
	spaced = H.r->next_poll;
	if (!probe_cases[_i].probed) {
		ck_assert(poll_probe_next(H.r) == INT64_MAX);
		return;
	}
	ck_assert(spaced == now + POLL_DUTY * probe_cases[_i].cost_ms);
	ck_assert(poll_probe_next(H.r) <= now);
	poll_probe(H.r);
	ck_assert(poll_probe_next(H.r) == INT64_MAX); /* one at a time */
	/* The first answer is what the next ones are held against. */
	ck_assert_int_eq(drive_probe_deliver(H.r), 0);
	ck_assert(H.r->next_poll == spaced);
	ck_assert(poll_probe_next(H.r) > now);
	if (probe_cases[_i].start)
		ck_assert_int_eq(fake_slurm_start(fake_slurm_last_job(), NULL),
		    0);
	poll_probe(H.r);
	ck_assert_int_eq(drive_probe_deliver(H.r), 0);
	if (!probe_cases[_i].start) {
		ck_assert(H.r->next_poll == spaced);
		ck_assert_uint_eq(atomic_load(&bstats.polls_hastened), h0);
		return;
	}
	ck_assert(H.r->next_poll ==
	    H.r->last_poll + POLL_DUTY_CHANGED * probe_cases[_i].cost_ms);
	ck_assert_uint_eq(atomic_load(&bstats.polls_hastened), h0 + 1);
	/* The start is known: no probe until the load is asked. */
	ck_assert(poll_probe_next(H.r) == INT64_MAX);
	poll_ask(H.r);
	ck_assert_int_eq(H.r->starts_seen, 0);
	ck_assert_int_eq(drive_poll_make(H.r), 1);
	ck_assert_int_eq(drive_poll_deliver(H.r), 0);
	ck_assert_int_eq(h_state(), G_ALLOCATED);
}
END_TEST

/* From counts a to b, the bridge did nothing more to Slurm or the pods. */
static void
h_nothing_more(const struct counts *a, const struct counts *b)
{
	ck_assert_int_eq(b->asks, a->asks);
	ck_assert_int_eq(b->submits, a->submits);
	ck_assert_int_eq(b->cancels, a->cancels);
	ck_assert_int_eq(b->completes, a->completes);
	ck_assert_int_eq(b->deletes, a->deletes);
	ck_assert_int_eq(b->fails, a->fails);
}

/*
 * The poll thread loads while the reconcile thread goes on: a load made
 * while the gang ran is read after its pods ended (the job completed) or
 * were deleted (the job cancelled, the group gone with its members).  It
 * is older than what the bridge knows: the job it shows running ends
 * nothing twice, is no orphan, deletes and submits nothing; the next
 * load, asked for once this one is read, sees the job ended.  A load
 * asked for while one is out is not asked again.
 */
static const struct {
	const char *phase; /* every member's, or NULL: deleted */
	int	    completes, cancels, gone;
} stale_cases[] = {
	{ "Succeeded", 1, 0, 0 },
	{ NULL, 0, 1, 1 },
};

/*
 * Asked again while a load is on its way, the reconcile thread asks the
 * poll thread for nothing: one load out at a time.
 */
static void
h_poll_asked_again(void)
{
	int polls = fake_slurm_counts()->polls;

	poll_ask(H.r);
	while (poller_step(H.r->poller) == 1)
		;
	ck_assert_int_eq(fake_slurm_counts()->polls, polls);
}

START_TEST(test_gang_stale_load)
{
	struct counts a, b;

	h_reach(S_BOUND);
	H.r->slurm_since = 0; /* a load of every job, as now and then */
	poll_ask(H.r);
	ck_assert_int_eq(drive_poll_make(H.r), 1); /* the job RUNNING */
	h_poll_asked_again();
	h_counts(&a);
	if (stale_cases[_i].phase != NULL)
		h_pods_end(stale_cases[_i].phase, 0);
	else
		h_delete_all();
	h_counts(&b);
	ck_assert_int_eq(b.completes - a.completes, stale_cases[_i].completes);
	ck_assert_int_eq(b.cancels - a.cancels, stale_cases[_i].cancels);
	ck_assert_int_eq(h_state() == GONE, stale_cases[_i].gone);
	ck_assert_int_eq(drive_poll_deliver(H.r), 0);
	bind_flush_writes(H.r);
	h_counts(&a);
	h_nothing_more(&b, &a);
	poll_ask(H.r);
	ck_assert_int_eq(drive_poll_make(H.r), 1); /* the job, ended */
	ck_assert_int_eq(drive_poll_deliver(H.r), 0);
	bind_flush_writes(H.r);
	h_counts(&b);
	h_nothing_more(&a, &b);
}
END_TEST

/*
 * Slurm ends the job (a time limit) of pods that ask for a long grace
 * period: each is deleted with maxEndGraceSeconds, not its own, so a
 * tenant's terminationGracePeriodSeconds cannot hold the node past the
 * node epilog's wait; a pod asking for less keeps its own.
 */
START_TEST(test_gang_end_grace_capped)
{
	json_t	*pod, *w;
	char	 key[128], uid[160];
	size_t	 i;
	int	 n = 0, capped = 0;
	uint32_t job;

	H.conf.end_grace_max_s = 30;
	h_reach(S_BOUND);
	for (i = 0; i < 3; i++) {
		pod = json_object_get(H.api, h_key((int)i, key, sizeof(key)));
		json_object_set_new(json_object_get(pod, "spec"),
		    "terminationGracePeriodSeconds",
		    json_integer(i == 0 ? 10 : 600));
		h_pod_event(pod, K8S_WATCH_MODIFIED);
	}
	job = fake_slurm_last_job();
	fake_slurm_end(job, "TIMEOUT", NULL);
	h_poll();
	json_array_foreach (fake_writes_log(), i, w) {
		if (strcmp(json_string_value(json_object_get(w, "w")),
			"delete") != 0)
			continue;
		n++;
		/* Every delete names the pod by UID (a new db-0 survives). */
		snprintf(uid, sizeof(uid), "uid-%s",
		    strchr(json_string_value(json_object_get(w, "pod")), '/') +
			1);
		ck_assert_str_eq(json_string_value(json_object_get(w, "uid")),
		    uid);
		if (json_integer_value(json_object_get(w, "grace")) == 30)
			capped++;
		else
			ck_assert_ptr_null(json_object_get(w, "grace"));
	}
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(capped, 2);
}
END_TEST

/*
 * Who holds a shared claim's devices: what the bridge noted when it
 * allocated the claim, else the claim's annotations only when they name a
 * job of the claim's own namespace (or one not known yet).  A tenant who
 * points its claim at another namespace's job does not keep that job
 * allocated; one who strips the annotations does not end the holder early.
 */
static json_t *
h_shared_claim(const char *ns, const char *uid, const char *job)
{
	return (json_pack("{s:{s:s, s:s, s:s, s:{s:s, s:s}}, s:{s:{}}}",
	    "metadata", "name", "shared", "namespace", ns, "uid", uid,
	    "annotations", ANN_SLURM_JOBID, job, ANN_SLURM_NODE, "n1", "status",
	    "allocation"));
}

START_TEST(test_claim_holder_vouched)
{
	json_t	   *claim;
	const char *snode;
	char	    job[16];
	uint32_t    held = 0;

	h_reach(S_BOUND);
	snprintf(job, sizeof(job), "%u", fake_slurm_last_job());
	/* Its own namespace's job: taken, and noted. */
	claim = h_shared_claim(NS, "claim-uid-1", job);
	ck_assert_int_eq(claims_holder(H.r, claim, &held, &snode), 0);
	ck_assert_uint_eq(held, fake_slurm_last_job());
	ck_assert_str_eq(snode, "n1");
	/* The annotations stripped: the note still says who holds it. */
	json_object_del(json_object_get(claim, "metadata"), "annotations");
	held = 0;
	ck_assert_int_eq(claims_holder(H.r, claim, &held, &snode), 0);
	ck_assert_uint_eq(held, fake_slurm_last_job());
	json_decref(claim);
	/* Another namespace's claim naming that job: not vouched for. */
	claim = h_shared_claim("tenant-b", "claim-uid-2", job);
	ck_assert_int_eq(claims_holder(H.r, claim, &held, &snode), -1);
	ck_assert_uint_eq(claims_joiners(H.r, fake_slurm_last_job(), NULL, NULL,
			      NULL),
	    0);
	json_decref(claim);
	/* A job not known yet (a restart, before adoption): taken. */
	claim = h_shared_claim("tenant-b", "claim-uid-3", "987654");
	ck_assert_int_eq(claims_holder(H.r, claim, &held, &snode), 0);
	ck_assert_uint_eq(held, 987654);
	json_decref(claim);
}
END_TEST

/*
 * Three of five nodes NotReady at once (60 %, past the 55 % threshold,
 * and more than 2): the cause is likelier the control plane than the
 * nodes, so no pod is failed for it, as Kubernetes' node lifecycle
 * controller stops evicting; once two are Ready again, the gang on the
 * node still NotReady is failed as its tolerations say.
 */
START_TEST(test_notready_disruption)
{
	struct counts a, b;
	const char   *more[] = { "n3", "n4", "n5" };
	size_t	      i;

	h_reach(S_BOUND);
	for (i = 0; i < 3; i++) {
		json_object_set_new(H.nodes, more[i], h_node_json(more[i], 1));
		h_obj_msg(MSG_NODE, K8S_WATCH_ADDED,
		    noderec_dup(json_object_get(H.nodes, more[i])));
	}
	h_counts(&a);
	h_node_ready("n3", 0);
	h_node_ready("n4", 0);
	h_node_ready("n1", 0);
	nodes_sweep(H.r);
	h_counts(&b);
	ck_assert_int_eq(atomic_load(&bstats.node_disruption), 1);
	ck_assert_int_eq(b.fails - a.fails, 0);
	ck_assert_int_eq(b.cancels - a.cancels, 0);
	ck_assert_int_eq(h_state(), G_BOUND);
	/* Said once, on each of the three nodes NotReady. */
	ck_assert_int_eq(fake_events_count("NodeDisruption"), 3);
	h_node_ready("n3", 1);
	h_node_ready("n4", 1);
	nodes_sweep(H.r);
	h_counts(&b);
	ck_assert_int_eq(atomic_load(&bstats.node_disruption), 0);
	ck_assert_int_gt(b.fails - a.fails, 0);
	ck_assert_int_eq(fake_events_count("NodeDisruption"), 3);
	ck_assert_int_eq(fake_events_count("NodeDisruptionOver"), 1);
}
END_TEST

/*
 * A tenant who owns its pending job (user-id) moves it with scontrol
 * update to a partition its namespace may not use: the next poll sees it,
 * cancels the job and says why, and the pods are submitted again as they
 * ask.  A change within the bounds is left alone.
 */
START_TEST(test_bounds_after_submit)
{
	struct counts a, b;
	const char   *cond;
	char	      key[128];
	uint32_t      job;

	h_obj_msg(MSG_NAMESPACE, K8S_WATCH_MODIFIED,
	    json_pack("{s:s, s:s, s:{s:s, s:{s:s}, s:{s:s}}}", "apiVersion",
		"v1", "kind", "Namespace", "metadata", "name", NS, "labels",
		BRIDGE_NS_LABEL, BRIDGE_NS_LABEL_VALUE, "annotations",
		ANN_ALLOWED_PARTITIONS, BRIDGE_PARTITION ",other"));
	h_reach(S_PENDING);
	job = fake_slurm_last_job();
	h_counts(&a);
	fake_slurm_update(job, "other", NULL, NULL);
	h_poll();
	h_counts(&b);
	ck_assert_int_eq(b.cancels - a.cancels, 0);
	fake_slurm_update(job, "debug", NULL, NULL);
	h_poll();
	h_counts(&b);
	ck_assert_int_eq(b.cancels - a.cancels, 1);
	cond = fake_writes_cond(h_key(0, key, sizeof(key)));
	ck_assert_ptr_nonnull(cond);
	ck_assert_msg(strstr(cond,
			  "was changed outside the namespace's "
			  "bounds: its partition in Slurm is now "
			  "\"debug\", which namespace") != NULL,
	    "%s", cond);
	/* Once the cancel is seen, the pods are asked for again. */
	h_poll();
	h_time(60000);
	h_poll();
	h_counts(&b);
	ck_assert_int_gt(b.asks - a.asks, 0);
}
END_TEST

/*
 * Slurm forgets a job before any load saw it end (MinJobAge): a live
 * group acts on the second load in a row without its job, never the
 * first, as a job made after a load was packed is missing from it.  A job
 * still there under another comment is not gone.
 */
START_TEST(test_gang_purged)
{
	struct counts a, b;
	uint32_t      job;

	/* A bound gang's job ends unseen and is purged. */
	h_reach(S_BOUND);
	job = fake_slurm_last_job();
	h_counts(&a);
	fake_slurm_end(job, "TIMEOUT", NULL);
	fake_slurm_purge(job);
	h_poll();
	h_counts(&b);
	ck_assert_int_eq(h_state(), G_BOUND);
	ck_assert_int_eq(b.deletes - a.deletes, 0);
	h_poll();
	h_counts(&b);
	ck_assert_int_eq(h_state(), G_ENDED);
	ck_assert_int_eq(b.deletes - a.deletes, 3);
	h_teardown();
	h_setup();

	/* A job made after the load in flight was packed: not gone. */
	h_reach(S_SUBMITTING);
	H.r->slurm_since = 0; /* a load of every job: none yet */
	poll_ask(H.r);
	ck_assert_int_eq(drive_poll_make(H.r), 0);
	h_step(E_SUBMIT_OK, 0, NULL);
	ck_assert_int_eq(h_state(), G_PENDING);
	job = fake_slurm_last_job();
	h_counts(&a);
	ck_assert_int_eq(drive_poll_deliver(H.r), 0);
	ck_assert_int_eq(H.r->slurm_since, 0); /* the next load is full */
	h_poll();
	fake_slurm_pend(job, "Priority", 0);
	h_poll();
	h_counts(&b);
	ck_assert_int_eq(h_state(), G_PENDING);
	h_nothing_more(&a, &b);
	h_teardown();
	h_setup();

	/* Its comment changed: slurmctld still holds it. */
	h_reach(S_BOUND);
	job = fake_slurm_last_job();
	h_counts(&a);
	fake_slurm_comment(job, "not the bridge's");
	h_poll();
	fake_slurm_pend(fake_slurm_last_job(), "Priority", 0);
	h_poll();
	h_poll();
	h_counts(&b);
	ck_assert_int_eq(h_state(), G_BOUND);
	h_nothing_more(&a, &b);
}
END_TEST

/*
 * The end thread completes the job of a gang whose pods succeeded; until
 * its answer comes, the job counts as ended (nothing asks again) but the
 * pods keep their finalizer (--jobid-label), which guards the job's
 * cleanup.  The answer
 * lets them go; a failed one (slurmctld away) leaves them, and the sweep
 * asks again once slurmctld is back.
 */
START_TEST(test_gang_end_answer)
{
	struct counts a, b;
	struct group *g;
	uint32_t      job;
	int	      down = _i, rel;

	/* Labelled, so the pods carry the finalizer. */
	h_bridge_stop();
	H.conf.jobid_label = 1;
	h_bridge_start();
	h_reach(S_BOUND);
	job = fake_slurm_last_job();
	drive_end_hold(1);
	fake_slurm_down(down);
	h_counts(&a);
	rel = fake_writes_count(FW_RELEASE);
	h_pods_end("Succeeded", 0);
	h_writes_settle();
	h_time(1000);
	h_counts(&b);
	ck_assert_int_eq(b.completes - a.completes, 1); /* asked once */
	ck_assert_uint_eq(drive_end_waiting(H.r, NULL), 1);
	g = h_group();
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(g->ending, 1);
	/* The last member to end holds the finalizer for the job. */
	ck_assert_int_eq(fake_writes_count(FW_RELEASE), rel + GANG_SIZE - 1);
	drive_end_hold(0);
	h_writes_settle();
	h_counts(&b);
	ck_assert_str_eq(fake_slurm_job_state(job),
	    down ? "RUNNING" : "COMPLETED");
	ck_assert_int_eq(fake_writes_count(FW_RELEASE), rel + GANG_SIZE - down);
	if (!down)
		return;
	g = h_group();
	ck_assert_int_eq(g->cancelled, 0);
	ck_assert_int_eq(g->cancel_due, 1);
	fake_slurm_down(0);
	h_time(1000);
	h_writes_settle();
	h_counts(&b);
	ck_assert_int_eq(b.completes - a.completes, 2);
	ck_assert_str_eq(fake_slurm_job_state(job), "COMPLETED");
	ck_assert_int_eq(fake_writes_count(FW_RELEASE), rel + GANG_SIZE);
}
END_TEST

/*
 * The fence: a leader whose Lease was last renewed LEADER_FENCE_MS ago or
 * more may have lost it to another replica, so it cancels nothing (the
 * job of a gang whose pods are gone waits); renewed again, the sweep
 * cancels it.
 */
/*
 * PodScheduled messages asked while one is on its way coalesce into the
 * latest, written once that one is answered, and only then is its text
 * let go; a write that fails with nothing newer behind it is asked again.
 */
/*
 * A pod alone's group borrows its member's key from its own: no list is
 * allocated, and its job's pod list is that member list.
 */
START_TEST(test_single_borrows)
{
	struct group *g;
	json_t	     *pod = h_pod_json("solo");

	json_object_del(json_object_get(pod, "metadata"), "labels");
	json_object_del(json_object_get(pod, "metadata"), "annotations");
	json_object_set(H.api, NS "/solo", pod);
	h_pod_event(pod, K8S_WATCH_ADDED);
	json_decref(pod);
	g = map_get(H.r->groups, "pod:" NS "/solo");
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(g->members.n, 1);
	ck_assert_ptr_eq(g->members.v[0], g->key + strlen("pod:"));
	ck_assert_str_eq(g->members.v[0], NS "/solo");
	ck_assert_uint_eq(strv_bytes(&g->members), 0);
	ck_assert_int_eq(drive_submit_asked(), 1);
	drive_submit_make(H.r);
	drive_submit_deliver(H.r);
	ck_assert_ptr_eq(groups_job_list(g), &g->members);
}
END_TEST

START_TEST(test_cond_coalesce)
{
	struct pod_entry *e;
	char		  key[128];
	const char	 *first;
	int		  n;

	h_add(0);
	e = map_get(H.r->pods, h_key(0, key, sizeof(key)));
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->cond_busy, 1);
	ck_assert_ptr_null(e->cond_text);
	first = fake_writes_cond(key);
	ck_assert_ptr_nonnull(first);
	ck_assert_ptr_nonnull(strstr(first, "1 of 3"));
	n = fake_writes_count(FW_COND);
	h_add(1);
	/* Pod 0's message changed while its first write is out: it waits. */
	ck_assert_int_eq(e->cond_queued, 1);
	ck_assert_ptr_nonnull(e->cond_text);
	ck_assert_ptr_nonnull(strstr(e->cond_text, "2 of 3"));
	ck_assert_str_eq(fake_writes_cond(key), first);
	fake_writes_answer(H.r->writepool, H.r, 0, h_landed, NULL);
	ck_assert_int_eq(e->cond_queued, 0);
	ck_assert_ptr_null(e->cond_text);
	ck_assert_ptr_nonnull(strstr(fake_writes_cond(key), "2 of 3"));
	ck_assert_int_gt(fake_writes_count(FW_COND), n + 1);
	/* The newer one fails, nothing behind it: asked again, written again. */
	fake_writes_answer(H.r->writepool, H.r, 500, NULL, NULL);
	ck_assert_uint_eq(e->cond, 0);
}
END_TEST

START_TEST(test_gang_fenced)
{
	struct counts a, b;
	uint32_t      job;

	h_reach(S_BOUND);
	job = fake_slurm_last_job();
	H.conf.leader_elect = 1;
	atomic_store(&bstats.lease_renewed_ms,
	    clock_ms(CLOCK_MONOTONIC) - LEADER_FENCE_MS - 1000);
	h_counts(&a);
	h_delete_all();
	h_time(1000);
	h_counts(&b);
	ck_assert_int_eq(b.cancels - a.cancels, 0);
	ck_assert_str_eq(fake_slurm_job_state(job), "RUNNING");
	atomic_store(&bstats.lease_renewed_ms, clock_ms(CLOCK_MONOTONIC));
	h_time(1000);
	h_counts(&b);
	ck_assert_int_eq(b.cancels - a.cancels, 1);
	ck_assert_str_eq(fake_slurm_job_state(job), "CANCELLED");
	H.conf.leader_elect = 0;
}
END_TEST

/*
 * The last job's two components start on n1 and n2; its three pods are
 * bound, GANG-1 on n2 (its component's node) and the others on n1.
 */
static void
h_bind_comps(const char *what)
{
	const json_t *w;
	char	      state[64];
	size_t	      i;
	int	      binds = 0;

	ck_assert_int_eq(fake_slurm_start_comps(fake_slurm_last_job(), "n1",
			     "n2"),
	    0);
	h_poll();
	snprintf(state, sizeof(state), "%s: allocated", what);
	h_expect_state(G_ALLOCATED, state);
	for (i = 0; i < 4 && fake_writes_waiting(H.r->writepool) > 0; i++) {
		fake_writes_answer(H.r->writepool, H.r, 0, h_landed, NULL);
		bind_flush_writes(H.r);
	}
	snprintf(state, sizeof(state), "%s: bound", what);
	h_expect_state(G_BOUND, state);
	json_array_foreach (fake_writes_log(), i, w) {
		if (strcmp(k8s_obj_str(w, "w"), "bind") != 0)
			continue;
		binds++;
		ck_assert_str_eq(k8s_obj_str(w, "node"),
		    strcmp(k8s_obj_str(w, "pod"), NS "/" GANG "-1") == 0 ?
			"n2" :
			"n1");
	}
	ck_assert_int_eq(binds, 3);
}

/*
 * A gang whose members differ (one of 2 CPUs, two of 1): one
 * heterogeneous job of two components, which never starts at once (only
 * backfill starts one); once Slurm starts it, each member is bound to a
 * node of its own component.
 */
START_TEST(test_gang_heterogeneous)
{
	struct group *g;
	json_t	     *pod;
	char	      key[128];

	h_add(0);
	pod = h_pod_json(GANG "-1");
	json_object_set_new(k8s_obj_get(json_array_get(k8s_obj_get(pod,
							   "spec.containers"),
					    0),
				"resources.requests"),
	    "cpu", json_string("2"));
	json_object_set_new(H.api, h_key(1, key, sizeof(key)), pod);
	h_pod_event(pod, K8S_WATCH_ADDED);
	h_add(2);
	h_expect_state(G_SUBMITTING, "submitting");
	h_submit(FAKE_SUBMIT_ALLOCATE);
	h_writes_settle();
	/* Asked to allocate at once, it still waits: a batch job. */
	h_expect_state(G_PENDING, "heterogeneous: pending");
	ck_assert_str_eq(fake_slurm_job_state(fake_slurm_last_job()),
	    "PENDING");
	ck_assert_uint_eq(fake_slurm_job_comps(fake_slurm_last_job()), 2);
	g = h_group();
	ck_assert_ptr_nonnull(g->job->het);
	/* In placement order: train-0 and train-2 of 1 CPU, train-1 of 2. */
	ck_assert_int_eq(json_integer_value(
			     json_array_get(json_object_get(g->job->het,
						"comps"),
				 1)),
	    1);
	ck_assert_int_eq(json_integer_value(
			     json_array_get(json_object_get(g->job->het,
						"comps"),
				 2)),
	    0);
	/*
	 * Component 0 (two tasks of 1 CPU) on n1, component 1 on n2: sized
	 * by the largest member, train-2 would have gone to n2.
	 */
	h_bind_comps("heterogeneous");
}
END_TEST

/*
 * A gang whose pods may use different nodes (Kueue's topology-aware
 * scheduling pins each to a node): one heterogeneous job of a component
 * per node set, and each pod bound on its own node.
 */
START_TEST(test_gang_node_sets)
{
	static const char *const on[] = { "n1", "n2", "n1" };
	json_t			*pod, *node;
	char			 name[64], key[128];
	size_t			 i;

	for (i = 0; i < 2; i++) {
		node = json_object_get(H.nodes, i == 0 ? "n1" : "n2");
		json_object_set_new(json_object_get(node, "metadata"), "labels",
		    json_pack("{s:s}", "kubernetes.io/hostname",
			i == 0 ? "n1" : "n2"));
		h_obj_msg(MSG_NODE, K8S_WATCH_MODIFIED, noderec_dup(node));
	}
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), GANG "-%zu", i);
		pod = h_pod_json(name);
		json_object_set_new(json_object_get(pod, "spec"),
		    "nodeSelector",
		    json_pack("{s:s}", "kubernetes.io/hostname", on[i]));
		json_object_set_new(H.api, h_key((int)i, key, sizeof(key)),
		    pod);
		h_pod_event(pod, K8S_WATCH_ADDED);
	}
	h_expect_state(G_SUBMITTING, "node sets: submitting");
	h_submit(FAKE_SUBMIT_ALLOCATE);
	h_writes_settle();
	h_expect_state(G_PENDING, "node sets: pending");
	ck_assert_uint_eq(fake_slurm_job_comps(fake_slurm_last_job()), 2);
	h_bind_comps("node sets");
}
END_TEST

/* What each Binding carried of its claims: pod key -> w->claims. */
static json_t *h_claims;

static void
h_landed_claims(const struct wreq *w, void *arg)
{
	if (w->kind == WREQ_BIND)
		json_object_set(h_claims, w->pkey,
		    w->claims != NULL ? w->claims : json_null());
	h_landed(w, arg);
}

/* A claim NS/NAME of one device of the example driver's class. */
static json_t *
h_claim_json(const char *name)
{
	return (json_pack("{s:{s:s, s:s, s:s}, s:{s:{s:[{s:s, s:{s:s}}]}}}",
	    "metadata", "name", name, "namespace", NS, "uid", name, "spec",
	    "devices", "requests", "name", "gpus", "exactly", "deviceClassName",
	    "gpu.example.com"));
}

/* The example driver's slice of node: gpu-0 and gpu-1, index 0 and 1. */
static json_t *
h_slice_json(const char *node)
{
	return (json_pack("{s:{s:s}, s:{s:s, s:s, s:{s:s, s:i}, "
			  "s:[{s:s, s:{s:{s:i}}}, {s:s, s:{s:{s:i}}}]}}",
	    "metadata", "name", node, "spec", "driver", "gpu.example.com",
	    "nodeName", node, "pool", "name", node, "generation", 1, "devices",
	    "name", "gpu-0", "attributes", "index", "int", 0, "name", "gpu-1",
	    "attributes", "index", "int", 1));
}

/*
 * A gang whose pods each name a ResourceClaim: the claims become the
 * job's GRES, and each Binding comes with its claim's writes, the devices
 * being those whose index Slurm gave that pod on its node (KEP-4381:
 * allocated and reserved before the Binding).  A claim the cache has not
 * seen keeps the gang from being submitted at all.
 */
START_TEST(test_gang_claims)
{
	struct dra_classes dra;
	json_t		  *pod, *cw, *res;
	const char	  *k, *gres, *node, *dev;
	char		   name[64], key[128], want[32];
	int		   i, binds = 0;

	h_bridge_stop();
	dra_classes_defaults(&dra);
	H.conf.dra = &dra;
	fake_slurm_reset();
	fake_slurm_node("n1", 2, 2);
	fake_slurm_node("n2", 2, 2);
	h_bridge_start();
	h_claims = json_object();
	h_obj_msg(MSG_SLICE, K8S_WATCH_ADDED, h_slice_json("n1"));
	h_obj_msg(MSG_SLICE, K8S_WATCH_ADDED, h_slice_json("n2"));
	for (i = 0; i < GANG_SIZE; i++) {
		snprintf(name, sizeof(name), GANG "-%d", i);
		pod = h_pod_json(name);
		snprintf(name, sizeof(name), GANG "-%d-gpu", i);
		json_object_set_new(json_object_get(pod, "spec"),
		    "resourceClaims",
		    json_pack("[{s:s, s:s}]", "name", "gpu",
			"resourceClaimName", name));
		json_object_set_new(H.api, h_key(i, key, sizeof(key)), pod);
		h_pod_event(pod, K8S_WATCH_ADDED);
	}
	/* No claim in the cache yet: waiting, nothing submitted. */
	h_writes_settle();
	h_expect_state(G_WAITING, "claims: waiting for them");
	ck_assert_int_eq(drive_submit_asked(), 0);
	ck_assert_ptr_nonnull(strstr(fake_writes_cond(NS "/" GANG "-0"),
	    "spec.resourceClaims[0] (\"gpu\", ResourceClaim " GANG
	    "-0-gpu): waiting for ResourceClaim " GANG "-0-gpu to exist"));
	for (i = 0; i < GANG_SIZE; i++) {
		snprintf(name, sizeof(name), GANG "-%d-gpu", i);
		h_obj_msg(MSG_CLAIM, K8S_WATCH_ADDED, h_claim_json(name));
	}
	/* Their namespace's groups are evaluated again, once. */
	sweep_changed(H.r);
	bind_flush_writes(H.r);
	h_expect_state(G_SUBMITTING, "claims: submitting");
	h_submit(FAKE_SUBMIT_ALLOCATE);
	for (i = 0; i < 8 && fake_writes_waiting(H.r->writepool) > 0; i++) {
		fake_writes_answer(H.r->writepool, H.r, 0, h_landed_claims,
		    NULL);
		bind_flush_writes(H.r);
	}
	h_expect_state(G_BOUND, "claims: bound");
	json_object_foreach (h_claims, k, cw) {
		pod = json_object_get(H.api, k);
		gres = k8s_obj_annotation(pod, ANN_SLURM_GRES);
		node = k8s_obj_str(pod, "spec.nodeName");
		ck_assert_ptr_nonnull(gres);
		ck_assert_uint_eq(json_array_size(cw), 1);
		cw = json_array_get(cw, 0);
		/* "gpu:1(IDX:N)": the claim holds gpu-N of that node. */
		snprintf(want, sizeof(want), "gpu-%c", gres[strlen(gres) - 2]);
		res = json_array_get(k8s_obj_get(cw,
					 "status.allocation.devices.results"),
		    0);
		dev = json_string_value(json_object_get(res, "device"));
		ck_assert_msg(dev != NULL && strcmp(dev, want) == 0,
		    "%s: GRES %s, device %s", k, gres, dev);
		ck_assert_str_eq(json_string_value(
				     json_object_get(res, "pool")),
		    node);
		res = json_array_get(k8s_obj_get(cw,
					 "status.allocation.nodeSelector."
					 "nodeSelectorTerms"),
		    0);
		res = json_array_get(json_object_get(res, "matchFields"), 0);
		ck_assert_str_eq(json_string_value(
				     json_array_get(json_object_get(res,
							"values"),
					 0)),
		    node);
		ck_assert_str_eq(
		    k8s_obj_str(json_array_get(k8s_obj_get(cw,
						   "status.reservedFor"),
				    0),
			"uid"),
		    k8s_obj_str(pod, "metadata.uid"));
		/* Who holds its devices, for pods that share it. */
		ck_assert_str_eq(json_string_value(
				     json_object_get(json_object_get(cw,
							 "holder"),
					 ANN_SLURM_JOBID)),
		    k8s_obj_annotation(pod, ANN_SLURM_JOBID));
		ck_assert_str_eq(json_string_value(
				     json_object_get(json_object_get(cw,
							 "holder"),
					 ANN_SLURM_NODE)),
		    k8s_obj_annotation(pod, ANN_SLURM_NODE));
		binds++;
	}
	ck_assert_int_eq(binds, GANG_SIZE);
	json_decref(h_claims);
	h_claims = NULL;
	h_bridge_stop();
	H.conf.dra = NULL;
	h_bridge_start();
	dra_classes_cleanup(&dra);
}
END_TEST

/*
 * Stopping with an allocation request not started: the reconcile thread's
 * last step stops the submit thread (which frees that request) and main
 * then frees the groups.  A group that still pointed at the request would
 * write to freed memory (ASan and valgrind see it; this run did before
 * groups_withdraw_all).
 */
START_TEST(test_gang_shutdown_order)
{
	h_reach(S_SUBMITTING);
	ck_assert_uint_eq(drive_submit_waiting(H.r), 1);
	drive_stop(H.r); /* reconcile_workers_stop, then the queues */
	reconcile_free(H.r);
	H.r = NULL;
}
END_TEST

/* The gang's pods are in the API server (member 0 labelled job). */
static void
h_pods_put(uint32_t job)
{
	char	name[64], key[128], id[16];
	json_t *pod;
	int	i;

	for (i = 0; i < GANG_SIZE; i++) {
		snprintf(name, sizeof(name), GANG "-%d", i);
		pod = h_pod_json(name);
		if (i == 0 && job != 0) {
			snprintf(id, sizeof(id), "%u", job);
			json_object_set_new(k8s_obj_get(pod, "metadata.labels"),
			    LABEL_JOBID, json_string(id));
		}
		json_object_set_new(H.api, h_key(i, key, sizeof(key)), pod);
	}
}

#define H_THEIRS \
	"{\"pods\":[\"team/train-0\",\"team/train-1\",\"team/train-2\"]," \
	"\"uids\":[\"uid-train-0\",\"uid-train-1\",\"uid-train-2\"]," \
	"\"install\":\"theirs\"}"
#define H_LEGACY \
	"{\"pods\":[\"team/train-0\",\"team/train-1\",\"team/train-2\"]}"

/*
 * Two installs on one Slurm: the other's job for pods of the very same
 * names and UIDs, which a member's label names too, is neither adopted
 * nor cancelled, and neither is a job made before installs were named
 * whose pods are not here (another install's, maybe).
 */
START_TEST(test_gang_other_install)
{
	struct group *g;
	uint32_t      theirs, stray;

	h_bridge_stop();
	theirs = fake_slurm_job_add(H_THEIRS, 3, 1);
	stray = fake_slurm_job_add("{\"pods\":[\"team/gone-0\"]}", 1, 1);
	h_pods_put(theirs);
	h_bridge_start();
	h_poll();
	h_time(60000);
	h_poll();
	g = h_group();
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_ne(g->jobid, theirs);
	ck_assert_int_eq(g->hinted, 0);
	ck_assert_str_eq(fake_slurm_job_state(theirs), "PENDING");
	ck_assert_str_eq(fake_slurm_job_state(stray), "PENDING");
	ck_assert_str_eq(fake_slurm_admin_comment(theirs), H_THEIRS);
	ck_assert_int_eq(fake_slurm_counts()->admin_updates, 0);
	/* The gang has a job of its own, made by this install. */
	h_submit(FAKE_SUBMIT_PEND);
	ck_assert_uint_gt(h_group()->jobid, stray);
	ck_assert_ptr_nonnull(strstr(fake_slurm_admin_comment(h_group()->jobid),
	    "\"install\":\"mine\""));
}
END_TEST

/*
 * A pod of another scheduler whose job-id label names the gang's running
 * job, found at restart before the gang's own pods: the gang keeps its
 * job, nothing is cancelled or deleted, and the forger is left alone.
 */
START_TEST(test_gang_forged_label)
{
	struct counts a, b;
	uint32_t      job;
	json_t	     *pod;
	char	      id[16];

	h_reach(S_BOUND);
	job = fake_slurm_last_job();
	h_bridge_stop();
	pod = h_pod_json("forger");
	json_object_set_new(json_object_get(pod, "spec"), "schedulerName",
	    json_string("other"));
	json_object_del(k8s_obj_get(pod, "metadata.labels"), LABEL_POD_GROUP);
	snprintf(id, sizeof(id), "%u", job);
	json_object_set_new(k8s_obj_get(pod, "metadata.labels"), LABEL_JOBID,
	    json_string(id));
	/* Listed first: it claims the job before the gang's pods do. */
	json_object_set_new(H.api, "a-first/forger", pod);
	h_counts(&a);
	h_bridge_start();
	/* A full load, as every PLAN_REFRESH_MS: the job must be known. */
	H.r->slurm_since = 0;
	h_poll();
	h_counts(&b);
	ck_assert_int_eq(h_state(), G_BOUND);
	ck_assert_uint_eq(h_group()->jobid, job);
	ck_assert_int_eq(b.cancels - a.cancels, 0);
	ck_assert_int_eq(b.deletes - a.deletes, 0);
	ck_assert_int_eq(b.submits - a.submits, 0);
	ck_assert_str_eq(fake_slurm_job_state(job), "RUNNING");
}
END_TEST

/*
 * A job made before installs were named is this install's once its pods
 * are: adopted at start, and its admin_comment names the install and the
 * UIDs from then on.
 */
START_TEST(test_gang_legacy_claimed)
{
	struct group *g;
	uint32_t      legacy;

	h_bridge_stop();
	legacy = fake_slurm_job_add(H_LEGACY, 3, 1);
	h_pods_put(0);
	h_bridge_start();
	g = h_group();
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(g->jobid, legacy);
	ck_assert_int_eq(g->state, G_PENDING);
	ck_assert_str_eq(fake_slurm_admin_comment(legacy),
	    "{\"pods\":[\"team/train-0\",\"team/train-1\",\"team/"
	    "train-2\"],\"uids\":[\"uid-train-0\",\"uid-train-1\",\"uid-"
	    "train-2\"],\"install\":\"mine\"}");
}
END_TEST

/* --- Kubernetes nodes behind Slurm nodes -------------------------------- */

/* Node name, as the informer sends it (a record), labelled for sname. */
static void
h_node_event(const char *name, const char *sname, enum k8s_watch_type type)
{
	json_t *n = h_node_json(name, 1);

	if (sname != NULL)
		json_object_set_new(json_object_get(n, "metadata"), "labels",
		    json_pack("{s:s}", LABEL_SLURM_NODENAME, sname));
	h_obj_msg(MSG_NODE, type, noderec_dup(n));
	json_decref(n);
}

static int
h_behind(const char *sname, const char *want)
{
	const char *k = nodes_k8s_name(H.r, sname);

	return (want == NULL ? k == NULL : k != NULL && strcmp(k, want) == 0);
}

/*
 * The node behind a Slurm node: the one labelled with its name, else the
 * unlabelled node of its name; as nodes come, go and are relabelled.  Two
 * nodes that carry one Slurm node's name: neither, until one label goes
 * (a node cannot take another's place by labelling itself).
 */
START_TEST(test_node_index)
{
	ck_assert(h_behind("n2", "n2"));
	ck_assert(h_behind("n9", NULL));
	h_node_event("k-a", "n2", K8S_WATCH_ADDED);
	ck_assert(h_behind("n2", "k-a"));
	h_node_event("k-b", "n2", K8S_WATCH_ADDED);
	ck_assert(h_behind("n2", NULL));
	ck_assert_int_eq(nodes_claimed(H.r, "n2"), 2);
	/* The first goes: the second labelled for n2 takes its place. */
	h_node_event("k-a", "n2", K8S_WATCH_DELETED);
	ck_assert(h_behind("n2", "k-b"));
	/* Relabelled for n1: n2 falls back to its own node. */
	h_node_event("k-b", "n1", K8S_WATCH_MODIFIED);
	ck_assert(h_behind("n2", "n2"));
	ck_assert(h_behind("n1", "k-b"));
	h_node_event("k-b", NULL, K8S_WATCH_MODIFIED);
	ck_assert(h_behind("n1", "n1"));
	/* A node named n2 that stands for n1 is not n2's. */
	h_node_event("n2", "n1", K8S_WATCH_MODIFIED);
	ck_assert(h_behind("n2", NULL));
	ck_assert(h_behind("n1", "n2"));
	h_node_event("n2", "n1", K8S_WATCH_DELETED);
	ck_assert(h_behind("n1", "n1"));
	ck_assert(h_behind("n2", NULL));
	ck_assert_int_eq(map_count(H.r->node_index), 0);
	/* The second of two for n1 goes: the first stays. */
	h_node_event("k-c", "n1", K8S_WATCH_ADDED);
	h_node_event("k-d", "n1", K8S_WATCH_ADDED);
	ck_assert(h_behind("n1", NULL));
	h_node_event("k-d", "n1", K8S_WATCH_DELETED);
	ck_assert(h_behind("n1", "k-c"));
	/* A relist's delete names the node only: the cache knows its label. */
	h_obj_msg(MSG_NODE, K8S_WATCH_DELETED,
	    json_pack("{s:{s:s}}", "metadata", "name", "k-c"));
	ck_assert(h_behind("n1", "n1"));
	ck_assert_int_eq(map_count(H.r->node_index), 0);
	ck_assert_int_eq(json_object_size(H.r->node_label_count), 0);
}
END_TEST

Suite *
group_suite(void)
{
	Suite *s = suite_create("group");
	TCase *rc = tcase_create("rows");
	TCase *tc = tcase_create("table");

	tcase_add_checked_fixture(rc, h_setup, h_teardown);
	tcase_add_loop_test(rc, test_gang_row, 0,
	    (int)(sizeof(rows) / sizeof(rows[0])));
	suite_add_tcase(s, rc);
	tcase_add_checked_fixture(tc, h_setup, h_teardown);
	tcase_add_test(tc, test_gang_shutdown_order);
	tcase_add_test(tc, test_gang_fenced);
	tcase_add_test(tc, test_gang_heterogeneous);
	tcase_add_test(tc, test_gang_node_sets);
	tcase_add_test(tc, test_gang_claims);
	tcase_add_test(tc, test_gang_other_install);
	tcase_add_test(tc, test_gang_legacy_claimed);
	tcase_add_test(tc, test_gang_forged_label);
	tcase_add_loop_test(tc, test_gang_sacct, 0,
	    (int)(sizeof(sacct_cases) / sizeof(sacct_cases[0])));
	tcase_add_test(tc, test_gang_force_deleted);
	tcase_add_test(tc, test_gang_end_grace_capped);
	tcase_add_test(tc, test_claim_holder_vouched);
	tcase_add_test(tc, test_notready_disruption);
	tcase_add_test(tc, test_bounds_after_submit);
	tcase_add_loop_test(tc, test_gang_end_answer, 0, 2);
	tcase_add_test(tc, test_end_batch);
	tcase_add_test(tc, test_cancel_promoted);
	tcase_add_test(tc, test_pending_update);
	tcase_add_test(tc, test_job_list);
	tcase_add_test(tc, test_cond_coalesce);
	tcase_add_test(tc, test_single_borrows);
	tcase_add_test(tc, test_gang_purged);
	tcase_add_test(tc, test_node_index);
	tcase_add_loop_test(tc, test_poll_probe, 0,
	    (int)(sizeof(probe_cases) / sizeof(probe_cases[0])));
	tcase_add_loop_test(tc, test_gang_stale_load, 0,
	    (int)(sizeof(stale_cases) / sizeof(stale_cases[0])));
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner *sr;
	int	 failed;

	sr = srunner_create(group_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
