package server

import (
	"bytes"
	"flag"
	"reflect"

	"github.com/urfave/cli/v2"
)

// FlagContext is a CLI context with flags applied, as a command would get
// with no arguments: values come from the environment or the defaults.
// Tests build configs with it (DevConfigs) without running a command.
func FlagContext(flags ...cli.Flag) (*cli.Context, error) {
	app := cli.NewApp()
	app.Writer = &bytes.Buffer{}
	set := flag.NewFlagSet("test", flag.ContinueOnError)
	for _, orig := range flags {
		// A copy: Apply keeps a value read from the environment in the
		// flag, and most flags are package variables that later tests
		// (and the clusters they start) would inherit it from.
		f := reflect.New(reflect.TypeOf(orig).Elem()).Interface().(cli.Flag)
		reflect.ValueOf(f).Elem().Set(reflect.ValueOf(orig).Elem())
		if err := f.Apply(set); err != nil {
			return nil, err
		}
	}
	return cli.NewContext(app, set, nil), nil
}
