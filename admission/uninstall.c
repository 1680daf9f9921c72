/*
 * slurm-bridge-admission --uninstall: what the in-cluster install made at
 * run time rather than through its manifests, removed after them (the
 * chart's post-delete hook): the TLS Secrets of --issue-certs and the
 * scheduler's leader-election Lease.  Whatever is gone already is fine.
 */
#include <stdio.h>

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

int
uninstall_run(const struct k8s_config *kconf, const char *ns)
{
	static const char *const secrets[] = { CERTS_SECRET_ADMISSION,
		CERTS_SECRET_BRIDGE, CERTS_SECRET_CLIENT, CERTS_SECRET_CA };
	struct k8s_client	*c;
	struct k8s_error	 kerr;
	char			 path[512];
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
	k8s_client_free(c);
	return (rc);
}
