/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Does this machine stop its CPUs while the disk is flushed? A thread spins on CPU A reading
 * the wall clock and its own CPU time; a stall is a gap of more than 1 ms in which its own
 * CPU time did not advance and the kernel switched to nobody (the vCPU was not running:
 * the hypervisor took it). A flusher (write 512 bytes + fdatasync, back to back) runs on CPU
 * B, and with --busy a second spinner keeps CPU B busy too, as a polling worker does.
 *
 * Why it exists: on the development VM, scalebench's 20-client PUT p99 (12-13 ms) came
 * from stalls of 8-15 ms roughly every 100 ms, in which no request of any client finished;
 * the same runs with the state file on tmpfs had PUT p99 5-6 ms. This shows the effect
 * without cubevs-fp, so a figure from such a machine can be read for what it is.
 *
 *   vmstall [--seconds S] [--spin-cpu A] [--flush-cpu B] [--busy] [--no-flush] [--file PATH]
 * prints one JSON object: seconds, flushes, stalls, stalled_pct, longest_ms.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct vs_run {
	int spin_cpu, flush_cpu;
	bool busy, flush;
	const char *file;
	atomic_bool stop;
	long flushes;
	int err;
};

static double
vs_clock(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void
vs_pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

static void *
vs_flusher(void *arg)
{
	struct vs_run *r = arg;
	char buf[512];
	int fd;

	vs_pin(r->flush_cpu);
	fd = open(r->file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		r->err = errno;
		return NULL;
	}
	memset(buf, 'x', sizeof(buf));
	while (!atomic_load(&r->stop)) {
		/* Rewrite the same block: the file stays small whatever the run's length. */
		if (pwrite(fd, buf, sizeof(buf), 0) < 0 || fdatasync(fd)) {
			r->err = errno;
			break;
		}
		r->flushes++;
	}
	close(fd);
	unlink(r->file);
	return NULL;
}

static void *
vs_burner(void *arg)
{
	struct vs_run *r = arg;

	vs_pin(r->flush_cpu);
	while (!atomic_load(&r->stop))
		;
	return NULL;
}

static int
vs_usage(void)
{
	fprintf(stderr, "usage: vmstall [--seconds S] [--spin-cpu A] [--flush-cpu B] [--busy] "
		"[--no-flush] [--file PATH]\n");
	return 2;
}

int
main(int argc, char **argv)
{
	struct vs_run r = { .spin_cpu = 0, .flush_cpu = 1, .flush = true,
			    .file = "/var/tmp/vmstall.tmp" };
	double secs = 3, t0, end, p, pc, stalled = 0, longest = 0;
	pthread_t fl, bu;
	bool have_fl = false, have_bu = false;
	long stalls = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (!strcmp(argv[i], "--spin-cpu") && i + 1 < argc)
			r.spin_cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--flush-cpu") && i + 1 < argc)
			r.flush_cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--file") && i + 1 < argc)
			r.file = argv[++i];
		else if (!strcmp(argv[i], "--busy"))
			r.busy = true;
		else if (!strcmp(argv[i], "--no-flush"))
			r.flush = false;
		else
			return vs_usage();
	}
	if (secs <= 0 || secs > 600)
		return vs_usage();
	vs_pin(r.spin_cpu);
	if (r.flush)
		have_fl = !pthread_create(&fl, NULL, vs_flusher, &r);
	if (r.busy)
		have_bu = !pthread_create(&bu, NULL, vs_burner, &r);
	t0 = p = vs_clock(CLOCK_MONOTONIC);
	pc = vs_clock(CLOCK_THREAD_CPUTIME_ID);
	end = t0 + secs;
	while (p < end) {
		double q = vs_clock(CLOCK_MONOTONIC), qc = vs_clock(CLOCK_THREAD_CPUTIME_ID);

		/* Preempted by another thread: its own time stops too, but the guest ran. */
		if (q - p > 1e-3 && qc - pc < 0.2 * (q - p)) {
			stalls++;
			stalled += q - p;
			longest = q - p > longest ? q - p : longest;
		}
		p = q;
		pc = qc;
	}
	atomic_store(&r.stop, true);
	if (have_fl)
		pthread_join(fl, NULL);
	if (have_bu)
		pthread_join(bu, NULL);
	if (r.err)
		fprintf(stderr, "vmstall: %s: %s\n", r.file, strerror(r.err));
	printf("{\"seconds\": %.1f, \"flushes\": %ld, \"busy\": %s, \"stalls\": %ld, "
	       "\"stalled_pct\": %.2f, \"longest_ms\": %.2f}\n", secs, r.flushes,
	       r.busy ? "true" : "false", stalls, stalled / secs * 100, longest * 1e3);
	return r.err ? 1 : 0;
}
