/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared helpers (common/) without EAL or root: write-all through a pipe, atomic file
 * replacement (content, mode, no temp file left behind, also when the rename fails),
 * the one-line error format, strict number parsing and the order a fifo_lock is handed on in.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "t.h"
#include "cvs_common.h"
#include "fifolock.h"

static char *
slurp(const char *path)
{
	static char buf[8192];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static int
dir_entries(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void
test_write_all(void)
{
	static char big[1 << 20], back[sizeof(big)];
	size_t got = 0, i;
	int p[2];
	pid_t pid;

	/* More than a pipe holds: the writer sees short writes and must go on. */
	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7);
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		_exit(cvs_write_all(p[1], big, sizeof(big)) ? 1 : 0);
	}
	close(p[1]);
	while (got < sizeof(back)) {
		ssize_t n = read(p[0], back + got, sizeof(back) - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(p[0]);
	CHECK_EQ(got, sizeof(big));
	CHECK(!memcmp(big, back, sizeof(big)));
	{
		int st = -1;

		waitpid(pid, &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	CHECK_EQ(cvs_write_all(-1, "x", 1), -EBADF);
}

static void
test_replace(const char *dir)
{
	char path[256], sub[256], err[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/f.json", dir);
	CHECK_EQ(cvs_file_replace(path, "one\n", 4, 0600, err, sizeof(err)), 0);
	CHECK(!strcmp(slurp(path), "one\n"));
	CHECK_EQ(cvs_file_replace(path, "two\n", 4, 0644, err, sizeof(err)), 0);
	CHECK(!strcmp(slurp(path), "two\n"));
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0644);
	CHECK_EQ(cvs_file_replace(path, "", 0, 0600, err, sizeof(err)), 0);
	CHECK(!strcmp(slurp(path), ""));
	/* Nothing but the file itself: no temp file stays behind. */
	CHECK_EQ(dir_entries(dir), 1);

	/* A missing directory: an error that names the file, nothing created. */
	snprintf(sub, sizeof(sub), "%s/missing/f.json", dir);
	CHECK_EQ(cvs_file_replace(sub, "x", 1, 0600, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "cannot create") && strstr(err, sub));

	/* PATH is a directory: the rename fails and the temp file is removed. */
	snprintf(sub, sizeof(sub), "%s/d", dir);
	CHECK_EQ(mkdir(sub, 0700), 0);
	CHECK(cvs_file_replace(sub, "x", 1, 0600, err, sizeof(err)) < 0);
	CHECK(strstr(err, "cannot write") && strstr(err, sub));
	CHECK_EQ(dir_entries(dir), 2);
	CHECK(!strcmp(slurp(path), ""));
	rmdir(sub);
	unlink(path);
}

static void
test_err(void)
{
	char buf[256] = "";
	int p[2], saved = dup(2);
	ssize_t n;

	CHECK_EQ(pipe(p), 0);
	dup2(p[1], 2);
	cvs_err("prog", "bad %s %d", "thing", 42);
	dup2(saved, 2);
	close(saved);
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(!strcmp(buf, "prog: bad thing 42\n"));
}

static void
test_parse(void)
{
	static const char *const bad[] = {
		"", "12x", "x12", " 12", "12 ", "+12", "-12", "-0", "0x10", "1.5", "1e3",
		"4294967296", "99999999999999999999999", "65536",
	};
	uint32_t v = 7;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(cvs_parse_u32(bad[i], 0, 65535, &v), -EINVAL);
		CHECK_EQ(v, 7);
	}
	CHECK_EQ(cvs_parse_u32("0", 1, 10, &v), -EINVAL);
	CHECK_EQ(cvs_parse_u32("11", 1, 10, &v), -EINVAL);
	CHECK_EQ(cvs_parse_u32("1", 1, 10, &v), 0);
	CHECK_EQ(v, 1);
	CHECK_EQ(cvs_parse_u32("010", 1, 10, &v), 0);
	CHECK_EQ(v, 10);
	CHECK_EQ(cvs_parse_u32("4294967295", 0, UINT32_MAX, &v), 0);
	CHECK_EQ(v, UINT32_MAX);
}

#define FIFO_THREADS	8
#define FIFO_ROUNDS	200

struct fifo_case {
	struct fifo_lock l;
	int order[FIFO_THREADS * FIFO_ROUNDS];
	int n;
};

struct fifo_arg {
	struct fifo_case *c;
	int id;
};

static void *
fifo_taker(void *p)
{
	struct fifo_arg *a = p;

	fifo_lock(&a->c->l);
	a->c->order[a->c->n++] = a->id;
	fifo_unlock(&a->c->l);
	return NULL;
}

/*
 * Threads queued one by one behind a held lock get it in that order, and none is passed over
 * by a thread that comes while the lock is being handed on (this thread, taking it again
 * right after each release, queues behind the waiters).
 */
static void
test_fifo_lock(void)
{
	static struct fifo_case c;
	struct fifo_arg a[FIFO_THREADS];
	pthread_t t[FIFO_THREADS];
	int round, i, late = 0;

	fifo_lock_init(&c.l);
	for (round = 0; round < FIFO_ROUNDS; round++) {
		c.n = 0;
		fifo_lock(&c.l);
		for (i = 0; i < FIFO_THREADS; i++) {
			struct timespec ms = { 0, 1000 * 1000 };

			a[i] = (struct fifo_arg){ &c, i };
			pthread_create(&t[i], NULL, fifo_taker, &a[i]);
			while (fifo_lock_waiting(&c.l) < (unsigned)i + 1)
				nanosleep(&ms, NULL);
		}
		fifo_unlock(&c.l);
		fifo_lock(&c.l);	/* behind all of them */
		late += c.n != FIFO_THREADS;
		fifo_unlock(&c.l);
		for (i = 0; i < FIFO_THREADS; i++)
			pthread_join(t[i], NULL);
		for (i = 0; i < FIFO_THREADS; i++)
			CHECK_EQ(c.order[i], i);
		if (round == 0 || round == FIFO_ROUNDS - 1)
			CHECK_EQ(c.n, FIFO_THREADS);
	}
	CHECK_EQ(late, 0);
	fifo_lock_destroy(&c.l);
}

/* The trim waits for a fall of CVS_TRIM_DROP that holds still, and then starts over. */
static void
test_trim(void)
{
	struct cvs_trim t = { 0 };
	uint32_t i, trims = 0;

	for (i = 0; i < 30; i++)	/* rising and steady: nothing to give back */
		trims += cvs_trim_tick(&t, 1000);
	CHECK_EQ(trims, 0);
	for (i = 0; i < 30; i++)	/* a fall smaller than the threshold */
		trims += cvs_trim_tick(&t, 1000 - CVS_TRIM_DROP + 1);
	CHECK_EQ(trims, 0);
	for (i = 1; i <= 40; i++)	/* a mass deletion in progress: the count still moves */
		trims += cvs_trim_tick(&t, 1000 - 20 * i);
	CHECK_EQ(trims, 0);
	for (i = 0; i < CVS_TRIM_CALM - 1; i++)
		trims += cvs_trim_tick(&t, 200);
	CHECK_EQ(trims, 0);
	CHECK(cvs_trim_tick(&t, 200));	/* held still long enough */
	for (i = 0; i < 30; i++)	/* once, until the next fall */
		trims += cvs_trim_tick(&t, 200);
	CHECK_EQ(trims, 0);
	CHECK_EQ(t.trims, 1);
	CHECK_EQ(t.high, 200);
}

int
main(void)
{
	char dir[] = "/tmp/cvs-common-XXXXXX";

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_write_all();
	test_replace(dir);
	test_err();
	test_parse();
	test_fifo_lock();
	test_trim();
	rmdir(dir);
	return t_done("test_common");
}
