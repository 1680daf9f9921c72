/*
 * Logging shared by libk8s users (both daemons and the tests).  Output goes
 * to stderr, one line per call, formatted first and written with a single
 * write(2) so that lines from different threads never interleave.  The
 * thread name (log_setname) is thread-local and prefixes every line.
 */
#ifndef LOG_H
#define LOG_H

#include <stdarg.h>

void log_init(int verbose);
void log_setname(const char *name);
void log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* LOG_H */
