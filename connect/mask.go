package connect

import "maps"

// Hidden is what a PASSWORD value shows instead of itself, as Kafka's
// Password.toString.
const Hidden = "[hidden]"

// MaskPasswords returns a copy of config in which the value of every key
// def defines as PASSWORD is Hidden, for logs and records that must not
// carry secrets (Kafka Connect prints configs the same way). Keys def does
// not define, and a nil def, are left as they are; config is not changed.
func MaskPasswords(def *ConfigDef, config map[string]string) map[string]string {
	out := maps.Clone(config)
	if def == nil {
		return out
	}
	for k := range out {
		if key, ok := def.Key(k); ok && key.Type == TypePassword {
			out[k] = Hidden
		}
	}
	return out
}
