package postgres

import "testing"

// TestXidSnapshot: a snapshot includes the transactions before its xmin,
// and those before its xmax but those in progress; pgoutput's 32-bit ids
// are widened to the epoch nearest the snapshot's, across a wraparound.
func TestXidSnapshot(t *testing.T) {
	s, err := parseXidSnapshot("100:110:102,105")
	if err != nil {
		t.Fatal(err)
	}
	for xid, want := range map[uint32]bool{99: true, 100: true, 101: true, 102: false, 105: false, 109: true, 110: false, 200: false} {
		if got := s.includes(xid); got != want {
			t.Errorf("xid %d included: %v, want %v", xid, got, want)
		}
	}
	// Just past a wraparound: xmax is 2^32+10 (epoch 1, id 10).
	w, err := parseXidSnapshot("4294967290:4294967306:4294967300")
	if err != nil {
		t.Fatal(err)
	}
	for xid, want := range map[uint32]bool{4294967280: true, 4294967295: true, 3: true, 4: false, 9: true, 10: false, 50: false} {
		if got := w.includes(xid); got != want {
			t.Errorf("after the wraparound, xid %d (as %d) included: %v, want %v", xid, w.full(xid), got, want)
		}
	}
	if _, err := parseXidSnapshot("1:2"); err == nil {
		t.Error("a snapshot without its in-progress list is accepted")
	}
	if s, err := parseXidSnapshot("5:5:"); err != nil || !s.includes(4) || s.includes(5) {
		t.Errorf("an empty in-progress list: %+v %v", s, err)
	}
}
