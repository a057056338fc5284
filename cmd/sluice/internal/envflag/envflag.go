// Package envflag makes the CLI's flags, each of which also reads an
// environment variable: SLUICE_ and the flag's name in upper case, "_" for
// "-" (--url: SLUICE_URL).
package envflag

import (
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// Env is a flag's environment variable: SLUICE_ + the flag in upper case.
func Env(name string) []string {
	return []string{"SLUICE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))}
}

// String is a string flag read from its SLUICE_ variable too.
func String(name, value, usage string) *cli.StringFlag {
	return &cli.StringFlag{Name: name, Value: value, Usage: usage, EnvVars: Env(name)}
}

// Duration is a duration flag read from its SLUICE_ variable too.
func Duration(name string, value time.Duration, usage string) *cli.DurationFlag {
	return &cli.DurationFlag{Name: name, Value: value, Usage: usage, EnvVars: Env(name)}
}

// Int is an int flag read from its SLUICE_ variable too.
func Int(name string, value int, usage string) *cli.IntFlag {
	return &cli.IntFlag{Name: name, Value: value, Usage: usage, EnvVars: Env(name)}
}

// Bool is a bool flag read from its SLUICE_ variable too.
func Bool(name, usage string) *cli.BoolFlag {
	return &cli.BoolFlag{Name: name, Usage: usage, EnvVars: Env(name)}
}
