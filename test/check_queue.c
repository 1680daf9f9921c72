/*
 * The message queue: order, timeout, close, and a producer thread; the
 * submit threads' lanes (queue.c).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include <check.h>

#include "xmalloc.h"
#include "bridge.h"
#include "check_suites.h"

/*
 * slurmload.c's sctl_load_free, which queue_msg_free and the poll thread call
 * for a load (the unit binary has no libslurm): counts the loads freed.
 * The poll thread's loads and probes are stubs too.
 */
static atomic_int loads_freed;

void
sctl_load_free(struct sload *l)
{
	if (l != NULL)
		atomic_fetch_add(&loads_freed, 1);
	free(l);
}

struct sload *
sctl_load(time_t since)
{
	(void)since;
	return (xmalloc(16));
}

int
sctl_jobs_started(uint32_t *started)
{
	*started = 0;
	return (0);
}

static struct msg *
msg_new(int n)
{
	struct msg *msg = xcalloc(1, sizeof(*msg));

	msg->kind = MSG_POD;
	msg->obj = json_integer(n);
	return (msg);
}

START_TEST(test_queue_fifo_timeout)
{
	struct queue   *q = queue_new();
	struct msg     *msg;
	struct timespec a, b;
	int		i;

	for (i = 0; i < 5; i++)
		queue_push(q, msg_new(i));
	ck_assert_uint_eq(queue_len(q), 5);
	for (i = 0; i < 5; i++) {
		msg = queue_pop(q, 0);
		ck_assert_ptr_nonnull(msg);
		ck_assert_int_eq(json_integer_value(msg->obj), i);
		queue_msg_free(msg);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	ck_assert_ptr_null(queue_pop(q, 50));
	clock_gettime(CLOCK_MONOTONIC, &b);
	ck_assert_int_ge((b.tv_sec - a.tv_sec) * 1000 +
		(b.tv_nsec - a.tv_nsec) / 1000000,
	    45);
	/* Freeing with queued messages releases them, a load too. */
	queue_push(q, msg_new(9));
	msg = xcalloc(1, sizeof(*msg));
	msg->kind = MSG_POLLED;
	msg->load = xcalloc(1, 16); /* opaque to the queue */
	queue_push(q, msg);
	loads_freed = 0;
	queue_free(q);
	ck_assert_int_eq(loads_freed, 1);
}
END_TEST

static void *
producer(void *arg)
{
	int i;

	for (i = 0; i < 1000; i++)
		queue_push(arg, msg_new(i));
	return (NULL);
}

START_TEST(test_queue_threads_close)
{
	struct queue *q = queue_new();
	struct msg   *msg;
	pthread_t     t;
	int	      i;

	pthread_create(&t, NULL, producer, q);
	for (i = 0; i < 1000; i++) {
		msg = queue_pop(q, 5000);
		ck_assert_ptr_nonnull(msg);
		ck_assert_int_eq(json_integer_value(msg->obj), i);
		queue_msg_free(msg);
	}
	pthread_join(t, NULL);
	queue_close(q);
	ck_assert_ptr_null(queue_pop(q, 5000)); /* returns at once */
	queue_free(q);
}
END_TEST

/* A failed thread stops the daemon: SIGTERM to itself, once. */
START_TEST(test_fail_thread)
{
	struct timespec ts = { 1, 0 };
	sigset_t	set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	ck_assert_int_eq(fail_happened(), 0);
	fail_thread("test", "client: %s", "no server");
	fail_thread("test", "again");
	ck_assert_int_eq(fail_happened(), 1);
	ck_assert_int_eq(sigtimedwait(&set, NULL, &ts), SIGTERM);
	/* Only the first failure signals. */
	ts.tv_sec = 0;
	ts.tv_nsec = 100000000;
	ck_assert_int_eq(sigtimedwait(&set, NULL, &ts), -1);
}
END_TEST

/* 10 ms. */
static void
queue_test_nap(void)
{
	struct timespec ts = { 0, 10000000 };

	nanosleep(&ts, NULL);
}

/*
 * The poll thread frees a spent load and trims after it when asked, off
 * the caller's thread; what it has not come to when it stops is freed.
 */
START_TEST(test_poller_spent)
{
	struct queue  *q = queue_new();
	struct poller *p = poller_new(q, 1);
	long long      trims = atomic_load(&bstats.trims);
	int	       i;

	ck_assert_ptr_nonnull(p);
	atomic_store(&loads_freed, 0);
	poller_spent(p, xmalloc(16), 1);
	for (i = 0; i < 200 && atomic_load(&loads_freed) < 1; i++)
		queue_test_nap();
	ck_assert_int_eq(atomic_load(&loads_freed), 1);
	for (i = 0; i < 200 && atomic_load(&bstats.trims) < trims + 1; i++)
		queue_test_nap();
	ck_assert_int_eq(atomic_load(&bstats.trims), trims + 1);
	poller_spent(p, xmalloc(16), 0);
	poller_spent(p, xmalloc(16), 0);
	poller_free(p);
	ck_assert_int_eq(atomic_load(&loads_freed), 3);
	ck_assert_int_eq(atomic_load(&bstats.trims), trims + 1);
	queue_free(q);
}
END_TEST

/*
 * The submit threads' lanes: a namespace with a thousand requests waiting
 * delays another's first by one, each namespace keeps its own order across
 * a ring that wraps and grows, and an empty lane is gone.
 */
START_TEST(test_lanes_turns)
{
	struct lanes *ls = lanes_new();
	int	      a[1000], b[3], c[12], i;

	for (i = 0; i < 1000; i++) {
		a[i] = i;
		lanes_push(ls, "backlog", &a[i]);
	}
	for (i = 0; i < 3; i++) {
		b[i] = i;
		lanes_push(ls, "tenant", &b[i]);
	}
	ck_assert_uint_eq(lanes_count(ls), 1003);
	ck_assert_uint_eq(lanes_namespaces(ls), 2);
	for (i = 0; i < 3; i++) {
		ck_assert_ptr_eq(lanes_take(ls), &a[i]);
		ck_assert_ptr_eq(lanes_take(ls), &b[i]);
	}
	ck_assert_uint_eq(lanes_namespaces(ls), 1);
	for (i = 3; i < 1000; i++)
		ck_assert_ptr_eq(lanes_take(ls), &a[i]);
	ck_assert_ptr_null(lanes_take(ls));
	ck_assert_uint_eq(lanes_count(ls), 0);
	ck_assert_uint_eq(lanes_namespaces(ls), 0);

	/* A ring whose head moved, then grows: the order holds. */
	for (i = 0; i < 12; i++)
		c[i] = i;
	for (i = 0; i < 3; i++)
		lanes_push(ls, NULL, &c[i]);
	ck_assert_ptr_eq(lanes_take(ls), &c[0]);
	ck_assert_ptr_eq(lanes_take(ls), &c[1]);
	for (i = 3; i < 12; i++)
		lanes_push(ls, "", &c[i]);
	for (i = 2; i < 12; i++)
		ck_assert_ptr_eq(lanes_take(ls), &c[i]);
	ck_assert_ptr_null(lanes_take(ls));
	lanes_free(ls, NULL);
}
END_TEST

static int
lanes_is(const void *item, const void *arg)
{
	return (item == arg);
}

/*
 * Taking one item out from anywhere: its lane keeps its order and its
 * turn, and a lane left empty is gone, the last one too.
 */
START_TEST(test_lanes_remove)
{
	struct lanes *ls = lanes_new();
	int	      a[4], b[2], c[1], d[1], i;

	for (i = 0; i < 4; i++)
		lanes_push(ls, "a", &a[i]);
	for (i = 0; i < 2; i++)
		lanes_push(ls, "b", &b[i]);
	lanes_push(ls, "c", &c[0]);
	ck_assert_ptr_eq(lanes_remove(ls, lanes_is, &a[1]), &a[1]);
	ck_assert_ptr_null(lanes_remove(ls, lanes_is, &a[1]));
	/* The last lane's only item: the lane goes, and a new one follows. */
	ck_assert_ptr_eq(lanes_remove(ls, lanes_is, &c[0]), &c[0]);
	ck_assert_uint_eq(lanes_namespaces(ls), 2);
	lanes_push(ls, "d", &d[0]);
	ck_assert_uint_eq(lanes_count(ls), 6);
	ck_assert_ptr_eq(lanes_take(ls), &a[0]);
	ck_assert_ptr_eq(lanes_take(ls), &b[0]);
	ck_assert_ptr_eq(lanes_take(ls), &d[0]);
	ck_assert_ptr_eq(lanes_take(ls), &a[2]);
	/* The first lane's only item left. */
	ck_assert_ptr_eq(lanes_remove(ls, lanes_is, &b[1]), &b[1]);
	ck_assert_ptr_eq(lanes_take(ls), &a[3]);
	ck_assert_ptr_null(lanes_take(ls));
	ck_assert_uint_eq(lanes_namespaces(ls), 0);
	lanes_free(ls, NULL);
}
END_TEST

static int lanes_freed;

static void
lanes_free_cb(void *item)
{
	(void)item;
	lanes_freed++;
}

/* What still waits at the end is handed to the free callback. */
START_TEST(test_lanes_free)
{
	struct lanes *ls = lanes_new();
	int	      x[5], i;

	for (i = 0; i < 5; i++)
		lanes_push(ls, i % 2 ? "odd" : "even", &x[i]);
	ck_assert_ptr_eq(lanes_take(ls), &x[0]);
	lanes_freed = 0;
	lanes_free(ls, lanes_free_cb);
	ck_assert_int_eq(lanes_freed, 4);
	lanes_free(NULL, lanes_free_cb);
}
END_TEST

Suite *
queue_suite(void)
{
	Suite *s = suite_create("queue");
	TCase *tc = tcase_create("queue");

	tcase_add_test(tc, test_queue_fifo_timeout);
	tcase_add_test(tc, test_queue_threads_close);
	tcase_add_test(tc, test_fail_thread);
	tcase_add_test(tc, test_lanes_turns);
	tcase_add_test(tc, test_poller_spent);
	tcase_add_test(tc, test_lanes_free);
	tcase_add_test(tc, test_lanes_remove);
	suite_add_tcase(s, tc);
	return (s);
}
