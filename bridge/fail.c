/*
 * A thread the daemon cannot run without failed: it says why, and the
 * daemon stops as if sent SIGTERM, then exits with status 1, so Kubernetes
 * restarts it instead of leaving a process that answers /healthz but does
 * nothing.  Any thread.
 *
 * Threads: eventer (fail_thread), reconcile (fail_thread).
 */
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"
#include "bridge.h"

static atomic_int fail_count;

void
fail_thread(const char *who, const char *fmt, ...)
{
	va_list ap;
	char	msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_warnx("%s: %s; the %s thread cannot go on, stopping the daemon",
	    who, msg, who);
	if (atomic_fetch_add(&fail_count, 1) == 0)
		kill(getpid(), SIGTERM);
}

int
fail_happened(void)
{
	return (atomic_load(&fail_count) > 0);
}
