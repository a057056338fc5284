package clientoverrides

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// setting turns an override's value into client options; an error says
// what the value should be.
type setting func(value string) ([]kgo.Opt, error)

// settings are the overrides Sluice's clients apply, by client and name.
// consumer.override.group.id is applied where the group is chosen
// (records.SinkGroupID), so its setting adds no option. The admin client
// of a task is its producer's, so no admin override is applied.
var settings = map[Client]map[string]setting{
	Producer: {
		"acks":                acks,
		"linger.ms":           millis(kgo.ProducerLinger),
		"batch.size":          positive(func(n int) kgo.Opt { return kgo.ProducerBatchMaxBytes(int32(n)) }),
		"compression.type":    compression,
		"request.timeout.ms":  millis(kgo.ProduceRequestTimeout),
		"delivery.timeout.ms": millis(kgo.RecordDeliveryTimeout),
	},
	Consumer: {
		"group.id":                  func(string) ([]kgo.Opt, error) { return nil, nil },
		"auto.offset.reset":         offsetReset,
		"session.timeout.ms":        millis(kgo.SessionTimeout),
		"heartbeat.interval.ms":     millis(kgo.HeartbeatInterval),
		"fetch.max.wait.ms":         millis(kgo.FetchMaxWait),
		"fetch.max.bytes":           positive(func(n int) kgo.Opt { return kgo.FetchMaxBytes(int32(n)) }),
		"fetch.min.bytes":           positive(func(n int) kgo.Opt { return kgo.FetchMinBytes(int32(n)) }),
		"max.partition.fetch.bytes": positive(func(n int) kgo.Opt { return kgo.FetchMaxPartitionBytes(int32(n)) }),
	},
	Admin: {},
}

// credentialKeys are the settings that choose a client's principal; they
// add no option themselves but make the client's credentials
// (ClientCredentials).
var credentialKeys = []string{"sasl.jaas.config", "sasl.mechanism", "security.protocol"}

func init() {
	for _, c := range []Client{Producer, Consumer} {
		for _, k := range credentialKeys {
			settings[c][k] = func(string) ([]kgo.Opt, error) { return nil, nil }
		}
	}
}

func supported(c Client, name string) bool {
	_, ok := settings[c][name]
	return ok
}

// supportedNames lists what a client applies, for messages.
func supportedNames(c Client) []string {
	names := slices.Sorted(maps.Keys(settings[c]))
	if len(names) == 0 {
		return []string{"none"}
	}
	return names
}

// Opts returns the options that apply config's overrides of client c, as
// the agent runs a task. The coordinator refused, when the config was
// written, every override the policy or the framework does not allow;
// here a key the framework owns still fails the task (whatever wrote the
// config), while one Sluice's clients cannot apply — which versions before
// the policy ignored silently — is left out and returned in ignored, for
// the task to log, so that a config stored before goes on running.
func Opts(config map[string]string, c Client, exactlyOnce bool) (opts []kgo.Opt, ignored []string, err error) {
	ov := Overrides(config, c)
	for _, name := range slices.Sorted(maps.Keys(ov)) {
		key := string(c) + name
		if isFrameworks(name, ov[name]) {
			continue // what the framework sets anyway
		}
		if why := owned(c, name, exactlyOnce); why != "" {
			return nil, nil, fmt.Errorf("%s cannot be overridden: %s", key, why)
		}
		if name == "acks" && exactlyOnce && ov[name] != "all" && ov[name] != "-1" {
			return nil, nil, fmt.Errorf("%s cannot be %s: exactly-once sources write with acks=all", key, ov[name])
		}
		set, ok := settings[c][name]
		if !ok {
			ignored = append(ignored, key)
			continue
		}
		o, err := set(strings.TrimSpace(ov[name]))
		if err != nil {
			ignored = append(ignored, key)
			continue
		}
		opts = append(opts, o...)
	}
	return opts, ignored, nil
}

// CheckValues returns, for each override of config that Sluice applies
// but whose value does not parse, why. A credential's value is never
// repeated.
func CheckValues(config map[string]string) map[string]string {
	out := map[string]string{}
	for _, c := range Clients {
		for name, v := range Overrides(config, c) {
			if set, ok := settings[c][name]; ok {
				if _, err := set(strings.TrimSpace(v)); err != nil {
					out[string(c)+name] = fmt.Sprintf("Invalid value %s for configuration %s: %v", v, string(c)+name, err)
				}
			}
		}
		if _, err := ClientCredentials(config, c); err != nil {
			out[string(c)+"sasl.jaas.config"] = err.Error()
		}
	}
	return out
}

func millis[O kgo.Opt](opt func(time.Duration) O) setting {
	return positive(func(n int) kgo.Opt { return opt(time.Duration(n) * time.Millisecond) })
}

func positive(opt func(int) kgo.Opt) setting {
	return func(v string) ([]kgo.Opt, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 1<<31-1 {
			return nil, fmt.Errorf("must be a positive whole number")
		}
		return []kgo.Opt{opt(n)}, nil
	}
}

func acks(v string) ([]kgo.Opt, error) {
	switch strings.ToLower(v) {
	case "all", "-1":
		return []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks())}, nil
	case "1":
		// An idempotent producer needs every replica's acknowledgement.
		return []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}, nil
	case "0":
		return []kgo.Opt{kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite()}, nil
	}
	return nil, fmt.Errorf("must be all, -1, 1 or 0")
}

func compression(v string) ([]kgo.Opt, error) {
	codecs := map[string]kgo.CompressionCodec{"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
		"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression()}
	c, ok := codecs[strings.ToLower(v)]
	if !ok {
		return nil, fmt.Errorf("must be none, gzip, snappy, lz4 or zstd")
	}
	return []kgo.Opt{kgo.ProducerBatchCompression(c)}, nil
}

func offsetReset(v string) ([]kgo.Opt, error) {
	switch strings.ToLower(v) {
	case "earliest":
		return []kgo.Opt{kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, nil
	case "latest":
		return []kgo.Opt{kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd())}, nil
	}
	return nil, fmt.Errorf("must be earliest or latest")
}
