// SPDX-License-Identifier: Apache-2.0
// dsnfsd's dashboard: polls the admin API every POLL_MS and draws the
// last HISTORY samples.  Rates are differences of the API's counters
// between two polls; latency is the latency_ns added over the calls done.
// Each chart's canvas carries data-points (samples drawn) and data-max
// (the largest measured value) for tests.
"use strict";

const POLL_MS = 2000;
const HISTORY = 150; // 5 minutes
const MIB = 1048576;
const COLORS = ["#1565c0", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f",
	"#c62828", "#5d4037", "#283593", "#9e9d24", "#ad1457"];

const state = {
	labels: [],
	series: { iops: {}, mibps: {}, latency: {} }, // name -> [values]
	limits: { iops: {}, mibps: {} }, // name -> [values]
	prev: {}, // key -> { at, counters }
	charts: {},
};

function el(id) { return document.getElementById(id); }

async function getJSON(path) {
	// Same-origin: the session cookie of POST /login goes with it.
	const r = await fetch(path, { cache: "no-store", credentials: "same-origin" });
	if (r.status === 401) {
		throw new Error("the session ended: reload the page to log in again");
	}
	if (!r.ok) {
		throw new Error(path + ": HTTP " + r.status);
	}
	return r.json();
}

function sumOps(c) { return c.read.ops + c.write.ops + c.other.ops; }
function sumBytes(c) { return c.read.bytes + c.write.bytes; }

// Rates of one object since its previous poll (null at its first).
function rates(key, counters, now) {
	const p = state.prev[key];
	state.prev[key] = { at: now, c: counters };
	if (!p) {
		return null;
	}
	const dt = (now - p.at) / 1000;
	if (dt <= 0) {
		return null;
	}
	const done = counters.read.done + counters.write.done -
		p.c.read.done - p.c.write.done;
	const lat = counters.read.latency_ns + counters.write.latency_ns -
		p.c.read.latency_ns - p.c.write.latency_ns;
	return {
		iops: Math.max(0, sumOps(counters) - sumOps(p.c)) / dt,
		mibps: Math.max(0, sumBytes(counters) - sumBytes(p.c)) / dt / MIB,
		latency: done > 0 ? lat / done / 1e6 : 0,
	};
}

function push(arr, v) {
	arr.push(v);
	while (arr.length > HISTORY) {
		arr.shift();
	}
}

// A series that appears late starts with nulls, so all stay aligned.
function record(group, name, v) {
	let s = group[name];
	if (!s) {
		s = group[name] = new Array(state.labels.length - 1).fill(null);
	}
	push(s, v);
}

function pad(group) {
	for (const s of Object.values(group)) {
		while (s.length < state.labels.length) {
			push(s, null);
		}
	}
}

function fmt(v, digits) {
	return v === null || v === undefined ? "-" : Number(v).toFixed(digits);
}

function bytes(n) {
	const u = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
	let i = 0;
	while (n >= 1024 && i < u.length - 1) {
		n /= 1024;
		i++;
	}
	return (i ? n.toFixed(1) : n) + " " + u[i];
}

function table(id, head, rows, raisedCol) {
	const t = el(id);
	const esc = (s) => String(s).replace(/[&<>"]/g,
		(c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
	let h = "<tr>" + head.map((x) => "<th>" + esc(x) + "</th>").join("") + "</tr>";
	for (const r of rows) {
		const cls = raisedCol !== undefined && r[raisedCol] ? ' class="raised"' : "";
		h += "<tr" + cls + ">" + r.filter((_, i) => i !== raisedCol)
			.map((x) => "<td>" + esc(x) + "</td>").join("") + "</tr>";
	}
	t.innerHTML = h;
}

function datasets(kind) {
	const out = [];
	let i = 0;
	for (const [name, data] of Object.entries(state.series[kind])) {
		const color = COLORS[i++ % COLORS.length];
		out.push({ label: name, data: data, borderColor: color,
			backgroundColor: color, pointRadius: 0, borderWidth: 2,
			spanGaps: true });
		const lim = state.limits[kind] && state.limits[kind][name];
		if (lim && lim.some((v) => v)) {
			out.push({ label: name + " limit", data: lim, borderColor: color,
				borderDash: [6, 4], pointRadius: 0, borderWidth: 1.5,
				fill: false, spanGaps: true });
		}
	}
	return out;
}

function drawCharts() {
	for (const kind of ["iops", "mibps", "latency"]) {
		const canvas = el("chart-" + kind);
		let max = 0;
		for (const s of Object.values(state.series[kind])) {
			for (const v of s) {
				if (v > max) {
					max = v;
				}
			}
		}
		canvas.dataset.points = String(state.labels.length);
		canvas.dataset.max = String(max);
		if (typeof Chart === "undefined") {
			continue;
		}
		let c = state.charts[kind];
		if (!c) {
			c = state.charts[kind] = new Chart(canvas, {
				type: "line",
				data: { labels: state.labels, datasets: [] },
				options: {
					animation: false, responsive: true,
					maintainAspectRatio: false,
					interaction: { mode: "index", intersect: false },
					scales: { y: { beginAtZero: true },
						x: { ticks: { maxTicksLimit: 6 } } },
					plugins: { legend: { labels: { boxWidth: 12 } } },
				},
			});
		}
		c.data.labels = state.labels;
		c.data.datasets = datasets(kind);
		c.update("none");
	}
}

async function poll() {
	const now = Date.now();
	const [vols, pools, flows, hosts, alarms, caps] = await Promise.all([
		getJSON("/volumes"), getJSON("/pools"), getJSON("/flows"),
		getJSON("/hosts"), getJSON("/alarms"), getJSON("/caps")]);
	push(state.labels, new Date(now).toLocaleTimeString([], { hour12: false }));
	const volRate = {};
	for (const v of vols.volumes) {
		const r = rates("v:" + v.name, v.counters, now);
		volRate[v.name] = r;
		if (r) {
			record(state.series.iops, v.name, r.iops);
			record(state.series.mibps, v.name, r.mibps);
			record(state.series.latency, v.name, r.latency);
		}
		const iopsCap = caps.volume_iops ? caps.volume_iops * caps.scale : null;
		record(state.limits.iops, v.name, iopsCap);
		record(state.limits.mibps, v.name, v.traffic_limit_bytes_per_s ?
			v.traffic_limit_bytes_per_s / MIB : null);
	}
	const poolRate = {};
	for (const p of pools.pools) {
		const r = rates("p:" + p.name, p.counters, now);
		poolRate[p.name] = r;
		if (r) {
			record(state.series.mibps, "pool " + p.name, r.mibps);
		}
		record(state.limits.mibps, "pool " + p.name, p.throughput_mibps * caps.scale);
	}
	for (const g of [state.series.iops, state.series.mibps,
		state.series.latency, state.limits.iops, state.limits.mibps]) {
		pad(g);
	}
	const rate = (key, c) => rates(key, c, now) || {};
	table("t-volumes", ["volume", "pool", "level", "quota", "used",
		"limit MiB/s", "IOPS", "MiB/s", "latency ms"],
	vols.volumes.map((v) => {
		const r = volRate[v.name] || {};
		return [v.name, v.pool || "-", v.level || "-",
			v.quota_bytes ? bytes(v.quota_bytes) : "-", bytes(v.used_bytes),
			v.traffic_limit_bytes_per_s ? fmt(v.traffic_limit_bytes_per_s / MIB, 1) : "-",
			fmt(r.iops, 0), fmt(r.mibps, 2), fmt(r.latency, 2)];
	}));
	table("t-pools", ["pool", "level", "QoS", "size", "throughput MiB/s",
		"allocated", "used", "MiB/s"],
	pools.pools.map((p) => [p.name, p.level, p.qos, p.size_tib + " TiB",
		fmt(p.throughput_mibps * caps.scale, 1), bytes(p.allocated_bytes),
		bytes(p.used_bytes), fmt((poolRate[p.name] || {}).mibps, 2)]));
	table("t-flows", ["flow", "host", "port", "volume", "queued",
		"cap MiB/s", "IOPS", "MiB/s"],
	flows.flows.map((f) => {
		const r = rate("f:" + f.id, f.counters);
		return [f.id, f.host, f.port, f.volume, f.queued,
			f.cap_bytes_per_s ? fmt(f.cap_bytes_per_s / MIB, 1) : "-",
			fmt(r.iops, 0), fmt(r.mibps, 2)];
	}));
	// nConnect groups: one ESXi host's connections to one datastore, and
	// the connections that carry several datastores (SunRPC.MaxConnPerIP)
	table("t-nconnect", ["host", "volume", "connections", "client ports"],
		flows.nconnect.map((g) => [g.host, g.volume, g.connections,
			g.ports.join(" ")]));
	table("t-shared", ["host", "client port", "datastores", "volumes"],
		flows.connections.filter((c) => c.datastores > 1).map((c) =>
			[c.host, c.port, c.datastores, c.volumes.join(" ")]));
	table("t-hosts", ["host", "flows", "busy", "cap MiB/s", "IOPS", "MiB/s"],
		hosts.hosts.map((h) => {
			const r = rate("h:" + h.host, h.counters);
			return [h.host, h.flows, h.busy_flows,
				h.cap_bytes_per_s ? fmt(h.cap_bytes_per_s / MIB, 1) : "-",
				fmt(r.iops, 0), fmt(r.mibps, 2)];
		}));
	const raised = [];
	table("t-alarms", ["volume", "usage %", "overallocation %", "scanned"],
		alarms.alarms.map((a) => {
			const up = a.usage.raised || a.overallocation.raised;
			if (a.usage.raised) {
				raised.push(a.volume + ": usage " + fmt(a.usage.percent, 1) + "%");
			}
			if (a.overallocation.raised) {
				raised.push(a.volume + ": overallocation " +
					fmt(a.overallocation.percent, 1) + "%");
			}
			return [a.volume, fmt(a.usage.percent, 1) + " / " + a.usage.threshold_percent,
				fmt(a.overallocation.percent, 1) + " / " + a.overallocation.threshold_percent,
				a.scanned_at || "-", up];
		}), 4);
	el("alarmbar").innerHTML = raised.length ?
		raised.map((s) => '<span class="alarm">' + s.replace(/</g, "&lt;") + "</span>").join("") :
		'<span class="ok">no alarm raised</span>';
	drawCharts();
}

async function loop() {
	try {
		await poll();
		el("status").textContent = "live, every " + POLL_MS / 1000 + " s; " +
			new Date().toLocaleTimeString([], { hour12: false });
	} catch (e) {
		// The server went away or restarted: say so and keep trying.
		el("status").textContent = "no answer from dsnfsd: " + e.message;
	}
	setTimeout(loop, POLL_MS);
}

if (typeof Chart === "undefined") {
	el("nochart").style.display = "block";
}
loop();
