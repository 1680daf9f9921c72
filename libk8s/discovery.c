/*
 * API discovery: which version of an API group serves a resource.  Alpha
 * and beta APIs (scheduling.k8s.io's Workload and PodGroup) move from
 * version to version between releases, and are served only where the
 * cluster turned them on: the daemons ask, rather than hard-code one.
 */
#include <stdio.h>
#include <string.h>

#include "k8s.h"

/* Does /apis/group/version list resource?  1, 0, or -1 with err. */
static int
discovery_has(struct k8s_client *c, const char *group, const char *version,
    const char *resource, struct k8s_error *err)
{
	const json_t *r;
	json_t	     *list = NULL;
	char	      path[512];
	size_t	      i;
	int	      found = 0;

	snprintf(path, sizeof(path), "/apis/%s/%s", group, version);
	if (k8s_get(c, path, &list, err) == -1)
		return (err->status == 404 ? 0 : -1);
	json_array_foreach (json_object_get(list, "resources"), i, r) {
		const char *name = json_string_value(
		    json_object_get(r, "name"));

		if (name != NULL && strcmp(name, resource) == 0)
			found = 1;
	}
	json_decref(list);
	return (found);
}

int
k8s_discover(struct k8s_client *c, const char *group, const char *resource,
    char *version, size_t len, struct k8s_error *err)
{
	const json_t *v, *pref;
	json_t	     *grp = NULL;
	const char   *gv;
	char	      path[256];
	size_t	      i;
	int	      rc = 0, has;

	snprintf(path, sizeof(path), "/apis/%s", group);
	if (k8s_get(c, path, &grp, err) == -1)
		return (err->status == 404 ? 0 : -1);
	/* The preferred version first, then the others in the server's order. */
	pref = json_object_get(grp, "preferredVersion");
	gv = json_string_value(json_object_get(pref, "version"));
	if (gv != NULL &&
	    (has = discovery_has(c, group, gv, resource, err)) != 0) {
		rc = has;
		goto done;
	}
	json_array_foreach (json_object_get(grp, "versions"), i, v) {
		const char *ver = json_string_value(
		    json_object_get(v, "version"));

		if (ver == NULL || (gv != NULL && strcmp(ver, gv) == 0))
			continue;
		if ((rc = discovery_has(c, group, ver, resource, err)) != 0) {
			gv = ver;
			goto done;
		}
	}
done:
	if (rc == 1)
		snprintf(version, len, "%s", gv);
	json_decref(grp);
	return (rc);
}
