package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// peerResult is the JSON line bench/peers/watermill prints.
type peerResult struct {
	Mode   string  `json:"mode"`
	Events int     `json:"events"`
	Rate   float64 `json:"rate"`
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
	Error  string  `json:"error"`
}

// watermill runs the watermill-sql peer (its own module, so the library's
// go.mod stays free of it) on a fresh database of tg's server. It returns
// nil, nil where watermill-sql has no adapter (it has PostgreSQL and
// MySQL/MariaDB ones).
// peerArgs is one watermill peer run: its mode, messages (throughput),
// the subscriber's poll interval (0: watermill-sql's default) and whether
// its handler inserts a row per message.
type peerArgs struct {
	mode   string
	events int
	poll   time.Duration
	write  bool
}

func watermill(ctx context.Context, prov *harness.Provider, tg target, pa peerArgs) (*peerResult, error) {
	if *flagPeers == "" || (tg.driver != "pgx" && tg.driver != "mysql") {
		return nil, nil
	}
	db, err := prov.Open(ctx, tg.engine, tg.driver)
	if err != nil {
		return nil, err
	}
	args := []string{"run", "./watermill", "-driver", tg.driver, "-dsn", db.DSN, "-mode", pa.mode,
		"-events", strconv.Itoa(pa.events), "-publishers", strconv.Itoa(publishers), "-batch", strconv.Itoa(pubBatch),
		"-poll", pa.poll.String(), "-rate", strconv.Itoa(*flagLatencyRate), "-duration", flagLatencyTime.String(),
		"-write=" + strconv.FormatBool(pa.write)}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = filepath.Clean(*flagPeers)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	runErr := cmd.Run()
	var res peerResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("watermill peer: %v (%v): %s", runErr, err, strings.TrimSpace(stderr.String()))
	}
	if res.Error != "" {
		return nil, fmt.Errorf("watermill peer: %s", res.Error)
	}
	return &res, nil
}

// percentiles returns the q-quantiles (0 ≤ q ≤ 1) of lat by the
// nearest-rank rule: the smallest value with at least q of the sample at
// or below it. lat is sorted in place; an empty sample gives zeros.
func percentiles(lat []time.Duration, qs ...float64) []time.Duration {
	out := make([]time.Duration, len(qs))
	if len(lat) == 0 {
		return out
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	for i, q := range qs {
		rank := int(q*float64(len(lat))+0.999999999) - 1 // ceil(q·n) − 1, 0-based
		out[i] = lat[min(max(rank, 0), len(lat)-1)]
	}
	return out
}

// loadAvg is /proc/loadavg's first three fields ("?" where it cannot be
// read): the machine's load, printed before and after the run because the
// figures mean little without it on a shared 2-core machine.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// tracedSource counts a source's calls and the time spent in them, so a
// missed target can say where a poll's time goes without touching the
// runner (-consumer-trace).
type tracedSource struct {
	consumer.SourceOf[eventstore.Recorded]
	mu                sync.Mutex
	marks, reads, got int
	inMark, inRead    time.Duration
}

func (t *tracedSource) Mark(ctx context.Context) (int64, error) {
	start := time.Now()
	m, err := t.SourceOf.Mark(ctx)
	t.mu.Lock()
	t.marks++
	t.inMark += time.Since(start)
	t.mu.Unlock()
	return m, err
}

func (t *tracedSource) Read(ctx context.Context, partition int, after, upto int64, limit int) ([]consumer.Message, error) {
	start := time.Now()
	ms, err := t.SourceOf.Read(ctx, partition, after, upto, limit)
	t.mu.Lock()
	t.reads++
	t.got += len(ms)
	t.inRead += time.Since(start)
	t.mu.Unlock()
	return ms, err
}

// report is one line: polls (one Mark each), partition reads, messages
// read, and the time in each per poll.
func (t *tracedSource) report(elapsed time.Duration) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	per := func(d time.Duration) string {
		if t.marks == 0 {
			return "-"
		}
		return ms(d / time.Duration(t.marks))
	}
	return fmt.Sprintf("%d polls in %s (%s each): Mark %s, %.1f partition reads %s, %.1f messages per poll",
		t.marks, elapsed.Round(time.Millisecond), per(elapsed), per(t.inMark),
		float64(t.reads)/float64(max(t.marks, 1)), per(t.inRead), float64(t.got)/float64(max(t.marks, 1)))
}
