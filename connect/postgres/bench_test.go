package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
)

// BenchmarkSnapshot measures the connector's own snapshot throughput: a
// task snapshots a table of 100,000 rows (six columns) and every record is
// written through JsonConverter with schemas, as the runtime would — Kafka
// left out. Run it with `make test-postgres`'s PostgreSQL:
// SLUICE_TEST_POSTGRES=127.0.0.1:15432 go test -run - -bench Snapshot -benchtime 3x ./connect/postgres/
func BenchmarkSnapshot(b *testing.B) {
	d := newTestDBB(b)
	const rows = 100_000
	d.exec("CREATE TABLE items (id bigint PRIMARY KEY, name text, price numeric(10,2), qty int, created timestamptz, tags text[])",
		"INSERT INTO items SELECT g, 'item ' || g, g / 100.0, g % 1000, now(), ARRAY['a', 'b'] FROM generate_series(1, 100000) g")
	conv := &converters.JSON{}
	if err := conv.Configure(map[string]string{"schemas.enable": "true"}, false); err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		d.exec("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = " + quoteLiteral(d.name))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		task := &Task{}
		if err := task.Start(ctx, connect.SourceTaskContext{Offsets: &memOffsets{}}, d.props(map[string]string{"snapshot.max.threads": "2", "sluice.heartbeat.wal.interval.ms": "0"})); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		n := 0
		for n < rows {
			recs, err := task.Poll(ctx)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range recs {
				if r.Dropped {
					continue
				}
				if _, err := conv.FromConnectData(r.Topic, r.ValueSchema, r.Value); err != nil {
					b.Fatal(err)
				}
				n++
			}
		}
		b.ReportMetric(float64(rows)/time.Since(start).Seconds(), "rows/s")
		_ = task.Stop()
		cancel()
	}
}
