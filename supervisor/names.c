/*
 * names.c: the names the session saw resolve to each IP address, so that
 * a connection is shown and decided as "github.com:443" and not as an
 * address. The session's resolver (resolver.c) adds what it answered the
 * sandbox; warden adds what it resolved itself (the harness's API
 * endpoint). A connection looks its address up here (sockets.c).
 *
 * An address keeps its names for the whole session, newest first, at most
 * NAMES_PER_ADDR of them: a name that later resolves elsewhere does not
 * take its name away from an address it named before (the decision is on
 * the address connected to, and every name it ever had is shown to the
 * rules: a deny entry matching any of them refuses). The table holds at
 * most NAMES_ADDRS_MAX addresses; past that the least recently named is
 * forgotten, and its connections are shown as unnamed addresses, which is
 * the safe side (an allow entry by name no longer matches them).
 *
 * A name the keep predicate holds (sup_names_set_keep: a name a
 * network.deny entry or the metadata list matches) is never pushed out:
 * when an address is full, the oldest name NOT kept goes; when every name
 * it has is kept, the new name is not added (the address is refused by
 * its kept names whatever the new one says). An address with a kept name
 * is never the one forgotten when the table is full; when every address
 * is, the new address stays unnamed (an allow entry by name cannot match
 * it). So a process that makes more names resolve to an address, or more
 * addresses resolve, cannot wash a denied name off an address.
 *
 * The resolver's thread adds while the loop looks up: one mutex guards the
 * table, and lookups return copies.
 */
#include "sup.h"

#include <string.h>
#include <sys/socket.h>

#define NAMES_PER_ADDR	8
#define NAMES_ADDRS_MAX 65536
#define NAMES_BUCKETS	4096
#define NAME_MAX_LEN	253

struct addr_entry {
	struct addr_entry *next;	  /* hash chain */
	struct addr_entry *older, *newer; /* recency list */
	int family;
	uint8_t addr[16];
	char *names[NAMES_PER_ADDR]; /* newest first */
	size_t n;
	bool kept; /* one of its names is kept */
};

struct sup_names {
	pthread_mutex_t lock;
	struct addr_entry *buckets[NAMES_BUCKETS];
	struct addr_entry *newest, *oldest;
	size_t count;
	sup_names_keep_fn keep; /* NULL: none kept */
	void *keep_arg;
};

void sup_names_set_keep(struct sup_names *t, sup_names_keep_fn fn, void *arg)
{
	pthread_mutex_lock(&t->lock);
	t->keep = fn;
	t->keep_arg = arg;
	pthread_mutex_unlock(&t->lock);
}

static bool kept(const struct sup_names *t, const char *name)
{
	return t->keep && t->keep(t->keep_arg, name);
}

struct sup_names *sup_names_new(void)
{
	struct sup_names *t = wd_calloc(1, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	return t;
}

static void entry_free(struct addr_entry *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->names[i]);
	free(e);
}

void sup_names_free(struct sup_names *t)
{
	if (!t)
		return;
	for (struct addr_entry *e = t->newest, *next; e; e = next) {
		next = e->older;
		entry_free(e);
	}
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static size_t addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

static unsigned bucket_of(int family, const uint8_t *addr)
{
	uint32_t h = 2166136261u ^ (uint32_t)family;
	for (size_t i = 0; i < addr_len(family); i++)
		h = (h ^ addr[i]) * 16777619u;
	return h % NAMES_BUCKETS;
}

static struct addr_entry *find(struct sup_names *t, int family, const uint8_t *addr)
{
	for (struct addr_entry *e = t->buckets[bucket_of(family, addr)]; e; e = e->next)
		if (e->family == family && memcmp(e->addr, addr, addr_len(family)) == 0)
			return e;
	return NULL;
}

static void unlink_recency(struct sup_names *t, struct addr_entry *e)
{
	if (e->newer)
		e->newer->older = e->older;
	else
		t->newest = e->older;
	if (e->older)
		e->older->newer = e->newer;
	else
		t->oldest = e->newer;
	e->older = e->newer = NULL;
}

static void push_newest(struct sup_names *t, struct addr_entry *e)
{
	e->older = t->newest;
	e->newer = NULL;
	if (t->newest)
		t->newest->newer = e;
	t->newest = e;
	if (!t->oldest)
		t->oldest = e;
}

/* Forgets the least recently named address without a kept name. False
 * when every address has one. */
static bool drop_oldest(struct sup_names *t)
{
	struct addr_entry *e = t->oldest;
	while (e && e->kept)
		e = e->newer;
	if (!e)
		return false;
	unlink_recency(t, e);
	struct addr_entry **pp = &t->buckets[bucket_of(e->family, e->addr)];
	while (*pp && *pp != e)
		pp = &(*pp)->next;
	if (*pp)
		*pp = e->next;
	entry_free(e);
	t->count--;
	return true;
}

/* A name as it is kept: lower case, no final dot; NULL when it is not a
 * plausible DNS name (empty, too long, a byte outside the name alphabet). */
static char *clean_name(const char *name)
{
	size_t n = strlen(name);
	if (n > 0 && name[n - 1] == '.')
		n--;
	if (n == 0 || n > NAME_MAX_LEN)
		return NULL;
	char *s = wd_malloc(n + 1);
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		      c == '_')) {
			free(s);
			return NULL;
		}
		s[i] = c;
	}
	s[n] = '\0';
	return s;
}

void sup_names_add(struct sup_names *t, const char *name, int family, const uint8_t *addr)
{
	if (!t || !name || (family != AF_INET && family != AF_INET6))
		return;
	char *clean = clean_name(name);
	if (!clean)
		return;
	pthread_mutex_lock(&t->lock);
	struct addr_entry *e = find(t, family, addr);
	if (!e) {
		if (t->count >= NAMES_ADDRS_MAX && !drop_oldest(t)) {
			pthread_mutex_unlock(&t->lock);
			free(clean);
			return;
		}
		e = wd_calloc(1, sizeof(*e));
		e->family = family;
		memcpy(e->addr, addr, addr_len(family));
		unsigned b = bucket_of(family, addr);
		e->next = t->buckets[b];
		t->buckets[b] = e;
		t->count++;
	} else {
		unlink_recency(t, e);
	}
	push_newest(t, e);
	/* Newest first: the name moves to the front, the oldest falls off. */
	size_t at = e->n;
	for (size_t i = 0; i < e->n; i++)
		if (strcmp(e->names[i], clean) == 0)
			at = i;
	if (at < e->n) {
		free(clean);
		clean = e->names[at];
		memmove(&e->names[1], &e->names[0], at * sizeof(char *));
	} else {
		bool keep = kept(t, clean);
		if (e->n == NAMES_PER_ADDR) {
			/* The oldest name not kept goes; none: the new one is
			 * not added (the kept names refuse the address). */
			size_t k = e->n;
			while (k > 0 && kept(t, e->names[k - 1]))
				k--;
			if (k == 0) {
				free(clean);
				pthread_mutex_unlock(&t->lock);
				return;
			}
			free(e->names[k - 1]);
			memmove(&e->names[k - 1], &e->names[k], (e->n - k) * sizeof(char *));
			e->n--;
		}
		e->kept |= keep;
		memmove(&e->names[1], &e->names[0], e->n * sizeof(char *));
		e->n++;
	}
	e->names[0] = clean;
	pthread_mutex_unlock(&t->lock);
}

char **sup_names_of(struct sup_names *t, int family, const uint8_t *addr)
{
	if (!t || (family != AF_INET && family != AF_INET6))
		return NULL;
	char **out = NULL;
	pthread_mutex_lock(&t->lock);
	struct addr_entry *e = find(t, family, addr);
	if (e && e->n) {
		out = wd_calloc(e->n + 1, sizeof(char *));
		for (size_t i = 0; i < e->n; i++)
			out[i] = wd_strdup(e->names[i]);
	}
	pthread_mutex_unlock(&t->lock);
	return out;
}

size_t sup_names_count(struct sup_names *t)
{
	if (!t)
		return 0;
	pthread_mutex_lock(&t->lock);
	size_t n = t->count;
	pthread_mutex_unlock(&t->lock);
	return n;
}
