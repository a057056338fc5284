// Package harness holds what the tests module's suites share that needs
// the tests module's dependencies and so cannot live in the root module's
// test kit (package sluicetest): decoding the shipped Kubernetes manifests
// (manifests.go), for tests/deploy and tests/e2e.
//
// Everything else a test needs — clusters in process or as processes, the
// REST client, Eventually — is package sluicetest.
package harness
