package confighistory

import (
	"maps"
	"slices"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/configprovider"
)

// Hidden is the value the history stores in place of a secret: what Kafka
// Connect shows for a PASSWORD value.
const Hidden = connect.Hidden

// Diff names the keys that differ between before and after (either may
// be nil), each list sorted and never nil.
func Diff(before, after map[string]string) api.ConfigDiff {
	d := api.ConfigDiff{Added: []string{}, Removed: []string{}, Changed: []string{}}
	for k, v := range after {
		old, had := before[k]
		switch {
		case !had:
			d.Added = append(d.Added, k)
		case old != v:
			d.Changed = append(d.Changed, k)
		}
	}
	for k := range before {
		if _, kept := after[k]; !kept {
			d.Removed = append(d.Removed, k)
		}
	}
	slices.Sort(d.Added)
	slices.Sort(d.Removed)
	slices.Sort(d.Changed)
	return d
}

// hide returns config with the value of each of secret's keys replaced by
// Hidden, unless the value is made of config provider references alone
// (${vault:db:password}): a reference is no secret, and keeping it lets a
// restore put it back as written. It also returns the keys hidden. A nil
// config stays nil.
func hide(config map[string]string, secret []string) (map[string]string, []string) {
	if config == nil {
		return nil, nil
	}
	out := maps.Clone(config)
	var hidden []string
	for _, k := range secret {
		v, ok := out[k]
		if !ok || configprovider.OnlyVariables(v) {
			continue
		}
		out[k] = Hidden
		hidden = append(hidden, k)
	}
	return out, hidden
}

// newEntry is the entry of one change of connector from before to after
// (nil: none), the diff made from the values as written, then the values
// of the secret keys hidden.
func newEntry(connector string, ch *Change, principal string, before, after map[string]string, secretBefore, secretAfter []string) api.ConfigHistoryEntry {
	e := api.ConfigHistoryEntry{ConfigHistorySummary: api.ConfigHistorySummary{
		Connector: connector, Operation: ch.Operation, Detail: ch.Detail, Principal: principal, Diff: Diff(before, after)}}
	var hb, ha []string
	e.Before, hb = hide(before, secretBefore)
	e.After, ha = hide(after, secretAfter)
	hidden := append(hb, ha...)
	slices.Sort(hidden)
	e.Hidden = slices.Compact(hidden)
	return e
}

// restoredConfig is the config a restore of e writes: e's After, with the
// connector's current value (in current) of each key e does not keep the
// value of. kept names those keys; missing names the hidden keys that
// current has no value for, which a restore cannot put back.
func restoredConfig(e api.ConfigHistoryEntry, current map[string]string) (config map[string]string, kept, missing []string) {
	config = maps.Clone(e.After)
	for _, k := range e.Hidden {
		if v, ok := config[k]; !ok || v != Hidden {
			continue
		}
		if cur, ok := current[k]; ok {
			config[k] = cur
			kept = append(kept, k)
		} else {
			missing = append(missing, k)
		}
	}
	return config, kept, missing
}
