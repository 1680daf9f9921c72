/*
 * libk8s against the real kube-apiserver of the local stack (make
 * cluster-up): informer create/update/delete, surviving an API server
 * restart, relisting after an etcd compaction forces a 410, Binding with a
 * stale UID, lease holders, and Event de-duplication.  Needs KUBECONFIG and,
 * for the restart and compaction cases, the stack's scripts (STACK_SCRIPTS)
 * and etcdctl.
 */
#include <sys/wait.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <curl/curl.h>

#include "buf.h"
#include "k8s.h"
#include "log.h"
#include "xmalloc.h"

static struct k8s_config *conf;
static struct k8s_client *cl;
static char		  ns[64];

/* What an informer saw, in order, as "TYPE:name " words. */
struct seen {
	pthread_mutex_t mtx;
	struct buf	log;
	int		synced;
};

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void
seen_cb(enum k8s_watch_type t, json_t *obj, void *arg)
{
	struct seen *s = arg;
	const char  *name = obj != NULL ? k8s_obj_name(obj) : NULL;

	pthread_mutex_lock(&s->mtx);
	if (t == K8S_WATCH_SYNCED)
		s->synced++;
	else
		buf_printf(&s->log, "%s:%s ", k8s_watch_type_name(t),
		    name != NULL ? name : "?");
	pthread_mutex_unlock(&s->mtx);
	json_decref(obj);
}

static void
seen_init(struct seen *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mtx, NULL);
	buf_init(&s->log);
}

static void
seen_cleanup(struct seen *s)
{
	buf_cleanup(&s->log);
	pthread_mutex_destroy(&s->mtx);
}

/* Waits up to secs for the log to contain want; returns 1 if it did. */
static int
seen_wait(struct seen *s, const char *want, int secs)
{
	int i, ok = 0;

	for (i = 0; i < secs * 10 && !ok; i++) {
		pthread_mutex_lock(&s->mtx);
		ok = s->log.data != NULL && strstr(s->log.data, want) != NULL;
		pthread_mutex_unlock(&s->mtx);
		if (!ok)
			sleep_ms(100);
	}
	return (ok);
}

static int
seen_synced(struct seen *s, int n, int secs)
{
	int i, ok = 0;

	for (i = 0; i < secs * 10 && !ok; i++) {
		pthread_mutex_lock(&s->mtx);
		ok = s->synced >= n;
		pthread_mutex_unlock(&s->mtx);
		if (!ok)
			sleep_ms(100);
	}
	return (ok);
}

static void
cm_create(const char *name, const char *value)
{
	struct k8s_error err;
	json_t		*cm;
	char		 path[256];

	cm = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:s}}", "apiVersion",
	    "v1", "kind", "ConfigMap", "metadata", "name", name, "labels", "it",
	    "yes", "data", "v", value);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", ns);
	ck_assert_msg(k8s_create(cl, path, cm, NULL, &err) == 0,
	    "create %s: "
	    "%s",
	    name, err.text);
	json_decref(cm);
}

static void
cm_patch(const char *name, const char *value)
{
	struct k8s_error err;
	json_t		*p = json_pack("{s:{s:s}}", "data", "v", value);
	char		 path[256];

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/%s", ns,
	    name);
	ck_assert_msg(k8s_patch(cl, path, K8S_PATCH_MERGE, p, NULL, &err) == 0,
	    "patch %s: %s", name, err.text);
	json_decref(p);
}

static void
cm_delete(const char *name)
{
	struct k8s_error err;
	char		 path[256];

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/%s", ns,
	    name);
	ck_assert_msg(k8s_delete(cl, path, NULL, &err) == 0, "delete %s: %s",
	    name, err.text);
}

static struct k8s_informer *
cm_informer(struct seen *s, int timeout)
{
	struct k8s_informer_opts o;
	struct k8s_informer	*inf;
	char			 path[256];

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", ns);
	memset(&o, 0, sizeof(o));
	o.path = path;
	o.label_selector = "it=yes";
	o.name = "it/configmaps";
	o.timeout_seconds = timeout;
	inf = k8s_informer_new(conf, &o, seen_cb, s);
	ck_assert_int_eq(k8s_informer_start(inf), 0);
	ck_assert_msg(seen_synced(s, 1, 30), "informer never synced");
	return (inf);
}

static void
setup(void)
{
	struct k8s_error err;
	json_t		*o;

	log_init(0);
	conf = k8s_config_default(NULL, &err);
	ck_assert_msg(conf != NULL, "kubeconfig: %s", err.text);
	cl = k8s_client_new(conf, &err);
	ck_assert_ptr_nonnull(cl);
	snprintf(ns, sizeof(ns), "it-%ld-%d", (long)time(NULL) % 100000,
	    (int)getpid());
	o = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind",
	    "Namespace", "metadata", "name", ns);
	ck_assert_msg(k8s_create(cl, "/api/v1/namespaces", o, NULL, &err) == 0,
	    "namespace: %s", err.text);
	json_decref(o);
}

static void
teardown(void)
{
	struct k8s_error err;
	char		 path[128];

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s", ns);
	(void)k8s_delete(cl, path, NULL, &err);
	k8s_client_free(cl);
	k8s_config_free(conf);
}

START_TEST(it_informer_crud)
{
	struct seen	     s;
	struct k8s_informer *inf;

	seen_init(&s);
	cm_create("before", "0");
	inf = cm_informer(&s, 0);
	ck_assert(seen_wait(&s, "ADDED:before ", 5));
	cm_create("a", "1");
	ck_assert(seen_wait(&s, "ADDED:a ", 10));
	cm_patch("a", "2");
	ck_assert(seen_wait(&s, "MODIFIED:a ", 10));
	cm_delete("a");
	ck_assert(seen_wait(&s, "DELETED:a ", 10));
	ck_assert_str_eq(s.log.data,
	    "ADDED:before ADDED:a MODIFIED:a "
	    "DELETED:a ");
	k8s_informer_free(inf);
	seen_cleanup(&s);
}
END_TEST

/* Stop must be prompt even on an idle watch. */
/*
 * A resource the API server does not serve (a CRD not installed): the
 * informer says it is synced, over an empty store, at its first 404,
 * rather than never; and stops promptly while it retries.
 */
START_TEST(it_informer_unserved)
{
	struct k8s_informer_opts o;
	struct k8s_informer	*inf;
	struct seen		 s;
	size_t			 count, bytes;

	seen_init(&s);
	memset(&o, 0, sizeof(o));
	o.path = "/apis/widgets.slurm-bridge.invalid/v1/widgets";
	o.name = "it/widgets";
	inf = k8s_informer_new(conf, &o, seen_cb, &s);
	ck_assert_int_eq(k8s_informer_start(inf), 0);
	ck_assert_msg(seen_synced(&s, 1, 5),
	    "an unserved resource never synced");
	k8s_informer_store(inf, &count, &bytes);
	ck_assert_uint_eq(count, 0);
	sleep_ms(1500); /* it lists again meanwhile: told once */
	pthread_mutex_lock(&s.mtx);
	ck_assert_int_eq(s.synced, 1);
	ck_assert_uint_eq(s.log.len, 0); /* no object came */
	pthread_mutex_unlock(&s.mtx);
	k8s_informer_stop(inf);
	k8s_informer_free(inf);
	seen_cleanup(&s);
}
END_TEST

START_TEST(it_informer_stop_prompt)
{
	struct seen	     s;
	struct k8s_informer *inf;
	struct timespec	     a, b;
	double		     dt;

	seen_init(&s);
	inf = cm_informer(&s, 0);
	sleep(2);
	clock_gettime(CLOCK_MONOTONIC, &a);
	k8s_informer_stop(inf);
	clock_gettime(CLOCK_MONOTONIC, &b);
	dt = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	printf("informer stop on an idle watch took %.3f s\n", dt);
	ck_assert_msg(dt < 1.2, "stop took %.2fs", dt);
	k8s_informer_free(inf);
	seen_cleanup(&s);
}
END_TEST

/* Runs cmd with bash (the stack's scripts are bash). */
static int
run(const char *cmd)
{
	pid_t pid;
	int   st;

	if ((pid = fork()) == -1)
		return (-1);
	if (pid == 0) {
		execlp("bash", "bash", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) == -1)
		return (-1);
	return (WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

START_TEST(it_informer_apiserver_restart)
{
	struct seen	     s;
	struct k8s_informer *inf;
	uint64_t	     relists;
	const char	    *scripts = getenv("STACK_SCRIPTS");
	char		     cmd[1024];

	ck_assert_msg(scripts != NULL, "STACK_SCRIPTS is not set");
	seen_init(&s);
	cm_create("doomed", "0");
	inf = cm_informer(&s, 0);
	ck_assert(seen_wait(&s, "ADDED:doomed ", 10));
	relists = k8s_informer_relists(inf);
	/*
	 * While the API server is down, the object vanishes from etcd: no
	 * watch can report it, only the relist can (a synthetic delete).
	 */
	snprintf(cmd, sizeof(cmd),
	    ". %s/stack-env.sh && stack_stop "
	    "kube-apiserver \"$RUN_DIR/kube-apiserver.pid\" kube-apiserver "
	    ">/dev/null && ETCDCTL_API=3 etcdctl "
	    "--endpoints=http://127.0.0.1:2379 del "
	    "/registry/configmaps/%s/doomed | grep -qx 1 && "
	    "%s/cluster-up.sh >/dev/null",
	    scripts, ns, scripts);
	ck_assert_int_eq(run(cmd), 0);
	/* The informer relists when the API server is back. */
	ck_assert_msg(seen_synced(&s, 2, 60), "no relist after restart");
	ck_assert_uint_gt(k8s_informer_relists(inf), relists);
	ck_assert(seen_wait(&s, "DELETED:doomed ", 5));
	cm_create("after-restart", "1");
	ck_assert(seen_wait(&s, "ADDED:after-restart ", 20));
	k8s_informer_free(inf);
	seen_cleanup(&s);
}
END_TEST

/*
 * Configmaps have no watch cache on the stack's API server
 * (--watch-cache-sizes=configmaps#0), so a re-watch from a compacted
 * revision reaches etcd and gets 410 Gone.  Watches last one second, so the
 * informer re-watches from its last resourceVersion all the time; churn in
 * another label and an etcd compaction make that version gone.
 */
START_TEST(it_informer_compaction_410)
{
	struct seen	     s;
	struct k8s_informer *inf;
	uint64_t	     relists;
	struct k8s_error     err;
	json_t		    *cm;
	char		     path[256], cmd[512];
	int		     i;

	seen_init(&s);
	cm_create("quiet", "0");
	inf = cm_informer(&s, 1);
	relists = k8s_informer_relists(inf);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", ns);
	for (i = 0; i < 5; i++) {
		char name[32];
		snprintf(name, sizeof(name), "churn-%d", i);
		cm = json_pack("{s:{s:s}}", "metadata", "name", name);
		ck_assert_int_eq(k8s_create(cl, path, cm, NULL, &err), 0);
		json_decref(cm);
	}
	snprintf(cmd, sizeof(cmd),
	    "rev=$(ETCDCTL_API=3 etcdctl "
	    "--endpoints=http://127.0.0.1:2379 endpoint status -w json | "
	    "sed -n 's/.*\"revision\":\\([0-9]*\\).*/\\1/p') && "
	    "ETCDCTL_API=3 etcdctl --endpoints=http://127.0.0.1:2379 compact "
	    "\"$rev\" >/dev/null");
	ck_assert_int_eq(run(cmd), 0);
	ck_assert_msg(seen_synced(&s, 2, 20), "no relist after compaction");
	ck_assert_uint_gt(k8s_informer_relists(inf), relists);
	/* Nothing was lost or duplicated: the store still has one object. */
	cm_create("after-410", "1");
	ck_assert(seen_wait(&s, "ADDED:after-410 ", 20));
	ck_assert_str_eq(s.log.data, "ADDED:quiet ADDED:after-410 ");
	k8s_informer_free(inf);
	seen_cleanup(&s);
}
END_TEST

START_TEST(it_bind_stale_uid)
{
	struct k8s_error err;
	json_t		*pod, *got = NULL, *ann;
	char		 path[256];
	const char	*uid, *node;

	/*
	 * Bound to a node that does not exist: a Binding does not check, and
	 * no taint (nor the stack's guard webhook, which refuses pods of
	 * other schedulers tolerating Slurm's taint) comes into it.
	 */
	pod = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:[{s:s, s:s}]}}",
	    "apiVersion", "v1", "kind", "Pod", "metadata", "name", "bindme",
	    "spec", "schedulerName", "nobody", "containers", "name", "c",
	    "image", "busybox");
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	ck_assert_msg(k8s_create(cl, path, pod, &got, &err) == 0, "%s",
	    err.text);
	uid = k8s_obj_uid(got);
	ck_assert_ptr_nonnull(uid);
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(k8s_pod_bind(cl, ns, "bindme",
			     "00000000-0000-0000-0000-000000000000", "it-ghost",
			     NULL, &err),
	    -1);
	ck_assert_int_eq(err.status, 409);
	ck_assert_msg(strstr(err.text, "UID") != NULL, "%s", err.text);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/bindme", ns);
	json_decref(pod);
	ck_assert_int_eq(k8s_get(cl, path, &pod, &err), 0);
	node = k8s_obj_str(pod, "spec.nodeName");
	ck_assert_msg(node == NULL || *node == '\0', "bound to %s", node);
	/* The Binding's annotations land on the pod in the same write. */
	ann = json_pack("{s:s}", "example.com/bound-by", "it");
	ck_assert_int_eq(k8s_pod_bind(cl, ns, "bindme", uid, "it-ghost", ann,
			     &err),
	    0);
	json_decref(ann);
	json_decref(pod);
	ck_assert_int_eq(k8s_get(cl, path, &pod, &err), 0);
	ck_assert_str_eq(k8s_obj_str(pod, "spec.nodeName"), "it-ghost");
	ck_assert_str_eq(k8s_obj_annotation(pod, "example.com/bound-by"), "it");
	json_decref(pod);
	json_decref(got);
}
END_TEST

START_TEST(it_lease_two_holders)
{
	struct k8s_lease_opts o = { NULL, "it-lease", NULL, 3, 2, 1 };
	struct k8s_lease     *a, *b;
	struct k8s_error      err;
	int		      i, ra, rb, b_took = -1;

	o.ns = ns;
	o.identity = "a";
	a = k8s_lease_new(cl, &o);
	o.identity = "b";
	b = k8s_lease_new(cl, &o);
	ck_assert_int_eq(k8s_lease_step(a, &err), 1);
	for (i = 0; i < 6; i++) {
		ra = k8s_lease_step(a, &err);
		rb = k8s_lease_step(b, &err);
		ck_assert_int_eq(ra, 1);
		ck_assert_int_eq(rb, 0);
		ck_assert(!(k8s_lease_held(a) && k8s_lease_held(b)));
		sleep_ms(500);
	}
	ck_assert_str_eq(k8s_lease_holder(b), "a");
	/* a stops renewing (a crash): b must wait out the duration. */
	for (i = 0; i < 20 && b_took == -1; i++) {
		if (k8s_lease_step(b, &err) == 1)
			b_took = i;
		sleep_ms(500);
	}
	ck_assert_msg(b_took >= 5,
	    "b took over after %d half-seconds, "
	    "before the 3 s lease ran out",
	    b_took);
	/* a comes back: it sees b's lease and does not take it. */
	ck_assert_int_eq(k8s_lease_step(a, &err), 0);
	ck_assert(!k8s_lease_held(a));
	/* Release hands over at once. */
	ck_assert_int_eq(k8s_lease_release(b, &err), 0);
	ck_assert_int_eq(k8s_lease_step(a, &err), 1);
	ck_assert_int_eq(k8s_lease_step(b, &err), 0);
	k8s_lease_free(a);
	k8s_lease_free(b);
}
END_TEST

START_TEST(it_events_dedup)
{
	struct k8s_recorder *r = k8s_recorder_new(cl, "slurm-bridge/it",
	    "it-1");
	struct k8s_error     err;
	json_t		    *obj, *list = NULL;
	char		     path[256];
	size_t		     i, n = 0;
	json_t		    *ev;
	json_int_t	     count = 0;

	obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion", "v1",
	    "kind", "Namespace", "metadata", "name", ns, "namespace", ns, "uid",
	    "it-uid");
	for (i = 0; i < 3; i++)
		ck_assert_msg(k8s_recorder_post(r, obj, "Warning",
				  "FailedScheduling", "Scheduling", &err,
				  "no %s", "room") == 0,
		    "%s", err.text);
	ck_assert_int_eq(k8s_recorder_post(r, obj, "Normal", "Scheduled",
			     "Binding", &err, "bound"),
	    0);
	snprintf(path, sizeof(path),
	    "/apis/events.k8s.io/v1/namespaces/%s/"
	    "events",
	    ns);
	ck_assert_int_eq(k8s_get(cl, path, &list, &err), 0);
	json_array_foreach (json_object_get(list, "items"), i, ev) {
		const char *reason = json_string_value(
		    json_object_get(ev, "reason"));
		if (reason != NULL && strcmp(reason, "FailedScheduling") == 0)
			count = json_integer_value(
			    k8s_obj_get(ev, "series.count"));
		n++;
	}
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(count, 3);
	json_decref(list);
	json_decref(obj);
	k8s_recorder_free(r);
}
END_TEST

/* Does /apis/scheduling.k8s.io/VERSION list resource? */
static int
it_lists(const char *version, const char *resource)
{
	struct k8s_error err;
	json_t		*doc = NULL;
	const json_t	*r;
	const char	*name;
	char		 path[128];
	size_t		 i;
	int		 listed = 0;

	snprintf(path, sizeof(path), "/apis/scheduling.k8s.io/%s", version);
	ck_assert_msg(k8s_get(cl, path, &doc, &err) == 0, "%s: %s", path,
	    err.text);
	json_array_foreach (json_object_get(doc, "resources"), i, r)
		if ((name = k8s_obj_str(r, "name")) != NULL &&
		    strcmp(name, resource) == 0)
			listed = 1;
	json_decref(doc);
	return (listed);
}

/*
 * Discovery: the version that serves a resource, as the real API server
 * answers.  apps serves deployments at v1; a group nobody serves, or a
 * resource a served group lacks, is 0.  scheduling.k8s.io's podgroups are
 * served where the stack turned them on (v1beta1 on 1.37) and nowhere on
 * 1.35 and 1.34: the answer must agree with the group's own documents.
 */
START_TEST(it_discover)
{
	struct k8s_error err;
	json_t		*grp = NULL;
	const json_t	*v;
	char		 ver[32];
	size_t		 i;
	int		 rc;

	ck_assert_int_eq(k8s_discover(cl, "apps", "deployments", ver,
			     sizeof(ver), &err),
	    1);
	ck_assert_str_eq(ver, "v1");
	ck_assert_int_eq(k8s_discover(cl, "nosuch.example.com", "things", ver,
			     sizeof(ver), &err),
	    0);
	ck_assert_int_eq(k8s_discover(cl, "apps", "nosuchthings", ver,
			     sizeof(ver), &err),
	    0);
	rc = k8s_discover(cl, "scheduling.k8s.io", "podgroups", ver,
	    sizeof(ver), &err);
	ck_assert_int_ne(rc, -1);
	if (rc == 1) {
		ck_assert(it_lists(ver, "podgroups"));
		return;
	}
	ck_assert_int_eq(k8s_get(cl, "/apis/scheduling.k8s.io", &grp, &err), 0);
	json_array_foreach (json_object_get(grp, "versions"), i, v)
		ck_assert(!it_lists(k8s_obj_str(v, "version"), "podgroups"));
	json_decref(grp);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("k8s-integration");
	TCase	*tc = tcase_create("apiserver");
	TCase	*dis = tcase_create("disruptive");
	SRunner *sr;
	int	 failed;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, it_informer_crud);
	tcase_add_test(tc, it_informer_stop_prompt);
	tcase_add_test(tc, it_informer_unserved);
	tcase_add_test(tc, it_bind_stale_uid);
	tcase_add_test(tc, it_lease_two_holders);
	tcase_add_test(tc, it_events_dedup);
	tcase_add_test(tc, it_discover);
	suite_add_tcase(s, tc);
	/* These restart the API server or compact etcd. */
	tcase_set_tags(dis, "disruptive");
	tcase_add_checked_fixture(dis, setup, teardown);
	tcase_set_timeout(dis, 180);
	tcase_add_test(dis, it_informer_compaction_410);
	tcase_add_test(dis, it_informer_apiserver_restart);
	suite_add_tcase(s, dis);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	curl_global_cleanup();
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
