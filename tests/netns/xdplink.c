/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A bystander's XDP link: loads the program of OBJ (foreign.bpf.o) and attaches it to IFACE
 * of the current network namespace through a BPF link, as Cilium or another cubevs-fp does,
 * then holds the link until SIGTERM. Writes "<prog id> <link id>" to OUT once attached.
 * The tests put it on an interface whose ifindex equals a sandbox interface's of the bed's
 * node namespace, to check that cubevs-fp never takes another namespace's link for its own.
 *
 *   xdplink OBJ IFACE OUT
 */
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static volatile sig_atomic_t stop;

static void
on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int
link_ids(int link_fd, uint32_t *prog_id, uint32_t *link_id)
{
	struct bpf_link_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(link_fd, &info, &len))
		return -errno;
	*prog_id = info.prog_id;
	*link_id = info.id;
	return 0;
}

int
main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *p;
	uint32_t prog_id = 0, link_id = 0;
	int ifindex, link_fd;
	FILE *out;

	if (argc != 4) {
		fprintf(stderr, "usage: xdplink OBJ IFACE OUT\n");
		return 2;
	}
	ifindex = (int)if_nametoindex(argv[2]);
	if (!ifindex) {
		fprintf(stderr, "xdplink: no interface %s here\n", argv[2]);
		return 1;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "xdplink: cannot load %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	p = bpf_object__next_program(obj, NULL);
	link_fd = p ? bpf_link_create(bpf_program__fd(p), ifindex, BPF_XDP, NULL) : -EINVAL;
	if (link_fd < 0 || link_ids(link_fd, &prog_id, &link_id)) {
		fprintf(stderr, "xdplink: cannot attach to %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	out = fopen(argv[3], "w");
	if (!out || fprintf(out, "%u %u\n", prog_id, link_id) < 0 || fclose(out)) {
		fprintf(stderr, "xdplink: cannot write %s\n", argv[3]);
		return 1;
	}
	while (!stop)
		pause();
	close(link_fd);
	bpf_object__close(obj);
	return 0;
}
