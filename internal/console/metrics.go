package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tidemarkdb/tidemark/core/consumer"
)

// Metric names: those of core/consumer/otel as its Prometheus exporter
// spells them (dots as underscores), read from the database at each scrape
// rather than recorded by a runner, plus the figures only the database has.
var (
	descMark = prometheus.NewDesc("tidemark_hwm_mark", "The topic's high-water mark.",
		[]string{"tidemark_topic"}, nil)
	descHWMLag = prometheus.NewDesc("tidemark_hwm_lag", "The highest position handed out minus the high-water mark.",
		[]string{"tidemark_topic"}, nil)
	descLag = prometheus.NewDesc("tidemark_consumer_lag", "The source's high-water mark minus the partition's checkpoint.",
		[]string{"tidemark_consumer_type", "tidemark_consumer_name", "tidemark_source", "tidemark_partition"}, nil)
	descCheckpoint = prometheus.NewDesc("tidemark_consumer_checkpoint", "The partition's checkpoint (0 while none is recorded).",
		[]string{"tidemark_consumer_type", "tidemark_consumer_name", "tidemark_source", "tidemark_partition"}, nil)
	descState = prometheus.NewDesc("tidemark_consumer_state", "1 for the consumer's state (RUNNING, PAUSED, HALTED, REBUILDING).",
		[]string{"tidemark_consumer_type", "tidemark_consumer_name", "tidemark_state", "tidemark_halt_reason"}, nil)
	descEpoch = prometheus.NewDesc("tidemark_consumer_epoch", "The consumer's rebuild epoch.",
		[]string{"tidemark_consumer_type", "tidemark_consumer_name"}, nil)
	descUndelivered = prometheus.NewDesc("tidemark_consumer_undelivered", "Undelivered messages by status.",
		[]string{"tidemark_consumer_type", "tidemark_consumer_name", "tidemark_status"}, nil)
)

// snapshot is a scrape's figures, read once, served as constant metrics.
type snapshot []prometheus.Metric

func (snapshot) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descMark, descHWMLag, descLag, descCheckpoint, descState, descEpoch, descUndelivered} {
		ch <- d
	}
}

func (s snapshot) Collect(ch chan<- prometheus.Metric) {
	for _, m := range s {
		ch <- m
	}
}

// metrics reads the marks and every consumer's status and serves them in
// the Prometheus text format; a failed read is a 500, so the scrape fails
// visibly rather than showing stale figures.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := withDeadline(r.Context())
	defer cancel()
	list, err := s.op.List(ctx)
	if err == nil {
		var topics []topicView
		topics, err = s.topics(ctx, list)
		if err == nil {
			reg := prometheus.NewPedanticRegistry()
			if err = reg.Register(collect(topics, list)); err == nil {
				promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}).ServeHTTP(w, r)
				return
			}
		}
	}
	s.opts.Logger.Warn("console: /metrics failed", "error", err)
	http.Error(w, "console: reading the figures failed: "+err.Error(), http.StatusInternalServerError)
}

func collect(topics []topicView, list []consumer.ConsumerStatus) snapshot {
	var out snapshot
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...))
	}
	for _, t := range topics {
		gauge(descMark, float64(t.Mark), t.Name)
		if t.End != nil {
			gauge(descHWMLag, float64(*t.End-t.Mark), t.Name)
		}
	}
	for _, c := range list {
		gauge(descState, 1, c.Type, c.Name, string(c.State), string(c.HaltReason))
		gauge(descEpoch, float64(c.Epoch), c.Type, c.Name)
		for _, p := range c.Partitions {
			part := strconv.Itoa(p.Partition)
			gauge(descLag, float64(p.Lag), c.Type, c.Name, p.Source, part)
			var cp int64
			if p.Checkpoint != nil {
				cp = *p.Checkpoint
			}
			gauge(descCheckpoint, float64(cp), c.Type, c.Name, p.Source, part)
		}
		for _, st := range undeliveredOrder {
			gauge(descUndelivered, float64(c.Undelivered[st]), c.Type, c.Name, string(st))
		}
	}
	return out
}

// health is /healthz's answer.
type health struct {
	OK     bool              `json:"ok"`
	Error  string            `json:"error,omitempty"`
	Topics map[string]string `json:"topics,omitempty"`
}

// healthz answers 200 when the database answers and no topic's mark has
// stood still below a recorded pending end for longer than StallAfter
// (its advancers are not advancing), else 503, with JSON saying which.
// The stall is judged across calls: a probe every few seconds sees it.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := withDeadline(r.Context())
	defer cancel()
	h := health{OK: true, Topics: map[string]string{}}
	e := s.op.Engine()
	err := e.DB.PingContext(ctx)
	var topics []topicView
	if err == nil {
		var list []consumer.ConsumerStatus
		if list, err = s.op.List(ctx); err == nil {
			topics, err = s.topics(ctx, list)
		}
	}
	if err != nil {
		h.OK, h.Error = false, "database: "+err.Error()
	}
	for _, t := range topics {
		if stalled, since := s.stalled(t.Name); stalled {
			h.OK = false
			h.Topics[t.Name] = fmt.Sprintf("mark %d has not moved since %s below a pending end", t.Mark, since.UTC().Format(time.RFC3339))
		} else {
			h.Topics[t.Name] = fmt.Sprintf("mark %d", t.Mark)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if !h.OK {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(h)
}
