package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
)

// slotState is a replication slot as pg_replication_slots shows it.
type slotState struct {
	Exists    bool
	Plugin    string
	Database  string
	Active    bool
	Confirmed pglogrepl.LSN // confirmed_flush_lsn
	Restart   pglogrepl.LSN // restart_lsn
	// WALStatus is reserved, extended, unreserved or lost (PostgreSQL 13+).
	WALStatus string
	// Current is the server's current WAL position, read with the slot.
	Current pglogrepl.LSN
}

// Lag is how much WAL the slot holds back: from its restart position to the
// server's current one.
func (s slotState) Lag() int64 {
	if s.Restart == 0 || s.Current < s.Restart {
		return 0
	}
	return int64(s.Current - s.Restart)
}

// readSlot reads the slot's state.
func readSlot(ctx context.Context, c *pgconn.PgConn, name string) (slotState, error) {
	rows, err := query(ctx, c, `SELECT plugin, database, active, confirmed_flush_lsn, restart_lsn, wal_status, pg_current_wal_lsn()
		FROM pg_replication_slots WHERE slot_name = $1`, name)
	if err != nil {
		return slotState{}, fmt.Errorf("read replication slot %s: %w", name, err)
	}
	if len(rows) == 0 {
		return slotState{}, nil
	}
	r := rows[0]
	s := slotState{Exists: true, Plugin: str(r[0]), Database: str(r[1]), Active: str(r[2]) == "t", WALStatus: str(r[5])}
	s.Confirmed, _ = pglogrepl.ParseLSN(str(r[3]))
	s.Restart, _ = pglogrepl.ParseLSN(str(r[4]))
	s.Current, _ = pglogrepl.ParseLSN(str(r[6]))
	return s, nil
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// checkSlot refuses a slot the connector cannot read from: another output
// plugin or database, or WAL lost.
func checkSlot(cfg Config, s slotState) error {
	switch {
	case s.Plugin != "pgoutput":
		return fmt.Errorf("replication slot %s uses output plugin %s; the native connector reads pgoutput: give it another slot.name", cfg.Slot, s.Plugin)
	case s.Database != cfg.DBName:
		return fmt.Errorf("replication slot %s belongs to database %s, not %s: give the connector another slot.name", cfg.Slot, s.Database, cfg.DBName)
	case s.WALStatus == "lost":
		return fmt.Errorf("replication slot %s has lost WAL it still needed (wal_status lost, max_slot_wal_keep_size exceeded): "+
			"changes after its position are gone and the connector cannot go on without losing them. "+
			"Drop the slot and the connector's offsets and take a new snapshot (snapshot.mode=when_needed does this on its own)", cfg.Slot)
	}
	return nil
}

// checkPosition applies offset.mismatch.strategy to a stored position and
// the slot: it returns the LSN the slot should be advanced to first (0:
// none), or why the connector must not start.
func checkPosition(cfg Config, stored position, s slotState) (pglogrepl.LSN, error) {
	at := stored.Commit
	if at == 0 {
		at = stored.LSN
	}
	if at == 0 || cfg.Mismatch == MismatchNoValidation || cfg.Mismatch == MismatchTrustSlot {
		return 0, nil
	}
	switch {
	case s.Confirmed > at && cfg.Mismatch == MismatchTrustOffset:
		return 0, fmt.Errorf("replication slot %s is at %s, past the connector's stored position %s: the slot was recreated or moved by hand, "+
			"and the changes in between were never read. With offset.mismatch.strategy=trust_offset the connector does not go on; "+
			"take a new snapshot, or choose trust_slot to accept the gap", cfg.Slot, s.Confirmed, at)
	case s.Confirmed < at:
		return at, nil
	}
	return 0, nil
}

// advanceSlot moves the slot to lsn (it never moves back).
func advanceSlot(ctx context.Context, c *pgconn.PgConn, slot string, lsn pglogrepl.LSN) error {
	if _, err := query(ctx, c, "SELECT pg_replication_slot_advance($1, $2::pg_lsn)", slot, lsn.String()); err != nil {
		return fmt.Errorf("advance replication slot %s to %s: %w", slot, lsn, err)
	}
	return nil
}

// createSlot creates the slot on the replication session; export asks for a
// snapshot of the database as of the slot's start, valid until the session
// runs its next command.
func createSlot(ctx context.Context, repl *pgconn.PgConn, slot string, export bool) (pglogrepl.CreateReplicationSlotResult, error) {
	action := "NOEXPORT_SNAPSHOT"
	if export {
		action = "EXPORT_SNAPSHOT"
	}
	res, err := pglogrepl.CreateReplicationSlot(ctx, repl, slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: action})
	if err != nil {
		return res, fmt.Errorf("create replication slot %s: %w", slot, err)
	}
	return res, nil
}

// ensurePublication makes the publication exist as publication.autocreate.mode
// says, and reports whether it publishes partitions' changes as their
// root's (publish_via_partition_root). With "filtered", an existing
// publication's table list is set to the captured tables, as Debezium does.
func ensurePublication(ctx context.Context, c *pgconn.PgConn, cfg Config, tables func(viaRoot bool) ([]*Table, error)) (bool, error) {
	rows, err := query(ctx, c, "SELECT pubviaroot, puballtables FROM pg_publication WHERE pubname = $1", cfg.Publication)
	if err != nil {
		return false, fmt.Errorf("read publication %s: %w", cfg.Publication, err)
	}
	exists := len(rows) > 0
	viaRoot := exists && str(rows[0][0]) == "t"
	switch {
	case cfg.PubAutocreate == PubDisabled && !exists:
		return false, fmt.Errorf("publication %s does not exist and publication.autocreate.mode is disabled: create it (CREATE PUBLICATION %s FOR ...) or let the connector create it",
			cfg.Publication, quoteIdent(cfg.Publication))
	case cfg.PubAutocreate == PubAllTables && !exists:
		if _, err := c.Exec(ctx, "CREATE PUBLICATION "+quoteIdent(cfg.Publication)+" FOR ALL TABLES").ReadAll(); err != nil {
			return false, fmt.Errorf("create publication %s for all tables: %w", cfg.Publication, err)
		}
	case cfg.PubAutocreate == PubFiltered:
		if exists && str(rows[0][1]) == "t" {
			return viaRoot, nil // all tables: nothing to filter
		}
		// Partitioned tables by their roots, as Debezium lists them: a
		// root publishes its partitions' changes, those attached later too.
		ts, err := tables(true)
		if err != nil {
			return false, err
		}
		if len(ts) == 0 {
			return false, fmt.Errorf("no table matches the connector's table and schema lists: publication %s would publish nothing", cfg.Publication)
		}
		names := make([]string, len(ts))
		for i, t := range ts {
			names[i] = quoteIdent(t.Schema) + "." + quoteIdent(t.Name)
		}
		stmt := "CREATE PUBLICATION " + quoteIdent(cfg.Publication) + " FOR TABLE " + strings.Join(names, ", ")
		if exists {
			stmt = "ALTER PUBLICATION " + quoteIdent(cfg.Publication) + " SET TABLE " + strings.Join(names, ", ")
		}
		if _, err := c.Exec(ctx, stmt).ReadAll(); err != nil {
			return false, fmt.Errorf("publication %s: %w", cfg.Publication, err)
		}
	}
	return viaRoot, nil
}
