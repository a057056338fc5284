// Package natsdeploy holds the nats-server configuration Sluice ships
// (nats-server.conf.tmpl), so that `sluice nats-config`, `sluice dev
// --secure` and the tests render the very file in this directory.
package natsdeploy

import _ "embed"

// Template is nats-server.conf.tmpl, a text/template of a nats-server
// configuration with a coordinator role and one user per agent.
//
//go:embed nats-server.conf.tmpl
var Template string
