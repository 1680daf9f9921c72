/*
 * The list parser: reads a list response ({"kind":"PodList",
 * "apiVersion":..,"metadata":{..},"items":[..]}) as its bytes arrive, cut
 * anywhere, and hands each object of "items" over as soon as its last byte
 * is in.  It holds the bytes of one value at a time (a key, a member other
 * than items, or one item), so what a page costs is its largest item and
 * never the page.  It scans bytes once, tracking string and escape state
 * as the watch parser does; jansson decodes each value it delimits.  Pure:
 * it runs on the informer's thread and in the unit tests.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "internal.h"

#define LIST_MAX_DEFAULT (64u * 1024 * 1024)

enum list_state {
	L_OPEN,	   /* before the body's '{' */
	L_KEY0,	   /* after '{': a key or '}' */
	L_KEY,	   /* after ',': a key */
	L_KEYSTR,  /* inside a key */
	L_COLON,   /* after a key */
	L_VALUE,   /* after ':' */
	L_MEMBER,  /* inside a member's value other than items' */
	L_NEXT,	   /* after a member: ',' or '}' */
	L_ITEMS0,  /* after items' '[': an item or ']' */
	L_ITEM0,   /* after ',' between items: an item */
	L_ITEM,	   /* inside an item */
	L_ITEMSEP, /* after an item: ',' or ']' */
	L_END,	   /* after the body's '}' */
	L_FAILED
};

struct k8s_list_parser {
	struct buf	     val;  /* the bytes of the value being read */
	char		    *key;  /* the member being read */
	struct k8s_list_meta meta; /* what the page said so far */
	size_t		     max;
	size_t		     off; /* bytes fed before this call */
	enum list_state	     state;
	/* The value being read. */
	int depth;  /* open objects and arrays */
	int in_str; /* inside a string */
	int esc;    /* after a backslash in a string */
	int scalar; /* a number, true, false or null */
};

void
k8s_list_meta_clear(struct k8s_list_meta *m)
{
	free(m->kind);
	free(m->api_version);
	free(m->rv);
	free(m->cont);
	memset(m, 0, sizeof(*m));
}

struct k8s_list_parser *
k8s_list_parser_new(size_t max)
{
	struct k8s_list_parser *p = xcalloc(1, sizeof(*p));

	buf_init(&p->val);
	p->max = max != 0 ? max : LIST_MAX_DEFAULT;
	p->state = L_OPEN;
	return (p);
}

void
k8s_list_parser_free(struct k8s_list_parser *p)
{
	if (p == NULL)
		return;
	buf_cleanup(&p->val);
	free(p->key);
	k8s_list_meta_clear(&p->meta);
	free(p);
}

static int
list_blank(char c)
{
	return (c == ' ' || c == '\n' || c == '\r' || c == '\t');
}

/* Starts reading a value whose first byte is c; -1 if none starts there. */
static int
list_begin(struct k8s_list_parser *p, char c)
{
	if (c == ',' || c == ':' || c == '}' || c == ']')
		return (-1);
	buf_reset(&p->val);
	p->depth = p->esc = 0;
	p->in_str = c == '"';
	p->scalar = c != '"' && c != '{' && c != '[';
	return (0);
}

/*
 * Reads the value on from data[*i], keeping its bytes: 1 when it ended
 * (*i is then the byte after it), 0 when data ended first, -1 when it
 * grew past max.  The first byte of a string, object or array is read
 * here too; a number or literal ends at the byte after it.
 */
static int
list_scan(struct k8s_list_parser *p, const char *data, size_t len, size_t *i)
{
	size_t start = *i, j, room = p->max - p->val.len;
	int    done = 0;
	char   c;

	for (j = start; j < len; j++) {
		if (j - start >= room)
			return (-1);
		c = data[j];
		if (p->in_str) {
			if (p->esc)
				p->esc = 0;
			else if (c == '\\')
				p->esc = 1;
			/* The opening quote of a string value is not its end. */
			else if (c == '"' && (j > start || p->val.len > 0)) {
				p->in_str = 0;
				if (p->depth == 0) {
					j++;
					done = 1;
					break;
				}
			}
			continue;
		}
		if (p->scalar) {
			if (list_blank(c) || c == ',' || c == '}' || c == ']') {
				done = 1;
				break;
			}
			continue;
		}
		if (c == '"')
			p->in_str = 1;
		else if (c == '{' || c == '[')
			p->depth++;
		else if ((c == '}' || c == ']') && --p->depth == 0) {
			j++;
			done = 1;
			break;
		}
	}
	buf_add(&p->val, data + start, j - start);
	*i = j;
	return (done);
}

/* A member other than items: the type and list metadata are kept. */
static void
list_member(const char *key, const json_t *v, struct k8s_list_meta *m)
{
	const char *s;
	size_t	    n;

	if (strcmp(key, "kind") == 0 && (s = json_string_value(v)) != NULL &&
	    (n = strlen(s)) > 4 && strcmp(s + n - 4, "List") == 0) {
		free(m->kind);
		m->kind = xstrndup(s, n - 4);
	} else if (strcmp(key, "apiVersion") == 0 && json_is_string(v)) {
		free(m->api_version);
		m->api_version = xstrdup(json_string_value(v));
	} else if (strcmp(key, "metadata") == 0) {
		s = k8s_obj_str(v, "resourceVersion");
		free(m->rv);
		m->rv = s != NULL ? xstrdup(s) : NULL;
		s = k8s_obj_str(v, "continue");
		free(m->cont);
		m->cont = s != NULL && *s != '\0' ? xstrdup(s) : NULL;
	}
}

/*
 * The value just read, at byte at of the body: a key, a member or an item
 * (to cb).  0, or -1 with err when jansson refuses it.
 */
static int
list_value(struct k8s_list_parser *p, size_t at, k8s_list_item_cb cb, void *arg,
    struct k8s_error *err)
{
	json_error_t jerr;
	json_t	    *v;

	if ((v = json_loadb(p->val.data, p->val.len, JSON_DECODE_ANY, &jerr)) ==
	    NULL) {
		error_set(err, 200, "BadResponse",
		    "list: invalid JSON in the value ending at byte %zu: %s",
		    at, jerr.text);
		return (-1);
	}
	buf_reset(&p->val);
	switch (p->state) {
	case L_KEYSTR:
		free(p->key);
		p->key = xstrdup(json_string_value(v));
		p->state = L_COLON;
		break;
	case L_MEMBER:
		list_member(p->key, v, &p->meta);
		p->state = L_NEXT;
		break;
	default:
		p->state = L_ITEMSEP;
		if (json_is_object(v)) {
			cb(v, &p->meta, arg);
			return (0);
		}
		break;
	}
	json_decref(v);
	return (0);
}

/* What the parser expected in state s, for messages. */
static const char *
list_expected(enum list_state s)
{
	switch (s) {
	case L_OPEN:
		return ("'{'");
	case L_KEY0:
		return ("a key or '}'");
	case L_KEY:
		return ("a key");
	case L_COLON:
		return ("':'");
	case L_NEXT:
		return ("',' or '}'");
	case L_ITEMSEP:
		return ("',' or ']'");
	case L_END:
		return ("the end");
	default:
		return ("a value");
	}
}

int
k8s_list_parser_feed(struct k8s_list_parser *p, const char *data, size_t len,
    k8s_list_item_cb cb, void *arg, struct k8s_error *err)
{
	size_t i = 0;
	int    rc;
	char   c;

	if (p->state == L_FAILED) {
		error_set(err, 200, "BadResponse", "list: fed after an error");
		return (-1);
	}
	while (i < len) {
		if (p->state == L_KEYSTR || p->state == L_MEMBER ||
		    p->state == L_ITEM) {
			if ((rc = list_scan(p, data, len, &i)) == -1) {
				error_set(err, 200, "BadResponse",
				    "list: a value larger than %zu bytes at "
				    "byte %zu",
				    p->max, p->off + i);
				goto fail;
			}
			if (rc == 1 &&
			    list_value(p, p->off + i, cb, arg, err) == -1)
				goto fail;
			continue;
		}
		c = data[i];
		if (list_blank(c)) {
			i++;
			continue;
		}
		switch (p->state) {
		case L_OPEN:
			if (c != '{')
				goto unexpected;
			p->state = L_KEY0;
			break;
		case L_KEY0:
		case L_KEY:
			if (c == '}' && p->state == L_KEY0) {
				p->state = L_END;
				break;
			}
			if (c != '"' || list_begin(p, c) == -1)
				goto unexpected;
			p->state = L_KEYSTR;
			continue; /* the scan reads the quote */
		case L_COLON:
			if (c != ':')
				goto unexpected;
			p->state = L_VALUE;
			break;
		case L_VALUE:
			if (strcmp(p->key, "items") == 0 && c == '[') {
				p->state = L_ITEMS0;
				break;
			}
			if (list_begin(p, c) == -1)
				goto unexpected;
			p->state = L_MEMBER;
			continue;
		case L_NEXT:
			if (c != ',' && c != '}')
				goto unexpected;
			p->state = c == ',' ? L_KEY : L_END;
			break;
		case L_ITEMS0:
			if (c == ']') {
				p->state = L_NEXT;
				break;
			}
			/* FALLTHROUGH */
		case L_ITEM0:
			if (list_begin(p, c) == -1)
				goto unexpected;
			p->state = L_ITEM;
			continue;
		case L_ITEMSEP:
			if (c != ',' && c != ']')
				goto unexpected;
			p->state = c == ',' ? L_ITEM0 : L_NEXT;
			break;
		default:
			goto unexpected;
		}
		i++;
	}
	p->off += len;
	return (0);
unexpected:
	error_set(err, 200, "BadResponse",
	    "list: expected %s at byte %zu, not 0x%02x",
	    list_expected(p->state), p->off + i, (unsigned char)data[i]);
fail:
	p->state = L_FAILED;
	buf_reset(&p->val);
	return (-1);
}

int
k8s_list_parser_finish(struct k8s_list_parser *p, struct k8s_list_meta *meta,
    struct k8s_error *err)
{
	k8s_list_meta_clear(meta);
	if (p->state != L_END) {
		if (p->state != L_FAILED)
			error_set(err, 200, "BadResponse",
			    "list: ends at byte %zu inside the list", p->off);
		p->state = L_FAILED;
		return (-1);
	}
	*meta = p->meta;
	memset(&p->meta, 0, sizeof(p->meta));
	return (0);
}

int
k8s_list_decode(const char *data, size_t len, k8s_list_item_cb cb, void *arg,
    struct k8s_list_meta *meta, struct k8s_error *err)
{
	struct k8s_list_parser *p = k8s_list_parser_new(0);
	int			rc = -1;

	k8s_list_meta_clear(meta);
	if (k8s_list_parser_feed(p, data, len, cb, arg, err) == 0 &&
	    k8s_list_parser_finish(p, meta, err) == 0)
		rc = 0;
	k8s_list_parser_free(p);
	return (rc);
}
