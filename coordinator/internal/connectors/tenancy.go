package connectors

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect/clientoverrides"
	"github.com/sluice-io/sluice/connect/configprovider"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/tenancy"
	"github.com/sluice-io/sluice/shared/wire"
)

// Policy is what a connector may touch by its name's tenant (nil: no
// tenants apply). A config without a name — the validate endpoint's —
// is judged by no tenant: nothing is created from it.
func (a *Admission) Policy(name string) *wire.TenantPolicy {
	if name == "" {
		return nil
	}
	return a.cfg.Tenants.Policy(name)
}

// resolveScoped resolves a config's placeholders within its tenant's
// secrets (Config.Providers scopes every config by its name): a
// placeholder naming another path or variable is a 403 naming the key and
// what it names, and nothing is read.
func (a *Admission) resolveScoped(props map[string]string) (map[string]string, error) {
	resolved, err := a.cfg.Providers.Transform(props)
	var se *configprovider.ScopeError
	if errors.As(err, &se) {
		who := "Connector " + props["name"]
		if props["name"] == "" {
			who = "A config that names no connector"
		}
		return nil, api.Errorf(api.CodeForbidden, "%s may not read that secret: %s", who, err.Error())
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUnresolvable, api.Errorf(api.CodeBadRequest, "%s", err.Error()))
	}
	return resolved, nil
}

// checkTenantTopics adds an error to each key of props naming a topic its
// tenant does not let it use: topic, topics, the dead letter queue, its
// own offsets topic. A topics.regex is judged as it runs: the agent
// delivers no record of a topic outside the tenant's.
func (a *Admission) checkTenantTopics(infos *api.ConfigInfos, props map[string]string) {
	p := a.Policy(props["name"])
	if p == nil {
		return
	}
	refuse := func(key, topic string) {
		if err := tenancy.CheckTopic(p, topic); err != nil {
			addKeyError(infos, key, fmt.Sprintf("Invalid value %s for configuration %s: the %s", topic, key, err))
		}
	}
	for _, kt := range namedTopics(props) {
		refuse(kt.key, kt.topic)
	}
	if t := strings.TrimSpace(props[ownOffsetsKey]); t != "" && t != a.cfg.OffsetsTopic {
		refuse(ownOffsetsKey, t)
	}
}

// checkTenantOwnership refuses, with a 403, a connector that strict
// tenancy leaves with no tenant, one whose clients would authenticate as
// another SASL user than its tenant's Kafka principal, and a sink whose
// consumer group is outside its tenant's groups: a team's connector joining another team's
// group would move that team's committed offsets and take its partitions.
func (a *Admission) checkTenantOwnership(props map[string]string, sink bool) error {
	name := props["name"]
	p := a.Policy(name)
	if p == nil {
		return nil
	}
	if p.Tenant == "" {
		return api.Errorf(api.CodeForbidden, "Connector %s belongs to no tenant: its name matches no tenant's connector patterns (%s), and tenancy is strict, so it may touch nothing", name, a.cfg.Tenants.Path)
	}
	for _, c := range []clientoverrides.Client{clientoverrides.Producer, clientoverrides.Consumer} {
		if cr, _ := clientoverrides.ClientCredentials(props, c); cr != nil {
			if err := tenancy.CheckPrincipal(p, cr.User); err != nil {
				return api.Errorf(api.CodeForbidden, "Connector %s may not authenticate as that user (%ssasl.jaas.config): the %s", name, c, err.Error())
			}
		}
	}
	if !sink {
		return nil
	}
	if err := tenancy.CheckGroup(p, records.SinkGroupID(name, props)); err != nil {
		return api.Errorf(api.CodeForbidden, "Connector %s may not use that group: the %s", name, err.Error())
	}
	return nil
}
