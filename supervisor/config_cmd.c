/*
 * config_cmd.c: `warden explain`: policy's answers, printed for people
 * tuning their config (config check is in config_check.c). Nothing here
 * runs anything.
 */
#include "sup.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static const char explain_usage[] =
	"usage: warden explain [--project DIR] [--format text|json] -- CMD [ARGS...]\n"
	"       warden explain [--project DIR] [--format text|json] --open PATH [--write]\n"
	"       warden explain [--project DIR] [--format text|json] --connect HOST:PORT\n"
	"\n"
	"Prints what policy decides for the request in that project, without running\n"
	"anything: the verdict, its source, the reason and what matched. \"undecided\"\n"
	"goes to the judge, then the tier (the project's: what it does is shown).\n"
	"With --open, first where the open goes in a session, by the rules the\n"
	"running view applies: through without a decision, to warden (then the\n"
	"verdict), refused by the kernel (write-protected, not writable) or hidden.\n"
	"With --connect, what a tool call's connection to HOST:PORT is decided as:\n"
	"HOST is a name (looked up here, each address decided with that name), an\n"
	"IPv4 address or a bracketed IPv6 address ([::1]:8080), used as it is; the\n"
	"kernel says whether an address is this host's own.\n";

/* The places any agent may write in a session of |project|. */
static struct sbx_places *explain_places(const struct pol_config *cfg, const char *project)
{
	static const enum pol_harness hs[] = {POL_HARNESS_CLAUDE_CODE, POL_HARNESS_CODEX,
					      POL_HARNESS_AIDER};
	size_t n = 0, cap = 8;
	char **all = wd_calloc(cap, sizeof(char *));
	for (size_t h = 0; h < WD_ARRAY_SIZE(hs); h++) {
		char **v = sup_writable_list(cfg, project, hs[h]);
		for (size_t i = 0; v[i]; i++) {
			if (n + 2 > cap) {
				cap *= 2;
				all = wd_realloc(all, cap * sizeof(char *));
			}
			all[n++] = v[i];
			all[n] = NULL;
		}
		free(v);
	}
	struct sbx_places *pl = sbx_places_open(-1, all, getuid());
	for (size_t i = 0; i < n; i++)
		free(all[i]);
	free(all);
	return pl;
}

/* The exec request of |av| as explain sees it, and in *identity what it
 * says of the program (caller frees). NULL when it could not be built. */
static struct pol_request *explain_exec(struct pol_config *cfg, const char *dir, char *const *av,
					char **identity)
{
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), "%s", dir);
	/* The program as an exec would find it (PATH search), then its
	 * identity by the decoder's own check. */
	wd_autofree char *prog = NULL;
	if (!strchr(av[0], '/')) {
		const char *path = getenv("PATH");
		wd_autofree char *copy = wd_strdup(path ? path : "/usr/bin:/bin");
		char *save = NULL;
		for (char *d = strtok_r(copy, ":", &save); d && !prog;
		     d = strtok_r(NULL, ":", &save)) {
			char *full = wd_asprintf("%s/%s", d, av[0]);
			if (access(full, X_OK) == 0)
				prog = full;
			else
				free(full);
		}
	} else if (av[0][0] != '/') {
		prog = wd_asprintf("%s/%s", cwd, av[0]);
	}
	const char *invoked = prog ? prog : av[0];
	wd_autofree char *resolved = NULL;
	wd_autofree char *why = NULL;
	bool writable = false;
	if (invoked[0] == '/') {
		/* The places of every agent profile: explain does not
		 * know which agent will run. */
		struct sbx_places *pl = explain_places(cfg, dir);
		int rc = sbx_program_identity(pl, invoked, &resolved, &writable, &why);
		sbx_places_free(pl);
		*identity = rc < 0     ? wd_asprintf("not found as an exec would find it: %s",
						     strerror(-rc))
			    : writable ? wd_strdup(why)
				       : wd_strdup("outside every place the agent can write, "
						   "owned by root or you");
	}
	if (!*identity)
		*identity = wd_strdup("not found on PATH");
	struct pol_exec_desc d = {
		.path = invoked,
		.resolved = resolved && strcmp(resolved, invoked) != 0 ? resolved : NULL,
		.argv = av,
		.envp = NULL,
		.cwd = cwd,
		.agent_writable = writable,
		.agent_writable_why = why,
	};
	return pol_request_exec(&d, dir);
}

/* A verdict as explain shows it: the hard deny in words, not the
 * internal name. */
static const char *verdict_word(enum pol_verdict v)
{
	return v == POL_DENY_CRITICAL ? "hard deny: no rule, judge or person can allow this"
				      : pol_verdict_name(v);
}

/* The same for JSON: a value, not a sentence. */
static const char *verdict_value(enum pol_verdict v)
{
	return v == POL_DENY_CRITICAL ? "hard_deny" : pol_verdict_name(v);
}

/* What happens after policy: the judge and the tier of |tier| (the
 * project's; standard when it sets none, as warden run does). */
static void print_next(enum pol_verdict v, enum pol_tier tier)
{
	if (v != POL_UNDECIDED && v != POL_ASK)
		return;
	printf("next:     %s (%s)\n",
	       v == POL_ASK ? "the tier (an ask rule skips the judge)" : "the judge, then the tier",
	       sup_tier_outcome(tier));
}

/* The JSON "tier" member, when the request goes on to the tier. */
static void json_tier(enum pol_verdict v, enum pol_tier tier)
{
	if (v != POL_UNDECIDED && v != POL_ASK)
		return;
	printf(",\"tier\":");
	json_str(stdout, sup_tier_outcome(tier));
}

/* The decision's JSON members, each after a comma: verdict, source,
 * reason, matched, whether it covers the tree (|covers|: execs only) and
 * what the tier then does. */
static void json_decision(const struct pol_decision *d, enum pol_tier tier, bool covers)
{
	printf(",\"verdict\":");
	json_str(stdout, verdict_value(d->verdict));
	printf(",\"source\":");
	json_str(stdout, pol_source_name(d->source));
	printf(",\"reason\":");
	json_str(stdout, d->reason);
	printf(",\"matched\":");
	json_str(stdout, d->matched);
	if (covers)
		printf(",\"covers\":%s", d->covers ? "true" : "false");
	json_tier(d->verdict, tier);
}

static void explain_json(const struct pol_request *req, const struct pol_decision *d,
			 const char *identity, const char *parsed, enum pol_tier tier)
{
	char *rj = pol_request_json(req);
	printf("{\"request\":%s", rj);
	json_decision(d, tier, true);
	if (identity) {
		printf(",\"identity\":");
		json_str(stdout, identity);
	}
	if (parsed) {
		printf(",\"parsed\":");
		json_str(stdout, parsed);
	}
	printf("}\n");
	free(rj);
}

static void explain_text(const struct pol_request *req, const struct pol_decision *d,
			 const char *identity, const char *parsed, const char *summary,
			 enum pol_tier tier)
{
	printf("request:  %s\n", summary);
	const char *res = pol_request_resolved(req);
	if (res)
		printf("program:  %s\n", res);
	if (identity)
		printf("identity: %s\n", identity);
	printf("verdict:  %s\n", verdict_word(d->verdict));
	printf("source:   %s\n", pol_source_name(d->source));
	printf("reason:   %s\n", d->reason);
	if (d->matched[0])
		printf("matched:  %s\n", d->matched);
	for (const char *line = parsed, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		printf("parsed:   %.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
	}
	print_next(d->verdict, tier);
}

/* explain --open: the view's answer (sup_open_question, the rules the
 * running view applies), then, when it asks, the pipeline's. */
static int explain_open(const struct pol_config *cfg, const char *dir, const char *path,
			unsigned acc, bool json)
{
	static const char *const routes[] = {
		[SUP_OPEN_FREE] = "no decision",    [SUP_OPEN_DECIDED] = "decided",
		[SUP_OPEN_READ_ONLY] = "read-only", [SUP_OPEN_HIDDEN] = "hidden",
		[SUP_OPEN_LANDLOCK] = "landlock",
	};
	struct sup_open_answer a;
	if (sup_open_question(cfg, dir, path, acc, &a) < 0) {
		wd_err("--open needs a path");
		return SUP_EXIT_USAGE;
	}
	enum pol_tier tier = pol_config_tier(cfg);
	const struct pol_decision *d = &a.decision;
	if (json) {
		printf("{\"request\":");
		json_str(stdout, a.summary);
		printf(",\"path\":");
		json_str(stdout, a.path);
		printf(",\"route\":");
		json_str(stdout, routes[a.route]);
		printf(",\"needs_decision\":%s,\"why\":", a.decided ? "true" : "false");
		json_str(stdout, a.why);
		if (a.decided)
			json_decision(d, tier, false);
		printf("}\n");
	} else {
		printf("request:  %s\n", a.summary);
		printf("view:     %s\n", a.why);
		if (a.decided) {
			printf("verdict:  %s\n", verdict_word(d->verdict));
			printf("source:   %s\n", pol_source_name(d->source));
			printf("reason:   %s\n", d->reason);
			if (d->matched[0])
				printf("matched:  %s\n", d->matched);
			print_next(d->verdict, tier);
		} else {
			printf("verdict:  %s\n",
			       a.route == SUP_OPEN_FREE ? "allow (no decision needed)"
			       : a.route == SUP_OPEN_HIDDEN
				       ? "not found (hidden)"
				       : "refused by the kernel (nobody is asked)");
		}
	}
	sup_open_answer_free(&a);
	return 0;
}

/* ---- explain --connect --------------------------------------------------------- */

/* HOST:PORT or [V6]:PORT into |host| (|n| bytes, brackets dropped) and
 * *port. 0, or -EINVAL after saying what to write. */
static int split_host_port(const char *s, char *host, size_t n, uint16_t *port)
{
	const char *colon, *h = s;
	size_t hl;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		colon = close && close[1] == ':' ? close + 1 : NULL;
		h = s + 1;
		hl = close ? (size_t)(close - h) : 0;
	} else {
		colon = strrchr(s, ':');
		hl = colon ? (size_t)(colon - s) : 0;
		if (colon && memchr(s, ':', hl)) {
			wd_err("--connect: write an IPv6 address in brackets, the port after them "
			       "([::1]:8080), not \"%s\"",
			       s);
			return -EINVAL;
		}
	}
	char *end = NULL;
	unsigned long p = colon ? strtoul(colon + 1, &end, 10) : 0;
	if (!colon || hl == 0 || hl >= n || !colon[1] || *end || p < 1 || p > 65535 ||
	    colon[1] == '-' || colon[1] == '+') {
		wd_err("--connect needs HOST:PORT (github.com:443, 10.0.0.1:5432, [::1]:8080), "
		       "not \"%s\"",
		       s);
		return -EINVAL;
	}
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (uint16_t)p;
	return 0;
}

/* One address of the destination. */
struct explain_addr {
	int family;
	uint8_t addr[16];
};

/* The addresses of |host|: itself when it is an address, else what
 * getaddrinfo() answers (each once, in its order). *named: a name was
 * looked up. 0, or -errno after saying why. */
static int explain_addresses(const char *host, struct explain_addr **out, size_t *n, bool *named)
{
	*out = NULL;
	*n = 0;
	*named = false;
	struct explain_addr a = {0};
	if (inet_pton(AF_INET, host, a.addr) == 1 || inet_pton(AF_INET6, host, a.addr) == 1) {
		a.family = strchr(host, ':') ? AF_INET6 : AF_INET;
		*out = wd_calloc(1, sizeof(a));
		(*out)[0] = a;
		*n = 1;
		return 0;
	}
	*named = true;
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	int rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc != 0) {
		wd_err("--connect: %s does not resolve here: %s", host, gai_strerror(rc));
		return -ENOENT;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		struct explain_addr x = {.family = ai->ai_family};
		if (ai->ai_family == AF_INET)
			memcpy(x.addr, &((struct sockaddr_in *)(void *)ai->ai_addr)->sin_addr, 4);
		else if (ai->ai_family == AF_INET6)
			memcpy(x.addr, &((struct sockaddr_in6 *)(void *)ai->ai_addr)->sin6_addr,
			       16);
		else
			continue;
		bool seen = false;
		for (size_t i = 0; i < *n; i++)
			seen |= (*out)[i].family == x.family &&
				memcmp((*out)[i].addr, x.addr, sizeof(x.addr)) == 0;
		if (seen)
			continue;
		*out = wd_realloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = x;
	}
	freeaddrinfo(res);
	return 0;
}

/* One address of explain --connect, decided as a tool call's TCP
 * connection (not the harness's own) to |port| named |names| (may be
 * NULL) would be; |first|: the first one printed. */
static void explain_connect_one(const struct pol_config *cfg, const struct explain_addr *a,
				uint16_t port, const char *const *names, bool json, bool first)
{
	struct pol_connect_desc d = {
		.syscall = "connect",
		.family = a->family,
		.port = port,
		.proto = POL_NET_TCP,
		.names = names,
		.local = sup_addr_local(a->family, a->addr),
	};
	memcpy(d.addr, a->addr, sizeof(d.addr));
	struct pol_request *req = pol_request_connect(&d);
	if (!req)
		return;
	struct pol_decision dec;
	struct pol_context ctx = {0};
	pol_decide(req, cfg, NULL, &ctx, wd_now_real_us(), &dec);
	enum pol_tier tier = pol_config_tier(cfg);
	bool undecided = dec.verdict == POL_UNDECIDED;
	if (json) {
		wd_autofree char *rj = pol_request_json(req);
		printf("%s{\"request\":%s,\"local\":%s", first ? "" : ",", rj,
		       d.local ? "true" : "false");
		json_decision(&dec, tier, false);
		printf("%s}", undecided ? ",\"review\":\"refused\"" : "");
	} else {
		wd_autofree char *summary = pol_request_summary(req);
		printf("%srequest:  %s\n", first ? "" : "\n", summary);
		printf("local:    %s\n", d.local ? "yes: the kernel routes it to this host" : "no");
		printf("verdict:  %s\n", verdict_word(dec.verdict));
		printf("source:   %s\n", pol_source_name(dec.source));
		printf("reason:   %s\n", dec.reason);
		if (dec.matched[0])
			printf("matched:  %s\n", dec.matched);
		print_next(dec.verdict, tier);
		if (undecided)
			printf("review:   refused in a review run (no judge, no person)\n");
	}
	pol_request_free(req);
}

/* explain --connect: each address of the destination. */
static int explain_connect(const struct pol_config *cfg, const char *dest, bool json)
{
	char host[256];
	uint16_t port;
	if (split_host_port(dest, host, sizeof(host), &port) < 0)
		return SUP_EXIT_USAGE;
	struct explain_addr *addrs;
	size_t n;
	bool named;
	if (explain_addresses(host, &addrs, &n, &named) < 0)
		return SUP_EXIT_USAGE;
	const char *names[] = {host, NULL};
	if (json) {
		printf("{\"host\":");
		json_str(stdout, host);
		printf(",\"port\":%u,\"named\":%s,\"addresses\":[", port, named ? "true" : "false");
	} else if (named) {
		printf("lookup:   %s resolves here to %zu address%s\n", host, n,
		       n == 1 ? "" : "es");
	}
	for (size_t i = 0; i < n; i++)
		explain_connect_one(cfg, &addrs[i], port, named ? names : NULL, json, i == 0);
	if (json)
		printf("]}\n");
	free(addrs);
	return 0;
}

/* The project |project| (canonical, into |dir|, PATH_MAX bytes) and its
 * config, set up as warden run would. 0, or -errno after saying why. */
static int explain_config(const char *project, char *dir, struct pol_config **cfg)
{
	wd_autofree char *err = NULL;
	int prc = sup_project_dir(project, dir, &err);
	if (prc < 0) {
		wd_err("%s", err);
		return prc;
	}
	wd_autofree char *cfgpath = wd_asprintf("%s/.warden/permissions.json", dir);
	int rc = sup_config_load(cfgpath, true, cfg);
	if (rc < 0)
		return rc;
	const char *home = getenv("HOME");
	pol_config_set_paths(*cfg, dir, home ? home : "/root");
	return 0;
}

int sup_cmd_explain(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"project", required_argument, NULL, 'p'},
		{"format", required_argument, NULL, 'f'},
		{"open", required_argument, NULL, 'o'},
		{"write", no_argument, NULL, 'w'},
		{"connect", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *project = ".", *open_path = NULL, *connect = NULL;
	bool json = false, write = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			project = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0) {
				wd_err("--format must be text or json");
				return SUP_EXIT_USAGE;
			}
			json = strcmp(optarg, "json") == 0;
			break;
		case 'o':
			open_path = optarg;
			break;
		case 'w':
			write = true;
			break;
		case 'c':
			connect = optarg;
			break;
		case 'h':
			fputs(explain_usage, stdout);
			return 0;
		default:
			sup_opt_error("explain", c, argv);
			return SUP_EXIT_USAGE;
		}
	}
	if ((!open_path && !connect && optind >= argc) ||
	    (connect && (open_path || optind < argc))) {
		fputs(explain_usage, stderr);
		return SUP_EXIT_USAGE;
	}
	char dir[PATH_MAX];
	struct pol_config *cfg = NULL;
	if (explain_config(project, dir, &cfg) < 0)
		return SUP_EXIT_USAGE;
	struct pol_request *req;
	wd_autofree char *identity = NULL; /* what explain says of the program */
	if (open_path || connect) {
		int rc = open_path ? explain_open(cfg, dir, open_path,
						  write ? POL_ACC_WRITE : POL_ACC_READ, json)
				   : explain_connect(cfg, connect, json);
		pol_config_free(cfg);
		return rc;
	}
	req = explain_exec(cfg, dir, argv + optind, &identity);
	if (!req) {
		wd_err("the request could not be built: %s", strerror(errno));
		pol_config_free(cfg);
		return SUP_EXIT_USAGE;
	}
	struct pol_decision d;
	struct pol_context ctx = {0};
	pol_decide(req, cfg, NULL, &ctx, wd_now_real_us(), &d);
	char *summary = pol_request_summary(req);
	/* What every command of the request parsed to (names, options, the
	 * value each took, operands, the word that could not be placed). */
	wd_autofree char *parsed = pol_explain_grammar(req, cfg);
	if (json)
		explain_json(req, &d, identity, parsed, pol_config_tier(cfg));
	else
		explain_text(req, &d, identity, parsed, summary, pol_config_tier(cfg));
	free(summary);
	pol_request_free(req);
	pol_config_free(cfg);
	return 0;
}
