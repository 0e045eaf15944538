// SPDX-License-Identifier: Apache-2.0
/*
 * esxi: ESXi's NFSv3 client rules (esxi.h): its connection limits, how
 * datastores share connections past SunRPC.MaxConnPerIP, and the
 * heartbeat / APD state machine of one mounted datastore.
 */
#include "perf/dsload/esxi.h"

#include <errno.h>
#include <stdio.h>

void esxi_conf_default(struct esxi_conf *c)
{
	c->version = 8;
	c->max_conns_per_ds = ESXI_NCONNECT_DEFAULT_MAX;
	c->max_conn_per_ip = ESXI_CONN_PER_IP_DEFAULT;
	c->timer_scale = 1.0;
	c->hb_delta_s = 5.0;
	c->hb_frequency_s = 12.0;
	c->hb_timeout_s = 5.0;
	c->hb_max_failures = 10;
	c->apd_start_count = 3;
	c->apd_timeout_s = 140.0;
	c->lck_refresh_s = 10.0;
}

static int esxi_conf_check_settings(const struct esxi_conf *c, char *errbuf,
				    size_t errlen)
{
	if (c->version != 7 && c->version != 8) {
		snprintf(errbuf, errlen,
			 "--esxi %u: dsload follows ESXi 7 or 8", c->version);
		return -EINVAL;
	}
	if (c->max_conns_per_ds < 1 ||
	    c->max_conns_per_ds > ESXI_NCONNECT_MAX) {
		snprintf(errbuf, errlen,
			 "--max-connections-per-datastore %u: "
			 "/NFS/MaxConnectionsPerDatastore goes from 1 to %u",
			 c->max_conns_per_ds, ESXI_NCONNECT_MAX);
		return -EINVAL;
	}
	if (c->max_conn_per_ip < 1 ||
	    c->max_conn_per_ip > ESXI_CONN_PER_IP_MAX) {
		snprintf(errbuf, errlen,
			 "--max-conn-per-ip %u: SunRPC.MaxConnPerIP goes from "
			 "1 to %u",
			 c->max_conn_per_ip, ESXI_CONN_PER_IP_MAX);
		return -EINVAL;
	}
	if (!(c->timer_scale > 0.0) || c->timer_scale > 10.0) {
		snprintf(errbuf, errlen,
			 "--esxi-timer-scale %g: a factor above 0, at most 10",
			 c->timer_scale);
		return -EINVAL;
	}
	if (c->apd_start_count < 1 || c->hb_max_failures < 1) {
		snprintf(errbuf, errlen,
			 "ApdStartCount and HeartbeatMaxFailures are at "
			 "least 1");
		return -EINVAL;
	}
	return 0;
}

int esxi_conf_check(const struct esxi_conf *c, unsigned nconnect,
		    unsigned ndatastores, char *errbuf, size_t errlen)
{
	int err = esxi_conf_check_settings(c, errbuf, errlen);

	if (err) {
		return err;
	}
	if (nconnect < 1) {
		snprintf(errbuf, errlen, "--nconnect 0: at least 1");
		return -EINVAL;
	}
	if (c->version == 7 && nconnect > 1) {
		snprintf(errbuf, errlen,
			 "--nconnect %u: ESXi 7 opens one connection per "
			 "NFSv3 datastore (nConnect, esxcli storage nfs add "
			 "-c, came with ESXi 8.0U1); use --esxi 8",
			 nconnect);
		return -EINVAL;
	}
	if (nconnect > ESXI_NCONNECT_MAX) {
		snprintf(
			errbuf, errlen,
			"--nconnect %u: ESXi 8 allows at most %u connections "
			"per datastore (/NFS/MaxConnectionsPerDatastore at its "
			"largest)",
			nconnect, ESXI_NCONNECT_MAX);
		return -EINVAL;
	}
	if (nconnect > c->max_conns_per_ds) {
		snprintf(errbuf, errlen,
			 "--nconnect %u: above /NFS/MaxConnectionsPerDatastore "
			 "(%u); raise it with --max-connections-per-datastore "
			 "%u (esxcfg-advcfg -s %u "
			 "/NFS/MaxConnectionsPerDatastore)",
			 nconnect, c->max_conns_per_ds, nconnect, nconnect);
		return -EINVAL;
	}
	if ((uint64_t)nconnect * ndatastores > ESXI_HOST_CONN_MAX) {
		snprintf(errbuf, errlen,
			 "%u datastore(s) x nconnect %u = %u connections: "
			 "above the %u NFSv3 connections of one ESXi host",
			 ndatastores, nconnect, ndatastores * nconnect,
			 ESXI_HOST_CONN_MAX);
		return -EINVAL;
	}
	return 0;
}

unsigned esxi_conn_plan(const struct esxi_conf *c, unsigned nconnect,
			unsigned ndatastores, unsigned *map)
{
	unsigned nconns = 0, next_shared = 0;

	for (unsigned d = 0; d < ndatastores; d++) {
		for (unsigned i = 0; i < nconnect; i++) {
			unsigned *slot = &map[d * nconnect + i];

			if (nconns < c->max_conn_per_ip) {
				*slot = nconns++;
			} else {
				/* Consecutive ones: a datastore's nConnect
				 * connections stay distinct while it has
				 * no more of them than there are open. */
				*slot = next_shared;
				next_shared = (next_shared + 1) % nconns;
			}
		}
	}
	return nconns;
}

unsigned esxi_conn_shared(const unsigned *map, unsigned nconnect,
			  unsigned ndatastores, unsigned nconns)
{
	unsigned shared = 0;

	(void)nconns;
	for (unsigned d = 0; d < ndatastores; d++) {
		bool sharing = false;

		for (unsigned e = 0; e < ndatastores && !sharing; e++) {
			for (unsigned i = 0; e != d && i < nconnect && !sharing;
			     i++) {
				for (unsigned k = 0; k < nconnect; k++) {
					if (map[d * nconnect + i] ==
					    map[e * nconnect + k]) {
						sharing = true;
						break;
					}
				}
			}
		}
		shared += sharing;
	}
	return shared;
}

static int64_t esxi_ns(double s, double scale)
{
	return (int64_t)(s * scale * 1e9);
}

void esxi_timers_get(const struct esxi_conf *c, struct esxi_timers *t)
{
	t->delta_ns = esxi_ns(c->hb_delta_s, c->timer_scale);
	t->frequency_ns = esxi_ns(c->hb_frequency_s, c->timer_scale);
	t->timeout_ns = esxi_ns(c->hb_timeout_s, c->timer_scale);
	t->apd_timeout_ns = esxi_ns(c->apd_timeout_s, c->timer_scale);
	t->lck_ns = esxi_ns(c->lck_refresh_s, c->timer_scale);
	t->max_failures = c->hb_max_failures;
	t->apd_start_count = c->apd_start_count;
}

void esxi_hb_init(struct esxi_hb *hb, const struct esxi_timers *t,
		  int64_t now_ns)
{
	*hb = (struct esxi_hb){ .t = *t, .last_ok_ns = now_ns };
}

bool esxi_hb_tick(struct esxi_hb *hb, int64_t now_ns)
{
	if (hb->state != ESXI_VOL_UP && !hb->apd_timed_out &&
	    now_ns - hb->apd_start_ns >= hb->t.apd_timeout_ns) {
		hb->apd_timed_out = true;
		hb->c.apd_timeouts++;
	}
	if (hb->inflight) {
		return false;
	}
	/* An unavailable volume is asked on every run, a healthy one once
	 * nothing succeeded for HeartbeatDelta. */
	return hb->failures > 0 || now_ns - hb->last_ok_ns >= hb->t.delta_ns;
}

void esxi_hb_sent(struct esxi_hb *hb, int64_t now_ns)
{
	hb->inflight = true;
	hb->sent_ns = now_ns;
	hb->c.sent++;
}

bool esxi_hb_expired(const struct esxi_hb *hb, int64_t now_ns)
{
	return hb->inflight && now_ns - hb->sent_ns >= hb->t.timeout_ns;
}

void esxi_hb_result(struct esxi_hb *hb, bool ok, int64_t now_ns)
{
	hb->inflight = false;
	if (ok) {
		hb->c.ok++;
		if (hb->failures) {
			int64_t out = now_ns - hb->first_fail_ns;

			hb->c.recoveries++;
			if (out > hb->c.outage_max_ns) {
				hb->c.outage_max_ns = out;
			}
		}
		hb->failures = 0;
		hb->state = ESXI_VOL_UP;
		hb->apd_timed_out = false;
		hb->last_ok_ns = now_ns;
		return;
	}
	hb->c.failures++;
	if (hb->failures++ == 0) {
		hb->first_fail_ns = hb->sent_ns;
	}
	if (hb->state == ESXI_VOL_UP && hb->failures >= hb->t.apd_start_count) {
		hb->state = ESXI_VOL_APD;
		hb->apd_start_ns = now_ns;
		hb->c.apd_starts++;
	}
	if (hb->state != ESXI_VOL_DOWN && hb->failures >= hb->t.max_failures) {
		if (hb->state == ESXI_VOL_UP) {
			/* HeartbeatMaxFailures below ApdStartCount */
			hb->apd_start_ns = now_ns;
			hb->c.apd_starts++;
		}
		hb->state = ESXI_VOL_DOWN;
		hb->c.downs++;
	}
}

const char *esxi_vol_state_name(enum esxi_vol_state s)
{
	switch (s) {
	case ESXI_VOL_UP:
		return "up";
	case ESXI_VOL_APD:
		return "APD";
	case ESXI_VOL_DOWN:
		return "down";
	}
	return "?";
}
