// Package postgres is Sluice's native PostgreSQL change data capture source
// connector: it reads a logical replication slot through pgoutput, takes
// snapshots in parallel chunks, and writes the records, offsets and topics
// Debezium's PostgreSQL connector writes — so a Debezium connector moves to
// it, and back, at its exact position. It runs in the agent, with no JVM.
// docs/cdc-postgres.md is the user's guide.
package postgres

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/sluice-io/sluice/connect"
)

// Class is the connector's class name; Alias is its short name.
const (
	Class = "io.sluice.connect.postgres.PostgresSourceConnector"
	Alias = "PostgresSource"
)

// Plugin describes the connector for the plugin registry.
func Plugin() *connect.Plugin {
	return &connect.Plugin{
		Class: Class, Kind: connect.KindSource, Version: connect.Version,
		Aliases:      []string{"PostgresSourceConnector", Alias},
		NewConnector: func() connect.Connector { return &Connector{} },
	}
}

// Connector is the native PostgreSQL source connector. Like Debezium's, it
// has one task: a replication slot is read by one session.
type Connector struct {
	props map[string]string
}

// ConfigDef implements connect.Connector. The keys are Debezium's; their
// checks are Validate's, which knows the values Sluice supports.
func (*Connector) ConfigDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	for _, k := range required {
		d.Define(connect.ConfigKey{Name: k, Type: connect.TypeString, Required: true, Importance: connect.ImportanceHigh,
			Documentation: "See docs/cdc-postgres.md."})
	}
	d.Define(connect.ConfigKey{Name: "database.password", Type: connect.TypePassword, Default: nil, Importance: connect.ImportanceHigh,
		Documentation: "The password of database.user."})
	return d
}

// Validate implements connect.Connector: every key's value is checked, a
// Debezium key the native connector does not support is an error on that
// key, and, when the config is whole, the database is asked whether the
// user may do what the connector needs.
func (*Connector) Validate(props map[string]string) []connect.ConfigValue {
	var out []connect.ConfigValue
	add := func(key, msg string) {
		for i := range out {
			if out[i].Name == key {
				out[i].AddError(msg)
				return
			}
		}
		v := props[key]
		out = append(out, connect.ConfigValue{Name: key, Value: &v, Visible: true, Errors: []string{msg}})
	}
	errs := configErrors(props)
	for _, e := range errs {
		add(e.Key, e.Message)
	}
	if len(errs) > 0 {
		return out
	}
	cfg, err := ParseConfig(props)
	if err != nil {
		add("topic.prefix", err.Error())
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for key, msg := range checkAccess(ctx, cfg) {
		add(key, msg)
	}
	return out
}

// Start implements connect.Connector.
func (c *Connector) Start(_ connect.ConnectorContext, props map[string]string) error {
	if _, err := ParseConfig(props); err != nil {
		return err
	}
	c.props = maps.Clone(props)
	return nil
}

// TaskConfigs implements connect.Connector: one task, whatever maxTasks.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	if maxTasks < 1 {
		return nil, fmt.Errorf("tasks.max is %d", maxTasks)
	}
	return []map[string]string{maps.Clone(c.props)}, nil
}

// Stop implements connect.Connector.
func (*Connector) Stop() error { return nil }

// ExactlyOnceSupport implements connect.ExactlyOnceSourceConnector: with
// records and offsets in one transaction, the stream resumes exactly after
// the last committed change, and a snapshot cut short is taken again from a
// slot made anew — so a read_committed consumer sees each change once.
func (*Connector) ExactlyOnceSupport(map[string]string) (connect.Support, error) {
	return connect.SupportSupported, nil
}

// NewTask implements connect.SourceConnector.
func (*Connector) NewTask() connect.SourceTask { return &Task{} }

// checkAccess asks the database whether cfg's user may do what the
// connector needs: connect, replicate (REPLICATION or superuser), create the
// publication when it is to, and read the captured tables. The answers are
// by config key.
func checkAccess(ctx context.Context, cfg Config) map[string]string {
	out := map[string]string{}
	c, err := dial(ctx, cfg, false, cfg.InitialStatements)
	if err != nil {
		out["database.hostname"] = err.Error()
		return out
	}
	defer closeConn(c)
	if err := checkServer(ctx, c); err != nil {
		out["database.hostname"] = err.Error()
		return out
	}
	rows, err := query(ctx, c, `SELECT rolreplication OR rolsuper, rolsuper FROM pg_roles WHERE rolname = current_user`)
	if err != nil || len(rows) == 0 {
		out["database.user"] = fmt.Sprintf("cannot read the role of %s: %v", cfg.User, err)
		return out
	}
	if str(rows[0][0]) != "t" {
		out["database.user"] = fmt.Sprintf("role %s has neither REPLICATION nor SUPERUSER: grant it REPLICATION (ALTER ROLE %s WITH REPLICATION)", cfg.User, quoteIdent(cfg.User))
	}
	pub, err := query(ctx, c, `SELECT pg_get_userbyid(pubowner) = current_user OR $2 FROM pg_publication WHERE pubname = $1`, cfg.Publication, str(rows[0][1]))
	switch {
	case err != nil:
		out["publication.name"] = fmt.Sprintf("cannot read publication %s: %v", cfg.Publication, err)
	case len(pub) == 0 && cfg.PubAutocreate == PubDisabled:
		out["publication.name"] = fmt.Sprintf("publication %s does not exist and publication.autocreate.mode is disabled", cfg.Publication)
	case len(pub) == 0 && cfg.PubAutocreate == PubAllTables && str(rows[0][1]) != "t":
		out["publication.autocreate.mode"] = "creating a publication FOR ALL TABLES needs a superuser: create the publication beforehand, or use filtered"
	case len(pub) > 0 && cfg.PubAutocreate == PubFiltered && str(pub[0][0]) != "t":
		out["publication.name"] = fmt.Sprintf("publication %s is not owned by %s, who must own it to set its tables (publication.autocreate.mode=filtered)", cfg.Publication, cfg.User)
	}
	if cfg.Signals != nil {
		if err := checkSignalTable(ctx, c, cfg); err != nil {
			out["signal.data.collection"] = err.Error()
		}
	}
	return out
}
