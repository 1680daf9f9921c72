/*
 * The per-namespace bounds (bounds.h): one rule both daemons link.  Each
 * key's allow-list is the Namespace's annotation when it has one, else the
 * config's, else open; a refusal names the annotation, the value, what is
 * allowed and where that list was set.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "policy.h"
#include "bounds.h"

void
bounds_init(struct bounds *b)
{
	memset(b, 0, sizeof(*b));
	b->min_uid = BOUNDS_MIN_UID;
	b->slurm_user = xstrdup(BOUNDS_SLURM_USER);
}

void
bounds_cleanup(struct bounds *b)
{
	free(b->accounts);
	free(b->partitions);
	free(b->qos);
	free(b->reservations);
	free(b->users);
	free(b->groups);
	free(b->priority);
	free(b->slurm_user);
	memset(b, 0, sizeof(*b));
}

/* Is v in the comma-separated list (blanks around items ignored)? */
static int
bounds_listed(const char *list, const char *v)
{
	const char *p = list, *end;
	size_t	    n = strlen(v);

	while (*p != '\0') {
		while (*p == ' ' || *p == ',')
			p++;
		for (end = p; *end != '\0' && *end != ','; end++)
			;
		while (end > p && end[-1] == ' ')
			end--;
		if ((size_t)(end - p) == n && n > 0 && strncmp(p, v, n) == 0)
			return (1);
		p = end;
		while (*p != '\0' && *p != ',')
			p++;
	}
	return (0);
}

/* "N": one whole number from 1 to 2147483646, advancing *s. */
static int
bounds_prio(const char **s, unsigned long *out)
{
	char *end;

	if (!isdigit((unsigned char)**s))
		return (-1);
	errno = 0;
	*out = strtoul(*s, &end, 10);
	if (errno != 0 || *out < 1 || *out > 0x7ffffffe)
		return (-1);
	*s = end;
	return (0);
}

/* "N" or "MIN-MAX" into lo and hi; -1 when it is neither. */
static int
bounds_range(const char *s, unsigned long *lo, unsigned long *hi)
{
	if (bounds_prio(&s, lo) == -1)
		return (-1);
	*hi = *lo;
	if (*s == '-') {
		s++;
		if (bounds_prio(&s, hi) == -1 || *hi < *lo)
			return (-1);
	}
	return (*s == '\0' ? 0 : -1);
}

int
bounds_range_valid(const char *s)
{
	unsigned long lo, hi;

	return (bounds_range(s, &lo, &hi) == 0);
}

/* One key's list and where it came from. */
struct bound {
	const char *ann;    /* the pod's annotation, after ANN_PREFIX */
	const char *nsann;  /* the Namespace's annotation */
	const char *config; /* the config's key */
	const char *list;   /* NULL: open */
	char	    where[128];
};

static void
bounds_pick(struct bound *k, const json_t *nsobj, const char *ns,
    const char *deflist)
{
	const char *v = nsobj != NULL ? k8s_obj_annotation(nsobj, k->nsann) :
					NULL;

	if (v != NULL) {
		k->list = v;
		snprintf(k->where, sizeof(k->where),
		    "namespace %s's annotation %s", ns, k->nsann);
	} else {
		k->list = deflist;
		snprintf(k->where, sizeof(k->where), "the config's bounds.%s",
		    k->config);
	}
}

/*
 * value (NULL: not asked) against k's list.  must: a value is required
 * once a list is set (accounts, partitions).
 */
static int
bounds_one(const struct bound *k, const char *value, const char *ns, int must,
    char *err, size_t errlen)
{
	if (k->list == NULL || (value == NULL && !must))
		return (0);
	if (value == NULL) {
		snprintf(err, errlen,
		    "namespace %s allows only the values \"%.96s\" of "
		    "annotation " ANN_PREFIX "%s (set by %s); set it to one "
		    "of them",
		    ns, k->list, k->ann, k->where);
		return (-1);
	}
	if (!bounds_listed(k->list, value)) {
		snprintf(err, errlen,
		    "annotation " ANN_PREFIX "%s: \"%.64s\" is not allowed in "
		    "namespace %s; allowed: \"%.96s\" (set by %s)",
		    k->ann, value, ns, k->list, k->where);
		return (-1);
	}
	return (0);
}

/* The owner annotation (user-id or group-id) as written. */
static const char *
bounds_ident(char *buf, size_t len, const char *name, uint32_t id, int has)
{
	if (!has)
		return (NULL);
	if (name != NULL)
		return (name);
	snprintf(buf, len, "%u", id);
	return (buf);
}

/*
 * Root, the Slurm user, and uids below the minimum (unless users lists
 * them), by name or number: what the annotation says, before any lookup.
 */
static int
bounds_owner(const struct bounds *d, const struct bound *users,
    const struct jobspec *js, char *err, size_t errlen)
{
	const char *slurm = d->slurm_user != NULL ? d->slurm_user :
						    BOUNDS_SLURM_USER;
	char	    buf[16];
	int	    bad;

	if (js->has_user_id) {
		if (js->user_name != NULL)
			bad = strcmp(js->user_name, "root") == 0 ||
			    strcmp(js->user_name, slurm) == 0;
		else
			bad = js->user_id == 0 ||
			    (users->list == NULL && js->user_id < d->min_uid);
		if (bad) {
			snprintf(err, errlen,
			    "annotation " ANN_PREFIX "user-id: \"%s\" is not "
			    "allowed: jobs never run as root or as the Slurm "
			    "user (%s), nor as a user id below %u unless the "
			    "namespace lists it in " ANN_ALLOWED_USERS,
			    bounds_ident(buf, sizeof(buf), js->user_name,
				js->user_id, 1),
			    slurm, d->min_uid);
			return (-1);
		}
	}
	if (js->has_group_id &&
	    (js->group_name != NULL ? strcmp(js->group_name, "root") == 0 :
				      js->group_id == 0)) {
		snprintf(err, errlen,
		    "annotation " ANN_PREFIX "group-id: \"%s\" is not allowed: "
		    "jobs never run in the root group (0)",
		    bounds_ident(buf, sizeof(buf), js->group_name, js->group_id,
			1));
		return (-1);
	}
	return (0);
}

int
bounds_check(const struct bounds *defaults, const json_t *nsobj, const char *ns,
    struct jobspec *js, char *err, size_t errlen)
{
	struct bounds builtin;
	struct bound acc = { "account", ANN_ALLOWED_ACCOUNTS, "allowedAccounts",
		NULL, "" },
		     part = { "partition", ANN_ALLOWED_PARTITIONS,
			     "allowedPartitions", NULL, "" },
		     qos = { "qos", ANN_ALLOWED_QOS, "allowedQOS", NULL, "" },
		     resv = { "reservation", ANN_ALLOWED_RESERVATIONS,
			     "allowedReservations", NULL, "" },
		     users = { "user-id", ANN_ALLOWED_USERS, "allowedUsers",
			     NULL, "" },
		     groups = { "group-id", ANN_ALLOWED_GROUPS, "allowedGroups",
			     NULL, "" },
		     prio = { "priority", ANN_ALLOWED_PRIORITY,
			     "allowedPriority", NULL, "" };
	unsigned long lo, hi;
	char	      ubuf[16], gbuf[16];
	int	      rc = -1;

	bounds_init(&builtin);
	if (defaults == NULL)
		defaults = &builtin;
	bounds_pick(&acc, nsobj, ns, defaults->accounts);
	bounds_pick(&part, nsobj, ns, defaults->partitions);
	bounds_pick(&qos, nsobj, ns, defaults->qos);
	bounds_pick(&resv, nsobj, ns, defaults->reservations);
	bounds_pick(&users, nsobj, ns, defaults->users);
	bounds_pick(&groups, nsobj, ns, defaults->groups);
	bounds_pick(&prio, nsobj, ns, defaults->priority);
	if (bounds_one(&acc, js->account, ns, 1, err, errlen) == -1 ||
	    bounds_one(&part, js->partition, ns, 1, err, errlen) == -1 ||
	    bounds_one(&qos, js->qos, ns, 0, err, errlen) == -1 ||
	    bounds_one(&resv, js->reservation, ns, 0, err, errlen) == -1 ||
	    bounds_owner(defaults, &users, js, err, errlen) == -1 ||
	    bounds_one(&users,
		bounds_ident(ubuf, sizeof(ubuf), js->user_name, js->user_id,
		    js->has_user_id),
		ns, 0, err, errlen) == -1 ||
	    bounds_one(&groups,
		bounds_ident(gbuf, sizeof(gbuf), js->group_name, js->group_id,
		    js->has_group_id),
		ns, 0, err, errlen) == -1)
		goto out;
	if (js->priority != 0) {
		if (prio.list == NULL) {
			snprintf(err, errlen,
			    "annotation " ANN_PREFIX "priority: \"%u\" is not "
			    "allowed in namespace %s, which allows no "
			    "priority (an admin allows a range, e.g. "
			    "\"1-1000\", with " ANN_ALLOWED_PRIORITY ")",
			    js->priority, ns);
			goto out;
		}
		if (bounds_range(prio.list, &lo, &hi) == -1) {
			snprintf(err, errlen,
			    "%s: \"%.32s\" is not a priority range "
			    "(N or MIN-MAX, from 1 to 2147483646), so no "
			    "priority is allowed in namespace %s",
			    prio.where, prio.list, ns);
			goto out;
		}
		if (js->priority < lo || js->priority > hi) {
			snprintf(err, errlen,
			    "annotation " ANN_PREFIX "priority: \"%u\" is not "
			    "allowed in namespace %s; allowed: %lu to %lu "
			    "(set by %s)",
			    js->priority, ns, lo, hi, prio.where);
			goto out;
		}
	}
	js->min_uid = defaults->min_uid;
	js->owner_listed = users.list != NULL && js->has_user_id;
	rc = 0;
out:
	bounds_cleanup(&builtin);
	return (rc);
}

/* One field of a job in Slurm against k's list (NULL or "": not set). */
static int
bounds_job_one(const struct bound *k, const char *field, const char *value,
    const char *ns, char *err, size_t errlen)
{
	if (k->list == NULL || value == NULL || *value == '\0' ||
	    bounds_listed(k->list, value))
		return (0);
	snprintf(err, errlen,
	    "its %s in Slurm is now \"%.64s\", which namespace %s does not "
	    "allow (allowed: \"%.96s\", set by %s)",
	    field, value, ns, k->list, k->where);
	return (-1);
}

int
bounds_check_job(const struct bounds *defaults, const json_t *nsobj,
    const char *ns, const char *partition, const char *account, const char *qos,
    char *err, size_t errlen)
{
	struct bounds builtin;
	struct bound acc = { "account", ANN_ALLOWED_ACCOUNTS, "allowedAccounts",
		NULL, "" },
		     part = { "partition", ANN_ALLOWED_PARTITIONS,
			     "allowedPartitions", NULL, "" },
		     qos_b = { "qos", ANN_ALLOWED_QOS, "allowedQOS", NULL, "" };
	int rc;

	bounds_init(&builtin);
	if (defaults == NULL)
		defaults = &builtin;
	bounds_pick(&acc, nsobj, ns, defaults->accounts);
	bounds_pick(&part, nsobj, ns, defaults->partitions);
	bounds_pick(&qos_b, nsobj, ns, defaults->qos);
	/* Slurm lists a job's partitions comma-separated: each must do. */
	rc = bounds_job_one(&acc, "account", account, ns, err, errlen) == -1 ||
		bounds_job_one(&qos_b, "QOS", qos, ns, err, errlen) == -1 ?
	    -1 :
	    0;
	if (rc == 0 && partition != NULL && part.list != NULL) {
		char *copy = xstrdup(partition), *p, *save = NULL;

		for (p = strtok_r(copy, ",", &save); p != NULL && rc == 0;
		     p = strtok_r(NULL, ",", &save))
			rc = bounds_job_one(&part, "partition", p, ns, err,
			    errlen);
		free(copy);
	}
	bounds_cleanup(&builtin);
	return (rc);
}

int
bounds_check_ids(const struct jobspec *js, uint32_t uid, uint32_t gid,
    uint32_t slurm_uid, char *err, size_t errlen)
{
	if (js->has_user_id &&
	    (uid == 0 || uid == slurm_uid ||
		(uid < js->min_uid && !js->owner_listed))) {
		snprintf(err, errlen,
		    "annotation " ANN_PREFIX
		    "user-id: \"%s\" is user %u on the "
		    "scheduler's host, which is not allowed: jobs never run as "
		    "root or as SlurmUser (uid %u), nor as a user id below %u "
		    "unless the namespace lists it in " ANN_ALLOWED_USERS,
		    js->user_name != NULL ? js->user_name : "?", uid, slurm_uid,
		    js->min_uid);
		return (-1);
	}
	if ((js->has_group_id || js->has_user_id) && gid == 0) {
		snprintf(err, errlen,
		    "annotation " ANN_PREFIX "%s: the job's group is root (0) "
		    "on the scheduler's host, which is not allowed",
		    js->has_group_id ? "group-id" : "user-id");
		return (-1);
	}
	return (0);
}
