package coordinator

import (
	"bytes"
	"os"
	"time"

	"github.com/sluice-io/sluice/coordinator/internal/auth"
)

// authFilePoll is how often the coordinator looks at the auth file for a
// change: a removed principal, a rotated password or token, or a changed
// grant takes effect within it, with no restart (docs/security.md).
const authFilePoll = 2 * time.Second

// watchAuthFile reloads the auth file whenever its content changes, until
// the returned stop is called. A file that no longer parses is logged and
// the principals before it stay: a typo must not lock everyone out, or let
// everyone in.
func (c *Coordinator) watchAuthFile() (stop func()) {
	path := c.cfg.RESTSecurity.AuthFile
	authn := c.sec.api.Authenticator
	if path == "" || authn == nil {
		return func() {}
	}
	last := c.sec.authFile // the bytes build parsed: a change since is seen at the first look
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(authFilePoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			data, err := os.ReadFile(path)
			if err != nil {
				c.log.Warn("auth file unreadable: the principals read before stay", "file", path, "err", err)
				continue
			}
			if bytes.Equal(data, last) {
				continue
			}
			last = data
			f, err := auth.ParseFile(data)
			if err == nil {
				f.Path = path
				err = f.ExpandTenants(c.tenants.ConnectorPatterns)
			}
			if err != nil {
				c.log.Error("auth file changed but is not valid: the principals read before stay", "file", path, "err", err)
				continue
			}
			authn.Reload(f)
			c.log.Info("auth file reloaded", "file", path, "principals", len(f.Entries))
		}
	}()
	return func() { close(done); <-finished }
}
