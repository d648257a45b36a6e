/* SPDX-License-Identifier: BSD-3-Clause */
/* The UMEM sizes of our AF_XDP sockets (--sandbox-umem-frames), for the socket and the CLI. */
#ifndef CVS_UMEM_H
#define CVS_UMEM_H

/* Frames of a funnel socket's UMEM: a power of two in this range. */
#define CVS_UMEM_FRAMES_DEFAULT	8192u
#define CVS_UMEM_FRAMES_MIN	512u
#define CVS_UMEM_FRAMES_MAX	16384u

/*
 * Frames of a world queue's socket with a UMEM of its own (zero-copy, or a queue workers
 * share): half wait in its fill ring (what the NIC queue can take in while the worker is
 * busy), half carry frames to the world. On its funnel's UMEM it has none of its own.
 */
#define CVS_WORLD_UMEM_FRAMES	4096u

#endif /* CVS_UMEM_H */
