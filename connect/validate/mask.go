package validate

import (
	"maps"
	"strings"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
)

// MaskPasswords returns a copy of a connector config whose PASSWORD values
// are hidden ("[hidden]"): those of the framework's keys, of the
// connector's own keys and of the converters it names (under their
// key.converter., value.converter. and header.converter. prefixes). A
// config whose class reg does not know is masked by the framework keys
// alone. For logs and audit records of a whole connector config.
func MaskPasswords(reg *plugins.Registry, props map[string]string) map[string]string {
	out := maps.Clone(props)
	p, ok := reg.LookupConnector(props[ConnectorClassConfig])
	if !ok {
		return out
	}
	out = connect.MaskPasswords(baseDef(defsInput{reg: reg, connector: p}), out)
	if own := p.NewConnector().ConfigDef(); own != nil {
		out = connect.MaskPasswords(own, out)
	}
	for _, key := range []string{KeyConverterConfig, ValueConverterConfig, HeaderConverterConfig} {
		cp, ok := reg.Lookup(connect.JavaTrim(props[key]))
		if !ok {
			continue
		}
		def := cp.ConfigDef()
		prefix := key + "."
		for k := range out {
			if rest, ok := strings.CutPrefix(k, prefix); ok {
				if ck, ok := def.Key(rest); ok && ck.Type == connect.TypePassword {
					out[k] = connect.Hidden
				}
			}
		}
	}
	return out
}
