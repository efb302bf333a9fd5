package console

import "time"

// sample is a counter's value when a page last read it.
type sample struct {
	at    time.Time
	value float64
	rate  *float64
}

// minRateSpan is the shortest span a rate is computed over: two page loads
// a moment apart would give noise.
const minRateSpan = time.Second

// rate records value for key and returns its change per second since the
// previous sample at least minRateSpan old (the last rate computed when the
// previous look is more recent than that; nil before two looks).
func (s *Server) rate(key string, value float64) *float64 {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, ok := s.rates[key]
	if !ok {
		s.rates[key] = sample{at: now, value: value}
		return nil
	}
	span := now.Sub(prev.at)
	if span < minRateSpan {
		return prev.rate
	}
	r := max(0, value-prev.value) / span.Seconds()
	s.rates[key] = sample{at: now, value: value, rate: &r}
	return &r
}

// markSeen is when a topic's mark last moved, as the console saw it.
type markSeen struct {
	mark    int64
	movedAt time.Time
	pending bool // a pending end above the mark was recorded
}

// seeMark records topic's mark and whether a pending end waits above it.
func (s *Server) seeMark(topic string, mark int64, pendingEnd *int64) {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.marks[topic]
	if !ok || m.mark != mark {
		m = markSeen{mark: mark, movedAt: now}
	}
	m.pending = pendingEnd != nil && *pendingEnd > mark
	s.marks[topic] = m
}

// stalled says topic's mark has stood still below a pending end for longer
// than StallAfter, with the time it last moved.
func (s *Server) stalled(topic string) (bool, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.marks[topic]
	if !ok || !m.pending {
		return false, time.Time{}
	}
	return s.opts.Now().Sub(m.movedAt) > s.opts.StallAfter, m.movedAt
}
