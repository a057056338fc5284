// Package embedded starts the in-process NATS server and Kafka-protocol
// broker (franz-go's kfake) that `sluice dev` and the tests run on, so a
// first run needs nothing installed.
package embedded

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/twmb/franz-go/pkg/kfake"
)

// NATSOption adjusts the embedded NATS server.
type NATSOption func(*server.Options)

// MaxPayload sets the server's max_payload: the largest message it accepts
// (NATS's default is 1 MiB). Tests lower it to exercise messages that must
// be split without sending megabytes.
func MaxPayload(n int32) NATSOption {
	return func(o *server.Options) { o.MaxPayload = n }
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
		o(sopts)
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

// Kafka starts a single-broker kfake cluster on listen ("" for a free
// loopback port). When dataDir is set the broker persists its data there and
// reloads it on the next start. New topics get one partition by default, as
// with Apache Kafka's num.partitions.
func Kafka(listen, dataDir string) (*kfake.Cluster, error) {
	_, port, err := splitListen(listen)
	if err != nil {
		return nil, fmt.Errorf("kafka listen address: %w", err)
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.DefaultNumPartitions(1),
		kfake.ClusterID("sluice-dev"),
	}
	if port != 0 {
		opts = append(opts, kfake.Ports(port))
	}
	if dataDir != "" {
		opts = append(opts, kfake.DataDir(dataDir))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("start embedded Kafka: %w", err)
	}
	return c, nil
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
