/*
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's
 * semantics: a candidate takes the lease only when it is free or when its
 * record has not changed for leaseDurationSeconds by the candidate's own
 * monotonic clock (so clock skew between hosts does not matter), writes go
 * through resourceVersion preconditions (a lost race is a 409), and a holder
 * that could not renew within the renew deadline stops considering itself
 * leader before anyone else may take over.  Runs on the caller's thread.
 */
#include <sys/time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "internal.h"

struct k8s_lease {
	struct k8s_client *client;
	char		  *ns;
	char		  *name;
	char		  *identity;
	int		   duration;
	int		   renew_deadline;
	int		   retry_period;
	int		   held;
	double		   last_renew; /* monotonic s of last renewal */
	char		  *obs_holder; /* last observed record */
	char		  *obs_renew;
	double		   obs_time; /* when it last changed */
};

static double
lease_mono(void)
{
	return (clock_seconds(CLOCK_MONOTONIC));
}

struct k8s_lease *
k8s_lease_new(struct k8s_client *c, const struct k8s_lease_opts *o)
{
	struct k8s_lease *l;

	l = xcalloc(1, sizeof(*l));
	l->client = c;
	l->ns = xstrdup(o->ns);
	l->name = xstrdup(o->name);
	l->identity = xstrdup(o->identity);
	l->duration = o->duration_s > 0 ? o->duration_s : 15;
	l->renew_deadline = o->renew_deadline_s > 0 ? o->renew_deadline_s : 10;
	l->retry_period = o->retry_period_s > 0 ? o->retry_period_s : 2;
	return (l);
}

void
k8s_lease_free(struct k8s_lease *l)
{
	if (l == NULL)
		return;
	free(l->ns);
	free(l->name);
	free(l->identity);
	free(l->obs_holder);
	free(l->obs_renew);
	free(l);
}

int
k8s_lease_held(const struct k8s_lease *l)
{
	return (l->held);
}

int
k8s_lease_retry_period(const struct k8s_lease *l)
{
	return (l->retry_period);
}

const char *
k8s_lease_holder(const struct k8s_lease *l)
{
	return (l->obs_holder);
}

static int
str_differs(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return (a != b);
	return (strcmp(a, b) != 0);
}

/* Remembers the record and when it last changed. */
static void
lease_observe(struct k8s_lease *l, const char *holder, const char *renew)
{
	if (l->obs_time == 0 || str_differs(holder, l->obs_holder) ||
	    str_differs(renew, l->obs_renew)) {
		free(l->obs_holder);
		free(l->obs_renew);
		l->obs_holder = holder != NULL ? xstrdup(holder) : NULL;
		l->obs_renew = renew != NULL ? xstrdup(renew) : NULL;
		l->obs_time = lease_mono();
	}
}

/* Handles a failed write or read: a holder past its deadline steps down. */
static int
lease_failed(struct k8s_lease *l)
{
	if (l->held && lease_mono() - l->last_renew > l->renew_deadline)
		l->held = 0;
	return (-1);
}

/*
 * The outcome of a create or update of the lease record: a 409 means
 * another candidate wrote first, so we do not hold it.
 */
static int
lease_written(struct k8s_lease *l, int rc, const char *now,
    struct k8s_error *err)
{
	if (rc == -1) {
		if (err->status == 409) {
			l->held = 0;
			return (0);
		}
		return (lease_failed(l));
	}
	l->held = 1;
	l->last_renew = lease_mono();
	lease_observe(l, l->identity, now);
	return (1);
}

int
k8s_lease_step(struct k8s_lease *l, struct k8s_error *err)
{
	json_t	   *cur = NULL, *spec, *body;
	char	   *path, *cpath, now[64];
	const char *holder, *renew;
	json_int_t  trans;
	int	    rc, mine;

	xasprintf(&cpath, "/apis/coordination.k8s.io/v1/namespaces/%s/leases",
	    l->ns);
	xasprintf(&path, "%s/%s", cpath, l->name);
	k8s_microtime(now, sizeof(now), NULL);
	if (k8s_get(l->client, path, &cur, err) == -1) {
		if (err->status != 404) {
			rc = lease_failed(l);
			goto done;
		}
		body = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:i, s:s, "
				 "s:s, s:i}}",
		    "apiVersion", "coordination.k8s.io/v1", "kind", "Lease",
		    "metadata", "name", l->name, "namespace", l->ns, "spec",
		    "holderIdentity", l->identity, "leaseDurationSeconds",
		    l->duration, "acquireTime", now, "renewTime", now,
		    "leaseTransitions", 0);
		rc = lease_written(l,
		    k8s_create(l->client, cpath, body, NULL, err), now, err);
		json_decref(body);
		goto done;
	}
	spec = json_object_get(cur, "spec");
	holder = json_string_value(json_object_get(spec, "holderIdentity"));
	renew = json_string_value(json_object_get(spec, "renewTime"));
	trans = json_integer_value(json_object_get(spec, "leaseTransitions"));
	lease_observe(l, holder, renew);
	mine = holder != NULL && strcmp(holder, l->identity) == 0;
	if (!mine && holder != NULL && *holder != '\0' &&
	    lease_mono() - l->obs_time < l->duration) {
		/* Another candidate holds a live lease. */
		l->held = 0;
		rc = 0;
		goto done;
	}
	/* Ours to renew, or free, or expired: write it with the RV we read. */
	if (spec == NULL) {
		spec = json_object();
		json_object_set_new(cur, "spec", spec);
	}
	json_object_set_new(spec, "holderIdentity", json_string(l->identity));
	json_object_set_new(spec, "leaseDurationSeconds",
	    json_integer(l->duration));
	json_object_set_new(spec, "renewTime", json_string(now));
	if (!mine) {
		json_object_set_new(spec, "acquireTime", json_string(now));
		json_object_set_new(spec, "leaseTransitions",
		    json_integer(trans + 1));
	}
	rc = lease_written(l, k8s_update(l->client, path, cur, NULL, err), now,
	    err);
done:
	json_decref(cur);
	free(path);
	free(cpath);
	return (rc);
}

int
k8s_lease_release(struct k8s_lease *l, struct k8s_error *err)
{
	json_t	   *cur = NULL, *spec;
	char	   *path, now[64];
	const char *holder;
	int	    rc = -1;

	if (!l->held)
		return (0);
	xasprintf(&path,
	    "/apis/coordination.k8s.io/v1/namespaces/%s/"
	    "leases/%s",
	    l->ns, l->name);
	if (k8s_get(l->client, path, &cur, err) == -1)
		goto done;
	spec = json_object_get(cur, "spec");
	holder = json_string_value(json_object_get(spec, "holderIdentity"));
	l->held = 0;
	if (holder == NULL || strcmp(holder, l->identity) != 0) {
		rc = 0; /* someone else holds it already */
		goto done;
	}
	k8s_microtime(now, sizeof(now), NULL);
	/* An empty holder lets a follower acquire at once. */
	json_object_set_new(spec, "holderIdentity", json_string(""));
	json_object_set_new(spec, "leaseDurationSeconds", json_integer(1));
	json_object_set_new(spec, "renewTime", json_string(now));
	rc = k8s_update(l->client, path, cur, NULL, err);
done:
	json_decref(cur);
	free(path);
	return (rc);
}
