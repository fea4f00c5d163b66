/*
 * tty.c: `--prompt tty`: asking the person at the controlling terminal.
 *
 * The supervisor takes the terminal's foreground (fg.c), shows one pending
 * request at a time, reads one line without blocking the loop (the tty is
 * in the loop only while warden holds the foreground), then gives the
 * terminal back completely. Ctrl-C at a question refuses it. Answers: "a"
 * allow once, "A" allow always for this session, "r" reject; a note may
 * follow after a space. Anything else asks
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
	char code[8];	  /* this session's code, shown in every question */
	struct sup_fg fg; /* the foreground and modes taken for a question */
	bool reading;	  /* the tty fd is in the loop */
};

static void show(struct sup_run *r);

static void on_tty(struct sup_loop *l, int fd, uint32_t events, void *arg);

/* Out of the loop first: nothing reads the terminal once it is the
 * agent's again. */
static void give_back(struct sup_run *r)
{
	struct sup_tty *ps = r->tty;
	if (ps->reading) {
		sup_loop_del(r->loop, r->tty_fd);
		ps->reading = false;
	}
	sup_fg_give_back(&ps->fg, r->tty_fd, r->child.pid);
}

/* Takes the foreground (TOSTOP set: the agent's writes to the terminal
 * stop until give_back()) and only then watches the terminal. */
static void take(struct sup_run *r)
{
	struct sup_tty *ps = r->tty;
	sup_fg_take(&ps->fg, r->tty_fd, r->child.has_terminal);
	if (!ps->reading && sup_loop_add(r->loop, r->tty_fd, EPOLLIN, on_tty, r) == 0)
		ps->reading = true;
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
	/* Never read from the background: the line is someone else's. */
	if ((events & (EPOLLHUP | EPOLLERR)) || !ps->fg.held || !sup_fg_ours(fd)) {
		sup_loop_del(r->loop, fd);
		ps->reading = false;
		return;
	}
	char buf[512];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n < 0 && errno == EIO) { /* the foreground moved meanwhile */
		sup_loop_del(r->loop, fd);
		ps->reading = false;
	}
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
		/* A person types no control bytes; a line holding one (ESC
		 * first) is a terminal's report that a process of the agent
		 * asked for, never an answer. */
		bool typed = true;
		for (size_t k = 0; ps->line[k]; k++)
			if ((unsigned char)ps->line[k] < 0x20 || ps->line[k] == 0x7f)
				typed = false;
		if (!typed) {
			tcflush(fd, TCIFLUSH);
			dprintf(fd, "warden: answer a, A or r (optionally followed by a note)\n> ");
			continue;
		}
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
		/* The terminal goes back before the caller goes on. */
		give_back(r);
		if (still_pending(r, p))
			sup_pending_answer(r, p, a, note, r->person, NULL, NULL);
		show(r);
		return; /* what followed the answer is the agent's */
	}
}

int sup_tty_watch(struct sup_run *r)
{
	(void)r; /* the terminal is watched only while a question holds it (take) */
	return 0;
}

int sup_tty_open(struct sup_run *r)
{
	r->tty_fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (r->tty_fd < 0)
		return -errno;
	r->tty = wd_calloc(1, sizeof(*r->tty));
	/* Letters and digits nobody confuses; 5 of 25: 9.8 million codes. */
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

/* An exec's question: the command, its caller's pid, cwd and parent. */
void sup_exec_prompt(struct wd_sb *sb, const struct sup_request *rq, const char *code)
{
	char *what = wd_sanitize(rq->summary);
	char *cwd = wd_sanitize(rq->ev->cwd ? rq->ev->cwd : "?");
	wd_sb_printf(sb, "\nwarden [%s]: the agent wants to run: %s\n", code, what);
	wd_sb_printf(sb, "  pid %d, cwd %s\n", rq->pid, cwd);
	free(cwd);
	if (rq->ev->parent_cmdline) {
		char *parent = wd_sanitize(rq->ev->parent_cmdline);
		wd_sb_printf(sb, "  started by: %.200s\n", parent);
		free(parent);
	}
	free(what);
}

/* An open's question: what it does to which file, and its caller. */
void sup_open_prompt(struct wd_sb *sb, const struct sup_request *rq, const char *code)
{
	char *what = wd_sanitize(rq->summary);
	char *cmd = sbx_proc_cmdline(rq->pid, 4096);
	char *clean = wd_sanitize(cmd ? cmd : "?");
	wd_sb_printf(sb, "\nwarden [%s]: the agent wants to %s\n", code, what);
	wd_sb_printf(sb, "  pid %d: %.200s\n", rq->pid, clean);
	free(clean);
	free(cmd);
	free(what);
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
	ps->len = 0;		      /* nor a partial line left from an earlier one */
	struct wd_sb sb = {0};
	const struct sup_request *rq = p->rq;
	/* Whatever the agent left on the terminal (colours, invisible text, a
	 * scroll region that would keep the question off screen) is reset:
	 * attributes, the scroll region (cursor saved around it), the cursor
	 * shown. */
	wd_sb_puts(&sb, "\033[0m\0337\033[r\0338\033[?25h");
	/* Everything shown but our own words comes from the agent (argv, file
	 * names, its cwd) or from a model: sanitised, so that it can neither
	 * move the cursor nor fake a line of this prompt (the kind's lines
	 * sanitise theirs). */
	sup_kind_ops(rq->kind)->prompt(&sb, rq, ps->code);
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
	if (r->tty) {
		sup_fg_release(&r->tty->fg, r->tty_fd);
		free(r->tty->queue);
		free(r->tty);
		r->tty = NULL;
	}
	wd_close(&r->tty_fd);
}

void sup_tty_refuse(struct sup_run *r, struct sup_pending *p, const char *why, int err)
{
	struct sup_tty *ps = r->tty;
	bool shown = ps && ps->shown == p;
	if (shown) {
		ps->shown = NULL;
		dprintf(r->tty_fd, "\nwarden: refused: %s\n", why);
		give_back(r);
	}
	sup_pending_refuse(r, p, why, err);
	if (shown) /* the next question, if any */
		show(r);
}

bool sup_tty_cancel(struct sup_run *r)
{
	struct sup_tty *ps = r->tty;
	if (!ps || !ps->shown || !ps->fg.held)
		return false;
	sup_tty_refuse(r, ps->shown, "cancelled at warden's question (Ctrl-C)", 0);
	return true;
}
