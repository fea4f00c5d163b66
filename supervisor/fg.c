/*
 * fg.c: who owns the terminal while warden asks a question on it.
 *
 * warden reads the terminal only between sup_fg_take() and
 * sup_fg_give_back(): a read from a group that is not the foreground would
 * stop warden (SIGTTIN) and hand the keyboard to the user's shell. Taking
 * saves the foreground group and the modes and sets those a question needs
 * (TOSTOP among them); giving back restores both exactly, continues the
 * groups that stopped meanwhile and makes a full-screen agent redraw. Why
 * the group given back cannot be one the agent chose: docs/design.md,
 * section "The foreground".
 */
#include "sup.h"

#include <errno.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

bool sup_fg_ours(int fd)
{
	return fd >= 0 && tcgetpgrp(fd) == getpgrp();
}

void sup_fg_take(struct sup_fg *fg, int fd, bool move)
{
	if (fg->held || fd < 0)
		return;
	fg->saved_pgrp = tcgetpgrp(fd);
	fg->moved = move && fg->saved_pgrp != getpgrp() && tcsetpgrp(fd, getpgrp()) == 0;
	/* The modes are changed only on a terminal warden now holds: never
	 * under the feet of whoever has it (warden started in the
	 * background). */
	fg->have_modes = sup_fg_ours(fd) && tcgetattr(fd, &fg->modes) == 0;
	if (fg->have_modes) {
		struct termios t = fg->modes;
		t.c_lflag |= ICANON | ECHO | ECHOE | ECHOK | ISIG | IEXTEN | TOSTOP;
		t.c_iflag |= ICRNL;
		t.c_iflag &= ~(tcflag_t)(INLCR | IGNCR | ISTRIP);
		t.c_oflag |= OPOST | ONLCR;
		t.c_cc[VSUSP] = _POSIX_VDISABLE;
		t.c_cc[VQUIT] = _POSIX_VDISABLE;
		if (t.c_cc[VINTR] == _POSIX_VDISABLE)
			t.c_cc[VINTR] = 003; /* ^C */
		if (t.c_cc[VERASE] == _POSIX_VDISABLE)
			t.c_cc[VERASE] = 0177;
		if (t.c_cc[VEOF] == _POSIX_VDISABLE)
			t.c_cc[VEOF] = 004; /* ^D */
		tcsetattr(fd, TCSANOW, &t);
	}
	fg->held = true;
}

void sup_fg_give_back(struct sup_fg *fg, int fd, pid_t agent_pgrp)
{
	if (!fg->held || fd < 0)
		return;
	fg->held = false;
	if (fg->have_modes)
		tcsetattr(fd, TCSANOW, &fg->modes);
	if (!fg->moved)
		return;
	fg->moved = false;
	pid_t to = fg->saved_pgrp > 0 && fg->saved_pgrp != getpgrp() ? fg->saved_pgrp : agent_pgrp;
	if (to <= 0)
		return;
	if (tcsetpgrp(fd, to) < 0) {
		/* The group that had it is gone: the agent's then. Only a group
		 * the terminal accepted is signalled (tcsetpgrp takes only a
		 * group of warden's session, so a recycled id cannot be a
		 * stranger's). */
		if (to == agent_pgrp || agent_pgrp <= 0 || tcsetpgrp(fd, agent_pgrp) < 0)
			return;
		to = agent_pgrp;
	}
	kill(-to, SIGCONT);
	if (agent_pgrp > 0 && agent_pgrp != to)
		kill(-agent_pgrp, SIGCONT);
	/* A full-screen program (the terminal was raw) does not know the
	 * question was drawn over it: a size change makes it redraw. */
	if (fg->have_modes && !(fg->modes.c_lflag & ICANON))
		kill(-to, SIGWINCH);
}

void sup_fg_release(struct sup_fg *fg, int fd)
{
	/* At the end of the run: the modes as they were; the foreground is
	 * the user's shell's business once warden exits (run.c). */
	if (fg->held && fg->have_modes && fd >= 0)
		tcsetattr(fd, TCSANOW, &fg->modes);
	fg->held = false;
}
