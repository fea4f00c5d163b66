/*
 * approvals_cmd.c: the desk's clients: `warden approvals`, `warden approve`
 * and `warden deny`. They talk to the sockets of running sessions (desk.c
 * has the protocol); nothing here decides.
 */
#include "sup.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

/* Sends |req| to the socket |path| and returns the whole answer (caller
 * frees), or NULL with errno. A socket nobody listens on is stale and
 * removed. */
static char *ask(const char *path, const char *req)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	wd_autoclose int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	struct timeval tv = {.tv_sec = 10};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno == ECONNREFUSED)
			unlink(path); /* its warden is gone */
		return NULL;
	}
	if (wd_write_all(fd, req, strlen(req)) < 0)
		return NULL;
	struct wd_sb sb = {0};
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		wd_sb_add(&sb, buf, (size_t)n);
	return wd_sb_steal(&sb);
}

/* Calls |fn| for each session socket, optionally only |session|'s (whose id
 * ends with |session|). Returns how many matched. */
static int each_session(const char *session,
			void (*fn)(const char *path, const char *id, void *arg), void *arg)
{
	wd_autofree char *dir = sup_desk_dir(false);
	if (!dir)
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".sock") != 0)
			continue;
		char id[128];
		snprintf(id, sizeof(id), "%.*s", (int)(len - 5), e->d_name);
		if (session && !wd_str_has_suffix(id, session))
			continue;
		char *path = wd_asprintf("%s/%s", dir, e->d_name);
		fn(path, id, arg);
		free(path);
		n++;
	}
	closedir(d);
	return n;
}

struct list_acc {
	bool json;
	struct wd_sb out;
	int sessions;
};

static void list_one(const char *path, const char *id, void *arg)
{
	(void)id;
	struct list_acc *a = arg;
	char *ans = ask(path, a->json ? "list\tjson\n" : "list\ttable\n");
	if (!ans)
		return;
	a->sessions++;
	if (a->json) {
		/* Join the sessions' arrays into one. */
		char *open = strchr(ans, '['), *close = strrchr(ans, ']');
		if (open && close && close > open + 1) {
			if (a->out.len > 1)
				wd_sb_putc(&a->out, ',');
			wd_sb_add(&a->out, open + 1, (size_t)(close - open - 1));
		}
	} else {
		wd_sb_puts(&a->out, ans);
	}
	free(ans);
}

/* The ids in a desk answer (table or JSON), one per line, into |ids|. */
static void collect_ids(const char *text, bool json, struct wd_sb *ids)
{
	if (json) {
		static const char tag[] = "{\"id\":\"";
		for (const char *o = strstr(text, tag); o; o = strstr(o + 1, tag)) {
			const char *v = o + strlen(tag), *e = strchr(v, '"');
			if (e)
				wd_sb_printf(ids, "%.*s\n", (int)(e - v), v);
		}
		return;
	}
	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n'), *tab = strchr(l, '\t');
		if (tab && (!nl || tab < nl))
			wd_sb_printf(ids, "%.*s\n", (int)(tab - l), l);
		if (!nl)
			break;
		l = nl + 1;
	}
}

#define TABLE_INDENT 46

/* One desk entry as table rows: the request, where it runs and the full
 * command wrapped to the terminal's width, never cut unseen. */
static void print_entry(char **f, int width)
{
	int w = width - TABLE_INDENT;
	printf("%-10s %-22s %-6s %-5s ", f[0], f[1], f[2], f[3]);
	sup_wrap(stdout, f[4], TABLE_INDENT, w);
	wd_autofree char *in = wd_asprintf("in: %s", f[9]);
	printf("%*s", TABLE_INDENT, "");
	sup_wrap(stdout, in, TABLE_INDENT, w);
	printf("%*s", TABLE_INDENT, "");
	sup_wrap(stdout, f[5], TABLE_INDENT, w);
	wd_autofree char *why = wd_asprintf("why: %s; %s", f[6], f[7]);
	printf("%*s", TABLE_INDENT, "");
	sup_wrap(stdout, why, TABLE_INDENT, w);
	wd_autofree char *seen = wd_asprintf("Seen before: %s", f[8]);
	printf("%*s", TABLE_INDENT, "");
	sup_wrap(stdout, seen, TABLE_INDENT, w);
}

/* Prints the pending requests; their ids go to |ids| when not NULL. */
static void print_list(const char *session, bool json, struct wd_sb *ids)
{
	struct list_acc a = {.json = json};
	if (json)
		wd_sb_putc(&a.out, '[');
	each_session(session, list_one, &a);
	if (ids && a.out.buf)
		collect_ids(a.out.buf, json, ids);
	if (json) {
		wd_sb_puts(&a.out, "]\n");
		fputs(a.out.buf, stdout);
	} else if (a.out.len == 0) {
		printf("no pending requests (%d running session%s)\n", a.sessions,
		       a.sessions == 1 ? "" : "s");
	} else {
		int width = sup_term_width(STDOUT_FILENO);
		printf("%-10s %-22s %-6s %-5s %s\n", "ID", "SESSION", "AGE", "KIND",
		       "REQUEST / CWD / PROCESS / WHY / DEADLINE");
		char *save = NULL;
		for (char *line = strtok_r(a.out.buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			char *f[10] = {0};
			char *s2 = NULL;
			int k = 0;
			for (char *t = strtok_r(line, "\t", &s2); t && k < 10;
			     t = strtok_r(NULL, "\t", &s2))
				f[k++] = t;
			/* A session of an older warden sends no cwd. */
			if (k == 9)
				f[k++] = "?";
			if (k < 10)
				continue;
			print_entry(f, width);
		}
	}
	fflush(stdout);
	wd_sb_free(&a.out);
}

/* Whether |now| (ids, one a line) holds one that |before| does not. */
static bool has_new(const char *now, const char *before)
{
	for (const char *l = now; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);
		bool seen = false;
		for (const char *b = before; b && *b && !seen;) {
			const char *bn = strchr(b, '\n');
			size_t m = bn ? (size_t)(bn - b) : strlen(b);
			seen = m == n && memcmp(b, l, n) == 0;
			b = bn ? bn + 1 : NULL;
		}
		if (!seen && n)
			return true;
		l = nl ? nl + 1 : NULL;
	}
	return false;
}

int sup_cmd_approvals(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"session", required_argument, NULL, 's'},
		{"watch", no_argument, NULL, 'w'},
		{"format", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *session = NULL;
	bool watch = false, json = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			session = optarg;
			break;
		case 'w':
			watch = true;
			break;
		case 'f':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "table") != 0) {
				wd_err("--format must be table or json");
				return SUP_EXIT_USAGE;
			}
			json = strcmp(optarg, "json") == 0;
			break;
		case 'h':
			puts("usage: warden approvals [--session ID] [--watch] [--format "
			     "table|json]\n"
			     "  lists the requests waiting for a person in your running sessions:\n"
			     "  what, where (cwd) and the whole command, wrapped to the terminal\n"
			     "  --watch  lists again every second; on a terminal, a new request\n"
			     "           rings the bell");
			return 0;
		default:
			sup_opt_error("approvals", c, argv);
			return SUP_EXIT_USAGE;
		}
	}
	if (!watch) {
		print_list(session, json, NULL);
		return 0;
	}
	/* A new request rings the terminal's bell (only a terminal: a bell
	 * in a pipe or a file is noise); the ones already waiting when the
	 * watch starts do not. */
	bool bell = isatty(STDOUT_FILENO);
	struct wd_sb before = {0};
	for (bool first = true;; first = false) {
		struct wd_sb ids = {0};
		if (!json)
			fputs("\033[H\033[2J", stdout);
		print_list(session, json, &ids);
		if (bell && !first && has_new(ids.buf, before.buf)) {
			fputc('\a', stdout);
			fflush(stdout);
		}
		wd_sb_free(&before);
		before = ids;
		sleep(1);
	}
	return 0;
}

struct answer_acc {
	const char *req;
	char *reply;
};

static void answer_one(const char *path, const char *id, void *arg)
{
	(void)id;
	struct answer_acc *a = arg;
	if (a->reply && wd_str_has_prefix(a->reply, "ok"))
		return;
	char *r = ask(path, a->req);
	if (r && (!a->reply || wd_str_has_prefix(r, "ok"))) {
		free(a->reply);
		a->reply = r;
	} else {
		free(r);
	}
}

/* Sends |req| to the session that holds |id| (its prefix names it). */
static char *send_to_owner(const char *id, const char *req)
{
	char prefix[64];
	const char *dash = strrchr(id, '-');
	if (!dash || dash == id)
		return NULL; /* "3" alone would pick any session's request 3 */
	snprintf(prefix, sizeof(prefix), "%.*s", dash ? (int)(dash - id) : 0, id);
	struct answer_acc a = {.req = req};
	each_session(prefix[0] ? prefix : NULL, answer_one, &a);
	return a.reply;
}

/* Shows the persistent grant request |id| would write, and asks whether
 * to write it (unless |yes|). 0 to go on, else warden's exit status. */
/* Prints the desk's |text| line by line, each made safe for a terminal:
 * a reply quotes the agent's command, which must not drive the screen. */
static void print_lines(FILE *out, const char *prefix, const char *text)
{
	while (*text) {
		size_t len = strcspn(text, "\n");
		wd_autofree char *line = wd_strndup(text, len);
		wd_autofree char *shown = wd_sanitize(line);
		fprintf(out, "%s%s\n", prefix, shown);
		text += len + (text[len] == '\n');
		prefix = "";
	}
}

static int confirm_project_grant(const char *id, bool yes)
{
	/* Show the persistent grant before it is written. */
	char *req = wd_asprintf("preview\t%s\n", id);
	char *preview = send_to_owner(id, req);
	free(req);
	if (!preview || !wd_str_has_prefix(preview, "ok\t")) {
		/* wd_err sanitises: the reply carries the agent's text. */
		wd_err("%s", preview && wd_str_has_prefix(preview, "error\t")
				     ? preview + 6
				     : "no running session holds that request");
		free(preview);
		return 1;
	}
	/* "ok\tPATH\tGRANT": the file the session will write. The grant
	 * quotes the agent's command: shown sanitised, so that nothing in it
	 * can redraw the screen around the question below. */
	char *path = preview + 3, *tab = strchr(path, '\t');
	if (tab)
		*tab = '\0';
	wd_autofree char *shown_path = wd_sanitize(tab ? path : ".warden/permissions.json");
	size_t glen = strlen(tab ? tab + 1 : path);
	wd_autofree char *grant =
		wd_strndup(tab ? tab + 1 : path,
			   glen && (tab ? tab + 1 : path)[glen - 1] == '\n' ? glen - 1 : glen);
	wd_autofree char *shown_grant = wd_sanitize(grant);
	printf("This persistent grant will be written to %s:\n  %s\n", shown_path, shown_grant);
	free(preview);
	if (!yes) {
		if (!isatty(STDIN_FILENO)) {
			wd_err("not a terminal: add --yes to write the grant");
			return 1;
		}
		printf("Write it? [y/N] ");
		fflush(stdout);
		char line[16];
		if (!fgets(line, sizeof(line), stdin) || (line[0] != 'y' && line[0] != 'Y'))
			return 1;
	}
	return 0;
}

int sup_cmd_answer(int argc, char **argv, bool approve)
{
	static const struct option longopts[] = {
		{"always", no_argument, NULL, 'a'},	{"project", no_argument, NULL, 'p'},
		{"note", required_argument, NULL, 'n'}, {"yes", no_argument, NULL, 'y'},
		{"help", no_argument, NULL, 'h'},	{NULL, 0, NULL, 0},
	};
	bool always = false, project = false, yes = false;
	const char *note = "";
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			always = true;
			break;
		case 'p':
			project = true;
			break;
		case 'n':
			note = optarg;
			break;
		case 'y':
			yes = true;
			break;
		case 'h':
			puts(approve ? "usage: warden approve ID [--always [--project [--yes]]] "
				       "[--note TEXT]"
				     : "usage: warden deny ID [--note TEXT]");
			return 0;
		default:
			sup_opt_error(approve ? "approve" : "deny", c, argv);
			return SUP_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || (!approve && (always || project)) || (project && !always)) {
		wd_err(approve ? "usage: warden approve ID [--always [--project]] [--note TEXT]"
			       : "usage: warden deny ID [--note TEXT]");
		return SUP_EXIT_USAGE;
	}
	const char *id = argv[optind];
	if (project) {
		int rc = confirm_project_grant(id, yes);
		if (rc != 0)
			return rc;
	}
	wd_autofree char *hex = wd_hex_encode(note);
	const char *kind = !approve ? "reject" : project ? "project" : always ? "always" : "once";
	wd_autofree char *req = wd_asprintf("answer\t%s\t%s\t%s\n", id, kind, hex);
	char *reply = send_to_owner(id, req);
	if (!reply) {
		wd_err("no running session holds request %s (warden approvals lists them)", id);
		return 1;
	}
	bool ok = wd_str_has_prefix(reply, "ok\t");
	bool err = wd_str_has_prefix(reply, "error\t");
	/* The reply quotes the agent's command: each line sanitised. */
	const char *text = ok ? reply + 3 : err ? reply + 6 : "no answer from the session";
	print_lines(ok ? stdout : stderr, ok ? "" : "warden: ", text);
	free(reply);
	return ok ? 0 : 1;
}
