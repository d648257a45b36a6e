#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# gwbench's table from its results file (run.sh writes it: "trial target metric value" per
# line): each cell is the median of the trials and, with more than one, their range; "added"
# is a gateway's figure less the server alone's in the same trial; ratios are of the medians.
#   OPEN=N OPEN_OURS=N report.sh RESULTS TARGET...   (the session counts, for the labels)
set -u
RES=$1
shift
awk -v targets="$*" -v open="${OPEN:-200}" -v open_ours="${OPEN_OURS:-1000}" '
function sortv(a, n,    i, j, x) {
	for (i = 2; i <= n; i++) {
		x = a[i]
		for (j = i - 1; j >= 1 && a[j] > x; j--)
			a[j + 1] = a[j]
		a[j + 1] = x
	}
}
# The values of key k (target SUBSEP metric) over the trials, into a[]; their count.
function vals(k, a,    n, i, parts) {
	if (!(k in list))
		return 0
	n = split(list[k], parts, " ")
	for (i = 1; i <= n; i++)
		a[i] = parts[i] + 0
	sortv(a, n)
	return n
}
function med(k,    a, n) {
	n = vals(k, a)
	if (!n)
		return ""
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function cell(k, scale, fmt,    a, n, m) {
	n = vals(k, a)
	if (!n)
		return "-"
	m = med(k)
	if (n == 1)
		return sprintf(fmt, m / scale)
	return sprintf(fmt " (" fmt "-" fmt ")", m / scale, a[1] / scale, a[n] / scale)
}
function row(label, metric, scale, fmt, withserver,    i, s) {
	s = "| " label " |"
	for (i = 1; i <= nt; i++)
		s = s " " cell(T[i] SUBSEP metric, scale, fmt) " |"
	if (withserver)
		s = s " " cell("server" SUBSEP metric, scale, fmt) " |"
	else if (hasserver)
		s = s " |"
	print s
}
function ratio(label, metric, peer_over_ours,    i, o, p, s) {
	s = "| " label " |"
	o = med("ours" SUBSEP metric)
	for (i = 1; i <= nt; i++) {
		if (T[i] == "ours")
			continue
		p = med(T[i] SUBSEP metric)
		if (o == "" || p == "" || (peer_over_ours ? o : p) <= 0)
			s = s " - |"
		else
			s = s sprintf(" %.1fx |", peer_over_ours ? p / o : o / p)
	}
	print s
}
{
	if ($4 == "NA")
		next
	list[$2 SUBSEP $3] = list[$2 SUBSEP $3] " " $4
	v[$1, $2, $3] = $4
	trial[$1] = 1
}
END {
	nt = split(targets, T, " ")
	name["ours"] = "mcp-gateway"
	name["supergateway"] = "supergateway"
	name["mcp-proxy"] = "mcp-proxy"
	# added = the gateway less the server alone, per trial.
	for (tr in trial)
		for (i = 1; i <= nt; i++)
			for (q = 1; q <= 2; q++) {
				m = q == 1 ? "p50" : "p99"
				if ((tr, T[i], m) in v && (tr, "server", m) in v)
					list[T[i] SUBSEP "add_" m] = list[T[i] SUBSEP "add_" m] " " \
						(v[tr, T[i], m] - v[tr, "server", m])
			}
	hasserver = ("server" SUBSEP "p50") in list
	s = "| |"
	d = "|---|"
	for (i = 1; i <= nt; i++) {
		s = s " " name[T[i]] " |"
		d = d "---|"
	}
	if (hasserver) {
		s = s " the server alone |"
		d = d "---|"
	}
	print s
	print d
	row("added over the server alone, tools/call p50 (us)", "add_p50", 1, "%.0f", 0)
	row("added over the server alone, tools/call p99 (us)", "add_p99", 1, "%.0f", 0)
	row("tools/call p50 from one session (us)", "p50", 1, "%.0f", 1)
	row("tools/call p99 from one session (us)", "p99", 1, "%.0f", 1)
	row("calls/s at 32 sessions", "rate", 1, "%.0f", 1)
	row("CPU per call, the gateway alone (us)", "cpu", 1, "%.0f", 0)
	row("idle RSS (MiB)", "idle_rss", 1024, "%.1f", 0)
	row("RSS with " open " open sessions (MiB)", "s200_rss", 1024, "%.1f", 0)
	row("same, with the servers it started (MiB)", "s200_rss_all", 1024, "%.0f", 0)
	row("processes with " open " open sessions", "s200_procs", 1, "%.0f", 0)
	row("threads with " open " open sessions", "s200_threads", 1, "%.0f", 0)
	row("sessions opened of " open, "s200_open", 1, "%.0f", 0)
	if (("ours" SUBSEP "s1000_rss") in list) {
		print ""
		print "| mcp-gateway, " open_ours " sessions | POST connections only | with a GET stream each |"
		print "|---|---|---|"
		print "| sessions opened | " cell("ours" SUBSEP "s1000_open", 1, "%.0f") " | " \
			cell("ours" SUBSEP "s1000sse_open", 1, "%.0f") " |"
		print "| RSS (MiB) | " cell("ours" SUBSEP "s1000_rss", 1024, "%.1f") " | " \
			cell("ours" SUBSEP "s1000sse_rss", 1024, "%.1f") " |"
		print "| threads | " cell("ours" SUBSEP "s1000_threads", 1, "%.0f") " | " \
			cell("ours" SUBSEP "s1000sse_threads", 1, "%.0f") " |"
	}
	if (("ours" SUBSEP "cpu_idle") in list) {
		print ""
		print "| mcp-gateway, 32 sessions calling | CPU per call (us) | calls/s |"
		print "|---|---|---|"
		print "| alone | " cell("ours" SUBSEP "cpu", 1, "%.0f") " | " \
			cell("ours" SUBSEP "rate", 1, "%.0f") " |"
		print "| among " open_ours " idle sessions | " cell("ours" SUBSEP "cpu_idle", 1, "%.0f") \
			" | " cell("ours" SUBSEP "rate_idle", 1, "%.0f") " |"
		print "| among " open_ours " idle sessions, a GET stream each | " \
			cell("ours" SUBSEP "cpu_idlesse", 1, "%.0f") " | " \
			cell("ours" SUBSEP "rate_idlesse", 1, "%.0f") " |"
		print "| headers and body in two writes | " cell("ours" SUBSEP "cpu_split", 1, "%.0f") \
			" | " cell("ours" SUBSEP "rate_split", 1, "%.0f") " |"
	}
	if (!(("ours" SUBSEP "rate") in list) || nt < 2)
		exit
	print ""
	s = "| mcp-gateway against | "
	d = "|---|"
	for (i = 1; i <= nt; i++)
		if (T[i] != "ours") {
			s = s name[T[i]] " |"
			d = d "---|"
		}
	print s
	print d
	ratio("added p50: theirs / ours", "add_p50", 1)
	ratio("added p99: theirs / ours", "add_p99", 1)
	ratio("calls/s at 32 sessions: ours / theirs", "rate", 0)
	ratio("CPU per call: theirs / ours", "cpu", 1)
	ratio("idle RSS: theirs / ours", "idle_rss", 1)
	ratio("RSS with " open " sessions: theirs / ours", "s200_rss", 1)
}' "$RES"
