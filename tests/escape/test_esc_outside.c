/*
 * test_esc_outside: secrets outside the project, under the real `warden
 * run --tier passive --prompt none`. HOME is a fixture directory (another
 * checkout with a .env, the token files of forges, registries and clouds);
 * the agent is a shell script in the project, whose reads by redirection
 * are no exec at all, so only the views can stop them.
 *
 * What must hold: a file with a sensitive marker anywhere in the home is
 * decided (refused in passive, audited under its absolute path), whatever
 * reads it; every default token file is unreadable, also one created after
 * warden started; the hide list applies to the passwd home as well as to
 * $HOME; the system's secrets are hidden in a root run; ordinary files in
 * the home stay readable and the harness's own places writable.
 *
 * Safety: runs as root. The only files made outside /tmp are uniquely
 * named ones in the passwd home (removed at teardown) and a home fixture
 * under /var/lib (removed too).
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
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OTHER_SECRET "WARDEN_OTHER_CHECKOUT_SECRET_31a7"
#define TOKEN_SECRET "WARDEN_TOKEN_FILE_SECRET_8c2d"
#define LATE_SECRET  "WARDEN_LATE_TOKEN_SECRET_e04b"
#define PW_SECRET    "WARDEN_PASSWD_HOME_SECRET_5f19"
#define PRIV_SECRET  "WARDEN_PRIVATE_FILE_SECRET_a6e3"

struct fx {
	char *proj;
	char *home;
	char *db;
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	wt_write(f->proj, "README.md", "# outside\n");
	f->home = wt_home("esc-outside");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->proj);
	wt_rmtree(f->home);
	free(f->proj);
	free(f->home);
	free(f->db);
	free(f);
	return 0;
}

static void run(const struct fx *f, struct wt_result *r, const char *agent, const char *text)
{
	wt_write(f->proj, "agent.sh", text);
	char *argv[] = {"run",	       "--tier", "passive", "--prompt", "none", "--agent",
			(char *)agent, "--",	 "/bin/sh", "agent.sh", NULL};
	wt_wardenv(f->proj, argv, r);
	print_message("status %d\nout: %.2000s\nerr: %.2000s\n", r->status, r->out, r->err);
}

static bool said(const struct wt_result *r, const char *s)
{
	return (r->out && strstr(r->out, s)) || (r->err && strstr(r->err, s));
}

static void refuse_escape(const struct wt_result *r, const char *secret, const char *what)
{
	if (said(r, secret))
		fail_msg("ESCAPE FOUND: %s", what);
}

/* Open requests refused by the tier whose summary names |path|. */
static int refused(const struct fx *f, const char *path)
{
	struct wt_audit_q q = {.decision = "deny", .source = "tier", .summary_sub = path};
	return wt_audit_match(f->db, &q);
}

/* A shell loop that prints a file by redirection (no exec). */
#define SHOW(path)                                                                                 \
	"while IFS= read -r l || [ -n \"$l\" ]; do echo \"$l\"; done < " path                      \
	" 2>/dev/null; echo \"rc[" path "]=$?\"\n"

/*
 * Another checkout in the home: `grep -r KEY ~/other` and a read of
 * ~/other/.env (by the shell, by a symlink in the project) are decided and
 * refused, audited under the absolute path; the checkout's ordinary files
 * are read as usual.
 */
static void test_esc_outside_other_checkout(void **state)
{
	struct fx *f = *state;
	wt_write(f->home, "other/.env", "KEY=" OTHER_SECRET "\n");
	wt_write(f->home, "other/src/deploy/.env.production", "KEY2=" OTHER_SECRET "\n");
	wt_write(f->home, "other/notes.txt", "KEY_NOTE=visible\n");
	/* A hidden token file behind a symlink of an ordinary name. */
	wt_write(f->home, ".npmrc", "//r/:_authToken=" OTHER_SECRET "\n");
	char *npm = wd_asprintf("%s/npm-link", f->home);
	assert_int_equal(symlink(".npmrc", npm), 0);
	char *env = wd_asprintf("%s/other/.env", f->home);
	char *link = wd_asprintf("%s/other-env", f->proj);
	assert_int_equal(symlink(env, link), 0);
	struct wt_result r;
	run(f, &r, "none",
	    "grep -r KEY ~/other; echo grep=$?\n"
	    "cat ~/other/.env; echo cat=$?\n"
	    "read x < ~/other/.env; echo \"got:$x\"\n"
	    "read y < other-env; echo \"link:$y\"\n" SHOW("~/npm-link"));
	refuse_escape(&r, OTHER_SECRET, "another checkout's .env was read");
	assert_true(said(&r, "KEY_NOTE=visible"));
	assert_true(said(&r, "got:\n"));
	assert_true(said(&r, "link:\n"));
	assert_true(said(&r, "rc[~/npm-link]=2"));
	free(npm);
	/* grep's open, the shell's, the shell's again through the link. */
	struct wt_audit_q opens = {.decision = "deny",
				   .source = "tier",
				   .summary_sub = env,
				   .request_sub = "\"kind\":\"open\""};
	assert_int_equal(wt_audit_match(f->db, &opens), 3);
	/* cat's exec: its argument names the file, decided before it runs
	 * (once per PATH entry the shell tries). */
	char *cat_env = wd_asprintf("cat %s", env);
	struct wt_audit_q cat = {.decision = "deny", .source = "tier", .summary_sub = cat_env};
	assert_true(wt_audit_match(f->db, &cat) >= 1);
	free(cat_env);
	char *prod = wd_asprintf("%s/other/src/deploy/.env.production", f->home);
	assert_int_equal(refused(f, prod), 1);
	wt_result_free(&r);
	free(prod);
	free(link);
	free(env);
}

/* The default token files, each a fixture holding a secret. */
static const char *const token_files[] = {
	".npmrc",
	".docker/config.json",
	".kube/config",
	".netrc",
	".git-credentials",
	".config/gh/hosts.yml",
	".config/hub",
	".config/glab-cli/config.yml",
	".aws/credentials",
	".config/gcloud/application_default_credentials.json",
	".azure/msal_token_cache.json",
	".oci/config",
	".config/doctl/config.yaml",
	".terraform.d/credentials.tfrc.json",
	".cargo/credentials.toml",
	".cargo/credentials",
	".gem/credentials",
	".vault-token",
	".password-store/email.gpg",
	".local/share/keyrings/login.keyring",
	".huggingface/token",
	".cache/huggingface/token",
	".m2/settings.xml",
	".config/rclone/rclone.conf",
	".s3cfg",
	".boto",
	".pgpass",
	".my.cnf",
	".pypirc",
	".mozilla/firefox/p.default/cookies.sqlite",
	".config/google-chrome/Default/Cookies",
	".bash_history",
	".python_history",
};

static char *show_all(const char *prefix)
{
	struct wd_sb sb = {0};
	for (size_t i = 0; i < WD_ARRAY_SIZE(token_files); i++) {
		wd_sb_printf(&sb,
			     "while IFS= read -r l || [ -n \"$l\" ]; do echo \"$l\"; done < "
			     "%s/%s 2>/dev/null; echo \"rc[%s]=$?\"\n",
			     prefix, token_files[i], token_files[i]);
	}
	return wd_sb_steal(&sb);
}

/* Every default token file is unreadable (hidden: absent to the agent),
 * whatever its name says to the markers. */
static void test_esc_outside_token_files(void **state)
{
	struct fx *f = *state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(token_files); i++)
		wt_write(f->home, token_files[i], "token " TOKEN_SECRET "\n");
	wt_write(f->home, "ordinary.txt", "ordinary text\n");
	/* On a case-folding directory .NPMRC is .npmrc: hidden as well. */
	wt_write(f->home, ".NPMRC", "token " TOKEN_SECRET "\n");
	wt_write(f->home, ".Config/GH/hosts.yml", "token " TOKEN_SECRET "\n");
	char *text = show_all("~");
	char *script = wd_asprintf("%sls -a ~ ~/.config | grep -c -e npmrc -e vault -e gcloud "
				   "-e hist\n" SHOW("~/ordinary.txt") SHOW("~/.NPMRC")
					   SHOW("~/.Config/GH/hosts.yml"),
				   text);
	struct wt_result r;
	run(f, &r, "none", script);
	for (size_t i = 0; i < WD_ARRAY_SIZE(token_files); i++) {
		char *line = wd_asprintf("token %s", TOKEN_SECRET);
		if (said(&r, line))
			fail_msg("ESCAPE FOUND: a default token file was read (%s)",
				 token_files[i]);
		free(line);
		char *rc = wd_asprintf("rc[%s]=2", token_files[i]);
		if (!said(&r, rc))
			fail_msg("%s: not refused by absence (%s missing)", token_files[i], rc);
		free(rc);
	}
	/* Absent from listings too. */
	assert_true(said(&r, "\n0\n"));
	assert_true(said(&r, "ordinary text"));
	assert_true(said(&r, "rc[~/ordinary.txt]=0"));
	assert_true(said(&r, "rc[~/.NPMRC]=2"));
	assert_true(said(&r, "rc[~/.Config/GH/hosts.yml]=2"));
	wt_result_free(&r);
	free(script);
	free(text);
}

/*
 * Token files and a checkout's .env that appear after warden started (a
 * `gh auth login` or `npm login` in another terminal, a clone): hidden or
 * decided all the same. The agent waits for the test's "go" file.
 */
static void test_esc_outside_late_files(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "agent.sh",
		 "i=0; while [ ! -e ~/go ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n"
		 "echo waited=$i\n" SHOW("~/.git-credentials") SHOW("~/.config/gh/hosts.yml")
			 SHOW("~/.npmrc") SHOW("~/.aws/credentials") SHOW("~/late/.env")
				 SHOW("~/late/readme"));
	char *argv[] = {"run", "--tier",  "passive",  "--prompt", "none",
			"--",  "/bin/sh", "agent.sh", NULL};
	struct wt_bg bg;
	wt_warden_bg(f->proj, argv, &bg);
	assert_true(wt_bg_expect_err(&bg, "warden: session", 20000));
	/* The agent is running (its start-up is decided) before any of these
	 * exist. */
	usleep(300 * 1000);
	wt_write(f->home, ".git-credentials", "https://u:" LATE_SECRET "@github.com\n");
	wt_write(f->home, ".config/gh/hosts.yml", "oauth_token: " LATE_SECRET "\n");
	wt_write(f->home, ".npmrc", "//r/:_authToken=" LATE_SECRET "\n");
	wt_write(f->home, ".aws/credentials", "aws_secret_access_key=" LATE_SECRET "\n");
	wt_write(f->home, "late/.env", "KEY=" LATE_SECRET "\n");
	wt_write(f->home, "late/readme", "late readme\n");
	wt_write(f->home, "go", "");
	struct wt_result r;
	assert_true(wt_bg_wait(&bg, 30000, &r));
	print_message("status %d\nout: %.2000s\nerr: %.2000s\n", r.status, r.out, r.err);
	refuse_escape(&r, LATE_SECRET, "a token file created after the start was read");
	assert_true(said(&r, "rc[~/.git-credentials]=2"));
	assert_true(said(&r, "rc[~/.config/gh/hosts.yml]=2"));
	assert_true(said(&r, "rc[~/.npmrc]=2"));
	assert_true(said(&r, "rc[~/.aws/credentials]=2"));
	assert_true(said(&r, "late readme"));
	char *env = wd_asprintf("%s/late/.env", f->home);
	assert_int_equal(refused(f, env), 1);
	wt_result_free(&r);
	free(env);
}

/*
 * $HOME points elsewhere: the passwd home of the invoking uid is found all
 * the same. A file with a marker in it is decided; a place the config
 * hides under "~/" is hidden there too. Uniquely named fixtures only.
 */
static void home_case(const struct fx *f, const char *dir, const char *what)
{
	char *home = realpath(dir, NULL);
	assert_non_null(home);
	assert_false(wd_path_within(f->home, home));
	char *marked = wd_asprintf("%s/warden-esc-%d-secret.txt", home, getpid());
	char *hidden = wd_asprintf("%s/warden-esc-%d-hidden", home, getpid());
	char *name = strrchr(hidden, '/') + 1;
	wt_write(home, strrchr(marked, '/') + 1, PW_SECRET "\n");
	wt_write(home, name, PW_SECRET "\n");
	char *cfg =
		wd_asprintf("{\"outside\": [{\"path\": \"~/%s\", \"mode\": \"hide\"}]}\n", name);
	wt_write(f->proj, ".warden/permissions.json", cfg);
	char *text = wd_asprintf("read x < %s; echo \"marked:$x\"\n"
				 "read y < %s; echo \"hidden:$y rc=$?\"\n"
				 "ls -a %s | grep -c warden-esc-%d-hidden\n",
				 marked, hidden, home, getpid());
	struct wt_result r;
	run(f, &r, "none", text);
	bool leaked = said(&r, PW_SECRET);
	unlink(marked);
	unlink(hidden);
	if (leaked)
		fail_msg("ESCAPE FOUND: a secret in %s %s was read", what, home);
	assert_true(said(&r, "marked:\n"));
	assert_true(said(&r, "hidden: rc=2\n0\n"));
	assert_int_equal(refused(f, marked), 1);
	wt_result_free(&r);
	free(text);
	free(cfg);
	free(hidden);
	free(marked);
	free(home);
}

static bool usable_home(const struct passwd *pw)
{
	struct stat st;
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' && strcmp(pw->pw_dir, "/") != 0 &&
	       stat(pw->pw_dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == pw->pw_uid &&
	       /* the agent (no capabilities) can enter it */
	       (st.st_uid == getuid() || (st.st_mode & S_IXOTH));
}

static void test_esc_outside_passwd_home(void **state)
{
	struct fx *f = *state;
	struct passwd *pw = getpwuid(getuid());
	if (!usable_home(pw)) {
		print_message("skipped: the passwd home of uid %u is not its directory\n",
			      getuid());
		skip();
	}
	home_case(f, pw->pw_dir, "the passwd home");
}

/* Run through sudo: SUDO_USER's home is searched as well (any local user
 * with a home of their own; none: skipped). */
static void test_esc_outside_sudo_user_home(void **state)
{
	struct fx *f = *state;
	if (getuid() != 0)
		skip();
	struct passwd *pw;
	char *user = NULL, *dir = NULL;
	setpwent();
	/* A person's account (uid 1000 and up) when there is one. */
	while ((pw = getpwent()))
		if (pw->pw_uid != 0 && usable_home(pw) && (!user || pw->pw_uid >= 1000)) {
			free(user);
			free(dir);
			user = wd_strdup(pw->pw_name);
			dir = wd_strdup(pw->pw_dir);
			if (pw->pw_uid >= 1000)
				break;
		}
	endpwent();
	if (!user) {
		print_message("skipped: no local user has a home of their own\n");
		skip();
	}
	setenv("SUDO_USER", user, 1);
	home_case(f, dir, "SUDO_USER's home");
	unsetenv("SUDO_USER");
	free(user);
	free(dir);
}

/* A root run's uid owns /etc/shadow (root:shadow 0640) with or without
 * capabilities: the system's secrets are hidden. */
static void test_esc_outside_system_secrets(void **state)
{
	struct fx *f = *state;
	if (getuid() != 0)
		skip();
	struct wt_result r;
	run(f, &r, "none",
	    SHOW("/etc/shadow") SHOW("/etc/gshadow") "ls /etc/ssl/private | wc -l\n");
	if (said(&r, "root:"))
		fail_msg("ESCAPE FOUND: /etc/shadow or /etc/gshadow was read");
	assert_true(said(&r, "rc[/etc/shadow]=0") || said(&r, "rc[/etc/shadow]=2"));
	wt_result_free(&r);
}

/*
 * The home stays usable: ordinary files read, a profile's place (Claude
 * Code's ~/.claude) written, its own credentials read (the harness reads
 * them at start). A home outside /tmp, so that only the profile makes it
 * writable: a file elsewhere in it is refused by Landlock.
 */
static void test_esc_outside_home_usable(void **state)
{
	struct fx *f = *state;
	char tmpl[] = "/var/lib/warden-esc-outside-home-XXXXXX";
	char *home = mkdtemp(tmpl);
	assert_non_null(home);
	setenv("HOME", home, 1);
	wt_write(home, "notes.txt", "plain notes\n");
	wt_write(home, ".claude/.credentials.json", "{\"harness\": \"own\"}\n");
	wt_write(home, "other/.env", "KEY=" OTHER_SECRET "\n");
	/* Another user's private file: the agent (root's uid without
	 * capabilities, in a root run) cannot read it natively, and the view,
	 * served with every capability, must not lend them. */
	wt_write(home, "private.txt", "private " PRIV_SECRET "\n");
	char *priv = wd_asprintf("%s/private.txt", home);
	assert_int_equal(chown(priv, 12345, 12345), 0);
	assert_int_equal(chmod(priv, 0600), 0);
	free(priv);
	struct wt_result r;
	static const char script[] = SHOW("~/notes.txt")		/* an ordinary file */
		"echo '{}' > ~/.claude/settings.json; echo claude=$?\n" /* the profile's */
		SHOW("~/.claude/settings.json")				/* read back */
		SHOW("~/.claude/.credentials.json")			/* the harness's own */
		"echo x > ~/elsewhere.txt; echo elsewhere=$?\n"		/* Landlock */
		"read x < ~/other/.env; echo \"other:$x\"\n"		/* decided */
		SHOW("~/private.txt");					/* not lent */
	run(f, &r, "claude-code", script);
	char *settings = wd_asprintf("%s/.claude/settings.json", home);
	bool wrote = access(settings, F_OK) == 0;
	char *elsewhere = wd_asprintf("%s/elsewhere.txt", home);
	bool escaped = access(elsewhere, F_OK) == 0;
	wt_rmtree(home);
	setenv("HOME", f->home, 1);
	if (escaped)
		fail_msg("ESCAPE FOUND: the agent wrote outside its profile's places in the home");
	refuse_escape(&r, OTHER_SECRET, "a .env in the home was read");
	refuse_escape(&r, PRIV_SECRET, "the view lent its privileges: another user's 0600 file");
	assert_true(said(&r, "plain notes"));
	assert_true(said(&r, "claude=0"));
	assert_true(wrote);
	assert_true(said(&r, "{\"harness\": \"own\"}"));
	assert_false(said(&r, "elsewhere=0"));
	assert_true(said(&r, "other:\n"));
	if (getuid() == 0)
		assert_true(said(&r, "rc[~/private.txt]=2"));
	wt_result_free(&r);
	free(elsewhere);
	free(settings);
}

/* A place the config names ("mode": "markers"): decided like the home. */
static void test_esc_outside_config_markers(void **state)
{
	struct fx *f = *state;
	char tmpl[] = "/var/lib/warden-esc-outside-srv-XXXXXX";
	char *srv = mkdtemp(tmpl);
	assert_non_null(srv);
	wt_write(srv, "app/.env", "KEY=" OTHER_SECRET "\n");
	wt_write(srv, "app/config/secrets.yaml", "k: " OTHER_SECRET "\n");
	wt_write(srv, "app/ok.txt", "served ok\n");
	char *cfg =
		wd_asprintf("{\"outside\": [{\"path\": \"%s\", \"mode\": \"markers\"}]}\n", srv);
	wt_write(f->proj, ".warden/permissions.json", cfg);
	char *text = wd_asprintf("read x < %s/app/.env; echo \"env:$x\"\n"
				 "grep -r k: %s/app; echo grep=$?\n"
				 "read y < %s/app/ok.txt; echo \"ok:$y\"\n",
				 srv, srv, srv);
	struct wt_result r;
	run(f, &r, "none", text);
	bool leaked = said(&r, OTHER_SECRET);
	char *env = wd_asprintf("%s/app/.env", srv);
	char *sec = wd_asprintf("%s/app/config/secrets.yaml", srv);
	int nenv = refused(f, env), nsec = refused(f, sec);
	wt_rmtree(srv);
	if (leaked)
		fail_msg("ESCAPE FOUND: a .env in a markers place was read");
	assert_true(said(&r, "env:\n"));
	assert_true(said(&r, "ok:served ok"));
	/* The shell's read and grep's; grep's of secrets.yaml. */
	assert_int_equal(nenv, 2);
	assert_int_equal(nsec, 1);
	wt_result_free(&r);
	free(sec);
	free(env);
	free(text);
	free(cfg);
}

/*
 * A home under /tmp (the session's /tmp is private; the home is shared
 * into it read-only, its profile places writable): the markers view over
 * it changes nothing there either, apart from Claude Code's ~/.claude.
 */
static void test_esc_outside_tmp_home_writes(void **state)
{
	struct fx *f = *state;
	wt_write(f->home, "other/notes.txt", "notes\n");
	wt_write(f->home, ".claude/keep", "");
	static const char script[] = "echo pwn > ~/.bashrc; echo rc=$?\n"
				     "echo pwn >> ~/other/notes.txt; echo append=$?\n"
				     "mv ~/other/notes.txt ~/moved.txt; echo mv=$?\n"
				     "echo ok > ~/.claude/state.json; echo claude=$?\n";
	struct wt_result r;
	run(f, &r, "claude-code", script);
	char *bashrc = wd_asprintf("%s/.bashrc", f->home);
	char *moved = wd_asprintf("%s/moved.txt", f->home);
	char *notes = NULL;
	char *np = wd_asprintf("%s/other/notes.txt", f->home);
	assert_int_equal(wd_read_file(np, 4096, &notes, NULL), 0);
	bool escaped = access(bashrc, F_OK) == 0 || access(moved, F_OK) == 0 ||
		       strstr(notes, "pwn") != NULL;
	if (escaped)
		fail_msg("ESCAPE FOUND: the agent changed the home through its view");
	assert_false(said(&r, "rc=0"));
	assert_false(said(&r, "append=0"));
	assert_true(said(&r, "claude=0"));
	char *state_json = wd_asprintf("%s/.claude/state.json", f->home);
	assert_int_equal(access(state_json, F_OK), 0);
	wt_result_free(&r);
	free(state_json);
	free(notes);
	free(np);
	free(moved);
	free(bashrc);
}

int main(void)
{
	wt_require_sandbox();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_esc_outside_other_checkout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_outside_token_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_outside_late_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_outside_passwd_home, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_outside_sudo_user_home, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_outside_system_secrets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_outside_home_usable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_outside_config_markers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_outside_tmp_home_writes, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
