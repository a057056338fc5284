package server

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
	"github.com/sluice-io/sluice/shared/embedded"
)

// devKafkaCommand is `sluice dev kafka`: the embedded Kafka-protocol broker
// of `sluice dev` (franz-go's kfake) alone, as a process of its own, so that
// it can be stopped, killed (SIGKILL) and started again on the same address
// and data, as a real broker can. The fault suite (tests/faults) runs it so.
func devKafkaCommand() *cli.Command {
	return &cli.Command{
		Name:  "kafka",
		Usage: "run only the embedded Kafka-protocol broker (kfake), in the foreground",
		Description: "The broker `sluice dev` embeds, alone: one plaintext broker on --listen that keeps its data in\n" +
			"--data-dir (the directory `sluice dev --data-dir D` uses is D/kafka) and reloads it when started\n" +
			"again there, also after a SIGKILL. It prints `sluice dev kafka ready kafka=ADDR` once it\n" +
			"listens, and stops cleanly on SIGTERM or SIGINT. Point coordinators and agents at it with\n" +
			"--kafka ADDR. Do not run two brokers on one data dir.",
		Flags: []cli.Flag{
			// Environment variables of their own: SLUICE_LISTEN and
			// SLUICE_DATA_DIR configure the coordinator and dev.
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:9092", EnvVars: envflag.Env("dev-kafka-listen"),
				Usage: "address the broker listens on and advertises (host:port; port 0 for a free one)"},
			&cli.StringFlag{Name: "data-dir", Value: ".sluice/dev/kafka", EnvVars: envflag.Env("dev-kafka-data-dir"),
				Usage: "where the broker keeps its data (empty: in memory only, lost when it stops)"},
		},
		Action: runDevKafka,
	}
}

func runDevKafka(c *cli.Context) error {
	if c.NArg() > 0 {
		return session.Usage("sluice dev kafka takes no arguments, got %q", c.Args().Slice())
	}
	dir := c.String("data-dir")
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	// Signals are caught before the broker starts, so that one sent as
	// soon as it listens still stops it cleanly.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	kc, err := embedded.Kafka(c.String("listen"), dir)
	if err != nil {
		return err
	}
	defer kc.Close()
	addrs := kc.ListenAddrs()
	if len(addrs) == 0 {
		return errors.New("sluice dev kafka: the broker listens nowhere")
	}
	if kc.Recovered() {
		fmt.Fprintf(os.Stderr, "sluice dev kafka: the last run on %s did not stop cleanly; its data was recovered\n", dir)
	}
	fmt.Printf("sluice dev kafka ready kafka=%s data-dir=%s\n", addrs[0], dir)
	<-sigs
	return nil
}
