package server

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/shared/logging"
)

// logFormatFlag chooses the form of the process's log lines. A value that
// is neither text nor json stops the command before it starts anything.
var logFormatFlag = &cli.StringFlag{
	Name:    "log-format",
	Value:   string(logging.FormatText),
	Usage:   "log line format: text (key=value) or json (one object a line, for log pipelines)",
	EnvVars: envflag.Env("log-format"),
	Action: func(_ *cli.Context, v string) error {
		if _, err := logging.ParseFormat(v); err != nil {
			return fmt.Errorf("--log-format: %w", err)
		}
		return nil
	},
}

// loggersTo are the process's named loggers, writing --log-format to w
// (text for a command without the flag), the root logger at --log-level:
// slog's names (debug, info, warn, error, debug+2) or Kafka Connect's
// (TRACE … OFF); any other level is info.
func loggersTo(c *cli.Context, w io.Writer) (*logging.Loggers, error) {
	format := logging.FormatText
	if v := c.String("log-format"); v != "" {
		f, err := logging.ParseFormat(v)
		if err != nil {
			return nil, fmt.Errorf("--log-format: %w", err)
		}
		format = f
	}
	level, _, ok := logging.ParseLevel(c.String("log-level"))
	if !ok {
		if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
			level = slog.LevelInfo
		}
	}
	return logging.New(logging.NewHandler(w, format), level), nil
}
