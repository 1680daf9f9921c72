/*
 * Encodings the API uses: URL query escapes, MicroTime timestamps (made
 * and read) and base64.  Pure; any thread; strings returned are the caller's.
 */
#include <sys/time.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "internal.h"

char *
k8s_urlencode(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	struct buf	  b;
	unsigned char	  ch;

	buf_init(&b);
	for (; *s != '\0'; s++) {
		ch = (unsigned char)*s;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || strchr("-._~", ch) != NULL) {
			buf_add(&b, s, 1);
		} else {
			char enc[3] = { '%', hex[ch >> 4], hex[ch & 15] };
			buf_add(&b, enc, 3);
		}
	}
	return (buf_release(&b));
}

char *
k8s_microtime(char *buf, size_t len, const struct timeval *when)
{
	struct timeval tv;
	struct tm      tm;

	if (when != NULL)
		tv = *when;
	else
		gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	    tm.tm_sec, (int)tv.tv_usec);
	return (buf);
}

int64_t
k8s_time_parse(const char *s)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (s == NULL || strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) == NULL)
		return (0);
	return ((int64_t)timegm(&tm));
}

char *
k8s_base64_encode(const void *data, size_t len)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *in = data;
	struct buf	     out;
	unsigned int	     v;
	size_t		     i;
	char		     q[4];

	buf_init(&out);
	for (i = 0; i < len; i += 3) {
		v = (unsigned int)in[i] << 16;
		if (i + 1 < len)
			v |= (unsigned int)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		q[0] = tab[(v >> 18) & 63];
		q[1] = tab[(v >> 12) & 63];
		q[2] = i + 1 < len ? tab[(v >> 6) & 63] : '=';
		q[3] = i + 2 < len ? tab[v & 63] : '=';
		buf_add(&out, q, 4);
	}
	return (buf_release(&out));
}

int
k8s_base64_decode(const char *in, char **out, size_t *outlen)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char  *q;
	char	    *o;
	size_t	     n = 0;
	unsigned int acc = 0;
	int	     bits = 0;

	o = xmalloc(strlen(in) / 4 * 3 + 4);
	for (; *in != '\0'; in++) {
		if (*in == '=' || *in == '\n' || *in == '\r' || *in == ' ')
			continue;
		if ((q = strchr(tab, *in)) == NULL) {
			free(o);
			return (-1);
		}
		acc = (acc << 6) | (unsigned int)(q - tab);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			o[n++] = (char)((acc >> bits) & 0xff);
		}
	}
	o[n] = '\0';
	*out = o;
	*outlen = n;
	return (0);
}
