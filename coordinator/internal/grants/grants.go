// Package grants carries a REST caller's grant check down to the services
// that act on several connectors at once (a selector, a maintenance
// window, a rollout): the endpoint decides, from the route and the
// caller, which connectors may be touched; the service asks about each
// connector it resolved. It holds no policy of its own.
package grants

import (
	"github.com/sluice-io/sluice/api"
)

// Allow refuses a connector the caller's grants do not cover, with the
// message to report; a nil Allow allows every connector (authentication
// off, or a call without a caller, such as a leader controller's).
type Allow func(connector string) error

// Check is a(connector): nil when the caller may act on it.
func (a Allow) Check(connector string) error {
	if a == nil {
		return nil
	}
	return a(connector)
}

// All is the 403 of the first of names a refuses: an operation over
// several connectors is refused whole.
func (a Allow) All(names []string) error {
	for _, n := range names {
		if err := a.Check(n); err != nil {
			return api.Errorf(api.CodeForbidden, "%s", err.Error())
		}
	}
	return nil
}
