/*
 * interrupt.c: Ctrl-C, kill and hang-up while requests wait.
 *
 * A process whose exec waits for a person sits in the seccomp notification
 * and, once warden has received it, only a fatal signal ends that wait
 * (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, filter.c); an open waits in a
 * FUSE request, killable only after its first interruption. And a process
 * warden traces never takes the kernel's shortcut that turns a default
 * fatal signal into SIGKILL: its SIGINT waits for its tracer. So a Ctrl-C
 * stays pending, unseen, until the request is answered: the kernel does
 * not end the wait, warden has to.
 *
 * Two ways in:
 *  - A signal that reaches the caller (Ctrl-C goes to the terminal's
 *    foreground group, which is the agent's, not warden's): while requests
 *    wait, the loop looks every 100 ms at what the kernel says each waiting
 *    caller has pending (/proc/TID/status: SigPnd, ShdPnd, minus SigBlk and
 *    SigIgn). One of SIGINT, SIGQUIT, SIGTERM or SIGHUP there refuses the
 *    request, as "stopped", with EINTR, and the signal then acts as it
 *    would have without warden.
 *  - A signal to warden itself (kill, a hang-up, Ctrl-C while warden holds
 *    the terminal): it goes on to the agent's process group first, then
 *    every waiting request is refused, so that no caller sits out the
 *    deadline; warden then follows the agent's fate and exits with its
 *    status (128+N when the signal killed it). Ctrl-C typed at a question
 *    (the terminal sends it to warden's group then) only refuses that
 *    question: the person said no to it, not to the agent.
 *
 * Why a race cannot win: this only ever refuses. A stale reading can only
 * refuse a request whose caller had an interrupt pending, which it or its
 * group was sent; a caller killed meanwhile leaves a request nobody waits
 * for, and a recycled thread id can at worst refuse that request. Nothing
 * here allows anything or changes what a later request is decided as.
 */
#include "sup.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* How often waiting callers are looked at, in ms. */
#define POLL_MS 100

static const int interrupts[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};

static const char *sig_name(int sig)
{
	switch (sig) {
	case SIGINT:
		return "SIGINT";
	case SIGQUIT:
		return "SIGQUIT";
	case SIGTERM:
		return "SIGTERM";
	case SIGHUP:
		return "SIGHUP";
	default:
		return "a signal";
	}
}

/* The hexadecimal mask of |field| ("SigPnd:") in a /proc status text. */
static uint64_t mask_of(const char *text, const char *field)
{
	const char *p = strstr(text, field);
	return p ? strtoull(p + strlen(field), NULL, 16) : 0;
}

/* The interrupt signal thread |tid| has pending and will act on (neither
 * blocked nor ignored), or 0. */
static int pending_interrupt(pid_t tid)
{
	if (tid <= 0)
		return 0;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	char *text = NULL;
	if (wd_read_file(path, 1 << 16, &text, NULL) < 0)
		return 0;
	uint64_t pend = mask_of(text, "\nSigPnd:") | mask_of(text, "\nShdPnd:");
	uint64_t off = mask_of(text, "\nSigBlk:") | mask_of(text, "\nSigIgn:");
	free(text);
	for (size_t i = 0; i < WD_ARRAY_SIZE(interrupts); i++) {
		uint64_t bit = 1ULL << (interrupts[i] - 1);
		if ((pend & bit) && !(off & bit))
			return interrupts[i];
	}
	return 0;
}

/* The interrupt pending for |p|'s callers (the first, or a follower). */
static int pending_for(const struct sup_pending *p)
{
	int sig = pending_interrupt(p->rq->pid);
	for (const struct sup_request *f = p->followers; f && !sig; f = f->next_follower)
		sig = pending_interrupt(f->pid);
	return sig;
}

int sup_interrupt_poll(struct sup_run *r, int wait)
{
	if (!r->pending)
		return wait;
	for (struct sup_pending *p = r->pending, *next; p; p = next) {
		next = p->next;
		int sig = pending_for(p);
		if (!sig)
			continue;
		char why[96];
		snprintf(why, sizeof(why), "interrupted: the process got %s while it waited",
			 sig_name(sig));
		/* Refusing shows the next question, which may be |next|:
		 * the list is walked again from the start. */
		sup_tty_refuse(r, p, why, EINTR);
		next = r->pending;
	}
	return wait < 0 || wait > POLL_MS ? POLL_MS : wait;
}

void sup_interrupt_signal(struct sup_run *r, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;
	/* From the terminal (the kernel sends it, not a process) while a
	 * question holds it: the person's Ctrl-C is an answer. */
	if (sig == SIGINT && si->ssi_code == SI_KERNEL && sup_tty_cancel(r))
		return;
	/* First the signal, then the refusals: each caller wakes with the
	 * signal already pending when it is in the agent's group. */
	if (r->child.pid > 0)
		kill(-r->child.pid, sig);
	if (!r->pending)
		return;
	char why[96];
	snprintf(why, sizeof(why), "interrupted: warden got %s while the request waited",
		 sig_name(sig));
	/* Newest first, so that no later question is shown on the way. */
	while (r->pending) {
		struct sup_pending *last = r->pending;
		while (last->next)
			last = last->next;
		sup_tty_refuse(r, last, why, EINTR);
	}
}
