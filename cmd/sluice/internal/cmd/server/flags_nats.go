package server

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/agent"
	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/shared/embedded"
	"github.com/sluice-io/sluice/shared/logging"
	"github.com/sluice-io/sluice/shared/natsconn"
	"github.com/sluice-io/sluice/shared/natsperm"
)

// How a process authenticates to NATS and secures its connection: at most
// one of the credentials flags, and TLS with any of the TLS flags.
var (
	natsCredsFlag    = envflag.String("nats-creds", "", "NATS credentials file (user JWT and nkey seed)")
	natsNkeyFlag     = envflag.String("nats-nkey-seed", "", "file holding a NATS user nkey seed (SU…)")
	natsUserFlag     = envflag.String("nats-user", "", "NATS user name (with --nats-password-file)")
	natsPasswordFlag = envflag.String("nats-password-file", "", "file holding the NATS user's password")
	natsTokenFlag    = envflag.String("nats-token-file", "", "file holding a NATS authentication token")
	natsTLSCAFlag    = envflag.String("nats-tls-ca", "", "PEM file of the CAs the NATS server's certificate is checked against (turns TLS on)")
	natsTLSCertFlag  = envflag.String("nats-tls-cert", "", "client certificate for NATS (PEM; with --nats-tls-key; turns TLS on)")
	natsTLSKeyFlag   = envflag.String("nats-tls-key", "", "key of --nats-tls-cert (PEM)")
)

// natsAuth reads the NATS authentication and TLS flags.
func natsAuth(c *cli.Context) natsconn.Auth {
	return natsconn.Auth{
		CredsFile:    c.String("nats-creds"),
		NkeySeedFile: c.String("nats-nkey-seed"),
		User:         c.String("nats-user"),
		PasswordFile: c.String("nats-password-file"),
		TokenFile:    c.String("nats-token-file"),
		TLSCA:        c.String("nats-tls-ca"),
		TLSCert:      c.String("nats-tls-cert"),
		TLSKey:       c.String("nats-tls-key"),
	}
}

// devSecureFlag turns on sluice dev's secured setup.
var devSecureFlag = &cli.BoolFlag{Name: "secure", Usage: "secure the embedded NATS (a user per role and agent, with the permissions of deploy/nats, nkeys written to the data dir) and REST", EnvVars: envflag.Env("secure")}

// devSecureNATS writes, under dataDir/nats-auth, an nkey for the
// coordinator and for each agent and the embedded server's configuration
// with their permissions, and connects the configs with those nkeys. It
// returns the option that starts the embedded server with it.
func devSecureNATS(dataDir, listen string, ccfg *coordinator.Config, acfgs []agent.Config, lg *logging.Loggers) (embedded.NATSOption, error) {
	ids := make([]string, len(acfgs))
	for i, a := range acfgs {
		ids[i] = a.ID
	}
	dir := filepath.Join(dataDir, "nats-auth")
	files, err := natsperm.Generate(dir, natsperm.Config{GroupID: ccfg.GroupID, Listen: listen, StoreDir: filepath.Join(dataDir, "nats")},
		[]string{devCoordinatorName}, ids)
	if err != nil {
		return nil, fmt.Errorf("sluice dev --secure: %w", err)
	}
	ccfg.NATSAuth = natsconn.Auth{NkeySeedFile: files.Coordinators[devCoordinatorName]}
	for i := range acfgs {
		acfgs[i].NATSAuth = natsconn.Auth{NkeySeedFile: files.Agents[acfgs[i].ID]}
	}
	rootLogger(lg).Info("embedded NATS secured: a user per role and agent, anonymous clients refused", "config", files.Config, "credentials", dir)
	return embedded.ConfigFile(files.Config), nil
}

// devCoordinatorName names sluice dev's coordinator user.
const devCoordinatorName = "coordinator"
