package server

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/coordinator"
)

// The coordinator's REST security flags (docs/security.md).
var (
	restTLSCert     = envflag.String("rest-tls-cert", "", "PEM certificate (chain) of the REST server: with --rest-tls-key, the REST port takes HTTPS only")
	restTLSKey      = envflag.String("rest-tls-key", "", "PEM private key of --rest-tls-cert")
	restTLSClientCA = envflag.String("rest-tls-client-ca", "", "PEM CAs that verify client certificates; a verified certificate's CN or SAN names a principal of --rest-auth-file")
	restForwardCA   = envflag.String("rest-forward-ca", "", "PEM CAs a follower verifies the leader's certificate against when it forwards a write (default: the system's)")
	restAuthFile    = envflag.String("rest-auth-file", "", "YAML file of REST principals (Basic users, bearer tokens, client certificates) and their roles; set, every request must authenticate")
	restJWKS        = envflag.String("rest-jwt-jwks", "", "file or URL of an identity provider's JWKS: bearer JWTs signed with its keys are taken")
	restJWTIssuer   = envflag.String("rest-jwt-issuer", "", "the iss a JWT must carry")
	restJWTAudience = envflag.String("rest-jwt-audience", "", "an aud a JWT must carry")
	restJWTRoles    = envflag.String("rest-jwt-roles-claim", "roles", "the JWT claim listing roles: \"<role>\" or \"<role>:<pattern>[,<pattern>]\" entries")
	restForwardKey  = envflag.String("rest-forward-key-file", "", "file of the key (32 bytes or more) coordinators sign forwarded callers' identities with; the same on every coordinator")
	uiSessionKey    = envflag.String("ui-session-key-file", "", "file of the key (32 bytes or more) console sessions are signed with; the same on every coordinator (default: --rest-forward-key-file's key, else a key of this process: its sessions then end when it restarts)")
	uiSessionTTL    = &cli.DurationFlag{Name: "ui-session-ttl", Value: 8 * time.Hour, Usage: "how long a console sign-in lasts", EnvVars: envflag.Env("ui-session-ttl")}
	restOpenProbes  = &cli.BoolFlag{Name: "rest-auth-open-probes", Usage: "leave GET /, GET /health, GET /readyz and GET /metrics open without credentials", EnvVars: envflag.Env("rest-auth-open-probes")}
)

// restSecurityFlags are appended to the coordinator's and dev's flags.
func restSecurityFlags() []cli.Flag {
	return []cli.Flag{restTLSCert, restTLSKey, restTLSClientCA, restForwardCA, restAuthFile, restJWKS, restJWTIssuer, restJWTAudience, restJWTRoles, restForwardKey, restOpenProbes, uiSessionKey, uiSessionTTL}
}

// restSecurity reads the REST security flags.
func restSecurity(c *cli.Context) coordinator.RESTSecurity {
	return coordinator.RESTSecurity{
		TLSCert:        c.String("rest-tls-cert"),
		TLSKey:         c.String("rest-tls-key"),
		TLSClientCA:    c.String("rest-tls-client-ca"),
		ForwardCA:      c.String("rest-forward-ca"),
		AuthFile:       c.String("rest-auth-file"),
		JWKS:           c.String("rest-jwt-jwks"),
		JWTIssuer:      c.String("rest-jwt-issuer"),
		JWTAudience:    c.String("rest-jwt-audience"),
		JWTRolesClaim:  c.String("rest-jwt-roles-claim"),
		ForwardKeyFile: c.String("rest-forward-key-file"),
		OpenProbes:     c.Bool("rest-auth-open-probes"),
		SessionKeyFile: c.String("ui-session-key-file"),
		SessionTTL:     c.Duration("ui-session-ttl"),
	}
}
