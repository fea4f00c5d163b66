/*
 * test_esc_tmp: escapes through the temporary directories and through
 * warden's own files, each under the real `warden run --tier passive
 * --prompt none`. The agent is tests/escape/esc_tmp.c, which acts with
 * plain syscalls (no exec to decide): only the mounts, Landlock and file
 * permissions stand in its way.
 *
 * The host's /tmp, /var/tmp and /dev/shm are the session's own inside the
 * sandbox: nothing the host keeps there is seen or changed (a file, a
 * script root runs later, a listening socket as tmux's), nothing the agent
 * leaves there reaches the host, the removal at the end follows none of
 * the agent's symlinks, --keep-tmp keeps it, and a place the config shares
 * is seen read-only. With --no-view the project's .warden/ stays
 * read-only and the audit out of sight.
 *
 * A test that finds a real escape fails with "ESCAPE FOUND: ...".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#define MARK "WARDEN_TMP_MARK_5e07b1"

struct fx {
	char *proj;
	char *home;
	char *host; /* a directory of the host's under /tmp */
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	wt_write(f->proj, "README.md", "# tmp escapes\n");
	f->home = wt_home("esc-tmp");
	char t[] = "/tmp/warden-esc-hosttmp-XXXXXX";
	f->host = wd_strdup(mkdtemp(t));
	chmod(f->host, 0755);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->proj);
	wt_rmtree(f->home);
	wt_rmtree(f->host);
	free(f->proj);
	free(f->home);
	free(f->host);
	free(f);
	return 0;
}

static char *agent(void)
{
	const char *b = getenv("WARDEN_BUILD_DIR");
	return wd_asprintf("%s/tests/escape/esc_tmp", b ? b : ".");
}

/* Runs `warden run --tier passive --prompt none [OPTS...] -- esc_tmp
 * OPS...`: options up to a "--", then the agent's operations. */
static void run(const struct fx *f, struct wt_result *r, ...)
{
	char *argv[96] = {"run", "--tier", "passive", "--prompt", "none"};
	size_t n = 5;
	char *prog = agent();
	va_list ap;
	va_start(ap, r);
	bool ops = false;
	for (char *a; n < 94 && (a = va_arg(ap, char *));) {
		argv[n++] = a;
		if (!ops && strcmp(a, "--") == 0) {
			argv[n++] = prog;
			ops = true;
		}
	}
	va_end(ap);
	argv[n] = NULL;
	wt_wardenv(f->proj, argv, r);
	print_message("status %d\nout: %.3000s\nerr: %.2000s\n", r->status, r->out, r->err);
	free(prog);
}

static bool said(const struct wt_result *r, const char *s)
{
	return (r->out && strstr(r->out, s)) || (r->err && strstr(r->err, s));
}

static bool exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

static char *slurp(const char *p)
{
	char *d = NULL;
	if (wd_read_file(p, 1 << 20, &d, NULL) < 0)
		return NULL;
	return d;
}

#define ESCAPE_IF(cond, ...)                                                                       \
	do {                                                                                       \
		if (cond)                                                                          \
			fail_msg("ESCAPE FOUND: " __VA_ARGS__);                                    \
	} while (0)

/* The private directory warden announced with -v, or NULL. */
static char *announced_dir(const struct wt_result *r)
{
	const char *k = "private temporary directories in ";
	const char *s = r->err ? strstr(r->err, k) : NULL;
	if (!s)
		return NULL;
	s += strlen(k);
	return wd_strndup(s, strcspn(s, "\n"));
}

/* ---- the host's files are not the agent's ---------------------------- */

/* A file the host left in /tmp and in /var/tmp before the run: the agent
 * does not see it (without private directories it reads the marker). */
static void test_esc_tmp_host_files_invisible(void **state)
{
	struct fx *f = *state;
	char *in_tmp = wd_asprintf("%s/secret", f->host);
	wt_write(f->host, "secret", MARK "\n");
	char v[] = "/var/tmp/warden-esc-host-XXXXXX";
	char *vdir = wd_strdup(mkdtemp(v));
	chmod(vdir, 0755);
	wt_write(vdir, "secret", MARK "\n");
	char *in_var = wd_asprintf("%s/secret", vdir);
	struct wt_result r = {0};
	run(f, &r, "--", "read", in_tmp, "read", in_var, NULL);
	assert_int_equal(r.status, 0);
	ESCAPE_IF(said(&r, MARK), "the agent read a file the host left in /tmp or /var/tmp");
	char *want = wd_asprintf("read %s: ENOENT", in_tmp);
	assert_true(said(&r, want));
	free(want);
	want = wd_asprintf("read %s: ENOENT", in_var);
	assert_true(said(&r, want));
	free(want);
	wt_result_free(&r);
	wt_rmtree(vdir);
	free(vdir);
	free(in_tmp);
	free(in_var);
}

/* What the agent writes in /tmp, /var/tmp and /dev/shm it reads back,
 * and none of it is on the host afterwards. */
static void test_esc_tmp_agent_files_stay_inside(void **state)
{
	struct fx *f = *state;
	char *p[3];
	const char *dirs[3] = {"/tmp", "/var/tmp", "/dev/shm"};
	for (int i = 0; i < 3; i++)
		p[i] = wd_asprintf("%s/warden-esc-out-%d-%d", dirs[i], (int)getpid(), i);
	struct wt_result r = {0};
	run(f, &r, "--", "write", p[0], MARK, "write", p[1], MARK, "write", p[2], MARK, "read",
	    p[0], "read", p[1], "read", p[2], NULL);
	assert_int_equal(r.status, 0);
	for (int i = 0; i < 3; i++) {
		char *want = wd_asprintf("read %s: ok: " MARK, p[i]);
		assert_true(said(&r, want));
		free(want);
		ESCAPE_IF(exists(p[i]), "%s, written by the agent, is on the host", p[i]);
		free(p[i]);
	}
	wt_result_free(&r);
}

/* A script of the host's in /tmp that root runs later: the agent can
 * neither change, replace nor remove it, nor plant a file next to it. */
static void test_esc_tmp_host_script_unchanged(void **state)
{
	struct fx *f = *state;
	char *script = wd_asprintf("%s/build.sh", f->host);
	wt_write(f->host, "build.sh", "#!/bin/sh\necho building\n");
	chmod(script, 0755);
	char *evil = wd_asprintf("%s/evil", f->host);
	char *planted = wd_asprintf("%s/planted", f->host);
	struct wt_result r = {0};
	run(f, &r, "--", "append", script, "\ntouch /PWNED\n", "write", script, MARK, "write", evil,
	    MARK, "rename", evil, script, "unlink", script, "write", planted, MARK, NULL);
	assert_int_equal(r.status, 0);
	char *now = slurp(script);
	ESCAPE_IF(!now || strcmp(now, "#!/bin/sh\necho building\n") != 0,
		  "the host's script in /tmp was changed: %s", now ? now : "(removed)");
	ESCAPE_IF(exists(planted), "the agent planted a file in the host's /tmp");
	free(now);
	free(script);
	free(evil);
	free(planted);
	wt_result_free(&r);
}

/* A listening socket of the host's in /tmp (tmux's /tmp/tmux-UID/default,
 * X11's, an ssh-agent's): the agent cannot reach it. */
static void test_esc_tmp_host_socket_unreachable(void **state)
{
	struct fx *f = *state;
	char *path = wd_asprintf("%s/default", f->host);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	chmod(path, 0777);
	assert_int_equal(listen(s, 4), 0);
	struct wt_result r = {0};
	run(f, &r, "--", "connect", path, NULL);
	assert_int_equal(r.status, 0);
	char *ok = wd_asprintf("connect %s: ok", path);
	ESCAPE_IF(said(&r, ok), "the agent connected to a socket of the host's in /tmp");
	char *want = wd_asprintf("connect %s: ENOENT", path);
	assert_true(said(&r, want));
	close(s);
	free(ok);
	free(want);
	free(path);
	wt_result_free(&r);
}

/* ---- the end of the session ------------------------------------------ */

/*
 * The agent plants symlinks in its private directories to a host
 * directory and a host file (which it cannot see, but can name), and a
 * deep tree with read-only and closed directories. At the end the private
 * directory is gone entirely and the host's files are intact: the removal
 * followed none of the links. (The links lead only to the test's own
 * directory: a remover that followed a link to "/" would destroy the
 * machine it is tested on.)
 */
static void test_esc_tmp_cleanup_follows_no_link(void **state)
{
	struct fx *f = *state;
	wt_write(f->host, "victim/precious", MARK "\n");
	wt_write(f->host, "victim/sub/f", MARK "\n");
	char *victim = wd_asprintf("%s/victim", f->host);
	char *precious = wd_asprintf("%s/precious", victim);
	char *sub = wd_asprintf("%s/sub/f", victim);
	struct wt_result r = {0};
	run(f, &r, "-v", "--", "symlink", victim, "/tmp/link-dir", "symlink", precious,
	    "/tmp/link-file", "symlink", victim, "/var/tmp/link-dir", "symlink", victim,
	    "/dev/shm/link-dir", "mkdir", "/tmp/nest", "symlink", victim, "/tmp/nest/in", "deep",
	    "/tmp/deep", "120", "chmod", "0500", "/tmp/nest", NULL);
	assert_int_equal(r.status, 0);
	assert_true(said(&r, "symlink /tmp/link-dir: ok"));
	assert_true(said(&r, "deep /tmp/deep: ok"));
	char *dir = announced_dir(&r);
	assert_non_null(dir);
	assert_true(wd_str_has_prefix(dir, "/tmp/warden-tmp-"));
	ESCAPE_IF(!exists(precious) || !exists(sub),
		  "the clean-up of the private /tmp deleted the host's files through a symlink");
	char *txt = slurp(precious);
	assert_non_null(txt);
	assert_string_equal(txt, MARK "\n");
	assert_false(exists(dir)); /* removed, deep and closed tree included */
	free(txt);
	free(dir);
	free(victim);
	free(precious);
	free(sub);
	wt_result_free(&r);
}

/* --keep-tmp: the directory stays, warden says where, and it holds what
 * the agent wrote. */
static void test_esc_tmp_keep_tmp(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	run(f, &r, "--keep-tmp", "--", "write", "/tmp/kept", MARK, "write", "/dev/shm/kept", MARK,
	    NULL);
	assert_int_equal(r.status, 0);
	const char *k = "temporary directories are kept in ";
	const char *s = strstr(r.err, k);
	assert_non_null(s);
	s += strlen(k);
	char *dir = wd_strndup(s, strcspn(s, " \n"));
	char *kept = wd_asprintf("%s/tmp/kept", dir);
	char *shm = wd_asprintf("%s/shm/kept", dir);
	char *a = slurp(kept), *b = slurp(shm);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a, MARK);
	assert_string_equal(b, MARK);
	struct stat st;
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	wt_rmtree(dir);
	free(a);
	free(b);
	free(kept);
	free(shm);
	free(dir);
	wt_result_free(&r);
}

/* A place the config shares ("tmp": {"share": [...]}) is seen as the
 * host has it, read-only; its sibling is not seen at all. */
static void test_esc_tmp_share_visible_read_only(void **state)
{
	struct fx *f = *state;
	wt_write(f->host, "shared/hello", "from the host\n");
	wt_write(f->host, "private/secret", MARK "\n");
	char *shared = wd_asprintf("%s/shared", f->host);
	char *hello = wd_asprintf("%s/hello", shared);
	char *secret = wd_asprintf("%s/private/secret", f->host);
	char *cfg = wd_asprintf("{\"tmp\": {\"share\": [\"%s\"]}}\n", shared);
	wt_write(f->proj, ".warden/permissions.json", cfg);
	struct wt_result r = {0};
	run(f, &r, "--", "read", hello, "write", hello, MARK, "read", secret, NULL);
	assert_int_equal(r.status, 0);
	char *want = wd_asprintf("read %s: ok: from the host", hello);
	assert_true(said(&r, want));
	free(want);
	want = wd_asprintf("write %s: EROFS", hello);
	assert_true(said(&r, want));
	ESCAPE_IF(said(&r, MARK "\n"), "a place next to the shared one was seen");
	char *now = slurp(hello);
	assert_string_equal(now, "from the host\n");
	free(now);
	free(want);
	free(cfg);
	free(shared);
	free(hello);
	free(secret);
	wt_result_free(&r);
}

/* The command line's --share-tmp is the config's tmp.share: read-only,
 * and nothing next to it; a path outside the temporary directories is an
 * error. And the agent's own program under /tmp is found, with its
 * directory read-only (the person named it on the command line). */
static void test_esc_tmp_share_option_and_program_dir(void **state)
{
	struct fx *f = *state;
	wt_write(f->host, "shared/hello", "from the host\n");
	wt_write(f->host, "private/secret", MARK "\n");
	char *shared = wd_asprintf("%s/shared", f->host);
	char *hello = wd_asprintf("%s/hello", shared);
	char *secret = wd_asprintf("%s/private/secret", f->host);
	struct wt_result r = {0};
	run(f, &r, "--share-tmp", shared, "--", "read", hello, "write", hello, MARK, "read", secret,
	    NULL);
	assert_int_equal(r.status, 0);
	char *want = wd_asprintf("read %s: ok: from the host", hello);
	assert_true(said(&r, want));
	free(want);
	want = wd_asprintf("write %s: EROFS", hello);
	assert_true(said(&r, want));
	free(want);
	ESCAPE_IF(said(&r, MARK "\n"), "a place next to the shared one was seen");
	wt_result_free(&r);

	char *argv[] = {"run", "--share-tmp", "/etc", "--", "/bin/true", NULL};
	wt_wardenv(f->proj, argv, &r);
	assert_int_equal(r.status, 125);
	assert_true(said(&r, "--share-tmp: \"/etc\" is not an absolute path under /tmp"));
	wt_result_free(&r);

	/* A copy of the agent program in a host directory under /tmp. */
	char *bin = wd_asprintf("%s/bin", f->host);
	char *copy = wd_asprintf("%s/esc_tmp", bin);
	char *prog = agent();
	char *text = slurp(prog);
	assert_non_null(text);
	mkdir(bin, 0755);
	wt_write(bin, "note", "next to the program\n");
	char *note = wd_asprintf("%s/note", bin);
	char *cp = wd_asprintf("cp %s %s && chmod 755 %s", prog, copy, copy);
	assert_int_equal(system(cp), 0);
	char *argv2[] = {"run",	 "--tier", "passive", "--prompt", "none", "--", copy,
			 "read", note,	   "write",   note,	  MARK,	  NULL};
	wt_wardenv(f->proj, argv2, &r);
	print_message("status %d\nout: %.2000s\nerr: %.2000s\n", r.status, r.out, r.err);
	assert_int_equal(r.status, 0);
	want = wd_asprintf("read %s: ok: next to the program", note);
	assert_true(said(&r, want));
	free(want);
	want = wd_asprintf("write %s: EROFS", note);
	assert_true(said(&r, want));
	free(want);
	char *now = slurp(note);
	assert_string_equal(now, "next to the program\n");
	free(now);
	wt_result_free(&r);
	free(cp);
	free(note);
	free(text);
	free(prog);
	free(copy);
	free(bin);
	free(shared);
	free(hello);
	free(secret);
}

/* HOME and the working directory under /tmp (outside the project) are
 * shared so that the agent starts where it was started, but read-only:
 * a bind under /tmp would otherwise be writable under /tmp's Landlock rule,
 * as the host's /tmp was. */
static void test_esc_tmp_home_and_cwd_read_only(void **state)
{
	struct fx *f = *state;
	wt_write(f->home, ".profile", "echo hello\n");
	wt_write(f->host, "notes.txt", "cwd file\n");
	char *prof = wd_asprintf("%s/.profile", f->home);
	char *planted = wd_asprintf("%s/.bashrc", f->home);
	char *notes = wd_asprintf("%s/notes.txt", f->host);
	char *argv[] = {"run",	 "--tier", "passive", "--prompt", "none",  "--project",
			f->proj, "--",	   NULL,      "read",	  prof,	   "read",
			notes,	 "append", prof,      "\nevil",	  "write", planted,
			"x",	 "append", notes,     "\nevil",	  NULL};
	argv[8] = agent();
	struct wt_result r = {0};
	wt_wardenv(f->host, argv, &r);
	print_message("status %d\nout: %s\nerr: %s\n", r.status, r.out, r.err);
	assert_int_equal(r.status, 0);
	char *want = wd_asprintf("read %s: ok: echo hello", prof);
	assert_true(said(&r, want));
	free(want);
	want = wd_asprintf("read %s: ok: cwd file", notes);
	assert_true(said(&r, want));
	free(want);
	char *a = slurp(prof), *b = slurp(notes);
	ESCAPE_IF(!a || strcmp(a, "echo hello\n") != 0, "the agent changed HOME's .profile");
	ESCAPE_IF(!b || strcmp(b, "cwd file\n") != 0, "the agent changed its cwd's file");
	ESCAPE_IF(exists(planted), "the agent planted a start-up file in HOME");
	free(a);
	free(b);
	free(argv[8]);
	free(prof);
	free(planted);
	free(notes);
	wt_result_free(&r);
}

/* A gated place (a directory and a single file) under /tmp, outside HOME
 * and the project: its view is mounted on a mount point made in the
 * private /tmp, and each read is decided (passive: refused) and audited
 * under its absolute path. */
static void test_esc_tmp_gate_under_tmp(void **state)
{
	struct fx *f = *state;
	wt_write(f->host, "keys/id", MARK "\n");
	wt_write(f->host, "token", MARK "\n");
	char *dir = wd_asprintf("%s/keys", f->host);
	char *id = wd_asprintf("%s/id", dir);
	char *token = wd_asprintf("%s/token", f->host);
	char *cfg = wd_asprintf("{\"outside\": [{\"path\": \"%s\", \"mode\": \"gate\"}, "
				"{\"path\": \"%s\", \"mode\": \"gate\"}]}\n",
				dir, token);
	wt_write(f->proj, ".warden/permissions.json", cfg);
	struct wt_result r = {0};
	run(f, &r, "--", "read", id, "read", token, NULL);
	assert_int_equal(r.status, 0);
	ESCAPE_IF(said(&r, MARK), "a gated file under /tmp was read without a decision");
	char *want = wd_asprintf("read %s: EACCES", id);
	assert_true(said(&r, want));
	free(want);
	want = wd_asprintf("read %s: EACCES", token);
	assert_true(said(&r, want));
	free(want);
	char *db = wd_asprintf("%s/.warden/audit.db", f->proj);
	char *row = wd_asprintf("=read %s", id);
	assert_int_equal(wt_audit_count(db, "deny", "tier", row, NULL), 1);
	free(row);
	row = wd_asprintf("=read %s", token);
	assert_int_equal(wt_audit_count(db, "deny", "tier", row, NULL), 1);
	free(row);
	free(db);
	free(cfg);
	free(dir);
	free(id);
	free(token);
	wt_result_free(&r);
}

/* A fake session directory, made |age| seconds ago, holding |extra| (or
 * nothing more) besides tmp/, var-tmp/ and shm/. Caller frees. */
static char *fake_session(int age, const char *extra)
{
	char t[] = "/tmp/warden-tmp-XXXXXX";
	char *d = wd_strdup(mkdtemp(t));
	const char *subs[] = {"tmp", "var-tmp", "shm", extra};
	for (size_t i = 0; i < 4 && subs[i]; i++) {
		char *p = wd_asprintf("%s/%s", d, subs[i]);
		assert_int_equal(mkdir(p, 01777), 0);
		free(p);
	}
	wt_write(d, "tmp/left", "x");
	struct timespec ts[2] = {{time(NULL) - age, 0}, {time(NULL) - age, 0}};
	assert_int_equal(utimensat(AT_FDCWD, d, ts, 0), 0);
	return d;
}

/* A warden killed with SIGKILL cannot remove its directory: the next run
 * does, but never a live session's (locked), a kept one, a young one, or
 * anything not shaped like a session's. */
static void test_esc_tmp_stale_dirs_swept(void **state)
{
	struct fx *f = *state;
	char *stale = fake_session(600, NULL);
	char *kept = fake_session(600, ".warden-kept");
	char *young = fake_session(0, NULL);
	char *other = fake_session(600, "notes");
	char *live = fake_session(600, NULL);
	/* The session resolver's resolv.conf: a file, a directory, a
	 * symlink to something of the user's that must survive. */
	char *conf = fake_session(600, NULL);
	wt_write(conf, "resolv.conf", "nameserver 127.0.0.1\n");
	char *conf_dir = fake_session(600, "resolv.conf");
	wt_write(conf_dir, "resolv.conf/inner", "x");
	char *canary = wd_asprintf("%s/canary", f->proj);
	wt_write(f->proj, "canary", "keep me\n");
	char *conf_link = fake_session(600, NULL);
	wd_autofree char *link = wd_asprintf("%s/resolv.conf", conf_link);
	assert_int_equal(symlink(f->proj, link), 0);
	char *kept_conf = fake_session(600, ".warden-kept");
	wt_write(kept_conf, "resolv.conf", "nameserver 127.0.0.1\n");
	/* Old again after what was added. */
	struct timespec ts[2] = {{time(NULL) - 600, 0}, {time(NULL) - 600, 0}};
	const char *aged[] = {conf, conf_link, kept_conf};
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(utimensat(AT_FDCWD, aged[i], ts, 0), 0);
	int lk = open(live, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_int_equal(flock(lk, LOCK_EX), 0);
	struct wt_result r = {0};
	run(f, &r, "--", "read", "/tmp/nothing", NULL);
	assert_int_equal(r.status, 0);
	assert_false(exists(stale));
	assert_true(exists(kept));
	assert_true(exists(young));
	assert_true(exists(other));
	assert_true(exists(live));
	assert_false(exists(conf));
	assert_false(exists(conf_dir));
	assert_false(exists(conf_link));
	ESCAPE_IF(!exists(canary), "the sweep followed a resolv.conf symlink");
	assert_true(exists(kept_conf));
	free(canary);
	close(lk);
	const char *all[] = {stale, kept, young, other, live, conf, conf_dir, conf_link, kept_conf};
	for (size_t i = 0; i < 9; i++) {
		wt_rmtree(all[i]);
		free((char *)all[i]);
	}
	wt_result_free(&r);
}

/* The same for a real session's directory: its warden killed with SIGKILL
 * while the agent runs, the directory as that session left it (with the
 * session resolver's resolv.conf when it had one), aged, then swept by the
 * next run. */
static void killed_session(struct fx *f, bool keep)
{
	char mark[64];
	snprintf(mark, sizeof(mark), "killed-%d", (int)getpid());
	wd_autofree char *script = wd_asprintf(": > /tmp/%s; echo READY; sleep 60", mark);
	char *argv[] = {"run", "--tier", "passive", "--prompt", "none", "--keep-tmp",
			"--",  "sh",	 "-c",	    script,	NULL};
	if (!keep) /* the same without --keep-tmp */
		memmove(&argv[5], &argv[6], 5 * sizeof(char *));
	struct wt_bg bg;
	wt_warden_bg(f->proj, argv, &bg);
	bool ready = false;
	for (int i = 0; i < 400 && !ready; i++) {
		wd_autofree char *out = wt_bg_out(&bg);
		ready = strstr(out, "READY") != NULL;
		if (!ready)
			usleep(50000);
	}
	assert_true(ready);
	wd_autofree char *pat = wd_asprintf("/tmp/warden-tmp-*/tmp/%s", mark);
	glob_t g = {0};
	assert_int_equal(glob(pat, 0, NULL, &g), 0);
	assert_int_equal(g.gl_pathc, 1);
	char *dir = wd_strndup(g.gl_pathv[0], strlen("/tmp/warden-tmp-XXXXXX"));
	globfree(&g);
	kill(bg.pid, SIGKILL);
	waitpid(bg.pid, NULL, 0);
	bg.pid = 0;
	/* The sandbox dies with its warden; then nobody holds the lock. */
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	bool free_lock = false;
	for (int i = 0; i < 200 && !free_lock; i++) {
		free_lock = flock(fd, LOCK_EX | LOCK_NB) == 0;
		if (!free_lock)
			usleep(50000);
	}
	assert_true(free_lock);
	close(fd);
	wd_autofree char *conf = wd_asprintf("%s/resolv.conf", dir);
	print_message("left by the killed session: %s (resolv.conf: %s)\n", dir,
		      exists(conf) ? "yes" : "no");
	struct timespec ts[2] = {{time(NULL) - 600, 0}, {time(NULL) - 600, 0}};
	assert_int_equal(utimensat(AT_FDCWD, dir, ts, 0), 0);
	struct wt_result r = {0};
	run(f, &r, "--", "read", "/tmp/nothing", NULL);
	assert_int_equal(r.status, 0);
	bool left = exists(dir);
	if (left)
		wt_rmtree(dir);
	free(dir);
	if (left && !keep)
		fail_msg("the directory of a killed session was not swept");
	if (!left && keep)
		fail_msg("the sweep removed a killed --keep-tmp session's directory");
	wt_result_free(&r);
}

static void test_esc_tmp_killed_session_swept(void **state)
{
	killed_session(*state, false);
}

/* ... but not one the person asked to keep. */
static void test_esc_tmp_killed_kept_session_left(void **state)
{
	killed_session(*state, true);
}

/* ---- warden's own files without the view ------------------------------ */

/* --no-view: the agent cannot write, replace or remove the project's
 * .warden/ (the config it would write is read at the next start) and does
 * not read the audit. */
static void test_esc_tmp_no_view_warden_read_only(void **state)
{
	struct fx *f = *state;
	const char *orig = "{\"tier\": \"passive\"}\n";
	wt_write(f->proj, ".warden/permissions.json", orig);
	char *cfg = wd_asprintf("%s/.warden/permissions.json", f->proj);
	char *dir = wd_asprintf("%s/.warden", f->proj);
	char *moved = wd_asprintf("%s/moved", f->proj);
	char *db = wd_asprintf("%s/.warden/audit.db", f->proj);
	char *extra = wd_asprintf("%s/.warden/extra", f->proj);
	struct wt_result r = {0};
	run(f, &r, "--no-view", "--", "append", cfg, "{\"tier\": \"aggressive\"}", "write", cfg,
	    "{\"tier\": \"aggressive\"}", "unlink", cfg, "write", extra, "x", "read", db, "rename",
	    dir, moved, "rmdir", dir, NULL);
	assert_int_equal(r.status, 0);
	char *now = slurp(cfg);
	ESCAPE_IF(!now || strcmp(now, orig) != 0, "with --no-view the agent changed the config: %s",
		  now ? now : "(removed)");
	ESCAPE_IF(exists(moved) || exists(extra), "with --no-view the agent changed .warden/");
	ESCAPE_IF(said(&r, "SQLite format"), "with --no-view the agent read the audit");
	char *want = wd_asprintf("write %s: EROFS", cfg);
	assert_true(said(&r, want));
	free(want);
	free(now);
	free(cfg);
	free(dir);
	free(moved);
	free(db);
	free(extra);
	wt_result_free(&r);
}

int main(void)
{
	wt_require_sandbox();
	if (geteuid() != 0) {
		printf("SKIP: the escape suite runs as root\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_esc_tmp_host_files_invisible, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_tmp_agent_files_stay_inside, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_esc_tmp_host_script_unchanged, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_esc_tmp_host_socket_unreachable, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_esc_tmp_cleanup_follows_no_link, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_esc_tmp_keep_tmp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_tmp_share_visible_read_only, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_esc_tmp_share_option_and_program_dir, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_esc_tmp_home_and_cwd_read_only, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_esc_tmp_gate_under_tmp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_tmp_stale_dirs_swept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_tmp_killed_session_swept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_tmp_killed_kept_session_left, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_esc_tmp_no_view_warden_read_only, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
