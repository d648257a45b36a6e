/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "hostif.h"

static void
hostif_sin(struct sockaddr *sa, uint32_t addr)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = addr };

	memcpy(sa, &sin, sizeof(sin));
}

int
hostif_configure(const char *ifname, uint32_t addr, uint8_t prefix, uint8_t mac[6],
		 char *err, size_t errlen)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret = 0;
	const char *what = "";

	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	/* The prefix route for the sandbox CIDR comes with the address. */
	hostif_sin(&ifr.ifr_addr, addr);
	if (ioctl(fd, SIOCSIFADDR, &ifr)) {
		what = "set the address of";
		goto fail;
	}
	hostif_sin(&ifr.ifr_netmask, htonl(~0u << (32 - prefix)));
	if (ioctl(fd, SIOCSIFNETMASK, &ifr)) {
		what = "set the netmask of";
		goto fail;
	}
	if (ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		what = "read the flags of";
		goto fail;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr)) {
		what = "bring up";
		goto fail;
	}
	if (ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		what = "read the MAC of";
		goto fail;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return 0;
fail:
	ret = -errno;
	snprintf(err, errlen, "cannot %s %s: %s", what, ifname, strerror(errno));
	close(fd);
	return ret;
}

/* A knob of /proc/sys/net/ipv6/conf/IFNAME; errors are the caller's to find later. */
static void
hostif_ipv6_knob(const char *ifname, const char *knob, const char *val)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/%s", ifname, knob);
	f = fopen(path, "we");
	if (!f)
		return;
	fputs(val, f);
	fclose(f);
}

int
hostif_configure6(const char *ifname, const uint8_t addr[16], uint8_t prefix, char *err,
		  size_t errlen)
{
	/* struct in6_ifreq of <linux/ipv6.h>, which clashes with <netinet/in.h>. */
	struct {
		struct in6_addr addr;
		uint32_t prefixlen;
		int ifindex;
	} r = { .prefixlen = prefix, .ifindex = (int)if_nametoindex(ifname) };
	int fd, ret = 0;

	if (!r.ifindex) {
		snprintf(err, errlen, "cannot find %s: %s", ifname, strerror(errno));
		return -errno;
	}
	hostif_ipv6_knob(ifname, "disable_ipv6", "0");
	hostif_ipv6_knob(ifname, "accept_dad", "0");
	memcpy(&r.addr, addr, 16);
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || (ioctl(fd, SIOCSIFADDR, &r) && errno != EEXIST)) {
		ret = -errno;
		snprintf(err, errlen, "cannot give %s its IPv6 address: %s", ifname,
			 strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

/* An IPv4 address of an interface (the first, or 'want' if present) and its mask, or 0. */
uint32_t
hostif_ipv4(const char *ifname, uint32_t want, uint32_t *mask)
{
	struct ifaddrs *ifa, *p;
	uint32_t ip = 0;

	*mask = 0;
	if (getifaddrs(&ifa))
		return 0;
	for (p = ifa; p; p = p->ifa_next) {
		uint32_t a;

		if (!p->ifa_addr || p->ifa_addr->sa_family != AF_INET ||
		    strcmp(p->ifa_name, ifname))
			continue;
		a = ((struct sockaddr_in *)p->ifa_addr)->sin_addr.s_addr;
		if (ip && want && a != want)
			continue;
		ip = a;
		*mask = p->ifa_netmask ?
			((struct sockaddr_in *)p->ifa_netmask)->sin_addr.s_addr : 0xffffffff;
		if (!want || a == want)
			break;
	}
	freeifaddrs(ifa);
	return ip;
}


bool
hostif_has_ipv6(const char *ifname, const uint8_t addr[16])
{
	struct ifaddrs *ifa, *p;
	bool found = false;

	if (getifaddrs(&ifa))
		return true;	/* cannot tell: no warning on a guess */
	for (p = ifa; p && !found; p = p->ifa_next)
		found = p->ifa_addr && p->ifa_addr->sa_family == AF_INET6 &&
			!strcmp(p->ifa_name, ifname) &&
			!memcmp(&((struct sockaddr_in6 *)p->ifa_addr)->sin6_addr, addr, 16);
	freeifaddrs(ifa);
	return found;
}
