/*
 * The scheduler's HTTP endpoints on --listen, served by httpd.c:
 * GET /healthz (the process is up), /readyz (leader, caches synced and
 * jobs adopted, Slurm answered within SLURM_STALE_S), /metrics (Prometheus
 * text).  Handlers run on the server's threads and read only atomics: the
 * reconcile thread's state is never touched here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xmalloc.h"
#include "metrics.h"
#include "httpd.h"
#include "bridge.h"

#define API_THREADS	2
#define API_MAX_BODY	(4 * 1024 * 1024)
/* Slurm is "reachable" when a poll succeeded this recently. */
#define SLURM_STALE_S	30

struct api {
	struct httpd		*httpd;
	struct api_source	 src;
};

static char *
api_metrics(struct api *a)
{
	struct buf	 b;
	char		 l[128];
	int		 i;

	buf_init(&b);
	stats_write(&b);
	metrics_family(&b, "slurm_bridge_watch_restarts_total", "counter",
	    "Watches re-opened after they ended or failed, by kind.");
	for (i = 0; i < a->src.ninformers; i++) {
		snprintf(l, sizeof(l), "watch=\"%s\"", a->src.names[i]);
		metrics_sample(&b, "slurm_bridge_watch_restarts_total", l,
		    (double)k8s_informer_restarts(a->src.informers[i]));
	}
	metrics_family(&b, "slurm_bridge_watch_relists_total", "counter",
	    "Full relists (first list, 410 Gone, errors), by kind.");
	for (i = 0; i < a->src.ninformers; i++) {
		snprintf(l, sizeof(l), "watch=\"%s\"", a->src.names[i]);
		metrics_sample(&b, "slurm_bridge_watch_relists_total", l,
		    (double)k8s_informer_relists(a->src.informers[i]));
	}
	return (buf_release(&b));
}

/* Why the scheduler is not ready, or NULL. */
static const char *
api_unready(void)
{
	long long	ok_at = atomic_load(&bstats.slurm_ok_at);

	if (!atomic_load(&bstats.leader))
		return ("not the leader\n");
	if (!atomic_load(&bstats.recovered))
		return ("caches are not synced yet\n");
	if (time(NULL) - ok_at > SLURM_STALE_S)
		return ("slurmctld has not answered in 30 s\n");
	return (NULL);
}

static void
api_handle(void *arg, const struct httpd_request *req,
    struct httpd_response *resp)
{
	struct api	*a = arg;
	const char	*why;

	if (strcmp(req->url, "/healthz") != 0 &&
	    strcmp(req->url, "/readyz") != 0 &&
	    strcmp(req->url, "/metrics") != 0)
		httpd_reply(resp, 404, "text/plain", "not found\n");
	else if (strcmp(req->method, "GET") != 0 &&
	    strcmp(req->method, "HEAD") != 0)
		httpd_reply(resp, 405, "text/plain", "use GET\n");
	else if (strcmp(req->url, "/healthz") == 0)
		httpd_reply(resp, 200, "text/plain", "ok\n");
	else if (strcmp(req->url, "/readyz") == 0) {
		if ((why = api_unready()) != NULL)
			httpd_reply(resp, 503, "text/plain", why);
		else
			httpd_reply(resp, 200, "text/plain", "ok\n");
	} else {
		resp->status = 200;
		resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
		resp->body = api_metrics(a);
	}
}

struct api *
api_start(const struct bridge_conf *conf, const struct api_source *src,
    char *err, size_t errlen)
{
	struct api		*a = xcalloc(1, sizeof(*a));
	struct httpd_opts	 o;

	a->src = *src;
	memset(&o, 0, sizeof(o));
	if (httpd_parse_listen("--listen", conf->listen, &o.addr, err,
	    errlen) == -1)
		goto fail;
	o.listen = conf->listen;
	o.tls_cert = conf->tls_cert;
	o.tls_key = conf->tls_key;
	o.max_body = API_MAX_BODY;
	o.threads = API_THREADS;
	o.handler = api_handle;
	o.arg = a;
	if ((a->httpd = httpd_start(&o, err, errlen)) == NULL)
		goto fail;
	return (a);
 fail:
	free(a);
	return (NULL);
}

void
api_stop(struct api *a)
{
	if (a == NULL)
		return;
	httpd_stop(a->httpd);
	free(a);
}
