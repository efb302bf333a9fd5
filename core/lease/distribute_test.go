package lease

import (
	"fmt"
	"testing"
)

func instances(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("instance-%02d-%x", i, i*7919)
	}
	return out
}

func loads(a map[int]string) map[string]int {
	l := map[string]int{}
	for _, m := range a {
		l[m]++
	}
	return l
}

func moved(before, after map[int]string) int {
	n := 0
	for p, m := range after {
		if before[p] != m {
			n++
		}
	}
	return n
}

// checkBound fails when a partition is unassigned, assigned to a
// non-member, or a member holds more than the bound.
func checkBound(t *testing.T, a map[int]string, partitions int, members []string) {
	t.Helper()
	if len(a) != partitions {
		t.Fatalf("%d of %d partitions assigned", len(a), partitions)
	}
	ok := map[string]bool{}
	for _, m := range members {
		ok[m] = true
	}
	for p, m := range a {
		if !ok[m] {
			t.Fatalf("partition %d on %q, not a member", p, m)
		}
	}
	bound := Bound(partitions, len(members))
	for m, n := range loads(a) {
		if n > bound {
			t.Errorf("%s holds %d partitions, bound %d (%v)", m, n, bound, loads(a))
		}
	}
}

func TestAssignBoundAndMoves(t *testing.T) {
	for _, partitions := range []int{1, 3, 8, 16, 64} {
		for _, n := range []int{1, 2, 3, 5} {
			t.Run(fmt.Sprintf("%d_over_%d", partitions, n), func(t *testing.T) {
				ms := instances(n + 1)
				members := ms[:n]
				a := Assign("projection/orders", partitions, members, nil, Spread)
				checkBound(t, a, partitions, members)

				// Join: only what the lowered bound takes from the others moves.
				joined := Assign("projection/orders", partitions, ms, a, Spread)
				checkBound(t, joined, partitions, ms)
				newBound := Bound(partitions, n+1)
				required := 0
				for _, l := range loads(a) {
					required += max(0, l-newBound)
				}
				if got := moved(a, joined); got > required {
					t.Errorf("join moved %d partitions, the bound requires %d", got, required)
				}

				// Leave: only the leaver's partitions move.
				if n < 2 {
					return
				}
				left := Assign("projection/orders", partitions, members[1:], a, Spread)
				checkBound(t, left, partitions, members[1:])
				if got, want := moved(a, left), loads(a)[members[0]]; got != want {
					t.Errorf("leave moved %d partitions, the leaver held %d", got, want)
				}
			})
		}
	}
}

func TestAssignEightOverThree(t *testing.T) {
	a := Assign("c", 8, instances(3), nil, Spread)
	got := map[int]int{}
	for _, l := range loads(a) {
		got[l]++
	}
	if got[3] != 2 || got[2] != 1 {
		t.Errorf("8 over 3: loads %v, want 3/3/2", loads(a))
	}
}

func TestAssignDeterministic(t *testing.T) {
	ms := instances(5)
	a := Assign("c", 64, ms, nil, Spread)
	rev := []string{ms[4], ms[3], ms[2], ms[1], ms[0], ms[2]}
	b := Assign("c", 64, rev, nil, Spread)
	if moved(a, b) != 0 {
		t.Errorf("member order changed the assignment")
	}
}

func TestAssignSingleOwner(t *testing.T) {
	ms := instances(3)
	a := Assign("c", 16, ms, nil, SingleOwner)
	owner := a[0]
	if l := loads(a); len(l) != 1 || l[owner] != 16 {
		t.Fatalf("single owner: loads %v", l)
	}
	// Sticky: another member joining does not move it.
	b := Assign("c", 16, instances(4), a, SingleOwner)
	if moved(a, b) != 0 {
		t.Errorf("a join moved a single-owner consumer")
	}
	// Its owner leaving moves all of it to one live member.
	var rest []string
	for _, m := range ms {
		if m != owner {
			rest = append(rest, m)
		}
	}
	c := Assign("c", 16, rest, a, SingleOwner)
	if l := loads(c); len(l) != 1 || l[owner] != 0 {
		t.Errorf("after the owner left: loads %v", l)
	}
}

func TestAssignIgnoresNonMembers(t *testing.T) {
	cur := map[int]string{0: "gone", 1: "gone"}
	a := Assign("c", 4, instances(2), cur, Spread)
	checkBound(t, a, 4, instances(2))
	if len(Assign("c", 4, nil, cur, Spread)) != 0 {
		t.Errorf("no members must assign nothing")
	}
}
