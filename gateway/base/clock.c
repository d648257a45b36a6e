/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"

/* Go time.ParseDuration: "55s", "1m30s", "1.5s", "500ms"; a bare "0" is the only unitless value. */
int
dur_parse(const char *s, int64_t *ns)
{
	static const struct {
		const char *unit;
		double mult;
	} units[] = {
		{"ns", 1}, {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"\xce\xbcs", 1e3}, {"ms", 1e6},
		{"s", 1e9}, {"m", 60e9}, {"h", 3600e9},
	};
	const char *p = s;
	double total = 0;
	bool neg = false;

	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (strcmp(p, "0") == 0) {
		*ns = 0;
		return 0;
	}
	if (*p == '\0')
		return -EINVAL;
	while (*p) {
		double whole = 0, frac = 0, scale = 1;
		bool digits = false;
		size_t i, ulen = 0, best = SIZE_MAX;

		while (isdigit((unsigned char)*p)) {
			whole = whole * 10 + (*p++ - '0');
			digits = true;
		}
		if (*p == '.') {
			p++;
			while (isdigit((unsigned char)*p)) {
				scale /= 10;
				frac += (*p++ - '0') * scale;
				digits = true;
			}
		}
		if (!digits)
			return -EINVAL;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t l = strlen(units[i].unit);

			if (strncmp(p, units[i].unit, l) == 0 && l > ulen) {
				ulen = l;
				best = i;
			}
		}
		if (best == SIZE_MAX)
			return -EINVAL;
		p += ulen;
		total += (whole + frac) * units[best].mult;
		if (total > 9.2e18)
			return -ERANGE;
	}
	*ns = (int64_t)llround(neg ? -total : total);
	return 0;
}

static void
frac_trim(char *buf)
{
	char *dot = strchr(buf, '.');
	size_t l;

	if (dot == NULL)
		return;
	l = strlen(buf);
	while (l > 0 && buf[l - 1] == '0')
		buf[--l] = '\0';
	if (l > 0 && buf[l - 1] == '.')
		buf[--l] = '\0';
}

/* Go time.Duration.String, so timeout messages read the same as the reference's. */
void
dur_format(int64_t ns, char *buf, size_t len)
{
	uint64_t u = ns < 0 ? (uint64_t)-ns : (uint64_t)ns;
	const char *sign = ns < 0 ? "-" : "";
	char num[64];

	if (u == 0) {
		snprintf(buf, len, "0s");
		return;
	}
	if (u < 1000) {
		snprintf(buf, len, "%s%lluns", sign, (unsigned long long)u);
		return;
	}
	if (u < 1000000) {
		snprintf(num, sizeof(num), "%llu.%03llu", (unsigned long long)(u / 1000),
			 (unsigned long long)(u % 1000));
		frac_trim(num);
		snprintf(buf, len, "%s%s\xc2\xb5s", sign, num);
		return;
	}
	if (u < 1000000000) {
		snprintf(num, sizeof(num), "%llu.%06llu", (unsigned long long)(u / 1000000),
			 (unsigned long long)(u % 1000000));
		frac_trim(num);
		snprintf(buf, len, "%s%sms", sign, num);
		return;
	}
	{
		uint64_t secs = u / 1000000000, frac = u % 1000000000;
		uint64_t h = secs / 3600, m = (secs / 60) % 60, s = secs % 60;
		char sec[48];

		snprintf(sec, sizeof(sec), "%llu.%09llu", (unsigned long long)s,
			 (unsigned long long)frac);
		frac_trim(sec);
		if (h)
			snprintf(buf, len, "%s%lluh%llum%ss", sign, (unsigned long long)h,
				 (unsigned long long)m, sec);
		else if (m)
			snprintf(buf, len, "%s%llum%ss", sign, (unsigned long long)m, sec);
		else
			snprintf(buf, len, "%s%ss", sign, sec);
	}
}

void
time_deadline(struct timespec *ts, int64_t ns)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += (time_t)(ns / 1000000000LL);
	ts->tv_nsec += (long)(ns % 1000000000LL);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

int64_t
time_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void
bell_init(struct bell *b)
{
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	b->rung = false;
	b->stop = false;
}

void
bell_fini(struct bell *b)
{
	pthread_mutex_destroy(&b->lock);
	pthread_cond_destroy(&b->cond);
}

void
bell_ring(struct bell *b)
{
	pthread_mutex_lock(&b->lock);
	b->rung = true;
	pthread_cond_signal(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

void
bell_stop(struct bell *b)
{
	pthread_mutex_lock(&b->lock);
	b->stop = true;
	pthread_cond_signal(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

bool
bell_stopped(struct bell *b)
{
	bool stop;

	pthread_mutex_lock(&b->lock);
	stop = b->stop;
	pthread_mutex_unlock(&b->lock);
	return stop;
}

void
bell_wait(struct bell *b, int64_t ns)
{
	struct timespec ts;

	if (ns > 0)
		time_deadline(&ts, ns);
	pthread_mutex_lock(&b->lock);
	while (!b->rung && !b->stop) {
		if (ns <= 0)
			pthread_cond_wait(&b->cond, &b->lock);
		else if (pthread_cond_timedwait(&b->cond, &b->lock, &ts) != 0)
			break;
	}
	b->rung = false;
	pthread_mutex_unlock(&b->lock);
}
