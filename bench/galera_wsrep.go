package main

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
)

// wsrepCounters are the Galera status counters of one node that tell why
// its appends failed: a certification failure (its write set lost to a
// write set of another node ordered before it that it had not seen) or a
// brute-force abort (the node's applier, applying another node's write
// set, killed a local transaction holding the same row), and how far
// behind its applier ran.
type wsrepCounters struct {
	certFailures int64   // wsrep_local_cert_failures
	bfAborts     int64   // wsrep_local_bf_aborts
	commits      int64   // wsrep_replicated: write sets this node sent
	received     int64   // wsrep_received: write sets from the others
	recvQueueAvg float64 // wsrep_local_recv_queue_avg since the last read
	flowPaused   float64 // wsrep_flow_control_paused since the last read
}

func (w wsrepCounters) String() string {
	return fmt.Sprintf("%d write sets replicated, %d certification failures, %d brute-force aborts, %d write sets received, apply queue avg %.2f, flow control paused %.3f",
		w.commits, w.certFailures, w.bfAborts, w.received, w.recvQueueAvg, w.flowPaused)
}

// readWsrep reads db's node counters (zero when the node has none: a
// read error only leaves the diagnostics empty).
func readWsrep(ctx context.Context, db *sql.DB) wsrepCounters {
	var w wsrepCounters
	rows, err := db.QueryContext(ctx, `SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_cert_failures',
		'wsrep_local_bf_aborts', 'wsrep_replicated', 'wsrep_received', 'wsrep_local_recv_queue_avg', 'wsrep_flow_control_paused')`)
	if err != nil {
		return w
	}
	defer rows.Close()
	for rows.Next() {
		var name, val string
		if rows.Scan(&name, &val) != nil {
			return w
		}
		n, _ := strconv.ParseInt(val, 10, 64)
		f, _ := strconv.ParseFloat(val, 64)
		switch name {
		case "wsrep_local_cert_failures":
			w.certFailures = n
		case "wsrep_local_bf_aborts":
			w.bfAborts = n
		case "wsrep_replicated":
			w.commits = n
		case "wsrep_received":
			w.received = n
		case "wsrep_local_recv_queue_avg":
			w.recvQueueAvg = f
		case "wsrep_flow_control_paused":
			w.flowPaused = f
		}
	}
	return w
}

func readWsrepAll(ctx context.Context, dbs []*sql.DB) []wsrepCounters {
	out := make([]wsrepCounters, len(dbs))
	for i, db := range dbs {
		out[i] = readWsrep(ctx, db)
	}
	return out
}

// diffWsrep is the counters over a case; the averages are the second
// read's (the server resets them at every read).
func diffWsrep(before, after []wsrepCounters) []wsrepCounters {
	out := make([]wsrepCounters, len(after))
	for i, a := range after {
		b := before[i]
		out[i] = wsrepCounters{certFailures: a.certFailures - b.certFailures, bfAborts: a.bfAborts - b.bfAborts,
			commits: a.commits - b.commits, received: a.received - b.received,
			recvQueueAvg: a.recvQueueAvg, flowPaused: a.flowPaused}
	}
	return out
}
