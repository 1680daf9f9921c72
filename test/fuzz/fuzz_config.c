/*
 * libFuzzer target: the YAML configuration file (common/config.c).  The
 * input is written to a memfd and loaded through its /proc path, as the
 * daemons load /etc/slurm-bridge/config.yaml.  Besides not crashing or
 * leaking: a failure names the file, a success leaves every setting within
 * its documented range, and a loaded selector is one the scheduler can
 * evaluate.
 */
#include <sys/mman.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "k8s.h"
#include "config.h"

#define FZ_MAX_INPUT (64 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fz_fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_config: %s: %s\n", what,
	    detail != NULL ? detail : "(null)");
	abort();
}

/* A set string: 1 to max printable characters. */
static void
fz_check_str(const char *what, const char *s, size_t max)
{
	const char *p;

	if (s == NULL || *s == '\0' || strlen(s) > max)
		fz_fail(what, s);
	for (p = s; *p != '\0'; p++)
		if (*p < 0x20 || *p > 0x7e)
			fz_fail(what, s);
}

/*
 * Each matchExpressions entry alone, against no labels: 0 or 1, never -1
 * (malformed), which group.c would read as "does not match" forever.
 */
static void
fz_check_selector(const json_t *sel)
{
	const json_t *x;
	json_t	     *one;
	size_t	      i;
	char	     *s;

	if (k8s_selector_matches(sel, NULL) == -1)
		fz_fail("selector", "malformed");
	json_array_foreach (json_object_get(sel, "matchExpressions"), i, x) {
		one = json_pack("{s:[O]}", "matchExpressions", x);
		if (k8s_selector_matches(one, NULL) == -1) {
			s = json_dumps(x, JSON_COMPACT);
			fz_fail("selector: malformed matchExpressions entry "
				"accepted",
			    s);
		}
		json_decref(one);
	}
}

static void
fz_check(const struct config *c)
{
	size_t i;

	fz_check_str("schedulerName", c->scheduler_name, 63);
	fz_check_str("partition", c->partition, 200);
	if (c->mcs_label != NULL)
		fz_check_str("mcsLabel", c->mcs_label, 200);
	if (c->default_account != NULL)
		fz_check_str("defaultAccount", c->default_account, 200);
	for (i = 0; c->managed_namespaces[i] != NULL; i++)
		fz_check_str("managedNamespaces", c->managed_namespaces[i],
		    253);
	if (c->exclusive != 0 && c->exclusive != 1)
		fz_fail("exclusive", NULL);
	if (c->poll_ms < 10 || c->poll_ms > 60000)
		fz_fail("slurmPollInterval", NULL);
	if (c->gang_gpu_switch_threshold < 0 ||
	    c->gang_gpu_switch_threshold > 1000000 ||
	    c->preferred_wait_minutes < 0 ||
	    c->preferred_wait_minutes > 525600 || c->api_qps < 1 ||
	    c->api_qps > 100000 || c->api_burst < 1 || c->api_burst > 100000)
		fz_fail("number out of range", NULL);
	for (i = 0; i < c->ngres_types; i++) {
		if (!json_is_object(c->gres_types[i].selector) ||
		    json_object_size(c->gres_types[i].selector) == 0)
			fz_fail("gresTypes.nodeSelector", NULL);
		fz_check_str("gresTypes.type", c->gres_types[i].type, 64);
	}
	for (i = 0; i < c->ntopology; i++) {
		fz_check_str("topology.nodeLabel", c->topology[i].label, 253);
		if (c->topology[i].kind < TOPO_SWITCH ||
		    c->topology[i].kind > TOPO_LABEL)
			fz_fail("topology.slurm", c->topology[i].label);
		if (config_topo_find(c, c->topology[i].label) == NULL)
			fz_fail("config_topo_find", c->topology[i].label);
	}
	if (c->managed_namespace_selector != NULL)
		fz_check_selector(c->managed_namespace_selector);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config *c;
	char	       path[64], err[512];
	int	       fd, rc;

	if (size > FZ_MAX_INPUT)
		return (0);
	if ((fd = memfd_create("fuzz-config", MFD_CLOEXEC)) == -1)
		abort();
	if (size > 0 && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	c = config_new();
	err[0] = '\0';
	rc = config_load(c, path, err, sizeof(err));
	close(fd);
	if (rc == -1) {
		/* "FILE:LINE: ...", or "FILE: strerror" from fopen. */
		if (strncmp(err, path, strlen(path)) != 0 ||
		    err[strlen(path)] != ':')
			fz_fail("error does not name the file", err);
	} else {
		if (rc != 0 || c->path == NULL || strcmp(c->path, path) != 0)
			fz_fail("path", c->path);
		fz_check(c);
	}
	config_free(c);
	return (0);
}
