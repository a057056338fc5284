package connectors

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// Create is `sluice create -f FILE`: one POST /connectors of the file as
// it is (name, config, initial_state, initial_offsets), printing the
// server's answer.
func Create() *cli.Command {
	cmd := create()
	cmd.Flags = append(session.Flags(), cmd.Flags...)
	return cmd
}

// create is Create without the connection flags, which the connectors
// group gives its aliases.
func create() *cli.Command {
	return &cli.Command{
		Name: "create", Usage: "create a connector from a JSON file as POST /connectors takes it (name, config, initial_state, initial_offsets)",
		Flags: []cli.Flag{session.FileFlag(), session.WaitFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return session.Usage("create takes no arguments (-f names the file)")
			}
			body, err := session.ReadBody(c.String("file"))
			if err != nil {
				return err
			}
			var req api.CreateConnectorRequest
			if err := session.DecodeNumbers(body, &req); err != nil {
				return fmt.Errorf("%s: %w", c.String("file"), err)
			}
			s, err := session.Open(c)
			if err != nil {
				return err
			}
			created, err := session.Call(s, s.API.Connectors().Create, req)
			if err != nil {
				return err
			}
			if err := s.PrintAnswer(created); err != nil || !c.Bool("wait") {
				return err
			}
			if state := strings.ToUpper(req.InitialState); state == api.StatePaused || state == api.StateStopped {
				// Created so on purpose: it runs once resumed.
				s.Progress("%s: created %s: not waited for (sluice resume %s runs it)", req.Name, state, req.Name)
				return nil
			}
			return s.WaitRunning([]string{req.Name})
		},
	}
}
