/*
 * Matching pods against scheduling rules: tolerations of a taint, label
 * selectors (matchLabels and matchExpressions), and what a label value may
 * be.  Pure; any thread.
 */
#include <ctype.h>
#include <string.h>

#include "internal.h"

int
k8s_label_value_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0)
		return (1);
	if (n > 63 || !isalnum((unsigned char)s[0]) ||
	    !isalnum((unsigned char)s[n - 1]))
		return (0);
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) &&
		    strchr("-_.", s[i]) == NULL)
			return (0);
	return (1);
}

int
k8s_pod_tolerates(const json_t *pod, const char *key, const char *value,
    const char *effect)
{
	const json_t *t;
	const char   *tk, *op, *tv, *te;
	size_t	      i;

	json_array_foreach (k8s_obj_get(pod, "spec.tolerations"), i, t) {
		tk = json_string_value(json_object_get(t, "key"));
		op = json_string_value(json_object_get(t, "operator"));
		tv = json_string_value(json_object_get(t, "value"));
		te = json_string_value(json_object_get(t, "effect"));
		/* An empty effect tolerates every effect. */
		if (te != NULL && *te != '\0' && strcmp(te, effect) != 0)
			continue;
		if (op != NULL && strcmp(op, "Exists") == 0) {
			/* An empty key with Exists tolerates every taint. */
			if (tk == NULL || *tk == '\0' || strcmp(tk, key) == 0)
				return (1);
			continue;
		}
		/* Equal is the default operator. */
		if (tk != NULL && strcmp(tk, key) == 0 && tv != NULL &&
		    strcmp(tv, value) == 0)
			return (1);
	}
	return (0);
}

/* One matchExpressions entry: 1, 0, or -1 when malformed. */
static int
selector_expr(const json_t *x, const json_t *labels)
{
	const char   *key = json_string_value(json_object_get(x, "key"));
	const char   *op = json_string_value(json_object_get(x, "operator"));
	const json_t *values = json_object_get(x, "values"), *v;
	const char   *have;
	size_t	      i;
	int	      in = 0;

	if (key == NULL || op == NULL)
		return (-1);
	have = json_string_value(json_object_get(labels, key));
	if (strcmp(op, "Exists") == 0)
		return (have != NULL);
	if (strcmp(op, "DoesNotExist") == 0)
		return (have == NULL);
	if (!json_is_array(values) || json_array_size(values) == 0)
		return (-1);
	json_array_foreach (values, i, v)
		if (have != NULL && json_is_string(v) &&
		    strcmp(json_string_value(v), have) == 0)
			in = 1;
	if (strcmp(op, "In") == 0)
		return (in);
	if (strcmp(op, "NotIn") == 0)
		return (!in);
	return (-1);
}

int
k8s_selector_matches(const json_t *selector, const json_t *labels)
{
	const json_t *v, *x;
	const char   *key, *have;
	size_t	      i;
	int	      rc, match = 1;

	if (!json_is_object(selector))
		return (-1);
	/*
	 * Every entry is checked even after a mismatch, so that a malformed
	 * selector is -1 whatever the labels (config.c validates with none).
	 */
	json_object_foreach ((json_t *)(uintptr_t)json_object_get(selector,
				 "matchLabels"),
	    key, v) {
		have = json_string_value(json_object_get(labels, key));
		if (!json_is_string(v))
			return (-1);
		if (have == NULL || strcmp(have, json_string_value(v)) != 0)
			match = 0;
	}
	json_array_foreach (json_object_get(selector, "matchExpressions"), i,
	    x) {
		if ((rc = selector_expr(x, labels)) == -1)
			return (-1);
		if (rc == 0)
			match = 0;
	}
	return (match);
}
