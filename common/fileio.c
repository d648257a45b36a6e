/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "cvs_common.h"

int
cvs_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The rename is durable only once the directory entry is on disk. */
int
cvs_dir_sync(const char *path, char *err, size_t errlen)
{
	char *copy = strdup(path);
	const char *dir;
	int dfd, ret = 0;

	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	dir = dirname(copy);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd)) {
		ret = -errno;
		snprintf(err, errlen, "cannot sync directory %s: %s", dir, strerror(-ret));
	}
	if (dfd >= 0)
		close(dfd);
	free(copy);
	return ret;
}

int
cvs_file_replace(const char *path, const void *data, size_t len, mode_t mode,
		 char *err, size_t errlen)
{
	char *tmp = NULL;
	int fd, ret;

	/* A name of its own per writer: two writers never share a half-written temp file. */
	if (asprintf(&tmp, "%s.tmp-XXXXXX", path) < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(-ret));
		free(tmp);
		return ret;
	}
	ret = fchmod(fd, mode) ? -errno : 0;
	if (!ret)
		ret = cvs_write_all(fd, data, len);
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-ret));
		unlink(tmp);
		free(tmp);
		return ret;
	}
	free(tmp);
	return cvs_dir_sync(path, err, errlen);
}

int
cvs_private_dir(const char *path, const char *what, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(path, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "%s%s: cannot create it: %s", what, path, strerror(errno));
		return -errno;
	}
	if (lstat(path, &st)) {
		snprintf(err, errlen, "%s%s: %s", what, path, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		snprintf(err, errlen, "%s%s must be a directory owned by uid %u with mode 0700 (it "
			 "is uid %u, mode %04o)", what, path, geteuid(), st.st_uid,
			 st.st_mode & 07777);
		return -EPERM;
	}
	return 0;
}

/*
 * The kernel grows a process's fd table by doubling when an fd past its end is handed out,
 * and in a process with more than one thread the growth waits for an RCU grace period
 * (expand_fdtable: 10-30 ms here) while every other thread that opens an fd waits for it.
 * With one link fd per attached sandbox and a thread and socket per API connection, the
 * table grew at 64, 128, ... 16,384 open files, each time in the middle of some request:
 * under 20 concurrent clients, one such growth held every PUT for 20-30 ms (perf
 * sched_switch: synchronize_rcu < expand_files < alloc_fd). Growing it once, while the
 * process has one thread, costs no grace period; the table (8 bytes an entry) never shrinks.
 */
unsigned int
cvs_fd_room(unsigned int n)
{
	struct rlimit rl;
	int base, fd;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && n > rl.rlim_cur)
		n = (unsigned int)rl.rlim_cur;
	if (n < 2)
		return n;
	base = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (base < 0)
		return 0;
	fd = fcntl(base, F_DUPFD_CLOEXEC, (int)(n - 1));
	if (fd >= 0)
		close(fd);
	close(base);
	return fd >= 0 ? n : 0;
}
