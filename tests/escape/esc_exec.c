/*
 * esc_exec: exec side doors that must be decided as the program they
 * really run. Each mode tries to run /bin/touch MARKER
 * (refused in passive mode) while looking like something else, from a
 * child (the agent's own exec chain is its start-up, approved by whoever ran
 * warden; a child's exec is a request). The child prints "MODE rc=R
 * errno=NAME" when the exec fails; the parent prints "child exit=E".
 *
 *   execveat MARKER  execveat(fd of /bin/touch, "", AT_EMPTY_PATH) with
 *                    argv[0] "cat" (a read-only name)
 *   dirfd MARKER     execveat(fd of /bin, "touch")
 *   memfd MARKER     fexecve of a memfd copy of /bin/touch named "ls",
 *                    argv[0] "ls"
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int failed(const char *what)
{
	printf("%s rc=-1 errno=%s\n", what, strerrorname_np(errno));
	return 0;
}

static int attempt(const char *mode, char *marker)
{
	if (strcmp(mode, "execveat") == 0) {
		int fd = open("/bin/touch", O_PATH | O_CLOEXEC);
		char *av[] = {"cat", marker, NULL};
		syscall(SYS_execveat, fd, "", av, environ, AT_EMPTY_PATH);
		return failed(mode);
	}
	if (strcmp(mode, "dirfd") == 0) {
		int fd = open("/bin", O_PATH | O_DIRECTORY | O_CLOEXEC);
		char *av[] = {"touch", marker, NULL};
		syscall(SYS_execveat, fd, "touch", av, environ, 0);
		return failed(mode);
	}
	if (strcmp(mode, "memfd") == 0) {
		int src = open("/bin/touch", O_RDONLY | O_CLOEXEC);
		int mfd = memfd_create("ls", 0); /* not CLOEXEC: fexecve needs it */
		struct stat st;
		if (src < 0 || mfd < 0 || fstat(src, &st) < 0)
			return failed("memfd_setup");
		off_t off = 0;
		while (off < st.st_size)
			if (sendfile(mfd, src, &off, (size_t)(st.st_size - off)) <= 0)
				return failed("memfd_copy");
		char *av[] = {"ls", marker, NULL};
		fexecve(mfd, av, environ);
		return failed(mode);
	}
	return 2;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	setvbuf(stdout, NULL, _IONBF, 0);
	pid_t pid = fork();
	if (pid == 0)
		_exit(attempt(argv[1], argv[2]) == 0 ? 100 : 2);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	printf("child exit=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}
