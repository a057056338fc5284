package postgres

// A chunk's snapshot: which transactions' changes its rows include.
//
// The watermarks order a chunk against the stream, but PostgreSQL makes a
// transaction visible a moment after it writes its commit to the WAL: a
// transaction committed in the WAL just before the low watermark may not
// be visible yet to the chunk's SELECT, which then reads the row as it was
// before — and the stream, reading that change before the window opened,
// would let the stale row through (a deleted row come back). So the chunk
// is read in a transaction of its own whose snapshot is kept, and every
// change of the table the stream reads before the high watermark that the
// snapshot does not include takes its key out of the window, wherever it
// is in the WAL.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// xidSnapshot is a snapshot's transaction ids (pg_current_snapshot: xmin,
// xmax, the ids in progress), as 64-bit ids.
type xidSnapshot struct {
	xmin, xmax uint64
	xip        map[uint64]bool
}

// parseXidSnapshot reads pg_snapshot's text form, xmin:xmax:xip,….
func parseXidSnapshot(s string) (xidSnapshot, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return xidSnapshot{}, fmt.Errorf("snapshot %q is not xmin:xmax:xip", s)
	}
	var snap xidSnapshot
	var err error
	if snap.xmin, err = strconv.ParseUint(parts[0], 10, 64); err != nil {
		return xidSnapshot{}, fmt.Errorf("snapshot %q: %w", s, err)
	}
	if snap.xmax, err = strconv.ParseUint(parts[1], 10, 64); err != nil {
		return xidSnapshot{}, fmt.Errorf("snapshot %q: %w", s, err)
	}
	snap.xip = map[uint64]bool{}
	for _, x := range strings.Split(parts[2], ",") {
		if x == "" {
			continue
		}
		id, err := strconv.ParseUint(x, 10, 64)
		if err != nil {
			return xidSnapshot{}, fmt.Errorf("snapshot %q: %w", s, err)
		}
		snap.xip[id] = true
	}
	return snap, nil
}

// full widens a 32-bit transaction id, as pgoutput sends it, to the 64-bit
// id nearest the snapshot's xmax: ids wrap around every 2^32.
func (s xidSnapshot) full(xid uint32) uint64 {
	const span, half = uint64(1) << 32, uint64(1) << 31
	c := s.xmax&^(span-1) | uint64(xid)
	switch {
	case c > s.xmax+half && c >= span:
		c -= span
	case c+half < s.xmax:
		c += span
	}
	return c
}

// includes reports whether the committed transaction xid's changes are
// in the snapshot.
func (s xidSnapshot) includes(xid uint32) bool {
	x := s.full(xid)
	return x < s.xmin || x < s.xmax && !s.xip[x]
}

// readInSnapshot runs read in a REPEATABLE READ, READ ONLY transaction on c and
// returns the transaction's snapshot with what read returned: read's
// queries see exactly the changes of the transactions the snapshot
// includes.
func readInSnapshot[T any](ctx context.Context, c *pgconn.PgConn, read func() (T, error)) (T, xidSnapshot, error) {
	var zero T
	if _, err := query(ctx, c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return zero, xidSnapshot{}, fmt.Errorf("begin a chunk's transaction: %w", err)
	}
	out, snap, err := func() (T, xidSnapshot, error) {
		// The first query takes the transaction's snapshot: this one.
		v, _, err := queryOne(ctx, c, "SELECT pg_current_snapshot()::text")
		if err != nil {
			return zero, xidSnapshot{}, fmt.Errorf("read a chunk's snapshot: %w", err)
		}
		snap, err := parseXidSnapshot(v)
		if err != nil {
			return zero, xidSnapshot{}, err
		}
		out, err := read()
		return out, snap, err
	}()
	end := "COMMIT"
	if err != nil {
		end = "ROLLBACK"
	}
	if _, cerr := query(ctx, c, end); cerr != nil && err == nil {
		err = fmt.Errorf("end a chunk's transaction: %w", cerr)
	}
	return out, snap, err
}
