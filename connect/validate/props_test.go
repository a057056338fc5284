package validate

import "maps"

// withKV is base (copied) with the key, value pairs kv set.
func withKV(base map[string]string, kv ...string) map[string]string {
	m := maps.Clone(base)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// fileSourceProps is a valid file source config with kv set.
func fileSourceProps(kv ...string) map[string]string {
	return withKV(map[string]string{"connector.class": "FileStreamSource", "name": "n", "file": "f", "topic": "t"}, kv...)
}
