/*
 * tty.c: `--prompt tty`: asking the person at the controlling terminal.
 *
 * The supervisor takes the terminal's foreground, shows one pending request
 * at a time, reads one line without blocking the loop, then gives the
 * terminal back. Answers: "a" allow once, "A" allow always for this
 * session, "r" reject; a note may follow after a space. Anything else asks
 * again. Every question shows the session code printed before the agent
 * ran, and the agent's writes to the terminal are stopped while a question
 * is shown. What that does and does not stop: docs/design.md, section
 * "The terminal prompt" (the desk is the safe channel).
 */
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <termios.h>

struct sup_tty {
	struct sup_pending **queue;
	size_t n, cap;
	struct sup_pending *shown;
	char line[4096];
	size_t len;
	char code[8];	 /* this session's code, shown in every question */
	bool held;	 /* warden holds the foreground, TOSTOP set */
	bool had_tostop; /* TOSTOP was set before we held it */
};

static void show(struct sup_run *r);

/* Sets or clears TOSTOP on the terminal. */
static void set_tostop(int fd, bool on)
{
	struct termios t;
	if (tcgetattr(fd, &t) < 0)
		return;
	if (on)
		t.c_lflag |= TOSTOP;
	else
		t.c_lflag &= ~(tcflag_t)TOSTOP;
	tcsetattr(fd, TCSANOW, &t);
}

static void give_back(struct sup_run *r)
{
	struct sup_tty *ps = r->tty;
	if (ps->held) {
		if (!ps->had_tostop)
			set_tostop(r->tty_fd, false);
		ps->held = false;
	}
	if (r->child.has_terminal && r->child.pid > 0) {
		tcsetpgrp(r->tty_fd, r->child.pid);
		kill(-r->child.pid, SIGCONT);
	}
}

/* Takes the foreground, and sets TOSTOP so that the agent's writes to the
 * terminal stop (SIGTTOU) until give_back(). */
static void take(struct sup_run *r)
{
	struct sup_tty *ps = r->tty;
	if (r->child.has_terminal)
		tcsetpgrp(r->tty_fd, getpgrp());
	if (!ps->held) {
		struct termios t;
		ps->had_tostop = tcgetattr(r->tty_fd, &t) == 0 && (t.c_lflag & TOSTOP);
		set_tostop(r->tty_fd, true);
		ps->held = true;
	}
}

static bool still_pending(struct sup_run *r, struct sup_pending *p)
{
	for (struct sup_pending *q = r->pending; q; q = q->next)
		if (q == p)
			return true;
	return false;
}

static void on_tty(struct sup_loop *l, int fd, uint32_t events, void *arg)
{
	(void)l;
	struct sup_run *r = arg;
	struct sup_tty *ps = r->tty;
	if (events & (EPOLLHUP | EPOLLERR)) {
		sup_loop_del(r->loop, fd);
		return;
	}
	char buf[512];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n <= 0)
		return;
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] != '\n') {
			if (ps->len < sizeof(ps->line) - 1)
				ps->line[ps->len++] = buf[i];
			continue;
		}
		ps->line[ps->len] = '\0';
		ps->len = 0;
		struct sup_pending *p = ps->shown;
		if (!p)
			continue;
		const char *note = ps->line[1] == ' ' ? ps->line + 2 : "";
		enum sup_answer a;
		if (ps->line[0] == 'a' && (ps->line[1] == '\0' || ps->line[1] == ' '))
			a = SUP_ANSWER_ONCE;
		else if (ps->line[0] == 'A' && (ps->line[1] == '\0' || ps->line[1] == ' '))
			a = SUP_ANSWER_ALWAYS;
		else if (ps->line[0] == 'r' && (ps->line[1] == '\0' || ps->line[1] == ' '))
			a = SUP_ANSWER_REJECT;
		else {
			dprintf(fd, "warden: answer a, A or r (optionally followed by a note)\n> ");
			continue;
		}
		ps->shown = NULL;
		if (still_pending(r, p))
			sup_pending_answer(r, p, a, note, r->person, NULL, NULL);
		give_back(r);
		show(r);
	}
}

int sup_tty_watch(struct sup_run *r)
{
	return r->tty_fd >= 0 ? sup_loop_add(r->loop, r->tty_fd, EPOLLIN, on_tty, r) : 0;
}

int sup_tty_open(struct sup_run *r)
{
	r->tty_fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (r->tty_fd < 0)
		return -errno;
	r->tty = wd_calloc(1, sizeof(*r->tty));
	/* Letters and digits nobody confuses; 5 of 28: 17 million codes. */
	static const char alphabet[] = "ACDEFHJKLMNPRTUVWXY345679";
	unsigned char rnd[5];
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		sup_tty_close(r);
		return -EIO;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		r->tty->code[i] = alphabet[rnd[i] % (sizeof(alphabet) - 1)];
	/* Before the agent runs: nothing of it is on the terminal yet. */
	dprintf(r->tty_fd,
		"warden: this session's code is %s. Every question warden asks on this terminal "
		"shows it; a question without it is not warden's. The approvals desk (warden "
		"approvals) is the channel the agent cannot draw on.\n",
		r->tty->code);
	return 0;
}

static void show(struct sup_run *r)
{
	struct sup_tty *ps = r->tty;
	while (!ps->shown && ps->n > 0) {
		struct sup_pending *p = ps->queue[0];
		memmove(ps->queue, ps->queue + 1, (ps->n - 1) * sizeof(*ps->queue));
		ps->n--;
		if (still_pending(r, p))
			ps->shown = p;
	}
	if (!ps->shown)
		return;
	struct sup_pending *p = ps->shown;
	take(r);
	tcflush(r->tty_fd, TCIFLUSH); /* nothing typed before the question answers it */
	struct wd_sb sb = {0};
	const struct sup_request *rq = p->rq;
	/* Everything shown but our own words comes from the agent (argv, file
	 * names, its cwd) or from a model: sanitised, so that it can neither
	 * move the cursor nor fake a line of this prompt. */
	char *what = wd_sanitize(rq->summary);
	/* Whatever the agent left on the terminal (colours, invisible text, a
	 * scroll region that would keep the question off screen) is reset:
	 * attributes, the scroll region (cursor saved around it), the cursor
	 * shown. */
	wd_sb_puts(&sb, "\033[0m\0337\033[r\0338\033[?25h");
	if (rq->kind == POL_EXEC) {
		char *cwd = wd_sanitize(rq->ev->cwd ? rq->ev->cwd : "?");
		wd_sb_printf(&sb, "\nwarden [%s]: the agent wants to run: %s\n", ps->code, what);
		wd_sb_printf(&sb, "  pid %d, cwd %s\n", rq->pid, cwd);
		free(cwd);
		if (rq->ev->parent_cmdline) {
			char *parent = wd_sanitize(rq->ev->parent_cmdline);
			wd_sb_printf(&sb, "  started by: %.200s\n", parent);
			free(parent);
		}
	} else {
		char *cmd = sbx_proc_cmdline(rq->pid, 4096);
		char *clean = wd_sanitize(cmd ? cmd : "?");
		wd_sb_printf(&sb, "\nwarden [%s]: the agent wants to %s\n", ps->code, what);
		wd_sb_printf(&sb, "  pid %d: %.200s\n", rq->pid, clean);
		free(clean);
		free(cmd);
	}
	free(what);
	char *why = wd_sanitize(rq->judge_reason ? rq->judge_reason : rq->pol.reason);
	if (*why)
		wd_sb_printf(&sb, "  %s: %s\n", rq->judge_reason ? "the judge" : "why it asks",
			     why);
	free(why);
	/* Approval memory: what people decided before on similar requests. */
	char *seen = NULL, *ctx = NULL;
	if (rq->req && sup_memory_advice(r->db, rq->req, &seen, &ctx) == 0)
		wd_sb_printf(&sb, "  Seen before: %s\n", seen);
	free(seen);
	free(ctx);
	wd_sb_printf(&sb,
		     "  [%s] [a] allow once  [A] allow always this session  [r] reject"
		     "  (a note may follow: \"r use make clean\")\n> ",
		     ps->code);
	wd_write_all(r->tty_fd, sb.buf, sb.len);
	wd_sb_free(&sb);
}

void sup_tty_enqueue(struct sup_run *r, struct sup_pending *p)
{
	struct sup_tty *ps = r->tty;
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? ps->cap * 2 : 8;
		ps->queue = wd_realloc(ps->queue, ps->cap * sizeof(*ps->queue));
	}
	ps->queue[ps->n++] = p;
	show(r);
}

void sup_tty_forget(struct sup_run *r, struct sup_pending *p)
{
	struct sup_tty *ps = r->tty;
	if (!ps)
		return;
	for (size_t i = 0; i < ps->n; i++) {
		if (ps->queue[i] == p) {
			memmove(ps->queue + i, ps->queue + i + 1,
				(ps->n - i - 1) * sizeof(*ps->queue));
			ps->n--;
			break;
		}
	}
	if (ps->shown == p) {
		/* Answered on the desk or expired: say so, move on. */
		ps->shown = NULL;
		dprintf(r->tty_fd, "\nwarden: decided elsewhere (desk or deadline)\n");
		give_back(r);
		show(r);
	}
}

void sup_tty_close(struct sup_run *r)
{
	if (r->tty && r->tty->held && !r->tty->had_tostop && r->tty_fd >= 0)
		set_tostop(r->tty_fd, false);
	if (r->tty) {
		free(r->tty->queue);
		free(r->tty);
		r->tty = NULL;
	}
	wd_close(&r->tty_fd);
}
