// Package deploy tests what Sluice ships to deploy it: the Kubernetes
// manifests of deploy/k8s decode strictly into the Kubernetes API types and
// hold the settings a production pod needs (an advertised address other
// coordinators can reach, probes, resources, a non-root read-only
// container), and the Dockerfile builds the static binary they run into an
// empty image as a non-root user. Docker itself is not needed: the
// Dockerfile is parsed with BuildKit's parser and its build command is run
// here. The commands the deploy files run (the agent's preStop hook) are
// run with the built binary, against a test kit cluster where they need
// one; the environment they set is checked against what the binary reads,
// and the systemd units against the user and directories they need.
package deploy
