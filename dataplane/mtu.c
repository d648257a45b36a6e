/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Path MTU handling: MSS clamping, "fragmentation needed" answers, fragmentation. Per packet.
 *
 * Each function checks every length it reads against the one it was given before it writes
 * anything, so that a frame it refuses is left as it came and no output buffer is half built.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>

#include "csum.h"
#include "mtu.h"

#define TCPOPT_EOL	0
#define TCPOPT_NOP	1
#define TCPOPT_MSS	2

#define IPOPT_EOL	0
#define IPOPT_NOP	1
#define IPOPT_COPY	0x80

#define IP_DF		0x4000
#define IP_MF		0x2000
#define IP_OFFMASK	0x1fff

#define ICMP_FRAG_NEEDED_	4
/* The highest type RFC 792 and its successors assign; Linux answers nothing above it. */
#define ICMP_TYPE_MAX_	18

/*
 * Write 'mss' into the MSS option at offset 'i' of TCP header 'th'. The checksum adds 16-bit
 * words from the header's start; a value at an odd offset has its bytes in the second half of
 * one word and the first half of the next, where they add up as the value with its bytes
 * swapped (RFC 1071: the sum commutes with byte swapping), in either host order.
 */
static void
mtu_mss_set(uint8_t *th, uint32_t i, uint16_t mss)
{
	uint16_t from, to = htons(mss);

	memcpy(&from, th + i + 2, 2);
	memcpy(th + i + 2, &to, 2);
	if ((i + 2) & 1) {
		from = __builtin_bswap16(from);
		to = __builtin_bswap16(to);
	}
	csum_replace2(&((struct tcp_hdr *)th)->check, from, to);
}

/*
 * Walk the options of TCP header 'th' ('doff' bytes long, all of them readable). Returns how
 * many MSS options announce more than 'mss_max', lowered to it when 'write'; or -1 when the
 * list is malformed. Options after an EOL are padding and do not count.
 */
static int
mtu_mss_walk(uint8_t *th, uint32_t doff, uint16_t mss_max, bool write)
{
	uint32_t i = sizeof(struct tcp_hdr), olen;
	int n = 0;

	while (i < doff) {
		if (th[i] == TCPOPT_EOL)
			break;
		if (th[i] == TCPOPT_NOP) {
			i++;
			continue;
		}
		/* A kind in the last byte has no room for its length. */
		if (i + 1 >= doff)
			return -1;
		olen = th[i + 1];
		if (olen < 2 || olen > doff - i)
			return -1;
		if (th[i] == TCPOPT_MSS) {
			if (olen != 4)
				return -1;
			if (((uint32_t)th[i + 2] << 8 | th[i + 3]) > mss_max) {
				n++;
				if (write)
					mtu_mss_set(th, i, mss_max);
			}
		}
		i += olen;
	}
	return n;
}

int
mtu_clamp_mss(struct pkt *p, uint16_t mss_max)
{
	struct tcp_hdr *th = (struct tcp_hdr *)(p->data + p->l4_off);
	uint32_t doff;

	if ((p->kind != PKT_IPV4 && p->kind != PKT_IPV6) || p->proto != IPPROTO_TCP_ ||
	    (uint32_t)p->l4_off + sizeof(*th) > p->len)
		return 0;
	/* The MSS is announced only on SYNs; elsewhere the option means nothing (RFC 9293). */
	if (!(th->flags & TCPF_SYN))
		return 0;
	doff = (th->doff >> 4) * 4u;
	if (doff > p->len - p->l4_off)
		return 0;
	/* The whole list is read before anything is written: a list we cannot read stays as is. */
	if (mtu_mss_walk((uint8_t *)th, doff, mss_max, false) <= 0)
		return 0;
	mtu_mss_walk((uint8_t *)th, doff, mss_max, true);
	return 1;
}

/*
 * The IPv4 header of Ethernet frame 'frame' ('len' bytes), its length in *ihl and the
 * datagram's in *tot (Ethernet padding after it left out); NULL when it is not a whole one.
 */
static const struct ip4_hdr *
mtu_ip4(const uint8_t *frame, uint32_t len, uint32_t *ihl, uint32_t *tot)
{
	const struct eth_hdr *eth = (const struct eth_hdr *)frame;
	const struct ip4_hdr *ip = (const struct ip4_hdr *)(frame + ETH_HLEN_);

	if (len < ETH_HLEN_ + sizeof(*ip) || eth->type != htons(ETHTYPE_IPV4))
		return NULL;
	*ihl = (ip->ver_ihl & 15) * 4u;
	*tot = ntohs(ip->tot_len);
	if ((ip->ver_ihl >> 4) != 4 || *ihl < sizeof(*ip) || *tot < *ihl ||
	    *tot > len - ETH_HLEN_)
		return NULL;
	return ip;
}

/*
 * Whether a datagram may get an ICMP error (RFC 1122 3.2.2, RFC 1812 4.3.2.7): not one sent
 * to an Ethernet group, not one from an address that is not one host's (0/8, 127/8, multicast,
 * 240/4 and broadcast: the answer would go nowhere or to many), not a fragment other than the
 * first (the first alone quotes the ports), and never an ICMP error itself, lest two routers
 * answer each other's errors. An unknown ICMP type may be an error: Linux refuses those too.
 * 'in' has its header and 8 bytes of data.
 */
static bool
mtu_answerable(const uint8_t *frame, const struct ip4_hdr *in, uint32_t ihl)
{
	if ((frame[0] & 1) || !pkt_src_unicast(in->saddr))
		return false;
	if (in->frag_off & htons(IP_OFFMASK))
		return false;
	if (in->proto != IPPROTO_ICMP_)
		return true;
	switch (((const uint8_t *)in)[ihl]) {
	case 3:		/* destination unreachable */
	case 4:		/* source quench */
	case 5:		/* redirect */
	case 11:	/* time exceeded */
	case 12:	/* parameter problem */
		return false;
	}
	return ((const uint8_t *)in)[ihl] <= ICMP_TYPE_MAX_;
}

uint32_t
mtu_frag_needed(uint8_t *out, uint32_t room, const uint8_t *frame, uint32_t len,
		uint32_t src_ip, uint16_t next_mtu, const uint8_t *src_mac, const uint8_t *dst_mac)
{
	struct ip4_hdr *ip = (struct ip4_hdr *)(out + ETH_HLEN_);
	struct icmp_hdr *ih = (struct icmp_hdr *)(out + ETH_HLEN_ + sizeof(*ip));
	const struct ip4_hdr *in;
	uint32_t ihl, tot, q, daddr;
	uint8_t macs[12];

	in = mtu_ip4(frame, len, &ihl, &tot);
	if (!in || tot < ihl + 8 || !mtu_answerable(frame, in, ihl))
		return 0;
	if (room < MTU_ICMP_HLEN + ihl + 8)
		return 0;
	q = tot < MTU_QUOTE_MAX ? tot : MTU_QUOTE_MAX;
	if (q > room - MTU_ICMP_HLEN)
		q = room - MTU_ICMP_HLEN;
	/*
	 * Built in the frame's own buffer, the quote moves 28 bytes up, over what the new headers
	 * leave of the old ones, and those are written after: what they need is read first, the
	 * MAC addresses too, which the caller may have pointed into the frame.
	 */
	daddr = in->saddr;
	memcpy(macs, dst_mac, 6);
	memcpy(macs + 6, src_mac, 6);
	memmove(out + MTU_ICMP_HLEN, frame + ETH_HLEN_, q);
	memcpy(out, macs, 12);
	((struct eth_hdr *)out)->type = htons(ETHTYPE_IPV4);

	memset(ip, 0, sizeof(*ip));
	ip->ver_ihl = 0x45;
	/* Internet control precedence (CS6), as Linux marks the errors it sends. */
	ip->tos = 0xc0;
	ip->tot_len = htons((uint16_t)(sizeof(*ip) + 8 + q));
	ip->ttl = 64;
	ip->proto = IPPROTO_ICMP_;
	ip->saddr = src_ip;
	ip->daddr = daddr;
	ip->check = (uint16_t)~csum_fold(csum_partial(ip, sizeof(*ip), 0));

	/* RFC 1191: the unused word's first half stays 0, the next-hop MTU is its second. */
	ih->type = ICMP_UNREACH_;
	ih->code = ICMP_FRAG_NEEDED_;
	ih->check = 0;
	ih->id = 0;
	ih->seq = htons(next_mtu);
	ih->check = (uint16_t)~csum_fold(csum_partial(ih, 8 + q, 0));
	return MTU_ICMP_HLEN + q;
}

/*
 * Walk IPv4 options 'opt' ('n' bytes); false when the list is malformed. With 'strip' (which
 * may be 'opt' itself), the options without the copy flag become NOPs there: the header of a
 * fragment other than the first keeps its length, so every fragment carries as much data.
 */
static bool
mtu_ip_opts(const uint8_t *opt, uint32_t n, uint8_t *strip)
{
	uint32_t i = 0, olen;

	while (i < n) {
		if (opt[i] == IPOPT_EOL)
			return true;
		if (opt[i] == IPOPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= n)
			return false;
		olen = opt[i + 1];
		if (olen < 2 || olen > n - i)
			return false;
		if (strip && !(opt[i] & IPOPT_COPY))
			memset(strip + i, IPOPT_NOP, olen);
		i += olen;
	}
	return true;
}

uint32_t
mtu_fragment(const uint8_t *frame, uint32_t len, uint32_t mtu, uint8_t *const *outs,
	     uint32_t nouts, uint32_t room, uint32_t *lens)
{
	const struct ip4_hdr *in;
	uint32_t ihl, tot, pay, step, n, base, k;
	uint16_t fo;

	in = mtu_ip4(frame, len, &ihl, &tot);
	if (!in || mtu < MTU_MIN || !nouts)
		return 0;
	if (tot <= mtu) {
		if (room < ETH_HLEN_ + tot)
			return 0;
		memcpy(outs[0], frame, ETH_HLEN_ + tot);
		lens[0] = ETH_HLEN_ + tot;
		return 1;
	}
	fo = ntohs(in->frag_off);
	if (fo & IP_DF)
		return 0;
	pay = tot - ihl;
	base = (fo & IP_OFFMASK) * 8u;
	/* At least 8: MTU_MIN holds the largest header and 8 bytes of data. */
	step = (mtu - ihl) & ~7u;
	n = (pay + step - 1) / step;
	/* The first fragment is the largest: tot > mtu, so the data is more than one step. */
	if (n > nouts || room < ETH_HLEN_ + ihl + step)
		return 0;
	/* Reassembled, it would be larger than a datagram can be (the "ping of death"). */
	if (ihl + base + pay > 0xffff)
		return 0;
	if (!mtu_ip_opts((const uint8_t *)(in + 1), ihl - sizeof(*in), NULL))
		return 0;
	for (k = 0; k < n; k++) {
		uint8_t *o = outs[k];
		struct ip4_hdr *ip = (struct ip4_hdr *)(o + ETH_HLEN_);
		uint32_t at = k * step, chunk = pay - at < step ? pay - at : step;
		/* The reserved bit and incoming MF stay: the last piece ends as the frame did. */
		uint16_t f = (uint16_t)((fo & ~IP_OFFMASK) | (base + at) / 8);

		if (k + 1 < n)
			f |= IP_MF;
		memcpy(o, frame, ETH_HLEN_ + ihl);
		memcpy(o + ETH_HLEN_ + ihl, frame + ETH_HLEN_ + ihl + at, chunk);
		ip->tot_len = htons((uint16_t)(ihl + chunk));
		ip->frag_off = htons(f);
		if (base + at)
			mtu_ip_opts((uint8_t *)(ip + 1), ihl - sizeof(*ip), (uint8_t *)(ip + 1));
		ip->check = 0;
		ip->check = (uint16_t)~csum_fold(csum_partial(ip, ihl, 0));
		lens[k] = ETH_HLEN_ + ihl + chunk;
	}
	return n;
}
