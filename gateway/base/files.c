/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/files.h"
#include "base/str.h"
#include "cvs_common.h"

int
rand_bytes(void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = getrandom((char *)buf + off, len - off, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)n;
	}
	return 0;
}

int
rand_hex(char *out, size_t nbytes)
{
	unsigned char b[256];
	size_t i;
	int rc;

	if (nbytes > sizeof(b))
		return -EINVAL;
	rc = rand_bytes(b, nbytes);
	if (rc)
		return rc;
	for (i = 0; i < nbytes; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * nbytes] = '\0';
	return 0;
}

int
dir_make_parents(const char *dir, mode_t mode)
{
	char *p, *tmp = strdup(dir);
	int rc = 0;

	if (tmp == NULL)
		return -ENOMEM;
	for (p = tmp + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;

			*p = '\0';
			if (tmp[0] && mkdir(tmp, mode) < 0 && errno != EEXIST) {
				rc = -errno;
				break;
			}
			*p = c;
			if (c == '\0')
				break;
		}
	}
	free(tmp);
	return rc;
}

int
path_parent_make(const char *path, mode_t mode)
{
	char *dir = strdup(path), *slash;
	int rc = 0;

	if (dir == NULL)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		rc = dir_make_parents(dir, mode);
	}
	free(dir);
	return rc;
}

static int
remove_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int
path_remove_all(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (nftw(path, remove_cb, 32, FTW_DEPTH | FTW_PHYS) < 0)
		return -errno;
	return 0;
}

/* cvs_file_replace, creating the parent directories, with the message as gateway errors are. */
int
file_write_atomic(const char *path, const void *data, size_t len, mode_t mode, mode_t dirmode,
		  char **err)
{
	char msg[512];
	int rc = path_parent_make(path, dirmode);

	if (rc)
		return err_set(err, rc, "mkdir %s: %s", path, strerror(-rc));
	rc = cvs_file_replace(path, data, len, mode, msg, sizeof(msg));
	return rc ? err_set(err, rc, "%s", msg) : 0;
}

char *
file_read_all(const char *path, size_t *len, int *rc)
{
	struct strbuf sb = {0};
	char buf[65536];
	int dummy, fd = open(path, O_RDONLY | O_CLOEXEC);

	if (rc == NULL)
		rc = &dummy;
	if (fd < 0) {
		*rc = -errno;
		return NULL;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			*rc = -errno;
			close(fd);
			sb_free(&sb);
			return NULL;
		}
		if (n == 0)
			break;
		sb_append(&sb, buf, (size_t)n);
	}
	close(fd);
	*rc = 0;
	if (len)
		*len = sb.len;
	return sb_steal(&sb);
}

bool
fd_is_valid(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}
