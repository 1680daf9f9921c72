/*
 * slurm-bridge-admission --uninstall: what the in-cluster install made at
 * run time rather than through its manifests, removed after them (the
 * chart's post-delete hook): the TLS Secrets of --issue-certs, the
 * scheduler's leader-election Lease, and the managed-node taint on the
 * nodes this install tainted (annotated ANN_TAINTED_BY with its name; a
 * node another install tainted keeps it).  Whatever is gone already is
 * fine.
 */
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "k8s.h"
#include "policy.h"

#include "log.h"
#include "admission.h"

/* DELETE path; 0 when done or absent, -1 otherwise (logged). */
static int
uninstall_delete(struct k8s_client *c, const char *path)
{
	struct k8s_error err;

	if (k8s_delete(c, path, NULL, &err) == 0) {
		log_info("uninstall: deleted %s", path);
		return (0);
	}
	if (err.status == 404)
		return (0);
	log_warnx("uninstall: delete %s: %ld %s: %s", path, err.status,
	    err.reason, err.text);
	return (-1);
}

/*
 * Takes the managed-node taint and the ANN_TAINTED_BY annotation off each
 * node whose annotation names install; the node's other taints stay (the
 * list goes back with the node's resourceVersion).  0, or -1 (logged).
 */
static int
uninstall_untaint(struct k8s_client *c, const char *install)
{
	struct k8s_error err;
	json_t		*list = NULL, *taints, *patch;
	const json_t	*node;
	const char	*by, *name;
	char		 path[512];
	size_t		 i;
	int		 rc = 0;

	if (k8s_get(c, "/api/v1/nodes", &list, &err) == -1) {
		log_warnx("uninstall: list nodes: %ld %s: %s", err.status,
		    err.reason, err.text);
		return (-1);
	}
	json_array_foreach (json_object_get(list, "items"), i, node) {
		by = k8s_obj_annotation(node, ANN_TAINTED_BY);
		if (by == NULL || strcmp(by, install) != 0)
			continue;
		name = k8s_obj_name(node);
		taints = translate_node_taints(node, NULL);
		patch = json_pack("{s:{s:s?, s:{s:n}}, s:{s:o}}", "metadata",
		    "resourceVersion",
		    k8s_obj_str(node, "metadata.resourceVersion"),
		    "annotations", ANN_TAINTED_BY, "spec", "taints", taints);
		snprintf(path, sizeof(path), "/api/v1/nodes/%s", name);
		if (k8s_patch(c, path, K8S_PATCH_MERGE, patch, NULL, &err) == 0)
			log_info(
			    "uninstall: node %s: took off the taint " MANAGED_TAINT_KEY
			    " of install %s",
			    name, install);
		else {
			log_warnx("uninstall: node %s: untaint: %ld %s: %s",
			    name, err.status, err.reason, err.text);
			rc = -1;
		}
		json_decref(patch);
	}
	json_decref(list);
	return (rc);
}

int
uninstall_run(const struct k8s_config *kconf, const char *ns,
    const struct config *config)
{
	static const char *const secrets[] = { CERTS_SECRET_ADMISSION,
		CERTS_SECRET_BRIDGE, CERTS_SECRET_CLIENT, CERTS_SECRET_CA };
	struct k8s_client	*c;
	struct k8s_error	 kerr;
	char			 path[512], install[128];
	size_t			 i;
	int			 rc = 0;

	if ((c = k8s_client_new(kconf, &kerr)) == NULL) {
		log_warnx("uninstall: %s", kerr.text);
		return (-1);
	}
	for (i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s",
		    ns, secrets[i]);
		if (uninstall_delete(c, path) == -1)
			rc = -1;
	}
	snprintf(path, sizeof(path),
	    "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", ns,
	    UNINSTALL_LEASE);
	if (uninstall_delete(c, path) == -1)
		rc = -1;
	daemon_install_name(kconf, config, config->scheduler_name, install,
	    sizeof(install));
	if (uninstall_untaint(c, install) == -1)
		rc = -1;
	k8s_client_free(c);
	return (rc);
}
