/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Path MTU handling of an IPv4 NAT, per packet: lowering the MSS a TCP SYN announces, the ICMP
 * "fragmentation needed" answer to a DF datagram too large for the next hop (RFC 1191), and the
 * fragmentation of one without DF (RFC 791). Plain byte buffers that start at the Ethernet
 * header; no allocation, no syscall, nothing read or written outside the lengths given.
 */
#ifndef CVS_MTU_H
#define CVS_MTU_H

#include <stdint.h>

#include "pkt.h"

/* The smallest MTU every IPv4 link must carry (RFC 791): a 60-byte header and 8 bytes of data. */
#define MTU_MIN		68
/*
 * The datagram every host must accept (RFC 791, RFC 1812 4.3.2.3): an ICMP error quotes as much
 * of the offending datagram as fits in it, as Linux does (548 bytes after 20 + 8 of headers).
 */
#define MTU_ICMP_MAX	576
#define MTU_QUOTE_MAX	(MTU_ICMP_MAX - 20 - 8)
/* Ethernet + IPv4 + ICMP headers of the answer mtu_frag_needed() builds. */
#define MTU_ICMP_HLEN	(ETH_HLEN_ + 20 + 8)

/*
 * Lower the MSS option of a TCP SYN (or SYN+ACK) of parsed frame 'p' to 'mss_max' when it
 * announces more, updating the TCP checksum incrementally: a complete checksum is expected, so
 * pkt_csum_complete() runs first, as before nat_rewrite(). Every MSS option is clamped, should
 * there be several. A malformed option list (a length under 2 or past the header, an MSS option
 * not 4 bytes long) leaves the frame as it is, and so does a SYN without an MSS option (the
 * peer then assumes 536, RFC 879). Returns 1 when the frame changed, 0 otherwise.
 */
int mtu_clamp_mss(struct pkt *p, uint16_t mss_max);

/*
 * Build into 'out' ('room' bytes) the ICMP "fragmentation needed and DF set" (type 3, code 4,
 * with 'next_mtu' in the second half of the unused word, RFC 1191) that answers 'frame' ('len'
 * bytes, Ethernet + IPv4): to the frame's IP source from 'src_ip', Ethernet 'src_mac' to
 * 'dst_mac', TTL 64, DF clear, id 0. It quotes the datagram from its IP header on, up to
 * MTU_QUOTE_MAX bytes (less when 'room' is smaller, never less than the header and 8 bytes of
 * data). 'out' may be the frame's own buffer (then 'room' is that buffer's size); the MAC
 * addresses may point into it. Whether the frame has DF set is the caller's question.
 *
 * Returns the answer's length, or 0 (nothing written) for a frame that is not IPv4, is shorter
 * than its header and 8 bytes of data, is an ICMP error itself (RFC 1122 3.2.2: types 3, 4, 5,
 * 11, 12, or an ICMP message too short to tell), a fragment other than the first, comes from
 * an address that is not one host's (the answer would reach a group), or was sent to an
 * Ethernet group address (RFC 1122 3.2.2); or when the answer does not fit in 'room'.
 */
uint32_t mtu_frag_needed(uint8_t *out, uint32_t room, const uint8_t *frame, uint32_t len,
			 uint32_t src_ip, uint16_t next_mtu, const uint8_t *src_mac,
			 const uint8_t *dst_mac);

/*
 * Split 'frame' ('len' bytes, Ethernet + IPv4 with DF clear) into fragments of at most 'mtu'
 * bytes of IP datagram, each a complete frame in one of the 'nouts' buffers of 'outs' ('room'
 * bytes each), its length in 'lens'. Each has the frame's Ethernet header and IP header with
 * the total length, MF, offset and header checksum of its own; the data of all but the last is
 * a multiple of 8 bytes. A frame that is already a fragment keeps its place: its offset is
 * added, and its MF carries over to the last piece. IP options are kept, with the same header
 * length in every fragment: those without the copy flag become NOPs in fragments other than
 * the datagram's first (RFC 791, as Linux does); a malformed option list refuses the frame.
 * The L4 checksum is not touched: it covers the reassembled datagram.
 *
 * A datagram of 'mtu' bytes or less is copied as it is, as one fragment. Returns the number of
 * fragments, or 0, nothing written, when it cannot: DF set, 'mtu' under MTU_MIN, more fragments
 * than 'nouts', a fragment larger than 'room', or a frame that is not a valid IPv4 datagram
 * (or one reaching past 65,535 bytes once reassembled).
 */
uint32_t mtu_fragment(const uint8_t *frame, uint32_t len, uint32_t mtu, uint8_t *const *outs,
		      uint32_t nouts, uint32_t room, uint32_t *lens);

#endif /* CVS_MTU_H */
