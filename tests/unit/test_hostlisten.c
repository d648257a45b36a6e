/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Kernel listeners found through sock_diag, with real sockets on loopback addresses: which
 * listeners would world traffic to the node IP reach (its own address, 0.0.0.0, dual-stack
 * [::]) and which not (another address, a V6ONLY [::]); with the node's IPv6 address, also
 * the listeners that address reaches.
 */
#include <errno.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "t.h"
#include "tlisten.h"
#include "hostlisten.h"

/* Listens on [addr]:0 ([::] when NULL) and returns the fd, the kernel's port in *port. */
static int
listen_v6_on(const char *addr, int v6only, uint16_t *port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET6, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
	if (addr)
		inet_pton(AF_INET6, addr, &sa.sin6_addr);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		close(fd);
		return -1;
	}
	*port = ntohs(sa.sin6_port);
	return fd;
}

static int
listen_v6_any(int v6only, uint16_t *port)
{
	return listen_v6_on(NULL, v6only, port);
}

static int
found(uint32_t node_ip, uint16_t port)
{
	uint64_t bits[1] = { 0 };
	int n = hostlisten_scan(node_ip, port, port, bits);

	/* The one-port lookup the allocator uses must agree with the dump, case by case. */
	CHECK_EQ(hostlisten_check(node_ip, port), n < 0 ? n : (int)(bits[0] & 1));
	return n < 0 ? n : (int)(bits[0] & 1);
}

/*
 * With the node's IPv6 address (here ::1) host ports answer on it too: a V6ONLY [::]
 * listener and one bound to that address are shadowed then, one on another address is not.
 */
static void
ipv6_node(uint32_t node, uint16_t p_v6only)
{
	static const uint8_t lo6[16] = { [15] = 1 };
	uint16_t p_lo6 = 0;
	int f_lo6 = listen_v6_on("::1", 1, &p_lo6);

	CHECK(f_lo6 >= 0);
	CHECK_EQ(found(node, p_lo6), 0);
	hostlisten_node_ip6(lo6);
	CHECK_EQ(found(node, p_v6only), 1);
	CHECK_EQ(found(node, p_lo6), 1);
	hostlisten_node_ip6(NULL);
	CHECK_EQ(found(node, p_lo6), 0);
	if (f_lo6 >= 0)
		close(f_lo6);
}

int
main(void)
{
	uint32_t node, other;
	uint16_t p_node, p_other, p_any, p_v6, p_v6only;
	int f_node, f_other, f_any, f_v6, f_v6only;
	uint64_t bits[2] = { 0, 0 };

	inet_pton(AF_INET, "127.0.0.2", &node);
	inet_pton(AF_INET, "127.0.0.3", &other);
	f_node = t_listen_v4("127.0.0.2", &p_node);
	f_other = t_listen_v4("127.0.0.3", &p_other);
	f_any = t_listen_v4("0.0.0.0", &p_any);
	CHECK(f_node >= 0 && f_other >= 0 && f_any >= 0);

	CHECK_EQ(found(node, p_node), 1);
	CHECK_EQ(found(node, p_other), 0);	/* another address of the host: not shadowed */
	CHECK_EQ(found(other, p_other), 1);
	CHECK_EQ(found(node, p_any), 1);
	close(f_node);
	CHECK_EQ(found(node, p_node), 0);	/* closed: the port is free again */

	f_v6 = listen_v6_any(0, &p_v6);
	f_v6only = listen_v6_any(1, &p_v6only);
	if (f_v6 < 0 || f_v6only < 0) {
		printf("SKIP IPv6 cases: no IPv6 on this host (%s)\n", strerror(errno));
	} else {
		CHECK_EQ(found(node, p_v6), 1);
		CHECK_EQ(found(node, p_v6only), 0);
		ipv6_node(node, p_v6only);
		close(f_v6);
		close(f_v6only);
	}

	/* A range: ports inside it are marked at their offset (other listeners may exist). */
	{
		uint16_t hi = p_other <= 65535 - 100 ? p_other + 100 : 65535;

		CHECK(hostlisten_scan(other, p_other, hi, bits) >= 1);
		CHECK(bits[0] & 1);
		if (p_any > p_other && p_any <= hi)
			CHECK((bits[(p_any - p_other) / 64] >> ((p_any - p_other) % 64)) & 1);
	}
	CHECK_EQ(hostlisten_scan(node, 10, 5, bits), -EINVAL);
	close(f_other);
	close(f_any);
	return t_done("test_hostlisten");
}
