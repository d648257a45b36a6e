/* SPDX-License-Identifier: BSD-3-Clause */
/* Option parsing and the ephemeral-range check, without EAL or root. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>

#include "t.h"
#include "config.h"

static int
parse(const char *line, struct cvs_config *c, char *err)
{
	char buf[512], *argv[32], *tok, *save = NULL;
	int argc = 0;

	snprintf(buf, sizeof(buf), "cubevs-fp %s", line);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	return cvs_config_parse(c, argc, argv, err, 256);
}

/* cvs_make_dir: a missing directory is created 0700 (whatever the umask lets through is
 * never more), an existing one is left as it is, and anything else is an error naming it. */
static void
make_dir_checks(void)
{
	char top[] = "/tmp/cvs-dir-XXXXXX", dir[64], err[256];
	struct cvs_config c;
	struct stat st;
	mode_t old;

	CHECK(mkdtemp(top) != NULL);
	snprintf(dir, sizeof(dir), "%s/state", top);
	old = umask(0);
	CHECK_EQ(cvs_make_dir(dir, err, sizeof(err)), 1);
	umask(old);
	CHECK_EQ(stat(dir, &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0700);
	chmod(dir, 0750);
	CHECK_EQ(cvs_make_dir(dir, err, sizeof(err)), 0);
	CHECK_EQ(stat(dir, &st), 0);
	CHECK_EQ(st.st_mode & 07777, 0750);
	rmdir(dir);
	snprintf(dir, sizeof(dir), "%s/missing/state", top);
	CHECK_EQ(cvs_make_dir(dir, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, dir) != NULL);
	snprintf(dir, sizeof(dir), "%s/file", top);
	close(open(dir, O_CREAT | O_WRONLY, 0600));
	CHECK_EQ(cvs_make_dir(dir, err, sizeof(err)), -ENOTDIR);
	CHECK(strstr(err, "not a directory") != NULL);
	unlink(dir);
	rmdir(top);
	/* A state file the operator named is theirs: its directory is never made for them. */
	parse("--state-file /tmp/cvs-no-such-dir/state.json", &c, err);
	CHECK_EQ(cvs_config_make_dirs(&c, err, sizeof(err)), 0);
	CHECK_EQ(stat("/tmp/cvs-no-such-dir", &st), -1);
	parse("--state-file none", &c, err);
	CHECK_EQ(cvs_config_make_dirs(&c, err, sizeof(err)), 0);
}

/* --sandbox-umem-frames: a power of two in 512..16384, anything else named in the error. */
static void
umem_checks(void)
{
	static const char *const bad[] = { "0", "256", "1000", "1536", "32768", "2048k", "-2048",
					   "0x800", "" };
	struct cvs_config c;
	char err[256], line[64];
	size_t i;

	CHECK_EQ(parse("", &c, err), 0);
	CHECK_EQ(c.sandbox_umem_frames, CVS_UMEM_FRAMES_DEFAULT);
	CHECK_EQ(CVS_UMEM_FRAMES_DEFAULT, 8192);
	CHECK_EQ(parse("--sandbox-umem-frames 512", &c, err), 0);
	CHECK_EQ(c.sandbox_umem_frames, 512);
	CHECK_EQ(parse("--sandbox-umem-frames 16384", &c, err), 0);
	CHECK_EQ(c.sandbox_umem_frames, 16384);
	CHECK_EQ(parse("--sandbox-umem-frames 4096 --sandbox-umem-frames 1024", &c, err), 0);
	CHECK_EQ(c.sandbox_umem_frames, 1024);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "--sandbox-umem-frames=%s", bad[i]);
		err[0] = '\0';
		CHECK_EQ(parse(line, &c, err), -EINVAL);
		CHECK(strstr(err, "--sandbox-umem-frames") != NULL);
		CHECK(strstr(err, "a power of two 512..16384") != NULL);
	}
	CHECK_EQ(parse("--sandbox-umem-frames", &c, err), -EINVAL);
	CHECK(strstr(err, "needs a value") != NULL);
}

/* --node-ip6 and --guest-prefix6: IPv6 NAT is off without the first; bad values named. */
static void
ip6_checks(void)
{
	static const char *const not_unicast[][2] = {
		{ "::", "unspecified" }, { "::1", "loopback" }, { "ff02::1", "multicast" },
		{ "fe80::1", "link-local" }, { "::ffff:198.18.0.1", "IPv4-mapped" },
		{ "fec0::1", "site-local" },
	};
	static const char *const bad_pfx[] = {
		"fd00::/48", "fd00::/96", "fd00::1/64", "fd00::", "fd00::/64x", "fd00::/", "x/64",
		"ff00::/64", "fe80::/64",
	};
	static const uint8_t dflt[8] = { 0xfd, 0x00, 0xa9, 0xfe, 0x44, 0x06, 0, 0 };
	static const uint8_t node[16] = { 0x20, 0x01, 0, 2, 0, 0, 0, 1, [15] = 1 };
	struct cvs_config c;
	char err[256], line[96];
	size_t i;

	CHECK_EQ(parse("", &c, err), 0);
	CHECK(!c.have_ip6);
	CHECK_EQ(memcmp(c.guest_pfx6, dflt, 8), 0);
	CHECK_EQ(parse("--node-ip6 2001:2:0:1::1 --guest-prefix6 fd12:3456:789a:1::/64", &c, err),
		 0);
	CHECK(c.have_ip6);
	CHECK_EQ(memcmp(c.node_ip6, node, 16), 0);
	CHECK_EQ(c.guest_pfx6[0], 0xfd);
	CHECK_EQ(c.guest_pfx6[7], 0x01);
	CHECK_EQ(parse("--node-ip6 fd00:1::5", &c, err), 0);	/* a ULA is fine */
	CHECK(c.have_ip6);
	for (i = 0; i < sizeof(not_unicast) / sizeof(not_unicast[0]); i++) {
		snprintf(line, sizeof(line), "--node-ip6 %s", not_unicast[i][0]);
		err[0] = '\0';
		CHECK_EQ(parse(line, &c, err), -EINVAL);
		CHECK(strstr(err, "--node-ip6") != NULL);
		CHECK(strstr(err, not_unicast[i][1]) != NULL);
	}
	CHECK_EQ(parse("--node-ip6 198.18.0.1", &c, err), -EINVAL);
	CHECK(strstr(err, "an IPv6 address") != NULL);
	CHECK_EQ(parse("--node-ip6 2001:2::1/64", &c, err), -EINVAL);
	for (i = 0; i < sizeof(bad_pfx) / sizeof(bad_pfx[0]); i++) {
		snprintf(line, sizeof(line), "--guest-prefix6 %s", bad_pfx[i]);
		err[0] = '\0';
		CHECK_EQ(parse(line, &c, err), -EINVAL);
		CHECK(strstr(err, "--guest-prefix6") != NULL);
	}
	CHECK_EQ(parse("--guest-prefix6 fd00::/48", &c, err), -EINVAL);
	CHECK(strstr(err, "PREFIX/64") != NULL);
	/* --sandbox-prefix6: a /96 outside the guests' /64, whichever comes first. */
	CHECK_EQ(parse("", &c, err), 0);
	CHECK_EQ(c.sbx_pfx6[0], 0xfd);
	CHECK_EQ(c.sbx_pfx6[5], 0x07);
	CHECK_EQ(parse("--sandbox-prefix6 2001:2:0:7::/96", &c, err), 0);
	CHECK_EQ(c.sbx_pfx6[1], 0x01);
	CHECK_EQ(c.sbx_pfx6[7], 0x07);
	CHECK_EQ(c.sbx_pfx6[11], 0);
	CHECK_EQ(parse("--sandbox-prefix6 2001:2:0:7::/64", &c, err), -EINVAL);
	CHECK(strstr(err, "PREFIX/96") != NULL);
	CHECK_EQ(parse("--sandbox-prefix6 ff02::/96", &c, err), -EINVAL);
	CHECK(strstr(err, "unicast") != NULL);
	CHECK_EQ(parse("--sandbox-prefix6 fd00:a9fe:4406::/96", &c, err), -EINVAL);
	CHECK(strstr(err, "outside --guest-prefix6") != NULL);
	CHECK_EQ(parse("--sandbox-prefix6 2001:2:0:6::/96 --guest-prefix6 2001:2:0:6::/64", &c,
		       err), -EINVAL);
	CHECK(strstr(err, "outside --guest-prefix6") != NULL);
}

int
main(void)
{
	struct cvs_config c;
	char err[256], path[] = "/tmp/cvs-eph-XXXXXX", msg[512];
	FILE *f;
	int fd;

	CHECK_EQ(parse("", &c, err), 0);
	CHECK_EQ(c.host_ports.lo, 20000);
	CHECK_EQ(c.host_ports.hi, 29999);
	CHECK_EQ(c.snat_ports.lo, 30000);
	CHECK_EQ(c.snat_ports.hi, 65535);
	CHECK_EQ(c.max_sessions, 1048576);
	CHECK_EQ(c.api_port, 9180);
	CHECK_EQ(c.api_addr, htonl(0x7f000001));
	CHECK_EQ(c.sandbox_prefix, 18);
	CHECK_EQ(c.guest_ip, inet_addr("169.254.68.6"));
	CHECK_EQ(c.guest_mac[5], 0xfc);

	CHECK_EQ(parse("--world-iface eth0 --node-ip 198.18.0.1 --api-listen 0.0.0.0:80 "
		       "--host-port-range 1000-2000 --max-sessions 2048 "
		       "--sandbox-cidr 10.1.0.0/16 --gateway-mac 02:00:00:00:00:01", &c, err), 0);
	CHECK(!strcmp(c.world_iface, "eth0"));
	CHECK_EQ(c.api_port, 80);
	CHECK_EQ(c.host_ports.hi, 2000);
	CHECK_EQ(c.max_sessions, 2048);
	CHECK_EQ(c.sandbox_prefix, 16);
	CHECK_EQ(c.gw_mac[5], 1);

	/* Window tracking is on unless --tcp-liberal. */
	CHECK(!c.tcp_liberal);
	CHECK_EQ(parse("--tcp-liberal", &c, err), 0);
	CHECK(c.tcp_liberal);
	CHECK_EQ(parse("--tcp-liberal=yes", &c, err), -EINVAL);

	CHECK(!strcmp(c.state_file, CVS_STATE_FILE_DEFAULT));
	CHECK_EQ(parse("--state-file /tmp/x/state.json", &c, err), 0);
	CHECK(!strcmp(c.state_file, "/tmp/x/state.json"));
	CHECK_EQ(parse("--state-file none", &c, err), 0);
	CHECK_EQ(c.state_file[0], '\0');
	CHECK_EQ(parse("--state-file relative.json", &c, err), -EINVAL);
	CHECK(strstr(err, "--state-file") != NULL);
	CHECK_EQ(parse("--state-file /tmp/dir/", &c, err), -EINVAL);

	/* The session region and the restart (issue 12). */
	CHECK(!strcmp(c.runtime_dir, CVS_RUNTIME_DIR_DEFAULT));
	CHECK_EQ(c.restart_grace_s, 10);
	CHECK(!c.detach_on_exit);
	CHECK_EQ(parse("--runtime-dir /dev/shm/fp --restart-grace 0 --detach-on-exit", &c, err),
		 0);
	CHECK(!strcmp(c.runtime_dir, "/dev/shm/fp"));
	CHECK_EQ(c.restart_grace_s, 0);
	CHECK(c.detach_on_exit);
	CHECK_EQ(parse("--runtime-dir none", &c, err), 0);
	CHECK_EQ(c.runtime_dir[0], '\0');
	CHECK_EQ(parse("--runtime-dir run", &c, err), -EINVAL);
	CHECK(strstr(err, "--runtime-dir") != NULL);
	/* Where the XDP maps are pinned. */
	CHECK_EQ(parse("", &c, err), 0);
	CHECK(!strcmp(c.bpf_pin_dir, CVS_BPF_PIN_DIR_DEFAULT));
	CHECK_EQ(parse("--bpf-pin-dir /sys/fs/bpf/fp2", &c, err), 0);
	CHECK(!strcmp(c.bpf_pin_dir, "/sys/fs/bpf/fp2"));
	CHECK_EQ(parse("--bpf-pin-dir none", &c, err), 0);
	CHECK_EQ(c.bpf_pin_dir[0], '\0');
	CHECK_EQ(parse("--bpf-pin-dir bpf", &c, err), -EINVAL);
	CHECK(strstr(err, "--bpf-pin-dir") != NULL);
	CHECK_EQ(parse("--restart-grace 601", &c, err), -EINVAL);
	CHECK_EQ(parse("--restart-grace 5s", &c, err), -EINVAL);
	CHECK(strstr(err, "--restart-grace") != NULL);

	CHECK_EQ(parse("--host-port-range 5-2", &c, err), -EINVAL);
	CHECK(strstr(err, "--host-port-range") != NULL);
	CHECK_EQ(parse("--host-port-range 0-10", &c, err), -EINVAL);
	CHECK_EQ(parse("--host-port-range 30000-30010", &c, err), -EINVAL);
	CHECK(strstr(err, "overlaps") != NULL);
	CHECK_EQ(parse("--reserved-host-ports 20000,20100-20199 --reserved-host-ports 29999",
		       &c, err), 0);
	CHECK_EQ(c.n_reserved, 3);
	CHECK_EQ(c.reserved[0].lo, 20000);
	CHECK_EQ(c.reserved[0].hi, 20000);
	CHECK_EQ(c.reserved[1].lo, 20100);
	CHECK_EQ(c.reserved[1].hi, 20199);
	CHECK_EQ(c.reserved[2].lo, 29999);
	CHECK_EQ(parse("--reserved-host-ports 20000,,20001", &c, err), -EINVAL);
	CHECK(strstr(err, "--reserved-host-ports") != NULL);
	CHECK_EQ(parse("--reserved-host-ports 20000,", &c, err), -EINVAL);
	CHECK_EQ(parse("--reserved-host-ports 2x", &c, err), -EINVAL);
	CHECK_EQ(parse("--reserved-host-ports 20010-20001", &c, err), -EINVAL);
	CHECK_EQ(parse("--reserved-host-ports 30000", &c, err), -EINVAL);
	CHECK(strstr(err, "outside --host-port-range") != NULL);
	CHECK_EQ(parse("--host-port-hold 0", &c, err), 0);
	CHECK_EQ(c.hostport_hold_s, 0);
	CHECK_EQ(parse("--host-port-hold 1h", &c, err), -EINVAL);
	CHECK_EQ(parse("--host-port-hold 604801", &c, err), -EINVAL);
	/* Per-sandbox limits: derived from the table and SNAT range unless given. */
	CHECK_EQ(parse("--max-sessions 65536 --snat-port-range 30000-30511", &c, err), 0);
	CHECK_EQ(c.sbx_lim[CVS_SLIM_SESSIONS], 4096);
	CHECK_EQ(c.sbx_lim[CVS_SLIM_INBOUND], 4096);
	CHECK_EQ(c.sbx_lim[CVS_SLIM_SNAT], 64);
	CHECK_EQ(c.sbx_lim[CVS_SLIM_RATE], 2000);
	CHECK_EQ(c.sbx_lim[CVS_SLIM_BURST], 8000);
	CHECK_EQ(parse("--max-sessions 8192", &c, err), 0);
	CHECK_EQ(c.sbx_lim[CVS_SLIM_SESSIONS], 1024);	/* the floor */
	CHECK_EQ(parse("--max-sessions 256", &c, err), 0);
	CHECK_EQ(c.sbx_lim[CVS_SLIM_SESSIONS], 0);	/* a small table: the table-full policy */
	CHECK_EQ(parse("--sandbox-new-sessions-per-sec 50 --sandbox-snat-ports-per-endpoint 0 "
		       "--sandbox-max-sessions 7", &c, err), 0);
	CHECK_EQ(c.sbx_lim[CVS_SLIM_RATE], 50);
	CHECK_EQ(c.sbx_lim[CVS_SLIM_BURST], 200);
	CHECK_EQ(c.sbx_lim[CVS_SLIM_SNAT], 0);
	CHECK_EQ(c.sbx_lim[CVS_SLIM_SESSIONS], 7);
	CHECK_EQ(parse("--sandbox-max-inbound lots", &c, err), -EINVAL);
	CHECK(strstr(err, "--sandbox-max-inbound") != NULL);
	CHECK_EQ(parse("--sandbox-new-sessions-burst 1073741825", &c, err), -EINVAL);
	CHECK_EQ(parse("--max-sessions 12x", &c, err), -EINVAL);
	CHECK_EQ(parse("--max-sessions -1", &c, err), -EINVAL);
	CHECK_EQ(parse("--node-ip 300.1.1.1", &c, err), -EINVAL);
	CHECK_EQ(parse("--guest-mac 20:90:6f:fc:fc", &c, err), -EINVAL);
	CHECK_EQ(parse("--sandbox-cidr 192.168.0.1/18", &c, err), -EINVAL);
	CHECK_EQ(parse("--sandbox-cidr 10.0.0.0/8", &c, err), -EINVAL);
	CHECK_EQ(parse("--api-listen 127.0.0.1", &c, err), -EINVAL);
	CHECK_EQ(parse("--bogus", &c, err), -EINVAL);
	CHECK(strstr(err, "--bogus") != NULL);
	CHECK_EQ(parse("--node-ip", &c, err), -EINVAL);
	CHECK_EQ(parse("stray", &c, err), -EINVAL);
	CHECK_EQ(parse("--help", &c, err), 0);
	CHECK(c.help);

	/* Ephemeral range: the kernel default overlaps the SNAT range. */
	fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	parse("", &c, err);
	f = fopen(path, "w");
	fputs("32768\t60999\n", f);
	fclose(f);
	CHECK_EQ(cvs_check_ephemeral(&c, path, false, msg, sizeof(msg)), -EADDRINUSE);
	CHECK(strstr(msg, "net.ipv4.ip_local_port_range") != NULL);
	CHECK_EQ(cvs_check_ephemeral(&c, path, true, msg, sizeof(msg)), 1);
	CHECK_EQ(cvs_check_ephemeral(&c, path, false, msg, sizeof(msg)), 0);
	f = fopen(path, "r");
	{
		unsigned int lo = 0, hi = 0;

		CHECK_EQ(fscanf(f, "%u %u", &lo, &hi), 2);
		CHECK_EQ(lo, 10000);
		CHECK_EQ(hi, 19999);
	}
	fclose(f);
	unlink(path);
	make_dir_checks();
	umem_checks();
	ip6_checks();
	return t_done("test_config");
}
