package consumerotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/tidemarkdb/tidemark/core/consumer"
	consumerotel "github.com/tidemarkdb/tidemark/core/consumer/otel"
)

// collect reads every metric the reader holds, by name.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != consumerotel.ScopeName {
			t.Errorf("scope %q, want %q", sm.Scope.Name, consumerotel.ScopeName)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

func attrs(kv ...attribute.KeyValue) attribute.Set { return attribute.NewSet(kv...) }

// intPoint is the value of the data point of an int gauge or sum with
// exactly set's attributes.
func intPoint(t *testing.T, data metricdata.Aggregation, set attribute.Set) (int64, bool) {
	t.Helper()
	var pts []metricdata.DataPoint[int64]
	switch d := data.(type) {
	case metricdata.Gauge[int64]:
		pts = d.DataPoints
	case metricdata.Sum[int64]:
		if !d.IsMonotonic {
			t.Errorf("counter is not monotonic")
		}
		pts = d.DataPoints
	default:
		t.Fatalf("aggregation %T, want an int64 gauge or sum", data)
	}
	for _, p := range pts {
		if p.Attributes.Equals(&set) {
			return p.Value, true
		}
	}
	return 0, false
}

func TestConsumerMetricsRecorded(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	m, err := consumerotel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	if err != nil {
		t.Fatal(err)
	}
	c := consumer.Consumer{ID: "id-1", Type: "projection", Name: "account-summary"}
	who := []attribute.KeyValue{consumerotel.KeyConsumerType.String("projection"), consumerotel.KeyConsumerName.String("account-summary")}
	with := func(kv ...attribute.KeyValue) attribute.Set {
		return attrs(append(append([]attribute.KeyValue{}, who...), kv...)...)
	}

	m.Lag(c, "event-store", 3, 40)
	m.Lag(c, "event-store", 3, 7) // a gauge keeps the last value
	m.Lag(c, "event-capture", 0, 2)
	m.Applied(c, "event-store", 2*time.Millisecond)
	m.Applied(c, "event-store", 30*time.Millisecond)
	m.Retried(c, "event-store", true)
	m.Retried(c, "event-store", true)
	m.Retried(c, "event-store", false)
	m.DeadLettered(c, "event-store", consumer.StatusDeadLetter)
	m.DeadLettered(c, "event-store", consumer.StatusHalted)
	m.DeadLettered(c, "event-store", consumer.StatusDeadLetter)
	m.Halted(c, consumer.ApplyError)
	m.Observe("event-store", 90, 100)
	m.Observe("event-store", 100, 100)
	m.Failed("event-capture", errors.New("boom"))

	got := collect(t, reader)
	src := func(s string) attribute.KeyValue { return consumerotel.KeySource.String(s) }
	for _, tc := range []struct {
		metric string
		set    attribute.Set
		want   int64
	}{
		{"tidemark.consumer.lag", with(src("event-store"), consumerotel.KeyPartition.Int(3)), 7},
		{"tidemark.consumer.lag", with(src("event-capture"), consumerotel.KeyPartition.Int(0)), 2},
		{"tidemark.consumer.retries", with(src("event-store"), consumerotel.KeyTransient.Bool(true)), 2},
		{"tidemark.consumer.retries", with(src("event-store"), consumerotel.KeyTransient.Bool(false)), 1},
		{"tidemark.consumer.dead_letters", with(src("event-store"), consumerotel.KeyStatus.String("DEAD_LETTER")), 2},
		{"tidemark.consumer.dead_letters", with(src("event-store"), consumerotel.KeyStatus.String("HALTED")), 1},
		{"tidemark.consumer.halts", with(consumerotel.KeyHaltReason.String("APPLY_ERROR")), 1},
		{"tidemark.hwm.mark", attrs(consumerotel.KeyTopic.String("event-store")), 100},
		{"tidemark.hwm.lag", attrs(consumerotel.KeyTopic.String("event-store")), 0},
		{"tidemark.hwm.failures", attrs(consumerotel.KeyTopic.String("event-capture")), 1},
	} {
		data, ok := got[tc.metric]
		if !ok {
			t.Errorf("%s not recorded", tc.metric)
			continue
		}
		v, ok := intPoint(t, data, tc.set)
		if !ok || v != tc.want {
			t.Errorf("%s%v = %d (found %v), want %d", tc.metric, tc.set.ToSlice(), v, ok, tc.want)
		}
	}

	h, ok := got["tidemark.consumer.apply.duration"].(metricdata.Histogram[float64])
	if !ok || len(h.DataPoints) != 1 {
		t.Fatalf("apply duration: %T %+v, want one histogram point", got["tidemark.consumer.apply.duration"], h)
	}
	p := h.DataPoints[0]
	if set := with(src("event-store")); !p.Attributes.Equals(&set) {
		t.Errorf("apply duration attributes %v", p.Attributes.ToSlice())
	}
	if p.Count != 2 || p.Sum < 0.0319 || p.Sum > 0.0321 {
		t.Errorf("apply duration count %d sum %v s, want 2 and 0.032 s", p.Count, p.Sum)
	}
	// 2 ms and 30 ms fall in the buckets (0.001, 0.0025] and (0.025, 0.05].
	for i, b := range p.Bounds {
		want := uint64(0)
		if b == 0.0025 || b == 0.05 {
			want = 1
		}
		if p.BucketCounts[i] != want {
			t.Errorf("bucket ≤ %v s holds %d, want %d", b, p.BucketCounts[i], want)
		}
	}
}
