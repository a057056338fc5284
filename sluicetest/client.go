package sluicetest

import (
	"fmt"

	"github.com/sluice-io/sluice/api"
)

// Client returns the typed REST client (package api) of the cluster's
// coordinator, retrying as api.DefaultRetryPolicy does. A test of a secured
// cluster makes its own with NewClient.
func (c *Cluster) Client() *api.Client {
	c.T.Helper()
	return c.NewClient(api.Config{})
}

// NewClient returns a typed REST client made of cfg, addressed to the
// cluster's coordinator unless cfg names an address: a test sets the
// credentials, TLS or retry policy it needs.
func (c *Cluster) NewClient(cfg api.Config) *api.Client {
	c.T.Helper()
	if cfg.Address == "" {
		cfg.Address = c.URL
	}
	cl, err := api.NewClient(cfg)
	if err != nil {
		c.T.Fatal(fmt.Errorf("sluicetest: client of %s: %w", cfg.Address, err))
	}
	return cl
}
