/*
 * The scheduler's HTTP endpoints on --listen, served by httpd.c:
 * GET /healthz (the process is up), /readyz (leader: caches synced and
 * jobs adopted, Slurm answered within SLURM_STALE_S; follower: its Lease
 * answered within as long), /metrics (Prometheus
 * text), /debug/memory (memstats.c), and the scheduler-extender API of k8s.io/kube-scheduler/extender/v1
 * (POST /filter, /prioritize, /bind), so a stock kube-scheduler can defer
 * to Slurm.  The extender API answers only clients with a certificate
 * from --client-ca (endpoints_refuse, on the headers, before the body is read),
 * and nobody without one.  /debug/ answers the same certificate with
 * --client-ca, and without it only clients on this host
 * (endpoints_debug_refuse).  Handlers run on the server's threads and read
 * only atomics; an extender call is queued to the reconcile thread, which
 * owns all state, and its answer awaited for up to EXT_WAIT_MS.
 *
 * Threads: HTTP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "xmalloc.h"
#include "metrics.h"
#include "httpd.h"
#include "fit.h"
#include "bridge.h"

#define ENDPOINTS_THREADS 2
#define API_MAX_BODY	  (4 * 1024 * 1024)
/* Slurm is "reachable" when a poll succeeded this recently. */
#define SLURM_STALE_S 30
/* How long an extender call waits for the reconcile thread. */
#define EXT_WAIT_MS 8000

struct endpoints {
	struct httpd	       *httpd;
	struct endpoints_source src;
	int			client_ca;    /* extender needs client certs */
	const char	       *client_names; /* --client-name */
};

static char *
endpoints_metrics(void *arg)
{
	struct endpoints *a = arg;
	struct buf	  b;
	char		  l[128];
	int		  i;

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
	memstats_metrics(&a->src, &b);
	if (a->httpd != NULL)
		httpd_metrics(a->httpd, &b, "slurm_bridge");
	return (buf_release(&b));
}

/* Why the scheduler is not ready, or NULL. */
static const char *
endpoints_unready(void *arg)
{
	long long ok_at = atomic_load(&bstats.slurm_ok_at);

	(void)arg;
	/*
	 * A follower is ready to take over while it reaches its Lease: so
	 * both replicas of a Deployment are Ready, and the Service that must
	 * reach the leader alone selects LEADER_LABEL instead.
	 */
	if (!atomic_load(&bstats.leader))
		return (time(NULL) - atomic_load(&bstats.lease_ok_at) >
			    SLURM_STALE_S ?
			"a follower that has not reached its Lease in 30 s\n" :
			NULL);
	if (!atomic_load(&bstats.recovered))
		return ("caches are not synced yet\n");
	if (time(NULL) - ok_at > SLURM_STALE_S)
		return ("slurmctld has not answered in 30 s\n");
	return (NULL);
}

static void
endpoints_json(struct httpd_response *resp, json_t *out)
{
	resp->status = 200;
	resp->content_type = "application/json";
	resp->body = json_dumps(out, JSON_COMPACT);
	json_decref(out);
}

/* Queues the call and waits for its answer; -1 if none came in time. */
static int
endpoints_call(struct endpoints *a, struct ext_call *c)
{
	struct msg *msg = xcalloc(1, sizeof(*msg));

	msg->kind = MSG_EXTENDER;
	msg->call = c;
	queue_push(a->src.queue, msg);
	return (extcall_wait(c, EXT_WAIT_MS));
}

/* The candidate node names of ExtenderArgs (NodeNames or Nodes.items). */
static json_t *
endpoints_node_names(const json_t *args)
{
	const json_t *v;
	json_t	     *names = json_array();
	size_t	      i;

	if (json_is_array(json_object_get(args, "NodeNames")))
		json_array_extend(names, json_object_get(args, "NodeNames"));
	else
		json_array_foreach (k8s_obj_get(args, "Nodes.items"), i, v)
			if (k8s_obj_name(v) != NULL)
				json_array_append_new(names,
				    json_string(k8s_obj_name(v)));
	return (names);
}

/*
 * ExtenderFilterResult with only keep among the candidates (keep NULL:
 * none), every other one failed with msg, in the form the call used.
 */
static json_t *
endpoints_filter_result(const json_t *args, const char *keep, const char *msg,
    int resolvable)
{
	json_t	   *res = json_object(), *failed = json_object(), *names;
	json_t	   *kept = json_array(), *items, *v;
	const char *n;
	size_t	    i;

	names = endpoints_node_names(args);
	json_array_foreach (names, i, v) {
		n = json_string_value(v);
		if (keep != NULL && n != NULL && strcmp(n, keep) == 0)
			json_array_append(kept, v);
		else if (n != NULL)
			json_object_set_new(failed, n, json_string(msg));
	}
	if (json_is_array(json_object_get(args, "NodeNames")))
		json_object_set(res, "NodeNames", kept);
	else {
		items = json_array();
		json_array_foreach (k8s_obj_get(args, "Nodes.items"), i, v)
			if (keep != NULL && k8s_obj_name(v) != NULL &&
			    strcmp(k8s_obj_name(v), keep) == 0)
				json_array_append(items, v);
		json_object_set_new(res, "Nodes",
		    json_pack("{s:o}", "items", items));
	}
	json_object_set_new(res,
	    resolvable ? "FailedNodes" : "FailedAndUnresolvableNodes", failed);
	json_object_set_new(res, "Error", json_string(""));
	json_decref(kept);
	json_decref(names);
	return (res);
}

/* Not a bridged pod: every candidate stays. */
static json_t *
endpoints_passthrough(const json_t *args)
{
	json_t *res = json_pack("{s:{}, s:s}", "FailedNodes", "Error", "");

	if (json_is_array(json_object_get(args, "NodeNames")))
		json_object_set(res, "NodeNames",
		    json_object_get(args, "NodeNames"));
	else
		json_object_set(res, "Nodes", json_object_get(args, "Nodes"));
	return (res);
}

static void
endpoints_filter(struct endpoints *a, const json_t *args,
    struct httpd_response *resp)
{
	struct ext_call *c;
	json_t		*pod = json_object_get(args, "Pod"), *out, *names;
	char		 msg[700];

	if (!json_is_object(pod) || k8s_obj_name(pod) == NULL) {
		endpoints_json(resp,
		    json_pack("{s:s}", "Error",
			"ExtenderArgs.Pod "
			"is missing or has no name"));
		return;
	}
	c = extcall_new(EXT_FILTER);
	/*
	 * kube-scheduler ran all its filters: the job may use only the nodes
	 * that passed them (its candidates), besides the bridge's own rule.
	 */
	names = endpoints_node_names(args);
	c->pod = fit_restrict(pod, names);
	json_decref(names);
	if (endpoints_call(a, c) == -1)
		out = json_pack("{s:s}", "Error",
		    "slurm-bridge did not answer "
		    "in time; try again");
	else if (!c->managed)
		out = endpoints_passthrough(args);
	else if (c->node_out[0] != '\0') {
		snprintf(msg, sizeof(msg),
		    "Slurm allocated node %s to this pod", c->node_out);
		out = endpoints_filter_result(args, c->node_out, msg, 1);
	} else
		out = endpoints_filter_result(args, NULL, c->msg,
		    c->resolvable);
	extcall_release(c);
	endpoints_json(resp, out);
}

/* HostPriorityList: the node Slurm chose scores the most. */
static void
endpoints_prioritize(const json_t *args, struct httpd_response *resp)
{
	const char *slurm = k8s_obj_annotation(json_object_get(args, "Pod"),
	    ANN_SLURM_NODE);
	json_t	   *names = endpoints_node_names(args), *out = json_array(), *v;
	size_t	    i;

	json_array_foreach (names, i, v)
		json_array_append_new(out,
		    json_pack("{s:O, s:i}", "Host", v, "Score",
			slurm != NULL &&
				strcmp(slurm, json_string_value(v)) == 0 ?
			    10 :
			    0));
	json_decref(names);
	endpoints_json(resp, out);
}

static void
endpoints_bind(struct endpoints *a, const json_t *args,
    struct httpd_response *resp)
{
	struct ext_call *c;
	const char	*ns, *name, *uid, *node;
	json_t		*out;

	ns = json_string_value(json_object_get(args, "PodNamespace"));
	name = json_string_value(json_object_get(args, "PodName"));
	uid = json_string_value(json_object_get(args, "PodUID"));
	node = json_string_value(json_object_get(args, "Node"));
	if (ns == NULL || name == NULL || node == NULL) {
		endpoints_json(resp,
		    json_pack("{s:s}", "Error",
			"ExtenderBindingArgs "
			"needs PodNamespace, PodName and Node"));
		return;
	}
	c = extcall_new(EXT_BIND);
	snprintf(c->ns, sizeof(c->ns), "%s", ns);
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->uid, sizeof(c->uid), "%s", uid != NULL ? uid : "");
	snprintf(c->node, sizeof(c->node), "%s", node);
	if (endpoints_call(a, c) == -1)
		out = json_pack("{s:s}", "Error",
		    "slurm-bridge did not answer "
		    "in time; try again");
	else
		out = json_pack("{s:s}", "Error", c->msg);
	extcall_release(c);
	endpoints_json(resp, out);
}

static int
endpoints_is_extender(const char *url)
{
	return (strcmp(url, "/filter") == 0 ||
	    strcmp(url, "/prioritize") == 0 || strcmp(url, "/bind") == 0);
}

/*
 * With --client-ca: refuses (403, returns 1) a client without a verified
 * certificate, saying what it needs for what.
 */
static int
endpoints_need_cert(struct endpoints *a, const struct httpd_request *req,
    struct httpd_response *resp, const char *what)
{
	char msg[640];

	if (req->client_verified)
		return (0);
	snprintf(msg, sizeof(msg),
	    "%s needs a client certificate signed by the --client-ca, for "
	    "clientAuth, naming one of --client-name (%s): %s\n",
	    what, a->client_names, req->client_why);
	httpd_reply(resp, 403, "text/plain", msg);
	return (1);
}

/*
 * Refuses an extender call the caller may not make (sets resp, returns
 * 1): /bind binds any pod with the scheduler's rights and /filter submits
 * Slurm jobs, so only a client certificate from --client-ca, for client
 * authentication and with a --client-name, may call them; without
 * --client-ca nobody may.  Runs on the headers, before the body is read.
 */
static int
endpoints_refuse(struct endpoints *a, const struct httpd_request *req,
    struct httpd_response *resp)
{
	if (strcmp(req->method, "POST") != 0) {
		httpd_reply(resp, 405, "text/plain", "use POST\n");
		return (1);
	}
	if (!a->client_ca) {
		httpd_reply(resp, 403, "text/plain",
		    "the extender API (/filter, /prioritize, /bind) is off: "
		    "it binds pods and submits Slurm jobs, so it answers only "
		    "clients with a certificate; start slurm-bridge with "
		    "--tls-cert, --tls-key and --client-ca (and --client-name)\n");
		return (1);
	}
	return (endpoints_need_cert(a, req, resp, "the extender API"));
}

/*
 * Refuses a /debug/ call the caller may not make (sets resp, returns 1):
 * what it shows is the scheduler's insides, and /debug/memory takes every
 * malloc arena's lock, so with --client-ca only a client certificate as the
 * extender API asks for, and without it only a client on this host
 * (kubectl exec or port-forward, the local stack's tests) is answered.
 */
static int
endpoints_debug_refuse(struct endpoints *a, const struct httpd_request *req,
    struct httpd_response *resp)
{
	if (strcmp(req->method, "GET") != 0) {
		httpd_reply(resp, 405, "text/plain", "use GET\n");
		return (1);
	}
	if (a->client_ca)
		return (endpoints_need_cert(a, req, resp, "/debug/"));
	if (!req->loopback) {
		httpd_reply(resp, 403, "text/plain",
		    "/debug/ answers only clients on the scheduler's own host "
		    "(kubectl port-forward or exec), or with --client-ca a "
		    "client certificate\n");
		return (1);
	}
	return (0);
}

static int
endpoints_is_debug(const char *url)
{
	return (strncmp(url, "/debug/", 7) == 0);
}

/* The headers of a request: an extender call is refused before its body. */
static void
endpoints_check(void *arg, const struct httpd_request *req,
    struct httpd_response *resp)
{
	struct endpoints *a = arg;

	if (endpoints_is_extender(req->url))
		(void)endpoints_refuse(a, req, resp);
	else if (endpoints_is_debug(req->url))
		(void)endpoints_debug_refuse(a, req, resp);
}

/* POST /filter, /prioritize, /bind. */
static void
endpoints_extender(struct endpoints *a, const struct httpd_request *req,
    struct httpd_response *resp)
{
	json_t	    *args;
	json_error_t jerr;
	char	     err[256];

	if (endpoints_refuse(a, req, resp))
		return;
	if ((args = json_loadb(req->body, req->len, 0, &jerr)) == NULL ||
	    !json_is_object(args)) {
		snprintf(err, sizeof(err), "body is not a JSON object: %s\n",
		    args == NULL ? jerr.text : "not an object");
		json_decref(args);
		httpd_reply(resp, 400, "text/plain", err);
		return;
	}
	if (!atomic_load(&bstats.leader) || !atomic_load(&bstats.recovered))
		endpoints_json(resp,
		    json_pack("{s:s}", "Error",
			"slurm-bridge is not "
			"ready (not the leader, or still syncing)"));
	else if (strcmp(req->url, "/filter") == 0)
		endpoints_filter(a, args, resp);
	else if (strcmp(req->url, "/prioritize") == 0)
		endpoints_prioritize(args, resp);
	else
		endpoints_bind(a, args, resp);
	json_decref(args);
}

static void
endpoints_handle(void *arg, const struct httpd_request *req,
    struct httpd_response *resp)
{
	struct endpoints *a = arg;

	char *mem;

	if (endpoints_is_extender(req->url))
		endpoints_extender(a, req, resp);
	else if (endpoints_is_debug(req->url) &&
	    endpoints_debug_refuse(a, req, resp))
		return;
	else if (strcmp(req->url, "/debug/memory") == 0) {
		mem = memstats_json(&a->src);
		httpd_reply(resp, 200, "application/json", mem);
		free(mem);
	} else
		httpd_health(req, resp,
		    &(struct httpd_health){ endpoints_unready,
			endpoints_metrics, a });
}

struct endpoints *
endpoints_start(const struct bridge_conf *conf,
    const struct endpoints_source *src, char *err, size_t errlen)
{
	struct endpoints *a = xcalloc(1, sizeof(*a));
	struct httpd_opts o;

	a->src = *src;
	memset(&o, 0, sizeof(o));
	if (httpd_parse_listen("--listen", conf->listen, &o.addr, err,
		errlen) == -1)
		goto fail;
	o.listen = conf->listen;
	o.tls_cert = conf->tls_cert;
	o.tls_key = conf->tls_key;
	o.client_ca = conf->client_ca;
	o.client_names = conf->client_names;
	a->client_ca = conf->client_ca != NULL;
	a->client_names = conf->client_names;
	o.max_body = API_MAX_BODY;
	o.threads = ENDPOINTS_THREADS;
	o.max_conns = conf->max_conns;
	o.max_conns_per_client = conf->max_conns_per_client;
	o.handler = endpoints_handle;
	o.check = endpoints_check;
	o.arg = a;
	if ((a->httpd = httpd_start(&o, err, errlen)) == NULL)
		goto fail;
	return (a);
fail:
	free(a);
	return (NULL);
}

void
endpoints_stop(struct endpoints *a)
{
	if (a == NULL)
		return;
	httpd_stop(a->httpd);
	free(a);
}
