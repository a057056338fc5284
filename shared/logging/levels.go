package logging

import (
	"context"
	"log/slog"
	"math"
	"strings"
)

// Levels beyond slog's four, so that every level name Kafka Connect accepts
// (log4j's) has a slog level. ALL and OFF are the extremes: no record is
// below ALL, and none is at or above OFF.
const (
	LevelAll   = slog.Level(math.MinInt32)
	LevelTrace = slog.LevelDebug - 4
	LevelFatal = slog.LevelError + 4
	LevelOff   = slog.Level(math.MaxInt32)
)

// levelNames are log4j's level names, from the least to the most verbose,
// with the slog level each stands for.
var levelNames = []struct {
	name  string
	level slog.Level
}{
	{"OFF", LevelOff},
	{"FATAL", LevelFatal},
	{"ERROR", slog.LevelError},
	{"WARN", slog.LevelWarn},
	{"INFO", slog.LevelInfo},
	{"DEBUG", slog.LevelDebug},
	{"TRACE", LevelTrace},
	{"ALL", LevelAll},
}

// ParseLevel reads a level name as Kafka Connect 4.4 does (log4j's
// Level.getLevel): OFF, FATAL, ERROR, WARN, INFO, DEBUG, TRACE or ALL, in any
// case, surrounding white space ignored. It returns the slog level and the
// name as log4j spells it.
func ParseLevel(s string) (slog.Level, string, bool) {
	name := strings.ToUpper(strings.TrimSpace(s))
	for _, l := range levelNames {
		if l.name == name {
			return l.level, l.name, true
		}
	}
	return 0, "", false
}

// LevelName names a slog level as Kafka Connect shows it: one of log4j's
// names, or slog's own for a level between them (a --log-level of
// "debug+2" is "DEBUG+2").
func LevelName(level slog.Level) string {
	for _, l := range levelNames {
		if l.level == level {
			return l.name
		}
	}
	return level.String()
}

// lowestEnabled is the most verbose level h enables, so that loggers made
// over a handler with its own minimum start at that minimum.
func lowestEnabled(h slog.Handler) slog.Level {
	for i := len(levelNames) - 1; i >= 0; i-- {
		if h.Enabled(context.Background(), levelNames[i].level) {
			return levelNames[i].level
		}
	}
	return LevelOff
}
