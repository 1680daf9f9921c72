/*
 * record: writes the JSON of make bench (bench/run.sh and its scenarios):
 * one record per call, a compact line on stdout, and at the end the
 * results file that gathers them.  The scenario scripts measure; this
 * program takes what they measured, as flags (numbers, strings, booleans)
 * and files (the other tools' JSON, and snapshots of /metrics, of the API
 * server's request counts and of CPU seconds), and computes the figures
 * derived from them: a window's API writes and Slurm RPCs per bound pod,
 * means over a /metrics window, the backlog's slopes and the ratios.
 * Numbers are written as jq writes them (whole ones without a fraction,
 * others in the fewest digits that read back the same), so a results file
 * reads as the ones before it.
 *
 *   record run      a record of the given members alone
 *   record sched    one scheduler's run (singles, gangs, fixed)
 *   record churn    the churn scenario; record idle, the bridge idle
 *   record band     one band of the backlog; record relist, its relist;
 *                   record release, its release of the whole cluster;
 *                   record backlog, the scenario's record
 *   record owners-phase, record owners   the owners scenario
 *   record failed   a scenario that failed: its exit status and error
 *   record file     the results file: every record of a run, and the
 *                   scenarios that failed
 *
 * Every subcommand takes --NAME VALUE options, and members added at the
 * end of its record: -n KEY=NUMBER, -s KEY=STRING, -b KEY=true|false and
 * -j KEY=FILE (the JSON in FILE).  An empty or unreadable value is null
 * (said on stderr when it was not empty), as a scenario that could not
 * measure a figure reports it.  Main thread only; exits 0, 1 when it
 * cannot write, 2 on a usage error.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "pct.h"

#define REC_MAX_OPTS  32
#define REC_MAX_LINE  4096
#define REC_MAX_FIELD 8

struct rec_opt {
	char	    kind; /* '-': --name value; else the member flag */
	const char *name;
	const char *value;
};

struct rec_args {
	struct rec_opt opts[REC_MAX_OPTS];
	int	       n;
};

/* One line of a whitespace-separated file, split as awk splits it. */
struct rec_line {
	char  buf[REC_MAX_LINE];
	char *f[REC_MAX_FIELD];
	int   nf;
};

static const char *rec_cmd = "record";

static json_t *rec_read_lines(const char *path);

static void
rec_warn(const char *what, const char *value)
{
	fprintf(stderr, "record %s: %s: \"%s\" (null)\n", rec_cmd, what, value);
}

/* --- writing: numbers, strings and values as jq prints them --------------- */

static void
rec_put_number(FILE *fp, double v)
{
	char buf[40];
	int  p;

	if (v == floor(v) && fabs(v) < 1e17) {
		fprintf(fp, "%.0f", v);
		return;
	}
	for (p = 1; p <= 17; p++) {
		snprintf(buf, sizeof(buf), "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, fp);
}

static void
rec_put_string(FILE *fp, const char *s)
{
	const unsigned char *p;

	fputc('"', fp);
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", fp);
			break;
		case '\\':
			fputs("\\\\", fp);
			break;
		case '\b':
			fputs("\\b", fp);
			break;
		case '\f':
			fputs("\\f", fp);
			break;
		case '\n':
			fputs("\\n", fp);
			break;
		case '\r':
			fputs("\\r", fp);
			break;
		case '\t':
			fputs("\\t", fp);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(fp, "\\u%04x", *p);
			else
				fputc(*p, fp);
		}
	}
	fputc('"', fp);
}

static void
rec_indent(FILE *fp, int indent, int depth)
{
	if (indent == 0)
		return;
	fputc('\n', fp);
	fprintf(fp, "%*s", indent * depth, "");
}

/* v compact (indent 0, jq -c) or indented by indent spaces (jq). */
static void
rec_put(FILE *fp, json_t *v, int indent, int depth)
{
	const char *key;
	json_t	   *m;
	size_t	    i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		if (json_object_size(v) == 0) {
			fputs("{}", fp);
			break;
		}
		fputc('{', fp);
		i = 0;
		json_object_foreach (v, key, m) {
			if (i++ > 0)
				fputc(',', fp);
			rec_indent(fp, indent, depth + 1);
			rec_put_string(fp, key);
			fputs(indent > 0 ? ": " : ":", fp);
			rec_put(fp, m, indent, depth + 1);
		}
		rec_indent(fp, indent, depth);
		fputc('}', fp);
		break;
	case JSON_ARRAY:
		if (json_array_size(v) == 0) {
			fputs("[]", fp);
			break;
		}
		fputc('[', fp);
		json_array_foreach (v, i, m) {
			if (i > 0)
				fputc(',', fp);
			rec_indent(fp, indent, depth + 1);
			rec_put(fp, m, indent, depth + 1);
		}
		rec_indent(fp, indent, depth);
		fputc(']', fp);
		break;
	case JSON_STRING:
		rec_put_string(fp, json_string_value(v));
		break;
	case JSON_INTEGER:
	case JSON_REAL:
		rec_put_number(fp, json_number_value(v));
		break;
	case JSON_TRUE:
		fputs("true", fp);
		break;
	case JSON_FALSE:
		fputs("false", fp);
		break;
	default:
		fputs("null", fp);
	}
}

/* Writes v as one line on stdout and takes it; 0, or -1. */
static int
rec_emit(json_t *v, int indent)
{
	rec_put(stdout, v, indent, 0);
	fputc('\n', stdout);
	json_decref(v);
	return (fflush(stdout) == EOF || ferror(stdout) ? -1 : 0);
}

/* A new number, or null for one JSON cannot hold (NaN, infinite). */
static json_t *
rec_num(double v)
{
	json_t *j;

	return ((j = json_real(v)) != NULL ? j : json_null());
}

/* jq's x * k | round / k: x to 1/k. */
static double
rec_round(double x, double k)
{
	return (round(x * k) / k);
}

/* --- reading: flags, files ------------------------------------------------ */

static int
rec_parse_args(struct rec_args *a, int argc, char *argv[])
{
	int i;

	a->n = 0;
	for (i = 0; i < argc; i++) {
		if (a->n == REC_MAX_OPTS || i + 1 == argc)
			return (-1);
		if (strncmp(argv[i], "--", 2) == 0 && argv[i][2] != '\0')
			a->opts[a->n].kind = '-';
		else if (argv[i][0] == '-' && strchr("nsbj", argv[i][1]) &&
		    argv[i][1] != '\0' && argv[i][2] == '\0')
			a->opts[a->n].kind = argv[i][1];
		else
			return (-1);
		a->opts[a->n].name = argv[i] +
		    (a->opts[a->n].kind == '-' ? 2 : 0);
		a->opts[a->n].value = argv[++i];
		a->n++;
	}
	return (0);
}

/* Every --name given is one of known (NULL-terminated); 0, or -1. */
static int
rec_check_args(const struct rec_args *a, const char *const *known)
{
	const char *const *k;
	int		   i;

	for (i = 0; i < a->n; i++) {
		if (a->opts[i].kind != '-')
			continue;
		for (k = known; *k != NULL; k++)
			if (strcmp(*k, a->opts[i].name) == 0)
				break;
		if (*k == NULL) {
			fprintf(stderr, "record %s: unknown option --%s\n",
			    rec_cmd, a->opts[i].name);
			return (-1);
		}
	}
	return (0);
}

/* The value of --name, or NULL when not given (the last one counts). */
static const char *
rec_get(const struct rec_args *a, const char *name)
{
	const char *v = NULL;
	int	    i;

	for (i = 0; i < a->n; i++)
		if (a->opts[i].kind == '-' &&
		    strcmp(a->opts[i].name, name) == 0)
			v = a->opts[i].value;
	return (v);
}

/* --name as a new string ("" when not given). */
static json_t *
rec_get_str(const struct rec_args *a, const char *name)
{
	const char *v = rec_get(a, name);

	return (json_string(v != NULL ? v : ""));
}

/* s as a number into *out; 0, or -1 when it is empty or not one. */
static int
rec_strtod(const char *s, double *out)
{
	char *end;

	if (s == NULL || *s == '\0')
		return (-1);
	errno = 0;
	*out = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(*out))
		return (-1);
	return (0);
}

/* A number from text; null when empty, "null" or not a number. */
static json_t *
rec_num_text(const char *what, const char *s)
{
	double v;

	if (s == NULL || *s == '\0' || strcmp(s, "null") == 0)
		return (json_null());
	if (rec_strtod(s, &v) == -1) {
		rec_warn(what, s);
		return (json_null());
	}
	return (rec_num(v));
}

/* --name as a number, or null. */
static json_t *
rec_get_num(const struct rec_args *a, const char *name)
{
	return (rec_num_text(name, rec_get(a, name)));
}

static json_t *
rec_bool_text(const char *what, const char *s)
{
	if (s != NULL && strcmp(s, "true") == 0)
		return (json_true());
	if (s != NULL && strcmp(s, "false") == 0)
		return (json_false());
	if (s != NULL && *s != '\0' && strcmp(s, "null") != 0)
		rec_warn(what, s);
	return (json_null());
}

/* The one JSON value in file path: null when it is empty or missing. */
static json_t *
rec_file_json(const char *path)
{
	json_error_t err;
	json_t	    *v;
	FILE	    *fp;
	int	     c;

	if (path == NULL || *path == '\0' || (fp = fopen(path, "r")) == NULL)
		return (json_null());
	while ((c = fgetc(fp)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		;
	if (c == EOF) {
		fclose(fp);
		return (json_null());
	}
	ungetc(c, fp);
	v = json_loadf(fp, JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK, &err);
	fclose(fp);
	if (v == NULL) {
		rec_warn(err.text, path);
		return (json_null());
	}
	return (v);
}

/* The JSON in file path when it is an object; NULL otherwise. */
static json_t *
rec_file_object(const char *path)
{
	json_t *v = rec_file_json(path);

	if (json_is_object(v))
		return (v);
	json_decref(v);
	return (NULL);
}

/* Adds the -n, -s, -b and -j members to obj, in their order. */
static void
rec_members(const struct rec_args *a, json_t *obj)
{
	const struct rec_opt *o;
	const char	     *eq;
	char		      key[128];
	json_t		     *v;
	int		      i;

	for (i = 0; i < a->n; i++) {
		o = &a->opts[i];
		if (o->kind == '-')
			continue;
		if ((eq = strchr(o->value, '=')) == NULL ||
		    (size_t)(eq - o->value) >= sizeof(key)) {
			rec_warn("member without KEY=", o->value);
			continue;
		}
		snprintf(key, sizeof(key), "%.*s", (int)(eq - o->value),
		    o->value);
		switch (o->kind) {
		case 'n':
			v = rec_num_text(key, eq + 1);
			break;
		case 's':
			v = json_string(eq + 1);
			break;
		case 'b':
			v = rec_bool_text(key, eq + 1);
			break;
		default:
			v = rec_file_json(eq + 1);
		}
		json_object_set_new(obj, key, v != NULL ? v : json_null());
	}
}

/* Reads the next line of fp into l, split on blanks; 0, or -1 at EOF. */
static int
rec_read_line(FILE *fp, struct rec_line *l)
{
	char *p, *save = NULL;

	if (fgets(l->buf, sizeof(l->buf), fp) == NULL)
		return (-1);
	l->nf = 0;
	for (p = strtok_r(l->buf, " \t\n", &save);
	     p != NULL && l->nf < REC_MAX_FIELD;
	     p = strtok_r(NULL, " \t\n", &save))
		l->f[l->nf++] = p;
	return (0);
}

/* awk's numeric value of a field: its leading number, else 0. */
static double
rec_field_num(const char *s)
{
	return (s != NULL ? strtod(s, NULL) : 0);
}

/*
 * A map (an object of numbers) from a file of lines "KEY... VALUE": the
 * first nkey fields joined by spaces are the key, the next is the value,
 * as awk's a[$1] = $2; the last line of a key counts.  An empty map when
 * the file is missing.
 */
static json_t *
rec_read_map(const char *path, int nkey)
{
	struct rec_line l;
	json_t	       *map = json_object();
	char		key[REC_MAX_LINE];
	FILE	       *fp;
	int		i;
	size_t		len;

	if (path == NULL || (fp = fopen(path, "r")) == NULL)
		return (map);
	while (rec_read_line(fp, &l) == 0) {
		if (l.nf < nkey)
			continue;
		key[0] = '\0';
		for (i = 0, len = 0; i < nkey; i++) {
			len += snprintf(key + len, sizeof(key) - len, "%s%s",
			    i > 0 ? " " : "", l.f[i]);
			if (len >= sizeof(key))
				break;
		}
		json_object_set_new(map, key,
		    rec_num(rec_field_num(l.nf > nkey ? l.f[nkey] : NULL)));
	}
	fclose(fp);
	return (map);
}

static double
rec_map_num(const json_t *map, const char *key)
{
	return (json_number_value(json_object_get(map, key)));
}

/* A text "%.Nf" of v read back: the number awk's printf then jq make. */
static double
rec_fixed(double v, int decimals)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return (strtod(buf, NULL));
}

/*
 * bc's view of a figure printed with 2 decimals ("%.2f"): hundredths, as a
 * whole number; 0, or -1 when s is not such a figure.
 */
static int
rec_cents(const char *s, long long *out)
{
	double v;

	if (rec_strtod(s, &v) == -1 || fabs(v) > 1e15)
		return (-1);
	*out = llround(v * 100);
	return (0);
}

/* Hundredths as the number bc prints them ("1.50", "-.25"). */
static json_t *
rec_cents_num(long long c)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%s%lld.%02lld", c < 0 ? "-" : "",
	    llabs(c) / 100, llabs(c) % 100);
	return (rec_num(strtod(buf, NULL)));
}

/* --- record run ------------------------------------------------------------- */

static int
rec_run(const struct rec_args *a)
{
	static const char *const known[] = { "scenario", "system", NULL };
	json_t			*r;

	if (rec_check_args(a, known) == -1)
		return (2);
	r = json_object();
	json_object_set_new(r, "scenario", rec_get_str(a, "scenario"));
	json_object_set_new(r, "system", rec_get_str(a, "system"));
	rec_members(a, r);
	return (rec_emit(r, 0) == -1);
}

/* --- record sched: one scheduler's run -------------------------------------- */

/* jq's per(x): x per bound pod to 1/1000, null without a bound pod. */
static json_t *
rec_per(double x, const json_t *bound)
{
	if (!json_is_number(bound) || !(json_number_value(bound) > 0))
		return (json_null());
	return (rec_num(rec_round(x / json_number_value(bound), 1000)));
}

/* The category of an API write, by what the scheduler's writes are. */
static const char *
rec_write_cat(const char *verb, const char *res, const char *sub)
{
	if ((strcmp(res, "pods") == 0 && strcmp(sub, "binding") == 0) ||
	    strcmp(res, "bindings") == 0)
		return ("binding");
	if (strcmp(res, "pods") == 0 && strcmp(sub, "status") == 0)
		return ("pod_status");
	if (strcmp(res, "pods") == 0 && strcmp(sub, "-") == 0)
		return (strcmp(verb, "POST") == 0   ? "pod_create" :
			strcmp(verb, "DELETE") == 0 ? "pod_delete" :
						      "pod_patch");
	if (strcmp(res, "events") == 0 && strcmp(verb, "DELETE") != 0)
		return ("events");
	return ("other");
}

/*
 * The API server's mutating requests over a window, from two snapshots of
 * "verb group resource subresource count" lines: by category, per bound
 * pod, the scheduler's own per pod, and every kind that moved.
 */
static json_t *
rec_api_writes(const char *f0, const char *f1, const json_t *bound)
{
	static const char *const cats[] = { "binding", "pod_patch", "events",
		"pod_status", "pod_create", "pod_delete", "other", NULL };
	struct rec_line		 l;
	json_t			*before, *counts, *per, *raw, *w;
	const char		*cat;
	char			 key[REC_MAX_LINE], name[REC_MAX_LINE];
	double			 d;
	FILE			*fp;
	int			 i;

	before = rec_read_map(f0, 4);
	counts = json_object();
	raw = json_object();
	for (i = 0; cats[i] != NULL; i++)
		json_object_set_new(counts, cats[i], rec_num(0));
	if (f1 != NULL && (fp = fopen(f1, "r")) != NULL) {
		while (rec_read_line(fp, &l) == 0) {
			if (l.nf < 5)
				continue;
			snprintf(key, sizeof(key), "%s %s %s %s", l.f[0],
			    l.f[1], l.f[2], l.f[3]);
			d = rec_field_num(l.f[4]) - rec_map_num(before, key);
			if (!(d > 0))
				continue;
			d = (double)(long long)d; /* awk's %d */
			cat = rec_write_cat(l.f[0], l.f[2], l.f[3]);
			json_object_set_new(counts, cat,
			    rec_num(rec_map_num(counts, cat) + d));
			snprintf(name, sizeof(name), "%s %s%s%s%s%s", l.f[0],
			    strcmp(l.f[1], "core") == 0 ? "" : l.f[1],
			    strcmp(l.f[1], "core") == 0 ? "" : "/", l.f[2],
			    strcmp(l.f[3], "-") == 0 ? "" : "/",
			    strcmp(l.f[3], "-") == 0 ? "" : l.f[3]);
			json_object_set_new(raw, name, rec_num(d));
		}
		fclose(fp);
	}
	json_decref(before);
	per = json_object();
	for (i = 0; cats[i] != NULL; i++)
		json_object_set_new(per, cats[i],
		    rec_per(rec_map_num(counts, cats[i]), bound));
	w = json_object();
	json_object_set_new(w, "bound", json_deep_copy(bound));
	json_object_set_new(w, "counts", counts);
	json_object_set_new(w, "per_pod", per);
	json_object_set_new(w, "scheduler_per_pod",
	    rec_per(rec_map_num(counts, "binding") +
		    rec_map_num(counts, "pod_patch") +
		    rec_map_num(counts, "events"),
		bound));
	json_object_set_new(w, "raw", raw);
	return (w);
}

/*
 * The differences between two snapshots of "name value" lines, for each
 * line of the second: whole (the bridge's RPCs) or to 2 decimals (CPU
 * seconds), as the lines were printed.
 */
static json_t *
rec_deltas(const char *f0, const char *f1, int decimals)
{
	struct rec_line l;
	json_t	       *before, *d;
	double		v;
	FILE	       *fp;

	d = json_object();
	if (f1 == NULL || (fp = fopen(f1, "r")) == NULL)
		return (d);
	before = rec_read_map(f0, 1);
	while (rec_read_line(fp, &l) == 0) {
		if (l.nf < 1)
			continue;
		v = rec_field_num(l.nf > 1 ? l.f[1] : NULL) -
		    rec_map_num(before, l.f[0]);
		json_object_set_new(d, l.f[0],
		    rec_num(decimals > 0 ? rec_fixed(v, decimals) :
					   (double)(long long)v));
	}
	fclose(fp);
	json_decref(before);
	return (d);
}

/* CPU seconds between two readings, to 1/100: a new reference, null
 * when either is missing. */
static json_t *
rec_cpu_delta(const json_t *cpu0, const json_t *cpu1)
{
	if (!json_is_number(cpu0) || !json_is_number(cpu1))
		return (json_null());
	return (rec_num(
	    rec_round(json_number_value(cpu1) - json_number_value(cpu0), 100)));
}

/*
 * The mean time of each libslurm call over a window, in ms, from the
 * "rpc seconds" files beside the counts (F.sum), given the calls' counts
 * (by); a call with none made is left out.
 */
static json_t *
rec_rpc_means(const char *f0, const char *f1, json_t *by)
{
	json_t	   *s0, *s1, *m, *v;
	const char *key;
	char	    p0[PATH_MAX], p1[PATH_MAX];
	double	    n;

	m = json_object();
	if (f0 == NULL || f1 == NULL)
		return (m);
	snprintf(p0, sizeof(p0), "%s.sum", f0);
	snprintf(p1, sizeof(p1), "%s.sum", f1);
	s0 = rec_read_map(p0, 1);
	s1 = rec_read_map(p1, 1);
	json_object_foreach (by, key, v) {
		n = json_number_value(v);
		if (n <= 0 || json_object_get(s1, key) == NULL)
			continue;
		json_object_set_new(m, key,
		    rec_num(rec_round((rec_map_num(s1, key) -
					  rec_map_num(s0, key)) *
			    1000 / n,
			1000)));
	}
	json_decref(s0);
	json_decref(s1);
	return (m);
}

/* The bridge's libslurm calls over a window: in all, by call, per pod. */
static json_t *
rec_rpcs(const char *f0, const char *f1, const json_t *bound)
{
	json_t	   *by, *per, *r, *v;
	const char *key;
	double	    total = 0;

	by = rec_deltas(f0, f1, 0);
	per = json_object();
	json_object_foreach (by, key, v) {
		total += json_number_value(v);
		json_object_set_new(per, key,
		    rec_per(json_number_value(v), bound));
	}
	r = json_object();
	json_object_set_new(r, "total", rec_num(total));
	json_object_set_new(r, "per_pod", rec_per(total, bound));
	json_object_set_new(r, "by_rpc", by);
	json_object_set_new(r, "by_rpc_per_pod", per);
	json_object_set_new(r, "mean_ms", rec_rpc_means(f0, f1, by));
	return (r);
}

static int
rec_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

/*
 * Percentiles of the time from each pod's POST returning (podgen's --out
 * lines, "name due sent returned status") to its bind on bindwatch's watch
 * (its --binds lines, "bind_ms added_ms name"), as p50, p90, p99 and max.
 * A pod created and never bound is later than any: null where a
 * percentile falls on one.
 */
static json_t *
rec_post_latency(const char *pods, const char *binds)
{
	static const unsigned int pcts[] = { 50, 90, 99, 100 };
	static const char *const  names[] = { "p50", "p90", "p99", "max" };
	struct rec_line		  l;
	json_t			 *ret = json_object(), *r;
	double			 *v = NULL, d, *nv;
	size_t			  n = 0, cap = 0, total = 0, rank, i;
	FILE			 *fp;

	if (pods != NULL && (fp = fopen(pods, "r")) != NULL) {
		while (rec_read_line(fp, &l) == 0) {
			if (l.nf < 4 || !(rec_field_num(l.f[3]) >= 0))
				continue;
			total++;
			json_object_set_new(ret, l.f[0],
			    rec_num(rec_field_num(l.f[3])));
		}
		fclose(fp);
	}
	if (binds != NULL && (fp = fopen(binds, "r")) != NULL) {
		while (rec_read_line(fp, &l) == 0) {
			if (l.nf < 3 || json_object_get(ret, l.f[2]) == NULL)
				continue;
			d = rec_field_num(l.f[0]) - rec_map_num(ret, l.f[2]);
			if (n == cap) {
				cap = cap > 0 ? cap * 2 : 1024;
				if ((nv = realloc(v, cap * sizeof(*v))) == NULL)
					break;
				v = nv;
			}
			v[n++] = d < 0 ? 0 : d;
		}
		fclose(fp);
	}
	json_decref(ret);
	if (n > 0)
		qsort(v, n, sizeof(*v), rec_cmp_double);
	if (total < n)
		total = n;
	r = json_object();
	for (i = 0; i < 4; i++) {
		rank = (pcts[i] * total + 99) / 100;
		if (rank < 1)
			rank = 1;
		json_object_set_new(r, names[i],
		    rank <= n ? rec_num(v[rank - 1]) : json_null());
	}
	free(v);
	return (r);
}

static int
rec_sched(const struct rec_args *a)
{
	static const char *const known[] = { "scenario", "system", "result",
		"started", "ready", "cpu0", "cpu1", "api0", "api1", "rpc0",
		"rpc1", "stack0", "stack1", "busy0", "busy1", "etcd0", "etcd1",
		"post-pods", "post-binds", NULL };
	json_t			*r, *res, *bound, *started, *ready, *cpu;
	json_t			*cpu0, *cpu1, *rbound;
	const char		*sys;

	if (rec_check_args(a, known) == -1)
		return (2);
	sys = rec_get(a, "system");
	res = rec_file_json(rec_get(a, "result"));
	/* As the bench read it: 0 with no result, else its bound (or null). */
	bound = json_is_null(res) ?
	    rec_num(0) :
	    json_object_get(res, "bound") != NULL ?
	    json_deep_copy(json_object_get(res, "bound")) :
	    json_null();
	started = rec_get_num(a, "started");
	ready = rec_get_num(a, "ready");
	cpu0 = rec_get_num(a, "cpu0");
	cpu1 = rec_get_num(a, "cpu1");
	cpu = rec_cpu_delta(cpu0, cpu1);
	rbound = json_object_get(res, "bound");

	r = json_object();
	json_object_set_new(r, "scenario", rec_get_str(a, "scenario"));
	json_object_set_new(r, "system", rec_get_str(a, "system"));
	json_object_set(r, "t0_ms",
	    json_object_get(res, "t0_ms") != NULL ?
		json_object_get(res, "t0_ms") :
		json_null());
	json_object_set(r, "started_ms", started);
	json_object_set(r, "ready_ms", ready);
	json_object_set_new(r, "startup_ms",
	    json_is_number(started) && json_is_number(ready) ?
		rec_num(json_number_value(ready) - json_number_value(started)) :
		json_null());
	json_object_set(r, "result", res);
	json_object_set(r, "cpu_s", cpu);
	json_object_set_new(r, "cpu_per_pod_ms",
	    json_is_number(cpu) && json_is_number(rbound) &&
		    json_number_value(rbound) > 0 ?
		rec_num(rec_round(json_number_value(cpu) * 1000 /
			json_number_value(rbound),
		    1000)) :
		json_null());
	json_object_set_new(r, "api_writes",
	    rec_api_writes(rec_get(a, "api0"), rec_get(a, "api1"), bound));
	/* etcd's writes and its log's fsyncs over the window (etcd_snap). */
	json_object_set_new(r, "etcd",
	    rec_deltas(rec_get(a, "etcd0"), rec_get(a, "etcd1"), 0));
	json_object_set_new(r, "slurm_rpcs",
	    sys != NULL && strcmp(sys, "bridge") == 0 ?
		rec_rpcs(rec_get(a, "rpc0"), rec_get(a, "rpc1"), bound) :
		json_null());
	json_object_set_new(r, "stack_cpu_s",
	    rec_deltas(rec_get(a, "stack0"), rec_get(a, "stack1"), 2));
	/* From t0 to the last bind (busy_snap): the machine's busy CPU and
	 * each part's, when both snapshots were taken. */
	json_object_set_new(r, "bind_cpu_s",
	    rec_get(a, "busy0") != NULL && rec_get(a, "busy1") != NULL &&
		    access(rec_get(a, "busy0"), R_OK) == 0 &&
		    access(rec_get(a, "busy1"), R_OK) == 0 ?
		rec_deltas(rec_get(a, "busy0"), rec_get(a, "busy1"), 2) :
		json_null());
	rec_members(a, r);
	/* fixed: from the POST returning, beside the latency from ADDED. */
	if (rec_get(a, "post-pods") != NULL)
		json_object_set_new(r, "latency_post_ms",
		    rec_post_latency(rec_get(a, "post-pods"),
			rec_get(a, "post-binds")));
	json_decref(res);
	json_decref(bound);
	json_decref(started);
	json_decref(ready);
	json_decref(cpu0);
	json_decref(cpu1);
	json_decref(cpu);
	return (rec_emit(r, 0) == -1);
}

/* --- record end: a run's pods ending ---------------------------------------- */

/*
 * The cost of a run's pods ending: from their deletion until Slurm holds
 * none of their jobs, the stack's CPU (--stack0, --stack1 snapshots) and
 * the scheduler's (--cpu0, --cpu1), in all and per ended pod (--pods).
 */
static int
rec_end(const struct rec_args *a)
{
	static const char *const known[] = { "scenario", "system", "pods",
		"seconds", "cpu0", "cpu1", "stack0", "stack1", NULL };
	json_t			*r, *pods, *cpu0, *cpu1, *stack, *per, *v;
	const char		*k;
	double			 n;

	if (rec_check_args(a, known) == -1)
		return (2);
	pods = rec_get_num(a, "pods");
	cpu0 = rec_get_num(a, "cpu0");
	cpu1 = rec_get_num(a, "cpu1");
	n = json_is_number(pods) ? json_number_value(pods) : 0;
	stack = rec_deltas(rec_get(a, "stack0"), rec_get(a, "stack1"), 2);
	per = json_object();
	json_object_foreach (stack, k, v)
		json_object_set_new(per, k,
		    n > 0 ? rec_num(rec_round(json_number_value(v) * 1000 / n,
				1000)) :
			    json_null());
	r = json_object();
	json_object_set_new(r, "scenario", rec_get_str(a, "scenario"));
	json_object_set_new(r, "system", rec_get_str(a, "system"));
	json_object_set(r, "pods", pods);
	json_object_set_new(r, "seconds", rec_get_num(a, "seconds"));
	json_object_set_new(r, "cpu_s", rec_cpu_delta(cpu0, cpu1));
	json_object_set_new(r, "stack_cpu_s", stack);
	json_object_set_new(r, "stack_cpu_per_pod_ms", per);
	rec_members(a, r);
	json_decref(pods);
	json_decref(cpu0);
	json_decref(cpu1);
	return (rec_emit(r, 0) == -1);
}

/* --- record webhook-run, record webhook-file -------------------------------- */

/*
 * The server's /metrics as bench/webhook/run.sh scrapes them: one
 * "NAME{LABELS}<tab>VALUE" line each; a value that is not a number is
 * null, as jq's tonumber? // null.
 */
static json_t *
rec_metrics_file(const char *path)
{
	char	buf[REC_MAX_LINE], *tab, *nl;
	json_t *m = json_object();
	double	v;
	FILE   *fp;

	if (path == NULL || (fp = fopen(path, "r")) == NULL)
		return (m);
	while (fgets(buf, sizeof(buf), fp) != NULL) {
		if ((nl = strchr(buf, '\n')) != NULL)
			*nl = '\0';
		if ((tab = strrchr(buf, '\t')) == NULL || tab == buf)
			continue;
		*tab = '\0';
		json_object_set_new(m, buf,
		    rec_strtod(tab + 1, &v) == 0 ? rec_num(v) : json_null());
	}
	fclose(fp);
	return (m);
}

/* The sum of the numbers of m whose key has sub; null when none has. */
static json_t *
rec_metrics_sum(json_t *m, const char *sub)
{
	const char *k;
	json_t	   *v;
	double	    t = 0;
	int	    n = 0;

	json_object_foreach (m, k, v)
		if (strstr(k, sub) != NULL && json_is_number(v)) {
			t += json_number_value(v);
			n++;
		}
	return (n > 0 ? rec_num(t) : json_null());
}

/* Does the metric name k end a _total counter ("_total" or "_total{")? */
static int
rec_is_total(const char *k)
{
	const char *p = strstr(k, "_total");

	for (; p != NULL; p = strstr(p + 1, "_total"))
		if (p[6] == '\0' || p[6] == '{')
			return (1);
	return (0);
}

/* A number member of o, 0 when it has none. */
static double
rec_num_of(const json_t *o, const char *k)
{
	return (json_number_value(json_object_get(o, k)));
}

/*
 * One wrk run of bench/webhook/run.sh: the run's settings, wrk's result
 * (--result: the BENCH_RESULT line's object, merged in), the server's CPU
 * and RSS over it, and the /metrics counters that moved (--m0, --m1).
 */
static int
rec_webhook_run(const struct rec_args *a)
{
	static const char *const known[] = { "name", "path", "mode", "threads",
		"connections", "rate", "close", "command", "machine", "load",
		"cpu", "m0", "m1", "r0", "r1", "rmax", "rhalf", "result",
		NULL };
	json_t	   *r, *res, *m0, *m1, *rss, *co, *sc, *v, *rate, *close, *err;
	const char *k;
	double	    d, waits = 0;
	int	    nwaits = 0;

	if (rec_check_args(a, known) == -1)
		return (2);
	res = rec_file_object(rec_get(a, "result"));
	m0 = rec_metrics_file(rec_get(a, "m0"));
	m1 = rec_metrics_file(rec_get(a, "m1"));
	rate = rec_get_num(a, "rate");
	close = rec_get_num(a, "close");
	r = json_object();
	json_object_set_new(r, "name", rec_get_str(a, "name"));
	json_object_set_new(r, "path", rec_get_str(a, "path"));
	json_object_set_new(r, "mode", rec_get_str(a, "mode"));
	json_object_set_new(r, "threads", rec_get_num(a, "threads"));
	json_object_set_new(r, "connections", rec_get_num(a, "connections"));
	json_object_set(r, "target_rps",
	    json_number_value(rate) > 0 ? rate : json_null());
	json_object_set_new(r, "new_tls_conn_per_request",
	    json_boolean(json_number_value(close) == 1));
	json_object_set_new(r, "command", rec_get_str(a, "command"));
	json_object_update(r, res);
	json_object_set_new(r, "server_cpu_pct", rec_get_num(a, "cpu"));
	json_object_set_new(r, "machine_cpu_busy_pct",
	    rec_get_num(a, "machine"));
	json_object_set_new(r, "loadavg_after", rec_get_str(a, "load"));
	rss = json_object();
	json_object_set_new(rss, "start", rec_get_num(a, "r0"));
	json_object_set_new(rss, "max", rec_get_num(a, "rmax"));
	json_object_set_new(rss, "end", rec_get_num(a, "r1"));
	json_object_set_new(rss, "second_half_growth", rec_get_num(a, "rhalf"));
	json_object_set_new(r, "rss_kib", rss);
	co = json_object();
	json_object_set_new(co, "start", rec_metrics_sum(m0, "cache_objects"));
	json_object_set_new(co, "end", rec_metrics_sum(m1, "cache_objects"));
	json_object_set_new(r, "cache_objects", co);
	sc = json_object();
	json_object_foreach (m1, k, v) {
		if (!rec_is_total(k))
			continue;
		d = json_number_value(v) - rec_num_of(m0, k);
		if (d == 0)
			continue;
		json_object_set_new(sc, k, rec_num(d));
		if (strstr(k, "cache_lookups_total") != NULL &&
		    strstr(strstr(k, "cache_lookups_total"), "waited") !=
			NULL) {
			waits += d;
			nwaits++;
		}
	}
	json_object_set_new(r, "server_counters", sc);
	err = json_object_get(r, "errors");
	json_object_set_new(r, "tls_connections",
	    rec_num(rec_num_of(r, "connections") + rec_num_of(r, "conn_close") +
		rec_num_of(err, "read") + rec_num_of(err, "write")));
	json_object_set_new(r, "owner_waits", rec_num(nwaits > 0 ? waits : 0));
	json_decref(res);
	json_decref(m0);
	json_decref(m1);
	json_decref(rate);
	json_decref(close);
	return (rec_emit(r, 0) == -1);
}

/* The non-empty lines of a file, as an array of strings. */
static json_t *
rec_text_lines(const char *path)
{
	char	buf[REC_MAX_LINE], *nl;
	json_t *arr = json_array();
	FILE   *fp;

	if (path == NULL || (fp = fopen(path, "r")) == NULL)
		return (arr);
	while (fgets(buf, sizeof(buf), fp) != NULL) {
		if ((nl = strchr(buf, '\n')) != NULL)
			*nl = '\0';
		if (buf[0] != '\0')
			json_array_append_new(arr, json_string(buf));
	}
	fclose(fp);
	return (arr);
}

/* A string member, null when it is empty. */
static json_t *
rec_get_str_or_null(const struct rec_args *a, const char *name)
{
	const char *v = rec_get(a, name);

	return (v != NULL && *v != '\0' ? json_string(v) : json_null());
}

/* {start_kib, max_kib, end_kib, growth_kib} from three members. */
static json_t *
rec_rss_span(const struct rec_args *a, const char *n0, const char *nmax,
    const char *n1)
{
	json_t *r = json_object(), *v0, *v1;

	v0 = rec_get_num(a, n0);
	v1 = rec_get_num(a, n1);
	json_object_set(r, "start_kib", v0);
	json_object_set_new(r, "max_kib", rec_get_num(a, nmax));
	json_object_set(r, "end_kib", v1);
	json_object_set_new(r, "growth_kib",
	    rec_num(json_number_value(v1) - json_number_value(v0)));
	json_decref(v0);
	json_decref(v1);
	return (r);
}

/*
 * The results file of bench/webhook/run.sh: the machine, the server, the
 * request, the target, every run (--runs: their records, one after the
 * other), the runs skipped (--skipped: a line each), and memory, with the
 * RSS samples (--samples: "t phase kib" lines).
 */
static int
rec_webhook_file(const struct rec_args *a)
{
	static const char *const known[] = { "date", "host", "cpus", "kernel",
		"commit", "dirty", "wrk", "binary", "args", "kubeconfig", "ns",
		"review", "body-bytes", "vbody-bytes", "rate", "p99", "runs",
		"skipped", "idle", "start", "max", "end", "s-start", "s-max",
		"s-end", "flat", "flat-kib", "samples", "errors", NULL };
	json_t			*r, *o, *mem, *samples, *sample, *errors;
	struct rec_line		 l;
	const char		*path;
	FILE			*fp;

	if (rec_check_args(a, known) == -1)
		return (2);
	r = json_object();
	json_object_set_new(r, "benchmark", json_string("webhook"));
	json_object_set_new(r, "date", rec_get_str(a, "date"));
	o = json_object();
	json_object_set_new(o, "host", rec_get_str(a, "host"));
	json_object_set_new(o, "cpus", rec_get_num(a, "cpus"));
	json_object_set_new(o, "kernel", rec_get_str(a, "kernel"));
	json_object_set_new(r, "machine", o);
	o = json_object();
	json_object_set_new(o, "commit", rec_get_str(a, "commit"));
	json_object_set_new(o, "dirty",
	    rec_bool_text("dirty", rec_get(a, "dirty")));
	json_object_set_new(r, "git", o);
	json_object_set_new(r, "wrk", rec_get_str(a, "wrk"));
	o = json_object();
	json_object_set_new(o, "binary", rec_get_str(a, "binary"));
	json_object_set_new(o, "args", rec_get_str(a, "args"));
	json_object_set_new(o, "kubeconfig",
	    rec_get_str_or_null(a, "kubeconfig"));
	json_object_set_new(o, "owner_namespace", rec_get_str_or_null(a, "ns"));
	json_object_set_new(r, "server", o);
	o = json_object();
	json_object_set_new(o, "file", rec_get_str(a, "review"));
	json_object_set_new(o, "mutate_bytes", rec_get_num(a, "body-bytes"));
	json_object_set_new(o, "validate_bytes", rec_get_num(a, "vbody-bytes"));
	json_object_set_new(r, "request", o);
	o = json_object();
	json_object_set_new(o, "rps", rec_get_num(a, "rate"));
	json_object_set_new(o, "p99_ms", rec_get_num(a, "p99"));
	json_object_set_new(r, "target", o);
	json_object_set_new(r, "runs", rec_read_lines(rec_get(a, "runs")));
	json_object_set_new(r, "skipped",
	    rec_text_lines(rec_get(a, "skipped")));
	samples = json_array();
	if ((path = rec_get(a, "samples")) != NULL &&
	    (fp = fopen(path, "r")) != NULL) {
		while (rec_read_line(fp, &l) == 0) {
			if (l.nf < 3)
				continue;
			sample = json_object();
			json_object_set_new(sample, "t",
			    rec_num(rec_field_num(l.f[0])));
			json_object_set_new(sample, "phase",
			    json_string(l.f[1]));
			json_object_set_new(sample, "rss_kib",
			    rec_num(rec_field_num(l.f[2])));
			json_array_append_new(samples, sample);
		}
		fclose(fp);
	}
	mem = json_object();
	json_object_set_new(mem, "idle_kib", rec_get_num(a, "idle"));
	json_object_set_new(mem, "sustained",
	    rec_rss_span(a, "s-start", "s-max", "s-end"));
	json_object_set_new(mem, "session",
	    rec_rss_span(a, "start", "max", "end"));
	json_object_set_new(mem, "flat",
	    rec_bool_text("flat", rec_get(a, "flat")));
	json_object_set_new(mem, "flat_threshold_kib",
	    rec_get_num(a, "flat-kib"));
	json_object_set_new(mem, "samples", samples);
	json_object_set_new(r, "memory", mem);
	errors = rec_get_num(a, "errors");
	json_object_set(r, "errors", errors);
	json_object_set_new(r, "ok",
	    json_boolean(
		json_is_number(errors) && json_number_value(errors) == 0));
	json_decref(errors);
	return (rec_emit(r, 2) == -1);
}

/* --- record churn, record idle ---------------------------------------------- */

/* A whole number of flag name into *out; 0, or -1 (said). */
static int
rec_get_ll(const struct rec_args *a, const char *name, long long *out)
{
	const char *s = rec_get(a, name);
	double	    v;

	if (rec_strtod(s, &v) == -1 || v != floor(v) || fabs(v) > 1e15) {
		rec_warn(name, s != NULL ? s : "");
		return (-1);
	}
	*out = (long long)v;
	return (0);
}

/* bc's "A - B" of two flags printed with 2 decimals, or null. */
static json_t *
rec_cents_diff(const struct rec_args *a, const char *n1, const char *n0,
    long long *out)
{
	long long c0, c1;

	if (rec_cents(rec_get(a, n0), &c0) == -1 ||
	    rec_cents(rec_get(a, n1), &c1) == -1) {
		rec_warn("CPU seconds", "");
		return (NULL);
	}
	*out = c1 - c0;
	return (rec_cents_num(c1 - c0));
}

/* The numbers of file path, one a line, as an array (null: no number). */
static json_t *
rec_series(const char *path)
{
	struct rec_line l;
	json_t	       *arr = json_array();
	FILE	       *fp;

	if (path == NULL || (fp = fopen(path, "r")) == NULL)
		return (arr);
	while (rec_read_line(fp, &l) == 0)
		json_array_append_new(arr,
		    l.nf > 0 ? rec_num_text("sample", l.f[0]) : json_null());
	fclose(fp);
	return (arr);
}

static int
rec_churn(const struct rec_args *a)
{
	static const char *const known[] = { "pods", "seconds", "cpu0", "cpu1",
		"rpcs", "polls", "rss", NULL };
	json_t			*r, *cpu;
	long long		 pods, rpcs, d;

	if (rec_check_args(a, known) == -1)
		return (2);
	cpu = rec_cents_diff(a, "cpu1", "cpu0", &d);
	r = json_object();
	json_object_set_new(r, "scenario", json_string("churn"));
	json_object_set_new(r, "system", json_string("bridge"));
	json_object_set_new(r, "pods", rec_get_num(a, "pods"));
	json_object_set_new(r, "seconds", rec_get_num(a, "seconds"));
	json_object_set_new(r, "cpu_s", cpu != NULL ? cpu : json_null());
	json_object_set_new(r, "rpcs", rec_get_num(a, "rpcs"));
	/* bc's scale=2 division: truncated to hundredths. */
	json_object_set_new(r, "rpcs_per_pod",
	    rec_get_ll(a, "pods", &pods) == 0 &&
		    rec_get_ll(a, "rpcs", &rpcs) == 0 && pods != 0 ?
		rec_cents_num(rpcs * 100 / pods) :
		json_null());
	json_object_set_new(r, "polls", rec_get_num(a, "polls"));
	json_object_set_new(r, "rss_kib", rec_series(rec_get(a, "rss")));
	rec_members(a, r);
	return (rec_emit(r, 0) == -1);
}

static int
rec_idle(const struct rec_args *a)
{
	static const char *const known[] = { "cpu0", "cpu1", "seconds", NULL };
	json_t			*r, *cpu;
	long long		 secs, d = 0;

	if (rec_check_args(a, known) == -1)
		return (2);
	cpu = rec_cents_diff(a, "cpu1", "cpu0", &d);
	r = json_object();
	json_object_set_new(r, "scenario", json_string("idle"));
	json_object_set_new(r, "system", json_string("bridge"));
	/* bc: scale=2; (cpu1 - cpu0) * 100 / seconds. */
	json_object_set_new(r, "cpu_percent",
	    cpu != NULL && rec_get_ll(a, "seconds", &secs) == 0 && secs != 0 ?
		rec_cents_num(d * 100 / secs) :
		json_null());
	json_decref(cpu);
	rec_members(a, r);
	return (rec_emit(r, 0) == -1);
}

/* --- record band, relist, backlog ---------------------------------------- */

/* The mean in ms of a histogram over a window, to 3 decimals, or null. */
static json_t *
rec_mean_ms(const json_t *m0, const json_t *m1, const char *sum,
    const char *count)
{
	double n = rec_map_num(m1, count) - rec_map_num(m0, count);

	if (!(n > 0))
		return (json_null());
	return (rec_num(
	    rec_fixed((rec_map_num(m1, sum) - rec_map_num(m0, sum)) * 1000 / n,
		3)));
}

static json_t *
rec_count(const json_t *m0, const json_t *m1, const char *count)
{
	return (rec_num((double)(long long)(rec_map_num(m1, count) -
	    rec_map_num(m0, count))));
}

/*
 * What a window between two of the bridge's /metrics cost: decisions,
 * polls (load_jobs) and sweeps, with their mean in ms (null without one);
 * decision_cpu_ms is the reconcile thread's CPU time per decision.
 */
static json_t *
rec_window(const char *f0, const char *f1)
{
	json_t *m0, *m1, *w;

#define RW_D   "slurm_bridge_decision_seconds"
#define RW_C   "slurm_bridge_decision_cpu_seconds"
#define RW_S   "slurm_bridge_sweep_seconds"
#define RW_P   "slurm_bridge_slurm_rpc_duration_seconds"
#define RW_RPC "{rpc=\"load_jobs\"}"
	m0 = rec_read_map(f0, 1);
	m1 = rec_read_map(f1, 1);
	w = json_object();
	json_object_set_new(w, "decisions", rec_count(m0, m1, RW_D "_count"));
	json_object_set_new(w, "decision_ms",
	    rec_mean_ms(m0, m1, RW_D "_sum", RW_D "_count"));
	json_object_set_new(w, "decision_cpu_ms",
	    rec_mean_ms(m0, m1, RW_C "_sum", RW_C "_count"));
	json_object_set_new(w, "polls",
	    rec_count(m0, m1, RW_P "_count" RW_RPC));
	json_object_set_new(w, "poll_ms",
	    rec_mean_ms(m0, m1, RW_P "_sum" RW_RPC, RW_P "_count" RW_RPC));
	json_object_set_new(w, "sweeps", rec_count(m0, m1, RW_S "_count"));
	json_object_set_new(w, "sweep_ms",
	    rec_mean_ms(m0, m1, RW_S "_sum", RW_S "_count"));
#undef RW_D
#undef RW_C
#undef RW_S
#undef RW_P
#undef RW_RPC
	json_decref(m0);
	json_decref(m1);
	return (w);
}

/* Member key of obj (null when obj is null or has none), a new reference. */
static json_t *
rec_member(const json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return (v != NULL ? json_incref(v) : json_null());
}

/* podgen's summary as a band keeps it: what it made and how fast. */
static json_t *
rec_podgen(const char *path)
{
	static const char *const keys[] = { "created", "errors", "sent_per_s",
		"post_ms", NULL };
	json_t			*pg, *r;
	int			 i;

	pg = rec_file_json(path);
	if (!json_is_object(pg)) {
		json_decref(pg);
		return (json_null());
	}
	r = json_object();
	for (i = 0; keys[i] != NULL; i++)
		json_object_set_new(r, keys[i], rec_member(pg, keys[i]));
	json_decref(pg);
	return (r);
}

static int
rec_band(const struct rec_args *a)
{
	static const char *const known[] = { "band", "submitted", "pending",
		"reached", "jobs", "same", "rss", "window-s", "steady0",
		"steady1", "probe1", "probe2", "probe-pods", "probe-submitted",
		"fill0", "fill1", "fill-ms", "podgen", "memory", NULL };
	json_t			*r, *win, *probe = NULL, *pend, *p, *mem;
	double			 ms;

	if (rec_check_args(a, known) == -1)
		return (2);
	win = rec_window(rec_get(a, "steady0"), rec_get(a, "steady1"));
	/* A backlog that only waits decides nothing: the probe pods do. */
	if (rec_get(a, "probe1") != NULL) {
		probe = json_object();
		json_object_set_new(probe, "pods",
		    rec_get_num(a, "probe-pods"));
		json_object_set_new(probe, "submitted",
		    rec_get_num(a, "probe-submitted"));
		p = rec_window(rec_get(a, "probe1"), rec_get(a, "probe2"));
		json_object_update(probe, p);
		json_decref(p);
	}
	pend = rec_get_num(a, "pending");
	r = json_object();
	json_object_set_new(r, "band", rec_get_num(a, "band"));
	json_object_set_new(r, "pending",
	    json_is_null(pend) ? rec_get_num(a, "submitted") :
				 json_incref(pend));
	json_object_set_new(r, "submitted", rec_get_num(a, "submitted"));
	json_object_set_new(r, "reached",
	    rec_bool_text("reached", rec_get(a, "reached")));
	json_object_set_new(r, "slurm_jobs", rec_get_num(a, "jobs"));
	json_object_set_new(r, "same_bridge",
	    rec_bool_text("same", rec_get(a, "same")));
	json_object_set_new(r, "rss_kib", rec_get_num(a, "rss"));
	json_object_set_new(r, "window_s", rec_get_num(a, "window-s"));
	json_object_set_new(r, "decision_ms", rec_member(probe, "decision_ms"));
	json_object_set_new(r, "decision_cpu_ms",
	    rec_member(probe, "decision_cpu_ms"));
	json_object_set_new(r, "decisions", rec_member(probe, "decisions"));
	json_object_set_new(r, "poll_ms", rec_member(win, "poll_ms"));
	json_object_set_new(r, "polls", rec_member(win, "polls"));
	json_object_set_new(r, "sweep_ms", rec_member(win, "sweep_ms"));
	json_object_set_new(r, "sweeps", rec_member(win, "sweeps"));
	json_object_set_new(r, "steady", win);
	json_object_set_new(r, "probe", probe != NULL ? probe : json_null());
	/* Past band 0: how the band filled. */
	if (rec_get(a, "fill-ms") != NULL) {
		json_object_set_new(r, "fill_s",
		    rec_strtod(rec_get(a, "fill-ms"), &ms) == 0 ?
			rec_num(rec_fixed(ms / 1000, 1)) :
			json_null());
		json_object_set_new(r, "fill",
		    rec_window(rec_get(a, "fill0"), rec_get(a, "fill1")));
		json_object_set_new(r, "podgen",
		    rec_get(a, "podgen") != NULL ?
			rec_podgen(rec_get(a, "podgen")) :
			json_null());
	}
	if ((mem = rec_file_object(rec_get(a, "memory"))) != NULL)
		json_object_set_new(r, "memory", mem);
	json_decref(pend);
	rec_members(a, r);
	return (rec_emit(r, 0) == -1);
}

/* The watch of a relist counter's line: its watch="..." label. */
static void
rec_watch_label(const char *metric, char *out, size_t len)
{
	const char *p, *w = metric;

	while ((p = strstr(w, "watch=\"")) != NULL)
		w = p + strlen("watch=\"");
	snprintf(out, len, "%.*s", (int)strcspn(w, "\""), w);
}

/* How many times each watch of the bridge listed between two /metrics. */
static json_t *
rec_relists(const char *f0, const char *f1)
{
	struct rec_line l;
	json_t	       *before, *r;
	char		w[256];
	FILE	       *fp;

	r = json_object();
	if (f1 == NULL || (fp = fopen(f1, "r")) == NULL)
		return (r);
	before = rec_read_map(f0, 1);
	while (rec_read_line(fp, &l) == 0) {
		if (l.nf < 1 ||
		    strncmp(l.f[0], "slurm_bridge_watch_relists_total{",
			strlen("slurm_bridge_watch_relists_total{")) != 0 ||
		    json_object_get(before, l.f[0]) == NULL)
			continue;
		rec_watch_label(l.f[0], w, sizeof(w));
		json_object_set_new(r, w,
		    rec_num((double)(long long)(rec_field_num(
						    l.nf > 1 ? l.f[1] : NULL) -
			rec_map_num(before, l.f[0]))));
	}
	fclose(fp);
	json_decref(before);
	return (r);
}

/*
 * The bridge's RSS around a relist, from "epoch_us kib" samples: the mean
 * before the stop (steady), the peak after it, the mean of the last 3 s
 * (after) and the series after the stop, in ms since it.
 */
static void
rec_relist_rss(json_t *r, const char *path, double ts, double te)
{
	struct rec_line l;
	json_t	       *series = json_array(), *pt;
	double		t, v, pre = 0, peak = 0, aft = 0;
	long		npre = 0, n = 0, naft = 0;
	FILE	       *fp;

	if (path != NULL && (fp = fopen(path, "r")) != NULL) {
		while (rec_read_line(fp, &l) == 0) {
			if (l.nf < 2)
				continue;
			t = trunc(rec_field_num(l.f[0]) / 1000);
			v = rec_field_num(l.f[1]);
			if (t < ts) {
				pre += v;
				npre++;
				continue;
			}
			if (v > peak)
				peak = v;
			n++;
			if (t >= te - 3000) {
				aft += v;
				naft++;
			}
			pt = json_array();
			json_array_append_new(pt,
			    rec_num((double)(long long)(t - ts)));
			json_array_append_new(pt,
			    rec_num((double)(long long)v));
			json_array_append_new(series, pt);
		}
		fclose(fp);
	}
	json_object_set_new(r, "steady_kib",
	    npre > 0 ? rec_num(rec_fixed(pre / npre, 0)) : json_null());
	json_object_set_new(r, "peak_kib", n > 0 ? rec_num(peak) : json_null());
	json_object_set_new(r, "after_kib",
	    naft > 0 ? rec_num(rec_fixed(aft / naft, 0)) : json_null());
	json_object_set_new(r, "samples", rec_num((double)(npre + n)));
	json_object_set_new(r, "series", series);
}

static int
rec_relist(const struct rec_args *a)
{
	static const char *const known[] = { "samples", "t-stop", "t-end",
		"pending", "restart-ms", "relisted-ms", "all", "same", "rl0",
		"rl1", NULL };
	json_t			*r, *steady, *peak;
	double			 ts = 0, te = 0;

	if (rec_check_args(a, known) == -1)
		return (2);
	if (rec_strtod(rec_get(a, "t-stop"), &ts) == -1 ||
	    rec_strtod(rec_get(a, "t-end"), &te) == -1) {
		fprintf(stderr, "record relist: --t-stop and --t-end, in ms\n");
		return (2);
	}
	r = json_object();
	json_object_set_new(r, "pending", rec_get_num(a, "pending"));
	json_object_set_new(r, "restart_ms", rec_get_num(a, "restart-ms"));
	json_object_set_new(r, "relisted_ms", rec_get_num(a, "relisted-ms"));
	json_object_set_new(r, "all_relisted",
	    rec_bool_text("all", rec_get(a, "all")));
	json_object_set_new(r, "relists",
	    rec_relists(rec_get(a, "rl0"), rec_get(a, "rl1")));
	json_object_set_new(r, "same_bridge",
	    rec_bool_text("same", rec_get(a, "same")));
	rec_relist_rss(r, rec_get(a, "samples"), ts, te);
	steady = json_object_get(r, "steady_kib");
	peak = json_object_get(r, "peak_kib");
	json_object_set_new(r, "ratio",
	    json_is_number(steady) && json_number_value(steady) > 0 &&
		    json_is_number(peak) ?
		rec_num(rec_round(json_number_value(peak) /
			json_number_value(steady),
		    100)) :
		json_null());
	rec_members(a, r);
	return (rec_emit(r, 0) == -1);
}

/*
 * record release: at the deepest backlog, the native jobs that held the
 * nodes end one by one, at --t0 "MS,MS,..." (epoch ms, ascending), and
 * Slurm starts the pending jobs that fit on each freed node.  From the
 * latest release before each bind to the bind, over the pods bound after
 * the first (bindwatch's --binds file, "bind_ms start_ms name" per line):
 * the delay a user feels between Slurm's decision and the pod's, when the
 * queue is deep.  --started: the bridge's jobs running at the end.
 * --starts FILE ("name start_ms" per line: when slurmctld started the
 * pod's job, from its log) splits that delay into Slurm's part, from the
 * release to the start, and the bridge's, from the start to the bind.
 */
#define REC_RELEASES_MAX 64

/* A growing array of samples; -1 when out of memory. */
static int
rec_sample(double **v, size_t *n, size_t *cap, double x)
{
	if (*n == *cap) {
		double *nv;

		*cap = *cap == 0 ? 1024 : *cap * 2;
		if ((nv = realloc(*v, *cap * sizeof(**v))) == NULL)
			return (-1);
		*v = nv;
	}
	(*v)[(*n)++] = x;
	return (0);
}

/* Percentiles p50, p90, p99 and max of v (sorted here), nulls if none. */
static json_t *
rec_pcts(double *v, size_t n)
{
	static const struct {
		const char  *key;
		unsigned int p;
	} pcts[] = { { "p50", 50 }, { "p90", 90 }, { "p99", 99 },
		{ "max", 100 } };
	json_t *lat = json_object();
	size_t	i;

	if (n > 0)
		pct_sort(v, n);
	for (i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		json_object_set_new(lat, pcts[i].key,
		    n > 0 ? rec_num(pct_rank(v, n, pcts[i].p)) : json_null());
	return (lat);
}

/* --starts: pod name -> start_ms, as an object (empty if none). */
static json_t *
rec_release_starts(const char *path)
{
	json_t *m = json_object();
	char	line[REC_MAX_LINE], name[256];
	double	ms;
	FILE   *fp;

	if (path == NULL)
		return (m);
	if ((fp = fopen(path, "r")) == NULL) {
		fprintf(stderr, "record release: %s: %s\n", path,
		    strerror(errno));
		return (m);
	}
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "%255s %lf", name, &ms) == 2)
			json_object_set_new(m, name, json_real(ms));
	fclose(fp);
	return (m);
}

static int
rec_release(const struct rec_args *a)
{
	static const char *const known[] = { "binds", "t0", "pending",
		"started", "window-s", "starts", NULL };
	char			 line[REC_MAX_LINE], name[256], *end;
	double	    t0[REC_RELEASES_MAX], *v = NULL, *sv = NULL, *bv = NULL;
	double	    bind, start_ms;
	size_t	    nt = 0, n = 0, cap = 0, ns = 0, scap = 0, nb = 0, bcap = 0;
	size_t	    k;
	json_t	   *r, *ts, *starts, *st;
	FILE	   *fp;
	const char *path = rec_get(a, "binds"), *p = rec_get(a, "t0");
	int	    oom = 0;

	if (rec_check_args(a, known) == -1)
		return (2);
	for (; p != NULL && *p != '\0' && nt < REC_RELEASES_MAX; p = end) {
		t0[nt] = strtod(p, &end);
		if (end == p || (nt > 0 && t0[nt] < t0[nt - 1]))
			break;
		nt++;
		if (*end == ',')
			end++;
	}
	if (nt == 0 || (p != NULL && *p != '\0')) {
		fprintf(stderr,
		    "record release: --t0: epoch ms, ascending, "
		    "comma-separated\n");
		return (2);
	}
	starts = rec_release_starts(rec_get(a, "starts"));
	if (path != NULL && (fp = fopen(path, "r")) != NULL) {
		while (!oom && fgets(line, sizeof(line), fp) != NULL) {
			if (sscanf(line, "%lf %*f %255s", &bind, name) != 2 ||
			    bind < t0[0])
				continue;
			for (k = nt - 1; t0[k] > bind; k--)
				;
			oom = rec_sample(&v, &n, &cap, bind - t0[k]) == -1;
			/* Its job started in this gap: Slurm's part, ours. */
			st = json_object_get(starts, name);
			if (st == NULL)
				continue;
			start_ms = json_real_value(st);
			if (start_ms < t0[k] || start_ms > bind)
				continue;
			oom = oom ||
			    rec_sample(&sv, &ns, &scap, start_ms - t0[k]) ==
				-1 ||
			    rec_sample(&bv, &nb, &bcap, bind - start_ms) == -1;
		}
		fclose(fp);
	} else
		fprintf(stderr, "record release: %s: %s\n",
		    path != NULL ? path : "--binds", strerror(errno));
	json_decref(starts);
	if (oom) {
		free(v);
		free(sv);
		free(bv);
		fprintf(stderr, "record release: out of memory\n");
		return (1);
	}
	r = json_object();
	json_object_set_new(r, "pending", rec_get_num(a, "pending"));
	json_object_set_new(r, "started", rec_get_num(a, "started"));
	json_object_set_new(r, "gap_s", rec_get_num(a, "window-s"));
	ts = json_array();
	for (k = 0; k < nt; k++)
		json_array_append_new(ts, rec_num(t0[k]));
	json_object_set_new(r, "releases_ms", ts);
	json_object_set_new(r, "bound", json_integer((json_int_t)n));
	json_object_set_new(r, "latency_ms", rec_pcts(v, n));
	if (rec_get(a, "starts") != NULL) {
		json_object_set_new(r, "split", json_integer((json_int_t)ns));
		json_object_set_new(r, "slurm_ms", rec_pcts(sv, ns));
		json_object_set_new(r, "bridge_ms", rec_pcts(bv, nb));
	}
	free(v);
	free(sv);
	free(bv);
	rec_members(a, r);
	return (rec_emit(r, 0) == -1);
}

/* The records of a JSON-lines file, as an array (bad lines said, left out). */
static json_t *
rec_read_lines(const char *path)
{
	json_error_t err;
	json_t	    *arr = json_array(), *v;
	FILE	    *fp;

	if (path == NULL || (fp = fopen(path, "r")) == NULL)
		return (arr);
	for (;;) {
		v = json_loadf(fp, JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY,
		    &err);
		if (v == NULL) {
			/* The end of the file reads as an empty input. */
			if (json_error_code(&err) !=
			    json_error_premature_end_of_input)
				rec_warn(err.text, path);
			break;
		}
		json_array_append_new(arr, v);
	}
	fclose(fp);
	return (arr);
}

/* RSS growth in bytes per pending pod from band a to band b, or null. */
static json_t *
rec_slope(const json_t *a, const json_t *b)
{
	const json_t *pa = json_object_get(a, "pending");
	const json_t *pb = json_object_get(b, "pending");
	const json_t *ra = json_object_get(a, "rss_kib");
	const json_t *rb = json_object_get(b, "rss_kib");

	if (!json_is_number(pa) || !json_is_number(pb) || !json_is_number(ra) ||
	    !json_is_number(rb) ||
	    !(json_number_value(pb) > json_number_value(pa)))
		return (json_null());
	return (rec_num(round((json_number_value(rb) - json_number_value(ra)) *
	    1024 / (json_number_value(pb) - json_number_value(pa)))));
}

/* The growth between two bands; from and to are pods pending in Slurm. */
static json_t *
rec_growth(const json_t *a, const json_t *b)
{
	json_t *g = json_object();

	json_object_set_new(g, "from_band", rec_member(a, "band"));
	json_object_set_new(g, "to_band", rec_member(b, "band"));
	json_object_set_new(g, "from", rec_member(a, "pending"));
	json_object_set_new(g, "to", rec_member(b, "pending"));
	json_object_set_new(g, "to_reached", rec_member(b, "reached"));
	json_object_set_new(g, "bytes_per_pod", rec_slope(a, b));
	return (g);
}

static int
rec_backlog(const struct rec_args *a)
{
	static const char *const known[] = { "bands", "relist", "release",
		"deletion", "nodes", "rate", "timeout", "drain", NULL };
	json_t			*r, *bands, *t;
	size_t			 n;

	if (rec_check_args(a, known) == -1)
		return (2);
	bands = rec_read_lines(rec_get(a, "bands"));
	n = json_array_size(bands);
	r = json_object();
	json_object_set_new(r, "scenario", json_string("backlog"));
	json_object_set_new(r, "system", json_string("bridge"));
	json_object_set_new(r, "nodes", rec_get_num(a, "nodes"));
	json_object_set_new(r, "rate", rec_get_num(a, "rate"));
	json_object_set_new(r, "band_timeout_s", rec_get_num(a, "timeout"));
	json_object_set_new(r, "drain_s", rec_get_num(a, "drain"));
	json_object_set(r, "bands", bands);
	json_object_set_new(r, "relist", rec_file_json(rec_get(a, "relist")));
	json_object_set_new(r, "release", rec_file_json(rec_get(a, "release")));
	json_object_set_new(r, "deletion",
	    rec_file_json(rec_get(a, "deletion")));
	/* Between the two top bands measured (the top one, when not
	 * reached, at the pods it had), and from 0 to the second top band. */
	json_object_set_new(r, "slope_top",
	    n >= 3 ? rec_growth(json_array_get(bands, n - 2),
			 json_array_get(bands, n - 1)) :
		     json_null());
	json_object_set_new(r, "slope_low",
	    n >= 3 ? rec_growth(json_array_get(bands, 0),
			 json_array_get(bands, n - 2)) :
		     json_null());
	t = json_pack("{s:i, s:i, s:i, s:i, s:f, s:i}", "baseline_mib", 24,
	    "rss_mib", 64, "rss_at", 10000, "growth_bytes_per_pod", 1024,
	    "time_ratio", 1.5, "relist_ratio", 2);
	if (t != NULL)
		json_object_set_new(t, "release_p99_ms", json_integer(1000));
	json_object_set_new(r, "targets", t != NULL ? t : json_null());
	json_decref(bands);
	rec_members(a, r);
	return (rec_emit(r, 0) == -1);
}

/* --- record owners-phase, owners ------------------------------------------ */

static int
rec_owners_phase(const struct rec_args *a)
{
	static const char *const known[] = { "phase", "bridge-rss",
		"bridge-hwm", "admission-rss", "admission-hwm", "memory",
		NULL };
	json_t			*r, *mem;
	const char		*phase = rec_get(a, "phase");

	if (rec_check_args(a, known) == -1 || phase == NULL)
		return (2);
	mem = rec_file_object(rec_get(a, "memory"));
	r = json_pack("{s:{s:{s:o, s:o, s:o}, s:{s:o, s:o}}}", phase, "bridge",
	    "rss_kib", rec_get_num(a, "bridge-rss"), "hwm_kib",
	    rec_get_num(a, "bridge-hwm"), "memory",
	    mem != NULL ? mem : json_null(), "admission", "rss_kib",
	    rec_get_num(a, "admission-rss"), "hwm_kib",
	    rec_get_num(a, "admission-hwm"));
	if (r == NULL)
		return (1);
	return (rec_emit(r, 0) == -1);
}

/* jq's ratio(x; y): x / y to 1/100, null without both or with y 0. */
static json_t *
rec_ratio(const json_t *x, const json_t *y)
{
	if (!json_is_number(x) || !json_is_number(y) ||
	    json_number_value(y) == 0)
		return (json_null());
	return (rec_num(
	    rec_round(json_number_value(x) / json_number_value(y), 100)));
}

/* figures[phase][daemon][key], or NULL. */
static const json_t *
rec_fig(const json_t *f, const char *phase, const char *d, const char *key)
{
	return (json_object_get(json_object_get(json_object_get(f, phase), d),
	    key));
}

static int
rec_owners(const struct rec_args *a)
{
	static const char *const known[] = { "phases", "jobs", "job-kib",
		"complete", "create-ms", "bridge-bin", "admission-bin", NULL };
	static const char *const daemons[] = { "bridge", "admission", NULL };
	static const char *const phases[] = { "watched", "listed", NULL };
	json_t			*r, *lines, *f, *v, *ratios, *x;
	const char		*key;
	char			 name[64];
	size_t			 i;
	int			 d, p;

	if (rec_check_args(a, known) == -1)
		return (2);
	/* Each phase's figures, in the order measured. */
	f = json_object();
	lines = rec_read_lines(rec_get(a, "phases"));
	json_array_foreach (lines, i, v)
		if (json_is_object(v))
			json_object_update(f, v);
	json_decref(lines);
	r = json_object();
	json_object_set_new(r, "scenario", json_string("owners"));
	json_object_set_new(r, "system", json_string("both"));
	json_object_set_new(r, "jobs", rec_get_num(a, "jobs"));
	json_object_set_new(r, "job_kib", rec_get_num(a, "job-kib"));
	json_object_set_new(r, "complete",
	    rec_bool_text("complete", rec_get(a, "complete")));
	json_object_set_new(r, "create_ms", rec_get_num(a, "create-ms"));
	json_object_set_new(r, "binaries",
	    json_pack("{s:o, s:o}", "bridge", rec_get_str(a, "bridge-bin"),
		"admission", rec_get_str(a, "admission-bin")));
	json_object_set_new(r, "goal_ratio", rec_num(2));
	json_object_foreach (f, key, v)
		json_object_set(r, key, v);
	ratios = json_object();
	for (d = 0; daemons[d] != NULL; d++) {
		for (p = 0; phases[p] != NULL; p++) {
			snprintf(name, sizeof(name), "%s_%s", daemons[d],
			    phases[p]);
			x = json_object();
			json_object_set_new(x, "rss",
			    rec_ratio(rec_fig(f, phases[p], daemons[d],
					  "rss_kib"),
				rec_fig(f, "idle", daemons[d], "rss_kib")));
			json_object_set_new(x, "peak",
			    rec_ratio(rec_fig(f, phases[p], daemons[d],
					  "hwm_kib"),
				rec_fig(f, "idle", daemons[d], "rss_kib")));
			json_object_set_new(ratios, name, x);
		}
	}
	json_object_set_new(r, "ratios", ratios);
	json_decref(f);
	rec_members(a, r);
	return (rec_emit(r, 0) == -1);
}

/* --- record failed ---------------------------------------------------------- */

/*
 * A scenario that failed (bench/lib.sh's run_scenario): --scenario, its
 * --status (the subshell's exit status) and --error (the command that
 * failed, and where).  Text that is not UTF-8 is replaced, not dropped.
 */
static int
rec_failed(const struct rec_args *a)
{
	static const char *const known[] = { "scenario", "status", "error",
		NULL };
	json_t			*r, *err;

	if (rec_check_args(a, known) == -1)
		return (2);
	if ((err = rec_get_str(a, "error")) == NULL)
		err = json_string("(not UTF-8)");
	r = json_object();
	json_object_set_new(r, "scenario", rec_get_str(a, "scenario"));
	json_object_set_new(r, "exit_status", rec_get_num(a, "status"));
	json_object_set_new(r, "error", err);
	rec_members(a, r);
	return (rec_emit(r, 0) == -1);
}

/* --- record file ------------------------------------------------------------ */

/* --failed: the lines of record failed; "failed" is [] when none failed. */
static int
rec_file(const struct rec_args *a)
{
	static const char *const known[] = { "nodes", "seconds", "plots",
		"runs", "cpus", "failed", NULL };
	json_t			*r, *plots;
	const char		*s = rec_get(a, "plots");
	size_t			 len;

	if (rec_check_args(a, known) == -1)
		return (2);
	plots = json_array();
	while (s != NULL && *s != '\0') {
		len = strcspn(s, " ");
		if (len > 0)
			json_array_append_new(plots, json_stringn(s, len));
		s += len;
		if (*s == ' ')
			s++;
	}
	r = json_object();
	json_object_set_new(r, "nodes", rec_get_num(a, "nodes"));
	json_object_set_new(r, "seconds", rec_get_num(a, "seconds"));
	json_object_set_new(r, "host",
	    json_pack("{s:o}", "cpus", rec_get_num(a, "cpus")));
	json_object_set_new(r, "plots", plots);
	json_object_set_new(r, "runs", rec_read_lines(rec_get(a, "runs")));
	json_object_set_new(r, "failed", rec_read_lines(rec_get(a, "failed")));
	rec_members(a, r);
	return (rec_emit(r, 2) == -1);
}

/* --- main ----------------------------------------------------------------------- */

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: record run|sched|end|webhook-run|webhook-file|churn|idle|\n"
	    "              band|relist|release|backlog|owners-phase|owners|\n"
	    "              failed|file\n"
	    "              [--NAME VALUE]...\n"
	    "              [-n KEY=NUMBER] [-s KEY=STRING] [-b KEY=BOOL]\n"
	    "              [-j KEY=FILE]...\n"
	    "Writes one JSON record of make bench on stdout (record file:\n"
	    "the results file); bench/tools/record.c says what each takes.\n");
}

int
main(int argc, char *argv[])
{
	static const struct {
		const char *name;
		int (*fn)(const struct rec_args *);
	} cmds[] = {
		{ "run", rec_run },
		{ "sched", rec_sched },
		{ "end", rec_end },
		{ "webhook-run", rec_webhook_run },
		{ "webhook-file", rec_webhook_file },
		{ "churn", rec_churn },
		{ "idle", rec_idle },
		{ "band", rec_band },
		{ "relist", rec_relist },
		{ "release", rec_release },
		{ "backlog", rec_backlog },
		{ "owners-phase", rec_owners_phase },
		{ "owners", rec_owners },
		{ "failed", rec_failed },
		{ "file", rec_file },
	};
	struct rec_args a;
	size_t		i;

	if (argc >= 2 &&
	    (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		usage(stdout);
		return (0);
	}
	for (i = 0; argc >= 2 && i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name) != 0)
			continue;
		rec_cmd = cmds[i].name;
		if (rec_parse_args(&a, argc - 2, argv + 2) == -1) {
			fprintf(stderr, "record %s: bad arguments\n", rec_cmd);
			usage(stderr);
			return (2);
		}
		return (cmds[i].fn(&a));
	}
	usage(stderr);
	return (2);
}
