/*
 * interrupt.c: Ctrl-C, kill and hang-up while requests wait.
 *
 * A caller waiting in a seccomp notification or a FUSE request cannot be
 * interrupted by the kernel once warden holds the request, so warden ends
 * the wait itself: a waiting caller with SIGINT, SIGQUIT, SIGTERM or SIGHUP
 * pending (read from /proc/TID/status every 100 ms while requests wait), or
 * such a signal to warden itself, refuses the waiting requests as
 * "stopped". A race cannot make this allow anything: it only ever refuses.
 * docs/design.md, section "Interrupts".
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
