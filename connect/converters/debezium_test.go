package converters_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
	"github.com/sluice-io/sluice/connect/postgres/envelope"
	"github.com/sluice-io/sluice/connect/postgres/values"
)

// debeziumRecord is an insert into a ten-column PostgreSQL table as the
// native connector emits it (Debezium 3.6.1's shapes): an Envelope value
// schema with before/after/source/transaction, and a Key struct. The
// column schemas come from package values, so they carry Debezium's
// logical names, versions, parameters and defaults.
func debeziumRecord(tb testing.TB) connect.SourceRecord {
	tb.Helper()
	s := func(v string) *string { return &v }
	base := func(name string, mod int32) values.Type {
		return values.Type{Name: name, Modifier: mod, Kind: values.KindBase}
	}
	text := base("text", -1)
	cols := []struct {
		col  values.Column
		text *string
	}{
		{values.Column{Name: "id", Type: base("int4", -1), Default: s("nextval('orders_id_seq'::regclass)")}, s("42")},
		{values.Column{Name: "customer", Type: base("varchar", 255+4), Optional: true}, s("Ada Lovelace")},
		{values.Column{Name: "email", Type: text, Optional: true}, s("ada@example.com")},
		{values.Column{Name: "amount", Type: base("numeric", (10<<16|2)+4), Optional: true}, s("1234.50")},
		{values.Column{Name: "status", Type: base("varchar", 20+4), Default: s("'new'::character varying")}, s("shipped")},
		{values.Column{Name: "created_at", Type: base("timestamptz", -1), Optional: true}, s("2026-12-06 21:00:00.123456+00")},
		{values.Column{Name: "updated_at", Type: base("timestamp", -1), Optional: true}, s("2026-12-06 21:05:00.5")},
		{values.Column{Name: "paid", Type: base("bool", -1), Default: s("false")}, s("t")},
		{values.Column{Name: "ref", Type: base("uuid", -1), Optional: true}, s("0b9f2a8e-5f4c-4c3e-9d1a-6f1e2d3c4b5a")},
		{values.Column{Name: "tags", Type: values.Type{Name: "_text", Modifier: -1, Kind: values.KindArray, Elem: &text}, Optional: true}, s(`{a,b,"c d"}`)},
	}
	var ecols []envelope.Column
	row := make([]any, len(cols))
	for i, c := range cols {
		cv, err := values.Compile(c.col, values.DefaultModes())
		if err != nil {
			tb.Fatal(err)
		}
		schema := cv.Schema()
		if d, ok := cv.Default(); ok {
			cp := *schema
			cp.Default = d
			schema = &cp
		}
		ecols = append(ecols, envelope.Column{Name: c.col.Name, Schema: schema})
		if row[i], err = cv.Value(c.text); err != nil {
			tb.Fatal(err)
		}
	}
	cfg := envelope.DefaultConfig("shop")
	cfg.Database = "shop"
	cfg.ConnectorVersion = "3.6.1.Final"
	cfg.RunID = "5f0c6a4e-2d1b-4c3a-8e9f-0a1b2c3d4e5f"
	cfg.Now = func() time.Time { return time.Date(2026, 12, 6, 21, 0, 1, 0, time.UTC) }
	em, err := envelope.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	table, err := em.NewTable("public", "orders", ecols, []string{"id"})
	if err != nil {
		tb.Fatal(err)
	}
	recs, err := em.Insert(table, envelope.Source{Commit: time.Date(2026, 12, 6, 21, 0, 0, 0, time.UTC),
		TxID: envelope.Int64(771), LSN: envelope.Int64(24023128), LastCommitLSN: envelope.Int64(24023000)}, row)
	if err != nil {
		tb.Fatal(err)
	}
	if len(recs) != 1 {
		tb.Fatalf("insert gave %d records, want 1", len(recs))
	}
	return recs[0]
}

// A Debezium event's key and value, written and read with the schema
// caches, are byte for byte and value for value what they are without.
func TestJSONSchemaCacheDebezium(t *testing.T) {
	rec := debeziumRecord(t)
	cached, uncached := &converters.JSON{}, &converters.JSON{}
	if err := cached.Configure(nil, false); err != nil {
		t.Fatal(err)
	}
	if err := uncached.Configure(map[string]string{"schemas.cache.size": "0"}, false); err != nil {
		t.Fatal(err)
	}
	for _, part := range []struct {
		name   string
		schema *connect.Schema
		value  any
	}{{"key", rec.KeySchema, rec.Key}, {"value", rec.ValueSchema, rec.Value}} {
		want, err := uncached.FromConnectData(rec.Topic, part.schema, part.value)
		if err != nil {
			t.Fatal(err)
		}
		wantSchema, wantValue, err := uncached.ToConnectData(rec.Topic, want)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // a miss, then a hit
			got, err := cached.FromConnectData(rec.Topic, part.schema, part.value)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: cached converter wrote\n%s\nwant\n%s (%v)", part.name, got, want, err)
			}
			s, v, err := cached.ToConnectData(rec.Topic, got)
			if err != nil || !reflect.DeepEqual(s, wantSchema) || !reflect.DeepEqual(v, wantValue) {
				t.Fatalf("%s: cached converter read %+v, %v, %v", part.name, s, v, err)
			}
		}
	}
	if out, err := cached.FromConnectData(rec.Topic, rec.ValueSchema, rec.Value); err != nil ||
		!strings.Contains(string(out), `"name":"shop.public.orders.Envelope","version":2`) {
		t.Errorf("the fixture is not a Debezium envelope: %s, %v", out, err)
	}
}
