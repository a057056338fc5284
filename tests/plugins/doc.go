// Package plugins tests Kafka Connect's Java plugins running under Sluice's
// agents, through the connector host JVM (docs/plugins.md), on embedded
// NATS and kfake or Apache Kafka (SLUICE_TEST_KAFKA).
//
// The tests need the built host and plugins fetched from Maven Central,
// which `make test-plugins` lays out before it runs them:
//
//	SLUICE_TEST_PLUGINS=<plugin path>   e.g. .cache/plugins (deploy/plugins/fetch.sh)
//	SLUICE_CONNECT_HOST_DIR=<dir>       default connect/javahost/target (make javahost)
//
// Without SLUICE_TEST_PLUGINS every test is skipped, so `make test` needs
// no JDK.
package plugins
