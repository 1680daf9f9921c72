/*
 * libFuzzer target: AdmissionReview handling, both webhooks, with an owner
 * store that knows a namespace, an Indexed Job, a JobSet and a PodGroup so
 * the gang, GRES, topology and account paths are all reachable.  Besides
 * not crashing: every answer is a 400 with a reason, or a 200 whose
 * response carries the request's uid and, when allowed with a patch, a
 * base64 JSON Patch array that decodes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "k8s.h"
#include "config.h"
#include "admission.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct review_conf fz_conf;
static const char *const  fz_users[] = { "system:slurm-bridge", NULL };

static void
fz_init(void)
{
	static const char *const objs[OWN_KINDS] = {
		"{\"metadata\":{\"name\":\"team\",\"annotations\":{"
		"\"scheduler.slinky.slurm.net/allowed-accounts\":\"research\"}}}",
		"{\"metadata\":{\"name\":\"train\",\"namespace\":\"team\","
		"\"uid\":\"job-uid-1\"},\"spec\":{\"parallelism\":3,"
		"\"completionMode\":\"Indexed\"}}",
		"{\"metadata\":{\"name\":\"ts\",\"namespace\":\"team\"},\"spec\":"
		"{\"replicatedJobs\":[{\"replicas\":2,\"template\":{\"spec\":"
		"{\"parallelism\":2}}}]}}",
		"{\"metadata\":{\"name\":\"serve\",\"namespace\":\"team\"},"
		"\"spec\":{\"leaderWorkerTemplate\":{\"size\":3}}}",
		"{\"metadata\":{\"name\":\"pg\",\"namespace\":\"team\"},\"spec\":"
		"{\"minMember\":4}}",
	};
	struct config *c = config_new();
	char	       err[256];
	json_t	      *o;
	int	       k;

	if (config_load(c, "test/data/review/config.yaml", err, sizeof(err)) ==
	    -1)
		abort();
	fz_conf.config = c;
	fz_conf.owners = owners_new(NULL, NULL, NULL);
	fz_conf.bridge_users = fz_users;
	for (k = 0; k < OWN_KINDS; k++) {
		o = json_loads(objs[k], 0, NULL);
		owners_put(fz_conf.owners, (enum owner_kind)k, o);
		json_decref(o);
	}
}

static void
fz_check(const uint8_t *data, size_t size, enum review_mode mode)
{
	json_t	   *out = NULL, *resp, *patch;
	const char *b64;
	char	    err[512], *raw;
	size_t	    n;
	int	    status;

	err[0] = '\0';
	status = review_handle((const char *)data, size, mode, &fz_conf, &out,
	    err, sizeof(err));
	if (status == 400) {
		if (out != NULL || err[0] == '\0')
			abort();
		return;
	}
	resp = json_object_get(out, "response");
	if (status != 200 ||
	    json_string_value(json_object_get(resp, "uid")) == NULL)
		abort();
	if ((b64 = json_string_value(json_object_get(resp, "patch"))) != NULL) {
		if (k8s_base64_decode(b64, &raw, &n) == -1)
			abort();
		patch = json_loadb(raw, n, 0, NULL);
		if (!json_is_array(patch))
			abort();
		json_decref(patch);
		free(raw);
	}
	json_decref(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fz_conf.config == NULL)
		fz_init();
	fz_check(data, size, REVIEW_MUTATE);
	fz_check(data, size, REVIEW_VALIDATE);
	return (0);
}
