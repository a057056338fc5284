package logging

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Format is the form a process writes its log lines in.
type Format string

// The formats --log-format accepts.
const (
	// FormatText is slog's key=value text, one record a line: for people
	// reading a terminal.
	FormatText Format = "text"
	// FormatJSON is one JSON object a line: for log pipelines (Loki,
	// Elasticsearch, Cloud Logging) that index the attributes.
	FormatJSON Format = "json"
)

// LoggerKey is the attribute that names the logger a record was logged
// through (io.sluice.agent.tasks): the name /admin/loggers sets levels on,
// so a line says which name to turn up or down.
const LoggerKey = "logger"

// ParseFormat reads a format name, text or json, in any case.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case FormatText, FormatJSON:
		return f, nil
	default:
		return "", fmt.Errorf("invalid log format %q: want text or json", s)
	}
}

// NewHandler returns a handler writing f to w. It enables every level, so
// that /admin/loggers can turn any logger down to TRACE while the process
// runs (New's gates do the filtering), and names levels as Kafka Connect
// does (TRACE, FATAL rather than slog's DEBUG-4, ERROR+4). An unknown f is
// text.
func NewHandler(w io.Writer, f Format) slog.Handler {
	opts := &slog.HandlerOptions{Level: LevelAll, ReplaceAttr: levelNamed}
	if f == FormatJSON {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}

// NewJSON returns loggers writing one JSON object a line to w, with the
// root logger at root: what --log-format json gives a process.
func NewJSON(w io.Writer, root slog.Level) *Loggers {
	return New(NewHandler(w, FormatJSON), root)
}

// levelNamed is a ReplaceAttr that writes a record's level by its log4j
// name.
func levelNamed(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.LevelKey {
		if lv, ok := a.Value.Any().(slog.Level); ok {
			a.Value = slog.StringValue(LevelName(lv))
		}
	}
	return a
}
