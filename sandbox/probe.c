/*
 * probe.c: what `warden run` needs from the kernel before the agent starts,
 * asked the way spawn.c asks it: the namespaces the sandbox is made of (with
 * a user namespace when warden is not root) and, from inside them, the FUSE
 * device and file system the project view is mounted with. `warden doctor`
 * runs the same probe, so that it cannot say "can work here" of a machine
 * where `warden run` then fails. Decides nothing and prints nothing.
 */
#include "sandbox.h"

#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int sbx_clone_flags(void)
{
	return CLONE_NEWNS | CLONE_NEWPID | (sbx_needs_userns() ? CLONE_NEWUSER : 0);
}

bool sbx_needs_userns(void)
{
	return geteuid() != 0;
}

int sbx_fuse_dev_open(void)
{
	int fd = open(SBX_FUSE_DEV, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static void map_self(const char *file, unsigned id)
{
	char map[32];
	snprintf(map, sizeof(map), "%u %u 1\n", id, id);
	int fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!write(fd, map, strlen(map));
		close(fd);
	}
}

/* The child: one result of two ints on |fd|, then exits. Nothing is
 * mounted: the namespaces and the descriptors end with the child. */
static void __attribute__((noreturn)) probe_child(int fd, bool view, uid_t uid, gid_t gid)
{
	int res[2] = {0, 0};
	if (sbx_needs_userns()) {
		int sg = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
		if (sg >= 0) {
			(void)!write(sg, "deny", 4);
			close(sg);
		}
		map_self("/proc/self/uid_map", (unsigned)uid);
		map_self("/proc/self/gid_map", (unsigned)gid);
	}
	if (view) {
		/* As the sandbox's init opens it when warden is not root: from
		 * inside the user namespace (the device's mode is the host's). */
		int dev = sbx_fuse_dev_open();
		int fs = dev < 0 ? -1 : (int)syscall(SYS_fsopen, "fuse", 0);
		res[1] = dev < 0 ? -dev : fs < 0 ? errno : 0;
		if (fs >= 0)
			close(fs);
		if (dev >= 0)
			close(dev);
	}
	(void)!write(fd, res, sizeof(res));
	_exit(0);
}

int sbx_probe(bool view, struct sbx_probe *out)
{
	memset(out, 0, sizeof(*out));
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	uid_t uid = getuid();
	gid_t gid = getgid();
	/* The very clone spawn.c makes the sandbox's init with. */
	pid_t pid = (pid_t)syscall(SYS_clone, (long)sbx_clone_flags() | SIGCHLD, NULL, NULL, NULL,
				   NULL);
	if (pid == 0) {
		close(p[0]);
		probe_child(p[1], view, uid, gid);
	}
	int e = errno;
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		out->ns_err = e;
		return 0;
	}
	/* A child that died before it wrote (a seccomp policy of the
	 * container) counts as namespaces that do not work. */
	int res[2] = {EIO, 0};
	ssize_t n;
	while ((n = read(p[0], res, sizeof(res))) < 0 && errno == EINTR)
		;
	close(p[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(res))
		res[0] = EIO;
	out->ns_err = res[0];
	out->fuse_err = res[1];
	return 0;
}
