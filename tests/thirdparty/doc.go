// Package thirdparty calls Sluice as third-party Kafka Connect clients do:
// the requests a client makes (method, path, query, headers, body) and
// the reading of the answers it relies on, made exactly as the client's
// source makes them, so that a change that would break a client fails
// here. kcctl_test.go is kcctl's (github.com/kcctl/kcctl).
package thirdparty
