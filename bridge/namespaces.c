/*
 * Which namespaces the bridge schedules in: one labelled
 * slurm-bridge=enabled, or one the config's managedNamespaces or
 * managedNamespaceSelector names.  Reconcile thread.
 *
 * Threads: reconcile.
 */
#include <string.h>

#include "bridge.h"

int
namespaces_enabled(struct reconcile *r, const char *ns)
{
	json_t	   *obj = map_get(r->namespaces, ns);
	const char *v;
	size_t	    i;

	if (obj == NULL)
		return (0);
	v = k8s_obj_label(obj, BRIDGE_NS_LABEL);
	if (v != NULL && strcmp(v, BRIDGE_NS_LABEL_VALUE) == 0)
		return (1);
	/* The config's (compat) managedNamespaces and selector. */
	for (i = 0; r->conf->managed_namespaces != NULL &&
	     r->conf->managed_namespaces[i] != NULL;
	     i++)
		if (strcmp(r->conf->managed_namespaces[i], ns) == 0)
			return (1);
	return (r->conf->managed_namespace_selector != NULL &&
	    k8s_selector_matches(r->conf->managed_namespace_selector,
		k8s_obj_get(obj, "metadata.labels")) == 1);
}
