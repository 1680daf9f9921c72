/*
 * libFuzzer target: pod translation (common/translate.c) and grouping
 * (common/workload.c).  The input is a pod, or {"pod", "root", "namespace",
 * "conf"} as in test/data/translate/.  Besides not crashing or leaking: the
 * record the scheduler keeps (podrec.c) translates exactly as the full pod,
 * a gang of copies of a pod as that pod, every admin_comment reads back as
 * its list of pods, and the GPU count follows the gres annotation.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "k8s.h"
#include "xmalloc.h"
#include "bridge.h"
#include "dra.h"

#define FZ_MAX_INPUT  (64 * 1024)
#define FZ_MAX_COPIES 4

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fz_fail(const char *what, const char *a, const char *b)
{
	fprintf(stderr, "fuzz_translate: %s\n  first:  %s\n  second: %s\n",
	    what, a != NULL ? a : "(null)", b != NULL ? b : "(null)");
	abort();
}

static void
fz_str(struct buf *b, const char *k, const char *v)
{
	if (v == NULL)
		buf_printf(b, "%s=(null) ", k);
	else
		buf_printf(b, "%s=\"%s\" ", k, v);
}

/*
 * Every field of a job description as one line.  identity adds the fields
 * that name the job (name, comment, admin_comment, ntasks), which a gang
 * sets from the group rather than from its first pod.
 */
static char *
fz_jobspec_dump(const struct jobspec *js, int identity)
{
	struct buf b;

	buf_init(&b);
	if (identity) {
		fz_str(&b, "name", js->name);
		fz_str(&b, "comment", js->comment);
		fz_str(&b, "admin_comment", js->admin_comment);
		buf_printf(&b, "ntasks=%u ", js->ntasks);
	}
	fz_str(&b, "partition", js->partition);
	fz_str(&b, "account", js->account);
	fz_str(&b, "qos", js->qos);
	fz_str(&b, "reservation", js->reservation);
	fz_str(&b, "constraints", js->constraints);
	fz_str(&b, "tres_per_task", js->tres_per_task);
	fz_str(&b, "licenses", js->licenses);
	fz_str(&b, "wckey", js->wckey);
	fz_str(&b, "mcs_label", js->mcs_label);
	buf_printf(&b,
	    "cpus_per_task=%u gpus_per_task=%u mem_per_cpu_mb=%llu "
	    "mem_per_node_mb=%llu min_nodes=%u max_nodes=%u req_switch=%u "
	    "wait4switch=%u user_id=%u/%d group_id=%u/%d time_limit=%u "
	    "priority=%u exclusive=%d",
	    js->cpus_per_task, js->gpus_per_task,
	    (unsigned long long)js->mem_per_cpu_mb,
	    (unsigned long long)js->mem_per_node_mb, js->min_nodes,
	    js->max_nodes, js->req_switch, js->wait4switch, js->user_id,
	    js->has_user_id, js->group_id, js->has_group_id, js->time_limit,
	    js->priority, js->exclusive);
	if (b.data == NULL)
		buf_addstr(&b, "");
	return (buf_release(&b));
}

/* A translation as text: its dump on success, its message on failure. */
static char *
fz_result(int rc, const struct jobspec *js, const char *err, int identity)
{
	char *s;

	if (rc == 0)
		return (fz_jobspec_dump(js, identity));
	if (rc != -1 || *err == '\0')
		fz_fail("translation failed without a message", err, NULL);
	xasprintf(&s, "error: %s", err);
	return (s);
}

/* admin_comment must read back as exactly the keys in want[0..n). */
static void
fz_admin_check(const char *admin_comment, char *const *want, size_t n)
{
	json_t *pods;
	size_t	i;

	if ((pods = translate_admin_pods(admin_comment)) == NULL)
		fz_fail("admin_comment does not parse", admin_comment, NULL);
	if (json_array_size(pods) != n)
		fz_fail("admin_comment has the wrong number of pods",
		    admin_comment, NULL);
	for (i = 0; i < n; i++)
		if (json_string_value(json_array_get(pods, i)) == NULL ||
		    strcmp(json_string_value(json_array_get(pods, i)),
			want[i]) != 0)
			fz_fail("admin_comment names another pod",
			    admin_comment, want[i]);
	json_decref(pods);
}

/* The input's root: its one workload layer, or NULL. */
static const json_t *
fz_root(const struct translate_src *src)
{
	return (src->nlayers > 0 ? src->layers[src->nlayers - 1] : NULL);
}

/* What a single pod's translation must satisfy. */
static void
fz_pod_check(const struct translate_src *src, const struct jobspec *js)
{
	const json_t *ann;
	const char   *gres;
	char	     *key, *tres;

	if (js->name == NULL || js->comment == NULL ||
	    js->admin_comment == NULL || js->partition == NULL ||
	    js->ntasks != 1 || js->cpus_per_task < 1 ||
	    js->cpus_per_task > 65535)
		fz_fail("incomplete job description", js->name, js->partition);
	xasprintf(&key, "%s/%s", k8s_obj_namespace(src->pod),
	    k8s_obj_name(src->pod));
	fz_admin_check(js->admin_comment, &key, 1);
	free(key);
	/* The gres annotation, the pod's over the root's, sets the GPUs. */
	ann = k8s_obj_get(src->pod, "metadata.annotations");
	if (json_object_get(ann, ANN_PREFIX "gres") != NULL)
		gres = json_string_value(
		    json_object_get(ann, ANN_PREFIX "gres"));
	else
		gres = fz_root(src) != NULL ?
		    k8s_obj_annotation(fz_root(src), ANN_PREFIX "gres") :
		    NULL;
	if (gres != NULL) {
		xasprintf(&tres, "gres:%s", gres);
		if (js->tres_per_task == NULL ||
		    strcmp(js->tres_per_task, tres) != 0 ||
		    js->gpus_per_task != translate_gres_gpus(gres))
			fz_fail("gres annotation not followed", gres,
			    js->tres_per_task);
		free(tres);
	}
	if (js->gpus_per_task > 0 && js->tres_per_task == NULL)
		fz_fail("GPUs without tres_per_task", js->name, NULL);
}

/* The input's root stands for every kind of workload object. */
static json_t *
fz_lookup(void *arg, enum workload_kind kind, const char *ns, const char *name)
{
	(void)kind;
	(void)ns;
	(void)name;
	return (json_incref((json_t *)arg));
}

/* The group of the pod; its key and size stay in bounds. */
static void
fz_group_check(const struct translate_src *src, struct group_id *gid)
{
	struct workload_lookup lk = { fz_lookup,
		(void *)(uintptr_t)fz_root(src) };
	char		       err[256] = "";
	json_t		      *root;

	/* The root rule and the gang rule agree on what they read. */
	root = workload_root(src->pod, &lk);
	json_decref(root);
	if (workload_group(src->pod, &lk, gid, err, sizeof(err)) == -1) {
		if (err[0] == '\0')
			fz_fail("workload_group failed without a message", NULL,
			    NULL);
		snprintf(gid->name, sizeof(gid->name), "fuzz");
		return;
	}
	if (memchr(gid->key, '\0', sizeof(gid->key)) == NULL ||
	    memchr(gid->name, '\0', sizeof(gid->name)) == NULL ||
	    gid->min_member < 0 || gid->min_member > WORKLOAD_MAX_GANG ||
	    (gid->gang && strncmp(gid->key, "gang:", 5) != 0 &&
		strncmp(gid->key, "podgroup:", 9) != 0) ||
	    (!gid->gang &&
		(strncmp(gid->key, "pod:", 4) != 0 || gid->min_member != 1)))
		fz_fail("bad group", gid->key, gid->name);
}

/*
 * A gang of n copies of the pod translates as the pod, but for its name,
 * comment and size, and its admin_comment lists every copy; copies that
 * name one ResourceClaim are refused.
 */
static void
fz_gang_check(const struct translate_src *src,
    const struct translate_conf *conf, const char *group, size_t n,
    const char *single)
{
	json_t	      *pods[FZ_MAX_COPIES];
	char	      *keys[FZ_MAX_COPIES], key[512], err[256] = "", *got;
	char	       shared[256];
	struct jobspec js;
	size_t	       i;
	int	       rc;

	for (i = 0; i < n; i++) {
		pods[i] = (json_t *)(uintptr_t)src->pod;
		keys[i] = key;
	}
	k8s_obj_key(src->pod, key, sizeof(key));
	rc = translate_group(pods, n, group, src, conf, &js, err, sizeof(err));
	got = fz_result(rc, &js, err, 0);
	/* Copies naming one ResourceClaim share it: a gang is refused that. */
	if (dra_gang_shared(pods, n, NULL, shared, sizeof(shared)) == -1) {
		if (rc != -1)
			fz_fail("a gang sharing a claim was not refused",
			    single, got);
	} else if (strcmp(got, single) != 0)
		fz_fail("a gang of copies translates differently", single, got);
	if (rc == 0) {
		if (js.ntasks != n || js.name == NULL || js.comment == NULL)
			fz_fail("bad gang identity", js.name, js.comment);
		fz_admin_check(js.admin_comment, keys, n);
	}
	free(got);
	translate_jobspec_cleanup(&js);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct translate_conf conf = { .partition = BRIDGE_PARTITION };
	struct translate_src  src, slim;
	struct jobspec	      js, sjs;
	struct group_id	      gid;
	json_t		     *in, *copy, *again, *pods, *root;
	struct podrec	     *rec;
	const char	     *s;
	char		      err[256] = "", serr[256] = "", *raw;
	char		     *full, *single, *slimmed;
	int		      rc, src_rc;

	if (size > FZ_MAX_INPUT ||
	    (in = json_loadb((const char *)data, size, 0, NULL)) == NULL)
		return (0);
	/* The bytes as an admin_comment: a list of pods, or refused. */
	raw = xstrndup((const char *)data, size);
	pods = translate_admin_pods(raw);
	if (pods != NULL && !json_is_array(pods))
		abort();
	json_decref(pods);
	free(raw);

	src.pod = in;
	src.ns = NULL;
	src.dra = NULL;
	src.gang = 0;
	src.layers = &root;
	src.nlayers = 0;
	if (json_object_get(in, "pod") != NULL) {
		src.pod = json_object_get(in, "pod");
		root = json_object_get(in, "root");
		src.nlayers = root != NULL;
		src.ns = json_object_get(in, "namespace");
		if ((s = k8s_obj_str(in, "conf.partition")) != NULL)
			conf.partition = s;
		conf.default_account = k8s_obj_str(in, "conf.default_account");
		conf.mcs_label = k8s_obj_str(in, "conf.mcs_label");
		conf.exclusive = json_is_true(
		    k8s_obj_get(in, "conf.exclusive"));
	}

	src_rc = translate_pod(&src, &conf, &js, err, sizeof(err));
	full = fz_result(src_rc, &js, err, 1);
	single = fz_result(src_rc, &js, err, 0);
	if (src_rc == 0)
		fz_pod_check(&src, &js);
	translate_jobspec_cleanup(&js);

	/*
	 * What the scheduler keeps of a pod (podrec.c) must translate the
	 * same, and keeping it again must change nothing.
	 */
	if ((rec = podrec_new(src.pod)) == NULL)
		goto groups;
	copy = podrec_json(rec);
	podrec_free(rec);
	rec = podrec_new(copy);
	again = podrec_json(rec);
	podrec_free(rec);
	if (!json_equal(copy, again))
		fz_fail("keeping the record twice differs from once", NULL,
		    NULL);
	json_decref(again);
	slim = src;
	slim.pod = copy;
	rc = translate_pod(&slim, &conf, &sjs, serr, sizeof(serr));
	slimmed = fz_result(rc, &sjs, serr, 1);
	if (rc != src_rc || strcmp(full, slimmed) != 0)
		fz_fail("the kept record translates differently", full,
		    slimmed);
	translate_jobspec_cleanup(&sjs);
	json_decref(copy);
	free(slimmed);
groups:
	free(full);

	fz_group_check(&src, &gid);
	fz_gang_check(&src, &conf, gid.name, 1 + size % FZ_MAX_COPIES, single);
	free(single);

	/* Any gres string, well-formed or not. */
	if ((s = k8s_obj_annotation(src.pod, ANN_PREFIX "gres")) != NULL)
		(void)translate_gres_gpus(s);
	if ((s = k8s_obj_annotation(src.pod, ANN_SLURM_GRES)) != NULL)
		(void)translate_gres_gpus(s);
	if (src.nlayers > 0 &&
	    (s = k8s_obj_annotation(root, ANN_PREFIX "gres")) != NULL)
		(void)translate_gres_gpus(s);
	json_decref(in);
	return (0);
}
