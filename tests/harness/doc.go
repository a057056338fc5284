// Package harness is the tests module's name for the root module's test kit,
// package sluicetest (github.com/sluice-io/sluice/sluicetest), which runs a
// Sluice cluster inside a test: every type and function of kit.go is the
// kit's own, under the name the suites have used. What needs the tests
// module's dependencies stays here: Kubernetes manifests (manifests.go).
//
// Tests call harness.Start (sluicetest.Start), drive the REST API with the
// kit's helpers, and poll with Eventually rather than sleeping.
package harness
