/*
 * The scheduler's memory map: the process (RSS, threads, malloc) and each
 * store (pod records, pod entries, groups, the job index, interned
 * strings, the informers' stores, the message queue), as GET /debug/memory
 * (JSON) and as the slurm_bridge_memory_bytes metric family.  Reads only
 * atomics and /proc: any thread.
 *
 * Threads: HTTP.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "xmalloc.h"
#include "metrics.h"
#include "bridge.h"

struct mem_store {
	const char *name;
	long long   count;
	long long   bytes;
};

#define MEM_STORES_MAX 32

struct memstats {
	long long	 rss;
	long long	 threads;
	long long	 heap;	  /* every arena's non-mapped space */
	long long	 mmapped; /* blocks mapped on their own */
	long long	 in_use;
	long long	 free_bytes;
	struct mem_store stores[MEM_STORES_MAX];
	int		 nstores;
};

/* VmRSS and Threads from /proc/self/status. */
static void
memstats_proc(struct memstats *m)
{
	FILE *f = fopen("/proc/self/status", "r");
	char  line[256];

	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "VmRSS:", 6) == 0)
			m->rss = strtoll(line + 6, NULL, 10) * 1024;
		else if (strncmp(line, "Threads:", 8) == 0)
			m->threads = strtoll(line + 8, NULL, 10);
	}
	fclose(f);
}

static void
memstats_add(struct memstats *m, const char *name, long long count,
    long long bytes)
{
	if (m->nstores == MEM_STORES_MAX)
		return;
	m->stores[m->nstores].name = name;
	m->stores[m->nstores].count = count;
	m->stores[m->nstores].bytes = bytes;
	m->nstores++;
}

static void
memstats_collect(const struct endpoints_source *src, struct memstats *m)
{
	struct mallinfo2 mi = mallinfo2();
	long long	 c, b;
	size_t		 sc, sb;
	int		 i;

	memset(m, 0, sizeof(*m));
	memstats_proc(m);
	m->heap = (long long)mi.arena;
	m->mmapped = (long long)mi.hblkhd;
	m->in_use = (long long)mi.uordblks + (long long)mi.hblkhd;
	m->free_bytes = (long long)mi.fordblks;
	podrec_stats(&c, &b);
	memstats_add(m, "pod_records", c, b);
	memstats_add(m, "pod_entries", atomic_load(&bstats.mem_pods),
	    atomic_load(&bstats.mem_pods_bytes));
	memstats_add(m, "groups", atomic_load(&bstats.mem_groups),
	    atomic_load(&bstats.mem_groups_bytes));
	memstats_add(m, "job_index", atomic_load(&bstats.mem_jobs),
	    atomic_load(&bstats.mem_jobs_bytes));
	intern_stats(&sc, &sb);
	memstats_add(m, "interned", (long long)sc, (long long)sb);
	for (i = 0; i < src->ninformers; i++) {
		k8s_informer_store(src->informers[i], &sc, &sb);
		memstats_add(m, src->names[i], (long long)sc, (long long)sb);
	}
}

char *
memstats_json(const struct endpoints_source *src)
{
	struct memstats m;
	json_t	       *out, *stores, *st;
	char	       *s;
	int		i;

	memstats_collect(src, &m);
	stores = json_object();
	/* Node, namespace and owner objects: counted, as JSON trees. */
	json_object_set_new(stores, "objects",
	    json_pack("{s:I}", "count",
		(json_int_t)atomic_load(&bstats.mem_objects)));
	for (i = 0; i < m.nstores; i++) {
		st = json_pack("{s:I, s:I}", "count",
		    (json_int_t)m.stores[i].count, "bytes",
		    (json_int_t)m.stores[i].bytes);
		if (m.stores[i].count > 0)
			json_object_set_new(st, "bytes_each",
			    json_integer(
				m.stores[i].bytes / m.stores[i].count));
		json_object_set_new(stores, m.stores[i].name, st);
	}
	out =
	    json_pack("{s:I, s:I, s:{s:I, s:I, s:I, s:I, s:I, s:f}, s:o, s:I, "
		      "s:I, s:I, s:{s:I, s:I, s:I}}",
		"rss_bytes", (json_int_t)m.rss, "threads",
		(json_int_t)m.threads, "malloc", "heap_bytes",
		(json_int_t)m.heap, "mmap_bytes", (json_int_t)m.mmapped,
		"in_use_bytes", (json_int_t)m.in_use, "free_bytes",
		(json_int_t)m.free_bytes, "trims",
		(json_int_t)atomic_load(&bstats.trims), "trim_ms",
		(double)atomic_load(&bstats.trim_us) / 1000.0, "stores", stores,
		"queue_events", (json_int_t)queue_len(src->queue),
		"writes_waiting",
		(json_int_t)atomic_load(&bstats.writes_waiting),
		"events_queued", (json_int_t)atomic_load(&bstats.events_queued),
		"sizes", "pod_record_struct", (json_int_t)sizeof(struct podrec),
		"pod_entry_struct", (json_int_t)sizeof(struct pod_entry),
		"group_struct", (json_int_t)sizeof(struct group));
	s = json_dumps(out, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(out);
	return (s);
}

void
memstats_metrics(const struct endpoints_source *src, struct buf *b)
{
	struct memstats m;
	char		l[96];
	int		i;

	memstats_collect(src, &m);
	metrics_family(b, "slurm_bridge_memory_bytes", "gauge",
	    "Bytes held, by store (see /debug/memory); rss is the process's.");
	metrics_sample(b, "slurm_bridge_memory_bytes", "store=\"rss\"",
	    (double)m.rss);
	metrics_sample(b, "slurm_bridge_memory_bytes",
	    "store=\"malloc_in_use\"", (double)m.in_use);
	for (i = 0; i < m.nstores; i++) {
		snprintf(l, sizeof(l), "store=\"%s\"", m.stores[i].name);
		metrics_sample(b, "slurm_bridge_memory_bytes", l,
		    (double)m.stores[i].bytes);
	}
	metrics_family(b, "slurm_bridge_memory_objects", "gauge",
	    "Objects held, by store.");
	metrics_sample(b, "slurm_bridge_memory_objects", "store=\"objects\"",
	    (double)atomic_load(&bstats.mem_objects));
	for (i = 0; i < m.nstores; i++) {
		snprintf(l, sizeof(l), "store=\"%s\"", m.stores[i].name);
		metrics_sample(b, "slurm_bridge_memory_objects", l,
		    (double)m.stores[i].count);
	}
}
