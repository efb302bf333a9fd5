package conformance_test

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// laneScheduler hands out the run slots (go test's -parallel; 1 with
// TIDEMARK_CONFORMANCE_SERIAL) to lanes, one target of a lane at a time.
// A free slot goes to the first waiting lane in the order of targets (the
// longest lanes listed first), and never waits behind a busy lane, as it
// could with t.Parallel and a lock per lane.
type laneScheduler struct {
	mu      sync.Mutex
	cond    *sync.Cond
	free    int
	order   []string        // lanes in the order their first target is listed
	waiting map[string]bool // lanes waiting for a slot
}

func newLaneScheduler(slots int, order []string) *laneScheduler {
	s := &laneScheduler{free: max(slots, 1), order: order, waiting: map[string]bool{}}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// acquire blocks until lane may run its next target.
func (s *laneScheduler) acquire(lane string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waiting[lane] = true
	for s.free == 0 || s.next() != lane {
		s.cond.Wait()
	}
	delete(s.waiting, lane)
	s.free--
	s.cond.Broadcast()
}

func (s *laneScheduler) release() {
	s.mu.Lock()
	s.free++
	s.mu.Unlock()
	s.cond.Broadcast()
}

// next is the waiting lane a free slot goes to.
func (s *laneScheduler) next() string {
	for _, l := range s.order {
		if s.waiting[l] {
			return l
		}
	}
	return ""
}

// runSlots is how many targets run at once: go test's -parallel (default
// GOMAXPROCS), 1 with TIDEMARK_CONFORMANCE_SERIAL.
func runSlots() int {
	if os.Getenv("TIDEMARK_CONFORMANCE_SERIAL") != "" {
		return 1
	}
	if f := flag.Lookup("test.parallel"); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil && n > 0 {
			return n
		}
	}
	return runtime.GOMAXPROCS(0)
}

// TestLaneScheduler: a freed slot goes to the first waiting lane in order,
// whichever asked first, and never more than the slots run at once.
func TestLaneScheduler(t *testing.T) {
	s := newLaneScheduler(1, []string{"a", "b", "c"})
	s.acquire("c")
	got := make(chan string, 2)
	for _, l := range []string{"b", "a"} {
		go func() { s.acquire(l); got <- l }()
		waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.waiting[l] })
	}
	select {
	case l := <-got:
		t.Fatalf("%s ran while the one slot was held", l)
	default:
	}
	s.release()
	if l := <-got; l != "a" {
		t.Fatalf("the freed slot went to %s, want a (listed first)", l)
	}
	s.release()
	if l := <-got; l != "b" {
		t.Fatalf("the second slot went to %s, want b", l)
	}
	s.release()
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := testtime.Deadline(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("a lane never started waiting")
		}
		time.Sleep(time.Millisecond)
	}
}
