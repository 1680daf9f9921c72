/* The message queue: order, timeout, close, and a producer thread. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include <check.h>

#include "xmalloc.h"
#include "bridge.h"
#include "check_suites.h"

/*
 * slurm.c's sctl_load_free, which queue_msg_free calls for a load (the
 * unit binary has no libslurm): counts the loads freed.
 */
static int loads_freed;

void
sctl_load_free(struct sload *l)
{
	if (l != NULL)
		loads_freed++;
	free(l);
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

Suite *
queue_suite(void)
{
	Suite *s = suite_create("queue");
	TCase *tc = tcase_create("queue");

	tcase_add_test(tc, test_queue_fifo_timeout);
	tcase_add_test(tc, test_queue_threads_close);
	tcase_add_test(tc, test_fail_thread);
	suite_add_tcase(s, tc);
	return (s);
}
