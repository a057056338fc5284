// Package embedded starts the in-process NATS server and Kafka-protocol
// broker (franz-go's kfake) that `sluice dev` and the tests run on, so a
// first run needs nothing installed.
package embedded

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// NATSOption adjusts the embedded NATS server.
type NATSOption func(*server.Options) error

// MaxPayload sets the server's max_payload: the largest message it accepts
// (NATS's default is 1 MiB). Tests lower it to exercise messages that must
// be split without sending megabytes.
func MaxPayload(n int32) NATSOption {
	return func(o *server.Options) error { o.MaxPayload = n; return nil }
}

// ConfigFile loads a nats-server configuration file — its users and their
// permissions, TLS, limits — in place of the defaults; the listen address
// and JetStream's directory given to NATS still apply, and the server
// still neither logs nor handles signals. It must be the first option, as
// it replaces what options before it set.
func ConfigFile(path string) NATSOption {
	return func(o *server.Options) error {
		fo, err := server.ProcessConfigFile(path)
		if err != nil {
			return fmt.Errorf("nats config file %s: %w", path, err)
		}
		host, port, js, store := o.Host, o.Port, o.JetStream, o.StoreDir
		*o = *fo
		o.Host, o.Port, o.NoLog, o.NoSigs = host, port, true, true
		if js {
			o.JetStream, o.StoreDir = true, store
		}
		return nil
	}
}

// NATS starts a NATS server on listen ("" or "host:0" for a free loopback
// port). When storeDir is set, JetStream is enabled and keeps its data there.
func NATS(listen, storeDir string, opts ...NATSOption) (*server.Server, error) {
	host, port, err := splitListen(listen)
	if err != nil {
		return nil, fmt.Errorf("nats listen address: %w", err)
	}
	if port == 0 {
		port = server.RANDOM_PORT // nats-server reads 0 as its default port, 4222
	}
	sopts := &server.Options{Host: host, Port: port, NoLog: true, NoSigs: true}
	if storeDir != "" {
		sopts.JetStream = true
		sopts.StoreDir = storeDir
	}
	for _, o := range opts {
		if err := o(sopts); err != nil {
			return nil, err
		}
	}
	ns, err := server.NewServer(sopts)
	if err != nil {
		return nil, fmt.Errorf("start NATS: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("start NATS: not ready after 10s")
	}
	return ns, nil
}

// runningMarker names a file that exists in a broker's data dir while a
// broker runs on it. Found at start, it says the last broker there did not
// stop cleanly: it crashed or was killed.
const runningMarker = "sluice-broker-running"

// Broker is the embedded Kafka broker. Close it to stop it cleanly.
type Broker struct {
	*kfake.Cluster
	marker    string
	recovered bool
	closeOnce sync.Once
}

// Recovered reports whether the broker's data dir was left by a broker that
// did not stop cleanly, and was recovered before this one started.
func (b *Broker) Recovered() bool { return b.recovered }

// Close stops the broker; with a data dir, it saves its state there first.
func (b *Broker) Close() {
	b.closeOnce.Do(func() {
		b.Cluster.Close()
		if b.marker != "" {
			// Only now is the data dir whole: a crash during Close
			// leaves the marker, and the next start recovers.
			_ = os.Remove(b.marker)
		}
	})
}

// Kafka starts a single-broker kfake cluster on listen ("" for a free
// loopback port). When dataDir is set the broker persists its data there and
// reloads it on the next start. New topics get one partition by default, as
// with Apache Kafka's num.partitions. extra are further kfake options, such
// as kfake.TLS and kfake.EnableSASL for tests of a secured broker.
//
// A broker that did not stop cleanly (kill -9, a crash) may leave the end of
// an append-only state log torn: a SIGKILL can cut a write to a file short.
// kfake then reads groups.log (committed offsets) and pids.log (producer
// ids and epochs) up to the tear and ignores the rest, but goes on appending
// after the tear, so everything written after the restart would be lost at
// the next one: a sink would start again from an old commit, or from the
// beginning. So after an unclean stop, the data dir is first loaded by a
// broker that is closed at once — a clean close writes those logs anew,
// whole, from what was loaded — and only then is the broker started.
func Kafka(listen, dataDir string, extra ...kfake.Opt) (*Broker, error) {
	_, port, err := splitListen(listen)
	if err != nil {
		return nil, fmt.Errorf("kafka listen address: %w", err)
	}
	b := &Broker{}
	if dataDir != "" {
		if b.recovered, err = recoverUncleanStop(dataDir); err != nil {
			return nil, err
		}
		b.marker = filepath.Join(dataDir, runningMarker)
		if err := os.WriteFile(b.marker, nil, 0o644); err != nil {
			return nil, fmt.Errorf("embedded Kafka data dir: %w", err)
		}
	}
	opts := append(kafkaOpts(dataDir), extra...)
	if port != 0 {
		opts = append(opts, kfake.Ports(port))
	}
	if b.Cluster, err = kfake.NewCluster(opts...); err != nil {
		return nil, fmt.Errorf("start embedded Kafka: %w", err)
	}
	return b, nil
}

// kafkaOpts are the options of every embedded broker on dataDir.
func kafkaOpts(dataDir string) []kfake.Opt {
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.DefaultNumPartitions(1),
		kfake.ClusterID("sluice-dev"),
		kfake.MaxVersions(javaClientVersions()),
	}
	if dataDir != "" {
		opts = append(opts, kfake.DataDir(dataDir))
	}
	return opts
}

// javaClientVersions are the API versions the embedded broker advertises:
// a Kafka 4.4 broker's (kversion.Stable, which has every key kfake
// implements, each at kfake's version or above, so kfake's own stay), less
// two that kfake answers in ways Kafka's Java clients, which the connector
// host's plugins use, cannot read. CreateTopics v5+ returns a topic's
// configs with their source left at -1, which the Java admin client rejects
// ("id should be positive"), so no Java client could create a topic with
// configs (MirrorMaker 2 creates its internal topics so); v4 returns no
// configs. DescribeTopicPartitions answers null eligible-leader lists, on
// which the admin client's describeTopics fails; without the API it asks
// Metadata, as of a broker before 3.8. Sluice's franz-go clients read
// neither answer.
//
// A capped kfake also models a released broker in one more way: it accepts
// a first sequence other than zero on a never-written partition, as Kafka
// 4.4 does (the check, KAFKA-15591, ships in 4.5).
func javaClientVersions() *kversion.Versions {
	v := kversion.Stable()
	v.SetMaxKeyVersion(kmsg.CreateTopics.Int16(), 4)
	v.SetMaxKeyVersion(kmsg.DescribeTopicPartitions.Int16(), -1)
	return v
}

// recoverUncleanStop loads and cleanly closes dataDir if the broker that
// last ran on it did not stop cleanly, and reports whether it did so.
func recoverUncleanStop(dataDir string) (bool, error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return false, fmt.Errorf("embedded Kafka data dir: %w", err)
	}
	_, err := os.Stat(filepath.Join(dataDir, runningMarker))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("embedded Kafka data dir: %w", err)
	}
	c, err := kfake.NewCluster(kafkaOpts(dataDir)...)
	if err != nil {
		return false, fmt.Errorf("recover embedded Kafka data in %s after an unclean stop: %w", dataDir, err)
	}
	c.Close()
	return true, nil
}

func splitListen(listen string) (string, int, error) {
	if listen == "" {
		return "127.0.0.1", 0, nil
	}
	host, p, err := net.SplitHostPort(listen)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("port %q: %w", p, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return host, port, nil
}
