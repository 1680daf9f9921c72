/*
 * The end thread (ender.c), on its own thread: an end that frees nodes
 * goes before bulk cancels asked earlier, but for a batch after END_FAIR
 * of them in a row; bulk cancels go END_BATCH to a call of make, each
 * answered as its own MSG_ENDED message, a namespace at a time in turn.
 */
#include <pthread.h>
#include <stdlib.h>

#include <check.h>

#include "xmalloc.h"
#include "bridge.h"
#include "check_suites.h"

#define CALLS 40

/* What make was called with: each call's job ids. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t	cond;
	int		entered; /* the first call is in make */
	int		release; /* ... and may return */
	int		bad;	 /* a call out of bounds */
	size_t		ncalls;
	size_t		n[CALLS];
	uint32_t	ids[CALLS][END_BATCH];
} rec = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0,
	{ 0 }, { { 0 } } };

/*
 * On the end thread, so no ck_assert here (rec.bad is checked after).
 * The first call waits until the test has pushed what comes after it.
 */
static void
rec_make(struct ereq **es, size_t n)
{
	size_t i, c;

	pthread_mutex_lock(&rec.lock);
	c = rec.ncalls++;
	if (c >= CALLS || n > END_BATCH) {
		rec.bad = 1;
		pthread_mutex_unlock(&rec.lock);
		return;
	}
	rec.n[c] = n;
	for (i = 0; i < n; i++) {
		rec.ids[c][i] = es[i]->jobid;
		es[i]->rc = 0;
	}
	if (c == 0) {
		rec.entered = 1;
		pthread_cond_broadcast(&rec.cond);
		while (!rec.release)
			pthread_cond_wait(&rec.cond, &rec.lock);
	}
	pthread_mutex_unlock(&rec.lock);
}

/* Forgets the calls of an earlier test (CK_FORK=no runs all in one). */
static void
rec_reset(void)
{
	pthread_mutex_lock(&rec.lock);
	rec.entered = rec.release = rec.bad = 0;
	rec.ncalls = 0;
	pthread_mutex_unlock(&rec.lock);
}

/* Waits until the end thread is in its first call of make. */
static void
rec_wait_entered(void)
{
	pthread_mutex_lock(&rec.lock);
	while (!rec.entered)
		pthread_cond_wait(&rec.cond, &rec.lock);
	pthread_mutex_unlock(&rec.lock);
}

/* Lets the first call of make return. */
static void
rec_release(void)
{
	pthread_mutex_lock(&rec.lock);
	rec.release = 1;
	pthread_cond_broadcast(&rec.cond);
	pthread_mutex_unlock(&rec.lock);
}

static struct ereq *
req(uint32_t jobid, int bulk)
{
	struct ereq *e = ereq_new(bulk ? NULL : "ns/g", jobid);

	e->bulk = bulk;
	return (e);
}

START_TEST(test_ender_lanes)
{
	struct queue  *q;
	struct ender  *en;
	struct msg    *msg;
	const uint32_t nbulk = END_BATCH + 5;
	uint32_t       i, want[END_BATCH + 7];
	size_t	       k = 0;

	rec_reset();
	q = queue_new();
	en = ender_new(q, rec_make, END_BATCH, 1);
	ck_assert_ptr_nonnull(en);
	/* Job 1 frees nodes: made at once, and held in make. */
	ender_push(en, req(1, 0));
	rec_wait_entered();
	/* Meanwhile: bulk cancels 100.., then job 2, which frees nodes. */
	for (i = 0; i < nbulk; i++)
		ender_push(en, req(100 + i, 1));
	ender_push(en, req(2, 0));
	rec_release();

	/* Answers in the order made: 1, 2, then the bulk in asked order. */
	want[k++] = 1;
	want[k++] = 2;
	for (i = 0; i < nbulk; i++)
		want[k++] = 100 + i;
	for (i = 0; i < k; i++) {
		msg = queue_pop(q, 5000);
		ck_assert_ptr_nonnull(msg);
		ck_assert_int_eq(msg->kind, MSG_ENDED);
		ck_assert_uint_eq(msg->end->jobid, want[i]);
		queue_msg_free(msg);
	}
	ender_free(en);
	ck_assert_int_eq(rec.bad, 0);
	/* Calls: {1}, {2}, END_BATCH bulk, the 5 left. */
	ck_assert_uint_eq(rec.ncalls, 4);
	ck_assert_uint_eq(rec.n[0], 1);
	ck_assert_uint_eq(rec.ids[0][0], 1);
	ck_assert_uint_eq(rec.n[1], 1);
	ck_assert_uint_eq(rec.ids[1][0], 2);
	ck_assert_uint_eq(rec.n[2], END_BATCH);
	ck_assert_uint_eq(rec.ids[2][0], 100);
	ck_assert_uint_eq(rec.ids[2][END_BATCH - 1], 100 + END_BATCH - 1);
	ck_assert_uint_eq(rec.n[3], 5);
	ck_assert_uint_eq(rec.ids[3][4], 100 + nbulk - 1);
	queue_free(q);
}
END_TEST

/*
 * Under steady ends that free nodes, bulk cancels still go: a batch after
 * END_FAIR of those in a row.
 */
START_TEST(test_ender_fair)
{
	struct queue *q;
	struct ender *en;
	struct msg   *msg;
	uint32_t      i, nfree = END_FAIR + 4;

	rec_reset();
	q = queue_new();
	en = ender_new(q, rec_make, END_BATCH, 1);
	ck_assert_ptr_nonnull(en);
	ender_push(en, req(1, 0));
	rec_wait_entered();
	ender_push(en, req(100, 1));
	for (i = 2; i <= nfree; i++)
		ender_push(en, req(i, 0));
	rec_release();
	for (i = 0; i < nfree + 1; i++) {
		msg = queue_pop(q, 5000);
		ck_assert_ptr_nonnull(msg);
		queue_msg_free(msg);
	}
	ender_free(en);
	ck_assert_int_eq(rec.bad, 0);
	/* Job 1 and END_FAIR - 1 more, then the bulk cancel, then the rest. */
	ck_assert_uint_eq(rec.ncalls, nfree + 1);
	ck_assert_uint_eq(rec.ids[END_FAIR - 1][0], END_FAIR);
	ck_assert_uint_eq(rec.ids[END_FAIR][0], 100);
	ck_assert_uint_eq(rec.ids[END_FAIR + 1][0], END_FAIR + 1);
	queue_free(q);
}
END_TEST

/* A bulk cancel of group gkey's job. */
static struct ereq *
req_ns(uint32_t jobid, const char *gkey)
{
	struct ereq *e = ereq_new(gkey, jobid);

	e->bulk = 1;
	return (e);
}

/*
 * Bulk cancels go a namespace at a time in turn, an orphan's in a lane of
 * its own; one promoted (its job started) leaves its lane for the front.
 */
START_TEST(test_ender_namespaces)
{
	static const uint32_t want[4][4] = { { 1 }, { 103 },
		{ 100, 200, 300, 101 }, { 201, 102, 104, 105 } };
	static const size_t   wantn[4] = { 1, 1, 4, 4 };
	struct queue	     *q;
	struct ender	     *en;
	struct msg	     *msg;
	uint32_t	      i, c;

	rec_reset();
	q = queue_new();
	en = ender_new(q, rec_make, 4, 1);
	ck_assert_ptr_nonnull(en);
	ender_push(en, req(1, 0));
	rec_wait_entered();
	for (i = 0; i < 6; i++)
		ender_push(en, req_ns(100 + i, "gang:a/x"));
	for (i = 0; i < 2; i++)
		ender_push(en, req_ns(200 + i, "pod:b/y"));
	ender_push(en, req(300, 1));
	ender_promote(en, 103);
	rec_release();
	for (i = 0; i < 10; i++) {
		msg = queue_pop(q, 5000);
		ck_assert_ptr_nonnull(msg);
		queue_msg_free(msg);
	}
	ender_free(en);
	ck_assert_int_eq(rec.bad, 0);
	ck_assert_uint_eq(rec.ncalls, 4);
	for (c = 0; c < 4; c++) {
		ck_assert_uint_eq(rec.n[c], wantn[c]);
		for (i = 0; i < wantn[c]; i++)
			ck_assert_uint_eq(rec.ids[c][i], want[c][i]);
	}
	queue_free(q);
}
END_TEST

Suite *
ender_suite(void)
{
	Suite *s = suite_create("ender");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_ender_lanes);
	tcase_add_test(tc, test_ender_fair);
	tcase_add_test(tc, test_ender_namespaces);
	suite_add_tcase(s, tc);
	return (s);
}
