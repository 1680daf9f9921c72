/*
 * Concurrent pod writes for the reconcile thread.  A fixed set of threads,
 * each with its own client, all drawing on one shared rate limit.  The
 * reconcile thread hands over a batch and waits for all of it (fork-join),
 * so the cache it owns never changes while writes are in flight and every
 * result is applied on its own thread.
 */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

struct writepool {
	pthread_mutex_t		 lock;
	pthread_cond_t		 work;	/* a batch came, or stop */
	pthread_cond_t		 idle;	/* the batch is done */
	struct wreq		*batch;
	size_t			 n, next, done;
	int			 stop;
	int			 nthreads;
	pthread_t		*threads;
	struct k8s_client	**clients;
};

static void
writepool_do(struct k8s_client *c, struct wreq *w)
{
	char	path[600];

	if (w->kind == WREQ_BIND) {
		w->rc = k8s_pod_bind(c, w->ns, w->name, w->uid, w->node,
		    &w->err);
		return;
	}
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", w->ns,
	    w->name);
	w->rc = k8s_patch(c, path, K8S_PATCH_STRATEGIC, w->patch, NULL,
	    &w->err);
}

struct worker_arg {
	struct writepool	*p;
	int			 i;
};

static void *
writepool_main(void *arg)
{
	struct worker_arg	*wa = arg;
	struct writepool	*p = wa->p;
	struct k8s_client	*c = p->clients[wa->i];
	struct wreq		*w;

	free(wa);
	log_setname("writer");
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->stop && (p->batch == NULL || p->next >= p->n))
			pthread_cond_wait(&p->work, &p->lock);
		if (p->stop)
			break;
		w = &p->batch[p->next++];
		pthread_mutex_unlock(&p->lock);
		writepool_do(c, w);
		pthread_mutex_lock(&p->lock);
		if (++p->done == p->n)
			pthread_cond_signal(&p->idle);
	}
	pthread_mutex_unlock(&p->lock);
	return (NULL);
}

struct writepool *
writepool_new(const struct k8s_config *kconf, struct k8s_limiter *lim,
    int nthreads, char *err, size_t errlen)
{
	struct writepool	*p;
	struct worker_arg	*wa;
	struct k8s_error	 kerr;
	int			 i;

	p = xcalloc(1, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->idle, NULL);
	p->threads = xcalloc((size_t)nthreads, sizeof(*p->threads));
	p->clients = xcalloc((size_t)nthreads, sizeof(*p->clients));
	for (i = 0; i < nthreads; i++) {
		if ((p->clients[i] = k8s_client_new(kconf, &kerr)) == NULL) {
			snprintf(err, errlen, "writer client: %s", kerr.text);
			goto fail;
		}
		k8s_client_set_limiter(p->clients[i], lim);
		wa = xcalloc(1, sizeof(*wa));
		wa->p = p;
		wa->i = i;
		if (pthread_create(&p->threads[i], NULL, writepool_main, wa)
		    != 0) {
			free(wa);
			k8s_client_free(p->clients[i]);
			p->clients[i] = NULL;
			snprintf(err, errlen, "writer thread: cannot start");
			goto fail;
		}
		p->nthreads++;
	}
	return (p);
 fail:
	writepool_free(p);
	return (NULL);
}

void
writepool_free(struct writepool *p)
{
	int	i;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->nthreads; i++) {
		pthread_join(p->threads[i], NULL);
		k8s_client_free(p->clients[i]);
	}
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->idle);
	free(p->threads);
	free(p->clients);
	free(p);
}

void
writepool_run(struct writepool *p, struct wreq *reqs, size_t n)
{
	if (n == 0)
		return;
	pthread_mutex_lock(&p->lock);
	p->batch = reqs;
	p->n = n;
	p->next = p->done = 0;
	pthread_cond_broadcast(&p->work);
	while (p->done < p->n)
		pthread_cond_wait(&p->idle, &p->lock);
	p->batch = NULL;
	p->n = p->next = p->done = 0;
	pthread_mutex_unlock(&p->lock);
}
