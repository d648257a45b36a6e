/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "api.h"
#include "log.h"
#include "funnel.h"
#include "guest6.h"
#include "publish.h"
#include "vhostctl.h"
#include "xdpctl.h"

#define PUBLISH_CALL_MS		5000u	/* a worker that does not answer this soon is stuck */
#define PUBLISH_CLOCK_MS	1000u

static void publish_vhost_sync(void *ctx);
static void publish_vhost_mtu(void *ctx, uint32_t slot, uint16_t mtu);

int
publish_init(struct publish *p, uint32_t max_sandboxes, uint32_t sandbox_net, uint8_t prefix)
{
	struct dp_shared *sh = calloc(1, sizeof(*sh));

	p->sh = sh;
	p->max_sandboxes = max_sandboxes;
	p->sandbox_net = sandbox_net;
	p->sbx_mtu_max = FUNNEL_SBX_MTU_MAX;
	p->ifq_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	p->ifq_open = p->ifq_fd >= 0;
	p->wp.xsk_on = calloc(max_sandboxes, sizeof(*p->wp.xsk_on));
	p->slot_st = calloc(max_sandboxes, sizeof(*p->slot_st));
	p->wp.vh = calloc(max_sandboxes, sizeof(*p->wp.vh));
	p->wp.vh_running = calloc((max_sandboxes + 63) / 64, sizeof(*p->wp.vh_running));
	if (!sh || !p->wp.vh || !p->wp.vh_running)
		return -ENOMEM;
	vhostctl_set_hooks(&(struct vhostctl_hooks){ .sync = publish_vhost_sync,
						     .mtu = publish_vhost_mtu, .ctx = p });
	sh->slot_alive = calloc(max_sandboxes, 1);
	sh->policy = calloc(max_sandboxes, sizeof(*sh->policy));
	sh->policy_ver = calloc(max_sandboxes, sizeof(*sh->policy_ver));
	sh->slot_ip = calloc(max_sandboxes, sizeof(*sh->slot_ip));
	sh->slot_mac = calloc(max_sandboxes, sizeof(*sh->slot_mac));
	sh->slot_iid6 = calloc(max_sandboxes, sizeof(*sh->slot_iid6));
	sh->guest = calloc(max_sandboxes, sizeof(*sh->guest));
	sh->slot_mtu = calloc(max_sandboxes, sizeof(*sh->slot_mtu));
	sh->slot_lim = calloc(max_sandboxes, sizeof(*sh->slot_lim));
	sh->ip2slot_size = 1u << (32 - prefix);
	sh->ip2slot = calloc(sh->ip2slot_size, sizeof(*sh->ip2slot));
	sh->max_sandboxes = max_sandboxes;
	if (!sh->slot_alive || !sh->policy || !sh->policy_ver || !sh->slot_ip || !sh->slot_mac ||
	    !sh->slot_iid6 || !sh->guest || !sh->slot_mtu || !sh->ip2slot || !p->wp.xsk_on || !p->slot_st || !sh->slot_lim)
		return -ENOMEM;
	return 0;
}

void
publish_fini(struct publish *p)
{
	if (p->ifq_open)
		close(p->ifq_fd);
	p->ifq_open = false;
	if (p->sh) {
		free((void *)p->sh->slot_alive);
		free((void *)p->sh->policy);
		free((void *)p->sh->policy_ver);
		free((void *)p->sh->slot_ip);
		free((void *)p->sh->slot_mac);
		free((void *)p->sh->slot_iid6);
		free(p->sh->guest);
		free((void *)p->sh->slot_mtu);
		free(p->sh->slot_lim);
		free((void *)p->sh->ip2slot);
		free(p->sh);
		p->sh = NULL;
	}
	free((void *)p->wp.xsk_on);
	p->wp.xsk_on = NULL;
	free((void *)p->wp.vh);
	p->wp.vh = NULL;
	free((void *)p->wp.vh_running);
	p->wp.vh_running = NULL;
	free(p->slot_st);
	p->slot_st = NULL;
}

int
publish_call(struct publish *p, uint32_t cmd, uint32_t arg, uint32_t timeout_ms,
	     uint32_t *sum)
{
	uint32_t i, r;
	int ret = 0;

	if (sum)
		*sum = 0;
	if (!p->launched)
		return 0;
	for (i = 0; i < p->nw; i++) {
		if (worker_call(&p->w[i], cmd, arg, timeout_ms, &r))
			ret = -ETIMEDOUT;
		else if (sum)
			*sum += r;
	}
	return ret;
}

static uint32_t
publish_ip_index(const struct publish *p, uint32_t ip)
{
	return ntohl(ip) - ntohl(p->sandbox_net);
}

int
publish_policy(struct publish *p, uint32_t slot, const struct reg_policy *pol, const char *id)
{
	struct dp_policy *dpol = policy_compile(pol);
	const struct dp_policy *old;

	if (pol->set && !dpol)
		return -ENOMEM;
	old = atomic_exchange(&p->sh->policy[slot], dpol);
	atomic_fetch_add_explicit(&p->sh->policy_ver[slot], 1, memory_order_release);
	/*
	 * The round trip is only there to free what a worker may still be reading: a new
	 * sandbox had nothing (its slot was retired with NULL), and waiting on the workers here,
	 * under the registry lock, is what queued concurrent registrations behind each other.
	 */
	if (!old)
		return 0;
	if (publish_call(p, WCMD_SYNC, 0, PUBLISH_CALL_MS, NULL))
		CVS_LOG(ERR, ctl, "worker did not answer; keeping the old policy of %s allocated",
			id);
	else
		free((void *)old);
	return 0;
}

uint32_t
publish_retire_slot(struct publish *p, uint32_t slot, uint32_t ip, const char *id)
{
	const struct dp_policy *old;
	uint32_t flushed = 0;

	atomic_store(&p->sh->slot_alive[slot], 0);
	atomic_store(&p->sh->ip2slot[publish_ip_index(p, ip)], 0);
	atomic_store(&p->sh->slot_ip[slot], 0);
	worker_publish(&p->wp, slot, false);
	worker_publish_vhost(&p->wp, slot, NULL);
	old = atomic_exchange(&p->sh->policy[slot], NULL);
	atomic_fetch_add(&p->sh->policy_ver[slot], 1);
	/* Returns once every worker has passed a loop without this slot: then it is ours. */
	if (publish_call(p, WCMD_FLUSH_ZONE, slot + 1, PUBLISH_CALL_MS, &flushed))
		CVS_LOG(ERR, ctl, "worker did not answer while removing %s", id);
	/* The next sandbox of the slot is learnt afresh (no frame of this one is left). */
	atomic_store(&p->sh->slot_iid6[slot], 0);
	free((void *)old);
	return flushed;
}

int
publish_slot(struct publish *p, uint32_t slot, uint32_t ip, const struct reg_policy *pol,
	     bool funnel, const char *id)
{
	int ret;

	atomic_store(&p->sh->slot_ip[slot], ip);
	atomic_store(&p->sh->ip2slot[publish_ip_index(p, ip)], (uint16_t)(slot + 1));
	atomic_store(&p->sh->slot_alive[slot], 1);
	/* The slot may have served another sandbox: its counters start again from zero. */
	memset(&p->slot_st[slot], 0, sizeof(p->slot_st[slot]));
	ret = publish_policy(p, slot, pol, id);
	if (ret) {
		publish_retire_slot(p, slot, ip, id);
		return ret;
	}
	/* Last: a worker that finds the slot on finds the rest of it in place. */
	worker_publish(&p->wp, slot, funnel);
	return 0;
}

int
publish_slot_vhost(struct publish *p, uint32_t slot, uint32_t ip, const struct reg_policy *pol,
		   struct vhport *vp, const char *id)
{
	int ret = publish_slot(p, slot, ip, pol, false, id);

	if (!ret)
		worker_publish_vhost(&p->wp, slot, vp);
	return ret;
}

/* vhostctl's hook: a device is going; return once no worker can be inside it. */
static void
publish_vhost_sync(void *ctx)
{
	if (publish_call(ctx, WCMD_SYNC, 0, PUBLISH_CALL_MS, NULL))
		CVS_LOG(ERR, ctl, "worker did not answer while a vhost-user device stopped");
}

/*
 * The MTU a vhost-user guest is served at: what its VMM gave it (VIRTIO_NET_F_MTU), else
 * virtio's 1500. Its frames come as mbuf chains, so the limit is the funnel's, whatever the
 * AF_XDP sockets carry.
 */
static uint16_t
publish_vhost_served(uint16_t vmm)
{
	if (!vmm)
		return 1500;
	return vmm > FUNNEL_SBX_MTU_MAX ? (uint16_t)FUNNEL_SBX_MTU_MAX : vmm;
}

/* vhostctl's hook: a device starts, at the MTU its VMM gave the guest. */
static void
publish_vhost_mtu(void *ctx, uint32_t slot, uint16_t mtu)
{
	struct publish *p = ctx;

	if (mtu > FUNNEL_SBX_MTU_MAX)
		CVS_LOG(WARNING, ctl, "vhost-user slot %u: the VMM gave the guest MTU %u; sandboxes "
			"carry at most %u: its longer frames are dropped (too_big) and TCP is clamped "
			"to %u; set the VMM's MTU (QEMU host_mtu) to %u or less", slot, mtu,
			FUNNEL_SBX_MTU_MAX, FUNNEL_SBX_MTU_MAX, FUNNEL_SBX_MTU_MAX);
	if (slot < p->max_sandboxes)
		atomic_store_explicit(&p->sh->slot_mtu[slot], publish_vhost_served(mtu),
				      memory_order_relaxed);
}

void
publish_hostport(struct publish *p, uint16_t hport, uint32_t slot, uint16_t cport, bool add)
{
	atomic_store_explicit(&p->sh->hostport[hport], add ? dp_hostport_entry(slot, cport) : 0,
			      memory_order_release);
}

int64_t
publish_clock_advance(struct publish *p, int64_t seconds)
{
	int64_t off = atomic_fetch_add(&p->sh->clock_offset, seconds) + seconds;

	/* Let the workers run their expiry at the new time before answering. */
	publish_call(p, WCMD_SYNC, 0, PUBLISH_CLOCK_MS, NULL);
	publish_call(p, WCMD_SYNC, 0, PUBLISH_CLOCK_MS, NULL);
	return off;
}

/* ---- reg_ops: what a registration does to the data path ---- */

/* The worker whose funnel carries a slot's frames: the one that owns the slot. */
static uint32_t
publish_worker_of(const struct publish *p, uint32_t slot)
{
	return dp_slot_owner(slot, p->nw ? p->nw : 1);
}

/*
 * One socket for every lookup: if_nametoindex() opens and closes one per call, which was a
 * tenth of the CPU of a registration under 20 concurrent clients.
 */
static int
publish_op_ifindex(void *ctx, const char *iface)
{
	struct publish *p = ctx;
	struct ifreq ifr = { 0 };
	size_t n = strlen(iface);

	if (!p->ifq_open)
		return (int)if_nametoindex(iface);
	if (n >= sizeof(ifr.ifr_name))
		return 0;
	memcpy(ifr.ifr_name, iface, n);
	return ioctl(p->ifq_fd, SIOCGIFINDEX, &ifr) ? 0 : ifr.ifr_ifindex;
}

/* The guest's MAC and addressing: its registration's, else the node-wide ones. */
static void
publish_op_guest_mac(void *ctx, const struct sandbox *sb)
{
	struct publish *p = ctx;
	const struct dp_cfg *c = p->dpc;

	if (c)
		dp_guest_set(&p->sh->guest[sb->slot], sb->guest.ip ? sb->guest.ip : c->guest_ip,
			     sb->guest.gw_ip ? sb->guest.gw_ip : c->gw_ip,
			     sb->guest.gw_mac_set ? sb->guest.gw_mac : c->gw_mac);
	atomic_store_explicit(&p->sh->slot_mac[sb->slot], dp_mac_pack(sb->guest_mac),
			      memory_order_release);
	/* The funnel's programs compare and restore it too. */
	if (sb->dp && !reg_is_vhost(sb) &&
	    xdpctl_sbx_set_mac(p->sbx, sb->ifindex, sb->slot, publish_worker_of(p, sb->slot),
			       sb->guest_mac))
		CVS_LOG(ERR, xdp, "cannot set the guest MAC of %s in the sandbox maps: %s", sb->id,
			strerror(errno));
}

/* The guest's IPv6 address as the workers take it (dp6_in.c's dp6_guest_addr()). */
static bool
publish_op_guest_ip6(void *ctx, const struct sandbox *sb, uint8_t out[16], bool *learnt)
{
	struct publish *p = ctx;
	uint64_t iid;

	if (!p->dpc || !p->dpc->have_ip6)
		return false;
	iid = atomic_load_explicit(&p->sh->slot_iid6[sb->slot], memory_order_relaxed);
	*learnt = iid != 0;
	guest6_addr(out, p->dpc->guest_pfx6, iid ? iid : guest6_iid_of_mac(sb->guest_mac));
	return true;
}

/*
 * The MTU a sandbox is served at: its interface's, which must fit the funnel; a vhost-user
 * guest's is virtio's 1500 until its device starts with the MTU its VMM gave it
 * (publish_vhost_mtu()). -EMSGSIZE names the limit.
 */
static int
publish_mtu(struct publish *p, struct sandbox *sb, char *err, size_t errlen)
{
	struct ifreq ifr = { 0 };
	uint32_t mtu = 1500;

	if (!reg_is_vhost(sb) && p->ifq_open) {
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", sb->iface);
		if (!ioctl(p->ifq_fd, SIOCGIFMTU, &ifr) && ifr.ifr_mtu > 0)
			mtu = (uint32_t)ifr.ifr_mtu;
		if (mtu > p->sbx_mtu_max) {
			snprintf(err, errlen, "%s has MTU %u; sandbox interfaces carry at most %u "
				 "here%s: set its MTU to %u or less", sb->iface, mtu, p->sbx_mtu_max,
				 p->sbx_mtu_max < FUNNEL_SBX_MTU_MAX ? " (AF_XDP without "
				 "multi-buffer: one 2 KiB frame a packet before kernel 6.6)" : "",
				 p->sbx_mtu_max);
			return -EMSGSIZE;
		}
	}
	sb->mtu = (uint16_t)mtu;
	atomic_store_explicit(&p->sh->slot_mtu[sb->slot], (uint16_t)mtu, memory_order_relaxed);
	return 0;
}

/*
 * A TAP's TSO frames to the kernel's segmentation (xdp/xdpgso.c), at its MTU. Without it
 * (another program in our filter's place) they are dropped and counted, as the log says.
 */
static void
publish_gso(struct publish *p, const struct sandbox *sb)
{
	int ret = xdpctl_gso_attach(p->sbx, sb->ifindex, sb->iface, sb->mtu);

	/* ENODEV: the interface went meanwhile; linkwatch says so. */
	if (ret && ret != -ENODEV)
		CVS_LOG(WARNING, ctl, "sandbox %s: cannot attach the TC filter that segments the "
			"TSO frames of TAP %s: %s%s; such frames are dropped (sbx_too_big, too_big)",
			sb->id, sb->iface, strerror(-ret), ret == -EBUSY ? " (another program "
			"holds ingress filter handle 0xcf5b, priority 0xcf5b)" : "");
}

static void
publish_op_mtu(void *ctx, struct sandbox *sb)
{
	struct publish *p = ctx;
	char err[256];

	if (sb->dp && publish_mtu(p, sb, err, sizeof(err)))
		CVS_LOG(WARNING, ctl, "sandbox %s: %s; frames larger than %u are answered with "
			"fragmentation-needed", sb->id, err, p->sbx_mtu_max);
	else if (sb->dp && !reg_is_vhost(sb))
		publish_gso(p, sb);
}

/* A vhost-user port: no interface, no XDP program; the VMM comes and goes on its socket. */
static int
publish_attach_vhost(struct publish *p, struct sandbox *sb, char *err, size_t errlen)
{
	_Atomic uint64_t *word = &p->wp.vh_running[sb->slot / 64];
	struct vhport *vp;
	int ret;

	vp = vhostctl_create(sb->vhost, sb->vhost_client, sb->slot, word,
			     1ULL << (sb->slot % 64), err, errlen);
	if (!vp)
		return -errno;
	/* Before the slot goes live: its first frame already carries the right MAC. */
	publish_op_guest_mac(p, sb);
	ret = publish_slot_vhost(p, sb->slot, sb->ip, &sb->policy, vp, sb->id);
	if (ret) {
		snprintf(err, errlen, "cannot apply the policy: %s", strerror(-ret));
		vhostctl_destroy(vp);
		return ret;
	}
	sb->dp = vp;
	CVS_LOG(INFO, ctl, "sandbox %s attached on vhost-user %s (%s, slot %u)", sb->id,
		sb->vhost, sb->vhost_client ? "client" : "server", sb->slot);
	return 0;
}

/*
 * The limits in force of a sandbox into its slot. Each field is read on its own by the
 * worker: while they change, a new flow may meet old and new values mixed, never a torn one.
 * The new generation restarts the slot's token bucket full.
 */
static void
publish_op_limits(void *ctx, const struct sandbox *sb)
{
	struct publish *p = ctx;
	struct dp_limit *l = &p->sh->slot_lim[sb->slot];
	static uint32_t gen;

	atomic_store_explicit(&l->sessions, sb->lim_eff.v[REG_LIM_SESSIONS], memory_order_relaxed);
	atomic_store_explicit(&l->inbound, sb->lim_eff.v[REG_LIM_INBOUND], memory_order_relaxed);
	atomic_store_explicit(&l->rate, sb->lim_eff.v[REG_LIM_RATE], memory_order_relaxed);
	atomic_store_explicit(&l->burst, sb->lim_eff.v[REG_LIM_BURST], memory_order_relaxed);
	atomic_store_explicit(&l->snat, sb->lim_eff.v[REG_LIM_SNAT], memory_order_relaxed);
	/* Never 0: a zeroed bucket of gen 0 would read as filled and empty. */
	if (++gen == 0)
		gen = 1;
	atomic_store_explicit(&l->gen, gen, memory_order_release);
}

static int
publish_op_attach(void *ctx, struct sandbox *sb, char *err, size_t errlen)
{
	struct publish *p = ctx;
	int ret;

	ret = publish_mtu(p, sb, err, errlen);
	if (ret)
		return ret;
	if (reg_is_vhost(sb))
		return publish_attach_vhost(p, sb, err, errlen);
	if (sb->ifindex == p->world_ifindex) {
		snprintf(err, errlen, "%s is the world interface", sb->iface);
		return -EBUSY;
	}
	/* Before the slot goes live: its first frame already carries the right MAC. */
	publish_op_guest_mac(p, sb);
	publish_op_limits(p, sb);
	/* Map entries and the shared program: no socket and no frames of its own. */
	ret = xdpctl_sbx_attach(p->sbx, sb->ifindex, sb->iface, sb->slot,
				publish_worker_of(p, sb->slot), sb->guest_mac, err, errlen);
	if (ret)
		return ret;
	ret = publish_slot(p, sb->slot, sb->ip, &sb->policy, true, sb->id);
	if (ret) {
		snprintf(err, errlen, "cannot apply the policy: %s", strerror(-ret));
		xdpctl_sbx_detach(p->sbx, sb->ifindex, sb->slot);
		return ret;
	}
	publish_gso(p, sb);
	sb->dp = p;
	CVS_LOG(INFO, ctl, "sandbox %s attached on %s (slot %u)", sb->id, sb->iface, sb->slot);
	return 0;
}

static void
publish_op_detach(void *ctx, struct sandbox *sb)
{
	struct publish *p = ctx;
	uint32_t flushed;

	/* A sandbox the kernel took off its interface still has its slot and sessions. */
	if (!sb->dp && !atomic_load(&p->sh->slot_alive[sb->slot]))
		return;
	flushed = publish_retire_slot(p, sb->slot, sb->ip, sb->id);
	if (reg_is_vhost(sb)) {
		vhostctl_destroy(sb->dp);
		sb->dp = NULL;
		CVS_LOG(INFO, ctl, "sandbox %s detached from vhost-user %s, %u sessions removed",
			sb->id, sb->vhost, flushed);
		return;
	}
	/* Kept at exit: until the next process binds, the funnel drops (gap_drop). */
	if (sb->dp && !p->keep_sbx_xdp)
		xdpctl_sbx_detach_later(p->sbx, sb->ifindex, sb->slot);
	sb->dp = NULL;
	CVS_LOG(INFO, ctl, "sandbox %s detached from %s, %u sessions removed", sb->id, sb->iface,
		flushed);
}

/* What a detach left to do, after the registry lock (xdpctl_sbx_detach_later()). */
static void
publish_op_settle(void *ctx)
{
	struct publish *p = ctx;

	xdpctl_sbx_settle(p->sbx);
}

/* The table first when adding and last when removing: steered frames always find it. */
static void
publish_op_hostport(void *ctx, const struct sandbox *sb, const struct exposed_port *ep,
		    bool add)
{
	struct publish *p = ctx;

	if (add) {
		publish_hostport(p, ep->hport, sb->slot, ep->cport, true);
		if (p->steer && xdpctl_steer_port(p->steer, IPPROTO_TCP, ep->hport, true))
			CVS_LOG(ERR, xdp, "cannot steer host port %u: %s", ep->hport,
				strerror(errno));
	} else {
		if (p->steer)
			xdpctl_steer_port(p->steer, IPPROTO_TCP, ep->hport, false);
		publish_hostport(p, ep->hport, sb->slot, ep->cport, false);
	}
}

static int
publish_op_policy(void *ctx, struct sandbox *sb)
{
	return publish_policy(ctx, sb->slot, &sb->policy, sb->id);
}

static bool
publish_op_vhost_state(void *ctx, const struct sandbox *sb, uint64_t *features, uint16_t *mtu)
{
	uint16_t vmm = 0;
	bool up;

	(void)ctx;
	*features = 0;
	up = reg_is_vhost(sb) && sb->dp && vhostctl_port_state(sb->dp, features, &vmm);
	*mtu = up ? publish_vhost_served(vmm) : 0;
	return up;
}

/* ---- the kernel's link events (control/ports/linkwatch.c, control/reg/reg_link.c) ---- */

static int
publish_op_slot_of(void *ctx, int ifindex)
{
	struct publish *p = ctx;

	return xdpctl_sbx_slot_of(p->sbx, ifindex);
}

static int
publish_op_prog_owner(void *ctx, uint32_t prog_id, char *name, size_t namelen)
{
	struct publish *p = ctx;

	return xdpctl_sbx_prog_owner(p->sbx, prog_id, name, namelen);
}

/*
 * Off its interface, nothing else: the slot stays published with its sessions and host ports,
 * so the frames towards it die in the funnel (fun_no_sandbox) until the interface is back.
 */
static void
publish_op_suspend(void *ctx, struct sandbox *sb, bool unattach)
{
	struct publish *p = ctx;

	if (!reg_is_vhost(sb))
		xdpctl_sbx_forget(p->sbx, sb->ifindex, sb->slot, unattach);
}

static void
publish_op_note(void *ctx, bool warn, const char *msg)
{
	if (warn)
		CVS_LOG(WARNING, ctl, "%s", msg);
	else
		CVS_LOG(INFO, ctl, "%s", msg);
}

static int
publish_op_check(void *ctx, const struct sandbox *sb)
{
	struct publish *p = ctx;
	uint32_t id;
	char name[32];

	if (xdpctl_prog_info(sb->ifindex, &id, NULL, 0))
		return 1;
	return xdpctl_sbx_prog_owner(p->sbx, id, name, sizeof(name)) <= 0;
}

const struct reg_ops publish_reg_ops = {
	.ifindex = publish_op_ifindex,
	.attach = publish_op_attach,
	.detach = publish_op_detach,
	.settle = publish_op_settle,
	.hostport = publish_op_hostport,
	.policy = publish_op_policy,
	.guest_mac = publish_op_guest_mac,
	.guest_ip6 = publish_op_guest_ip6,
	.mtu = publish_op_mtu,
	.limits = publish_op_limits,
	.vhost_state = publish_op_vhost_state,
	.slot_of = publish_op_slot_of,
	.prog_owner = publish_op_prog_owner,
	.suspend = publish_op_suspend,
	.check = publish_op_check,
	.note = publish_op_note,
};

/* ---- the test clock route ---- */

static void
publish_api_clock(void *ctx, const struct api_request *rq, struct api_reply *rep)
{
	json_error_t jerr;
	json_t *j = json_loadb(rq->body ? rq->body : "", rq->len, 0, &jerr);
	json_t *adv = j ? json_object_get(j, "advance") : NULL;

	if (!json_is_integer(adv) || json_integer_value(adv) < 0 ||
	    json_integer_value(adv) > 86400 * 365) {
		rep->status = 400;
		rep->json = api_error("body must be {\"advance\": seconds}");
	} else {
		rep->json = json_pack("{s:I}", "offset", (json_int_t)publish_clock_advance(ctx,
					json_integer_value(adv)));
	}
	json_decref(j);
}

int
publish_api_register(struct api_routes *t, struct publish *p)
{
	return api_register(t, "POST", "/debug/clock", API_EXACT, publish_api_clock, p);
}
