/*
 * The guard, POST /guard: no way around Slurm onto its nodes.  The
 * managed-node taint alone keeps other pods off the nodes the bridge
 * manages, so this refuses, in every namespace but the exempt ones (the
 * chart's namespaceSelector), a pod that tolerates that taint unless
 * slurm-bridge schedules it, and a pod created with spec.nodeName on a
 * managed node whatever its scheduler (such a pod is placed by nobody).
 * The chart's matchConditions send only pods that tolerate the taint or
 * name a node.  One informer thread keeps the names of the managed nodes
 * (those carrying the taint: translate_node_managed); requests, on the
 * server's threads, read them under the lock and make no API call.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "xmalloc.h"
#include "k8s.h"
#include "policy.h"
#include "admission.h"

/* The most schedulerNames one namespace may list. */
#define GUARD_NAMES (1 + 2 * GUARD_MAX_SCHEDULERS)

struct guard {
	pthread_mutex_t	     lock;
	json_t		    *nodes; /* name -> true, the managed ones */
	int		     synced;
	struct k8s_informer *inf;
	const char *const   *allowed;  /* NULL-ended, or NULL */
	const char *const   *extender; /* NULL-ended, or NULL */
};

/* Runs on the informer's thread. */
static void
guard_node_cb(enum k8s_watch_type type, json_t *obj, void *arg)
{
	struct guard *g = arg;
	const char   *name;
	int	      managed;

	if (type == K8S_WATCH_SYNCED) {
		pthread_mutex_lock(&g->lock);
		g->synced = 1;
		pthread_mutex_unlock(&g->lock);
		log_info("synced, %zu managed nodes",
		    json_object_size(g->nodes));
		return;
	}
	if ((type != K8S_WATCH_ADDED && type != K8S_WATCH_MODIFIED &&
		type != K8S_WATCH_DELETED) ||
	    (name = k8s_obj_name(obj)) == NULL) {
		json_decref(obj);
		return;
	}
	managed = type != K8S_WATCH_DELETED && translate_node_managed(obj);
	pthread_mutex_lock(&g->lock);
	if (managed)
		json_object_set_new(g->nodes, name, json_true());
	else
		json_object_del(g->nodes, name);
	pthread_mutex_unlock(&g->lock);
	json_decref(obj);
}

struct guard *
guard_new(const struct k8s_config *kconf, const char *const *allowed,
    const char *const *extender)
{
	struct guard		*g = xcalloc(1, sizeof(*g));
	struct k8s_informer_opts opts;

	pthread_mutex_init(&g->lock, NULL);
	g->nodes = json_object();
	g->allowed = allowed;
	g->extender = extender;
	if (kconf == NULL) {
		g->synced = 1;
		return (g);
	}
	memset(&opts, 0, sizeof(opts));
	opts.path = "/api/v1/nodes";
	opts.name = "watch/nodes";
	g->inf = k8s_informer_new(kconf, &opts, guard_node_cb, g);
	return (g);
}

int
guard_start(struct guard *g)
{
	return (g->inf != NULL ? k8s_informer_start(g->inf) : 0);
}

void
guard_free(struct guard *g)
{
	if (g == NULL)
		return;
	if (g->inf != NULL) {
		k8s_informer_stop(g->inf);
		k8s_informer_free(g->inf);
	}
	json_decref(g->nodes);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

void
guard_node_put(struct guard *g, const json_t *node)
{
	guard_node_cb(K8S_WATCH_ADDED, json_deep_copy(node), g);
}

/* 1 if the node is managed, 0 if not, -1 before the first list. */
static int
guard_node_managed(struct guard *g, const char *name)
{
	int managed;

	if (g == NULL)
		return (0);
	pthread_mutex_lock(&g->lock);
	managed = !g->synced ? -1 : json_object_get(g->nodes, name) != NULL;
	pthread_mutex_unlock(&g->lock);
	return (managed);
}

int
guard_toleration(const json_t *pod, const char *taint_effect)
{
	const json_t *t;
	const char   *key, *effect;
	size_t	      i;

	json_array_foreach (k8s_obj_get(pod, "spec.tolerations"), i, t) {
		key = json_string_value(json_object_get(t, "key"));
		effect = json_string_value(json_object_get(t, "effect"));
		/*
		 * The key, with any operator and value: the taint's value is
		 * the bridge's to choose, and so is its effect (either one
		 * of NoSchedule and NoExecute: managedTaintEffect may
		 * change).  An empty key is valid only with Exists, which
		 * then tolerates every taint of its effect, or of every
		 * effect when it names none.
		 */
		if (key != NULL && strcmp(key, MANAGED_TAINT_KEY) == 0) {
			if (effect == NULL || *effect == '\0' ||
			    strcmp(effect, "NoSchedule") == 0 ||
			    strcmp(effect, "NoExecute") == 0)
				return ((int)i);
			continue;
		}
		if ((key == NULL || *key == '\0') &&
		    (effect == NULL || *effect == '\0' ||
			strcmp(effect, taint_effect) == 0))
			return ((int)i);
	}
	return (-1);
}

static int
guard_listed(const char *const *names, const char *name)
{
	size_t i;

	for (i = 0; names != NULL && names[i] != NULL; i++)
		if (strcmp(names[i], name) == 0)
			return (1);
	return (0);
}

/*
 * Does the bridge place the pods of namespace ns (the webhook's label, or
 * the config's managedNamespaces and managedNamespaceSelector)?  Then a
 * scheduler calling slurm-bridge as its extender places them through Slurm.
 */
static int
guard_ns_managed(const struct review_conf *rc, const char *ns)
{
	json_t	   *obj;
	const char *v;
	int	    managed;

	if (ns == NULL)
		return (0);
	if (guard_listed((const char *const *)rc->config->managed_namespaces,
		ns))
		return (1);
	if ((obj = owners_get(rc->owners, OWN_NAMESPACE, NULL, ns,
		 rc->owner_wait_ms)) == NULL)
		return (0);
	v = k8s_obj_label(obj, BRIDGE_NS_LABEL);
	managed = (v != NULL && strcmp(v, BRIDGE_NS_LABEL_VALUE) == 0) ||
	    (rc->config->managed_namespace_selector != NULL &&
		k8s_selector_matches(rc->config->managed_namespace_selector,
		    k8s_obj_get(obj, "metadata.labels")) == 1);
	json_decref(obj);
	return (managed);
}

/* Adds the names in add not yet in names[0..*n) (NULL-ended after). */
static void
guard_names_add(const char **names, size_t *n, const char *const *add)
{
	size_t i;

	for (i = 0; add != NULL && add[i] != NULL && *n < GUARD_NAMES; i++) {
		names[*n] = NULL;
		if (!guard_listed(names, add[i]))
			names[(*n)++] = add[i];
	}
	names[*n] = NULL;
}

/*
 * Writes the schedulerNames that may tolerate the taint in namespace ns
 * into b ("a", "a or b", "a, b or c"); 1 if sched is one of them.
 */
static int
guard_schedulers(const struct review_conf *rc, const char *ns,
    const char *sched, struct buf *b)
{
	const struct guard *g = rc->guard;
	const char	   *names[GUARD_NAMES + 1];
	size_t		    i, n = 0;
	int		    ok = 0;

	names[n++] = rc->config->scheduler_name;
	names[n] = NULL;
	if (g != NULL) {
		guard_names_add(names, &n, g->allowed);
		if (g->extender != NULL && g->extender[0] != NULL &&
		    guard_ns_managed(rc, ns))
			guard_names_add(names, &n, g->extender);
	}
	for (i = 0; i < n; i++) {
		if (sched != NULL && strcmp(names[i], sched) == 0)
			ok = 1;
		if (i > 0)
			buf_addstr(b, i + 1 == n ? " or " : ", ");
		buf_addstr(b, names[i]);
	}
	return (ok);
}

void
guard_pod(const json_t *req, const json_t *pod, const struct review_conf *rc,
    struct review_result *r)
{
	const char   *op = json_string_value(json_object_get(req, "operation"));
	const char   *node = k8s_obj_str(pod, "spec.nodeName");
	const char   *sched = k8s_obj_str(pod, "spec.schedulerName");
	const char   *ns = k8s_obj_namespace(pod);
	const json_t *t;
	const char   *key, *effect;
	struct buf    names;
	int	      i, create = op != NULL && strcmp(op, "CREATE") == 0;

	/* On UPDATE spec.nodeName is the Binding's, which the API checks. */
	if (create && node != NULL && *node != '\0') {
		switch (guard_node_managed(rc->guard, node)) {
		case 1:
			validate_deny(r,
			    "spec.nodeName: node %s is managed by Slurm (it "
			    "has the taint " MANAGED_TAINT_KEY "), and a pod "
			    "created with spec.nodeName is placed by no "
			    "scheduler, so Slurm would not know it runs "
			    "there; leave spec.nodeName unset and set "
			    "schedulerName: %s to run on Slurm's nodes "
			    "through Slurm",
			    node, rc->config->scheduler_name);
			return;
		case -1:
			validate_deny(r,
			    "spec.nodeName: the webhook has not listed the "
			    "nodes yet, so it cannot tell whether node %s is "
			    "managed by Slurm; retry in a few seconds",
			    node);
			return;
		}
	}
	if ((i = guard_toleration(pod, rc->config->taint_effect)) == -1)
		return;
	/* Tolerations are only ever added: an old one stays allowed. */
	if (!create &&
	    guard_toleration(json_object_get(req, "oldObject"),
		rc->config->taint_effect) != -1)
		return;
	buf_init(&names);
	if (guard_schedulers(rc, ns, sched, &names)) {
		buf_cleanup(&names);
		return;
	}
	t = json_array_get(k8s_obj_get(pod, "spec.tolerations"), (size_t)i);
	key = json_string_value(json_object_get(t, "key"));
	effect = json_string_value(json_object_get(t, "effect"));
	if (key != NULL && *key != '\0')
		validate_deny(r,
		    "spec.tolerations[%d]: tolerates " MANAGED_TAINT_KEY
		    ", which only pods scheduled by slurm-bridge may "
		    "(schedulerName: %s; this pod has %s); remove the "
		    "toleration or let slurm-bridge schedule the pod",
		    i, names.data, sched != NULL ? sched : "none");
	else
		validate_deny(r,
		    "spec.tolerations[%d]: tolerates every%s%s taint, " MANAGED_TAINT_KEY
		    " among them, which only pods "
		    "scheduled by slurm-bridge may (schedulerName: %s; this "
		    "pod has %s); tolerate only the taints the pod needs, by "
		    "key, or let slurm-bridge schedule the pod",
		    i, effect != NULL && *effect != '\0' ? " " : "",
		    effect != NULL && *effect != '\0' ? effect : "", names.data,
		    sched != NULL ? sched : "none");
	buf_cleanup(&names);
}
