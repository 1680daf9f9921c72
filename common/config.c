/*
 * The configuration file, read by libk8s's YAML loader (yamldoc.h) into a
 * tree that keeps each node's line, then walked key by key into struct
 * config.  Unknown keys, wrong types and bad values are errors naming the
 * file, line, key and the expected form.  Runs once, on main's thread,
 * before any other.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xmalloc.h"
#include "k8s.h"
#include "yamldoc.h"
#include "config.h"
#include "policy.h"

#define CONFIG_MAX_DEPTH 16
#define CONFIG_MAX_LIST	 1024

struct loader {
	const char *path;
	char	   *err;
	size_t	    errlen;
};

static int config_fail(struct loader *l, size_t line, const char *key,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
config_fail(struct loader *l, size_t line, const char *key, const char *fmt,
    ...)
{
	va_list ap;
	char	msg[256];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (key != NULL)
		snprintf(l->err, l->errlen, "%s:%zu: %s: %s", l->path, line,
		    key, msg);
	else
		snprintf(l->err, l->errlen, "%s:%zu: %s", l->path, line, msg);
	return (-1);
}

/* The YAML loader's refusal, in the config file's words. */
static int
config_yaml_fail(struct loader *l, const struct yamldoc_error *ye)
{
	switch (ye->what) {
	case YAMLDOC_ERR_OPEN:
		snprintf(l->err, l->errlen, "%s: %s", l->path,
		    strerror(ye->errnum));
		return (-1);
	case YAMLDOC_ERR_EMPTY: /* not an error: config_load keeps defaults */
		break;
	case YAMLDOC_ERR_SYNTAX:
		return (config_fail(l, ye->line, NULL, "not YAML: %s",
		    ye->problem != NULL ? ye->problem : "parse error"));
	case YAMLDOC_ERR_DEPTH:
		return (config_fail(l, ye->line, NULL,
		    "nested deeper than %d levels", CONFIG_MAX_DEPTH));
	case YAMLDOC_ERR_ALIAS:
		return (config_fail(l, ye->line, NULL,
		    "anchors, aliases and tags are not supported"));
	case YAMLDOC_ERR_KEY:
		return (config_fail(l, ye->line, NULL,
		    "a key must be a plain string"));
	case YAMLDOC_ERR_DOCS:
		return (config_fail(l, ye->line, NULL,
		    "only one YAML document is allowed"));
	}
	return (-1);
}

static int
want_str(struct loader *l, const struct yamldoc_node *v, const char *key,
    size_t max, char **out)
{
	const char *s;

	/*
	 * Failures return a plain -1: the analyzer does not follow
	 * config_fail (variadic), and callers use *out when this returns 0.
	 */
	if (v->kind != YAMLDOC_SCALAR) {
		config_fail(l, v->line, key, "expected a string");
		return (-1);
	}
	for (s = v->scalar; *s != '\0'; s++) {
		if (!isprint((unsigned char)*s)) {
			config_fail(l, v->line, key,
			    "expected printable "
			    "ASCII");
			return (-1);
		}
	}
	if (*v->scalar == '\0' || strlen(v->scalar) > max) {
		config_fail(l, v->line, key, "expected 1 to %zu characters",
		    max);
		return (-1);
	}
	free(*out);
	*out = xstrdup(v->scalar);
	return (0);
}

static int
want_bool(struct loader *l, const struct yamldoc_node *v, const char *key,
    int *out)
{
	if (v->kind == YAMLDOC_SCALAR && v->plain &&
	    strcmp(v->scalar, "true") == 0)
		*out = 1;
	else if (v->kind == YAMLDOC_SCALAR && v->plain &&
	    strcmp(v->scalar, "false") == 0)
		*out = 0;
	else
		return (config_fail(l, v->line, key,
		    "expected true or "
		    "false"));
	return (0);
}

static int
want_int(struct loader *l, const struct yamldoc_node *v, const char *key,
    long min, long max, int *out)
{
	char *end;
	long  n;

	if (v->kind != YAMLDOC_SCALAR || !v->plain ||
	    !isdigit((unsigned char)v->scalar[0]))
		return (config_fail(l, v->line, key,
		    "expected a whole number "
		    "from %ld to %ld",
		    min, max));
	errno = 0;
	n = strtol(v->scalar, &end, 10);
	if (*end != '\0' || errno != 0 || n < min || n > max)
		return (config_fail(l, v->line, key,
		    "expected a whole number "
		    "from %ld to %ld",
		    min, max));
	*out = (int)n;
	return (0);
}

/* A duration: "250ms", "2s", or a bare number of milliseconds. */
static int
want_ms(struct loader *l, const struct yamldoc_node *v, const char *key,
    long min, long max, int *out)
{
	char *end;
	long  n;

	if (v->kind != YAMLDOC_SCALAR || !isdigit((unsigned char)v->scalar[0]))
		goto bad;
	errno = 0;
	n = strtol(v->scalar, &end, 10);
	if (errno != 0 || n > max)
		goto bad;
	if (strcmp(end, "s") == 0)
		n *= 1000;
	else if (*end != '\0' && strcmp(end, "ms") != 0)
		goto bad;
	if (n < min || n > max)
		goto bad;
	*out = (int)n;
	return (0);
bad:
	return (config_fail(l, v->line, key,
	    "expected a duration from %ldms "
	    "to %lds, e.g. 250ms or 2s",
	    min, max / 1000));
}

static int
want_str_list(struct loader *l, const struct yamldoc_node *v, const char *key,
    char ***out)
{
	size_t i;
	char **list;

	if (v->kind != YAMLDOC_SEQ || v->n > CONFIG_MAX_LIST)
		return (config_fail(l, v->line, key,
		    "expected a list of "
		    "strings"));
	list = xcalloc(v->n + 1, sizeof(*list));
	for (i = 0; i < v->n; i++) {
		if (want_str(l, v->vals[i], key, 253, &list[i]) == -1) {
			while (i-- > 0)
				free(list[i]);
			free(list);
			return (-1);
		}
	}
	if (*out != NULL)
		for (i = 0; (*out)[i] != NULL; i++)
			free((*out)[i]);
	free(*out);
	*out = list;
	return (0);
}

/* A mapping of plain strings, as a JSON object (a new reference). */
static json_t *
want_str_map(struct loader *l, const struct yamldoc_node *v, const char *key)
{
	json_t *m;
	size_t	i;

	if (v->kind != YAMLDOC_MAP || v->n == 0) {
		config_fail(l, v->line, key,
		    "expected a non-empty mapping of "
		    "label: value");
		return (NULL);
	}
	m = json_object();
	for (i = 0; i < v->n; i++) {
		if (v->vals[i]->kind != YAMLDOC_SCALAR) {
			config_fail(l, v->vals[i]->line, key,
			    "%s: expected a "
			    "string value",
			    v->keys[i]->scalar);
			json_decref(m);
			return (NULL);
		}
		json_object_set_new(m, v->keys[i]->scalar,
		    json_string(v->vals[i]->scalar));
	}
	return (m);
}

/* A LabelSelector: matchLabels and/or matchExpressions, nothing else. */
static int
want_selector(struct loader *l, const struct yamldoc_node *v, const char *key,
    json_t **out)
{
	size_t i;

	if (v->kind != YAMLDOC_MAP)
		return (config_fail(l, v->line, key,
		    "expected a label "
		    "selector {matchLabels: {...}, matchExpressions: [...]}"));
	for (i = 0; i < v->n; i++) {
		if (strcmp(v->keys[i]->scalar, "matchLabels") == 0) {
			json_t *m = want_str_map(l, v->vals[i],
			    "managedNamespaceSelector.matchLabels");
			if (m == NULL)
				return (-1);
			json_decref(m);
		} else if (strcmp(v->keys[i]->scalar, "matchExpressions") ==
		    0) {
			if (v->vals[i]->kind != YAMLDOC_SEQ)
				return (config_fail(l, v->vals[i]->line,
				    "managedNamespaceSelector.matchExpressions",
				    "expected a list of {key, operator, "
				    "values}"));
		} else
			return (config_fail(l, v->keys[i]->line, key,
			    "unknown key %s (expected matchLabels or "
			    "matchExpressions)",
			    v->keys[i]->scalar));
	}
	json_decref(*out);
	*out = yamldoc_json(v);
	if (k8s_selector_matches(*out, NULL) == -1)
		return (config_fail(l, v->line, key,
		    "a matchExpressions entry "
		    "needs key and operator In or NotIn (with values), Exists "
		    "or DoesNotExist"));
	return (0);
}

static int
want_gres_types(struct loader *l, const struct yamldoc_node *v,
    struct config *c)
{
	const struct yamldoc_node *e;
	struct config_gres_type	  *t;
	const char		  *k, *p;
	size_t			   i, j;

	if (v->kind != YAMLDOC_SEQ || v->n > CONFIG_MAX_LIST)
		return (config_fail(l, v->line, "gresTypes",
		    "expected a list "
		    "of {nodeSelector: {label: value}, type: NAME}"));
	c->gres_types = xcalloc(v->n, sizeof(*c->gres_types));
	for (i = 0; i < v->n; i++) {
		e = v->vals[i];
		t = &c->gres_types[c->ngres_types++];
		if (e->kind != YAMLDOC_MAP)
			return (config_fail(l, e->line, "gresTypes",
			    "expected "
			    "{nodeSelector: {label: value}, type: NAME}"));
		for (j = 0; j < e->n; j++) {
			k = e->keys[j]->scalar;
			if (strcmp(k, "nodeSelector") == 0) {
				json_decref(t->selector);
				if ((t->selector = want_str_map(l, e->vals[j],
					 "gresTypes.nodeSelector")) == NULL)
					return (-1);
			} else if (strcmp(k, "type") == 0) {
				if (want_str(l, e->vals[j], "gresTypes.type",
					64, &t->type) == -1)
					return (-1);
				for (p = t->type; *p != '\0'; p++)
					if (!isalnum((unsigned char)*p) &&
					    *p != '_' && *p != '-' && *p != '.')
						return (config_fail(l,
						    e->vals[j]->line,
						    "gresTypes.type",
						    "\"%s\" "
						    "is not a Slurm GRES type "
						    "(letters, digits, _ - .)",
						    t->type));
			} else
				return (config_fail(l, e->keys[j]->line,
				    "gresTypes",
				    "unknown key %s (expected "
				    "nodeSelector or type)",
				    k));
		}
		if (t->selector == NULL || t->type == NULL)
			return (config_fail(l, e->line, "gresTypes",
			    "each "
			    "entry needs both nodeSelector and type"));
	}
	return (0);
}

/* Is s a Slurm GRES name[:type] (letters, digits, _ - . around one colon)? */
static int
config_gres_name(const char *s)
{
	int colons = 0;

	if (*s == '\0' || *s == ':')
		return (0);
	for (; *s != '\0'; s++) {
		if (*s == ':' && ++colons <= 1 && s[1] != '\0')
			continue;
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' &&
		    *s != '.')
			return (0);
	}
	return (1);
}

/*
 * deviceClasses: the DeviceClasses mapped to Slurm GRES (dra.h), the whole
 * list: given, it replaces the built-in one.
 */
static int
want_device_classes(struct loader *l, const struct yamldoc_node *v,
    struct dra_classes *dc)
{
	static const char form[] = "{name: CLASS, driver: DRIVER, gres: "
				   "NAME[:TYPE], indexAttribute: index | "
				   "deviceName: \"gpu-{index}\" | "
				   "deviceNames: [NAME, ...], "
				   "attributes: {KEY: VALUE}}";
	const struct yamldoc_node *e;
	struct dra_class	  *k;
	const char		  *key;
	size_t			   i, j;
	int			   rc;

	if (v->kind != YAMLDOC_SEQ || v->n > CONFIG_MAX_LIST)
		return (config_fail(l, v->line, "deviceClasses",
		    "expected a list of %s", form));
	dra_classes_cleanup(dc);
	dc->v = xcalloc(v->n, sizeof(*dc->v));
	for (i = 0; i < v->n; i++) {
		e = v->vals[i];
		k = &dc->v[dc->n++];
		if (e->kind != YAMLDOC_MAP)
			return (config_fail(l, e->line, "deviceClasses",
			    "expected %s", form));
		for (j = 0, rc = 0; j < e->n && rc == 0; j++) {
			key = e->keys[j]->scalar;
			if (strcmp(key, "name") == 0)
				rc = want_str(l, e->vals[j],
				    "deviceClasses.name", 253, &k->name);
			else if (strcmp(key, "driver") == 0)
				rc = want_str(l, e->vals[j],
				    "deviceClasses.driver", 63, &k->driver);
			else if (strcmp(key, "gres") == 0) {
				rc = want_str(l, e->vals[j],
				    "deviceClasses.gres", 128, &k->gres);
				if (rc == 0 && !config_gres_name(k->gres))
					rc = config_fail(l, e->vals[j]->line,
					    "deviceClasses.gres",
					    "\"%s\" is not a Slurm GRES "
					    "NAME[:TYPE] (e.g. gpu, or "
					    "gpu:1g.10gb)",
					    k->gres);
			} else if (strcmp(key, "indexAttribute") == 0)
				rc = want_str(l, e->vals[j],
				    "deviceClasses.indexAttribute", 63,
				    &k->index_attr);
			else if (strcmp(key, "deviceName") == 0) {
				rc = want_str(l, e->vals[j],
				    "deviceClasses.deviceName", 200,
				    &k->name_pattern);
				if (rc == 0 &&
				    strstr(k->name_pattern, "{index}") == NULL)
					rc = config_fail(l, e->vals[j]->line,
					    "deviceClasses.deviceName",
					    "\"%s\" has no {index}: expected a "
					    "device name with {index} where "
					    "Slurm's GRES index goes (e.g. "
					    "gpu-{index})",
					    k->name_pattern);
			} else if (strcmp(key, "deviceNames") == 0)
				rc = want_str_list(l, e->vals[j],
				    "deviceClasses.deviceNames", &k->names);
			else if (strcmp(key, "attributes") == 0) {
				json_decref(k->attributes);
				k->attributes = want_str_map(l, e->vals[j],
				    "deviceClasses.attributes");
				rc = k->attributes == NULL ? -1 : 0;
			} else
				rc = config_fail(l, e->keys[j]->line,
				    "deviceClasses",
				    "unknown key %s (expected name, driver, "
				    "gres, indexAttribute, deviceName, "
				    "deviceNames or attributes)",
				    key);
		}
		if (rc == -1)
			return (-1);
		if (k->name == NULL || k->driver == NULL || k->gres == NULL)
			return (config_fail(l, e->line, "deviceClasses",
			    "each entry needs name, driver and gres (%s)",
			    form));
		if (k->index_attr == NULL)
			k->index_attr = xstrdup("index");
		for (j = 0; j + 1 < dc->n; j++)
			if (strcmp(dc->v[j].name, k->name) == 0)
				return (config_fail(l, e->line, "deviceClasses",
				    "DeviceClass %s is mapped twice", k->name));
	}
	return (0);
}

static int
want_topology(struct loader *l, const struct yamldoc_node *v, struct config *c)
{
	const struct yamldoc_node *e;
	struct config_topo_level  *t;
	const char		  *k;
	char			  *kind = NULL;
	size_t			   i, j;
	int			   rc = -1;

	if (v->kind != YAMLDOC_SEQ || v->n > CONFIG_MAX_LIST)
		return (config_fail(l, v->line, "topology",
		    "expected a list "
		    "of {nodeLabel: KEY, slurm: switch|block|node|none}"));
	c->topology = xcalloc(v->n, sizeof(*c->topology));
	for (i = 0; i < v->n; i++) {
		e = v->vals[i];
		t = &c->topology[c->ntopology++];
		if (e->kind != YAMLDOC_MAP)
			return (config_fail(l, e->line, "topology",
			    "expected "
			    "{nodeLabel: KEY, slurm: switch|block|node|none}"));
		for (j = 0; j < e->n; j++) {
			k = e->keys[j]->scalar;
			if (strcmp(k, "nodeLabel") == 0) {
				if (want_str(l, e->vals[j],
					"topology.nodeLabel", 253,
					&t->label) == -1)
					goto out;
			} else if (strcmp(k, "slurm") == 0) {
				if (want_str(l, e->vals[j], "topology.slurm",
					16, &kind) == -1)
					goto out;
				if (strcmp(kind, "switch") == 0)
					t->kind = TOPO_SWITCH;
				else if (strcmp(kind, "block") == 0)
					t->kind = TOPO_BLOCK;
				else if (strcmp(kind, "node") == 0)
					t->kind = TOPO_NODE;
				else if (strcmp(kind, "none") == 0)
					t->kind = TOPO_LABEL;
				else {
					config_fail(l, e->vals[j]->line,
					    "topology.slurm",
					    "\"%s\" is not "
					    "switch (one leaf switch), block "
					    "(one block), node (one node) or "
					    "none (the label alone)",
					    kind);
					goto out;
				}
			} else if (strcmp(k, "slurmTopology") == 0) {
				if (want_str(l, e->vals[j],
					"topology.slurmTopology", 64,
					&t->slurm_name) == -1)
					goto out;
			} else {
				config_fail(l, e->keys[j]->line, "topology",
				    "unknown key %s (expected nodeLabel, "
				    "slurm or slurmTopology)",
				    k);
				goto out;
			}
		}
		if (t->label == NULL || kind == NULL) {
			config_fail(l, e->line, "topology",
			    "each entry needs "
			    "both nodeLabel and slurm");
			goto out;
		}
		for (j = 0; j + 1 < c->ntopology; j++)
			if (strcmp(c->topology[j].label, t->label) == 0) {
				config_fail(l, e->line, "topology",
				    "node label %s is listed twice", t->label);
				goto out;
			}
		free(kind);
		kind = NULL;
	}
	rc = 0;
out:
	free(kind);
	return (rc);
}

/* A list of strings, or one comma-separated string, as "a,b,c". */
static int
want_csv(struct loader *l, const struct yamldoc_node *v, const char *key,
    char **out)
{
	char **list = NULL;
	char  *s = NULL;
	size_t i;

	if (v->kind == YAMLDOC_SCALAR)
		return (want_str(l, v, key, 4096, out));
	if (want_str_list(l, v, key, &list) == -1)
		return (-1);
	for (i = 0; list[i] != NULL; i++) {
		char *t;

		xasprintf(&t, "%s%s%s", s != NULL ? s : "",
		    s != NULL ? "," : "", list[i]);
		free(s);
		s = t;
		free(list[i]);
	}
	free(list);
	free(*out);
	*out = s != NULL ? s : xstrdup("");
	return (0);
}

/* bounds: the per-namespace bounds' defaults (bounds.h). */
static int
want_bounds(struct loader *l, const struct yamldoc_node *v, struct bounds *b)
{
	const char *k;
	size_t	    i;
	int	    rc, n = 0;

	if (v->kind != YAMLDOC_MAP)
		return (config_fail(l, v->line, "bounds",
		    "expected a mapping (allowedAccounts, allowedPartitions, "
		    "allowedQOS, allowedReservations, allowedUsers, "
		    "allowedGroups, allowedPriority, minUserId, slurmUser)"));
	for (i = 0; i < v->n; i++) {
		k = v->keys[i]->scalar;
		if (strcmp(k, "allowedAccounts") == 0)
			rc = want_csv(l, v->vals[i], k, &b->accounts);
		else if (strcmp(k, "allowedPartitions") == 0)
			rc = want_csv(l, v->vals[i], k, &b->partitions);
		else if (strcmp(k, "allowedQOS") == 0)
			rc = want_csv(l, v->vals[i], k, &b->qos);
		else if (strcmp(k, "allowedReservations") == 0)
			rc = want_csv(l, v->vals[i], k, &b->reservations);
		else if (strcmp(k, "allowedUsers") == 0)
			rc = want_csv(l, v->vals[i], k, &b->users);
		else if (strcmp(k, "allowedGroups") == 0)
			rc = want_csv(l, v->vals[i], k, &b->groups);
		else if (strcmp(k, "allowedPriority") == 0) {
			rc = want_str(l, v->vals[i], k, 32, &b->priority);
			if (rc == 0 && !bounds_range_valid(b->priority))
				rc = config_fail(l, v->vals[i]->line, k,
				    "expected N or MIN-MAX, from 1 to "
				    "2147483646 (e.g. \"1-1000\")");
		} else if (strcmp(k, "minUserId") == 0) {
			rc = want_int(l, v->vals[i], k, 1, 2147483646, &n);
			if (rc == 0)
				b->min_uid = (uint32_t)n;
		} else if (strcmp(k, "slurmUser") == 0)
			rc = want_str(l, v->vals[i], k, 32, &b->slurm_user);
		else
			rc = config_fail(l, v->keys[i]->line, k,
			    "unknown key in bounds (known: allowedAccounts, "
			    "allowedPartitions, allowedQOS, "
			    "allowedReservations, allowedUsers, allowedGroups, "
			    "allowedPriority, minUserId, slurmUser)");
		if (rc == -1)
			return (-1);
	}
	return (0);
}

/* Was the i-th key of map given before? */
static int
config_seen(const struct yamldoc_node *map, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (strcmp(map->keys[j]->scalar, map->keys[i]->scalar) == 0)
			return (1);
	return (0);
}

/* The top-level keys. */
static int
config_walk(struct loader *l, const struct yamldoc_node *root, struct config *c)
{
	const struct yamldoc_node *v;
	const char		  *k;
	size_t			   i;
	int			   rc;

	if (root->kind != YAMLDOC_MAP)
		return (config_fail(l, root->line, NULL,
		    "expected a mapping "
		    "of settings (key: value)"));
	for (i = 0; i < root->n; i++) {
		k = root->keys[i]->scalar;
		v = root->vals[i];
		if (config_seen(root, i))
			return (config_fail(l, root->keys[i]->line, k,
			    "given "
			    "twice"));
		if (strcmp(k, "schedulerName") == 0)
			rc = want_str(l, v, k, 63, &c->scheduler_name);
		else if (strcmp(k, "partition") == 0)
			rc = want_str(l, v, k, 200, &c->partition);
		else if (strcmp(k, "managedNamespaces") == 0)
			rc = want_str_list(l, v, k, &c->managed_namespaces);
		else if (strcmp(k, "managedNamespaceSelector") == 0)
			rc = want_selector(l, v, k,
			    &c->managed_namespace_selector);
		else if (strcmp(k, "mcsLabel") == 0)
			rc = want_str(l, v, k, 200, &c->mcs_label);
		else if (strcmp(k, "exclusive") == 0)
			rc = want_bool(l, v, k, &c->exclusive);
		else if (strcmp(k, "jobIdLabel") == 0)
			rc = want_bool(l, v, k, &c->jobid_label);
		else if (strcmp(k, "defaultAccount") == 0)
			rc = want_str(l, v, k, 200, &c->default_account);
		else if (strcmp(k, "slurmPollInterval") == 0)
			rc = want_ms(l, v, k, 10, 60000, &c->poll_ms);
		else if (strcmp(k, "gresTypes") == 0)
			rc = want_gres_types(l, v, c);
		else if (strcmp(k, "topology") == 0)
			rc = want_topology(l, v, c);
		else if (strcmp(k, "gangGpuSwitchThreshold") == 0)
			rc = want_int(l, v, k, 0, 1000000,
			    &c->gang_gpu_switch_threshold);
		else if (strcmp(k, "preferredTopologyWaitMinutes") == 0)
			rc = want_int(l, v, k, 0, 525600,
			    &c->preferred_wait_minutes);
		else if (strcmp(k, "kubeAPIQPS") == 0)
			rc = want_int(l, v, k, 1, 100000, &c->api_qps);
		else if (strcmp(k, "kubeAPIBurst") == 0)
			rc = want_int(l, v, k, 1, 100000, &c->api_burst);
		else if (strcmp(k, "managedTaintEffect") == 0) {
			rc = want_str(l, v, k, 16, &c->taint_effect);
			if (rc == 0 &&
			    strcmp(c->taint_effect, "NoSchedule") != 0 &&
			    strcmp(c->taint_effect, "NoExecute") != 0)
				rc = config_fail(l, v->line, k,
				    "expected NoSchedule (the default) or "
				    "NoExecute (evicts what does not "
				    "tolerate it)");
		} else if (strcmp(k, "unhealthyNodesThreshold") == 0) {
			rc = want_int(l, v, k, 1, 101, &c->unhealthy_nodes_pct);
		} else if (strcmp(k, "maxEndGraceSeconds") == 0)
			rc = want_int(l, v, k, 1, 3600, &c->end_grace_max_s);
		else if (strcmp(k, "installName") == 0) {
			rc = want_str(l, v, k, 63, &c->install_name);
			if (rc == 0 &&
			    strpbrk(c->install_name, " ()\"") != NULL)
				rc = config_fail(l, v->line, k,
				    "expected a name without spaces, "
				    "parentheses or quotes");
		} else if (strcmp(k, "bounds") == 0)
			rc = want_bounds(l, v, &c->bounds);
		else if (strcmp(k, "deviceClasses") == 0)
			rc = want_device_classes(l, v, &c->dra);
		else if (strcmp(k, "deviceBindingTimeoutSeconds") == 0)
			rc = want_int(l, v, k, 1, 86400, &c->binding_timeout_s);
		else
			rc = config_fail(l, root->keys[i]->line, k,
			    "unknown "
			    "key (known: schedulerName, partition, "
			    "managedNamespaces, managedNamespaceSelector, "
			    "mcsLabel, exclusive, jobIdLabel, defaultAccount, "
			    "slurmPollInterval, gresTypes, topology, "
			    "gangGpuSwitchThreshold, "
			    "preferredTopologyWaitMinutes, kubeAPIQPS, "
			    "kubeAPIBurst, managedTaintEffect, "
			    "maxEndGraceSeconds, unhealthyNodesThreshold, "
			    "installName, "
			    "bounds, "
			    "deviceClasses, deviceBindingTimeoutSeconds)");
		if (rc == -1)
			return (-1);
	}
	return (0);
}

struct config *
config_new(void)
{
	struct config *c = xcalloc(1, sizeof(*c));

	c->scheduler_name = xstrdup("slurm-bridge");
	c->partition = xstrdup("slurm-bridge");
	c->taint_effect = xstrdup(MANAGED_TAINT_EFFECT_DEFAULT);
	c->managed_namespaces = xcalloc(1, sizeof(*c->managed_namespaces));
	c->poll_ms = 100;
	c->preferred_wait_minutes = 5;
	c->api_qps = 200;
	c->api_burst = 400;
	c->end_grace_max_s = END_GRACE_MAX_DEFAULT_S;
	c->binding_timeout_s = BINDING_TIMEOUT_DEFAULT_S;
	c->unhealthy_nodes_pct = 55;
	bounds_init(&c->bounds);
	dra_classes_defaults(&c->dra);
	return (c);
}

int
config_load(struct config *c, const char *path, char *err, size_t errlen)
{
	struct loader	     l;
	struct yamldoc_node *root;
	struct yamldoc_error yerr;
	int		     rc;

	l.path = path;
	l.err = err;
	l.errlen = errlen;
	root = yamldoc_load(path, CONFIG_MAX_DEPTH, YAMLDOC_ONE_DOC, &yerr);
	if (root == NULL && yerr.what != YAMLDOC_ERR_EMPTY)
		return (config_yaml_fail(&l, &yerr));
	free(c->path);
	c->path = xstrdup(path);
	/* An empty file (or only comments): the defaults. */
	if (root == NULL)
		return (0);
	rc = config_walk(&l, root, c);
	yamldoc_free(root);
	return (rc);
}

int
config_load_default(struct config *c, const char *path, char *err,
    size_t errlen)
{
	if (path == NULL && access(CONFIG_DEFAULT_PATH, F_OK) == 0)
		path = CONFIG_DEFAULT_PATH;
	if (path == NULL)
		return (0);
	return (config_load(c, path, err, errlen));
}

const char *
config_env(const char *name, const char *def)
{
	const char *v = getenv(name);

	return (v != NULL && *v != '\0' ? v : def);
}

void
config_free(struct config *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0;
	     c->managed_namespaces != NULL && c->managed_namespaces[i] != NULL;
	     i++)
		free(c->managed_namespaces[i]);
	free(c->managed_namespaces);
	for (i = 0; i < c->ngres_types; i++) {
		json_decref(c->gres_types[i].selector);
		free(c->gres_types[i].type);
	}
	free(c->gres_types);
	for (i = 0; i < c->ntopology; i++) {
		free(c->topology[i].label);
		free(c->topology[i].slurm_name);
	}
	free(c->topology);
	json_decref(c->managed_namespace_selector);
	free(c->path);
	free(c->scheduler_name);
	free(c->partition);
	free(c->mcs_label);
	free(c->default_account);
	free(c->install_name);
	free(c->taint_effect);
	bounds_cleanup(&c->bounds);
	dra_classes_cleanup(&c->dra);
	free(c);
}

const struct config_topo_level *
config_topo_find(const struct config *c, const char *label)
{
	size_t i;

	for (i = 0; i < c->ntopology; i++)
		if (strcmp(c->topology[i].label, label) == 0)
			return (&c->topology[i]);
	return (NULL);
}
