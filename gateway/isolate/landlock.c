/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: a server's view of the filesystem through Landlock: the system directories
 * read-only, /dev for reading and writing devices, and its own directories read-write; from
 * ABI 6 on also no abstract unix sockets or signals beyond its own domain.
 * Raw syscalls: glibc has no wrappers. The ABI is asked, never assumed; rights the running
 * kernel does not know are left out of the ruleset instead of failing it.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/landlock.h>

#include "base/str.h"
#include "isolate/isolate.h"

/* Newer than Debian 12's header; values are the kernel's ABI. */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV	(1ULL << 15)
#endif

/*
 * The ruleset attribute as of ABI 6; older kernels get the prefix they know (the size says
 * which fields we mean).
 */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

/* ABI 6: no connecting to abstract unix sockets or signalling outside the server's domain. */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET	(1ULL << 0)
#define LL_SCOPE_SIGNAL			(1ULL << 1)

#define LL_READ		(LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | \
			 LANDLOCK_ACCESS_FS_EXECUTE)
#define LL_DEV		(LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | \
			 LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
			 LANDLOCK_ACCESS_FS_IOCTL_DEV)
/* The rights a rule on a non-directory may carry (others make the rule EINVAL). */
#define LL_FILE		(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
			 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
			 LANDLOCK_ACCESS_FS_IOCTL_DEV)

int
landlock_abi_get(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return v < 0 ? -errno : (int)v;
}

static uint64_t
handled_fs(int abi)
{
	uint64_t a = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;

	if (abi >= 2)
		a |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		a |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		a |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return a;
}

/* A path that does not exist has nothing to allow; any other failure fails the view. */
static int
rule_add(int rs, const char *path, uint64_t access, uint64_t handled, char **err)
{
	struct landlock_path_beneath_attr pb;
	struct stat st;
	int fd = open(path, O_PATH | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 :
			err_set(err, -errno, "landlock: open %s: %s", path, strerror(errno));
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		access &= LL_FILE;
	memset(&pb, 0, sizeof(pb));
	pb.allowed_access = access & handled;
	pb.parent_fd = fd;
	if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
		rc = err_set(err, -errno, "landlock: rule for %s: %s", path, strerror(errno));
	close(fd);
	return rc;
}

int
landlock_ruleset(int abi, char *const *ro, char *const *rw, char **err)
{
	struct ll_ruleset_attr attr;
	uint64_t handled = handled_fs(abi);
	size_t size = sizeof(attr.handled_access_fs);
	int rs, rc = 0;

	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = handled;
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (rs < 0)
		return err_set(err, -errno, "landlock: create ruleset: %s", strerror(errno));
	if (fcntl(rs, F_SETFD, FD_CLOEXEC) < 0)
		rc = err_set(err, -errno, "landlock: %s", strerror(errno));
	for (size_t i = 0; rc == 0 && ro && ro[i]; i++)
		rc = rule_add(rs, ro[i], LL_READ, handled, err);
	if (rc == 0)
		rc = rule_add(rs, "/dev", LL_DEV, handled, err);
	for (size_t i = 0; rc == 0 && rw && rw[i]; i++)
		rc = rule_add(rs, rw[i], handled, handled, err);
	if (rc) {
		close(rs);
		return rc;
	}
	return rs;
}
