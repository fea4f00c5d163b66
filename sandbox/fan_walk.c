/*
 * fan_walk.c: the split view's pre-marking walk. A background thread marks
 * the regular files of the fast subtrees, through a detached copy of the
 * backing tree, so that their first open in the session does not wait for
 * the listener (fan.c): what it has not reached yet is marked at its
 * first open instead. It never decides anything, and a file it has not
 * marked is only slower to open, never less checked.
 *
 * It stands aside for the agent's commands. The walk is an open, an
 * fstat and a mark per file: run beside a command of the agent, that
 * kernel work slows the command down at any scheduling priority, and a
 * command such as `git status` opens hardly a file in the fast subtrees
 * and gains nothing from the walk (docs/design.md, "The pre-marking
 * walk"). So after each exec the agent makes (sbx_fan_step_aside, from
 * the supervisor's exec notification) it waits FAN_ASIDE_MS, or until the
 * listener has seen FAN_ASIDE_EVENTS open events since the exec: a command
 * that opens that many files there is one the walk speeds up. An agent
 * waiting for its model execs nothing, and the walk runs then.
 */
#include "fan_int.h"
#include "jail_int.h"

#include "common.h"
#include "policy.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <poll.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FAN_ASIDE_MS	   100
#define FAN_ASIDE_EVENTS   64
#define FAN_ASIDE_SLICE_NS (2 * 1000000LL)

int64_t sbx_fan_aside_wait(int64_t now, int64_t until, uint64_t events, uint64_t events_then)
{
	if (now >= until || events - events_then >= FAN_ASIDE_EVENTS)
		return 0;
	return until - now;
}

void sbx_fan_step_aside(struct sbx_fan *f)
{
	if (!f)
		return;
	atomic_store(&f->aside_events, atomic_load(&f->events));
	atomic_store(&f->aside_until, wd_now_mono_ns() + (int64_t)FAN_ASIDE_MS * 1000000);
}

/* Waits while the agent's last command has the walk stand aside, looking
 * again every FAN_ASIDE_SLICE_NS (the events that end the wait early wake
 * nobody); a stop (stop_efd) ends the wait at once. Holds nothing while it
 * waits: no lock, only the descriptors of the directories it is in. */
static void stand_aside(struct sbx_fan *f)
{
	for (;;) {
		int64_t now = wd_now_mono_ns();
		int64_t wait =
			sbx_fan_aside_wait(now, atomic_load(&f->aside_until),
					   atomic_load(&f->events), atomic_load(&f->aside_events));
		if (wait <= 0 || atomic_load(&f->stopping))
			return;
		if (wait > FAN_ASIDE_SLICE_NS)
			wait = FAN_ASIDE_SLICE_NS;
		struct pollfd p = {.fd = f->stop_efd, .events = POLLIN};
		struct timespec ts = {.tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000};
		(void)ppoll(&p, 1, &ts, NULL);
		atomic_fetch_add(&f->aside_ns, (uint64_t)(wd_now_mono_ns() - now));
	}
}

static void premark_dir(struct sbx_fan *f, int fd, const char *path, dev_t dev, int depth,
			uint64_t *left)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d)) && *left > 0 && !atomic_load(&f->stopping)) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		stand_aside(f);
		wd_autofree char *child = wd_asprintf("%s/%s", path, de->d_name);
		if (de->d_type == DT_DIR) {
			if (depth >= FAN_MAX_DEPTH)
				continue;
			int c = openat(dirfd(d), de->d_name,
				       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			struct stat st;
			if (c >= 0 && fstat(c, &st) == 0 && st.st_dev == dev)
				premark_dir(f, c, child, dev, depth + 1, left);
			else if (c >= 0)
				close(c);
			continue;
		}
		if (de->d_type != DT_REG && de->d_type != DT_UNKNOWN)
			continue;
		/* What the listener would decide or refuse is never marked. */
		if (sbx_view_path_sensitive(f->policy, NULL, child) ||
		    pol_is_control(f->policy, child, NULL) ||
		    sbx_view_path_write_protected(f->policy, NULL, child))
			continue;
		/* The mark goes on the inode open at c, the one fstat
		 * checked, whatever a rename does to the name meanwhile.
		 * fanotify_mark() takes no O_PATH descriptor (and a /proc
		 * link to one costs a third of the walk), so the file is
		 * opened for reading, on sbx_fan_premark_main's read-only, nodev
		 * copy of the project: a device node swapped in after
		 * readdir cannot be opened there, a FIFO opens at once
		 * (O_NONBLOCK), nothing is read. What an open still does
		 * (a lease broken, other watchers' events): design.md. */
		int c = openat(dirfd(d), de->d_name,
			       O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (c >= 0 && fstat(c, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == dev &&
		    sbx_fan_mark_plain(f, c, NULL, &st)) {
			atomic_fetch_add(&f->premarked, 1);
			(*left)--;
		}
		if (c >= 0)
			close(c);
	}
	closedir(d);
}

/* A detached copy of the backing tree (not recursive: the walk never
 * leaves the project's file system anyway) on which an open reaches no
 * device, can write nothing and runs nothing: read-only, nodev, nosuid,
 * noexec, private. It is not marked in the group, so the walk's opens are
 * not events. Made by this thread, which is
 * in the supervisor's mount namespace, where the backing tree is. -errno
 * when the kernel refuses: then nothing is pre-marked. */
static int premark_mount(const struct sbx_fan *f)
{
	return sbx_jail_copy_dir(
		f->backing_fd,
		MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, NULL);
}

void *sbx_fan_premark_main(void *arg)
{
	struct sbx_fan *f = arg;
	int64_t t0 = wd_now_mono_ns();
	atomic_store(&f->premark_t0, t0);
	uint64_t left = f->premark_max;
	struct stat root;
	wd_autoclose int m = premark_mount(f);
	if (m >= 0 && fstat(m, &root) == 0) {
		for (size_t i = 0; i < f->nfast && left > 0 && !atomic_load(&f->stopping); i++) {
			struct open_how how = {
				.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_XDEV,
			};
			int fd = (int)syscall(SYS_openat2, m, f->fast[i], &how, sizeof(how));
			if (fd >= 0)
				premark_dir(f, fd, f->fast[i], root.st_dev, 0, &left);
		}
	}
	atomic_store(&f->premark_ns, (uint64_t)(wd_now_mono_ns() - t0));
	return NULL;
}
