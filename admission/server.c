/*
 * The webhook's routes, served by httpd.c: POST /mutate, /validate and
 * /guard hand AdmissionReviews to review.c; GET
 * /healthz says the process is up, /readyz that the namespace and Job
 * caches are synced, /metrics is Prometheus text.  Handlers run on the
 * server's threads and make no API or Slurm call (owners come from the
 * watch-based store, managed nodes from guard.c's).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "log.h"
#include "xmalloc.h"
#include "metrics.h"
#include "httpd.h"
#include "admission.h"

#define SERVER_THREADS 4

enum {
	PATH_MUTATE,
	PATH_VALIDATE,
	PATH_GUARD,
	NPATHS
};

/* What became of a request (the outcome label of requests_total). */
enum outcome {
	OUT_ALLOWED,
	OUT_PATCHED,
	OUT_DENIED,
	OUT_BAD,
	NOUTCOMES
};

static const char *const outcome_names[NOUTCOMES] = { "allowed", "patched",
	"denied", "bad_request" };

struct server {
	struct httpd		 *httpd;
	const struct review_conf *review;
	/* Requests by path and outcome, and their latency. */
	atomic_ullong	    requests[NPATHS][NOUTCOMES];
	struct metrics_hist latency[NPATHS];
};

static void
server_count(struct server *s, int path, enum outcome outcome, double start)
{
	atomic_fetch_add(&s->requests[path][outcome], 1);
	metrics_hist_observe(&s->latency[path], metrics_now() - start);
}

/* Answers an AdmissionReview POST to /mutate or /validate. */
/* Is the media type application/json (any case, parameters allowed)? */
static int
server_is_json(const char *ctype)
{
	size_t n = sizeof("application/json") - 1;

	if (ctype == NULL)
		return (0);
	while (*ctype == ' ' || *ctype == '\t')
		ctype++;
	if (strncasecmp(ctype, "application/json", n) != 0)
		return (0);
	ctype += n;
	while (*ctype == ' ' || *ctype == '\t')
		ctype++;
	return (*ctype == '\0' || *ctype == ';');
}

static void
server_review(struct server *s, const struct httpd_request *req,
    struct httpd_response *resp, enum review_mode mode)
{
	json_t *out = NULL, *r;
	char	err[512];
	size_t	n;
	int	status,
	    path = mode == REVIEW_MUTATE ? PATH_MUTATE :
	    mode == REVIEW_GUARD	 ? PATH_GUARD :
					   PATH_VALIDATE;
	double start = metrics_now();

	if (!server_is_json(req->content_type)) {
		server_count(s, path, OUT_BAD, start);
		httpd_reply(resp, 415, "text/plain",
		    "Content-Type must be application/json\n");
		return;
	}
	status = review_handle(req->body, req->len, mode, s->review, &out, err,
	    sizeof(err) - 1);
	if (status != 200) {
		server_count(s, path, OUT_BAD, start);
		log_warnx("review: refused a malformed request: %s", err);
		n = strlen(err);
		snprintf(err + n, sizeof(err) - n, "\n");
		httpd_reply(resp, 400, "text/plain", err);
		return;
	}
	r = json_object_get(out, "response");
	if (!json_is_true(json_object_get(r, "allowed"))) {
		log_info("review: %s denied: %s",
		    mode == REVIEW_MUTATE ? "mutate" : "validate",
		    k8s_obj_str(r, "status.message"));
		server_count(s, path, OUT_DENIED, start);
	} else if (json_object_get(r, "patch") != NULL)
		server_count(s, path, OUT_PATCHED, start);
	else
		server_count(s, path, OUT_ALLOWED, start);
	resp->status = 200;
	resp->content_type = "application/json";
	resp->body = json_dumps(out, JSON_COMPACT);
	json_decref(out);
}

/* Prometheus text for /metrics. */
static char *
server_metrics(void *arg)
{
	struct server		*s = arg;
	static const char *const paths[NPATHS] = { "/mutate", "/validate",
		"/guard" };
	struct httpd_stats	 hs;
	struct owners_stats	 st;
	struct buf		 b;
	char			 l[128];
	int			 i, k;

	buf_init(&b);
	metrics_family(&b, "slurm_bridge_admission_requests_total", "counter",
	    "AdmissionReview requests by path and outcome.");
	for (i = 0; i < NPATHS; i++)
		for (k = 0; k < NOUTCOMES; k++) {
			snprintf(l, sizeof(l), "path=\"%s\",outcome=\"%s\"",
			    paths[i], outcome_names[k]);
			metrics_sample(&b,
			    "slurm_bridge_admission_requests_total", l,
			    (double)atomic_load(&s->requests[i][k]));
		}
	metrics_family(&b, "slurm_bridge_admission_request_duration_seconds",
	    "histogram",
	    "Time to answer an AdmissionReview, body received "
	    "to response queued.");
	for (i = 0; i < NPATHS; i++) {
		snprintf(l, sizeof(l), "path=\"%s\"", paths[i]);
		metrics_hist_write(&b,
		    "slurm_bridge_admission_request_duration_seconds", l,
		    &s->latency[i]);
	}
	owners_stats(s->review->owners, &st);
	metrics_family(&b, "slurm_bridge_admission_cache_objects", "gauge",
	    "Objects in the webhook's watch-based store, by kind.");
	for (k = 0; k < OWN_KINDS; k++) {
		snprintf(l, sizeof(l), "kind=\"%s\"", owners_kind_name(k));
		metrics_sample(&b, "slurm_bridge_admission_cache_objects", l,
		    (double)st.objects[k]);
	}
	metrics_family(&b, "slurm_bridge_admission_cache_lookups_total",
	    "counter",
	    "Owner and namespace lookups by result (a wait is a "
	    "lookup that waited for the watch).");
	metrics_sample(&b, "slurm_bridge_admission_cache_lookups_total",
	    "result=\"hit\"", (double)st.hits);
	metrics_sample(&b, "slurm_bridge_admission_cache_lookups_total",
	    "result=\"miss\"", (double)st.misses);
	metrics_sample(&b, "slurm_bridge_admission_cache_lookups_total",
	    "result=\"waited\"", (double)st.waits);
	metrics_family(&b, "slurm_bridge_admission_watch_relists_total",
	    "counter", "Full relists of the webhook's watches.");
	metrics_sample(&b, "slurm_bridge_admission_watch_relists_total", NULL,
	    (double)st.relists);
	metrics_family(&b, "slurm_bridge_admission_tls_reloads_total",
	    "counter", "Certificate reloads by result.");
	httpd_stats(s->httpd, &hs);
	metrics_sample(&b, "slurm_bridge_admission_tls_reloads_total",
	    "result=\"ok\"", (double)hs.tls_reloads);
	metrics_sample(&b, "slurm_bridge_admission_tls_reloads_total",
	    "result=\"error\"", (double)hs.tls_reload_errors);
	httpd_metrics(s->httpd, &b, "slurm_bridge_admission");
	return (buf_release(&b));
}

/* Namespaces (defaults, bounds) and Jobs (gangs) at least. */
static const char *
server_unready(void *arg)
{
	struct server *s = arg;

	if (!owners_synced(s->review->owners, OWN_NAMESPACE) ||
	    !owners_synced(s->review->owners, OWN_JOB))
		return ("caches are not synced yet\n");
	return (NULL);
}

static void
server_handle(void *arg, const struct httpd_request *req,
    struct httpd_response *resp)
{
	struct server *s = arg;

	if (strcmp(req->url, "/mutate") == 0 ||
	    strcmp(req->url, "/validate") == 0 ||
	    strcmp(req->url, "/guard") == 0) {
		if (strcmp(req->method, "POST") != 0)
			httpd_reply(resp, 405, "text/plain", "use POST\n");
		else
			server_review(s, req, resp,
			    req->url[1] == 'm'	   ? REVIEW_MUTATE :
				req->url[1] == 'g' ? REVIEW_GUARD :
						     REVIEW_VALIDATE);
	} else
		httpd_health(req, resp,
		    &(struct httpd_health){ server_unready, server_metrics,
			s });
}

struct server *
server_start(const struct admission_conf *conf,
    const struct review_conf *review, char *err, size_t errlen)
{
	struct server	 *s = xcalloc(1, sizeof(*s));
	struct httpd_opts o;

	s->review = review;
	memset(&o, 0, sizeof(o));
	o.addr = conf->addr;
	o.listen = conf->listen;
	o.tls_cert = conf->tls_cert;
	o.tls_key = conf->tls_key;
	o.max_body = REVIEW_MAX_BODY;
	o.threads = SERVER_THREADS;
	o.max_conns = conf->max_conns;
	o.max_conns_per_client = conf->max_conns_per_client;
	o.handler = server_handle;
	o.arg = s;
	if ((s->httpd = httpd_start(&o, err, errlen)) == NULL) {
		free(s);
		return (NULL);
	}
	return (s);
}

void
server_stop(struct server *s)
{
	if (s == NULL)
		return;
	httpd_stop(s->httpd);
	free(s);
}
