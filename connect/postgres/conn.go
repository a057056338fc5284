package postgres

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// sessionSettings are the settings of every session the connector opens, the
// replication one included: the text forms of values — what pgoutput sends
// and what the snapshot reads — are then fixed whatever the server's or the
// role's defaults are (values.Value parses them).
var sessionSettings = map[string]string{
	"DateStyle":          "ISO, MDY",
	"TimeZone":           "UTC",
	"IntervalStyle":      "postgres",
	"extra_float_digits": "3",
	"lc_monetary":        "C",
	"bytea_output":       "hex",
	"application_name":   "sluice-postgres",
}

// connConfig is the pgconn config of a session to the connector's database;
// replication makes it a logical replication (walsender) session.
func connConfig(c Config, replication bool) (*pgconn.Config, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "host=%s port=%d dbname=%s user=%s sslmode=%s connect_timeout=10",
		quoteDSN(c.Host), c.Port, quoteDSN(c.DBName), quoteDSN(c.User), quoteDSN(c.SSLMode))
	if c.Password != "" {
		fmt.Fprintf(&b, " password=%s", quoteDSN(c.Password))
	}
	cfg, err := pgconn.ParseConfig(b.String())
	if err != nil {
		return nil, fmt.Errorf("database settings: %w", err)
	}
	for k, v := range sessionSettings {
		cfg.RuntimeParams[k] = v
	}
	if replication {
		cfg.RuntimeParams["replication"] = "database"
	}
	return cfg, nil
}

// quoteDSN quotes a value of a key=value connection string.
func quoteDSN(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// dial opens a session; the initial statements (database.initial.statements,
// separated by ';') run on every session that is not a replication one.
func dial(ctx context.Context, c Config, replication bool, initial string) (*pgconn.PgConn, error) {
	cfg, err := connConfig(c, replication)
	if err != nil {
		return nil, err
	}
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL at %s: %w", net.JoinHostPort(c.Host, strconv.Itoa(c.Port)), err)
	}
	if !replication && strings.TrimSpace(initial) != "" {
		if _, err := conn.Exec(ctx, initial).ReadAll(); err != nil {
			closeConn(conn)
			return nil, fmt.Errorf("database.initial.statements: %w", err)
		}
	}
	return conn, nil
}

// query runs sql with text parameters and returns its rows as text (nil for
// NULL).
func query(ctx context.Context, conn *pgconn.PgConn, sql string, args ...string) ([][]*string, error) {
	params := make([][]byte, len(args))
	for i, a := range args {
		params[i] = []byte(a)
	}
	res := conn.ExecParams(ctx, sql, params, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, res.Err
	}
	rows := make([][]*string, len(res.Rows))
	for i, r := range res.Rows {
		rows[i] = make([]*string, len(r))
		for j, v := range r {
			if v != nil {
				s := string(v)
				rows[i][j] = &s
			}
		}
	}
	return rows, nil
}

// queryOne runs sql and returns its first row's first column ("" when there
// is no row or it is NULL), and whether there was a row.
func queryOne(ctx context.Context, conn *pgconn.PgConn, sql string, args ...string) (string, bool, error) {
	rows, err := query(ctx, conn, sql, args...)
	if err != nil || len(rows) == 0 {
		return "", false, err
	}
	if len(rows[0]) == 0 || rows[0][0] == nil {
		return "", true, nil
	}
	return *rows[0][0], true, nil
}

// quoteIdent quotes an SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// quoteLiteral quotes an SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// closeConn closes a session; an error closing it (the server is gone) has
// nothing left to act on.
func closeConn(c *pgconn.PgConn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.Close(ctx)
}
