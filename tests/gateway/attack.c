/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gateway-attack: what a hostile MCP server tries against its neighbours, one attempt per
 * run, printing "ok ..." when the attempt worked or the errno name a user would see
 * ("EACCES"). The intruder server (intruder-server.mjs) runs it under the gateway; the test
 * also runs a setuid-root copy of it to see whether the setuid bit gives root back.
 *
 *   read PATH      open and read a file
 *   write PATH     create a file and write into it
 *   ptrace PID     PTRACE_ATTACH (detached again at once if it worked)
 *   vmread PID     process_vm_readv of one page at the target's stack (from its stat)
 *   kill PID       SIGKILL
 *   unix NAME      connect to the abstract unix socket @NAME
 *   whoami         real and effective uid, and whether setuid(0) works
 */


#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *
errno_name(int e)
{
	switch (e) {
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ESRCH: return "ESRCH";
	case ENOENT: return "ENOENT";
	case EFAULT: return "EFAULT";
	case EROFS: return "EROFS";
	case EIO: return "EIO";
	case EINVAL: return "EINVAL";
	default: return strerror(e);
	}
}

static int
fail(void)
{
	printf("%s\n", errno_name(errno));
	return 1;
}

static int
do_read(const char *path)
{
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return fail();
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return fail();
	close(fd);
	printf("ok %zd bytes\n", n);
	return 0;
}

static int
do_write(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, "intruder\n", 9) != 9)
		return fail();
	close(fd);
	printf("ok written\n");
	return 0;
}

static int
do_ptrace(pid_t pid)
{
	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) < 0)
		return fail();
	waitpid(pid, NULL, __WALL);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	printf("ok attached\n");
	return 0;
}

/* An address that is mapped in the target, so only permission can make the read fail. */
static unsigned long
stack_addr(pid_t pid)
{
	char path[64], buf[4096], *p;
	unsigned long v = 0;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* Field 28 is startstack; the kernel shows 0 there to those who may not read it. */
	for (field = 2; p && field < 28; field++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoul(p + 1, NULL, 10);
	return v & ~4095UL;
}

static int
do_vmread(pid_t pid)
{
	static char buf[4096];
	unsigned long addr = stack_addr(pid);
	struct iovec local = {buf, sizeof(buf)};
	struct iovec remote = {(void *)(addr ? addr : 0x400000UL), sizeof(buf)};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return fail();
	printf("ok %zd bytes\n", n);
	return 0;
}

static int
do_kill(pid_t pid)
{
	if (kill(pid, SIGKILL) < 0)
		return fail();
	printf("ok killed\n");
	return 0;
}

static int
do_unix(const char *name)
{
	struct sockaddr_un a;
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "%s", name);
	/* The whole sun_path, NUL-padded: the name as Node binds it (net.listen("\0name")). */
	len = (socklen_t)sizeof(a);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, len) < 0)
		return fail();
	close(fd);
	printf("ok connected\n");
	return 0;
}

static int
do_whoami(void)
{
	int rc = setuid(0);

	printf("uid=%d euid=%d setuid0=%s\n", (int)getuid(), (int)geteuid(),
	       rc == 0 ? "ok" : errno_name(errno));
	return 0;
}

int
main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";

	if (strcmp(op, "whoami") == 0)
		return do_whoami();
	if (argc < 3) {
		fprintf(stderr, "usage: gateway-attack "
			"read|write|ptrace|vmread|kill|unix ARG | whoami\n");
		return 2;
	}
	if (strcmp(op, "read") == 0)
		return do_read(argv[2]);
	if (strcmp(op, "write") == 0)
		return do_write(argv[2]);
	if (strcmp(op, "ptrace") == 0)
		return do_ptrace((pid_t)atoi(argv[2]));
	if (strcmp(op, "vmread") == 0)
		return do_vmread((pid_t)atoi(argv[2]));
	if (strcmp(op, "kill") == 0)
		return do_kill((pid_t)atoi(argv[2]));
	if (strcmp(op, "unix") == 0)
		return do_unix(argv[2]);
	fprintf(stderr, "unknown operation %s\n", op);
	return 2;
}
