/*
 * Logging to stderr.  Any thread may call it: each line is formatted into a
 * local buffer and written with one write(2), so no mutex is needed.  The
 * verbosity is set once by main before threads start.
 */
#include <sys/time.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static int		  log_level;
static _Thread_local char log_name[32] = "main";

void
log_init(int verbose)
{
	log_level = verbose;
}

void
log_setname(const char *name)
{
	snprintf(log_name, sizeof(log_name), "%s", name);
}

/*
 * Escapes the control characters of text[0..len) into out (a log line is
 * one line: a newline in a value a tenant wrote must not start a forged
 * one): \n, \r, \t, else \xHH.  The length written, within outlen.
 */
static size_t
log_escape(const char *text, size_t len, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char	  c;
	size_t		  i, o = 0;

	for (i = 0; i < len && o + 4 < outlen; i++) {
		c = (unsigned char)text[i];
		if (c >= 0x20 && c != 0x7f) {
			out[o++] = (char)c;
			continue;
		}
		out[o++] = '\\';
		if (c == '\n')
			out[o++] = 'n';
		else if (c == '\r')
			out[o++] = 'r';
		else if (c == '\t')
			out[o++] = 't';
		else {
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	return (o);
}

static void
log_vwrite(const char *level, const char *fmt, va_list ap, int err)
{
	char	       line[2048], msg[2048];
	struct timeval tv;
	struct tm      tm;
	int	       n, m;

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	n = snprintf(line, sizeof(line),
	    "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ %s %s: ", tm.tm_year + 1900,
	    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	    (int)(tv.tv_usec / 1000), level, log_name);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	m = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (m < 0)
		m = 0;
	if ((size_t)m >= sizeof(msg))
		m = sizeof(msg) - 1;
	n += (int)log_escape(msg, (size_t)m, line + n, sizeof(line) - n);
	if ((size_t)n >= sizeof(line) - 2)
		n = sizeof(line) - 2;
	if (err != 0)
		n += snprintf(line + n, sizeof(line) - n, ": %s",
		    strerror(err));
	if ((size_t)n >= sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	(void)!write(STDERR_FILENO, line, n);
}

#define LOG_BODY(level, err) \
	do { \
		va_list ap; \
		va_start(ap, fmt); \
		log_vwrite(level, fmt, ap, err); \
		va_end(ap); \
	} while (0)

void
log_warn(const char *fmt, ...)
{
	int saved = errno;

	LOG_BODY("warn", saved);
	errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
	LOG_BODY("warn", 0);
}

void
log_info(const char *fmt, ...)
{
	LOG_BODY("info", 0);
}

void
log_debug(const char *fmt, ...)
{
	if (log_level < 1)
		return;
	LOG_BODY("debug", 0);
}

void
fatal(const char *fmt, ...)
{
	LOG_BODY("fatal", errno);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	LOG_BODY("fatal", 0);
	exit(1);
}
