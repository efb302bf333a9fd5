// Package consumerotel exports a consumer's figures (consumer.Metrics) and
// a high-water mark's (hwm.Metrics) through OpenTelemetry metrics, so the
// core packages stay free of the OpenTelemetry dependency: only a program
// that imports this package links it.
//
// The package is named consumerotel, not otel, although it lives in
// core/consumer/otel: a caller wiring it up imports
// go.opentelemetry.io/otel (or its metric package) in the same file, and a
// second package named otel would need an alias there.
//
//	m, err := consumerotel.New(otel.GetMeterProvider())
//	runner, err := consumer.NewRunner(ctx, reg, consumer.Options{…, Metrics: m})
//	adv := hwm.New(e, hwm.Options{Metrics: m})
//
// Instruments (attribute keys in brackets):
//
//	tidemark.consumer.lag            gauge      mark − checkpoint [consumer, source, partition]
//	tidemark.consumer.apply.duration histogram  seconds per committed apply [consumer, source]
//	tidemark.consumer.retries        counter    [consumer, source, transient]
//	tidemark.consumer.dead_letters   counter    [consumer, source, status]
//	tidemark.consumer.halts          counter    [consumer, halt_reason]
//	tidemark.hwm.mark                gauge      [topic]
//	tidemark.hwm.lag                 gauge      highest position handed out − mark [topic]
//	tidemark.hwm.failures            counter    failed advancer cycles [topic]
//
// "consumer" is two attributes, tidemark.consumer.type and
// tidemark.consumer.name. Cardinality is bounded by the application's
// consumers × sources × partitions (the partition count is fixed at
// creation, 8 by default).
package consumerotel

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/hwm"
)

// ScopeName is the instrumentation scope of every instrument.
const ScopeName = "github.com/tidemarkdb/tidemark/core/consumer/otel"

// Attribute keys.
const (
	KeyConsumerType = attribute.Key("tidemark.consumer.type")
	KeyConsumerName = attribute.Key("tidemark.consumer.name")
	KeySource       = attribute.Key("tidemark.source")
	KeyPartition    = attribute.Key("tidemark.partition")
	KeyTransient    = attribute.Key("tidemark.transient")
	KeyStatus       = attribute.Key("tidemark.status")
	KeyHaltReason   = attribute.Key("tidemark.halt_reason")
	KeyTopic        = attribute.Key("tidemark.topic")
)

// applyBuckets are the apply-latency histogram's bounds in seconds: from
// 0.25 ms, since the commit→applied target is a p99 of 5 ms, to 10 s for a
// handler that calls out (the SDK's default bounds, 0 to 10,000, suit
// milliseconds, not seconds).
var applyBuckets = []float64{0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Metrics implements consumer.Metrics and hwm.Metrics; safe for concurrent
// use, as both require.
type Metrics struct {
	lag         metric.Int64Gauge
	apply       metric.Float64Histogram
	retries     metric.Int64Counter
	deadLetters metric.Int64Counter
	halts       metric.Int64Counter
	mark        metric.Int64Gauge
	hwmLag      metric.Int64Gauge
	hwmFailures metric.Int64Counter
}

var (
	_ consumer.Metrics = (*Metrics)(nil)
	_ hwm.Metrics      = (*Metrics)(nil)
)

// New creates the instruments on mp's meter for ScopeName.
func New(mp metric.MeterProvider) (*Metrics, error) {
	m := mp.Meter(ScopeName)
	var (
		out  Metrics
		errs []error
	)
	gauge := func(name, unit, desc string) metric.Int64Gauge {
		g, err := m.Int64Gauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return g
	}
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	out.lag = gauge("tidemark.consumer.lag", "{position}", "The source's high-water mark minus the partition's checkpoint, after every poll.")
	out.retries = counter("tidemark.consumer.retries", "{retry}", "Retries of a message: transient (the database undid the attempt, no budget spent) or a spent attempt.")
	out.deadLetters = counter("tidemark.consumer.dead_letters", "{message}", "Messages whose retry budget was spent, by the status they took.")
	out.halts = counter("tidemark.consumer.halts", "{halt}", "Consumers halted by the runner, by halt reason.")
	out.mark = gauge("tidemark.hwm.mark", "{position}", "The topic's high-water mark after every advancer cycle.")
	out.hwmLag = gauge("tidemark.hwm.lag", "{position}", "The highest position handed out minus the high-water mark.")
	out.hwmFailures = counter("tidemark.hwm.failures", "{cycle}", "Failed advancer cycles.")
	h, err := m.Float64Histogram("tidemark.consumer.apply.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of every committed apply: the handler and, when transactional, its commit."),
		metric.WithExplicitBucketBoundaries(applyBuckets...))
	out.apply = h
	errs = append(errs, err)
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("consumerotel: creating instruments: %w", err)
		}
	}
	return &out, nil
}

func consumerAttrs(c consumer.Consumer, extra ...attribute.KeyValue) metric.MeasurementOption {
	kv := append([]attribute.KeyValue{KeyConsumerType.String(c.Type), KeyConsumerName.String(c.Name)}, extra...)
	return metric.WithAttributes(kv...)
}

// The interfaces carry no context (their calls come from the runner and the
// advancer, not a request): measurements take context.Background().

// Lag records the partition's lag.
func (m *Metrics) Lag(c consumer.Consumer, source string, partition int, lag int64) {
	m.lag.Record(context.Background(), lag, consumerAttrs(c, KeySource.String(source), KeyPartition.Int(partition)))
}

// Applied records one committed apply's duration in seconds.
func (m *Metrics) Applied(c consumer.Consumer, source string, d time.Duration) {
	m.apply.Record(context.Background(), d.Seconds(), consumerAttrs(c, KeySource.String(source)))
}

// Retried counts one retry.
func (m *Metrics) Retried(c consumer.Consumer, source string, transient bool) {
	m.retries.Add(context.Background(), 1, consumerAttrs(c, KeySource.String(source), KeyTransient.Bool(transient)))
}

// DeadLettered counts one message whose budget was spent.
func (m *Metrics) DeadLettered(c consumer.Consumer, source string, status consumer.DeliveryStatus) {
	m.deadLetters.Add(context.Background(), 1, consumerAttrs(c, KeySource.String(source), KeyStatus.String(string(status))))
}

// Halted counts one halt.
func (m *Metrics) Halted(c consumer.Consumer, reason consumer.HaltReason) {
	m.halts.Add(context.Background(), 1, consumerAttrs(c, KeyHaltReason.String(string(reason))))
}

// Observe records the topic's mark and its lag (end − mark).
func (m *Metrics) Observe(topic string, mark, end int64) {
	attrs := metric.WithAttributes(KeyTopic.String(topic))
	m.mark.Record(context.Background(), mark, attrs)
	m.hwmLag.Record(context.Background(), max(0, end-mark), attrs)
}

// Failed counts one failed advancer cycle.
func (m *Metrics) Failed(topic string, _ error) {
	m.hwmFailures.Add(context.Background(), 1, metric.WithAttributes(KeyTopic.String(topic)))
}
